// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: flow services - what the flow core and the policies both use:
 * slots and their shared state, completions, the send list, control
 * packets, the flow's timer, and the end of a flow.  Calls no policy
 * but through a message's or slot's ops.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "sdr.h"
#include "sdr_bitmap.h"
#include "sdr_flow.h"
#include "sdr_trace.h"

/* Floor for the timer: a deadline of "now" must not spin. */
#define SDR_FLOW_TIMER_MIN_NS	(50 * NSEC_PER_USEC)

struct sdr_recv_state *sdr_slot_state(struct sdr_flow *flow, u32 idx)
{
	return (struct sdr_recv_state *)(flow->state_area +
					 (size_t)idx * flow->state_stride);
}

unsigned long *sdr_slot_pkt_bits(struct sdr_flow *flow, u32 idx)
{
	return (unsigned long *)((u8 *)sdr_slot_state(flow, idx) +
				 flow->pkt_bitmap_off);
}

static unsigned long *sdr_slot_chunk_bits(struct sdr_flow *flow, u32 idx)
{
	return (unsigned long *)((u8 *)sdr_slot_state(flow, idx) +
				 flow->chunk_bitmap_off);
}

void sdr_flow_get(struct sdr_flow *flow)
{
	kref_get(&flow->ref);
}

/* The final put can come from softirq: free from process context. */
static void sdr_flow_release(struct kref *ref)
{
	struct sdr_flow *flow = container_of(ref, struct sdr_flow, ref);

	queue_work(sdr_wq, &flow->free_work);
}

void sdr_flow_put(struct sdr_flow *flow)
{
	kref_put(&flow->ref, sdr_flow_release);
}

/*
 * Under rcu_read_lock(): flow @id of @flows (a device's or a context's)
 * with a reference, or NULL.
 */
struct sdr_flow *sdr_flow_lookup_rcu(struct xarray *flows, u32 id)
{
	struct sdr_flow *flow = xa_load(flows, id);

	if (flow && !kref_get_unless_zero(&flow->ref))
		flow = NULL;
	return flow;
}

/* A post to a flow that teardown stopped under the caller. */
int sdr_flow_gone(struct sdr_flow *flow)
{
	return READ_ONCE(flow->sdev->dying) ? -ENODEV : -ENOENT;
}

int sdr_flow_usable(struct sdr_flow *flow)
{
	switch (flow->state) {
	case SDR_FLOW_IDLE:
		return -ENOTCONN;
	case SDR_FLOW_CONNECTED:
		return 0;
	default:
		return -EPIPE;
	}
}

/* ------------------------------------------------------------------ */
/* Completions (flow->lock held) */

/*
 * Post a completion (reserved at post) to the flow's context; then the
 * member's @group (0: none) counts it.
 */
void sdr_flow_cqe(struct sdr_flow *flow, u8 type, u8 status, u32 seq,
		  u32 slot, u32 len, u32 imm, u64 user_data, u32 group)
{
	struct sdr_cqe cqe = {
		.user_data	= user_data,
		.flow_id	= flow->id,
		.seq		= seq,
		.slot		= slot,
		.len		= len,
		.imm		= imm,
		.type		= type,
		.status		= status,
	};

	lockdep_assert_held(&flow->lock);
	if (status == SDR_STATUS_OK || status == SDR_STATUS_PARTIAL)
		trace_sdr_msg_done(flow->id, type == SDR_CQE_RECV, seq, len,
				   status);
	else
		trace_sdr_msg_failed(flow->id, type == SDR_CQE_RECV, seq, len,
				     status);
	if (!flow->ctx)
		return;
	sdr_ctx_cq_push(flow->ctx, &cqe);
	if (group)
		sdr_group_done(flow->ctx, group, status);
}

void sdr_slot_complete(struct sdr_flow *flow, u32 idx, u8 status)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	struct sdr_recv_state *st = sdr_slot_state(flow, idx);

	lockdep_assert_held(&flow->lock);
	slot->state = SDR_RECV_DONE;
	if (slot->ops && slot->ops->rx_release)
		slot->ops->rx_release(flow, idx);
	WRITE_ONCE(st->status, status);
	/* pairs with the process's acquire of state: status is visible */
	smp_store_release(&st->state, SDR_RECV_DONE);
	if (flow->rx_posted)
		flow->rx_posted--;
	if (status == SDR_STATUS_OK) {
		__set_bit(slot->seq % SDR_RX_HIST, flow->rx_delivered);
		flow->stats.msgs_received++;
	} else if (status == SDR_STATUS_FAILED || status == SDR_STATUS_TOOBIG) {
		flow->stats.msgs_failed++;
	}
	sdr_flow_cqe(flow, SDR_CQE_RECV, status, slot->seq, idx,
		     slot->msg_len, READ_ONCE(st->imm), slot->user_data,
		     slot->group);
}

