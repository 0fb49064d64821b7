#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The empty-queue bypass: a packet that finds pfifo_bulk idle and empty goes
# straight to the driver (TCQ_F_CAN_BYPASS), and is counted as bypassed, so
# that batch_pkts + bypassed == Sent always holds once the device is still.
# One sender on a dummy device (which never stops its queue) finds the
# queue empty every time: every packet is bypassed, on the root and on a
# locked mq child alike; under a classful parent the parent is the
# root and nothing is bypassed. On a refnic device that is the bottleneck a
# backlog forms, and batches with it; after bursts whose batches were cut,
# a lone frame bypasses again. The root runs in the module's mode
# (lib.sh: qdisc_lockless): the lockless root's bypass (the core's test of
# MISSED and DRAINING) in the default run, the locked root's (qdisc_qlen(),
# and since 6.19 a lone packet on the defer list) in make check's
# lockless=0 run; the mq children are locked in both.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_userspace.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd tc jq python3 ethtool taskset
[ -x "$PFB_BINDIR/pfb_bursts" ] || setup_failed "selftests/pfb_bursts not built (make -C selftests)"
load_module sch_pfifo_bulk
load_module refnic

dev=pfbbp0
mq=pfbbp1
rdev=pfbbp2
n=1000
dummy_add $dev || setup_failed "dummy $dev"
dummy_add $mq numtxqueues 2 || setup_failed "dummy $mq"

# sums HANDLE_PATTERN DEV: "packets batch_pkts bypassed batches qlen" summed
# over DEV's pfifo_bulk qdiscs whose handle matches.
sums() {
	$PFB_NL dump "$2" | jq -r --arg h "$1" '[.[] | select(.kind == "pfifo_bulk" and (.handle | test($h)))] |
		[(map(.packets) | add), (map(.xstats.batch_pkts) | add),
		 (map(.xstats.bypassed) | add), (map(.xstats.batches) | add),
		 (map(.qlen) | add)] | @tsv'
}

# --- the root of a dummy --------------------------------------------------
must $PFB_NL add $dev -H 1:
check_eq "root: frames sent" "$(pkt_send $dev $n)" $n
read -r packets bpkts bypassed batches qlen <<< "$(sums '^1:$' $dev)"
echo "# root: sent $packets, batch_pkts $bpkts, bypassed $bypassed, batches $batches"
check_eq "root: Sent" "$packets" $n
check_eq "root: every packet found the queue empty and was bypassed" "$bypassed" $n
check_eq "root: no batch (no backlog)" "$batches" 0
check_eq "root: batch_pkts + bypassed == Sent" "$((bpkts + bypassed))" "$packets"
check_eq "root: the module's mode" "$(pfb_opt $dev lockless)" "$(qdisc_lockless)"

# --- locked children of mq ------------------------------------------------------
must tc qdisc add dev $mq root handle 1: mq
must tc qdisc add dev $mq parent 1:1 handle 11: pfifo_bulk
must tc qdisc add dev $mq parent 1:2 handle 12: pfifo_bulk
check_eq "mq children run locked" \
	"$($PFB_NL dump $mq | jq -c '[.[] | select(.kind == "pfifo_bulk") | .options.lockless] | unique')" '[false]'
check_eq "mq: frames sent" "$(pkt_send $mq $n)" $n
read -r packets bpkts bypassed batches qlen <<< "$(sums '^1[12]:$' $mq)"
echo "# mq children: sent $packets, batch_pkts $bpkts, bypassed $bypassed, batches $batches"
check_eq "mq children: Sent" "$packets" $n
check_eq "mq children: every packet bypassed (qlen 0 under the root lock)" "$bypassed" $n
check_eq "mq children: batch_pkts + bypassed == Sent" "$((bpkts + bypassed))" "$packets"

