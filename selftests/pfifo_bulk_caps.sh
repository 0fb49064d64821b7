#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pfifo_bulk's caps are exact while senders on every CPU enqueue at once.
#
# bulk_pkts N: the largest batch is N, never N + 1, and batches end by the
# cap (end_pkts > 0); from the qdisc:qdisc_dequeue tracepoint, from our
# xstats and from refnic's packets-per-doorbell histogram. On the BQL path
# (refnic with BQL, its limit raised so that our cap binds first) and on the
# NOBQL path (BQL off).
#
# bulk_bytes B: "a batch ends at the first packet that reaches B". Every
# batch is rebuilt from the trace (the dequeue event and the lengths of the
# packets the driver then gets): none goes on after reaching B, 60-byte
# frames with B = 300 make batches of exactly 5 at most, and the batches
# that reached B are exactly those the qdisc counted in end_bytes. Once with
# one frame size, once with two (60 and 1000 bytes, one flow each).
#
# Device-bound (2 Mb/s, completions coalesced) so that the queue stays full
# and every batch could grow past a cap that did not hold. Then once more at
# full speed, where the queue runs nearly empty and producers race the
# consumer at the cap (a batch of N + 1 was seen there): the largest batch
# from a hist trigger and the xstats.
#
# The core's own cap: since "net_sched: limit try_bulk_dequeue_skb()
# batches" (v6.18, and in the 5.4 to 6.12 stable series: 6.1.192 and
# 6.12.118 have it) the core's BQL loop stops after the __qdisc_run() quota
# (net.core.dev_tx_weight, 64) of packets past the batch's first, however
# much room BQL gives. With room for hundreds of 60-byte frames, a probe
# with the stock pfifo measures the running kernel's largest batch
# (core_cap_probe): exactly 1 + dev_tx_weight on a kernel with the cap,
# more without it. Then pfifo_bulk with no cap of its own (bulk_pkts 0) and
# with one above the core's (bulk_pkts 100) must give that largest batch,
# count the batches the core ended in end_budget and none in end_pkts on a
# kernel with the cap; without it, bulk_pkts 100 binds (end_pkts, largest
# batch 100). Single-threaded guest only (tracepoint).
#
# On multi-threaded TCG (pfifo_bulk_caps_parallel.sh), where enabling a
# tracepoint is unsafe, or with PFB_NO_TRACING=1, the caps are checked from
# the xstats and refnic's counters only; the parallel guest runs the packet
# caps (bulk_pkts 8 with BQL, 4 without, 8 at full speed) and leaves the
# byte caps, which need the trace, to the single-threaded one.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd jq python3 ethtool
tracing=1
{ [ -n "${PFB_NO_TRACING:-}" ] || in_parallel_vm; } && tracing=
[ -n "$tracing" ] && require_tracing
load_module sch_pfifo_bulk
load_module refnic

dev=pfbcap0
mac=02:00:00:00:00:01
bqlsys=/sys/class/net/$dev/queues/tx-0/byte_queue_limits
must ip link add $dev type refnic
defer "ip link del $dev"
sysctl -qw net.ipv6.conf.$dev.disable_ipv6=1
ip link set $dev up || exit 1
echo "# device $dev (refnic), $(nproc) CPUs"

# device RATE BQL: line rate in Mb/s (0: unlimited), BQL on or off. With BQL
# its limit is at least 30000 bytes, room for any batch here, so that our
# caps end batches, not BQL; and a ring of 4096, which those few bytes never
# fill, so that no batch is cut. Without BQL only a full ring stops the
# queue: a ring of 64 makes the qdisc hold the backlog.
device() {
	local ring=4096
	[ "$2" = off ] && ring=64
	ethtool -G $dev tx $ring &&
	ethtool -s $dev speed "$1" &&
	refnic_bql $dev "$2" &&
	ethtool -C $dev tx-usecs 10000 tx-frames 16 || return 1
	[ "$2" = off ] || echo 30000 > $bqlsys/limit_min
}

