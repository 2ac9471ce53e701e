// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: a flow over several devices (rails), SDR_IOC_FLOW_RAIL.
 *
 * A flow lives on its context's device (rail 0): its ring, its regions,
 * its control packets.  Each more rail is another bound device the flow
 * sends DATA over and receives DATA on: the flow takes an id in that
 * device's flows (the peer's packets there carry it), the device's first
 * QPs as more paths of the flow's engine, and an address handle to the
 * peer's same rail.  Each device pulls the flow's packets for its own
 * paths only (sdr_flow_tx_next() narrows the engine's picks to them),
 * so a rail sends as fast as its device takes packets, and the engine
 * keeps the rails' loads level.
 *
 * A rail's device can go away under a running flow: its removal takes
 * the rail off the device's send list and its paths down (the engine
 * sends what was in flight there again over the others), then, with the
 * device's sends flushed, destroys the rail's address handle and leaves
 * the device's flows.  The rail itself (its peer's QPNs for receive
 * checks, its counters in sysfs) stays until the flow is freed.
 */
#include "sdr.h"
#include "sdr_flow.h"

/*
 * The rail of @flow on @sdev, or NULL (flow->lock or the context's lock
 * held: rails are added under both; none goes before the flow).
 */
static struct sdr_rail *sdr_flow_rail_of(struct sdr_flow *flow,
					 struct sdr_dev *sdev)
{
	u32 r;

	for (r = 1; r < flow->nrails; r++)
		if (flow->rails[r - 1]->sdev == sdev)
			return flow->rails[r - 1];
	return NULL;
}

/* Take rail @rl off its device's send list. */
void sdr_flow_rail_unqueue(struct sdr_flow *flow, struct sdr_rail *rl)
{
	spin_lock_bh(&rl->sdev->tx_lock);
	spin_lock(&flow->lock);
	if (rl->txq.queued) {
		list_del_init(&rl->txq.node);
		rl->txq.queued = false;
	}
	spin_unlock(&flow->lock);
	spin_unlock_bh(&rl->sdev->tx_lock);
}

/*
 * The rail of @flow on @sdev cannot send any more (its device goes away
 * or broke): off the send list, its paths down, the other rails kicked
 * to send what it had in flight again.
 */
void sdr_flow_rail_gone(struct sdr_flow *flow, struct sdr_dev *sdev)
{
	u64 now = ktime_get_ns();
	struct sdr_rail *rl;
	u32 i;

	spin_lock_bh(&flow->lock);
	rl = sdr_flow_rail_of(flow, sdev);
	if (!rl) {
		spin_unlock_bh(&flow->lock);
		return;
	}
	if (!rl->gone) {
		rl->gone = true;
		for (i = 0; i < rl->n; i++)
			sdr_path_set_down(flow->ps, rl->first + i, true, now);
	}
	spin_unlock_bh(&flow->lock);
	sdr_flow_rail_unqueue(flow, rl);
	pr_info_ratelimited("%s: flow %u: rail gone, %u of its paths down\n",
			    sdev->name, flow->id, rl->n);
	sdr_flow_queue_tx(flow);
}

/*
 * Let go of the device of rail @rl (may sleep): once the device holds
 * none of the rail's sends, destroy its address handle and leave the
 * device's flows.  The flow is dead or the rail gone, so nothing posts
 * on the rail meanwhile.  Whoever comes first of the flow's destruction
 * and the device's removal does it, under the rail's mutex; the removal
 * frees the device's PD only after that.
 */
static void sdr_rail_release(struct sdr_flow *flow, struct sdr_rail *rl)
{
	struct sdr_dev *sdev = rl->sdev;
	struct ib_ah *ah;

	mutex_lock(&rl->mutex);
	if (!rl->listed) {
		mutex_unlock(&rl->mutex);
		return;
	}
	ah = sdr_txq_take_ah(flow, sdev, &rl->txq, &rl->ah);
	if (ah)
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	rl->listed = false;
	if (xa_erase(&sdev->flows, rl->id))
		atomic_dec(&sdev->nr_flows);
	mutex_unlock(&rl->mutex);
}

/*
 * The flow is being destroyed (shut down: dead, off every send list):
 * let go of each rail's device, unless its removal did.
 */
void sdr_flow_rails_detach(struct sdr_flow *flow)
{
	u32 r;

	for (r = 1; r < flow->nrails; r++)
		sdr_rail_release(flow, flow->rails[r - 1]);
}

