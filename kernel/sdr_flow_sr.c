// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: policies SR and EC in a flow - drives the Selective Repeat engine
 * (sdr_sr.c, plain C shared with the host tests and the simulator) from
 * the receive path, the transmitter and one hrtimer per flow.  EC messages
 * run the same engine with parity; sdr_flow_ec.c handles their payloads.
 *
 * Everything here runs under flow->lock.  Control packets (ACK, NACK,
 * RNR) are built under the lock into a struct sdr_ctrlq and sent by the
 * caller after it dropped the lock (the transmitter's lock comes first).
 *
 * A message's policy is the flow's policy when it was posted, and it is
 * carried in every packet; the receiving slot takes the policy of the
 * message's first packet.  So a live switch of the flow's policy changes
 * only messages posted after it, on both sides, and loses nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/slab.h>

#include "sdr.h"
#include "sdr_flow.h"
#include "sdr_trace.h"

/* Floor for the timer: an engine deadline of "now" must not spin. */
#define SDR_SR_TIMER_MIN_NS	(50 * NSEC_PER_USEC)

void sdr_srk_cfg(struct sdr_flow *flow)
{
	struct sdr_sr_cfg cfg;

	sdr_sr_cfg_default(&cfg);
	cfg.pay = flow->payload;
	cfg.pkts_per_chunk = flow->pkts_per_chunk;
	cfg.max_inflight = READ_ONCE(sdr_max_inflight);
	cfg.alpha_pct = READ_ONCE(sdr_alpha_pct);
	cfg.rto_init_ns = (u64)READ_ONCE(sdr_rto_init_us) * NSEC_PER_USEC;
	cfg.rto_min_ns = (u64)READ_ONCE(sdr_rto_min_us) * NSEC_PER_USEC;
	cfg.rto_max_ns = (u64)READ_ONCE(sdr_rto_max_us) * NSEC_PER_USEC;
	cfg.dead_ns = (u64)READ_ONCE(sdr_dead_ms) * NSEC_PER_MSEC;
	cfg.ack_every = READ_ONCE(sdr_ack_every);
	cfg.ack_delay_ns = (u64)READ_ONCE(sdr_ack_delay_us) * NSEC_PER_USEC;
	/* Explicit: a receiver that never sends has no RTT estimate. */
	cfg.reorder_ns = (u64)READ_ONCE(sdr_reorder_us) * NSEC_PER_USEC;
	cfg.nack_interval_ns = (u64)READ_ONCE(sdr_nack_interval_us) *
			       NSEC_PER_USEC;
	cfg.ec_beta_pct = READ_ONCE(sdr_ec_beta_pct);
	if (cfg.rto_min_ns > cfg.rto_max_ns)
		cfg.rto_min_ns = cfg.rto_max_ns;
	sdr_sr_flow_init(&flow->sr, &cfg);
}

void sdr_srk_arm(struct sdr_flow *flow, u64 deadline_ns)
{
	u64 floor = ktime_get_ns() + SDR_SR_TIMER_MIN_NS;

	lockdep_assert_held(&flow->lock);
	if (flow->dead || deadline_ns == U64_MAX)
		return;
	deadline_ns = max(deadline_ns, floor);
	if (flow->sr_timer_at && flow->sr_timer_at <= deadline_ns)
		return;
	flow->sr_timer_at = deadline_ns;
	hrtimer_start(&flow->sr_timer, ns_to_ktime(deadline_ns),
		      HRTIMER_MODE_ABS_SOFT);
}

/* Trace the packets the engine declared lost since @t0/@n0 were read. */
static void sdr_srk_trace_lost(struct sdr_flow *flow, u32 seq, u64 t0, u64 n0)
{
	lockdep_assert_held(&flow->lock);

	if (flow->sr.st.timeouts != t0)
		trace_sdr_pkt_lost(flow->id, seq, flow->sr.st.timeouts - t0, false);
	if (flow->sr.st.nack_lost != n0)
		trace_sdr_pkt_lost(flow->id, seq, flow->sr.st.nack_lost - n0, true);
}

/*
 * The engine times a dead peer per message, from the message's last ACK
 * progress.  A message that waits for its turn behind others (the
 * in-flight budget is the flow's) must not count that wait: the peer is
 * dead only when the flow heard nothing from it for dead_ns.
 */
static void sdr_srk_heard(struct sdr_flow *flow, struct sdr_txmsg *msg)
{
	lockdep_assert_held(&flow->lock);

	if (msg->sr.last_progress_ns < flow->sr_heard_ns)
		msg->sr.last_progress_ns = flow->sr_heard_ns;
}

/* Queue a control packet about message @seq; NULL if the queue is full. */
struct sdr_ctrl *sdr_ctrlq_add(struct sdr_flow *flow, struct sdr_ctrlq *q,
			       u32 seq)
{
	struct sdr_ctrl *c;

	lockdep_assert_held(&flow->lock);
	if (q->n == ARRAY_SIZE(q->c))
		return NULL;
	c = &q->c[q->n++];
	memset(&c->hdr, 0, sizeof(c->hdr));
	c->hdr.policy = SDR_WIRE_POLICY_SR;
	c->hdr.dst_flow = flow->peer_flow;
	c->hdr.src_flow = flow->id;
	c->hdr.token = flow->peer_token;
	c->hdr.msg_seq = seq;
	c->len = 0;
	return c;
}

/* Collect what the receiver of slot @idx has to say now. */
void sdr_srk_rx_say(struct sdr_flow *flow, u32 idx, u64 now,
		    struct sdr_ctrlq *q)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	struct sdr_ack ack;
	struct sdr_pkt hdr;
	struct sdr_ctrl *c;

	lockdep_assert_held(&flow->lock);
	while (q->n < ARRAY_SIZE(q->c) &&
	       sdr_sr_rx_next_ctrl(&flow->sr, &slot->sr, now, &hdr, &ack) > 0) {
		c = sdr_ctrlq_add(flow, q, slot->seq);
		c->hdr.type = hdr.type;
		c->hdr.aux = hdr.aux;
		c->hdr.ts = hdr.ts;
		c->hdr.payload_len = hdr.payload_len;
		c->len = sdr_ack_encode(&ack, c->body);
	}
	sdr_srk_arm(flow, sdr_sr_rx_deadline(&flow->sr, &slot->sr));
}

