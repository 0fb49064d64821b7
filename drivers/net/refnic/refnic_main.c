// SPDX-License-Identifier: GPL-2.0
/*
 * refnic: a reference virtual NIC with the TX path of a real one, to measure
 * what the stack's batching (xmit_more) and BQL save.
 *
 * Each TX queue has a descriptor ring. ndo_start_xmit posts a descriptor,
 * accounts it to BQL, and rings the doorbell only when the stack says the
 * batch ends (__netdev_tx_sent_queue(..., netdev_xmit_more()); with BQL off
 * "!xmit_more || queue stopped"). The doorbell may cost an emulated MMIO
 * write, so that saved doorbells show up as saved CPU. A "wire" (one hrtimer
 * per queue) sends the rung descriptors at the line rate and raises TX
 * completions through NAPI, coalesced; the poll frees the skbs, reports them
 * to BQL and wakes the queue. Stand-alone, the wire consumes the frames; in a
 * pair, each frame arrives on the peer's RX queue and its NAPI poll passes it
 * up the stack, so the pair works like a veth pair across namespaces.
 *
 * Knobs:
 *   ip link add NAME [numtxqueues N] [numrxqueues N] type refnic
 *			stand-alone device
 *   ip link add NAME type refnic peer name PEER [numtxqueues N] ...
 *			a pair (needs ip's link_refnic.so from ip-plugin/,
 *			e.g. IP_LIB_DIR=ip-plugin)
 *   ethtool -G DEV tx N		ring size, 16..4096 (default 256)
 *   ethtool -C DEV tx-usecs N tx-frames N
 *			completion coalescing: NAPI is scheduled after N
 *			completions or N us after the first, whichever is
 *			first (default 0 us, 1 frame: no coalescing);
 *			tx-usecs 0..10000, tx-frames 0..4096
 *   ethtool -s DEV speed N		line rate in Mb/s; "speed 0" restores
 *			the default, unlimited (the wire then drains as fast as
 *			its timer runs); ethtool reports unlimited as unknown
 *   ethtool --set-priv-flags DEV bql on|off
 *			BQL accounting (default on); off behaves like a driver
 *			without BQL (the core then never bulk-dequeues)
 *   /sys/module/refnic/parameters/doorbell_ns
 *			emulated doorbell cost, ns of busy wait (default 0),
 *			writable at run time
 *   /sys/module/refnic/parameters/line_rate_mbps
 *			line rate of devices created later (default 0,
 *			unlimited)
 *   ethtool -S DEV	device-wide totals, then per TX queue txq<N>_*:
 *			tx_packets, tx_bytes, tx_doorbells, tx_xmit_more
 *			(packets sent with xmit_more), tx_stops (queue stopped
 *			by the ring or BQL), tx_wakes, tx_ring_full (stops
 *			because the ring was full), tx_completions, napi_polls,
 *			tx_timeouts, tx_doorbell_pkts_* (packets per doorbell:
 *			1, 2, 3_4, 5_8, 9_16, 17_32, 33_64, 65_up)
 *			and rx_packets, rx_bytes, rx_dropped, tx_dropped.
 *
 * Changing the ring size or the BQL flag on a running device takes the
 * datapath down and up again, as a real driver does: frames on the ring are
 * dropped (tx_dropped) and BQL starts afresh. Link down does the same.
 */

#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <net/rtnetlink.h>

#include "refnic.h"

unsigned int refnic_doorbell_ns;
module_param_named(doorbell_ns, refnic_doorbell_ns, uint, 0644);
MODULE_PARM_DESC(doorbell_ns, "Emulated cost of one doorbell, ns (default 0)");

static unsigned int line_rate_mbps;
module_param(line_rate_mbps, uint, 0644);
MODULE_PARM_DESC(line_rate_mbps, "Line rate of new devices, Mb/s (default 0: unlimited)");

static struct net_device *refnic_peer(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);

	return rtnl_dereference(priv->peer);
}

static int refnic_open(struct net_device *dev)
{
	struct net_device *peer = refnic_peer(dev);
	int err;

	err = refnic_up(dev);
	if (err)
		return err;
	/* A pair has carrier when both ends are up, like veth. */
	if (!peer) {
		netif_carrier_on(dev);
	} else if (peer->flags & IFF_UP) {
		netif_carrier_on(dev);
		netif_carrier_on(peer);
	}
	return 0;
}

static int refnic_stop(struct net_device *dev)
{
	struct net_device *peer = refnic_peer(dev);

	netif_carrier_off(dev);
	if (peer)
		netif_carrier_off(peer);
	refnic_down(dev);
	return 0;
}

static int refnic_dev_init(struct net_device *dev)
{
	return refnic_queues_init(dev);
}

