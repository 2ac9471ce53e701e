// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: flows - messages out, messages in, receive bitmaps.
 *
 * Ownership of memory (Documentation/datapath.rst has the picture):
 *  - send region: written by the process, read by the device while a
 *    message that covers it is in flight (the process must not change it
 *    until the send completion);
 *  - receive region: written only by the kernel (payload copies from the
 *    receive buffers), read in place by the process;
 *  - state area: slot states and bitmaps, written only by the kernel;
 *  - completion ring: entries and tail written by the kernel, head by the
 *    process.
 *
 * Policy NONE: packets go out once, in message order, as receive credits
 * allow (sdr_credit.h: a message only once its receive is posted, packets
 * only within the receiver's window).  A receive completes with
 * SDR_STATUS_OK when every packet landed, or with SDR_STATUS_PARTIAL as
 * sdr_none_schedule() explains.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <rdma/ib_cache.h>

#include "sdr.h"
#include "sdr_bitmap.h"
#include "sdr_flow.h"
#include "sdr_stats.h"
#include "sdr_trace.h"

#define SDR_STATE_HDR	64

static_assert(sizeof(struct sdr_recv_state) == SDR_STATE_HDR);

static struct sdr_recv_state *sdr_slot_state(struct sdr_flow *flow, u32 idx)
{
	return (struct sdr_recv_state *)(flow->state_area +
					 (size_t)idx * flow->state_stride);
}

static unsigned long *sdr_slot_pkt_bits(struct sdr_flow *flow, u32 idx)
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

/*
 * The flow's address handle is gone by now: sdr_flow_detach() or the
 * device's removal destroyed it while the device lived.
 */
static void sdr_flow_free_work(struct work_struct *work)
{
	struct sdr_flow *flow = container_of(work, struct sdr_flow, free_work);
	u32 i;

	WARN_ON_ONCE(flow->ah);
	vfree(flow->recv_region);
	vfree(flow->send_region);
	vfree(flow->state_area);
	kvfree(flow->sr_rx_mem);
	if (flow->slots) {
		spin_lock_bh(&flow->lock);	/* the rule of the slots */
		for (i = 0; i < flow->max_msgs; i++)
			sdr_eck_rx_release(flow, i);
		spin_unlock_bh(&flow->lock);
	}
	kfree(flow->slots);
	sdr_dev_put(flow->sdev);
	atomic_dec(&sdr_nr_flows);
	kfree_rcu(flow, rcu);
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

static u64 sdr_cookie(u32 flow_id, u32 area)
{
	return ((u64)flow_id << 40) | ((u64)area << 36);
}

static bool sdr_is_pow2_mtu(u32 mtu)
{
	return mtu >= 256 && mtu <= 4096 && is_power_of_2(mtu);
}

static int sdr_flow_check_attrs(struct sdr_dev *sdev,
				struct sdr_flow_create *arg, u32 *ppc)
{
	u32 payload;

	if (arg->policy == SDR_POLICY_DEFAULT)
		arg->policy = READ_ONCE(sdr_default_policy);
	if (arg->policy > SDR_POLICY_ADAPTIVE)
		return -EINVAL;
	if (!sdr_policy_supported(arg->policy))
		return -EOPNOTSUPP;
	if (!arg->mtu)
		arg->mtu = sdev->mtu;
	if (!sdr_is_pow2_mtu(arg->mtu) || arg->mtu > sdev->mtu)
		return -EINVAL;
	payload = arg->mtu - SDR_WIRE_HDR_LEN;
	if (!arg->chunk_size)
		arg->chunk_size = READ_ONCE(sdr_chunk_pkts) * payload;
	if (arg->chunk_size % payload ||
	    arg->chunk_size / payload > SDR_MAX_CHUNK_PKTS)
		return -EINVAL;
	if (!arg->max_msg_size || arg->max_msg_size > SDR_MAX_MSG_SIZE)
		return -EINVAL;
	if (!arg->max_msgs || arg->max_msgs > SDR_MAX_MSGS)
		return -EINVAL;
	arg->payload = payload;
	*ppc = arg->chunk_size / payload;
	return 0;
}

/*
 * Reserve a random flow id in the device's table: ids, like the token and
 * the first sequence number, give a blind sender nothing to count from.
 */
static int sdr_flow_alloc_id(struct sdr_dev *sdev, u32 *id)
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

int sdr_flow_create(struct sdr_ctx *ctx, struct sdr_flow_create *arg)
{
	struct sdr_dev *sdev = ctx->sdev;
	u32 ppc, npkts, nchunks, id;
	struct sdr_endpoint *ep;
	struct sdr_flow *flow;
	union ib_gid gid;
	size_t region;
	int ret;

	ret = sdr_flow_check_attrs(sdev, arg, &ppc);
	if (ret)
		return ret;
	if (ctx->cq_budget + 2 * arg->max_msgs > ctx->cq_entries)
		return -ENOSPC;

	flow = kzalloc(sizeof(*flow), GFP_KERNEL);
	if (!flow)
		return -ENOMEM;
	kref_init(&flow->ref);
	spin_lock_init(&flow->lock);
	INIT_LIST_HEAD(&flow->tx_msgs);
	INIT_LIST_HEAD(&flow->tx_node);
	INIT_WORK(&flow->free_work, sdr_flow_free_work);
	hrtimer_init(&flow->rx_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	flow->rx_timer.function = sdr_flow_rx_timer;
	hrtimer_init(&flow->sr_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	flow->sr_timer.function = sdr_flow_sr_timer;
	kref_get(&sdev->ref);
	flow->sdev = sdev;
	flow->ctx = ctx;
	atomic_inc(&sdr_nr_flows);

	flow->policy = arg->policy;
	flow->mtu = arg->mtu;
	flow->payload = arg->payload;
	flow->chunk_size = arg->chunk_size;
	flow->pkts_per_chunk = ppc;
	flow->max_msg_size = arg->max_msg_size;
	flow->max_msgs = arg->max_msgs;

	npkts = sdr_msg_npkts(arg->max_msg_size, flow->payload);
	nchunks = sdr_msg_nchunks(npkts, ppc);
	flow->slot_stride = PAGE_ALIGN(arg->max_msg_size);
	flow->chunk_bitmap_off = SDR_STATE_HDR;
	flow->pkt_bitmap_off = SDR_STATE_HDR + BITS_TO_LONGS(nchunks) * 8;
	flow->state_stride = ALIGN(flow->pkt_bitmap_off +
				   BITS_TO_LONGS(npkts) * 8, 64);
	region = (size_t)flow->slot_stride * flow->max_msgs;
	flow->region_size = region;
	flow->state_size = PAGE_ALIGN((size_t)flow->state_stride *
				      flow->max_msgs);

	ret = -ENOMEM;
	if (2 * region > (size_t)sdr_max_region_mb << 20)
		goto err_put;
	flow->slots = kcalloc(flow->max_msgs, sizeof(*flow->slots),
			      GFP_KERNEL);
	flow->recv_region = vmalloc_user(region);
	flow->send_region = vmalloc_user(region);
	flow->state_area = vmalloc_user(flow->state_size);
	if (!flow->slots || !flow->recv_region || !flow->send_region ||
	    !flow->state_area)
		goto err_put;
	/* Every flow can run SR and EC: its policy may be switched live. */
	sdr_srk_cfg(flow);
	sdr_eck_flow_init(flow);
	flow->sr_rx_size = ALIGN(sdr_sr_rx_size(flow->max_msg_size,
						flow->payload), 8);
	flow->sr_rx_mem = kvcalloc(flow->max_msgs, flow->sr_rx_size,
				   GFP_KERNEL);
	if (!flow->sr_rx_mem)
		goto err_put;

	ret = sdr_dev_query_gid(sdev, &gid, NULL);
	if (ret)
		goto err_put;

	ret = sdr_flow_alloc_id(sdev, &id);
	if (ret)
		goto err_put;
	flow->id = id;
	flow->token = get_random_u64();
	flow->tx_next_seq = get_random_u32();
	sdr_credit_rx_init(&flow->none_rx, READ_ONCE(sdr_none_window));
	ret = xa_insert(&ctx->flows, id, flow, GFP_KERNEL);
	if (ret) {
		xa_erase(&sdev->flows, id);
		goto err_put;
	}

	/* The endpoint blob is the caller's only: nothing reads it back. */
	ep = &arg->ep;
	memset(ep, 0, sizeof(*ep));
	ep->magic = cpu_to_le32(SDR_EP_MAGIC);
	ep->abi = cpu_to_le32(SDR_ABI_VERSION);
	memcpy(ep->gid, gid.raw, sizeof(ep->gid));
	ep->qpn = cpu_to_le32(sdev->qp->qp_num);
	ep->qkey = cpu_to_le32(SDR_QKEY);
	ep->flow_id = cpu_to_le32(id);
	ep->policy = cpu_to_le32(flow->policy);
	ep->payload = cpu_to_le32(flow->payload);
	ep->chunk_size = cpu_to_le32(flow->chunk_size);
	ep->max_msg_size = cpu_to_le32(flow->max_msg_size);
	ep->max_msgs = cpu_to_le32(flow->max_msgs);
	ep->token_lo = cpu_to_le32((u32)flow->token);
	ep->token_hi = cpu_to_le32((u32)(flow->token >> 32));
	ep->seq0 = cpu_to_le32(flow->tx_next_seq);
	ep->none_window = cpu_to_le32(flow->none_rx.window);

	flow->owner_pid = ctx->pid;
	flow->owner_uid = from_kuid(&init_user_ns, current_euid());
	ctx->cq_budget += 2 * flow->max_msgs;
	atomic_inc(&sdev->nr_flows);
	/* Visible to the receive path only once complete. */
	xa_store(&sdev->flows, id, flow, GFP_KERNEL);

	arg->flow_id = id;
	arg->recv_offset = sdr_cookie(id, 1);
	arg->recv_size = region;
	arg->send_offset = sdr_cookie(id, 2);
	arg->send_size = region;
	arg->state_offset = sdr_cookie(id, 3);
	arg->state_size = flow->state_size;
	arg->slot_stride = flow->slot_stride;
	arg->state_stride = flow->state_stride;
	arg->chunk_bitmap = flow->chunk_bitmap_off;
	arg->pkt_bitmap = flow->pkt_bitmap_off;
	return 0;

err_put:
	flow->ctx = NULL;
	sdr_flow_put(flow);
	return ret;
}

/* The mapping of @flow behind @cookie (its id already matched). */
int sdr_flow_mmap_area(struct sdr_flow *flow, u64 cookie, void **mem,
		       size_t *size, bool *writable)
{
	u32 area = (cookie >> 36) & 0xf;

	if (cookie & ((1ULL << 36) - 1))
		return -EINVAL;
	switch (area) {
	case 1:
		*mem = flow->recv_region;
		*size = flow->region_size;
		*writable = false;
		return 0;
	case 2:
		*mem = flow->send_region;
		*size = flow->region_size;
		*writable = true;
		return 0;
	case 3:
		*mem = flow->state_area;
		*size = flow->state_size;
		*writable = false;
		return 0;
	}
	return -EINVAL;
}

/* Flow @id of @ctx (ctx->lock held), or NULL. */
struct sdr_flow *sdr_ctx_flow(struct sdr_ctx *ctx, u32 id)
{
	lockdep_assert_held(&ctx->lock);

	return id ? xa_load(&ctx->flows, id) : NULL;
}

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
	c = sdr_ctrlq_add(flow, q, flow->rx_next_post);
	if (!c)
		return;
	c->hdr.type = SDR_PKT_CREDIT;
	c->hdr.policy = SDR_WIRE_POLICY_NONE;
	c->hdr.ts = echo;
	c->hdr.aux = sdr_credit_rx_grant(&flow->none_rx);
}

static void sdr_none_probe(struct sdr_flow *flow, u32 psn,
			   struct sdr_ctrlq *q)
{
	struct sdr_ctrl *c;

	lockdep_assert_held(&flow->lock);
	c = sdr_ctrlq_add(flow, q, 0);
	if (!c)
		return;
	c->hdr.type = SDR_PKT_PROBE;
	c->hdr.policy = SDR_WIRE_POLICY_NONE;
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
	sdr_srk_arm(flow, sdr_credit_tx_deadline(&flow->none_tx));
}

static bool sdr_none_tx_pending(struct sdr_flow *flow)
{
	struct sdr_txmsg *msg;

	lockdep_assert_held(&flow->lock);
	list_for_each_entry(msg, &flow->tx_msgs, node)
		if (!sdr_policy_arq(msg->policy) && msg->next_off < msg->msg_len)
			return true;
	return false;
}

/*
 * The flow's timer, for NONE sends waiting for credit: probe when due.
 * Returns true when the peer said nothing at all for the dead-peer time
 * (a receiver that answers probes but posts no receive is alive: the
 * send waits for it, as long as it takes).
 */
bool sdr_none_tx_timer(struct sdr_flow *flow, u64 now, struct sdr_ctrlq *q)
{
	struct sdr_credit_tx *tx = &flow->none_tx;
	u64 dead_ns = flow->sr.cfg.dead_ns, since;
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
	sdr_srk_arm(flow, sdr_credit_tx_deadline(tx));
	if (dead_ns)
		sdr_srk_arm(flow, since + dead_ns);
	return false;
}

int sdr_flow_connect(struct sdr_ctx *ctx, struct sdr_flow_connect *arg)
{
	const struct sdr_endpoint *p = &arg->peer;
	struct sdr_dev *sdev = ctx->sdev;
	struct rdma_ah_attr ah_attr = {};
	struct sdr_ctrlq q = { .n = 0 };
	struct sdr_flow *flow;
	union ib_gid gid;
	struct ib_ah *ah;
	u32 sgid_index;
	int ret;

	flow = sdr_ctx_flow(ctx, arg->flow_id);
	if (!flow)
		return -ENOENT;
	if (flow->state != SDR_FLOW_IDLE)
		return -EISCONN;
	if (le32_to_cpu(p->magic) != SDR_EP_MAGIC ||
	    le32_to_cpu(p->abi) != SDR_ABI_VERSION ||
	    le32_to_cpu(p->payload) != flow->payload ||
	    le32_to_cpu(p->chunk_size) != flow->chunk_size ||
	    le32_to_cpu(p->max_msg_size) != flow->max_msg_size ||
	    le32_to_cpu(p->max_msgs) != flow->max_msgs ||
	    le32_to_cpu(p->policy) > SDR_POLICY_ADAPTIVE ||
	    !le32_to_cpu(p->flow_id) ||
	    le32_to_cpu(p->flow_id) > SDR_MAX_FLOW_ID ||
	    !le32_to_cpu(p->qpn) || le32_to_cpu(p->qpn) > 0xffffff ||
	    le32_to_cpu(p->none_window) < SDR_CREDIT_WIN_MIN ||
	    le32_to_cpu(p->none_window) > SDR_CREDIT_WIN_MAX)
		return -EINVAL;

	ret = sdr_dev_query_gid(sdev, &gid, &sgid_index);
	if (ret)
		return ret;
	ah_attr.type = rdma_ah_find_type(sdev->ibdev, sdev->port);
	rdma_ah_set_port_num(&ah_attr, sdev->port);
	rdma_ah_set_grh(&ah_attr, (union ib_gid *)p->gid, 0, sgid_index, 64, 0);
	ah = rdma_create_ah(sdev->pd, &ah_attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah)) {
		pr_debug("%s: flow %u: no address handle for %pI6: %ld\n",
			 sdev->name, flow->id, p->gid, PTR_ERR(ah));
		return -EHOSTUNREACH;
	}

	spin_lock_bh(&flow->lock);
	flow->ah = ah;
	flow->peer_qpn = le32_to_cpu(p->qpn);
	flow->peer_qkey = le32_to_cpu(p->qkey);
	flow->peer_flow = le32_to_cpu(p->flow_id);
	flow->peer_token = (u64)le32_to_cpu(p->token_hi) << 32 |
			   le32_to_cpu(p->token_lo);
	/* receives are posted from the peer's first sequence number on */
	flow->rx_seq0 = le32_to_cpu(p->seq0);
	flow->rx_next_post = flow->rx_seq0;
	flow->rx_last_seq = flow->rx_next_post;
	flow->rx_low = flow->rx_seq0;
	memcpy(flow->peer_gid.raw, p->gid, sizeof(flow->peer_gid.raw));
	trace_sdr_flow_state(flow->id, flow->state, SDR_FLOW_CONNECTED);
	flow->state = SDR_FLOW_CONNECTED;
	flow->sr_heard_ns = ktime_get_ns();
	/* no receive of the peer is known: ask, it may have posted some */
	sdr_credit_tx_init(&flow->none_tx, le32_to_cpu(p->none_window),
			   flow->tx_next_seq);
	flow->none_tx.probes++;
	sdr_none_probe(flow, 0, &q);
	spin_unlock_bh(&flow->lock);
	sdr_ctrlq_send(flow, &q);
	return 0;
}

/* A post to a flow that teardown stopped under the caller. */
static int sdr_flow_gone(struct sdr_flow *flow)
{
	return READ_ONCE(flow->sdev->dying) ? -ENODEV : -ENOENT;
}

static int sdr_flow_usable(struct sdr_flow *flow)
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

static void sdr_flow_cqe(struct sdr_flow *flow, u8 type, u8 status, u32 seq,
			 u32 slot, u32 len, u32 imm, u64 user_data)
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
	if (flow->ctx)
		sdr_ctx_cq_push(flow->ctx, &cqe);
}

void sdr_slot_complete(struct sdr_flow *flow, u32 idx, u8 status)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	struct sdr_recv_state *st = sdr_slot_state(flow, idx);

	lockdep_assert_held(&flow->lock);
	slot->state = SDR_RECV_DONE;
	sdr_eck_rx_release(flow, idx);
	WRITE_ONCE(st->status, status);
	/* pairs with the process's acquire of state: status is visible */
	smp_store_release(&st->state, SDR_RECV_DONE);
	if (flow->rx_posted)
		flow->rx_posted--;
	if (status == SDR_STATUS_OK) {
		__set_bit(slot->seq % SDR_RX_HIST, flow->rx_delivered);
		flow->stats.msgs_received++;
	} else if (status == SDR_STATUS_FAILED) {
		flow->stats.msgs_failed++;
	}
	sdr_flow_cqe(flow, SDR_CQE_RECV, status, slot->seq, idx,
		     slot->msg_len, READ_ONCE(st->imm), slot->user_data);
}

