// SPDX-License-Identifier: GPL-2.0
/*
 * refnic ethtool: driver info, ring size, channels, completion coalescing,
 * line rate (link speed) and the counters. The names of the counters are an
 * interface: tests read them. The test-only BQL switch is in debugfs
 * (refnic_debugfs.c), as netdevsim keeps its test knobs.
 */

#include <linux/ethtool.h>
#include <linux/netdevice.h>

#include "refnic.h"

/* ethtool -S carries only what the running kernel has no standard place
 * for (Documentation/networking/refnic.rst, "Counters"): the device's
 * packets, bytes, drops and carrier errors are in rtnl_link_stats64 (ip -s
 * link), a TX queue's timeouts in sysfs (queues/tx-N/tx_timeout, counted
 * by the core's watchdog), and with netdev_stat_ops (6.9+) a TX queue's
 * packets, bytes, stops and wakes in qstats, the device's too. Per TX
 * queue, txq<N>_*, in this order; the device-wide totals are the first
 * REFNIC_S_TOTALS, without the prefix.
 */
enum {
	REFNIC_S_TX_SEGMENTS,		/* on the wire: a TSO frame's gso_segs */
	REFNIC_S_TX_DOORBELLS,
	REFNIC_S_TX_XMIT_MORE,
	REFNIC_S_TX_RING_FULL,
	REFNIC_S_TX_COMPLETIONS,
	REFNIC_S_NAPI_POLLS,
	REFNIC_S_TX_FAULT_BUSY,
	REFNIC_S_TX_FAULT_STOP,
	REFNIC_S_TX_FAULT_DROP,
	REFNIC_S_HIST,			/* the packets-per-doorbell buckets */
	REFNIC_S_HIST_LAST = REFNIC_S_HIST + REFNIC_HIST_BUCKETS - 1,
	REFNIC_S_HIST_SEGS,		/* the segments-per-doorbell buckets */
	REFNIC_S_HIST_SEGS_LAST = REFNIC_S_HIST_SEGS + REFNIC_HIST_BUCKETS - 1,
#ifndef REFNIC_HAVE_STAT_OPS
	REFNIC_S_TX_STOPS,
	REFNIC_S_TX_WAKES,
#endif
	REFNIC_S_TOTALS,
	/* per queue only: the device's totals are in stats64 */
	REFNIC_S_TX_DROPPED = REFNIC_S_TOTALS,
	REFNIC_S_TX_CARRIER_ERRORS,
#ifndef REFNIC_HAVE_STAT_OPS
	REFNIC_S_TX_PACKETS,
	REFNIC_S_TX_BYTES,
#endif
	REFNIC_S_TXQ,
};

static const char refnic_stat_names[REFNIC_S_TXQ][ETH_GSTRING_LEN] = {
	[REFNIC_S_TX_SEGMENTS]		= "tx_segments",
	[REFNIC_S_TX_DOORBELLS]		= "tx_doorbells",
	[REFNIC_S_TX_XMIT_MORE]		= "tx_xmit_more",
	[REFNIC_S_TX_RING_FULL]		= "tx_ring_full",
	[REFNIC_S_TX_COMPLETIONS]	= "tx_completions",
	[REFNIC_S_NAPI_POLLS]		= "napi_polls",
	[REFNIC_S_TX_FAULT_BUSY]	= "tx_fault_busy",
	[REFNIC_S_TX_FAULT_STOP]	= "tx_fault_stop",
	[REFNIC_S_TX_FAULT_DROP]	= "tx_fault_drop",
	[REFNIC_S_HIST + 0]		= "tx_doorbell_pkts_1",
	[REFNIC_S_HIST + 1]		= "tx_doorbell_pkts_2",
	[REFNIC_S_HIST + 2]		= "tx_doorbell_pkts_3_4",
	[REFNIC_S_HIST + 3]		= "tx_doorbell_pkts_5_8",
	[REFNIC_S_HIST + 4]		= "tx_doorbell_pkts_9_16",
	[REFNIC_S_HIST + 5]		= "tx_doorbell_pkts_17_32",
	[REFNIC_S_HIST + 6]		= "tx_doorbell_pkts_33_64",
	[REFNIC_S_HIST + 7]		= "tx_doorbell_pkts_65_up",
	[REFNIC_S_HIST_SEGS + 0]	= "tx_doorbell_segs_1",
	[REFNIC_S_HIST_SEGS + 1]	= "tx_doorbell_segs_2",
	[REFNIC_S_HIST_SEGS + 2]	= "tx_doorbell_segs_3_4",
	[REFNIC_S_HIST_SEGS + 3]	= "tx_doorbell_segs_5_8",
	[REFNIC_S_HIST_SEGS + 4]	= "tx_doorbell_segs_9_16",
	[REFNIC_S_HIST_SEGS + 5]	= "tx_doorbell_segs_17_32",
	[REFNIC_S_HIST_SEGS + 6]	= "tx_doorbell_segs_33_64",
	[REFNIC_S_HIST_SEGS + 7]	= "tx_doorbell_segs_65_up",
	[REFNIC_S_TX_DROPPED]		= "tx_dropped",
	[REFNIC_S_TX_CARRIER_ERRORS]	= "tx_carrier_errors",
#ifndef REFNIC_HAVE_STAT_OPS
	[REFNIC_S_TX_STOPS]		= "tx_stops",
	[REFNIC_S_TX_WAKES]		= "tx_wakes",
	[REFNIC_S_TX_PACKETS]		= "tx_packets",
	[REFNIC_S_TX_BYTES]		= "tx_bytes",
#endif
};

