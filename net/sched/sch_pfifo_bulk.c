// SPDX-License-Identifier: GPL-2.0
/*
 * net/sched/sch_pfifo_bulk.c	FIFO that shapes the xmit_more batch.
 *
 * Placeholder: a plain packet FIFO, so that the build and the VM harness
 * have something real to load. The batching qdisc replaces it.
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/skbuff.h>
#include <net/pkt_sched.h>
#include <net/sch_generic.h>

static int pfifo_bulk_enqueue(struct sk_buff *skb, struct Qdisc *sch,
			      struct sk_buff **to_free)
{
	if (likely(sch->q.qlen < READ_ONCE(sch->limit)))
		return qdisc_enqueue_tail(skb, sch);

	return qdisc_drop(skb, sch, to_free);
}

static int pfifo_bulk_init(struct Qdisc *sch, struct nlattr *opt,
			   struct netlink_ext_ack *extack)
{
	WRITE_ONCE(sch->limit, max_t(u32, qdisc_dev(sch)->tx_queue_len, 1));
	return 0;
}

static struct Qdisc_ops pfifo_bulk_qdisc_ops __read_mostly = {
	.id		= "pfifo_bulk",
	.enqueue	= pfifo_bulk_enqueue,
	.dequeue	= qdisc_dequeue_head,
	.peek		= qdisc_peek_head,
	.init		= pfifo_bulk_init,
	.reset		= qdisc_reset_queue,
	.owner		= THIS_MODULE,
};

static int __init pfifo_bulk_module_init(void)
{
	return register_qdisc(&pfifo_bulk_qdisc_ops);
}

static void __exit pfifo_bulk_module_exit(void)
{
	unregister_qdisc(&pfifo_bulk_qdisc_ops);
}

module_init(pfifo_bulk_module_init);
module_exit(pfifo_bulk_module_exit);
MODULE_ALIAS("net-sch-pfifo_bulk");
MODULE_DESCRIPTION("FIFO qdisc that controls the xmit_more batch");
MODULE_LICENSE("GPL");