/* ------------------------------------------------------------------ */
/* What a flow charges (sdr_acct.c) */

/*
 * State @flow keeps for its life (policy state, tables), @bytes more:
 * charged to its opener, given back as it leaves its context
 * (sdr_flow_unaccount()).  -ENOMEM past the opener's limits.
 */
int sdr_flow_charge(struct sdr_flow *flow, size_t bytes)
{
	int ret = sdr_acct_charge(flow->acct, bytes);

	if (!ret)
		atomic_long_add(PAGE_ALIGN(bytes), &flow->charged);
	return ret;
}

/*
 * @bytes more in @held (flow->tx_mem or rx_mem), within @max_mb MiB,
 * charged to the opener in whole pages of the total (so many small
 * buffers are not each a page).  -ENOSPC past @max_mb, -ENOMEM past the
 * opener's limits, with nothing added.  Any context: mem_lock is a
 * leaf, taken under flow->lock or alone.
 */
static int sdr_flow_mem_add(struct sdr_flow *flow, size_t *held,
			    unsigned int max_mb, size_t bytes)
{
	size_t max = (size_t)max_mb << 20, cur, more;
	int ret = 0;

	spin_lock_bh(&flow->mem_lock);
	cur = *held;
	more = PAGE_ALIGN(cur + bytes) - PAGE_ALIGN(cur);
	if (cur > max || bytes > max - cur)
		ret = -ENOSPC;
	else if (more && sdr_acct_charge(flow->acct, more))
		ret = -ENOMEM;
	else
		*held = cur + bytes;
	spin_unlock_bh(&flow->mem_lock);
	return ret;
}

static void sdr_flow_mem_sub(struct sdr_flow *flow, size_t *held,
			     size_t bytes)
{
	size_t cur;

	if (!bytes)
		return;
	spin_lock_bh(&flow->mem_lock);
	cur = *held;
	if (WARN_ON_ONCE(bytes > cur))
		bytes = cur;
	*held = cur - bytes;
	sdr_acct_uncharge(flow->acct, PAGE_ALIGN(cur) - PAGE_ALIGN(cur - bytes));
	spin_unlock_bh(&flow->mem_lock);
}

/*
 * Kernel memory a send of @flow is about to hold, @bytes more beside the
 * @own it already holds, within flow_send_max_mb a flow and the opener's
 * limits.  Over one: -EAGAIN while the flow's other sends hold some (it
 * clears as they complete), -ENOMEM when nothing of theirs would make
 * room.
 */
static int sdr_flow_tx_add(struct sdr_flow *flow, size_t bytes, size_t own)
{
	int ret = sdr_flow_mem_add(flow, &flow->tx_mem,
				   READ_ONCE(sdr_flow_send_max_mb), bytes);

	if (!ret)
		return 0;
	return READ_ONCE(flow->tx_mem) > own ? -EAGAIN : -ENOMEM;
}

int sdr_flow_tx_charge(struct sdr_flow *flow, size_t bytes)
{
	return sdr_flow_tx_add(flow, bytes, 0);
}

void sdr_flow_tx_uncharge(struct sdr_flow *flow, size_t bytes)
{
	sdr_flow_mem_sub(flow, &flow->tx_mem, bytes);
}

/*
 * EC parity @flow's receives are about to hold (peer-driven, softirq):
 * within flow_recv_max_mb and the opener's limits, else -ENOMEM (the
 * caller drops the parity and SR repairs).
 */
int sdr_flow_rx_charge(struct sdr_flow *flow, size_t bytes)
{
	return sdr_flow_mem_add(flow, &flow->rx_mem,
				READ_ONCE(sdr_flow_recv_max_mb), bytes) ?
	       -ENOMEM : 0;
}

void sdr_flow_rx_uncharge(struct sdr_flow *flow, size_t bytes)
{
	sdr_flow_mem_sub(flow, &flow->rx_mem, bytes);
}

/* sdr_flow_tx_charge() for @msg: given back when it is freed. */
int sdr_txmsg_charge(struct sdr_flow *flow, struct sdr_txmsg *msg,
		     size_t bytes)
{
	int ret = sdr_flow_tx_add(flow, bytes, msg->charged);

	if (!ret)
		msg->charged += bytes;
	return ret;
}

/*
 * May run under flow->lock: kvfree defers vfree out of atomic context.
 * The charge goes back with the memory, whatever freed the message
 * (completion, failure, flush at destroy or device removal).
 */
static void sdr_txmsg_release(struct kref *ref)
{
	struct sdr_txmsg *msg = container_of(ref, struct sdr_txmsg, ref);
	u32 i;

	if (msg->ops && msg->ops->tx_free)
		msg->ops->tx_free(msg);
	if (msg->mr)
		sdr_mr_put(msg->mr);
	kvfree(msg->staging);
	for (i = 0; msg->tparts && i < msg->sr.nparts; i++) {
		if (msg->tparts[i].mr)
			sdr_mr_put(msg->tparts[i].mr);
		kvfree(msg->tparts[i].staging);
	}
	kvfree(msg->tparts);
	sdr_flow_tx_uncharge(msg->flow, msg->charged);
	kfree(msg);
}

