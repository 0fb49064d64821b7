// SPDX-License-Identifier: GPL-2.0
/*
 * refnic datapath: the TX descriptor ring, the doorbell, the "wire" that
 * drains it, TX completion and RX through NAPI.
 *
 * ndo_start_xmit posts a descriptor and rings the doorbell only at the end of
 * the stack's batch; the wire (one soft hrtimer per queue) sees only the
 * descriptors before the doorbell, sends them at the line rate, hands each
 * frame to the peer in pair mode, and raises the "completion interrupt"
 * (napi_schedule) as the coalescing settings say. The NAPI poll frees the
 * sent skbs, reports them to BQL and wakes the queue.
 */

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/version.h>

#include "refnic.h"

static u32 refnic_tx_free(const struct refnic_queue *q, u32 prod, u32 clean)
{
	u32 used = prod - clean;

	/* A ring shrinks only while down, so used <= size; be safe anyway. */
	return used < q->size ? q->size - used : 0;
}

/* Time one frame occupies a wire of @mbps: Ethernet adds preamble and SFD
 * (8 bytes), the FCS (4) and the inter-frame gap (12), and pads to 60.
 */
static u64 refnic_wire_ns(unsigned int len, u32 mbps)
{
	if (!mbps)
		return 0;
	return div_u64((u64)(max_t(unsigned int, len, ETH_ZLEN) + 24) * 8000,
		       mbps);
}

static unsigned int refnic_hist_bucket(u32 pkts)
{
	/* 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, 65+ */
	if (pkts <= 1)
		return 0;
	return min_t(unsigned int, fls(pkts - 1), REFNIC_HIST_BUCKETS - 1);
}

/* ---- BQL helpers ------------------------------------------------------- */

/* Forget BQL state. With BQL off the device must look like a driver that
 * never had BQL: dql_avail() == 0, so that the core dequeues one packet per
 * batch. dql_reset() keeps adj_limit (only dql_completed() writes it), so a
 * device that ran with BQL before would keep the old budget; clear it.
 */
static void refnic_bql_reset(struct netdev_queue *txq, bool bql)
{
	netdev_tx_reset_queue(txq);
#ifdef CONFIG_BQL
	if (!bql)
		WRITE_ONCE(txq->dql.adj_limit, 0);
#endif
}

/* netdev_txq_completed_mb() appeared in 6.3 with netdev_queues.h: report the
 * completions to BQL when it is on, and in every case issue the full barrier
 * the wake side of the stop/wake protocol needs (netdev_tx_completed_queue()
 * has one when it gets bytes).
 */
static void refnic_txq_completed_mb(struct netdev_queue *txq, bool bql,
				    unsigned int pkts, unsigned int bytes)
{
	if (IS_ENABLED(CONFIG_BQL) && bql && bytes)
		netdev_tx_completed_queue(txq, pkts, bytes);
	else
		smp_mb(); /* pairs with smp_mb__after_atomic() in xmit's stop */
}

/* ---- the wire ---------------------------------------------------------- */

/* Start the wire if it sleeps. Callers have just moved the doorbell. */
static void refnic_wire_kick(struct refnic_queue *q)
{
	/* Order the tail store before the flag test. Pairs with the
	 * smp_mb__after_atomic() in refnic_wire_run() going idle: either the
	 * wire sees the new tail, or we see the flag clear and start it.
	 */
	smp_mb();
	if (test_bit(REFNIC_WIRE_RUNNING, &q->wire_flags) ||
	    test_and_set_bit(REFNIC_WIRE_RUNNING, &q->wire_flags))
		return;
	hrtimer_start(&q->wire_timer, 0, HRTIMER_MODE_ABS_SOFT);
}

/* Pair mode: put a copy of the sent frame on the peer's RX queue. The skb
 * itself stays on our ring until its completion frees it, as the DMA'd
 * buffer of a real NIC does; the clone is cheap and owns no socket memory.
 */
static bool refnic_wire_deliver(struct refnic_queue *q, struct sk_buff *skb,
				struct net_device *peer, struct refnic_queue *pq)
{
	struct sk_buff *nskb = skb_clone(skb, GFP_ATOMIC);
	bool queued = false;

