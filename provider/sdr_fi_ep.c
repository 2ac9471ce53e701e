// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr-fi: reliable datagram endpoints (FI_EP_RDM), FI_MSG and
 * FI_TAGGED, and the domain's progress.
 *
 * Connections.  An endpoint listens with rdma_cm on its device's address
 * and a port of its own (its fi_getname()); a thread of its own accepts
 * each peer's request with a new flow and posts SDR_FI_SLOTS receives on
 * it.  The first send to an address connects a flow to that peer's
 * listener (sdr_cm_resolve(), sdr_cm_connect()), outside the domain's
 * lock so that both ends may connect to each other at once; the endpoint
 * sends to the peer over that flow only.
 *
 * Messages.  A send copies the header and the application's bytes into a
 * free slot of the flow's send region and posts it; its completion (sdr's:
 * the receiver has every byte) frees the slot and reports.  A flow's
 * messages are taken in the order they were sent (the n-th receive of a
 * flow holds its n-th message, and the oldest is taken first), matched
 * against the posted receives (FI_MSG: the oldest; FI_TAGGED: the oldest
 * whose tag matches under its ignore bits) and copied into the
 * application's buffer; a message no receive matches waits, in its slot,
 * on the unexpected list.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sdr_fi.h"

#define SEND_FLAGS	(FI_COMPLETION | FI_TRANSMIT_COMPLETE | \
			 FI_DELIVERY_COMPLETE | FI_INJECT | \
			 FI_INJECT_COMPLETE | FI_REMOTE_CQ_DATA | FI_MORE)
#define RECV_FLAGS	(FI_COMPLETION | FI_MORE)

static struct sdr_fi_ep *ep_of(struct fid_ep *fep)
{
	return container_of(fep, struct sdr_fi_ep, ep);
}

/* ---- completions ---- */

static void report(struct sdr_fi_cq *cq, void *context, uint64_t flags,
		   size_t len, void *buf, uint64_t data, uint64_t tag)
{
	struct fi_cq_tagged_entry e = {
		.op_context = context, .flags = flags, .len = len,
		.buf = buf, .data = data, .tag = tag,
	};

	if (cq)
		sdr_fi_cq_push(cq, &e);
}

static void report_err(struct sdr_fi_cq *cq, void *context, uint64_t flags,
		       int err, int prov_errno, size_t len, size_t olen,
		       uint64_t tag)
{
	struct fi_cq_err_entry e = {
		.op_context = context, .flags = flags, .len = len,
		.tag = tag, .olen = olen, .err = err, .prov_errno = prov_errno,
	};

	if (cq)
		sdr_fi_cq_push_err(cq, &e);
}

/* ---- receiving ---- */

static bool tag_match(uint64_t a, uint64_t b, uint64_t ignore)
{
	return !((a ^ b) & ~ignore);
}

/* A posted receive the message takes, unlinked, or NULL. */
static struct sdr_fi_op *match_posted(struct sdr_fi_ep *ep,
				      const struct sdr_fi_hdr *h)
{
	struct sdr_fi_op **pp = (h->op & SDR_FI_OP_MASK) == SDR_FI_OP_MSG ?
		&ep->posted_msg : &ep->posted_tag;
	struct sdr_fi_op *op;

	for (; (op = *pp); pp = &op->next) {
		if ((h->op & SDR_FI_OP_MASK) == SDR_FI_OP_TAGGED &&
		    !tag_match(op->tag, h->tag, op->ignore))
			continue;
		*pp = op->next;
		return op;
	}
	return NULL;
}

/* Post one more receive on an accepted flow. */
static int conn_post(struct sdr_fi_conn *c)
{
	struct sdr_recv *h;
	int ret;

	if (c->nposted == SDR_FI_SLOTS)
		return 0;
	ret = sdr_flow_recv_post(c->flow, (uintptr_t)c, &h);
	if (ret)
		return ret;
	c->rq[(c->rq_head + c->nposted++) % SDR_FI_SLOTS] = h;
	return 0;
}

/* Copy a message into the receive @op took and report it; free @op. */
static void deliver(struct sdr_fi_ep *ep, struct sdr_fi_op *op,
		    const void *msg, uint32_t msg_len)
{
	const struct sdr_fi_hdr *h = msg;
	size_t n = msg_len - SDR_FI_HDR;
	uint64_t flags = FI_RECV | ((h->op & SDR_FI_OP_MASK) ==
				    SDR_FI_OP_TAGGED ? FI_TAGGED : FI_MSG);

	if (h->op & SDR_FI_F_DATA)
		flags |= FI_REMOTE_CQ_DATA;
	memcpy(op->buf, h + 1, n < op->len ? n : op->len);
	if (n > op->len)
		report_err(ep->rx_cq, op->context, flags, FI_ETRUNC, 0,
			   op->len, n - op->len, h->tag);
	else if (op->report)
		report(ep->rx_cq, op->context, flags, n, op->buf,
		       h->op & SDR_FI_F_DATA ? h->data : 0, h->tag);
	free(op);
}

/* The message of receive @rh is no longer needed: recycle its slot. */
static void recycle(struct sdr_fi_conn *c, struct sdr_recv *rh)
{
	sdr_recv_release(rh);
	if (!c->dead && conn_post(c))
		c->dead = true;
}

