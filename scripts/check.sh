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
# A kernel of the Debian 13 root (scripts/trixie-root.sh) has its modules
# and its DKMS build made in that root, with trixie's gcc 14, and its
# guests run with that root as their userspace (trixie's tc and ethtool);
# the host's kernels build and run on the host's Debian 12.
#
# The newest kernel runs the selftests a second time with the qdisc in the
# mode that is not its default (the module's modinfo says which): today
# sch_pfifo_bulk loaded with lockless=0 (PFB_LOCKLESS=0 in the guest;
# selftests/lib.sh), reported as "KVER (lockless=0)". That is the kernel
# where the mode matters (from 6.19 a locked root rides the core's defer
# list), so both modes run there. The tests that run the same in both
# modes (TEST_PROGS_MODE_FREE: refnic's own, and those that load their
# mode themselves) run once there, every other one in each pass.
#
#   scripts/check.sh            6.1 (host), and 6.12+deb13 and the newest
#                               backports kernel (trixie root)
#   PFB_KERNELS="K1 K2" scripts/check.sh
#   PFB_TESTS="smoke.sh ..." scripts/check.sh   a subset of the selftests
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=$top/.vm/check
mkdir -p "$out"
# (no guest's list or log of an earlier run: the end checks read them)
rm -f "$out"/selftests-*.tests "$out"/selftests-*.log
modules=/var/cache/pfifo-bulk/check-modules/$(printf %s "$top" | sha1sum | cut -c1-12)
trap 'rm -rf "$modules"' EXIT

trixie=${PFB_TRIXIE_ROOT:-/var/cache/pfifo-bulk/trixie-root}

# newest GLOB [ROOT]: the newest kernel vmlinuz-GLOB-amd64 in ROOT/boot.
newest() {
	ls "${2:-}"/boot/vmlinuz-$1-amd64 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1
}

# in_trixie KVER: true for a kernel of the trixie root (not the host's).
in_trixie() {
	! [ -r "/boot/vmlinuz-$1" ] && [ -r "$trixie/boot/vmlinuz-$1" ]
}

# in_root_of KVER CMD...: CMD where KVER's modules are built.
in_root_of() {
	local k=$1
	shift
	if in_trixie "$k"; then
		scripts/trixie-root.sh --chroot "$@"
	else
		"$@"
	fi
}

total_pass=0 total_fail=0 total_skip=0
declare -A kpass kfail kskip kran
kcur=
summary=()

count() {
	total_pass=$((total_pass + $1))
	total_fail=$((total_fail + $2))
	total_skip=$((total_skip + ${3:-0}))
	[ -n "$kcur" ] || return 0
	kpass[$kcur]=$((${kpass[$kcur]:-0} + $1))
	kfail[$kcur]=$((${kfail[$kcur]:-0} + $2))
	kskip[$kcur]=$((${kskip[$kcur]:-0} + ${3:-0}))
}

# fail_line MESSAGE: a failure of its own.
fail_line() {
	echo "not ok - $1"
	count 0 1
}

# step NAME CMD...: a host-side step counted as one test; returns its status.
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
		return 1
	fi
}

# warning_free LOG: a build log with no warning and no error (BTF's
# "Skipping BTF generation" notice is neither).
warning_free() {
	! grep -iE 'warning|error:' "$1" | grep -v 'Skipping BTF generation'
}

# checked LOG: sparse ran (kbuild's CHECK lines): kbuild turns C=1 off,
# with a notice only, when it finds no checker it accepts.
checked() {
	grep -q '^  CHECK ' "$1" || { grep -i 'C=1' "$1"; echo "sparse did not run" >&2; false; }
}

