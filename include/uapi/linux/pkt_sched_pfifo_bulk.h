/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pfifo_bulk: a packet FIFO that controls the size of the batch the core
 * hands to the driver (xmit_more), and reports every batch.
 *
 * TCA_OPTIONS is a nest of TCA_PFIFO_BULK_* attributes, flagged
 * NLA_F_NESTED in a request (the kernel refuses it without) and unflagged
 * in the dump, as other qdiscs dump theirs; a change message carries only
 * the attributes to change. The dump always carries all of them,
 * including the read-only ones, which a request may not carry. Extended
 * statistics (TCA_STATS_APP) are a nest of TCA_PFIFO_BULK_XSTATS_*
 * attributes; readers skip types they do not know. Drops and requeues are
 * in TCA_STATS2.
 */
#ifndef _UAPI_LINUX_PKT_SCHED_PFIFO_BULK_H
#define _UAPI_LINUX_PKT_SCHED_PFIFO_BULK_H

#include <linux/types.h>

/* Which of the core's two bulk paths the qdisc runs on. */
enum tc_pfifo_bulk_mode {
	TC_PFIFO_BULK_MODE_AUTO,	/* BQL when the driver does BQL, else NOBQL */
	TC_PFIFO_BULK_MODE_BQL,		/* core's BQL-limited path, capped by us */
	TC_PFIFO_BULK_MODE_NOBQL,	/* core's fixed path: up to 9 per batch */
	TC_PFIFO_BULK_MODE_NONE,	/* effective mode only: a parent qdisc
					 * dequeues us, no batch control
					 */
	__TC_PFIFO_BULK_MODE_MAX,
};

/* the largest effective mode a dump carries; a request takes AUTO to NOBQL */
#define TC_PFIFO_BULK_MODE_MAX (__TC_PFIFO_BULK_MODE_MAX - 1)

enum {
	TCA_PFIFO_BULK_UNSPEC,
	TCA_PFIFO_BULK_LIMIT,		/* u32: queue limit, packets */
	TCA_PFIFO_BULK_BULK_BYTES,	/* u32: byte cap per batch, 0 = none */
	TCA_PFIFO_BULK_BULK_PKTS,	/* u32: packet cap per batch, 0 = none */
	TCA_PFIFO_BULK_MODE,		/* u8: requested mode, AUTO, BQL or NOBQL */
	TCA_PFIFO_BULK_EFFECTIVE_MODE,	/* u8: BQL, NOBQL or NONE (dump only) */
	TCA_PFIFO_BULK_LOCKLESS,	/* u8: 1 when enqueue takes no lock
					 * (TCQ_F_NOLOCK), 0 when the kernel
					 * runs the qdisc under its root lock
					 * (dump only)
					 */
	TCA_PFIFO_BULK_COALESCE_USECS,	/* u32: hold a batch back for more
					 * packets, the oldest at most this
					 * long, 0 = off (the default)
					 */
	TCA_PFIFO_BULK_COALESCE_PKTS,	/* u32: release a held batch once this
					 * many packets wait (default 8)
					 */
	__TCA_PFIFO_BULK_MAX,
};

#define TCA_PFIFO_BULK_MAX (__TCA_PFIFO_BULK_MAX - 1)

/* TCA_PFIFO_BULK_XSTATS_HIST: u64 batch counts by packets per batch. */
enum {
	TCA_PFIFO_BULK_HIST_UNSPEC,
	TCA_PFIFO_BULK_HIST_1,
	TCA_PFIFO_BULK_HIST_2,
	TCA_PFIFO_BULK_HIST_3_4,
	TCA_PFIFO_BULK_HIST_5_8,
	TCA_PFIFO_BULK_HIST_9_16,
	TCA_PFIFO_BULK_HIST_17_32,
	TCA_PFIFO_BULK_HIST_33_64,
	TCA_PFIFO_BULK_HIST_65_UP,
	__TCA_PFIFO_BULK_HIST_MAX,
};

#define TCA_PFIFO_BULK_HIST_MAX (__TCA_PFIFO_BULK_HIST_MAX - 1)

enum {
	TCA_PFIFO_BULK_XSTATS_UNSPEC,
	TCA_PFIFO_BULK_XSTATS_PAD,
	TCA_PFIFO_BULK_XSTATS_BATCHES,		/* u64 */
	TCA_PFIFO_BULK_XSTATS_BATCH_PKTS,	/* u64: packets in all batches */
	TCA_PFIFO_BULK_XSTATS_BATCH_BYTES,	/* u64: bytes in all batches */
	TCA_PFIFO_BULK_XSTATS_HIST,		/* nest of TCA_PFIFO_BULK_HIST_* */
	TCA_PFIFO_BULK_XSTATS_END_BYTES,	/* u64: batches ended by bulk_bytes */
	TCA_PFIFO_BULK_XSTATS_END_PKTS,		/* u64: batches ended by bulk_pkts */
	TCA_PFIFO_BULK_XSTATS_END_BUDGET,	/* u64: ended by BQL or the core's
						 * budget, or cut by a change or
						 * a reset
						 */
	TCA_PFIFO_BULK_XSTATS_END_EMPTY,	/* u64: ended because the queue ran empty */
	TCA_PFIFO_BULK_XSTATS_RESCHEDULES,	/* u64: times the qdisc asked to
						 * run again: a batch ended at a
						 * cap on the BQL path with
						 * packets waiting
						 */
	TCA_PFIFO_BULK_XSTATS_BYPASSED,		/* u64: packets the core sent
						 * without queueing them (the
						 * qdisc was idle and empty:
						 * TCQ_F_CAN_BYPASS), each a
						 * batch of one not in the
						 * histogram; GSO segments
						 * count as the Sent counter
						 * counts them
						 */
	/* coalescing (TCA_PFIFO_BULK_COALESCE_USECS) */
	TCA_PFIFO_BULK_XSTATS_HELD,		/* u64: batches held back to wait
						 * for more packets; one that a
						 * reset or coalescing switched
						 * off cut short counts no release
						 */
	TCA_PFIFO_BULK_XSTATS_RELEASE_PKTS,	/* u64: held batches released when
						 * coalesce_pkts packets waited
						 */
	TCA_PFIFO_BULK_XSTATS_RELEASE_TIMER,	/* u64: held batches released when
						 * the oldest packet had waited
						 * coalesce_usecs
						 */
	TCA_PFIFO_BULK_XSTATS_SENT_AT_ONCE,	/* u64: batches not held: their
						 * first packet came coalesce_usecs
						 * or more after the one before it
						 * (traffic too sparse to wait for)
						 */
	TCA_PFIFO_BULK_XSTATS_HELD_NS,		/* u64: sum over released held
						 * batches of the time their oldest
						 * packet waited, ns
						 */
	TCA_PFIFO_BULK_XSTATS_HELD_NS_MAX,	/* u64: the longest of those */
	__TCA_PFIFO_BULK_XSTATS_MAX,
};

#define TCA_PFIFO_BULK_XSTATS_MAX (__TCA_PFIFO_BULK_XSTATS_MAX - 1)

#endif /* _UAPI_LINUX_PKT_SCHED_PFIFO_BULK_H */
