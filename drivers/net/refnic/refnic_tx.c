// SPDX-License-Identifier: GPL-2.0
/*
 * refnic datapath: the TX descriptor ring, the doorbell, the "wire" that
 * drains it, the completion interrupt and its moderation, TX completion and
 * RX through NAPI, and bring-up and tear-down.
 *
 * ndo_start_xmit posts a descriptor and rings the doorbell only at the end of
 * the stack's batch; the wire of the queue (a soft hrtimer) sees only the
 * descriptors before the doorbell and fetches them at once, whatever the
 * interrupt moderation does. It puts them on the port's line, which its TX
 * queues share at the line rate, hands each frame to the peer in pair mode,
 * and reports it to the completion interrupt. That one (napi_schedule) fires
 * as ethtool -C says, from the wire or from its own timer. The NAPI poll
 * frees the sent skbs, reports them to BQL and wakes the queue.
 */

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/log2.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#if defined(REFNIC_HAVE_TXQ_TRY_STOP) || defined(REFNIC_HAVE_TXQ_COMPLETED_WAKE)
#include <net/netdev_queues.h>
#endif

#include "refnic.h"

static u32 refnic_tx_free(const struct refnic_queue *q, u32 prod, u32 clean)
{
	u32 used = prod - clean;

	/* A ring changes only while down, so used <= size; be safe anyway. */
	return used < q->size ? q->size - used : 0;
}

/* Free slots, as ndo_start_xmit sees them. */
static u32 refnic_xmit_room(const struct refnic_queue *q)
{
	/* acquire: pairs with the completion's release of clean, which has
	 * read the slots it freed before we write them again
	 */
	return refnic_tx_free(q, q->prod, smp_load_acquire(&q->clean));
}

/* What one frame of @len bytes occupies on the line: Ethernet adds
 * preamble and SFD (8 bytes), the FCS (4) and the inter-frame gap (12), and
 * pads to 60.
 */
static unsigned int refnic_frame_bytes(unsigned int len)
{
	return max_t(unsigned int, len, ETH_ZLEN) + 24;
}

/* What @skb occupies on the line. A TSO frame goes out as gso_segs
 * segments, each with its own copy of the headers: gso_size bytes of
 * payload each, the last one the rest (never more segments than the
 * payload fills). Only TCP reaches us as GSO: the core segments in
 * software whatever REFNIC_OFFLOADS does not cover.
 */
static unsigned int refnic_line_bytes(const struct sk_buff *skb)
{
	const struct skb_shared_info *si = skb_shinfo(skb);
	unsigned int hdr, full, last;

	if (!skb_is_gso(skb) || si->gso_segs <= 1)
		return refnic_frame_bytes(skb->len);
	hdr = skb_tcp_all_headers(skb);
	if (skb->len <= hdr)
		return refnic_frame_bytes(skb->len);
	full = min_t(unsigned int, si->gso_segs - 1,
		     (skb->len - hdr - 1) / si->gso_size);
	last = skb->len - full * si->gso_size;
	return full * refnic_frame_bytes(hdr + si->gso_size) +
	       refnic_frame_bytes(last);
}

/* Time @line_bytes (refnic_line_bytes()) occupy a wire of @mbps. */
static u64 refnic_wire_ns(unsigned int line_bytes, u32 mbps)
{
	return div_u64((u64)line_bytes * 8000, mbps);
}

static unsigned int refnic_hist_bucket(u32 pkts)
{
	/* 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, 65+ */
	if (pkts <= 1)
		return 0;
	return min_t(unsigned int, fls(pkts - 1), REFNIC_HIST_BUCKETS - 1);
}

/* ---- BQL helpers ------------------------------------------------------- */

/* Start BQL afresh, on every down and up. netdev_tx_reset_queue() clears
 * the stack's stop and calls dql_reset(), which zeroes num_queued and
 * num_completed but leaves adj_limit, which stands for "limit +
 * num_completed" and which only dql_completed() writes: until the first
 * completion, dql_avail() would be the old limit plus every byte the queue
 * ever completed, not the fresh limit. The second line does what dql_reset() should do (the gap is
 * written up in Documentation/networking/refnic.rst, "BQL and
 * dql_reset()"); it is a no-op on a kernel where dql_reset() does it. With
 * BQL off, adj_limit is 0 instead, where a driver without BQL leaves it:
 * dql_avail() == 0, so the core dequeues one packet per batch.
 */
static void refnic_bql_reset(struct netdev_queue *txq, bool bql)
{
	netdev_tx_reset_queue(txq);
#ifdef CONFIG_BQL
	WRITE_ONCE(txq->dql.adj_limit,
		   bql ? txq->dql.limit + txq->dql.num_completed : 0);
#endif
}