	if (nskb) {
		skb_scrub_packet(nskb, !net_eq(dev_net(q->dev), dev_net(peer)));
		nskb->dev = peer;
	}
	spin_lock(&pq->rxq.lock);
	if (nskb && pq->rx_enabled &&
	    skb_queue_len(&pq->rxq) < REFNIC_RX_QLEN) {
		__skb_queue_tail(&pq->rxq, nskb);
		queued = true;
	} else {
		u64_stats_update_begin(&pq->rstats.syncp);
		u64_stats_inc(&pq->rstats.dropped);
		u64_stats_update_end(&pq->rstats.syncp);
	}
	spin_unlock(&pq->rxq.lock);
	if (nskb && !queued)
		kfree_skb(nskb);
	return queued;
}

static struct refnic_queue *refnic_peer_rxq(struct refnic_queue *q,
					    struct net_device **peerp)
{
	struct refnic_priv *priv = netdev_priv(q->dev);
	struct net_device *peer = rcu_dereference(priv->peer);
	struct refnic_priv *ppriv;

	*peerp = peer;
	if (!peer || !netif_running(peer))
		return NULL;
	ppriv = netdev_priv(peer);
	return &ppriv->queues[q->index % peer->real_num_rx_queues];
}

static enum hrtimer_restart refnic_wire_run(struct hrtimer *timer)
{
	struct refnic_queue *q = container_of(timer, struct refnic_queue,
					      wire_timer);
	struct refnic_priv *priv = netdev_priv(q->dev);
	u32 mbps = READ_ONCE(priv->line_rate_mbps);
	u64 usecs_ns = (u64)READ_ONCE(priv->tx_usecs) * NSEC_PER_USEC;
	u32 frames = READ_ONCE(priv->tx_frames);
	struct refnic_queue *pq;
	struct net_device *peer;
	u64 now = ktime_get_ns();
	u64 next = U64_MAX;
	bool delivered = false;
	u32 tail, sent = 0;

	rcu_read_lock();
	pq = refnic_peer_rxq(q, &peer);

	if (q->wire_idle) {
		/* An idle wire starts sending now, not when it went idle. */
		q->wire_busy_until = max(q->wire_busy_until, now);
		q->wire_idle = false;
	}

	/* Descriptors are written before the doorbell moves the tail: the
	 * acquire pairs with the release in refnic_doorbell().
	 */
	tail = smp_load_acquire(&q->tail);
	while (q->wire != tail) {
		struct refnic_desc *d = &q->ring[q->wire & q->mask];
		u64 ns = refnic_wire_ns(d->len, mbps);

		if (q->wire_busy_until + ns > now) {
			next = q->wire_busy_until + ns;
			break;
		}
		if (sent == REFNIC_WIRE_BUDGET) {
			next = now;
			break;
		}
		q->wire_busy_until += ns;
		if (pq && refnic_wire_deliver(q, d->skb, peer, pq))
			delivered = true;
		q->wire++;
		sent++;
	}
	/* The peer's RX interrupt; the peer outlives this RCU section. */
	if (delivered)
		napi_schedule(&pq->napi);
	rcu_read_unlock();

	if (sent) {
		/* Sent slots become visible to the completion. */
		smp_store_release(&q->wire, q->wire);
		if (!q->unnotified)
			q->first_unnotified = now;
		q->unnotified += sent;
	}

	/* Completion coalescing: interrupt after tx-frames completions or
	 * tx-usecs after the first one, whichever comes first.
	 */
	if (q->unnotified) {
		if (q->unnotified >= frames ||
		    now >= q->first_unnotified + usecs_ns) {
			q->unnotified = 0;
			napi_schedule(&q->napi);
		} else {
			next = min(next, q->first_unnotified + usecs_ns);
		}
	}

	if (next == U64_MAX) {
		/* Nothing to send or to notify: go idle, then look again for
		 * a doorbell that raced with us (see refnic_wire_kick()).
		 */
		q->wire_idle = true;
		clear_bit(REFNIC_WIRE_RUNNING, &q->wire_flags);
		/* flag clear before tail read; pairs with smp_mb() in kick */
		smp_mb__after_atomic();
		/* acquire: the descriptors before a new tail are readable */
		if (smp_load_acquire(&q->tail) == q->wire ||
		    test_and_set_bit(REFNIC_WIRE_RUNNING, &q->wire_flags))
			return HRTIMER_NORESTART;
		next = now;
	}
	hrtimer_set_expires(timer, ns_to_ktime(next));
	return HRTIMER_RESTART;
}

/* ---- transmit ---------------------------------------------------------- */

