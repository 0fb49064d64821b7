// SPDX-License-Identifier: GPL-2.0
/*
 * pfifo_bulk: a packet FIFO that controls the xmit_more batch.
 *
 * A tail-drop packet FIFO, like pfifo, that also decides how many packets
 * the core hands to the driver in one dev_hard_start_xmit() call: the batch
 * ends at the smallest of what BQL allows, bulk_bytes and bulk_pkts (0 = no
 * own cap). bulk_pkts is exact; a batch ends at the first packet that
 * reaches bulk_bytes, so it overshoots that cap by less than one packet.
 * Every batch is counted in the extended statistics.
 *
 * The core builds the batch, not the qdisc: dequeue_skb() calls ->dequeue
 * once, then again and again while its own budget lasts. The only ways a
 * qdisc can shape that loop are returning NULL, and its own
 * TCQ_F_ONETXQUEUE flag, which picks one of the core's two bulk loops. The
 * qdisc owns that flag: at the start of every batch it sets or clears it to
 * match the path it runs on, whoever touched it last (qdisc_create() and
 * attach_one_default_qdisc() set it, the latter after ->init).
 *
 * BQL path (flag set): try_bulk_dequeue_skb() keeps calling while
 *   dql_avail() bytes remain (and the __qdisc_run() quota lasts). We end a
 *   batch at our cap by returning NULL. The loop does not tell us which
 *   call is the first of a batch, so we infer it: we ended the last batch
 *   ourselves; or txq->dql.num_queued moved (the driver took the last
 *   batch; it cannot move while the core collects one); or BQL had no room
 *   and nothing completed since the batch began (the core's loop only calls
 *   again while it has room, and room only changes on a completion).
 *
 * NOBQL path (flag clear): try_bulk_dequeue_skb_slow() takes up to 8 more
 *   packets (9 in all) and ignores BQL, bytes and the quota. A batch ends
 *   only when we return NULL or after the 9th packet, so we know exactly
 *   where a batch starts. This is how a driver without BQL, where the BQL
 *   path always gives batches of 1, still gets batches carrying xmit_more.
 *   Trade-offs: at most 9 packets per batch; BQL, if any, does not shorten
 *   a batch (the driver may stop the queue mid-batch: dev_hard_start_xmit()
 *   then hands the rest back and the core requeues it, visible as
 *   requeues); the core's early "queue stopped" check is skipped, so each
 *   stop episode costs one dequeue and one requeue; the quota of 64 per
 *   __qdisc_run() may be overshot by 8.
 *
 * A NULL at our cap ends a batch the core is collecting; the core then
 * sends it and goes on with the next batch, or reschedules itself (the
 * quota, a requeue). Only a NULL on the first call of a batch would end
 * the run with packets left. On the NOBQL path that cannot happen: batch
 * starts are exact. The BQL inference is not trusted with it (a batch the
 * driver handed back moves no BQL counter, and the next batch's first call
 * looks like the same batch at its cap): there a NULL at the cap with
 * packets waiting asks for another run. A lockless qdisc sets
 * __QDISC_STATE_MISSED, which qdisc_run_end() turns into a reschedule and
 * which our own "found empty" path clears again if the same run drains the
 * queue after all; a locked one calls __netif_schedule(), as the core's
 * requeue path does. The reschedules statistic counts these requests. So a
 * wrong guess costs at most one NET_TX softirq; a
 * guess that a call is the first when it is not would overshoot a cap, and
 * the inferences above cannot make that error unless another context
 * transmits on the same txq while the core collects a batch (pktgen's
 * start_xmit mode, an AF_PACKET socket with PACKET_QDISC_BYPASS, netpoll).
 *
 * Mode auto picks the BQL path while the driver's num_queued moves (BQL
 * live) and the NOBQL path otherwise; with bulk_pkts 1 it always takes the
 * NOBQL path, where a batch of one needs no reschedule. Modes bql and nobql
 * force a path. A path is chosen only by the datapath, at the start of a
 * batch, before the core looks at the flag; ->change only sets what the
 * next batch will choose from, and the dumps only read.
 *
 * Roles. The batch logic runs only when the core dequeues this qdisc
 * itself (it is the txq's qdisc: root of a single-queue device, or a child
 * of mq/mqprio). As a child of a classful qdisc (htb, prio, ...) the
 * parent calls ->dequeue, NULL would mean "empty", so the qdisc is a plain
 * pfifo there: no caps, no NULL while packets wait; its effective mode is
 * "none". As root of a multiqueue device one qdisc serves all txqs; the
 * BQL path would mix txqs in a batch, so the NOBQL path is forced, and
 * since the core may park a packet of another txq between batches the
 * boundaries are no longer exact. A warning says so; mq with pfifo_bulk
 * children is the better setup.
 *
 * Lockless. The qdisc is TCQ_F_NOLOCK, like pfifo_fast, when loaded with
 * lockless=1 (the default; locked mode below): the core takes no root
 * lock around ->enqueue or ->dequeue. Enqueue takes no lock at
 * all: a slot below the limit is claimed with one cmpxchg on a counter,
 * the packet goes onto a lock-free list (llist) with another, and the
 * order of successful llist_add()s is the FIFO order. There is one
 * consumer, the CPU that holds the qdisc's run lock (sch->seqlock) in
 * __qdisc_run(); it takes the whole list with one xchg, reverses it into a
 * private FIFO and hands out packets from there. Queue statistics are per
 * CPU (TCQ_F_CPUSTATS); the batch statistics are the consumer's own,
 * published with u64_stats so that a dump reads them without any of the
 * datapath's locks. The run protocol is the core's (qdisc_run_begin/end
 * with MISSED); the qdisc's part is to clear MISSED and look again when it
 * finds itself empty, as pfifo_fast_dequeue() does. ->change keeps the
 * consumer out by taking the run lock, and then reschedules as
 * qdisc_run_end() does. Grafted under a locked parent (htb, prio, or mq
 * when the child is added with tc) the core clears TCQ_F_NOLOCK and the
 * per-CPU statistics; the same code then runs under the root lock. The
 * dump says which (TCA_PFIFO_BULK_LOCKLESS).
 *
 * Locked mode. The module parameter lockless (read-only after load) sets
 * the ops' static_flags for every instance: TCQ_F_NOLOCK | TCQ_F_CPUSTATS
 * when on, nothing when off. Off, a root (or default) pfifo_bulk is locked
 * as pfifo is, and runs exactly the code it runs under a locked parent;
 * since 6.19 its senders then ride the core's defer list (an llist
 * push instead of the root lock, one CPU enqueueing the batch), which a
 * NOLOCK qdisc never gets. A module parameter and not a tc option: the
 * core decides from ops->static_flags in qdisc_alloc(), before ->init,
 * whether a qdisc gets per-CPU statistics, and its only way to turn NOLOCK
 * off (qdisc_clear_nolock(), for a graft under a locked parent) is private
 * to sch_api.c. A per-instance option would write sch->flags outside the
 * core and keep per-CPU statistics on a locked qdisc, a combination no
 * in-tree qdisc has; with the parameter every instance is one the core
 * itself makes. The default is lockless on every kernel (pfb_lockless).
 *
 * Bypass. Like pfifo_fast, the qdisc sets TCQ_F_CAN_BYPASS: a packet that
 * finds the qdisc idle and empty goes straight to the driver, without
 * enqueue and dequeue (__dev_xmit_skb()). A batch needs a backlog, and an
 * empty queue has none; the bypass saves the work of queueing one packet
 * that would leave alone anyway. On the lockless path "empty" is the
 * core's test, no MISSED or DRAINING bit, so the run protocol above is what
 * keeps a bypass from overtaking queued packets: every run that ends with
 * packets left sets MISSED (our reschedule, the quota, a requeue) or
 * DRAINING (a stopped queue; and ours while coalescing holds packets, or
 * when ->change lets held packets go), and only a dequeue that found the
 * queue empty clears them, as pfifo_fast_dequeue() does. The core retests
 * the bits under the run lock, which ->change and the holder of a batch
 * hold, so a sender that saw CAN_BYPASS before a change cannot pass a
 * packet queued or held before it. Locked (under a locked parent, or
 * with lockless=0) the core tests qdisc_qlen(), which the locked
 * statistics keep. A bypassed packet passes no code of ours; it is
 * counted by the core in the Sent counters, and the dump reports the
 * difference between those and what we dequeued as bypassed packets
 * (batches of one that the histogram does not count).
 *
 * Coalescing (coalesce_usecs, off by default). Without a backlog every
 * packet leaves alone, with its own doorbell. With coalescing the qdisc
 * holds a batch back, as interrupt moderation holds back an interrupt:
 * when the core asks for the first packet of a batch, fewer than
 * coalesce_pkts packets wait and the oldest has waited less than
 * coalesce_usecs, the first ->dequeue returns NULL and the qdisc's
 * watchdog is armed for the oldest packet's deadline. Every enqueue runs
 * the qdisc again, so the batch leaves as soon as coalesce_pkts packets
 * wait, or when the deadline passes, whichever comes first, and takes
 * every packet waiting with it (holding resumes once the queue ran empty):
 * no packet is held longer than coalesce_usecs plus the time it takes the
 * watchdog to run the qdisc. A packet is stamped with the time at enqueue
 * while coalescing is on, and with 0 while it is off (no clock read per
 * packet then, as pfifo reads none): a packet queued before coalescing was
 * switched on leaves at once, never with whatever the stack left in cb[].
 * The bypass is off meanwhile (it would send a packet past the held ones).
 * Traffic that waiting cannot help is not held: a batch whose first packet
 * came coalesce_usecs or more after the packet before it leaves at once (a
 * request and its response, the first packet after a pause), since
 * nothing is likely to join it in time, and so does every packet queued
 * behind it, in as many batches as the core makes. Only where the
 * qdisc decides batches (the root, or a child of mq or mqprio); under any
 * other parent the options are refused. A reset (device down, delete)
 * frees what is held and stops the watchdog.
 *
 * Order. The qdisc never reorders. Packets the driver hands back (a batch
 * cut by a queue stop, or NETDEV_TX_BUSY) wait in the core's requeue list
 * and leave one at a time before the qdisc is asked again. The 6.1 core
 * appends a requeued packet to that list (dev_requeue_skb()), so when a
 * driver returns NETDEV_TX_BUSY, or its queue is frozen, for the head of a
 * list of two or more, that packet leaves after the others; 6.12 puts it
 * back at the head. This is the core's, for every qdisc; the NOBQL path
 * makes such lists likelier, since its batches ignore BQL. A driver that
 * stops its queue before the ring is full, as drivers should, never
 * returns NETDEV_TX_BUSY and sees no reordering on either kernel.
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/atomic.h>
#include <linux/llist.h>
#include <linux/log2.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/dynamic_queue_limits.h>
#include <linux/u64_stats_sync.h>
#include <net/netlink.h>
#include <net/pkt_sched.h>
#include <net/sch_generic.h>
#include <linux/pkt_sched_pfifo_bulk.h>

/* Test builds only (make race-modules, for selftests/pfifo_bulk_wakeup.sh):
 * widen the few instructions between finding the queue empty and testing
 * MISSED, where a lost wakeup would hide, to PFB_TEST_RACE_DELAY_US.
 */
