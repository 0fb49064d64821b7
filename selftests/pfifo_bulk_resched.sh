#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The reschedule that keeps a misjudged batch from stalling the queue. On
# the BQL path the qdisc infers where a core batch starts from BQL's
# counters (sch_pfifo_bulk.c, top). A driver that drops whole batches
# before its ring (refnic drop_every 1: a DMA mapping failure on every
# frame) never moves them: after a batch that ended at bulk_pkts, the next
# batch's first call looks like the same batch going on, at its cap, and
# returns NULL while packets wait. Only the qdisc's reschedule (MISSED, or
# __netif_schedule when locked) runs it again; without it the backlog waits
# for the next enqueue, which may never come.
#
# A backlog first: a 1 Mb/s line with BQL, and pktgen queueing its whole
# load far faster; then, with nothing more to come, the driver starts
# dropping everything, and the backlog drains in batches of bulk_pkts that
# never reach the ring. Without the reschedule only the completions of the
# frames still on the line (as many as BQL let out) would run the qdisc. The drain is watched by
# observing only: the device's counters in sysfs (tx_packets, posted before
# the drops began, and tx_dropped), never a dump of the qdisc (a dump does
# not heal a stall today, but a test of a stall must not depend on that);
# the qdisc is dumped once at the end. A root in the module's mode
# (lockless: MISSED asks for the run; with lockless=0, as make check's
# locked run loads it, __netif_schedule() does, as for the mq child), and
# a locked mq child. Counters only.
#
# And no reschedule where none is needed: on the NOBQL path batch starts
# are exact, a NULL at the cap only ends the batch the core is collecting
# and the core goes on by itself. The same backlog drains there with
# batches ended at bulk_pkts and no reschedule counted, lockless or locked.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_userspace.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd tc jq ethtool
load_module sch_pfifo_bulk
load_module refnic
modprobe pktgen 2>/dev/null || { echo "SKIP: no pktgen"; exit $ksft_skip; }
defer refnic_pktgen_stop

n=1000 cap=4

# gone DEV: frames DEV posted or dropped (sysfs)
gone() {
	echo $(($(link_stat "$1" tx_packets) + $(link_stat "$1" tx_dropped)))
}

# drained DEV: all $n frames of the load left the device, posted or dropped.
drained() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(gone "$1")" -ge $n ] && return 0
		sleep 0.1
	done
	echo "# $1: $(gone "$1") of $n frames left the device, none for 10 s"
	return 1
}

# bql_pin DEV BYTES: BQL's limit on every TX queue of DEV held at BYTES
# (limit_min = limit_max) until bql_unpin DEV. Held at three and a half
# frames of 60 B, each of the core's BQL batches takes exactly $cap frames
# and no fifth call, so it is not our NULL that ends it: the misjudged
# start above, on every batch once the drops begin. Left to itself, BQL's
# limit is what the VM's timing made it: beside four busy guests on 6.1 it
# stayed below the frames still on the line, every batch ended at BQL's
# room after one frame, and none reached the cap (batches ended at
# bulk_pkts 0, at BQL's budget 992).
declare -A bql_saved
bql_pin() {
	local q
	for q in /sys/class/net/$1/queues/tx-*/byte_queue_limits; do
		bql_saved[$q]=$(cat $q/limit_max)
		must sh -c "echo $2 > $q/limit_max && echo $2 > $q/limit_min"
	done
}
bql_unpin() {
	local q
	for q in /sys/class/net/$1/queues/tx-*/byte_queue_limits; do
		must sh -c "echo 0 > $q/limit_min && echo ${bql_saved[$q]} > $q/limit_max"
	done
}

