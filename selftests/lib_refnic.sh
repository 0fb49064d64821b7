# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the refnic selftests, on top of lib.sh. Source after lib.sh.

PFB_IPLIB=$PFB_TOP/ip-plugin

# refnic_require_plugin: "ip link add ... type refnic peer ..." needs ip's
# link_refnic.so (ip-plugin/); build it if missing.
refnic_require_plugin() {
	if [ ! -f "$PFB_IPLIB/link_refnic.so" ]; then
		make -s -C "$PFB_IPLIB" >/dev/null 2>&1 ||
			{ echo "SKIP: cannot build ip-plugin/link_refnic.so"; exit $ksft_skip; }
	fi
	export IP_LIB_DIR=$PFB_IPLIB
}

# refnic_device_bound DEV: a stand-alone refnic DEV, up, that is the
# bottleneck: a 2 Mb/s line (about 3,000 small frames/s, below what pktgen
# offers even on a starved single-threaded guest) with TX completions
# coalesced by 16 frames or 10 ms, as real NICs do, so that each completion
# frees room for a batch.
refnic_device_bound() {
	ip link add "$1" type refnic || setup_failed "refnic device"
	defer "ip link del $1"
	sysctl -qw net.ipv6.conf."$1".disable_ipv6=1
	ip link set "$1" up || setup_failed "link up"
	ethtool -s "$1" speed 2 || setup_failed "line rate 2 Mb/s"
	ethtool -C "$1" tx-usecs 10000 tx-frames 16 || setup_failed "coalescing"
}

# refnic_pair A B NS: a refnic pair A (here, 10.77.0.1/24) and B (in netns NS,
# 10.77.0.2/24), both up. Extra arguments go to both ends (numtxqueues N...).
refnic_pair() {
	local a=$1 b=$2 ns=$3
	shift 3
	refnic_require_plugin
	netns_add "$ns" || return 1
	ip link add "$a" "$@" type refnic peer name "$b" "$@" || return 1
	defer "ip link del $a"
	# No IPv6 autoconf chatter: counters then come from the tests alone.
	sysctl -qw net.ipv6.conf.$a.disable_ipv6=1 &&
	sysctl -qw net.ipv6.conf.$b.disable_ipv6=1 &&
	ip link set "$b" netns "$ns" &&
	ip addr add 10.77.0.1/24 dev "$a" &&
	ip -n "$ns" addr add 10.77.0.2/24 dev "$b" &&
	ip link set "$a" up &&
	ip -n "$ns" link set "$b" up &&
	ip -n "$ns" link set lo up
}

# refnic_quiesce DEV [NS]: wait (at most ~10 s) until every frame DEV
# posted has completed, so that counters can be compared. The tests leave
# at most a ring's worth on a line they have just made fast, or a second
# or two on a slow one: 10 s is several times that for a guest at half
# speed, and a frame that never completes is what it catches.
refnic_quiesce() {
	local dev=$1 ns=${2:-} i
	for i in $(seq 100); do
		[ "$(refnic_link_stat "$dev" tx_packets "$ns")" = \
		  "$(refnic_stat "$dev" tx_completions "$ns")" ] && return 0
		sleep 0.1
	done
	return 1
}

# refnic_stat DEV NAME [NS]: one ethtool -S counter, optionally in netns NS.
# ethtool -S has only what no standard interface shows: the device's
# packets, bytes and drops are refnic_link_stat's, timeouts
# refnic_timeouts', a TX queue's packets, bytes, stops and wakes
# refnic_tx_stat's (Documentation/networking/refnic.rst, "Counters").
refnic_stat() {
	if [ -n "${3:-}" ]; then
		ip netns exec "$3" ethtool -S "$1" | awk -v k="$2:" '$1 == k { print $2; exit }'
	else
		ethtool_stat "$1" "$2"
	fi
}

# refnic_link_stat DEV NAME [NS]: a counter of ip -s link (rtnl stats64,
# /sys/class/net/DEV/statistics/NAME), optionally in netns NS.
refnic_link_stat() {
	if [ -n "${3:-}" ]; then
		ip netns exec "$3" cat "/sys/class/net/$1/statistics/$2"
	else
		link_stat "$1" "$2"
	fi
}