# run NAME COUNT SIZES OPTION...: a fresh pfifo_bulk with OPTIONs, one flow
# per CPU of COUNT packets (sizes SIZES, comma-separated), run to the end.
# Leaves $x (the qdisc's dump: counters, options, xstats), $ev (the rebuilt batches, when traced
# with events), $hist (tracepoint histogram "SIZE COUNT" lines) and $db
# (refnic's doorbell histogram, 9-16 and above summed: "1 2 3-4 5-8 9+").
run() {
	local name=$1 count=$2 sizes=$3 bytes= db0 offered
	shift 3
	[[ " $* " == *" bulk_bytes "* ]] && bytes=$(sed 's/.*bulk_bytes \([0-9]*\).*/\1/' <<< "$*")
	tc qdisc del dev $dev root 2>/dev/null
	$PFB_NL add $dev -H 1: limit 1000 "$@" || return 1
	pktgen_flows $dev $mac "$count" 1 ${sizes//,/ }
	db0=$(doorbells)
	ev= hist=
	if [ -n "$tracing" ]; then
		if [ "$count" -le 3000 ]; then
			batch_events_start $dev
		else
			batch_trace_start $dev
		fi
	fi
	pktgen_run
	check "$name: drained to backlog 0 (no stall)" wait_backlog_zero $dev
	if [ -n "$tracing" ]; then
		if [ "$count" -le 3000 ]; then
			ev=$(batch_events_read $dev $bytes) || return 1
			hist=$(jq -r '.hist | to_entries[] | "\(.key) \(.value)"' <<< "$ev")
		else
			hist=$(batch_trace_read)
			batch_trace_stop
		fi
	fi
	db=$(paste -d' ' <(echo "$db0") <(doorbells) | awk '{
		for (i = 1; i <= 8; i++) d[i] = $(i + 8) - $i
		printf "%d %d %d %d %d\n", d[1], d[2], d[3], d[4], d[5] + d[6] + d[7] + d[8] }')
	x=$($PFB_NL dump $dev | jq -c '[.[] | select(.parent == "root")][0]')
	offered=$(pktgen_offered $dev)
	echo "# $name: offered $offered sent $(jq .packets <<< "$x") dropped $(jq .drops <<< "$x")" \
	     "requeues $(jq .requeues <<< "$x"); xstats hist $(jq -c .xstats.hist <<< "$x")," \
	     "end bytes/pkts/budget/empty $(jq -r '.xstats | "\(.end_bytes)/\(.end_pkts)/\(.end_budget)/\(.end_empty)"' <<< "$x");" \
	     "doorbells 1/2/3-4/5-8/9+ $db${ev:+; trace $ev}"
	check_eq "$name: offered == sent + dropped" "$offered" \
		"$(($(jq .packets <<< "$x") + $(jq .drops <<< "$x")))"
	# Drained, so the last batch has ended too: each has one end reason.
	check_eq "$name: end reasons sum to batches" \
		"$(xs '.end_bytes + .end_pkts + .end_budget + .end_empty')" "$(xs .batches)"
	[ "$(jq .drops <<< "$x")" -gt 0 ] &&
		check_eq "$name: tail drops are drops, not overlimits" "$(jq .overlimits <<< "$x")" 0
	return 0
}

# doorbells: refnic's packets-per-doorbell histogram, 8 numbers.
doorbells() {
	local b
	for b in 1 2 3_4 5_8 9_16 17_32 33_64 65_up; do
		printf '%s ' "$(ethtool_stat $dev tx_doorbell_pkts_$b)"
	done
	echo
}

# xs FILTER: jq FILTER over the qdisc's xstats (hist: the batch histogram).
xs() {
	jq -r ".xstats | $1" <<< "$x"
}

# trace_max: the largest batch in the tracepoint histogram.
trace_max() {
	echo "$hist" | awk '$1 > m { m = $1 } END { print m + 0 }'
}

# packet_cap NAME N BUCKET_ABOVE: the checks of a bulk_pkts N run whose cap
# is the top of its xstats bucket (N = 2, 4 or 8), so that N + 1 would land
# in BUCKET_ABOVE.
packet_cap() {
	local name=$1 n=$2 above=$3
	check_cmp "$name: batches ended by the cap (end_pkts)" "$(xs .end_pkts)" ">" 0
	check_eq "$name: no batch above $n in the xstats ($above and up empty)" \
		"$(xs "[.hist | to_entries[] | select((.key | sub(\"[-+].*\"; \"\") | tonumber) > $n) | .value] | add")" 0
	check_eq "$name: no doorbell for more than $n frames" \
		"$(awk -v n=$n '{ print (n >= 8 ? $5 : n >= 4 ? $4 + $5 : $3 + $4 + $5) }' <<< "$db")" 0
	[ -n "$tracing" ] || return 0
	check_eq "$name: largest batch (tracepoint) is the cap" "$(trace_max)" "$n"
}

# Packets per CPU: device-bound, and at full speed. Four vCPUs on
# multi-threaded TCG are slower per packet, and race just as well with less.
count=1000 full=10000
in_parallel_vm && full=4000

must device 2 on
must run "bql path, bulk_pkts 8" $count 60 bulk_pkts 8 mode bql
packet_cap "bql path, bulk_pkts 8" 8 9-16
# (a packet that bypasses the empty queue can meet the ring stopped and be
# requeued: not a cut batch)
check_cmp "bql path: no requeues but of bypassed packets (no batch was cut)" \
	"$(jq .requeues <<< "$x")" "<=" "$(xs .bypassed)"

# The byte cap is rebuilt from the trace, batch by batch: the
# single-threaded guest checks it. The parallel guest races the packet cap.
if ! in_parallel_vm; then
	must run "bql path, bulk_bytes 300, 60 B frames" $count 60 bulk_bytes 300 mode bql
	check_cmp "bulk_bytes 300: batches ended by the cap (end_bytes)" "$(xs .end_bytes)" ">" 0
	check_eq "bulk_bytes 300: no batch above 5 x 60 B in the xstats" "$(xs '.hist["9-16"]')" 0
	if [ -n "$tracing" ]; then
		check_eq "bulk_bytes 300: largest batch is 5 (the 5th frame reaches 300 B)" "$(trace_max)" 5
		check_eq "bulk_bytes 300: no batch went on after reaching the cap" "$(jq .past_cap <<< "$ev")" 0
		check_eq "bulk_bytes 300: every batch that reached 300 B is in end_bytes" \
			"$(jq .reached <<< "$ev")" "$(xs .end_bytes)"
		# the transmits outside any batch are the bypassed packets, but
		# for those requeued (a dequeue event of their own, later)
		check_eq "bulk_bytes 300: every batch rebuilt from the trace, the rest bypassed" \
			"$(jq --argjson rq "$(jq .requeues <<< "$x")" '[.cut, .orphans + $rq]' -c <<< "$ev")" \
			"[0,$(xs .bypassed)]"
	fi

	must run "bql path, bulk_bytes 1500, 60 and 1000 B frames" $count 60,1000 bulk_bytes 1500 mode bql
	check_cmp "mixed sizes: batches ended by the cap (end_bytes)" "$(xs .end_bytes)" ">" 0
	if [ -n "$tracing" ]; then
		check_eq "mixed sizes: no batch went on after reaching the cap" "$(jq .past_cap <<< "$ev")" 0
		check_eq "mixed sizes: every batch that reached 1500 B is in end_bytes" \
			"$(jq .reached <<< "$ev")" "$(xs .end_bytes)"
		check_cmp "mixed sizes: some batch overshot the cap by a 1000 B frame" \
			"$(jq .max_bytes <<< "$ev")" ">" 1500
		check_cmp "mixed sizes: no batch overshot by a whole frame more" \
			"$(jq .max_bytes <<< "$ev")" "<" $((1500 + 1000))
		# the transmits outside any batch are the bypassed packets, but
		# for those requeued (a dequeue event of their own, later)
		check_eq "mixed sizes: every batch rebuilt from the trace, the rest bypassed" \
			"$(jq --argjson rq "$(jq .requeues <<< "$x")" '[.cut, .orphans + $rq]' -c <<< "$ev")" \
			"[0,$(xs .bypassed)]"
	fi
fi

must device 2 off
must run "nobql path, bulk_pkts 4" $count 60 bulk_pkts 4
check_eq "nobql path: effective mode" "$($PFB_NL dump $dev | jq -r '.[0].options.effective_mode')" nobql
packet_cap "nobql path, bulk_pkts 4" 4 5-8

if ! in_parallel_vm; then
	must run "nobql path, bulk_pkts 2" $count 60 bulk_pkts 2
	packet_cap "nobql path, bulk_pkts 2" 2 3-4
fi

# --- the core's cap ---------------------------------------------------------
# The line at 2 Mb/s, as above (3,600 frames/s of 60 bytes, which a
# KASAN guest's senders outrun too), and completions in chunks of 256
# frames with no timer (tx-usecs 0: the interrupt comes after 256 frames,
# or when the wire has sent all it was given, which a backlog never lets
# happen): each completion gives BQL (limit_min 30000 bytes, 500 frames)
# room for 256 frames at once, four times the core's cap, however slowly
# the line runs. (At 20 Mb/s with tx-usecs 10000, a KASAN guest's senders
# did not outrun the line: batches of 2 to 10.)
core_cap_device() {
	device 2 on && ethtool -C $dev tx-usecs 0 tx-frames 256
}
core_quota=$(($(sysctl -n net.core.dev_weight) * $(sysctl -n net.core.dev_weight_tx_bias)))
core_count=4000

# core_cap_probe: the largest batch the core builds for the stock pfifo on
# this device and load, from the qdisc_dequeue tracepoint, in $core_max.
core_cap_probe() {
	tc qdisc del dev $dev root 2>/dev/null
	tc qdisc add dev $dev root handle 1: pfifo limit 1000 || return 1
	pktgen_flows $dev $mac $core_count 1 60
	batch_trace_start $dev
	pktgen_run
	check "core cap probe (pfifo): drained to backlog 0" wait_backlog_zero $dev
	hist=$(batch_trace_read)
	batch_trace_stop
	tc qdisc del dev $dev root
	echo "# core cap probe (pfifo): batches SIZE COUNT $(echo $hist)"
	core_max=$(trace_max)
}

if [ -n "$tracing" ]; then
	must core_cap_device
	# A largest batch below 1 + quota says the queue or the device gave
	# too little room to tell: the probe is no probe then. A guest that a
	# loaded host starves may not outrun the line in a run, so the probe
	# gets 3 runs to build the backlog it needs.
	for try in 1 2 3; do
		core_cap_probe || setup_failed "the pfifo probe of the core's cap"
		[ "$core_max" -ge $((core_quota + 1)) ] && break
	done
	[ "$core_max" -ge $((core_quota + 1)) ] ||
		setup_failed "core cap probe: largest pfifo batch $core_max in 3 runs, below 1 + dev_tx_weight $core_quota: not enough backlog or BQL room to tell"
	if [ "$core_max" -eq $((core_quota + 1)) ]; then
		core_cap=$core_max
		echo "# the core caps a batch at $core_cap (1 + dev_tx_weight $core_quota)"
	else
		core_cap=
		echo "# the core does not cap a batch (pfifo reached $core_max, beyond 1 + dev_tx_weight $core_quota)"
	fi
	for own in 0 100; do
		name="core cap, bql path, bulk_pkts $own"
		# The regime is a full queue, senders that outrun the line. A
		# guest that a loaded host starves may offer no more than the
		# line takes in a run (seen beside other guests: offered 8000,
		# sent 8000, no drop, batches of 1), which says nothing about
		# caps; such a run is made again, up to 3 times, and the checks
		# read the first that dropped at the queue's limit.
		for try in 1 2 3; do
			must run "$name" $core_count 60 bulk_pkts $own mode bql
			[ "$(jq .drops <<< "$x")" -gt 0 ] && break
			echo "# $name: no drop in run $try, the senders did not outrun the line"
		done
		check_cmp "$name: the senders outran the line (drops) in one of 3 runs" \
			"$(jq .drops <<< "$x")" ">" 0
		big=$(echo "$hist" | awk -v q=$core_quota '$1 > q + 1 { n += $2 } END { print n + 0 }')
		if [ -n "$core_cap" ]; then
			check_eq "$name: largest batch is the core's cap" "$(trace_max)" "$core_cap"
			check_eq "$name: no batch above the core's cap" "$big" 0
			check_eq "$name: batches of 65 and more (tracepoint) are the xstats' 65+ bucket" \
				"$(xs '.hist["65+"]')" "$(echo "$hist" | awk '$1 >= 65 { n += $2 } END { print n + 0 }')"
			check_cmp "$name: the core ended batches: end_budget" "$(xs .end_budget)" ">=" "$(xs '.hist["65+"]')"
			check_eq "$name: our cap never ended a batch (end_pkts)" "$(xs .end_pkts)" 0
		elif [ "$own" = 0 ]; then
			check_cmp "$name: batches beyond 1 + dev_tx_weight" "$big" ">" 0
			check_eq "$name: our cap never ended a batch (end_pkts)" "$(xs .end_pkts)" 0
		else
			check_eq "$name: largest batch is our cap" "$(trace_max)" "$own"
			check_cmp "$name: batches ended by our cap (end_pkts)" "$(xs .end_pkts)" ">" 0
		fi
	done
fi

# Full speed: the queue is short, so a cap is often reached just as the
# queue looks empty, with a producer about to add.
must device 0 on
must run "full speed, bql path, bulk_pkts 8" $full 60 bulk_pkts 8
check_eq "full speed: the bql path ran" "$($PFB_NL dump $dev | jq -r '.[0].options.effective_mode')" bql
check_eq "full speed, bulk_pkts 8: no batch above 8 in the xstats" "$(xs '[.hist["9-16","17-32","33-64","65+"]] | add')" 0
check_eq "full speed, bulk_pkts 8: no doorbell for more than 8 frames" "$(awk '{ print $5 }' <<< "$db")" 0
[ -n "$tracing" ] && check_cmp "full speed, bulk_pkts 8: largest batch (tracepoint)" "$(trace_max)" "<=" 8
pfb_exit