# build_clean KVER: W=1 and sparse must print no warning at all; the modules
# are then kept in $modules/KVER, since building for the next kernel cleans
# the checkout (kbuild's clean deletes every .ko under M=, so they are kept
# outside it, where the guest still sees them).
build_clean() {
	in_root_of "$1" make -s clean-modules KVER="$1" >/dev/null 2>&1
	in_root_of "$1" make modules KVER="$1" W=1 C=1 2>&1 | tee "$out/build-$1.raw" >/dev/null
	[ "${PIPESTATUS[0]}" -eq 0 ] || return 1
	warning_free "$out/build-$1.raw" && checked "$out/build-$1.raw" || return 1
	rm -rf "${modules:?}/$1"
	mkdir -p "$modules/$1"
	cp net/sched/sch_pfifo_bulk.ko drivers/net/refnic/refnic.ko "$modules/$1/"
}

# build_i386: both modules for Debian 12's 32-bit kernel (686), W=1 and
# sparse clean too, in a copy of the tree, since the checkout holds the
# test kernels' builds. Only built: where a u64 takes two words the
# counters and time arithmetic must still compile to no 64-bit division
# helper (modpost refuses __udivdi3) and no warning.
build_i386() {
	local tmp rc
	tmp=$(mktemp -d)
	git ls-files -z Kbuild net drivers include |
		tar --null -T - -cf - | tar -xf - -C "$tmp"
	make -C "$(scripts/i386-headers.sh --print)" M="$tmp" modules W=1 C=1 2>&1 |
		tee "$out/build-i386.raw"
	rc=${PIPESTATUS[0]}
	rm -rf "$tmp"
	[ "$rc" -eq 0 ] || return 1
	warning_free "$out/build-i386.raw" && checked "$out/build-i386.raw"
}

# build_race KVER: the qdisc's test-only build (make race-modules: a delay
# that opens the lost-wakeup window, for selftests/pfifo_bulk_wakeup.sh),
# kept as $modules/KVER/race/sch_pfifo_bulk.ko. After build_clean, which
# empties $modules/KVER.
build_race() {
	in_root_of "$1" make -s race-modules KVER="$1" RACE_OUT=".build/race/$1" || return 1
	mkdir -p "$modules/$1/race"
	cp ".build/race/$1/sch_pfifo_bulk.ko" "$modules/$1/race/"
}

# The kernels, unless PFB_KERNELS names them: bookworm's 6.1 on the host,
# and in the trixie root trixie's 6.12 (the series, and today the release,
# of bookworm's 6.12+deb12, which it replaces) and the newest
# trixie-backports kernel; all three must be there.
if [ -n "${PFB_KERNELS:-}" ]; then
	want=$PFB_KERNELS
else
	k=$(newest '6.1.*')
	want=" ${k:-missing-6.1}"
	t612=$(newest '6.12.*+deb13' "$trixie")
	want+=" ${t612:-missing-6.12+deb13}"
	k=$(newest '*' "$trixie")
	[ -n "$k" ] && [ "$k" != "$t612" ] || k=missing-backports
	want+=" $k"
fi
kernels=
for k in $want; do
	if { [ -r "/boot/vmlinuz-$k" ] && [ -d "/lib/modules/$k/build" ]; } ||
	   { [ -r "$trixie/boot/vmlinuz-$k" ] && [ -d "$trixie/lib/modules/$k/build" ]; }; then
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
mode_free=" $(make -s -C selftests --no-print-directory list_tests_mode_free) "

# A run: a kernel, or KVER@lockless=N for that kernel with the qdisc
# module loaded with lockless=N. run_kver RUN: its kernel; run_name RUN: as
# printed.
run_kver() {
	echo "${1%@*}"
}
run_name() {
	case $1 in
	*@lockless=*) echo "${1%@*} (${1#*@})" ;;
	*) echo "$1" ;;
	esac
}