void sdr_txmsg_put(struct sdr_txmsg *msg)
{
	kref_put(&msg->ref, sdr_txmsg_release);
}

/* Take @msg off the flow's list (flow->lock held): drops the list's ref. */
void sdr_txmsg_unlist(struct sdr_flow *flow, struct sdr_txmsg *msg)
{
	lockdep_assert_held(&flow->lock);
	list_del(&msg->node);
	msg->listed = false;
	flow->tx_inflight_msgs--;
	sdr_txmsg_put(msg);
}

/* ------------------------------------------------------------------ */
/* Receive side */

/*
 * The slot of receive @seq: counted from the peer's first sequence number,
 * which is random, so the 32-bit wrap does not break the cycle of slots
 * when max_msgs is not a power of two.
 */
u32 sdr_rx_slot_of(const struct sdr_flow *flow, u32 seq)
{
	return (seq - flow->rx_seq0) % flow->max_msgs;
}

bool sdr_slot_waiting(const struct sdr_rxslot *s)
{
	return s->state == SDR_RECV_POSTED || s->state == SDR_RECV_ACTIVE;
}

/*
 * First packet of a message: the slot learns its size, immediate and
 * where it lands (sdr_flow_rx_data() checked that).
 */
void sdr_slot_start(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt)
{
	struct sdr_recv_state *st = sdr_slot_state(flow, idx);
	struct sdr_rxslot *slot = &flow->slots[idx];

	lockdep_assert_held(&flow->lock);
	if (pkt->flags & SDR_PKT_F_STREAM) {
		/* its length, packets and chunks come with its end */
		slot->stream = true;
		slot->msg_len = 0;
		slot->dst_off = 0;
		slot->npkts = 0;
		slot->nchunks = 0;
		slot->chunk_bytes = flow->stream_chunks +
				    (size_t)idx * 2 * flow->max_chunks;
		slot->chunk_want = slot->chunk_bytes + flow->max_chunks;
		memset(slot->chunk_bytes, 0,
		       2 * flow->max_chunks * sizeof(u32));
	} else {
		slot->msg_len = pkt->msg_len;
		slot->dst_off = pkt->land - pkt->offset;
		slot->npkts = sdr_msg_npkts(pkt->msg_len, flow->payload);
		slot->nchunks = sdr_msg_nchunks(slot->msg_len,
						flow->chunk_size);
	}
	slot->state = SDR_RECV_ACTIVE;
	WRITE_ONCE(st->imm, pkt->imm);
	WRITE_ONCE(st->msg_len, slot->msg_len);
	WRITE_ONCE(st->dst_off, slot->dst_off);
	WRITE_ONCE(st->chunks, slot->nchunks);
	WRITE_ONCE(st->packets, slot->npkts);
	/* imm, msg_len and the counts before the flag says they are set */
	smp_store_release(&st->flags, SDR_RECV_F_STARTED |
			  (slot->stream ? SDR_RECV_F_STREAM : 0));
	WRITE_ONCE(st->state, SDR_RECV_ACTIVE);
}

/*
 * Where slot @idx's message starts: dst_off bytes into the registered
 * memory its receive named (SDR_RECV_MR), else into its slot of the
 * receive region.  The message fits: sdr_flow_rx_data() refused one that
 * ends past dst_len.
 */
u8 *sdr_slot_data(struct sdr_flow *flow, u32 idx)
{
	struct sdr_rxslot *slot = &flow->slots[idx];

	return (slot->dst ? slot->dst :
		flow->recv_region + (size_t)idx * flow->slot_stride) +
	       slot->dst_off;
}

/*
 * The first packet of slot @idx's message says it is longer than the
 * registered memory its receive named: the receive completes
 * SDR_STATUS_TOOBIG with nothing landed, and the sender is told as for a
 * discarded receive (SR, EC, ADAPTIVE: ABORT, its send fails).
 */
void sdr_slot_refuse(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		     struct sdr_ctrlq *q)
{
	struct sdr_rxslot *slot = &flow->slots[idx];

	lockdep_assert_held(&flow->lock);
	if (slot->state == SDR_RECV_POSTED)
		sdr_slot_start(flow, idx, pkt);
	slot->refused = true;
	sdr_slot_complete(flow, idx, SDR_STATUS_TOOBIG);
	if (slot->ops->rx_abandon)
		slot->ops->rx_abandon(flow, idx, q);
}

/*
 * A streamed message's new packet @pkt is in place in slot @idx: count
 * its bytes in the chunks it covers, and set the bit of each chunk that
 * has them all (a part that ends inside a chunk says how many that
 * chunk will have, and the receive's last chunk may be short).
 */
