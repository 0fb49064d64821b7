# SPDX-License-Identifier: GPL-2.0
#
# Measurement helpers shared by the pfifo_bulk selftests and the benchmark:
# batch sizes from the qdisc:qdisc_dequeue tracepoint (hist trigger),
# spin-lock acquisitions from a _raw_spin_lock kprobe (hist trigger), our
# xstats through pfb_nl.py, and a pktgen queue_xmit load (one thread per
# CPU). Source it after lib.sh. Everything it sets up is undone at exit.

TRACEFS=${TRACEFS:-/sys/kernel/tracing}
# -S: no site import, a second less per call under TCG
PFB_NL="python3 -S $PFB_TESTDIR/pfb_nl.py"

require_tracing() {
	[ -d "$TRACEFS/events/qdisc/qdisc_dequeue" ] ||
		{ echo "SKIP: no qdisc_dequeue tracepoint"; exit $ksft_skip; }
}

# --- batch sizes: hist:keys=packets on qdisc:qdisc_dequeue ------------------
pfb_batch_trigger=
# batch_trace_start DEV: count batch sizes of the qdiscs of DEV. Every
# qdisc run ends with a dequeue that finds nothing; the tracepoint reports it
# with skbaddr 0 (and packets 0 on 6.1 and 6.12, which a mean over all events
# would count as a batch), so only events with an skb are batches.
batch_trace_start() {
	local idx
	forbid_text_patching "the qdisc:qdisc_dequeue hist trigger"
	idx=$(cat "/sys/class/net/$1/ifindex")
	pfb_batch_trigger="hist:keys=packets:vals=hitcount:size=2048 if ifindex == $idx && skbaddr != 0"
	echo "$pfb_batch_trigger" > "$TRACEFS/events/qdisc/qdisc_dequeue/trigger"
	defer batch_trace_stop
}
batch_trace_stop() {
	[ -n "$pfb_batch_trigger" ] || return 0
	echo "!$pfb_batch_trigger" > "$TRACEFS/events/qdisc/qdisc_dequeue/trigger"
	pfb_batch_trigger=
}
# batch_trace_read: "SIZE COUNT" lines, SIZE ascending.
batch_trace_read() {
	sed -n 's/^{ packets: *\([0-9]*\) } hitcount: *\([0-9]*\).*/\1 \2/p' \
		"$TRACEFS/events/qdisc/qdisc_dequeue/hist" | sort -n
}
# batch_stats < "SIZE COUNT" lines: "batches packets mean max"
batch_stats() {
	awk '{ b += $2; p += $1 * $2; if ($1 > m) m = $1 }
	     END { printf "%d %d %.2f %d\n", b, p, b ? p / b : 0, m }'
}
# batch_buckets < "SIZE COUNT" lines: counts in the xstats buckets
# 1 2 3-4 5-8 9-16 17-32 33-64 65+, on one line.
batch_buckets() {
	awk '{ n = $1; k = 0; while (n > 1 && k < 7) { n = int((n + 1) / 2); k++ }
	       c[k] += $2 }
	     END { for (k = 0; k < 8; k++) printf "%d%s", c[k], k < 7 ? " " : "\n" }'
}

