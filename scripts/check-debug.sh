#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug [QUICK=1]: the selftests on the debug kernels of "make
# debug-kernel" (sch_pfifo_bulk and refnic in-tree, loaded by modprobe), in
# tools/vm/run with 4 vCPUs on multi-threaded TCG, each test followed by a
# kmemleak scan (scripts/check-debug-guest.sh), then the soak. Any KASAN,
# lockdep, DEBUG_ATOMIC_SLEEP, kmemleak or other kernel report fails, and
# so does a KCSAN report whose plain access has a frame in our modules;
# KCSAN reports in the core kernel are listed, not failures
# (tools/vm/check-kernel-log).
#
# Kprobes patch kernel text, which multi-threaded TCG does not survive:
# the tests that use them (found by grep) run in a second boot on one
# host thread, still with 4 vCPUs.
#
#   scripts/check-debug.sh [--quick | --only "TEST..."] [FLAVOUR...]
#                                                   (default: kasan kcsan)
#
# Full: every selftest, then soak.sh -t $PFB_DEBUG_SOAK_SECS (default 300:
# a fault phase and an oversubscribed round of 300 s each, over 10 minutes).
# --quick: smoke.sh and the quick soak (soak.sh -q -t 30): one accounting
# round, 4 pktgen flows checked for order and every packet accounted for,
# then the oversubscribed round of 30 s, the concurrency and order test:
# more senders than vCPUs on one lockless pfifo_bulk, a numbered stream
# checked for order, the backlog drained. KCSAN samples as it does by
# default there (check-debug-guest.sh).
# --only "TEST...": those selftests (soak.sh among them: the soak), for a
# test to be re-run, or a full run to be done in parts.
#
# Ends with one line per kernel (boot and suite time, results, reports)
# and "N passed, N failed"; exits non-zero on any failure.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
quick='' quick_end=0 only=''
case ${1:-} in
--quick) quick=1; shift ;;
--only) only=${2:?--only needs a list of tests}; shift 2 ;;
esac
flavours=("$@")
[ ${#flavours[@]} -gt 0 ] || flavours=(kasan kcsan)
out=$top/.vm/check-debug
mkdir -p "$out"

# What patches kernel text: kprobes, and the helpers of lib_trace.sh that
# refuse to run on multi-threaded TCG (lib.sh: forbid_text_patching). The
# debug kernels have no jump labels, but the helpers cannot know that.
text_patching='batch_trace_start|batch_events_start|lock_count_start|kprobe_events|forbid_text_patching'

if [ -n "$quick" ]; then
	mt_tests=(smoke.sh)
	st_tests=()
	soak=30
	# CI's budget: 30 minutes for both kernels, shared (the first
	# kernel's boot and tests take longer than the second's). A guest
	# still running then is stopped, and the run fails as not finished.
	# Both take 9.5 minutes on an idle 2-core host (KASAN 370 s, KCSAN
	# 201 s); with another 4-vCPU guest busy beside them they get half
	# the host, and 15 minutes were not enough for KASAN alone. The
	# budget is for a guest that hangs, not a measure of speed.
	quick_end=$(($(date +%s) + ${PFB_DEBUG_QUICK_SECS:-1800}))
else
	mt_tests=() st_tests=() soak=
	for t in ${only:-$(make -s -C selftests --no-print-directory list_tests) soak.sh}; do
		[ -f "selftests/$t" ] || { echo "not ok - no selftest $t"; exit 1; }
		if [ "$t" = soak.sh ]; then
			soak=${PFB_DEBUG_SOAK_SECS:-300}
			continue
		fi
		if grep -qE "$text_patching" "selftests/$t"; then
			st_tests+=("$t")
		else
			mt_tests+=("$t")
		fi
	done
fi

total_pass=0 total_fail=0
summary=()

# The userspace the tests run: tc plugin, ip plugin, bulkctl, nl_fuzz and
# pfb_load. The checkout's modules are not used (their vermagic is not the
# debug kernels').
if ! make -s plugin ip-plugin bulkctl > "$out/userspace.log" 2>&1 ||
   ! make -s -C selftests >> "$out/userspace.log" 2>&1; then
	echo "not ok - userspace build (log: $out/userspace.log)"
	tail -n 20 "$out/userspace.log" | sed 's/^/# /'
	exit 1
fi

# reports LOG: counts of each kind of report in a kernel log.
reports() {
	local log=$1 ours core
	ours=$("$top/tools/vm/check-kernel-log" "$log" 2> "$log.kcsan-core" | grep -c 'BUG: KCSAN')
	core=$(sort -u "$log.kcsan-core" | grep -c 'kcsan, not ours')
	printf 'KASAN %d, lockdep %d, atomic-sleep %d, kmemleak %d, KCSAN ours %d (core %d listed), other %d' \
		"$(grep -c 'BUG: KASAN' "$log")" \
		"$(grep -cE 'WARNING: (possible|inconsistent lock|suspicious RCU|bad unlock|held lock)|INFO: possible' "$log")" \
		"$(grep -cE 'BUG: (sleeping function|scheduling while atomic)' "$log")" \
		"$(grep -cE 'new suspected memory leak|unreferenced object' "$log")" \
		"$ours" "$core" \
		"$("$top/tools/vm/check-kernel-log" "$log" 2>/dev/null | grep -vcE 'KASAN|KCSAN|kmemleak|unreferenced|WARNING: (possible|inconsistent lock|suspicious RCU|bad unlock|held lock)|sleeping function|scheduling while atomic')"
}

# boot FLAVOUR NAME THREADING TIMEOUT GUEST-ARGS...: one VM run of
# check-debug-guest.sh; adds its results to the counts.
boot() {
	local f=$1 name=$2 thread=$3 secs=$4 vmout log line pass fail skip t0 vmrc xfail
	shift 4
	vmout=$out/$f-$name
	rm -rf "$vmout"
	mkdir -p "$vmout"
	echo "# $f/$name: $kver, 4 vCPUs, TCG thread=$thread: $*"
	t0=$(date +%s)
	PFB_VM_ROOT=$root PFB_VM_ACCEL=tcg PFB_VM_TCG_THREAD=$thread PFB_VM_OUT=$vmout \
		tools/vm/run -k "$kver" -c 4 -m 3G -t "$secs" -- \
		scripts/check-debug-guest.sh -d "$vmout/dmesg" \
		${PFB_KCSAN_WATCH:+-w "$PFB_KCSAN_WATCH"} "$@" \
		2> "$vmout/stderr" | tee "$vmout/tap"
	vmrc=${PIPESTATUS[0]}
	sed 's/^/# vm: /' "$vmout/stderr" | grep -v 'kcsan, not ours' | tail -n 20
	log=$(ls "$vmout"/kernel-*-*.log 2>/dev/null | tail -n1)
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$vmout/tap" | tail -n1)
	# A guest that did not finish left only its console: take the copy.
	if [ -n "$log" ] && [ -s "$vmout/dmesg" ] && [ -z "$line" ]; then
		cp "$vmout/dmesg" "$log"
	fi
	read -r pass _ fail _ skip _ <<< "$line"
	pass=${pass:-0} fail=${fail:-0} skip=${skip:-0}
	# A skip that selftests/expected_skips does not list for the kernel is
	# a failure already (check-debug-guest.sh); the listed ones are shown.
	grep -E '^ok [0-9]+ .* # SKIP ' "$vmout/tap" | sed 's/^ok [0-9]* /# skipped as expected: /'
	if [ -z "$line" ]; then
		echo "not ok - $f/$name did not finish (tools/vm/run exit $vmrc)"
		fail=$((fail + 1))
	elif [ "$vmrc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		echo "not ok - $f/$name: the VM exited $vmrc (kernel log: $log)"
		fail=$((fail + 1))
	fi
	# Checks expected to fail on a slow machine (selftests/lib.sh:
	# xfail_on_slow): listed with their test, and counted.
	xfail=$(awk '/# XFAIL/ { x[++n] = $0 }
		/^(not )?ok [0-9]+ / { t = $1 == "ok" ? $3 : $4
			for (i = 1; i <= n; i++) print "# XFAIL " t ": " substr(x[i], 3); n = 0 }' "$vmout/tap")
	[ -z "$xfail" ] || echo "$xfail"
	cur_pass=$((cur_pass + pass)) cur_fail=$((cur_fail + fail))
	wall=$(($(date +%s) - t0))
	summary+=("$f/$name: $(sed -n 's/^# boot \(.*\)/boot \1/p' "$vmout/tap" | tail -n1), wall ${wall}s; $pass passed, $fail failed, $skip skipped (listed), $(grep -c . <<< "$xfail") checks XFAIL; ${log:+$(reports "$log")}")
	if [ -n "$log" ] && [ -s "$log.kcsan-core" ]; then
		sort "$log.kcsan-core" | uniq -c | sed 's/^/# /'
	fi
}

for f in "${flavours[@]}"; do
	cur_pass=0 cur_fail=0
	echo "# === debug kernel $f"
	if ! root=$(scripts/debug-kernel.sh --root "$f"); then
		echo "not ok - $f: no debug kernel for this tree's series (make debug-kernel)"
		total_fail=$((total_fail + 1))
		summary+=("$f: not built")
		continue
	fi
	kver=$(ls "$root"/boot/vmlinuz-* | sed 's|.*/vmlinuz-||')
	if [ ${#mt_tests[@]} -gt 0 ] || [ -n "$soak" ]; then
		secs=$((quick ? quick_end - $(date +%s) : 5 * 3600))
		boot "$f" mt multi $((secs > 0 ? secs : 1)) ${soak:+-s "$soak"} \
			${quick:+-q} "${mt_tests[@]}"
	fi
	if [ ${#st_tests[@]} -gt 0 ]; then
		boot "$f" st single 3600 "${st_tests[@]}"
	fi
	total_pass=$((total_pass + cur_pass)) total_fail=$((total_fail + cur_fail))
done

echo "# ==="
for s in "${summary[@]}"; do
	echo "# $s"
done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
