#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_tests.sh [TEST...]: run the selftests (default: TEST_PROGS from the
# Makefile) as a TAP stream, and fail a test on any report its run added to
# the kernel log. A skip (exit 4) passes only when expected_skips lists it,
# with its reason, for the running kernel; any other skip is a failure. On
# multi-threaded TCG (the parallel guest of make check) only the tests of
# TEST_PROGS_PARALLEL run: any other fails unrun. Ends with "N passed,
# N failed, N skipped"; exits non-zero on a failure or when there is no
# test to run. Runs on a real host with the modules installed, or inside
# tools/vm/run.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
timeout=$(sed -n 's/^timeout=//p' "$here/settings")
. "$here/lib.sh"
trap - EXIT

if [ $# -eq 0 ]; then
	set -- $(make -s -C "$here" --no-print-directory list_tests)
fi
kver=$(uname -r)

parallel=
if in_parallel_vm; then
	parallel=" $(make -s -C "$here" --no-print-directory list_tests_parallel) "
fi

echo "TAP version 13"
echo "1..$#"
echo "# kernel $kver${parallel:+, multi-threaded TCG on $(nproc) CPUs}"
[ $# -gt 0 ] || { echo "# no test to run"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
n=0 pass=0 fail=0 skip=0
for t in "$@"; do
	n=$((n + 1))
	if [ -n "$parallel" ] && [[ $parallel != *" $t "* ]]; then
		fail=$((fail + 1))
		echo "not ok $n $t # not run: not in TEST_PROGS_PARALLEL, and this guest runs multi-threaded TCG"
		continue
	fi
	seen=$(dmesg | wc -l)
	start=$(date +%s)
	out=$(cd "$here" && PFB_TOP=$top timeout -k 10 "$timeout" ./"$t" 2>&1)
	rc=$?
	secs=$(($(date +%s) - start))
	echo "$out" | sed 's/^/# /'
	if dmesg | tail -n +$((seen + 1)) | "$top/tools/vm/check-kernel-log" > /tmp/pfb-klog.$$; then
		:
	else
		sed 's/^/# kernel: /' /tmp/pfb-klog.$$
		[ $rc -eq 0 ] || [ $rc -eq 4 ] && rc=1
	fi
	rm -f /tmp/pfb-klog.$$
	# The failed checks again, next to the verdict: a log cut to its last
	# lines (CI shows only those) still says what failed.
	[ $rc -eq 0 ] || echo "$out" | grep '^not ok' | sed 's/^/# failed: /'
	case $rc in
	0) pass=$((pass + 1)); echo "ok $n $t # ${secs}s" ;;
	4)
		if skip_verdict $n "$t" "$out"; then
			skip=$((skip + 1))
		else
			fail=$((fail + 1))
		fi
		echo "$REPLY" ;;
	124) fail=$((fail + 1)); echo "not ok $n $t # TIMEOUT ${timeout}s" ;;
	*) fail=$((fail + 1)); echo "not ok $n $t # exit=$rc" ;;
	esac
done
echo "# kernel $kver: $pass passed, $fail failed, $skip skipped"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
