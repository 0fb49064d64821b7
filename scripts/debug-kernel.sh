#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make debug-kernel: the debug guest kernels of "make check-debug", built
# from the newest linux-source in Debian's archive (the trixie root's:
# scripts/trixie-root.sh --source; the tree "make kernel-patch" targets) with
# that series applied, so that sch_pfifo_bulk and refnic are in-tree
# modules (=m). Built with the host's compiler: a kernel built from source
# has its modules built by the same compiler in the same build, so, unlike
# Debian's prebuilt trixie kernels, it needs no chroot (any gcc the kernel's
# minimum allows; KCSAN needs gcc >= 11, bookworm has 12).
#
#   kasan   KASAN + lockdep (PROVE_LOCKING, PROVE_RCU) + DEBUG_ATOMIC_SLEEP
#           + kmemleak + DEBUG_NET
#   kcsan   the same with KCSAN instead of KASAN (they exclude each other)
#
# Config: allnoconfig with tools/vm/configs/guest.config, then debug.config
# and FLAVOUR.config merged in with olddefconfig, so that the options the
# checkers bring along keep their defaults (allnoconfig would turn off,
# e.g., KCSAN_EARLY_ENABLE: KCSAN would never start). Every option of the
# fragments must survive into .config.
#
# Cache, under $PFB_SRCDIR/debug-kernel (default /var/cache/pfifo-bulk):
#   src-SRCVER/                the tarball unpacked, the series applied
#   obj-SRCVER-FLAVOUR/        the object tree (O=), kept: a new series
#                              rebuilds only what it changes
#   SRCVER-SERIES/FLAVOUR-CONFIG/  the result, an install root for tools/vm/run
#                              (PFB_VM_ROOT): boot/vmlinuz-KVER,
#                              boot/config-KVER, lib/modules/KVER (depmod
#                              done), vmlinux (a link into the object
#                              tree) for decode_stacktrace.sh
# SRCVER is the linux-source package's version, SERIES the hash of the
# series' kernel patches (the tests' patch aside: kernel-patch.sh's
# kernel.sha), CONFIG that of the flavour's config fragments: a kernel is built
# once and reused while none of them changes.
#
#   scripts/debug-kernel.sh [FLAVOUR...]     build what is missing (default:
#                                            kasan kcsan), print the roots
#   scripts/debug-kernel.sh --root FLAVOUR   print the root of FLAVOUR for
#                                            this checkout; exit 1 if it is
#                                            not built
#   scripts/debug-kernel.sh --src            print the patched source tree
#                                            if it has this checkout's
#                                            series; exit 1 if not
#
# Builds run with nice -n ${PFB_NICE:-10} and make -j${PFB_JOBS:-2}: the
# host is shared, and VM tests running beside it still get the CPU.
# After the build, the series' own objects are built again with W=1, and
# any warning in them fails.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${PFB_SRCDIR:-/var/cache/pfifo-bulk}
dk=$cache/debug-kernel
tarball=${PFB_KSRC_TARBALL:-$("$top/scripts/trixie-root.sh" --source)}
jobs=${PFB_JOBS:-2}
niceness=${PFB_NICE:-10}
configs=$top/tools/vm/configs

log() { echo "debug-kernel: $*" >&2; }
die() { log "$*"; exit 1; }

only_root= only_src=
if [ "${1:-}" = "--root" ]; then
	only_root=${2:?"--root FLAVOUR"}
	set -- "$only_root"
elif [ "${1:-}" = "--src" ]; then
	only_src=1 only_root=kasan
	set --