/* May run under flow->lock: kvfree defers vfree out of atomic context. */
static void sdr_txmsg_release(struct kref *ref)
{
	struct sdr_txmsg *msg = container_of(ref, struct sdr_txmsg, ref);

	kvfree(msg->par_buf);
	kvfree(msg->sr_mem);
	kvfree(msg->staging);
	kfree(msg);
}

static void sdr_txmsg_put(struct sdr_txmsg *msg)
{
	kref_put(&msg->ref, sdr_txmsg_release);
}

/* Take @msg off the flow's list (flow->lock held): drops the list's ref. */
static void sdr_txmsg_unlist(struct sdr_flow *flow, struct sdr_txmsg *msg)
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
static u32 sdr_rx_slot_of(const struct sdr_flow *flow, u32 seq)
{
	return (seq - flow->rx_seq0) % flow->max_msgs;
}

int sdr_recv_post(struct sdr_ctx *ctx, struct sdr_recv_post *arg)
{
	struct sdr_flow *flow = sdr_ctx_flow(ctx, arg->flow_id);
	struct sdr_ctrlq q = { .n = 0 };
	struct sdr_recv_state *st;
	struct sdr_rxslot *slot;
	u32 idx, seq;
	int ret;

	if (!flow)
		return -ENOENT;
	spin_lock_bh(&flow->lock);
	ret = sdr_flow_usable(flow);
	if (ret)
		goto out_unlock;
	seq = flow->rx_next_post;
	idx = sdr_rx_slot_of(flow, seq);
	slot = &flow->slots[idx];
	ret = -EAGAIN;
	if (slot->state != SDR_RECV_FREE || !sdr_ctx_cq_reserve(ctx))
		goto out_unlock;

	st = sdr_slot_state(flow, idx);
	memset(&st->imm, 0, flow->state_stride - offsetof(struct sdr_recv_state, imm));
	WRITE_ONCE(st->flags, 0);
	WRITE_ONCE(st->seq, seq);
	WRITE_ONCE(st->gen, st->gen + 1);
	/* the cleared slot and its seq/gen before the state says POSTED */
	smp_store_release(&st->state, SDR_RECV_POSTED);
	*slot = (struct sdr_rxslot) {
		.seq		= seq,
		.state		= SDR_RECV_POSTED,
		.user_data	= arg->user_data,
	};
	sdr_srk_rx_init(flow, idx);
	__clear_bit(seq % SDR_RX_HIST, flow->rx_delivered);
	flow->rx_next_post++;
	flow->rx_posted++;
	arg->slot = idx;
	arg->seq = seq;
	arg->gen = st->gen;
	/* the sender of NONE messages waits for this */
	sdr_none_grant(flow, 0, &q);
	ret = 0;
out_unlock:
	spin_unlock_bh(&flow->lock);
	sdr_ctrlq_send(flow, &q);
	return ret;
}

