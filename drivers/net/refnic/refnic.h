/* SPDX-License-Identifier: GPL-2.0 */
/*
 * refnic: shared definitions of the reference virtual NIC. The knobs and the
 * design are described at the top of refnic_main.c.
 */
#ifndef _REFNIC_H
#define _REFNIC_H

#include <linux/hrtimer.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/u64_stats_sync.h>

#define DRV_NAME		"refnic"

#define REFNIC_RING_DEFAULT	256
#define REFNIC_RING_MIN		16
#define REFNIC_RING_MAX		4096
#define REFNIC_RX_QLEN		1024	/* frames waiting for the RX poll */
#define REFNIC_WIRE_BUDGET	256	/* frames one wire run may send */
#define REFNIC_TX_USECS_MAX	10000
#define REFNIC_TX_FRAMES_MAX	REFNIC_RING_MAX
#define REFNIC_SPEED_MAX	1000000	/* Mb/s */

/* Netlink: IFLA_INFO_DATA of a refnic link, the same layout as veth's. */
enum {
	REFNIC_INFO_UNSPEC,
	REFNIC_INFO_PEER,	/* struct ifinfomsg followed by IFLA_* */
	__REFNIC_INFO_MAX,
};

#define REFNIC_INFO_MAX		(__REFNIC_INFO_MAX - 1)

/* Packets-per-doorbell histogram, buckets 1, 2, 3-4, 5-8, 9-16, 17-32,
 * 33-64 and 65+: the buckets of pfifo_bulk's batch histogram, so that the
 * two can be compared bucket by bucket.
 */
#define REFNIC_HIST_BUCKETS	8

/* Counters written by ndo_start_xmit (and ndo_tx_timeout), which the TX
 * queue's xmit lock serialises.
 */
struct refnic_xmit_stats {
	struct u64_stats_sync	syncp;
	u64_stats_t		packets;
	u64_stats_t		bytes;
	u64_stats_t		doorbells;
	u64_stats_t		xmit_more;
	u64_stats_t		stops;
	u64_stats_t		ring_full;
	u64_stats_t		timeouts;
	u64_stats_t		hist[REFNIC_HIST_BUCKETS];
};

/* Counters written by the NAPI poll, or by the down path once NAPI is
 * disabled: one writer at a time.
 */
struct refnic_napi_stats {
	struct u64_stats_sync	syncp;
	u64_stats_t		completions;
	u64_stats_t		wakes;
	u64_stats_t		polls;
	u64_stats_t		tx_dropped;
	u64_stats_t		rx_packets;
	u64_stats_t		rx_bytes;
};

/* Written under the RX queue's lock by the peer's wire. */
struct refnic_rx_drop_stats {
	struct u64_stats_sync	syncp;
	u64_stats_t		dropped;
};

struct refnic_desc {
	struct sk_buff		*skb;
	unsigned int		len;
};

/*
 * One queue pair: TX ring @index (when index < real_num_tx_queues), RX queue
 * @index (when index < real_num_rx_queues), and the NAPI context that
 * completes the one and receives the other.
 *
 * The TX ring uses free-running u32 indices, slot = index & mask, with
 * clean <= wire <= tail <= prod:
 *	prod	next slot ndo_start_xmit fills (xmit lock)
 *	tail	doorbell: slots before it are visible to the wire (xmit lock)
 *	wire	next slot the wire sends; slots before it are done (wire timer)
 *	clean	next slot the completion frees (NAPI)
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
	struct refnic_xmit_stats xstats;

	/* the wire: its timer callbacks never run concurrently */
	struct hrtimer		wire_timer;
	unsigned long		wire_flags;
	u32			wire;
	bool			wire_idle;
	u64			wire_busy_until;	/* ns, CLOCK_MONOTONIC */
	u32			unnotified;		/* sent, NAPI not yet told */
	u64			first_unnotified;	/* ns */

	/* consumer side, NAPI */
	u32			clean;
	struct refnic_napi_stats nstats;

	/* RX: frames the peer's wire delivered */
	struct sk_buff_head	rxq;
	bool			rx_enabled;	/* under rxq.lock */
	struct refnic_rx_drop_stats rstats;
} ____cacheline_aligned_in_smp;

#define REFNIC_WIRE_RUNNING	0	/* bit in wire_flags: timer armed or running */

struct refnic_priv {
	struct net_device __rcu	*peer;
	struct refnic_queue	*queues;
	unsigned int		nqueues;
	bool			up;		/* datapath running */
	bool			bql;		/* BQL accounting on */
	u32			ring_size;
	u32			line_rate_mbps;	/* 0: unlimited */
	u32			tx_usecs;
	u32			tx_frames;
};

extern unsigned int refnic_doorbell_ns;

/* refnic_tx.c */
int refnic_queues_init(struct net_device *dev);
void refnic_queues_uninit(struct net_device *dev);
int refnic_up(struct net_device *dev);
void refnic_down(struct net_device *dev);
netdev_tx_t refnic_start_xmit(struct sk_buff *skb, struct net_device *dev);
void refnic_tx_timeout(struct net_device *dev, unsigned int txqueue);

/* refnic_ethtool.c */
extern const struct ethtool_ops refnic_ethtool_ops;

#endif /* _REFNIC_H */