/* Report completions and wake the queue when it was stopped for room and
 * has @wake_thresh free slots again, unless the device is going down:
 * netif_txq_completed_wake() of 6.3+ (net/netdev_queues.h), open-coded
 * before. The full barrier between freeing the slots (@q->clean, already
 * stored) and testing the stop bit pairs with the one in refnic_xmit_stop():
 * either xmit sees the slots, or we see the stop. With BQL off nothing is
 * reported (BQL was told of no frame), but the barrier is still needed:
 * netdev_tx_completed_queue() has one only when it gets bytes.
 */
static void refnic_txq_completed_wake(struct refnic_queue *q,
				      struct netdev_queue *txq,
				      unsigned int pkts, unsigned int bytes)
{
	struct refnic_priv *priv = netdev_priv(q->dev);
	u32 clean = q->clean;

	if (!IS_ENABLED(CONFIG_BQL) || !priv->bql) {
		smp_mb(); /* pairs with smp_mb__after_atomic() in xmit's stop */
		bytes = 0;
	}
#ifdef REFNIC_HAVE_TXQ_COMPLETED_WAKE
	__netif_txq_completed_wake(txq, pkts, bytes,
				   refnic_tx_free(q, READ_ONCE(q->prod), clean),
				   q->wake_thresh, !READ_ONCE(priv->up));
#else
	if (bytes)
		netdev_tx_completed_queue(txq, pkts, bytes);	/* has the barrier */
	if (netif_tx_queue_stopped(txq) && READ_ONCE(priv->up) &&
	    refnic_tx_free(q, READ_ONCE(q->prod), clean) >= q->wake_thresh)
		netif_tx_wake_queue(txq);
#endif
}

/* ---- the completion interrupt ------------------------------------------ */

/* Interrupt moderation as ethtool's uapi defines it: an interrupt after
 * tx-frames completions, or tx-usecs after the first of them, whichever comes
 * first; 0 disables either. With tx-usecs 0 no timer runs and the interrupt
 * also fires when the wire has sent everything it was given (the "TX queue
 * empty" cause of e1000-class NICs), so that the last frames of a burst never
 * wait for frames that will not come. Called by the wire with the frames it
 * just sent; @empty: it sent all it was given.
 */
static void refnic_irq_raise(struct refnic_queue *q, u32 sent, u64 now,
			     bool empty)
{
	struct refnic_priv *priv = netdev_priv(q->dev);
	u64 usecs_ns = (u64)READ_ONCE(priv->tx_usecs) * NSEC_PER_USEC;
	u32 frames = READ_ONCE(priv->tx_frames);
	bool fire = false;
	u64 arm = 0;

	spin_lock(&q->irq_lock);
	if (!q->irq_pending)
		q->irq_first = now;
	q->irq_pending += sent;
	if ((frames && q->irq_pending >= frames) || (!usecs_ns && empty) ||
	    (usecs_ns && now >= q->irq_first + usecs_ns)) {
		q->irq_pending = 0;
		fire = true;
	} else if (usecs_ns && !q->irq_armed) {
		/* An armed timer fires no later than this one would. */
		q->irq_armed = true;
		arm = q->irq_first + usecs_ns;
	}
	spin_unlock(&q->irq_lock);

	if (arm)
		hrtimer_start(&q->irq_timer, ns_to_ktime(arm),
			      HRTIMER_MODE_ABS_SOFT);
	if (fire)
		napi_schedule(&q->napi);
}

static enum hrtimer_restart refnic_irq_timer(struct hrtimer *timer)
{
	struct refnic_queue *q = container_of(timer, struct refnic_queue,
					      irq_timer);
	bool fire;

	spin_lock(&q->irq_lock);
	q->irq_armed = false;
	fire = q->irq_pending;
	q->irq_pending = 0;
	spin_unlock(&q->irq_lock);

	if (fire)
		napi_schedule(&q->napi);
	return HRTIMER_NORESTART;
}

/* ---- the wire ---------------------------------------------------------- */

/* The port has one line, shared by its TX queues at the line rate: each
 * queue puts its next frame on it when the line is free, first come first
 * served; as a queue has at most one frame on the line, backlogged queues
 * take turns. A queue whose ring had drained starts no earlier than now. A
 * backlogged one may back-date its frame by up to REFNIC_LINE_LAG_NS, to make
 * up for a timer that ran late, and no more: over any interval the line
 * carries at most line rate x (interval + lag). Returns the frame's end, ns.
 */
static u64 refnic_line_reserve(struct refnic_priv *priv, u64 earliest, u64 ns)
{
	s64 free = atomic64_read(&priv->line_free);
	u64 start;

	do {
		start = max_t(u64, free, earliest);
	} while (!atomic64_try_cmpxchg(&priv->line_free, &free, start + ns));
	return start + ns;
}