int sdr_recv_complete(struct sdr_ctx *ctx, struct sdr_recv_complete *arg)
{
	struct sdr_flow *flow = sdr_ctx_flow(ctx, arg->flow_id);
	struct sdr_ctrlq q = { .n = 0 };
	struct sdr_rxslot *slot;
	int ret = 0;

	if (!flow)
		return -ENOENT;
	if (arg->slot >= flow->max_msgs)
		return -EINVAL;
	spin_lock_bh(&flow->lock);
	slot = &flow->slots[arg->slot];
	if (slot->state == SDR_RECV_FREE || slot->seq != arg->seq) {
		ret = -ESTALE;
		goto out_unlock;
	}
	if (slot->state != SDR_RECV_DONE) {
		/*
		 * Abandoned before its completion: give back its ring room,
		 * and tell a sender already sending it that it failed (its
		 * later packets get the same answer: rx_delivered is clear).
		 */
		sdr_ctx_cq_unreserve(ctx);
		flow->rx_posted--;
		sdr_eck_rx_release(flow, arg->slot);
		if (slot->state == SDR_RECV_ACTIVE &&
		    sdr_policy_arq(slot->policy) && !flow->dead &&
		    flow->state == SDR_FLOW_CONNECTED)
			sdr_srk_rx_final(flow, slot->seq, SDR_ACK_F_ABORT, 0, &q);
	}
	slot->state = SDR_RECV_FREE;
	/* ordered after every earlier write to the slot's state area */
	smp_store_release(&sdr_slot_state(flow, arg->slot)->state,
			  SDR_RECV_FREE);
out_unlock:
	spin_unlock_bh(&flow->lock);
	sdr_ctrlq_send(flow, &q);
	return ret;
}