static void refnic_dev_uninit(struct net_device *dev)
{
	refnic_queues_uninit(dev);
}

static void refnic_get_stats64(struct net_device *dev,
			       struct rtnl_link_stats64 *s)
{
	struct refnic_priv *priv = netdev_priv(dev);
	unsigned int i, n = READ_ONCE(priv->nqueues), start;

	for (i = 0; i < n; i++) {
		struct refnic_queue *q = &priv->queues[i];
		u64 tp, tb, td, rp, rb, rd;

		do {
			start = u64_stats_fetch_begin(&q->xstats.syncp);
			tp = u64_stats_read(&q->xstats.packets);
			tb = u64_stats_read(&q->xstats.bytes);
		} while (u64_stats_fetch_retry(&q->xstats.syncp, start));
		do {
			start = u64_stats_fetch_begin(&q->nstats.syncp);
			td = u64_stats_read(&q->nstats.tx_dropped);
			rp = u64_stats_read(&q->nstats.rx_packets);
			rb = u64_stats_read(&q->nstats.rx_bytes);
		} while (u64_stats_fetch_retry(&q->nstats.syncp, start));
		do {
			start = u64_stats_fetch_begin(&q->rstats.syncp);
			rd = u64_stats_read(&q->rstats.dropped);
		} while (u64_stats_fetch_retry(&q->rstats.syncp, start));

		s->tx_packets += tp;
		s->tx_bytes += tb;
		s->tx_dropped += td;
		s->rx_packets += rp;
		s->rx_bytes += rb;
		s->rx_dropped += rd;
	}
}

static int refnic_get_iflink(const struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	struct net_device *peer;
	int iflink;

	rcu_read_lock();
	peer = rcu_dereference(priv->peer);
	iflink = peer ? READ_ONCE(peer->ifindex) : READ_ONCE(dev->ifindex);
	rcu_read_unlock();
	return iflink;
}

static const struct net_device_ops refnic_netdev_ops = {
	.ndo_init		= refnic_dev_init,
	.ndo_uninit		= refnic_dev_uninit,
	.ndo_open		= refnic_open,
	.ndo_stop		= refnic_stop,
	.ndo_start_xmit		= refnic_start_xmit,
	.ndo_tx_timeout		= refnic_tx_timeout,
	.ndo_get_stats64	= refnic_get_stats64,
	.ndo_get_iflink		= refnic_get_iflink,
	.ndo_set_mac_address	= eth_mac_addr,
	.ndo_validate_addr	= eth_validate_addr,
};

static void refnic_setup(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);

	ether_setup(dev);
	dev->netdev_ops = &refnic_netdev_ops;
	dev->ethtool_ops = &refnic_ethtool_ops;
	dev->needs_free_netdev = true;
	/* Longer than a stopped queue can wait: at 1 Mb/s, a quarter of a
	 * 4096-entry ring of full-size frames takes 12.6 s to drain.
	 */
	dev->watchdog_timeo = 30 * HZ;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = ETH_DATA_LEN;
	eth_hw_addr_random(dev);

	priv->bql = true;
	priv->ring_size = REFNIC_RING_DEFAULT;
	priv->line_rate_mbps = min_t(unsigned int, READ_ONCE(line_rate_mbps),
				     REFNIC_SPEED_MAX);
	priv->tx_usecs = 0;
	priv->tx_frames = 1;
}

static const struct nla_policy refnic_policy[REFNIC_INFO_MAX + 1] = {
	[REFNIC_INFO_PEER]	= { .len = sizeof(struct ifinfomsg) },
};

static int refnic_validate(struct nlattr *tb[], struct nlattr *data[],
			   struct netlink_ext_ack *extack)
{
	if (tb[IFLA_ADDRESS]) {
		if (nla_len(tb[IFLA_ADDRESS]) != ETH_ALEN) {
			NL_SET_ERR_MSG_ATTR(extack, tb[IFLA_ADDRESS],
					    "Invalid hardware address length");
			return -EINVAL;
		}
		if (!is_valid_ether_addr(nla_data(tb[IFLA_ADDRESS]))) {
			NL_SET_ERR_MSG_ATTR(extack, tb[IFLA_ADDRESS],
					    "Invalid hardware address");
			return -EADDRNOTAVAIL;
		}
	}
	return 0;
}

static struct rtnl_link_ops refnic_link_ops;

/* Create and register the peer described by the REFNIC_INFO_PEER nest. */
static struct net_device *refnic_new_peer(struct net *src_net,
					  struct net_device *dev,
					  struct nlattr *nla_peer,
					  struct netlink_ext_ack *extack)
{
	struct ifinfomsg *ifmp = nla_data(nla_peer);
	struct nlattr *peer_tb[IFLA_MAX + 1];
	unsigned char name_assign_type;
	struct net_device *peer;
	char ifname[IFNAMSIZ];
	struct net *net;
	int err;

