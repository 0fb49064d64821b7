#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Soak under faults: pfifo_bulk on refnic under a saturating pktgen load
# (refnic at 2 Mb/s, BQL on and off, 1 TX queue with pfifo_bulk as root and
# 4 TX queues with mq + pfifo_bulk children), while seeded random faults hit
# it. Proves, per round and at the end:
#  - accounting rounds (a fresh qdisc, only non-purging faults: change with
#    random valid options by tc or bulkctl, ring resize, coalescing, BQL
#    toggle, nl_fuzz bursts): once the load stops and the device has gone
#    still the backlog is 0, and pktgen's offered count == qdisc sent +
#    dropped + backlog; on the pair (sk1a), every pktgen flow (one per CPU:
#    4 in make check's parallel guest) arrives in order;
#  - chaos rounds (replace/del/add, link down/up, carrier flaps on the
#    peer): the load keeps flowing and the backlog drains;
#  - all the time: the device sends under load, no TX timeout, no kernel
#    warning (and run_tests.sh checks the log).
# Stalls are seen by observing only: under load and while it drains, the
# device's tx_packets (sysfs) and pktgen's own counts, never a dump of the
# qdisc, which takes its run lock and reschedules it when MISSED is set:
# the very recovery a lost wake-up lacks. The qdisc is dumped once, when
# the device has gone still. More:
#  - an oversubscribed round: more senders than CPUs on one pfifo_bulk
#    (pktgen on every CPU, UDP floods from two namespaces forwarded through
#    it, a numbered stream) under change, replace and a reset: the stream
#    arrives without reordering, the backlog drains, the device sent at
#    least what the sinks received;
#  - over a refnic pair, a numbered UDP stream arrives without reordering
#    while options change and BQL toggles;
#  - only CAP_NET_ADMIN changes anything: an unprivileged user is refused by
#    tc, bulkctl, ethtool and refnic's module parameters, and no module
#    parameter or file of the checkout is world-writable;
#  - the qdisc module refuses to unload while in use and keeps working; both
#    modules unload at the end and skbuff_head_cache returns to baseline.
# Ends with one line of figures: packets sent, faults injected, fuzzed
# messages, reconfigurations, packets unaccounted (0), stalls (0), and of
# the oversubscribed round: senders, packets forwarded, the stream received
# (reordered 0, duplicated 0).
#
#	soak.sh [-q] [-t SECS] [-s SEED]	fault phase length, and that of
#					the oversubscribed round (default
#					PFB_SOAK_SECS or 10 s), seed (PFB_SEED)
# -q: quick, the fault phase one accounting round (sk1a, BQL on, its flows
# checked for order) instead of the matrix and its chaos rounds; for the
# debug kernels' quick pass, where a round takes a minute or two.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_refnic.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_userspace.sh"
require_root
require_cmd tc jq ethtool python3 setpriv
[ -r /proc/slabinfo ] || { echo "SKIP: no /proc/slabinfo"; exit $ksft_skip; }
fuzz=$PFB_BINDIR/nl_fuzz
pfbload=$PFB_BINDIR/pfb_load
[ -x "$fuzz" ] && [ -x "$pfbload" ] || setup_failed "nl_fuzz/pfb_load not built (make -C selftests)"

secs=${PFB_SOAK_SECS:-10}
seed=${PFB_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
quick=
# Messages in a fuzz burst. The quick pass sends 50: on KASAN 7.3 with
# another 4-vCPU guest beside it (CI), 300 took 880 s of its 30 minutes
# (2.9 s a message, under the round's pktgen load).
fuzz_msgs=300
while getopts "qt:s:" opt; do
	case $opt in
	q) quick=-q fuzz_msgs=50 ;;
	t) secs=$OPTARG ;;
	s) seed=$OPTARG ;;
	*) echo "usage: $0 [-q] [-t SECS] [-s SEED]"; exit 1 ;;
	esac
done
RANDOM=$seed
echo "# seed $seed, fault phase ${secs}s${quick:+, quick} (reproduce: soak.sh ${quick:+-q }-s $seed -t $secs)"

in_parallel_vm && check_cmp "real parallelism: at least 4 CPUs" "$(nproc)" ">=" 4
load_module sch_pfifo_bulk
load_module refnic
modprobe pktgen || { echo "SKIP: no pktgen"; exit $ksft_skip; }
defer pktgen_clear
slab0=$(skb_slab)
klog0=$(dmesg | wc -l)

# sk1a: one TX queue, paired with sk1b in netns skns (carrier flaps, the
# reorder check); sk4: stand-alone, four TX queues (mq).
ns=skns
check "refnic pair, 1 queue" refnic_pair sk1a sk1b $ns || pfb_exit
check "refnic, 4 queues" ip link add sk4 numtxqueues 4 numrxqueues 4 type refnic || pfb_exit
defer "ip link del sk4"
sysctl -qw net.ipv6.conf.sk4.disable_ipv6=1
ip link set sk4 up
check "sk1a at 2 Mb/s" ethtool -s sk1a speed 2
# refnic's line rate is per port: sk4's two flows had 2 Mb/s each before
check "sk4 at 4 Mb/s" ethtool -s sk4 speed 4
mac1=$(ip -n $ns -j link show sk1b | jq -r '.[0].address')
declare -A macs=([sk1a]=$mac1 [sk4]=02:00:00:00:00:04) nq=([sk1a]=1 [sk4]=4)
declare -A bqlst=([sk1a]=on [sk4]=on) pace=([sk1a]=400000 [sk4]=200000) ld_tx
tx0=$(($(link_stat sk1a tx_packets) + $(link_stat sk4 tx_packets)))

