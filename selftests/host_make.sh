#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Plain "make" on a checkout whose host lacks what "make setup" installs.
# Proves, in a copy of the checkout's files as they are (ignored ones, the
# build products, left out, as in a fresh clone): without a kernel build
# tree and without the iproute2 source, make exits 0 with one line for
# each (what is missing, what is not built, "make setup") and builds
# nothing; without libmnl alone it builds the tc and ip plugins and says
# in one line that bulkctl is not built; naming a part that cannot be
# built ("make plugin") fails with that part's one line (and make's own).
# No module is built: the kernel build tree named does not exist.
#
#   selftests/host_make.sh

. "$(dirname "$0")/lib.sh"
require_cmd make cc git pkg-config

tmp=$(mktemp -d)
defer "rm -rf $tmp"
must mkdir "$tmp/tree"
(cd "$PFB_TOP" && git ls-files -z --cached --others --exclude-standard |
	tar -cf - --null --no-recursion -T -) | tar -xf - -C "$tmp/tree" ||
	setup_failed "copy of the checkout"

# mk OUT ARGS...: make ARGS in the copy, no kernel build tree; stdout in
# $tmp/OUT, stderr in $tmp/OUT.err, exit status in $rc.
mk() {
	local out=$1
	shift
	make -s -C "$tmp/tree" KVER=0.0-pfb-none "$@" > "$tmp/$out" 2> "$tmp/$out.err"
	rc=$?
}
built() {
	local f
	for f in tc-plugin/q_pfifo_bulk.so ip-plugin/link_refnic.so tools/bulkctl/bulkctl; do
		[ -e "$tmp/tree/$f" ] && printf '%s ' "$f"
	done
}

no_kdir='make: no kernel build tree /lib/modules/0.0-pfb-none/build (KVER=0.0-pfb-none): modules not built (make setup)'

mk none IPROUTE2_SRC=/nonexistent
check_eq "no kernel tree, no iproute2 source: exit status" "$rc" 0
check_eq "no kernel tree, no iproute2 source: one line each" "$(cat "$tmp/none.err")" \
	"$no_kdir
make: no iproute2 source in '/nonexistent': run make setup or set IPROUTE2_SRC: tc plugin, ip plugin and bulkctl not built"
check_eq "no kernel tree, no iproute2 source: nothing built" "$(built)" ""

# libmnl out of pkg-config's sight: the plugins still build (from the
# iproute2 source make setup unpacked).
src=$(make -s -C "$PFB_TOP/tc-plugin" --no-print-directory print-src)
[ -f "$src/tc/tc_util.h" ] || setup_failed "no iproute2 source at '$src' (make setup)"
PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH= mk nomnl
check_eq "no libmnl: exit status" "$rc" 0
check_eq "no libmnl: one line each" "$(cat "$tmp/nomnl.err")" \
	"$no_kdir
make: no libmnl (libmnl-dev): bulkctl not built (make setup)"
check_eq "no libmnl: the plugins are built, bulkctl not" "$(built)" \
	"tc-plugin/q_pfifo_bulk.so ip-plugin/link_refnic.so "

mk part plugin IPROUTE2_SRC=/nonexistent -B
check_eq "make plugin without the iproute2 source fails, in one line" \
	"$([ "$rc" -ne 0 ] && echo failed):$(grep -v '^make\(\[[0-9]*\]\)\?: \*\*\*' "$tmp/part.err")" \
	"failed:no iproute2 source in '/nonexistent': run make setup or set IPROUTE2_SRC"

pfb_exit
