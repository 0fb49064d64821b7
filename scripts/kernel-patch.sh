#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make kernel-patch: a git format-patch series against the newest
# linux-source in Debian's archive (the trixie root's, picked by
# scripts/trixie-root.sh --source the way setup picks its kernels: the tree
# a netdev submission targets) that adds sch_pfifo_bulk and refnic to the
# kernel tree, generated from the files of this checkout (its working tree),
# never a second copy:
#
#   0001  net/sched: the qdisc, its uapi header, the Kconfig entry of
#         net/sched/Kconfig here, the obj- line of net/sched/Kbuild here,
#         Documentation/networking/pfifo_bulk.rst, its MAINTAINERS entry
#   0002  drivers/net/refnic/ as it is here (Kconfig and Kbuild included),
#         the source and obj- lines in drivers/net, refnic.rst, MAINTAINERS
#   0003  the tests, where kernel CI runs them: the kselftest target
#         tools/testing/selftests/net/pfifo_bulk (the TEST_PROGS and
#         TEST_FILES of selftests/Makefile but tdc.sh, a Makefile made here
#         for lib.mk, selftests/config as its config fragment) and
#         selftests/tdc/pfifo_bulk.json as tc-testing's
#         tc-tests/qdiscs/pfifo_bulk.json
#
# The series is deterministic: author and Signed-off-by are the first M: of
# our MAINTAINERS, dates are those of the last commit that touched a file
# of the series. Then it proves that the series applies (git apply, patch
# by patch, to the pristine files of the tarball) and that checkpatch.pl
# --strict finds nothing (in the tests' patch: nothing but the types it
# ignores there, listed below).
#
#   scripts/kernel-patch.sh [-o DIR] [-n]
#	-o DIR	output directory (default .build/kernel-patch)
#	-n	no checks, only generate
#
# Writes DIR/0000-cover-letter.patch, DIR/0001-*.patch ..., DIR/series (the
# patches in order), DIR/series.sha (12 hex digits of sha256 over the
# patches), DIR/kernel.sha (the same over the kernel's patches only, not
# the tests' nor the cover letter with its diffstat: the debug kernels'
# cache key) and DIR/checkpatch.txt. Needs git,
# tar, xz and checkpatch.pl from the setup step.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${PFB_SRCDIR:-/var/cache/pfifo-bulk}
tarball=${PFB_KSRC_TARBALL:-$("$top/scripts/trixie-root.sh" --source)}
out=$top/.build/kernel-patch
check=1

while getopts "o:n" opt; do
	case $opt in
	o) out=$(realpath -m "$OPTARG") ;;
	n) check= ;;
	*) sed -n 's/^#   //p' "$0" >&2; exit 2 ;;
	esac
done

log() { echo "kernel-patch: $*" >&2; }
die() { log "$*"; exit 1; }

