// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: policy NONE - packets go out once, in message order, as receive
 * credits allow (sdr_credit.h: a message only once its receive is posted,
 * packets only within the receiver's window).  A receive completes with
 * SDR_STATUS_OK when every packet landed, or with SDR_STATUS_PARTIAL as
 * sdr_none_schedule() explains.  The credit probes run from the flow's
 * timer; the idle completion of receives has a timer of its own.
 */
#include <linux/hrtimer.h>

#include "sdr.h"
#include "sdr_bitmap.h"
#include "sdr_flow.h"
#include "sdr_trace.h"

/*
 * Policy NONE, receive credits (sdr_credit.h).  A CREDIT names our next
 * receive and grants packets past those processed; @echo is the ts of the
 * PROBE it answers, 0 if none.
 */
static void sdr_none_grant(struct sdr_flow *flow, u32 echo,
			   struct sdr_ctrlq *q)
{
	struct sdr_ctrl *c;

	lockdep_assert_held(&flow->lock);
	c = sdr_ctrlq_add(flow, q, SDR_POLICY_NONE, flow->rx_next_post);
	if (!c)
		return;
	c->hdr.type = SDR_PKT_CREDIT;
	c->hdr.ts = echo;
	c->hdr.aux = sdr_credit_rx_grant(&flow->none_rx);
}

static void sdr_none_probe(struct sdr_flow *flow, u32 psn,
			   struct sdr_ctrlq *q)
{
	struct sdr_ctrl *c;

	lockdep_assert_held(&flow->lock);
	c = sdr_ctrlq_add(flow, q, SDR_POLICY_NONE, 0);
	if (!c)
		return;
	c->hdr.type = SDR_PKT_PROBE;
	c->hdr.ts = (u32)(ktime_get_ns() / NSEC_PER_USEC);
	c->hdr.aux = psn;
}

/* A CREDIT from the peer: 0 or a drop reason. */
static int sdr_none_rx_credit(struct sdr_flow *flow, const struct sdr_pkt *pkt)
{
	lockdep_assert_held(&flow->lock);
	if (sdr_credit_tx_grant(&flow->none_tx, pkt->msg_seq, pkt->aux) < 0) {
		/* more than a true receiver could grant: it changed nothing */
		trace_sdr_ack_rejected(flow->id, pkt->msg_seq, pkt->type,
				       pkt->aux);
		return SDR_DROP_ACK_CLAIM;
	}
	flow->sr_heard_ns = ktime_get_ns();
	return 0;
}

/* A NONE message may not send: probe from the flow's timer until it may. */
static void sdr_none_wait(struct sdr_flow *flow)
{
	lockdep_assert_held(&flow->lock);
	sdr_credit_tx_wait(&flow->none_tx, ktime_get_ns(),
			   sdr_rtt_rto(&flow->sr.rtt));
	sdr_flow_arm(flow, sdr_credit_tx_deadline(&flow->none_tx));
}

static bool sdr_none_tx_pending(struct sdr_flow *flow)
{
	struct sdr_txmsg *msg;

	lockdep_assert_held(&flow->lock);
	list_for_each_entry(msg, &flow->tx_msgs, node)
		if (msg->ops == &sdr_none_ops && msg->next_off < msg->msg_len)
			return true;
	return false;
}

/*
 * The flow's timer, for NONE sends waiting for credit: probe when due.
 * Returns true when the peer said nothing at all for the dead-peer time
 * (a receiver that answers probes but posts no receive is alive: the
 * send waits for it, as long as it takes).
 */
static bool sdr_none_flow_timer(struct sdr_flow *flow, u64 now,
				struct sdr_ctrlq *q)
{
	struct sdr_credit_tx *tx = &flow->none_tx;
	u64 dead_ns = flow->dead_ns, since;
	u32 psn;

	lockdep_assert_held(&flow->lock);
	if (!tx->wait_ns)
		return false;
	if (!sdr_none_tx_pending(flow)) {
		sdr_credit_tx_idle(tx);
		return false;
	}
	since = max(tx->wait_ns, flow->sr_data_ns);
	if (dead_ns && now - since >= dead_ns)
		return true;
	if (sdr_credit_tx_probe_due(tx, now, sdr_sr_silent_cap(&flow->sr),
				    &psn))
		sdr_none_probe(flow, psn, q);
	sdr_flow_arm(flow, sdr_credit_tx_deadline(tx));
	if (dead_ns)
		sdr_flow_arm(flow, since + dead_ns);
	return false;
}

static void sdr_none_arm_rx_timer(struct sdr_flow *flow, u64 deadline_ns)
{
	if (flow->dead || flow->rx_timer_armed)
		return;
	flow->rx_timer_armed = true;
	hrtimer_start(&flow->rx_timer, ns_to_ktime(deadline_ns),
		      HRTIMER_MODE_ABS_SOFT);
}

/* A receive that NONE packets started: only those may give up on holes. */
static bool sdr_slot_none_active(const struct sdr_rxslot *s)
{
	return s->state == SDR_RECV_ACTIVE && s->ops == &sdr_none_ops;
}

/* Complete (PARTIAL) every slot whose reorder window has passed. */
static void sdr_none_reap(struct sdr_flow *flow, bool idle)
{
	u64 next = 0;
	u32 i;

	lockdep_assert_held(&flow->lock);
	for (i = 0; i < flow->max_msgs; i++) {
		struct sdr_rxslot *s = &flow->slots[i];

		if (!sdr_slot_waiting(s))
			continue;
		if ((s->done_at_pkt && flow->stats.rx_packets >= s->done_at_pkt) ||
		    (idle && (s->done_at_pkt || sdr_slot_none_active(s)))) {
			sdr_slot_complete(flow, i, SDR_STATUS_PARTIAL);
			continue;
		}
		if (s->done_at_pkt && (!next || s->done_at_pkt < next))
			next = s->done_at_pkt;
	}
	flow->rx_reap_at = next;
}

/*
 * Policy NONE: when a receive gives up on its holes.  The sender is done
 * with a NONE message once its last packet or a packet of a later NONE
 * message arrived (NONE messages go out in order).  It is done with every
 * message, of any policy, before its oldest unfinished one, which each
 * NONE packet names (ts, its low-water mark): that covers a message none
 * of whose packets arrived, whose policy this side cannot know.  Missing
 * packets may still be on their way, reordered, so the receive completes
 * PARTIAL only after sdr_none_reorder_pkts more packets of the flow, or
 * when the flow saw no packet for sdr_none_idle_ms.  Counting packets, not
 * time, keeps a receiver that lags behind its queue from giving up on
 * packets that are merely queued.  SR and EC receives that started are
 * never given up here: their engine and the dead-peer time handle them.
 */
static void sdr_none_schedule(struct sdr_flow *flow, u32 idx,
			      const struct sdr_pkt *pkt)
{
	u64 window = flow->stats.rx_packets + READ_ONCE(sdr_none_reorder_pkts);
	struct sdr_rxslot *slot = &flow->slots[idx];
	u32 i;

	lockdep_assert_held(&flow->lock);
	flow->rx_last_ns = ktime_get_ns();
	sdr_none_arm_rx_timer(flow, flow->rx_last_ns +
			      (u64)READ_ONCE(sdr_none_idle_ms) * NSEC_PER_MSEC);

	if ((pkt->flags & SDR_PKT_F_LAST) && !slot->done_at_pkt)
		slot->done_at_pkt = window;
	if (pkt->msg_seq != flow->rx_last_seq || pkt->ts != flow->rx_low) {
		/* earlier NONE messages are sent, all before low finished */
		flow->rx_last_seq = pkt->msg_seq;
		flow->rx_low = pkt->ts;
		for (i = 0; i < flow->max_msgs; i++) {
			struct sdr_rxslot *s = &flow->slots[i];

			if (!sdr_slot_waiting(s) || s->done_at_pkt)
				continue;
			if ((sdr_slot_none_active(s) &&
			     sdr_seq_before(s->seq, pkt->msg_seq)) ||
			    sdr_seq_before(s->seq, pkt->ts))
				s->done_at_pkt = window;
		}
	}
	if (slot->done_at_pkt &&
	    (!flow->rx_reap_at || slot->done_at_pkt < flow->rx_reap_at))
		flow->rx_reap_at = slot->done_at_pkt;
	if (flow->rx_reap_at && flow->stats.rx_packets >= flow->rx_reap_at)
		sdr_none_reap(flow, false);
}

static enum hrtimer_restart sdr_none_rx_timer(struct hrtimer *timer)
{
	struct sdr_flow *flow = container_of(timer, struct sdr_flow, rx_timer);
	s64 idle_ns = (s64)READ_ONCE(sdr_none_idle_ms) * NSEC_PER_MSEC;
	u32 i;

	spin_lock_bh(&flow->lock);
	flow->rx_timer_armed = false;
	if (flow->dead)
		goto out_unlock;
	/* Read the clock under the lock: rx_last_ns may have just moved. */
	if ((s64)(ktime_get_ns() - flow->rx_last_ns) >= idle_ns) {
		sdr_none_reap(flow, true);
	} else {
		for (i = 0; i < flow->max_msgs; i++)
			if (sdr_slot_waiting(&flow->slots[i]))
				break;
		if (i < flow->max_msgs)
			sdr_none_arm_rx_timer(flow, flow->rx_last_ns + idle_ns);
	}
out_unlock:
	spin_unlock_bh(&flow->lock);
	return HRTIMER_NORESTART;
}

static int sdr_none_flow_init(struct sdr_flow *flow)
{
	hrtimer_init(&flow->rx_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	flow->rx_timer.function = sdr_none_rx_timer;
	sdr_credit_rx_init(&flow->none_rx, flow->none_window);
	return 0;
}

static void sdr_none_flow_stop(struct sdr_flow *flow)
{
	hrtimer_cancel(&flow->rx_timer);
}

/* Connected: no receive of the peer is known, ask, it may have posted some. */
static void sdr_none_connect(struct sdr_flow *flow,
			     const struct sdr_endpoint *peer,
			     struct sdr_ctrlq *q)
{
	lockdep_assert_held(&flow->lock);
	flow->rx_last_seq = flow->rx_next_post;
	flow->rx_low = flow->rx_seq0;
	sdr_credit_tx_init(&flow->none_tx, sdr_ep_get(peer->none_window),
			   flow->tx_next_seq);
	flow->none_tx.probes++;
	sdr_none_probe(flow, 0, q);
}

static int sdr_none_tx_init(struct sdr_flow *flow, struct sdr_txmsg *msg)
{
	return 0;
}

/*
 * NONE messages go out in order: a streamed one waiting for its next part,
 * or one waiting for credit, holds back the NONE messages after it, so
 * packets of a later message mean the earlier one is sent.
 */
static bool sdr_none_tx_next(struct sdr_flow *flow, struct sdr_txmsg *msg,
			     struct sdr_tx_round *r, struct sdr_pkt *pkt,
			     const u8 **data)
{
	u32 len;

	lockdep_assert_held(&flow->lock);
	if (msg->next_off == msg->msg_len ||
	    test_bit(SDR_POLICY_NONE, &r->held))
		return false;
	if (msg->next_off >= msg->ready) {
		__set_bit(SDR_POLICY_NONE, &r->held);
		return false;
	}
	if (sdr_credit_tx_check(&flow->none_tx, msg->seq)) {
		__set_bit(SDR_POLICY_NONE, &r->held);
		sdr_none_wait(flow);
		return false;
	}
	len = min(flow->payload, msg->msg_len - msg->next_off);
	pkt->flags = msg->next_off + len == msg->msg_len ? SDR_PKT_F_LAST : 0;
	pkt->payload_len = len;
	pkt->offset = msg->next_off;
	/* NONE has no RTT: ts is the low-water mark */
	pkt->ts = list_first_entry(&flow->tx_msgs, struct sdr_txmsg, node)->seq;
	pkt->aux = sdr_credit_tx_take(&flow->none_tx);
	*data = msg->data + pkt->offset;
	msg->next_off += len;
	return true;
}

/* Sent once each packet went out. */
static bool sdr_none_tx_status(struct sdr_flow *flow, struct sdr_txmsg *msg,
			       u8 *status)
{
	if (msg->streaming || msg->pkts_done != msg->npkts)
		return false;
	*status = msg->failed ? SDR_STATUS_FAILED : SDR_STATUS_OK;
	return true;
}

/* The sender of NONE messages waits for every receive posted. */
static void sdr_none_rx_post(struct sdr_flow *flow, u32 idx,
			     struct sdr_ctrlq *q)
{
	sdr_none_grant(flow, 0, q);
}

/* Every NONE DATA packet was taken off the receive queue, whatever it is. */
static int sdr_none_rx_accept(struct sdr_flow *flow, const struct sdr_pkt *pkt,
			      struct sdr_ctrlq *q)
{
	int ret = sdr_credit_rx_data(&flow->none_rx, pkt->aux);

	lockdep_assert_held(&flow->lock);
	if (ret < 0)
		return SDR_DROP_ACK_CLAIM;	/* beyond the grant */
	if (ret)
		sdr_none_grant(flow, 0, q);
	/* its own message is unfinished: low cannot be past it */
	if (sdr_seq_before(pkt->msg_seq, pkt->ts))
		return SDR_DROP_ACK_CLAIM;
	return 0;
}

/* DATA for slot @idx: the geometry the flow core checked is all there is. */
static int sdr_none_rx_data(struct sdr_flow *flow, u32 idx,
			    const struct sdr_pkt *pkt, const u8 *payload,
			    struct sdr_ctrlq *q)
{
	struct sdr_rxslot *slot = &flow->slots[idx];

	lockdep_assert_held(&flow->lock);
	if (slot->state == SDR_RECV_POSTED)
		sdr_slot_start(flow, idx, pkt);
	if (slot->state != SDR_RECV_ACTIVE)
		return SDR_DROP_STALE;
	if (test_bit(pkt->offset / flow->payload, sdr_slot_pkt_bits(flow, idx)))
		return SDR_DROP_DUP;
	sdr_slot_land(flow, idx, pkt, payload);
	if (slot->pkts_done == slot->npkts)
		sdr_slot_complete(flow, idx, SDR_STATUS_OK);
	sdr_none_schedule(flow, idx, pkt);
	return 0;
}

/* PROBE and CREDIT: 0 or a drop reason. */
static int sdr_none_rx_ctrl(struct sdr_flow *flow, const struct sdr_pkt *pkt,
			    const u8 *payload, struct sdr_ctrlq *q)
{
	switch (pkt->type) {
	case SDR_PKT_PROBE:
		if (sdr_credit_rx_probe(&flow->none_rx, pkt->aux) < 0)
			return SDR_DROP_ACK_CLAIM;
		sdr_none_grant(flow, pkt->ts, q);
		return 0;
	case SDR_PKT_CREDIT:
		return sdr_none_rx_credit(flow, pkt);
	}
	return SDR_DROP_POLICY;
}

static const char * const sdr_none_stats[] = {
	"window", "credit_waits", "probes_tx", "credits_tx", NULL,
};

static u64 sdr_none_stat(struct sdr_flow *flow, u32 i)
{
	switch (i) {
	case 0: return flow->none_rx.window;	/* granted to the peer */
	case 1: return flow->none_tx.waits;	/* our sends that waited */
	case 2: return flow->none_tx.probes;
	case 3: return flow->none_rx.grants;
	}
	return 0;
}

const struct sdr_policy_ops sdr_none_ops = {
	.id		= SDR_POLICY_NONE,
	.flow_init	= sdr_none_flow_init,
	.flow_stop	= sdr_none_flow_stop,
	.connect	= sdr_none_connect,
	.tx_init	= sdr_none_tx_init,
	.tx_next	= sdr_none_tx_next,
	.tx_status	= sdr_none_tx_status,
	.rx_post	= sdr_none_rx_post,
	.rx_accept	= sdr_none_rx_accept,
	.rx_data	= sdr_none_rx_data,
	.rx_ctrl	= sdr_none_rx_ctrl,
	.flow_timer	= sdr_none_flow_timer,
	.stats		= sdr_none_stats,
	.stat		= sdr_none_stat,
};