static void refnic_doorbell(struct refnic_queue *q)
{
	unsigned int ns = READ_ONCE(refnic_doorbell_ns);
	u32 pkts = q->prod - q->tail;

	/* The release orders the descriptor writes before the tail, as the
	 * wmb() before a driver's writel() to the tail register does.
	 */
	smp_store_release(&q->tail, q->prod);
	if (ns)
		ndelay(ns);	/* what an MMIO write would cost */

	u64_stats_update_begin(&q->xstats.syncp);
	u64_stats_inc(&q->xstats.doorbells);
	u64_stats_inc(&q->xstats.hist[refnic_hist_bucket(pkts)]);
	u64_stats_update_end(&q->xstats.syncp);

	refnic_wire_kick(q);
}

netdev_tx_t refnic_start_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	u16 qi = skb_get_queue_mapping(skb);
	struct refnic_queue *q = &priv->queues[qi];
	struct netdev_queue *txq = netdev_get_tx_queue(dev, qi);
	bool more = netdev_xmit_more();
	unsigned int len = skb->len;
	bool stopped = false, ring_full = false;
	bool ring;

	if (unlikely(!refnic_tx_free(q, q->prod, READ_ONCE(q->clean)))) {
		/* Not reached while the stop below works: a driver that gets
		 * here has a stop/wake bug. Make sure the wire drains, so that
		 * a completion wakes us.
		 */
		netif_tx_stop_queue(txq);
		if (q->tail != q->prod)
			refnic_doorbell(q);
		u64_stats_update_begin(&q->xstats.syncp);
		u64_stats_inc(&q->xstats.ring_full);
		u64_stats_update_end(&q->xstats.syncp);
		return NETDEV_TX_BUSY;
	}

	q->ring[q->prod & q->mask] = (struct refnic_desc){ skb, len };
	/* prod is read by the completion's free-slot count. */
	WRITE_ONCE(q->prod, q->prod + 1);
	skb_tx_timestamp(skb);

	/* Stop before the ring overflows: when the next frame would not fit.
	 * This is netif_txq_maybe_stop() of 6.3+ open-coded.
	 */
	if (unlikely(!refnic_tx_free(q, q->prod, READ_ONCE(q->clean)))) {
		netif_tx_stop_queue(txq);
		/* The stop bit and prod must be visible before we read clean
		 * again. Pairs with the barrier in refnic_tx_clean(): either
		 * the completion sees the queue stopped and wakes it, or we
		 * see the slots it freed and restart the queue ourselves.
		 */
		smp_mb__after_atomic();
		if (unlikely(refnic_tx_free(q, q->prod, READ_ONCE(q->clean)) >=
			     q->wake_thresh)) {
			netif_tx_start_queue(txq);
		} else {
			stopped = true;
			ring_full = true;
		}
	}

	/* Ring the doorbell at the end of the batch, and whenever the queue
	 * stops (driver or BQL): then no further frame comes to ring it.
	 */
	if (priv->bql) {
		bool was = netif_xmit_stopped(txq);

		ring = __netdev_tx_sent_queue(txq, len, more);
		if (!was && !stopped && netif_xmit_stopped(txq))
			stopped = true;		/* BQL stopped it */
	} else {
		ring = !more || netif_xmit_stopped(txq);
	}

	u64_stats_update_begin(&q->xstats.syncp);
	u64_stats_inc(&q->xstats.packets);
	u64_stats_add(&q->xstats.bytes, len);
	if (more)
		u64_stats_inc(&q->xstats.xmit_more);
	if (stopped)
		u64_stats_inc(&q->xstats.stops);
	if (ring_full)
		u64_stats_inc(&q->xstats.ring_full);
	u64_stats_update_end(&q->xstats.syncp);

	if (ring)
		refnic_doorbell(q);
	return NETDEV_TX_OK;
}

/* Called with every TX lock held. A stall here means a lost doorbell or a
 * lost wake-up: count it, and ring whatever is pending.
 */
void refnic_tx_timeout(struct net_device *dev, unsigned int txqueue)
{
	struct refnic_priv *priv = netdev_priv(dev);
	struct refnic_queue *q = &priv->queues[txqueue];

	u64_stats_update_begin(&q->xstats.syncp);
	u64_stats_inc(&q->xstats.timeouts);
	u64_stats_update_end(&q->xstats.syncp);
	if (!READ_ONCE(priv->up))
		return;		/* a restart failed: no ring to kick */
	netdev_warn(dev, "TX queue %u timed out: prod %u tail %u wire %u clean %u\n",
		    txqueue, q->prod, q->tail, READ_ONCE(q->wire),
		    READ_ONCE(q->clean));
	if (q->tail != q->prod)
		refnic_doorbell(q);
	else
		refnic_wire_kick(q);
}

