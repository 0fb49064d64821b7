// SPDX-License-Identifier: GPL-2.0
/*
 * pfifo_bulk: a packet FIFO that controls the xmit_more batch.
 *
 * A tail-drop packet FIFO, like pfifo, that also decides how many packets
 * the core hands to the driver in one dev_hard_start_xmit() call: the batch
 * ends at the smallest of what BQL allows, bulk_bytes and bulk_pkts (0 = no
 * own cap). Every batch is counted in the extended statistics.
 *
 * The core builds the batch, not the qdisc: dequeue_skb() calls ->dequeue
 * once, then again and again while its own budget lasts. The only ways a
 * qdisc can shape that loop are returning NULL, and its own
 * TCQ_F_ONETXQUEUE flag, which picks one of the core's two bulk loops:
 *
 * BQL path (flag set): try_bulk_dequeue_skb() keeps calling while
 *   dql_avail() bytes remain (and the __qdisc_run() quota lasts). We end a
 *   batch at our cap by returning NULL. NULL is only safe inside the loop:
 *   on the first call of a dequeue_skb() it ends __qdisc_run() with a
 *   backlog. The loop does not tell us which call is the first, so we
 *   watch txq->dql.num_queued: it cannot move while the core collects a
 *   batch (the driver has not seen it yet), and it does move between two
 *   batches of a BQL driver. When the previous batch put nothing into the
 *   driver (dropped by validation, requeued), the signal fails; therefore
 *   every NULL returned with packets waiting also calls __netif_schedule(),
 *   the call the core's own requeue path makes: the qdisc runs again, so
 *   it never stalls. The cost is at most one NET_TX softirq per
 *   __qdisc_run() that capped a batch (the SCHED bit makes repeats free).
 *
 * NOBQL path (flag clear): try_bulk_dequeue_skb_slow() takes up to 8 more
 *   packets (9 in all) and ignores BQL, bytes and the quota. A batch ends
 *   only when we return NULL or after the 9th packet, so we know exactly
 *   where a batch starts and can return NULL at our cap without any
 *   reschedule. This is how a driver without BQL, where the BQL path always
 *   gives batches of 1, still gets batches carrying xmit_more. Trade-offs:
 *   at most 9 packets per batch; BQL, if any, does not shorten a batch (the
 *   driver may stop the queue mid-batch: dev_hard_start_xmit() then hands
 *   the rest back and the core requeues it, visible as requeues); the
 *   core's early "queue stopped" check is skipped, so each stop episode
 *   costs one dequeue and one requeue; the quota of 64 per __qdisc_run()
 *   may be overshot by 8.
 *
 * Mode auto picks the BQL path while the driver's num_queued moves (BQL
 * live) and the NOBQL path otherwise; with bulk_pkts 1 it always takes the
 * NOBQL path, where a batch of one needs no reschedule. Modes bql and nobql
 * force a path. A path changes only on the first ->dequeue of a batch
 * (before the core looks at the flag) or in ->change with the dequeuer
 * kept out, never inside the core's loop.
 *
 * Roles. The batch logic runs only when the core dequeues this qdisc
 * itself (it is the txq's qdisc: root of a single-queue device, or a child
 * of mq/mqprio). As a child of a classful qdisc (htb, prio, ...) the
 * parent calls ->dequeue, NULL would mean "empty", so the qdisc is a plain
 * pfifo there: no caps, no NULL while packets wait. As root of a
 * multiqueue device one qdisc serves all txqs; the BQL path would mix
 * txqs in a batch, so the NOBQL path is forced, and since the core may
 * park a packet of another txq between batches the boundaries are no
 * longer exact: NULL at a cap then reschedules as on the BQL path. A
 * warning says so; mq with pfifo_bulk children is the better setup.
 *
 * Lockless. The qdisc is TCQ_F_NOLOCK, like pfifo_fast: the core takes no
 * root lock around ->enqueue or ->dequeue. Enqueue takes no lock at all:
 * a slot below the limit is claimed with one cmpxchg on a counter, the
 * packet goes onto a lock-free list (llist) with another, and the order of
 * successful llist_add()s is the FIFO order. There is one consumer, the CPU
 * that holds the qdisc's run lock (sch->seqlock) in __qdisc_run(); it takes
 * the whole list with one xchg, reverses it into a private FIFO and hands
 * out packets from there. Statistics are per CPU (TCQ_F_CPUSTATS); the
 * batch statistics are the consumer's own. The run protocol is the core's
 * (qdisc_run_begin/end with MISSED); the qdisc's part is to clear MISSED
 * and DRAINING and look again when it finds itself empty, as
 * pfifo_fast_dequeue() does. ->change and the dumps keep the consumer out
 * by taking the run lock, and then reschedule as qdisc_run_end() does.
 * Grafted under a locked parent the core clears TCQ_F_NOLOCK and the
 * per-CPU statistics; the same code then runs under the root lock.
 *
 * No TCQ_F_CAN_BYPASS: a bypassed packet goes out alone and unseen.
 * Packet order is never changed.
 *
 * Netlink: TCA_OPTIONS is parsed strictly (unknown or malformed attributes
 * are rejected), whether or not the nest carries NLA_F_NESTED, because
 * iproute2's addattr_nest() does not set it. Every value is checked before
 * anything is applied; a rejected change changes nothing.
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
#include <net/netlink.h>
#include <net/pkt_sched.h>
#include <net/sch_generic.h>
#include <linux/pkt_sched_pfifo_bulk.h>

#define PFB_LIMIT_MAX		BIT(24)
#define PFB_BULK_BYTES_MAX	BIT(24)
#define PFB_BULK_PKTS_MAX	BIT(16)
#define PFB_SLOW_BATCH		9	/* try_bulk_dequeue_skb_slow(): 1 + 8 */
#define PFB_BQL_IDLE_PKTS	256	/* sent without num_queued moving: no BQL */