static void sdr_flow_arm_rx_timer(struct sdr_flow *flow, u64 deadline_ns)
{
	if (flow->dead || flow->rx_timer_armed)
		return;
	flow->rx_timer_armed = true;
	hrtimer_start(&flow->rx_timer, ns_to_ktime(deadline_ns),
		      HRTIMER_MODE_ABS_SOFT);
}

static bool sdr_slot_waiting(const struct sdr_rxslot *s)
{
	return s->state == SDR_RECV_POSTED || s->state == SDR_RECV_ACTIVE;
}

/* A receive that NONE packets started: only those may give up on holes. */
static bool sdr_slot_none_active(const struct sdr_rxslot *s)
{
	return s->state == SDR_RECV_ACTIVE && s->policy == SDR_POLICY_NONE;
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
	sdr_flow_arm_rx_timer(flow, flow->rx_last_ns +
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

enum hrtimer_restart sdr_flow_rx_timer(struct hrtimer *timer)
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
			sdr_flow_arm_rx_timer(flow, flow->rx_last_ns + idle_ns);
	}
out_unlock:
	spin_unlock_bh(&flow->lock);
	return HRTIMER_NORESTART;
}

/* First packet of a message: the slot learns its size and immediate. */
void sdr_slot_start(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt)
{
	struct sdr_recv_state *st = sdr_slot_state(flow, idx);
	struct sdr_rxslot *slot = &flow->slots[idx];

	lockdep_assert_held(&flow->lock);
	slot->policy = pkt->policy;
	slot->msg_len = pkt->msg_len;
	slot->npkts = sdr_msg_npkts(pkt->msg_len, flow->payload);
	slot->nchunks = sdr_msg_nchunks(slot->npkts, flow->pkts_per_chunk);
	slot->state = SDR_RECV_ACTIVE;
	WRITE_ONCE(st->imm, pkt->imm);
	WRITE_ONCE(st->msg_len, pkt->msg_len);
	WRITE_ONCE(st->chunks, slot->nchunks);
	WRITE_ONCE(st->packets, slot->npkts);
	/* imm, msg_len and the counts before the flag says they are set */
	smp_store_release(&st->flags, SDR_RECV_F_STARTED);
	WRITE_ONCE(st->state, SDR_RECV_ACTIVE);
}

/* A new packet's bytes into the slot, then its bits (flow->lock held). */
void sdr_slot_land(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		   const u8 *payload)
{
	lockdep_assert_held(&flow->lock);

	memcpy(flow->recv_region + (size_t)idx * flow->slot_stride + pkt->offset,
	       payload, pkt->payload_len);
	sdr_slot_mark(flow, idx, pkt->offset / flow->payload, pkt->payload_len);
}

