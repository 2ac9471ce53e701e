// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: the device's UD transport - one UD QP per bound device, its CQs,
 * always-posted receive buffers and a pool of send contexts.
 *
 * Receive: each buffer is a 40-byte GRH slot plus one page, so any packet
 * up to the 4096-byte IB MTU fits; a spill area shared by every buffer
 * follows, so that a longer message (rxe takes what its netdev's MTU
 * does) completes and is dropped instead of failing the receive.  The
 * packet is validated, handed to its flow (which copies the payload into
 * the receive region), and the buffer is posted again; so is a buffer
 * that came back in error, since no input may shrink the ring
 * (sdr_rx_error()).
 *
 * Send: a send context owns a header buffer; a DATA packet's payload is
 * gathered straight from the flow's send region (or staging copy), at most
 * two page fragments, so no copy is made on the send side.  Every posted
 * send holds a reference on its flow: the flow (and its address handle,
 * which rxe looks up at transmit time) outlives its last packet.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_cache.h>

#include "sdr.h"

#define SDR_GRH_LEN	40
#define SDR_TX_BUF_LEN	256	/* header + the largest control body */
/*
 * The spill area: with the GRH slot and the page, room for the largest
 * UD payload an IP packet carries (65535 bytes less UDP, BTH, DETH and
 * ICRC).  rxe of 6.1 fails a receive its message does not fit with
 * IB_WC_LOC_QP_OP_ERR and puts the QP in ERR (copy_data() returns
 * -EINVAL, RESPST_ERR_MALFORMED_WQE), which anyone knowing the QPN and
 * the Q_Key could do at will, and which, under sends, makes 6.1's rxe
 * complete a send twice.
 */
#define SDR_RX_SPILL_LEN	(SZ_64K - PAGE_SIZE)
/* how long a device in ERR may take to hand back its posted work */
#define SDR_DRAIN_TIMEOUT	(30 * HZ)

struct sdr_rx {
	struct ib_cqe		cqe;
	struct sdr_dev		*sdev;
	struct page		*page;
	u64			dma;
	void			*grh;		/* its GRH slot ... */
	u64			grh_dma;	/* ... and the slot's address */
};

/* sdr_dev.rx_flags */
#define SDR_RX_GROWING	0	/* rx_grow_work is queued or running */
#define SDR_RX_LOST	1	/* a buffer could not be posted: reset the QP */

struct sdr_tx {
	struct ib_cqe		cqe;
	struct list_head	node;		/* sdev->tx_free while free */
	struct sdr_dev		*sdev;
	struct sdr_flow		*flow;		/* referenced while posted */
	struct sdr_txq		*txq;		/* its rail's, counts it posted */
	struct sdr_txmsg	*msg;		/* DATA; NULL for control */
	void			*buf;
	u64			buf_dma;
	void			*crypt;		/* a page: AEAD ciphertext */
	struct ib_sge		sge[SDR_TX_SGE];
	u64			frag_dma[SDR_TX_SGE - 1];
	u32			frag_len[SDR_TX_SGE - 1];
	unsigned int		nfrags;
	u32			bytes;
};

static_assert(SDR_WIRE_HDR_LEN + SDR_ACK_MAX_LEN <= SDR_TX_BUF_LEN);

static u64 sdr_rx_grh_dma(const struct sdr_rx *rx)
{
	return rx->grh_dma;
}

static int sdr_rx_post(struct sdr_rx *rx)
{
	struct sdr_dev *sdev = rx->sdev;
	struct ib_sge sge[3] = {
		{
			.addr	= sdr_rx_grh_dma(rx),
			.length	= SDR_GRH_LEN,
			.lkey	= sdev->pd->local_dma_lkey,
		}, {
			.addr	= rx->dma,
			.length	= PAGE_SIZE,
			.lkey	= sdev->pd->local_dma_lkey,
		}, {
			.addr	= sdev->rx_spill_dma,
			.length	= SDR_RX_SPILL_LEN,
			.lkey	= sdev->pd->local_dma_lkey,
		},
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &rx->cqe,
		.sg_list	= sge,
		.num_sge	= sdev->rx_spill ? 3 : 2,
	};

	int ret;

	/* counted first: its completion may come before the call returns */
	atomic_inc(&sdev->rx_posted);
	ret = ib_post_recv(sdev->qp, &wr, NULL);
	if (ret)
		atomic_dec(&sdev->rx_posted);
	return ret;
}

/* One receive came back (its buffer is reposted when it was handled). */
static void sdr_rx_taken(struct sdr_dev *sdev)
{
	atomic_dec(&sdev->rx_posted);
}

/*
 * The buffers the ring should have: flow_rx_window for each flow on the
 * device (its own and other devices' flows with a rail here), at least
 * recv_depth, at most rx_cap.
 */
static unsigned int sdr_rx_target(struct sdr_dev *sdev)
{
	u64 want = (u64)max(atomic_read(&sdev->nr_flows), 0) *
		   READ_ONCE(sdr_flow_rx_window);

	return clamp_t(u64, want, READ_ONCE(sdr_recv_depth), sdev->rx_cap);
}

/*
 * A flow came to the device: grow the ring to what its flows need
 * (rx_grow_work, in process context), unless it has that already.
 */
static void sdr_net_rx_fit(struct sdr_dev *sdev)
{
	if (READ_ONCE(sdev->nr_rx) < sdr_rx_target(sdev) &&
	    !READ_ONCE(sdev->rx_stopped) &&
	    !test_and_set_bit(SDR_RX_GROWING, &sdev->rx_flags))
		queue_work(sdr_wq, &sdev->rx_grow_work);
}

/*
 * The window a receiver states in its ACKs and NACKs (wire msg_len): its
 * flows' share of seven eighths of the ring (the rest is for the answers
 * to what the device sends), at least SDR_SR_WIN_MIN.  A sender keeps at
 * most that many packets in flight, and a packet in flight holds at most
 * one buffer, so the flows together never find the ring empty.
 */
static u32 sdr_net_rwnd(struct sdr_dev *sdev)
{
	u32 flows = max(atomic_read(&sdev->nr_flows), 1);

	return max_t(u32, READ_ONCE(sdev->nr_rx) / 8 * 7 / flows,
		     SDR_SR_WIN_MIN);
}

/* The source GID of a received packet, from the GRH slot. */
static int sdr_rx_sgid(struct sdr_dev *sdev, struct sdr_rx *rx,
		       const struct ib_wc *wc, union ib_gid *sgid)
{
	const union rdma_network_hdr *hdr = rx->grh;
	enum rdma_network_type type;
	union ib_gid dgid;
	int ver;

	if (!(wc->wc_flags & IB_WC_GRH))
		return -EINVAL;
	if (wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE) {
		type = wc->network_hdr_type;
	} else {
		ver = ib_get_rdma_header_version(hdr);
		type = ver == 4 ? RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
	}
	return ib_get_gids_from_rdma_hdr(hdr, type, sgid, &dgid);
}

