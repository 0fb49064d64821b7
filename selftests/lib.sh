# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the pfifo_bulk selftests. Source it from a test:
#	. "$(dirname "$0")/lib.sh"
# A test prints one line per check ("ok"/"not ok", as sub-results), exits 0
# when all passed, 1 when any failed, 4 (ksft skip) when it cannot run here.

ksft_skip=4
PFB_TOP=${PFB_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
# The tests and their helpers: selftests/ of the pfifo_bulk tree, or the
# kselftest target tools/testing/selftests/net/pfifo_bulk of a kernel tree
# patched with "make kernel-patch". There PFB_TOP must name a pfifo_bulk
# tree for its userspace (the tc and ip plugins, bulkctl).
PFB_TESTDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The C helpers (TEST_GEN_PROGS): beside the scripts, or where kselftest
# built them. "make -C tools/testing/selftests O=DIR run_tests" builds them
# in DIR/kselftest/net/pfifo_bulk and runs the scripts from the source
# tree; OUTPUT, set on lib.mk's command line, names that directory in the
# tests' environment.
PFB_BINDIR=$PFB_TESTDIR
if [ -n "${OUTPUT:-}" ] && [ -x "$OUTPUT/nl_fuzz" ]; then
	PFB_BINDIR=$OUTPUT
fi
pfb_failed=0
pfb_checks=0

# --- cleanup: "defer CMD..." runs CMD at exit, last deferred first ---------
pfb_deferred=()
defer() {
	pfb_deferred+=("$*")
}
pfb_run_deferred() {
	local i
	for ((i = ${#pfb_deferred[@]} - 1; i >= 0; i--)); do
		eval "${pfb_deferred[i]}" >/dev/null 2>&1 || true
	done
	pfb_deferred=()
}
trap pfb_run_deferred EXIT

# --- jq ---------------------------------------------------------------------
# jq 1.6 compiles its library of builtins at every start: about a second per
# call in a TCG guest, the largest single cost of the suite. gojq starts in
# milliseconds. It always sorts an object's keys (it has no -S, which is
# dropped here): a check on the order of keys as the kernel dumps them calls
# "command jq" itself.
if command -v gojq >/dev/null; then
	jq() {
		local a args=()

		for a in "$@"; do
			if [[ $a =~ ^-[a-zA-Z]*S[a-zA-Z]*$ ]]; then
				a=${a//S/}
				[ "$a" = - ] && continue
			fi
			args+=("$a")
		done
		command gojq "${args[@]}"
	}
fi

# --- requirements ------------------------------------------------------------
# A skip says "this host cannot run the test" (not root, a tool or a module
# missing); run_tests.sh counts it as a failure unless expected_skips lists
# it for the kernel. Anything the test itself fails to set up is a failure:
# setup_failed.
setup_failed() {
	echo "not ok: setup: $*"
	exit 1
}
# must CMD...: a step the checks after it need; a failure ends the test.
must() {
	"$@" && return 0
	setup_failed "could not: $*"
}
require_root() {
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit $ksft_skip; }
}
require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || { echo "SKIP: needs $c"; exit $ksft_skip; }
	done
}

# skip_verdict N TEST OUTPUT: whether the skip (exit 4) of TEST, the Nth
# test of a TAP stream, is one that expected_skips lists, with its reason,
# for the running kernel; the TAP line in $REPLY: "ok N TEST # SKIP why
# (expected on KVER: reason)", or "not ok N TEST # SKIP why: not expected".
# TEST may carry its arguments ("soak.sh -t 300"): the script is listed.
# (run_tests.sh and the debug kernels' scripts/check-debug-guest.sh)
skip_verdict() {
	local n=$1 test=$2 why k t reason kver

	kver=$(uname -r)
	why=$(grep -m1 '^SKIP' <<< "$3" | sed 's/^SKIP: *//')
	while read -r k t reason; do
		[[ $k == \#* || -z $k ]] && continue
		# shellcheck disable=SC2053 # $k is a pattern
		if [[ $kver == $k && $t == "${test%% *}" ]]; then
			REPLY="ok $n $test # SKIP ${why:-?} (expected on $kver: ${reason:-no reason given})"
			return 0
		fi
	done < "$(dirname "${BASH_SOURCE[0]}")/expected_skips"
	REPLY="not ok $n $test # SKIP ${why:-?}: not expected on $kver (selftests/expected_skips)"
	return 1
}

# module_ko NAME: the file load_module loads NAME from, if any: PFB_QDISC_KO
# for sch_pfifo_bulk (another revision's build, or one broken on purpose to
# see a test fail), else PFB_MODULES_DIR/NAME.ko (make check builds each
# kernel's modules once and runs the kernels' guests side by side, so the
# checkout's own build can belong to another kernel), else the checkout's.
module_ko() {
	local rel

	case $1 in
	sch_pfifo_bulk) rel=net/sched ;;
	refnic) rel=drivers/net/refnic ;;
	*) return 0 ;;
	esac
	if [ "$1" = sch_pfifo_bulk ] && [ -n "${PFB_QDISC_KO:-}" ]; then
		echo "$PFB_QDISC_KO"
	elif [ -n "${PFB_MODULES_DIR:-}" ]; then
		echo "$PFB_MODULES_DIR/$1.ko"
	else
		echo "$PFB_TOP/$rel/$1.ko"
	fi
}

# module_file NAME: the module load_module loads NAME from, for modinfo:
# module_ko's file when it was built for the running kernel, else NAME
# itself (modinfo and modprobe find it in the kernel's module tree: a debug
# kernel's in-tree build, or one installed).
module_file() {
	local ko

	ko=$(module_ko "$1")
	if [ -n "$ko" ] && [ -f "$ko" ] &&
	   [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$(uname -r)" ]; then
		echo "$ko"
	else
		echo "$1"
	fi
}

# load_module NAME: NAME from module_file; a file named by PFB_QDISC_KO or
# PFB_MODULES_DIR must load. Skips the test when neither exists. Unloaded
# at exit if we loaded it. PFB_LOCKLESS (0 or 1; make check's run in the
# non-default mode sets it) loads sch_pfifo_bulk with lockless=$PFB_LOCKLESS;
# unset, with the module's default.
load_module() {
	local name=$1 file named=${PFB_MODULES_DIR:-} modargs=

	file=$(module_file "$name")
	if [ "$name" = sch_pfifo_bulk ]; then
		named+=${PFB_QDISC_KO:-}
		if [ -n "${PFB_LOCKLESS:-}" ]; then
			[[ $PFB_LOCKLESS == [01] ]] || setup_failed "PFB_LOCKLESS=$PFB_LOCKLESS: want 0 or 1"
			modargs=lockless=$PFB_LOCKLESS
		fi
	fi
	if lsmod | grep -q "^$name "; then
		# loaded before us: it must run in the mode asked for
		[ -z "$modargs" ] || [ "$(qdisc_lockless)" = "$([ "$PFB_LOCKLESS" = 1 ] && echo true || echo false)" ] ||
			setup_failed "$name is loaded with lockless $(qdisc_lockless), PFB_LOCKLESS=$PFB_LOCKLESS"
		return 0
	fi
	if [ "$file" != "$name" ]; then
		insmod "$file" $modargs || setup_failed "insmod $file $modargs"
	elif [ -n "$named" ] && [ -n "$(module_ko "$name")" ]; then
		setup_failed "$(module_ko "$name"): missing or not built for $(uname -r)"
	else
		modprobe "$name" $modargs 2>/dev/null || { echo "SKIP: module $name not available"; exit $ksft_skip; }
	fi
	defer "rmmod $name"
	# the tests balance what they offered against a qdisc's counters, and
	# many root a locked qdisc (pfifo on refnic, pfifo_bulk with
	# lockless=0), whose senders use the 6.19 defer list: its drops off
	# (on a KASAN guest with 4 vCPUs, refnic_fault's pfifo lost 499 of
	# 4000 frames there)
	no_burst_drops
}

# load_qdisc_lockless 0|1: sch_pfifo_bulk in that mode whatever PFB_LOCKLESS
# says, reloaded if it is loaded (no pfifo_bulk may exist yet): for a test
# of one mode's own path. Unloaded at exit.
load_qdisc_lockless() {
	if lsmod | grep -q '^sch_pfifo_bulk '; then
		must rmmod sch_pfifo_bulk
	fi
	PFB_LOCKLESS=$1 load_module sch_pfifo_bulk
	[ "$(qdisc_lockless)" = "$([ "$1" = 1 ] && echo true || echo false)" ] ||
		setup_failed "sch_pfifo_bulk lockless=$1 loaded, but its parameter reads $(qdisc_lockless)"
}

# qdisc_lockless: the mode the loaded sch_pfifo_bulk runs its root and
# default qdiscs in, as the dumps print it (true: lockless, false: locked);
# a child of a locked parent is locked in both. From the module's
# read-only parameter, what it was loaded with.
qdisc_lockless() {
	case $(cat /sys/module/sch_pfifo_bulk/parameters/lockless 2>/dev/null) in
	Y) echo true ;;
	N) echo false ;;
	*) echo "unknown (sch_pfifo_bulk not loaded, or without the parameter)" ;;
	esac
}