[ -n "$tarball" ] && [ -r "$tarball" ] || die "no linux-source tarball '$tarball' (make setup)"
srcname=$(basename "$tarball" .tar.xz)
series_ver=${srcname#linux-source-}

# Files of the series, all relative to the top of this tree and of the
# kernel's.
qdisc_files=(include/uapi/linux/pkt_sched_pfifo_bulk.h net/sched/sch_pfifo_bulk.c
	     Documentation/networking/pfifo_bulk.rst)
# The refnic directory goes in whole, but not what a build leaves in it.
refnic_files=(Documentation/networking/refnic.rst)
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	mapfile -t -O 1 refnic_files < <(git -C "$top" ls-files --cached --others \
		--exclude-standard -- drivers/net/refnic | sort)
else
	for f in "$top"/drivers/net/refnic/{Kconfig,Kbuild,*.c,*.h}; do
		refnic_files+=("${f#"$top"/}")
	done
fi
refnic_files=($(printf '%s\n' "${refnic_files[@]}" | grep -v '\.mod\.c$'))
# The uapi header of its link attributes (REFNIC_INFO_*), as veth's linux/veth.h.
refnic_files+=(include/uapi/linux/refnic.h)
# Kernel files the series edits (they must exist in the tarball).
edited=(MAINTAINERS Documentation/networking/index.rst net/sched/Kconfig
	net/sched/Makefile drivers/net/Kconfig drivers/net/Makefile
	tools/testing/selftests/Makefile tools/testing/selftests/tc-testing/config)
# The kselftest target: our TEST_PROGS (tdc.sh aside: tc-testing runs the
# tdc cases there), TEST_FILES and the sources of TEST_GEN_PROGS.
ksft=tools/testing/selftests/net/pfifo_bulk
ksft_progs=$(make -s --no-print-directory -C "$top/selftests" list_tests | tr ' ' '\n' | grep -vx tdc.sh | tr '\n' ' ')
ksft_files=$(make -s --no-print-directory -C "$top/selftests" list_files | tr ' ' '\n' | grep -vx tdc | tr '\n' ' ')
ksft_gen=$(sed -n 's/^TEST_GEN_PROGS := //p' "$top/selftests/Makefile")
[ -n "$ksft_progs" ] && [ -n "$ksft_files" ] && [ -n "$ksft_gen" ] ||
	die "selftests/Makefile: no TEST_PROGS, TEST_FILES or TEST_GEN_PROGS"
for f in "${qdisc_files[@]}" "${refnic_files[@]}" MAINTAINERS net/sched/Kconfig net/sched/Kbuild; do
	[ -f "$top/$f" ] || die "missing $f in $top"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

log "extracting ${edited[*]} from $tarball"
mkdir -p "$work/pristine"
tar -xJf "$tarball" -C "$work/pristine" --strip-components=1 \
	"${edited[@]/#/$srcname/}" || die "$tarball lacks a file the series edits"

# --- text helpers ---------------------------------------------------------
# body FILE: FILE without its leading "#" comment block (SPDX line and
# explanation) and the blank lines after it.
body() {
	awk 'hdr && /^#/ { next } hdr && /^$/ { next } { hdr = 0; print }' hdr=1 "$1"
}

# insert FILE before|after REGEX TEXTFILE: insert TEXTFILE's lines before or
# after the first line of FILE matching REGEX (extended regex); fail if none.
insert() {
	local file=$1 where=$2 re=$3 text=$4
	awk -v where="$where" -v re="$re" -v text="$text" '
		function put(   l) { while ((getline l < text) > 0) print l; close(text) }
		!done && $0 ~ re { if (where == "after") print; put(); done = 1
				   if (where == "after") next }
		{ print }
		END { exit !done }' "$file" > "$file.new" ||
		die "$file: no line matching '$re'"
	mv "$file.new" "$file"
}

# insert_maintainers FILE ENTRYFILE: insert one MAINTAINERS entry (title,
# then X: lines) where the file is sorted by title (ignoring case) around
# it. Upstream's list is not sorted everywhere (an entry may sit a few
# places off), so "before the first title after ours" can land far from
# home: take the place with the fewest titles on the wrong side of it
# (greater before, smaller after), the first such place; "THE REST" stays
# last.
insert_maintainers() {
	local file=$1 entry=$2 title
	title=$(head -n1 "$entry")
	awk -v title="$title" -v text="$entry" '
		function put(   l) { while ((getline l < text) > 0) print l; close(text); print "" }
		{ line[NR] = $0 }
		# An entry title: after a blank line, followed by "X:\t".
		started && line[NR - 2] == "" && $0 ~ /^[A-Z]:\t/ && line[NR - 1] != "THE REST" {
			n++; at[n] = NR - 1; gt[n] = toupper(line[NR - 1]) > toupper(title)
		}
		/^Maintainers List/ { started = 1 }
		END {
			if (!n) exit 1
			# cost of the place before entry j: greater titles before
			# it, smaller ones from it on; j = n + 1 is after the last.
			for (j = 1; j <= n; j++) rest += !gt[j]
			best = -1
			for (j = 1; j <= n + 1; j++) {
				if (best < 0 || greater + rest < best) {
					best = greater + rest; where = j > n ? at[n] + 1 : at[j]
				}
				greater += gt[j]; rest -= !gt[j]
			}
			if (where == at[n] + 1) {
				# after the last entry: before the blank line ending it
				for (where = at[n]; where <= NR && line[where] != ""; where++) ;
				where++
			}
			for (i = 1; i <= NR; i++) {
				if (i == where) put()
				print line[i]
			}
		}' "$file" > "$file.new" || die "$file: no place for '$title'"
	mv "$file.new" "$file"
}

# maintainers_entry TITLE-REGEX: one entry of our MAINTAINERS, no blank line.
maintainers_entry() {
	body "$top/MAINTAINERS" | awk -v re="$1" '$0 ~ re { on = 1 } on && /^$/ { exit } on'
}

# --- identity and dates -----------------------------------------------------
ident=$(body "$top/MAINTAINERS" | sed -n 's/^M:\t//p' | head -n1)
[ -n "$ident" ] || die "no M: line in MAINTAINERS"
date=
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	date=$(git -C "$top" log -1 --format=%aD -- "${qdisc_files[@]}" "${refnic_files[@]}" \
		MAINTAINERS net/sched/Kconfig net/sched/Kbuild 2>/dev/null || true)
fi
date=${date:-"Thu, 1 Jan 2026 00:00:00 +0000"}
export GIT_AUTHOR_NAME=${ident% <*} GIT_AUTHOR_EMAIL=${ident##*<}
GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL%>}
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

tree=$work/tree
mkdir -p "$tree"
cp -a "$work/pristine/." "$tree/"
git -C "$tree" init -q -b main
git -C "$tree" add -A
git -C "$tree" commit -q -m "$srcname"
git -C "$tree" tag pristine

copy_in() {
	local f
	for f in "$@"; do
		mkdir -p "$tree/$(dirname "$f")"
		cp "$top/$f" "$tree/$f"
	done
}

commit() {
	git -C "$tree" add -A
	git -C "$tree" commit -q -s -F -
}

# --- 0001: the qdisc ------------------------------------------------------------
log "generating the series from $top"
copy_in "${qdisc_files[@]}"
body "$top/net/sched/Kconfig" > "$work/kconfig"
echo >> "$work/kconfig"
insert "$tree/net/sched/Kconfig" before '^config NET_SCH_INGRESS$' "$work/kconfig"
grep -E '^obj-\$\(CONFIG_NET_SCH_PFIFO_BULK\)' "$top/net/sched/Kbuild" > "$work/obj" ||
	die "net/sched/Kbuild: no obj-\$(CONFIG_NET_SCH_PFIFO_BULK) line"
insert "$tree/net/sched/Makefile" after '^obj-\$\(CONFIG_NET_SCH_FQ_PIE\)' "$work/obj"
echo "   pfifo_bulk" > "$work/toc"
insert "$tree/Documentation/networking/index.rst" before '^   phonet$' "$work/toc"
maintainers_entry '^PFIFO_BULK ' > "$work/entry"
insert_maintainers "$tree/MAINTAINERS" "$work/entry"
commit <<'EOF'
net/sched: sch_pfifo_bulk: add a FIFO that controls the transmit batch

When a qdisc has a backlog, dequeue_skb() hands the driver several
packets in a row, all but the last marked xmit_more, so that the driver
rings its doorbell once per batch. How long a batch is depends on BQL
and on the core's budgets, nobody can cap it, and nothing reports it.

pfifo_bulk is a tail-drop FIFO, like pfifo, that caps a batch by bytes
and packets, chooses between the core's BQL-limited and fixed bulk
dequeue paths (mode auto, bql, nobql), and counts every batch: how many,
a histogram of their sizes and why each one ended. The module parameter
lockless (read at load) picks its locking. With 1 it is lockless as a
root qdisc or an mq child, like pfifo_fast: enqueue claims a slot with
one cmpxchg and adds the packet to an llist; the CPU that holds the run
lock takes the whole list at once; the default. With 0 every instance
is locked, like pfifo, and since 6.19 its senders use the core's defer
list. Lockless stays the default there: in QEMU TCG guests on 7.3 it
sent 1.23x the locked mode's packets with four parallel vCPUs; with two
interleaved ones it sent as many and made 1.3x the spin-lock calls per
packet (the core's failed trylocks of the run lock). A parameter
because the core decides per-CPU statistics from ops->static_flags
before ->init, and only the core may clear TCQ_F_NOLOCK.

The netlink interface is include/uapi/linux/pkt_sched_pfifo_bulk.h;
options are parsed strictly and a rejected change changes nothing.
EOF

# --- 0002: refnic --------------------------------------------------------------
copy_in "${refnic_files[@]}"
printf 'source "drivers/net/refnic/Kconfig"\n\n' > "$work/source"
insert "$tree/drivers/net/Kconfig" before '^config VIRTIO_NET$' "$work/source"
echo 'obj-$(CONFIG_REFNIC) += refnic/' > "$work/obj"
insert "$tree/drivers/net/Makefile" after '^obj-\$\(CONFIG_VETH\) \+= veth\.o$' "$work/obj"
echo "   refnic" > "$work/toc"
insert "$tree/Documentation/networking/index.rst" before '^   regulatory$' "$work/toc"
maintainers_entry '^REFNIC ' > "$work/entry"
insert_maintainers "$tree/MAINTAINERS" "$work/entry"
commit <<'EOF'
net: refnic: add a reference virtual NIC for transmit batching

A virtual Ethernet device with the transmit path of a real NIC, to
measure and test what xmit_more and BQL save: a descriptor ring per TX
queue, BQL accounting, a doorbell rung only at the end of a batch with
an emulated cost, a line rate kept by one hrtimer per queue, and TX
completions through NAPI with ethtool coalescing. Devices are created
stand-alone or in pairs across namespaces, like veth. ethtool -S counts
doorbells and packets per doorbell per queue, in the buckets of the
pfifo_bulk batch histogram.
EOF

# --- 0003: the tests --------------------------------------------------------------
mkdir -p "$tree/$ksft" "$tree/tools/testing/selftests/tc-testing/tc-tests/qdiscs"
for f in $ksft_progs $ksft_files config $(for g in $ksft_gen; do echo "$g.c"; done); do
	[ -e "$top/selftests/$f" ] || die "selftests/$f: listed, but missing"
	cp -r "$top/selftests/$f" "$tree/$ksft/"
done
# what a run in this checkout leaves behind
find "$tree/$ksft" -name __pycache__ -prune -exec rm -rf {} +
cp "$top/selftests/tdc/pfifo_bulk.json" "$tree/tools/testing/selftests/tc-testing/tc-tests/qdiscs/"
{
	echo "# SPDX-License-Identifier: GPL-2.0"
	echo "#"
	echo "# pfifo_bulk and refnic. The tests need a tc and an ip that know both:"
	echo "# PFB_TOP=<pfifo_bulk tree> gives them its tc and ip plugins and bulkctl."
	echo
	printf 'TEST_PROGS := %s\n' $ksft_progs
	echo
	printf 'TEST_FILES := %s\n' $ksft_files
	echo
	# helpers the tests run, not tests: built, not run by run_tests
	echo "TEST_GEN_PROGS_EXTENDED := $ksft_gen"
	echo
	echo 'CFLAGS += -O2 -Wall -Wextra $(KHDR_INCLUDES)'
	echo
	echo 'include ../../lib.mk'
	# a program's own libraries, where lib.mk builds it (OUTPUT is
	# lib.mk's)
	sed -nE 's|^([a-z_]+): (LDLIBS \+= .*)|\n$(OUTPUT)/\1: \2|p' "$top/selftests/Makefile"
} | awk '
	# the second and later lines of a list: "+=", as in the other targets
	/^TEST_(PROGS|FILES) :=/ { split($0, w, " := "); if (seen[w[1]]++) $0 = w[1] " += " w[2] }
	{ print }' > "$tree/$ksft/Makefile"
printf 'F:\t%s\n' "$ksft/" tools/testing/selftests/tc-testing/tc-tests/qdiscs/pfifo_bulk.json \
	> "$work/files"
insert "$tree/MAINTAINERS" after '^F:\tnet/sched/sch_pfifo_bulk\.c$' "$work/files"
echo "TARGETS += net/pfifo_bulk" > "$work/target"
insert "$tree/tools/testing/selftests/Makefile" after '^TARGETS \+= net/packetdrill$' "$work/target"
echo "CONFIG_NET_SCH_PFIFO_BULK=m" > "$work/tdcconf"
insert "$tree/tools/testing/selftests/tc-testing/config" after '^CONFIG_NET_SCH_FQ_PIE=m$' "$work/tdcconf"
commit <<'EOF2'
selftests: net: pfifo_bulk: add the pfifo_bulk and refnic tests

The selftests of both as the kselftest target net/pfifo_bulk (a config
fragment and settings of their own), and the pfifo_bulk cases of tdc in
tc-testing. They check what the qdisc promises: exact caps, the path it
reports, packet order, read-only dumps, bypass accounting, reschedules,
coalescing, and refnic's doorbells, BQL and fault handling.

The tests need a tc and an ip that know pfifo_bulk and refnic; the tc and
ip plugins of the pfifo_bulk tree provide them until iproute2 does
(PFB_TOP names that tree).
EOF2

# --- the series -----------------------------------------------------------------
rm -rf "$out"
mkdir -p "$out"
git -C "$tree" format-patch -q --cover-letter --no-signature --subject-prefix="PATCH net-next" \
	-o "$out" pristine..HEAD
sed -i -e "s/\*\*\* SUBJECT HERE \*\*\*/add the pfifo_bulk qdisc and the refnic reference NIC/" \
	-e "/\*\*\* BLURB HERE \*\*\*/{
r /dev/stdin
d
}" "$out"/0000-cover-letter.patch <<EOF
pfifo_bulk caps and reports the transmit batch the core hands a driver
(xmit_more); refnic is a virtual NIC with a real NIC's transmit path that
shows what a batch saves. Both are generated from the pfifo_bulk tree
(make kernel-patch) against $srcname.
EOF
(cd "$out" && ls 0*.patch) > "$out/series"
sum=$(cd "$out" && cat $(cat series) | sha256sum | cut -c1-12)
echo "$sum" > "$out/series.sha"
# what a kernel built from the series depends on: not the tests, and not
# the cover letter, whose diffstat changes with them
(cd "$out" && cat $(grep -v -e -selftests- -e -cover-letter series) | sha256sum | cut -c1-12) > "$out/kernel.sha"

if [ -n "$check" ]; then
	# one patch after the other, as git am would: a later one may touch
	# what an earlier one added (the MAINTAINERS entry)
	log "git apply, patch by patch, on the pristine $srcname files"
	for p in $(grep -v cover-letter "$out/series"); do
		(cd "$work/pristine" && git apply "$out/$p") ||
			die "$p does not apply to $srcname"
	done

	# checkpatch in tree mode needs a whole kernel tree: the debug
	# kernels' source when it is there, otherwise --no-tree, learning the
	# kernel's CamelCase type names (struct Qdisc) from the installed
	# headers, as "make checkpatch" does: on a fresh host the series is
	# made before the source is unpacked.
	# All of the same release as the tarball: checkpatch.pl (setup
	# extracts it), the unpacked tree or that release's headers.
	cp=$(ls "$cache/$srcname/scripts/checkpatch.pl" 2>/dev/null) ||
		die "no checkpatch.pl under $cache/$srcname (make setup)"
	root=$(ls -d "$cache"/debug-kernel/src-"$series_ver".* 2>/dev/null | sort -V | tail -n1 || true)
	hdr=$(ls -d /usr/src/linux-headers-"$series_ver".*-common \
		"${tarball%/usr/src/*}"/usr/src/linux-headers-"$series_ver".*-common 2>/dev/null |
		sort -V | tail -n1 || true)
	if [ -n "$root" ] && [ -f "$root/.pfb-unpacked" ]; then
		mode=(--root="$root")
	else
		mode=(--no-tree ${hdr:+--root="$hdr"})
	fi
	# The kernel patches without exception. The tests' patch without the
	# types that do not fit shell, Python and userspace C (line length:
	# a test's command lines and expected outputs; a word list such as
	# "carrier carrier"; sig_atomic_t is volatile; no ARRAY_SIZE there).
	test_ignore=LONG_LINE,LONG_LINE_COMMENT,LONG_LINE_STRING,REPEATED_WORD,VOLATILE
	test_ignore+=,ARRAY_SIZE,EMBEDDED_FUNCTION_NAME
	log "checkpatch.pl --strict ${mode[*]} (tests: --ignore $test_ignore)"
	: > "$out/checkpatch.txt"
	for p in $(grep -v cover-letter "$out/series"); do
		ign=()
		case $p in *-selftests-*) ign=(--ignore "$test_ignore") ;; esac
		(cd "$out" && GIT_DIR=/nonexistent perl "$cp" --strict "${mode[@]}" "${ign[@]}" \
			--show-types "$p") >> "$out/checkpatch.txt" 2>&1 || true
	done
	if grep -qE '^(ERROR|WARNING|CHECK)' "$out/checkpatch.txt" ||
	   grep '^total: ' "$out/checkpatch.txt" | grep -vq '^total: 0 errors, 0 warnings, 0 checks'; then
		cat "$out/checkpatch.txt" >&2
		die "checkpatch.pl --strict is not clean"
	fi
fi
log "$out: $(grep -vc cover-letter "$out/series") patches, series $sum"