n_faults=0 n_fuzz=0 n_fuzz_ok=0 n_reconf=0 n_unacc=0 n_stalls=0 n_failed=0 n_warn=0
n_acct=0 n_chaos=0 n_backlog=0 n_oversub=0
n_senders=0 n_fwd=0 n_rcv=0 n_reord=0 n_dup=0
pg_pid= seq_pid= seq_out=/tmp/soak-seq.$$
defer "rm -f $seq_out $seq_out.ready"
defer "rm -f /tmp/soak-err.$$"

# pick WORD...: one of the words, from the seeded generator, in $REPLY
# (no subshell: it would not advance the parent's generator).
pick() {
	local a=("$@")
	REPLY=${a[RANDOM % $#]}
}

# fault CMD...: inject one fault; a refused command is counted, not fatal.
fault() {
	n_faults=$((n_faults + 1))
	if ! "$@" >/dev/null 2>/tmp/soak-err.$$; then
		n_failed=$((n_failed + 1))
		echo "# fault failed: $* ($(head -c 200 /tmp/soak-err.$$))"
	fi
}

# rand_opts [all]: random valid pfifo_bulk options (all four, or a random
# non-empty subset) in $REPLY. Limits stay <= 1000 so that a backlog
# drains within a second at 2 Mb/s.
rand_opts() {
	local o= all=${1:-}
	pick 20 200 500 1000
	[ -n "$all" ] || [ $((RANDOM % 2)) = 0 ] && o+=" limit $REPLY"
	pick 0 1 300 1514 3000 65536
	[ -n "$all" ] || [ $((RANDOM % 2)) = 0 ] && o+=" bulk_bytes $REPLY"
	pick 0 1 2 8 16 64
	[ -n "$all" ] || [ $((RANDOM % 2)) = 0 ] && o+=" bulk_pkts $REPLY"
	pick auto bql nobql
	[ -n "$all" ] || [ $((RANDOM % 2)) = 0 ] || [ -z "$o" ] && o+=" mode $REPLY"
	REPLY=$o
}

# fresh_qdisc DEV: a new pfifo_bulk instance (mq + 4 children on sk4).
fresh_qdisc() {
	local dev=$1 i
	tc qdisc del dev "$dev" root 2>/dev/null
	n_reconf=$((n_reconf + 1))
	if [ "${nq[$dev]}" = 1 ]; then
		rand_opts all
		tc qdisc add dev "$dev" root handle 1: pfifo_bulk $REPLY || return 1
	else
		tc qdisc add dev "$dev" root handle 1: mq || return 1
		for i in 1 2 3 4; do
			rand_opts all
			tc qdisc add dev "$dev" parent 1:$i handle 1$i: pfifo_bulk $REPLY || return 1
		done
	fi
}

# target DEV: "root" or "parent 1:N handle 1N:" of a random pfifo_bulk in
# $REPLY; its parent and handle major for nl_fuzz in $fz_p and $fz_h.
target() {
	local i=$((1 + RANDOM % 4))
	if [ "${nq[$1]}" = 1 ]; then
		REPLY="root" fz_p= fz_h=1
	else
		REPLY="parent 1:$i handle 1$i:" fz_p="-p 1:$i" fz_h=1$i
	fi
}

# soft_fault DEV [KIND]: a fault that keeps the qdisc instance and its
# counters, of a random kind unless KIND is given.
soft_fault() {
	local dev=$1 t opts
	pick change change bulkctl ring coalesce bql fuzz
	case ${2:-$REPLY} in
	change)
		target "$dev"; t=$REPLY; rand_opts; opts=$REPLY
		n_reconf=$((n_reconf + 1))
		fault tc qdisc change dev "$dev" $t pfifo_bulk $opts ;;
	bulkctl)
		target "$dev"; t=$REPLY; rand_opts; opts=$REPLY
		n_reconf=$((n_reconf + 1))
		fault "$BULKCTL" change "$dev" $t $opts ;;
	ring)
		pick 16 64 256 1024
		n_reconf=$((n_reconf + 1))
		fault ethtool -G "$dev" tx "$REPLY" ;;
	coalesce)
		pick 0 10 50 200; t=$REPLY
		# tx-usecs 0 with tx-frames 0 is refused, as the uapi says
		if [ "$t" = 0 ]; then pick 1 1 8 64; else pick 0 1 8 64; fi
		n_reconf=$((n_reconf + 1))
		fault ethtool -C "$dev" tx-usecs "$t" tx-frames "$REPLY" ;;
	bql)
		[ "${bqlst[$dev]}" = on ] && t=off || t=on
		bqlst[$dev]=$t
		n_reconf=$((n_reconf + 1))
		fault refnic_bql "$dev" $t ;;
	fuzz)
		# Any limit the fuzzer leaves is bounded again right after.
		target "$dev"; t=$REPLY
		n_faults=$((n_faults + 1))
		if opts=$("$fuzz" -d "$dev" -n $fuzz_msgs -s $RANDOM -H $fz_h $fz_p) &&
		   [[ $opts =~ sent\ ([0-9]+)\ accepted\ ([0-9]+) ]]; then
			n_fuzz=$((n_fuzz + BASH_REMATCH[1]))
			n_fuzz_ok=$((n_fuzz_ok + BASH_REMATCH[2]))
		else
			n_failed=$((n_failed + 1))
			echo "# fault failed: nl_fuzz on $dev $t: $opts"
		fi
		rand_opts all
		n_reconf=$((n_reconf + 1))
		fault tc qdisc change dev "$dev" $t pfifo_bulk $REPLY ;;
	esac
}