/*
 * Have resume_work recover the QP (sdr_net_recover()): the device put it
 * in ERR, or, @lost, a receive buffer could not be posted and only a
 * reset, which posts every buffer anew, gives it back to the ring.
 */
static void sdr_net_rx_recover(struct sdr_dev *sdev, bool lost)
{
	if (lost)
		set_bit(SDR_RX_LOST, &sdev->rx_flags);
	/* sdr_net_stop() cancels the work after a grace period */
	if (!READ_ONCE(sdev->stopping))
		queue_work(sdr_wq, &sdev->resume_work);
}

/*
 * A receive came back in error: count it by reason.  Return: true when
 * its buffer goes back to the ring.
 *
 * Anyone who knows the QPN and the Q_Key can send what makes a receive
 * fail (a UD message longer than the buffer: IB_WC_LOC_LEN_ERR on most
 * devices; rxe of 6.1 completes it with IB_WC_LOC_QP_OP_ERR and puts the
 * QP in ERR), so the buffer is always posted again: a buffer kept back
 * per error would let a stranger empty the ring and stall every flow on
 * the device.  If the QP went to ERR, the repost and the buffers still
 * posted flush, and the flushes have the QP recovered.
 */
static bool sdr_rx_error(struct sdr_dev *sdev, const struct ib_wc *wc)
{
	int reason;

	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		/*
		 * The QP is in ERR.  Either sdr put it there (rx_stopped:
		 * the device stops, or a recovery drains the ring and then
		 * posts every buffer again) or the device did, on an error
		 * of its own: recover it.  A flushed buffer is not posted
		 * to the QP in ERR, which would only flush it again.
		 */
		if (!READ_ONCE(sdev->rx_stopped))
			sdr_net_rx_recover(sdev, false);
		return false;
	}

	switch (wc->status) {
	case IB_WC_LOC_LEN_ERR:
		reason = SDR_DEV_RX_ERR_LENGTH;
		break;
	case IB_WC_LOC_QP_OP_ERR:
	case IB_WC_LOC_EEC_OP_ERR:
	case IB_WC_LOC_PROT_ERR:
	case IB_WC_LOC_ACCESS_ERR:
	case IB_WC_LOC_RDD_VIOL_ERR:
		reason = SDR_DEV_RX_ERR_LOCAL;
		break;
	default:
		reason = SDR_DEV_RX_ERR_OTHER;
		break;
	}
	sdr_dev_count(sdev, SDR_DEV_RX_ERRORS, 1);
	sdr_dev_count(sdev, reason, 1);
	pr_info_ratelimited("%s: receive completion error %s (vendor 0x%x), buffer reposted\n",
			    sdev->name, ib_wc_status_msg(wc->status),
			    wc->vendor_err);
	return true;
}

static void sdr_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdr_rx *rx = container_of(wc->wr_cqe, struct sdr_rx, cqe);
	struct sdr_dev *sdev = rx->sdev;
	struct sdr_flow *flow;
	union ib_gid sgid;
	struct sdr_pkt pkt;
	u8 *buf;
	u32 len;
	int ret;

	sdr_rx_taken(sdev);
	if (wc->status != IB_WC_SUCCESS) {
		if (sdr_rx_error(sdev, wc))
			goto repost;
		return;
	}

	/* longer than a buffer: it ran into the spill area */
	if (wc->byte_len > SDR_GRH_LEN + PAGE_SIZE) {
		sdr_dev_count(sdev, SDR_DEV_RX_ERRORS, 1);
		sdr_dev_count(sdev, SDR_DEV_RX_ERR_LENGTH, 1);
		pr_info_ratelimited("%s: dropped a %u-byte message, longer than a receive buffer\n",
				    sdev->name, wc->byte_len - SDR_GRH_LEN);
		goto repost;
	}

	/* both buffers the device wrote: the GRH slot and the page */
	ib_dma_sync_single_for_cpu(sdev->ibdev, sdr_rx_grh_dma(rx), SDR_GRH_LEN,
				   DMA_FROM_DEVICE);
	ib_dma_sync_single_for_cpu(sdev->ibdev, rx->dma, PAGE_SIZE,
				   DMA_FROM_DEVICE);
	buf = page_address(rx->page);
	len = wc->byte_len > SDR_GRH_LEN ? wc->byte_len - SDR_GRH_LEN : 0;
	sdr_dev_count(sdev, SDR_DEV_RX_PACKETS, 1);
	sdr_dev_count(sdev, SDR_DEV_RX_BYTES, len);

	ret = sdr_wire_decode(buf, min_t(u32, len, PAGE_SIZE), &pkt);
	if (ret < 0) {
		sdr_dev_drop(sdev, -ret);
		goto repost;
	}
	if (sdr_rx_sgid(sdev, rx, wc, &sgid)) {
		sdr_dev_drop(sdev, SDR_DROP_PEER);
		goto repost;
	}

	rcu_read_lock();
	flow = sdr_flow_lookup_rcu(&sdev->flows, pkt.dst_flow);
	rcu_read_unlock();
	if (!flow) {
		sdr_dev_drop(sdev, SDR_DROP_NO_FLOW);
		goto repost;
	}
	sdr_flow_rx(sdev, flow, &pkt, buf, wc->src_qp,
		    &sgid);
	sdr_flow_put(flow);

repost:
	/* sdr_net_stop() waits (synchronize_rcu) for us to see rx_stopped. */
	if (READ_ONCE(sdev->rx_stopped))
		return;
	ib_dma_sync_single_for_device(sdev->ibdev, sdr_rx_grh_dma(rx),
				      SDR_GRH_LEN, DMA_FROM_DEVICE);
	ib_dma_sync_single_for_device(sdev->ibdev, rx->dma, PAGE_SIZE,
				      DMA_FROM_DEVICE);
	ret = sdr_rx_post(rx);
	if (ret) {
		pr_err_ratelimited("%s: cannot repost a receive: %d; resetting the QP\n",
				   sdev->name, ret);
		sdr_net_rx_recover(sdev, true);
	}
}

static void sdr_tx_unmap(struct sdr_tx *tx)
{
	unsigned int i;

	for (i = 0; i < tx->nfrags; i++)
		ib_dma_unmap_page(tx->sdev->ibdev, tx->frag_dma[i],
				  tx->frag_len[i], DMA_TO_DEVICE);
	tx->nfrags = 0;
}