/* Start the wire if it sleeps. Callers have just moved the doorbell. */
static void refnic_wire_kick(struct refnic_queue *q)
{
	/* Order the tail store before the flag test. Pairs with the
	 * smp_mb__after_atomic() in refnic_wire_run() going idle: either the
	 * wire sees the new tail, or we see the flag clear and start it.
	 */
	smp_mb();
	/* Down: refnic_down() flushes the ring itself; a timer started now
	 * could outlive the ring (and the device).
	 */
	if (test_bit(REFNIC_WIRE_OFF, &q->wire_flags))
		return;
	if (test_bit(REFNIC_WIRE_RUNNING, &q->wire_flags) ||
	    test_and_set_bit(REFNIC_WIRE_RUNNING, &q->wire_flags))
		return;
	hrtimer_start(&q->wire_timer, 0, HRTIMER_MODE_ABS_SOFT);
}

/* Where one run of the wire sends its frames. */
struct refnic_wire_ctx {
	struct net_device	*peer;		/* NULL: stand-alone */
	struct refnic_queue	*pq;		/* peer's RX queue; NULL: peer down */
	bool			delivered;
	u32			lost;		/* pair, peer down: no one listens */
};

static void refnic_wire_ctx_init(struct refnic_queue *q,
				 struct refnic_wire_ctx *c)
{
	struct refnic_priv *priv = netdev_priv(q->dev);
	struct refnic_priv *ppriv;

	c->peer = rcu_dereference(priv->peer);
	c->pq = NULL;
	c->delivered = false;
	c->lost = 0;
	if (!c->peer || !netif_running(c->peer))
		return;
	ppriv = netdev_priv(c->peer);
	c->pq = &ppriv->queues[q->index %
			       READ_ONCE(c->peer->real_num_rx_queues)];
}

/* A frame the wire sent. Stand-alone, the wire consumes it. In a pair, a
 * copy lands on the peer's RX queue (the skb itself stays on our ring until
 * its completion frees it, as the DMA'd buffer of a real NIC does), or the
 * peer drops and counts it: RX queue full, its datapath down, or too long
 * for its MTU. A peer that is down has no carrier: the frame is lost on the
 * link, counted as a carrier error. A copy, not a clone: a clone shares the
 * skb_shared_info of the frame still on our ring, and the receiving stack
 * writes to it (GRO moves frags and chains frag_list there), which freed a
 * frame still on the ring when another completed (KASAN, 6.12).
 *
 * pskb_copy(): the headers are copied, the page frags (SG) shared, as veth
 * shares them, read-only (SKBFL_SHARED_FRAG kept): a 64 KB TSO frame costs
 * no 64 KB atomic allocation. User pages (MSG_ZEROCOPY) are copied, as the
 * core does for any frame looped back to a receiver. A TSO frame arrives
 * whole, as through veth (GRO and TCP take GSO frames). A frame the
 * checksum offload left CHECKSUM_PARTIAL (TSO's too) keeps it, which the
 * receiving stack takes as verified (skb_csum_unnecessary()), as from a
 * veth peer; any other frame was checksummed by the sender's stack and is
 * received as bits, unverified.
 */