# pktgen_pace DEV DELAY_NS: one packet every DELAY_NS per thread. From
# 100 us on, pktgen sleeps between packets instead of spinning, which leaves
# the (TCG) CPUs to the faults and checks. At 2 Mb/s (about 1,800 frames/s
# per TX queue) two threads at 400 us (200 us on sk4, whose two flows use
# two queues) still offer more than the line rate. (Bursts would be
# cheaper, but queue_xmit refuses them on 6.1.)
pktgen_pace() {
	local f
	for f in "$PG/$1"@*; do
		pg_set "${f##*/}" "delay $2" || return 1
	done
}

load_start() {
	pktgen_setup "$1" "${macs[$1]}" 0
	pktgen_pace "$1" "${pace[$1]}"
	load_run "$1"
}

# pg_started DEV: the start time of each of DEV's pktgen devices in the
# array PG_STARTED (read by the shell: no process, cheap under load).
pg_started() {
	local f l
	PG_STARTED=()
	for f in "$PG/$1"@*; do
		while read -r l; do
			[[ $l =~ ^started:\ ([0-9]+)us ]] && PG_STARTED+=("${BASH_REMATCH[1]}")
		done < "$f"
	done
}

# load_run DEV: start DEV's pktgen devices (again, as set up) and wait, at
# most 5 s, until every thread has taken the start. A thread acts on start,
# stop and remove requests only when it next runs, and the start request
# returns after 125 ms without it: a thread starved longer (TCG, more
# senders than CPUs) took a later stop first, then the start, and sent on
# after load_stop.
load_run() {
	local i j s0
	pg_started "$1"
	s0=("${PG_STARTED[@]}")
	ld_tx[$1]=$(link_stat "$1" tx_packets)
	pktgen_run &
	pg_pid=$!
	for ((i = 0; i < 50; i++)); do
		sleep 0.1
		pg_started "$1"
		for ((j = 0; j < ${#s0[@]}; j++)); do
			[ "${PG_STARTED[j]}" != "${s0[j]}" ] || break
		done
		[ "$j" = ${#s0[@]} ] && return 0
	done
	echo "# pktgen on $1: not every thread started within 5 s"
}
load_stop() {
	pg_set pgctrl stop
	wait $pg_pid
}

# snap DEV: sent, dropped and backlog (packets; and bytes as printed) of
# the root qdisc in $S_SENT, $S_DROPS, $S_QLEN ($S_BYTES), from one "tc -s"
# (no jq: under load on TCG every process costs a second).
snap() {
	local l
	S_SENT= S_DROPS= S_QLEN= S_BYTES=
	while read -r l; do
		if [ -z "$S_SENT" ] &&
		   [[ $l =~ ^Sent\ [0-9]+\ bytes\ ([0-9]+)\ pkt\ \(dropped\ ([0-9]+), ]]; then
			S_SENT=${BASH_REMATCH[1]} S_DROPS=${BASH_REMATCH[2]}
		elif [ -z "$S_QLEN" ] && [[ $l =~ ^backlog\ ([^\ ]+)\ ([0-9]+)p ]]; then
			S_BYTES=${BASH_REMATCH[1]} S_QLEN=${BASH_REMATCH[2]}
		fi
	done < <(tc -s qdisc show dev "$1")
	[ -n "$S_SENT" ] && [ -n "$S_QLEN" ]
}

# dev_tx DEV: the device's tx_packets in $REPLY (sysfs, read by the shell).
dev_tx() {
	read -r REPLY < "/sys/class/net/$1/statistics/tx_packets"
}

# progress DEV LAST [TRIES]: the device sent more than LAST packets within
# TRIES (10) times 0.1 s (a stall counts otherwise); its count is left in
# $REPLY. Observes only (see the top). A backlog is seen the same way:
# pktgen queued more than the device sent since the load started. After a
# carrier change the core may take up to a second (linkwatch) to attach
# the qdisc again. Under load the device sends thousands of frames a
# second, hundreds at half speed: a second without one is a stall, not a
# slow guest (a pause of the guest stops this loop with the device).
progress() {
	local i p
	for ((i = 0; i < ${3:-10}; i++)); do
		dev_tx "$1"
		p=$REPLY
		if [ "$p" -gt "$2" ]; then
			pktgen_sent "$1"
			[ $((REPLY - p + ${ld_tx[$1]})) -gt 0 ] && n_backlog=$((n_backlog + 1))
			REPLY=$p
			return 0
		fi
		sleep 0.1
	done
	n_stalls=$((n_stalls + 1))
	echo "# stall: $1 sent stuck at $p under load"
	stall_dump "$1"
	REPLY=$p
}

# stall_dump DEV: what a stall looks like from here: link, qdisc, TX queue
# counters and BQL of DEV, pktgen threads.
stall_dump() {
	local b=/sys/class/net/$1/queues/tx-0/byte_queue_limits
	{
		ip -d link show dev "$1" | head -n 1
		tc -s qdisc show dev "$1"
		echo "tx_packets $(link_stat "$1" tx_packets) tx_dropped $(link_stat "$1" tx_dropped)" \
			"$(ethtool -S "$1" | grep -E '^ *(tx_stops|tx_wakes|tx_ring_full|tx_completions|napi_polls):' |
			tr -s ' \n' ' ')"
		[ -r $b/inflight ] && echo "bql inflight $(cat $b/inflight) limit $(cat $b/limit)"
		grep -h -E 'Running|Stopped' "$PG"/kpktgend_* | tr '\n' ' '
		echo
	} 2>&1 | sed 's/^/# stall: /'
}

# drained DEV: once the load is over, the device goes still (its
# tx_packets stays put for a second, within 10 s: wait_tx_settled), and then
# the backlog (every queue) is 0: what is left then nobody will send. Reads
# the qdisc once, at the end, into $S_SENT, $S_DROPS, $S_QLEN ($S_BYTES).
drained() {
	if ! wait_tx_settled "$1"; then
		n_stalls=$((n_stalls + 1))
		echo "# stall: $1 still sending 10 s after the load"
		return 1
	fi
	snap "$1" && [ "$S_QLEN" = 0 ] && return 0
	n_stalls=$((n_stalls + 1))
	echo "# stall: backlog of $1 is $S_QLEN once the device has gone still"
	stall_dump "$1"
	return 1
}

# round_end DEV: what every round checks: no TX timeout, no kernel report.
round_end() {
	local to
	to=$(refnic_timeouts "$1")
	[ "$to" = 0 ] || { n_stalls=$((n_stalls + 1)); echo "# $1: tx_timeouts $to"; }
	if ! dmesg | tail -n +$((klog0 + 1)) | "$PFB_TOP/tools/vm/check-kernel-log" >/dev/null; then
		n_warn=$((n_warn + 1))
		klog0=$(dmesg | wc -l)
	fi
}

# seq_start: on sk1b, check the order of every pktgen flow (pfb_seqcheck.py,
# one flow per sending CPU) until seq_end.
seq_start() {
	rm -f $seq_out.ready
	ip netns exec $ns python3 "$PFB_TESTDIR/pfb_seqcheck.py" sk1b 5 \
		> $seq_out 2> $seq_out.ready &
	seq_pid=$!
	for _ in $(seq 100); do
		[ -s $seq_out.ready ] && return 0
		sleep 0.1
	done
	return 1
}
# seq_end ROUND: stop the order check, and check what it saw.
seq_end() {
	# It may have stopped by itself already, 5 s after the last frame.
	kill -TERM $seq_pid 2>/dev/null
	wait $seq_pid
	echo "# $1: order check on sk1b: $(<$seq_out)"
	check_eq "$1: each of the $(nproc) pktgen flows in order (flows, reorders)" \
		"$(jq -c '[.flows, .reorders]' $seq_out)" "[$(nproc),0]"
	check_cmp "$1: the peer received the flows" "$(jq .received $seq_out)" ">" 0
}

# One accounting round on DEV with BQL on|off; on sk1a with an order check.
round_acct() {
	local dev=$1 bql=$2 last k offered sent drops qlen b0=$n_backlog
	local r="round $((n_acct + n_chaos + 1)) $dev (${nq[$dev]}q, BQL $bql)"
	n_acct=$((n_acct + 1))
	n_reconf=$((n_reconf + 1))
	refnic_bql "$dev" "$bql"
	bqlst[$dev]=$bql
	fresh_qdisc "$dev" || { n_failed=$((n_failed + 1)); return; }
	[ "$dev" = sk1a ] && { check "$r: order checker ready" seq_start || return; }
	load_start "$dev"
	progress "$dev" "${ld_tx[$dev]}"; last=$REPLY
	# Random faults, and one fuzz burst in every round.
	for k in $(seq $((1 + RANDOM % 3))) fuzz; do
		soft_fault "$dev" "${k//[0-9]/}"
		progress "$dev" "$last"; last=$REPLY
	done
	load_stop
	drained "$dev"
	offered=$(pktgen_offered "$dev")
	sent=$S_SENT drops=$S_DROPS qlen=$S_QLEN
	k=$((offered - sent - drops - qlen))
	n_unacc=$((n_unacc + ${k#-}))
	echo "# $r: backlog seen $((n_backlog - b0)) times under load, at ${SECONDS}s"
	check_eq "$r: offered $offered == sent $sent + dropped $drops + backlog $qlen" \
		"$offered" "$((sent + drops + qlen))"
	[ "$dev" = sk1a ] && seq_end "$r"
	round_end "$dev"
}

# hard_fault DEV [KIND]: a purging fault (new instance, link or carrier
# down and up), of a random kind unless KIND is given. The load is restarted
# after it (pktgen stops on a device without carrier), as set up: a new
# setup would send remove requests, which a starved thread could take after
# the devices were added again.
hard_fault() {
	local dev=$1
	if [ "$dev" = sk1a ]; then
		pick replace delete linkdown carrier carrier
	else
		pick replace delete linkdown
	fi
	case ${2:-$REPLY} in
	replace)
		n_reconf=$((n_reconf + 1))
		rand_opts all
		# Another handle: a new instance grafted in place (on sk4 one
		# pfifo_bulk over all four queues); then the usual layout again.
		fault tc qdisc replace dev "$dev" root handle 2: pfifo_bulk $REPLY
		sleep 0.3
		if [ "${nq[$dev]}" = 1 ]; then
			rand_opts all
			n_reconf=$((n_reconf + 1))
			fault tc qdisc replace dev "$dev" root handle 1: pfifo_bulk $REPLY
		else
			fault fresh_qdisc "$dev"
		fi ;;
	delete)
		fault fresh_qdisc "$dev" ;;
	linkdown)
		fault ip link set "$dev" down
		load_stop
		fault ip link set "$dev" up
		load_run "$dev" ;;
	carrier)
		fault ip -n $ns link set sk1b down
		load_stop
		fault ip -n $ns link set sk1b up
		load_run "$dev" ;;
	esac
}

# One chaos round on DEV: hard and soft faults under load.
round_chaos() {
	local dev=$1 k
	n_chaos=$((n_chaos + 1))
	fresh_qdisc "$dev" || { n_failed=$((n_failed + 1)); return; }
	load_start "$dev"
	for k in $(seq $((2 + RANDOM % 3))); do
		sleep 0.2
		if [ $((RANDOM % 2)) = 0 ]; then
			hard_fault "$dev"
		else
			soft_fault "$dev"
		fi
	done
	sleep 0.2
	dev_tx "$dev"
	progress "$dev" "$REPLY" 30
	load_stop
	check "round $((n_acct + n_chaos)) $dev chaos: backlog 0 once the device has gone still" drained "$dev"
	round_end "$dev"
}

# sender_ns NS N: namespace NS behind the veth pair skvN (here, 10.78.N.1)
# and skvNp (in NS, 10.78.N.2), its default route through us, our address
# resolved statically.
sender_ns() {
	local sns=$1 n=$2
	netns_add "$sns" && veth_pair skv$n skv${n}p || return 1
	ip link set skv${n}p netns "$sns" &&
	ip netns exec "$sns" sysctl -qw net.ipv6.conf.skv${n}p.disable_ipv6=1 &&
	ip addr add 10.78.$n.1/24 dev skv$n &&
	ip -n "$sns" addr add 10.78.$n.2/24 dev skv${n}p &&
	ip -n "$sns" link set skv${n}p up &&
	ip -n "$sns" route add default via 10.78.$n.1 &&
	ip -n "$sns" neigh replace 10.78.$n.1 dev skv${n}p nud permanent \
		lladdr "$(cat /sys/class/net/skv$n/address)"
}

# fwd_paths: the way from the senders over sk1a to 10.79.0.2 (on sk1b in
# $ns) and back, with static neighbours: no ARP through a saturated qdisc,
# and no packet waiting for one. Such a packet leaves from the neighbour's
# queue, sent by whoever resolves it, after newer ones that found the
# neighbour resolved: a reordering before the qdisc. So the neighbour comes
# first, then the route (via it, not the connected route, which a link up
# brings back at once). A link down flushes both, a carrier down the ones
# in $ns: set again after every hard fault.
fwd_paths() {
	ip neigh replace 10.77.0.2 dev sk1a nud permanent lladdr "$mac1" &&
	ip route replace 10.79.0.0/24 via 10.77.0.2 dev sk1a &&
	ip -n $ns neigh replace 10.77.0.1 dev sk1b nud permanent \
		lladdr "$(cat /sys/class/net/sk1a/address)" &&
	ip -n $ns route replace 10.78.0.0/16 via 10.77.0.1 dev sk1b
}

# pg_running DEV: how many of DEV's pktgen devices run, in $REPLY.
pg_running() {
	local f l w
	REPLY=0
	for f in "$PG"/kpktgend_*; do
		while read -r l; do
			[[ $l == Running:* ]] || continue
			for w in ${l#Running:}; do
				[[ $w == "$1"@* ]] && REPLY=$((REPLY + 1))
			done
		done < "$f"
	done
}

# ip_forwarded: the ForwDatagrams counter of this namespace.
ip_forwarded() {
	awk '$1 == "Ip:" { if (!c) { for (i = 2; i <= NF; i++) if ($i == "ForwDatagrams") c = i; next }
			   print $c }' /proc/net/snmp
}

# The oversubscribed round: more senders than CPUs on one pfifo_bulk, the
# root of sk1a (one TX queue): pktgen on every CPU, two UDP floods from
# each of two namespaces (skf1, skf2) routed through this one over sk1a to
# sinks in $ns, and a numbered stream from skf1 whose sink checks the
# order. The stream's sender is pinned to CPU 0: its packets then pass one
# CPU's backlog and reach the qdisc in the order sent. The senders run at
# nice 10, so that the faults and checks get the CPU they need. Change,
# replace and a reset (link or carrier down and up), then random soft and
# hard faults hit the qdisc until the load ends (no nl_fuzz burst: too slow
# here). Forwarded traffic has no exact offered count (the veth, the
# backlog and the route drop some before the qdisc): instead the backlog
# drains, and the device sent at least what the sinks received.
round_oversub() {
	local dev=sk1a os=/tmp/soak-os.$$ fwd0 p n k=0 bad=0 rc rcv rcv1 rcv2 tx fl0=$n_failed
	local r="round $((n_acct + n_chaos + 1)) $dev oversubscribed"
	local sink_pids=() flood_pids=() stream_pid kind

	n_oversub=$((n_oversub + 1))
	fwd0=$(sysctl -n net.ipv4.ip_forward)
	defer "sysctl -qw net.ipv4.ip_forward=$fwd0"
	defer "rm -f $os.*"
	check "sender namespace skf1" sender_ns skf1 1
	check "sender namespace skf2" sender_ns skf2 2
	check "10.79.0.2 on sk1b" ip -n $ns addr add 10.79.0.2/32 dev sk1b
	check "routes and static neighbours over $dev" fwd_paths
	sysctl -qw net.ipv4.ip_forward=1
	pick on off
	n_reconf=$((n_reconf + 1))
	refnic_bql $dev $REPLY
	bqlst[$dev]=$REPLY
	fresh_qdisc $dev || { n_failed=$((n_failed + 1)); return; }
	# Port 7008: the numbered stream; 7011, 7012: the floods of skf1, skf2.
	# The sinks count until stopped once the load is over (-t: a bound).
	for p in 7008 7011 7012; do
		ip netns exec $ns "$pfbload" sink -p $p -t $((secs + 60)) -i 60000 > $os.sink$p &
		sink_pids+=($!)
	done
	sleep 0.5
	tx=$(link_stat $dev tx_packets) n_fwd=$(ip_forwarded)
	load_start $dev
	ip netns exec skf1 nice -n 10 taskset -c 0 \
		"$pfbload" stream -d 10.79.0.2 -p 7008 -t "$secs" > $os.stream &
	stream_pid=$!
	for n in 1 2 1 2; do
		ip netns exec skf$n nice -n 10 \
			"$pfbload" stream -d 10.79.0.2 -p 701$n -t "$secs" > /dev/null &
		flood_pids+=($!)
	done
	echo "# $r: pktgen on $(nproc) CPUs, ${#flood_pids[@]} floods and a stream, at ${SECONDS}s"
	# Change, replace and a reset (link or carrier down and up) first,
	# then random faults until the stream ends.
	while [ $k -lt 3 ] || kill -0 $stream_pid 2>/dev/null; do
		case $k in
		0) REPLY=change ;;
		1) REPLY=replace ;;
		2) pick linkdown carrier ;;
		*) pick change bulkctl bql ring coalesce replace delete linkdown carrier ;;
		esac
		k=$((k + 1))
		sleep 0.3
		if [ $k = 1 ]; then
			# Senders at work at once, before the first fault.
			kind=$REPLY
			pg_running $dev
			n_senders=$REPLY
			for p in $stream_pid "${flood_pids[@]}"; do
				kill -0 $p 2>/dev/null && n_senders=$((n_senders + 1))
			done
			REPLY=$kind
		fi
		echo "# $r: $REPLY at ${SECONDS}s"
		case $REPLY in
		change|bulkctl|bql|ring|coalesce)
			soft_fault $dev $REPLY ;;
		*)
			hard_fault $dev $REPLY
			fwd_paths || { n_failed=$((n_failed + 1)); echo "# routes over $dev not restored"; } ;;
		esac
		dev_tx $dev
		progress $dev "$REPLY" 30
	done
	wait $stream_pid
	rc=$?
	for p in "${flood_pids[@]}"; do
		wait $p || bad=$((bad + 1))
	done
	load_stop
	check "$r: backlog 0 once the device has gone still" drained $dev
	check_eq "$r: then backlog and qlen" "$S_BYTES $S_QLEN" "0b 0"
	sleep 0.5
	# A slow guest may have run them to their bound (-t) already.
	kill -TERM "${sink_pids[@]}" 2>/dev/null
	for p in "${sink_pids[@]}"; do
		wait $p
	done
	sysctl -qw net.ipv4.ip_forward=$fwd0
	n_fwd=$(($(ip_forwarded) - n_fwd))
	tx=$(($(link_stat $dev tx_packets) - tx))
	read -r n_rcv n_reord n_dup rcv1 rcv2 < <(jq -rs \
		'"\(.[0].received) \(.[0].reordered) \(.[0].duplicated) \(.[1].received) \(.[2].received)"' \
		$os.sink7008 $os.sink7011 $os.sink7012)
	rcv=$((n_rcv + rcv1 + rcv2))
	echo "# $r: $k faults, forwarded $n_fwd, $dev sent $tx, stream $(<$os.stream)," \
		"sink $(<$os.sink7008), floods received: skf1 $rcv1, skf2 $rcv2, at ${SECONDS}s"
	# (counted 0.3 s into a round whose five userspace senders run for
	# SECS: alive then however slow the guest, with pktgen's threads)
	check_cmp "$r: more senders at work at once than CPUs" "$n_senders" ">" "$(nproc)"
	check_eq "$r: the numbered stream and the floods ran to their end" "$rc $bad" "0 0"
	# The stream (nice 10, one CPU) finds room in the queue only between
	# pktgen's packets: 15 % of it arrived on a stock kernel, 0.1 to 15 %
	# on the KASAN kernel, where round 1's pktgen flows prove the order;
	# 0.35 % (135 of 38,386) on 6.1 beside another make check's guests.
	# A share, not a count: a guest its host slows sends less as well.
	xfail_on_slow check_cmp "$r: sink received a thousandth of the numbered stream or more" \
		"$((n_rcv * 1000))" ">=" "$(jq .sent $os.stream)"
	check_eq "$r: nothing reordered or duplicated" "$n_reord $n_dup" "0 0"
	# (The floods run at nice 10 too, beside pktgen's threads: on the
	# KASAN kernel, beside another make check's debug guest, the stream
	# sent 3 datagrams in its 30 s, and neither flood got one through.)
	xfail_on_slow check_cmp "$r: floods from skf1 arrived" "$rcv1" ">" 0
	xfail_on_slow check_cmp "$r: floods from skf2 arrived" "$rcv2" ">" 0
	check_cmp "$r: forwarded at least what the sinks received" "$n_fwd" ">=" "$rcv"
	check_cmp "$r: $dev sent at least what the sinks received" "$tx" ">=" "$rcv"
	check_eq "$r: no fault command failed" $((n_failed - fl0)) 0
	round_end $dev
}