static void sdr_slot_mark_stream(struct sdr_flow *flow, u32 idx,
				 const struct sdr_pkt *pkt)
{
	struct sdr_recv_state *st = sdr_slot_state(flow, idx);
	struct sdr_rxslot *slot = &flow->slots[idx];
	u64 cs = flow->chunk_size, end = (u64)pkt->land + pkt->payload_len;
	u64 from, to, want;
	u32 c;

	if (!pkt->payload_len)
		return;		/* the end packet lands nothing */
	if ((pkt->flags & SDR_PKT_F_PART_END) && end % cs)
		slot->chunk_want[div64_u64(end, cs)] = (u32)(end % cs);
	for (c = (u32)div64_u64(pkt->land, cs); (u64)c * cs < end; c++) {
		from = max_t(u64, pkt->land, c * cs);
		to = min_t(u64, end, (c + 1) * cs);
		slot->chunk_bytes[c] += (u32)(to - from);
		want = slot->chunk_want[c] ? slot->chunk_want[c] :
		       min_t(u64, cs, min_t(u64, slot->dst_len,
						 flow->max_msg_size) - c * cs);
		if (slot->chunk_bytes[c] < want ||
		    test_bit(c, sdr_slot_chunk_bits(flow, idx)))
			continue;
		/* the bytes before the chunk bit */
		smp_mb__before_atomic();
		set_bit(c, sdr_slot_chunk_bits(flow, idx));
		slot->chunks_done++;
		WRITE_ONCE(st->chunks_done, slot->chunks_done);
	}
	slot->pkts_done++;
	WRITE_ONCE(st->packets_done, slot->pkts_done);
	flow->stats.rx_packets++;
	flow->stats.rx_bytes += pkt->payload_len;
}

/*
 * A streamed message is whole: publish its length, packets and chunks
 * before its completion does.
 */
void sdr_slot_stream_done(struct sdr_flow *flow, u32 idx, u32 msg_len,
			  u32 npkts)
{
	struct sdr_recv_state *st = sdr_slot_state(flow, idx);
	struct sdr_rxslot *slot = &flow->slots[idx];

	lockdep_assert_held(&flow->lock);
	slot->msg_len = msg_len;
	slot->npkts = npkts;
	slot->nchunks = slot->chunks_done;
	WRITE_ONCE(st->msg_len, msg_len);
	WRITE_ONCE(st->packets, npkts);
	WRITE_ONCE(st->chunks, slot->nchunks);
}

/* A new packet's bytes into the slot, then its bits (flow->lock held). */
void sdr_slot_land(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		   const u8 *payload)
{
	lockdep_assert_held(&flow->lock);

	if (flow->slots[idx].stream) {
		/* sdr_flow_rx_stream() checked it lands within the receive */
		memcpy(sdr_slot_data(flow, idx) + pkt->land, payload,
		       pkt->payload_len);
		sdr_slot_mark_stream(flow, idx, pkt);
		return;
	}

	memcpy(sdr_slot_data(flow, idx) + pkt->offset, payload,
	       pkt->payload_len);
	sdr_slot_mark(flow, idx, pkt->offset / flow->payload, pkt->payload_len);
}

/* Packet @pi (@len bytes) of slot @idx is in place: publish its bits. */
void sdr_slot_mark(struct sdr_flow *flow, u32 idx, u32 pi, u32 len)
{
	struct sdr_recv_state *st = sdr_slot_state(flow, idx);
	struct sdr_rxslot *slot = &flow->slots[idx];
	unsigned long *pbits = sdr_slot_pkt_bits(flow, idx);
	u32 c, c0, first, n;

	lockdep_assert_held(&flow->lock);
	/* The bytes are in place before the bit says so. */
	smp_mb__before_atomic();
	set_bit(pi, pbits);
	slot->pkts_done++;
	WRITE_ONCE(st->packets_done, slot->pkts_done);

	/*
	 * The chunks the packet overlaps: each may now be complete.  Chunk
	 * c of the message is chunk c0 + c of the receive's buffer.
	 */
	c0 = slot->dst_off / flow->chunk_size;
	n = sdr_pkt_span(slot->msg_len, flow->payload, flow->chunk_size, pi,
			   &first);
	for (c = first; c < first + n; c++) {
		if (test_bit(c0 + c, sdr_slot_chunk_bits(flow, idx)) ||
		    !sdr_bitmap_chunk_complete(pbits, slot->msg_len,
					       flow->payload, flow->chunk_size,
					       c))
			continue;
		/* the packet bits (and bytes) before the chunk bit */
		smp_mb__before_atomic();
		set_bit(c0 + c, sdr_slot_chunk_bits(flow, idx));
		slot->chunks_done++;
		WRITE_ONCE(st->chunks_done, slot->chunks_done);
	}
	flow->stats.rx_packets++;
	flow->stats.rx_bytes += len;
}