# --- under a classful parent: the parent is the root, nothing bypasses us --------
must tc qdisc del dev $dev root
must tc qdisc add dev $dev root handle 1: prio
must tc qdisc add dev $dev parent 1:1 handle 10: pfifo_bulk
must tc qdisc add dev $dev parent 1:2 handle 20: pfifo_bulk
must tc qdisc add dev $dev parent 1:3 handle 30: pfifo_bulk
check_eq "under prio: frames sent" "$(pkt_send $dev $n)" $n
read -r packets bpkts bypassed batches qlen <<< "$(sums '^[123]0:$' $dev)"
check_eq "under prio: Sent" "$packets" $n
check_eq "under prio: nothing bypassed" "$bypassed" 0
check_eq "under prio: no batch (a parent dequeues)" "$batches" 0

# --- a backlog: refnic at 2 Mb/s ---------------------------------------------------
refnic_device_bound $rdev
must $PFB_NL add $rdev -H 1:
check_eq "refnic: frames sent" "$(pkt_send $rdev 3000)" 3000
check "refnic: the device went still" wait_tx_settled $rdev
read -r packets bpkts bypassed batches qlen <<< "$(sums '^1:$' $rdev)"
drops=$(qdisc_stat $rdev drops)
echo "# refnic 2 Mb/s: sent $packets, dropped $drops, batch_pkts $bpkts, bypassed $bypassed, batches $batches"
check_eq "refnic: backlog 0" "$qlen" 0
check_eq "refnic: offered == sent + dropped" 3000 "$((packets + drops))"
check_eq "refnic: batch_pkts + bypassed == Sent" "$((bpkts + bypassed))" "$packets"
check_cmp "refnic: the first packet found the queue empty" "$bypassed" '>=' 1
check_cmp "refnic: a backlog formed batches" "$batches" '>' 0
check_cmp "refnic: batches of more than one" "$bpkts" '>' "$batches"

# --- after a burst whose batches were cut: the bypass again ------------------
# A batch cut at bulk_pkts on the BQL path asks for another run (lockless:
# MISSED; locked: a reschedule). Once the queue is found empty, nothing of
# that may keep the next sender from the bypass: the lockless dequeue
# clears MISSED and DRAINING there, as pfifo_fast_dequeue() does. In each
# round a burst of 24 frames into the smallest ring (16: the device stops
# within the burst, a backlog forms), and once the device has taken them
# all in, a lone frame: it must find the queue idle and empty and bypass
# it. One sender CPU (taskset), so that no other sender holds the run
# lock; the run that sent the burst's last frame ran on that CPU and has
# ended when pfb_bursts sees the counters complete, and refnic's
# completions (10 ms coalescing) are over when the lone frame follows, a
# process start later. A build that never cleared DRAINING there bypassed
# none of the 15. The code before issue 34 (DRAINING kept when MISSED was
# set) bypassed all 15, as main does: the run that a completion's wake
# starts finds the queue empty with MISSED clear, and clears DRAINING.
must ethtool -G $rdev tx 16
must $PFB_NL change $rdev -H 1: mode bql bulk_pkts 2
rounds=15 done=0 cut=0 lone=0
for ((r = 0; r < rounds; r++)); do
	e0=$(qdisc_stat $rdev end_pkts)
	taskset -c 0 "$PFB_BINDIR/pfb_bursts" $rdev 1 24 10 > /dev/null || break
	b0=$(qdisc_stat $rdev bypassed)
	[ "$(qdisc_stat $rdev end_pkts)" -gt "$e0" ] && cut=$((cut + 1))
	taskset -c 0 "$PFB_BINDIR/pfb_bursts" $rdev 1 1 10 > /dev/null || break
	[ $(($(qdisc_stat $rdev bypassed) - b0)) -eq 1 ] && lone=$((lone + 1))
	done=$((done + 1))
done
read -r packets bpkts bypassed batches qlen <<< "$(sums '^1:$' $rdev)"
echo "# bursts: $done rounds of 24 + 1, $cut with batches cut at bulk_pkts," \
     "$lone lone frames bypassed; sent $packets, bypassed $bypassed"
check_eq "bursts: every round drained" "$done" $rounds
check_cmp "bursts: batches were cut at bulk_pkts" "$cut" '>' 0
check_eq "bursts: every lone frame after a burst bypassed the queue" "$lone" $rounds
check_eq "bursts: batch_pkts + bypassed == Sent" "$((bpkts + bypassed))" "$packets"
pfb_exit