/* Packet @pi (@len bytes) of slot @idx is in place: publish its bits. */
void sdr_slot_mark(struct sdr_flow *flow, u32 idx, u32 pi, u32 len)
{
	struct sdr_recv_state *st = sdr_slot_state(flow, idx);
	struct sdr_rxslot *slot = &flow->slots[idx];
	unsigned long *pbits = sdr_slot_pkt_bits(flow, idx);
	u32 chunk;

	lockdep_assert_held(&flow->lock);
	/* The bytes are in place before the bit says so. */
	smp_mb__before_atomic();
	set_bit(pi, pbits);
	slot->pkts_done++;
	WRITE_ONCE(st->packets_done, slot->pkts_done);

	chunk = pi / flow->pkts_per_chunk;
	if (sdr_bitmap_chunk_complete(pbits, slot->npkts, flow->pkts_per_chunk,
				      chunk)) {
		/* the packet bits (and bytes) before the chunk bit */
		smp_mb__before_atomic();
		set_bit(chunk, sdr_slot_chunk_bits(flow, idx));
		slot->chunks_done++;
		WRITE_ONCE(st->chunks_done, slot->chunks_done);
	}
	flow->stats.rx_packets++;
	flow->stats.rx_bytes += len;
}

/*
 * A DATA packet for no waiting receive.  One ahead of the posted receives
 * (by less than max_msgs: a true sender has no more in flight) gets an
 * RNR under SR and EC.  One of a receive that ended and was recycled gets
 * its final answer again, if it is recent enough to be remembered:
 * COMPLETE if it was delivered, ABORT if the application discarded it.
 * Anything else is dropped unanswered.
 */
static int sdr_flow_rx_unmatched(struct sdr_flow *flow,
				 const struct sdr_pkt *pkt, struct sdr_ctrlq *q)
{
	s32 ahead = (s32)(pkt->msg_seq - flow->rx_next_post);
	bool arq = sdr_policy_arq(pkt->policy);
	u32 flags;

	lockdep_assert_held(&flow->lock);
	if (ahead >= 0) {
		if (arq && ahead < (s32)flow->max_msgs)
			sdr_srk_rx_rnr(flow, pkt, q);
		return SDR_DROP_NO_RECV;
	}
	if (arq && -(s64)ahead <= SDR_RX_HIST &&
	    pkt->msg_seq - flow->rx_seq0 < flow->rx_next_post - flow->rx_seq0) {
		flags = test_bit(pkt->msg_seq % SDR_RX_HIST, flow->rx_delivered) ?
			SDR_ACK_F_COMPLETE : SDR_ACK_F_ABORT;
		sdr_srk_rx_final(flow, pkt->msg_seq, flags, pkt->ts, q);
	}
	return SDR_DROP_STALE;
}

