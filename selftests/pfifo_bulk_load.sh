#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pfifo_bulk under a pktgen queue_xmit load, one thread per CPU, for bulk
# off (bulk_pkts 1), a packet cap (8, in modes auto and nobql), a byte cap
# (300 B = 5 frames of 60 B) and no own cap. Proves, from the
# qdisc:qdisc_dequeue tracepoint: no batch above the cap, bulk off gives
# only batches of 1; from our xstats: the same histogram as the tracepoint;
# from the counters: offered == sent + dropped + backlog, and the backlog
# is 0 within a second after the load (no stall). On refnic (device-bound
# at a low line rate) also: mean batch > 2 with the packet cap, FIFO order
# on the peer, and with BQL off mean > 2 where stock pfifo stays at 1.00.
# Prints mean batch and spin locks per packet for every case.
#
# Device: refnic pair (default), or PFB_NIC=eth0 (a QEMU NIC: tools/vm/run
# -n e1000e|virtio), where the senders, not the device, are the
# bottleneck, so only correctness holds. A device that cannot be set up,
# or a case whose qdisc cannot be set, fails the test; the checks that
# would read that case's figures are not made.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd jq python3 ethtool
require_tracing
load_module sch_pfifo_bulk

count=${PFB_COUNT:-1000}
size=60
peer=
if [ -n "${PFB_NIC:-}" ]; then
	dev=$PFB_NIC
	modprobe e1000e 2>/dev/null
	modprobe virtio_net 2>/dev/null
	sysctl -qw net.ipv6.conf.$dev.disable_ipv6=1
	ip link set "$dev" up || setup_failed "no $dev"
	for _ in $(seq 50); do
		[ "$(cat "/sys/class/net/$dev/carrier" 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	mac=52:55:0a:00:02:02
	bound=0
else
	load_module refnic
	refnic_require_plugin
	dev=pfbld0
	peer=pfbld1
	ip link add $dev type refnic peer name $peer || setup_failed "refnic pair"
	defer "ip link del $dev"
	sysctl -qw net.ipv6.conf.$dev.disable_ipv6=1
	sysctl -qw net.ipv6.conf.$peer.disable_ipv6=1
	refnic_bql $dev >/dev/null || setup_failed "refnic has no BQL switch"
	ip link set $peer up && ip link set $dev up || setup_failed "links up"
	# 2 Mb/s (about 4000 frames/s) is below what two pktgen threads offer
	# even on single-threaded TCG: the device is the bottleneck and the
	# queue holds a backlog. Completions coalesced by 16, as a real NIC
	# does, so that a wake-up has room for more than one frame (with one
	# completion per frame, BQL and the ring free one slot at a time).
	ethtool -s $dev speed 2 || setup_failed "line rate 2 Mb/s"
	ethtool -C $dev tx-usecs 10000 tx-frames 16 || setup_failed "coalescing"
	mac=$(cat /sys/class/net/$peer/address)
	bound=1
fi
echo "# device $dev ($(ethtool -i "$dev" | sed -n 's/^driver: //p')), $(nproc) CPUs, $count pkts/thread"
pktgen_setup "$dev" "$mac" "$count" $size

# run_case NAME KIND [OPTION VALUE]...: replace the root qdisc, run the
# load, check what holds everywhere. Leaves $mean, $max and $locks; fails
# (after a failed check) when the case could not run.
run_case() {
	local name=$1 kind=$2 tx0 tx1 l0 l1 offered sent drops backlog hist stats
	local seq_pid= seq_out=/tmp/pfb-seq.$$ xb tb rq d rd0
	shift 2
	tc qdisc del dev "$dev" root 2>/dev/null
	if [ "$kind" = pfifo_bulk ]; then
		check "$name: qdisc set" $PFB_NL add "$dev" -H 1: "$@" || return 1
	else
		check "$name: qdisc set" tc qdisc add dev "$dev" root handle 1: "$kind" "$@" ||
			return 1
	fi
	# The trace first: on a debug kernel switching it on took longer than
	# the order checker waits for a first frame.
	batch_trace_start "$dev" || { check "$name: batch trace" false; return 1; }
	if [ -n "$peer" ]; then
		rm -f $seq_out.ready
		python3 "$PFB_TESTDIR/pfb_seqcheck.py" $peer 2 > $seq_out 2> $seq_out.ready &
		seq_pid=$!
		for _ in $(seq 100); do
			[ -s $seq_out.ready ] && break
			sleep 0.1
		done
		check "$name: order checker ready" test -s $seq_out.ready || return 1
	fi
	tx0=$(link_stat "$dev" tx_packets)
	[ -z "$peer" ] || rd0=$(link_stat "$peer" rx_dropped)
	l0=$(lock_count_read)
	pktgen_run
	check "$name: drained to backlog 0 (no stall)" wait_backlog_zero "$dev"
	l1=$(lock_count_read)
	tx1=$(link_stat "$dev" tx_packets)
	hist=$(batch_trace_read)
	batch_trace_stop
	stats=($(echo "$hist" | batch_stats))
	mean=${stats[2]} max=${stats[3]}
	locks=$(awk -v l=$((l1 - l0)) -v p=$((tx1 - tx0)) 'BEGIN { printf "%.2f", p ? l / p : 0 }')
	offered=$(pktgen_offered "$dev")
	# one dump for every counter: each pfb_nl.py call costs seconds on TCG
	d=$($PFB_NL dump "$dev" | jq -c '[.[] | select(.parent == "root")][0]')
	sent=$(jq .packets <<< "$d")
	drops=$(jq .drops <<< "$d")
	backlog=$(jq .qlen <<< "$d")
	check_eq "$name: offered == sent + dropped + backlog" \
		"$offered" "$((sent + drops + backlog))"
	echo "# $name: batches ${stats[0]} mean $mean max $max locks/pkt $locks" \
	     "tx $((tx1 - tx0)) drops $drops"
	if [ "$kind" = pfifo_bulk ]; then
		xb=$(jq -r '[.xstats.hist["1","2","3-4","5-8","9-16","17-32","33-64","65+"]] | map(tostring) | join(" ")' <<< "$d")
		tb=$(echo "$hist" | batch_buckets)
		rq=$(jq .requeues <<< "$d")
		echo "# $name: xstats hist $xb, tracepoint hist $tb, requeues $rq," \
		     "ends bytes/pkts/budget/empty $(jq -r '.xstats | "\(.end_bytes)/\(.end_pkts)/\(.end_budget)/\(.end_empty), resched \(.reschedules)"' <<< "$d")"
		check "$name: xstats histogram agrees with the tracepoint (±requeues)" \
			awk -v a="$xb" -v b="$tb" -v r="$rq" 'BEGIN {
				split(a, x); split(b, y)
				for (i = 1; i <= 8; i++) { d = x[i] - y[i]; if (d < -r || d > r) exit 1 }
			}'
		check_eq "$name: xstats batch packets + bypassed == sent" \
			"$(jq '.xstats.batch_pkts + .xstats.bypassed' <<< "$d")" "$sent"
	fi
	if [ -n "$seq_pid" ]; then
		wait $seq_pid
		echo "# $name: order checker $(cat $seq_out), $peer dropped" \
		     "$(($(link_stat "$peer" rx_dropped) - rd0)) at its RX ring"
		check_eq "$name: every sent packet reached the peer, in FIFO order" \
			"$(jq -c '[.received >= '"$sent"', .reorders]' $seq_out)" "[true,0]"
		rm -f $seq_out
	fi
	return 0
}