enum pfb_end {
	PFB_END_BYTES,
	PFB_END_PKTS,
	PFB_END_BUDGET,
	PFB_END_EMPTY,
	PFB_END_MAX,
};

struct pfb_stats {
	u64	batches;
	u64	batch_pkts;
	u64	batch_bytes;
	u64	hist[TC_PFIFO_BULK_HIST_BUCKETS];
	u64	end[PFB_END_MAX];
	u64	resched;
};

struct pfb_sched_data {
	/* written by every enqueuing CPU */
	struct llist_head	in;		/* newest first */
	atomic_t		admitted;	/* packets ever admitted */

	/* the consumer's, on their own cache line */
	u32			removed ____cacheline_aligned_in_smp;
	struct llist_node	*head;		/* oldest first, taken from in */
	/* configuration, written with the consumer kept out */
	u32	bulk_bytes;
	u32	bulk_pkts;
	u8	mode;		/* enum tc_pfifo_bulk_mode, requested */
	/* path in use: TC_PFIFO_BULK_MODE_BQL/NOBQL; AUTO = not chosen yet */
	u8	path;
	bool	exact;		/* NOBQL batch boundaries are exact */
	bool	closed;		/* BQL path: we ended the last batch */
	/* current batch */
	u32	b_pkts;
	u32	b_bytes;
	u32	nq_seen;	/* BQL path: num_queued when it began */
	/* BQL detection for mode auto */
	u32	det_nq;
	u64	det_pkts;
	struct pfb_stats st;
};