# --- fault phase: accounting rounds over the matrix, a chaos round after
# every second one, until SECS have passed; at least two accounting rounds
# (1 queue with BQL on, 4 queues with BQL off; faults toggle BQL in both)
# and a chaos round, the CI length. Longer runs go round the whole matrix.
variants=("sk1a on" "sk4 off" "sk4 on" "sk1a off")
start=$SECONDS
r=0
if [ -n "$quick" ]; then
	round_acct ${variants[0]}
else
	while [ $((SECONDS - start)) -lt "$secs" ] || [ $r -lt 2 ]; do
		round_acct ${variants[r % 4]}
		r=$((r + 1))
		[ $((r % 2)) = 0 ] && { pick sk1a sk4; round_chaos $REPLY; }
	done
fi
round_oversub
pktgen_clear
check_cmp "a backlog built up under load (pktgen ahead of the device)" "$n_backlog" ">" 0
check_eq "no fault command failed" "$n_failed" 0
check_cmp "the kernel accepted some fuzzed messages (on roots and mq children)" "$n_fuzz_ok" ">" 0
check_eq "no kernel report during the rounds" "$n_warn" 0
for d in sk1a sk4; do
	check_eq "$d: no TX timeout" "$(refnic_timeouts $d)" 0
done
check_eq "sk1b: no TX timeout" "$(refnic_timeouts sk1b $ns)" 0