/* Take the messages of @c that are complete, in the order they were sent. */
static void conn_rx_advance(struct sdr_fi_conn *c)
{
	struct sdr_fi_ep *ep = c->ep;

	while (c->nposted) {
		struct sdr_recv *rh = c->rq[c->rq_head];
		const struct sdr_fi_hdr *h;
		struct sdr_fi_unexp *u, **pp;
		struct sdr_fi_op *op;
		uint32_t status, imm, len;

		if (sdr_recv_poll(rh, &status))
			break;		/* the oldest is not complete yet */
		c->rq_head = (c->rq_head + 1) % SDR_FI_SLOTS;
		c->nposted--;
		if (status != SDR_STATUS_OK) {
			/* the flow failed or went: nothing more comes on it */
			sdr_recv_release(rh);
			c->dead = true;
			continue;
		}
		h = sdr_recv_data(rh);
		if (sdr_recv_imm(rh, &imm, &len) || len < SDR_FI_HDR ||
		    len > SDR_FI_HDR + SDR_FI_MAX_MSG ||
		    h->magic != SDR_FI_MAGIC ||
		    ((h->op & SDR_FI_OP_MASK) != SDR_FI_OP_MSG &&
		     (h->op & SDR_FI_OP_MASK) != SDR_FI_OP_TAGGED) ||
		    (h->op & ~(uint32_t)(SDR_FI_OP_MASK | SDR_FI_F_DATA))) {
			/* not a message of this provider: dropped */
			recycle(c, rh);
			continue;
		}
		op = match_posted(ep, h);
		if (op) {
			deliver(ep, op, h, len);
			recycle(c, rh);
			continue;
		}
		u = calloc(1, sizeof(*u));
		if (!u) {
			/* no memory to hold it: it is lost, say so */
			report_err(ep->rx_cq, NULL, FI_RECV, FI_ENOMEM, 0, 0,
				   0, 0);
			recycle(c, rh);
			continue;
		}
		u->conn = c;
		u->rh = rh;
		u->len = len;
		for (pp = &ep->unexp; *pp; pp = &(*pp)->next)
			;
		*pp = u;
	}
}

/* ---- progress: the domain's completions ---- */

static void send_done(struct sdr_fi_op *op, uint32_t status)
{
	struct sdr_fi_conn *c = op->conn;
	struct sdr_fi_ep *ep = c->ep;
	struct sdr_fi_op **pp;

	for (pp = &ep->tx_ops; *pp; pp = &(*pp)->next)
		if (*pp == op) {
			*pp = op->next;
			break;
		}
	c->free_slots |= 1U << op->slot;
	ep->tx_inflight--;
	if (status != SDR_STATUS_OK) {
		c->dead = true;
		report_err(ep->tx_cq, op->context, op->flags, FI_EIO,
			   (int)status, 0, 0, op->tag);
	} else if (op->report) {
		report(ep->tx_cq, op->context, op->flags, 0, NULL, 0, 0);
	}
	free(op);
}

void sdr_fi_progress(struct sdr_fi_domain *dom)
{
	struct sdr_completion comp[32];
	int n, i;

	while ((n = sdr_poll_cq(dom->ctx, comp, 32)) > 0) {
		for (i = 0; i < n; i++) {
			if (comp[i].type == SDR_CQE_SEND)
				send_done((struct sdr_fi_op *)(uintptr_t)
					  comp[i].user_data, comp[i].status);
			else if (comp[i].type == SDR_CQE_RECV)
				conn_rx_advance((struct sdr_fi_conn *)(uintptr_t)
						comp[i].user_data);
		}
		if (n < 32)
			break;
	}
}

/* ---- connections ---- */

static int flow_new(struct sdr_fi_ep *ep, struct sdr_fi_conn *c)
{
	struct sdr_flow_attr attr = {
		.policy = ep->policy,
		.max_msg_size = SDR_FI_HDR + SDR_FI_MAX_MSG,
		.max_msgs = SDR_FI_SLOTS,
	};
	struct sdr_flow_props props;

	c->flow = sdr_flow_create(ep->dom->ctx, &attr);
	if (!c->flow)
		return -errno;
	sdr_flow_props(c->flow, &props);
	c->stride = props.slot_stride;
	c->free_slots = (1U << SDR_FI_SLOTS) - 1;
	c->ep = ep;
	return 0;
}

static void conn_free(struct sdr_fi_conn *c)
{
	if (c->flow)
		sdr_flow_destroy(c->flow);	/* frees its receives */
	free(c);
}