# backlog DEV HANDLE...: the load through the qdiscs HANDLE...; once a
# backlog stands, the driver drops every frame. Checks the drain (counts
# summed over the qdiscs).
backlog() {
	local dev=$1 i pid sent drops qlen resched endp ends
	shift
	must ethtool -s "$dev" speed 1
	bql_pin "$dev" $((cap * 60 - 30))
	REFNIC_PKTGEN_CPUS=1 refnic_pktgen "$dev" queue_xmit $n &
	pid=$!
	# the whole load queued: pktgen outruns the line by far
	for ((i = 0; i < 200; i++)); do
		pktgen_sent "$dev" 2>/dev/null
		[ "$REPLY" -ge $n ] && break
		sleep 0.05
	done
	echo "# $dev: $REPLY frames queued, $(gone "$dev") gone: the driver drops from now on"
	must sh -c "echo 1 > $(refnic_dbg "$dev" drop_every)"
	# pktgen waits for its last frame to be freed: after a stall, for
	# ever, until its start request is interrupted
	check "$dev: every frame left the device" drained "$dev" || kill $pid
	refnic_pktgen_end $pid
	read -r sent drops qlen <<< "$(qdisc_counts "$dev" "$@" |
		awk '{ s += $1; d += $2; q += $3 } END { print s, d, q }')"
	read -r resched endp ends <<< "$($PFB_NL dump "$dev" | jq -r --arg h " $* " \
		'[.[] | select(.handle as $x | $h | contains(" " + $x + " ")) | .xstats] |
		 "\(map(.reschedules) | add) \(map(.end_pkts) | add)" +
		 " \(map(.end_bytes) | add)/\(map(.end_budget) | add)/\(map(.end_empty) | add)"')"
	echo "# $dev: qdisc sent $sent, dropped $drops, queued $qlen; batches ended at bulk_pkts $endp," \
	     "at bytes/budget/empty $ends, reschedules $resched; driver posted" \
	     "$(link_stat "$dev" tx_packets), dropped $(link_stat "$dev" tx_dropped)"
	check_eq "$dev: the qdisc drained: sent all, none left" "$sent $qlen" "$n 0"
	# (A debug kernel's pktgen queues about 1,200 frames a second, which
	# the line keeps up with: no backlog, so no drops and no batch to
	# misjudge. KASAN: all 1,000 posted by the time they were queued.)
	# (A stock guest's pktgen queues the 1,000 frames many times faster
	# than the 1 Mb/s line's 1,488 a second, at half speed too; a pause
	# stops the line with it, which makes up at most 2 ms on return. The
	# line took 67 to 153 frames before the drops began, BQL held at
	# three and a half (471 once with BQL free, beside a KASAN guest). A
	# quarter dropped still leaves hundreds of batches to misjudge.)
	xfail_on_slow check_cmp "$dev: the driver dropped a quarter of them or more" \
		"$(link_stat "$dev" tx_dropped)" ">=" $((n / 4))
	# the dropped frames leave in batches of $cap (BQL held as bql_pin
	# says), except while the last frames on the line hold part of BQL's
	# room, a few milliseconds: 205 and 208 batches of 4 on 6.1, and 883
	# frames stranded without the reschedule. A twentieth of the load in
	# batches at the cap (12 of 4) shows that the cap, and the reschedule
	# after it, ran many times over.
	xfail_on_slow check_cmp "$dev: batches ended at bulk_pkts $cap" "$endp" ">=" $((n / 20 / cap))
	xfail_on_slow check_cmp "$dev: the qdisc rescheduled itself" "$resched" ">" 0
	bql_unpin "$dev"
}

dev=pfbrs0
ip link add $dev type refnic || setup_failed "refnic $dev"
defer "ip link del $dev"
sysctl -qw net.ipv6.conf.$dev.disable_ipv6=1
must ip link set $dev up
must tc qdisc add dev $dev root handle 1: pfifo_bulk mode bql bulk_pkts $cap limit $((2 * n))
check_eq "root: in the module's mode, on the BQL path" \
	"$(tc -j qdisc show dev $dev | jq -c '.[0].options | [.lockless, .effective_mode]')" "[$(qdisc_lockless),\"bql\"]"
backlog $dev 1:

# pktgen sends on TX queue 0: the first child
mq=pfbrs1
ip link add $mq numtxqueues 2 type refnic || setup_failed "refnic $mq"
defer "ip link del $mq"
sysctl -qw net.ipv6.conf.$mq.disable_ipv6=1
must ip link set $mq up
must tc qdisc add dev $mq root handle 1: mq
for i in 1 2; do
	must tc qdisc add dev $mq parent 1:$i handle 1$i: pfifo_bulk mode bql bulk_pkts $cap \
		limit $((2 * n))
done
check_eq "mq children: locked" \
	"$(tc -j qdisc show dev $mq | jq -c '[.[] | select(.kind == "pfifo_bulk") | .options.lockless] | unique')" '[false]'
backlog $mq 11: 12:

# nobql_drain DEV HANDLE...: a backlog at 1 Mb/s through the qdiscs
# HANDLE... (on the NOBQL path), drained by the line itself this time.
nobql_drain() {
	local dev=$1 sent drops qlen resched endp
	shift
	must sh -c "echo 0 > $(refnic_dbg "$dev" drop_every)"
	must ethtool -s "$dev" speed 1
	REFNIC_PKTGEN_CPUS=1 refnic_pktgen "$dev" queue_xmit $n || return 1
	wait_tx_settled "$dev" 300
	read -r sent drops qlen <<< "$(qdisc_counts "$dev" "$@" |
		awk '{ s += $1; d += $2; q += $3 } END { print s, d, q }')"
	read -r resched endp <<< "$($PFB_NL dump "$dev" | jq -r --arg h " $* " \
		'[.[] | select(.handle as $x | $h | contains(" " + $x + " ")) | .xstats] |
		 "\(map(.reschedules) | add) \(map(.end_pkts) | add)"')"
	echo "# $dev, NOBQL path: qdisc sent $sent, queued $qlen; batches ended at bulk_pkts $endp," \
	     "reschedules $resched"
	check_eq "$dev, NOBQL path: the qdisc drained: sent all, none left" "$sent $qlen" "$n 0"
	check_cmp "$dev, NOBQL path: batches ended at bulk_pkts $cap" "$endp" ">" 0
	check_eq "$dev, NOBQL path: no reschedule" "$resched" 0
}

must tc qdisc del dev $dev root
must tc qdisc add dev $dev root handle 1: pfifo_bulk mode nobql bulk_pkts $cap limit $((2 * n))
nobql_drain $dev 1:
must tc qdisc del dev $mq root
must tc qdisc add dev $mq root handle 1: mq
for i in 1 2; do
	must tc qdisc add dev $mq parent 1:$i handle 1$i: pfifo_bulk mode nobql bulk_pkts $cap \
		limit $((2 * n))
done
nobql_drain $mq 11: 12:
pfb_exit