# qdisc_lock_word: the same as tc's text prints it: lockless or locked.
qdisc_lock_word() {
	case $(qdisc_lockless) in
	true) echo lockless ;;
	false) echo locked ;;
	*) qdisc_lockless ;;
	esac
}

# --- the guest ---------------------------------------------------------------
# in_parallel_vm: the guest runs on multi-threaded TCG (tools/vm/run says so
# on the kernel command line).
in_parallel_vm() {
	grep -qw 'pfb.tcg_thread=multi' /proc/cmdline 2>/dev/null
}
# forbid_text_patching WHAT: WHAT (a kprobe, a tracepoint switched on)
# patches kernel text, which multi-threaded TCG has turned into Oopses (see
# tools/vm/run): fail loudly there rather than risk it.
forbid_text_patching() {
	in_parallel_vm || return 0
	echo "not ok: $1 patches kernel text, and this guest runs multi-threaded TCG:" \
	     "the test must not be in TEST_PROGS_PARALLEL (selftests/Makefile)"
	exit 1
}

# no_burst_drops: since 6.19 the senders of a locked root qdisc (htb,
# prio, pfifo) leave their packets on its defer list, and beyond
# net.core.qdisc_max_burst (1000) waiting there the core drops them
# (QDISC_BURST_DROP) before any qdisc counts them: the sender sees a drop
# the qdisc's counters never show. A test that balances what it offered
# against a qdisc's counters lifts that bound for its run (no-op on older
# kernels, which have no such sysctl).
no_burst_drops() {
	local f=/proc/sys/net/core/qdisc_max_burst
	[ -e $f ] || return 0
	defer "echo $(cat $f) > $f"
	echo 1000000 > $f || setup_failed "net.core.qdisc_max_burst=1000000"
}