#ifdef PFB_TEST_RACE_DELAY_US
#include <linux/delay.h>
#define pfb_test_race_window()	udelay(PFB_TEST_RACE_DELAY_US)
MODULE_INFO(test_race_delay_us, __stringify(PFB_TEST_RACE_DELAY_US));
#else
#define pfb_test_race_window()	do { } while (0)
#endif

#define PFB_LIMIT_MAX		BIT(24)
#define PFB_BULK_BYTES_MAX	BIT(24)
#define PFB_BULK_PKTS_MAX	BIT(16)
#define PFB_COALESCE_USECS_MAX	10000000	/* 10 s */
#define PFB_COALESCE_PKTS_DFL	8
#define PFB_SLOW_BATCH		9	/* try_bulk_dequeue_skb_slow(): 1 + 8 */
#define PFB_BQL_IDLE_PKTS	256	/* sent without num_queued moving: no BQL */
#define PFB_HIST_BUCKETS	TCA_PFIFO_BULK_HIST_MAX	/* 1, 2, 3-4, ..., 65+ */

/* Lockless by default, also where the core has the defer list (6.19+):
 * chosen by packets per second, which a lockless root matched or
 * exceeded against a locked one on 7.3 in QEMU guests, with senders
 * taking turns and with senders in parallel, although it makes more
 * spin-lock calls where few packets bypass the queue (the core's failed
 * trylocks of the run lock in __dev_xmit_skb(), as for pfifo_fast). The
 * defer list may rank them otherwise on many cores; lockless=0 selects
 * the locked mode.
 */
#define PFB_LOCKLESS_DEFAULT	1

static bool pfb_lockless = PFB_LOCKLESS_DEFAULT;
module_param_named(lockless, pfb_lockless, bool, 0444);
MODULE_PARM_DESC(lockless,
		 "1: every pfifo_bulk is lockless (TCQ_F_NOLOCK, per-CPU statistics) as root or default qdisc, like pfifo_fast; 0: locked, like pfifo (the root lock, and the core's defer list since 6.19). Read at load only (default "
		 __stringify(PFB_LOCKLESS_DEFAULT) ")");

/* Why a held batch was let go. */
enum pfb_release {
	PFB_RELEASE_PKTS,
	PFB_RELEASE_TIMER,
	PFB_RELEASE_MAX,
};

enum pfb_end {
	PFB_END_BYTES,
	PFB_END_PKTS,
	PFB_END_BUDGET,
	PFB_END_EMPTY,
	PFB_END_MAX,
};

/* Written by the consumer only, read by the dumps without a lock. The
 * histogram is kept as "batches that reached the smallest size of bucket
 * k": counters that only grow, so that a reader never sees a batch leave
 * one bucket before it enters the next.
 */
struct pfb_stats {
	struct u64_stats_sync	syncp;
	u64_stats_t		batch_pkts;
	u64_stats_t		batch_bytes;
	u64_stats_t		reached[PFB_HIST_BUCKETS];
	u64_stats_t		end[PFB_END_MAX];
	u64_stats_t		resched;
	u64_stats_t		segs;	/* dequeued, counted as bstats counts */
	u64_stats_t		held;
	u64_stats_t		release[PFB_RELEASE_MAX];
	u64_stats_t		at_once;
	u64_stats_t		held_ns;
	u64_stats_t		held_ns_max;
};

