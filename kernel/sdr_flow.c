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
 * The flow core: the ioctls' work, packets in from sdr_net.c, packets out
 * to it, the flow's timer.  What a policy does it asks of the policy's
 * struct sdr_policy_ops (sdr_flow.h); what policies and core share is in
 * sdr_flow_lib.c.
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
#include "sdr_ec.h"
#include "sdr_flow.h"
#include "sdr_stats.h"
#include "sdr_trace.h"

#define SDR_STATE_HDR	64

static_assert(sizeof(struct sdr_recv_state) == SDR_STATE_HDR);
static_assert(SDR_PATHS_MAX == SDR_PATH_MAX);

/*
 * The flow's address handle is gone by now: sdr_flow_detach() or the
 * device's removal destroyed it while the device lived.
 */
static enum hrtimer_restart sdr_flow_timer(struct hrtimer *timer);
static void sdr_flow_finish_tx(struct sdr_flow *flow);
static void sdr_flow_policy_work(struct work_struct *work);
static void sdr_flow_unaccount(struct sdr_flow *flow);

static void sdr_flow_free_work(struct work_struct *work)
{
	struct sdr_flow *flow = container_of(work, struct sdr_flow, free_work);
	const struct sdr_policy_ops *ops;
	u32 i;

	WARN_ON_ONCE(flow->ah);
	vfree(flow->recv_region);
	vfree(flow->send_region);
	vfree(flow->state_area);
	sdr_flow_unaccount(flow);	/* one never attached: its create failed */
	if (flow->slots) {
		spin_lock_bh(&flow->lock);	/* the rule of the slots */
		for (i = 0; i < flow->max_msgs; i++) {
			if (flow->slots[i].ops && flow->slots[i].ops->rx_release)
				flow->slots[i].ops->rx_release(flow, i);
			if (flow->slots[i].mr)
				sdr_mr_put(flow->slots[i].mr);
		}
		spin_unlock_bh(&flow->lock);
	}
	sdr_for_each_policy_in(ops, i, flow->policies_ready)
		if (ops->flow_free)
			ops->flow_free(flow);
	kfree(flow->slots);
	kvfree(flow->stream_chunks);
	kfree(flow->ps);
	sdr_auth_free(&flow->auth);
	for (i = 0; i + 1 < flow->nrails; i++) {
		WARN_ON_ONCE(flow->rails[i]->ah);
		sdr_dev_put(flow->rails[i]->sdev);
		kfree(flow->rails[i]);
	}
	sdr_mcharge_put(flow->mcharge);	/* a flow never attached */
	sdr_acct_put(flow->acct);	/* its messages' charges are back */
	sdr_dev_put(flow->sdev);
	atomic_dec(&sdr_nr_flows);
	kfree_rcu(flow, rcu);
}

/*
 * Ready @ops on @flow (may sleep): its per-flow state made, after its
 * base's, then the receives already posted and the connection given to
 * it as if it had been ready all along.  A flow readies its own policy
 * at creation and each it switches to, the peer's at connect, and one
 * the peer switched to once a packet asked for it (sdr_flow_want_policy()).
 */
static int sdr_flow_ready_one(struct sdr_flow *flow,
			      const struct sdr_policy_ops *ops)
{
	struct sdr_ctrlq q = { .n = 0 };
	int ret;
	u32 i;

	lockdep_assert_held(&flow->policy_mutex);
	if (test_bit(ops->id, &flow->policies_ready))
		return 0;
	if (ops->base) {
		ret = sdr_flow_ready_one(flow, ops->base);
		if (ret)
			return ret;
	}
	ret = ops->flow_init(flow);
	if (ret)
		return ret;
	spin_lock_bh(&flow->lock);
	if (ops->rx_post)
		for (i = 0; i < flow->max_msgs; i++)
			if (flow->slots[i].state == SDR_RECV_POSTED)
				ops->rx_post(flow, i, &q);
	if (ops->connect && flow->state == SDR_FLOW_CONNECTED && !flow->dead)
		ops->connect(flow, &flow->peer_ep, &q);
	set_bit(ops->id, &flow->policies_ready);
	spin_unlock_bh(&flow->lock);
	sdr_ctrlq_send(flow, &q);
	return 0;
}

static int sdr_flow_ready_policy(struct sdr_flow *flow,
				 const struct sdr_policy_ops *ops)
{
	int ret;

	mutex_lock(&flow->policy_mutex);
	ret = sdr_flow_ready_one(flow, ops);
	mutex_unlock(&flow->policy_mutex);
	return ret;
}

/*
 * Ready what a flow of policy @id runs (may sleep): that policy, or
 * under AUTO each one it may pick.
 */
static int sdr_flow_ready_id(struct sdr_flow *flow, u32 id)
{
	const struct sdr_policy_ops *ops;
	unsigned long mask;
	u32 i;
	int ret;

	if (id != SDR_POLICY_AUTO) {
		ops = sdr_policy_get(id);
		return ops ? sdr_flow_ready_policy(flow, ops) : -EOPNOTSUPP;
	}
	mask = sdr_auto_policies();
	sdr_for_each_policy_in(ops, i, mask) {
		ret = sdr_flow_ready_policy(flow, ops);
		if (ret)
			return ret;
	}
	return 0;
}

/* Ready what packets of the peer asked for (process context). */
static void sdr_flow_policy_work(struct work_struct *work)
{
	struct sdr_flow *flow = container_of(work, struct sdr_flow,
					     policy_work);
	const struct sdr_policy_ops *ops;
	unsigned long want;
	u32 i;

	spin_lock_bh(&flow->lock);
	want = flow->dead ? 0 : flow->policies_wanted;
	flow->policies_wanted = 0;
	spin_unlock_bh(&flow->lock);
	sdr_for_each_policy_in(ops, i, want)
		if (sdr_flow_ready_policy(flow, ops))
			pr_info_ratelimited("flow %u: no memory for policy %s\n",
					    flow->id, sdr_policy_name(ops->id));
	sdr_flow_put(flow);
}

/*
 * A packet of a policy not ready on @flow (flow->lock held): the peer
 * switched to it.  Ready it from process context; meanwhile the packet is
 * refused as if no receive were posted (an RNR where the policy answers
 * one, so an SR sender backs off and sends again).
 */
static int sdr_flow_want_policy(struct sdr_flow *flow,
				const struct sdr_policy_ops *ops,
				const struct sdr_pkt *pkt, struct sdr_ctrlq *q)
{
	lockdep_assert_held(&flow->lock);
	__set_bit(ops->id, &flow->policies_wanted);
	sdr_flow_get(flow);
	if (!queue_work(sdr_wq, &flow->policy_work))
		sdr_flow_put(flow);
	if (pkt && ops->rx_unmatched)
		ops->rx_unmatched(flow, pkt, 0, q);
	return SDR_DROP_NO_RECV;
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
				struct sdr_flow_create *arg)
{
	u32 payload;

