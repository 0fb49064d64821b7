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

/* Per TX queue, in this order; the totals start with the same names. */
enum {
	REFNIC_S_TX_PACKETS,
	REFNIC_S_TX_BYTES,
	REFNIC_S_TX_DOORBELLS,
	REFNIC_S_TX_XMIT_MORE,
	REFNIC_S_TX_STOPS,
	REFNIC_S_TX_WAKES,
	REFNIC_S_TX_RING_FULL,
	REFNIC_S_TX_COMPLETIONS,
	REFNIC_S_NAPI_POLLS,
	REFNIC_S_TX_TIMEOUTS,
	REFNIC_S_TX_FAULT_BUSY,
	REFNIC_S_TX_FAULT_STOP,
	REFNIC_S_TX_FAULT_DROP,
	REFNIC_S_TX_DROPPED,
	REFNIC_S_TX_CARRIER_ERRORS,
	REFNIC_S_HIST,
	REFNIC_S_TXQ = REFNIC_S_HIST + REFNIC_HIST_BUCKETS,
};

static const char refnic_txq_names[REFNIC_S_HIST][ETH_GSTRING_LEN] = {
	"tx_packets", "tx_bytes", "tx_doorbells", "tx_xmit_more",
	"tx_stops", "tx_wakes", "tx_ring_full", "tx_completions",
	"napi_polls", "tx_timeouts", "tx_fault_busy", "tx_fault_stop",
	"tx_fault_drop", "tx_dropped", "tx_carrier_errors",
};

static const char refnic_hist_names[REFNIC_HIST_BUCKETS][ETH_GSTRING_LEN] = {
	"tx_doorbell_pkts_1", "tx_doorbell_pkts_2", "tx_doorbell_pkts_3_4",
	"tx_doorbell_pkts_5_8", "tx_doorbell_pkts_9_16",
	"tx_doorbell_pkts_17_32", "tx_doorbell_pkts_33_64",
	"tx_doorbell_pkts_65_up",
};

/* Device-wide: the TX names, then these, then the histogram, then these. */
enum {
	REFNIC_S_RX_PACKETS,
	REFNIC_S_RX_BYTES,
	REFNIC_S_RX_DROPPED,
	REFNIC_S_RX,
};

static const char refnic_rx_names[REFNIC_S_RX][ETH_GSTRING_LEN] = {
	"rx_packets", "rx_bytes", "rx_dropped",
};

#define REFNIC_S_TOTALS	(REFNIC_S_TXQ + REFNIC_S_RX)

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

	switch (sset) {
	case ETH_SS_STATS:
		for (j = 0; j < REFNIC_S_HIST; j++)
			refnic_puts(&data, refnic_txq_names[j]);
		for (j = 0; j < REFNIC_S_RX; j++)
			refnic_puts(&data, refnic_rx_names[j]);
		for (j = 0; j < REFNIC_HIST_BUCKETS; j++)
			refnic_puts(&data, refnic_hist_names[j]);
		for (i = 0; i < dev->real_num_tx_queues; i++) {
			for (j = 0; j < REFNIC_S_HIST; j++)
				ethtool_sprintf(&data, "txq%u_%s", i,
						refnic_txq_names[j]);
			for (j = 0; j < REFNIC_HIST_BUCKETS; j++)
				ethtool_sprintf(&data, "txq%u_%s", i,
						refnic_hist_names[j]);
		}
		break;
	}
}

/* One TX queue's counters, in REFNIC_S_* order. */
static void refnic_txq_stats(struct refnic_queue *q, u64 *v)
{
	unsigned int start, j;

	do {
		start = u64_stats_fetch_begin(&q->xstats.syncp);
		v[REFNIC_S_TX_PACKETS] = u64_stats_read(&q->xstats.packets);
		v[REFNIC_S_TX_BYTES] = u64_stats_read(&q->xstats.bytes);
		v[REFNIC_S_TX_DOORBELLS] = u64_stats_read(&q->xstats.doorbells);
		v[REFNIC_S_TX_XMIT_MORE] = u64_stats_read(&q->xstats.xmit_more);
		v[REFNIC_S_TX_STOPS] = u64_stats_read(&q->xstats.stops);
		v[REFNIC_S_TX_RING_FULL] = u64_stats_read(&q->xstats.ring_full);
		v[REFNIC_S_TX_TIMEOUTS] = u64_stats_read(&q->xstats.timeouts);
		v[REFNIC_S_TX_FAULT_BUSY] = u64_stats_read(&q->xstats.fault_busy);
		v[REFNIC_S_TX_FAULT_STOP] = u64_stats_read(&q->xstats.fault_stop);
		v[REFNIC_S_TX_FAULT_DROP] = u64_stats_read(&q->xstats.fault_drop);
		v[REFNIC_S_TX_DROPPED] = u64_stats_read(&q->xstats.dropped);
		for (j = 0; j < REFNIC_HIST_BUCKETS; j++)
			v[REFNIC_S_HIST + j] = u64_stats_read(&q->xstats.hist[j]);
	} while (u64_stats_fetch_retry(&q->xstats.syncp, start));
	do {
		start = u64_stats_fetch_begin(&q->nstats.syncp);
		v[REFNIC_S_TX_WAKES] = u64_stats_read(&q->nstats.wakes);
		v[REFNIC_S_TX_COMPLETIONS] = u64_stats_read(&q->nstats.completions);
		v[REFNIC_S_NAPI_POLLS] = u64_stats_read(&q->nstats.polls);
	} while (u64_stats_fetch_retry(&q->nstats.syncp, start));
	do {
		start = u64_stats_fetch_begin(&q->wstats.syncp);
		v[REFNIC_S_TX_CARRIER_ERRORS] =
			u64_stats_read(&q->wstats.carrier_errors);
	} while (u64_stats_fetch_retry(&q->wstats.syncp, start));
}

static void refnic_get_ethtool_stats(struct net_device *dev,
				     struct ethtool_stats *stats, u64 *data)
{
	struct refnic_priv *priv = netdev_priv(dev);
	u64 *txq_data = data + REFNIC_S_TOTALS;
	u64 tot[REFNIC_S_TXQ] = {}, rx[REFNIC_S_RX] = {};
	unsigned int i, j, start;

	for (i = 0; i < priv->nqueues; i++) {
		struct refnic_queue *q = &priv->queues[i];
		u64 v[REFNIC_S_TXQ];

		refnic_txq_stats(q, v);
		for (j = 0; j < REFNIC_S_TXQ; j++)
			tot[j] += v[j];
		if (i < dev->real_num_tx_queues) {
			memcpy(txq_data, v, sizeof(v));
			txq_data += REFNIC_S_TXQ;
		}
		do {
			start = u64_stats_fetch_begin(&q->nstats.syncp);
			rx[REFNIC_S_RX_PACKETS] += u64_stats_read(&q->nstats.rx_packets);
			rx[REFNIC_S_RX_BYTES] += u64_stats_read(&q->nstats.rx_bytes);
		} while (u64_stats_fetch_retry(&q->nstats.syncp, start));
		do {
			start = u64_stats_fetch_begin(&q->rstats.syncp);
			rx[REFNIC_S_RX_DROPPED] += u64_stats_read(&q->rstats.dropped);
		} while (u64_stats_fetch_retry(&q->rstats.syncp, start));
	}

	memcpy(data, tot, REFNIC_S_HIST * sizeof(u64));
	data += REFNIC_S_HIST;
	memcpy(data, rx, sizeof(rx));
	data += REFNIC_S_RX;
	memcpy(data, tot + REFNIC_S_HIST, REFNIC_HIST_BUCKETS * sizeof(u64));
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