/* One name above per bucket of each histogram. */
static_assert(REFNIC_HIST_BUCKETS == 8);

static void refnic_get_drvinfo(struct net_device *dev,
			       struct ethtool_drvinfo *info)
{
	strscpy(info->driver, DRV_NAME, sizeof(info->driver));
	strscpy(info->bus_info, "virtual", sizeof(info->bus_info));
}

static int refnic_get_sset_count(struct net_device *dev, int sset)
{
	switch (sset) {
	case ETH_SS_STATS:
		return REFNIC_S_TOTALS + dev->real_num_tx_queues * REFNIC_S_TXQ;
	default:
		return -EOPNOTSUPP;
	}
}

/* ethtool_puts() is 6.9+. */
static void refnic_puts(u8 **data, const char *str)
{
	strscpy_pad(*data, str, ETH_GSTRING_LEN);
	*data += ETH_GSTRING_LEN;
}

static void refnic_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	unsigned int i, j;

	if (sset != ETH_SS_STATS)
		return;
	for (j = 0; j < REFNIC_S_TOTALS; j++)
		refnic_puts(&data, refnic_stat_names[j]);
	for (i = 0; i < dev->real_num_tx_queues; i++)
		for (j = 0; j < REFNIC_S_TXQ; j++)
			ethtool_sprintf(&data, "txq%u_%s", i,
					refnic_stat_names[j]);
}

/* One TX queue's counters, in REFNIC_S_* order. */
static void refnic_txq_stats(struct refnic_queue *q, u64 *v)
{
	unsigned int start, j;

	do {
		start = u64_stats_fetch_begin(&q->xstats.syncp);
		v[REFNIC_S_TX_SEGMENTS] = u64_stats_read(&q->xstats.segments);
		v[REFNIC_S_TX_DOORBELLS] = u64_stats_read(&q->xstats.doorbells);
		v[REFNIC_S_TX_XMIT_MORE] = u64_stats_read(&q->xstats.xmit_more);
		v[REFNIC_S_TX_RING_FULL] = u64_stats_read(&q->xstats.ring_full);
		v[REFNIC_S_TX_FAULT_BUSY] = u64_stats_read(&q->xstats.fault_busy);
		v[REFNIC_S_TX_FAULT_STOP] = u64_stats_read(&q->xstats.fault_stop);
		v[REFNIC_S_TX_FAULT_DROP] = u64_stats_read(&q->xstats.fault_drop);
		v[REFNIC_S_TX_DROPPED] = u64_stats_read(&q->xstats.dropped);
#ifndef REFNIC_HAVE_STAT_OPS
		v[REFNIC_S_TX_PACKETS] = u64_stats_read(&q->xstats.packets);
		v[REFNIC_S_TX_BYTES] = u64_stats_read(&q->xstats.bytes);
		v[REFNIC_S_TX_STOPS] = u64_stats_read(&q->xstats.stops);
#endif
		for (j = 0; j < REFNIC_HIST_BUCKETS; j++) {
			v[REFNIC_S_HIST + j] = u64_stats_read(&q->xstats.hist[j]);
			v[REFNIC_S_HIST_SEGS + j] =
				u64_stats_read(&q->xstats.hist_segs[j]);
		}
	} while (u64_stats_fetch_retry(&q->xstats.syncp, start));
	do {
		start = u64_stats_fetch_begin(&q->nstats.syncp);
		v[REFNIC_S_TX_COMPLETIONS] = u64_stats_read(&q->nstats.completions);
		v[REFNIC_S_NAPI_POLLS] = u64_stats_read(&q->nstats.polls);
#ifndef REFNIC_HAVE_STAT_OPS
		v[REFNIC_S_TX_WAKES] = u64_stats_read(&q->nstats.wakes);
#endif
	} while (u64_stats_fetch_retry(&q->nstats.syncp, start));
	do {
		start = u64_stats_fetch_begin(&q->wstats.syncp);
		v[REFNIC_S_TX_CARRIER_ERRORS] =
			u64_stats_read(&q->wstats.carrier_errors);
	} while (u64_stats_fetch_retry(&q->wstats.syncp, start));
}

