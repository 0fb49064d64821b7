#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The userspace tools on Debian 13, from the host, in the trixie root that
# make setup builds (scripts/trixie-root.sh): with trixie's gcc 14 and
# against the iproute2 source Debian serves (bookworm's 6.1.0: it serves no
# 6.15.0 source), the tc plugin, bulkctl and the ip plugin build without a
# warning (gcc 14 makes incompatible pointers an error: the plugin's
# callbacks follow the source's constness); trixie's own tc 6.15 loads that
# plugin and prints canned dumps exactly as bookworm's tc 6.1 prints them
# with the host's plugin, in text (tc -s monitor file: pfb_canned.py's
# dumps) and in JSON (tc -s -j qdisc show, answered by pfb_nlshim.c: handle
# 0, default-mq children, counters beyond 32 bits, estimators), and so does
# the gcc-14 bulkctl; trixie's tc parses the options as bookworm's does
# (help, a bad value, values that would wrap, a good one that reaches the
# kernel); trixie's ip loads the ip plugin. Nothing reaches a qdisc: the
# dump is canned and the one request that parses is sent by nobody in a
# network namespace of its own (EPERM).
#
#   selftests/host_trixie_userspace.sh	(as root, after make setup)

. "$(dirname "$0")/lib.sh"
require_root
require_cmd tc python3 cc

root=${PFB_TRIXIE_ROOT:-/var/cache/pfifo-bulk/trixie-root}
[ -x "$root/usr/sbin/tc" ] && [ -x "$root/usr/bin/gcc-14" ] ||
	setup_failed "no trixie root with tc and gcc 14 at $root (make setup)"
intrixie() {
	(cd "$PFB_TOP" && scripts/trixie-root.sh --chroot "$@")
}

# A copy of what the tools are built from, inside the checkout (the root
# sees the checkout, not /var/cache); the host's own builds stay as they are.
w=$PFB_TOP/.build/trixie-userspace
src=$(make -s -C "$PFB_TOP/tc-plugin" --no-print-directory print-src)
rm -rf "$w"
defer "rm -rf $w"
must mkdir -p "$w/tools" "$w/include" "$w/selftests" "$w/ip2"
must cp -a "$PFB_TOP/tc-plugin" "$PFB_TOP/ip-plugin" "$w/"
must cp -a "$PFB_TOP/tools/bulkctl" "$PFB_TOP/tools/include" "$PFB_TOP/tools/iproute2.mk" "$w/tools/"
must cp -a "$PFB_TOP/include/uapi" "$w/include/"
must cp -a "$src/include" "$src/lib" "$src/tc" "$src/ip" "$w/ip2/"
for d in tc-plugin tools/bulkctl ip-plugin; do
	make -s -C "$w/$d" clean >/dev/null 2>&1
done

# --- gcc 14 builds, warning-free -----------------------------------------------
for d in tc-plugin tools/bulkctl ip-plugin; do
	err=$(intrixie make -s -C "$w/$d" CC=gcc-14 IPROUTE2_SRC="$w/ip2" 2>&1 >/dev/null)
	check_eq "gcc 14 in the trixie root: $d builds without a warning" "$?:$err" "0:"
done
check_eq "gcc 14 plugin exports one symbol" \
	"$(nm -D --defined-only "$w/tc-plugin/q_pfifo_bulk.so" 2>&1 | awk '{ print $3 }')" pfifo_bulk_qdisc_util
check_eq "trixie's tc is 6.15" "$(intrixie tc -V 2>/dev/null | grep -o 'iproute2-[0-9.]*')" iproute2-6.15.0
must intrixie gcc-14 -shared -fPIC -O2 -o "$w/pfb_nlshim.so" "$PFB_TOP/selftests/pfb_nlshim.c" -ldl
must cc -shared -fPIC -O2 -o "$w/pfb_nlshim-host.so" "$PFB_TOP/selftests/pfb_nlshim.c" -ldl
must python3 "$PFB_TOP/selftests/pfb_canned.py" "$w/canned" 1
must python3 "$PFB_TOP/selftests/pfb_canned.py" "$w/dump" 1 tc-json
must make -s -C "$PFB_TOP/tc-plugin"
must make -s -C "$PFB_TOP/tools/bulkctl"

# --- tc 6.15 with the gcc-14 plugin prints as tc 6.1 with the host's ----------------
for opts in "" "-s"; do
	want=$(env TC_LIB_DIR="$PFB_TOP/tc-plugin" tc $opts monitor file "$w/canned" 2>&1)
	got=$(intrixie env TC_LIB_DIR="$w/tc-plugin" tc $opts monitor file "$w/canned" 2>&1)
	check "tc 6.15 $opts monitor file = tc 6.1's" diff -u <(echo "$want") <(echo "$got")
done
for opts in "-s" "-j" "-s -j"; do
	want=$(env LD_PRELOAD="$w/pfb_nlshim-host.so" PFB_NLSHIM_FILE="$w/dump" \
		TC_LIB_DIR="$PFB_TOP/tc-plugin" tc $opts qdisc show dev lo 2>&1)
	got=$(intrixie env LD_PRELOAD="$w/pfb_nlshim.so" PFB_NLSHIM_FILE="$w/dump" \
		TC_LIB_DIR="$w/tc-plugin" tc $opts qdisc show dev lo 2>&1)
	check "tc 6.15 $opts qdisc show = tc 6.1's" diff -u <(echo "$want") <(echo "$got")
	bwant=$(env LD_PRELOAD="$w/pfb_nlshim-host.so" PFB_NLSHIM_FILE="$w/dump" \
		"$PFB_TOP/tools/bulkctl/bulkctl" $opts show dev lo 2>&1)
	bgot=$(intrixie env LD_PRELOAD="$w/pfb_nlshim.so" PFB_NLSHIM_FILE="$w/dump" \
		"$w/tools/bulkctl/bulkctl" $opts show dev lo 2>&1)
	check "gcc-14 bulkctl $opts show = the host's" diff -u <(echo "$bwant") <(echo "$bgot")
done

# --- tc 6.15 parses as tc 6.1 ----------------------------------------------------------
nobody=(unshare -n setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
# (4294967297, 1e-9s and 0.5 would wrap: refused by both, with their parsers)
for args in "help" "limit 1k" "coalesce_usecs 5parsecs" "limit 0x400 coalesce_usecs 1.5ms" \
	    "coalesce_usecs 4294967297" "coalesce_usecs 1e-9s" "bulk_bytes 0.5"; do
	want=$(env TC_LIB_DIR="$PFB_TOP/tc-plugin" "${nobody[@]}" tc qdisc add dev lo root pfifo_bulk $args 2>&1; echo "exit $?")
	got=$(intrixie env TC_LIB_DIR="$w/tc-plugin" "${nobody[@]}" tc qdisc add dev lo root pfifo_bulk $args 2>&1; echo "exit $?")
	check "tc 6.15 qdisc add ... $args: as tc 6.1 ($(tail -n1 <<< "$want"))" test "$got" = "$want"
done

# --- ip 6.15 loads the ip plugin -----------------------------------------------------------
check "trixie's ip loads link_refnic.so" eval \
	'intrixie unshare -n env IP_LIB_DIR="$w/ip-plugin" ip link add pfbtrx0 type refnic help 2>&1 | grep -q "^Usage: ip link <options> type refnic"'

pfb_exit
