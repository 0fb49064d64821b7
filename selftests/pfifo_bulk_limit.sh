#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The limit is exact at rest: every packet the qdisc has sent frees its
# place. The lockless enqueue checks the limit against two counters,
# packets admitted (the senders') and packets taken off (the consumer's);
# a packet taken off that the senders never learn of would lower the limit
# for good. Behind a TX ring filled past the qdisc (refnic_ring_stop) the
# queue stays stopped for seconds while more than the limit is offered
# through the qdisc; then the line is made unlimited and everything
# leaves. Twice, on the same qdisc: the second time, after it has sent 40
# packets, it must take exactly what it took fresh. (A build that let the
# senders learn of packets taken only 16 at a time took 8 fewer.)
# Counters only (the qdisc's dump, sysfs).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_userspace.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd tc python3 ethtool
load_module sch_pfifo_bulk
load_module refnic

dev=pfbli0 limit=40 offered=50

refnic_stoppable $dev
must refnic_quiesce $dev
# mode bql: the core takes nothing out of a stopped queue (on the nobql
# path it would dequeue a batch and requeue it)
must tc qdisc add dev $dev root handle 1: pfifo_bulk mode bql limit $limit

# round NAME: with the queue stopped, $offered frames offered through the
# qdisc; sets queued (tc's backlog then) and dropped (this round's). Then
# the line is made unlimited: everything must leave.
round() {
	local d0 sent

	read -r _ d0 _ <<< "$(qdisc_counts $dev)"
	refnic_ring_stop $dev || return 1
	sent=$(python3 "$PFB_TESTDIR/pfb_pktsend.py" $dev $offered) || return 1
	read -r _ dropped queued <<< "$(qdisc_counts $dev)"
	dropped=$((dropped - d0))
	echo "# $1: offered $sent, queued $queued, dropped $dropped"
	[ "$sent" = $offered ] || return 1
	ethtool -s $dev speed 0 && wait_backlog_zero $dev 300
}

check "fresh: $offered offered to a stopped queue, then drained" round fresh
check_eq "fresh: queued + dropped = offered" $((queued + dropped)) $offered
# The first frame finds the queue empty and takes the bypass: the stopped
# driver hands it back and the core requeues it, outside our count.
check_cmp "fresh: the limit filled" "$queued" ">=" $limit
check_cmp "fresh: the limit held (+1 requeued)" "$queued" "<=" $((limit + 1))
fresh="$queued $dropped"
check "again: $offered offered to a stopped queue, then drained" round again
check_eq "again: as many taken as fresh" "$queued $dropped" "$fresh"
pfb_exit
