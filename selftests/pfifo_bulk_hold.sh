#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Coalescing holds no packet without bound, and no tail of a burst. Packets
# wait in the qdisc behind a TX ring filled past it (AF_PACKET with
# PACKET_QDISC_BYPASS) on a 1 Mb/s refnic line: the queue stays stopped for
# seconds (1024 full-size frames must leave before it wakes), and the
# qdisc (mode bql: the core does not dequeue a stopped queue) sees nothing
# of it. Then the line is made unlimited and the queue wakes. Asserts:
#  - a burst queued whole after a pause leaves at once, all of it, though
#    the core takes it a packet per batch (no BQL room): nothing held,
#    nothing released by the timer;
#  - packets queued while coalescing is off, with what the stack left in
#    skb->cb (forwarded IPv6: IP6CB's nhoff lies where a stamp would be),
#    all leave once coalescing is switched on and the queue wakes (they
#    carry a stamp of 0, "queued while coalescing was off", and leave at
#    once), no wait counted beyond what they waited.
# Counters only (sysfs, the qdisc's dump); no kprobe, no tracepoint.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_userspace.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd tc jq python3 ethtool
load_module sch_pfifo_bulk
load_module refnic

dev=pfbho0
# x KEY...: xstats of the root pfifo_bulk, space-separated.
x() {
	$PFB_NL xstats $dev | jq -r "[$(printf '.%s,' "$@" | sed 's/,$//')] | map(tostring) | join(\" \")"
}

refnic_stoppable $dev

# stopped QDISC...: a fresh root QDISC, the ring filled past it at 1 Mb/s:
# the queue stays stopped for 12 s, of which the steps below take one or
# two even on a loaded TCG host.
stopped() {
	tc qdisc del dev $dev root 2>/dev/null
	ethtool -s $dev speed 0 && refnic_quiesce $dev || return 1
	tc qdisc add dev $dev root handle 1: "$@" || return 1
	refnic_ring_stop $dev
}

# drained: unlimited line, then wait until the device went still (the
# ring's 4096 frames take well under a second then; 30 s allowed for a
# loaded host); the qdisc must have nothing left. A held packet would stay
# held: the device goes still either way. Leaves the qdisc's counts.
drained() {
	ethtool -s $dev speed 0 || return 1
	wait_tx_settled $dev 300 || return 1
	read -r packets drops qlen <<< "$(qdisc_counts $dev)"
	[ "$drops $qlen" = "0 0" ] ||
		{ echo "# qdisc sent $packets, dropped $drops, queued $qlen"; return 1; }
}

# --- a burst after a pause ---------------------------------------------------------
# coalesce_usecs 10 s, the longest: held, the burst would wait that long.
# Its first packet comes long after the last one sent (none was), so it
# leaves at once; the core takes one packet per batch (no BQL room), and
# the rest of the burst must follow it, not wait for the timer.
burst=20
check "burst: ring full, queue stopped" \
	stopped pfifo_bulk mode bql limit 1000 coalesce_usecs 10000000 coalesce_pkts 65536
check_eq "burst: $burst frames sent" "$(python3 "$PFB_TESTDIR/pfb_pktsend.py" $dev $burst)" $burst
check_eq "burst: all of it waits behind the ring" "$(qdisc_counts $dev)" "0 0 $burst"
check "burst: it left with the queue's wake" drained
check_eq "burst: all of it sent" "$packets" $burst
read -r once held rtimer rpkts <<< "$(x sent_at_once held release_timer release_pkts)"
echo "# burst of $burst: at once $once, held $held (timer $rtimer, pkts $rpkts)"
check_eq "burst: sent at once, none of it held" "$once $held $rtimer $rpkts" "1 0 0 0"

# --- packets queued before coalescing, with the stack's cb ---------------------------
# Forwarded IPv6: sender in a namespace, through a veth, routed out of
# $dev to a permanent neighbour. Coalescing is switched on while they wait.
ns=pfbhons n=20 co_us=10000
check "forwarding: veth pair" veth_pair pfbhov0 pfbhov1 &&
check "forwarding: namespace" netns_add $ns &&
check "forwarding: topology" eval '
	ip link set pfbhov1 netns $ns &&
	sysctl -qw net.ipv6.conf.pfbhov0.disable_ipv6=0 &&
	sysctl -qw net.ipv6.conf.$dev.disable_ipv6=0 &&
	ip netns exec $ns sysctl -qw net.ipv6.conf.pfbhov1.disable_ipv6=0 &&
	fwd=$(sysctl -n net.ipv6.conf.all.forwarding) &&
	defer "sysctl -qw net.ipv6.conf.all.forwarding=$fwd" &&
	sysctl -qw net.ipv6.conf.all.forwarding=1 &&
	ip -6 addr add fd00:1::1/64 dev pfbhov0 nodad &&
	ip -6 addr add fd00:2::1/64 dev $dev nodad &&
	ip -6 neigh replace fd00:2::2 lladdr 02:00:00:00:00:01 dev $dev nud permanent &&
	ip -n $ns link set pfbhov1 up &&
	ip -n $ns -6 addr add fd00:1::2/64 dev pfbhov1 nodad &&
	ip -n $ns -6 neigh replace fd00:1::1 dev pfbhov1 nud permanent \
		lladdr "$(cat /sys/class/net/pfbhov0/address)" &&
	ip -n $ns -6 route add fd00:2::/64 via fd00:1::1'
# IPv6 on $dev sends reports of its own for a second or two: done before
# the packets under test queue. A report that a slow guest sends later
# only weakens the test, it cannot fail it: at least the datagrams wait,
# and every packet queued now is stamped 0.
nap 3
check "cb: ring full, queue stopped, coalescing off" stopped pfifo_bulk mode bql limit 1000
check "cb: $n forwarded datagrams sent" ip netns exec $ns python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(bytes(64), ("fd00:2::2", 9))' $n
# (IPv6 on $dev may add a report of its own: at least the datagrams wait)
read -r packets drops qlen <<< "$(qdisc_counts $dev)"
check_cmp "cb: the datagrams wait behind the ring" "$qlen" ">=" $n
check "cb: coalescing switched on (coalesce_usecs $co_us)" \
	tc qdisc change dev $dev root pfifo_bulk coalesce_usecs $co_us coalesce_pkts 65536
echo "# cb: qdisc sent $packets, queued $qlen before the wake"
check "cb: every packet left with the queue's wake" drained
check_cmp "cb: all of them sent" "$packets" ">=" $n
read -r hmax <<< "$(x held_ns_max)"
# A wait is counted from the enqueue; these waited behind the ring for the
# steps above, seconds on a loaded TCG host, never a minute.
check_cmp "cb: no wait counted beyond what the packets waited" "$hmax" "<" 60000000000
pfb_exit