void sdr_srk_rx_init(struct sdr_flow *flow, u32 idx)
{
	lockdep_assert_held(&flow->lock);

	sdr_sr_rx_init(&flow->sr, &flow->slots[idx].sr, flow->max_msg_size,
		       flow->sr_rx_mem + idx * flow->sr_rx_size);
}

/*
 * A DATA packet of an SR message for slot @idx (posted, active or done
 * and not yet recycled).  Returns 0 or a drop reason.
 */
int sdr_srk_rx_data(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		    const u8 *payload, struct sdr_ctrlq *q)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	bool active = slot->state != SDR_RECV_DONE;
	u64 now = ktime_get_ns();
	u8 *par = NULL;
	u32 g = 0;
	int ret;

	lockdep_assert_held(&flow->lock);
	/* EC parity needs a copy of its payload before the engine counts it */
	if ((pkt->flags & SDR_PKT_F_PARITY) && active &&
	    pkt->policy == SDR_WIRE_POLICY_EC) {
		par = sdr_eck_rx_buf(flow, payload);
		if (!par)
			return SDR_DROP_NOMEM;
	}
	ret = sdr_sr_rx_data(&flow->sr, &slot->sr, pkt, now);
	if (ret < 0) {
		kfree(par);
		return -ret;
	}
	flow->sr_data_ns = now;
	if (slot->state == SDR_RECV_POSTED)
		sdr_slot_start(flow, idx, pkt);
	if (slot->sr.ec_k)
		g = pkt->offset / flow->payload / slot->sr.ec_k;
	if (ret & SDR_SR_RX_PARITY && par)
		sdr_eck_rx_keep(flow, idx, pkt, par, now);
	else
		kfree(par);
	if (active) {
		if (ret & SDR_SR_RX_NEW)
			sdr_slot_land(flow, idx, pkt, payload);
		if (ret & SDR_SR_RX_FREE_PAR)
			sdr_eck_rx_free_group(flow, idx, g);
		if (ret & SDR_SR_RX_DECODE)
			sdr_eck_rx_queue_decode(flow, idx, g, now);
		if (ret & SDR_SR_RX_COMPLETE)
			sdr_slot_complete(flow, idx, SDR_STATUS_OK);
	}
	sdr_srk_rx_say(flow, idx, now, q);
	return ret & SDR_SR_RX_DUP ? SDR_DROP_DUP : 0;
}