static void sdr_net_tx_kick(struct sdr_dev *sdev);

/* Give a send context back; drops its flow reference. */
static void sdr_tx_release(struct sdr_tx *tx)
{
	struct sdr_dev *sdev = tx->sdev;
	struct sdr_flow *flow = tx->flow;
	struct sdr_txq *txq = tx->txq;
	bool flow_idle;

	tx->flow = NULL;
	tx->txq = NULL;
	tx->msg = NULL;
	spin_lock_bh(&sdev->tx_lock);
	list_add(&tx->node, &sdev->tx_free);
	spin_unlock_bh(&sdev->tx_lock);
	/* either reaching 0 may be what teardown waits for */
	flow_idle = atomic_dec_and_test(&txq->posted);
	if (atomic_dec_and_test(&sdev->tx_inflight) || flow_idle)
		wake_up(&sdev->tx_wait);
	sdr_flow_put(flow);
}

static void sdr_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdr_tx *tx = container_of(wc->wr_cqe, struct sdr_tx, cqe);
	struct sdr_dev *sdev = tx->sdev;
	bool ok = wc->status == IB_WC_SUCCESS;

	/*
	 * A context already given back: a second completion of one send,
	 * which rxe of 6.1 makes when the QP goes to ERR on its own while
	 * sends are posted (two of its completer runs drain the send queue
	 * at once).  Releasing it twice would corrupt tx_free.
	 */
	if (unlikely(!tx->flow)) {
		pr_warn_ratelimited("%s: a send completed twice (%s), ignored\n",
				    sdev->name, ib_wc_status_msg(wc->status));
		return;
	}
	sdr_tx_unmap(tx);
	if (ok) {
		sdr_dev_count(sdev, SDR_DEV_TX_PACKETS, 1);
		sdr_dev_count(sdev, SDR_DEV_TX_BYTES, tx->bytes);
	} else if (wc->status != IB_WC_WR_FLUSH_ERR) {
		sdr_dev_count(sdev, SDR_DEV_TX_ERRORS, 1);
		pr_info_ratelimited("%s: send completion error %s, resuming the send queue\n",
				    sdev->name, ib_wc_status_msg(wc->status));
		/* A UD send error stops the send queue (SQE): resume it. */
		if (!READ_ONCE(sdev->stopping))
			queue_work(sdr_wq, &sdev->resume_work);
	}
	if (tx->msg)
		sdr_flow_tx_done(tx->flow, tx->msg, ok);
	sdr_tx_release(tx);
	sdr_net_tx_kick(sdev);
}

/* Map @len bytes at @data (vmalloc or linear memory) as page fragments. */
static int sdr_tx_map(struct sdr_tx *tx, const u8 *data, u32 len)
{
	struct ib_device *ibdev = tx->sdev->ibdev;
	struct page *page;
	u32 off, n;

	while (len) {
		if (tx->nfrags == SDR_TX_SGE - 1)
			return -EINVAL;
		off = offset_in_page(data);
		n = min_t(u32, len, PAGE_SIZE - off);
		page = is_vmalloc_addr(data) ? vmalloc_to_page(data) :
					       virt_to_page(data);
		tx->frag_dma[tx->nfrags] = ib_dma_map_page(ibdev, page, off, n,
							   DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ibdev, tx->frag_dma[tx->nfrags]))
			return -ENOMEM;
		tx->frag_len[tx->nfrags] = n;
		tx->sge[1 + tx->nfrags] = (struct ib_sge) {
			.addr	= tx->frag_dma[tx->nfrags],
			.length	= n,
			.lkey	= tx->sdev->pd->local_dma_lkey,
		};
		tx->nfrags++;
		data += n;
		len -= n;
	}
	return 0;
}

/* The QP of path @path (below sdev->nr_paths): 0 is the main one. */
static struct ib_qp *sdr_net_qp(struct sdr_dev *sdev, u32 path)
{
	return path ? sdev->xqp[path - 1] : sdev->qp;
}

/*
 * Post one packet from @tx (its buffer holds the encoded header and any
 * control body, @buf_len bytes) plus @len payload bytes at @data, on the
 * QP of @path.  Called with tx_lock held; the caller took a flow
 * reference for the context.
 */
static int sdr_tx_post(struct sdr_tx *tx, struct sdr_flow *flow, u32 path,
		       struct ib_ah *ah, u32 qpn, u32 qkey, u32 buf_len,
		       const u8 *data, u32 len)
{
	struct sdr_dev *sdev = tx->sdev;
	struct ib_ud_wr wr = {
		.wr = {
			.wr_cqe		= &tx->cqe,
			.sg_list	= tx->sge,
			.opcode		= IB_WR_SEND,
			.send_flags	= IB_SEND_SIGNALED,
		},
		.ah		= ah,
		.remote_qpn	= qpn,
		.remote_qkey	= qkey,
	};
	int ret;

	lockdep_assert_held(&tx->sdev->tx_lock);
	/* rxe silently drops a UD send above the MTU: refuse it here. */
	if (buf_len + len > sdev->mtu) {
		pr_err_ratelimited("%s: flow %u: %u byte packet above the MTU %u\n",
				   sdev->name, flow->id, buf_len + len,
				   sdev->mtu);
		return -EMSGSIZE;
	}
	tx->sge[0] = (struct ib_sge) {
		.addr	= tx->buf_dma,
		.length	= buf_len,
		.lkey	= sdev->pd->local_dma_lkey,
	};
	tx->nfrags = 0;
	ret = sdr_tx_map(tx, data, len);
	if (ret) {
		sdr_tx_unmap(tx);
		return ret;
	}
	wr.wr.num_sge = 1 + tx->nfrags;
	tx->bytes = buf_len + len;
	ib_dma_sync_single_for_device(sdev->ibdev, tx->buf_dma, buf_len,
				      DMA_TO_DEVICE);
	ret = ib_post_send(sdr_net_qp(sdev, path), &wr.wr, NULL);
	if (ret)
		sdr_tx_unmap(tx);
	return ret;
}

/* A send context can be posted now (tx_lock held). */
static bool sdr_tx_can_post(struct sdr_dev *sdev)
{
	lockdep_assert_held(&sdev->tx_lock);

	return sdev->qp && !sdev->dying && !sdev->tx_paused &&
	       !list_empty(&sdev->tx_free);
}

/*
 * Take a free send context for a packet of @flow on this device, its
 * rail whose queue is @txq (@msg for DATA, NULL for control): it holds a
 * flow reference until sdr_tx_release().  tx_lock held, sdr_tx_can_post()
 * true.
 */
