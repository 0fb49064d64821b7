// SPDX-License-Identifier: GPL-2.0
/*
 * refnic's test knobs, per device, in debugfs (as netdevsim has them): fault
 * injection and the BQL switch.
 *
 *	/sys/kernel/debug/refnic/<ifname>/busy_every
 *	/sys/kernel/debug/refnic/<ifname>/stop_every
 *	/sys/kernel/debug/refnic/<ifname>/drop_every
 *	/sys/kernel/debug/refnic/<ifname>/fail_ring_alloc
 *	/sys/kernel/debug/refnic/<ifname>/bql
 *
 * The directory follows the device's name (a rename moves it). Names are
 * unique per network namespace only: a device named like a refnic device of
 * another namespace gets no directory. Semantics in refnic_main.c. A value
 * out of range is refused with EINVAL and changes nothing.
 */

#include <linux/debugfs.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/sched/signal.h>

#include "refnic.h"

static struct dentry *refnic_debugfs_root;

static int refnic_dbg_get(void *data, u64 *val)
{
	*val = READ_ONCE(*(u32 *)data);
	return 0;
}

/* 1 would refuse every frame for ever: the core would retry without end. */
static int refnic_busy_every_set(void *data, u64 val)
{
	if (val == 1 || val > U32_MAX)
		return -EINVAL;
	WRITE_ONCE(*(u32 *)data, val);
	return 0;
}

static int refnic_every_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	WRITE_ONCE(*(u32 *)data, val);
	return 0;
}

static int refnic_bool_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	WRITE_ONCE(*(u32 *)data, val);
	return 0;
}

static int refnic_bql_get(void *data, u64 *val)
{
	struct refnic_priv *priv = netdev_priv(data);

	*val = READ_ONCE(priv->bql);
	return 0;
}

/* A running device restarts, under RTNL. debugfs_remove() waits for this
 * write to end, and runs under RTNL (unregistration, rename): waiting for
 * RTNL here could deadlock, so try it and restart the write system call if
 * it is taken, as net-sysfs does.
 */
static int refnic_bql_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	if (!rtnl_trylock())
		return restart_syscall();
	refnic_set_bql(data, val);
	rtnl_unlock();
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(refnic_busy_every_fops, refnic_dbg_get,
			 refnic_busy_every_set, "%llu\n");
DEFINE_DEBUGFS_ATTRIBUTE(refnic_every_fops, refnic_dbg_get,
			 refnic_every_set, "%llu\n");
DEFINE_DEBUGFS_ATTRIBUTE(refnic_bool_fops, refnic_dbg_get, refnic_bool_set,
			 "%llu\n");
DEFINE_DEBUGFS_ATTRIBUTE(refnic_bql_fops, refnic_bql_get, refnic_bql_set,
			 "%llu\n");

void refnic_debugfs_add(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	struct dentry *d;

	/* debugfs errors are not fatal: the files are a test aid. */
	d = debugfs_create_dir(dev->name, refnic_debugfs_root);
	if (IS_ERR(d))
		return;
	priv->debugfs = d;
	debugfs_create_file_unsafe("busy_every", 0600, d,
				   &priv->fault.busy_every,
				   &refnic_busy_every_fops);
	debugfs_create_file_unsafe("stop_every", 0600, d,
				   &priv->fault.stop_every,
				   &refnic_every_fops);
	debugfs_create_file_unsafe("drop_every", 0600, d,
				   &priv->fault.drop_every,
				   &refnic_every_fops);
	debugfs_create_file_unsafe("fail_ring_alloc", 0600, d,
				   &priv->fault.fail_ring_alloc,
				   &refnic_bool_fops);
	debugfs_create_file_unsafe("bql", 0600, d, dev, &refnic_bql_fops);
}

void refnic_debugfs_del(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);

	/* Waits for the file operations under way. */
	debugfs_remove(priv->debugfs);
	priv->debugfs = NULL;
}

void refnic_debugfs_init(void)
{
	refnic_debugfs_root = debugfs_create_dir(DRV_NAME, NULL);
}

void refnic_debugfs_exit(void)
{
	debugfs_remove(refnic_debugfs_root);
}