# --- every batch with its packets' lengths: the tracepoints' events ---------
# Single-threaded TCG only, as any tracepoint enabling (text patching).
pfb_events_on=
# batch_events_start DEV: record qdisc:qdisc_dequeue (batches, skbaddr != 0)
# and net:net_dev_start_xmit (their packets) of DEV in the trace buffer.
batch_events_start() {
	local idx ev
	forbid_text_patching "switching on the qdisc_dequeue tracepoint"
	idx=$(cat "/sys/class/net/$1/ifindex")
	echo 0 > "$TRACEFS/tracing_on"
	echo 16384 > "$TRACEFS/buffer_size_kb"
	echo > "$TRACEFS/trace"
	echo "ifindex == $idx && skbaddr != 0" > "$TRACEFS/events/qdisc/qdisc_dequeue/filter"
	echo "name == \"$1\"" > "$TRACEFS/events/net/net_dev_start_xmit/filter"
	for ev in qdisc/qdisc_dequeue net/net_dev_start_xmit; do
		echo 1 > "$TRACEFS/events/$ev/enable"
	done
	pfb_events_on=1
	defer batch_events_stop
	echo 1 > "$TRACEFS/tracing_on"
}
batch_events_stop() {
	local ev
	[ -n "$pfb_events_on" ] || return 0
	for ev in qdisc/qdisc_dequeue net/net_dev_start_xmit; do
		echo 0 > "$TRACEFS/events/$ev/enable"
		echo 0 > "$TRACEFS/events/$ev/filter"
	done
	pfb_events_on=
}
# batch_events_read DEV [BULK_BYTES]: stop recording and print the batches
# as pfb_batches.py sees them (JSON). Fails when the buffer overflowed.
batch_events_read() {
	local lost
	batch_events_stop
	lost=$(cat "$TRACEFS"/per_cpu/cpu*/stats | awk '$1 == "overrun:" { s += $2 } END { print s + 0 }')
	[ "$lost" = 0 ] || { echo "trace buffer overran: $lost events lost" >&2; return 1; }
	python3 "$PFB_TESTDIR/pfb_batches.py" "$TRACEFS/trace" "$@"
}

# --- spin-lock count: kprobes on _raw_spin_lock and _raw_spin_trylock ------
# (a lockless qdisc such as pfifo_fast takes its run lock with a trylock;
# the two are counted apart). Hits are counted system-wide, per caller
# (the return address, shown as its function), so that a test can tell
# the transmit path from the rest of the kernel.
PFB_LOCK_HIST='hist:keys=caller.sym:vals=hitcount:size=4096'
pfb_lock_on=
lock_count_start() {
	forbid_text_patching "a kprobe on _raw_spin_lock"
	echo 'p:pfb_lock _raw_spin_lock caller=$stack0:x64' >> "$TRACEFS/kprobe_events" &&
	echo 'p:pfb_trylock _raw_spin_trylock caller=$stack0:x64' >> "$TRACEFS/kprobe_events" ||
		return 1
	pfb_lock_on=1
	defer lock_count_stop
	lock_trigger "$PFB_LOCK_HIST"
}
# lock_trigger SPEC: add SPEC (or with :pause, :cont, :clear, change it) on
# both events.
lock_trigger() {
	echo "$1" >> "$TRACEFS/events/kprobes/pfb_lock/trigger" &&
	echo "$1" >> "$TRACEFS/events/kprobes/pfb_trylock/trigger"
}
# lock_count_pause, lock_count_cont, lock_count_clear: stop counting (the
# counts can then be read at leisure), go on, start again from 0.
lock_count_pause() { lock_trigger "$PFB_LOCK_HIST:pause"; }
lock_count_cont() { lock_trigger "$PFB_LOCK_HIST:cont"; }
lock_count_clear() { lock_trigger "$PFB_LOCK_HIST:clear"; }
# lock_count_snap: the counts so far in $PFB_LOCKS and $PFB_TRYLOCKS. Reads
# with the shell's builtins only: a process started here would add hundreds
# of lock acquisitions of its own (fork, exec, exit) to what it measures.
lock_count_snap() {
	local l
	PFB_LOCKS=0 PFB_TRYLOCKS=0
	while read -r l; do
		[[ $l =~ hitcount:\ *([0-9]+) ]] && PFB_LOCKS=$((PFB_LOCKS + BASH_REMATCH[1]))
	done < "$TRACEFS/events/kprobes/pfb_lock/hist"
	while read -r l; do
		[[ $l =~ hitcount:\ *([0-9]+) ]] && PFB_TRYLOCKS=$((PFB_TRYLOCKS + BASH_REMATCH[1]))
	done < "$TRACEFS/events/kprobes/pfb_trylock/hist"
}
# lock_count_read: the _raw_spin_lock count so far.
lock_count_read() {
	lock_count_snap
	echo "$PFB_LOCKS"
}
# lock_count_callers lock|trylock: "COUNT FUNCTION" per calling function,
# largest first.
lock_count_callers() {
	sed -n 's/^{ caller: *\[[0-9a-f]*\] \([^ ]*\) *} hitcount: *\([0-9]*\).*/\2 \1/p' \
		"$TRACEFS/events/kprobes/pfb_$1/hist" |
		awk '{ n[$2] += $1 } END { for (f in n) print n[f], f }' | sort -rn
}
lock_count_stop() {
	[ -n "$pfb_lock_on" ] || return 0
	lock_trigger "!$PFB_LOCK_HIST"
	echo '-:pfb_lock' >> "$TRACEFS/kprobe_events"
	echo '-:pfb_trylock' >> "$TRACEFS/kprobe_events"
	pfb_lock_on=
}

