#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The core's TX watchdog times out a queue whose wire stopped, not one that
# drains slowly. With watchdog_ms 1000 (the module's knob for devices made
# after it, as stmmac's watchdog), a refnic's ring of 4096 on a 1 Mb/s
# line, BQL off, is flooded with full-size frames (pktgen start_xmit): the
# ring fills, and its queue stays stopped until 1024 frames have left,
# 12.6 s. Proves that the queue stayed stopped for 3 s, more than a
# watchdog period (which round_jiffies() keeps under 2 s) past the
# timeout, while its completions went on, and that it did not time out
# (refnic_tx_clean() tells the watchdog of completions); that watchdog_ms
# refuses values out of 1000..600000 and keeps its value; and, at full
# speed, that every frame completed.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd ethtool
refnic_require_pktgen
load_module refnic

dev=rfwd0
param=/sys/module/refnic/parameters/watchdog_ms
old=$(cat $param)
defer "echo $old > $param"

check_fails "watchdog_ms 999 refused" sh -c "echo 999 > $param"
check_fails "watchdog_ms 600001 refused" sh -c "echo 600001 > $param"
check_eq "refused values changed nothing" "$(cat $param)" "$old"
check "watchdog_ms 1000" sh -c "echo 1000 > $param"
check "refnic with one TX queue" ip link add $dev numtxqueues 1 numrxqueues 1 type refnic
defer "ip link del $dev"
check "no IPv6 on the device" sysctl -qw net.ipv6.conf.$dev.disable_ipv6=1
check "BQL off (its limit stops a queue for moments only)" refnic_bql $dev off
check "ring of 4096" ethtool -G $dev tx 4096
check "link up" ip link set $dev up
check "line rate 1 Mb/s" ethtool -s $dev speed 1

# The ring's fills (tx_ring_full) and completions. pktgen offers frames
# all along: a queue that woke would at once fill and stop again.
counts() {
	echo "$(ethtool_stat $dev tx_ring_full) $(ethtool_stat $dev tx_completions)"
}
# wait_full: the ring full within 20 s; its counts in $f1 $c1
wait_full() {
	local i
	for ((i = 0; i < 200; i++)); do
		read -r f1 c1 <<< "$(counts)"
		[ "$f1" -gt 0 ] && return 0
		sleep 0.1
	done
	return 1
}
REFNIC_PKTGEN_CPUS=1 REFNIC_PKTGEN_SIZE=1514 refnic_pktgen $dev start_xmit 0 &
pg_pid=$!
check "the ring filled and its queue stopped" wait_full
# (3 s of the guest's time: a loaded host only stretches it, and the stop
# lasts 12.6 s of the line's, which stops with the guest)
sleep 3
read -r f2 c2 <<< "$(counts)"
refnic_pktgen_end $pg_pid
echo "# ring full, completions: $f1 $c1, 3 s later $f2 $c2"
check_eq "and stayed stopped for 3 s (filled once)" "$f1 $f2" "1 1"
check_cmp "while its completions went on" "$c2" ">" "$c1"
check_eq "no TX timeout" "$(refnic_timeouts $dev)" 0

check "full speed" ethtool -s $dev speed 0
check "$dev drained" refnic_quiesce $dev
check_eq "completions = packets" "$(ethtool_stat $dev tx_completions)" "$(link_stat $dev tx_packets)"
pfb_exit