/* The listener's thread: accept each peer's request with a flow. */
static void *cm_thread(void *arg)
{
	struct sdr_fi_ep *ep = arg;
	struct sdr_fi_domain *dom = ep->dom;

	for (;;) {
		struct sdr_fi_conn *c;
		struct sdr_cm *req;
		const char *dev;
		bool stop;
		int ret;

		pthread_mutex_lock(&dom->lock);
		stop = ep->cm_stop;
		pthread_mutex_unlock(&dom->lock);
		if (stop)
			break;
		ret = sdr_cm_get_request(ep->listener, 200, &req);
		if (ret == -ETIMEDOUT || ret == -EPROTO || ret == -EINTR)
			continue;
		if (ret) {
			fprintf(stderr, "libsdr-fi: %s: listener: %s\n",
				dom->dev, strerror(-ret));
			break;
		}
		dev = sdr_cm_device(req);
		if (!dev || strcmp(dev, dom->dev)) {
			sdr_cm_reject(req);
			sdr_cm_destroy(req);
			continue;
		}
		c = calloc(1, sizeof(*c));
		pthread_mutex_lock(&dom->lock);
		ret = c ? flow_new(ep, c) : -ENOMEM;
		if (ret) {
			/* no flow to answer with: refuse the peer */
			sdr_cm_reject(req);
		} else {
			/* failing, sdr_cm_accept() rejects the peer itself */
			ret = sdr_cm_accept(req, c->flow);
			while (!ret && c->nposted < SDR_FI_SLOTS)
				ret = conn_post(c);
		}
		if (ret) {
			if (c)
				conn_free(c);
		} else {
			c->next = ep->conns;
			ep->conns = c;
		}
		pthread_mutex_unlock(&dom->lock);
		sdr_cm_destroy(req);
	}
	return NULL;
}

/*
 * The flow to send to @to: an existing one, or a new one connected now,
 * with the domain's lock dropped while the peer answers.  -FI_EAGAIN
 * while another thread connects it.
 */
static int tx_conn(struct sdr_fi_ep *ep, const struct sockaddr_in *to,
		   struct sdr_fi_conn **out)
{
	struct sdr_fi_domain *dom = ep->dom;
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];
	struct sdr_fi_conn *c;
	struct sdr_cm *cm;
	int ret;

	for (c = ep->conns; c; c = c->next)
		if (c->tx && !c->dead &&
		    c->peer.sin_addr.s_addr == to->sin_addr.s_addr &&
		    c->peer.sin_port == to->sin_port)
			break;
	if (c) {
		if (c->connecting)
			return -FI_EAGAIN;
		*out = c;
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	ret = flow_new(ep, c);
	if (ret) {
		free(c);
		return ret;
	}
	c->tx = true;
	c->connecting = true;
	c->peer = *to;
	c->next = ep->conns;
	ep->conns = c;
	inet_ntop(AF_INET, &dom->ip, src, sizeof(src));
	inet_ntop(AF_INET, &to->sin_addr, dst, sizeof(dst));
	pthread_mutex_unlock(&dom->lock);
	ret = sdr_cm_resolve(src, dst, ntohs(to->sin_port), SDR_FI_CONNECT_MS,
			     &cm);
	if (!ret) {
		ret = sdr_cm_connect(cm, c->flow, SDR_FI_CONNECT_MS);
		sdr_cm_destroy(cm);
	}
	pthread_mutex_lock(&dom->lock);
	c->connecting = false;
	if (ret) {
		struct sdr_fi_conn **pp;

		/* nothing was sent on it: it goes, flow and all */
		for (pp = &ep->conns; *pp; pp = &(*pp)->next)
			if (*pp == c) {
				*pp = c->next;
				break;
			}
		conn_free(c);
		return ret == -ETIMEDOUT || ret == -ECONNREFUSED ?
			-FI_EHOSTUNREACH : ret;
	}
	*out = c;
	return 0;
}

/* ---- sending ---- */