/* Fail every receive still waiting, oldest first (flow->lock held). */
void sdr_flow_flush_rx(struct sdr_flow *flow, u8 status)
{
	u32 seq = flow->rx_next_post - flow->max_msgs, i, idx;

	lockdep_assert_held(&flow->lock);
	for (i = 0; i < flow->max_msgs; i++, seq++) {
		idx = sdr_rx_slot_of(flow, seq);
		if (sdr_slot_waiting(&flow->slots[idx]) &&
		    flow->slots[idx].seq == seq)
			sdr_slot_complete(flow, idx, status);
	}
}

void sdr_ctrlq_send(struct sdr_flow *flow, struct sdr_ctrlq *q)
{
	struct sdr_dev *sdev = flow->sdev;
	unsigned int i;

	for (i = 0; i < q->n; i++)
		if (sdev->xmit->send_ctrl(sdev, flow, &q->c[i].hdr,
					  q->c[i].body, q->c[i].len))
			sdr_dev_count(sdev, SDR_DEV_CTRL_DROPPED, 1);
}

/* ------------------------------------------------------------------ */
/* Send side */

/*
 * Put @flow on the send list of its device, and of each rail's that is
 * connected and not gone, and have each send.
 */
void sdr_flow_queue_tx(struct sdr_flow *flow)
{
	struct sdr_rail *rl = NULL;
	struct sdr_dev *sdev;
	struct sdr_txq *txq;
	u32 r, nrails;
	bool use;

	spin_lock_bh(&flow->lock);
	nrails = flow->nrails;
	spin_unlock_bh(&flow->lock);
	for (r = 0; r < nrails; r++) {
		rl = r ? flow->rails[r - 1] : NULL;
		sdev = rl ? rl->sdev : flow->sdev;
		txq = sdr_flow_txq(flow, r);
		spin_lock_bh(&sdev->tx_lock);
		spin_lock(&flow->lock);
		use = !flow->dead && (!rl || (rl->connected && !rl->gone));
		if (use && !txq->queued) {
			txq->queued = true;
			list_add_tail(&txq->node, &sdev->tx_flows);
		}
		spin_unlock(&flow->lock);
		spin_unlock_bh(&sdev->tx_lock);
		if (use)
			sdev->xmit->kick(sdev);
	}
}

/*
 * A flushed message's completion, once the device holds none of its
 * packets: only then may the process reuse what it sent from.
 */
void sdr_flow_flushed_done(struct sdr_flow *flow, struct sdr_txmsg *msg)
{
	lockdep_assert_held(&flow->lock);
	sdr_flow_cqe(flow, SDR_CQE_SEND, msg->flush_status, msg->seq, 0,
		     msg->msg_len, msg->imm, msg->user_data, msg->group);
	sdr_txmsg_put(msg);
}

/* ------------------------------------------------------------------ */
/* Teardown */

/*
 * Complete every pending send with @status (flow->lock held).  Messages
 * with packets still posted complete at their last send completion: until
 * then the device may still read their data.
 */
void sdr_flow_flush_tx(struct sdr_flow *flow, u8 status)
{
	struct sdr_txmsg *msg, *tmp;

	lockdep_assert_held(&flow->lock);
	list_for_each_entry_safe(msg, tmp, &flow->tx_msgs, node) {
		if (status == SDR_STATUS_FAILED)
			flow->stats.msgs_failed++;
		msg->flushed = true;
		msg->flush_status = status;
		/* the list's reference now waits for the last send completion */
		list_del(&msg->node);
		msg->listed = false;
		flow->tx_inflight_msgs--;
		if (msg->pkts_done == msg->pkts_posted)
			sdr_flow_flushed_done(flow, msg);
	}
}

/*
 * The peer closed the flow or stopped answering (flow->lock held): every
 * pending send and receive fails, new posts get EPIPE.
 */
void sdr_flow_end(struct sdr_flow *flow, u32 state)
{
	lockdep_assert_held(&flow->lock);

	trace_sdr_flow_state(flow->id, flow->state, state);
	flow->state = state;
	sdr_flow_flush_rx(flow, SDR_STATUS_FAILED);
	sdr_flow_flush_tx(flow, SDR_STATUS_FAILED);
}

void sdr_flow_fail(struct sdr_flow *flow)
{
	sdr_flow_end(flow, SDR_FLOW_FAILED);
}

/* Arm the flow's timer (sdr_flow_timer()) for @deadline_ns, if earlier. */
void sdr_flow_arm(struct sdr_flow *flow, u64 deadline_ns)
{
	u64 floor = ktime_get_ns() + SDR_FLOW_TIMER_MIN_NS;

	lockdep_assert_held(&flow->lock);
	if (flow->dead || deadline_ns == U64_MAX)
		return;
	deadline_ns = max(deadline_ns, floor);
	if (flow->timer_at && flow->timer_at <= deadline_ns)
		return;
	flow->timer_at = deadline_ns;
	hrtimer_start(&flow->timer, ns_to_ktime(deadline_ns),
		      HRTIMER_MODE_ABS_SOFT);
}