fi
flavours=("$@")
[ ${#flavours[@]} -gt 0 ] || flavours=(kasan kcsan)
for f in "${flavours[@]}"; do
	[ -f "$configs/$f.config" ] || die "unknown flavour '$f' (no $configs/$f.config)"
done

[ -n "$tarball" ] && [ -r "$tarball" ] || die "no linux-source tarball '$tarball' (make setup)"
srcname=$(basename "$tarball" .tar.xz)
# the package's version, from the dpkg database of the root it is in
srcver=$(dpkg-query --admindir="${tarball%/usr/src/*}/var/lib/dpkg" \
	-W -f='${Version}' "$srcname" 2>/dev/null || true)
[ -n "$srcver" ] || srcver=$(sha256sum "$tarball" | cut -c1-12)
srcver=$(echo "$srcver" | tr -c 'A-Za-z0-9.+\n-' '-')

hms() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

mkdir -p "$dk"

# --- the series ---------------------------------------------------------------------
series=$dk/series.$$
trap 'rm -rf "$series"' EXIT
[ -n "$only_root" ] || log "[series] make kernel-patch"
"$top/scripts/kernel-patch.sh" ${only_root:+-n} -o "$series" 2> "$dk/kernel-patch.log" ||
	{ cat "$dk/kernel-patch.log" >&2; die "kernel-patch failed"; }
# The kernels depend on the kernel patches only: a change to the tests'
# patch swaps it in the source tree and rebuilds nothing.
sum=$(cat "$series/kernel.sha")
key=$srcver-$sum
[ -n "$only_root" ] || log "[series] $(grep -vc cover-letter "$series/series") patches, series $sum: key $key"

# result FLAVOUR: where the kernel of FLAVOUR for this series and config is
# (the config: the fragments and this script, which makes it from them).
result() {
	echo "$dk/$key/$1-$(cat "$configs/guest.config" "$configs/debug.config" \
		"$configs/$1.config" "$0" | sha256sum | cut -c1-8)"
}

if [ -n "$only_src" ]; then
	cmp -s "$dk/src-$srcver/.pfb-series/series.sha" "$series/series.sha" || exit 1
	echo "$dk/src-$srcver"
	exit 0
fi
if [ -n "$only_root" ]; then
	[ -f "$(result "$only_root")/.done" ] || exit 1
	result "$only_root"
	exit 0
fi

exec 9> "$dk/.lock"
if ! flock -n 9; then
	log "waiting for another debug-kernel build (lock $dk/.lock)"
	flock 9
fi

# --- the source tree: unpacked once, the series swapped in place ---------------
# Only the files the series touches change, so the object trees stay valid.
# Swapped also when every kernel is cached: a change to the tests' patch
# alone must reach the tree that check-intree runs them from (--src).
src=$dk/src-$srcver
applied=$src/.pfb-series
unpack() {
	log "[unpack] $tarball -> $src"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xJf "$tarball" -C "$src.tmp" --strip-components=1
	touch "$src.tmp/.pfb-unpacked"
	mv "$src.tmp" "$src"
}
unapply() {
	local p
	[ -d "$applied" ] || return 0
	for p in $(sort -r "$applied/series"); do
		(cd "$src" && git apply -R "$applied/$p") || return 1
	done
	rm -rf "$applied"
}
[ -f "$src/.pfb-unpacked" ] || unpack
if [ -d "$applied" ] && cmp -s "$applied/series.sha" "$series/series.sha"; then
	log "[patch] series $sum already applied in $src"
else
	if ! unapply; then
		log "[patch] the old series does not come out cleanly: unpacking afresh"
		unpack
	fi
	log "[patch] git apply the series ($sum) to $src"
	for p in $(grep -v cover-letter "$series/series"); do
		(cd "$src" && git apply "$series/$p") || die "$p does not apply to $src"
	done
	mkdir -p "$applied"
	cp "$series"/0*.patch "$series/series" "$series/series.sha" "$applied/"
	sed -i '/cover-letter/d' "$applied/series"
fi

todo=()
for f in "${flavours[@]}"; do
	if [ -f "$(result "$f")/.done" ]; then
		log "[$f] cached: $(result "$f") ($(cat "$(result "$f")/.done"))"
	else
		todo+=("$f")
	fi
done
if [ ${#todo[@]} -eq 0 ]; then
	for f in "${flavours[@]}"; do result "$f"; done
	exit 0
fi

# --- per flavour: config, build, install ---------------------------------------------
for f in "${todo[@]}"; do
	obj=$dk/obj-$srcver-$f
	dest=$(result "$f")
	mkdir -p "$obj"
	frag=$obj/.pfb-fragment.config
	cat "$configs/guest.config" "$configs/debug.config" "$configs/$f.config" > "$frag"
	# Rewriting .config costs nothing: kbuild rebuilds only what uses an
	# option whose value changed.
	log "[$f] config: allnoconfig + guest.config, olddefconfig + debug.config $f.config"
	{
		make -s -C "$src" O="$obj" KCONFIG_ALLCONFIG="$configs/guest.config" allnoconfig &&
		cat "$configs/debug.config" "$configs/$f.config" >> "$obj/.config" &&
		make -s -C "$src" O="$obj" olddefconfig
	} > "$obj/.pfb-config.log" 2>&1 ||
		{ cat "$obj/.pfb-config.log" >&2; die "[$f] config failed"; }
	# Every option asked for must be what .config has: a dependency
	# missing turns an option off without a word.
	bad=$(grep -E '^CONFIG_' "$frag" | while IFS= read -r l; do
		k=${l%%=*} v=${l#*=}
		if [ "$v" = n ]; then
			! grep -q "^$k=" "$obj/.config" || echo "$l"
		else
			grep -qxF "$l" "$obj/.config" || echo "$l"
		fi
	done)
	[ -z "$bad" ] || die "[$f] options the config did not take: $(echo $bad)"

	log "[$f] build: nice -n $niceness make -j$jobs (log: $obj/.pfb-build.log)"
	start=$(date +%s)
	if ! nice -n "$niceness" make -C "$src" O="$obj" -j"$jobs" bzImage modules > "$obj/.pfb-build.log" 2>&1; then
		tail -n 40 "$obj/.pfb-build.log" >&2
		die "[$f] build failed (log: $obj/.pfb-build.log)"
	fi
	secs=$(($(date +%s) - start))
	# The series' files with W=1 (the rest of the kernel is not ours to
	# make W=1-clean): rebuilt from scratch, any warning fails.
	rm -f "$obj"/net/sched/sch_pfifo_bulk.o "$obj"/drivers/net/refnic/*.o
	if ! nice -n "$niceness" make -C "$src" O="$obj" -j"$jobs" W=1 \
		net/sched/sch_pfifo_bulk.o drivers/net/refnic/ > "$obj/.pfb-w1.log" 2>&1 ||
	   grep -E 'warning:|error:' "$obj/.pfb-w1.log" >&2; then
		die "[$f] W=1 build of the series' files is not clean (log: $obj/.pfb-w1.log)"
	fi
	# relink the modules from those objects (the same code)
	nice -n "$niceness" make -C "$src" O="$obj" -j"$jobs" modules >> "$obj/.pfb-w1.log" 2>&1 ||
		die "[$f] modules failed after the W=1 pass (log: $obj/.pfb-w1.log)"
	# only now: in a fresh object tree kernelrelease has no LOCALVERSION
	# until the build has written include/config/kernel.release
	kver=$(make -s -C "$src" O="$obj" kernelrelease)
	log "[$f] built $kver in $(hms $secs)"

	log "[$f] install -> $dest"
	rm -rf "$dest"
	mkdir -p "$dest/boot"
	make -s -C "$src" O="$obj" INSTALL_MOD_PATH="$dest" modules_install > "$obj/.pfb-install.log" 2>&1 ||
		{ cat "$obj/.pfb-install.log" >&2; die "[$f] modules_install failed"; }
	[ -f "$dest/lib/modules/$kver/modules.dep" ] || die "[$f] no modules.dep (depmod)"
	for m in sch_pfifo_bulk refnic; do
		grep -q "/$m.ko:" "$dest/lib/modules/$kver/modules.dep" ||
			die "[$f] $m.ko is not in modules.dep"
	done
	rm -f "$dest/lib/modules/$kver/build" "$dest/lib/modules/$kver/source"
	cp "$obj/arch/x86/boot/bzImage" "$dest/boot/vmlinuz-$kver"
	cp "$obj/.config" "$dest/boot/config-$kver"
	cp "$obj/System.map" "$dest/boot/System.map-$kver"
	ln -sfn "$obj/vmlinux" "$dest/vmlinux"
	echo "$kver, built in $(hms $secs) with -j$jobs" > "$dest/.done"
done

# Keep the newest four results per flavour; the object trees stay.
for f in kasan kcsan; do
	ls -dt "$dk"/*/"$f"-*/.done 2>/dev/null | sed 's|/.done$||' | tail -n +5 | xargs -r rm -rf || true
done
for f in "${flavours[@]}"; do result "$f"; done