static ssize_t do_send(struct sdr_fi_ep *ep, const void *buf, size_t len,
		       fi_addr_t dest, void *context, uint32_t op_kind,
		       uint64_t tag, uint64_t data, uint64_t flags)
{
	struct sdr_fi_domain *dom = ep->dom;
	struct sockaddr_in to;
	struct sdr_fi_hdr *h;
	struct sdr_fi_conn *c;
	struct sdr_fi_op *op;
	uint32_t slot, seq;
	ssize_t ret;

	if (flags & ~(uint64_t)SEND_FLAGS)
		return -FI_EBADFLAGS;
	if (len > SDR_FI_MAX_MSG)
		return -FI_EMSGSIZE;
	if ((flags & FI_INJECT) && len > SDR_FI_INJECT)
		return -FI_EMSGSIZE;
	if (!buf && len)
		return -FI_EINVAL;
	pthread_mutex_lock(&dom->lock);
	if (!ep->enabled) {
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	if (sdr_fi_av_get(ep->av, dest, &to)) {
		ret = -FI_EINVAL;
		goto out;
	}
	if (ep->tx_inflight >= SDR_FI_TX_SIZE) {
		sdr_fi_progress(dom);
		if (ep->tx_inflight >= SDR_FI_TX_SIZE) {
			ret = -FI_EAGAIN;
			goto out;
		}
	}
	ret = tx_conn(ep, &to, &c);
	if (ret)
		goto out;
	if (!c->free_slots)
		sdr_fi_progress(dom);
	if (!c->free_slots) {
		ret = -FI_EAGAIN;
		goto out;
	}
	op = calloc(1, sizeof(*op));
	if (!op) {
		ret = -FI_ENOMEM;
		goto out;
	}
	slot = (uint32_t)__builtin_ctz(c->free_slots);
	h = sdr_send_slot(c->flow, slot);
	h->magic = SDR_FI_MAGIC;
	h->op = op_kind | (flags & FI_REMOTE_CQ_DATA ? SDR_FI_F_DATA : 0);
	h->tag = tag;
	h->data = data;
	memcpy(h + 1, buf, len);
	op->context = context;
	op->flags = FI_SEND | (op_kind == SDR_FI_OP_TAGGED ? FI_TAGGED : FI_MSG);
	op->tag = tag;
	op->conn = c;
	op->slot = slot;
	op->report = !(flags & FI_INJECT) &&
		     (!(ep->tx_flags & FI_SELECTIVE_COMPLETION) ||
		      (flags & FI_COMPLETION));
	ret = sdr_flow_send_post(c->flow, (uint64_t)slot * c->stride,
				 SDR_FI_HDR + len, 0, (uintptr_t)op, &seq);
	if (ret) {
		free(op);
		ret = ret == -EAGAIN ? -FI_EAGAIN :
		      ret == -EPIPE ? -FI_EIO : ret;
		goto out;
	}
	c->free_slots &= ~(1U << slot);
	ep->tx_inflight++;
	op->next = ep->tx_ops;
	ep->tx_ops = op;
out:
	pthread_mutex_unlock(&dom->lock);
	return ret;
}

static ssize_t ep_send(struct fid_ep *fep, const void *buf, size_t len,
		       void *desc, fi_addr_t dest, void *context)
{
	(void)desc;
	return do_send(ep_of(fep), buf, len, dest, context, SDR_FI_OP_MSG, 0,
		       0, ep_of(fep)->tx_flags & ~FI_SELECTIVE_COMPLETION);
}

static ssize_t ep_sendv(struct fid_ep *fep, const struct iovec *iov,
			void **desc, size_t count, fi_addr_t dest,
			void *context)
{
	(void)desc;
	if (count > 1)
		return -FI_EINVAL;
	return ep_send(fep, count ? iov->iov_base : NULL,
		       count ? iov->iov_len : 0, NULL, dest, context);
}

static ssize_t ep_sendmsg(struct fid_ep *fep, const struct fi_msg *msg,
			  uint64_t flags)
{
	if (msg->iov_count > 1)
		return -FI_EINVAL;
	return do_send(ep_of(fep), msg->iov_count ? msg->msg_iov->iov_base :
		       NULL, msg->iov_count ? msg->msg_iov->iov_len : 0,
		       msg->addr, msg->context, SDR_FI_OP_MSG, 0, msg->data,
		       flags);
}

static ssize_t ep_inject(struct fid_ep *fep, const void *buf, size_t len,
			 fi_addr_t dest)
{
	return do_send(ep_of(fep), buf, len, dest, NULL, SDR_FI_OP_MSG, 0, 0,
		       FI_INJECT);
}

static ssize_t ep_senddata(struct fid_ep *fep, const void *buf, size_t len,
			   void *desc, uint64_t data, fi_addr_t dest,
			   void *context)
{
	(void)desc;
	return do_send(ep_of(fep), buf, len, dest, context, SDR_FI_OP_MSG, 0,
		       data, FI_REMOTE_CQ_DATA |
		       (ep_of(fep)->tx_flags & ~FI_SELECTIVE_COMPLETION));
}

static ssize_t ep_injectdata(struct fid_ep *fep, const void *buf, size_t len,
			     uint64_t data, fi_addr_t dest)
{
	return do_send(ep_of(fep), buf, len, dest, NULL, SDR_FI_OP_MSG, 0,
		       data, FI_INJECT | FI_REMOTE_CQ_DATA);
}

static ssize_t ep_tsend(struct fid_ep *fep, const void *buf, size_t len,
			void *desc, fi_addr_t dest, uint64_t tag,
			void *context)
{
	(void)desc;
	return do_send(ep_of(fep), buf, len, dest, context, SDR_FI_OP_TAGGED,
		       tag, 0, ep_of(fep)->tx_flags & ~FI_SELECTIVE_COMPLETION);
}

static ssize_t ep_tsendv(struct fid_ep *fep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest,
			 uint64_t tag, void *context)
{
	(void)desc;
	if (count > 1)
		return -FI_EINVAL;
	return ep_tsend(fep, count ? iov->iov_base : NULL,
			count ? iov->iov_len : 0, NULL, dest, tag, context);
}

static ssize_t ep_tsendmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg,
			   uint64_t flags)
{
	if (msg->iov_count > 1)
		return -FI_EINVAL;
	return do_send(ep_of(fep), msg->iov_count ? msg->msg_iov->iov_base :
		       NULL, msg->iov_count ? msg->msg_iov->iov_len : 0,
		       msg->addr, msg->context, SDR_FI_OP_TAGGED, msg->tag,
		       msg->data, flags);
}

static ssize_t ep_tinject(struct fid_ep *fep, const void *buf, size_t len,
			  fi_addr_t dest, uint64_t tag)
{
	return do_send(ep_of(fep), buf, len, dest, NULL, SDR_FI_OP_TAGGED,
		       tag, 0, FI_INJECT);
}

