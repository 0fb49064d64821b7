#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# refnic rings its doorbell once per batch the stack hands it, not per packet.
# Under pfifo, a pktgen queue_xmit load (one thread per CPU) and a 10 Mb/s
# line that makes the device the bottleneck, the core bulk-dequeues with BQL
# on: fewer doorbells than packets, and packets sent with xmit_more. With the
# BQL switch (debugfs) off the core never bulks: exactly one doorbell per packet.
# pktgen's own start_xmit burst 8 (no qdisc) gives one doorbell per 8.
# Counters add up: histogram total = doorbells, completions = packets.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd ethtool tc jq
load_module refnic
defer refnic_pktgen_stop
defer pktgen_remove_all

dev=rfdb0
check "stand-alone refnic added" ip link add $dev type refnic
defer "ip link del $dev"
# No IPv6 autoconf chatter: the counts below are pktgen's alone.
check "no IPv6 on the device" sysctl -qw net.ipv6.conf.$dev.disable_ipv6=1
check "link up" ip link set $dev up
# A limit above any run's packets: pfifo never tail-drops here. (Since
# 6.19 a locked qdisc's contending senders leave their packet on the defer
# list with NET_XMIT_SUCCESS, and a full pfifo drops it later unseen by
# pktgen, which would count it sent; before, pktgen retried the drop.)
check "pfifo root" tc qdisc replace dev $dev root pfifo limit 100000
check "line rate 10 Mb/s" ethtool -s $dev speed 10
check_eq "speed reported" "$(ethtool $dev | awk '/Speed:/ { print $2 }')" 10Mb/s

# run_load COUNT [MODE BURST]: sends and leaves the deltas in d_pkts,
# d_db, d_more, d_full.
run_load() {
	local p0 d0 m0 f0
	p0=$(link_stat $dev tx_packets)
	d0=$(ethtool_stat $dev tx_doorbells)
	m0=$(ethtool_stat $dev tx_xmit_more)
	f0=$(ethtool_stat $dev tx_ring_full)
	refnic_pktgen $dev "${2:-queue_xmit}" "$1" "${3:-1}"
	refnic_quiesce $dev
	d_pkts=$(($(link_stat $dev tx_packets) - p0))
	d_db=$(($(ethtool_stat $dev tx_doorbells) - d0))
	d_more=$(($(ethtool_stat $dev tx_xmit_more) - m0))
	d_full=$(($(ethtool_stat $dev tx_ring_full) - f0))
}

n=3000
total=$(($(nproc) * n))

check_eq "BQL switch defaults on" "$(refnic_bql $dev)" on
run_load $n
echo "# BQL on: $d_pkts packets, $d_db doorbells, $d_more with xmit_more"
check_eq "BQL on: every packet sent" "$d_pkts" "$total"
# (Both need one batch of two among the 6,000 packets: pktgen on every CPU
# outruns the 10 Mb/s line at half speed too.)
check_cmp "BQL on: doorbells/pkt < 1" "$(awk -v a=$d_db -v b=$d_pkts 'BEGIN { print a / b }')" "<" 1
check_cmp "BQL on: packets with xmit_more" "$d_more" ">" 0
# Every packet without xmit_more rings; a packet with xmit_more rings only
# when it filled the ring (the queue stopped mid-batch).
check_cmp "BQL on: doorbells >= packets without xmit_more" "$d_db" ">=" $((d_pkts - d_more))
check_cmp "BQL on: extra doorbells only on ring-full stops" "$d_db" "<=" $((d_pkts - d_more + d_full))

check "BQL switch off" refnic_bql $dev off
check_eq "BQL switch reads off" "$(refnic_bql $dev)" off
run_load $n
echo "# BQL off: $d_pkts packets, $d_db doorbells, $d_more with xmit_more"
check_eq "BQL off: every packet sent" "$d_pkts" "$total"
check_eq "BQL off: one doorbell per packet" "$d_db" "$d_pkts"
check_eq "BQL off: no xmit_more" "$d_more" 0
check "BQL switch back on" refnic_bql $dev on

check "line rate unlimited (speed 0)" ethtool -s $dev speed 0
check_eq "speed reported unknown" "$(ethtool $dev | awk '/Speed:/ { print $2 }')" Unknown!
run_load 2000 start_xmit 8
echo "# start_xmit burst 8: $d_pkts packets, $d_db doorbells"
check_eq "burst: every packet sent" "$d_pkts" $(($(nproc) * 2000))
# (pktgen's burst marks 7 of every 8 with xmit_more however fast the
# guest runs: 0.125, plus a doorbell for each stop on a full ring.)
check_cmp "burst: doorbells/pkt about 1/8" "$(awk -v a=$d_db -v b=$d_pkts 'BEGIN { print a / b }')" "<=" 0.15
check_cmp "burst: most doorbells carry 5-8 packets" "$(ethtool_stat $dev tx_doorbell_pkts_5_8)" ">=" $((d_db * 3 / 4))

check_eq "histogram total = doorbells" "$(refnic_hist_sum $dev)" "$(ethtool_stat $dev tx_doorbells)"
check_eq "completions = packets (ip -s link)" "$(ethtool_stat $dev tx_completions)" "$(link_stat $dev tx_packets)"
check_eq "txq0 doorbells = total" "$(ethtool_stat $dev txq0_tx_doorbells)" "$(ethtool_stat $dev tx_doorbells)"
check_eq "no timeouts" "$(refnic_timeouts $dev)" 0
check_eq "pfifo dropped nothing" "$(tc -s -j qdisc show dev $dev | jq '.[0].drops')" 0
pfb_exit
