#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_tests.sh [TEST...]: run the selftests (default: TEST_PROGS from the
# Makefile) as a TAP stream, and fail a test on any report its run added to
# the kernel log. Ends with "N passed, N failed, N skipped". Runs on a real host with the modules installed, or inside
# tools/vm/run.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
timeout=$(sed -n 's/^timeout=//p' "$here/settings")

if [ $# -eq 0 ]; then
	set -- $(make -s -C "$here" --no-print-directory list_tests)
fi

echo "TAP version 13"
echo "1..$#"
echo "# kernel $(uname -r)"
n=0 pass=0 fail=0 skip=0
for t in "$@"; do
	n=$((n + 1))
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
	case $rc in
	0) pass=$((pass + 1)); echo "ok $n $t # ${secs}s" ;;
	4) skip=$((skip + 1)); echo "ok $n $t # SKIP" ;;
	124) fail=$((fail + 1)); echo "not ok $n $t # TIMEOUT ${timeout}s" ;;
	*) fail=$((fail + 1)); echo "not ok $n $t # exit=$rc" ;;
	esac
done
echo "# kernel $(uname -r): $pass passed, $fail failed, $skip skipped"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