/* What a packet carries through the queue: when it was enqueued, while
 * coalescing is on (0 otherwise: see pfb_enqueue()).
 */
struct pfb_skb_cb {
	u64	enqueue_ns;
};

struct pfb_sched_data {
	/* written by every enqueuing CPU */
	struct llist_head	in;		/* newest first */
	atomic_t		admitted;	/* packets ever admitted */

	/* written by the consumer once per packet and read by every enqueue
	 * (the limit check): alone on its line, so that the consumer's other
	 * writes do not take it away from the producers
	 */
	u32			removed ____cacheline_aligned_in_smp;

	/* the consumer's: the holder of the run lock, or of the root lock
	 * under a locked parent
	 */
	struct llist_node	*head ____cacheline_aligned_in_smp;
	u8	path;		/* enum tc_pfifo_bulk_mode; AUTO: none yet */
	bool	closed;		/* the last batch has ended */
	u32	b_pkts;		/* current batch */
	u32	b_bytes;
	u32	nq_seen;	/* BQL path: num_queued when the batch began */
	u32	nc_seen;	/* BQL path: num_completed when it began */
	u32	det_nq;		/* mode auto: num_queued when last seen moving */
	unsigned long	det_pkts;	/* and sent_pkts then */
	unsigned long	sent_pkts;	/* packets put in batches: one word,
					 * read by the dumps without a lock
					 */
	bool	holding;	/* coalescing: the oldest packet is held back */
	bool	draining;	/* coalescing: released, until the queue is empty */
	u64	last_ns;	/* enqueue time of the last packet sent */
	struct qdisc_watchdog watchdog;
	struct pfb_stats st;

	/* configuration: written by ->change with the consumer kept out */
	u32	bulk_bytes;
	u32	bulk_pkts;
	u32	coalesce_usecs;	/* 0: off */
	u32	coalesce_pkts;
	u8	mode;		/* requested: AUTO, BQL or NOBQL */
};

static struct pfb_skb_cb *pfb_skb_cb(struct sk_buff *skb)
{
	qdisc_cb_private_validate(skb, sizeof(struct pfb_skb_cb));
	return (struct pfb_skb_cb *)qdisc_skb_cb(skb)->data;
}

static u32 pfb_num_queued(const struct netdev_queue *txq)
{
#ifdef CONFIG_BQL
	return READ_ONCE(txq->dql.num_queued);
#else
	return 0;
#endif
}

static u32 pfb_num_completed(const struct netdev_queue *txq)
{
#ifdef CONFIG_BQL
	return READ_ONCE(txq->dql.num_completed);
#else
	return 0;
#endif
}

static int pfb_dql_avail(const struct netdev_queue *txq)
{
#ifdef CONFIG_BQL
	return dql_avail(&txq->dql);
#else
	return 0;
#endif
}

/* True when the core's dequeue_skb() runs this qdisc itself. The dumps
 * look at qdisc_sleeping, which stays set while the device is down.
 */
static bool pfb_runs_batches(const struct Qdisc *sch)
{
	return rcu_access_pointer(sch->dev_queue->qdisc) == sch;
}

/* One root qdisc shared by several txqs. */
static bool pfb_shared_root(const struct Qdisc *sch)
{
	return netif_is_multiqueue(qdisc_dev(sch)) &&
	       !(READ_ONCE(sch->flags) & TCQ_F_NOPARENT);
}

/* Keep the consumer out: the run lock on the lockless path, which
 * dev_reset_queue() also takes before the root lock, then the root lock.
 */
static void pfb_consumer_lock(struct Qdisc *sch)
	__acquires(&sch->seqlock) __acquires(qdisc_lock(sch))
{
	if (sch->flags & TCQ_F_NOLOCK)
		spin_lock_bh(&sch->seqlock);
	else
		__acquire(&sch->seqlock);
	sch_tree_lock(sch);
}

static void pfb_consumer_unlock(struct Qdisc *sch)
	__releases(qdisc_lock(sch)) __releases(&sch->seqlock)
{
	sch_tree_unlock(sch);
	if (!(sch->flags & TCQ_F_NOLOCK)) {
		__release(&sch->seqlock);
		return;
	}
	spin_unlock_bh(&sch->seqlock);
	/* As qdisc_run_end(): a CPU that enqueued while we held the run lock
	 * set MISSED and left its packet to the holder.
	 */
	smp_mb();
	if (test_bit(__QDISC_STATE_MISSED, &sch->state))
		__netif_schedule(sch);
}

/* Claim a place below the limit, without a lock. The queue length is
 * admitted - removed. A late view of removed makes the queue look longer
 * than it is, never shorter, so the limit holds; a late view of admitted
 * can make it look negative, and then the cmpxchg fails and reloads it.
 */
static bool pfb_admit(struct pfb_sched_data *q, u32 limit)
{
	int n = atomic_read(&q->admitted);

	do {
		s32 qlen = (u32)n - READ_ONCE(q->removed);

		if (qlen >= (s32)limit)
			return false;
	} while (!atomic_try_cmpxchg(&q->admitted, &n, (u32)n + 1));
	return true;
}

static u32 pfb_qlen(const struct pfb_sched_data *q)
{
	return (u32)atomic_read(&q->admitted) - q->removed;
}

static bool pfb_waiting(const struct pfb_sched_data *q)
{
	return q->head || !llist_empty(&q->in);
}

/* The oldest packet, left in place; consumer only. */
static struct sk_buff *pfb_oldest(struct pfb_sched_data *q)
{
	if (!q->head && !llist_empty(&q->in))
		q->head = llist_reverse_order(llist_del_all(&q->in));
	return q->head ? llist_entry(q->head, struct sk_buff, ll_node) : NULL;
}

/* Take the oldest packet off the queue; consumer only, no statistics. */
static struct sk_buff *pfb_pop(struct pfb_sched_data *q)
{
	struct sk_buff *skb = pfb_oldest(q);

	if (!skb)
		return NULL;
	q->head = q->head->next;
	skb_mark_not_on_list(skb);
	WRITE_ONCE(q->removed, q->removed + 1);
	return skb;
}

static int pfb_enqueue(struct sk_buff *skb, struct Qdisc *sch,
		       struct sk_buff **to_free)
{
	struct pfb_sched_data *q = qdisc_priv(sch);

	/* a tail drop, as pfifo's: a drop, not an overlimit */
	if (unlikely(!pfb_admit(q, READ_ONCE(sch->limit)))) {
		if (qdisc_is_percpu_stats(sch))
			return qdisc_drop_cpu(skb, sch, to_free);
		return qdisc_drop(skb, sch, to_free);
	}
	/* A time only while coalescing is on: pfifo reads no clock per
	 * packet, and neither do we without a reason. Every packet the core
	 * dequeues from us gets a stamp, never what the stack left in cb[] (a
	 * forwarded IPv6 packet leaves nhoff there: weeks ahead): 0 for one
	 * queued while coalescing was off (or by a CPU that read it off just
	 * before ->change switched it on), which pfb_hold() sends at once.
	 * Under a parent nothing reads it, and cb[] is the parent's too: sfb
	 * keeps its flow hashes there across our enqueue and dequeue.
	 */
	if (READ_ONCE(q->coalesce_usecs))
		pfb_skb_cb(skb)->enqueue_ns = ktime_get_ns();
	else if (pfb_runs_batches(sch))
		pfb_skb_cb(skb)->enqueue_ns = 0;
	/* counted before it is visible: the consumer may free it at once */
	qdisc_update_stats_at_enqueue(sch, qdisc_pkt_len(skb));
	llist_add(&skb->ll_node, &q->in);
	return NET_XMIT_SUCCESS;
}