/*
 * The final answer (SDR_ACK_F_COMPLETE or SDR_ACK_F_ABORT) for message
 * @seq, whose receive ended: the sender missed it, or must learn that the
 * application discarded the message.
 */
void sdr_srk_rx_final(struct sdr_flow *flow, u32 seq, u32 flags, u32 ts,
		      struct sdr_ctrlq *q)
{
	struct sdr_ctrl *c = sdr_ctrlq_add(flow, q, seq);
	struct sdr_ack ack;

	lockdep_assert_held(&flow->lock);
	if (!c)
		return;
	sdr_sr_stale_ack(&c->hdr, &ack, flags, ts);
	c->len = sdr_ack_encode(&ack, c->body);
	flow->sr.st.acks_tx++;
}

/* An SR DATA packet with no receive posted yet: RNR, so the sender backs off. */
void sdr_srk_rx_rnr(struct sdr_flow *flow, const struct sdr_pkt *pkt,
		    struct sdr_ctrlq *q)
{
	struct sdr_ctrl *c = sdr_ctrlq_add(flow, q, pkt->msg_seq);

	lockdep_assert_held(&flow->lock);
	if (!c)
		return;
	c->hdr.type = SDR_PKT_RNR;
	c->hdr.ts = pkt->ts;
	flow->stats.rnr_tx++;
}

/* The SR message with sequence @seq among the flow's sends, or NULL. */
static struct sdr_txmsg *sdr_srk_find(struct sdr_flow *flow, u32 seq)
{
	struct sdr_txmsg *msg;

	lockdep_assert_held(&flow->lock);
	list_for_each_entry(msg, &flow->tx_msgs, node)
		if (msg->seq == seq && sdr_policy_arq(msg->policy))
			return msg;
	return NULL;
}

/* ACK, NACK or RNR from the peer.  Returns 0 or a drop reason. */
int sdr_srk_rx_ctrl(struct sdr_flow *flow, const struct sdr_pkt *pkt,
		    const u8 *payload)
{
	struct sdr_txmsg *msg = sdr_srk_find(flow, pkt->msg_seq);
	u64 t0 = flow->sr.st.timeouts, n0 = flow->sr.st.nack_lost;
	u64 now = ktime_get_ns(), bad;
	struct sdr_ack ack;
	int ret;

	lockdep_assert_held(&flow->lock);
	if (!msg)
		return SDR_DROP_STALE;	/* finished already: a late copy */
	bad = flow->sr.st.bad_acks;
	if (pkt->type == SDR_PKT_RNR) {
		sdr_sr_tx_rnr(&flow->sr, &msg->sr, now);
	} else {
		ret = sdr_ack_decode(payload, pkt->payload_len, &ack);
		if (ret)
			return -ret;
		sdr_sr_tx_ack(&flow->sr, &msg->sr, pkt, &ack, now);
	}
	if (flow->sr.st.bad_acks != bad) {
		/* no true receiver said that: it changed nothing */
		trace_sdr_ack_rejected(flow->id, msg->seq, pkt->type, pkt->aux);
		return SDR_DROP_ACK_CLAIM;
	}
	flow->sr_heard_ns = now;
	sdr_srk_trace_lost(flow, msg->seq, t0, n0);
	sdr_srk_arm(flow, sdr_sr_tx_deadline(&flow->sr, &msg->sr, now));
	return 0;
}

/*
 * Allocate and start the sender state of a new SR or EC message (may
 * sleep).  A streamed message sends new packets only below msg->ready.
 */
int sdr_srk_tx_init(struct sdr_flow *flow, struct sdr_txmsg *msg)
{
	int ret;

	msg->sr_mem = kvzalloc(sdr_sr_tx_size(msg->msg_len, flow->payload),
			       GFP_KERNEL);
	if (!msg->sr_mem)
		return -ENOMEM;
	/* numbered (msg->sr.seq) when it is listed */
	ret = sdr_sr_tx_init(&flow->sr, &msg->sr, 0, msg->msg_len, msg->sr_mem,
			     ktime_get_ns());
	if (ret)
		return ret;
	sdr_sr_tx_set_limit(&msg->sr, msg->ready);
	return msg->policy == SDR_POLICY_EC ? sdr_eck_tx_init(flow, msg) : 0;
}