# nap SECS: sleep without starting a process (a read that times out on a
# pipe nobody writes to), so that waiting adds nothing to system-wide counts
# such as kprobe hits.
pfb_nap_fd=
nap() {
	[ -n "$pfb_nap_fd" ] || exec {pfb_nap_fd}<> <(:)
	read -r -t "$1" -u "$pfb_nap_fd"
	return 0
}

# --- pktgen's control files -----------------------------------------------------
# pktgen's threads act on a request when they next run, and its control
# files assume that happens within 125 ms. On a loaded host it may not:
# "start" returns before a thread took it, and the thread starts its
# devices later, under whatever the test does next; "reset" and
# "rem_device_all" remove devices later, the next setup's among them (seen
# in make check beside other guests: a flow's device gone before its
# options were written, and "pktgen: WARNING: trying to remove a running
# interface", which fails the kernel log check). Wait for what was asked.

# pktgen_remove_all: remove every pktgen device, and wait (at most 20 s
# each) until the threads have. A device still running is stopped first
# (removed running, it is a kernel warning); then only the threads that
# have devices are asked, once each: "reset" asks every thread, and one
# with no device yet may take it after the next setup's add_device.
# (Start requests never linger: pktgen_run and refnic_pktgen wait until
# the threads took theirs: pktgen_ran.)
pktgen_remove_all() {
	local pg=/proc/net/pktgen t i
	[ -d $pg ] || return 0
	if grep -qsE '^Running: +[^ ]' $pg/kpktgend_*; then
		echo stop > $pg/pgctrl
		for ((i = 0; i < 200; i++)); do
			grep -qsE '^Running: +[^ ]' $pg/kpktgend_* || break
			sleep 0.1
		done
	fi
	for t in $pg/kpktgend_*; do
		grep -qsE '^(Running|Stopped): +[^ ]' "$t" && echo rem_device_all > "$t"
	done
	for ((i = 0; i < 200; i++)); do
		grep -qsE '^(Running|Stopped): +[^ ]' $pg/kpktgend_* || return 0
		sleep 0.1
	done
	echo "# pktgen: devices still there 20 s after rem_device_all" >&2
	return 1
}

