#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pfifo_bulk as a child of htb and of prio behaves exactly like pfifo, even
# with caps set: under a pktgen queue_xmit load (one thread per CPU) over a
# veth pair, every packet the child dequeued reaches the peer,
# offered == sent + dropped, the backlog drains to 0, the
# child reports no batch control (effective mode none, no batches counted)
# and as many packets as stock pfifo in the same place.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
require_root
require_cmd jq python3
load_module sch_pfifo_bulk

dev=pfbch0
peer=pfbch1
count=${PFB_COUNT:-2000}
veth_pair $dev $peer || { echo "SKIP: no veth"; exit $ksft_skip; }
# veth delivers through the per-CPU backlog: make it long enough that the
# peer loses nothing, whatever the qdisc
old_backlog=$(sysctl -n net.core.netdev_max_backlog)
defer "sysctl -qw net.core.netdev_max_backlog=$old_backlog"
sysctl -qw net.core.netdev_max_backlog=100000
pktgen_setup $dev "$(cat /sys/class/net/$peer/address)" "$count"

child_stat() {
	$PFB_NL dump $dev | jq -r --arg h "$1" --arg k "$2" \
		'[.[] | select(.handle == $h)][0] | getpath($k | split("."))'
}

# run_parent NAME PARENT_SETUP... ; child at CLASS with handle 10:
run_child() {
	local name=$1 kind=$2 offered sent drops rx0 rx
	rx0=$(link_stat $peer rx_packets)
	pktgen_run
	check "$name: backlog 0 within a second" wait_backlog_zero $dev 10
	offered=$(pktgen_offered $dev)
	sent=$(child_stat 10: packets)
	drops=$(child_stat 10: drops)
	rx=$(($(link_stat $peer rx_packets) - rx0))
	echo "# $name: offered $offered sent $sent drops $drops peer rx $rx"
	check_eq "$name: offered == sent + dropped" "$offered" "$((sent + drops))"
	check_eq "$name: child qlen 0" "$(child_stat 10: qlen)" 0
	# (no order check here: veth delivers through per-CPU backlogs, so
	# the receiver may reorder what the qdisc sent in order)
	check_eq "$name: peer got every sent packet" "$rx" "$sent"
	if [ "$kind" = pfifo_bulk ]; then
		check_eq "$name: no batch control" "$(child_stat 10: options.effective_mode)" none
		check_eq "$name: no batches counted" "$(child_stat 10: xstats.batches)" 0
	fi
}

for parent in htb prio; do
	for kind in pfifo pfifo_bulk; do
		tc qdisc del dev $dev root 2>/dev/null
		if [ $parent = htb ]; then
			tc qdisc add dev $dev root handle 1: htb default 10
			tc class add dev $dev parent 1: classid 1:10 htb rate 1gbit
			class=1:10
		else
			tc qdisc add dev $dev root handle 1: prio
			class=1:2	# default priomap: best effort is band 1
		fi
		if [ $kind = pfifo ]; then
			tc qdisc add dev $dev parent $class handle 10: pfifo limit 100
		else
			check "$parent: pfifo_bulk child with caps" \
				$PFB_NL add $dev -p $class -H 10: limit 100 bulk_pkts 2 bulk_bytes 100
		fi
		run_child "$parent/$kind" $kind
	done
done
pfb_exit