/* The next packet for the core. Found empty, a lockless qdisc clears
 * MISSED and DRAINING and looks once more, as pfifo_fast_dequeue() does: a
 * CPU that enqueued while we ran and could not take the run lock set
 * MISSED after its llist_add(), so we either see its packet now or
 * qdisc_run_end() sees MISSED again and reschedules. Left set, MISSED
 * would reschedule an empty qdisc forever, and DRAINING would keep the
 * bypass off.
 */
static struct sk_buff *pfb_next(struct Qdisc *sch, struct pfb_sched_data *q)
{
	struct sk_buff *skb = pfb_pop(q);
	unsigned long state = 0;

	if (!skb) {
		pfb_test_race_window();
		state = READ_ONCE(sch->state);
	}
	if (state & QDISC_STATE_NON_EMPTY) {
		clear_bit(__QDISC_STATE_MISSED, &sch->state);
		clear_bit(__QDISC_STATE_DRAINING, &sch->state);
		/* the list is read again after the bit is clear */
		smp_mb__after_atomic();
		skb = pfb_pop(q);
	}
	if (skb) {
		u64_stats_update_begin(&q->st.syncp);
		u64_stats_add(&q->st.segs, skb_is_gso(skb) ?
			      skb_shinfo(skb)->gso_segs : 1);
		u64_stats_update_end(&q->st.syncp);
		/* ours before the Sent counters: pairs with the smp_rmb()
		 * in pfb_bypassed()
		 */
		smp_wmb();
		qdisc_update_stats_at_dequeue(sch, skb);
	}
	return skb;
}

static void pfb_stat_inc(struct pfb_sched_data *q, u64_stats_t *c)
{
	u64_stats_update_begin(&q->st.syncp);
	u64_stats_inc(c);
	u64_stats_update_end(&q->st.syncp);
}

/* NULL returned at the cap on the BQL path while packets may wait: make
 * sure the qdisc runs again, whether or not the core calls us again in
 * this run (see the top of the file). On the lockless path MISSED does it:
 * qdisc_run_end() reschedules when it finds the bit, and pfb_next() clears
 * it if this run empties the queue anyway. A packet that arrives after we
 * looked is the producer's to flag: it could not take the run lock, so it
 * sets MISSED itself. Counted as a request whether or not the core had
 * one pending already (a sender's MISSED, a NET_TX already raised).
 */
static void pfb_run_again(struct Qdisc *sch, struct pfb_sched_data *q)
{
	if (q->path != TC_PFIFO_BULK_MODE_BQL || !pfb_waiting(q))
		return;
	pfb_stat_inc(q, &q->st.resched);
	if (!(sch->flags & TCQ_F_NOLOCK))
		__netif_schedule(sch);
	else if (!test_bit(__QDISC_STATE_MISSED, &sch->state))
		set_bit(__QDISC_STATE_MISSED, &sch->state);
}

/* The path the next batch takes. Reads only, so that a dump can ask. */
static u8 pfb_path_for(const struct Qdisc *sch,
		       const struct pfb_sched_data *q)
{
	u8 mode = READ_ONCE(q->mode);

	if (pfb_shared_root(sch))
		return TC_PFIFO_BULK_MODE_NOBQL;
	if (mode != TC_PFIFO_BULK_MODE_AUTO)
		return mode;
	if (READ_ONCE(q->bulk_pkts) == 1)
		return TC_PFIFO_BULK_MODE_NOBQL;
	/* BQL is live while the driver's num_queued moves */
	if (pfb_num_queued(sch->dev_queue) != READ_ONCE(q->det_nq))
		return TC_PFIFO_BULK_MODE_BQL;
	if (READ_ONCE(q->path) == TC_PFIFO_BULK_MODE_BQL &&
	    READ_ONCE(q->sent_pkts) - READ_ONCE(q->det_pkts) <
	    PFB_BQL_IDLE_PKTS)
		return TC_PFIFO_BULK_MODE_BQL;
	return TC_PFIFO_BULK_MODE_NOBQL;
}

/* Pick the core's bulk path, and set our flag to match whatever it was.
 * Called at the start of a batch, before the core reads the flag.
 */
static void pfb_select_path(struct Qdisc *sch, struct pfb_sched_data *q)
{
	u32 nq = pfb_num_queued(sch->dev_queue);
	u8 path = pfb_path_for(sch, q);
	bool bql = path == TC_PFIFO_BULK_MODE_BQL;

	if (nq != q->det_nq ||
	    (bql && q->path != path)) {
		/* counted from here: packets sent without num_queued moving */
		WRITE_ONCE(q->det_nq, nq);
		WRITE_ONCE(q->det_pkts, q->sent_pkts);
	}
	WRITE_ONCE(q->path, path);
	/* Written only when it changes, and only by the consumer (run lock,
	 * or root lock when locked), like ->change's CAN_BYPASS: no other
	 * writer of a live txq qdisc's flags can lose it or be lost. Only
	 * the consumer reads ONETXQUEUE (dequeue_skb()); senders,
	 * net_tx_action() and dumps read other bits of the word without a
	 * lock (NOLOCK, CAN_BYPASS, CPUSTATS), which one aligned store
	 * leaves as they were. KCSAN reports a flip that meets such a read,
	 * unless KCSAN_PERMISSIVE (it ignores one-bit changes).
	 */
	if (!!(sch->flags & TCQ_F_ONETXQUEUE) != bql)
		WRITE_ONCE(sch->flags, sch->flags ^ TCQ_F_ONETXQUEUE);
}

/* Is this the first ->dequeue of a core batch? See the top of the file. */
static bool pfb_batch_starts(const struct Qdisc *sch,
			     const struct pfb_sched_data *q)
{
	const struct netdev_queue *txq = sch->dev_queue;

	if (q->closed)
		return true;
	if (q->path != TC_PFIFO_BULK_MODE_BQL)
		return false;
	return pfb_num_queued(txq) != q->nq_seen ||
	       (pfb_dql_avail(txq) <= 0 &&
		pfb_num_completed(txq) == q->nc_seen);
}

/* Why the batch must end before another packet, or -1 if it may grow. */
static int pfb_cap_reached(const struct pfb_sched_data *q)
{
	if (!q->b_pkts)
		return -1;
	if (q->bulk_pkts && q->b_pkts >= q->bulk_pkts)
		return PFB_END_PKTS;
	if (q->bulk_bytes && q->b_bytes >= q->bulk_bytes)
		return PFB_END_BYTES;
	return -1;
}

/* The batch ended; count why, once. */
static void pfb_batch_end(struct pfb_sched_data *q, int end)
{
	if (q->b_pkts && !q->closed) {
		u64_stats_update_begin(&q->st.syncp);
		u64_stats_inc(&q->st.end[end]);
		u64_stats_update_end(&q->st.syncp);
	}
	q->closed = true;
}