static struct sdr_tx *sdr_tx_claim(struct sdr_dev *sdev, struct sdr_flow *flow,
				   struct sdr_txq *txq, struct sdr_txmsg *msg)
{
	struct sdr_tx *tx = list_first_entry(&sdev->tx_free, struct sdr_tx,
					     node);

	lockdep_assert_held(&sdev->tx_lock);
	list_del(&tx->node);
	sdr_flow_get(flow);
	tx->flow = flow;
	tx->txq = txq;
	tx->msg = msg;
	atomic_inc(&txq->posted);
	atomic_inc(&sdev->tx_inflight);
	return tx;
}

/*
 * Number and tag the DATA packet encoded in @tx's buffer, its @len
 * payload bytes at *@data: an AEAD flow's are encrypted into the
 * context's page, which is then what is sent (*@data).
 */
static int sdr_tx_seal(struct sdr_tx *tx, struct sdr_flow *flow,
		       const u8 **data, u32 len)
{
	struct sdr_dev *sdev = tx->sdev;
	int ret;

	if (flow->auth.alg != SDR_AUTH_AEAD)
		return sdr_auth_sign(&flow->auth, tx->buf, *data, len, NULL);
	/* pairs with the release in sdr_net_crypt_enable() */
	if (!smp_load_acquire(&sdev->crypt_ready))
		return -ENOMEM;
	ret = sdr_auth_sign(&flow->auth, tx->buf, *data, len, tx->crypt);
	*data = tx->crypt;
	return ret;
}

/*
 * An AEAD flow sends ciphertext, not the bytes of its send region: each
 * send context of the device gets a page to encrypt into, made when the
 * device's first AEAD flow is created (process context) and kept until
 * the device goes.  crypt_ready is set once every context has its page.
 */
static int sdr_net_crypt_enable(struct sdr_dev *sdev)
{
	unsigned int i;
	int ret = 0;

	/* pairs with the release below: every page is there */
	if (smp_load_acquire(&sdev->crypt_ready))
		return 0;
	mutex_lock(&sdev->crypt_mutex);
	for (i = 0; i < sdev->nr_tx && !sdev->crypt_ready; i++) {
		if (sdev->tx[i].crypt)
			continue;
		sdev->tx[i].crypt = (void *)__get_free_page(GFP_KERNEL);
		if (!sdev->tx[i].crypt) {
			ret = -ENOMEM;
			break;
		}
	}
	if (!ret) {
		/* the pages before the flag: sdr_tx_seal() reads it first */
		smp_store_release(&sdev->crypt_ready, true);
	}
	mutex_unlock(&sdev->crypt_mutex);
	return ret;
}

/*
 * Send what the queued flows have to send while send contexts last.
 * Flows take turns one packet at a time, so one flow's large message does
 * not starve the others.
 */
static void sdr_net_tx_kick(struct sdr_dev *sdev)
{
	struct sdr_tx_dest dest;
	struct sdr_txmsg *msg;
	struct sdr_flow *flow;
	struct sdr_txq *txq;
	struct sdr_pkt pkt;
	struct sdr_tx *tx;
	const u8 *data;
	int ret;

	spin_lock_bh(&sdev->tx_lock);
	while (sdr_tx_can_post(sdev) && !list_empty(&sdev->tx_flows)) {
		txq = list_first_entry(&sdev->tx_flows, struct sdr_txq, node);
		flow = txq->flow;

		spin_lock(&flow->lock);
		if (!sdr_flow_tx_next(flow, txq->rail, &pkt, &data, &msg,
				      &dest)) {
			list_del_init(&txq->node);
			txq->queued = false;
			spin_unlock(&flow->lock);
			continue;
		}
		spin_unlock(&flow->lock);
		/* the oldest group's repairs go first: the flow stays ahead */
		if (!dest.urgent)
			list_move_tail(&txq->node, &sdev->tx_flows);

		tx = sdr_tx_claim(sdev, flow, txq, msg);
		sdr_wire_encode(&pkt, tx->buf);
		ret = sdr_tx_seal(tx, flow, &data, pkt.payload_len);
		/* a rail's paths are at most its device's: checked at create */
		if (!ret)
			ret = sdr_tx_post(tx, flow, dest.qp, dest.ah, dest.qpn,
					  dest.qkey, SDR_WIRE_HDR_LEN, data,
					  pkt.payload_len);
		if (ret) {
			pr_err_ratelimited("%s: flow %u: post send failed: %d\n",
					   sdev->name, flow->id, ret);
			spin_unlock_bh(&sdev->tx_lock);
			sdr_flow_tx_done(flow, msg, false);
			sdr_tx_release(tx);
			spin_lock_bh(&sdev->tx_lock);
		}
	}
	spin_unlock_bh(&sdev->tx_lock);
}

/*
 * Send a control packet (@pkt header plus @len bytes of @body) to @flow's
 * peer.  Best effort: -EAGAIN when no send context is free.
 */
static int sdr_net_send_ctrl(struct sdr_dev *sdev, struct sdr_flow *flow,
			     const struct sdr_pkt *pkt, const void *body, u32 len)
{
	struct sdr_pkt hdr;
	struct sdr_tx *tx;
	struct ib_ah *ah;
	u32 qpn, qkey;
	int ret;

	if (WARN_ON_ONCE(len > SDR_TX_BUF_LEN - SDR_WIRE_HDR_LEN))
		return -EINVAL;
	spin_lock_bh(&sdev->tx_lock);
	if (!sdr_tx_can_post(sdev)) {
		spin_unlock_bh(&sdev->tx_lock);
		return -EAGAIN;
	}
	spin_lock(&flow->lock);
	ah = flow->ah;
	qpn = flow->peer_qpn;
	qkey = flow->peer_qkey;
	spin_unlock(&flow->lock);
	if (!ah) {
		spin_unlock_bh(&sdev->tx_lock);
		return -ENOTCONN;
	}
	tx = sdr_tx_claim(sdev, flow, &flow->txq, NULL);
	hdr = *pkt;
	/* ACK and NACK say how much more the receive ring takes */
	if (hdr.type == SDR_PKT_ACK || hdr.type == SDR_PKT_NACK)
		hdr.msg_len = sdr_net_rwnd(sdev);
	sdr_wire_encode(&hdr, tx->buf);
	memcpy(tx->buf + SDR_WIRE_HDR_LEN, body, len);
	ret = sdr_auth_sign(&flow->auth, tx->buf, tx->buf + SDR_WIRE_HDR_LEN,
			    len, tx->buf + SDR_WIRE_HDR_LEN);
	if (!ret)
		ret = sdr_tx_post(tx, flow, 0, ah, qpn, qkey,
				  SDR_WIRE_HDR_LEN + len, NULL, 0);
	spin_unlock_bh(&sdev->tx_lock);
	if (ret)
		sdr_tx_release(tx);
	return ret;
}

