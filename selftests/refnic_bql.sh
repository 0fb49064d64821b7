#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# refnic's BQL switch, /sys/kernel/debug/refnic/DEV/bql, works both ways and
# refuses bad writes. The same pktgen queue_xmit load runs on a device-bound
# refnic (2 Mb/s, completions coalesced by 16 frames or 10 ms), while
# byte_queue_limits/inflight (bytes posted, not yet completed) is sampled:
# with 1 (the default) BQL counts them, some sample is above 0; with 0 it
# counts nothing, every sample is 0 and the limit stays at its reset value,
# 0, though every frame was sent. Anything but 0 or 1 fails with EINVAL and
# changes neither the value nor BQL's behaviour. A write while the link is
# down applies at the next up, and the value follows a rename. Writes racing
# with renames and the device's deletion (both remove the debugfs files
# under RTNL, and wait for the writes in progress) hang nothing.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd ethtool tc
load_module refnic
defer refnic_pktgen_stop
defer pktgen_remove_all

dev=rfbq0
err=/tmp/refnic_bql.err
defer "rm -f $err"
refnic_device_bound $dev
# A limit above any run's packets: pfifo never drops here, so every frame
# pktgen offers is sent (see refnic_doorbell.sh).
must tc qdisc replace dev $dev root pfifo limit 100000
knob=$(refnic_dbg $dev bql)
q=/sys/class/net/$dev/queues/tx-0/byte_queue_limits

check_eq "the switch exists, 1 by default" "$(cat "$knob")" 1
check_eq "refnic_bql reads on" "$(refnic_bql $dev)" on

# bad_writes: each bad value fails with EINVAL, the switch keeps its value.
bad_writes() {
	local v was
	was=$(cat "$knob")
	for v in 2 x -1 "" 1x 0x2 4294967297; do
		check "write '$v' refused with EINVAL" \
			eval '! echo "$v" 2>"$err" > "$knob" && grep -q "Invalid argument" "$err"'
	done
	check_eq "the switch kept its value ($was)" "$(cat "$knob")" "$was"
}

# load: 1500 frames per CPU through the qdisc, sampling inflight until
# pktgen is done; the largest sample in $max, the frames sent in $sent.
# At 2 Mb/s these frames take at least 0.5 s per CPU of line time whatever
# the host's load, and while pktgen has a backlog the ring always holds
# frames waiting for the line or for their coalesced completion: one
# sampler run in that time sees them, if BQL counts them.
load() {
	local pid tx0 v i n=0

	max=0
	tx0=$(link_stat $dev tx_packets)
	refnic_pktgen $dev queue_xmit 1500 &
	pid=$!
	# (pktgen returns when its last frame is freed: a second or more of
	# the 2 Mb/s line with bytes in flight, so a look every 50 ms sees
	# them whatever the guest's speed)
	while kill -0 $pid 2>/dev/null; do
		v=$(refnic_inflight $dev)
		[ "$v" -gt "$max" ] && max=$v
		n=$((n + 1))
		sleep 0.05
	done
	wait $pid
	# pktgen is done once pfifo took its frames: wait for pfifo to hand
	# them all to the driver (about a second at 2 Mb/s), then for the
	# driver to complete them
	for i in $(seq 100); do
		[ "$(qdisc_counts $dev | awk '{ print $3 }')" = 0 ] && break
		sleep 0.1
	done
	refnic_quiesce $dev
	sent=$(($(link_stat $dev tx_packets) - tx0))
	echo "# BQL $(refnic_bql $dev): $sent frames, $n samples, inflight at most $max," \
		"limit $(cat $q/limit)"
}

bad_writes
load
check_cmp "on: frames sent" "$sent" ">" 0
# bql_counted: BQL counted this load: a sample saw bytes in flight, or
# (a slow guest's sampler can miss a 2 s load: the KASAN guest took 3
# samples and saw none) its limit moved off the reset value, which only
# completions of bytes it counted as sent do.
bql_counted() {
	[ "$max" -gt 0 ] || [ "$(cat $q/limit)" != "$(cat $q/limit_min)" ]
}
check "on: BQL counted bytes in flight (sampled $max, limit $(cat $q/limit))" bql_counted
check_eq "on: nothing in flight once drained" "$(refnic_inflight $dev)" 0

check "write 0" eval 'echo 0 > "$knob"'
check_eq "reads 0" "$(cat "$knob")" 0
check_eq "refnic_bql reads off" "$(refnic_bql $dev)" off
bad_writes
load
check_eq "off: every frame sent" "$sent" $((1500 * $(nproc)))
check_eq "off: BQL counted nothing in flight" "$max" 0
check_eq "off: BQL's limit stayed at its reset value" "$(cat $q/limit)" "$(cat $q/limit_min)"

check "write 1" eval 'echo 1 > "$knob"'
load
check "on again: BQL counted bytes in flight (sampled $max, limit $(cat $q/limit))" bql_counted

# A write while the link is down waits for the next up.
check "link down" ip link set $dev down
check "write 0 while down" refnic_bql $dev off
check "link up" ip link set $dev up
load
check_eq "off after the up: nothing in flight counted" "$max" 0
check_cmp "off after the up: frames sent" "$sent" ">" 0

# The value lives in the device, the file follows its name. (Another
# device: pktgen, which knows $dev, warns when a device it knows is
# renamed.)
check "another device" ip link add rfbq1 type refnic
defer "ip link del rfbq1"
defer "ip link del rfbq4"
check "write 0" refnic_bql rfbq1 off
check "rename it" ip link set rfbq1 name rfbq4
check "the old name's file is gone" eval '[ ! -e "$(refnic_dbg rfbq1 bql)" ]'
check_eq "the new name's file reads 0" "$(cat "$(refnic_dbg rfbq4 bql)")" 0
check "delete it" ip link del rfbq4

# Writes racing with renames and deletion. A write that waited for RTNL
# while the rename or deletion, holding RTNL, waited in debugfs_remove()
# for that write, would hang both for ever: each command gets 20 s.
exec 3>&1	# refnic_bounded's verdict
writer() {
	while :; do
		echo 0 > "$1"
		echo 1 > "$1"
	done 2>/dev/null
}
defer "ip link del rfbq2"
defer "ip link del rfbq3"
ok=0
for i in $(seq 10); do
	ip link add rfbq2 type refnic && ip link set rfbq2 up || break
	# (no output: a writer stuck in the kernel must not hold the test's)
	writer "$(refnic_dbg rfbq2 bql)" >/dev/null 2>&1 3>&- &
	wpid=$!
	writer "$(refnic_dbg rfbq3 bql)" >/dev/null 2>&1 3>&- &
	wpid2=$!
	refnic_bounded ip link set rfbq2 down &&
		refnic_bounded ip link set rfbq2 name rfbq3 &&
		refnic_bounded ip link set rfbq3 up &&
		refnic_bounded ip link del rfbq3 || { kill $wpid $wpid2; break; }
	kill $wpid $wpid2
	wait $wpid $wpid2 2>/dev/null
	ok=$((ok + 1))
done
check_eq "writes raced with 10 renames and deletions" "$ok" 10
pfb_exit
