#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Coalescing (coalesce_usecs, coalesce_pkts): batches without a backlog,
# with a bound on the wait. Asserts:
#  - options: defaults, round trip, the kernel's ranges; refused under a
#    classful parent (the parent decides when packets leave), accepted on
#    an mq child;
#  - the bound: bursts of 3 frames far apart, on refnic. The first frame
#    of each burst comes long after the one before it and leaves at once;
#    the next two are held and leave together when the timer fires: every
#    hold ends by the timer (each burst has left the device before the
#    next is sent; without the timer it would wait for it), no held packet
#    leaves before coalesce_usecs (the mean wait is at least that), none
#    waits seconds (as a wait counted from a stale stamp would);
#  - a paced load (pktgen, a fixed delay per frame): stock pfifo and
#    pfifo_bulk without coalescing ring the doorbell about once per packet
#    (there is no backlog), pfifo_bulk with coalescing at most once per
#    four, with BQL on and off; every frame sent, none dropped;
#  - a request/response flow over a refnic pair is never delayed beyond
#    the bound (its p99 is printed beside the uncoalesced one);
#  - faults while packets are held: the device goes down (they are freed,
#    never sent, not even after up), coalescing is turned off (they leave
#    at once, not at the timer), the qdisc is deleted and the module
#    removed at once (the timer is stopped: no report in the kernel log).
# Counters only (refnic's ethtool -S, the qdisc's dump); no kprobe, no
# tracepoint.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_userspace.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd tc jq python3 ethtool
load_module sch_pfifo_bulk
load_module refnic

dev=pfbco0
pfb_nl() { $PFB_NL "$@"; }

# x DEV KEY...: xstats of the root pfifo_bulk, space-separated.
x() {
	local dev=$1
	shift
	$PFB_NL xstats "$dev" | jq -r "[$(printf '.%s,' "$@" | sed 's/,$//')] | map(tostring) | join(\" \")"
}

ip link add $dev type refnic || setup_failed "refnic $dev"
defer "ip link del $dev"
sysctl -qw net.ipv6.conf.$dev.disable_ipv6=1
must ip link set $dev up

# --- options ----------------------------------------------------------------------
must tc qdisc add dev $dev root handle 1: pfifo_bulk
check_eq "default: coalescing off, coalesce_pkts 8" \
	"$(root_opts tc -j qdisc show dev $dev | jq -c '[.coalesce_usecs, .coalesce_pkts]')" '[0,8]'
check_eq "default: not in the text" "$(tc qdisc show dev $dev | grep -c coalesce)" 0
check "change coalesce_usecs 50 coalesce_pkts 8" \
	tc qdisc change dev $dev root pfifo_bulk coalesce_usecs 50 coalesce_pkts 8
check_eq "dumped" "$(root_opts tc -j qdisc show dev $dev | jq -c '[.coalesce_usecs, .coalesce_pkts]')" '[50,8]'
check "text: coalesce_usecs 50 coalesce_pkts 8" \
	eval "tc qdisc show dev $dev | grep -q '$(qdisc_lock_word) coalesce_usecs 50us coalesce_pkts 8 \$'"
expect_fail "coalesce_usecs 10000001: the kernel's range" 2 \
	'^Error: pfifo_bulk: TCA_PFIFO_BULK_COALESCE_USECS \(coalesce_usecs\) must be a u32 in 0\.\.10000000 microseconds, 0 = off\.$' \
	tc qdisc change dev $dev root pfifo_bulk coalesce_usecs 10000001
expect_fail "coalesce_pkts 0: the kernel's range" 2 \
	'^Error: pfifo_bulk: TCA_PFIFO_BULK_COALESCE_PKTS \(coalesce_pkts\) must be a u32 in 1\.\.65536 packets\.$' \
	tc qdisc change dev $dev root pfifo_bulk coalesce_pkts 0
check_eq "refused changes change nothing" \
	"$(root_opts tc -j qdisc show dev $dev | jq -c '[.coalesce_usecs, .coalesce_pkts]')" '[50,8]'
must tc qdisc del dev $dev root

must tc qdisc add dev $dev root handle 1: prio
expect_fail "under prio: refused" 2 \
	'^Error: pfifo_bulk: coalesce_usecs needs a qdisc the core dequeues itself: the root, or a child of mq, mqprio or an offloaded htb\.$' \
	tc qdisc add dev $dev parent 1:1 handle 10: pfifo_bulk coalesce_usecs 50