# tests_of RUN TEST...: those of the TESTs that RUN runs: all, but the
# tests that run the same in both modes (selftests/Makefile:
# TEST_PROGS_MODE_FREE) run once on the newest kernel, every other one in
# each of its passes. Its two single-threaded guests run one after 6.1's
# and one after 6.12's, on the two host CPUs: with all of them in the
# first pass, one CPU idled at the end for as long as they take (about
# 4 minutes of tests); split, for the difference of the halves.
tests_of() {
	local run=$1 t n=0 pass=
	shift
	if [ -n "$other_run" ]; then
		case $run in
		"${other_run%@*}") pass=1 ;;
		"$other_run") pass=0 ;;
		esac
	fi
	for t in "$@"; do
		if [ -n "$pass" ] && [[ $mode_free == *" $t "* ]]; then
			n=$((n + 1))
			[ $((n % 2)) -eq "$pass" ] || continue
		fi
		echo "$t"
	done
}

# other_mode KVER: the lockless value that is not the default of the
# module built for KVER (its parameter's description ends "(default N)");
# nothing when modinfo cannot tell.
other_mode() {
	case $(modinfo -F parm "$modules/$1/sch_pfifo_bulk.ko" 2>/dev/null) in
	*"(default 1)"*) echo 0 ;;
	*"(default 0)"*) echo 1 ;;
	esac
}