/* End a batch we did not see end: the core ended it (BQL, the quota, a
 * stopped queue), unless it had just reached our cap as well.
 */
static void pfb_batch_close(struct pfb_sched_data *q)
{
	int end = pfb_cap_reached(q);

	pfb_batch_end(q, end >= 0 ? end : PFB_END_BUDGET);
}

static void pfb_batch_start(struct Qdisc *sch, struct pfb_sched_data *q)
{
	pfb_batch_close(q);
	pfb_select_path(sch, q);
	q->nq_seen = pfb_num_queued(sch->dev_queue);
	q->nc_seen = pfb_num_completed(sch->dev_queue);
	q->b_pkts = 0;
	q->b_bytes = 0;
	q->closed = false;
}

/* The batch grows by one packet: keep the histogram current, so that the
 * statistics never miss a batch the core has not finished yet.
 */
static void pfb_account(struct pfb_sched_data *q, const struct sk_buff *skb)
{
	u32 n = ++q->b_pkts;

	q->b_bytes += skb->len;
	WRITE_ONCE(q->sent_pkts, q->sent_pkts + 1);
	u64_stats_update_begin(&q->st.syncp);
	u64_stats_inc(&q->st.batch_pkts);
	u64_stats_add(&q->st.batch_bytes, skb->len);
	/* sizes 1, 2, 3, 5, 9, 17, 33 and 65 enter a bucket */
	if (n == 1)
		u64_stats_inc(&q->st.reached[0]);
	else if (is_power_of_2(n - 1) && ilog2(n - 1) < PFB_HIST_BUCKETS - 1)
		u64_stats_inc(&q->st.reached[ilog2(n - 1) + 1]);
	u64_stats_update_end(&q->st.syncp);
}

/* The held batch leaves, and every packet waiting goes with it, in as many
 * batches as the caps make: count why, and how long its oldest packet
 * waited (the longest any of its packets waited).
 */
static void pfb_release(struct pfb_sched_data *q, int why, u64 waited)
{
	q->draining = true;
	if (!q->holding)
		return;
	q->holding = false;
	u64_stats_update_begin(&q->st.syncp);
	u64_stats_inc(&q->st.release[why]);
	/* u64_stats_add() takes an unsigned long: 4.29 s on 32-bit */
	u64_stats_set(&q->st.held_ns, u64_stats_read(&q->st.held_ns) + waited);
	if (waited > u64_stats_read(&q->st.held_ns_max))
		u64_stats_set(&q->st.held_ns_max, waited);
	u64_stats_update_end(&q->st.syncp);
}

/* Coalescing, at the start of a batch (see the top of the file): true to
 * hold the batch back, with the watchdog armed for the oldest packet's
 * deadline.
 */
static bool pfb_hold(struct Qdisc *sch, struct pfb_sched_data *q)
{
	u64 wait = (u64)q->coalesce_usecs * NSEC_PER_USEC;
	u32 pkts = min_not_zero(q->coalesce_pkts, q->bulk_pkts);
	struct sk_buff *skb;
	u64 now, ts;

	if (q->draining)
		return false;
	/* Left set, MISSED would reschedule a held qdisc at once. */
	if ((sch->flags & TCQ_F_NOLOCK) &&
	    test_bit(__QDISC_STATE_MISSED, &sch->state)) {
		clear_bit(__QDISC_STATE_MISSED, &sch->state);
		/* A sender that found the run lock taken set MISSED after
		 * its packet was on the list: we count that packet below,
		 * or qdisc_run_end() sees MISSED again and we look again.
		 */
		smp_mb__after_atomic();
	}
	skb = pfb_oldest(q);
	if (!skb)
		return false;
	/* queued while coalescing was off: no wait to keep, it leaves now
	 * with the rest (only a packet held since switching on is timed)
	 */
	if (!pfb_skb_cb(skb)->enqueue_ns) {
		q->draining = true;
		return false;
	}
	now = ktime_get_ns();
	/* stamped at enqueue, perhaps on another CPU: never ahead of now */
	ts = min(pfb_skb_cb(skb)->enqueue_ns, now);

	/* overdue first: a batch the timer should have released counts so */
	if (now - ts >= wait) {
		pfb_release(q, PFB_RELEASE_TIMER, now - ts);
		return false;
	}
	if (pfb_qlen(q) >= pkts) {
		pfb_release(q, PFB_RELEASE_PKTS, now - ts);
		return false;
	}
	if (!q->holding) {
		/* too sparse to wait for: nothing is likely to join it */
		if ((s64)(ts - q->last_ns) >= (s64)wait) {
			pfb_stat_inc(q, &q->st.at_once);
			/* and the rest of its burst with it, whatever batches
			 * the core cuts it into
			 */
			q->draining = true;
			return false;
		}
		q->holding = true;
		pfb_stat_inc(q, &q->st.held);
	}
	/* Held packets wait: no bypass past them, even once ->change
	 * switches coalescing off and CAN_BYPASS on again (the core retests
	 * the bit under the run lock, which we hold).
	 */
	if ((sch->flags & TCQ_F_NOLOCK) &&
	    !test_bit(__QDISC_STATE_DRAINING, &sch->state))
		set_bit(__QDISC_STATE_DRAINING, &sch->state);
	qdisc_watchdog_schedule_ns(&q->watchdog, ts + wait);
	return true;
}

static struct sk_buff *pfb_dequeue(struct Qdisc *sch)
{
	struct pfb_sched_data *q = qdisc_priv(sch);
	struct sk_buff *skb;
	int end;

	/* Locked, nothing waiting, no batch open: the look the core takes
	 * after every packet that bypassed a locked qdisc (__dev_xmit_skb()
	 * runs it once sch_direct_xmit() has sent the packet). Answered as
	 * cheaply as pfifo answers it: no batch starts, so no path to pick.
	 * Under the root lock the queue cannot fill meanwhile; lockless,
	 * pfb_next() must see the empty queue to clear MISSED and DRAINING.
	 */
	if (!(sch->flags & TCQ_F_NOLOCK) && q->closed && !pfb_waiting(q)) {
		q->draining = false;
		return NULL;
	}

	/* a parent dequeues us: plain pfifo */
	if (unlikely(!pfb_runs_batches(sch)))
		return pfb_next(sch, q);

	if (pfb_batch_starts(sch, q))
		pfb_batch_start(sch, q);

	/* At the cap the batch ends, whether or not packets wait now: one
	 * may arrive before we would look.
	 */
	end = pfb_cap_reached(q);
	if (end >= 0) {
		pfb_batch_end(q, end);
		pfb_run_again(sch, q);
		return NULL;
	}

	if (!q->b_pkts && q->coalesce_usecs && pfb_hold(sch, q)) {
		/* the batch ends before it began: the next call starts one */
		q->closed = true;
		return NULL;
	}

	skb = pfb_next(sch, q);
	if (!skb) {
		pfb_batch_end(q, PFB_END_EMPTY);
		q->draining = false;
		return NULL;
	}
	q->last_ns = pfb_skb_cb(skb)->enqueue_ns;
	pfb_account(q, skb);
	/* the core's slow loop takes no more */
	if (q->path != TC_PFIFO_BULK_MODE_BQL && q->b_pkts >= PFB_SLOW_BATCH)
		pfb_batch_close(q);
	return skb;
}