# --- order across reconfiguration: a numbered stream over the pair.
refnic_bql sk1a on
ethtool -G sk1a tx 256
ethtool -C sk1a tx-usecs 0 tx-frames 1
tc qdisc replace dev sk1a root handle 1: pfifo_bulk limit 1000 bulk_bytes 0 bulk_pkts 0 mode auto
ip netns exec $ns "$pfbload" sink -p 7007 -t 30 -i 1500 > /tmp/soak-sink.$$ &
sink_pid=$!
sleep 0.5
"$pfbload" stream -d 10.77.0.2 -p 7007 -t 3 > /tmp/soak-stream.$$ &
stream_pid=$!
for k in 1 2 3 4; do
	sleep 0.4
	rand_opts
	n_faults=$((n_faults + 1)) n_reconf=$((n_reconf + 1))
	tc qdisc change dev sk1a root pfifo_bulk $REPLY
	[ $k = 2 ] && refnic_bql sk1a off
	[ $k = 4 ] && refnic_bql sk1a on
done
n_faults=$((n_faults + 2)) n_reconf=$((n_reconf + 2))
wait $stream_pid
wait $sink_pid
echo "# stream: $(cat /tmp/soak-stream.$$), sink: $(cat /tmp/soak-sink.$$)"
# Enough arrived for its order to mean something. A count, not a share
# of what was sent: the sender's rate is the qdisc's doing (a socket
# blocks while the queue holds its packets and runs free while a low
# limit drops them: 5,249 to 32,960 sent in the 3 s on stock 6.12), and
# what arrives is bounded by the 2 Mb/s line (about 5,000) on a stock
# kernel and by the sender on the KASAN kernel (969 of 1,200 sent); on
# the KCSAN kernel with its wide watch 88 arrived. A stock guest at half
# speed still sends thousands: several times the bound.
xfail_on_slow check_cmp "sink received the stream" "$(jq .received /tmp/soak-sink.$$)" ">" 500
check_eq "nothing reordered or duplicated" \
	"$(jq -c '[.reordered, .duplicated]' /tmp/soak-sink.$$)" "[0,0]"