check_eq "under prio: nothing added" "$(tc -j qdisc show dev $dev | jq '[.[] | select(.kind == "pfifo_bulk")] | length')" 0
must tc qdisc add dev $dev parent 1:1 handle 10: pfifo_bulk
expect_fail "under prio: a change is refused" 2 'coalesce_usecs needs a qdisc the core dequeues itself' \
	tc qdisc change dev $dev parent 1:1 handle 10: pfifo_bulk coalesce_usecs 50
check_eq "under prio: unchanged" \
	"$(tc -j qdisc show dev $dev | jq -c '.[] | select(.handle == "10:") | .options.coalesce_usecs')" 0
must tc qdisc del dev $dev root

mqdev=pfbco1
ip link add $mqdev numtxqueues 2 type refnic || setup_failed "refnic $mqdev"
defer "ip link del $mqdev"
must ip link set $mqdev up
must tc qdisc add dev $mqdev root handle 1: mq
check "mq child: accepted" tc qdisc add dev $mqdev parent 1:1 handle 11: pfifo_bulk coalesce_usecs 50
check_eq "mq child: coalescing on, locked" \
	"$(tc -j qdisc show dev $mqdev | jq -c '.[] | select(.handle == "11:") | [.options.coalesce_usecs, .options.lockless]')" \
	'[50,false]'

# --- the bound: bursts far apart ------------------------------------------------------
wait_us=10000 pause=0.5 bursts=12
must tc qdisc add dev $dev root handle 1: pfifo_bulk coalesce_usecs $wait_us coalesce_pkts 8
db0=$(ethtool_stat $dev tx_doorbells)
tx0=$(link_stat $dev tx_packets)
sent=0 left=0
for ((b = 1; b <= bursts; b++)); do
	sent=$((sent + $(python3 "$PFB_TESTDIR/pfb_pktsend.py" $dev 3)))
	# Nothing else is sent until this burst has left the device, so only
	# the timer can release its held frames (a later packet would release
	# them too, and count that as the timer's: the release counters
	# cannot tell). Read from sysfs, never the qdisc.
	wait_sent $dev $((tx0 + 3 * b - 1)) || break
	left=$b
	sleep $pause
done
check_eq "bursts: frames sent" "$sent" $((3 * bursts))
check_eq "bursts: each burst left before the next was sent" "$left" $bursts
check "bursts: the device went still" wait_tx_settled $dev
read -r packets drops qlen <<< "$(qdisc_counts $dev)"
read -r held rpkts rtimer once hns hmax batches bpkts <<< \
	"$(x $dev held release_pkts release_timer sent_at_once held_ns held_ns_max batches batch_pkts)"
db=$(($(ethtool_stat $dev tx_doorbells) - db0))
echo "# bursts: $bursts x 3 frames, ${pause}s apart, coalesce_usecs $wait_us: held $held" \
     "(pkts $rpkts, timer $rtimer), at once $once, batches $batches, doorbells $db," \
     "wait mean $((held ? hns / held : 0)) ns, max $hmax ns"
check_eq "bursts: all sent, none dropped, none left" "$packets $drops $qlen" "$((3 * bursts)) 0 0"
check_eq "bursts: every packet in a batch (no bypass while coalescing)" "$bpkts" "$packets"
# A loaded host only lengthens the 500 ms pause before each first frame,
# so each still leaves at once. Pausing the guest between the frames of a
# burst (three sends, microseconds apart) for 10 ms or more lets the
# later ones leave at once too: that adds to "at once" and takes from
# "held", but a pause must hit that window in 7 of the 12 bursts to reach
# the bound, where each burst is a few microseconds of 500 ms.
check_cmp "bursts: the first of every burst left at once" "$once" ">=" $bursts
check_cmp "bursts: most bursts held" "$held" ">=" $((bursts / 2))
check_eq "bursts: every hold ended by the timer" "$rpkts $rtimer" "0 $held"
check_eq "bursts: a doorbell per batch" "$db" "$batches"
# (a lower bound: a slow guest's timer fires late, never early)
check_cmp "bursts: no hold ended early (mean wait >= coalesce_usecs)" "$((hns / (held ? held : 1)))" ">=" \
	$((wait_us * 1000))