# refnic_txq_sum DEV FILE [NS]: /sys/class/net/DEV/queues/tx-*/FILE, summed
# over DEV's TX queues, optionally in netns NS.
refnic_txq_sum() {
	local run=
	[ -n "${3:-}" ] && run="ip netns exec $3"
	$run sh -c "cat /sys/class/net/$1/queues/tx-*/$2" |
		awk '{ s += $1 } END { print s + 0 }'
}

# refnic_timeouts DEV [NS]: TX timeouts of DEV, summed over its TX queues
# (the core's watchdog counts them, queues/tx-N/tx_timeout).
refnic_timeouts() {
	refnic_txq_sum "$1" tx_timeout "${2:-}"
}

# refnic_has_qstats: the kernel has netdev netlink's per-queue statistics
# (6.9+), which refnic then reports there and not in ethtool -S.
refnic_has_qstats() {
	[ "$(printf '%s\n' 6.9 "$(uname -r)" | sort -V | head -n1)" = 6.9 ]
}

# refnic_tx_stat DEV NAME [QUEUE]: the TX packets, bytes, stops or wakes
# (NAME) of DEV's queue QUEUE, or of the device, from where the kernel
# keeps them: qstats (6.9+); before, ethtool -S, and for the device's
# packets and bytes stats64.
refnic_tx_stat() {
	local dev=$1 name=$2 q=${3:-} qname

	case $name in
	packets|bytes) qname=$name ;;
	stops) qname=stop ;;
	wakes) qname=wake ;;
	*) echo "refnic_tx_stat: $name: not packets, bytes, stops or wakes" >&2; return 1 ;;
	esac
	if refnic_has_qstats; then
		if [ -n "$q" ]; then
			python3 "$PFB_TESTDIR/pfb_qstats.py" "$dev" |
				jq -r ".[] | select(.type == \"tx\" and .id == $q) | .$qname"
		else
			python3 "$PFB_TESTDIR/pfb_qstats.py" --device "$dev" | jq -r ".tx.$qname"
		fi
	elif [ -n "$q" ]; then
		ethtool_stat "$dev" "txq${q}_tx_$name"
	elif [ "$qname" = "$name" ]; then
		link_stat "$dev" "tx_$name"
	else
		ethtool_stat "$dev" "tx_$name"
	fi
}

# refnic_hist_sum DEV: the sum of the packets-per-doorbell histogram.
refnic_hist_sum() {
	ethtool -S "$1" | awk '$1 ~ /^tx_doorbell_pkts_/ { s += $2 } END { print s + 0 }'
}

# refnic_pktgen DEV MODE COUNT [BURST [DST_MAC [DST_IP]]]: one pktgen
# thread per CPU, each sends COUNT frames of 60 bytes (REFNIC_PKTGEN_SIZE)
# on DEV with xmit_mode MODE
# (queue_xmit: through the qdisc; start_xmit: straight to the driver, BURST
# frames per call). COUNT 0 runs until refnic_pktgen_stop; then run it in
# the background. Returns when done. REFNIC_PKTGEN_CPUS=N uses only the
# first N CPUs; REFNIC_PKTGEN_DELAY=NS waits NS between frames;
# REFNIC_PKTGEN_QMAP="MIN MAX" (start_xmit) cycles through TX queues MIN..MAX.
refnic_pktgen() {
	local dev=$1 mode=$2 count=$3 burst=${4:-1}
	local mac=${5:-02:00:00:00:00:01} dst=${6:-198.18.0.1}
	local pg=/proc/net/pktgen cpu d

	[ -d $pg ] || modprobe pktgen || return 1
	pktgen_remove_all
	for cpu in $(seq 0 $(($(nproc) - 1))); do
		[ "$cpu" -lt "${REFNIC_PKTGEN_CPUS:-$(nproc)}" ] || continue
		echo "add_device $dev@$cpu" > $pg/kpktgend_$cpu
		d=$pg/$dev@$cpu
		echo "xmit_mode $mode" > "$d"
		echo "count $count" > "$d"
		echo "pkt_size ${REFNIC_PKTGEN_SIZE:-60}" > "$d"
		echo "delay ${REFNIC_PKTGEN_DELAY:-0}" > "$d"
		if [ -n "${REFNIC_PKTGEN_QMAP:-}" ]; then
			set -- $REFNIC_PKTGEN_QMAP
			echo "queue_map_min $1" > "$d"
			echo "queue_map_max $2" > "$d"
		fi
		echo "dst $dst" > "$d"
		echo "dst_mac $mac" > "$d"
		[ "$burst" -gt 1 ] && echo "burst $burst" > "$d"
	done
	echo start > $pg/pgctrl
	pktgen_ran
}