/* Queue a control packet of @policy about message @seq; NULL if the queue is full. */
struct sdr_ctrl *sdr_ctrlq_add(struct sdr_flow *flow, struct sdr_ctrlq *q,
			       u32 policy, u32 seq)
{
	struct sdr_ctrl *c;

	lockdep_assert_held(&flow->lock);
	if (q->n == ARRAY_SIZE(q->c))
		return NULL;
	c = &q->c[q->n++];
	memset(&c->hdr, 0, sizeof(c->hdr));
	c->hdr.policy = policy;
	c->hdr.dst_flow = flow->peer_flow;
	c->hdr.src_flow = flow->id;
	c->hdr.token = flow->peer_token;
	c->hdr.msg_seq = seq;
	c->len = 0;
	return c;
}

/*
 * The engine's per-flow state (sdr_sr_flow: its configuration from the
 * module parameters, the RTT estimator, the counters): small, and every
 * flow has it, whatever its policies (NONE's probes time by its RTO).
 */
int sdr_flow_engine_init(struct sdr_flow *flow)
{
	struct sdr_sr_cfg cfg;
	int ret;

	sdr_flow_engine_cfg(flow, &cfg);
	sdr_sr_flow_init(&flow->sr, &cfg);
	if (!flow->ps)
		return 0;
	/* every engine of the flow (SR's and EC's, ADAPTIVE's) shares them */
	ret = sdr_flow_paths_init(flow, flow->ps, flow->paths);
	if (ret)
		return ret;
	sdr_sr_flow_set_paths(&flow->sr, flow->ps);
	return 0;
}

/* A fresh view @ps of @n paths of @flow, configured from its engine's. */
int sdr_flow_paths_init(struct sdr_flow *flow, struct sdr_paths *ps, u32 n)
{
	struct sdr_path_cfg pcfg;
	struct sdr_sr_cfg cfg;

	sdr_flow_engine_cfg(flow, &cfg);
	sdr_path_cfg_default(&pcfg);
	pcfg.alpha_pct = cfg.alpha_pct;
	return sdr_paths_init(ps, n, &pcfg);
}

/*
 * The engine configuration of @flow, from the module parameters (for
 * ADAPTIVE, the first guesses of what it learns).
 */
void sdr_flow_engine_cfg(struct sdr_flow *flow, struct sdr_sr_cfg *c)
{
	sdr_sr_cfg_default(c);
	c->pay = flow->payload;
	c->max_inflight = READ_ONCE(sdr_max_inflight);
	if (flow->max_inflight && flow->max_inflight < c->max_inflight)
		c->max_inflight = flow->max_inflight;
	c->win_init = min(READ_ONCE(sdr_win_init), c->max_inflight);
	c->pace_bps = (u64)flow->rate_mbit * 1000000;
	c->loss_cut_pct = READ_ONCE(sdr_loss_cut_pct);
	c->alpha_pct = READ_ONCE(sdr_alpha_pct);
	c->rto_init_ns = (u64)READ_ONCE(sdr_rto_init_us) * NSEC_PER_USEC;
	c->rto_min_ns = (u64)READ_ONCE(sdr_rto_min_us) * NSEC_PER_USEC;
	c->rto_max_ns = (u64)READ_ONCE(sdr_rto_max_us) * NSEC_PER_USEC;
	c->dead_ns = flow->dead_ns;
	c->ack_every = READ_ONCE(sdr_ack_every);
	c->ack_delay_ns = (u64)READ_ONCE(sdr_ack_delay_us) * NSEC_PER_USEC;
	/* Explicit: a receiver that never sends has no RTT estimate. */
	c->reorder_ns = (u64)READ_ONCE(sdr_reorder_us) * NSEC_PER_USEC;
	c->nack_interval_ns = (u64)READ_ONCE(sdr_nack_interval_us) *
			       NSEC_PER_USEC;
	c->ec_beta_pct = READ_ONCE(sdr_ec_beta_pct);
	if (c->rto_min_ns > c->rto_max_ns)
		c->rto_min_ns = c->rto_max_ns;
}

/*
 * The window and the rate of engine state @f, SDR_FLOW_CC_NAMES' @i-th:
 * packets it may have in flight, its pacing rate (0: none) and the
 * delivery rate it measured (wire kbit/s), rounds measured and rounds
 * whose loss restarted the estimate.
 */
u64 sdr_flow_cc_stat(const struct sdr_sr_flow *f, u32 i)
{
	switch (i) {
	case 0: return sdr_sr_window(f);
	case 1: return div_u64(sdr_sr_rate_bytes(f) * 8, 1000);
	case 2: return div_u64(f->cc.bw * 8, 1000);
	case 3: return f->cc.rounds;
	case 4: return f->cc.cuts;
	}
	return 0;
}

