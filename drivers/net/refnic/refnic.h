/* SPDX-License-Identifier: GPL-2.0 */
/*
 * refnic: shared definitions of the reference virtual NIC. The knobs and the
 * design are described at the top of refnic_main.c.
 */
#ifndef _REFNIC_H
#define _REFNIC_H

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/netdevice.h>
#include <linux/refnic.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>

#define DRV_NAME		"refnic"

#define REFNIC_RING_DEFAULT	256
#define REFNIC_RING_MIN		16
#define REFNIC_RING_MAX		4096
#define REFNIC_RX_QLEN		1024	/* frames waiting for the RX poll */
#define REFNIC_WIRE_BUDGET	256	/* frames one wire run may send */
#define REFNIC_TX_USECS_MAX	10000
#define REFNIC_TX_FRAMES_MAX	REFNIC_RING_MAX
#define REFNIC_SPEED_MAX	1000000	/* Mb/s */
/* How far a late wire may back-date its frames to keep the line rate (see
 * refnic_line_reserve()); beyond that, the lost time is lost.
 */
#define REFNIC_LINE_LAG_NS	(2 * NSEC_PER_MSEC)
/* Emulated doorbell cost, ns: see the justification in refnic_main.c. */
#define REFNIC_DOORBELL_NS_DEFAULT	1000
#define REFNIC_DOORBELL_NS_MAX		100000

/* Packets-per-doorbell histogram, buckets 1, 2, 3-4, 5-8, 9-16, 17-32,
 * 33-64 and 65+: the buckets of pfifo_bulk's batch histogram, so that the
 * two can be compared bucket by bucket. A second one counts the segments
 * per doorbell (a TSO frame is one packet, gso_segs segments).
 */
#define REFNIC_HIST_BUCKETS	8

/* The offloads of a real NIC, on by default, each switchable with
 * ethtool -K (sg, tx, tso): scatter-gather, checksum and TCP segmentation.
 * Without them the stack linearises, checksums and segments every frame in
 * software before ndo_start_xmit.
 */
#define REFNIC_OFFLOADS		(NETIF_F_SG | NETIF_F_HW_CSUM | \
				 NETIF_F_TSO | NETIF_F_TSO6)

/* Counters written by ndo_start_xmit, which the TX queue's xmit lock
 * serialises.
 */
struct refnic_xmit_stats {
	struct u64_stats_sync	syncp;
	u64_stats_t		packets;
	u64_stats_t		segments;	/* on the wire: gso_segs per TSO frame */
	u64_stats_t		bytes;
	u64_stats_t		doorbells;
	u64_stats_t		xmit_more;
	u64_stats_t		stops;
	u64_stats_t		ring_full;
	u64_stats_t		fault_busy;
	u64_stats_t		fault_stop;
	u64_stats_t		fault_drop;
	u64_stats_t		dropped;	/* taken, freed before the ring */
	u64_stats_t		hist[REFNIC_HIST_BUCKETS];
	u64_stats_t		hist_segs[REFNIC_HIST_BUCKETS];
};

/* Counters written by the NAPI poll, or by the down path once NAPI is
 * disabled: one writer at a time.
 */
struct refnic_napi_stats {
	struct u64_stats_sync	syncp;
	u64_stats_t		completions;
	u64_stats_t		wakes;
	u64_stats_t		polls;
	u64_stats_t		rx_packets;
	u64_stats_t		rx_bytes;
};

/* Written by the queue's wire, or by the down path once it is stopped. */
struct refnic_wire_stats {
	struct u64_stats_sync	syncp;
	u64_stats_t		carrier_errors;
};

/* Written under the RX queue's lock by the peer's wire. */
struct refnic_rx_drop_stats {
	struct u64_stats_sync	syncp;
	u64_stats_t		dropped;
};

/* @len: skb->len, what BQL and the byte counters are told, as the stack
 * counts a TSO frame; @line_bytes: what its segments occupy on the line,
 * each with its own headers and Ethernet's overhead.
 */
struct refnic_desc {
	struct sk_buff		*skb;
	unsigned int		len;
	unsigned int		line_bytes;
};

/* One queue pair: TX ring @index (when index < real_num_tx_queues), RX queue
 * @index (when index < real_num_rx_queues), and the NAPI context that
 * completes the one and receives the other.
 *
 * The TX ring uses free-running u32 indices, slot = index & mask, with
 * clean <= wire <= tail <= prod:
 *	prod	next slot ndo_start_xmit fills (xmit lock)
 *	tail	doorbell: slots before it are visible to the wire (xmit lock)
 *	wire	next slot the wire sends; slots before it are done (wire)
 *	clean	next slot the completion frees (NAPI)
 * Each index is published with a store-release and read by the next stage
 * with a load-acquire, once per batch: tail (xmit -> wire), wire (wire ->
 * completion), clean (completion -> xmit, which reuses the freed slots).
 * The array has a power-of-two number of slots; at most @size are in use.
 */
