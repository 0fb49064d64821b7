// SPDX-License-Identifier: GPL-2.0
/*
 * refnic: a reference virtual NIC with the TX path of a real one, to measure
 * what the stack's batching (xmit_more) and BQL save.
 *
 * Each TX queue has a descriptor ring. ndo_start_xmit posts a descriptor,
 * accounts it to BQL, and rings the doorbell only when the stack says the
 * batch ends (__netdev_tx_sent_queue(..., netdev_xmit_more()); with BQL off
 * "!xmit_more || queue stopped"). The doorbell costs an emulated MMIO write,
 * so that saved doorbells show up as saved CPU. Each queue's "wire" fetches
 * the rung descriptors at once and puts them on the port's line, which the
 * TX queues share at the line rate; TX completions are signalled through
 * NAPI, moderated as ethtool -C says; the poll frees the skbs, reports them
 * to BQL and wakes the queue. Stand-alone, the line consumes the frames; in
 * a pair, each frame arrives on the peer's RX queue and its NAPI poll passes
 * it up the stack, so the pair works like a veth pair across namespaces.
 *
 * Knobs:
 *   ip link add NAME [numtxqueues N] [numrxqueues N] type refnic
 *			stand-alone device
 *   ip link add NAME type refnic peer name PEER [numtxqueues N] ...
 *			a pair (needs ip's link_refnic.so from ip-plugin/,
 *			e.g. IP_LIB_DIR=ip-plugin)
 *   ethtool -G DEV tx N		ring size per TX queue, 16..4096 (default 256)
 *   ethtool -L DEV tx N rx N	channels in use, 1..numtxqueues and
 *			1..numrxqueues (default: all)
 *   ethtool -C DEV tx-usecs N tx-frames N
 *			completion interrupt moderation: after N completions
 *			or N us after the first, whichever is first; 0
 *			disables either, not both (default 0 us, 1 frame: no
 *			moderation); with tx-usecs 0 the interrupt also fires
 *			when the wire has sent all it was given, as the "TX
 *			queue empty" cause of e1000-class NICs; tx-usecs
 *			0..10000, tx-frames 0..4096
 *   ethtool -s DEV speed N		line rate of the port in Mb/s, shared by
 *			its TX queues; "speed 0" restores the default,
 *			unlimited (the line then carries what its timers can
 *			send); ethtool reports unlimited as unknown
 *   ethtool -K DEV sg|tx|tso on|off
 *			offloads (default all on): scatter-gather,
 *			checksum (NETIF_F_HW_CSUM), TSO for IPv4 and IPv6.
 *			"tso off sg off tx off" is a NIC without offloads: the
 *			stack linearises, checksums and segments every frame
 *			before ndo_start_xmit. With TSO a frame of up to 64 KB
 *			takes one descriptor and one BQL charge of skb->len;
 *			the wire puts its gso_segs segments on the line, each
 *			with its headers, and a peer receives it whole, as
 *			through veth (see refnic_wire_send())
 *   /sys/module/refnic/parameters/doorbell_ns
 *			emulated doorbell cost, ns of busy wait, 0..100000
 *			(default 1000, see below), writable at run time
 *   /sys/module/refnic/parameters/line_rate_mbps
 *			line rate of devices created later (default 0,
 *			unlimited), 0..1000000
 *   /sys/module/refnic/parameters/watchdog_ms
 *			TX watchdog timeout of devices created later, ms,
 *			1000..600000 (default 30000), as stmmac's watchdog
 *   ethtool -S DEV	the counters without a standard home on the running
 *			kernel (refnic_ethtool.c), device-wide totals, then
 *			per TX queue txq<N>_*: tx_segments (on the wire: a
 *			TSO frame counts its gso_segs), tx_doorbells,
 *			tx_xmit_more (packets sent with xmit_more),
 *			tx_ring_full (stops because the ring was full),
 *			tx_completions, napi_polls, tx_fault_busy,
 *			tx_fault_stop,
 *			tx_fault_drop (injected faults, below),
 *			tx_doorbell_pkts_* (packets per doorbell: 1, 2, 3_4,
 *			5_8, 9_16, 17_32, 33_64, 65_up), tx_doorbell_segs_*
 *			(segments per doorbell, same buckets); per queue only,
 *			tx_dropped (frames taken and freed before the ring:
 *			not in tx_packets) and tx_carrier_errors (pair: frames
 *			sent while the peer was down, lost on the link); and
 *			without qstats (before 6.9) tx_stops (queue stopped by
 *			the ring or BQL), tx_wakes, and per queue tx_packets,
 *			tx_bytes.
 *   ip -s link, /sys/class/net/DEV/statistics
 *			the device's packets, bytes and drops each way, and
 *			tx_carrier_errors (stats64)
 *   /sys/class/net/DEV/queues/tx-N/tx_timeout
 *			a TX queue's timeouts (the core's watchdog counts them)
 *   netdev netlink qstats-get (6.9+)
 *			per queue: packets and bytes each way, TX stops and
 *			wakes
 *
 * Fault injection, per device, in debugfs (refnic_debugfs.c), 0 = off:
 *   /sys/kernel/debug/refnic/<ifname>/busy_every N
 *			every Nth ndo_start_xmit call on a TX queue (counted
 *			per queue) returns NETDEV_TX_BUSY without taking the
 *			skb: the core requeues it; nothing reaches the ring,
 *			BQL does not move (frames posted before it get their
 *			doorbell). N >= 2: 1 would refuse every frame.
 *			Counted in tx_fault_busy.
 *   /sys/kernel/debug/refnic/<ifname>/stop_every N
 *			after accepting every Nth frame of a TX queue, stop the
 *			queue as if the ring were full (the rest of the batch
 *			is requeued by the core); its completion wakes it, as
 *			after a ring-full stop. Counted in tx_fault_stop (stops
 *			of a queue already stopped are not made nor counted).
 *   /sys/kernel/debug/refnic/<ifname>/drop_every N
 *			every Nth ndo_start_xmit call on a TX queue drops the
 *			frame, as a driver does when it cannot map a frame for
 *			DMA: freed, nothing posted, BQL not told (frames posted
 *			before it get their doorbell). N >= 1: 1 drops every
 *			frame. Counted in tx_fault_drop and tx_dropped.
 *   /sys/kernel/debug/refnic/<ifname>/fail_ring_alloc 0|1
 *			1: every TX ring allocation fails: ip link set up,
 *			and ethtool -G and -L of a running device (a down
 *			one allocates at up), fail with ENOMEM and change
 *			nothing.
 *
 * The BQL switch, a test knob, in debugfs too (read and write 0 or 1; any
 * other value is refused with EINVAL and changes nothing):
 *   /sys/kernel/debug/refnic/<ifname>/bql 0|1
 *			BQL accounting (default 1); 0 behaves like a driver
 *			without BQL (the core then never bulk-dequeues). A
 *			running device restarts, as for ethtool -G.
 *
 * Every frame the driver takes is accounted for: it is either dropped before
 * the ring (tx_dropped) or posted (tx_packets), and in a pair A -> B, once
 * both are drained, A's tx_packets = B's rx_packets + B's rx_dropped + A's
 * tx_carrier_errors. Reconfiguration (ring size, channels,
 * the BQL switch, a TX timeout) and link down restart the datapath as a real
 * driver does, on rings allocated beforehand, so that it cannot fail half
 * way: the frames already given to the driver are sent at once (not dropped),
 * completed, and BQL starts afresh.
 *
 * The doorbell cost. A real doorbell is an uncached MMIO write to the NIC's
 * tail register: on bare metal about 70 ns of effective cost per doorbell
 * (ixgbe pktgen figures of commit 38b2cf2982dc: 108.7 ns/pkt at burst 1,
 * 74.1 ns/pkt at burst 2) up to a few hundred ns (UC writes reach PCIe
 * 50-300 ns apart); in a guest the write traps to the hypervisor, a VM exit
 * and entry, about 1 us when the host kernel handles it (ioeventfd; a KVM
 * run-loop round trip was measured at about 2,500 cycles on lkml in 2020),
 * several us when it goes out to a userspace device model.
 * refnic runs in guests (the test bed is a VM), so its default is the low
 * end of the trapped range, 1000 ns; set 100-300 to model bare metal, 0 for a
 * free doorbell. The cost is a busy wait (ndelay) in ndo_start_xmit, under
 * the TX queue's lock, where the real write stalls the sending CPU.
 *
 * What runs where, to read CPU figures:
 *  - ndo_start_xmit and the doorbell's busy wait: the sending CPU, in its
 *    xmit path (BH off, TX lock held), exactly as with a real NIC;
 *  - the wire (soft hrtimer, HRTIMER_SOFTIRQ): the CPU whose doorbell found
 *    it idle, which arms the timer, then the same CPU while frames remain or
 *    wait for the line. This is the emulated hardware, the only work a real
 *    NIC does not cost a CPU: per run a timer, per frame a few loads and
 *    stores, and in a pair a copy of the frame and a queue append (the
 *    DMA);
 *  - the completion interrupt: napi_schedule() from the wire, or from the
 *    moderation timer on the CPU that armed it; the NAPI poll (free, BQL,
 *    wake) runs in NET_RX softirq there, as a real driver's poll does on the
 *    CPU its interrupt targets;
 *  - peer RX: the wire schedules the peer queue's NAPI on its own CPU; the
 *    poll (eth_type_trans, GRO, the receiving stack) runs there, as veth's
 *    does. In a pair both ends' costs are on the same machine, as with veth.
 * All of it is softirq time on the guest's CPUs and counts as busy in
 * /proc/stat.
 */

