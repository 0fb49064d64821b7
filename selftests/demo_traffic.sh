#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A first look: pfifo_bulk on a refnic under a short pktgen load, one thread
# per CPU, then "tc -s" and the device counters.

. "$(dirname "$0")/lib.sh"
require_root
load_module sch_pfifo_bulk
load_module refnic
modprobe pktgen || exit $ksft_skip
defer "rmmod pktgen"

dev=pfbdemo0
ip link add $dev type refnic && defer "ip link del $dev"
ip link set $dev up
tc qdisc add dev $dev root handle 1: pfifo_bulk

pg() { echo "$2" > "/proc/net/pktgen/$1"; }
cpus=$(nproc)
for ((c = 0; c < cpus; c++)); do
	pg "kpktgend_$c" "rem_device_all"
	pg "kpktgend_$c" "add_device $dev@$c"
	pg "$dev@$c" "count 20000"
	pg "$dev@$c" "pkt_size 60"
	pg "$dev@$c" "xmit_mode queue_xmit"
	pg "$dev@$c" "dst 192.0.2.1"
	pg "$dev@$c" "dst_mac 02:00:00:00:00:01"
done
echo "demo: pktgen, $cpus threads x 20000 packets of 60 bytes through pfifo_bulk" >&2
pg pgctrl start
tc -s qdisc show dev $dev
ip -s link show dev $dev
