// SPDX-License-Identifier: GPL-2.0
/*
 * refnic: a reference virtual NIC.
 *
 * Placeholder: a device that consumes every frame, so that the build and the
 * VM harness have a driver to load. The ring, BQL, doorbell and NAPI model
 * replace it.
 */

#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <net/rtnetlink.h>

#define DRV_NAME "refnic"

static netdev_tx_t refnic_start_xmit(struct sk_buff *skb, struct net_device *dev)
{
	/* One TX queue, serialised by its xmit lock: plain counters do. */
	dev->stats.tx_packets++;
	dev->stats.tx_bytes += skb->len;
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops refnic_netdev_ops = {
	.ndo_start_xmit		= refnic_start_xmit,
	.ndo_set_mac_address	= eth_mac_addr,
};

static void refnic_setup(struct net_device *dev)
{
	ether_setup(dev);
	dev->netdev_ops = &refnic_netdev_ops;
	dev->needs_free_netdev = true;
	eth_hw_addr_random(dev);
}

static struct rtnl_link_ops refnic_link_ops __read_mostly = {
	.kind		= DRV_NAME,
	.setup		= refnic_setup,
};

static int __init refnic_init(void)
{
	return rtnl_link_register(&refnic_link_ops);
}

static void __exit refnic_exit(void)
{
	rtnl_link_unregister(&refnic_link_ops);
}

module_init(refnic_init);
module_exit(refnic_exit);
MODULE_ALIAS_RTNL_LINK(DRV_NAME);
MODULE_DESCRIPTION("Reference virtual NIC: TX ring, BQL, xmit_more doorbells, NAPI");
MODULE_LICENSE("GPL");
