#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tests as kernel CI runs them from a tree patched with the series
# (make kernel-patch): in the source tree of "make debug-kernel", booted
# on its debug kernel FLAVOUR in tools/vm/run (single-threaded TCG: the
# tests arm kprobes and tracepoints; 4 vCPUs, as check-debug boots them:
# with 2 the KASAN guest never built the backlog of pfifo_bulk_load.sh and
# pfifo_bulk_locks.sh, mean batch 1.1-1.3 against the > 2 they check; with
# 4, 2.6-6.6),
#
#   make -C tools/testing/selftests TARGETS=net/pfifo_bulk O=DIR run_tests
#   tdc.py -f tc-tests/qdiscs/pfifo_bulk.json      (in tc-testing)
#
# O=DIR because the guest sees the source tree read-only; kselftest builds
# and copies the target there (rsync), and takes the uapi headers from
# DIR/usr/include (make headers, done here on the host). The modules are
# the debug kernel's own (modprobe). tc and ip learn pfifo_bulk and refnic
# from this checkout's plugins (PFB_TOP; iproute2 does not know them), and
# tdc gets TC_LIB_DIR through its tdc_config_local.py.
#
#   scripts/check-intree.sh [-f FLAVOUR | -k KVER] [-s SRC] [-t "TEST..."]
#	-f FLAVOUR	kasan (default) or kcsan
#	-k KVER		a stock kernel of the trixie root instead, with the
#			modules of this checkout (built for it beforehand:
#			trixie-root.sh --chroot make modules KVER=KVER)
#	-s SRC		another patched tree (default: debug-kernel.sh --src)
#	-H DIR		take the uapi headers from DIR/usr/include (a make
#			headers done before), not make headers in SRC: for
#			a SRC of tools/testing/selftests alone
#	-t TESTS	only these of the target's TEST_PROGS (make
#			TEST_PROGS=...), e.g. the quick pass "smoke.sh"
#
# Output under .vm/intree/FLAVOUR: ksft.log, tdc.log, the kernel log.
# Ends with "N passed, N failed" over the kselftest and tdc results; exits
# non-zero on any failure, a run that did not finish included. A skip
# fails unless selftests/expected_skips lists it for the kernel, as in make
# check (kselftest itself prints it "ok ... # SKIP").
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
flavour=kasan tests= stock= src= hdr=
while getopts "f:k:s:t:H:" opt; do
	case $opt in
	H) hdr=$OPTARG ;;
	f) flavour=$OPTARG ;;
	k) stock=$OPTARG ;;
	s) src=$OPTARG ;;
	t) tests=$OPTARG ;;
	*) sed -n 's/^#   //p' "$0" >&2; exit 2 ;;
	esac
done

die() { echo "not ok - check-intree: $*"; echo "0 passed, 1 failed"; exit 1; }

[ -n "$src" ] || src=$(scripts/debug-kernel.sh --src) ||
	die "no source tree with this checkout's series (make debug-kernel)"
if [ -n "$stock" ]; then
	root=${PFB_TRIXIE_ROOT:-/var/cache/pfifo-bulk/trixie-root} kver=$stock flavour=$stock
	[ -r "$root/boot/vmlinuz-$kver" ] || die "no kernel $kver in $root"
	[ "$(modinfo -F vermagic net/sched/sch_pfifo_bulk.ko 2>/dev/null | cut -d' ' -f1)" = "$kver" ] ||
		die "net/sched/sch_pfifo_bulk.ko is not built for $kver"
else
	root=$(scripts/debug-kernel.sh --root "$flavour") ||
		die "no $flavour debug kernel for this checkout's series (make debug-kernel)"
	kver=$(ls "$root"/boot/vmlinuz-* | sed 's|.*/vmlinuz-||')
fi
out=$top/.vm/intree/$flavour
rm -rf "$out"
mkdir -p "$out"

if [ -n "$hdr" ]; then
	mkdir -p "$out/obj/usr" && cp -r "$hdr/usr/include" "$out/obj/usr/" ||
		die "no headers in $hdr/usr/include"
fi
if ! make -s plugin ip-plugin bulkctl > "$out/userspace.log" 2>&1 ||
   { [ -z "$hdr" ] && ! make -s -C "$src" O="$out/obj" headers >> "$out/userspace.log" 2>&1; }; then
	tail -n 20 "$out/userspace.log" | sed 's/^/# /'
	die "userspace build or make headers (log: $out/userspace.log)"
fi