static int sdr_qp_ready(struct sdr_dev *sdev, struct ib_qp *qp);

/* The marker receive of sdr_net_drain() came back. */
static void sdr_net_drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdr_dev *sdev = container_of(wc->wr_cqe, struct sdr_dev,
					    drain_cqe);

	complete(&sdev->drained);
}

/*
 * With the QP in ERR, wait until the device has handed back every posted
 * receive buffer and send context.  A marker receive posted behind the
 * buffers completes after all of them (a queue's work completes in order
 * and the CQ's poller runs its handlers in that order), so once it is
 * back no handler of an earlier buffer is still due; send contexts count
 * themselves back in tx_inflight.  -ETIMEDOUT when the device did not
 * flush in SDR_DRAIN_TIMEOUT.
 */
static int sdr_net_drain(struct sdr_dev *sdev)
{
	struct ib_recv_wr wr = { .wr_cqe = &sdev->drain_cqe };
	unsigned long deadline = jiffies + SDR_DRAIN_TIMEOUT;
	int ret;

	reinit_completion(&sdev->drained);
	ret = ib_post_recv(sdev->qp, &wr, NULL);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&sdev->drained, SDR_DRAIN_TIMEOUT))
		return -ETIMEDOUT;
	if (!wait_event_timeout(sdev->tx_wait,
				!atomic_read(&sdev->tx_inflight),
				max_t(long, deadline - jiffies, 1)))
		return -ETIMEDOUT;
	return 0;
}

/*
 * The end of a recovery of the main QP (@paths 0) or of the paths' QPs
 * in @paths (bit i: path i) that ended in @ret: sends resume, or the
 * device is broken.
 */
static void sdr_net_recover_end(struct sdr_dev *sdev, int ret,
				unsigned long paths)
{
	/* fault injection for the tests: a recovery that fails */
	if (!ret && READ_ONCE(sdr_fail_qp_recovery))
		ret = -EIO;
	if (ret) {
		/*
		 * The device can no longer move packets: every flow fails
		 * now, pollers see EPOLLERR, new work gets EIO.  It stays so
		 * until the device is removed.
		 */
		pr_err("%s: cannot recover %s QP: %d; failing its flows\n",
		       sdev->name, paths ? "a path's" : "the", ret);
		WRITE_ONCE(sdev->broken, true);
		sdr_dev_fail_flows(sdev);
		return;
	}
	spin_lock_bh(&sdev->tx_lock);
	sdev->tx_paused = false;
	spin_unlock_bh(&sdev->tx_lock);
	sdr_dev_count(sdev, SDR_DEV_QP_RECOVERIES, 1);
	if (paths)
		pr_info_ratelimited("%s: QPs of paths %*pbl recovered\n",
				    sdev->name, SDR_PATHS_MAX, &paths);
	else
		pr_info_ratelimited("%s: QP %u recovered\n", sdev->name,
				    sdev->qp->qp_num);
}

/*
 * Bring the QP back to RTS from SQE or ERR, keeping its number (peers
 * know it), or reset it from RTS when a receive buffer could not be
 * posted (SDR_RX_LOST).  Sends are paused and the receive handlers stop
 * reposting;
 * once the device handed back all posted work (sdr_net_drain()), RESET
 * empties the queues, the QP is readied again and every receive buffer
 * is posted anew.  Packets lost meanwhile are the reliability policy's
 * business, as on the wire.  A device that does not give its work back
 * or cannot be readied is broken: its flows fail.
 */
static void sdr_net_recover(struct sdr_dev *sdev)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTS };
	struct ib_qp_init_attr init;
	unsigned int i;
	bool lost;
	int ret;

	lockdep_assert_held(&sdev->qp_mutex);
	if (READ_ONCE(sdev->broken))
		return;
	/* a buffer that is not posted comes back only with the reset */
	lost = test_and_clear_bit(SDR_RX_LOST, &sdev->rx_flags);
	if (!lost && !ib_query_qp(sdev->qp, &attr, IB_QP_STATE, &init)) {
		if (attr.qp_state == IB_QPS_RTS)
			return;
		/* SQE -> RTS is the cheap way back, where the device has it. */
		if (attr.qp_state == IB_QPS_SQE) {
			attr.qp_state = IB_QPS_RTS;
			if (!ib_modify_qp(sdev->qp, &attr, IB_QP_STATE))
				return;
		}
	}

	spin_lock_bh(&sdev->tx_lock);
	sdev->tx_paused = true;
	spin_unlock_bh(&sdev->tx_lock);
	WRITE_ONCE(sdev->rx_stopped, true);
	synchronize_rcu();
	attr.qp_state = IB_QPS_ERR;
	ret = ib_modify_qp(sdev->qp, &attr, IB_QP_STATE);
	if (!ret)
		ret = sdr_net_drain(sdev);
	if (!ret) {
		attr.qp_state = IB_QPS_RESET;
		ret = ib_modify_qp(sdev->qp, &attr, IB_QP_STATE);
	}
	if (!ret)
		ret = sdr_qp_ready(sdev, sdev->qp);
	if (!ret) {
		/* drained: every buffer came back */
		atomic_set(&sdev->rx_posted, 0);
		WRITE_ONCE(sdev->rx_stopped, false);
		for (i = 0; i < sdev->nr_rx && !ret; i++)
			ret = sdr_rx_post(&sdev->rx[i]);
	}
	sdr_net_recover_end(sdev, ret, 0);
}

/*
 * Bring the send-only QPs of the other paths back to RTS, as the main
 * one: SQE -> RTS where the device has it, else, with sends paused,
 * ERR, until the device handed back every send context (the flushed
 * ones of the QP included), then RESET and ready again.  They hold no
 * receives and keep their numbers (peers know them).
 */