/* The totals count every queue, those beyond the channel count too, as
 * stats64 and qstats do.
 */
static void refnic_get_ethtool_stats(struct net_device *dev,
				     struct ethtool_stats *stats, u64 *data)
{
	struct refnic_priv *priv = netdev_priv(dev);
	u64 *txq_data = data + REFNIC_S_TOTALS;
	unsigned int i, j;

	memset(data, 0, REFNIC_S_TOTALS * sizeof(*data));
	for (i = 0; i < priv->nqueues; i++) {
		u64 v[REFNIC_S_TXQ];

		refnic_txq_stats(&priv->queues[i], v);
		for (j = 0; j < REFNIC_S_TOTALS; j++)
			data[j] += v[j];
		if (i < dev->real_num_tx_queues) {
			memcpy(txq_data, v, sizeof(v));
			txq_data += REFNIC_S_TXQ;
		}
	}
}

static void refnic_get_ringparam(struct net_device *dev,
				 struct ethtool_ringparam *ring,
				 struct kernel_ethtool_ringparam *kring,
				 struct netlink_ext_ack *extack)
{
	struct refnic_priv *priv = netdev_priv(dev);

	ring->tx_max_pending = REFNIC_RING_MAX;
	ring->tx_pending = priv->ring_size;
	/* No RX ring to size (the peer's frames wait in a fixed backlog of
	 * REFNIC_RX_QLEN): a maximum of 0 makes ethtool -g print n/a and the
	 * core refuse ethtool -G rx N with "requested ring size exceeds
	 * maximum", before set_ringparam is called.
	 */
	ring->rx_max_pending = 0;
	ring->rx_pending = 0;
}

static int refnic_set_ringparam(struct net_device *dev,
				struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	struct refnic_priv *priv = netdev_priv(dev);
	int err;

	/* The core has checked every size against its maximum: RX, mini and
	 * jumbo are 0, TX at most REFNIC_RING_MAX.
	 */
	if (ring->tx_pending < REFNIC_RING_MIN) {
		NL_SET_ERR_MSG_MOD(extack, "TX ring size must be 16..4096");
		return -EINVAL;
	}
	if (ring->tx_pending == priv->ring_size)
		return 0;
	/* A real NIC reallocates its rings with the datapath stopped. */
	err = refnic_set_ring_size(dev, ring->tx_pending);
	if (err)
		NL_SET_ERR_MSG_MOD(extack, "cannot allocate the TX rings");
	return err;
}

static void refnic_get_channels(struct net_device *dev,
				struct ethtool_channels *ch)
{
	ch->max_rx = dev->num_rx_queues;
	ch->max_tx = dev->num_tx_queues;
	ch->rx_count = dev->real_num_rx_queues;
	ch->tx_count = dev->real_num_tx_queues;
}

/* Separate RX and TX channels, as veth has; the maxima are the queue counts
 * the device was created with (numtxqueues, numrxqueues).
 */
static int refnic_set_channels(struct net_device *dev,
			       struct ethtool_channels *ch)
{
	if (ch->combined_count || ch->other_count || !ch->rx_count ||
	    !ch->tx_count || ch->rx_count > dev->num_rx_queues ||
	    ch->tx_count > dev->num_tx_queues)
		return -EINVAL;
	if (ch->rx_count == dev->real_num_rx_queues &&
	    ch->tx_count == dev->real_num_tx_queues)
		return 0;
	return refnic_set_queues(dev, ch->tx_count, ch->rx_count);
}