static struct sk_buff *pfb_peek(struct Qdisc *sch)
{
	return pfb_oldest(qdisc_priv(sch));
}

/* Called with the consumer kept out (dev_reset_queue(), a parent's root
 * lock, or before destroy).
 */
static void pfb_reset(struct Qdisc *sch)
{
	struct pfb_sched_data *q = qdisc_priv(sch);
	struct sk_buff *skb;
	int cpu;

	while ((skb = pfb_pop(q)))
		kfree_skb(skb);

	if (qdisc_is_percpu_stats(sch)) {
		for_each_possible_cpu(cpu) {
			struct gnet_stats_queue *qs;

			qs = per_cpu_ptr(sch->cpu_qstats, cpu);
			qs->backlog = 0;
			qs->qlen = 0;
		}
	}
	/* with BH off, as in the datapath: a 7.x graft deactivates without
	 * the reset under the root lock, and __qdisc_destroy() resets from
	 * process context, where a 32-bit u64_stats writer is preemptible
	 */
	local_bh_disable();
	pfb_batch_close(q);
	local_bh_enable();
	/* nothing is held any more: the watchdog has nothing to run */
	q->holding = false;
	q->draining = false;
	qdisc_watchdog_cancel(&q->watchdog);
}

static void pfb_destroy(struct Qdisc *sch)
{
	struct pfb_sched_data *q = qdisc_priv(sch);

	qdisc_watchdog_cancel(&q->watchdog);
}

static struct netlink_range_validation pfb_limit_range = {
	.min = 1,
	.max = PFB_LIMIT_MAX,
};

static struct netlink_range_validation pfb_bulk_bytes_range = {
	.max = PFB_BULK_BYTES_MAX,
};

static struct netlink_range_validation pfb_bulk_pkts_range = {
	.max = PFB_BULK_PKTS_MAX,
};

static struct netlink_range_validation pfb_coalesce_usecs_range = {
	.max = PFB_COALESCE_USECS_MAX,
};

static struct netlink_range_validation pfb_coalesce_pkts_range = {
	.min = 1,
	.max = PFB_BULK_PKTS_MAX,
};

static const struct nla_policy pfb_policy[TCA_PFIFO_BULK_MAX + 1] = {
	[TCA_PFIFO_BULK_LIMIT]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&pfb_limit_range),
	[TCA_PFIFO_BULK_BULK_BYTES] = NLA_POLICY_FULL_RANGE(NLA_U32,
							&pfb_bulk_bytes_range),
	[TCA_PFIFO_BULK_BULK_PKTS] = NLA_POLICY_FULL_RANGE(NLA_U32,
							&pfb_bulk_pkts_range),
	[TCA_PFIFO_BULK_MODE]	= NLA_POLICY_MAX(NLA_U8,
						 TC_PFIFO_BULK_MODE_NOBQL),
	[TCA_PFIFO_BULK_EFFECTIVE_MODE] = { .type = NLA_REJECT },
	[TCA_PFIFO_BULK_LOCKLESS] = { .type = NLA_REJECT },
	[TCA_PFIFO_BULK_COALESCE_USECS] = NLA_POLICY_FULL_RANGE(NLA_U32,
						&pfb_coalesce_usecs_range),
	[TCA_PFIFO_BULK_COALESCE_PKTS] = NLA_POLICY_FULL_RANGE(NLA_U32,
						&pfb_coalesce_pkts_range),
};

/* The core's policy messages ("integer out of range") do not say which
 * option or which range; replace them, keeping the attribute and policy.
 * Only for attributes inside the nest: a message about the nest itself
 * ("NLA_F_NESTED is missing") stays.
 */
static void pfb_explain(const struct nlattr *opt,
			struct netlink_ext_ack *extack)
{
	const struct nlattr *bad = extack ? extack->bad_attr : NULL;
	const struct nla_policy *pol = extack ? extack->policy : NULL;

	if ((const void *)bad < nla_data(opt) ||
	    (const void *)bad >= nla_data(opt) + nla_len(opt))
		return;
	switch (nla_type(bad)) {
	case TCA_PFIFO_BULK_LIMIT:
		NL_SET_ERR_MSG_ATTR_POL(extack, bad, pol,
					"pfifo_bulk: TCA_PFIFO_BULK_LIMIT (limit) must be a u32 in 1..16777216 packets");
		break;
	case TCA_PFIFO_BULK_BULK_BYTES:
		NL_SET_ERR_MSG_ATTR_POL(extack, bad, pol,
					"pfifo_bulk: TCA_PFIFO_BULK_BULK_BYTES (bulk_bytes) must be a u32 in 0..16777216 bytes, 0 = no cap");
		break;
	case TCA_PFIFO_BULK_BULK_PKTS:
		NL_SET_ERR_MSG_ATTR_POL(extack, bad, pol,
					"pfifo_bulk: TCA_PFIFO_BULK_BULK_PKTS (bulk_pkts) must be a u32 in 0..65536 packets, 0 = no cap, 1 = bulk off");
		break;
	case TCA_PFIFO_BULK_MODE:
		NL_SET_ERR_MSG_ATTR_POL(extack, bad, pol,
					"pfifo_bulk: TCA_PFIFO_BULK_MODE (mode) must be a u8 in 0..2 (auto, bql, nobql)");
		break;
	case TCA_PFIFO_BULK_EFFECTIVE_MODE:
		NL_SET_ERR_MSG_ATTR_POL(extack, bad, pol,
					"pfifo_bulk: TCA_PFIFO_BULK_EFFECTIVE_MODE is read-only (dump only)");
		break;
	case TCA_PFIFO_BULK_LOCKLESS:
		NL_SET_ERR_MSG_ATTR_POL(extack, bad, pol,
					"pfifo_bulk: TCA_PFIFO_BULK_LOCKLESS is read-only (dump only)");
		break;
	case TCA_PFIFO_BULK_COALESCE_USECS:
		NL_SET_ERR_MSG_ATTR_POL(extack, bad, pol,
					"pfifo_bulk: TCA_PFIFO_BULK_COALESCE_USECS (coalesce_usecs) must be a u32 in 0..10000000 microseconds, 0 = off");
		break;
	case TCA_PFIFO_BULK_COALESCE_PKTS:
		NL_SET_ERR_MSG_ATTR_POL(extack, bad, pol,
					"pfifo_bulk: TCA_PFIFO_BULK_COALESCE_PKTS (coalesce_pkts) must be a u32 in 1..65536 packets");
		break;
	default:
		NL_SET_ERR_MSG_ATTR_POL(extack, bad, pol,
					"pfifo_bulk: unknown attribute in TCA_OPTIONS (valid: types 1..4, 7 and 8: TCA_PFIFO_BULK_LIMIT..MODE, _COALESCE_USECS, _COALESCE_PKTS)");
		break;
	}
}

/* A packet dropped from the queue by a smaller limit. */
static void pfb_trimmed(struct Qdisc *sch, const struct sk_buff *skb)
{
	if (qdisc_is_percpu_stats(sch)) {
		qdisc_qstats_cpu_backlog_dec(sch, skb);
		qdisc_qstats_cpu_qlen_dec(sch);
		qdisc_qstats_cpu_drop(sch);
	} else {
		qdisc_qstats_backlog_dec(sch, skb);
		sch->q.qlen--;
		qdisc_qstats_drop(sch);
	}
}