/* Next packet of SR or EC message @msg, if the engine sends one now. */
bool sdr_srk_tx_next(struct sdr_flow *flow, struct sdr_txmsg *msg, u64 now,
		     struct sdr_pkt *pkt, const u8 **data)
{
	u64 t0 = flow->sr.st.timeouts, n0 = flow->sr.st.nack_lost;
	struct sdr_sr_txd txd;
	int ret;

	lockdep_assert_held(&flow->lock);
	if (msg->sr.status)
		return false;
	sdr_srk_heard(flow, msg);
	ret = sdr_sr_tx_next(&flow->sr, &msg->sr, now, &txd);
	sdr_srk_trace_lost(flow, msg->seq, t0, n0);
	sdr_srk_arm(flow, sdr_sr_tx_deadline(&flow->sr, &msg->sr, now));
	if (ret != 1)
		return false;
	if (txd.flags & SDR_PKT_F_RETX)
		trace_sdr_retransmit(flow->id, msg->seq, txd.idx, txd.offset);
	pkt->flags = txd.flags;
	pkt->offset = txd.offset;
	pkt->payload_len = txd.len;
	pkt->ts = txd.ts;
	pkt->aux = txd.aux;
	if (txd.flags & SDR_PKT_F_PARITY)
		*data = sdr_eck_tx_parity(flow, msg, txd.idx,
					  SDR_EC_AUX_J(txd.aux));
	else
		*data = msg->data + txd.offset;
	return true;
}

/*
 * The flow's SR timer: retransmission timeouts, dead peers, delayed ACKs
 * and NACK rounds.  A receive with no packet for the dead-peer time
 * fails, as does every send of a flow whose peer stopped answering.
 */
enum hrtimer_restart sdr_flow_sr_timer(struct hrtimer *timer)
{
	struct sdr_flow *flow = container_of(timer, struct sdr_flow, sr_timer);
	struct sdr_ctrlq q = { .n = 0 };
	struct sdr_txmsg *msg;
	bool dead_peer = false;
	u64 now, dead_ns;
	int ret;
	u32 i;

	spin_lock_bh(&flow->lock);
	flow->sr_timer_at = 0;
	if (flow->dead || flow->state != SDR_FLOW_CONNECTED)
		goto out_unlock;
	now = ktime_get_ns();
	dead_ns = flow->sr.cfg.dead_ns;

	list_for_each_entry(msg, &flow->tx_msgs, node) {
		u64 t0 = flow->sr.st.timeouts;

		if (!sdr_policy_arq(msg->policy) || msg->flushed)
			continue;
		sdr_srk_heard(flow, msg);
		ret = sdr_sr_tx_poll(&flow->sr, &msg->sr, now);
		sdr_srk_trace_lost(flow, msg->seq, t0, flow->sr.st.nack_lost);
		if (ret == -ETIMEDOUT)
			dead_peer = true;
		else if (!msg->sr.status)
			sdr_srk_arm(flow, sdr_sr_tx_deadline(&flow->sr, &msg->sr,
							     now));
	}
	if (sdr_none_tx_timer(flow, now, &q))
		dead_peer = true;
	for (i = 0; i < flow->max_msgs; i++) {
		struct sdr_rxslot *s = &flow->slots[i];

		if (!sdr_policy_arq(s->policy) ||
		    (s->state != SDR_RECV_ACTIVE && s->state != SDR_RECV_DONE))
			continue;
		/* Dead only if no DATA came for any of the flow's messages. */
		if (s->state == SDR_RECV_ACTIVE && dead_ns &&
		    now - max(s->sr.last_ts_ns, flow->sr_data_ns) >= dead_ns) {
			dead_peer = true;
			continue;
		}
		sdr_srk_rx_say(flow, i, now, &q);
		if (s->state == SDR_RECV_ACTIVE && dead_ns)
			sdr_srk_arm(flow, max(s->sr.last_ts_ns, flow->sr_data_ns) +
				    dead_ns);
	}
	if (dead_peer) {
		pr_info_ratelimited("flow %u: peer silent for %u ms, failing the flow\n",
				    flow->id, (u32)div_u64(dead_ns, NSEC_PER_MSEC));
		sdr_flow_fail(flow);
	}
out_unlock:
	spin_unlock_bh(&flow->lock);
	sdr_ctrlq_send(flow, &q);
	if (!dead_peer)
		sdr_flow_queue_tx(flow);
	return HRTIMER_NORESTART;
}