#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <net/rtnetlink.h>
#ifdef REFNIC_HAVE_STAT_OPS
#include <net/netdev_queues.h>
#endif

#include "refnic.h"

/* A value out of range is refused (EINVAL) and changes nothing. */
static int refnic_doorbell_ns_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, REFNIC_DOORBELL_NS_MAX);
}

static const struct kernel_param_ops refnic_doorbell_ns_ops = {
	.set	= refnic_doorbell_ns_set,
	.get	= param_get_uint,
};

unsigned int refnic_doorbell_ns = REFNIC_DOORBELL_NS_DEFAULT;
module_param_cb(doorbell_ns, &refnic_doorbell_ns_ops, &refnic_doorbell_ns, 0644);
MODULE_PARM_DESC(doorbell_ns, "Emulated cost of one doorbell, ns, 0..100000 (default 1000)");

static int refnic_line_rate_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, REFNIC_SPEED_MAX);
}

static const struct kernel_param_ops refnic_line_rate_ops = {
	.set	= refnic_line_rate_set,
	.get	= param_get_uint,
};

static unsigned int line_rate_mbps;
module_param_cb(line_rate_mbps, &refnic_line_rate_ops, &line_rate_mbps, 0644);
MODULE_PARM_DESC(line_rate_mbps, "Line rate of new devices, Mb/s, 0..1000000 (default 0: unlimited)");