static void refnic_wire_send(struct refnic_wire_ctx *c, struct sk_buff *skb)
{
	struct refnic_queue *pq = c->pq;
	struct sk_buff *nskb;
	bool queued = false;

	if (!pq) {
		if (c->peer)
			c->lost++;
		return;
	}
	nskb = pskb_copy(skb, GFP_ATOMIC);
	if (nskb && skb_orphan_frags_rx(nskb, GFP_ATOMIC)) {
		kfree_skb(nskb);
		nskb = NULL;
	}
	if (nskb) {
		/* A NIC receives bits: none of the sender's skb state. */
		skb_scrub_packet(nskb, true);
		skb_clear_hash(nskb);
		nskb->priority = 0;
		if (nskb->ip_summed != CHECKSUM_PARTIAL)
			nskb->ip_summed = CHECKSUM_NONE;
		nskb->dev = c->peer;
		if (!is_skb_forwardable(c->peer, nskb)) {
			kfree_skb(nskb);
			nskb = NULL;
		}
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
	if (queued)
		c->delivered = true;
	else
		kfree_skb(nskb);
}

/* The peer's RX interrupt, and our count of frames lost on the link. */
static void refnic_wire_ctx_done(struct refnic_queue *q,
				 struct refnic_wire_ctx *c)
{
	/* The peer outlives the caller's RCU section. */
	if (c->delivered)
		napi_schedule(&c->pq->napi);
	if (c->lost) {
		u64_stats_update_begin(&q->wstats.syncp);
		u64_stats_add(&q->wstats.carrier_errors, c->lost);
		u64_stats_update_end(&q->wstats.syncp);
	}
}

static enum hrtimer_restart refnic_wire_run(struct hrtimer *timer)
{
	struct refnic_queue *q = container_of(timer, struct refnic_queue,
					      wire_timer);
	struct refnic_priv *priv = netdev_priv(q->dev);
	u32 mbps = READ_ONCE(priv->line_rate_mbps);
	struct refnic_wire_ctx c;
	u64 now = ktime_get_ns();
	u64 next = U64_MAX;
	u32 wire = q->wire, tail, sent = 0;

	rcu_read_lock();
	refnic_wire_ctx_init(q, &c);

	/* Descriptors are written before the doorbell moves the tail: the
	 * acquire pairs with the release in refnic_doorbell().
	 */
	tail = smp_load_acquire(&q->tail);
	while (wire != tail) {
		struct refnic_desc *d = &q->ring[wire & q->mask];

		if (sent == REFNIC_WIRE_BUDGET) {
			next = now;
			break;
		}
		if (mbps) {
			if (!q->frame_end) {
				u64 ns = refnic_wire_ns(d->line_bytes, mbps);
				u64 from = q->wire_idle ? now :
					   now - REFNIC_LINE_LAG_NS;

				q->frame_end = refnic_line_reserve(priv, from, ns);
				q->wire_idle = false;
			}
			if (q->frame_end > now) {
				next = q->frame_end;
				break;
			}
			q->frame_end = 0;
		}
		refnic_wire_send(&c, d->skb);
		wire++;
		sent++;
	}
	refnic_wire_ctx_done(q, &c);
	rcu_read_unlock();

	/* A drained ring (or an unlimited line) leaves the line idle. */
	if (wire == tail || !mbps) {
		q->wire_idle = true;
		q->frame_end = 0;
	}
	if (sent) {
		/* Once per run: the sent slots become visible to the
		 * completion, which reads them after its acquire of q->wire.
		 */
		smp_store_release(&q->wire, wire);
		refnic_irq_raise(q, sent, now, wire == tail);
	}

	if (next == U64_MAX) {
		/* Nothing to send: go idle, then look again for a doorbell
		 * that raced with us (see refnic_wire_kick()).
		 */
		clear_bit(REFNIC_WIRE_RUNNING, &q->wire_flags);
		/* flag clear before tail read; pairs with smp_mb() in kick */
		smp_mb__after_atomic();
		/* acquire: the descriptors before a new tail are readable */
		if (smp_load_acquire(&q->tail) == wire ||
		    test_and_set_bit(REFNIC_WIRE_RUNNING, &q->wire_flags))
			return HRTIMER_NORESTART;
		next = now;
	}
	hrtimer_set_expires(timer, ns_to_ktime(next));
	return HRTIMER_RESTART;
}

/* Down, with the wire stopped: whatever xmit accepted goes out now, at once,
 * as a NIC sends the frames it was given before its link goes down. A frame
 * handed to the driver is sent, never dropped, by a reconfiguration.
 */
static void refnic_wire_flush(struct refnic_queue *q)
{
	struct refnic_wire_ctx c;
	u32 wire;

	local_bh_disable();	/* the peer's RX lock, its NAPI */
	rcu_read_lock();
	refnic_wire_ctx_init(q, &c);
	for (wire = q->wire; wire != q->prod; wire++)
		refnic_wire_send(&c, q->ring[wire & q->mask].skb);
	refnic_wire_ctx_done(q, &c);
	rcu_read_unlock();
	local_bh_enable();
	WRITE_ONCE(q->tail, wire);
	/* NAPI, not yet disabled, may complete these already */
	smp_store_release(&q->wire, wire);
}

/* ---- transmit ---------------------------------------------------------- */

static void refnic_doorbell(struct refnic_queue *q)
{
	unsigned int ns = READ_ONCE(refnic_doorbell_ns);
	u32 pkts = q->prod - q->tail;
	u32 segs = q->prod_segs - q->tail_segs;

	/* The release orders the descriptor writes before the tail, as the
	 * wmb() before a driver's writel() to the tail register does.
	 */
	smp_store_release(&q->tail, q->prod);
	q->tail_segs = q->prod_segs;
	if (ns)
		ndelay(ns);	/* what the MMIO write would cost */

	u64_stats_update_begin(&q->xstats.syncp);
	u64_stats_inc(&q->xstats.doorbells);
	u64_stats_inc(&q->xstats.hist[refnic_hist_bucket(pkts)]);
	u64_stats_inc(&q->xstats.hist_segs[refnic_hist_bucket(segs)]);
	u64_stats_update_end(&q->xstats.syncp);

	refnic_wire_kick(q);
}

/* A frame refused with NETDEV_TX_BUSY (ring full, or an injected fault):
 * frames posted before it with xmit_more must not wait for a doorbell that
 * the stack, which ends the batch here, will not ask for.
 */
static netdev_tx_t refnic_xmit_busy(struct refnic_queue *q, u64_stats_t *cnt)
{
	if (q->tail != q->prod)
		refnic_doorbell(q);
	u64_stats_update_begin(&q->xstats.syncp);
	u64_stats_inc(cnt);
	u64_stats_update_end(&q->xstats.syncp);
	return NETDEV_TX_BUSY;
}

/* A frame dropped before it reaches the ring, as a driver does when it
 * cannot map the frame for DMA: freed and counted, nothing posted, BQL not
 * told. Frames posted before it get their doorbell at the end of the batch.
 */
static netdev_tx_t refnic_xmit_drop(struct refnic_queue *q,
				    struct sk_buff *skb, bool more,
				    u64_stats_t *cnt)
{
	if (!more && q->tail != q->prod)
		refnic_doorbell(q);
	u64_stats_update_begin(&q->xstats.syncp);
	u64_stats_inc(&q->xstats.dropped);
	if (cnt)
		u64_stats_inc(cnt);
	u64_stats_update_end(&q->xstats.syncp);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/* Stop the queue for want of room, then look at the ring once more:
 * netif_txq_try_stop() of 6.3+ (net/netdev_queues.h), open-coded before.
 * The full barrier between the stop bit (and prod) and reading clean again
 * pairs with the one in refnic_txq_completed_wake(): either the completion
 * sees the queue stopped and wakes it, or we see the slots it freed and
 * restart the queue ourselves. Returns true when it stays stopped.
 */
static bool refnic_xmit_stop(struct refnic_queue *q, struct netdev_queue *txq)
{
#ifdef REFNIC_HAVE_TXQ_TRY_STOP
	return !netif_txq_try_stop(txq, refnic_xmit_room(q), q->wake_thresh);
#else
	netif_tx_stop_queue(txq);
	smp_mb__after_atomic();	/* pairs with smp_mb() in the completion */
	if (likely(refnic_xmit_room(q) < q->wake_thresh))
		return true;
	netif_tx_start_queue(txq);
	return false;
#endif
}

netdev_tx_t refnic_start_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	u16 qi = skb_get_queue_mapping(skb);
	struct refnic_queue *q = &priv->queues[qi];
	struct netdev_queue *txq = netdev_get_tx_queue(dev, qi);
	bool more = netdev_xmit_more();
	unsigned int len = skb->len;
	/* a TSO frame: the segments the wire makes of it */
	unsigned int segs = skb_is_gso(skb) ?
			    max_t(unsigned int, skb_shinfo(skb)->gso_segs, 1) : 1;
	bool stopped = false, ring_full = false, fault_stop = false;
	u32 every;
	bool ring;

	/* A queue beyond the channel count: only a sender that picked it
	 * before the count shrank (pktgen) gets here.
	 */
	if (unlikely(!q->ring))
		return refnic_xmit_drop(q, skb, more, NULL);

	every = READ_ONCE(priv->fault.busy_every);
	if (unlikely(every) && ++q->fault_busy_calls >= every) {
		q->fault_busy_calls = 0;
		return refnic_xmit_busy(q, &q->xstats.fault_busy);
	}

	every = READ_ONCE(priv->fault.drop_every);
	if (unlikely(every) && ++q->fault_drop_calls >= every) {
		q->fault_drop_calls = 0;
		return refnic_xmit_drop(q, skb, more, &q->xstats.fault_drop);
	}

	if (unlikely(!refnic_xmit_room(q))) {
		/* Not reached while the stop below works: a driver that gets
		 * here has a stop/wake bug. The doorbell in refnic_xmit_busy()
		 * makes sure the wire drains, so that a completion wakes us;
		 * the stop's second look keeps a completion that freed slots
		 * before it saw the stop bit from leaving the queue stopped
		 * until the watchdog.
		 */
		refnic_xmit_stop(q, txq);
		return refnic_xmit_busy(q, &q->xstats.ring_full);
	}

	q->ring[q->prod & q->mask] = (struct refnic_desc){
		skb, len, refnic_line_bytes(skb)
	};
	/* prod is read by the completion's free-slot count. */
	WRITE_ONCE(q->prod, q->prod + 1);
	q->prod_segs += segs;
	skb_tx_timestamp(skb);

	/* Stop before the ring overflows: when the next frame would not fit. */
	if (unlikely(!refnic_xmit_room(q)) && refnic_xmit_stop(q, txq)) {
		stopped = true;
		ring_full = true;
	}

	/* Injected: stop as if the ring were full. This frame's completion,
	 * which comes after the doorbell below, sees the stop and wakes us.
	 */
	every = READ_ONCE(priv->fault.stop_every);
	if (unlikely(every) && ++q->fault_stop_frames >= every) {
		q->fault_stop_frames = 0;
		if (!netif_tx_queue_stopped(txq)) {
			netif_tx_stop_queue(txq);
			fault_stop = true;
		}
	}

	/* Ring the doorbell at the end of the batch, and whenever the queue
	 * stops (driver or BQL): then no further frame comes to ring it. BQL
	 * is charged skb->len, a TSO frame's bytes as the stack counts them
	 * (the qdisc's bulk dequeue limit too), as most drivers charge it.
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
	u64_stats_add(&q->xstats.segments, segs);
	u64_stats_add(&q->xstats.bytes, len);
	if (more)
		u64_stats_inc(&q->xstats.xmit_more);
	if (stopped)
		u64_stats_inc(&q->xstats.stops);
	if (ring_full)
		u64_stats_inc(&q->xstats.ring_full);
	if (fault_stop)
		u64_stats_inc(&q->xstats.fault_stop);
	u64_stats_update_end(&q->xstats.syncp);

	if (ring)
		refnic_doorbell(q);
	return NETDEV_TX_OK;
}

/* Called by the watchdog with the TX queues frozen: a queue stopped for
 * watchdog_timeo, which the watchdog counted (queues/tx-N/tx_timeout). As
 * real drivers do, reset the rings from process context (down and up: what
 * was posted is sent, the queues wake).
 */
void refnic_tx_timeout(struct net_device *dev, unsigned int txqueue)
{
	struct refnic_priv *priv = netdev_priv(dev);
	struct refnic_queue *q = &priv->queues[txqueue];

	netdev_warn(dev, "TX queue %u timed out: prod %u tail %u wire %u clean %u, resetting\n",
		    txqueue, q->prod, q->tail, READ_ONCE(q->wire),
		    READ_ONCE(q->clean));
	schedule_delayed_work(&priv->reset_work, 0);
}

static void refnic_reset_work(struct work_struct *work)
{
	struct refnic_priv *priv = container_of(to_delayed_work(work),
						struct refnic_priv, reset_work);

	/* The destructor cancels us after unregistration, without RTNL
	 * (refnic_reset_cancel()). A device unregistered meanwhile was
	 * closed first: nothing to reset.
	 */
	rtnl_lock();
	if (netif_running(priv->dev)) {
		refnic_down(priv->dev);
		refnic_up(priv->dev);
	}
	rtnl_unlock();
}

/* ---- NAPI: TX completion and RX ---------------------------------------- */

static void refnic_tx_clean(struct refnic_queue *q, int budget)
{
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
		clean++;
		pkts++;
	}
	if (!pkts)
		return;

	/* Free the slots (release: we are done reading them, pairs with the
	 * acquire in refnic_start_xmit()), then report them and wake the queue.
	 * A wake lifts the driver's stop; BQL's, lifted by the report, counts
	 * as a wake too.
	 */
	smp_store_release(&q->clean, clean);
	was_stopped = netif_xmit_stopped(txq);
	/* The wire moved: a queue that stays stopped (on a slow line, until
	 * wake_thresh slots are free) is not hung. Tell the watchdog, as
	 * real drivers do; only a wire that stopped times out.
	 */
	if (was_stopped)
		txq_trans_cond_update(txq);
	refnic_txq_completed_wake(q, txq, pkts, bytes);
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
	if (q->ring)
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

/* ---- rings ------------------------------------------------------------- */

/* Rings for @n TX queues of @size descriptors, allocated before the datapath
 * stops, so that a reconfiguration that cannot get memory changes nothing.
 * NULL when out of memory (or when the fault knob says so). Charged to the
 * caller's memory cgroup, as veth's queues are: a user namespace sizes them
 * (numtxqueues, ethtool -G) up to 4096 x 4096 descriptors a device.
 */
struct refnic_desc **refnic_rings_alloc(struct net_device *dev,
					unsigned int n, u32 size)
{
	struct refnic_priv *priv = netdev_priv(dev);
	u32 slots = roundup_pow_of_two(size);
	struct refnic_desc **rings;
	unsigned int i;

	if (READ_ONCE(priv->fault.fail_ring_alloc))
		return NULL;
	rings = kcalloc(n, sizeof(*rings), GFP_KERNEL_ACCOUNT);
	if (!rings)
		return NULL;
	for (i = 0; i < n; i++) {
		rings[i] = kvcalloc(slots, sizeof(*rings[i]), GFP_KERNEL_ACCOUNT);
		if (!rings[i]) {
			refnic_rings_free(rings, i);
			return NULL;
		}
	}
	return rings;
}

void refnic_rings_free(struct refnic_desc **rings, unsigned int n)
{
	unsigned int i;

	if (!rings)
		return;
	for (i = 0; i < n; i++)
		kvfree(rings[i]);
	kfree(rings);
}

/* With the datapath down: the first @n queues take their ring from @rings
 * (which this consumes), the others have none; the old rings are freed.
 */
void refnic_rings_install(struct net_device *dev, struct refnic_desc **rings,
			  unsigned int n, u32 size)
{
	struct refnic_priv *priv = netdev_priv(dev);
	u32 slots = roundup_pow_of_two(size);
	unsigned int i;

	for (i = 0; i < priv->nqueues; i++) {
		struct refnic_queue *q = &priv->queues[i];

		kvfree(q->ring);
		q->ring = rings && i < n ? rings[i] : NULL;
		q->mask = slots - 1;
		q->size = size;
		q->wake_thresh = size / 4;
	}
	kfree(rings);
}

/* ---- bring-up and tear-down ------------------------------------------- */

int refnic_queues_init(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	unsigned int i;

	priv->dev = dev;
	INIT_DELAYED_WORK(&priv->reset_work, refnic_reset_work);
	priv->nqueues = max(dev->num_tx_queues, dev->num_rx_queues);
	priv->queues = kcalloc(priv->nqueues, sizeof(*priv->queues),
			       GFP_KERNEL_ACCOUNT);
	if (!priv->queues)
		return -ENOMEM;

	for (i = 0; i < priv->nqueues; i++) {
		struct refnic_queue *q = &priv->queues[i];

		q->dev = dev;
		q->index = i;
		u64_stats_init(&q->xstats.syncp);
		u64_stats_init(&q->nstats.syncp);
		u64_stats_init(&q->wstats.syncp);
		u64_stats_init(&q->rstats.syncp);
		skb_queue_head_init(&q->rxq);
		spin_lock_init(&q->irq_lock);
		refnic_hrtimer_setup(&q->wire_timer, refnic_wire_run,
				     CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
		refnic_hrtimer_setup(&q->irq_timer, refnic_irq_timer,
				     CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
		netif_napi_add(dev, &q->napi, refnic_poll);
	}
	return 0;
}

/* priv_destructor: after unregistration, without RTNL, which the reset
 * work takes (ndo_uninit runs with RTNL held and cannot wait for it).
 * register_netdevice() calls it with RTNL when it fails after ndo_init,
 * but then the device never ran and no timeout can have queued the work.
 */
void refnic_reset_cancel(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);

	cancel_delayed_work_sync(&priv->reset_work);
}

void refnic_queues_uninit(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	unsigned int i;

	for (i = 0; i < priv->nqueues; i++)
		__netif_napi_del(&priv->queues[i].napi);
	/* Unpublish the queues, then one grace period for all NAPI contexts
	 * and for the stats readers (sysfs) that still saw them, then free
	 * them.
	 */
	WRITE_ONCE(priv->nqueues, 0);
	synchronize_net();
	kfree(priv->queues);
	priv->queues = NULL;
}

/* Start the datapath on the rings installed for the real TX queues. Cannot
 * fail; does nothing if it runs.
 */
void refnic_up(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	unsigned int i;

	ASSERT_RTNL();
	if (priv->up)
		return;
	for (i = 0; i < priv->nqueues; i++) {
		struct refnic_queue *q = &priv->queues[i];

		q->prod = 0;
		q->tail = 0;
		q->prod_segs = 0;
		q->tail_segs = 0;
		q->wire = 0;
		q->clean = 0;
		q->fault_busy_calls = 0;
		q->fault_stop_frames = 0;
		q->fault_drop_calls = 0;
		q->wire_flags = 0;
		q->wire_idle = true;
		q->frame_end = 0;
		q->irq_pending = 0;
		q->irq_armed = false;
	}
	for (i = 0; i < dev->num_tx_queues; i++)
		refnic_bql_reset(netdev_get_tx_queue(dev, i), priv->bql);
	for (i = 0; i < priv->nqueues; i++)
		napi_enable(&priv->queues[i].napi);
	/* After napi_enable(): the poll of a frame queued from now on runs. */
	for (i = 0; i < dev->real_num_rx_queues; i++) {
		struct refnic_queue *q = &priv->queues[i];

		spin_lock_bh(&q->rxq.lock);
		q->rx_enabled = true;
		spin_unlock_bh(&q->rxq.lock);
	}
	WRITE_ONCE(priv->up, true);
	netif_tx_wake_all_queues(dev);
}

/* Quiesce in the order that leaves no one to race with: no frame arrives
 * once RX is disabled; no completion wakes the queue once @up is clear and
 * the polls that may have seen it set are over (synchronize_net(): a poll
 * runs with BH off); no xmit runs after netif_tx_disable(), and the wire
 * ignores kicks once it is off, so no one starts its timer once it is
 * cancelled; what the wire had not sent goes out (flush), then NAPI stops
 * and every skb is freed. The rings stay. Does nothing if down.
 */
void refnic_down(struct net_device *dev)
{
	struct refnic_priv *priv = netdev_priv(dev);
	unsigned int i;

	ASSERT_RTNL();
	if (!priv->up)
		return;
	WRITE_ONCE(priv->up, false);
	for (i = 0; i < priv->nqueues; i++) {
		struct refnic_queue *q = &priv->queues[i];

		/* What the peer delivers from now on is dropped, counted. */
		spin_lock_bh(&q->rxq.lock);
		q->rx_enabled = false;
		spin_unlock_bh(&q->rxq.lock);
	}
	/* A completion that saw @up still set may wake its queue: wait for
	 * the NAPI polls running now, so that no wake comes after the stop
	 * below and lets xmit write a ring that is about to be freed (the
	 * wake tests @up without the queue's lock, as drivers using
	 * __netif_txq_completed_wake() do).
	 */
	synchronize_net();
	netif_tx_disable(dev);
	for (i = 0; i < priv->nqueues; i++) {
		struct refnic_queue *q = &priv->queues[i];

		set_bit(REFNIC_WIRE_OFF, &q->wire_flags);
		hrtimer_cancel(&q->wire_timer);
		if (q->ring)
			refnic_wire_flush(q);
		hrtimer_cancel(&q->irq_timer);
	}
	for (i = 0; i < priv->nqueues; i++)
		napi_disable(&priv->queues[i].napi);

	for (i = 0; i < priv->nqueues; i++) {
		struct refnic_queue *q = &priv->queues[i];
		u32 n = 0;

		/* Everything was sent: complete it. */
		for (; q->ring && q->clean != q->wire; q->clean++, n++)
			dev_consume_skb_any(q->ring[q->clean & q->mask].skb);
		u64_stats_update_begin(&q->nstats.syncp);
		u64_stats_add(&q->nstats.completions, n);
		u64_stats_update_end(&q->nstats.syncp);

		spin_lock_bh(&q->rxq.lock);
		u64_stats_update_begin(&q->rstats.syncp);
		u64_stats_add(&q->rstats.dropped, skb_queue_len(&q->rxq));
		u64_stats_update_end(&q->rstats.syncp);
		__skb_queue_purge(&q->rxq);
		spin_unlock_bh(&q->rxq.lock);
	}
	for (i = 0; i < dev->num_tx_queues; i++)
		refnic_bql_reset(netdev_get_tx_queue(dev, i), priv->bql);
}

/* ethtool -G: new rings first; without memory, nothing changes. */
int refnic_set_ring_size(struct net_device *dev, u32 size)
{
	struct refnic_priv *priv = netdev_priv(dev);
	unsigned int n = dev->real_num_tx_queues;
	struct refnic_desc **rings;

	if (!netif_running(dev)) {
		priv->ring_size = size;
		return 0;
	}
	rings = refnic_rings_alloc(dev, n, size);
	if (!rings)
		return -ENOMEM;
	refnic_down(dev);
	refnic_rings_install(dev, rings, n, size);
	priv->ring_size = size;
	refnic_up(dev);
	return 0;
}

/* debugfs "bql": BQL accounting on or off. BQL starts afresh: a running
 * device restarts on the same rings, which cannot fail (down and up do
 * nothing while the link is down; refnic_open() then starts with @bql).
 */
void refnic_set_bql(struct net_device *dev, bool bql)
{
	struct refnic_priv *priv = netdev_priv(dev);

	ASSERT_RTNL();
	if (bql == priv->bql)
		return;
	refnic_down(dev);
	WRITE_ONCE(priv->bql, bql);
	if (netif_running(dev))
		refnic_up(dev);
}

/* ethtool -L: rings for the new TX queue count first; if the core cannot
 * change the counts, the old rings and counts stay.
 */
int refnic_set_queues(struct net_device *dev, unsigned int tx,
		      unsigned int rx)
{
	struct refnic_priv *priv = netdev_priv(dev);
	struct refnic_desc **rings;
	int err;

	if (!netif_running(dev))
		return netif_set_real_num_queues(dev, tx, rx);
	rings = refnic_rings_alloc(dev, tx, priv->ring_size);
	if (!rings)
		return -ENOMEM;
	refnic_down(dev);
	err = netif_set_real_num_queues(dev, tx, rx);
	if (err)
		refnic_rings_free(rings, tx);
	else
		refnic_rings_install(dev, rings, tx, priv->ring_size);
	refnic_up(dev);
	return err;
}
