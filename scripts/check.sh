#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's test command (make check): for every test kernel, build the
# modules warning-free with W=1 and sparse, then run the selftests inside
# two VMs on that kernel: the tests of TEST_PROGS_PARALLEL (selftests/
# Makefile) on multi-threaded TCG with 4 vCPUs, the rest on the default
# single-threaded TCG (tools/vm/run says why); around them, checkpatch, the
# userspace builds, the host-side tests and a DKMS build. Prints TAP per
# kernel and ends with "N passed, N failed, N skipped" per kernel and in
# total; exits non-zero on any failure. Honest totals: a kernel that is
# missing, a VM that did not run every test it was given, a kernel that
# ran no test, and a skip not listed in selftests/expected_skips (run_tests.sh
# counts that one) are failures.
#
#   scripts/check.sh            newest installed 6.1 and 6.12 kernels
#   PFB_KERNELS="K1 K2" scripts/check.sh
#   PFB_TESTS="smoke.sh ..." scripts/check.sh   a subset of the selftests
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=$top/.vm/check
mkdir -p "$out"

newest() {
	ls /boot/vmlinuz-"$1".*-amd64 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1
}

total_pass=0 total_fail=0 total_skip=0
cur_pass=0 cur_fail=0 cur_skip=0
summary=()

count() {
	total_pass=$((total_pass + $1)) cur_pass=$((cur_pass + $1))
	total_fail=$((total_fail + $2)) cur_fail=$((cur_fail + $2))
	total_skip=$((total_skip + ${3:-0})) cur_skip=$((cur_skip + ${3:-0}))
}

# fail_line MESSAGE: a failure of its own.
fail_line() {
	echo "not ok - $1"
	count 0 1
}

# step NAME CMD...: a host-side step counted as one test.
step() {
	local name=$1
	shift
	if "$@" > "$out/$name.log" 2>&1; then
		echo "ok - $name"
		count 1 0
	else
		echo "not ok - $name (log: $out/$name.log)"
		sed 's/^/# /' "$out/$name.log" | tail -n 30
		count 0 1
	fi
}

# build_clean KVER: W=1 and sparse must print no warning at all.
build_clean() {
	make -s clean-modules KVER="$1" >/dev/null 2>&1
	make modules KVER="$1" W=1 C=1 2>&1 | tee "$out/build-$1.raw" >/dev/null
	[ "${PIPESTATUS[0]}" -eq 0 ] || return 1
	! grep -iE 'warning|error:' "$out/build-$1.raw" | grep -v 'Skipping BTF generation'
}

# The kernels: both series must be there, unless PFB_KERNELS names them.
if [ -n "${PFB_KERNELS:-}" ]; then
	want=$PFB_KERNELS
else
	want=
	for series in 6.1 6.12; do
		k=$(newest $series)
		want+=" ${k:-missing-$series}"
	done
fi
kernels=
for k in $want; do
	if [ -r "/boot/vmlinuz-$k" ] && [ -d "/lib/modules/$k/build" ]; then
		kernels+=" $k"
	else
		fail_line "kernel ${k#missing-} is not installed (make setup)"
		summary+=("${k#missing-}: missing, 0 passed, 1 failed")
	fi
done

# The selftests of each VM (PFB_TESTS: those of the subset).
parallel=$(make -s -C selftests --no-print-directory list_tests_parallel)
if [ -n "${PFB_TESTS:-}" ]; then
	tests_multi= tests_single=
	for t in $PFB_TESTS; do
		if [[ " $parallel " == *" $t "* ]]; then
			tests_multi+=" $t"
		else
			tests_single+=" $t"
		fi
	done
else
	tests_single=$(make -s -C selftests --no-print-directory list_tests_single)
	tests_multi=$parallel
fi

# vm_suite KVER THREAD CPUS TEST...: run_tests.sh in a VM on KVER with TCG
# threading THREAD and CPUS vCPUs; counts what it reports (and adds the
# tests that ran, not skipped, to $ran), and a failure when it did not
# report on every test.
vm_suite() {
	local k=$1 thread=$2 cpus=$3 log vmrc line pass fail skip
	shift 3
	[ $# -gt 0 ] || return 0
	log=$out/selftests-$k-$thread.log
	echo "# --- $thread-threaded TCG, $cpus vCPUs: $*"
	PFB_VM_TCG_THREAD=$thread tools/vm/run -c "$cpus" -k "$k" -- \
		selftests/run_tests.sh "$@" | tee "$log"
	vmrc=${PIPESTATUS[0]}
	# (the guest's console ends lines with CR LF)
	line=$(tr -d '\r' < "$log" | grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' | tail -n1)
	read -r pass _ fail _ skip _ <<< "$line"
	if [ -z "$line" ]; then
		fail_line "selftests on $k ($thread) did not finish (exit $vmrc)"
		return
	fi
	count "$pass" "$fail" "$skip"
	ran=$((ran + pass + fail))
	if [ $((pass + fail + skip)) -ne $# ]; then
		fail_line "selftests on $k ($thread) reported $((pass + fail + skip)) of $# tests"
	elif [ "$vmrc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail_line "VM on $k ($thread) exited $vmrc (kernel log: .vm/kernel-$k.log)"
	fi
}

echo "# pfifo_bulk check: kernels$kernels"
step checkpatch make -s checkpatch
step userspace-build make -s plugin ip-plugin bulkctl
step selftests-build make -s -C selftests
for t in selftests/host_*.sh; do
	step "host-$(basename "$t" .sh)" "$t"
done

for k in $kernels; do
	echo "# === kernel $k"
	cur_pass=0 cur_fail=0 cur_skip=0
	step "build-$k" build_clean "$k"
	step "dkms-$k" scripts/dkms-check.sh "$k"
	ran=0
	vm_suite "$k" single 2 $tests_single
	vm_suite "$k" multi 4 $tests_multi
	[ "$ran" -gt 0 ] || fail_line "no selftest ran on $k (all skipped, or none given)"
	summary+=("$k: $cur_pass passed, $cur_fail failed, $cur_skip skipped")
done

echo "# ==="
for s in "${summary[@]}"; do
	echo "$s"
done
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
