#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What pfifo_bulk exists for: fewer spin-lock acquisitions per transmitted
# packet. Counts _raw_spin_lock and, beside it, _raw_spin_trylock per packet
# the device sent (kprobes with hist triggers keyed by the caller), for
# pfifo_bulk, pfifo_bulk with bulk off (bulk_pkts 1: a batch of one, the
# behaviour before bulk dequeue) and stock pfifo, run alternately (the order
# rotates every repetition) under one pktgen queue_xmit load. Prints mean ±
# stddev over the repetitions and the ratios of the means, with the offered
# and dropped packets of both sides, and asserts on the transmit path:
#  - locks/pkt of pfifo_bulk <= 0.25 x bulk off and <= 0.5 x pfifo;
#  - the same without the locks taken to look at a requeued packet (below):
#    <= 0.25 x pfifo, and below 0.3 in every run;
#  - lock + trylock per packet of pfifo_bulk <= 0.5 x bulk off;
#  - the regime: nothing dropped, every offered packet sent, mean batch of
#    pfifo_bulk > 2, bulk off's batches of one.
# Counts, not times. A qdisc that does not batch takes the TX queue lock
# once per packet: about 1 lock/pkt, ratios 0.5 and 0.8, and fails.
#
# The requeued packet. pfifo_bulk, like pfifo_fast, lets a packet that
# finds it idle and empty bypass the queue. A flood that starts on an idle
# device therefore first goes past the queue, until BQL stops the device;
# the next bypassed packet finds it stopped and the core requeues it. Until
# the device wakes, every qdisc run (one per enqueue) takes the qdisc's lock
# to look at that packet (dequeue_skb(), inlined in __qdisc_run): one
# requeue, then hundreds of locks, as many as packets arrive while the line
# sends the frames of one completion. That is the bypass's price, not the
# batching's, and it varies with the host's load (0.02 to 0.23 per packet
# seen); it is printed per run with the bypassed packets and the requeues,
# and only the looser bound on the whole includes it.
#
# The transmit path is every caller whose name has xmit, qdisc or
# net_tx_action in it: the core's enqueue (a locked qdisc's root lock and
# busylock), the qdisc run (the TX queue lock per batch, a lockless qdisc's
# lock around requeued packets) and the NET_TX softirq. The rest of the
# kernel's locks (scheduler, timers, page faults) are counted and printed
# ("all"), not asserted: on TCG they follow the host's load, not the qdisc.
# pfifo_bulk's enqueue takes no lock at all, its run lock is a trylock per
# enqueue (qdisc_run_begin) and a batch of N costs one TX queue lock: about
# 1/N locks and 1 trylock per packet. pfifo takes its root lock per packet
# and, per batch, the TX queue lock and the root lock again. Bulk off runs
# on the NOBQL path: every BQL stop costs a requeue, and every qdisc run
# while stopped the lock around the requeued packet: about 2 locks per
# packet.
#
# The regime, and why. Batches need a backlog, so the device is the
# bottleneck: a stand-alone refnic (no peer: no RX path) at 2 Mb/s, about
# 4,000 frames/s, well below what two pktgen threads offer even on a
# single-threaded TCG guest of a busy host (at 10 Mb/s a starved guest
# offers less than the line takes, the queue runs empty and batches
# shrink), with BQL on and TX completions coalesced by 16 frames (or
# 10 ms), as real NICs do: each completion frees room for a batch, where a
# completion per frame would let BQL and the ring free one slot at a time.
# The queue limit holds the whole load, so nothing is dropped: pktgen
# retries a dropped packet at once, and on a full queue the counts would
# measure that retry loop (a root lock per retry for pfifo, none for the
# lockless pfifo_bulk), not the qdisc. While counting, the script starts no
# process but the subshell that starts pktgen (every fork and exec takes
# hundreds of spin locks) and waits with builtins only, so that the "all"
# figures stay close to the datapath's; then it pauses the counters and
# reads them.
#
#	PFB_REPS (default 3) repetitions, PFB_COUNT (default 3000) packets per
#	pktgen thread (one per CPU).
# Seen (6.1 and 6.12, 2 vCPUs, single-threaded TCG): transmit-path locks
# per packet 0.16-0.37 for pfifo_bulk (0.14 but at a requeued packet: one
# TX queue lock per batch of 7.4), 2.2 for bulk off, 1.35 for pfifo. A
# build whose batches are of one: 0.82 x pfifo (1.00 per packet), failed.
# Needs kprobes: single-threaded TCG only (not in TEST_PROGS_PARALLEL).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd jq python3 ethtool
# lockless=1 whatever PFB_LOCKLESS says: the bounds are the lockless
# enqueue's (no lock per packet). Locked, pfifo_bulk takes pfifo's root
# lock per enqueue by construction (per batch of the defer list from
# 6.19), which the benchmark's pfifo_bulk_locked measures.
load_qdisc_lockless 1
load_module refnic