/*
 * Run @fn on each flow of another device with a rail on @sdev, holding a
 * reference (such a flow may be destroyed meanwhile: the removal of
 * @sdev does not keep its context's ioctls out).
 */
static void sdr_dev_rails_each(struct sdr_dev *sdev,
			       void (*fn)(struct sdr_flow *flow,
					  struct sdr_dev *sdev))
{
	struct sdr_flow *flow;
	unsigned long id;

	rcu_read_lock();
	xa_for_each_marked(&sdev->flows, id, flow, SDR_XA_RAIL) {
		if (!kref_get_unless_zero(&flow->ref))
			continue;	/* being freed: its rails let go */
		rcu_read_unlock();
		fn(flow, sdev);
		sdr_flow_put(flow);
		rcu_read_lock();
	}
	rcu_read_unlock();
}

/* @sdev goes away (users lock held for write): its rails go down. */
void sdr_dev_rails_gone(struct sdr_dev *sdev)
{
	sdr_dev_rails_each(sdev, sdr_flow_rail_gone);
}

static void sdr_flow_rail_release_on(struct sdr_flow *flow,
				     struct sdr_dev *sdev)
{
	struct sdr_rail *rl;

	spin_lock_bh(&flow->lock);
	rl = sdr_flow_rail_of(flow, sdev);
	spin_unlock_bh(&flow->lock);
	if (rl)
		sdr_rail_release(flow, rl);
}

/*
 * ... and, its transport stopped (no send of it left), lets go of every
 * rail on it before its PD goes.
 */
void sdr_dev_rails_release(struct sdr_dev *sdev)
{
	sdr_dev_rails_each(sdev, sdr_flow_rail_release_on);
}

/*
 * At the flow's connect to the peer endpoint @p: every rail connected,
 * each to the same peer (its endpoint the same flow's: token, policy
 * geometry).  0 or -EINVAL.
 */
int sdr_flow_rails_check(struct sdr_flow *flow, const struct sdr_endpoint *p)
{
	const struct sdr_endpoint *rp;
	u32 r;

	for (r = 1; r < flow->nrails; r++) {
		rp = &flow->rails[r - 1]->peer_ep;
		if (!flow->rails[r - 1]->connected) {
			pr_debug("%s: flow %u: rail %u not connected\n",
				 flow->sdev->name, flow->id, r);
			return -EINVAL;
		}
		if (rp->token_lo != p->token_lo ||
		    rp->token_hi != p->token_hi || rp->seq0 != p->seq0 ||
		    rp->none_window != p->none_window) {
			pr_debug("%s: flow %u: rail %u is another peer's\n",
				 flow->sdev->name, flow->id, r);
			return -EINVAL;
		}
	}
	return 0;
}