#define REFNIC_WATCHDOG_MS_MIN		1000
#define REFNIC_WATCHDOG_MS_MAX		600000
#define REFNIC_WATCHDOG_MS_DEFAULT	30000

static int refnic_watchdog_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, REFNIC_WATCHDOG_MS_MIN,
				     REFNIC_WATCHDOG_MS_MAX);
}

static const struct kernel_param_ops refnic_watchdog_ops = {
	.set	= refnic_watchdog_set,
	.get	= param_get_uint,
};

/* Long by default: a TCG guest's timers may lag seconds behind on a loaded
 * host. A stopped queue that drains slowly is not hung whatever the value:
 * completions refresh its trans_start (refnic_tx_clean()).
 */
static unsigned int watchdog_ms = REFNIC_WATCHDOG_MS_DEFAULT;
module_param_cb(watchdog_ms, &refnic_watchdog_ops, &watchdog_ms, 0644);
MODULE_PARM_DESC(watchdog_ms, "TX watchdog timeout of new devices, ms, 1000..600000 (default 30000)");

static struct net_device *refnic_peer(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);

	return rtnl_dereference(priv->peer);
}

static int refnic_open(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	struct net_device *peer = refnic_peer(dev);
	unsigned int n = dev->real_num_tx_queues;
	struct refnic_desc **rings;

	rings = refnic_rings_alloc(dev, n, priv->ring_size);
	if (!rings)
		return -ENOMEM;
	refnic_rings_install(dev, rings, n, priv->ring_size);
	refnic_up(dev);
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
	struct refnic_priv *priv = netdev_priv(dev);
	struct net_device *peer = refnic_peer(dev);

	netif_carrier_off(dev);
	if (peer)
		netif_carrier_off(peer);
	refnic_down(dev);
	refnic_rings_install(dev, NULL, 0, priv->ring_size);
	return 0;
}

/* The name is final here (register_netdevice() resolved "refnic%d"). */
static int refnic_dev_init(struct net_device *dev)
{
	int err;

	err = refnic_queues_init(dev);
	if (err)
		return err;
	refnic_debugfs_add(dev);
	return 0;
}

static void refnic_dev_uninit(struct net_device *dev)
{
	refnic_debugfs_del(dev);
	refnic_queues_uninit(dev);
}