static ssize_t ep_tsenddata(struct fid_ep *fep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest,
			    uint64_t tag, void *context)
{
	(void)desc;
	return do_send(ep_of(fep), buf, len, dest, context, SDR_FI_OP_TAGGED,
		       tag, data, FI_REMOTE_CQ_DATA |
		       (ep_of(fep)->tx_flags & ~FI_SELECTIVE_COMPLETION));
}

static ssize_t ep_tinjectdata(struct fid_ep *fep, const void *buf,
			      size_t len, uint64_t data, fi_addr_t dest,
			      uint64_t tag)
{
	return do_send(ep_of(fep), buf, len, dest, NULL, SDR_FI_OP_TAGGED,
		       tag, data, FI_INJECT | FI_REMOTE_CQ_DATA);
}

/* ---- posting receives ---- */

static ssize_t do_recv(struct sdr_fi_ep *ep, void *buf, size_t len,
		       void *context, bool tagged, uint64_t tag,
		       uint64_t ignore, uint64_t flags)
{
	struct sdr_fi_domain *dom = ep->dom;
	struct sdr_fi_unexp *u, **up;
	struct sdr_fi_op *op, **pp;
	size_t n = 0;
	ssize_t ret = 0;

	if (flags & ~(uint64_t)RECV_FLAGS)
		return -FI_EBADFLAGS;
	if (!buf && len)
		return -FI_EINVAL;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -FI_ENOMEM;
	op->context = context;
	op->buf = buf;
	op->len = len;
	op->tag = tag;
	op->ignore = ignore;
	op->flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
	op->report = !(ep->rx_flags & FI_SELECTIVE_COMPLETION) ||
		     (flags & FI_COMPLETION);
	pthread_mutex_lock(&dom->lock);
	if (!ep->enabled) {
		ret = -FI_EOPBADSTATE;
		goto fail;
	}
	sdr_fi_progress(dom);
	/* a message already here that this receive takes */
	for (up = &ep->unexp; (u = *up); up = &u->next) {
		const struct sdr_fi_hdr *h = sdr_recv_data(u->rh);
		bool t = (h->op & SDR_FI_OP_MASK) == SDR_FI_OP_TAGGED;

		if (t != tagged || (t && !tag_match(tag, h->tag, ignore)))
			continue;
		*up = u->next;
		deliver(ep, op, h, u->len);
		recycle(u->conn, u->rh);
		free(u);
		goto out;
	}
	pp = tagged ? &ep->posted_tag : &ep->posted_msg;
	for (; *pp; pp = &(*pp)->next)
		n++;
	if (n >= SDR_FI_RX_SIZE) {
		ret = -FI_EAGAIN;
		goto fail;
	}
	*pp = op;
	goto out;
fail:
	free(op);
out:
	pthread_mutex_unlock(&dom->lock);
	return ret;
}

static ssize_t ep_recv(struct fid_ep *fep, void *buf, size_t len, void *desc,
		       fi_addr_t src, void *context)
{
	(void)desc; (void)src;
	return do_recv(ep_of(fep), buf, len, context, false, 0, 0,
		       ep_of(fep)->rx_flags & ~FI_SELECTIVE_COMPLETION);
}

static ssize_t ep_recvv(struct fid_ep *fep, const struct iovec *iov,
			void **desc, size_t count, fi_addr_t src,
			void *context)
{
	(void)desc;
	if (count > 1)
		return -FI_EINVAL;
	return ep_recv(fep, count ? iov->iov_base : NULL,
		       count ? iov->iov_len : 0, NULL, src, context);
}

static ssize_t ep_recvmsg(struct fid_ep *fep, const struct fi_msg *msg,
			  uint64_t flags)
{
	if (msg->iov_count > 1)
		return -FI_EINVAL;
	return do_recv(ep_of(fep), msg->iov_count ? msg->msg_iov->iov_base :
		       NULL, msg->iov_count ? msg->msg_iov->iov_len : 0,
		       msg->context, false, 0, 0, flags);
}

static ssize_t ep_trecv(struct fid_ep *fep, void *buf, size_t len,
			void *desc, fi_addr_t src, uint64_t tag,
			uint64_t ignore, void *context)
{
	(void)desc; (void)src;
	return do_recv(ep_of(fep), buf, len, context, true, tag, ignore,
		       ep_of(fep)->rx_flags & ~FI_SELECTIVE_COMPLETION);
}

static ssize_t ep_trecvv(struct fid_ep *fep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 uint64_t tag, uint64_t ignore, void *context)
{
	(void)desc;
	if (count > 1)
		return -FI_EINVAL;
	return ep_trecv(fep, count ? iov->iov_base : NULL,
			count ? iov->iov_len : 0, NULL, src, tag, ignore,
			context);
}

/*
 * FI_PEEK, FI_CLAIM, FI_DISCARD (fi_tagged(3)), on the messages that came
 * before a receive took them.  PEEK: is one there that matches?  Its
 * completion gives its length, tag and CQ data, or an FI_ENOMSG error
 * completion says there is none; with CLAIM it is kept for the receive
 * that names the same context and FI_CLAIM, with DISCARD it is dropped.
 * CLAIM alone takes the kept message into the buffer, CLAIM | DISCARD
 * drops it.
 */