/* Will the core dequeue this qdisc itself? At ->init it is not attached
 * yet, so ask where it goes: the root, or a child of mq, mqprio or an
 * offloaded htb (TCQ_F_MQROOT: one child per txq).
 */
static bool pfb_txq_qdisc(const struct Qdisc *sch)
{
	const struct Qdisc *root = rtnl_dereference(qdisc_dev(sch)->qdisc);

	return sch->parent == TC_H_ROOT ||
	       (root && (root->flags & TCQ_F_MQROOT) &&
		TC_H_MAJ(sch->parent) == root->handle);
}

static u32 pfb_opt_u32(struct nlattr **tb, int type, u32 now)
{
	return tb[type] ? nla_get_u32(tb[type]) : now;
}

static int pfb_change(struct Qdisc *sch, struct nlattr *opt,
		      struct netlink_ext_ack *extack)
{
	struct pfb_sched_data *q = qdisc_priv(sch);
	struct nlattr *tb[TCA_PFIFO_BULK_MAX + 1];
	unsigned int dropped = 0, dropped_bytes = 0;
	u32 limit, bulk_bytes, bulk_pkts, co_usecs, co_pkts;
	bool waiting;
	u8 mode;
	int err;

	if (!opt) {
		NL_SET_ERR_MSG(extack, "pfifo_bulk: change needs TCA_OPTIONS");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, TCA_PFIFO_BULK_MAX, opt, pfb_policy, extack);
	if (err) {
		pfb_explain(opt, extack);
		return err;
	}

	limit = pfb_opt_u32(tb, TCA_PFIFO_BULK_LIMIT, READ_ONCE(sch->limit));
	bulk_bytes = pfb_opt_u32(tb, TCA_PFIFO_BULK_BULK_BYTES, q->bulk_bytes);
	bulk_pkts = pfb_opt_u32(tb, TCA_PFIFO_BULK_BULK_PKTS, q->bulk_pkts);
	co_usecs = pfb_opt_u32(tb, TCA_PFIFO_BULK_COALESCE_USECS,
			       q->coalesce_usecs);
	co_pkts = pfb_opt_u32(tb, TCA_PFIFO_BULK_COALESCE_PKTS,
			      q->coalesce_pkts);
	mode = tb[TCA_PFIFO_BULK_MODE] ?
		nla_get_u8(tb[TCA_PFIFO_BULK_MODE]) : q->mode;

	/* a parent that dequeues us decides when packets leave, not us */
	if (co_usecs && !pfb_txq_qdisc(sch)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_PFIFO_BULK_COALESCE_USECS] ?:
				    opt,
				    "pfifo_bulk: coalesce_usecs needs a qdisc the core dequeues itself: the root, or a child of mq, mqprio or an offloaded htb");
		return -EOPNOTSUPP;
	}

	/* everything is valid from here: apply it all at once */
	pfb_consumer_lock(sch);
	/* the next batch starts afresh, on the path the new options pick */
	pfb_batch_close(q);
	WRITE_ONCE(sch->limit, limit);
	WRITE_ONCE(q->bulk_bytes, bulk_bytes);
	WRITE_ONCE(q->bulk_pkts, bulk_pkts);
	WRITE_ONCE(q->mode, mode);
	WRITE_ONCE(q->coalesce_usecs, co_usecs);
	WRITE_ONCE(q->coalesce_pkts, co_pkts);
	if (!co_usecs)
		q->holding = false;
	/* Packets waiting now must leave before any bypass: the core retests
	 * DRAINING under the run lock, which we hold, and the first dequeue
	 * that finds the queue empty clears it.
	 */
	if ((sch->flags & TCQ_F_NOLOCK) && pfb_waiting(q))
		set_bit(__QDISC_STATE_DRAINING, &sch->state);
	/* a bypassed packet would overtake the held ones */
	if (!!(sch->flags & TCQ_F_CAN_BYPASS) != !co_usecs)
		WRITE_ONCE(sch->flags, sch->flags ^ TCQ_F_CAN_BYPASS);

	/* A smaller limit drops from the head, as pfifo_head_drop does.
	 * A packet admitted but not yet on the list is not seen here.
	 */
	while (pfb_qlen(q) > limit) {
		struct sk_buff *skb = pfb_pop(q);

		if (!skb)
			break;
		dropped++;
		dropped_bytes += qdisc_pkt_len(skb);
		pfb_trimmed(sch, skb);
		rtnl_kfree_skbs(skb, skb);
	}
	if (dropped)
		qdisc_tree_reduce_backlog(sch, dropped, dropped_bytes);
	/* held packets may leave now (new coalescing options); only a qdisc
	 * the core runs itself holds any (a parent's child must not be run
	 * behind the parent's back)
	 */
	waiting = pfb_waiting(q) && pfb_runs_batches(sch);
	pfb_consumer_unlock(sch);
	if (waiting)
		__netif_schedule(sch);
	return 0;
}

static int pfb_init(struct Qdisc *sch, struct nlattr *opt,
		    struct netlink_ext_ack *extack)
{
	struct pfb_sched_data *q = qdisc_priv(sch);
	u32 limit = qdisc_dev(sch)->tx_queue_len;
	int err;

	/* first: ->destroy, which stops it, also runs when ->init fails */
	qdisc_watchdog_init(&q->watchdog, sch);
	WRITE_ONCE(sch->limit, clamp_t(u32, limit, 1, PFB_LIMIT_MAX));
	u64_stats_init(&q->st.syncp);
	/* an idle, empty qdisc lets the core send at once (see the top) */
	sch->flags |= TCQ_F_CAN_BYPASS;
	q->closed = true;
	q->coalesce_pkts = PFB_COALESCE_PKTS_DFL;
	/* the first packet comes after a pause as long as any window */
	q->last_ns = ktime_get_ns() - (u64)PFB_COALESCE_USECS_MAX * NSEC_PER_USEC;

	if (opt) {
		err = pfb_change(sch, opt, extack);
		if (err)
			return err;
	}

	if (sch->parent == TC_H_ROOT && pfb_shared_root(sch))
		NL_SET_ERR_MSG(extack,
			       "pfifo_bulk: root of a multiqueue device: NOBQL path (at most 9 per batch, BQL ignored); prefer mq with pfifo_bulk children");
	return 0;
}