/* The standard counters of one queue pair, each read consistently. */
struct refnic_queue_counts {
	u64 tx_packets, tx_bytes, tx_dropped, tx_stops, tx_wakes;
	u64 rx_packets, rx_bytes, rx_dropped, carrier_errors;
};

static void refnic_queue_counts(struct refnic_queue *q,
				struct refnic_queue_counts *c)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&q->xstats.syncp);
		c->tx_packets = u64_stats_read(&q->xstats.packets);
		c->tx_bytes = u64_stats_read(&q->xstats.bytes);
		c->tx_dropped = u64_stats_read(&q->xstats.dropped);
		c->tx_stops = u64_stats_read(&q->xstats.stops);
	} while (u64_stats_fetch_retry(&q->xstats.syncp, start));
	do {
		start = u64_stats_fetch_begin(&q->nstats.syncp);
		c->tx_wakes = u64_stats_read(&q->nstats.wakes);
		c->rx_packets = u64_stats_read(&q->nstats.rx_packets);
		c->rx_bytes = u64_stats_read(&q->nstats.rx_bytes);
	} while (u64_stats_fetch_retry(&q->nstats.syncp, start));
	do {
		start = u64_stats_fetch_begin(&q->rstats.syncp);
		c->rx_dropped = u64_stats_read(&q->rstats.dropped);
	} while (u64_stats_fetch_retry(&q->rstats.syncp, start));
	do {
		start = u64_stats_fetch_begin(&q->wstats.syncp);
		c->carrier_errors = u64_stats_read(&q->wstats.carrier_errors);
	} while (u64_stats_fetch_retry(&q->wstats.syncp, start));
}

static void refnic_get_stats64(struct net_device *dev,
			       struct rtnl_link_stats64 *s)
{
	struct refnic_priv *priv = netdev_priv(dev);
	unsigned int i, n = READ_ONCE(priv->nqueues);
	struct refnic_queue_counts c;

	for (i = 0; i < n; i++) {
		refnic_queue_counts(&priv->queues[i], &c);
		s->tx_carrier_errors += c.carrier_errors;
		s->tx_errors += c.carrier_errors;
		s->tx_packets += c.tx_packets;
		s->tx_bytes += c.tx_bytes;
		s->tx_dropped += c.tx_dropped;
		s->rx_packets += c.rx_packets;
		s->rx_bytes += c.rx_bytes;
		s->rx_dropped += c.rx_dropped;
	}
}

#ifdef REFNIC_HAVE_STAT_OPS
/* Per-queue statistics (netdev netlink's qstats-get, 6.9+): packets and
 * bytes each way, and on TX the stops and wakes (BQL's included), which
 * ethtool -S then leaves out. Called under RTNL, with the queues
 * allocated; a queue beyond the channel count keeps its counters, which
 * the base adds so that the device's totals are those of ip -s link.
 */
static void refnic_qstats_rx(struct net_device *dev, int idx,
			     struct netdev_queue_stats_rx *rx)
{
	struct refnic_priv *priv = netdev_priv(dev);
	struct refnic_queue_counts c;

	refnic_queue_counts(&priv->queues[idx], &c);
	rx->packets = c.rx_packets;
	rx->bytes = c.rx_bytes;
}

static void refnic_qstats_tx(struct net_device *dev, int idx,
			     struct netdev_queue_stats_tx *tx)
{
	struct refnic_priv *priv = netdev_priv(dev);
	struct refnic_queue_counts c;

	refnic_queue_counts(&priv->queues[idx], &c);
	tx->packets = c.tx_packets;
	tx->bytes = c.tx_bytes;
	tx->stop = c.tx_stops;
	tx->wake = c.tx_wakes;
}

static void refnic_qstats_base(struct net_device *dev,
			       struct netdev_queue_stats_rx *rx,
			       struct netdev_queue_stats_tx *tx)
{
	struct refnic_priv *priv = netdev_priv(dev);
	struct refnic_queue_counts c;
	unsigned int i;

	rx->packets = 0;
	rx->bytes = 0;
	tx->packets = 0;
	tx->bytes = 0;
	tx->stop = 0;
	tx->wake = 0;
	for (i = 0; i < priv->nqueues; i++) {
		refnic_queue_counts(&priv->queues[i], &c);
		if (i >= dev->real_num_rx_queues) {
			rx->packets += c.rx_packets;
			rx->bytes += c.rx_bytes;
		}
		if (i >= dev->real_num_tx_queues) {
			tx->packets += c.tx_packets;
			tx->bytes += c.tx_bytes;
			tx->stop += c.tx_stops;
			tx->wake += c.tx_wakes;
		}
	}
}