/* A DATA packet from the peer (flow->lock held): 0 or a drop reason. */
static int sdr_flow_rx_data(struct sdr_flow *flow, const struct sdr_pkt *pkt,
			    const u8 *payload, struct sdr_ctrlq *q)
{
	struct sdr_rxslot *slot;
	int reason;
	u32 idx;

	lockdep_assert_held(&flow->lock);
	if (!sdr_policy_supported(pkt->policy))
		return SDR_DROP_POLICY;
	if (pkt->policy == SDR_WIRE_POLICY_NONE) {
		/* taken off the receive queue, whatever happens to it next */
		reason = sdr_credit_rx_data(&flow->none_rx, pkt->aux);
		if (reason < 0)
			return SDR_DROP_ACK_CLAIM;	/* beyond the grant */
		if (reason)
			sdr_none_grant(flow, 0, q);
		/* its own message is unfinished: low cannot be past it */
		if (sdr_seq_before(pkt->msg_seq, pkt->ts))
			return SDR_DROP_ACK_CLAIM;
	}
	reason = -sdr_wire_check_geometry(pkt, flow->payload,
					  flow->max_msg_size);
	if (reason)
		return reason;
	if ((pkt->flags & SDR_PKT_F_PARITY) &&
	    pkt->policy != SDR_WIRE_POLICY_EC)
		return SDR_DROP_FLAGS;	/* parity only in EC messages */

	idx = sdr_rx_slot_of(flow, pkt->msg_seq);
	slot = &flow->slots[idx];
	if (slot->state == SDR_RECV_FREE || slot->seq != pkt->msg_seq)
		return sdr_flow_rx_unmatched(flow, pkt, q);
	if (slot->state != SDR_RECV_POSTED) {
		if (pkt->policy != slot->policy)
			return SDR_DROP_POLICY;
		if (pkt->msg_len != slot->msg_len)
			return SDR_DROP_MSGLEN;
	}

	/* the engine starts the slot once it accepted the packet */
	if (sdr_policy_arq(pkt->policy))
		return sdr_srk_rx_data(flow, idx, pkt, payload, q);

	/* NONE: the geometry above was all there is to check */
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

/* Fail every receive still waiting, oldest first (flow->lock held). */
static void sdr_flow_flush_rx(struct sdr_flow *flow, u8 status)
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

void sdr_flow_rx(struct sdr_dev *sdev, struct sdr_flow *flow,
		 const struct sdr_pkt *pkt, const u8 *payload, u32 src_qp,
		 const union ib_gid *sgid)
{
	struct sdr_ctrlq q = { .n = 0 };
	bool kick = false;
	int drop = 0;

	spin_lock_bh(&flow->lock);
	if (flow->dead) {
		drop = SDR_DROP_NO_FLOW;
		goto out_unlock;
	}
	/* nothing a packet says counts before it proves it is the peer's */
	if (pkt->token != flow->token) {
		drop = SDR_DROP_TOKEN;
		goto out_unlock;
	}
	if (flow->state == SDR_FLOW_IDLE || src_qp != flow->peer_qpn ||
	    pkt->src_flow != flow->peer_flow ||
	    memcmp(sgid->raw, flow->peer_gid.raw, sizeof(sgid->raw))) {
		drop = SDR_DROP_PEER;
		goto out_unlock;
	}
	if (flow->state != SDR_FLOW_CONNECTED) {
		drop = SDR_DROP_STALE;
		goto out_unlock;
	}
	/*
	 * The peer's own packet, whatever it says or whether it is used
	 * (a duplicate, a late copy, an ACK): the peer is alive.
	 */
	flow->sr_data_ns = ktime_get_ns();
	switch (pkt->type) {
	case SDR_PKT_DATA:
		drop = sdr_flow_rx_data(flow, pkt, payload, &q);
		break;
	case SDR_PKT_CLOSE:
		sdr_flow_end(flow, SDR_FLOW_CLOSED);
		break;
	case SDR_PKT_PROBE:
		if (sdr_credit_rx_probe(&flow->none_rx, pkt->aux) < 0)
			drop = SDR_DROP_ACK_CLAIM;
		else
			sdr_none_grant(flow, pkt->ts, &q);
		break;
	case SDR_PKT_CREDIT:
		drop = sdr_none_rx_credit(flow, pkt);
		kick = true;
		break;
	default:
		/* ACK, NACK, RNR: only SR messages ask for them. */
		drop = sdr_srk_rx_ctrl(flow, pkt, payload);
		sdr_flow_finish_tx(flow);
		kick = true;
		break;
	}
out_unlock:
	if (drop) {
		flow->stats.rx_dropped++;
		flow->stats.drops[drop]++;
	}
	spin_unlock_bh(&flow->lock);
	if (drop)
		sdr_dev_drop(sdev, drop);
	sdr_ctrlq_send(flow, &q);
	if (kick)
		sdr_flow_queue_tx(flow);
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

/* Put @flow on the device's list of flows with packets to send. */
void sdr_flow_queue_tx(struct sdr_flow *flow)
{
	struct sdr_dev *sdev = flow->sdev;

	spin_lock_bh(&sdev->tx_lock);
	spin_lock(&flow->lock);
	if (!flow->tx_queued && !flow->dead) {
		flow->tx_queued = true;
		list_add_tail(&flow->tx_node, &sdev->tx_flows);
	}
	spin_unlock(&flow->lock);
	spin_unlock_bh(&sdev->tx_lock);
	sdev->xmit->kick(sdev);
}

/*
 * The next packet @flow may send (flow->lock held).  NONE messages go out
 * in order: a streamed one waiting for its next part holds back the NONE
 * messages after it, so packets of a later message mean the earlier one
 * is sent.  SR messages send whatever their engine allows, oldest first.
 */
bool sdr_flow_tx_next(struct sdr_flow *flow, struct sdr_pkt *pkt,
		      const u8 **data, struct sdr_txmsg **msgp)
{
	bool none_blocked = false;
	struct sdr_txmsg *msg;
	u64 now = 0;
	u32 len;

	lockdep_assert_held(&flow->lock);
	if (flow->dead || flow->state != SDR_FLOW_CONNECTED)
		return false;
	list_for_each_entry(msg, &flow->tx_msgs, node) {
		*pkt = (struct sdr_pkt) {
			.type		= SDR_PKT_DATA,
			.policy		= msg->policy,
			.dst_flow	= flow->peer_flow,
			.src_flow	= flow->id,
			.token		= flow->peer_token,
			.msg_seq	= msg->seq,
			.msg_len	= msg->msg_len,
			.imm		= msg->imm,
		};
		if (sdr_policy_arq(msg->policy)) {
			if (!now)
				now = ktime_get_ns();
			if (!sdr_srk_tx_next(flow, msg, now, pkt, data))
				continue;
		} else {
			if (msg->next_off == msg->msg_len || none_blocked)
				continue;
			if (msg->next_off >= msg->ready) {
				none_blocked = true;
				continue;
			}
			if (sdr_credit_tx_check(&flow->none_tx, msg->seq)) {
				none_blocked = true;
				sdr_none_wait(flow);
				continue;
			}
			len = min(flow->payload, msg->msg_len - msg->next_off);
			pkt->flags = msg->next_off + len == msg->msg_len ?
				     SDR_PKT_F_LAST : 0;
			pkt->payload_len = len;
			pkt->offset = msg->next_off;
			/* NONE has no RTT: ts is the low-water mark */
			pkt->ts = list_first_entry(&flow->tx_msgs,
						   struct sdr_txmsg, node)->seq;
			pkt->aux = sdr_credit_tx_take(&flow->none_tx);
			*data = msg->data + pkt->offset;
			msg->next_off += len;
		}
		*msgp = msg;
		msg->pkts_posted++;
		flow->stats.tx_packets++;
		flow->stats.tx_bytes += pkt->payload_len;
		return true;
	}
	return false;
}

/*
 * Complete every send that is finished (flow->lock held): a NONE message
 * once each packet went out, an SR message once its engine is done and
 * no packet of it is still posted.
 */
void sdr_flow_finish_tx(struct sdr_flow *flow)
{
	struct sdr_txmsg *msg, *tmp;
	u8 status;

	lockdep_assert_held(&flow->lock);
	list_for_each_entry_safe(msg, tmp, &flow->tx_msgs, node) {
		if (sdr_policy_arq(msg->policy)) {
			if (!msg->sr.status || msg->pkts_done != msg->pkts_posted)
				continue;
			status = msg->sr.status == SDR_SR_DONE ?
				 SDR_STATUS_OK : SDR_STATUS_FAILED;
		} else {
			if (msg->streaming || msg->pkts_done != msg->npkts)
				continue;
			status = msg->failed ? SDR_STATUS_FAILED : SDR_STATUS_OK;
		}
		if (status == SDR_STATUS_OK)
			flow->stats.msgs_sent++;
		else
			flow->stats.msgs_failed++;
		sdr_flow_cqe(flow, SDR_CQE_SEND, status, msg->seq, 0,
			     msg->msg_len, msg->imm, msg->user_data);
		sdr_txmsg_unlist(flow, msg);
	}
}

/*
 * A flushed message's completion, once the device holds none of its
 * packets: only then may the process reuse what it sent from.
 */
static void sdr_flow_flushed_done(struct sdr_flow *flow, struct sdr_txmsg *msg)
{
	lockdep_assert_held(&flow->lock);
	sdr_flow_cqe(flow, SDR_CQE_SEND, msg->flush_status, msg->seq, 0,
		     msg->msg_len, msg->imm, msg->user_data);
	sdr_txmsg_put(msg);
}

/* Completion of one DATA packet of @msg (no locks held). */
void sdr_flow_tx_done(struct sdr_flow *flow, struct sdr_txmsg *msg, bool ok)
{
	spin_lock_bh(&flow->lock);
	msg->pkts_done++;
	if (!ok)
		msg->failed = true;
	if (msg->flushed) {
		if (msg->pkts_done == msg->pkts_posted)
			sdr_flow_flushed_done(flow, msg);
	} else {
		sdr_flow_finish_tx(flow);
	}
	spin_unlock_bh(&flow->lock);
}

static struct sdr_txmsg *sdr_flow_find_stream(struct sdr_flow *flow, u32 seq)
{
	struct sdr_txmsg *msg;

	list_for_each_entry(msg, &flow->tx_msgs, node)
		if (msg->seq == seq && msg->streaming)
			return msg;
	return NULL;
}

/* Ready length after a part: a multiple of payload, or the whole. */
static bool sdr_part_ok(struct sdr_flow *flow, u64 ready, u64 msg_len)
{
	return ready <= msg_len && (ready == msg_len || !(ready % flow->payload));
}

/*
 * A new message (one-shot, or the first part of a stream).  Runs with no
 * lock held, so the copy from a user pointer faults pages freely; the
 * caller's reference keeps @flow alive.
 */
static int sdr_send_new(struct sdr_ctx *ctx, struct sdr_flow *flow,
			struct sdr_send_post *arg, bool stream)
{
	u64 msg_len = stream ? arg->msg_len : arg->len;
	bool uptr = arg->flags & SDR_SEND_USER_PTR;
	struct sdr_txmsg *msg;
	int ret;

	if (!msg_len || msg_len > flow->max_msg_size)
		return -EINVAL;
	if (!stream && !arg->len)
		return -EINVAL;
	if (stream && !sdr_part_ok(flow, arg->len, msg_len))
		return -EINVAL;
	if (!uptr && (arg->addr > flow->region_size ||
		      msg_len > flow->region_size - arg->addr))
		return -EINVAL;

	msg = kzalloc(sizeof(*msg), GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	kref_init(&msg->ref);
	msg->msg_len = msg_len;
	msg->ready = arg->len;
	msg->npkts = sdr_msg_npkts(msg_len, flow->payload);
	msg->imm = arg->imm;
	msg->user_data = arg->user_data;
	msg->streaming = stream;
	msg->uptr = uptr;
	if (uptr) {
		msg->staging = kvmalloc(msg_len, GFP_KERNEL);
		if (!msg->staging) {
			ret = -ENOMEM;
			goto err_put;
		}
		if (copy_from_user(msg->staging, u64_to_user_ptr(arg->addr),
				   arg->len)) {
			ret = -EFAULT;
			goto err_put;
		}
		msg->data = msg->staging;
	} else {
		msg->base = arg->addr;
		msg->data = flow->send_region + arg->addr;
	}

	msg->policy = READ_ONCE(flow->policy);
	if (sdr_policy_arq(msg->policy)) {
		ret = sdr_srk_tx_init(flow, msg);
		if (ret)
			goto err_put;
	}

	spin_lock_bh(&flow->lock);
	ret = flow->dead ? sdr_flow_gone(flow) : sdr_flow_usable(flow);
	if (!ret && flow->tx_inflight_msgs >= flow->max_msgs)
		ret = -EAGAIN;
	if (!ret && !sdr_ctx_cq_reserve(ctx))
		ret = -EAGAIN;
	if (ret) {
		spin_unlock_bh(&flow->lock);
		goto err_put;
	}
	/* numbered only now, so numbers follow the order on the list */
	msg->seq = flow->tx_next_seq++;
	msg->sr.seq = msg->seq;
	flow->tx_inflight_msgs++;
	msg->listed = true;
	list_add_tail(&msg->node, &flow->tx_msgs);
	arg->seq = msg->seq;
	spin_unlock_bh(&flow->lock);
	return 0;

err_put:
	sdr_txmsg_put(msg);
	return ret;
}

/*
 * The next part of a streamed message.  A part from a user pointer is
 * copied with no lock held, into the message's staging copy past ready
 * (nothing reads there before ready moves): the message is marked
 * copying, so no other part can run meanwhile, and a reference keeps its
 * memory if the flow drops it meanwhile.
 */
static int sdr_send_part(struct sdr_flow *flow, struct sdr_send_post *arg,
			 bool end)
{
	bool uptr = arg->flags & SDR_SEND_USER_PTR;
	struct sdr_txmsg *msg;
	u64 ready;
	u32 at;
	int ret;

	spin_lock_bh(&flow->lock);
	ret = flow->dead ? sdr_flow_gone(flow) : sdr_flow_usable(flow);
	if (ret)
		goto out_unlock;
	msg = sdr_flow_find_stream(flow, arg->seq);
	ret = -ESTALE;
	if (!msg)
		goto out_unlock;
	ret = -EBUSY;
	if (msg->copying)
		goto out_unlock;
	ret = -EINVAL;
	ready = msg->ready + arg->len;
	if (msg->uptr != uptr || (!arg->len && !end) ||
	    !sdr_part_ok(flow, ready, msg->msg_len) ||
	    (end && ready != msg->msg_len) ||
	    (!uptr && arg->addr != msg->base + msg->ready))
		goto out_unlock;
	if (uptr && arg->len) {
		at = msg->ready;
		msg->copying = true;
		kref_get(&msg->ref);
		spin_unlock_bh(&flow->lock);
		ret = copy_from_user(msg->staging + at,
				     u64_to_user_ptr(arg->addr), arg->len) ?
		      -EFAULT : 0;
		spin_lock_bh(&flow->lock);
		msg->copying = false;
		/* the flow failed or was destroyed meanwhile */
		if (!ret && !msg->listed)
			ret = flow->dead ? sdr_flow_gone(flow) : -EPIPE;
		if (ret) {
			sdr_txmsg_put(msg);
			goto out_unlock;
		}
		sdr_txmsg_put(msg);	/* the list still holds one */
	}
	msg->ready = ready;
	if (sdr_policy_arq(msg->policy))
		sdr_sr_tx_set_limit(&msg->sr, ready);
	if (end)
		msg->streaming = false;
	ret = 0;
out_unlock:
	spin_unlock_bh(&flow->lock);
	return ret;
}

/*
 * SDR_IOC_SEND_POST.  Called without ctx->lock and the device rwsem (it
 * may copy from user memory): it holds its own flow reference.
 */
int sdr_send_post(struct sdr_ctx *ctx, struct sdr_send_post *arg)
{
	u32 stream = arg->flags & (SDR_SEND_STREAM_START | SDR_SEND_STREAM_CONT |
				   SDR_SEND_STREAM_END);
	struct sdr_flow *flow;
	int ret;

	rcu_read_lock();
	flow = sdr_flow_lookup_rcu(&ctx->flows, arg->flow_id);
	rcu_read_unlock();
	if (!flow)
		return -ENOENT;
	ret = -EINVAL;
	if (stream & (stream - 1))
		goto out_put;
	if (arg->len > flow->max_msg_size)
		goto out_put;
	if (!stream)
		ret = sdr_send_new(ctx, flow, arg, false);
	else if (stream == SDR_SEND_STREAM_START)
		ret = sdr_send_new(ctx, flow, arg, true);
	else
		ret = sdr_send_part(flow, arg, stream == SDR_SEND_STREAM_END);
	if (!ret)
		sdr_flow_queue_tx(flow);
out_put:
	sdr_flow_put(flow);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Teardown */

/*
 * Complete every pending send with @status (flow->lock held).  Messages
 * with packets still posted complete at their last send completion: until
 * then the device may still read their data.
 */
static void sdr_flow_flush_tx(struct sdr_flow *flow, u8 status)
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

/*
 * Stop @flow: it takes no more packets and sends no more; every pending
 * send and receive completes with @status.
 */
void sdr_flow_shutdown(struct sdr_flow *flow, u8 status)
{
	struct sdr_dev *sdev = flow->sdev;

	spin_lock_bh(&sdev->tx_lock);
	spin_lock(&flow->lock);
	if (flow->tx_queued) {
		list_del_init(&flow->tx_node);
		flow->tx_queued = false;
	}
	flow->dead = true;
	sdr_eck_rx_drop_jobs(flow);
	sdr_flow_flush_rx(flow, status);
	sdr_flow_flush_tx(flow, status);
	spin_unlock(&flow->lock);
	spin_unlock_bh(&sdev->tx_lock);
	hrtimer_cancel(&flow->rx_timer);
	hrtimer_cancel(&flow->sr_timer);
}

/*
 * Once the device holds none of a stopped flow's sends (the last ones
 * also deliver the flushed sends' completions), destroy its address
 * handle: while the device lives, before its PD goes.  A send is claimed
 * and posted under tx_lock, so with tx_lock held and nothing posted no
 * send can be about to use the handle.
 */
static void sdr_flow_release_ah(struct sdr_flow *flow)
{
	struct sdr_dev *sdev = flow->sdev;
	struct ib_ah *ah;

	for (;;) {
		if (!wait_event_timeout(sdev->tx_wait,
					!atomic_read(&flow->tx_posted), 10 * HZ))
			pr_err_ratelimited("%s: flow %u: sends not completing\n",
					   sdev->name, flow->id);
		spin_lock_bh(&sdev->tx_lock);
		spin_lock(&flow->lock);
		if (!atomic_read(&flow->tx_posted))
			break;
		spin_unlock(&flow->lock);
		spin_unlock_bh(&sdev->tx_lock);
	}
	ah = flow->ah;
	flow->ah = NULL;
	spin_unlock(&flow->lock);
	spin_unlock_bh(&sdev->tx_lock);
	if (ah)
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

/* Destroy a flow of @ctx (ctx->lock held, device users lock held). */
static void sdr_flow_detach(struct sdr_ctx *ctx, struct sdr_flow *flow,
			    bool tell_peer)
{
	struct sdr_dev *sdev = flow->sdev;
	struct sdr_pkt close = {
		.type		= SDR_PKT_CLOSE,
		.policy		= flow->policy,
		.dst_flow	= flow->peer_flow,
		.src_flow	= flow->id,
		.token		= flow->peer_token,
	};
	bool connected;

	lockdep_assert_held(&ctx->lock);
	xa_erase(&ctx->flows, flow->id);
	spin_lock_bh(&flow->lock);
	connected = flow->state == SDR_FLOW_CONNECTED;
	spin_unlock_bh(&flow->lock);
	if (!flow->dead)
		sdr_flow_shutdown(flow, SDR_STATUS_FLUSHED);
	if (tell_peer && connected)
		sdev->xmit->send_ctrl(sdev, flow, &close, NULL, 0);
	sdr_flow_release_ah(flow);
	sdr_flow_retire_stats(flow);
	if (xa_erase(&sdev->flows, flow->id))
		atomic_dec(&sdev->nr_flows);
	ctx->cq_budget -= 2 * flow->max_msgs;
	spin_lock_bh(&flow->lock);
	flow->ctx = NULL;
	spin_unlock_bh(&flow->lock);
	sdr_flow_put(flow);
}

int sdr_flow_destroy(struct sdr_ctx *ctx, u32 flow_id)
{
	struct sdr_flow *flow = sdr_ctx_flow(ctx, flow_id);

	if (!flow)
		return -ENOENT;
	sdr_flow_detach(ctx, flow, !ctx->sdev->dying);
	return 0;
}

/*
 * The device broke (its QP cannot be recovered): fail every live flow, so
 * its sends and receives complete FAILED now instead of at dead-peer time.
 * Each flow is taken with a reference under RCU, the lookup's rule.
 */
void sdr_dev_fail_flows(struct sdr_dev *sdev)
{
	unsigned long id = 0;
	struct sdr_flow *flow;

	for (;;) {
		rcu_read_lock();
		flow = xa_find(&sdev->flows, &id, ULONG_MAX, XA_PRESENT);
		if (flow && !kref_get_unless_zero(&flow->ref))
			flow = ERR_PTR(-ENOENT);	/* being freed: skip */
		rcu_read_unlock();
		if (!flow)
			break;
		if (!IS_ERR(flow)) {
			spin_lock_bh(&flow->lock);
			if (!flow->dead && flow->state == SDR_FLOW_CONNECTED)
				sdr_flow_fail(flow);
			spin_unlock_bh(&flow->lock);
			sdr_flow_put(flow);
		}
		if (id == ULONG_MAX)
			break;
		id++;
	}
}

/* Destroy every flow of @ctx (ctx->lock held). */
void sdr_flow_destroy_all(struct sdr_ctx *ctx)
{
	struct sdr_flow *flow;
	unsigned long id;

	lockdep_assert_held(&ctx->lock);
	xa_for_each(&ctx->flows, id, flow)
		sdr_flow_detach(ctx, flow, !ctx->sdev->dying);
}

int sdr_flow_info(struct sdr_ctx *ctx, struct sdr_flow_info *arg)
{
	struct sdr_flow *flow = sdr_ctx_flow(ctx, arg->flow_id);

	if (!flow)
		return -ENOENT;
	spin_lock_bh(&flow->lock);
	arg->state = flow->state;
	arg->policy = flow->policy;
	arg->peer_flow_id = flow->peer_flow;
	arg->sends_inflight = flow->tx_inflight_msgs;
	arg->recvs_posted = flow->rx_posted;
	arg->tx_packets = flow->stats.tx_packets;
	arg->tx_bytes = flow->stats.tx_bytes;
	arg->rx_packets = flow->stats.rx_packets;
	arg->rx_bytes = flow->stats.rx_bytes;
	arg->rx_dropped = flow->stats.rx_dropped;
	arg->retransmits = flow->sr.st.retx_pkts;
	arg->parity_sent = flow->sr.st.parity_tx;
	arg->recovered = flow->sr.st.ec_recovered;
	spin_unlock_bh(&flow->lock);
	return 0;
}

/* Switch the policy of messages posted from now on. */
int sdr_flow_set_policy(struct sdr_flow *flow, u32 policy)
{
	if (policy > SDR_POLICY_ADAPTIVE)
		return -EINVAL;
	if (!sdr_policy_supported(policy))
		return -EOPNOTSUPP;
	spin_lock_bh(&flow->lock);
	flow->policy = policy;
	spin_unlock_bh(&flow->lock);
	return 0;
}