	if (arg->policy == SDR_POLICY_DEFAULT)
		arg->policy = READ_ONCE(sdr_default_policy);
	if (arg->policy >= SDR_POLICY_NR)
		return -EINVAL;
	if (!sdr_policy_runs(arg->policy))
		return -EOPNOTSUPP;
	if (!arg->mtu)
		arg->mtu = sdev->mtu;
	if (!sdr_is_pow2_mtu(arg->mtu) || arg->mtu > sdev->mtu)
		return -EINVAL;
	payload = arg->mtu - SDR_WIRE_HDR_LEN;
	if (!arg->chunk_size)
		arg->chunk_size = READ_ONCE(sdr_chunk_pkts) * payload;
	if (arg->chunk_size < SDR_MIN_CHUNK ||
	    arg->chunk_size > SDR_MAX_CHUNK_PKTS * payload)
		return -EINVAL;
	if (!arg->max_msg_size || arg->max_msg_size > SDR_MAX_MSG_SIZE)
		return -EINVAL;
	if (!arg->max_msgs || arg->max_msgs > SDR_MAX_MSGS)
		return -EINVAL;
	if (!arg->ec_k)
		arg->ec_k = READ_ONCE(sdr_ec_k);
	if (!arg->ec_m)
		arg->ec_m = READ_ONCE(sdr_ec_m);
	if (!sdr_ec_geometry_ok(arg->ec_k, arg->ec_m))
		return -EINVAL;
	if (!arg->paths)
		arg->paths = 1;
	if (arg->paths > sdev->nr_paths)
		return -EINVAL;
	if (arg->auth == SDR_AUTH_DEFAULT)
		arg->auth = sdr_auth_param_alg();
	if (arg->auth >= SDR_AUTH_NR)
		return -EINVAL;
	if (arg->auth == SDR_AUTH_OFF && READ_ONCE(sdr_auth_required) &&
	    !capable(CAP_NET_ADMIN))
		return -EPERM;
	arg->payload = payload;
	return 0;
}