# vm_start RUN THREAD CPUS TEST...: run_tests.sh in a VM on RUN's kernel
# with TCG threading THREAD and CPUS vCPUs, in the background, with the
# modules of build_clean, for the TESTs of tests_of; its output goes to its
# log, and vm_tally reads it. Nothing when none is left.
vm_start() {
	local run=$1 thread=$2 cpus=$3 k lockless=
	shift 3
	set -- $(tests_of "$run" "$@")
	[ $# -gt 0 ] || return 0
	k=$(run_kver "$run")
	[[ $run == *@lockless=* ]] && lockless=${run##*=}
	echo "$@" > "$out/selftests-$run-$thread.tests"
	echo "# --- kernel $(run_name "$run"), $thread-threaded TCG, $cpus vCPUs: started"
	PFB_VM_TCG_THREAD=$thread PFB_VM_USERSPACE=$(in_trixie "$k" && echo "$trixie") \
		tools/vm/run -c "$cpus" -k "$k" -- \
		env PFB_MODULES_DIR="$modules/$k" ${lockless:+PFB_LOCKLESS=$lockless} \
		selftests/run_tests.sh "$@" \
		> "$out/selftests-$run-$thread.log" 2>&1 &
	vm_pid[$run-$thread]=$!
	vm_t0[$run-$thread]=$SECONDS
}

# vm_tally RUN THREAD: wait for that VM, print its log, and count what it
# reports (and add the tests that ran, not skipped, to the run's ran);
# a failure when it did not report on every test it was given.
vm_tally() {
	local k=$1 thread=$2 log vmrc line pass fail skip tests

	[ -n "${vm_pid[$k-$thread]:-}" ] || return 0
	log=$out/selftests-$k-$thread.log
	wait "${vm_pid[$k-$thread]}"
	vmrc=$?
	read -ra tests < "$out/selftests-$k-$thread.tests"
	kcur=$k
	echo "# --- kernel $(run_name "$k"), $thread-threaded TCG, $((SECONDS - ${vm_t0[$k-$thread]})) s: ${tests[*]}"
	cat "$log"
	# (the guest's console ends lines with CR LF)
	line=$(tr -d '\r' < "$log" | grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' | tail -n1)
	read -r pass _ fail _ skip _ <<< "$line"
	if [ -z "$line" ]; then
		fail_line "selftests on $(run_name "$k") ($thread) did not finish (exit $vmrc)"
		return
	fi
	count "$pass" "$fail" "$skip"
	kran[$k]=$((${kran[$k]:-0} + pass + fail))
	if [ $((pass + fail + skip)) -ne ${#tests[@]} ]; then
		fail_line "selftests on $(run_name "$k") ($thread) reported $((pass + fail + skip)) of ${#tests[@]} tests"
	elif [ "$vmrc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail_line "VM on $(run_name "$k") ($thread) exited $vmrc (kernel log: .vm/kernel-$(run_kver "$k").log)"
	fi
}

echo "# pfifo_bulk check: kernels$kernels"
step userspace-build make -s plugin ip-plugin bulkctl
step selftests-build make -s -C selftests

# checkpatch, the in-tree series, the 32-bit build and the host-side tests
# run beside the kernels' builds below, each on one host CPU (three to four
# minutes each way on this project's 2-core host); their results are
# printed and counted after those.
host_side() {
	step checkpatch make -s checkpatch
	# The in-tree series a netdev submission would be: it applies to the
	# newest source and checkpatch --strict passes on its commit messages
	# too.
	step kernel-patch scripts/kernel-patch.sh -o "$top/.build/kernel-patch"
	step build-i386 build_i386
	for t in selftests/host_*.sh; do
		step "host-$(basename "$t" .sh)" "$t"
	done
}
host_side > "$out/host-side.tap" 2>&1 &
host_pid=$!

# Each kernel's build first; then the guests. A single-threaded guest keeps
# one host CPU busy, so those of the kernels run side by side, one per host
# CPU: with three on two CPUs a starved guest once missed a bound that
# assumes its timer runs on time. A multi-threaded guest wants every host
# CPU for its vCPUs, so those run one after the other.
declare -A vm_pid vm_t0
built=
for k in $kernels; do
	kcur=$k
	echo "# === kernel $k: build"
	step "build-$k" build_clean "$k" && built+=" $k"
	step "race-build-$k" build_race "$k"
	step "dkms-$k" in_root_of "$k" scripts/dkms-check.sh "$k"
	[[ " $built " == *" $k "* ]] || fail_line "no selftest run on $k: its modules did not build"
done
kcur=
wait "$host_pid"
cat "$out/host-side.tap"
count "$(grep -c '^ok - ' "$out/host-side.tap")" "$(grep -c '^not ok - ' "$out/host-side.tap")"
# the runs: every kernel built, and the newest again in its other mode
runs=$built
newest_built=$(printf '%s\n' $built | sort -V | tail -n1)
other_run=
if [ -n "$newest_built" ]; then
	other=$(other_mode "$newest_built")
	if [ -n "$other" ]; then
		other_run=$newest_built@lockless=$other
		runs+=" $other_run"
	else
		kcur=$newest_built
		fail_line "modinfo names no lockless default for $newest_built: its other mode is not run"
		kcur=
	fi
fi
if [ -n "$tests_single" ]; then
	running=()
	for k in $runs; do
		if [ ${#running[@]} -ge "$(nproc)" ]; then
			vm_tally "${running[0]}" single
			running=("${running[@]:1}")
		fi
		vm_start "$k" single 2 $tests_single
		running+=("$k")
	done
	for k in "${running[@]}"; do
		vm_tally "$k" single
	done
fi
if [ -n "$tests_multi" ]; then
	for k in $runs; do
		vm_start "$k" multi 4 $tests_multi
		vm_tally "$k" multi
	done
fi
for k in $runs; do
	[ "${kran[$k]:-0}" -gt 0 ] || { kcur=$k; fail_line "no selftest ran on $(run_name "$k") (all skipped, or none given)"; }
done
# the newest kernel's two passes together were given every test
if [ -n "$other_run" ]; then
	given=" $(cat "$out/selftests-${other_run%@*}"-*.tests "$out/selftests-$other_run"-*.tests 2>/dev/null | tr '\n' ' ') "
	for t in $tests_single $tests_multi; do
		[[ $given == *" $t "* ]] || { kcur=$newest_built; fail_line "$t was given to neither pass of $newest_built"; }
	done
fi
kcur=

echo "# ==="
for s in "${summary[@]}"; do
	echo "$s"
done
for k in $kernels $other_run; do
	echo "$(run_name "$k"): ${kpass[$k]:-0} passed, ${kfail[$k]:-0} failed, ${kskip[$k]:-0} skipped"
done
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