static void sdr_net_recover_paths(struct sdr_dev *sdev)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_qp_init_attr init;
	unsigned long bad = 0;
	struct ib_qp *qp;
	u32 i;
	int ret = 0;

	lockdep_assert_held(&sdev->qp_mutex);
	if (READ_ONCE(sdev->broken))
		return;
	for (i = 1; i < sdev->nr_paths; i++) {
		qp = sdr_net_qp(sdev, i);
		if (ib_query_qp(qp, &attr, IB_QP_STATE, &init)) {
			__set_bit(i, &bad);
			continue;
		}
		if (attr.qp_state == IB_QPS_RTS)
			continue;
		if (attr.qp_state == IB_QPS_SQE) {
			attr.qp_state = IB_QPS_RTS;
			if (!ib_modify_qp(qp, &attr, IB_QP_STATE))
				continue;
		}
		__set_bit(i, &bad);
	}
	if (!bad)
		return;

	spin_lock_bh(&sdev->tx_lock);
	sdev->tx_paused = true;
	spin_unlock_bh(&sdev->tx_lock);
	for_each_set_bit(i, &bad, sdev->nr_paths) {
		attr.qp_state = IB_QPS_ERR;
		ret = ib_modify_qp(sdr_net_qp(sdev, i), &attr, IB_QP_STATE);
		if (ret)
			break;
	}
	if (!ret && !wait_event_timeout(sdev->tx_wait,
					!atomic_read(&sdev->tx_inflight),
					SDR_DRAIN_TIMEOUT))
		ret = -ETIMEDOUT;
	for_each_set_bit(i, &bad, sdev->nr_paths) {
		if (ret)
			break;
		attr.qp_state = IB_QPS_RESET;
		ret = ib_modify_qp(sdr_net_qp(sdev, i), &attr, IB_QP_STATE);
		if (!ret)
			ret = sdr_qp_ready(sdev, sdr_net_qp(sdev, i));
	}
	sdr_net_recover_end(sdev, ret, bad);
}

static void sdr_net_resume_work(struct work_struct *work)
{
	struct sdr_dev *sdev = container_of(work, struct sdr_dev, resume_work);

	mutex_lock(&sdev->qp_mutex);
	if (sdev->qp && !sdev->stopping) {
		sdr_net_recover(sdev);
		sdr_net_recover_paths(sdev);
	}
	mutex_unlock(&sdev->qp_mutex);
	sdr_net_tx_kick(sdev);
}

static int sdr_qp_ready(struct sdr_dev *sdev, struct ib_qp *qp)
{
	struct ib_qp_attr attr = {
		.qp_state	= IB_QPS_INIT,
		.pkey_index	= 0,
		.port_num	= sdev->port,
		.qkey		= sdev->qkey,
	};
	int ret;

	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTR;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
}

static void sdr_rx_free(struct sdr_dev *sdev)
{
	unsigned int i;

	if (sdev->rx) {
		for (i = 0; i < sdev->nr_rx; i++) {
			struct sdr_rx *rx = &sdev->rx[i];

			if (!rx->page)
				continue;
			ib_dma_unmap_page(sdev->ibdev, rx->dma, PAGE_SIZE,
					  DMA_FROM_DEVICE);
			__free_page(rx->page);
		}
		kvfree(sdev->rx);
		sdev->rx = NULL;
	}
	if (sdev->rx_spill) {
		ib_dma_unmap_single(sdev->ibdev, sdev->rx_spill_dma,
				    SDR_RX_SPILL_LEN, DMA_FROM_DEVICE);
		kfree(sdev->rx_spill);
		sdev->rx_spill = NULL;
	}
	for (i = 0; i < SDR_RX_CHUNKS; i++) {
		if (!sdev->grh[i])
			continue;
		ib_dma_unmap_single(sdev->ibdev, sdev->grh_dma[i],
				    SDR_RX_CHUNK * SDR_GRH_LEN, DMA_FROM_DEVICE);
		kfree(sdev->grh[i]);
		sdev->grh[i] = NULL;
	}
	sdev->nr_rx = 0;
}

/*
 * Make @n more receive buffers, rx[nr_rx..], at most rx_cap in all:
 * a page each and a GRH slot in its chunk's block.  nr_rx counts each
 * one made whole, so a failure part way keeps what was made.
 */
static int sdr_rx_add(struct sdr_dev *sdev, unsigned int n)
{
	unsigned int i, c, end = min(sdev->nr_rx + n, sdev->rx_cap);

	for (i = sdev->nr_rx; i < end; i++) {
		struct sdr_rx *rx = &sdev->rx[i];

		c = i / SDR_RX_CHUNK;
		if (!sdev->grh[c]) {
			void *grh = kcalloc(SDR_RX_CHUNK, SDR_GRH_LEN, GFP_KERNEL);
			u64 dma;

			if (!grh)
				return -ENOMEM;
			dma = ib_dma_map_single(sdev->ibdev, grh,
						SDR_RX_CHUNK * SDR_GRH_LEN,
						DMA_FROM_DEVICE);
			if (ib_dma_mapping_error(sdev->ibdev, dma)) {
				kfree(grh);
				return -ENOMEM;
			}
			sdev->grh[c] = grh;
			sdev->grh_dma[c] = dma;
		}
		rx->sdev = sdev;
		rx->cqe.done = sdr_rx_done;
		rx->grh = sdev->grh[c] + (i % SDR_RX_CHUNK) * SDR_GRH_LEN;
		rx->grh_dma = sdev->grh_dma[c] + (i % SDR_RX_CHUNK) * SDR_GRH_LEN;
		rx->page = alloc_page(GFP_KERNEL);
		if (!rx->page)
			return -ENOMEM;
		rx->dma = ib_dma_map_page(sdev->ibdev, rx->page, 0, PAGE_SIZE,
					  DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(sdev->ibdev, rx->dma)) {
			__free_page(rx->page);
			rx->page = NULL;
			return -ENOMEM;
		}
		WRITE_ONCE(sdev->nr_rx, i + 1);
	}
	return 0;
}

/*
 * The spill area behind every buffer, where the QP takes a third SGE
 * (@spill).  Its bytes are never read: every receive may write it.
 */