reps=${PFB_REPS:-3}
count=${PFB_COUNT:-3000}
total=$(($(nproc) * count))
limit=$((2 * total))
dev=pfblk0

refnic_device_bound $dev
[ "$(refnic_bql $dev)" = on ] ||
	setup_failed "BQL is not on"
pktgen_setup $dev 02:00:00:00:00:01 "$count"
lock_count_start || setup_failed "kprobes on _raw_spin_lock and _raw_spin_trylock"
echo "# refnic at 2 Mb/s, BQL on, completions every 16 frames; $(nproc) pktgen" \
     "threads x $count packets; limit $limit; $reps repetitions"

configs=(pfifo_bulk "bulk off" pfifo)
declare -A qdisc=([pfifo_bulk]="pfifo_bulk" ["bulk off"]="pfifo_bulk bulk_pkts 1"
		  [pfifo]="pfifo")
# the transmit path: the core's enqueue, qdisc run and driver call, and
# the NET_TX softirq
xmit_path='xmit|qdisc|net_tx_action'
rows=/tmp/pfb-locks.$$
defer "rm -f $rows $rows.run $rows.callers"

# run_config NAME REP: one run of the load under NAME. Appends a row
# NAME REP locks trylocks xmit_locks xmit_trylocks sent offered dropped
# doorbells batches batch_pkts xmit_locks_but_requeued (tab-separated) to
# $rows, and the transmit
# path's counts per caller to $rows.callers.
run_config() {
	local name=$1 rep=$2 kind opts i t tx0 tx db0 db sent drops qlen batches bpkts offered xl xt xr
	local requeues bypassed
	read -r kind opts <<< "${qdisc[$name]}"
	tc qdisc del dev $dev root 2>/dev/null
	if [ "$kind" = pfifo_bulk ]; then
		check "$name #$rep: qdisc set" $PFB_NL add $dev -H 1: limit $limit $opts || return 1
	else
		check "$name #$rep: qdisc set" tc qdisc add dev $dev root handle 1: pfifo limit $limit ||
			return 1
	fi
	db0=$(ethtool_stat $dev tx_doorbells)
	read -r tx0 < /sys/class/net/$dev/statistics/tx_packets
	lock_count_clear
	lock_count_cont
	pktgen_run
	# every packet queued (pktgen) and handed to the driver (sysfs)
	for ((i = 0; i < 400; i++)); do
		pktgen_sent $dev
		read -r tx < /sys/class/net/$dev/statistics/tx_packets
		[ "$REPLY" -ge $total ] && [ $((tx - tx0)) -ge $total ] && break
		nap 0.05
	done
	lock_count_pause
	lock_count_snap
	for t in lock trylock; do
		lock_count_callers $t | awk -v n="$name" -v t=$t -v re="$xmit_path" \
			'$2 ~ re { printf "%s\t%s\t%s\t%s\n", n, t, $1, $2 }'
	done > $rows.run
	read -r xl xt xr < <(awk -F'\t' '{ c[$2] += $3 }
		$2 == "lock" && $4 == "__qdisc_run" { r += $3 }
		END { printf "%d %d %d\n", c["lock"], c["trylock"], r }' $rows.run)
	cat $rows.run >> $rows.callers
	if [ "$kind" = pfifo_bulk ]; then
		read -r sent drops qlen batches bpkts requeues bypassed < <($PFB_NL dump $dev |
			jq -r '[.[] | select(.parent == "root")][0] |
			"\(.packets) \(.drops) \(.qlen) \(.xstats.batches) \(.xstats.batch_pkts) \(.requeues) \(.xstats.bypassed)"')
	else
		read -r sent drops qlen < <(qdisc_counts $dev)
		batches=0 bpkts=0 requeues=- bypassed=-
	fi
	offered=$(pktgen_offered $dev)
	check_eq "$name #$rep: offered == sent + dropped + backlog" "$offered" "$((sent + drops + qlen))"
	check_eq "$name #$rep: the whole load offered and sent by the device" \
		"$offered $((tx - tx0))" "$total $total"
	db=$(($(ethtool_stat $dev tx_doorbells) - db0))
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" $rep \
		$PFB_LOCKS $PFB_TRYLOCKS $xl $xt $((tx - tx0)) "$offered" "$drops" \
		$db "$batches" "$bpkts" $((xl - xr)) >> $rows
	echo "# $name #$rep: sent $((tx - tx0)) (offered $offered, dropped $drops);" \
	     "locks $PFB_LOCKS (transmit path $xl, of which at a requeued packet $xr)," \
	     "trylocks $PFB_TRYLOCKS (transmit path $xt);" \
	     "doorbells $db, batches $batches, bypassed $bypassed, requeues $requeues"
}

for ((r = 0; r < reps; r++)); do
	for ((k = 0; k < ${#configs[@]}; k++)); do
		run_config "${configs[(r + k) % ${#configs[@]}]}" $((r + 1))
	done
done
lock_count_stop

# figure NAME COLUMN...: "mean sd" over NAME's runs of the sum of the
# COLUMNs of $rows per sent packet.
figure() {
	local name=$1
	shift
	awk -v n="$name" -v cols="$*" -F'\t' '
		BEGIN { k = split(cols, col, " ") }
		$1 == n { x = 0; for (i = 1; i <= k; i++) x += $col[i]
			  v[++c] = $7 ? x / $7 : 0; s += v[c] }
		END { m = c ? s / c : 0
		      for (i = 1; i <= c; i++) q += (v[i] - m) ^ 2
		      printf "%.3f %.3f\n", m, (c > 1 ? sqrt(q / (c - 1)) : 0) }' < $rows
}
# pm "MEAN SD": "MEAN ± SD"
pm() {
	awk '{ printf "%.3f ± %.3f", $1, $2 }' <<< "$1"
}
# sums NAME: "offered dropped batches batch_pkts runs" over NAME's runs.
sums() {
	awk -v n="$1" -F'\t' '$1 == n { o += $8; d += $9; b += $11; p += $12; c++ }
		END { printf "%d %d %d %d %d\n", o, d, b, p, c }' < $rows
}
# per_run NAME COLUMN: COLUMN per sent packet of each of NAME's runs
per_run() {
	awk -v n="$1" -v c="$2" -F'\t' '$1 == n && $7 { printf "%.4f\n", $c / $7 }' < $rows
}

declare -A XL XB XO TL TO D
echo "# $(uname -r), refnic 2 Mb/s BQL on, pktgen queue_xmit 60 B, n=$reps; per sent packet," \
     "mean ± stddev:"
printf '# %-10s | %-14s %-14s %-14s | %-14s %-14s | %-13s %7s %7s %5s\n' "" \
	"xmit locks" "xmit trylocks" "xmit lock+try" "all locks" "all trylocks" doorbells \
	offered dropped batch
for c in "${configs[@]}"; do
	XL[$c]=$(figure "$c" 5) XB[$c]=$(figure "$c" 13) XO[$c]=$(figure "$c" 5 6) TL[$c]=$(figure "$c" 3) TO[$c]=$(figure "$c" 3 4)
	read -r off drp bat bpk runs <<< "$(sums "$c")"
	D[$c]="$off $drp"
	printf '# %-10s | %-14s %-14s %-14s | %-14s %-14s | %-13s %7d %7d %5s\n' "$c" \
		"$(pm "${XL[$c]}")" "$(pm "$(figure "$c" 6)")" "$(pm "${XO[$c]}")" \
		"$(pm "${TL[$c]}")" "$(pm "$(figure "$c" 4)")" "$(pm "$(figure "$c" 10)")" \
		"$off" "$drp" "$(awk -v b="$bat" -v p="$bpk" 'BEGIN { if (b > 0) printf "%.2f", p / b; else printf "-" }')"
	echo "# $c, transmit path by caller:" $(awk -F'\t' -v n="$c" -v s="$(sums "$c" | cut -d' ' -f1)" \
		'$1 == n { k[$2 " " $4] += $3 }
		 END { for (x in k) if (k[x] / s >= 0.01) printf "%s %.3f,\n", x, k[x] / s }' $rows.callers |
		sort -k1,1 -k3,3rn)
	check_eq "$c: nothing dropped (the queue holds the load)" "$drp" 0
	check_eq "$c: $reps repetitions measured" "$runs" "$reps"
done

# ratio FIG A B: the ratio of the means of figure FIG (XL, XO, TL, TO) of
# configs A and B.
ratio() {
	local -n fig=$1
	awk -v a="${fig[$2]% *}" -v b="${fig[$3]% *}" 'BEGIN { if (b > 0) printf "%.3f", a / b }'
}
for b in "bulk off" pfifo; do
	read -r oa da <<< "${D[pfifo_bulk]}"
	read -r ob db <<< "${D[$b]}"
	echo "# pfifo_bulk / $b: xmit locks $(ratio XL pfifo_bulk "$b")," \
	     "xmit lock+trylock $(ratio XO pfifo_bulk "$b"), all locks $(ratio TL pfifo_bulk "$b")," \
	     "all lock+trylock $(ratio TO pfifo_bulk "$b")" \
	     "(pfifo_bulk offered $oa dropped $da; $b offered $ob dropped $db)"
done
echo "# pfifo_bulk / pfifo, xmit locks but at a requeued packet: $(ratio XB pfifo_bulk pfifo)" \
     "(pfifo_bulk $(pm "${XB[pfifo_bulk]}"), pfifo $(pm "${XB[pfifo]}") per packet)"
check_cmp "xmit locks/pkt: pfifo_bulk <= 0.25 x bulk off" "$(ratio XL pfifo_bulk "bulk off")" "<=" 0.25
check_cmp "xmit locks/pkt: pfifo_bulk <= 0.5 x pfifo" "$(ratio XL pfifo_bulk pfifo)" "<=" 0.5
check_cmp "xmit locks/pkt but at a requeued packet: pfifo_bulk <= 0.25 x pfifo" \
	"$(ratio XB pfifo_bulk pfifo)" "<=" 0.25
# (The two bounds below need the backlog a stock kernel holds. The KASAN
# kernel's slower senders left the queue empty more often: 9 % to 18 % of
# packets bypassed it, a TX queue lock each, so 0.302 in one run; and
# its trylocks per packet, one per enqueue, weigh as much as bulk off's
# (1.16 and 1.14), so lock + trylock came to 0.57 x bulk off.)
xfail_on_slow check_cmp "xmit locks/pkt but at a requeued packet: pfifo_bulk below 0.3 in every run" \
	"$(per_run pfifo_bulk 13 | sort -n | tail -n1)" "<" 0.3
xfail_on_slow check_cmp "xmit lock+trylock/pkt: pfifo_bulk <= 0.5 x bulk off" \
	"$(ratio XO pfifo_bulk "bulk off")" "<=" 0.5
read -r _ _ bat bpk _ <<< "$(sums pfifo_bulk)"
check_cmp "the regime: pfifo_bulk mean batch > 2" \
	"$(awk -v b="$bat" -v p="$bpk" 'BEGIN { if (b > 0) print p / b }')" ">" 2
# (the exact cap is pfifo_bulk_caps.sh's business; here bulk off need only
# not batch)
read -r _ _ bat bpk _ <<< "$(sums "bulk off")"
check_cmp "the regime: bulk off counted batches" "$bat" ">" 0
check_cmp "the regime: bulk off sends batches of one (mean <= 1.01)" \
	"$(awk -v b="$bat" -v p="$bpk" 'BEGIN { if (b > 0) print p / b }')" "<=" 1.01
pfb_exit
