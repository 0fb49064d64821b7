#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Packet order per flow through pfifo_bulk when the driver stops its queue
# all the time. A refnic pair at 2 Mb/s with a ring of 16: nearly every
# batch fills the ring, the driver stops the queue mid-batch, and the core
# hands the rest back (requeues), to send it before anything new. Two flows
# per CPU (numbered by pktgen), read on the peer: every flow must arrive
# complete and in order, on the NOBQL path (batches of up to 9 that ignore
# BQL, so the most requeues) and on the BQL path; and with an unlimited
# line, where packets that find the queue idle and empty bypass it
# (TCQ_F_CAN_BYPASS) between bursts that queue: a bypass must never
# overtake a queued packet.
#
# With refnic's fault injection, the driver also refuses a frame now and
# then (NETDEV_TX_BUSY) while the rest of a cut batch waits. 6.12 puts the
# refused frame back at the head of the requeued ones: order holds. 6.1
# appends it (dev_requeue_skb()), so that frame may leave after the others:
# the test then wants no more reordered frames than refused ones, and says
# how many there were.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd jq python3 ethtool
load_module sch_pfifo_bulk
load_module refnic
refnic_require_plugin

dev=pfbord0
peer=pfbord1
count=${PFB_COUNT:-800}
must ip link add $dev type refnic peer name $peer
defer "ip link del $dev"
sysctl -qw net.ipv6.conf.$dev.disable_ipv6=1
sysctl -qw net.ipv6.conf.$peer.disable_ipv6=1
ip link set $peer up && ip link set $dev up || exit 1
mac=$(cat /sys/class/net/$peer/address)
flows=$((2 * $(nproc)))
echo "# $dev -> $peer (refnic), $flows flows of $count packets"
# The queue's limit. Lockless, a packet dropped at the limit is reported to
# its sender (pktgen sends it again), so every flow arrives whole. Loaded
# with lockless=0 on 6.19+, a sender whose packet waits on the core's defer
# list is told it was sent even when the qdisc then drops it: pktgen counts
# it and goes on, and a flow can lose every packet (5 of 8 flows seen, 7.3).
# Locked, the limit holds the whole load: nothing is dropped there.
limit=1000
[ "$(qdisc_lockless)" = true ] || limit=$((flows * count))

# run NAME BQL [SPEED]: a fresh pfifo_bulk, the flows, the peer's order
# check; the line at SPEED Mb/s (default 2, 0 = unlimited). Leaves $seq
# (the peer's report) and $x (the qdisc's dump).
run() {
	local name=$1 bql=$2 speed=${3:-2} out=/tmp/pfb-order.$$
	refnic_bql $dev "$bql" &&
	ethtool -G $dev tx 16 &&
	ethtool -s $dev speed "$speed" &&
	ethtool -C $dev tx-usecs 1000 tx-frames 4 || return 1
	tc qdisc del dev $dev root 2>/dev/null
	$PFB_NL add $dev -H 1: limit $limit || return 1
	seqcheck_start $peer $out
	pktgen_flows $dev "$mac" "$count" 2 60 300
	pktgen_run
	seqcheck_end $out
	x=$($PFB_NL dump $dev | jq -c '[.[] | select(.parent == "root")][0]')
	echo "# $name: sent $(jq .packets <<< "$x") dropped $(jq .drops <<< "$x")" \
	     "requeues $(jq .requeues <<< "$x"), bypassed $(jq .xstats.bypassed <<< "$x"),"\
	     "batches $(jq .xstats.batches <<< "$x"), path $(jq -r .options.effective_mode <<< "$x"),"\
	     "refnic stops $(refnic_tx_stat $dev stops); peer $seq"
	[ -n "$seq" ]
}

# order NAME: every flow arrived, complete and in order.
order() {
	local name=$1
	check_eq "$name: every flow seen" "$(jq .flows <<< "$seq")" $flows
	check_eq "$name: the peer got every packet sent" \
		"$(jq .received <<< "$seq")" "$(jq .packets <<< "$x")"
	check_eq "$name: no packet out of order" "$(jq .reorders <<< "$seq")" 0
	check_cmp "$name: batches were cut and requeued" "$(jq .requeues <<< "$x")" ">" 0
	check_eq "$name: batch_pkts + bypassed == sent" \
		"$(jq '.xstats.batch_pkts + .xstats.bypassed' <<< "$x")" "$(jq .packets <<< "$x")"
}

run "nobql path, ring stops" off || { echo "not ok - nobql run"; exit 1; }
check_eq "nobql path taken" "$(jq -r .options.effective_mode <<< "$x")" nobql
order "nobql path, ring stops"
run "bql path, ring stops" on || { echo "not ok - bql run"; exit 1; }
order "bql path, ring stops"
# An unlimited line: the queue drains between bursts, so packets that find
# it idle and empty bypass it while others queue behind a stopped ring.
run "bql path, unlimited line" on 0 || { echo "not ok - unlimited run"; exit 1; }
order "bql path, unlimited line"
check_cmp "bql path, unlimited line: packets bypassed the queue" "$(jq .xstats.bypassed <<< "$x")" ">" 0
check_cmp "bql path, unlimited line: packets queued in batches" "$(jq .xstats.batches <<< "$x")" ">" 0

# The driver refuses every 7th frame (NETDEV_TX_BUSY) and stops its queue
# after every 5th: refusals while cut batches wait.
busy=$(refnic_dbg $dev busy_every)
[ -w "$busy" ] || { echo "not ok - no fault injection knob $busy"; exit 1; }
echo 7 > "$busy" && echo 5 > "$(refnic_dbg $dev stop_every)" || exit 1
refused0=$(ethtool_stat $dev tx_fault_busy)
run "nobql path, stops and refusals" off || { echo "not ok - refusals run"; exit 1; }
refused=$(($(ethtool_stat $dev tx_fault_busy) - refused0))
echo 0 > "$busy"
name="nobql path, stops and refusals"
check_cmp "$name: the driver refused frames" "$refused" ">" 0
check_eq "$name: the peer got every packet sent" \
	"$(jq .received <<< "$seq")" "$(jq .packets <<< "$x")"
reorders=$(jq .reorders <<< "$seq")
case $(uname -r) in
6.1.*)
	# dev_requeue_skb() appends: each refusal can put one frame behind
	# the ones that waited with it, no more.
	echo "# 6.1: $reorders frames out of order, $refused refused"
	check_cmp "$name: no more frames out of order than refused (6.1 core)" \
		"$reorders" "<=" "$refused" ;;
*)
	check_eq "$name: no packet out of order" "$reorders" 0 ;;
esac
pfb_exit