# --- our xstats ------------------------------------------------------------
# xstat DEV KEY: one pfifo_bulk xstats counter (hist buckets: hist.1 ...).
xstat() {
	$PFB_NL xstats "$1" | jq -r --arg k "$2" \
		'if ($k | startswith("hist.")) then .hist[$k[5:]] else .[$k] end'
}
# xstat_buckets DEV: the histogram on one line, as batch_buckets prints it.
xstat_buckets() {
	$PFB_NL xstats "$1" | jq -r '[.hist["1","2","3-4","5-8","9-16","17-32","33-64","65+"]] | map(tostring) | join(" ")'
}
# pfb_opt DEV KEY: one option of the root pfifo_bulk, as dumped.
pfb_opt() {
	$PFB_NL dump "$1" | jq -r --arg k "$2" \
		'[.[] | select(.kind == "pfifo_bulk")][0].options[$k]'
}

# --- pktgen queue_xmit load -------------------------------------------------
PG=/proc/net/pktgen
pg_set() {
	echo "$2" > "$PG/$1" || { echo "pktgen: '$2' on $1 failed" >&2; return 1; }
}
# pktgen_setup DEV DSTMAC COUNT [SIZE]: one queue_xmit thread per CPU, each
# its own UDP source port (flow 9000 + cpu), COUNT packets each.
pktgen_setup() {
	pktgen_flows "$1" "$2" "$3" 1 "${4:-60}"
}
# pktgen_flows DEV DSTMAC COUNT PER_CPU SIZE...: PER_CPU flows on each CPU's
# queue_xmit thread, COUNT packets each. Flow k (k = cpu * PER_CPU + i) has
# UDP source port 9000 + k and the size SIZE[k % number of sizes]; each
# flow numbers its packets (pktgen's header), so order is per flow.
pktgen_flows() {
	local dev=$1 mac=$2 count=$3 per=$4 cpu i k=0 pd
	shift 4
	local sizes=("$@")
	modprobe pktgen || { echo "SKIP: no pktgen"; exit $ksft_skip; }
	defer pktgen_clear
	pktgen_remove_all
	for cpu in $(seq 0 $(($(nproc) - 1))); do
		for ((i = 0; i < per; i++, k++)); do
			pd=$dev@$k
			pg_set "kpktgend_$cpu" "add_device $pd"
			pg_set "$pd" "xmit_mode queue_xmit"
			pg_set "$pd" "count $count"
			pg_set "$pd" "pkt_size ${sizes[k % ${#sizes[@]}]}"
			pg_set "$pd" "clone_skb 0"
			pg_set "$pd" "burst 1"
			pg_set "$pd" "delay 0"
			pg_set "$pd" "dst 198.51.100.2"
			pg_set "$pd" "dst_mac $mac"
			pg_set "$pd" "udp_src_min $((9000 + k))"
			pg_set "$pd" "udp_src_max $((9000 + k))"
			pg_set "$pd" "udp_dst_min 9"
			pg_set "$pd" "udp_dst_max 9"
		done
	done
}
# seqcheck_start PEER OUT: the order check of pktgen's flows on PEER
# (pfb_seqcheck.py) in the background, its report in OUT when it ends, 2 s
# after the last frame; returns once it listens, or fails after 10 s.
# (python3 starts in about a second on TCG, two at half speed. The 2 s of
# silence that end it are 20 looks of its own, so a pause of the guest,
# after which its clock has jumped, cannot end it early.)
seqcheck_start() {
	rm -f "$2" "$2.ready"
	python3 "$PFB_TESTDIR/pfb_seqcheck.py" "$1" 2 > "$2" 2> "$2.ready" &
	for _ in $(seq 100); do
		[ -s "$2.ready" ] && return 0
		sleep 0.1
	done
	return 1
}
# seqcheck_end OUT: wait for the order check started by seqcheck_start (and
# every other job in the background: the load is over), its report in $seq.
seqcheck_end() {
	wait
	seq=$(cat "$1")
	rm -f "$1" "$1.ready"
}
# pktgen_run: start all threads, return when all sent their COUNT. The
# start request stops every thread when the writer has a signal pending
# while it waits: in a subshell, which has no children, no SIGCHLD of ours
# (a process substitution that just ended, say) cuts the load short.
pktgen_run() {
	(pg_set pgctrl start)
	pktgen_ran
}
# pktgen_offered DEV: packets handed to dev_queue_xmit (sent + errors).
pktgen_offered() {
	local f s=0
	for f in "$PG/$1"@*; do
		s=$((s + $(sed -n 's/.*pkts-sofar: *\([0-9]*\) *errors: *\([0-9]*\).*/\1 + \2/p' "$f")))
	done
	echo $s
}
# pktgen_sent DEV: packets DEV's pktgen threads have sent (queued) so far,
# in $REPLY, read with builtins only (see lock_count_snap). The start
# request of pktgen_run can return before a thread slow to take it has
# sent anything: wait for this count, not for pktgen_run.
pktgen_sent() {
	local f l
	REPLY=0
	for f in "$PG/$1"@*; do
		while read -r l; do
			[[ $l =~ ^pkts-sofar:\ *([0-9]+) ]] && REPLY=$((REPLY + BASH_REMATCH[1]))
		done < "$f"
	done
}
pktgen_clear() {
	pktgen_remove_all
}

