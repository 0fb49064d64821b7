#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module parameter lockless decides, at load, the mode of every
# pfifo_bulk the core makes. Loaded with lockless=0, a root qdisc and the
# children mq creates itself (net.core.default_qdisc) dump lockless false
# and tc prints "locked"; with lockless=1 they dump true and "lockless";
# without the parameter, the default modinfo states. A child of a locked
# parent (prio) is locked in both modes. The parameter is read-only once
# loaded (mode 0444: a write fails, even as root, and changes nothing),
# and modinfo describes it. The default is the measured one
# (Documentation/benchmark.rst "The lockless default"): lockless on every
# kernel, also where the core has the defer list (6.19+).
#
# And the locked mode moves packets right as a root qdisc (the code that
# runs under a locked parent, here without one; from 6.19 fed by the
# core's defer list): two numbered flows per CPU from pktgen threads on
# every CPU through a refnic pair whose ring of 16 stops the queue, at
# 2 Mb/s, then on an unlimited line (packets that find the queue empty
# bypass it between bursts that queue; the ring cuts batches, requeued):
# every flow arrives complete and in order, and the backlog drains to 0
# with every packet offered sent and none dropped, read without touching
# the qdisc while frames may wait (no stranded packet). The limit holds the
# whole load: from 6.19 a sender whose packet waits on the defer list is
# told it was sent even when the qdisc then drops it, so with drops a
# flow could lose every packet and its order would go unchecked.
#
# Loads the module itself, whatever PFB_LOCKLESS says. Runs in make check's
# parallel guest (senders on 4 CPUs at once); arms no probe.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd tc jq python3 ethtool modinfo
. "$(dirname "$0")/lib_userspace.sh"
load_module refnic
refnic_require_plugin

param=/sys/module/sch_pfifo_bulk/parameters/lockless
dum=pfbll0
mqd=pfbll1

# modes WANT WORD N: the root of a dummy, the default children of a
# 2-queue refnic's mq, and a child of prio, in the loaded module's mode WANT (true
# or false, tc's text WORD). Leaves no pfifo_bulk behind: the module must
# unload after.
modes() {
	local want=$1 word=$2 old

	# before the module's rmmod, deferred when it loaded
	defer "ip link del $dum; ip link del $mqd"
	must ip link add $dum type dummy
	must tc qdisc add dev $dum root handle 1: pfifo_bulk
	check_eq "lockless=$3: root dumps lockless $want" "$(pfb_opt $dum lockless)" "$want"
	check "lockless=$3: tc -s prints $word" \
		eval "tc -s qdisc show dev $dum | grep -q '^qdisc pfifo_bulk 1: root .* $word *\$'"
	must tc qdisc del dev $dum root
	must tc qdisc add dev $dum root handle 1: prio
	must tc qdisc add dev $dum parent 1:1 handle 10: pfifo_bulk
	check_eq "lockless=$3: a child of prio is locked" \
		"$($PFB_NL dump $dum | jq -c '[.[] | select(.kind == "pfifo_bulk") | .options.lockless]')" '[false]'
	must ip link del $dum

	# the default qdisc is attached when the device comes up (a dummy
	# would get noqueue: refnic has a queue)
	old=$(sysctl -n net.core.default_qdisc)
	must sysctl -qw net.core.default_qdisc=pfifo_bulk
	ip link add $mqd numtxqueues 2 type refnic && ip link set $mqd up
	sysctl -qw net.core.default_qdisc="$old"
	check_eq "lockless=$3: mq made its children" "$(tc -j qdisc show dev $mqd | jq -r '.[] | select(.root == true) | .kind')" mq
	check_eq "lockless=$3: default mq children dump lockless $want" \
		"$($PFB_NL dump $mqd | jq -c '[.[] | select(.kind == "pfifo_bulk") | .options.lockless]')" \
		"[$want,$want]"
	must ip link del $mqd
}

# --- the parameter --------------------------------------------------------
lsmod | grep -q '^sch_pfifo_bulk ' && must rmmod sch_pfifo_bulk
desc=$(modinfo -F parm "$(module_file sch_pfifo_bulk)" | grep '^lockless:')
echo "# modinfo: $desc"
check "modinfo describes lockless (both values, read at load, the default)" \
	eval "grep -qE '^lockless:1: .*; 0: locked.* Read at load only \\(default [01]\\) \\(bool\\)\$' <<< \"\$desc\""
dfl=$(sed -n 's/.*(default \([01]\)).*/\1/p' <<< "$desc")
check_eq "the default on $(uname -r): 1 (lockless), as on every kernel" "$dfl" 1

