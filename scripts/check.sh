#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's test command (make check): for every test kernel, build the
# modules warning-free with W=1 and sparse, then run the selftests inside the
# VM on that kernel; around them, checkpatch, the userspace builds, the
# host-side tests and a DKMS build. Prints TAP per kernel and ends with
# "N passed, N failed" per kernel and in total; exits non-zero on any
# failure.
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
kernels=${PFB_KERNELS:-"$(newest 6.1) $(newest 6.12)"}

total_pass=0 total_fail=0
cur_pass=0 cur_fail=0
summary=()

count() {
	total_pass=$((total_pass + $1)) cur_pass=$((cur_pass + $1))
	total_fail=$((total_fail + $2)) cur_fail=$((cur_fail + $2))
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

echo "# pfifo_bulk check: kernels $kernels"
step checkpatch make -s checkpatch
step userspace-build make -s plugin ip-plugin bulkctl
step selftests-build make -s -C selftests
for t in selftests/host_*.sh; do
	[ -x "$t" ] && step "host-$(basename "$t" .sh)" "$t"
done

for k in $kernels; do
	echo "# === kernel $k"
	cur_pass=0 cur_fail=0
	step "build-$k" build_clean "$k"
	step "dkms-$k" scripts/dkms-check.sh "$k"
	# The VM runs the suite; its last line is "N passed, N failed, N skipped".
	tools/vm/run -k "$k" -- selftests/run_tests.sh ${PFB_TESTS:-} | tee "$out/selftests-$k.log"
	vmrc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/selftests-$k.log" | tail -n1)
	pass=$(echo "$line" | awk '{ print $1 }')
	fail=$(echo "$line" | awk '{ print $3 }')
	if [ -z "$line" ]; then
		pass=0 fail=1
		echo "not ok - selftests on $k did not finish (exit $vmrc)"
	elif [ "$vmrc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=1
		echo "not ok - VM on $k exited $vmrc (kernel log: .vm/kernel-$k.log)"
	fi
	count "$pass" "$fail"
	summary+=("$k: $cur_pass passed, $cur_fail failed")
done

echo "# ==="
for s in "${summary[@]}"; do
	echo "$s"
done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