/* SDR_RAIL_ADD of SDR_IOC_FLOW_RAIL on @flow, not connected (ctx->lock held) */
int sdr_rail_add(struct sdr_flow *flow, struct sdr_flow_rail *arg)
{
	struct sdr_paths *ps, *old;
	struct sdr_rail *rl = NULL;
	struct sdr_dev *rs;
	union ib_gid gid;
	u32 id, r;
	int ret;

	if (flow->nrails == SDR_RAILS_MAX)
		return -ENOSPC;
	if (arg->rail ||
	    strnlen((const char *)arg->ibdev, SDR_DEVNAME_LEN) ==
	    SDR_DEVNAME_LEN)
		return -EINVAL;
	rs = sdr_dev_get_by_name((const char *)arg->ibdev);
	if (!rs)
		return -ENODEV;
	ret = -EINVAL;
	if (rs == flow->sdev || sdr_flow_rail_of(flow, rs))
		goto err_put;
	if (!arg->paths)
		arg->paths = 1;
	/*
	 * Never wait for another device's users lock while holding this
	 * flow's device's: it fails only while the device's removal holds
	 * or waits for it.
	 */
	ret = -ENODEV;
	if (!down_read_trylock(&rs->rwsem))
		goto err_put;
	if (rs->dying || READ_ONCE(rs->broken))
		goto err_unlock;
	ret = -EINVAL;
	if (arg->paths > rs->nr_paths ||
	    flow->paths + arg->paths > SDR_PATHS_MAX || rs->mtu < flow->mtu)
		goto err_unlock;
	ret = sdr_dev_query_gid(rs, &gid, NULL);
	if (ret)
		goto err_unlock;
	/* an AEAD flow's packets are encrypted on whichever device sends */
	if (flow->auth.alg == SDR_AUTH_AEAD) {
		ret = rs->xmit->crypt_enable(rs);
		if (ret)
			goto err_unlock;
	}
	ret = -ENOMEM;
	rl = kzalloc(sizeof(*rl), GFP_KERNEL_ACCOUNT);
	ps = kzalloc(sizeof(*ps), GFP_KERNEL_ACCOUNT);
	if (!rl || !ps)
		goto err_free;
	/* the flow's till it leaves its context (a few rails at most) */
	ret = sdr_flow_charge(flow, sizeof(*rl) + sizeof(*ps));
	if (ret)
		goto err_free;
	/* fresh: nothing was sent yet */
	ret = sdr_flow_paths_init(flow, ps, flow->paths + arg->paths);
	if (ret)
		goto err_free;
	ret = sdr_flow_alloc_id(rs, &id);
	if (ret)
		goto err_free;

	rl->sdev = rs;		/* the reference sdr_dev_get_by_name() took */
	rl->id = id;
	mutex_init(&rl->mutex);
	rl->first = flow->paths;
	rl->n = arg->paths;
	INIT_LIST_HEAD(&rl->txq.node);
	rl->txq.flow = flow;
	rl->txq.rail = flow->nrails;
	sdr_flow_fill_ep(flow, rs, &gid, id, &arg->ep);

	spin_lock_bh(&flow->lock);
	sdr_flow_fill_paths(flow, rs, rl->first, rl->n, &arg->ep_paths);
	old = flow->ps;
	flow->ps = ps;
	sdr_sr_flow_set_paths(&flow->sr, ps);
	if (flow->ad)
		sdr_sr_flow_set_paths(flow->ad, ps);
	r = flow->nrails;
	flow->rails[r - 1] = rl;
	flow->nrails++;
	flow->paths += rl->n;
	spin_unlock_bh(&flow->lock);
	kfree(old);

	rl->listed = true;
	atomic_inc(&rs->nr_flows);
	rs->xmit->rx_fit(rs);
	/* the receive path finds it complete, and finds it not connected */
	xa_store(&rs->flows, id, flow, GFP_KERNEL);
	xa_set_mark(&rs->flows, id, SDR_XA_RAIL);
	up_read(&rs->rwsem);
	arg->rail = r;
	return 0;

err_free:
	kfree(ps);
	kfree(rl);
err_unlock:
	up_read(&rs->rwsem);
err_put:
	sdr_dev_put(rs);
	return ret;
}

/* SDR_RAIL_CONNECT of SDR_IOC_FLOW_RAIL on @flow, not connected (ctx->lock held) */
int sdr_rail_connect(struct sdr_flow *flow, struct sdr_flow_rail *arg)
{
	const struct sdr_endpoint *p = &arg->ep;
	struct sdr_ep_paths pp;
	struct sdr_rail *rl;
	struct ib_ah *ah;
	int ret;

	if (!arg->rail || arg->rail >= flow->nrails || arg->paths ||
	    arg->ibdev[0])
		return -EINVAL;
	rl = flow->rails[arg->rail - 1];
	if (rl->connected)
		return -EISCONN;
	ret = sdr_flow_check_peer(flow, p);
	if (ret)
		return ret;
	ret = sdr_flow_peer_paths(p, &arg->ep_paths, &pp);
	if (ret)
		return ret;
	/* as in sdr_rail_add(): fails while the device is being removed */
	if (!down_read_trylock(&rl->sdev->rwsem))
		return -ENODEV;
	if (rl->sdev->dying || rl->gone) {
		up_read(&rl->sdev->rwsem);
		return -ENODEV;
	}
	ah = sdr_dev_ah(rl->sdev, flow, p->gid);
	if (IS_ERR(ah)) {
		up_read(&rl->sdev->rwsem);
		return PTR_ERR(ah);
	}
	spin_lock_bh(&flow->lock);
	rl->ah = ah;
	rl->peer_qpn = sdr_ep_get(p->qpn);
	rl->peer_qkey = sdr_ep_get(p->qkey);
	rl->peer_flow = sdr_ep_get(p->flow_id);
	rl->peer_npaths = pp.n;
	memcpy(rl->peer_path_qpn, pp.qpn, sizeof(rl->peer_path_qpn));
	memcpy(rl->peer_gid.raw, p->gid, sizeof(rl->peer_gid.raw));
	rl->peer_ep = *p;
	rl->connected = true;
	spin_unlock_bh(&flow->lock);
	up_read(&rl->sdev->rwsem);
	return 0;
}