PFB_LOCKLESS="" load_module sch_pfifo_bulk
check_eq "loaded without the parameter: the stated default" "$(cat $param)" \
	"$([ "$dfl" = 1 ] && echo Y || echo N)"
must rmmod sch_pfifo_bulk

load_qdisc_lockless 0
check_eq "lockless=0: the parameter reads N" "$(cat $param)" N
check_eq "the parameter's file is read-only (0444)" "$(stat -c %a $param)" 444
check_fails "writing the parameter fails, even as root" sh -c "echo 1 > $param"
check_eq "and changes nothing" "$(cat $param)" N
modes false locked 0

# --- locked root under a parallel flood --------------------------------------
dev=pfbll2
peer=pfbll3
count=400
flows=$((2 * $(nproc)))
no_burst_drops
must ip link add $dev type refnic peer name $peer
defer "ip link del $dev"
sysctl -qw net.ipv6.conf.$dev.disable_ipv6=1
sysctl -qw net.ipv6.conf.$peer.disable_ipv6=1
must ip link set $peer up
must ip link set $dev up
mac=$(cat /sys/class/net/$peer/address)

# flood NAME SPEED: a fresh locked root, $flows numbered flows from every
# CPU at SPEED Mb/s (0: unlimited) with a ring of 16, and the checks.
flood() {
	local name=$1 out=/tmp/pfb-lockless.$$ seq sent drops

	must ethtool -G $dev tx 16
	must ethtool -s $dev speed "$2"
	must ethtool -C $dev tx-usecs 1000 tx-frames 4
	tc qdisc del dev $dev root 2>/dev/null
	must $PFB_NL add $dev -H 1: limit $((flows * count))
	check_eq "$name: the root runs locked" "$(pfb_opt $dev lockless)" false
	must seqcheck_start $peer $out
	pktgen_flows $dev "$mac" $count 2 60 300
	pktgen_run
	# no stranded packet: the device goes still with an empty queue; only
	# its sysfs counters are read until then (a dump could run the qdisc)
	check "$name: drained to backlog 0" wait_backlog_zero $dev
	seqcheck_end $out
	x=$($PFB_NL dump $dev | jq -c '[.[] | select(.parent == "root")][0]')
	read -r sent drops _ < <(qdisc_counts $dev)
	echo "# $name: sent $sent dropped $drops requeues $(jq .requeues <<< "$x")" \
	     "bypassed $(jq .xstats.bypassed <<< "$x") batches $(jq .xstats.batches <<< "$x");" \
	     "peer $seq"
	check_eq "$name: offered == sent" "$(pktgen_offered $dev)" "$sent"
	check_eq "$name: nothing dropped (the limit holds the load)" "$drops" 0
	check_eq "$name: every flow seen" "$(jq .flows <<< "$seq")" $flows
	check_eq "$name: the peer got every packet sent" "$(jq .received <<< "$seq")" "$sent"
	check_eq "$name: no packet out of order" "$(jq .reorders <<< "$seq")" 0
	check_eq "$name: batch_pkts + bypassed == sent" \
		"$(jq '.xstats.batch_pkts + .xstats.bypassed' <<< "$x")" "$sent"
}

flood "locked root, 2 Mb/s, ring stops" 2
check_cmp "locked root, 2 Mb/s: batches of more than one" \
	"$(jq .xstats.batch_pkts <<< "$x")" ">" "$(jq .xstats.batches <<< "$x")"
flood "locked root, unlimited line" 0
check_cmp "locked root, unlimited line: packets bypassed the queue" "$(jq .xstats.bypassed <<< "$x")" ">" 0
check_cmp "locked root, unlimited line: packets queued in batches" "$(jq .xstats.batches <<< "$x")" ">" 0
# Requeues are asserted here, not at 2 Mb/s: there BQL stops the queue
# before the ring fills, so a batch is cut by the ring 0 or 1 times a run
# (both seen); here the line drains the ring as fast as the senders fill
# it, and runs cut batches hundreds of times (326-707 seen).
check_cmp "locked root, unlimited line: batches were cut and requeued" \
	"$(jq .requeues <<< "$x")" ">" 0
must tc qdisc del dev $dev root
must ip link del $dev

# --- lockless=1 -----------------------------------------------------------------
load_qdisc_lockless 1
check_eq "lockless=1: the parameter reads Y" "$(cat $param)" Y
modes true lockless 1
pfb_exit
