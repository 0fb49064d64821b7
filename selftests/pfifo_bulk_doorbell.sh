#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a batch buys the driver: under pfifo_bulk, refnic rings its doorbell
# once per batch and sees xmit_more on the packets before the last, with
# BQL on and also with BQL off, where the core itself never bulks (stock
# pfifo: exactly one doorbell per packet, no xmit_more). From refnic's own
# counters (tx_packets, tx_doorbells, tx_xmit_more, tx_stops),
# asserts:
#  - pfifo_bulk, BQL on and BQL off: doorbells/pkt <= 0.5, packets with
#    xmit_more > 0 (at least half of them);
#  - stock pfifo, BQL off: doorbells == packets (1.00), no xmit_more;
#  - every run: every offered packet sent, nothing dropped; a doorbell for
#    each packet without xmit_more, and beyond those only where the queue
#    stopped (the driver then rings, as no later packet will).
# A qdisc that never batches, or a driver that rings for every packet,
# gives 1.00 doorbells/pkt under pfifo_bulk and fails.
#
# The regime (as pfifo_bulk_locks.sh, which explains it): a stand-alone
# refnic at 2 Mb/s, completions coalesced by 16 frames, pktgen queue_xmit
# one thread per CPU, a queue limit that holds the whole load. Counts only:
# no kprobe, no tracepoint.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd jq python3 ethtool
load_module sch_pfifo_bulk
load_module refnic

count=${PFB_COUNT:-2000}
total=$(($(nproc) * count))
limit=$((2 * total))
dev=pfbdb0

refnic_device_bound $dev
pktgen_setup $dev 02:00:00:00:00:01 "$count"
echo "# refnic at 2 Mb/s, completions every 16 frames; $(nproc) pktgen threads" \
     "x $count packets; limit $limit"

# counters DEV: "tx_packets tx_doorbells tx_xmit_more tx_stops" (packets
# from ip -s link, stops from qstats on 6.9+: refnic_tx_stat)
counters() {
	echo "$(link_stat "$1" tx_packets)" \
	     "$(ethtool -S "$1" | awk '$1 == "tx_doorbells:" { d = $2 }
		$1 == "tx_xmit_more:" { m = $2 } END { print d, m }')" \
	     "$(refnic_tx_stat "$1" stops)"
}

# run NAME BQL QDISC [OPTION VALUE]...: one load under QDISC with BQL on
# or off. Leaves the deltas in $pkts, $db, $more, $stops and the doorbells
# per packet in $dbpp.
run() {
	local name=$1 bql=$2 kind=$3 i p0 d0 m0 s0 p1 d1 m1 s1 offered drops
	shift 3
	pkts= db= more= stops= dbpp=
	check "$name: bql $bql" refnic_bql $dev "$bql" || return 1
	tc qdisc del dev $dev root 2>/dev/null
	if [ "$kind" = pfifo_bulk ]; then
		check "$name: qdisc set" $PFB_NL add $dev -H 1: limit $limit "$@" || return 1
	else
		check "$name: qdisc set" tc qdisc add dev $dev root handle 1: "$kind" limit $limit ||
			return 1
	fi
	read -r p0 d0 m0 s0 < <(counters $dev)
	pktgen_run
	for ((i = 0; i < 200; i++)); do
		pktgen_sent $dev
		[ "$REPLY" -ge $total ] && break
		nap 0.1
	done
	check "$name: every frame completed" refnic_quiesce $dev
	read -r p1 d1 m1 s1 < <(counters $dev)
	pkts=$((p1 - p0)) db=$((d1 - d0)) more=$((m1 - m0)) stops=$((s1 - s0))
	dbpp=$(awk -v d=$db -v p=$pkts 'BEGIN { if (p > 0) printf "%.3f", d / p }')
	offered=$(pktgen_offered $dev)
	drops=$(pfb_stat $dev drops)
	echo "# $name: $pkts packets, $db doorbells ($dbpp/pkt), $more with xmit_more," \
	     "$stops stops (offered $offered, dropped $drops)"
	check_eq "$name: the whole load offered, sent, none dropped" "$offered $pkts $drops" "$total $total 0"
	check_cmp "$name: a doorbell for every packet without xmit_more" "$db" ">=" $((pkts - more))
	check_cmp "$name: other doorbells only where the queue stopped" "$db" "<=" $((pkts - more + stops))
}

run "BQL on: pfifo_bulk" on pfifo_bulk
check_cmp "BQL on: pfifo_bulk doorbells/pkt <= 0.5" "$dbpp" "<=" 0.5
check_cmp "BQL on: pfifo_bulk sends half its packets or more with xmit_more" "$more" ">=" $((pkts / 2))

run "BQL off: pfifo" off pfifo
check_eq "BQL off: pfifo rings once per packet (1.00)" "$db" "$pkts"
check_eq "BQL off: pfifo sends no xmit_more" "$more" 0

run "BQL off: pfifo_bulk" off pfifo_bulk
check_cmp "BQL off: pfifo_bulk doorbells/pkt <= 0.5" "$dbpp" "<=" 0.5
check_cmp "BQL off: pfifo_bulk sends half its packets or more with xmit_more" "$more" ">=" $((pkts / 2))
check_eq "BQL off: pfifo_bulk takes the NOBQL path" "$(pfb_opt $dev effective_mode)" nobql

check_eq "histogram total = doorbells" "$(refnic_hist_sum $dev)" "$(ethtool_stat $dev tx_doorbells)"
check_eq "no TX timeouts" "$(refnic_timeouts $dev)" 0
refnic_bql $dev on
pfb_exit