# refnic_require_pktgen: skips the test without pktgen; at exit, stops
# pktgen and removes its devices.
refnic_require_pktgen() {
	modprobe pktgen 2>/dev/null || { echo "SKIP: no pktgen"; exit $ksft_skip; }
	defer refnic_pktgen_stop
	defer pktgen_remove_all
}

refnic_pktgen_stop() {
	[ -w /proc/net/pktgen/pgctrl ] && echo stop > /proc/net/pktgen/pgctrl
	return 0
}

# refnic_pktgen_end PID: stop pktgen and wait for the background
# refnic_pktgen PID to return. A thread acts on requests only when it next
# runs: a stop it took before a start is lost, so stop again until it ends.
refnic_pktgen_end() {
	local i
	for i in $(seq 100); do
		[ $((i % 10)) = 1 ] && refnic_pktgen_stop
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	wait "$1"
}

# skb_slab: active objects of skbuff_head_cache (leak check). SLUB counts
# objects in per-CPU slabs as active: flush them first. NAPI keeps up to 64
# freed heads per CPU for reuse, and a CPU's deferred frees (another CPU
# freed its skbs: net.core.skb_defer_max, 64 by default) keep their heads
# until its next NET_RX, so compare with refnic_slab_slack. (kmemleak is
# the exact check on the debug kernels; this one sees gross leaks.)
skb_slab() {
	local s=/sys/kernel/slab/skbuff_head_cache/shrink
	[ -w $s ] && echo 1 > $s
	awk '$1 == "skbuff_head_cache" { print $2; exit }' /proc/slabinfo
}

refnic_slab_slack() {
	local defer

	defer=$(sysctl -n net.core.skb_defer_max 2>/dev/null) || defer=0
	echo $(((64 + defer) * $(nproc) + 64))
}

# refnic_dbg DEV FILE: the path of a fault injection knob of DEV (debugfs).
refnic_dbg() {
	echo "/sys/kernel/debug/refnic/$1/$2"
}

# refnic_bql DEV [on|off]: switch BQL accounting of DEV on or off (debugfs;
# a running DEV restarts), or print "on" or "off". debugfs is not per
# network namespace: DEV may be in any, and this runs in the initial one
# (ip netns exec would hide debugfs behind the namespace's own sysfs).
refnic_bql() {
	local f=/sys/kernel/debug/refnic/$1/bql
	case ${2:-} in
	on)	echo 1 > "$f" ;;
	off)	echo 0 > "$f" ;;
	"")	case $(cat "$f") in 1) echo on ;; 0) echo off ;; *) return 1 ;; esac ;;
	*)	echo "refnic_bql: $2: not on or off" >&2; return 1 ;;
	esac
}

# refnic_inflight DEV [NS]: BQL bytes in flight, summed over DEV's TX queues.
refnic_inflight() {
	refnic_txq_sum "$1" byte_queue_limits/inflight "${2:-}"
}

# refnic_bounded CMD...: run CMD, which takes RTNL, for at most 20 s (a
# reconfiguration takes well under a second on TCG, two at half speed:
# only a command stuck in the kernel reaches 20 s); its
# status is ours, its stderr in the file $REFNIC_ERR (default: dropped).
# Still running by then, it is stuck in the kernel and cannot be killed:
# fail the test now, without the cleanups (they would hang on RTNL too).
# The verdict goes to fd 3, which the test opens (exec 3>&1: the checks'
# own output, which check_fails silences).
refnic_bounded() {
	local pid i

	"$@" >/dev/null 2>"${REFNIC_ERR:-/dev/null}" 3>&- &
	pid=$!
	for ((i = 0; i < 200; i++)); do
		kill -0 $pid 2>/dev/null || { wait $pid; return; }
		sleep 0.1
	done
	pfb_checks=$((pfb_checks + 1))
	echo "not ok $pfb_checks '$*' still running after 20 s: stuck under RTNL" >&3
	trap - EXIT
	exit 1
}

