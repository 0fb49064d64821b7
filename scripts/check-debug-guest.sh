#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of "make check-debug" (scripts/check-debug.sh starts it
# in tools/vm/run on a debug kernel): run selftests one at a time as
# selftests/run_tests.sh does - a test fails on any report its run added to
# the kernel log - but with a longer time limit, PFB_DEBUG_TIMEOUT (default
# 4 x the 300 s of selftests/settings): a debug kernel on TCG runs the same
# work several times slower. After each test kmemleak scans: a leak fails
# the test it followed. Then, with -s SECS, the soak (soak.sh -t SECS).
#
#   check-debug-guest.sh [-s SECS [-q]] [-d FILE] [-w SKIP,USECS] TEST...
#
# -d FILE: a copy of the kernel log, refreshed every 20 s, for when the
# guest does not come back (tools/vm/run then only has the console).
# -w SKIP,USECS: KCSAN's skip_watch and udelay_task for the soak (default
# 200,2000; the tests run with the kernel's). -q: the quick soak (soak.sh
# -q), with the kernel's sampling too: with the wide watch a single round
# of it did not end within 4 minutes.
#
# TAP lines "ok N NAME # SECONDS" / "not ok N NAME", then
# "# boot S s, suite S s" and "N passed, N failed, N skipped".
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
# skip_verdict, shared with run_tests.sh (not the tests' cleanup trap)
. "$top/selftests/lib.sh"
trap - EXIT
soak=
soak_quick=
dmesg_copy=
kcsan_watch=200,2000
while getopts "s:qd:w:" opt; do
	case $opt in
	s) soak=$OPTARG ;;
	q) soak_quick=-q ;;
	d) dmesg_copy=$OPTARG ;;
	w) kcsan_watch=$OPTARG ;;
	*) echo "usage: $0 [-s SECS [-q]] [-d FILE] [-w SKIP,USECS] TEST..."; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

if [ -n "$dmesg_copy" ]; then
	(while :; do
		dmesg > "$dmesg_copy.tmp" && mv "$dmesg_copy.tmp" "$dmesg_copy"
		sleep 20
	done) &
	copier=$!
	trap 'kill $copier 2>/dev/null; dmesg > "$dmesg_copy"' EXIT
fi
# A debug kernel on TCG, its vCPUs sharing a few busy host cores, can go
# 20 s without running a thread: report a soft lockup after 120 s, as
# tools/vm/run does for RCU stalls.
sysctl -qw kernel.watchdog_thresh=60

# Checks whose bounds need a guest that keeps a schedule of milliseconds
# are expected to fail here (selftests/lib.sh: xfail_on_slow).
export KSFT_MACHINE_SLOW=yes

# KCSAN sees a race only when another CPU touches the watched word while
# the watcher waits (udelay_task, 80 us) on one access in skip_watch (4000).
# TCG's vCPUs are host threads on a few busy cores, seldom running at the
# same time: with the defaults a plain counter incremented on every CPU in
# pfb_enqueue() went unreported for 20 minutes of pfifo_bulk_order.sh; with
# a watch on one access in 200 held 2 ms it was reported within 4 minutes
# of a 4-CPU flood. Everything is then about 3 times slower, so the tests
# run with the defaults, and the soak, whose oversubscribed round is that
# flood, with the close watch. PFB_KCSAN_WATCH=SKIP,USECS (check-debug.sh
# passes it as -w) sets another.
kcsan=/sys/module/kcsan/parameters
kcsan_defaults=
if [ -w "$kcsan/skip_watch" ]; then
	kcsan_defaults=$(cat "$kcsan/skip_watch"),$(cat "$kcsan/udelay_task")
fi
# kcsan_set SKIP,USECS: KCSAN's sampling from now on (none without KCSAN).
kcsan_set() {
	[ -n "$kcsan_defaults" ] || return 0
	echo "${1%,*}" > "$kcsan/skip_watch"
	echo "${1#*,}" > "$kcsan/udelay_task"
	echo "# kcsan: a watch on one access in $(cat "$kcsan/skip_watch"), held $(cat "$kcsan/udelay_task") us"
}
kcsan_set "$kcsan_defaults"