	err = rtnl_nla_parse_ifinfomsg(peer_tb, nla_peer, extack);
	if (err < 0)
		return ERR_PTR(err);
	err = refnic_validate(peer_tb, NULL, extack);
	if (err < 0)
		return ERR_PTR(err);

	if (peer_tb[IFLA_IFNAME]) {
		nla_strscpy(ifname, peer_tb[IFLA_IFNAME], IFNAMSIZ);
		name_assign_type = NET_NAME_USER;
	} else {
		snprintf(ifname, IFNAMSIZ, DRV_NAME "%%d");
		name_assign_type = NET_NAME_ENUM;
	}

	net = rtnl_link_get_net(src_net, peer_tb);
	if (IS_ERR(net))
		return ERR_CAST(net);
	peer = rtnl_create_link(net, ifname, name_assign_type,
				&refnic_link_ops, peer_tb, extack);
	if (IS_ERR(peer)) {
		put_net(net);
		return peer;
	}
	if (!peer_tb[IFLA_ADDRESS])
		eth_hw_addr_random(peer);
	if (dev->ifindex)
		peer->ifindex = ifmp->ifi_index;

	err = register_netdevice(peer);
	put_net(net);
	if (err < 0) {
		free_netdev(peer);
		return ERR_PTR(err);
	}
	netif_carrier_off(peer);

	err = rtnl_configure_link(peer, ifmp, 0, NULL);
	if (err < 0) {
		unregister_netdevice(peer);
		return ERR_PTR(err);
	}
	return peer;
}

static int refnic_newlink(struct net *src_net, struct net_device *dev,
			  struct nlattr *tb[], struct nlattr *data[],
			  struct netlink_ext_ack *extack)
{
	struct net_device *peer = NULL;
	int err;

	if (data && data[REFNIC_INFO_PEER]) {
		peer = refnic_new_peer(src_net, dev, data[REFNIC_INFO_PEER],
				       extack);
		if (IS_ERR(peer))
			return PTR_ERR(peer);
		/* The peer took the "refnic%d" template if it used one. */
		if (tb[IFLA_IFNAME])
			nla_strscpy(dev->name, tb[IFLA_IFNAME], IFNAMSIZ);
		else
			snprintf(dev->name, IFNAMSIZ, DRV_NAME "%%d");
	}

	err = register_netdevice(dev);
	if (err < 0) {
		if (peer)
			unregister_netdevice(peer);
		return err;
	}
	if (peer) {
		struct refnic_priv *ppriv = netdev_priv(peer);
		struct refnic_priv *priv = netdev_priv(dev);

		netif_carrier_off(dev);
		rcu_assign_pointer(priv->peer, peer);
		rcu_assign_pointer(ppriv->peer, dev);
	}
	return 0;
}

static void refnic_dellink(struct net_device *dev, struct list_head *head)
{
	struct refnic_priv *priv = netdev_priv(dev);
	struct net_device *peer = rtnl_dereference(priv->peer);

	/* Both ends go together. Neither is freed before an RCU grace
	 * period, which covers a wire still looking at its peer.
	 */
	RCU_INIT_POINTER(priv->peer, NULL);
	unregister_netdevice_queue(dev, head);
	if (peer) {
		struct refnic_priv *ppriv = netdev_priv(peer);

		RCU_INIT_POINTER(ppriv->peer, NULL);
		unregister_netdevice_queue(peer, head);
	}
}

static struct net *refnic_get_link_net(const struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	struct net_device *peer = rtnl_dereference(priv->peer);

	return peer ? dev_net(peer) : dev_net(dev);
}

static struct rtnl_link_ops refnic_link_ops = {
	.kind		= DRV_NAME,
	.priv_size	= sizeof(struct refnic_priv),
	.setup		= refnic_setup,
	.validate	= refnic_validate,
	.newlink	= refnic_newlink,
	.dellink	= refnic_dellink,
	.policy		= refnic_policy,
	.maxtype	= REFNIC_INFO_MAX,
	.get_link_net	= refnic_get_link_net,
};

static int __init refnic_init(void)
{
	return rtnl_link_register(&refnic_link_ops);
}

/* rtnl_link_unregister() deletes every refnic device, in every namespace,
 * through refnic_dellink().
 */
static void __exit refnic_exit(void)
{
	rtnl_link_unregister(&refnic_link_ops);
}

module_init(refnic_init);
module_exit(refnic_exit);
MODULE_ALIAS_RTNL_LINK(DRV_NAME);
MODULE_DESCRIPTION("Reference virtual NIC: TX ring, BQL, xmit_more doorbells, NAPI");
MODULE_LICENSE("GPL");