static int refnic_get_coalesce(struct net_device *dev,
			       struct ethtool_coalesce *ec,
			       struct kernel_ethtool_coalesce *kec,
			       struct netlink_ext_ack *extack)
{
	struct refnic_priv *priv = netdev_priv(dev);

	ec->tx_coalesce_usecs = priv->tx_usecs;
	ec->tx_max_coalesced_frames = priv->tx_frames;
	return 0;
}

static int refnic_set_coalesce(struct net_device *dev,
			       struct ethtool_coalesce *ec,
			       struct kernel_ethtool_coalesce *kec,
			       struct netlink_ext_ack *extack)
{
	struct refnic_priv *priv = netdev_priv(dev);

	/* The uapi: 0 disables either trigger; both 0 would never interrupt. */
	if (!ec->tx_coalesce_usecs && !ec->tx_max_coalesced_frames) {
		NL_SET_ERR_MSG_MOD(extack, "tx-usecs and tx-frames cannot both be 0");
		return -EINVAL;
	}
	if (ec->tx_coalesce_usecs > REFNIC_TX_USECS_MAX) {
		NL_SET_ERR_MSG_MOD(extack, "tx-usecs must be at most 10000");
		return -EINVAL;
	}
	if (ec->tx_max_coalesced_frames > REFNIC_TX_FRAMES_MAX) {
		NL_SET_ERR_MSG_MOD(extack, "tx-frames must be at most 4096");
		return -EINVAL;
	}
	/* The wire reads them when it next reports completions. */
	WRITE_ONCE(priv->tx_usecs, ec->tx_coalesce_usecs);
	WRITE_ONCE(priv->tx_frames, ec->tx_max_coalesced_frames);
	return 0;
}

static int refnic_get_link_ksettings(struct net_device *dev,
				     struct ethtool_link_ksettings *cmd)
{
	struct refnic_priv *priv = netdev_priv(dev);

	ethtool_link_ksettings_zero_link_mode(cmd, supported);
	ethtool_link_ksettings_zero_link_mode(cmd, advertising);
	cmd->base.speed = priv->line_rate_mbps ? priv->line_rate_mbps :
						  SPEED_UNKNOWN;
	cmd->base.duplex = DUPLEX_FULL;
	cmd->base.port = PORT_OTHER;
	cmd->base.autoneg = AUTONEG_DISABLE;
	return 0;
}

static int refnic_set_link_ksettings(struct net_device *dev,
				     const struct ethtool_link_ksettings *cmd)
{
	struct refnic_priv *priv = netdev_priv(dev);
	u32 speed = cmd->base.speed;

	if (cmd->base.autoneg != AUTONEG_DISABLE ||
	    (cmd->base.duplex != DUPLEX_FULL &&
	     cmd->base.duplex != DUPLEX_UNKNOWN))
		return -EINVAL;
	if (speed == SPEED_UNKNOWN)
		speed = 0;
	if (speed > REFNIC_SPEED_MAX)
		return -EINVAL;
	/* The wire reads it per frame; the port's queues share it. */
	WRITE_ONCE(priv->line_rate_mbps, speed);
	return 0;
}

const struct ethtool_ops refnic_ethtool_ops = {
	.supported_coalesce_params = ETHTOOL_COALESCE_TX_USECS |
				     ETHTOOL_COALESCE_TX_MAX_FRAMES,
	.get_drvinfo		= refnic_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_sset_count		= refnic_get_sset_count,
	.get_strings		= refnic_get_strings,
	.get_ethtool_stats	= refnic_get_ethtool_stats,
	.get_ringparam		= refnic_get_ringparam,
	.set_ringparam		= refnic_set_ringparam,
	.get_channels		= refnic_get_channels,
	.set_channels		= refnic_set_channels,
	.get_coalesce		= refnic_get_coalesce,
	.set_coalesce		= refnic_set_coalesce,
	.get_link_ksettings	= refnic_get_link_ksettings,
	.set_link_ksettings	= refnic_set_link_ksettings,
	.get_ts_info		= ethtool_op_get_ts_info,
};
