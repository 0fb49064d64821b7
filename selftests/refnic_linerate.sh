#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One line rate per port, whatever the number of TX queues, and channels
# that ethtool -L changes. A refnic with 4 TX queues at 2 Mb/s, flooded on
# all four (pktgen start_xmit cycling through them), carries no more than
# 2 Mb/s over the window (plus the slack of refnic_line_max), not 4 x 2; the
# same with 2 channels after ethtool -L tx 2 rx 2. ethtool -l reports the
# counts, bad counts are refused and change nothing; after the floods every
# frame completed and BQL has nothing in flight.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd ethtool
refnic_require_pktgen
load_module refnic

dev=rfln0
# channels: "max RX, max TX, current RX, current TX" of ethtool -l
channels() {
	ethtool -l $dev | awk '/^(RX|TX):/ { v = v $2 " " } END { print v }'
}

# flood QMAX: pktgen start_xmit on TX queues 0..QMAX for 2 s; frames that
# left on the line in $flood_n, the most the line may carry in $flood_max.
flood() {
	local t0 t1 c0 c1 i pg_pid p0=()

	for ((i = 0; i <= $1; i++)); do
		p0[i]=$(ethtool_stat $dev txq${i}_tx_completions)
	done
	REFNIC_PKTGEN_QMAP="0 $1" refnic_pktgen $dev start_xmit 0 &
	pg_pid=$!
	# (pktgen's start_xmit offers many times the 2 Mb/s line on TCG, at
	# half speed too, from the start request on: every queue carries
	# frames in 2.3 s and the line stops them; refnic_line_max says why a
	# loaded host adds nothing to the window's count)
	sleep 0.3
	t0=$(refnic_now)
	c0=$(ethtool_stat $dev tx_completions)
	sleep 2
	c1=$(ethtool_stat $dev tx_completions)
	t1=$(refnic_now)
	refnic_pktgen_end $pg_pid
	flood_n=$((c1 - c0))
	flood_max=$(refnic_line_max 2 "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
	echo "# $(($1 + 1)) queues: $flood_n frames on the line, at most $flood_max at 2 Mb/s"
	for ((i = 0; i <= $1; i++)); do
		check_cmp "queue $i carried frames" $(($(ethtool_stat $dev txq${i}_tx_completions) - p0[i])) ">" 0
	done
}

check "refnic with 4 TX and 4 RX queues" ip link add $dev numtxqueues 4 numrxqueues 4 type refnic
defer "ip link del $dev"
check "no IPv6 on the device" sysctl -qw net.ipv6.conf.$dev.disable_ipv6=1
check "link up" ip link set $dev up
check_eq "ethtool -l: max 4/4, current 4/4" "$(channels)" "4 4 4 4 "
check "line rate 2 Mb/s" ethtool -s $dev speed 2

flood 3
check_cmp "4 queues share one line rate" "$flood_n" "<=" "$flood_max"
check_cmp "the flood filled the line (stops)" "$(refnic_tx_stat $dev stops)" ">" 0

check "ethtool -L tx 2 rx 2" ethtool -L $dev tx 2 rx 2
check_eq "ethtool -l: current 2/2" "$(channels)" "4 4 2 2 "
check_eq "ethtool -S lists 2 TX queues" "$(ethtool -S $dev | grep -c 'txq[0-9]*_tx_doorbells:')" 2
check_fails "tx 5 refused" ethtool -L $dev tx 5
check_fails "tx 0 refused" ethtool -L $dev tx 0
check_fails "combined 1 refused" ethtool -L $dev combined 1
check_eq "refused counts changed nothing" "$(channels)" "4 4 2 2 "
flood 1
check_cmp "2 queues share the same line rate" "$flood_n" "<=" "$flood_max"

check "ethtool -L back to tx 4 rx 4" ethtool -L $dev tx 4 rx 4
check_eq "ethtool -l: current 4/4" "$(channels)" "4 4 4 4 "
check "$dev drained" refnic_quiesce $dev
check_eq "completions = packets" "$(ethtool_stat $dev tx_completions)" "$(link_stat $dev tx_packets)"
check_eq "BQL: nothing in flight" "$(refnic_inflight $dev)" 0
check_eq "no timeouts" "$(refnic_timeouts $dev)" 0
pfb_exit