# That the timer ended every hold is shown above (each burst left before
# the next). How late it fired is the host's: a softirq on a TCG guest is
# late by as long as the host starves the guest, 195 ms at worst with
# three guests on two CPUs, 664 ms with four (two make checks at once). So
# the bound is 2 s, as for the paced load below: it tells a wait counted
# from a stamp the stack left in cb[], off by the guest's uptime or more.
check_cmp "bursts: the longest wait is coalesce_usecs + at most 2 s" \
	"$hmax" "<=" $(((wait_us + 2000000) * 1000))
must tc qdisc del dev $dev root

# --- a paced load ---------------------------------------------------------------------
# pktgen queue_xmit, a thread per CPU, each a fixed delay between frames:
# 2,500 frames a second in all. Nothing builds a backlog, so every qdisc
# rings about once per packet (asserted: the load is what the test says it
# is); coalescing holds until 8 wait. The window is what 8 frames take at
# that pace (3.2 ms), so that a batch of 8 can form in it; on bare metal,
# at a thousand times the rate, a few us would do. The pace leaves the
# vCPUs idle most of the time even on a loaded host: a backlog forms only
# where a sender meets the other vCPU inside the qdisc, and a busier guest
# meets it more often. At 10,000 frames a second, which a 2-vCPU guest
# sent at 2,700 a second beside another guest and a build, pfifo with BQL
# rang 0.859 times per packet, near the bound of 0.8; at this pace, on the
# same host, 0.990 (and coalescing 0.143).
per=${PFB_COALESCE_COUNT:-1500} gap_ns=400000
counters() {
	echo "$(link_stat $dev tx_packets) $(ethtool_stat $dev tx_doorbells)"
}
# paced NAME BQL QDISC...: pktgen at $delay; doorbells per packet in
# $dbpp, the seconds it took in $secs
paced() {
	local name=$1 bql=$2 p0 d0 p1 d1 t0 t1
	shift 2
	dbpp= secs=
	refnic_bql $dev "$bql" || return 1
	tc qdisc del dev $dev root 2>/dev/null
	tc qdisc add dev $dev root handle 1: "$@" || return 1
	read -r p0 d0 < <(counters)
	t0=$(refnic_now)
	REFNIC_PKTGEN_DELAY=$delay refnic_pktgen $dev queue_xmit $per || return 1
	t1=$(refnic_now)
	refnic_quiesce $dev || return 1
	read -r p1 d1 < <(counters)
	read -r packets drops qlen <<< "$(qdisc_counts $dev)"
	dbpp=$(awk -v d=$((d1 - d0)) -v p=$((p1 - p0)) 'BEGIN { printf "%.3f", p ? d / p : 0 }')
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	echo "# paced, BQL $bql, $*: $((p1 - p0)) packets in $secs s, $((d1 - d0)) doorbells ($dbpp/pkt)"
	[ "$((p1 - p0)) $packets $drops $qlen" = "$total $total 0 0" ] ||
		{ echo "# paced: sent $((p1 - p0)), qdisc sent $packets dropped $drops queued $qlen, want $total"; return 1; }
}
# paced_alone NAME BQL QDISC...: paced, made again (3 runs at most) while
# it rings fewer than 0.8 doorbells per packet. A guest that falls behind
# its pace sends late frames in bunches, a backlog that any qdisc batches:
# beside another make check's guests a run that pktgen scheduled over
# 1.2 s took 4.3 s and rang 0.624 per packet, the others 0.966 to 1.000.
# A qdisc that batches a paced load by itself rings less in every run.
paced_alone() {
	local i
	for ((i = 1; i <= 3; i++)); do
		paced "$@" || return 1
		awk -v d="$dbpp" 'BEGIN { exit !(d >= 0.8) }' && return 0
		echo "# paced: run $i of 3 rang $dbpp per packet in $secs s, scheduled over" \
		     "$(awk -v p=$per -v d=$delay 'BEGIN { printf "%.1f", p * d / 1e9 }') s"
	done
}
total=$(($(nproc) * per))
delay=$((gap_ns * $(nproc))) co_us=$((8 * gap_ns / 1000))
echo "# paced: $delay ns between the frames of each of $(nproc) threads;" \
     "coalesce_usecs $co_us coalesce_pkts 8"
