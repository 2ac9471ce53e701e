// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: policy SR in a flow - drives the Selective Repeat engine
 * (engine/sdr_sr.c, plain C shared with the host tests and the simulator)
 * from the receive path, the transmitter and the flow's timer.  EC
 * (sdr_flow_ec.c) runs the same engine with parity: it fills the parity
 * hooks its ops carry, which the code here calls for EC's messages.
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


/*
 * One receive map per slot, for SR and EC messages, charged to the flow
 * (and its opener's memory cgroup, though a worker may ready the
 * policy).  May sleep.
 */
int sdr_srk_flow_init(struct sdr_flow *flow)
{
	struct mem_cgroup *old;
	int ret;

	flow->sr_rx_size = ALIGN(sdr_sr_rx_size(flow->max_msg_size,
						flow->payload), 8);
	ret = sdr_flow_charge(flow, array_size(flow->max_msgs,
					       flow->sr_rx_size));
	if (ret)
		return ret;
	old = sdr_acct_memcg_enter(flow->acct);
	flow->sr_rx_mem = kvcalloc(flow->max_msgs, flow->sr_rx_size,
				   GFP_KERNEL_ACCOUNT);
	sdr_acct_memcg_leave(old);
	return flow->sr_rx_mem ? 0 : -ENOMEM;
}

static void sdr_srk_flow_free(struct sdr_flow *flow)
{
	kvfree(flow->sr_rx_mem);
	flow->sr_rx_mem = NULL;
}

/* SR's and EC's engine state: the flow's own. */
struct sdr_sr_flow *sdr_srk_engine(struct sdr_flow *flow)
{
	return &flow->sr;
}

/* The engine state message or receive of policy @ops runs on. */
static struct sdr_sr_flow *sdr_srk_ef(struct sdr_flow *flow,
				      const struct sdr_policy_ops *ops)
{
	return ops->engine(flow);
}

/* Trace the packets @ef declared lost since @t0/@n0 were read. */
static void sdr_srk_trace_lost(struct sdr_flow *flow, struct sdr_sr_flow *ef,
			       u32 seq, u64 t0, u64 n0)
{
	lockdep_assert_held(&flow->lock);

	if (ef->st.timeouts != t0)
		trace_sdr_pkt_lost(flow->id, seq, ef->st.timeouts - t0, false);
	if (ef->st.nack_lost != n0)
		trace_sdr_pkt_lost(flow->id, seq, ef->st.nack_lost - n0, true);
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

/* Collect what the receiver of slot @idx has to say now. */
void sdr_srk_rx_say(struct sdr_flow *flow, u32 idx, u64 now,
		    struct sdr_ctrlq *q)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	struct sdr_sr_flow *ef;
	struct sdr_ack ack;
	struct sdr_pkt hdr;
	struct sdr_ctrl *c;

	lockdep_assert_held(&flow->lock);
	ef = sdr_srk_ef(flow, slot->ops);
	while (q->n < ARRAY_SIZE(q->c) &&
	       sdr_sr_rx_next_ctrl(ef, &slot->sr, now, &hdr, &ack) > 0) {
		c = sdr_ctrlq_add(flow, q, slot->ops->id, slot->seq);
		c->hdr.type = hdr.type;
		c->hdr.aux = hdr.aux;
		c->hdr.ts = hdr.ts;
		c->hdr.imm = hdr.imm;
		c->hdr.payload_len = hdr.payload_len;
		c->len = sdr_ack_encode(&ack, c->body);
	}
	sdr_flow_arm(flow, sdr_sr_rx_deadline(ef, &slot->sr));
}

void sdr_srk_rx_post(struct sdr_flow *flow, u32 idx,
		     struct sdr_ctrlq *q)
{
	lockdep_assert_held(&flow->lock);

	sdr_sr_rx_init(&flow->sr, &flow->slots[idx].sr, flow->max_msg_size,
		       flow->sr_rx_mem + idx * flow->sr_rx_size);
	/* a grouped receive is waited for: it NACKs a silent tail */
	sdr_sr_rx_set_urgent(&flow->sr, &flow->slots[idx].sr,
			     flow->slots[idx].group != 0, 0);
}