static int pfb_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	struct pfb_sched_data *q = qdisc_priv(sch);
	u8 path = TC_PFIFO_BULK_MODE_NONE;
	struct nlattr *opts;

	/* what the next batch runs on; a path is chosen by the datapath */
	if (rcu_access_pointer(sch->dev_queue->qdisc_sleeping) == sch)
		path = pfb_path_for(sch, q);

	opts = nla_nest_start_noflag(skb, TCA_OPTIONS);
	if (!opts)
		return -EMSGSIZE;
	if (nla_put_u32(skb, TCA_PFIFO_BULK_LIMIT, READ_ONCE(sch->limit)) ||
	    nla_put_u32(skb, TCA_PFIFO_BULK_BULK_BYTES,
			READ_ONCE(q->bulk_bytes)) ||
	    nla_put_u32(skb, TCA_PFIFO_BULK_BULK_PKTS,
			READ_ONCE(q->bulk_pkts)) ||
	    nla_put_u8(skb, TCA_PFIFO_BULK_MODE, READ_ONCE(q->mode)) ||
	    nla_put_u8(skb, TCA_PFIFO_BULK_EFFECTIVE_MODE, path) ||
	    nla_put_u8(skb, TCA_PFIFO_BULK_LOCKLESS,
		       !!(READ_ONCE(sch->flags) & TCQ_F_NOLOCK)) ||
	    nla_put_u32(skb, TCA_PFIFO_BULK_COALESCE_USECS,
			READ_ONCE(q->coalesce_usecs)) ||
	    nla_put_u32(skb, TCA_PFIFO_BULK_COALESCE_PKTS,
			READ_ONCE(q->coalesce_pkts)))
		goto nla_put_failure;
	return nla_nest_end(skb, opts);

nla_put_failure:
	nla_nest_cancel(skb, opts);
	return -EMSGSIZE;
}

static int pfb_put_u64(struct sk_buff *skb, int type, u64 val)
{
	return nla_put_u64_64bit(skb, type, val, TCA_PFIFO_BULK_XSTATS_PAD);
}

/* Packets the core sent without queueing them: what the Sent counters
 * count beyond what we dequeued. A dequeue adds to our count before it
 * adds to Sent, and we read Sent first: every dequeue in the Sent we read
 * is in the count we read after it, so the difference is never more than
 * the truth; it is exact while no packet moves, and may be a few packets
 * short while they do (a later dump can then report a few more). A dump
 * only reads (q is const): nothing is kept between dumps.
 */
static u64 pfb_bypassed(struct Qdisc *sch, const struct pfb_sched_data *q)
{
	struct gnet_stats_basic_sync sent;
	unsigned int start;
	u64 pkts, segs;

	gnet_stats_basic_sync_init(&sent);
	gnet_stats_add_basic(&sent, qdisc_is_percpu_stats(sch) ?
			     sch->cpu_bstats : NULL, &sch->bstats, true);
	pkts = u64_stats_read(&sent.packets);
	/* Sent before ours: pairs with the smp_wmb() in pfb_next() */
	smp_rmb();
	do {
		start = u64_stats_fetch_begin(&q->st.syncp);
		segs = u64_stats_read(&q->st.segs);
	} while (u64_stats_fetch_retry(&q->st.syncp, start));
	return pkts > segs ? pkts - segs : 0;
}

/* A consistent copy of the consumer's statistics, taken without a lock. */
struct pfb_snapshot {
	u64	batch_pkts;
	u64	batch_bytes;
	u64	reached[PFB_HIST_BUCKETS];
	u64	end[PFB_END_MAX];
	u64	resched;
	u64	held;
	u64	release[PFB_RELEASE_MAX];
	u64	at_once;
	u64	held_ns;
	u64	held_ns_max;
};

static void pfb_read_stats(const struct pfb_stats *st, struct pfb_snapshot *s)
{
	unsigned int start;
	int i;

	do {
		start = u64_stats_fetch_begin(&st->syncp);
		s->batch_pkts = u64_stats_read(&st->batch_pkts);
		s->batch_bytes = u64_stats_read(&st->batch_bytes);
		/* largest first: on 64-bit the reads are not a snapshot, and
		 * a batch enters bucket k before it can reach k + 1
		 */
		for (i = PFB_HIST_BUCKETS - 1; i >= 0; i--)
			s->reached[i] = u64_stats_read(&st->reached[i]);
		for (i = 0; i < PFB_END_MAX; i++)
			s->end[i] = u64_stats_read(&st->end[i]);
		s->resched = u64_stats_read(&st->resched);
		s->held = u64_stats_read(&st->held);
		for (i = 0; i < PFB_RELEASE_MAX; i++)
			s->release[i] = u64_stats_read(&st->release[i]);
		s->at_once = u64_stats_read(&st->at_once);
		s->held_ns = u64_stats_read(&st->held_ns);
		s->held_ns_max = u64_stats_read(&st->held_ns_max);
	} while (u64_stats_fetch_retry(&st->syncp, start));
}

static int pfb_dump_stats(struct Qdisc *sch, struct gnet_dump *d)
{
	/* const: a dump reads, and keeps nothing between dumps */
	const struct pfb_sched_data *q = qdisc_priv(sch);
	struct nlattr *xstats, *hist;
	struct pfb_snapshot s;
	int i;

	pfb_read_stats(&q->st, &s);

	xstats = nla_nest_start_noflag(d->skb, TCA_STATS_APP);
	if (!xstats)
		return -1;
	if (pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_BATCHES, s.reached[0]) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_BATCH_PKTS,
			s.batch_pkts) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_BATCH_BYTES,
			s.batch_bytes))
		goto nla_put_failure;

	hist = nla_nest_start_noflag(d->skb, TCA_PFIFO_BULK_XSTATS_HIST);
	if (!hist)
		goto nla_put_failure;
	for (i = 0; i < PFB_HIST_BUCKETS; i++) {
		u64 next = i + 1 < PFB_HIST_BUCKETS ? s.reached[i + 1] : 0;
		u64 n = s.reached[i] > next ? s.reached[i] - next : 0;

		if (pfb_put_u64(d->skb, TCA_PFIFO_BULK_HIST_1 + i, n))
			goto nla_put_failure;
	}
	nla_nest_end(d->skb, hist);

	if (pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_END_BYTES,
			s.end[PFB_END_BYTES]) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_END_PKTS,
			s.end[PFB_END_PKTS]) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_END_BUDGET,
			s.end[PFB_END_BUDGET]) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_END_EMPTY,
			s.end[PFB_END_EMPTY]) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_RESCHEDULES, s.resched) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_BYPASSED,
			pfb_bypassed(sch, q)) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_HELD, s.held) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_RELEASE_PKTS,
			s.release[PFB_RELEASE_PKTS]) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_RELEASE_TIMER,
			s.release[PFB_RELEASE_TIMER]) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_SENT_AT_ONCE,
			s.at_once) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_HELD_NS, s.held_ns) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_HELD_NS_MAX,
			s.held_ns_max))
		goto nla_put_failure;
	return nla_nest_end(d->skb, xstats);

nla_put_failure:
	nla_nest_cancel(d->skb, xstats);
	return -1;
}

static struct Qdisc_ops pfifo_bulk_qdisc_ops __read_mostly = {
	.id		= "pfifo_bulk",
	.priv_size	= sizeof(struct pfb_sched_data),
	.enqueue	= pfb_enqueue,
	.dequeue	= pfb_dequeue,
	.peek		= pfb_peek,
	.init		= pfb_init,
	.reset		= pfb_reset,
	.destroy	= pfb_destroy,
	.change		= pfb_change,
	.dump		= pfb_dump,
	.dump_stats	= pfb_dump_stats,
	.owner		= THIS_MODULE,	/* .static_flags: set at load */
};

static int __init pfifo_bulk_module_init(void)
{
	/* before any instance exists: qdisc_alloc() reads them */
	pfifo_bulk_qdisc_ops.static_flags = pfb_lockless ?
		TCQ_F_NOLOCK | TCQ_F_CPUSTATS : 0;
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
