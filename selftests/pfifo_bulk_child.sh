#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pfifo_bulk as a child of htb and of prio behaves exactly like pfifo, even
# with caps set: under a pktgen queue_xmit load (one thread per CPU) over a
# veth pair, every packet the child dequeued reaches the peer,
# offered == sent + dropped, the backlog drains to 0, the
# child reports no batch control (effective mode none, no batches counted)
# and as many packets as stock pfifo in the same place. Under sfb, which
# keeps its own state in the packet's cb[], it leaves that state alone, as
# pfifo does: sfb drops none of one flow's frames sent one at a time.
# Then the children mq makes itself (net.core.default_qdisc=pfifo_bulk):
# the core leaves these in the module's mode (only a graft under a locked
# parent clears TCQ_F_NOLOCK); over a 4-queue veth pair the same accounting holds
# per child and in sum, and every child counts its batches. Waits for a
# drain watch the device's tx_packets, never the qdisc (a dump can
# reschedule it and so hide a stall), and dump it once after. Runs with
# senders on 4 CPUs in make check's parallel guest.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
require_root
require_cmd jq python3
load_module sch_pfifo_bulk

dev=pfbch0
peer=pfbch1
count=${PFB_COUNT:-$((4000 / $(nproc)))}	# per pktgen thread: 4000 in all
veth_pair $dev $peer || setup_failed "veth pair"
# veth delivers through the per-CPU backlog: make it long enough that the
# peer loses nothing, whatever the qdisc
old_backlog=$(sysctl -n net.core.netdev_max_backlog)
defer "sysctl -qw net.core.netdev_max_backlog=$old_backlog"
sysctl -qw net.core.netdev_max_backlog=100000
# htb and prio are locked roots: on 6.19+ no packet may vanish in front of
# them (lib.sh)
no_burst_drops
pktgen_setup $dev "$(cat /sys/class/net/$peer/address)" "$count"

# child_stat HANDLE JQ: JQ applied to the qdisc HANDLE of $dev, as pfb_nl.py
# dumps it (options and xstats too).
child_stat() {
	$PFB_NL dump $dev | jq -r --arg h "$1" "[.[] | select(.handle == \$h)][0] | $2"
}

# run_child NAME KIND: the load through the child 10: (a KIND) of the
# parent just set up; checks its accounting and what the peer got.
run_child() {
	local name=$1 kind=$2 offered sent drops qlen rx0 rx
	rx0=$(link_stat $peer rx_packets)
	pktgen_run
	check "$name: drained to backlog 0" wait_backlog_zero $dev
	offered=$(pktgen_offered $dev)
	read -r sent drops qlen < <(qdisc_counts $dev 10:)
	rx=$(($(link_stat $peer rx_packets) - rx0))
	echo "# $name: offered $offered sent $sent drops $drops peer rx $rx"
	check_eq "$name: offered == sent + dropped" "$offered" "$((sent + drops))"
	check_eq "$name: child qlen 0" "$qlen" 0
	# (no order check here: veth delivers through per-CPU backlogs, so
	# the receiver may reorder what the qdisc sent in order)
	check_eq "$name: peer got every sent packet" "$rx" "$sent"
	if [ "$kind" = pfifo_bulk ]; then
		check_eq "$name: no batch control, no batches counted" \
			"$(child_stat 10: '"\(.options.effective_mode) \(.xstats.batches)"')" "none 0"
	fi
}

for parent in htb prio; do
	for kind in pfifo pfifo_bulk; do
		tc qdisc del dev $dev root 2>/dev/null
		if [ $parent = htb ]; then
			check "$parent/$kind: htb root and class" eval \
				"tc qdisc add dev $dev root handle 1: htb default 10 &&
				 tc class add dev $dev parent 1: classid 1:10 htb rate 1gbit" || continue
			class=1:10
		else
			check "$parent/$kind: prio root" tc qdisc add dev $dev root handle 1: prio ||
				continue
			class=1:2	# default priomap: best effort is band 1
		fi
		if [ $kind = pfifo ]; then
			check "$parent: pfifo child" \
				tc qdisc add dev $dev parent $class handle 10: pfifo limit 100 || continue
		else
			check "$parent: pfifo_bulk child with caps" \
				$PFB_NL add $dev -p $class -H 10: limit 100 bulk_pkts 2 bulk_bytes 100 ||
				continue
		fi
		run_child "$parent/$kind" $kind
	done
done