/* ---- NAPI: TX completion and RX ---------------------------------------- */

static void refnic_tx_clean(struct refnic_queue *q, int budget)
{
	struct refnic_priv *priv = netdev_priv(q->dev);
	struct netdev_queue *txq = netdev_get_tx_queue(q->dev, q->index);
	unsigned int pkts = 0, bytes = 0;
	bool was_stopped, woken;
	u32 clean = q->clean;
	u32 done;

	/* acquire: pairs with the wire's release of the slots it sent */
	done = smp_load_acquire(&q->wire);

	while (clean != done) {
		struct refnic_desc *d = &q->ring[clean & q->mask];

		bytes += d->len;
		napi_consume_skb(d->skb, budget);
		d->skb = NULL;
		clean++;
		pkts++;
	}
	if (!pkts)
		return;

	/* Free the slots, then (full barrier) test the stop bit. Pairs with
	 * smp_mb__after_atomic() in refnic_start_xmit(). This is
	 * netif_txq_completed_wake() of 6.3+ open-coded.
	 */
	WRITE_ONCE(q->clean, clean);
	was_stopped = netif_xmit_stopped(txq);
	refnic_txq_completed_mb(txq, priv->bql, pkts, bytes);
	if (netif_tx_queue_stopped(txq) && READ_ONCE(priv->up) &&
	    refnic_tx_free(q, READ_ONCE(q->prod), clean) >= q->wake_thresh)
		netif_tx_wake_queue(txq);
	woken = was_stopped && !netif_xmit_stopped(txq);

	u64_stats_update_begin(&q->nstats.syncp);
	u64_stats_add(&q->nstats.completions, pkts);
	if (woken)
		u64_stats_inc(&q->nstats.wakes);
	u64_stats_update_end(&q->nstats.syncp);
}

static int refnic_rx(struct refnic_queue *q, int budget)
{
	struct sk_buff_head list;
	struct sk_buff *skb;
	u64 bytes = 0;
	int n = 0;

	/* An empty RX ring is seen without the lock, as a driver reads the
	 * descriptor status; the wire queues before it calls napi_schedule().
	 */
	if (skb_queue_empty_lockless(&q->rxq))
		return 0;
	__skb_queue_head_init(&list);
	spin_lock(&q->rxq.lock);
	while (n < budget && (skb = __skb_dequeue(&q->rxq))) {
		__skb_queue_tail(&list, skb);
		n++;
	}
	spin_unlock(&q->rxq.lock);

	while ((skb = __skb_dequeue(&list))) {
		bytes += skb->len;
		skb->protocol = eth_type_trans(skb, q->dev);
		skb_record_rx_queue(skb, q->index);
		napi_gro_receive(&q->napi, skb);
	}

	if (n) {
		u64_stats_update_begin(&q->nstats.syncp);
		u64_stats_add(&q->nstats.rx_packets, n);
		u64_stats_add(&q->nstats.rx_bytes, bytes);
		u64_stats_update_end(&q->nstats.syncp);
	}
	return n;
}

static int refnic_poll(struct napi_struct *napi, int budget)
{
	struct refnic_queue *q = container_of(napi, struct refnic_queue, napi);
	int done = 0;

	u64_stats_update_begin(&q->nstats.syncp);
	u64_stats_inc(&q->nstats.polls);
	u64_stats_update_end(&q->nstats.syncp);

	/* TX completions are not charged to the budget, as in most drivers. */
	if (q->index < q->dev->real_num_tx_queues && q->ring)
		refnic_tx_clean(q, budget);
	if (q->index < q->dev->real_num_rx_queues && budget)
		done = refnic_rx(q, budget);

	/* A wire that published more work while we ran has called
	 * napi_schedule(), which napi_complete_done() turns into another poll.
	 */
	if (done < budget)
		napi_complete_done(napi, done);
	return done;
}

/* ---- bring-up and tear-down ------------------------------------------- */

int refnic_queues_init(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	unsigned int i;

	priv->nqueues = max(dev->num_tx_queues, dev->num_rx_queues);
	priv->queues = kcalloc(priv->nqueues, sizeof(*priv->queues),
			       GFP_KERNEL);
	if (!priv->queues)
		return -ENOMEM;

	for (i = 0; i < priv->nqueues; i++) {
		struct refnic_queue *q = &priv->queues[i];

		q->dev = dev;
		q->index = i;
		u64_stats_init(&q->xstats.syncp);
		u64_stats_init(&q->nstats.syncp);
		u64_stats_init(&q->rstats.syncp);
		skb_queue_head_init(&q->rxq);
		hrtimer_init(&q->wire_timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_ABS_SOFT);
		q->wire_timer.function = refnic_wire_run;
		netif_napi_add(dev, &q->napi, refnic_poll);
	}
	return 0;
}