# (A debug kernel on TCG kept no schedule of 10,000 a second: the KASAN
# kernel's pktgen sent 1,000 frames a second, then caught up in bunches,
# and the core's BQL bulk dequeue rang 0.12 times per packet for pfifo.)
for bql in on off; do
	check "paced, BQL $bql: pfifo" paced_alone pfifo $bql pfifo limit 10000 &&
		xfail_on_slow check_cmp "paced, BQL $bql: pfifo rings about once per packet" \
			"$dbpp" ">=" 0.8
	check "paced, BQL $bql: pfifo_bulk" paced_alone pfifo_bulk $bql pfifo_bulk limit 10000 &&
		xfail_on_slow check_cmp "paced, BQL $bql: pfifo_bulk without coalescing too" \
			"$dbpp" ">=" 0.8
	# (A guest a little slow makes batches larger: pktgen, late, catches
	# up in bunches, and a late timer finds more packets waiting. One
	# slower than the pace itself sends fewer than 8 frames a window, and
	# the timer ends most holds: the KASAN kernel, beside host builds,
	# sent the 6,000 frames scheduled over 2.4 s in 55.7 s and rang 0.542
	# per packet, 321 of its 451 holds ended by the timer.)
	check "paced, BQL $bql: pfifo_bulk coalescing" \
		paced coalesce $bql pfifo_bulk limit 10000 coalesce_usecs $co_us coalesce_pkts 8 &&
		xfail_on_slow check_cmp "paced, BQL $bql: coalescing rings once per 4 packets or less" \
			"$dbpp" "<=" 0.25
	read -r held rpkts rtimer hmax <<< "$(x $dev held release_pkts release_timer held_ns_max)"
	echo "# paced, BQL $bql, coalescing: held $held (pkts $rpkts, timer $rtimer), longest wait $hmax ns"
	# The timer's lateness on a starved guest bounds it, as the bursts'
	# above: 2 s, five times the worst seen here (397 ms, 7.3 with two
	# debug-kernel guests on the same two CPUs). A wait counted from a
	# stamp the stack left in cb[] (issue 34's first finding) is off by
	# the guest's uptime or more, so the bound still tells it.
	check_cmp "paced, BQL $bql: coalescing: the longest wait is coalesce_usecs + at most 2 s" \
		"$hmax" "<=" $(((co_us + 2000000) * 1000))
done
tc qdisc del dev $dev root

# --- request/response: never held ---------------------------------------------------------
# One transaction in flight over a refnic pair: each side sends a packet a
# round trip after its last one, so the qdisc sees a flow sparser than its
# window and sends every packet at once. pfifo_bulk on both ends.
rr_us=50
if check "rr: refnic pair" refnic_pair pfbrr0 pfbrr1 pfbrrns; then
	load=$PFB_BINDIR/pfb_load
	rr_run() { # COALESCE_USECS: p50 and p99 in $rr_p50 $rr_p99
		local side
		for side in "" "ip netns exec pfbrrns"; do
			$side tc qdisc replace dev "$([ -z "$side" ] && echo pfbrr0 || echo pfbrr1)" root \
				handle 1: pfifo_bulk coalesce_usecs "$1" || return 1
		done
		ip netns exec pfbrrns "$load" echo -p 9301 -t 3 > /dev/null &
		# (a request sent before the echo side listens is lost and
		# retried after 200 ms; the counts below are per transaction)
		sleep 0.3
		read -r rr_p50 rr_p99 rr_n < <("$load" rr -d 10.77.0.2 -p 9301 -s 64 -t 2 |
			jq -r '"\(.p50_us) \(.p99_us) \(.transactions)"')
		wait
	}
	declare -A p99
	for round in 1 2; do
		for co in 0 $rr_us; do
			check "rr: coalesce_usecs $co, round $round" rr_run $co || continue
			p99[$co]="${p99[$co]:-}${p99[$co]:+ }$rr_p99"
			if [ "$co" != 0 ]; then
				read -r h0 <<< "$(x pfbrr0 held)"
				read -r h1 <<< "$(ip netns exec pfbrrns $PFB_NL xstats pfbrr1 | jq -r .held)"
				echo "# rr coalesce_usecs $co: $rr_n transactions, p50 $rr_p50 us, p99 $rr_p99 us;" \
				     "held: $h0 here, $h1 at the peer"
				# A packet is held only when it follows the one before by
				# less than 50 us; a round trip on TCG takes longer, and a
				# slow guest only makes it longer still.
				check_cmp "rr: at most 1 % of the requests held" "$h0" "<=" $((rr_n / 100))
				check_cmp "rr: at most 1 % of the responses held" "$h1" "<=" $((rr_n / 100))
			else
				echo "# rr without coalescing: $rr_n transactions, p50 $rr_p50 us, p99 $rr_p99 us"
			fi
		done
	done
	echo "# rr p99 (us), two rounds: coalescing off ${p99[0]:-}, coalesce_usecs $rr_us ${p99[$rr_us]:-}"
	tc qdisc del dev pfbrr0 root
	ip netns exec pfbrrns tc qdisc del dev pfbrr1 root