# sfb keeps its flow hashes in the packet's cb[] from its enqueue to its
# dequeue, across the child's: a child that writes there leaves sfb's
# bucket counts growing, and sfb drops every flow after its max (25) packets.
# One flow, one frame at a time: nothing queues, so sfb drops none.
sfb_frames=200
for kind in pfifo pfifo_bulk; do
	tc qdisc del dev $dev root 2>/dev/null
	check "sfb/$kind: sfb root" tc qdisc add dev $dev root handle 1: sfb || continue
	if [ $kind = pfifo ]; then
		check "sfb: pfifo child" tc qdisc add dev $dev parent 1: handle 10: pfifo limit 100 ||
			continue
	else
		check "sfb: pfifo_bulk child" $PFB_NL add $dev -p 1: -H 10: limit 100 || continue
	fi
	python3 "$PFB_TESTDIR/pfb_pktsend.py" $dev $sfb_frames > /dev/null
	check "sfb/$kind: drained to backlog 0" wait_backlog_zero $dev
	read -r sent drops _ < <(qdisc_counts $dev 10:)
	bucketdrop=$(tc -s qdisc show dev $dev |
		awk '{ for (i = 1; i < NF; i++) if ($i == "bucketdrop") print $(i + 1) }')
	echo "# sfb/$kind: child sent $sent drops $drops, sfb bucketdrop $bucketdrop"
	check_eq "sfb/$kind: sfb dropped none of one flow's frames (bucketdrop)" "$bucketdrop" 0
	check_eq "sfb/$kind: the child sent all $sfb_frames frames" "$sent" $sfb_frames
done

mqdev=pfbmq0
mqpeer=pfbmq1
old_default=$(sysctl -n net.core.default_qdisc)
defer "sysctl -qw net.core.default_qdisc=$old_default"
check "default qdisc pfifo_bulk" sysctl -qw net.core.default_qdisc=pfifo_bulk
ip link add $mqdev numtxqueues 4 numrxqueues 4 type veth \
	peer name $mqpeer numtxqueues 4 numrxqueues 4 || setup_failed "4-queue veth pair"
defer "ip link del $mqdev"
sysctl -qw net.ipv6.conf.$mqdev.disable_ipv6=1
sysctl -qw net.ipv6.conf.$mqpeer.disable_ipv6=1
ip link set $mqpeer up && ip link set $mqdev up || setup_failed "4-queue veth pair up"
# veth starts without a qdisc: mq creates its children from the default
check "mq with default children" tc qdisc add dev $mqdev root handle 1: mq || pfb_exit
sysctl -qw net.core.default_qdisc="$old_default"
mq=$($PFB_NL dump $mqdev)
check_eq "mq root with 4 pfifo_bulk children" \
	"$(jq -c '[([.[] | select(.parent == "root")][0].kind),
		   ([.[] | select(.kind == "pfifo_bulk")] | length)]' <<< "$mq")" \
	'["mq",4]'
pktgen_setup $mqdev "$(cat /sys/class/net/$mqpeer/address)" "$count"
rx0=$(link_stat $mqpeer rx_packets)
pktgen_run
check "mq children: the device went still after the load" wait_tx_settled $mqdev
mq=$($PFB_NL dump $mqdev)
sum() { jq "[.[] | select(.kind == \"pfifo_bulk\") | $1] | add" <<< "$mq"; }
offered=$(pktgen_offered $mqdev)
sent=$(sum .packets)
echo "# mq children: offered $offered sent $sent drops $(sum .drops)" \
     "batches $(sum .xstats.batches) per child $(jq -c '[.[] | select(.kind == "pfifo_bulk") | .packets]' <<< "$mq")"
check_eq "mq children: then backlog 0" "$(sum .qlen)" 0
check_eq "mq children: offered == sent + dropped" "$offered" "$((sent + $(sum .drops)))"
check_eq "mq children: peer got every sent packet" \
	"$(($(link_stat $mqpeer rx_packets) - rx0))" "$sent"
check_eq "mq children: every child counts every packet (batch packets + bypassed == sent)" \
	"$(jq -c '[.[] | select(.kind == "pfifo_bulk") | .xstats.batch_pkts + .xstats.bypassed == .packets] | all' <<< "$mq")" true
# One sender per CPU, each on its own queue of a veth that never stops:
# most packets find their child idle and empty, and bypass it.
check_eq "mq children: batch control on (effective mode not none)" \
	"$(jq -c '[.[] | select(.kind == "pfifo_bulk") | .options.effective_mode != "none"] | all' <<< "$mq")" true
check_cmp "mq children: packets bypassed idle children" "$(sum .xstats.bypassed)" ">" 0
pfb_exit