# pktgen_ran: after "start" returned, wait (at most 60 s) until every pktgen
# device has run and stopped. A device's "Result:" says "Starting" while it
# runs, then what the run did ("OK: N(cN+dN) usec, ..."), or why it could
# not start ("Error starting"); before, the answer to the last option
# written ("OK: count=...") or "Idle".
# Builtins only (nap): a test that counts spin locks may be counting.
pktgen_ran() {
	local i f l r all ran='^Result: (OK: [0-9]+\(c|Error)'
	for ((i = 0; i < 600; i++)); do
		all=1
		for f in /proc/net/pktgen/*@*; do
			[ -e "$f" ] || continue
			r=
			while read -r l; do
				[[ $l == Result:* ]] && r=$l
			done < "$f" 2>/dev/null
			[[ $r =~ $ran ]] || { all=; break; }
		done
		[ -n "$all" ] && return 0
		nap 0.1
	done
	echo "# pktgen: a device had not run and stopped 60 s after its start" >&2
	return 1
}

# --- checks ------------------------------------------------------------------
# pfb_not_ok WHAT: check number $pfb_checks failed; returns 1. Inside
# xfail_on_slow on a slow machine the failure is expected: reported as
# "ok N WHAT # XFAIL", it does not fail the test.
pfb_xfail=
pfb_not_ok() {
	if [ -n "$pfb_xfail" ]; then
		echo "ok $pfb_checks $1 # XFAIL on a slow machine"
	else
		echo "not ok $pfb_checks $1"
		pfb_failed=1
	fi
	return 1
}

# xfail_on_slow CHECK...: CHECK is a check whose bound holds only where the
# guest keeps up: a schedule of a few milliseconds, a userspace sender's
# share beside pktgen's. With KSFT_MACHINE_SLOW=yes,
# as netdev's CI sets it for its debug kernels (and check-debug-guest.sh
# does for ours), its failure is expected (XFAIL), as in the kernel's
# selftests/net/forwarding/lib.sh. Used only where a stock kernel proves
# the bound: the debug kernels are there for their reports.
xfail_on_slow() {
	if [ "${KSFT_MACHINE_SLOW:-}" = yes ]; then
		pfb_xfail=1 "$@"
	else
		"$@"
	fi
}

# check DESCRIPTION CMD...: run CMD, report it as a sub-result; returns
# CMD's success, so that what depends on it can stop.
check() {
	local what=$1
	shift
	pfb_checks=$((pfb_checks + 1))
	if "$@"; then
		echo "ok $pfb_checks $what"
	else
		pfb_not_ok "$what"
	fi
}

# check_eq DESCRIPTION GOT WANT
check_eq() {
	local what=$1 got=$2 want=$3
	pfb_checks=$((pfb_checks + 1))
	if [ "$got" = "$want" ]; then
		echo "ok $pfb_checks $what ($got)"
	else
		pfb_not_ok "$what: got '$got', want '$want'"
	fi
}

# check_cmp DESCRIPTION A OP B: numeric comparison with awk (floats allowed),
# OP one of < <= == != >= >. A or B not a number (a figure that could not be
# read) fails the check.
pfb_number='^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$'
check_cmp() {
	local what=$1 a=$2 op=$3 b=$4
	pfb_checks=$((pfb_checks + 1))
	if ! [[ $a =~ $pfb_number && $b =~ $pfb_number ]]; then
		pfb_not_ok "$what: '$a' $op '$b' compares no numbers"
	fi
	if awk -v a="$a" -v b="$b" "BEGIN { exit !(a $op b) }"; then
		echo "ok $pfb_checks $what ($a $op $b)"
	else
		pfb_not_ok "$what: $a $op $b is false"
	fi
}

# check_fails DESCRIPTION CMD...: CMD must fail.
check_fails() {
	local what=$1
	shift
	check "$what" pfb_fails "$@"
}

# pfb_fails CMD...: succeeds when CMD fails; CMD's output is silenced.
pfb_fails() {
	! "$@" >/dev/null 2>&1
}

pfb_exit() {
	[ "$pfb_checks" -gt 0 ] || { echo "no checks ran"; exit 1; }
	exit $pfb_failed
}

# --- reading counters ----------------------------------------------------------
# qdisc_stat DEV KEY [HANDLE]: a number from "tc -s -j qdisc show" (root
# qdisc unless HANDLE is given), e.g. packets, drops, backlog, qlen.
qdisc_stat() {
	local dev=$1 key=$2 handle=${3:-}
	tc -s -j qdisc show dev "$dev" |
		jq -r --arg h "$handle" --arg k "$key" \
			'[.[] | select(if $h == "" then .root == true else .handle == $h end)][0][$k] // empty'
}

# qdisc_counts DEV [HANDLE...]: "packets drops qlen" of the root qdisc, or
# of each HANDLE (a line each, in that order), from the text of one
# "tc -s qdisc show": one snapshot, a C program where a Python one costs
# seconds on TCG, and no tc plugin needed (without it tc prints
# pfifo_bulk's options as text even in JSON).
qdisc_counts() {
	local dev=$1
	shift
	tc -s qdisc show dev "$dev" | awk -v hs="$*" '
		BEGIN { n = split(hs, h, " "); if (!n) h[n = 1] = "root" }
		/^qdisc / { q = $3; root = / root /; next }
		$1 == "Sent" { p = $4; d = $7 + 0 }
		$1 == "backlog" { c[q] = p " " d " " ($3 + 0); if (root) c["root"] = c[q] }
		END { for (i = 1; i <= n; i++) print c[h[i]] }'
}

# link_stat DEV KEY: a counter from /sys/class/net/DEV/statistics.
link_stat() {
	cat "/sys/class/net/$1/statistics/$2"
}

# ethtool_stat DEV NAME: one "ethtool -S" counter.
ethtool_stat() {
	ethtool -S "$1" | awk -v k="$2:" '$1 == k { print $2; exit }'
}

# veth_pair DEV PEER: a veth pair, both up, without IPv6 chatter, deleted
# at exit.
veth_pair() {
	ip link add "$1" type veth peer name "$2" || return 1
	defer "ip link del $1"
	sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1"
	sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"
	ip link set "$2" up && ip link set "$1" up
}

# netns_add NAME: a fresh namespace, deleted at exit.
netns_add() {
	ip netns add "$1" && defer "ip netns del $1"
}