void refnic_queues_uninit(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	unsigned int i;

	for (i = 0; i < priv->nqueues; i++)
		__netif_napi_del(&priv->queues[i].napi);
	/* One grace period for all NAPI contexts, then free them. A stats
	 * reader (sysfs) that comes after this sees no queues.
	 */
	synchronize_net();
	WRITE_ONCE(priv->nqueues, 0);
	kfree(priv->queues);
	priv->queues = NULL;
}

int refnic_up(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	u32 slots = roundup_pow_of_two(priv->ring_size);
	unsigned int i;

	for (i = 0; i < dev->real_num_tx_queues; i++) {
		struct refnic_queue *q = &priv->queues[i];

		q->ring = kvcalloc(slots, sizeof(*q->ring), GFP_KERNEL);
		if (!q->ring)
			goto err;
		q->mask = slots - 1;
		q->size = priv->ring_size;
		q->wake_thresh = q->size / 4;
		q->prod = 0;
		q->tail = 0;
		q->wire = 0;
		q->clean = 0;
		q->unnotified = 0;
		q->wire_idle = true;
		q->wire_flags = 0;
		refnic_bql_reset(netdev_get_tx_queue(dev, i), priv->bql);
	}
	for (i = 0; i < dev->real_num_rx_queues; i++) {
		struct refnic_queue *q = &priv->queues[i];

		spin_lock_bh(&q->rxq.lock);
		q->rx_enabled = true;
		spin_unlock_bh(&q->rxq.lock);
	}
	for (i = 0; i < priv->nqueues; i++)
		napi_enable(&priv->queues[i].napi);
	WRITE_ONCE(priv->up, true);
	netif_tx_wake_all_queues(dev);
	return 0;

err:
	while (i--) {
		kvfree(priv->queues[i].ring);
		priv->queues[i].ring = NULL;
	}
	return -ENOMEM;
}

/* Quiesce in the order that leaves no one to race with: no completion can
 * wake the queue once @up is clear and NAPI is off; no xmit runs after
 * netif_tx_disable(), so no one kicks the wire once its timer is cancelled.
 * Then every skb still on a ring or an RX queue is freed.
 */
void refnic_down(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	unsigned int i;

	WRITE_ONCE(priv->up, false);
	for (i = 0; i < priv->nqueues; i++)
		napi_disable(&priv->queues[i].napi);
	netif_tx_disable(dev);

	for (i = 0; i < dev->real_num_tx_queues; i++) {
		struct refnic_queue *q = &priv->queues[i];
		u32 sent = 0, dropped = 0;

		hrtimer_cancel(&q->wire_timer);
		if (!q->ring)
			continue;
		/* [clean, wire) went out on the wire: complete them;
		 * [wire, prod) never did: drop them.
		 */
		for (; q->clean != q->prod; q->clean++) {
			struct refnic_desc *d = &q->ring[q->clean & q->mask];

			if (q->clean - q->wire < q->prod - q->wire)
				dropped++;
			else
				sent++;
			dev_kfree_skb_any(d->skb);
		}
		u64_stats_update_begin(&q->nstats.syncp);
		u64_stats_add(&q->nstats.completions, sent);
		u64_stats_add(&q->nstats.tx_dropped, dropped);
		u64_stats_update_end(&q->nstats.syncp);
		refnic_bql_reset(netdev_get_tx_queue(dev, i), priv->bql);
		kvfree(q->ring);
		q->ring = NULL;
	}
	for (i = 0; i < priv->nqueues; i++) {
		struct refnic_queue *q = &priv->queues[i];

		/* Whatever the peer's wire delivers from now on is dropped. */
		spin_lock_bh(&q->rxq.lock);
		q->rx_enabled = false;
		u64_stats_update_begin(&q->rstats.syncp);
		u64_stats_add(&q->rstats.dropped, skb_queue_len(&q->rxq));
		u64_stats_update_end(&q->rstats.syncp);
		__skb_queue_purge(&q->rxq);
		spin_unlock_bh(&q->rxq.lock);
	}
}