int sdr_flow_create(struct sdr_ctx *ctx, struct sdr_flow_create *arg)
{
	struct sdr_dev *sdev = ctx->sdev;
	u32 npkts, nchunks, id;
	size_t chunk_counts;
	struct sdr_flow *flow;
	union ib_gid gid;
	size_t region;
	int ret;

	ret = sdr_flow_check_attrs(sdev, arg);
	if (ret)
		return ret;
	if (ctx->cq_budget + 2 * arg->max_msgs > ctx->cq_entries)
		return -ENOSPC;

	flow = kzalloc(sizeof(*flow), GFP_KERNEL_ACCOUNT);
	if (!flow)
		return -ENOMEM;
	kref_init(&flow->ref);
	spin_lock_init(&flow->lock);
	spin_lock_init(&flow->mem_lock);
	INIT_LIST_HEAD(&flow->tx_msgs);
	INIT_LIST_HEAD(&flow->txq.node);
	flow->txq.flow = flow;
	flow->nrails = 1;
	INIT_WORK(&flow->free_work, sdr_flow_free_work);
	INIT_WORK(&flow->policy_work, sdr_flow_policy_work);
	mutex_init(&flow->policy_mutex);
	hrtimer_init(&flow->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	flow->timer.function = sdr_flow_timer;
	kref_get(&sdev->ref);
	flow->sdev = sdev;
	flow->ctx = ctx;
	atomic_inc(&sdr_nr_flows);

	flow->policy = arg->policy;
	flow->ec_k = arg->ec_k;
	flow->ec_m = arg->ec_m;
	flow->mtu = arg->mtu;
	flow->payload = arg->payload;
	flow->chunk_size = arg->chunk_size;
	flow->mr_only = arg->flags & SDR_FLOW_CREATE_MR;
	flow->max_inflight = arg->max_inflight;
	flow->max_msg_size = arg->max_msg_size;
	flow->max_msgs = arg->max_msgs;
	flow->dead_ns = (u64)READ_ONCE(sdr_dead_ms) * NSEC_PER_MSEC;
	flow->none_window = READ_ONCE(sdr_none_window);
	flow->rate_mbit = min_t(u32, READ_ONCE(sdr_rate_mbit), SDR_RATE_MAX_MBIT);

	npkts = sdr_msg_npkts(arg->max_msg_size, flow->payload);
	nchunks = sdr_msg_nchunks(arg->max_msg_size, flow->chunk_size);
	/* a flow of registered memory only has no regions */
	flow->slot_stride = flow->mr_only ? 0 : PAGE_ALIGN(arg->max_msg_size);
	flow->chunk_bitmap_off = SDR_STATE_HDR;
	flow->pkt_bitmap_off = SDR_STATE_HDR + BITS_TO_LONGS(nchunks) * 8;
	flow->state_stride = ALIGN(flow->pkt_bitmap_off +
				   BITS_TO_LONGS(npkts) * 8, 64);
	region = (size_t)flow->slot_stride * flow->max_msgs;
	flow->region_size = region;
	flow->state_size = PAGE_ALIGN((size_t)flow->state_stride *
				      flow->max_msgs);
	/* a streamed message's chunk counts, per slot */
	flow->max_chunks = nchunks;
	chunk_counts = (size_t)flow->max_msgs * 2 * nchunks * sizeof(u32);

	ret = -ENOMEM;
	/* the state area too: small chunks of a registered-memory flow */
	if (2 * region + flow->state_size + chunk_counts >
	    (size_t)sdr_max_region_mb << 20)
		goto err_put;
	/* counted and charged before anything big is allocated */
	ret = sdr_acct_flow_add(ctx->acct);
	if (ret)
		goto err_put;
	sdr_acct_get(ctx->acct);
	flow->acct = ctx->acct;
	flow->counted = true;
	flow->mcharge = sdr_mcharge_new(ctx->acct, 2 * region +
					flow->state_size);
	if (IS_ERR(flow->mcharge)) {
		ret = PTR_ERR(flow->mcharge);
		flow->mcharge = NULL;
		goto err_put;
	}
	ret = sdr_flow_charge(flow, sizeof(*flow) + chunk_counts +
			      flow->max_msgs * sizeof(*flow->slots) +
			      (arg->paths > 1 ? sizeof(*flow->ps) : 0));
	if (ret)
		goto err_put;
	ret = -ENOMEM;
	flow->stream_chunks = kvzalloc(chunk_counts, GFP_KERNEL_ACCOUNT);
	if (!flow->stream_chunks)
		goto err_put;
	flow->slots = kcalloc(flow->max_msgs, sizeof(*flow->slots),
			      GFP_KERNEL_ACCOUNT);
	if (region) {
		flow->recv_region = sdr_vmalloc_user(region);
		flow->send_region = sdr_vmalloc_user(region);
		if (!flow->recv_region || !flow->send_region)
			goto err_put;
	}
	flow->state_area = sdr_vmalloc_user(flow->state_size);
	if (!flow->slots || !flow->state_area)
		goto err_put;
	flow->paths = arg->paths;
	flow->rail0_paths = arg->paths;
	if (flow->paths > 1) {
		flow->ps = kzalloc(sizeof(*flow->ps), GFP_KERNEL_ACCOUNT);
		if (!flow->ps)
			goto err_put;
	}
	ret = sdr_flow_engine_init(flow);
	if (ret)
		goto err_put;
	ret = sdr_auth_init(&flow->auth, arg->auth, arg->secret,
			    sizeof(arg->secret));
	if (!ret && arg->auth == SDR_AUTH_AEAD)
		ret = sdev->xmit->crypt_enable(sdev);
	if (ret)
		goto err_put;
	sdr_auto_init(&flow->au);
	ret = sdr_flow_ready_id(flow, arg->policy);
	if (ret)
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
	ret = xa_insert(&ctx->flows, id, flow, GFP_KERNEL);
	if (ret) {
		xa_erase(&sdev->flows, id);
		goto err_put;
	}

	/* The endpoint blob is the caller's only: nothing reads it back. */
	sdr_flow_fill_ep(flow, sdev, &gid, id, &arg->ep);
	sdr_flow_fill_paths(flow, sdev, 0, flow->paths, &arg->ep_paths);
	sdr_auth_fill_ep(&flow->auth, &arg->ep_auth);
	sdr_auth_fill_kex(&flow->auth, &arg->ep, &arg->ep_paths, &arg->ep_kex);

	flow->owner_pid = ctx->pid;
	flow->owner_uid = from_kuid(&init_user_ns, current_euid());
	ctx->cq_budget += 2 * flow->max_msgs;
	atomic_inc(&sdev->nr_flows);
	sdev->xmit->rx_fit(sdev);
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

/*
 * The mapping of @flow behind @cookie (its id already matched), and a
 * reference on the regions' charge for it: -EINVAL once the flow left
 * its context (it gave its hold on the charge back).
 */
int sdr_flow_mmap_area(struct sdr_flow *flow, u64 cookie, void **mem,
		       size_t *size, bool *writable, struct sdr_mcharge **charge)
{
	u32 area = (cookie >> 36) & 0xf;

	if (cookie & ((1ULL << 36) - 1))
		return -EINVAL;
	switch (area) {
	case 1:
		*mem = flow->recv_region;
		*size = flow->region_size;
		*writable = false;
		break;
	case 2:
		*mem = flow->send_region;
		*size = flow->region_size;
		*writable = true;
		break;
	case 3:
		*mem = flow->state_area;
		*size = flow->state_size;
		*writable = false;
		break;
	default:
		return -EINVAL;
	}
	spin_lock_bh(&flow->lock);
	*charge = flow->mcharge ? sdr_mcharge_get(flow->mcharge) : NULL;
	spin_unlock_bh(&flow->lock);
	return *charge ? 0 : -EINVAL;
}

/* Whether @qpn is one of the @n in @qpns. */
static bool sdr_qpn_in(const u32 *qpns, u32 n, u32 qpn)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (qpns[i] == qpn)
			return true;
	return false;
}

/*
 * If a packet that came to @sdev from QPN @qpn and GID @sgid is @flow's
 * peer's, the queue of the rail it came by, else NULL: the peer sends to
 * rail 0 from the QPs and GID its endpoint gave, to another rail from
 * those of its same rail (flow->lock held).
 */
static struct sdr_txq *sdr_flow_from_peer(struct sdr_flow *flow,
					  const struct sdr_dev *sdev, u32 qpn,
					  const union ib_gid *sgid)
{
	struct sdr_rail *rl;
	u32 r;

	if (sdev == flow->sdev)
		return sdr_qpn_in(flow->peer_path_qpn, flow->peer_npaths,
				  qpn) &&
		       !memcmp(sgid->raw, flow->peer_gid.raw,
			       sizeof(sgid->raw)) ? &flow->txq : NULL;
	for (r = 1; r < flow->nrails; r++) {
		rl = flow->rails[r - 1];
		if (rl->sdev == sdev)
			return rl->connected && !rl->gone &&
			       sdr_qpn_in(rl->peer_path_qpn, rl->peer_npaths,
					  qpn) &&
			       !memcmp(sgid->raw, rl->peer_gid.raw,
				       sizeof(sgid->raw)) ? &rl->txq : NULL;
	}
	return NULL;
}

/* Flow @id of @ctx (ctx->lock held), or NULL. */
struct sdr_flow *sdr_ctx_flow(struct sdr_ctx *ctx, u32 id)
{
	lockdep_assert_held(&ctx->lock);

	return id ? xa_load(&ctx->flows, id) : NULL;
}

int sdr_flow_connect(struct sdr_ctx *ctx, struct sdr_flow_connect *arg)
{
	const struct sdr_endpoint *p = &arg->peer;
	const struct sdr_policy_ops *ops;
	struct sdr_dev *sdev = ctx->sdev;
	struct sdr_ctrlq q = { .n = 0 };
	struct sdr_auth_keys keys;
	struct sdr_ep_paths pp;
	struct sdr_flow *flow;
	struct ib_ah *ah;
	int ret;
	u32 i;

	flow = sdr_ctx_flow(ctx, arg->flow_id);
	if (!flow)
		return -ENOENT;
	if (flow->state != SDR_FLOW_IDLE)
		return -EISCONN;
	ret = sdr_flow_check_peer(flow, p);
	if (ret)
		return ret;
	ret = sdr_flow_peer_paths(p, &arg->peer_paths, &pp);
	if (ret)
		return ret;

	/* what the peer sends first: its own policy's packets (AUTO: all) */
	if (sdr_policy_runs(sdr_ep_get(p->policy))) {
		ret = sdr_flow_ready_id(flow, sdr_ep_get(p->policy));
		if (ret)
			return ret;
	}
	ret = sdr_flow_rails_check(flow, p);
	if (ret)
		return ret;
	ret = sdr_auth_accept(&flow->auth, &arg->peer_auth, &arg->peer_kex,
			      p, &pp, &keys);
	if (ret)
		goto out_zero;
	ah = sdr_dev_ah(sdev, flow, p->gid);
	if (IS_ERR(ah)) {
		ret = PTR_ERR(ah);
		goto out_zero;
	}
	/* keys what we send: nothing is sent before the state below */
	ret = sdr_auth_commit(&flow->auth, &keys);
	if (ret) {
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		return ret;
	}

	spin_lock_bh(&flow->lock);
	flow->peer_npaths = pp.n;
	memcpy(flow->peer_path_qpn, pp.qpn, sizeof(flow->peer_path_qpn));
	flow->ah = ah;
	flow->peer_qpn = sdr_ep_get(p->qpn);
	flow->peer_qkey = sdr_ep_get(p->qkey);
	flow->peer_flow = sdr_ep_get(p->flow_id);
	flow->peer_token = (u64)sdr_ep_get(p->token_hi) << 32 |
			   sdr_ep_get(p->token_lo);
	/* receives are posted from the peer's first sequence number on */
	flow->rx_seq0 = sdr_ep_get(p->seq0);
	flow->rx_next_post = flow->rx_seq0;
	memcpy(flow->peer_gid.raw, p->gid, sizeof(flow->peer_gid.raw));
	flow->peer_ep = *p;
	/* what a peer's EC may cost us: decided now, by the local limits */
	flow->ec_rx_max_k = READ_ONCE(sdr_ec_rx_max_k);
	flow->ec_rx_max_m = READ_ONCE(sdr_ec_rx_max_m);
	trace_sdr_flow_state(flow->id, flow->state, SDR_FLOW_CONNECTED);
	flow->state = SDR_FLOW_CONNECTED;
	flow->sr_heard_ns = ktime_get_ns();
	sdr_for_each_policy_in(ops, i, flow->policies_ready)
		if (ops->connect)
			ops->connect(flow, p, &q);
	spin_unlock_bh(&flow->lock);
	sdr_ctrlq_send(flow, &q);
	return 0;

out_zero:
	memzero_explicit(&keys, sizeof(keys));
	return ret;
}

/* SDR_IOC_FLOW_RAIL (ctx->lock and the flow's device's users lock held) */
int sdr_flow_rail(struct sdr_ctx *ctx, struct sdr_flow_rail *arg)
{
	struct sdr_flow *flow = sdr_ctx_flow(ctx, arg->flow_id);

	if (!flow)
		return -ENOENT;
	if (flow->state != SDR_FLOW_IDLE)
		return -EISCONN;
	switch (arg->op) {
	case SDR_RAIL_ADD:
		return sdr_rail_add(flow, arg);
	case SDR_RAIL_CONNECT:
		return sdr_rail_connect(flow, arg);
	default:
		return -EINVAL;
	}
}

int sdr_recv_post(struct sdr_ctx *ctx, struct sdr_recv_post *arg)
{
	struct sdr_flow *flow = sdr_ctx_flow(ctx, arg->flow_id);
	const struct sdr_policy_ops *ops;
	struct sdr_ctrlq q = { .n = 0 };
	struct sdr_recv_state *st;
	struct sdr_mr *mr = NULL;
	struct sdr_rxslot *slot;
	u32 idx, seq, i;
	u8 *dst = NULL;
	int ret;

	if (!flow)
		return -ENOENT;
	if (!(arg->flags & SDR_RECV_MR) && flow->mr_only)
		return -EINVAL;		/* no receive region to land in */
	if (arg->flags & SDR_RECV_MR) {
		if (!arg->mr_len || arg->mr_len > flow->max_msg_size)
			return -EINVAL;
		mr = sdr_mr_use(ctx, arg->mr_id, arg->mr_addr, arg->mr_len,
				&dst);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
	}
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
	if (arg->flags & SDR_RECV_GROUP) {
		ret = sdr_group_join(ctx, arg->group);
		if (ret) {
			sdr_ctx_cq_unreserve(ctx);
			goto out_unlock;
		}
	}

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
		.group		= arg->flags & SDR_RECV_GROUP ? arg->group : 0,
		.mr		= mr,
		.dst		= dst,
		.dst_len	= mr ? arg->mr_len : flow->slot_stride,
	};
	mr = NULL;	/* the slot's now */
	__clear_bit(seq % SDR_RX_HIST, flow->rx_delivered);
	flow->rx_next_post++;
	flow->rx_posted++;
	arg->slot = idx;
	arg->seq = seq;
	arg->gen = st->gen;
	sdr_for_each_policy_in(ops, i, flow->policies_ready)
		if (ops->rx_post)
			ops->rx_post(flow, idx, &q);
	ret = 0;
out_unlock:
	spin_unlock_bh(&flow->lock);
	if (mr)
		sdr_mr_put(mr);
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
		if (slot->group)
			sdr_group_done(ctx, slot->group, SDR_STATUS_FAILED);
		flow->rx_posted--;
		if (slot->state == SDR_RECV_ACTIVE) {
			if (slot->ops->rx_release)
				slot->ops->rx_release(flow, arg->slot);
			if (slot->ops->rx_abandon && !flow->dead &&
			    flow->state == SDR_FLOW_CONNECTED)
				slot->ops->rx_abandon(flow, arg->slot, &q);
		}
	}
	slot->state = SDR_RECV_FREE;
	if (slot->mr) {
		sdr_mr_put(slot->mr);
		slot->mr = NULL;
		slot->dst = NULL;
	}
	/* ordered after every earlier write to the slot's state area */
	smp_store_release(&sdr_slot_state(flow, arg->slot)->state,
			  SDR_RECV_FREE);