static ssize_t peek_claim(struct sdr_fi_ep *ep, const struct fi_msg_tagged *msg,
			  uint64_t flags)
{
	uint64_t cflags = FI_RECV | FI_TAGGED;
	struct sdr_fi_unexp *u, **up;
	const struct sdr_fi_hdr *h;
	ssize_t ret = 0;

	if ((flags & (FI_PEEK | FI_CLAIM)) == 0 ||
	    ((flags & FI_DISCARD) && !(flags & (FI_PEEK | FI_CLAIM))))
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&ep->dom->lock);
	if (!ep->enabled) {
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	sdr_fi_progress(ep->dom);
	if (flags & FI_PEEK) {
		for (up = &ep->unexp; (u = *up); up = &u->next) {
			h = sdr_recv_data(u->rh);
			if ((h->op & SDR_FI_OP_MASK) == SDR_FI_OP_TAGGED &&
			    tag_match(msg->tag, h->tag, msg->ignore))
				break;
		}
		if (!u) {
			report_err(ep->rx_cq, msg->context, cflags, FI_ENOMSG,
				   0, 0, 0, msg->tag);
			goto out;
		}
		h = sdr_recv_data(u->rh);
		if (h->op & SDR_FI_F_DATA)
			cflags |= FI_REMOTE_CQ_DATA;
		report(ep->rx_cq, msg->context, cflags, u->len - SDR_FI_HDR,
		       NULL, h->op & SDR_FI_F_DATA ? h->data : 0, h->tag);
		if (flags & (FI_CLAIM | FI_DISCARD)) {
			*up = u->next;
			if (flags & FI_DISCARD) {
				recycle(u->conn, u->rh);
				free(u);
			} else {
				u->claim = msg->context;
				u->next = ep->claimed;
				ep->claimed = u;
			}
		}
		goto out;
	}
	/* FI_CLAIM: the message a PEEK | CLAIM kept for this context */
	for (up = &ep->claimed; (u = *up); up = &u->next)
		if (u->claim == msg->context)
			break;
	if (!u) {
		ret = -FI_EINVAL;
		goto out;
	}
	*up = u->next;
	if (flags & FI_DISCARD) {
		h = sdr_recv_data(u->rh);
		report(ep->rx_cq, msg->context, cflags, 0, NULL, 0, h->tag);
	} else {
		struct sdr_fi_op *op = calloc(1, sizeof(*op));

		if (!op) {
			u->next = ep->claimed;
			ep->claimed = u;
			ret = -FI_ENOMEM;
			goto out;
		}
		op->context = msg->context;
		op->buf = msg->iov_count ? msg->msg_iov->iov_base : NULL;
		op->len = msg->iov_count ? msg->msg_iov->iov_len : 0;
		op->flags = cflags;
		op->report = true;
		deliver(ep, op, sdr_recv_data(u->rh), u->len);
	}
	recycle(u->conn, u->rh);
	free(u);
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
}

static ssize_t ep_trecvmsg(struct fid_ep *fep,
			   const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (msg->iov_count > 1)
		return -FI_EINVAL;
	if (flags & (FI_PEEK | FI_CLAIM | FI_DISCARD))
		return peek_claim(ep_of(fep), msg,
				  flags & ~(uint64_t)(FI_COMPLETION | FI_MORE));
	return do_recv(ep_of(fep), msg->iov_count ? msg->msg_iov->iov_base :
		       NULL, msg->iov_count ? msg->msg_iov->iov_len : 0,
		       msg->context, true, msg->tag, msg->ignore, flags);
}

/* RMA is not offered (fi_getinfo() refuses FI_RMA): every call fails. */
static ssize_t no_rma_read(struct fid_ep *ep, void *buf, size_t len,
			   void *desc, fi_addr_t src, uint64_t addr,
			   uint64_t key, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)src; (void)addr;
	(void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_rma_readv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t src,
			    uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)src; (void)addr;
	(void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_rma_msg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			  uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t no_rma_write(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)dest; (void)addr;
	(void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_rma_writev(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t addr, uint64_t key, void *context)
{
	return no_rma_readv(ep, iov, desc, count, dest, addr, key, context);
}

static ssize_t no_rma_inject(struct fid_ep *ep, const void *buf, size_t len,
			     fi_addr_t dest, uint64_t addr, uint64_t key)
{
	(void)ep; (void)buf; (void)len; (void)dest; (void)addr; (void)key;
	return -FI_ENOSYS;
}

static ssize_t no_rma_writedata(struct fid_ep *ep, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest, uint64_t addr, uint64_t key,
				void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)data; (void)dest;
	(void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_rma_injectdata(struct fid_ep *ep, const void *buf,
				 size_t len, uint64_t data, fi_addr_t dest,
				 uint64_t addr, uint64_t key)
{
	(void)ep; (void)buf; (void)len; (void)data; (void)dest; (void)addr;
	(void)key;
	return -FI_ENOSYS;
}

static struct fi_ops_rma ep_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = no_rma_read,
	.readv = no_rma_readv,
	.readmsg = no_rma_msg,
	.write = no_rma_write,
	.writev = no_rma_writev,
	.writemsg = no_rma_msg,
	.inject = no_rma_inject,
	.writedata = no_rma_writedata,
	.injectdata = no_rma_injectdata,
};

static struct fi_ops_msg ep_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = ep_recv,
	.recvv = ep_recvv,
	.recvmsg = ep_recvmsg,
	.send = ep_send,
	.sendv = ep_sendv,
	.sendmsg = ep_sendmsg,
	.inject = ep_inject,
	.senddata = ep_senddata,
	.injectdata = ep_injectdata,
};

static struct fi_ops_tagged ep_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = ep_trecv,
	.recvv = ep_trecvv,
	.recvmsg = ep_trecvmsg,
	.send = ep_tsend,
	.sendv = ep_tsendv,
	.sendmsg = ep_tsendmsg,
	.inject = ep_tinject,
	.senddata = ep_tsenddata,
	.injectdata = ep_tinjectdata,
};