# pfb_stat DEV KEY: a counter of the root qdisc from pfb_nl.py (packets,
# bytes, qlen, backlog, drops, requeues, overlimits).
pfb_stat() {
	$PFB_NL dump "$1" | jq -r --arg k "$2" '[.[] | select(.parent == "root")][0][$k]'
}

# wait_tx_settled DEV [TENTHS [STILL]]: wait until the device's tx_packets
# (sysfs) has not moved for STILL tenths of a second (default 10), at most
# TENTHS tenths (default 100). Only observes: a netlink dump of the qdisc
# could reschedule it and so hide the very stall a test looks for. A loaded
# host cannot fake the stillness: a pause of the guest stops this loop with
# the device, and a moving device moves within ten looks a tenth of a
# second apart. The callers' TENTHS allow for what they leave to drain.
wait_tx_settled() {
	local dev=$1 i still=0 last now
	last=$(link_stat "$dev" tx_packets)
	for ((i = 0; i < ${2:-100}; i++)); do
		sleep 0.1
		now=$(link_stat "$dev" tx_packets)
		if [ "$now" = "$last" ]; then
			still=$((still + 1))
			[ $still -ge "${3:-10}" ] && return 0
		else
			still=0
			last=$now
		fi
	done
	return 1
}

# wait_backlog_zero DEV [TENTHS [STILL]]: the root qdisc drained. Waits
# without touching the qdisc (wait_tx_settled), then reads its queue length
# once.
wait_backlog_zero() {
	wait_tx_settled "$1" "${2:-100}" "${3:-10}"
	[ "$(qdisc_counts "$1" | cut -d' ' -f3)" = 0 ]
}