lock_count_start || setup_failed "kprobe on _raw_spin_lock"
run_case "auto bulk off" pfifo_bulk bulk_pkts 1 &&
	check_eq "auto bulk off: every batch is 1" "$max" 1
for mode in auto nobql; do
	run_case "$mode bulk_pkts 8" pfifo_bulk bulk_pkts 8 mode $mode || continue
	check_cmp "$mode bulk_pkts 8: no batch above 8" "$max" "<=" 8
	[ $bound = 1 ] && check_cmp "$mode bulk_pkts 8: mean batch > 2" "$mean" ">" 2
done
run_case "auto bulk_bytes 300" pfifo_bulk bulk_bytes 300 &&
	check_cmp "auto bulk_bytes 300: at most cap + one packet (5 x 60 B)" "$max" "<=" 5
run_case "auto default" pfifo_bulk
run_case "stock pfifo" pfifo

if [ $bound = 1 ]; then
	check "bql off" refnic_bql $dev off || pfb_exit
	run_case "bql off: stock pfifo" pfifo &&
		check_eq "bql off: stock pfifo batches are 1" "$mean" 1.00
	if run_case "bql off: pfifo_bulk" pfifo_bulk; then
		# (Needs the backlog of senders that outrun the line: the KASAN
		# kernel's left the queue empty at 1,968 of 1,979 batch ends in
		# one run, mean 1.68; 2.99 and 3.24 in two others.)
		xfail_on_slow check_cmp "bql off: pfifo_bulk mean batch > 2" "$mean" ">" 2
		check_eq "bql off: nobql path" "$(pfb_opt $dev effective_mode)" nobql
	fi
	refnic_bql $dev on
fi
pfb_exit