out_unlock:
	spin_unlock_bh(&flow->lock);
	sdr_ctrlq_send(flow, &q);
	return ret;
}

/*
 * DATA for no posted receive: a receive not posted yet (its policy may
 * answer, as SR's RNR does), or one that ended and was recycled (its
 * policy may answer that again).  Dropped either way.
 */
static int sdr_flow_rx_unmatched(struct sdr_flow *flow,
				 const struct sdr_policy_ops *ops,
				 const struct sdr_pkt *pkt, struct sdr_ctrlq *q)
{
	s32 ahead = (s32)(pkt->msg_seq - flow->rx_next_post);

	lockdep_assert_held(&flow->lock);
	if (ops->rx_unmatched)
		ops->rx_unmatched(flow, pkt, ahead, q);
	return ahead >= 0 ? SDR_DROP_NO_RECV : SDR_DROP_STALE;
}

/*
 * A packet of a streamed message for slot @idx (sdr_wire_check_geometry()
 * placed it in the stream): SR's or ADAPTIVE's, its part on the chunk
 * grid, landing within the receive (else the receive cannot take the
 * message: TOOBIG), the slot's message a stream too.
 */
static int sdr_flow_rx_stream(struct sdr_flow *flow,
			      const struct sdr_policy_ops *ops, u32 idx,
			      const struct sdr_pkt *pkt, const u8 *payload,
			      struct sdr_ctrlq *q)
{
	struct sdr_rxslot *slot = &flow->slots[idx];

	if (!(ops->features & SDR_PF_STREAM))
		return SDR_DROP_FLAGS;
	if (pkt->part % flow->chunk_size)
		return SDR_DROP_GEOMETRY;
	if (slot->state == SDR_RECV_POSTED) {
		slot->ops = ops;
	} else {
		if (ops != slot->ops)
			return SDR_DROP_POLICY;
		if (!slot->stream)
			return SDR_DROP_MSGLEN;
	}
	if (slot->state != SDR_RECV_DONE &&
	    (u64)pkt->land + pkt->payload_len > slot->dst_len) {
		sdr_slot_refuse(flow, idx, pkt, q);
		return SDR_DROP_MSGLEN;
	}
	return ops->rx_data(flow, idx, pkt, payload, q);
}

/* A DATA packet from the peer (flow->lock held): 0 or a drop reason. */
static int sdr_flow_rx_data(struct sdr_flow *flow, const struct sdr_pkt *pkt,
			    const u8 *payload, struct sdr_ctrlq *q)
{
	const struct sdr_policy_ops *ops = sdr_policy_get(pkt->policy);
	struct sdr_rxslot *slot;
	u32 idx, dst_off;
	int reason;

	lockdep_assert_held(&flow->lock);
	if (!ops)
		return SDR_DROP_POLICY;
	if (!test_bit(ops->id, &flow->policies_ready))
		return sdr_flow_want_policy(flow, ops, pkt, q);
	if (ops->rx_accept) {
		reason = ops->rx_accept(flow, pkt, q);
		if (reason)
			return reason;
	}
	reason = -sdr_wire_check_geometry(pkt, flow->payload,
					  flow->max_msg_size);
	if (reason)
		return reason;
	/* no larger code than the local limits took at connect */
	if (pkt->policy == SDR_WIRE_POLICY_EC &&
	    (SDR_EC_AUX_K(pkt->aux) > flow->ec_rx_max_k ||
	     SDR_EC_AUX_M(pkt->aux) > flow->ec_rx_max_m))
		return SDR_DROP_EC;
	if ((pkt->flags & SDR_PKT_F_PARITY) && !(ops->features & SDR_PF_PARITY))
		return SDR_DROP_FLAGS;	/* parity only where the policy has it */

	idx = sdr_rx_slot_of(flow, pkt->msg_seq);
	slot = &flow->slots[idx];
	if (slot->state == SDR_RECV_FREE || slot->seq != pkt->msg_seq)
		return sdr_flow_rx_unmatched(flow, ops, pkt, q);
	if (slot->refused) {
		/* TOOBIG: each packet still coming gets the sender told again */
		if (ops->rx_abandon)
			ops->rx_abandon(flow, idx, q);
		return SDR_DROP_MSGLEN;
	}
	if (pkt->flags & SDR_PKT_F_STREAM)
		return sdr_flow_rx_stream(flow, ops, idx, pkt, payload, q);
	if (slot->state != SDR_RECV_POSTED && slot->stream)
		return SDR_DROP_MSGLEN;
	/*
	 * Where the message lands (sdr_wire_decode() checked land >= offset):
	 * on a chunk, ending within max_msg_size, as a true sender checked.
	 */
	dst_off = pkt->land - pkt->offset;
	if (dst_off % flow->chunk_size)
		return SDR_DROP_GEOMETRY;
	if ((u64)dst_off + pkt->msg_len > flow->max_msg_size)
		return SDR_DROP_MSGLEN;
	if (slot->state == SDR_RECV_POSTED) {
		/* the policy starts the slot once it accepted the packet */
		slot->ops = ops;
		if ((u64)dst_off + pkt->msg_len > slot->dst_len) {
			sdr_slot_refuse(flow, idx, pkt, q);
			return SDR_DROP_MSGLEN;
		}
	} else {
		if (ops != slot->ops)
			return SDR_DROP_POLICY;
		if (pkt->msg_len != slot->msg_len || dst_off != slot->dst_off)
			return SDR_DROP_MSGLEN;
	}
	return ops->rx_data(flow, idx, pkt, payload, q);
}