rm -f /tmp/soak-sink.$$ /tmp/soak-stream.$$

# --- only CAP_NET_ADMIN changes anything.
nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
# refused DESC CMD...: CMD as nobody fails with a permission error.
refused() {
	local what=$1 err
	shift
	pfb_checks=$((pfb_checks + 1))
	if err=$(nobody "$@" 2>&1 >/dev/null); then
		echo "not ok $pfb_checks unprivileged $what was allowed"
		pfb_failed=1
	elif grep -qiE 'not permitted|permission denied' <<< "$err"; then
		echo "ok $pfb_checks unprivileged $what refused"
	else
		echo "not ok $pfb_checks unprivileged $what: failed, but not for permission: $err"
		pfb_failed=1
	fi
}
check "unprivileged tc can read the qdisc" eval 'nobody tc qdisc show dev sk1a >/dev/null'
check "unprivileged bulkctl can read the qdisc" eval 'nobody "$BULKCTL" show sk1a >/dev/null'
check "unprivileged ethtool can read the ring" eval 'nobody ethtool -g sk1a >/dev/null'
opts0=$(root_opts tc -j qdisc show dev sk1a)
ring0=$(ethtool -g sk1a | awk '/^TX:/ { v = $2 } END { print v }')
refused "tc qdisc change" tc qdisc change dev sk1a root pfifo_bulk limit 77
refused "tc qdisc del" tc qdisc del dev sk1a root
refused "bulkctl change" "$BULKCTL" change sk1a root limit 77
refused "ethtool -G" ethtool -G sk1a tx 128
refused "write of the debugfs bql switch" sh -c "echo 0 > $(refnic_dbg sk1a bql)"
refused "ethtool -C" ethtool -C sk1a tx-usecs 50
for p in /sys/module/refnic/parameters/*; do
	v=$(cat "$p")
	refused "write of $p" sh -c "echo 1 > $p"
	check_eq "$p unchanged" "$(cat "$p")" "$v"
done
check_eq "options unchanged" "$(root_opts tc -j qdisc show dev sk1a)" "$opts0"
check_eq "ring unchanged" "$(ethtool -g sk1a | awk '/^TX:/ { v = $2 } END { print v }')" "$ring0"
check_eq "BQL still on" "$(refnic_bql sk1a)" on
check_eq "no world-writable module parameter" \
	"$(find /sys/module/refnic/parameters /sys/module/sch_pfifo_bulk/parameters -perm -o+w 2>/dev/null | wc -l)" 0
ww=$(find "$PFB_TOP" -path '*/.git' -prune -o -perm -o+w -type f -print)
[ -z "$ww" ] || echo "# world-writable: $ww" | head -5
check_eq "no world-writable file in the checkout" "$(echo -n "$ww" | grep -c .)" 0