# refnic_unaccounted A B [NSB [NSA]]: frames A posted that neither reached
# B nor were counted as lost: A tx_packets - (B rx_packets + B rx_dropped +
# A tx_carrier_errors), B in netns NSB, A in NSA (ip -s link's counters).
# 0 once both drained.
refnic_unaccounted() {
	local a=$1 b=$2 nsb=${3:-} nsa=${4:-}
	echo $(($(refnic_link_stat "$a" tx_packets "$nsa") - $(refnic_link_stat "$b" rx_packets "$nsb") -
		$(refnic_link_stat "$b" rx_dropped "$nsb") - $(refnic_link_stat "$a" tx_carrier_errors "$nsa")))
}

# refnic_wait_accounted A B [NSB [NSA]]: refnic_unaccounted once it reaches
# 0, or after ~10 s (frames on the wire or in B's RX queue still count;
# called after refnic_quiesce, so only B's NAPI is left to run: 10 s is
# ample however slow the guest, and a lost frame never arrives).
refnic_wait_accounted() {
	local i u
	for i in $(seq 100); do
		u=$(refnic_unaccounted "$@")
		[ "$u" = 0 ] && break
		sleep 0.1
	done
	echo "$u"
}

# refnic_steady CMD...: CMD's output once two runs 0.2 s apart agree (a
# late ACK or FIN counted between two reads would otherwise look like a
# lost or an invented frame); fails after ~10 s of change. (The late
# frames are one or two, sent within a round trip: 50 looks leave a guest
# at half speed, paused now and then, ample time to finish them.)
refnic_steady() {
	local c0 c1 i
	c1=$("$@")
	for i in $(seq 50); do
		sleep 0.2
		c0=$c1 c1=$("$@")
		[ "$c0" = "$c1" ] && { echo "$c1"; return 0; }
	done
	echo "$c1"
	return 1
}

# refnic_now: seconds since the epoch, with nanoseconds.
refnic_now() {
	date +%s.%N
}

# refnic_line_max MBPS SECS: the most 60-byte frames a line of MBPS can
# carry in SECS, with room for what a measurement window may add: the
# wire's back-dating (2 ms), a completion coalesced up to 10 ms and
# late softirqs (0.2 s in all), and 16 frames. A loaded host does not
# eat into that slack: a guest it pauses stops the wire with everything
# else, and the wire makes up at most 2 ms of the lost line time when it
# runs again, so the pause lengthens the window measured and adds no
# frame to it; a slow guest only carries fewer.
refnic_line_max() {
	awk -v m="$1" -v t="$2" 'BEGIN { printf "%d\n", m * 1e6 / ((60 + 24) * 8) * (t + 0.2) + 16 }'
}

# refnic_stoppable DEV: a refnic DEV for refnic_ring_stop: no IPv6, BQL
# off, a ring of 4096, up; deleted at exit.
refnic_stoppable() {
	local dev=$1

	ip link add "$dev" type refnic || setup_failed "refnic $dev"
	defer "ip link del $dev"
	sysctl -qw net.ipv6.conf."$dev".disable_ipv6=1
	must refnic_bql "$dev" off
	must ethtool -G "$dev" tx 4096
	must ip link set "$dev" up
}

# refnic_ring_stop DEV: DEV's TX ring filled past its qdisc on a 1 Mb/s
# line (pfb_ringfill.py: AF_PACKET with PACKET_QDISC_BYPASS), so that the
# queue stays stopped for seconds with nothing of the qdisc's in the ring:
# with a ring of 4096 (refnic_stoppable), 1024 full-size frames of 12 ms
# leave before it wakes, ample for a test's steps even on a loaded TCG
# host. The line must be idle before (speed 0, refnic_quiesce).
refnic_ring_stop() {
	local dev=$1 filled

	ethtool -s "$dev" speed 1 || return 1
	filled=$(python3 "$PFB_TESTDIR/pfb_ringfill.py" "$dev") || return 1
	[ "$filled" -ge 2048 ] || { echo "# ring fill: only $filled frames taken"; return 1; }
}