static int sdr_rx_spill_alloc(struct sdr_dev *sdev, bool spill)
{
	void *p;
	u64 dma;

	if (!spill)
		return 0;
	p = kmalloc(SDR_RX_SPILL_LEN, GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	dma = ib_dma_map_single(sdev->ibdev, p, SDR_RX_SPILL_LEN,
				DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(sdev->ibdev, dma)) {
		kfree(p);
		return -ENOMEM;
	}
	sdev->rx_spill = p;
	sdev->rx_spill_dma = dma;
	return 0;
}

/*
 * rx_cap entries for the ring, recv_depth of them made (not posted),
 * and the spill area if @spill.
 */
static int sdr_rx_alloc(struct sdr_dev *sdev, unsigned int cap, bool spill)
{
	int ret;

	sdev->rx_cap = cap;
	sdev->nr_rx = 0;
	atomic_set(&sdev->rx_posted, 0);
	sdev->rx = kvcalloc(cap, sizeof(*sdev->rx), GFP_KERNEL);
	if (!sdev->rx)
		return -ENOMEM;
	ret = sdr_rx_spill_alloc(sdev, spill);
	if (ret) {
		sdr_rx_free(sdev);
		return ret;
	}
	ret = sdr_rx_add(sdev, min(READ_ONCE(sdr_recv_depth), cap));
	if (ret)
		sdr_rx_free(sdev);
	return ret;
}

/*
 * Grow the ring to what its flows need (sdr_rx_target()) and post the
 * new buffers.  Under qp_mutex, so no recovery drains or reposts
 * meanwhile and the transport is not stopping.  Buffers not made for
 * want of memory are tried again when the next flow comes.  The ring
 * never shrinks: its pages go when the device is unbound.
 */
static void sdr_rx_grow_work(struct work_struct *work)
{
	struct sdr_dev *sdev = container_of(work, struct sdr_dev,
					    rx_grow_work);
	unsigned int old, want, i;
	int ret;

	mutex_lock(&sdev->qp_mutex);
	old = sdev->nr_rx;
	if (sdev->qp && !sdev->stopping && !READ_ONCE(sdev->rx_stopped) &&
	    !READ_ONCE(sdev->broken)) {
		want = sdr_rx_target(sdev);
		/* short of memory: what it made, it keeps */
		if (want > old)
			sdr_rx_add(sdev, want - old);
		for (i = old; i < sdev->nr_rx; i++) {
			ret = sdr_rx_post(&sdev->rx[i]);
			if (ret) {
				/* the reset posts them with the rest */
				pr_err_ratelimited("%s: cannot post a receive: %d; resetting the QP\n",
						   sdev->name, ret);
				sdr_net_rx_recover(sdev, true);
				break;
			}
		}
		sdr_dev_count(sdev, SDR_DEV_RX_GROWN, sdev->nr_rx - old);
	}
	clear_bit(SDR_RX_GROWING, &sdev->rx_flags);
	/* a flow that came meanwhile found the bit set: look again */
	if (sdev->nr_rx > old)
		sdr_net_rx_fit(sdev);
	mutex_unlock(&sdev->qp_mutex);
}

static void sdr_tx_free(struct sdr_dev *sdev)
{
	unsigned int i;

	for (i = 0; sdev->tx && i < sdev->nr_tx; i++)
		free_page((unsigned long)sdev->tx[i].crypt);
	sdev->crypt_ready = false;
	if (sdev->hdrs) {
		ib_dma_unmap_single(sdev->ibdev, sdev->hdrs_dma,
				    sdev->nr_tx * SDR_TX_BUF_LEN, DMA_TO_DEVICE);
		kvfree(sdev->hdrs);
		sdev->hdrs = NULL;
	}
	kvfree(sdev->tx);
	sdev->tx = NULL;
}

static int sdr_tx_alloc(struct sdr_dev *sdev)
{
	unsigned int i;

	sdev->nr_tx = sdr_send_depth;
	sdev->tx = kvcalloc(sdev->nr_tx, sizeof(*sdev->tx), GFP_KERNEL);
	sdev->hdrs = kcalloc(sdev->nr_tx, SDR_TX_BUF_LEN, GFP_KERNEL);
	if (!sdev->tx || !sdev->hdrs)
		goto err_free;
	sdev->hdrs_dma = ib_dma_map_single(sdev->ibdev, sdev->hdrs,
					   sdev->nr_tx * SDR_TX_BUF_LEN,
					   DMA_TO_DEVICE);
	if (ib_dma_mapping_error(sdev->ibdev, sdev->hdrs_dma)) {
		kfree(sdev->hdrs);
		sdev->hdrs = NULL;
		goto err_free;
	}
	for (i = 0; i < sdev->nr_tx; i++) {
		struct sdr_tx *tx = &sdev->tx[i];

		tx->sdev = sdev;
		tx->cqe.done = sdr_tx_done;
		tx->buf = sdev->hdrs + i * SDR_TX_BUF_LEN;
		tx->buf_dma = sdev->hdrs_dma + i * SDR_TX_BUF_LEN;
		list_add_tail(&tx->node, &sdev->tx_free);
	}
	return 0;

err_free:
	sdr_tx_free(sdev);
	return -ENOMEM;
}

static const struct sdr_xmit_ops sdr_net_xmit = {
	.kick		= sdr_net_tx_kick,
	.rx_fit		= sdr_net_rx_fit,
	.crypt_enable	= sdr_net_crypt_enable,
	.send_ctrl	= sdr_net_send_ctrl,
};

int sdr_net_init(struct sdr_dev *sdev)
{
	struct ib_qp_init_attr init = {};
	unsigned int i, cap;
	struct ib_qp *qp;
	bool spill;
	int ret;

	sdev->xmit = &sdr_net_xmit;
	sdev->mtu = sdr_dev_mtu(sdev);
	if (sdev->mtu < 256 || sdev->mtu > PAGE_SIZE)
		return -EOPNOTSUPP;
	mutex_init(&sdev->qp_mutex);
	mutex_init(&sdev->crypt_mutex);
	INIT_WORK(&sdev->resume_work, sdr_net_resume_work);
	INIT_WORK(&sdev->rx_grow_work, sdr_rx_grow_work);
	init_completion(&sdev->drained);
	sdev->drain_cqe.done = sdr_net_drain_done;

	sdev->pd = ib_alloc_pd(sdev->ibdev, 0);
	if (IS_ERR(sdev->pd)) {
		ret = PTR_ERR(sdev->pd);
		sdev->pd = NULL;
		return ret;
	}
	sdev->send_cq = ib_alloc_cq(sdev->ibdev, sdev, sdr_send_depth, 0,
				    IB_POLL_SOFTIRQ);
	if (IS_ERR(sdev->send_cq)) {
		ret = PTR_ERR(sdev->send_cq);
		goto err_dealloc_pd;
	}
	/*
	 * The ring may grow to recv_max buffers (never below recv_depth,
	 * never past what the device takes), and one more receive than the
	 * buffers is sdr_net_drain()'s marker.
	 */
	cap = max(READ_ONCE(sdr_recv_max), READ_ONCE(sdr_recv_depth));
	cap = min_t(unsigned int, cap, SDR_RX_MAX);
	if (sdev->ibdev->attrs.max_qp_wr > 1)
		cap = min_t(unsigned int, cap, sdev->ibdev->attrs.max_qp_wr - 1);
	if (sdev->ibdev->attrs.max_cqe > 1)
		cap = min_t(unsigned int, cap, sdev->ibdev->attrs.max_cqe - 1);
	sdev->recv_cq = ib_alloc_cq(sdev->ibdev, sdev, cap + 1, 0,
				    IB_POLL_SOFTIRQ);
	if (IS_ERR(sdev->recv_cq)) {
		ret = PTR_ERR(sdev->recv_cq);
		goto err_free_send_cq;
	}

	init.send_cq = sdev->send_cq;
	init.recv_cq = sdev->recv_cq;
	init.cap.max_send_wr = sdr_send_depth;
	init.cap.max_recv_wr = cap + 1;
	init.cap.max_send_sge = SDR_TX_SGE;
	/* GRH slot, page and, where the device takes a third, the spill */
	spill = sdev->ibdev->attrs.max_recv_sge >= 3;
	init.cap.max_recv_sge = spill ? 3 : 2;
	init.sq_sig_type = IB_SIGNAL_ALL_WR;
	init.qp_type = IB_QPT_UD;
	init.port_num = sdev->port;
	sdev->qp = ib_create_qp(sdev->pd, &init);
	if (IS_ERR(sdev->qp)) {
		ret = PTR_ERR(sdev->qp);
		goto err_free_recv_cq;
	}
	ret = sdr_qp_ready(sdev, sdev->qp);
	if (ret)
		goto err_destroy_qp;
	sdev->path_qpn[0] = sdev->qp->qp_num;
	/* the other paths' QPs only send: peers answer to the main one */
	init.cap.max_recv_wr = 0;
	init.cap.max_recv_sge = 1;
	sdev->nr_paths = 1;
	for (i = 1; i < READ_ONCE(sdr_dev_paths); i++) {
		qp = ib_create_qp(sdev->pd, &init);
		if (IS_ERR(qp)) {
			ret = PTR_ERR(qp);
			goto err_destroy_qp;
		}
		sdev->xqp[i - 1] = qp;
		sdev->path_qpn[i] = qp->qp_num;
		sdev->nr_paths++;
		ret = sdr_qp_ready(sdev, qp);
		if (ret)
			goto err_destroy_qp;
	}

	ret = sdr_rx_alloc(sdev, cap, spill);
	if (ret)
		goto err_destroy_qp;
	ret = sdr_tx_alloc(sdev);
	if (ret)
		goto err_free_rx;
	for (i = 0; i < sdev->nr_rx; i++) {
		ret = sdr_rx_post(&sdev->rx[i]);
		if (ret)
			goto err_stop;
	}
	return 0;

err_stop:
	/* Posted receives flush into recv_cq; destroying the QP drops them. */
	sdr_net_stop(sdev);
	sdr_net_free(sdev);
	return ret;
err_free_rx:
	sdr_rx_free(sdev);
err_destroy_qp:
	while (sdev->nr_paths > 1) {
		sdev->nr_paths--;
		ib_destroy_qp(sdev->xqp[sdev->nr_paths - 1]);
		sdev->xqp[sdev->nr_paths - 1] = NULL;
	}
	ib_destroy_qp(sdev->qp);
	sdev->qp = NULL;
err_free_recv_cq:
	ib_free_cq(sdev->recv_cq);
	sdev->recv_cq = NULL;
err_free_send_cq:
	ib_free_cq(sdev->send_cq);
	sdev->send_cq = NULL;
err_dealloc_pd:
	ib_dealloc_pd(sdev->pd);
	sdev->pd = NULL;
	return ret;
}

/*
 * Stop the transport: no new sends, error out the QP so posted work
 * flushes, wait until the device gave back every receive buffer and send
 * context (sdr_net_drain()), then destroy the QP and CQs (ib_free_cq
 * waits for a running poll).  A CQ is freed only once no completion of
 * it is still on its way: rxe of 6.1 runs a CQ's completion tasklet on
 * freed memory otherwise.  Flows must have been shut down first.
 */
void sdr_net_stop(struct sdr_dev *sdev)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_qp *qp, *xqp[SDR_PATHS_MAX - 1];
	u32 i, nr;
	int ret;

	spin_lock_bh(&sdev->tx_lock);
	qp = sdev->qp;
	spin_unlock_bh(&sdev->tx_lock);
	if (!qp)
		return;
	/*
	 * Receive handlers run in softirq, an RCU read-side section: after
	 * the grace period none still holds a stale rx_stopped == false, so
	 * none reposts to the QP about to be destroyed.
	 */
	mutex_lock(&sdev->qp_mutex);
	WRITE_ONCE(sdev->stopping, true);
	WRITE_ONCE(sdev->rx_stopped, true);
	synchronize_rcu();
	ib_modify_qp(qp, &attr, IB_QP_STATE);
	for (i = 1; i < sdev->nr_paths; i++)
		ib_modify_qp(sdr_net_qp(sdev, i), &attr, IB_QP_STATE);
	ret = sdr_net_drain(sdev);
	mutex_unlock(&sdev->qp_mutex);
	if (ret)
		pr_err("%s: the QP did not give back its receives: %d\n",
		       sdev->name, ret);
	if (!wait_event_timeout(sdev->tx_wait,
				!atomic_read(&sdev->tx_inflight), 10 * HZ))
		pr_err("%s: %d sends never completed\n", sdev->name,
		       atomic_read(&sdev->tx_inflight));

	/*
	 * Completions are done, so nothing queues the resume work again;
	 * receive handlers saw rx_stopped (above), so nothing queues the
	 * ring's growth, which sees stopping if it runs now.
	 */
	cancel_work_sync(&sdev->resume_work);
	cancel_work_sync(&sdev->rx_grow_work);
	mutex_lock(&sdev->qp_mutex);
	spin_lock_bh(&sdev->tx_lock);
	sdev->qp = NULL;
	nr = sdev->nr_paths;
	for (i = 1; i < nr; i++) {
		xqp[i - 1] = sdev->xqp[i - 1];
		sdev->xqp[i - 1] = NULL;
	}
	spin_unlock_bh(&sdev->tx_lock);
	mutex_unlock(&sdev->qp_mutex);
	for (i = 1; i < nr; i++)
		ib_destroy_qp(xqp[i - 1]);
	ib_destroy_qp(qp);
	/*
	 * The last completions were handed over by a CQ poll (softirq) that,
	 * done, clears its scheduled bit and then rearms the CQ: ib_free_cq()
	 * may take the bit in between and free the CQ under the rearm (seen
	 * once in rxe_req_notify_cq).  A grace period waits for that poll's
	 * softirq to end; the CQs are empty, so none is scheduled again.
	 */
	synchronize_rcu();
	ib_free_cq(sdev->recv_cq);
	sdev->recv_cq = NULL;
	ib_free_cq(sdev->send_cq);
	sdev->send_cq = NULL;
}

/* Free what sdr_net_init allocated; the transport must be stopped. */
void sdr_net_free(struct sdr_dev *sdev)
{
	sdr_rx_free(sdev);
	sdr_tx_free(sdev);
	if (sdev->pd) {
		ib_dealloc_pd(sdev->pd);
		sdev->pd = NULL;
	}
}