/*
 * The engine's counters of @flow's messages, over every engine state it
 * has: SR's and EC's, and ADAPTIVE's once it is ready.
 */
void sdr_flow_engine_stats(struct sdr_flow *flow, struct sdr_sr_stats *st)
{
	u64 *v = (u64 *)st;
	const u64 *a;
	size_t i;

	static_assert(sizeof(*st) % sizeof(u64) == 0);
	lockdep_assert_held(&flow->lock);
	*st = flow->sr.st;
	if (!flow->ad)
		return;
	a = (const u64 *)&flow->ad->st;
	for (i = 0; i < sizeof(*st) / sizeof(u64); i++)
		v[i] += a[i];
}

/* ------------------------------------------------------------------ */
/* Endpoints and rails: what the flow core and the rails share */

/*
 * Reserve a random flow id in the device's table: ids, like the token and
 * the first sequence number, give a blind sender nothing to count from.
 */
int sdr_flow_alloc_id(struct sdr_dev *sdev, u32 *id)
{
	int tries, ret;

	for (tries = 0; tries < 64; tries++) {
		*id = get_random_u32_below(SDR_MAX_FLOW_ID) + 1;
		ret = xa_insert(&sdev->flows, *id, NULL, GFP_KERNEL);
		if (ret != -EBUSY)
			return ret;
	}
	return -ENOSPC;
}

/*
 * The endpoint of @flow on @sdev (its rail there: GID @gid, flow @id) into
 * @ep: little-endian, to go to the peer.
 */
void sdr_flow_fill_ep(struct sdr_flow *flow, struct sdr_dev *sdev,
		      const union ib_gid *gid, u32 id, struct sdr_endpoint *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->magic = sdr_ep_put(SDR_EP_MAGIC);
	ep->abi = sdr_ep_put(SDR_ABI_VERSION);
	memcpy(ep->gid, gid->raw, sizeof(ep->gid));
	ep->qpn = sdr_ep_put(sdev->qp->qp_num);
	ep->qkey = sdr_ep_put(sdev->qkey);
	ep->flow_id = sdr_ep_put(id);
	ep->policy = sdr_ep_put(flow->policy);
	ep->payload = sdr_ep_put(flow->payload);
	ep->chunk_size = sdr_ep_put(flow->chunk_size);
	ep->max_msg_size = sdr_ep_put(flow->max_msg_size);
	ep->max_msgs = sdr_ep_put(flow->max_msgs);
	ep->token_lo = sdr_ep_put((u32)flow->token);
	ep->token_hi = sdr_ep_put((u32)(flow->token >> 32));
	ep->seq0 = sdr_ep_put(flow->tx_next_seq);
	ep->none_window = sdr_ep_put(flow->none_window);
}

/*
 * The flow's paths @first..@first+@n-1 are @sdev's first @n QPs: note
 * them, and name them in @pp (little-endian, as the endpoint).
 */
void sdr_flow_fill_paths(struct sdr_flow *flow, struct sdr_dev *sdev,
			 u32 first, u32 n, struct sdr_ep_paths *pp)
{
	u32 i;

	memset(pp, 0, sizeof(*pp));
	pp->n = sdr_ep_put(n);
	for (i = 0; i < n; i++) {
		flow->path_qpn[first + i] = sdev->path_qpn[i];
		pp->qpn[i] = sdr_ep_put(sdev->path_qpn[i]);
	}
}

/*
 * The QPNs the peer sends from, as its endpoint @p and @pp (its
 * ep_paths, n 0: none given) name them: 0 and @out filled (n 1.., qpn[0]
 * the endpoint's), or -EINVAL.
 */
int sdr_flow_peer_paths(const struct sdr_endpoint *p,
			const struct sdr_ep_paths *pp, struct sdr_ep_paths *out)
{
	u32 i, j, n = sdr_ep_get(pp->n);

	if (pp->__reserved || n > SDR_PATHS_MAX)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->n = n ? n : 1;
	out->qpn[0] = sdr_ep_get(p->qpn);
	if (n && sdr_ep_get(pp->qpn[0]) != out->qpn[0])
		return -EINVAL;
	for (i = 1; i < n; i++) {
		out->qpn[i] = sdr_ep_get(pp->qpn[i]);
		if (!out->qpn[i] || out->qpn[i] > 0xffffff)
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (out->qpn[j] == out->qpn[i])
				return -EINVAL;
	}
	return 0;
}

/*
 * A peer on this very port (two contexts' flows on one device): its frames
 * go to the port's own MAC, which is how the device knows to hand them
 * back in (rxe: its loopback; sent to the IP stack instead, they reach
 * no device).  A kernel address handle gets no MAC resolved otherwise.
 */