kml=/sys/kernel/debug/kmemleak
boot=$(cut -d' ' -f1 /proc/uptime)
echo "# kernel $(uname -r), $(nproc) CPUs, up ${boot}s"
[ -w "$kml" ] || { echo "not ok 0 kmemleak: no $kml"; exit 1; }
# What boot left unreferenced is not the tests': forget it, but list it.
# (debugfs files have no size: read them to know whether they are empty)
echo scan > "$kml"
report=$(cat "$kml")
if [ -n "$report" ]; then
	echo "# kmemleak at boot (not counted): $(grep -c '^unreferenced object' <<< "$report") objects"
	sed 's/^/#   /' <<< "$report" | head -n 40
fi
echo clear > "$kml"

n=0 pass=0 fail=0 skip=0
# leaks NAME: a kmemleak scan; anything new fails NAME. kmemleak reports
# only objects allocated 5 s before the scan starts (MSECS_MIN_AGE): wait
# that long first, or a leak of NAME's last seconds is blamed on the next
# test (seen: a qdisc's leak at smoke.sh's end).
leaks() {
	local report

	sleep 6
	echo scan > "$kml"
	report=$(cat "$kml")
	[ -n "$report" ] || return 0
	echo "# kmemleak after $1: $(grep -c '^unreferenced object' <<< "$report") objects"
	sed 's/^/#   /' <<< "$report" | head -n "${PFB_KMEMLEAK_LINES:-400}"
	echo clear > "$kml"
	return 1
}
# result NAME RC SECS OUTPUT-FILE: the TAP line of a test. A skip passes
# only when selftests/expected_skips lists it for this kernel, as in
# run_tests.sh.
result() {
	local name=$1 rc=$2 secs=$3
	n=$((n + 1))
	case $rc in
	0) pass=$((pass + 1)); echo "ok $n $name # ${secs}s" ;;
	4)
		if skip_verdict $n "$name" "$(<"$4")"; then
			skip=$((skip + 1))
		else
			fail=$((fail + 1))
		fi
		echo "$REPLY" ;;
	*) fail=$((fail + 1)); echo "not ok $n $name # ${secs}s" ;;
	esac
}

timeout=${PFB_DEBUG_TIMEOUT:-$((4 * $(sed -n 's/^timeout=//p' "$top/selftests/settings")))}

# run NAME SECS CMD...: one test in selftests/, its output, the reports
# its run added to the kernel log, then a kmemleak scan.
run() {
	local name=$1 secs=$2 t0 seen rc
	shift 2
	t0=$(date +%s)
	seen=$(dmesg | wc -l)
	(cd "$top/selftests" && PFB_TOP=$top timeout -k 10 "$secs" "$@") 2>&1 |
		tee /tmp/pfb-out.$$ | sed 's/^/# /'
	rc=${PIPESTATUS[0]}
	# 124: stopped by timeout; 137: killed 10 s later, TERM not enough
	case $rc in 124 | 137) echo "# TIMEOUT ${secs}s" ;; esac
	dmesg | tail -n +$((seen + 1)) > /tmp/pfb-dmesg.$$
	if ! "$top/tools/vm/check-kernel-log" /tmp/pfb-dmesg.$$ > /tmp/pfb-reports.$$; then
		sed 's/^/# kernel: /' /tmp/pfb-reports.$$
		[ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] && rc=1
	fi
	rm -f /tmp/pfb-dmesg.$$ /tmp/pfb-reports.$$
	leaks "$name" || rc=1
	result "$name" "$rc" $(($(date +%s) - t0)) /tmp/pfb-out.$$
	rm -f /tmp/pfb-out.$$
}

start=$(date +%s)
for t in "$@"; do
	run "$t" "$timeout" ./"$t"
done
if [ -n "$soak" ]; then
	[ -n "$soak_quick" ] || kcsan_set "$kcsan_watch"
	# The fault phase runs whole rounds, at least three, however short
	# SECS is: with the wide watch the KCSAN kernel took 5 minutes a
	# round, and a limit of 2 x SECS + one test's went by 1,800 s into
	# the soak's closing checks.
	run "soak.sh ${soak_quick:+-q }-t $soak" $((soak * 2 + 2 * timeout)) ./soak.sh $soak_quick -t "$soak"
fi

# Objects freed late: look again.
leaks "the last test" || { fail=$((fail + 1)); echo "not ok $((n + 1)) kmemleak at the end"; }
echo "# boot ${boot}s, suite $(($(date +%s) - start))s"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