# make's argument, quoted for the guest's shell
tp=${tests:+"TEST_PROGS='$tests'"}
guest=$out/guest.sh
cat > "$guest" <<EOF
#!/bin/bash
# A debug kernel on TCG can go 20 s without running a thread.
sysctl -qw kernel.watchdog_thresh=60
export KSFT_MACHINE_SLOW=yes PFB_TOP=$top
# 4 x settings' 300 s, as check-debug gives a debug kernel on TCG
export kselftest_override_timeout=${PFB_DEBUG_TIMEOUT:-1200}
echo "# make -C tools/testing/selftests TARGETS=net/pfifo_bulk $tp run_tests"
make -C $src/tools/testing/selftests TARGETS=net/pfifo_bulk O=$out/obj \
	$tp run_tests > $out/ksft.log 2>&1
echo "# make exit \$?"
# kselftest reports a skip as "ok ... # SKIP"; here, as in make check, a
# skip passes only when selftests/expected_skips lists it for this kernel
. $top/selftests/lib.sh
awk '/^# SKIP/ { why = substr(\$0, 3) }
     /^ok [0-9]+ selftests: net\/pfifo_bulk: .* # SKIP/ { print \$2, \$5, why }' \
	$out/ksft.log | while read -r n t why; do
	skip_verdict "\$n" "\$t" "\$why"
	echo "\$REPLY"
done > $out/skips.log
modprobe sch_pfifo_bulk 2>/dev/null || insmod $top/net/sched/sch_pfifo_bulk.ko ||
	echo "not ok - no sch_pfifo_bulk module"
cp -r $src/tools/testing/selftests/tc-testing /tmp/tct
cat > /tmp/tct/tdc_config_local.py <<PY
import os
ENVIR = os.environ.copy()
ENVIR['TC_LIB_DIR'] = '$top/tc-plugin'
PY
echo "# tdc.py -f tc-tests/qdiscs/pfifo_bulk.json"
(cd /tmp/tct && ./tdc.py -f tc-tests/qdiscs/pfifo_bulk.json) > $out/tdc.log 2>&1
echo "# tdc.py exit \$?"
EOF
chmod +x "$guest"

echo "# $flavour: $kver, source $src"
t0=$(date +%s)
PFB_VM_ROOT=$root PFB_VM_ACCEL=tcg PFB_VM_OUT=$out \
	tools/vm/run -k "$kver" -c 4 -m 3G -t 5400 -- "$guest"
vmrc=$?
secs=$(($(date +%s) - t0))

# kselftest: "ok N selftests: net/pfifo_bulk: TEST"; tdc: "ok N ID - name"
ksft_pass=$(grep -cE '^ok [0-9]+ selftests: net/pfifo_bulk: ' "$out/ksft.log" 2>/dev/null)
ksft_fail=$(grep -cE '^not ok [0-9]+ selftests: net/pfifo_bulk: ' "$out/ksft.log" 2>/dev/null)
# a skip that expected_skips does not list (guest.sh's verdicts) fails
skip_bad=$(grep -c '^not ok' "$out/skips.log" 2>/dev/null)
tdc_pass=$(grep -E '^ok [0-9]+ ' "$out/tdc.log" 2>/dev/null | grep -vc '# skipped')
tdc_fail=$(grep -cE '^not ok [0-9]+ ' "$out/tdc.log" 2>/dev/null)
grep -E '^(not )?ok [0-9]+ selftests: ' "$out/ksft.log" 2>/dev/null
grep -E '^(not )?ok [0-9]+ ' "$out/tdc.log" 2>/dev/null | sed 's/^/tdc: /'
sed 's/^/skip: /' "$out/skips.log" 2>/dev/null
fail=$((ksft_fail + tdc_fail + skip_bad))
# every test asked for ran, and every tdc case of the file
want=$(echo ${tests:-$(make -s -C selftests --no-print-directory list_tests | tr ' ' '\n' | grep -vx tdc.sh)} | wc -w)
cases=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" \
	"$src/tools/testing/selftests/tc-testing/tc-tests/qdiscs/pfifo_bulk.json")
[ $((ksft_pass + ksft_fail)) -eq "$want" ] ||
	{ echo "not ok - kselftest ran $((ksft_pass + ksft_fail)) of $want tests"; fail=$((fail + 1)); }
[ "$tdc_pass" -eq "$cases" ] ||
	{ echo "not ok - tdc passed $tdc_pass of $cases cases"; fail=$((fail + 1)); }
[ "$vmrc" -eq 0 ] || { echo "not ok - the VM exited $vmrc (kernel log in $out)"; fail=$((fail + 1)); }
echo "# $flavour: kselftest $ksft_pass passed, $ksft_fail failed; tdc $tdc_pass of $cases passed; wall ${secs}s"
echo "$((ksft_pass + tdc_pass)) passed, $fail failed"
[ "$fail" -eq 0 ]