fi

# --- faults while packets are held ---------------------------------------------------------
# hold SECS: a window of SECS and room for 1000: of a burst of UDP
# datagrams (sent as fast as pfb_load can, fewer than the socket's buffer
# holds: held packets are still charged to it), the first leaves at once
# and the rest wait. Windows of seconds: a tc command takes a good part of
# one on a TCG guest. (pktgen cannot make the burst: it waits until its
# last packet is freed.) Each check that something happens before the
# window ends (the down, the change, the delete) comes two or three tc
# commands after the burst: about a second on TCG, two or three when a
# loaded host halves the guest's speed, within the 5 s (3 s) windows.
# The naps after them wait for something that must not happen: a slow
# guest can hide such a fault, never invent one.
n=200
must ip addr add 198.51.100.1/24 dev $dev
hold() {
	# a down flushes even permanent neighbours
	ip neigh replace 198.51.100.2 lladdr 02:00:00:00:00:01 dev $dev nud permanent || return 1
	tc qdisc del dev $dev root 2>/dev/null
	tc qdisc add dev $dev root handle 1: pfifo_bulk coalesce_usecs $(($1 * 1000000)) \
		coalesce_pkts 1000 limit 1000 || return 1
	tx0=$(link_stat $dev tx_packets)
	"$PFB_BINDIR/pfb_load" stream -d 198.51.100.2 -p 9 -s 18 -n $n > /dev/null || return 1
	read -r packets drops qlen <<< "$(qdisc_counts $dev)"
	[ "$packets $drops $qlen" = "1 0 $((n - 1))" ] ||
		{ echo "# hold: sent, dropped, queued: $packets $drops $qlen"; return 1; }
}

slab0=$(skb_slab)
check "down: $((n - 1)) held" hold 5
must ip link set $dev down
check_eq "down: the held packets are freed" "$(qdisc_counts $dev | cut -d' ' -f3)" 0
must ip link set $dev up
# (a wait for what must not happen: a slow guest can hide a packet sent
# after up, never invent one; the queue length above is the proof)
nap 1.5
check_eq "down: none of them was sent, not even after up" "$(link_stat $dev tx_packets)" $((tx0 + 1))

check "coalesce_pkts lowered: $((n - 1)) held" hold 5
check "coalesce_pkts lowered to 1" tc qdisc change dev $dev root pfifo_bulk coalesce_pkts 1
check "coalesce_pkts lowered: they left" wait_tx_settled $dev
read -r rpkts rtimer <<< "$(x $dev release_pkts release_timer)"
# the qdisc counts a release as the timer's once the window is over
check_eq "coalesce_pkts lowered: all sent, at once (by coalesce_pkts, before the window ended)" \
	"$(link_stat $dev tx_packets) $rpkts $rtimer" "$((tx0 + n)) 1 0"

check "coalescing off: $((n - 1)) held" hold 5
check "coalescing off" tc qdisc change dev $dev root pfifo_bulk coalesce_usecs 0
check "coalescing off: they left" wait_tx_settled $dev
check_eq "coalescing off: all sent, none by the timer" \
	"$(link_stat $dev tx_packets) $(x $dev release_timer)" "$((tx0 + n)) 0"

must tc qdisc del dev $mqdev root
check "delete: $((n - 1)) held" hold 3
must tc qdisc del dev $dev root
check "delete: and the module removed at once, timer pending" rmmod sch_pfifo_bulk
# past the window: the timer, had it been left armed, would have fired
nap 3.5
check_eq "delete: none of them was sent" "$(link_stat $dev tx_packets)" $((tx0 + 1))
check_cmp "down, delete: no skb leaked (the held ones were freed)" "$(skb_slab)" "<=" \
	$((slab0 + $(refnic_slab_slack)))

pfb_exit