/*
 * A decoded packet @pkt to @flow, its bytes at @hdr (header, then
 * payload), from QP @src_qp at @sgid of device @sdev.
 */
void sdr_flow_rx(struct sdr_dev *sdev, struct sdr_flow *flow,
		 const struct sdr_pkt *pkt, u8 *hdr, u32 src_qp,
		 const union ib_gid *sgid)
{
	const u8 *payload = sdr_wire_payload(hdr);
	const struct sdr_policy_ops *ops;
	struct sdr_ctrlq q = { .n = 0 };
	struct sdr_txq *txq;
	bool kick = false;
	int drop = 0;

	/*
	 * Nothing a packet says counts before it proves it is the peer's:
	 * the token (fixed at create) turns blind forgeries away cheaply,
	 * the tag (its key fixed at connect) everything else; an AEAD
	 * packet's payload is plain text from here on.
	 */
	if (pkt->token != flow->token)
		drop = SDR_DROP_TOKEN;
	else if (flow->auth.alg != SDR_AUTH_OFF && !sdr_auth_ready(&flow->auth))
		drop = SDR_DROP_PEER;	/* no peer, no key yet */
	else if (flow->auth.alg != SDR_AUTH_OFF &&
		 !sdr_auth_verify(&flow->auth, hdr, pkt))
		drop = SDR_DROP_AUTH;

	spin_lock_bh(&flow->lock);
	if (flow->dead)
		drop = SDR_DROP_NO_FLOW;
	if (drop)
		goto out_unlock;
	txq = flow->state == SDR_FLOW_IDLE ? NULL :
	      sdr_flow_from_peer(flow, sdev, src_qp, sgid);
	if (!txq || pkt->src_flow != flow->peer_flow) {
		drop = SDR_DROP_PEER;
		goto out_unlock;
	}
	if (flow->auth.alg != SDR_AUTH_OFF &&
	    sdr_replay_check(&flow->auth.replay, pkt->pn)) {
		drop = SDR_DROP_REPLAY;
		goto out_unlock;
	}
	txq->rx_packets++;
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
	default:
		/* ACK, NACK, RNR, CREDIT, PROBE: for the policy they name */
		ops = sdr_policy_get(pkt->policy);
		if (!ops || !ops->rx_ctrl)
			drop = SDR_DROP_POLICY;
		else if (!test_bit(ops->id, &flow->policies_ready))
			drop = sdr_flow_want_policy(flow, ops, NULL, &q);
		else
			drop = ops->rx_ctrl(flow, pkt, payload, &q);
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
	if (drop == SDR_DROP_AUTH || drop == SDR_DROP_REPLAY)
		trace_sdr_auth_drop(flow->id, pkt->src_flow, pkt->pn,
				    drop == SDR_DROP_REPLAY);
	if (drop)
		sdr_dev_drop(sdev, drop);
	sdr_ctrlq_send(flow, &q);
	if (kick)
		sdr_flow_queue_tx(flow);
}

/*
 * The next packet @flow may send on its rail @rail (flow->lock held):
 * what the policy of each message allows, oldest message first, on a
 * path of that rail; and where it goes.  Only policies that pick paths
 * send on rails past 0.
 */
bool sdr_flow_tx_next(struct sdr_flow *flow, u32 rail, struct sdr_pkt *pkt,
		      const u8 **data, struct sdr_txmsg **msgp,
		      struct sdr_tx_dest *dest)
{
	struct sdr_tx_round r = { .now = ktime_get_ns() };
	struct sdr_rail *rl = rail ? flow->rails[rail - 1] : NULL;
	u32 first = rl ? rl->first : 0;
	u32 n = rl ? rl->n : flow->rail0_paths;
	struct sdr_txmsg *msg;
	bool found = false;

	lockdep_assert_held(&flow->lock);
	if (flow->dead || flow->state != SDR_FLOW_CONNECTED ||
	    (rl && rl->gone))
		return false;
	if (flow->nrails > 1)
		sdr_path_allow(flow->ps, GENMASK(first + n - 1, first));
	list_for_each_entry(msg, &flow->tx_msgs, node) {
		if (rl && !(msg->ops->features & SDR_PF_PATHS))
			continue;
		*pkt = (struct sdr_pkt) {
			.type		= SDR_PKT_DATA,
			.policy		= msg->ops->id,
			.dst_flow	= rl ? rl->peer_flow : flow->peer_flow,
			.src_flow	= flow->id,
			.token		= flow->peer_token,
			.msg_seq	= msg->seq,
			.msg_len	= msg->msg_len,
			.imm		= msg->imm,
		};
		r.path = first;
		r.urgent = flow->ctx && sdr_group_urgent(flow->ctx, msg->group);
		if (!msg->ops->tx_next(flow, msg, &r, pkt, data))
			continue;
		/* a stream of parts: its policy said where each lands */
		if (!msg->parts)
			pkt->land = msg->dst_off + pkt->offset;
		*msgp = msg;
		msg->pkts_posted++;
		sdr_flow_txq(flow, rail)->tx_packets++;
		flow->stats.tx_packets++;
		flow->stats.tx_bytes += pkt->payload_len;
		found = true;
		break;
	}
	if (flow->nrails > 1)
		sdr_path_allow(flow->ps, 0);	/* all of them again */
	if (!found)
		return false;
	/* the engine picks among the allowed paths only */
	dest->qp = r.path >= first && r.path < first + n ? r.path - first : 0;
	dest->ah = rl ? rl->ah : flow->ah;
	dest->qpn = rl ? rl->peer_qpn : flow->peer_qpn;
	dest->qkey = rl ? rl->peer_qkey : flow->peer_qkey;
	dest->urgent = r.urgent &&
		       (pkt->flags & (SDR_PKT_F_RETX | SDR_PKT_F_PARITY));
	return true;
}