static void sdr_dev_ah_loopback(struct sdr_dev *sdev,
				struct rdma_ah_attr *ah_attr, const u8 *gid)
{
	const struct ib_gid_attr *own;
	u8 mac[ETH_ALEN];
	u16 vlan;

	own = rdma_find_gid_by_port(sdev->ibdev, (const union ib_gid *)gid,
				    IB_GID_TYPE_ROCE_UDP_ENCAP, sdev->port,
				    NULL);
	if (IS_ERR(own))
		return;
	if (!rdma_read_gid_l2_fields(own, &vlan, mac))
		memcpy(ah_attr->roce.dmac, mac, ETH_ALEN);
	rdma_put_gid_attr(own);
}

/*
 * An address handle on @sdev (its users lock held) to the peer of @flow
 * at @gid, or -EHOSTUNREACH (may sleep).
 */
struct ib_ah *sdr_dev_ah(struct sdr_dev *sdev, struct sdr_flow *flow,
			 const u8 *gid)
{
	struct rdma_ah_attr ah_attr = {};
	union ib_gid sgid;
	struct ib_ah *ah;
	u32 sgid_index;
	int ret;

	ret = sdr_dev_query_gid(sdev, &sgid, &sgid_index);
	if (ret)
		return ERR_PTR(ret);
	ah_attr.type = rdma_ah_find_type(sdev->ibdev, sdev->port);
	rdma_ah_set_port_num(&ah_attr, sdev->port);
	rdma_ah_set_grh(&ah_attr, (union ib_gid *)gid, 0, sgid_index, 64, 0);
	if (ah_attr.type == RDMA_AH_ATTR_TYPE_ROCE)
		sdr_dev_ah_loopback(sdev, &ah_attr, gid);
	ah = rdma_create_ah(sdev->pd, &ah_attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah)) {
		pr_debug("%s: flow %u: no address handle for %pI6: %ld\n",
			 sdev->name, flow->id, gid, PTR_ERR(ah));
		return ERR_PTR(-EHOSTUNREACH);
	}
	return ah;
}

/*
 * Whether @p, the endpoint of a peer of @flow, fits it: its magic, ABI,
 * geometry and ids in range (0 or -EINVAL).
 */
int sdr_flow_check_peer(const struct sdr_flow *flow,
			const struct sdr_endpoint *p)
{
	if (sdr_ep_get(p->magic) != SDR_EP_MAGIC ||
	    sdr_ep_get(p->abi) != SDR_ABI_VERSION ||
	    sdr_ep_get(p->payload) != flow->payload ||
	    sdr_ep_get(p->chunk_size) != flow->chunk_size ||
	    sdr_ep_get(p->max_msg_size) != flow->max_msg_size ||
	    sdr_ep_get(p->max_msgs) != flow->max_msgs ||
	    sdr_ep_get(p->policy) >= SDR_POLICY_NR ||
	    !sdr_ep_get(p->flow_id) ||
	    sdr_ep_get(p->flow_id) > SDR_MAX_FLOW_ID ||
	    !sdr_ep_get(p->qpn) || sdr_ep_get(p->qpn) > 0xffffff ||
	    sdr_ep_get(p->none_window) < SDR_CREDIT_WIN_MIN ||
	    sdr_ep_get(p->none_window) > SDR_CREDIT_WIN_MAX)
		return -EINVAL;
	return 0;
}

/* The send queue of @flow on its rail @rail (0: its own device). */
struct sdr_txq *sdr_flow_txq(struct sdr_flow *flow, u32 rail)
{
	return rail ? &flow->rails[rail - 1]->txq : &flow->txq;
}

/*
 * Once @sdev holds none of the sends of @flow's queue @q there (the flow
 * dead or the rail gone: nothing new is queued), take the address handle
 * at @ahp, to be destroyed by the caller.  A send is claimed and posted
 * under the device's tx_lock after those checks, so with tx_lock held
 * and nothing posted no send can be about to use the handle.
 */
struct ib_ah *sdr_txq_take_ah(struct sdr_flow *flow, struct sdr_dev *sdev,
			      struct sdr_txq *q, struct ib_ah **ahp)
{
	struct ib_ah *ah;

	for (;;) {
		if (!wait_event_timeout(sdev->tx_wait,
					!atomic_read(&q->posted), 10 * HZ))
			pr_err_ratelimited("%s: flow %u: sends not completing\n",
					   sdev->name, flow->id);
		spin_lock_bh(&sdev->tx_lock);
		spin_lock(&flow->lock);
		if (!atomic_read(&q->posted))
			break;
		spin_unlock(&flow->lock);
		spin_unlock_bh(&sdev->tx_lock);
	}
	ah = *ahp;
	*ahp = NULL;
	spin_unlock(&flow->lock);
	spin_unlock_bh(&sdev->tx_lock);
	return ah;
}