static u32 pfb_num_queued(const struct netdev_queue *txq)
{
#ifdef CONFIG_BQL
	return READ_ONCE(txq->dql.num_queued);
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

/* True when the core's dequeue_skb() runs this qdisc itself. */
static bool pfb_runs_batches(const struct Qdisc *sch)
{
	return rcu_access_pointer(sch->dev_queue->qdisc) == sch;
}

/* One root qdisc shared by several txqs. */
static bool pfb_shared_root(const struct Qdisc *sch)
{
	return netif_is_multiqueue(qdisc_dev(sch)) &&
	       !(sch->flags & TCQ_F_NOPARENT);
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

	if (unlikely(!pfb_admit(q, READ_ONCE(sch->limit)))) {
		if (qdisc_is_percpu_stats(sch)) {
			this_cpu_inc(sch->cpu_qstats->overlimits);
			return qdisc_drop_cpu(skb, sch, to_free);
		}
		qdisc_qstats_overlimit(sch);
		return qdisc_drop(skb, sch, to_free);
	}
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
 * would reschedule an empty qdisc forever.
 */
static struct sk_buff *pfb_next(struct Qdisc *sch, struct pfb_sched_data *q)
{
	struct sk_buff *skb = pfb_pop(q);

	if (!skb && (READ_ONCE(sch->state) & QDISC_STATE_NON_EMPTY)) {
		clear_bit(__QDISC_STATE_MISSED, &sch->state);
		clear_bit(__QDISC_STATE_DRAINING, &sch->state);
		/* the list is read again after the bits are clear */
		smp_mb__after_atomic();
		skb = pfb_pop(q);
	}
	if (skb)
		qdisc_update_stats_at_dequeue(sch, skb);
	return skb;
}

static void pfb_batch_reset(struct pfb_sched_data *q)
{
	q->b_pkts = 0;
	q->b_bytes = 0;
	q->closed = true;
}

static bool pfb_bql_live(struct pfb_sched_data *q)
{
	return q->path == TC_PFIFO_BULK_MODE_BQL &&
	       q->st.batch_pkts - q->det_pkts < PFB_BQL_IDLE_PKTS;
}

/* Pick the core's bulk path. Called between two batches, consumer only. */
static void pfb_select_path(struct Qdisc *sch, struct pfb_sched_data *q)
{
	u32 nq = pfb_num_queued(sch->dev_queue);
	bool shared = pfb_shared_root(sch);
	u8 path;

	if (shared) {
		path = TC_PFIFO_BULK_MODE_NOBQL;
	} else if (q->mode != TC_PFIFO_BULK_MODE_AUTO) {
		path = q->mode;
	} else if (q->bulk_pkts == 1) {
		path = TC_PFIFO_BULK_MODE_NOBQL;
	} else if (nq != q->det_nq) {
		q->det_nq = nq;
		q->det_pkts = q->st.batch_pkts;
		path = TC_PFIFO_BULK_MODE_BQL;
	} else {
		path = pfb_bql_live(q) ? TC_PFIFO_BULK_MODE_BQL :
					 TC_PFIFO_BULK_MODE_NOBQL;
	}

	q->exact = !shared;
	if (path == q->path)
		return;
	if (path == TC_PFIFO_BULK_MODE_BQL) {
		sch->flags |= TCQ_F_ONETXQUEUE;
		q->det_nq = nq;
		q->det_pkts = q->st.batch_pkts;
	} else {
		sch->flags &= ~TCQ_F_ONETXQUEUE;
	}
	WRITE_ONCE(q->path, path);
	pfb_batch_reset(q);
}

/* Is this the first ->dequeue of a core batch? On the NOBQL path we count
 * the core's calls. On the BQL path it is, if we ended the last batch, if
 * the driver took packets since (num_queued moved), or if BQL has no room:
 * the core's loop calls again only while it has.
 */
static bool pfb_batch_starts(const struct Qdisc *sch,
			     const struct pfb_sched_data *q)
{
	const struct netdev_queue *txq = sch->dev_queue;

	if (!(sch->flags & TCQ_F_ONETXQUEUE))
		return !q->b_pkts;
	return q->closed || pfb_num_queued(txq) != q->nq_seen ||
	       pfb_dql_avail(txq) <= 0;
}

static void pfb_batch_start(struct Qdisc *sch, struct pfb_sched_data *q)
{
	/* a batch we did not end: the core did (BQL, quota) */
	if (!q->closed && q->b_pkts)
		q->st.end[PFB_END_BUDGET]++;
	pfb_select_path(sch, q);
	q->nq_seen = pfb_num_queued(sch->dev_queue);
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
	q->st.batch_pkts++;
	q->st.batch_bytes += skb->len;
	if (n == 1) {
		q->st.batches++;
		q->st.hist[TC_PFIFO_BULK_HIST_1]++;
	} else if (is_power_of_2(n - 1) &&
		   ilog2(n - 1) < TC_PFIFO_BULK_HIST_65_UP) {
		/* n = 2, 3, 5, 9, 17, 33, 65 start a new bucket */
		q->st.hist[ilog2(n - 1)]--;
		q->st.hist[ilog2(n - 1) + 1]++;
	}
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

static struct sk_buff *pfb_dequeue_bql(struct Qdisc *sch,
				       struct pfb_sched_data *q)
{
	struct sk_buff *skb;
	int end;

	/* not the first call (see pfb_batch_starts): NULL ends the loop */
	end = pfb_cap_reached(q);
	if (end >= 0 && pfb_waiting(q)) {
		q->st.end[end]++;
		q->closed = true;
		q->st.resched++;
		__netif_schedule(sch);
		return NULL;
	}

	skb = pfb_next(sch, q);
	if (skb) {
		pfb_account(q, skb);
	} else {
		if (q->b_pkts)
			q->st.end[PFB_END_EMPTY]++;
		q->closed = true;
	}
	return skb;
}

static struct sk_buff *pfb_dequeue_nobql(struct Qdisc *sch,
					 struct pfb_sched_data *q)
{
	struct sk_buff *skb;
	int end;

	end = pfb_cap_reached(q);
	if (end >= 0 && pfb_waiting(q)) {
		/* b_pkts > 0: we are inside the core's loop */
		q->st.end[end]++;
		q->b_pkts = 0;
		q->b_bytes = 0;
		if (!q->exact) {
			q->st.resched++;
			__netif_schedule(sch);
		}
		return NULL;
	}

	skb = pfb_next(sch, q);
	if (!skb) {
		if (q->b_pkts)
			q->st.end[PFB_END_EMPTY]++;
		q->b_pkts = 0;
		q->b_bytes = 0;
		return NULL;
	}
	pfb_account(q, skb);
	if (q->b_pkts >= PFB_SLOW_BATCH) {
		/* the core takes no more: the next call starts a batch */
		end = pfb_cap_reached(q);
		q->st.end[end >= 0 ? end : PFB_END_BUDGET]++;
		q->b_pkts = 0;
		q->b_bytes = 0;
	}
	return skb;
}

static struct sk_buff *pfb_dequeue(struct Qdisc *sch)
{
	struct pfb_sched_data *q = qdisc_priv(sch);

	/* a parent dequeues us: plain pfifo */
	if (unlikely(!pfb_runs_batches(sch)))
		return pfb_next(sch, q);

	if (pfb_batch_starts(sch, q))
		pfb_batch_start(sch, q);
	if (sch->flags & TCQ_F_ONETXQUEUE)
		return pfb_dequeue_bql(sch, q);
	return pfb_dequeue_nobql(sch, q);
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
	pfb_batch_reset(q);
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

static const struct nla_policy pfb_policy[TCA_PFIFO_BULK_MAX + 1] = {
	[TCA_PFIFO_BULK_LIMIT]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&pfb_limit_range),
	[TCA_PFIFO_BULK_BULK_BYTES] = NLA_POLICY_FULL_RANGE(NLA_U32,
							&pfb_bulk_bytes_range),
	[TCA_PFIFO_BULK_BULK_PKTS] = NLA_POLICY_FULL_RANGE(NLA_U32,
							&pfb_bulk_pkts_range),
	[TCA_PFIFO_BULK_MODE]	= NLA_POLICY_MAX(NLA_U8,
						 TC_PFIFO_BULK_MODE_MAX),
	[TCA_PFIFO_BULK_EFFECTIVE_MODE] = { .type = NLA_REJECT },
};

/* The core's policy messages ("integer out of range") do not say which
 * option or which range; replace them, keeping the attribute and policy.
 */
static void pfb_explain(struct netlink_ext_ack *extack)
{
	const struct nlattr *bad = extack ? extack->bad_attr : NULL;
	const struct nla_policy *pol = extack ? extack->policy : NULL;

	if (!bad)
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
	default:
		NL_SET_ERR_MSG_ATTR_POL(extack, bad, pol,
					"pfifo_bulk: unknown attribute in TCA_OPTIONS (valid: TCA_PFIFO_BULK_LIMIT..MODE, types 1..4)");
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

static int pfb_change(struct Qdisc *sch, struct nlattr *opt,
		      struct netlink_ext_ack *extack)
{
	struct pfb_sched_data *q = qdisc_priv(sch);
	struct nlattr *tb[TCA_PFIFO_BULK_MAX + 1];
	unsigned int dropped = 0, dropped_bytes = 0;
	u32 limit, bulk_bytes, bulk_pkts;
	u8 mode;
	int err;

	if (!opt) {
		NL_SET_ERR_MSG(extack, "pfifo_bulk: change needs TCA_OPTIONS");
		return -EINVAL;
	}
	/* strict, with or without NLA_F_NESTED on the nest (see top) */
	err = __nla_parse(tb, TCA_PFIFO_BULK_MAX, nla_data(opt), nla_len(opt),
			  pfb_policy, NL_VALIDATE_STRICT, extack);
	if (err) {
		pfb_explain(extack);
		return err;
	}

	/* everything is valid from here: apply it all at once */
	limit = tb[TCA_PFIFO_BULK_LIMIT] ?
		nla_get_u32(tb[TCA_PFIFO_BULK_LIMIT]) : READ_ONCE(sch->limit);
	bulk_bytes = tb[TCA_PFIFO_BULK_BULK_BYTES] ?
		nla_get_u32(tb[TCA_PFIFO_BULK_BULK_BYTES]) : q->bulk_bytes;
	bulk_pkts = tb[TCA_PFIFO_BULK_BULK_PKTS] ?
		nla_get_u32(tb[TCA_PFIFO_BULK_BULK_PKTS]) : q->bulk_pkts;
	mode = tb[TCA_PFIFO_BULK_MODE] ?
		nla_get_u8(tb[TCA_PFIFO_BULK_MODE]) : q->mode;

	pfb_consumer_lock(sch);
	WRITE_ONCE(sch->limit, limit);
	WRITE_ONCE(q->bulk_bytes, bulk_bytes);
	WRITE_ONCE(q->bulk_pkts, bulk_pkts);
	WRITE_ONCE(q->mode, mode);

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
	qdisc_tree_reduce_backlog(sch, dropped, dropped_bytes);

	/* new caps and mode apply from the next batch */
	if (q->path != TC_PFIFO_BULK_MODE_AUTO)
		pfb_select_path(sch, q);
	pfb_batch_reset(q);
	pfb_consumer_unlock(sch);
	return 0;
}

static int pfb_init(struct Qdisc *sch, struct nlattr *opt,
		    struct netlink_ext_ack *extack)
{
	struct pfb_sched_data *q = qdisc_priv(sch);
	u32 limit = qdisc_dev(sch)->tx_queue_len;
	int err;

	WRITE_ONCE(sch->limit, clamp_t(u32, limit, 1, PFB_LIMIT_MAX));
	pfb_batch_reset(q);

	if (opt) {
		err = pfb_change(sch, opt, extack);
		if (err)
			return err;
	}

	if (sch->parent == TC_H_ROOT) {
		if (pfb_shared_root(sch))
			NL_SET_ERR_MSG(extack,
				       "pfifo_bulk: root of a multiqueue device: NOBQL path (at most 9 per batch, BQL ignored); prefer mq with pfifo_bulk children");
		pfb_consumer_lock(sch);
		pfb_select_path(sch, q);
		pfb_consumer_unlock(sch);
	}
	return 0;
}

static int pfb_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	struct pfb_sched_data *q = qdisc_priv(sch);
	u8 path = TC_PFIFO_BULK_MODE_AUTO;
	struct nlattr *opts;

	/* AUTO as effective mode: a parent dequeues us, no batch control */
	if (rcu_access_pointer(sch->dev_queue->qdisc_sleeping) == sch) {
		if (!READ_ONCE(q->path)) {
			/* e.g. an mq child before its first packet */
			pfb_consumer_lock(sch);
			pfb_select_path(sch, q);
			pfb_consumer_unlock(sch);
		}
		path = READ_ONCE(q->path);
	}

	opts = nla_nest_start_noflag(skb, TCA_OPTIONS);
	if (!opts)
		return -EMSGSIZE;
	if (nla_put_u32(skb, TCA_PFIFO_BULK_LIMIT, READ_ONCE(sch->limit)) ||
	    nla_put_u32(skb, TCA_PFIFO_BULK_BULK_BYTES,
			READ_ONCE(q->bulk_bytes)) ||
	    nla_put_u32(skb, TCA_PFIFO_BULK_BULK_PKTS,
			READ_ONCE(q->bulk_pkts)) ||
	    nla_put_u8(skb, TCA_PFIFO_BULK_MODE, READ_ONCE(q->mode)) ||
	    nla_put_u8(skb, TCA_PFIFO_BULK_EFFECTIVE_MODE, path))
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

static int pfb_dump_stats(struct Qdisc *sch, struct gnet_dump *d)
{
	struct pfb_sched_data *q = qdisc_priv(sch);
	struct nlattr *xstats, *hist;
	struct gnet_stats_queue qs = {};
	struct pfb_stats st;
	int i;

	pfb_consumer_lock(sch);
	st = q->st;
	pfb_consumer_unlock(sch);
	gnet_stats_add_queue(&qs, sch->cpu_qstats, &sch->qstats);

	xstats = nla_nest_start_noflag(d->skb, TCA_STATS_APP);
	if (!xstats)
		return -1;
	if (pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_BATCHES, st.batches) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_BATCH_PKTS,
			st.batch_pkts) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_BATCH_BYTES,
			st.batch_bytes))
		goto nla_put_failure;

	hist = nla_nest_start_noflag(d->skb, TCA_PFIFO_BULK_XSTATS_HIST);
	if (!hist)
		goto nla_put_failure;
	for (i = 0; i < TC_PFIFO_BULK_HIST_BUCKETS; i++)
		if (pfb_put_u64(d->skb, i + 1, st.hist[i]))
			goto nla_put_failure;
	nla_nest_end(d->skb, hist);

	if (pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_END_BYTES,
			st.end[PFB_END_BYTES]) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_END_PKTS,
			st.end[PFB_END_PKTS]) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_END_BUDGET,
			st.end[PFB_END_BUDGET]) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_END_EMPTY,
			st.end[PFB_END_EMPTY]) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_RESCHEDULES,
			st.resched) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_DROPS, qs.drops) ||
	    pfb_put_u64(d->skb, TCA_PFIFO_BULK_XSTATS_REQUEUES, qs.requeues))
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
	.change		= pfb_change,
	.dump		= pfb_dump,
	.dump_stats	= pfb_dump_stats,
	.static_flags	= TCQ_F_NOLOCK | TCQ_F_CPUSTATS,
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
