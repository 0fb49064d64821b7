#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# refnic survives reconfiguration under traffic and leaks nothing: while
# pktgen floods a pair, the TX ring is resized, completion coalescing and
# the line rate change, BQL is switched off and on, the link goes down and
# up; then the module is unloaded with the devices up and traffic running.
# The ring sizes read back, every frame one end took is accounted for
# (completed or dropped) and either received or dropped by the peer, the
# kernel log stays clean (run_tests.sh checks it) and skbuff_head_cache
# returns near its starting point.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd ethtool
[ -r /proc/slabinfo ] || { echo "SKIP: no /proc/slabinfo"; exit $ksft_skip; }
modprobe pktgen 2>/dev/null || { echo "SKIP: no pktgen"; exit $ksft_skip; }
defer refnic_pktgen_stop
load_module refnic

base=$(skb_slab)
a=rfsa0
b=rfsb0
ns=rfsns
check "pair with 2 queues" refnic_pair $a $b $ns numtxqueues 2 numrxqueues 2
check "stand-alone device" ip link add rfs1 type refnic
check "stand-alone up" ip link set rfs1 up
bmac=$(ip -n $ns -j link show $b | jq -r '.[0].address')

# One sender: leave a CPU to the reconfiguration commands.
REFNIC_PKTGEN_CPUS=1
flood() {
	refnic_pktgen $a queue_xmit 0 1 "$bmac" 10.77.0.2 &
	sleep 0.5
}

flood
for size in 16 4096 64 256; do
	check "ring $size under traffic" ethtool -G $a tx $size
	check_eq "ring reads $size" "$(ethtool -g $a | awk '/^TX:/ { v = $2 } END { print v }')" $size
	sleep 0.2
done
check_fails "ring 8 refused" ethtool -G $a tx 8
check_eq "refused size changed nothing" "$(ethtool -g $a | awk '/^TX:/ { v = $2 } END { print v }')" 256
for c in "50 8" "1000 64" "0 0" "10 1"; do
	set -- $c
	check "coalescing tx-usecs $1 tx-frames $2 under traffic" \
		ethtool -C $a tx-usecs $1 tx-frames $2
	check_eq "coalescing reads back" \
		"$(ethtool -c $a | awk '$1 == "tx-usecs:" { u = $2 } $1 == "tx-frames:" { f = $2 } END { print u, f }')" "$1 $2"
	sleep 0.2
done
check_fails "tx-usecs 20000 refused" ethtool -C $a tx-usecs 20000
check "line rate 100 Mb/s under traffic" ethtool -s $a speed 100
sleep 0.3
check "BQL off under traffic" ethtool --set-priv-flags $a bql off
sleep 0.3
check "BQL on under traffic" ethtool --set-priv-flags $a bql on
check "line rate unlimited" ethtool -s $a speed 0
check "link down under traffic" ip link set $a down
check_eq "ring freed on down: nothing in flight" \
	"$(ethtool_stat $a tx_packets)" \
	$(($(ethtool_stat $a tx_completions) + $(ethtool_stat $a tx_dropped)))
refnic_pktgen_stop
wait
check "link up" ip link set $a up
flood
sleep 0.5
check "peer down under traffic" ip -n $ns link set $b down
check "peer up" ip -n $ns link set $b up
refnic_pktgen_stop
wait

check "$a drained" refnic_quiesce $a
check "$b drained" refnic_quiesce $b $ns
check_cmp "traffic flowed" "$(ethtool_stat $a tx_packets)" ">" 1000
check_cmp "frames were purged by resets" "$(ethtool_stat $a tx_dropped)" ">=" 0
# Every frame $a completed reached $b, or $b dropped it (queue full, or
# purged by its link down). Frames sent while $b was down reached no one:
# count them from $b's RX side of the equation only while it was up, so
# compare with <=.
check_cmp "$b received + dropped <= $a completed" \
	$(($(refnic_stat $b rx_packets $ns) + $(refnic_stat $b rx_dropped $ns))) \
	"<=" "$(ethtool_stat $a tx_completions)"
check_eq "no timeouts" "$(ethtool_stat $a tx_timeouts)" 0

# Unload with everything up and pktgen running.
flood
check "refnic unloads with devices up under traffic" rmmod refnic
refnic_pktgen_stop
wait
check_eq "no refnic device left" "$( (ip -o link; ip -n $ns -o link) | grep -c 'rfs')" 0
now=$(skb_slab)
echo "# skbuff_head_cache active objects: $base before, $now after"
check_cmp "skbuff_head_cache back near baseline" "$now" "<=" $((base + $(refnic_slab_slack)))
pfb_exit