/* Complete every send its policy says is finished (flow->lock held). */
static void sdr_flow_finish_tx(struct sdr_flow *flow)
{
	struct sdr_txmsg *msg, *tmp;
	u8 status;

	lockdep_assert_held(&flow->lock);
	list_for_each_entry_safe(msg, tmp, &flow->tx_msgs, node) {
		if (!msg->ops->tx_status(flow, msg, &status))
			continue;
		if (status == SDR_STATUS_OK)
			flow->stats.msgs_sent++;
		else
			flow->stats.msgs_failed++;
		sdr_flow_cqe(flow, SDR_CQE_SEND, status, msg->seq, 0,
			     msg->msg_len, msg->imm, msg->user_data, msg->group);
		sdr_txmsg_unlist(flow, msg);
	}
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
 * The policy @msg runs, and its EC geometry: the flow's of the moment,
 * or under AUTO what AUTO picks now.  Every policy either may name is
 * ready (the flow readied it before it took the policy).
 */
static const struct sdr_policy_ops *sdr_flow_msg_policy(struct sdr_flow *flow,
							struct sdr_txmsg *msg)
{
	u32 policy, k, m;

	spin_lock_bh(&flow->lock);
	policy = flow->policy;
	k = flow->ec_k;
	m = flow->ec_m;
	if (msg->parts) {
		/* SR's, or ADAPTIVE's on its flows; NULL on a NONE flow */
		if (policy == SDR_POLICY_NONE)
			policy = SDR_POLICY_NR;
		else if (policy != SDR_POLICY_ADAPTIVE)
			policy = test_bit(SDR_POLICY_SR, &flow->policies_ready) ?
				 SDR_POLICY_SR : SDR_POLICY_NR;
	} else if (policy == SDR_POLICY_AUTO) {
		policy = sdr_flow_auto_pick(flow, msg->npkts, ktime_get_ns(),
					    &k, &m);
	}
	spin_unlock_bh(&flow->lock);
	msg->ec_k = k;
	msg->ec_m = m;
	return policy < SDR_POLICY_NR ? sdr_policy_get(policy) : NULL;
}

/*
 * New message @msg, its source in place: its policy readies it, then it
 * goes on the flow's list, numbered, its completion reserved and its
 * group joined; its seq out in @arg.  The list holds the caller's
 * reference from then on; on an error the caller still has it.
 * -EOPNOTSUPP: no policy of the flow runs it (a stream on a NONE flow).
 */
static int sdr_send_list(struct sdr_ctx *ctx, struct sdr_flow *flow,
			 struct sdr_txmsg *msg, struct sdr_send_post *arg)
{
	int ret;

	msg->ops = sdr_flow_msg_policy(flow, msg);
	if (!msg->ops)
		return -EOPNOTSUPP;
	ret = msg->ops->tx_init(flow, msg);
	if (ret)
		return ret;
	spin_lock_bh(&flow->lock);
	ret = flow->dead ? sdr_flow_gone(flow) : sdr_flow_usable(flow);
	if (!ret && flow->tx_inflight_msgs >= flow->max_msgs)
		ret = -EAGAIN;
	if (!ret && !sdr_ctx_cq_reserve(ctx))
		ret = -EAGAIN;
	if (!ret && (arg->flags & SDR_SEND_GROUP)) {
		ret = sdr_group_join(ctx, arg->group);
		if (ret)
			sdr_ctx_cq_unreserve(ctx);
		else
			msg->group = arg->group;
	}
	if (ret) {
		spin_unlock_bh(&flow->lock);
		return ret;
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
}

/*
 * A stream of parts (SDR_SEND_PARTS with STREAM_START): no byte yet, no
 * length; its parts come with CONT (sdr_send_parts_add()).  The table
 * of their sources has room for as many parts as the stream may have
 * packets.
 */
static int sdr_send_parts_new(struct sdr_ctx *ctx, struct sdr_flow *flow,
			      struct sdr_send_post *arg)
{
	u32 nparts = sdr_stream_max_pkts(flow->max_msg_size, flow->payload);
	struct sdr_txmsg *msg;
	int ret;

	if (arg->len || arg->msg_len || arg->addr || arg->dst_off ||
	    (arg->flags & (SDR_SEND_USER_PTR | SDR_SEND_MR)) || arg->mr_id)
		return -EINVAL;
	msg = kzalloc(sizeof(*msg), GFP_KERNEL_ACCOUNT);
	if (!msg)
		return -ENOMEM;
	kref_init(&msg->ref);
	msg->flow = flow;
	msg->parts = true;
	msg->streaming = true;
	msg->imm = arg->imm;
	msg->user_data = arg->user_data;
	ret = sdr_txmsg_charge(flow, msg, sizeof(*msg) +
			       array_size(nparts, sizeof(*msg->tparts)));
	if (ret)
		goto err_put;
	msg->tparts = kvcalloc(nparts, sizeof(*msg->tparts),
			       GFP_KERNEL_ACCOUNT);
	if (!msg->tparts) {
		ret = -ENOMEM;
		goto err_put;
	}
	ret = sdr_send_list(ctx, flow, msg, arg);
	if (ret)
		goto err_put;
	return 0;

err_put:
	sdr_txmsg_put(msg);
	return ret;
}

/*
 * The next part of stream of parts arg->seq: its source (a reference on
 * its registration, or a copy of the user's bytes, made with no lock
 * held), then its packets, laid out by the engine.  -ENOSPC when they do
 * not fit the packets the stream may have.
 */
static int sdr_send_parts_add(struct sdr_ctx *ctx, struct sdr_flow *flow,
			      struct sdr_send_post *arg, bool end)
{
	bool uptr = arg->flags & SDR_SEND_USER_PTR;
	struct sdr_txpart part = { NULL };
	struct sdr_txmsg *msg;
	size_t charged = 0;
	u8 *kva = NULL;
	int ret, idx;

	if (end) {
		if (arg->len || arg->addr || arg->dst_off || arg->mr_id ||
		    (arg->flags & (SDR_SEND_USER_PTR | SDR_SEND_MR)))
			return -EINVAL;
	} else {
		if (!arg->len || arg->len > flow->max_msg_size ||
		    arg->dst_off % flow->chunk_size ||
		    arg->dst_off > flow->max_msg_size - arg->len)
			return -EINVAL;
		if (arg->flags & SDR_SEND_MR) {
			part.mr = sdr_mr_use(ctx, arg->mr_id, arg->addr,
					     arg->len, &kva);
			if (IS_ERR(part.mr))
				return PTR_ERR(part.mr);
			part.data = kva;
		} else if (uptr) {
			/* the flow's until the part is the message's */
			ret = sdr_flow_tx_charge(flow, arg->len);
			if (ret)
				return ret;
			charged = arg->len;
			ret = -ENOMEM;
			part.staging = kvmalloc(arg->len, GFP_KERNEL_ACCOUNT);
			if (!part.staging)
				goto out_part;
			if (copy_from_user(part.staging,
					   u64_to_user_ptr(arg->addr),
					   arg->len)) {
				ret = -EFAULT;
				goto out_part;
			}
			part.data = part.staging;
		} else {
			ret = -EINVAL;
			if (arg->addr > flow->region_size ||
			    arg->len > flow->region_size - arg->addr)
				goto out_part;
			part.data = flow->send_region + arg->addr;
		}
	}

	spin_lock_bh(&flow->lock);
	ret = flow->dead ? sdr_flow_gone(flow) : sdr_flow_usable(flow);
	if (ret)
		goto out_unlock;
	msg = sdr_flow_find_stream(flow, arg->seq);
	ret = -ESTALE;
	if (!msg || !msg->parts)
		goto out_unlock;
	if (end) {
		ret = sdr_sr_tx_stream_end(&msg->sr);
		if (!ret)
			msg->streaming = false;
		goto out_unlock;
	}
	idx = sdr_sr_tx_stream_part(&msg->sr, arg->dst_off, arg->len);
	ret = idx < 0 ? idx : 0;
	if (ret)
		goto out_unlock;
	msg->tparts[idx] = part;
	part = (struct sdr_txpart) { NULL };	/* the message's now */
	msg->charged += charged;
	charged = 0;
out_unlock:
	spin_unlock_bh(&flow->lock);
out_part:
	if (part.mr)
		sdr_mr_put(part.mr);
	kvfree(part.staging);
	sdr_flow_tx_uncharge(flow, charged);
	return ret;
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
	bool in_mr = arg->flags & SDR_SEND_MR;
	bool parts = arg->flags & SDR_SEND_PARTS;
	struct sdr_txmsg *msg;
	u8 *kva = NULL;
	int ret;

	if (parts)
		return sdr_send_parts_new(ctx, flow, arg);
	if (!msg_len || msg_len > flow->max_msg_size)
		return -EINVAL;
	/* it lands on a chunk of the receive, and within max_msg_size */
	if (arg->dst_off % flow->chunk_size ||
	    arg->dst_off > flow->max_msg_size - msg_len)
		return -EINVAL;
	if (!stream && !arg->len)
		return -EINVAL;
	if (stream && !sdr_part_ok(flow, arg->len, msg_len))
		return -EINVAL;
	if (!uptr && !in_mr && (arg->addr > flow->region_size ||
				msg_len > flow->region_size - arg->addr))
		return -EINVAL;

	msg = kzalloc(sizeof(*msg), GFP_KERNEL_ACCOUNT);
	if (!msg)
		return -ENOMEM;
	kref_init(&msg->ref);
	msg->flow = flow;
	/* charged before the copy is made: over the bounds, nothing is */
	ret = sdr_txmsg_charge(flow, msg, sizeof(*msg) + (uptr ? msg_len : 0));
	if (ret)
		goto err_put;
	if (in_mr) {
		msg->mr = sdr_mr_use(ctx, arg->mr_id, arg->addr, msg_len, &kva);
		if (IS_ERR(msg->mr)) {
			ret = PTR_ERR(msg->mr);
			msg->mr = NULL;
			goto err_put;
		}
	}
	msg->msg_len = msg_len;
	msg->dst_off = arg->dst_off;
	msg->ready = arg->len;
	msg->npkts = sdr_msg_npkts(msg_len, flow->payload);
	msg->imm = arg->imm;
	msg->user_data = arg->user_data;
	msg->streaming = stream;
	msg->uptr = uptr;
	if (uptr) {
		msg->staging = kvmalloc(msg_len, GFP_KERNEL_ACCOUNT);
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
	} else if (in_mr) {
		msg->base = arg->addr;
		msg->data = kva;
	} else {
		msg->base = arg->addr;
		msg->data = flow->send_region + arg->addr;
	}

	ret = sdr_send_list(ctx, flow, msg, arg);
	if (ret)
		goto err_put;
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
	ret = -EINVAL;		/* a stream of parts takes SDR_SEND_PARTS */
	if (msg->parts)
		goto out_unlock;
	ret = -EBUSY;
	if (msg->copying)
		goto out_unlock;
	ret = -EINVAL;
	ready = msg->ready + arg->len;
	if (msg->uptr != uptr || !!msg->mr != !!(arg->flags & SDR_SEND_MR) ||
	    (msg->mr && arg->mr_id != sdr_mr_id(msg->mr)) ||
	    (!arg->len && !end) ||
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
	if (msg->ops->tx_ready)
		msg->ops->tx_ready(flow, msg);
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
	/* one source: the region, a user pointer or registered memory */
	if ((arg->flags & SDR_SEND_MR) ? arg->flags & SDR_SEND_USER_PTR :
					 arg->mr_id)
		goto out_put;
	/* a stream of parts is a stream */
	if ((arg->flags & SDR_SEND_PARTS) && !stream)
		goto out_put;
	/* where a message lands is said by its first post only */
	if (arg->dst_off && !(arg->flags & SDR_SEND_PARTS) &&
	    (stream & (SDR_SEND_STREAM_CONT | SDR_SEND_STREAM_END)))
		goto out_put;
	/* a group is joined by a message's first post only */
	if ((arg->flags & SDR_SEND_GROUP) ?
	    stream & (SDR_SEND_STREAM_CONT | SDR_SEND_STREAM_END) : arg->group)
		goto out_put;
	if (arg->len > flow->max_msg_size)
		goto out_put;
	if (!stream)
		ret = sdr_send_new(ctx, flow, arg, false);
	else if (stream == SDR_SEND_STREAM_START)
		ret = sdr_send_new(ctx, flow, arg, true);
	else if (arg->flags & SDR_SEND_PARTS)
		ret = sdr_send_parts_add(ctx, flow, arg,
					 stream == SDR_SEND_STREAM_END);
	else
		ret = sdr_send_part(flow, arg, stream == SDR_SEND_STREAM_END);
	if (!ret)
		sdr_flow_queue_tx(flow);
out_put:
	sdr_flow_put(flow);
	return ret;
}

/*
 * Stop @flow: it takes no more packets and sends no more; every pending
 * send and receive completes with @status.
 */
void sdr_flow_shutdown(struct sdr_flow *flow, u8 status)
{
	const struct sdr_policy_ops *ops;
	struct sdr_dev *sdev = flow->sdev;
	u32 i;

	spin_lock_bh(&sdev->tx_lock);
	spin_lock(&flow->lock);
	if (flow->txq.queued) {
		list_del_init(&flow->txq.node);
		flow->txq.queued = false;
	}
	flow->dead = true;
	sdr_flow_flush_rx(flow, status);
	sdr_flow_flush_tx(flow, status);
	spin_unlock(&flow->lock);
	spin_unlock_bh(&sdev->tx_lock);
	/* dead: nothing queues it on a rail again */
	for (i = 1; i < flow->nrails; i++)
		sdr_flow_rail_unqueue(flow, flow->rails[i - 1]);
	if (cancel_work_sync(&flow->policy_work))
		sdr_flow_put(flow);	/* the reference the queued work held */
	sdr_for_each_policy_in(ops, i, flow->policies_ready)
		if (ops->flow_stop)
			ops->flow_stop(flow);
	hrtimer_cancel(&flow->timer);
}

/*
 * Once the device holds none of a stopped flow's sends (the last ones
 * also deliver the flushed sends' completions), destroy its address
 * handle: while the device lives, before its PD goes.
 */
static void sdr_flow_release_ah(struct sdr_flow *flow)
{
	struct ib_ah *ah = sdr_txq_take_ah(flow, flow->sdev, &flow->txq,
					   &flow->ah);

	if (ah)
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

/*
 * The flow's count and the charge of its own state go back to whoever
 * paid as it leaves its context: a process that destroys a flow (or
 * closes the file) may create another at once, though the memory itself
 * goes only with the flow's last reference, which nothing the process
 * does keeps for long.  Once: at detach, or at the free of a flow whose
 * create failed.  What its sends hold goes back as each is freed
 * (sdr_flow_tx_uncharge()), the regions' charge with their last mapping.
 */
static void sdr_flow_unaccount(struct sdr_flow *flow)
{
	if (!flow->counted)
		return;
	flow->counted = false;
	sdr_acct_uncharge(flow->acct, atomic_long_xchg(&flow->charged, 0));
	sdr_acct_flow_del(flow->acct);
}

/*
 * A stopped flow lands nothing more: the registrations its receives
 * hold go back as it leaves its context, so a process that exits, or
 * deregisters once the flow is gone, has its pinned pages (and their
 * charge) back at once, not when the flow's last reference goes.
 */
static void sdr_flow_drop_recv_mrs(struct sdr_flow *flow)
{
	struct sdr_rxslot *slot;
	u32 i;

	spin_lock_bh(&flow->lock);
	for (i = 0; i < flow->max_msgs; i++) {
		slot = &flow->slots[i];
		if (!slot->mr)
			continue;
		sdr_mr_put(slot->mr);
		slot->mr = NULL;
		slot->dst = NULL;
	}
	spin_unlock_bh(&flow->lock);
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
	struct sdr_mcharge *mcharge;
	bool connected;

	lockdep_assert_held(&ctx->lock);
	xa_erase(&ctx->flows, flow->id);
	spin_lock_bh(&flow->lock);
	connected = flow->state == SDR_FLOW_CONNECTED;
	spin_unlock_bh(&flow->lock);
	if (!flow->dead)
		sdr_flow_shutdown(flow, SDR_STATUS_FLUSHED);
	sdr_flow_drop_recv_mrs(flow);
	if (tell_peer && connected)
		sdev->xmit->send_ctrl(sdev, flow, &close, NULL, 0);
	sdr_flow_release_ah(flow);
	sdr_flow_rails_detach(flow);
	sdr_flow_retire_stats(flow);
	if (xa_erase(&sdev->flows, flow->id))
		atomic_dec(&sdev->nr_flows);
	ctx->cq_budget -= 2 * flow->max_msgs;
	spin_lock_bh(&flow->lock);
	flow->ctx = NULL;
	mcharge = flow->mcharge;	/* no new mapping from now on */
	flow->mcharge = NULL;
	spin_unlock_bh(&flow->lock);
	sdr_flow_unaccount(flow);
	sdr_mcharge_put(mcharge);
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
		if (!IS_ERR(flow) && flow->sdev != sdev) {
			/* a rail of another device's flow: it goes on without */
			sdr_flow_rail_gone(flow, sdev);
			sdr_flow_put(flow);
		} else if (!IS_ERR(flow)) {
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
	struct sdr_sr_stats st;

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
	sdr_flow_engine_stats(flow, &st);
	arg->retransmits = st.retx_pkts;
	arg->spurious_retx = st.spurious;
	arg->parity_sent = st.parity_tx;
	arg->recovered = st.ec_recovered;
	arg->ec_k = flow->ec_k;
	arg->ec_m = flow->ec_m;
	spin_unlock_bh(&flow->lock);
	return 0;
}

/* Switch the policy of messages posted from now on. */
int sdr_flow_set_policy(struct sdr_flow *flow, u32 policy)
{
	int ret;

	if (policy >= SDR_POLICY_NR)
		return -EINVAL;
	if (!sdr_policy_runs(policy))
		return -EOPNOTSUPP;
	ret = sdr_flow_ready_id(flow, policy);
	if (ret)
		return ret;
	spin_lock_bh(&flow->lock);
	flow->policy = policy;
	spin_unlock_bh(&flow->lock);
	return 0;
}

/* The EC geometry (k data, m parity packets) of EC messages posted from now on. */
int sdr_flow_set_ec(struct sdr_flow *flow, u32 k, u32 m)
{
	if (!sdr_ec_geometry_ok(k, m))
		return -EINVAL;
	spin_lock_bh(&flow->lock);
	flow->ec_k = k;
	flow->ec_m = m;
	spin_unlock_bh(&flow->lock);
	return 0;
}

/*
 * The rate SR and EC send at (and ADAPTIVE's ceiling), Mbit/s of sdr
 * packets (payload and header), from now on; 0: the path's.  Every engine state of the flow takes
 * it at once (sdr_sr_set_rate()), one made later through
 * sdr_flow_engine_cfg().  A packet already timed by the old rate leaves
 * then, the next ones at the new.
 */
void sdr_flow_set_rate(struct sdr_flow *flow, u32 mbit)
{
	u64 bps = (u64)mbit * 1000000;

	spin_lock_bh(&flow->lock);
	flow->rate_mbit = mbit;
	sdr_sr_set_rate(&flow->sr, bps);
	if (flow->ad)
		sdr_sr_set_rate(flow->ad, bps);
	spin_unlock_bh(&flow->lock);
}

/*
 * The flow's timer: each message's policy (retransmission timeouts, a
 * dead peer), each policy once (NONE's credit probes), each started
 * receive's policy (delayed ACKs, NACK rounds).  Any of them may find
 * the peer dead: then the flow fails.
 */
static enum hrtimer_restart sdr_flow_timer(struct hrtimer *timer)
{
	struct sdr_flow *flow = container_of(timer, struct sdr_flow, timer);
	const struct sdr_policy_ops *ops;
	struct sdr_ctrlq q = { .n = 0 };
	struct sdr_txmsg *msg;
	bool dead_peer = false;
	u64 now;
	u32 i;

	spin_lock_bh(&flow->lock);
	flow->timer_at = 0;
	if (flow->dead || flow->state != SDR_FLOW_CONNECTED)
		goto out_unlock;
	now = ktime_get_ns();

	list_for_each_entry(msg, &flow->tx_msgs, node)
		if (msg->ops->tx_poll && msg->ops->tx_poll(flow, msg, now))
			dead_peer = true;
	sdr_for_each_policy_in(ops, i, flow->policies_ready)
		if (ops->flow_timer && ops->flow_timer(flow, now, &q))
			dead_peer = true;
	for (i = 0; i < flow->max_msgs; i++) {
		struct sdr_rxslot *s = &flow->slots[i];

		/*
		 * A slot done without a packet (NONE gave up on a message
		 * wholly lost) has no policy: nothing to poll.
		 */
		if ((s->state == SDR_RECV_ACTIVE || s->state == SDR_RECV_DONE) &&
		    s->ops && s->ops->rx_poll &&
		    s->ops->rx_poll(flow, i, now, &q))
			dead_peer = true;
	}
	if (dead_peer) {
		pr_info_ratelimited("flow %u: peer silent for %u ms, failing the flow\n",
				    flow->id,
				    (u32)div_u64(flow->dead_ns, NSEC_PER_MSEC));
		sdr_flow_fail(flow);
	}
out_unlock:
	spin_unlock_bh(&flow->lock);
	sdr_ctrlq_send(flow, &q);
	if (!dead_peer)
		sdr_flow_queue_tx(flow);
	return HRTIMER_NORESTART;
}