# --- the qdisc module stays while in use, and still works.
err=$(rmmod sch_pfifo_bulk 2>&1)
check "rmmod sch_pfifo_bulk refused while in use" eval '[ -n "$err" ] && grep -q "in use" <<< "$err"'
check "pfifo_bulk still loaded" eval 'lsmod | grep -q "^sch_pfifo_bulk "'
tc qdisc del dev sk1a root
tc qdisc add dev sk1a root handle 1: pfifo_bulk limit 1000
pktgen_setup sk1a "$mac1" 300
pktgen_run
check "drained to backlog 0 after a short load" drained sk1a
offered=$(pktgen_offered sk1a)
check_eq "still accounts: offered == sent + dropped" "$offered" \
	"$(($(qdisc_stat sk1a packets) + $(qdisc_stat sk1a drops)))"
check_cmp "still forwards" "$(qdisc_stat sk1a packets)" ">" 0
pktgen_clear

# --- figures, then both modules unload and nothing leaked.
sent=$(($(link_stat sk1a tx_packets) + $(link_stat sk4 tx_packets) - tx0))
check_eq "packets unaccounted" "$n_unacc" 0
check_eq "stalls" "$n_stalls" 0
echo "# figures: packets sent $sent, faults injected $n_faults, fuzzed messages $n_fuzz," \
	"reconfigurations $n_reconf, packets unaccounted $n_unacc, stalls $n_stalls," \
	"senders $n_senders on $(nproc) CPUs, forwarded $n_fwd, stream received $n_rcv" \
	"(reordered $n_reord, duplicated $n_dup)" \
	"($n_acct accounting + $n_chaos chaos + $n_oversub oversubscribed rounds, seed $seed, ${secs}s)"
check "devices deleted" eval "ip link del sk1a && ip link del sk4"
check "sch_pfifo_bulk unloads" rmmod sch_pfifo_bulk
check "refnic unloads" rmmod refnic
slab1=$(skb_slab)
echo "# skbuff_head_cache active objects: $slab0 before, $slab1 after"
check_cmp "skbuff_head_cache back near baseline" "$slab1" "<=" $((slab0 + $(refnic_slab_slack)))
pfb_exit