/*
 * A DATA packet of an SR message for slot @idx (posted, active or done
 * and not yet recycled).  Returns 0 or a drop reason.
 */
int sdr_srk_rx_data(struct sdr_flow *flow, u32 idx,
		    const struct sdr_pkt *pkt, const u8 *payload,
		    struct sdr_ctrlq *q)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	const struct sdr_parity_ops *pops = slot->ops->parity;
	struct sdr_sr_flow *ef = sdr_srk_ef(flow, slot->ops);
	bool active = slot->state != SDR_RECV_DONE;
	u64 now = ktime_get_ns();
	u8 *par = NULL;
	u32 g = 0;
	int ret;

	lockdep_assert_held(&flow->lock);
	/* EC parity needs a copy of its payload before the engine counts it */
	if ((pkt->flags & SDR_PKT_F_PARITY) && active && pops) {
		par = pops->rx_buf(flow, payload);
		if (!par)
			return SDR_DROP_NOMEM;
	}
	ret = sdr_sr_rx_data(ef, &slot->sr, pkt, now);
	if (ret < 0) {
		if (par)
			pops->rx_put(flow, par);
		return -ret;
	}
	flow->sr_data_ns = now;
	if (slot->state == SDR_RECV_POSTED)
		sdr_slot_start(flow, idx, pkt);
	if (slot->sr.ec_k)
		g = pkt->offset / flow->payload / slot->sr.ec_k;
	if (ret & SDR_SR_RX_PARITY && par)
		pops->rx_keep(flow, idx, pkt, par, now);
	else if (par)
		pops->rx_put(flow, par);
	if (active) {
		if (ret & SDR_SR_RX_NEW)
			sdr_slot_land(flow, idx, pkt, payload);
		if ((ret & SDR_SR_RX_FREE_PAR) && pops)
			pops->rx_free_group(flow, idx, g);
		if ((ret & SDR_SR_RX_DECODE) && pops)
			pops->rx_queue_decode(flow, idx, g, now);
		if ((ret & SDR_SR_RX_COMPLETE) && slot->stream)
			sdr_slot_stream_done(flow, idx, slot->sr.msg_len,
					     slot->sr.npkts);
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
static void sdr_srk_rx_final(struct sdr_flow *flow, u8 policy, u32 seq,
			     u32 flags, u32 ts, u32 dup, struct sdr_ctrlq *q)
{
	struct sdr_ctrl *c = sdr_ctrlq_add(flow, q, policy, seq);
	struct sdr_ack ack;

	lockdep_assert_held(&flow->lock);
	if (!c)
		return;
	sdr_sr_stale_ack(&c->hdr, &ack, flags, ts, dup);
	c->len = sdr_ack_encode(&ack, c->body);
	flow->sr.st.acks_tx++;
}

/* An SR DATA packet with no receive posted yet: RNR, so the sender backs off. */
static void sdr_srk_rx_rnr(struct sdr_flow *flow, const struct sdr_pkt *pkt,
			   struct sdr_ctrlq *q)
{
	struct sdr_ctrl *c = sdr_ctrlq_add(flow, q, pkt->policy, pkt->msg_seq);

	lockdep_assert_held(&flow->lock);
	if (!c)
		return;
	c->hdr.type = SDR_PKT_RNR;
	c->hdr.ts = pkt->ts;
	flow->stats.rnr_tx++;
}

/*
 * DATA for no posted receive: RNR when a receive is merely not posted yet
 * (the sender backs off); the final answer again for a receive that ended
 * and was recycled, if it is recent enough to be remembered: COMPLETE if
 * it was delivered, ABORT if the application discarded it.
 */
void sdr_srk_rx_unmatched(struct sdr_flow *flow,
			  const struct sdr_pkt *pkt, s32 ahead,
			  struct sdr_ctrlq *q)
{
	u32 flags;

	lockdep_assert_held(&flow->lock);
	if (ahead >= 0) {
		if (ahead < (s32)flow->max_msgs)
			sdr_srk_rx_rnr(flow, pkt, q);
		return;
	}
	if (-(s64)ahead <= SDR_RX_HIST &&
	    pkt->msg_seq - flow->rx_seq0 < flow->rx_next_post - flow->rx_seq0) {
		flags = test_bit(pkt->msg_seq % SDR_RX_HIST, flow->rx_delivered) ?
			SDR_ACK_F_COMPLETE : SDR_ACK_F_ABORT;
		/* a delivered message's data packet came again: name it */
		sdr_srk_rx_final(flow, pkt->policy, pkt->msg_seq, flags,
				 pkt->ts, pkt->flags & SDR_PKT_F_PARITY ? 0 :
				 pkt->offset / flow->payload + 1, q);
	}
}

/* The application discarded slot @idx unfinished: tell the sender. */
void sdr_srk_rx_abandon(struct sdr_flow *flow, u32 idx,
			struct sdr_ctrlq *q)
{
	struct sdr_rxslot *slot = &flow->slots[idx];

	sdr_srk_rx_final(flow, slot->ops->id, slot->seq, SDR_ACK_F_ABORT, 0, 0,
			 q);
}

/* The SR message with sequence @seq among the flow's sends, or NULL. */
static struct sdr_txmsg *sdr_srk_find(struct sdr_flow *flow, u32 seq)
{
	struct sdr_txmsg *msg;

	lockdep_assert_held(&flow->lock);
	list_for_each_entry(msg, &flow->tx_msgs, node)
		if (msg->seq == seq && (msg->ops->features & SDR_PF_ACKED))
			return msg;
	return NULL;
}

/* ACK, NACK or RNR from the peer.  Returns 0 or a drop reason. */
int sdr_srk_rx_ctrl(struct sdr_flow *flow, const struct sdr_pkt *pkt,
		    const u8 *payload, struct sdr_ctrlq *q)
{
	struct sdr_txmsg *msg = sdr_srk_find(flow, pkt->msg_seq);
	u64 now = ktime_get_ns(), bad, t0, n0;
	struct sdr_sr_flow *ef;
	struct sdr_ack ack;
	int ret;

	lockdep_assert_held(&flow->lock);
	if (pkt->type != SDR_PKT_ACK && pkt->type != SDR_PKT_NACK &&
	    pkt->type != SDR_PKT_RNR)
		return SDR_DROP_POLICY;
	if (!msg) {
		/* finished already: a late copy, or one naming a duplicate */
		if (pkt->type == SDR_PKT_ACK && pkt->offset) {
			sdr_sr_flow_dup(&flow->sr, pkt->msg_seq, pkt->offset - 1);
			if (flow->ad)
				sdr_sr_flow_dup(flow->ad, pkt->msg_seq,
						pkt->offset - 1);
		}
		return SDR_DROP_STALE;
	}
	/* an answer names its message's policy, which says whose state it is */
	if (pkt->policy != msg->ops->id)
		return SDR_DROP_POLICY;
	ef = sdr_srk_ef(flow, msg->ops);
	t0 = ef->st.timeouts;
	n0 = ef->st.nack_lost;
	bad = ef->st.bad_acks;
	if (pkt->type == SDR_PKT_RNR) {
		sdr_sr_tx_rnr(ef, &msg->sr, now);
	} else {
		ret = sdr_ack_decode(payload, pkt->payload_len, &ack);
		if (ret)
			return -ret;
		sdr_sr_tx_ack(ef, &msg->sr, pkt, &ack, now);
	}
	if (ef->st.bad_acks != bad) {
		/* no true receiver said that: it changed nothing */
		trace_sdr_ack_rejected(flow->id, msg->seq, pkt->type, pkt->aux);
		return SDR_DROP_ACK_CLAIM;
	}
	flow->sr_heard_ns = now;
	sdr_srk_trace_lost(flow, ef, msg->seq, t0, n0);
	sdr_flow_arm(flow, sdr_sr_tx_deadline(ef, &msg->sr, now));
	return 0;
}

/*
 * Allocate and start the sender state of a new SR or EC message (may
 * sleep).  A streamed message sends new packets only below msg->ready.
 */
int sdr_srk_tx_init(struct sdr_flow *flow, struct sdr_txmsg *msg)
{
	struct sdr_sr_flow *ef = sdr_srk_ef(flow, msg->ops);
	size_t size;
	int ret;

	if (msg->parts) {
		/* a stream of parts: room for as many packets as it may have */
		size = sdr_sr_tx_stream_size(flow->max_msg_size, flow->payload);
		ret = sdr_txmsg_charge(flow, msg, size);
		if (ret)
			return ret;
		msg->sr_mem = kvzalloc(size, GFP_KERNEL_ACCOUNT);
		if (!msg->sr_mem)
			return -ENOMEM;
		return sdr_sr_tx_init_stream(ef, &msg->sr, 0,
					     flow->max_msg_size, msg->sr_mem,
					     ktime_get_ns());
	}
	size = sdr_sr_tx_size(msg->msg_len, flow->payload);
	ret = sdr_txmsg_charge(flow, msg, size);
	if (ret)
		return ret;
	msg->sr_mem = kvzalloc(size, GFP_KERNEL_ACCOUNT);
	if (!msg->sr_mem)
		return -ENOMEM;
	/* numbered (msg->sr.seq) when it is listed */
	ret = sdr_sr_tx_init(ef, &msg->sr, 0, msg->msg_len, msg->sr_mem,
			     ktime_get_ns());
	if (ret)
		return ret;
	sdr_sr_tx_set_limit(&msg->sr, msg->ready);
	return msg->ops->parity ? msg->ops->parity->tx_init(flow, msg) : 0;
}

void sdr_srk_tx_free(struct sdr_txmsg *msg)
{
	kvfree(msg->sr_mem);
}

/* A streamed message may send up to its new ready. */
void sdr_srk_tx_ready(struct sdr_flow *flow, struct sdr_txmsg *msg)
{
	sdr_sr_tx_set_limit(&msg->sr, msg->ready);
}

/* Next packet of SR or EC message @msg, if the engine sends one now. */
bool sdr_srk_tx_next(struct sdr_flow *flow, struct sdr_txmsg *msg,
		     struct sdr_tx_round *r, struct sdr_pkt *pkt,
		     const u8 **data)
{
	struct sdr_sr_flow *ef = sdr_srk_ef(flow, msg->ops);
	u64 t0 = ef->st.timeouts, n0 = ef->st.nack_lost;
	u64 now = r->now;
	struct sdr_sr_txd txd;
	int ret;

	lockdep_assert_held(&flow->lock);
	if (msg->sr.status)
		return false;
	sdr_srk_heard(flow, msg);
	sdr_sr_tx_set_urgent(&msg->sr, r->urgent);
	ret = sdr_sr_tx_next(ef, &msg->sr, now, &txd);
	sdr_srk_trace_lost(flow, ef, msg->seq, t0, n0);
	sdr_flow_arm(flow, sdr_sr_tx_deadline(ef, &msg->sr, now));
	if (ret != 1)
		return false;
	if (txd.flags & SDR_PKT_F_RETX)
		trace_sdr_retransmit(flow->id, msg->seq, txd.idx, txd.offset);
	pkt->flags = txd.flags;
	pkt->offset = txd.offset;
	pkt->payload_len = txd.len;
	pkt->ts = txd.ts;
	pkt->aux = txd.aux;
	r->path = txd.path;
	if (msg->parts) {
		/* where its part says; the end packet: no byte, the length */
		pkt->land = txd.land;
		pkt->part = txd.part_base;
		pkt->msg_len = txd.flags & SDR_PKT_F_LAST ? msg->sr.msg_len : 0;
		*data = txd.len ? msg->tparts[txd.part].data +
				  (txd.land - txd.part_base) : NULL;
	} else if ((txd.flags & SDR_PKT_F_PARITY) && msg->ops->parity) {
		*data = msg->ops->parity->tx_row(flow, msg, txd.idx,
						 SDR_EC_AUX_J(txd.aux));
	} else {
		*data = msg->data + txd.offset;
	}
	return true;
}

/* Done once the engine is and no packet of it is still posted. */
bool sdr_srk_tx_status(struct sdr_flow *flow, struct sdr_txmsg *msg,
		       u8 *status)
{
	if (!msg->sr.status || msg->pkts_done != msg->pkts_posted)
		return false;
	*status = msg->sr.status == SDR_SR_DONE ? SDR_STATUS_OK :
						  SDR_STATUS_FAILED;
	return true;
}

/*
 * The flow's timer for message @msg: retransmission timeouts and a dead
 * peer (every send of a flow whose peer stopped answering fails).
 */
bool sdr_srk_tx_poll(struct sdr_flow *flow, struct sdr_txmsg *msg,
		     u64 now)
{
	struct sdr_sr_flow *ef = sdr_srk_ef(flow, msg->ops);
	u64 t0 = ef->st.timeouts;
	int ret;

	lockdep_assert_held(&flow->lock);
	sdr_srk_heard(flow, msg);
	ret = sdr_sr_tx_poll(ef, &msg->sr, now);
	sdr_srk_trace_lost(flow, ef, msg->seq, t0, ef->st.nack_lost);
	if (ret == -ETIMEDOUT)
		return true;
	if (!msg->sr.status)
		sdr_flow_arm(flow, sdr_sr_tx_deadline(ef, &msg->sr, now));
	return false;
}

/*
 * The flow's timer for slot @idx: delayed ACKs and NACK rounds.  A
 * receive with no packet for the dead-peer time fails the flow, but only
 * if no DATA came for any of the flow's messages.
 */
bool sdr_srk_rx_poll(struct sdr_flow *flow, u32 idx, u64 now,
		     struct sdr_ctrlq *q)
{
	struct sdr_rxslot *s = &flow->slots[idx];
	u64 last = max(s->sr.last_ts_ns, flow->sr_data_ns);

	lockdep_assert_held(&flow->lock);
	if (s->state == SDR_RECV_ACTIVE && flow->dead_ns &&
	    now - last >= flow->dead_ns)
		return true;
	sdr_srk_rx_say(flow, idx, now, q);
	if (s->state == SDR_RECV_ACTIVE && flow->dead_ns)
		sdr_flow_arm(flow, last + flow->dead_ns);
	return false;
}

static const char * const sdr_srk_stats[] = {
	"retransmits", "timeouts", "spurious_retx", "acks_tx", "acks_rx",
	"nacks_tx", "nacks_rx", "rnr_rx", "srtt_us", "rto_us",
	"urgent_dups", "tail_probes", SDR_FLOW_CC_NAMES, NULL,
};

/* The engine's counters of the flow's SR and EC messages, and its RTT. */
static u64 sdr_srk_stat(struct sdr_flow *flow, u32 i)
{
	const struct sdr_sr_stats *st = &flow->sr.st;

	switch (i) {
	case 0: return st->retx_pkts;
	case 1: return st->timeouts;
	case 2: return st->spurious;
	case 3: return st->acks_tx;
	case 4: return st->acks_rx;
	case 5: return st->nacks_tx;
	case 6: return st->nacks_rx;
	case 7: return st->rnr_rx;
	case 8: return div_u64(flow->sr.rtt.srtt_ns, NSEC_PER_USEC);
	case 9: return div_u64(sdr_rtt_rto(&flow->sr.rtt), NSEC_PER_USEC);
	case 10: return st->urgent_dups;
	case 11: return st->tail_probes;
	}
	if (i >= 12 && i < 12 + SDR_FLOW_CC_STATS)
		return sdr_flow_cc_stat(&flow->sr, i - 12);
	return 0;
}

const struct sdr_policy_ops sdr_sr_ops = {
	.id		= SDR_POLICY_SR,
	.features	= SDR_PF_ACKED | SDR_PF_PATHS | SDR_PF_STREAM,
	.engine		= sdr_srk_engine,
	.flow_init	= sdr_srk_flow_init,
	.flow_free	= sdr_srk_flow_free,
	.tx_init	= sdr_srk_tx_init,
	.tx_free	= sdr_srk_tx_free,
	.tx_ready	= sdr_srk_tx_ready,
	.tx_next	= sdr_srk_tx_next,
	.tx_status	= sdr_srk_tx_status,
	.tx_poll	= sdr_srk_tx_poll,
	.rx_post	= sdr_srk_rx_post,
	.rx_data	= sdr_srk_rx_data,
	.rx_unmatched	= sdr_srk_rx_unmatched,
	.rx_ctrl	= sdr_srk_rx_ctrl,
	.rx_abandon	= sdr_srk_rx_abandon,
	.rx_poll	= sdr_srk_rx_poll,
	.stats		= sdr_srk_stats,
	.stat		= sdr_srk_stat,
};