struct refnic_queue {
	struct net_device	*dev;
	unsigned int		index;
	struct napi_struct	napi;

	/* producer side, under the xmit lock */
	struct refnic_desc	*ring;
	u32			mask;
	u32			size;
	u32			wake_thresh;
	u32			prod;
	u32			tail;
	u32			prod_segs;	/* segments posted, free-running */
	u32			tail_segs;	/* prod_segs at the last doorbell */
	u32			fault_busy_calls;	/* since the last injected busy */
	u32			fault_stop_frames;	/* since the last injected stop */
	u32			fault_drop_calls;	/* since the last injected drop */
	struct refnic_xmit_stats xstats;

	/* the wire: its timer callbacks never run concurrently */
	struct hrtimer		wire_timer;
	unsigned long		wire_flags;
	u32			wire;
	bool			wire_idle;	/* ring drained: next frame starts now */
	u64			frame_end;	/* ns: end of our frame on the line, 0: none */
	struct refnic_wire_stats wstats;

	/* the completion interrupt and its moderation (ethtool -C) */
	spinlock_t		irq_lock;	/* wire vs coalescing timer */
	struct hrtimer		irq_timer;
	u32			irq_pending;	/* frames sent, not yet signalled */
	u64			irq_first;	/* ns: the first of them was sent */
	bool			irq_armed;

	/* consumer side, NAPI */
	u32			clean;
	struct refnic_napi_stats nstats;

	/* RX: frames the peer's wire delivered */
	struct sk_buff_head	rxq;
	bool			rx_enabled;	/* under rxq.lock */
	struct refnic_rx_drop_stats rstats;
} ____cacheline_aligned_in_smp;

#define REFNIC_WIRE_RUNNING	0	/* bit in wire_flags: timer armed or running */
#define REFNIC_WIRE_OFF		1	/* bit in wire_flags: down, kicks ignored */

/* Fault injection (debugfs, refnic_debugfs.c); 0 = off. */
struct refnic_fault {
	u32			busy_every;	/* every Nth xmit returns NETDEV_TX_BUSY */
	u32			stop_every;	/* stop the queue after every Nth frame */
	u32			drop_every;	/* every Nth xmit drops the frame */
	u32			fail_ring_alloc; /* 1: every ring allocation fails */
};

struct refnic_priv {
	struct net_device	*dev;
	struct net_device __rcu	*peer;
	struct refnic_queue	*queues;
	unsigned int		nqueues;
	bool			up;		/* datapath running (RTNL) */
	bool			bql;		/* BQL accounting on (debugfs) */
	u32			ring_size;
	u32			line_rate_mbps;	/* 0: unlimited */
	u32			tx_usecs;
	u32			tx_frames;
	atomic64_t		line_free;	/* ns: the port's line is free from then */
	struct delayed_work	reset_work;	/* after a TX timeout */
	struct refnic_fault	fault;
	struct dentry		*debugfs;
};

extern unsigned int refnic_doorbell_ns;

/* refnic_tx.c */
int refnic_queues_init(struct net_device *dev);
void refnic_queues_uninit(struct net_device *dev);
void refnic_reset_cancel(struct net_device *dev);
struct refnic_desc **refnic_rings_alloc(struct net_device *dev,
					unsigned int n, u32 size);
void refnic_rings_free(struct refnic_desc **rings, unsigned int n);
void refnic_rings_install(struct net_device *dev, struct refnic_desc **rings,
			  unsigned int n, u32 size);
void refnic_up(struct net_device *dev);
void refnic_down(struct net_device *dev);
int refnic_set_ring_size(struct net_device *dev, u32 size);
int refnic_set_queues(struct net_device *dev, unsigned int tx,
		      unsigned int rx);
void refnic_set_bql(struct net_device *dev, bool bql);
netdev_tx_t refnic_start_xmit(struct sk_buff *skb, struct net_device *dev);
void refnic_tx_timeout(struct net_device *dev, unsigned int txqueue);

/* Kernel API differences, probed by Kbuild in the headers built against. */

/* hrtimer_setup() (6.13) sets the callback with the rest; newer kernels
 * have no hrtimer_init().
 */
static inline void refnic_hrtimer_setup(struct hrtimer *timer,
					enum hrtimer_restart (*fn)(struct hrtimer *),
					clockid_t clock, enum hrtimer_mode mode)
{
#ifdef REFNIC_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

/* refnic_ethtool.c */
extern const struct ethtool_ops refnic_ethtool_ops;

/* refnic_debugfs.c */
void refnic_debugfs_init(void);
void refnic_debugfs_exit(void);
void refnic_debugfs_add(struct net_device *dev);
void refnic_debugfs_del(struct net_device *dev);

#endif /* _REFNIC_H */