static const struct netdev_stat_ops refnic_stat_ops = {
	.get_queue_stats_rx	= refnic_qstats_rx,
	.get_queue_stats_tx	= refnic_qstats_tx,
	.get_base_stats		= refnic_qstats_base,
};
#endif

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
#ifdef REFNIC_HAVE_STAT_OPS
	dev->stat_ops = &refnic_stat_ops;
#endif
	/* Switchable (ethtool -K); the core keeps TSO off while SG or the
	 * checksum is off.
	 */
	dev->hw_features = REFNIC_OFFLOADS;
	dev->features |= REFNIC_OFFLOADS;
	dev->needs_free_netdev = true;
	dev->priv_destructor = refnic_reset_cancel;
	dev->watchdog_timeo = msecs_to_jiffies(READ_ONCE(watchdog_ms));
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
	/* CAP_NET_ADMIN where the peer goes, as rtnetlink asks where the
	 * device itself goes: else a user namespace could put a peer in any
	 * namespace and send frames into it. (The core checks the peer of a
	 * .peer_type driver since commit 7b735ef81286, 2026; this check is
	 * the same on every kernel.)
	 */
	if (!ns_capable(net->user_ns, CAP_NET_ADMIN)) {
		put_net(net);
		NL_SET_ERR_MSG_ATTR(extack, nla_peer,
				    "refnic: no CAP_NET_ADMIN in the peer's network namespace");
		return ERR_PTR(-EPERM);
	}
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
	/* Paired before "peer ... up" opens it: an end whose other end is
	 * down has no carrier (refnic_open()), as veth does it.
	 */
	rcu_assign_pointer(((struct refnic_priv *)netdev_priv(peer))->peer, dev);

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
		if (peer) {
			/* dev is freed when we return, before the peer */
			RCU_INIT_POINTER(((struct refnic_priv *)
					  netdev_priv(peer))->peer, NULL);
			unregister_netdevice(peer);
		}
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

/* Since 6.14 newlink takes its arguments in struct rtnl_newlink_params
 * (probed by Kbuild).
 */
#ifdef REFNIC_HAVE_NEWLINK_PARAMS
static int refnic_newlink_params(struct net_device *dev,
				 struct rtnl_newlink_params *params,
				 struct netlink_ext_ack *extack)
{
	return refnic_newlink(params->src_net, dev, params->tb, params->data,
			      extack);
}

#define REFNIC_NEWLINK	refnic_newlink_params
#else
#define REFNIC_NEWLINK	refnic_newlink
#endif

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
	.newlink	= REFNIC_NEWLINK,
	.dellink	= refnic_dellink,
	.policy		= refnic_policy,
	.maxtype	= REFNIC_INFO_MAX,
	.get_link_net	= refnic_get_link_net,
};

/* The debugfs directory follows the device's name. */
static int refnic_netdev_event(struct notifier_block *nb, unsigned long event,
			       void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	if (dev->netdev_ops != &refnic_netdev_ops)
		return NOTIFY_DONE;
	if (event == NETDEV_CHANGENAME) {
		refnic_debugfs_del(dev);
		refnic_debugfs_add(dev);
	}
	return NOTIFY_DONE;
}

static struct notifier_block refnic_notifier = {
	.notifier_call	= refnic_netdev_event,
};

static int __init refnic_init(void)
{
	int err;

	refnic_debugfs_init();
	err = register_netdevice_notifier(&refnic_notifier);
	if (err)
		goto err_debugfs;
	err = rtnl_link_register(&refnic_link_ops);
	if (err)
		goto err_notifier;
	return 0;

err_notifier:
	unregister_netdevice_notifier(&refnic_notifier);
err_debugfs:
	refnic_debugfs_exit();
	return err;
}

/* rtnl_link_unregister() deletes every refnic device, in every namespace,
 * through refnic_dellink().
 */
static void __exit refnic_exit(void)
{
	rtnl_link_unregister(&refnic_link_ops);
	unregister_netdevice_notifier(&refnic_notifier);
	refnic_debugfs_exit();
}

module_init(refnic_init);
module_exit(refnic_exit);
MODULE_ALIAS_RTNL_LINK(DRV_NAME);
MODULE_DESCRIPTION("Reference virtual NIC: TX ring, BQL, xmit_more doorbells, NAPI");
MODULE_LICENSE("GPL");