/* ---- endpoint control ---- */

/* Cancel a posted receive: it completes with FI_ECANCELED. */
static ssize_t ep_cancel(fid_t fid, void *context)
{
	struct sdr_fi_ep *ep = container_of(fid, struct sdr_fi_ep, ep.fid);
	struct sdr_fi_op **lists[2] = { &ep->posted_msg, &ep->posted_tag };
	ssize_t ret = -FI_ENOENT;
	int i;

	pthread_mutex_lock(&ep->dom->lock);
	for (i = 0; i < 2 && ret; i++) {
		struct sdr_fi_op **pp, *op;

		for (pp = lists[i]; (op = *pp); pp = &op->next) {
			if (op->context != context)
				continue;
			*pp = op->next;
			report_err(ep->rx_cq, op->context, op->flags,
				   FI_ECANCELED, 0, 0, 0, op->tag);
			free(op);
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
}

static int ep_getopt(fid_t fid, int level, int optname, void *optval,
		     size_t *optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOPROTOOPT;
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval,
		     size_t optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOPROTOOPT;
}

static int no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		     struct fid_ep **tx_ep, void *context)
{
	(void)sep; (void)index; (void)attr; (void)tx_ep; (void)context;
	return -FI_ENOSYS;
}

static int no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		     struct fid_ep **rx_ep, void *context)
{
	(void)sep; (void)index; (void)attr; (void)rx_ep; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_size_left(struct fid_ep *ep)
{
	(void)ep;
	return -FI_ENOSYS;
}

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = no_tx_ctx,
	.rx_ctx = no_rx_ctx,
	.rx_size_left = no_size_left,
	.tx_size_left = no_size_left,
};

static int ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct sdr_fi_ep *ep = container_of(fid, struct sdr_fi_ep, ep.fid);
	size_t len = *addrlen;

	*addrlen = sizeof(ep->name);
	if (len < sizeof(ep->name))
		return -FI_ETOOSMALL;
	memcpy(addr, &ep->name, sizeof(ep->name));
	return 0;
}

static int no_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid; (void)addr; (void)addrlen;
	return -FI_ENOSYS;
}

static int no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep; (void)addr; (void)addrlen;
	return -FI_ENOSYS;
}

static int no_connect(struct fid_ep *ep, const void *addr, const void *param,
		      size_t paramlen)
{
	(void)ep; (void)addr; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

static int no_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}

static int no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	(void)ep; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

static int no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		     size_t paramlen)
{
	(void)pep; (void)handle; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

static int no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep; (void)flags;
	return -FI_ENOSYS;
}

static int no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		   struct fid_mc **mc, void *context)
{
	(void)ep; (void)addr; (void)flags; (void)mc; (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_cm ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = no_setname,
	.getname = ep_getname,
	.getpeer = no_getpeer,
	.connect = no_connect,
	.listen = no_listen,
	.accept = no_accept,
	.reject = no_reject,
	.shutdown = no_shutdown,
	.join = no_join,
};

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct sdr_fi_ep *ep = container_of(fid, struct sdr_fi_ep, ep.fid);
	int ret = 0;

	pthread_mutex_lock(&ep->dom->lock);
	if (ep->enabled) {
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	switch (bfid->fclass) {
	case FI_CLASS_CQ: {
		struct sdr_fi_cq *cq = container_of(bfid, struct sdr_fi_cq,
						    cq.fid);

		if (cq->dom != ep->dom ||
		    (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV |
					 FI_SELECTIVE_COMPLETION)) ||
		    !(flags & (FI_TRANSMIT | FI_RECV))) {
			ret = -FI_EINVAL;
			break;
		}
		if (((flags & FI_TRANSMIT) && ep->tx_cq) ||
		    ((flags & FI_RECV) && ep->rx_cq)) {
			ret = -FI_EINVAL;
			break;
		}
		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_flags = flags & FI_SELECTIVE_COMPLETION;
			cq->refs++;
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			ep->rx_flags = flags & FI_SELECTIVE_COMPLETION;
			cq->refs++;
		}
		break;
	}
	case FI_CLASS_AV: {
		struct sdr_fi_av *av = container_of(bfid, struct sdr_fi_av,
						    av.fid);

		if (av->dom != ep->dom || ep->av || flags) {
			ret = -FI_EINVAL;
			break;
		}
		ep->av = av;
		av->refs++;
		break;
	}
	default:
		ret = -FI_ENOSYS;
	}
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct sdr_fi_ep *ep = container_of(fid, struct sdr_fi_ep, ep.fid);
	int ret = 0;

	(void)arg;
	if (command != FI_ENABLE)
		return -FI_ENOSYS;
	pthread_mutex_lock(&ep->dom->lock);
	if (ep->enabled)
		goto out;
	if (!ep->av || !ep->tx_cq || !ep->rx_cq) {
		ret = -FI_ENOCQ;
		if (!ep->av)
			ret = -FI_ENOAV;
		goto out;
	}
	ep->cm_stop = false;
	if (pthread_create(&ep->cm_thread, NULL, cm_thread, ep)) {
		ret = -FI_ENOMEM;
		goto out;
	}
	ep->cm_running = true;
	ep->enabled = true;
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
}

