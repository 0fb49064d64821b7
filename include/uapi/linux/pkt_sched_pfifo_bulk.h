/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pfifo_bulk: a packet FIFO that controls the size of the batch the core
 * hands to the driver (xmit_more), and reports every batch.
 *
 * TCA_OPTIONS is a nest of TCA_PFIFO_BULK_* attributes; a change message
 * carries only the attributes to change. The dump always carries all of them.
 * Extended statistics (TCA_STATS_APP) are a nest of TCA_PFIFO_BULK_XSTATS_*
 * attributes; readers skip types they do not know.
 */
#ifndef _UAPI_LINUX_PKT_SCHED_PFIFO_BULK_H
#define _UAPI_LINUX_PKT_SCHED_PFIFO_BULK_H

#include <linux/types.h>

/* Which of the core's two bulk paths the qdisc runs on. */
enum tc_pfifo_bulk_mode {
	TC_PFIFO_BULK_MODE_AUTO,	/* BQL when the driver does BQL, else NOBQL */
	TC_PFIFO_BULK_MODE_BQL,		/* core's BQL-limited path, capped by us */
	TC_PFIFO_BULK_MODE_NOBQL,	/* core's fixed path: up to 9 per batch */
	__TC_PFIFO_BULK_MODE_MAX,
};

#define TC_PFIFO_BULK_MODE_MAX (__TC_PFIFO_BULK_MODE_MAX - 1)

enum {
	TCA_PFIFO_BULK_UNSPEC,
	TCA_PFIFO_BULK_LIMIT,		/* u32: queue limit, packets */
	TCA_PFIFO_BULK_BULK_BYTES,	/* u32: byte cap per batch, 0 = none */
	TCA_PFIFO_BULK_BULK_PKTS,	/* u32: packet cap per batch, 0 = none */
	TCA_PFIFO_BULK_MODE,		/* u8: enum tc_pfifo_bulk_mode, requested */
	TCA_PFIFO_BULK_EFFECTIVE_MODE,	/* u8: BQL or NOBQL in use (dump only);
					 * AUTO: none, a parent dequeues us
					 */
	__TCA_PFIFO_BULK_MAX,
};

#define TCA_PFIFO_BULK_MAX (__TCA_PFIFO_BULK_MAX - 1)

/* Buckets of the packets-per-batch histogram; refnic uses the same buckets
 * for packets per doorbell.
 */
enum {
	TC_PFIFO_BULK_HIST_1,
	TC_PFIFO_BULK_HIST_2,
	TC_PFIFO_BULK_HIST_3_4,
	TC_PFIFO_BULK_HIST_5_8,
	TC_PFIFO_BULK_HIST_9_16,
	TC_PFIFO_BULK_HIST_17_32,
	TC_PFIFO_BULK_HIST_33_64,
	TC_PFIFO_BULK_HIST_65_UP,
	TC_PFIFO_BULK_HIST_BUCKETS,
};

enum {
	TCA_PFIFO_BULK_XSTATS_UNSPEC,
	TCA_PFIFO_BULK_XSTATS_PAD,
	TCA_PFIFO_BULK_XSTATS_BATCHES,		/* u64 */
	TCA_PFIFO_BULK_XSTATS_BATCH_PKTS,	/* u64: packets in all batches */
	TCA_PFIFO_BULK_XSTATS_BATCH_BYTES,	/* u64: bytes in all batches */
	TCA_PFIFO_BULK_XSTATS_HIST,		/* nest: u64 per bucket, type = bucket + 1 */
	TCA_PFIFO_BULK_XSTATS_END_BYTES,	/* u64: batches ended by bulk_bytes */
	TCA_PFIFO_BULK_XSTATS_END_PKTS,		/* u64: batches ended by bulk_pkts */
	TCA_PFIFO_BULK_XSTATS_END_BUDGET,	/* u64: ended by BQL or the core's budget */
	TCA_PFIFO_BULK_XSTATS_END_EMPTY,	/* u64: ended because the queue ran empty */
	TCA_PFIFO_BULK_XSTATS_RESCHEDULES,	/* u64: self-reschedules after a cap */
	TCA_PFIFO_BULK_XSTATS_DROPS,		/* u64: tail drops and limit trims */
	TCA_PFIFO_BULK_XSTATS_REQUEUES,		/* u64: requeues seen (driver busy) */
	__TCA_PFIFO_BULK_XSTATS_MAX,
};

#define TCA_PFIFO_BULK_XSTATS_MAX (__TCA_PFIFO_BULK_XSTATS_MAX - 1)

#endif /* _UAPI_LINUX_PKT_SCHED_PFIFO_BULK_H */