static int ep_close(struct fid *fid)
{
	struct sdr_fi_ep *ep = container_of(fid, struct sdr_fi_ep, ep.fid);
	struct sdr_fi_domain *dom = ep->dom;
	struct sdr_fi_conn *c;
	struct sdr_fi_unexp *u;
	struct sdr_fi_op *op;

	pthread_mutex_lock(&dom->lock);
	ep->cm_stop = true;
	pthread_mutex_unlock(&dom->lock);
	if (ep->cm_running)
		pthread_join(ep->cm_thread, NULL);
	sdr_cm_destroy(ep->listener);

	pthread_mutex_lock(&dom->lock);
	/* take what is complete first: sends in flight report to the CQ */
	sdr_fi_progress(dom);
	while ((u = ep->unexp)) {
		ep->unexp = u->next;
		free(u);
	}
	while ((u = ep->claimed)) {
		ep->claimed = u->next;
		free(u);
	}
	while ((op = ep->posted_msg)) {
		ep->posted_msg = op->next;
		free(op);
	}
	while ((op = ep->posted_tag)) {
		ep->posted_tag = op->next;
		free(op);
	}
	/*
	 * Destroying a flow drops its completions from the context's ring:
	 * the sends still in flight are freed here, unreported.
	 */
	while ((op = ep->tx_ops)) {
		ep->tx_ops = op->next;
		free(op);
	}
	while ((c = ep->conns)) {
		ep->conns = c->next;
		conn_free(c);
	}
	if (ep->tx_cq)
		ep->tx_cq->refs--;
	if (ep->rx_cq)
		ep->rx_cq->refs--;
	if (ep->av)
		ep->av->refs--;
	dom->refs--;
	pthread_mutex_unlock(&dom->lock);
	free(ep);
	return 0;
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = sdr_fi_no_ops_open,
};

/* Listen on the device's address, on a free port of the dynamic range. */
static int ep_listen(struct sdr_fi_ep *ep)
{
	char ip[INET_ADDRSTRLEN];
	unsigned int seed = (unsigned int)time(NULL) ^ (unsigned int)getpid() ^
			    (unsigned int)(uintptr_t)ep;
	int i, ret = -EADDRINUSE;

	inet_ntop(AF_INET, &ep->dom->ip, ip, sizeof(ip));
	for (i = 0; i < 64 && ret == -EADDRINUSE; i++) {
		uint16_t port = (uint16_t)(49152 + rand_r(&seed) % 16384);

		ret = sdr_cm_listen(ip, port, &ep->listener);
		if (!ret) {
			ep->name.sin_family = AF_INET;
			ep->name.sin_port = htons(port);
			ep->name.sin_addr = ep->dom->ip;
		}
	}
	return ret;
}

int sdr_fi_endpoint(struct fid_domain *domain, struct fi_info *info,
		    struct fid_ep **out, void *context)
{
	struct sdr_fi_domain *dom = container_of(domain, struct sdr_fi_domain,
						 domain);
	const char *pol = getenv("FI_SDR_POLICY");
	struct sdr_fi_ep *ep;
	int ret;

	if (!info || !info->ep_attr || info->ep_attr->type != FI_EP_RDM)
		return -FI_EINVAL;
	if (info->caps & ~(uint64_t)(SDR_FI_CAPS | FI_REMOTE_COMM))
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->dom = dom;
	ep->policy = SDR_POLICY_SR;
	if (pol && *pol && (sdr_policy_parse(pol, &ep->policy) ||
			    ep->policy == SDR_POLICY_NONE)) {
		/* FI_EP_RDM is reliable: NONE is no policy for it */
		fprintf(stderr, "libsdr-fi: FI_SDR_POLICY=%s: not a reliable sdr policy\n",
			pol);
		free(ep);
		return -FI_EINVAL;
	}
	ret = ep_listen(ep);
	if (ret) {
		free(ep);
		return ret;
	}
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ops;
	ep->ep.cm = &ep_cm_ops;
	ep->ep.msg = &ep_msg_ops;
	ep->ep.tagged = &ep_tagged_ops;
	ep->ep.rma = &ep_rma_ops;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*out = &ep->ep;
	return 0;
}
