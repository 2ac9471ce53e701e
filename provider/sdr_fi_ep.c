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
 * Messages.  A message goes in parts of at most ep->part bytes, each
 * one sdr message: a send joins its flow's queue, and while the flow has a
 * free send slot the queue's oldest send copies its next part, behind a
 * header (kind, tag, CQ data, the message's length, the sender's listener
 * port), into it and posts it.  A part's completion (sdr's: the receiver
 * has every byte) frees its slot; the last one reports the send.  So the
 * application's buffer is read until its send completes (FI_INJECT: a
 * copy is), and a flow's parts arrive in the order of its messages.
 *
 * A flow's parts are taken in the order they were sent (the n-th receive
 * of a flow holds its n-th part, and the oldest is taken first), each
 * checked against what may come next.  A message's first part is matched
 * against the posted receives (FI_MSG: the oldest; FI_TAGGED: the oldest
 * whose tag matches under its ignore bits; FI_DIRECTED_RECV: from the
 * endpoint named, the flow's peer address and the port its parts carry)
 * and it and the further parts are copied into the application's buffer.
 * A message no receive matches is copied out to the unexpected list (at
 * most SDR_FI_UNEXP_BYTES an endpoint; beyond, the flow waits with it in
 * its slot until a receive takes it or room is made), so its slots go
 * back to the flow at once.
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

/* fi_ext_sdr.h's policy ids are sdr's */
_Static_assert(FI_SDR_POLICY_SR == SDR_POLICY_SR &&
	       FI_SDR_POLICY_EC == SDR_POLICY_EC &&
	       FI_SDR_POLICY_ADAPTIVE == SDR_POLICY_ADAPTIVE &&
	       FI_SDR_POLICY_AUTO == SDR_POLICY_AUTO, "policy ids");

static struct sdr_fi_ep *ep_of(struct fid_ep *fep)
{
	return container_of(fep, struct sdr_fi_ep, ep);
}

/* ---- completions ---- */

static void report(struct sdr_fi_cq *cq, void *context, uint64_t flags,
		   size_t len, void *buf, uint64_t data, uint64_t tag,
		   fi_addr_t src)
{
	struct fi_cq_tagged_entry e = {
		.op_context = context, .flags = flags, .len = len,
		.buf = buf, .data = data, .tag = tag,
	};

	if (cq)
		sdr_fi_cq_push(cq, &e, src);
}

/*
 * FI_SOURCE: the sender of what came over @c, the peer's address (rdma_cm)
 * and listener port (its parts'), as the endpoint's AV has it.
 */
static fi_addr_t source_of(const struct sdr_fi_ep *ep, struct sdr_fi_conn *c)
{
	if (!ep->source || !ep->av)
		return FI_ADDR_NOTAVAIL;
	if (!c->src_known || c->src_gen != ep->av->gen) {
		c->src = sdr_fi_av_find(ep->av, &c->peer);
		c->src_gen = ep->av->gen;
		c->src_known = true;
	}
	return c->src;
}

/* FI_SOURCE: the sender of unexpected message @u (its flow may be gone). */
static fi_addr_t source_of_unexp(const struct sdr_fi_ep *ep,
				 const struct sdr_fi_unexp *u)
{
	if (!ep->source || !ep->av)
		return FI_ADDR_NOTAVAIL;
	return sdr_fi_av_find(ep->av, &u->peer);
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

/* A completed operation counts on the endpoint's counter, if bound. */
static void count(struct sdr_fi_cntr *c, bool failed)
{
	if (!c)
		return;
	if (failed)
		c->errors++;
	else
		c->value++;
}

/* ---- connection handles ---- */

/*
 * A completion's user_data: the connection's generation (high 32 bits),
 * its index in the domain's table and, for a send, the slot (low bits).
 * A connection reclaimed leaves its index empty, and the generation of
 * the next one there differs, so a late completion of its flow (the
 * FLUSHED ones its destruction makes) finds nothing.
 */
#define HANDLE_SLOT_BITS	4
_Static_assert(SDR_FI_SLOTS <= 1U << HANDLE_SLOT_BITS, "slot bits");

static uint64_t conn_handle(const struct sdr_fi_conn *c, uint32_t slot)
{
	return (uint64_t)c->gen << 32 |
	       (uint64_t)c->idx << HANDLE_SLOT_BITS | slot;
}

/* The connection completion @h names, and its slot, or NULL if gone. */
static struct sdr_fi_conn *conn_lookup(struct sdr_fi_domain *dom, uint64_t h,
				       uint32_t *slot)
{
	uint32_t idx = (uint32_t)h >> HANDLE_SLOT_BITS;
	struct sdr_fi_conn *c;

	c = idx < dom->conn_cap ? dom->conn_tab[idx] : NULL;
	if (!c || c->gen != (uint32_t)(h >> 32))
		return NULL;
	*slot = (uint32_t)h & ((1U << HANDLE_SLOT_BITS) - 1);
	return c;
}

/* Give @c a handle: an empty index of the table (grown if need be). */
static int conn_register(struct sdr_fi_domain *dom, struct sdr_fi_conn *c)
{
	uint32_t i;

	for (i = 0; i < dom->conn_cap; i++)
		if (!dom->conn_tab[i])
			break;
	if (i == dom->conn_cap) {
		uint32_t cap = dom->conn_cap ? 2 * dom->conn_cap : 16;
		struct sdr_fi_conn **t;

		if (cap > 1U << (32 - HANDLE_SLOT_BITS))
			return -FI_ENOMEM;
		t = realloc(dom->conn_tab, cap * sizeof(*t));
		if (!t)
			return -FI_ENOMEM;
		memset(t + dom->conn_cap, 0,
		       (cap - dom->conn_cap) * sizeof(*t));
		dom->conn_tab = t;
		dom->conn_cap = cap;
	}
	if (!++dom->conn_gen)
		dom->conn_gen = 1;	/* 0 is no connection's */
	c->idx = i;
	c->gen = dom->conn_gen;
	dom->conn_tab[i] = c;
	return 0;
}

static void conn_unregister(struct sdr_fi_domain *dom, struct sdr_fi_conn *c)
{
	if (c->gen && dom->conn_tab[c->idx] == c)
		dom->conn_tab[c->idx] = NULL;
	c->gen = 0;
}

/* @c failed: nothing more goes over it, and progress reclaims it. */
static void conn_dead(struct sdr_fi_conn *c)
{
	c->dead = true;
	c->ep->dom->reap = true;
}

/* ---- receiving ---- */

static bool tag_match(uint64_t a, uint64_t b, uint64_t ignore)
{
	return !((a ^ b) & ~ignore);
}

/* Does receive @op take message @h that came from @peer? */
static bool op_takes(const struct sdr_fi_op *op,
		     const struct sockaddr_in *peer, const struct sdr_fi_hdr *h)
{
	if ((h->op & SDR_FI_OP_MASK) == SDR_FI_OP_TAGGED &&
	    !tag_match(op->tag, h->tag, op->ignore))
		return false;
	return !op->directed ||
	       sdr_fi_same_addr(&op->from, peer);
}

/* A posted receive the message takes, unlinked, or NULL. */
static struct sdr_fi_op *match_posted(struct sdr_fi_ep *ep,
				      const struct sdr_fi_conn *c,
				      const struct sdr_fi_hdr *h)
{
	struct sdr_fi_op **pp = (h->op & SDR_FI_OP_MASK) == SDR_FI_OP_MSG ?
		&ep->posted_msg : &ep->posted_tag;
	struct sdr_fi_op *op;

	for (; (op = *pp); pp = &op->next) {
		if (!op_takes(op, &c->peer, h))
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
	ret = sdr_flow_recv_post(c->flow, conn_handle(c, 0), &h);
	if (ret)
		return ret;
	c->rq[(c->rq_head + c->nposted++) % SDR_FI_SLOTS] = h;
	return 0;
}

/*
 * Receive @op holds message @h whole (its bytes copied), from @src
 * (FI_SOURCE): report, free.
 */
static void recv_done(struct sdr_fi_ep *ep, struct sdr_fi_op *op,
		      const struct sdr_fi_hdr *h, fi_addr_t src)
{
	uint64_t flags = FI_RECV | ((h->op & SDR_FI_OP_MASK) ==
				    SDR_FI_OP_TAGGED ? FI_TAGGED : FI_MSG);

	if (h->op & SDR_FI_F_DATA)
		flags |= FI_REMOTE_CQ_DATA;
	count(ep->rx_cntr, h->len > op->len);
	if (h->len > op->len)
		report_err(ep->rx_cq, op->context, flags, FI_ETRUNC, 0,
			   op->len, h->len - op->len, h->tag);
	else if (op->report)
		report(ep->rx_cq, op->context, flags, h->len, op->buf,
		       h->op & SDR_FI_F_DATA ? h->data : 0, h->tag, src);
	free(op);
}

/* Copy message @h's bytes @data (all of them) into @op and report. */
static void deliver(struct sdr_fi_ep *ep, struct sdr_fi_op *op,
		    const struct sdr_fi_hdr *h, const void *data,
		    fi_addr_t src)
{
	memcpy(op->buf, data, h->len < op->len ? h->len : op->len);
	recv_done(ep, op, h, src);
}

/* Receive @op fails with @err (the message it took will not come whole). */
static void recv_fail(struct sdr_fi_ep *ep, struct sdr_fi_op *op, int err)
{
	count(ep->rx_cntr, true);
	report_err(ep->rx_cq, op->context, op->flags, err, 0, 0, 0, op->tag);
	free(op);
}

/*
 * Keep the flow's receives posted.  sdr posts a flow's receives in ring
 * order, so while an older message still holds its slot (kept,
 * unexpected) the next post waits (-EAGAIN) until that one is released.
 */
static void conn_refill(struct sdr_fi_conn *c)
{
	while (!c->dead && c->nposted < SDR_FI_SLOTS) {
		int ret = conn_post(c);

		if (ret == -EAGAIN)
			break;
		if (ret)
			conn_dead(c);
	}
}

/* The message of receive @rh is no longer needed: recycle its slot. */
static void recycle(struct sdr_fi_conn *c, struct sdr_recv *rh)
{
	sdr_recv_release(rh);
	conn_refill(c);
}

/* What unexpected message @u holds of the endpoint's SDR_FI_UNEXP_BYTES. */
static uint64_t unexp_cost(const struct sdr_fi_hdr *h)
{
	return sizeof(struct sdr_fi_unexp) + h->len;
}

/* Free unexpected message @u (off every list) and its copy. */
static void unexp_free(struct sdr_fi_ep *ep, struct sdr_fi_unexp *u)
{
	ep->unexp_bytes -= unexp_cost(&u->h);
	free(u->heap);
	free(u);
}

/* Unlink @u from @list if it is there. */
static bool unexp_unlink(struct sdr_fi_unexp **list, struct sdr_fi_unexp *u)
{
	for (; *list; list = &(*list)->next)
		if (*list == u) {
			*list = u->next;
			return true;
		}
	return false;
}

/*
 * Receive @op takes unexpected message @u (unlinked by the caller): now if
 * it is whole, else when its last part comes.  @op NULL: it is discarded.
 */
static void unexp_take(struct sdr_fi_ep *ep, struct sdr_fi_unexp *u,
		       struct sdr_fi_op *op)
{
	if (u->got < u->h.len) {
		u->taken = true;
		u->taker = op;
		return;
	}
	if (op)
		deliver(ep, op, &u->h, u->heap, source_of_unexp(ep, u));
	unexp_free(ep, u);
}

/*
 * Flow @c broke (failed, went, or its peer broke the protocol): nothing
 * more is taken from it, and the message whose parts were coming fails.
 */
static void rx_fail(struct sdr_fi_conn *c)
{
	struct sdr_fi_ep *ep = c->ep;
	struct sdr_fi_unexp *u = c->cur_u;

	conn_dead(c);
	if (c->cur_op)
		recv_fail(ep, c->cur_op, FI_EIO);
	c->cur_op = NULL;
	c->cur_u = NULL;
	if (!u)
		return;
	if (u->taken) {
		if (u->taker)
			recv_fail(ep, u->taker, FI_EIO);
	} else if (!unexp_unlink(&ep->unexp, u)) {
		unexp_unlink(&ep->claimed, u);
	}
	unexp_free(ep, u);
}

/* Where the record after one of @n bytes (header and all) at @off starts. */
static uint32_t rec_next(uint32_t off, uint64_t n)
{
	return (uint32_t)((off + n + 7) & ~7ULL);
}

/*
 * Is the record @h at @off of a part of @n bytes what @c may carry next?
 * The sender's port, once learned, never changes; a first part comes
 * only when no message is under way, a further one only when one is (and
 * alone in its part), and each part is as long as the message's length
 * says; a record with another behind it (SDR_FI_F_MORE) and the records
 * after the first are whole messages, the last one ending the part.
 * Returns the record's bytes (without its header), or -1.
 */
static int64_t rec_ok(struct sdr_fi_conn *c, const struct sdr_fi_hdr *h,
		      uint32_t n, uint32_t off)
{
	uint32_t part = c->ep->part;
	uint64_t left, room;

	if (n < SDR_FI_HDR || n > SDR_FI_HDR + part ||
	    off > n - SDR_FI_HDR || h->magic != SDR_FI_MAGIC ||
	    ((h->op & SDR_FI_OP_MASK) != SDR_FI_OP_MSG &&
	     (h->op & SDR_FI_OP_MASK) != SDR_FI_OP_TAGGED) ||
	    (h->op & ~(uint32_t)(SDR_FI_OP_MASK | SDR_FI_F_DATA |
				 SDR_FI_F_CONT | SDR_FI_F_MORE)) ||
	    !h->port || (c->port_known && h->port != c->peer.sin_port))
		return -1;
	room = n - off - SDR_FI_HDR;
	if (h->op & SDR_FI_F_CONT) {
		if (off || (h->op & SDR_FI_F_MORE) || (!c->cur_op && !c->cur_u))
			return -1;
		left = c->cur.len - c->cur_got;
		return room == (left < part ? left : part) ?
			(int64_t)room : -1;
	}
	if (c->cur_op || c->cur_u || h->len > c->ep->max_msg)
		return -1;
	if (h->op & SDR_FI_F_MORE)
		/* whole, with room for the next record's header after it */
		return h->len <= room &&
		       rec_next(off, SDR_FI_HDR + h->len) + SDR_FI_HDR <= n ?
			(int64_t)h->len : -1;
	if (off)
		return h->len == room ? (int64_t)room : -1;
	return room == (h->len < part ? h->len : part) ?
		(int64_t)room : -1;
}

/* A further part, @n bytes at @data, of the message under way on @c. */
static void rx_cont(struct sdr_fi_conn *c, const void *data, uint32_t n)
{
	struct sdr_fi_ep *ep = c->ep;
	struct sdr_fi_unexp *u = c->cur_u;
	struct sdr_fi_op *op = c->cur_op;

	if (op) {
		if (c->cur_got < op->len)
			memcpy((uint8_t *)op->buf + c->cur_got, data,
			       op->len - c->cur_got < n ?
			       op->len - c->cur_got : n);
	} else {
		memcpy(u->heap + c->cur_got, data, n);
		u->got += n;
	}
	c->cur_got += n;
	if (c->cur_got < c->cur.len)
		return;
	/* the last part: the message is whole */
	c->cur_op = NULL;
	c->cur_u = NULL;
	if (op) {
		recv_done(ep, op, &c->cur, source_of(ep, c));
	} else {
		u->conn = NULL;		/* whole: its flow may go */
		if (u->taken)
			unexp_take(ep, u, u->taker);
	}
}

/*
 * A message's first record, @n bytes after its header @h: into a receive
 * that takes it, or copied out to the unexpected list (its further parts
 * following it there) until one is posted.  Returns false if it must stay
 * in its slot for now: a message that finds no room (SDR_FI_UNEXP_BYTES,
 * or no memory) waits there, holding its flow, until a receive takes it
 * or room is made.
 */
static bool rx_first(struct sdr_fi_conn *c, const struct sdr_fi_hdr *h,
		     uint32_t n)
{
	struct sdr_fi_ep *ep = c->ep;
	struct sdr_fi_unexp *u, **pp;
	struct sdr_fi_op *op;
	const void *data = h + 1;

	op = match_posted(ep, c, h);
	if (op && h->len == n) {
		deliver(ep, op, h, data, source_of(ep, c));
		return true;
	}
	if (op) {
		memcpy(op->buf, data, op->len < n ? op->len : n);
		c->cur = *h;
		c->cur_got = n;
		c->cur_op = op;
		return true;
	}
	if (ep->unexp_bytes + unexp_cost(h) > SDR_FI_UNEXP_BYTES)
		return false;
	u = calloc(1, sizeof(*u));
	if (!u)
		return false;
	u->heap = malloc(h->len ? h->len : 1);
	if (!u->heap) {
		free(u);
		return false;
	}
	ep->unexp_bytes += unexp_cost(h);
	u->peer = c->peer;
	u->h = *h;
	memcpy(u->heap, data, n);
	u->got = n;
	if (n < h->len) {
		/* its further parts follow */
		u->conn = c;
		c->cur = *h;
		c->cur_got = n;
		c->cur_u = u;
	}
	for (pp = &ep->unexp; *pp; pp = &(*pp)->next)
		;
	*pp = u;
	return true;
}

/* The oldest receive of @c is done with: off the ring, its slot recycled. */
static void rx_pop(struct sdr_fi_conn *c, struct sdr_recv *rh)
{
	c->rq_head = (c->rq_head + 1) % SDR_FI_SLOTS;
	c->nposted--;
	c->rx_off = 0;
	recycle(c, rh);
}

/*
 * Take the records of the part in @c's oldest receive @rh, @n bytes, from
 * c->rx_off on.  Returns false if one must wait in its slot (rx_first()).
 */
static bool rx_records(struct sdr_fi_conn *c, const uint8_t *part, uint32_t n)
{
	for (;;) {
		const struct sdr_fi_hdr *h = (const void *)(part + c->rx_off);
		int64_t len = rec_ok(c, h, n, c->rx_off);

		if (len < 0) {
			rx_fail(c);
			return true;
		}
		if (!c->port_known) {
			c->peer.sin_port = h->port;
			c->port_known = true;
		}
		if (h->op & SDR_FI_F_CONT)
			rx_cont(c, h + 1, (uint32_t)len);
		else if (!rx_first(c, h, (uint32_t)len))
			return false;
		if (!(h->op & SDR_FI_F_MORE))
			return true;
		c->rx_off = rec_next(c->rx_off, SDR_FI_HDR + (uint64_t)len);
	}
}

/* Take the parts of @c that are complete, in the order they were sent. */
static void conn_rx_advance(struct sdr_fi_conn *c)
{
	c->stalled = false;
	while (c->nposted && !c->dead) {
		struct sdr_recv *rh = c->rq[c->rq_head];
		uint32_t status, imm, len;

		if (sdr_recv_poll(rh, &status))
			break;		/* the oldest is not complete yet */
		if (status == SDR_STATUS_PARTIAL &&
		    c->ep->type == FI_EP_DGRAM) {
			/* policy NONE lost some of it: the datagrams go */
			rx_pop(c, rh);
			continue;
		}
		if (status != SDR_STATUS_OK || sdr_recv_imm(rh, &imm, &len)) {
			/* failed or gone: done with the flow (no repost) */
			rx_fail(c);
			rx_pop(c, rh);
			break;
		}
		if (!rx_records(c, sdr_recv_data(rh), len)) {
			/* it stays the oldest until there is room */
			c->stalled = true;
			break;
		}
		rx_pop(c, rh);
	}
}

/* Flows that wait for a receive or for room: try them again. */
static void rx_unstall(struct sdr_fi_ep *ep)
{
	struct sdr_fi_conn *c;

	for (c = ep->conns; c; c = c->next)
		if (c->stalled)
			conn_rx_advance(c);
}

/* ---- sending ---- */

/* Send @op is over (every part complete, or failed): report and free. */
static void send_finish(struct sdr_fi_op *op)
{
	struct sdr_fi_ep *ep = op->conn->ep;
	struct sdr_fi_op **pp;

	for (pp = &ep->tx_ops; *pp; pp = &(*pp)->next)
		if (*pp == op) {
			*pp = op->next;
			break;
		}
	ep->tx_inflight--;
	count(ep->tx_cntr, op->err);
	if (op->err && (op->report || op->context))
		report_err(ep->tx_cq, op->context, op->flags, op->err,
			   op->prov_errno, 0, 0, op->tag);
	else if (op->err) {
		/* an inject has no context to report with: say it here */
		char to[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &op->conn->peer.sin_addr, to, sizeof(to));
		fprintf(stderr, "libsdr-fi: %s: a send of %zu bytes to %s:%u failed: %s\n",
			ep->dom->dev, op->len, to,
			ntohs(op->conn->peer.sin_port), fi_strerror(op->err));
	}
	else if (op->report)
		report(ep->tx_cq, op->context, op->flags, 0, NULL, 0, 0,
		       FI_ADDR_NOTAVAIL);
	free(op->owned);
	free(op);
}

/* ---- groups (FI_OPT_SDR_GROUP) ---- */

/* Close @g in sdr (its members all posted) and forget it. */
static void group_close(struct sdr_fi_ep *ep, struct sdr_fi_group *g)
{
	struct sdr_fi_group **pp;

	sdr_group_close(ep->dom->ctx, g->id);
	for (pp = &ep->groups; *pp; pp = &(*pp)->next)
		if (*pp == g) {
			*pp = g->next;
			break;
		}
	free(g);
}

/* Send @op left its flow's queue (wholly posted, or failed): its group. */
static void group_posted(struct sdr_fi_ep *ep, struct sdr_fi_op *op)
{
	struct sdr_fi_group *g = op->grp;

	op->grp = NULL;
	if (g && !--g->unposted && g->closing)
		group_close(ep, g);
}

/* The application closes the open group: in sdr once its sends are out. */
static void group_end(struct sdr_fi_ep *ep)
{
	struct sdr_fi_group *g = ep->grp;

	if (!g)
		return;
	ep->grp = NULL;
	g->closing = true;
	if (!g->unposted)
		group_close(ep, g);
}

/* Open a group the endpoint's next sends join (closing the open one). */
static int group_begin(struct sdr_fi_ep *ep)
{
	struct sdr_fi_group *g = calloc(1, sizeof(*g));
	int ret;

	if (!g)
		return -FI_ENOMEM;
	group_end(ep);
	ret = sdr_group_open(ep->dom->ctx, 0, &g->id);
	if (ret) {
		free(g);
		return ret;
	}
	g->next = ep->groups;
	ep->groups = g;
	ep->grp = g;
	return 0;
}

/* ---- sending ---- */

/* Write send @op's next @n bytes, behind their header, at @h. */
static void rec_put(const struct sdr_fi_conn *c, struct sdr_fi_hdr *h,
		    const struct sdr_fi_op *op, size_t n)
{
	h->magic = SDR_FI_MAGIC;
	h->op = op->kind | (op->started ? SDR_FI_F_CONT : 0);
	h->port = c->ep->name.sin_port;
	h->tag = op->tag;
	h->data = op->data;
	h->len = op->len;
	memcpy(h + 1, (const uint8_t *)op->buf + op->off, n);
}

/* Is a part of @c's sends in flight (posted, its completion not seen)? */
static bool conn_inflight(const struct sdr_fi_conn *c)
{
	return c->free_slots != (1U << SDR_FI_SLOTS) - 1;
}

/*
 * Post the queued sends' parts while @c has free slots.  A part holds the
 * next part of the oldest send; if that is a whole message, the whole
 * messages queued behind it join it while they fit in SDR_FI_BATCH bytes
 * (a batch: records back to back, each completing when the part does).
 */
static void tx_pump(struct sdr_fi_conn *c)
{
	struct sdr_fi_op *op;

	while ((op = c->txq)) {
		size_t n = op->len - op->off;
		struct sdr_fi_op *last = op, *b;
		uint32_t slot = 0, seq, bytes, off = 0;
		uint8_t *base;
		int ret = 0;

		if (!c->dead && !c->free_slots)
			break;
		if (!c->dead) {
			if (n > c->ep->part)
				n = c->ep->part;
			slot = (uint32_t)__builtin_ctz(c->free_slots);
			base = sdr_send_slot(c->flow, slot);
			rec_put(c, (struct sdr_fi_hdr *)base, op, n);
			bytes = SDR_FI_HDR + (uint32_t)n;
			/* (a send behind the oldest has not started) */
			while (!op->started && (b = last->qnext) &&
			       b->grp == op->grp &&
			       rec_next(bytes, 0) + SDR_FI_HDR + b->len <=
			       SDR_FI_BATCH) {
				((struct sdr_fi_hdr *)(base + off))->op |=
					SDR_FI_F_MORE;
				off = rec_next(bytes, 0);
				rec_put(c, (struct sdr_fi_hdr *)(base + off),
					b, b->len);
				bytes = off + SDR_FI_HDR + (uint32_t)b->len;
				last = b;
			}
			/* the part joins its sends' group (or none) */
			if (c->group != (op->grp ? op->grp->id : 0)) {
				c->group = op->grp ? op->grp->id : 0;
				sdr_flow_set_group(c->flow, c->group);
			}
			ret = sdr_flow_send_post(c->flow,
						 (uint64_t)slot * c->stride,
						 bytes, 0,
						 conn_handle(c, slot),
						 &seq);
			if (ret == -EAGAIN)
				break;	/* a completion comes and pumps */
			if ((ret == -EPIPE || ret == -ENOTCONN) &&
			    !op->started && !conn_inflight(c)) {
				/*
				 * The flow ended (its peer closed it) after
				 * its last part completed: nothing of this
				 * send went.  Queued on a dead connection it
				 * fails when that goes, unless do_send()
				 * takes it to a new flow first.
				 */
				c->ended = true;
				conn_dead(c);
				op->prov_errno = -ret;
				break;
			}
			if (ret) {
				conn_dead(c);
				op->prov_errno = -ret;
			}
		}
		if (c->dead) {
			/* the flow is gone: this send and those after fail */
			if (!op->err)
				op->err = FI_EIO;
			last = op;
		} else {
			c->free_slots &= ~(1U << slot);
			c->slot_op[slot] = op;
			op->bnext = op == last ? NULL : op->qnext;
			op->parts++;
			op->started = true;
			op->off += n;
			if (op->off < op->len)
				continue;
			/* the batch's others: wholly posted, in this part */
			for (b = op->bnext; b; b = b == last ? NULL : b->qnext) {
				b->bnext = b == last ? NULL : b->qnext;
				b->parts = 1;
				b->started = true;
				b->off = b->len;
				b->queued = false;
			}
		}
		for (b = op; b; b = b == last ? NULL : b->qnext)
			group_posted(c->ep, b);
		c->txq = last->qnext;
		op->queued = false;
		if (!op->parts)
			send_finish(op);
	}
	if (!c->txq)
		c->txq_tail = &c->txq;
}

/* The part in @c's send slot @slot is complete (or failed): its sends. */
static void send_done(struct sdr_fi_conn *c, uint32_t slot, uint32_t status)
{
	struct sdr_fi_op *op = c->slot_op[slot], *next;

	c->slot_op[slot] = NULL;
	c->free_slots |= 1U << slot;
	for (; op; op = next) {
		next = op->bnext;
		op->bnext = NULL;
		op->parts--;
		if (status != SDR_STATUS_OK) {
			conn_dead(c);
			if (!op->err) {
				op->err = FI_EIO;
				op->prov_errno = (int)status;
			}
		}
		if (!op->parts && !op->queued)
			send_finish(op);
	}
	tx_pump(c);
}

static void conn_drop(struct sdr_fi_conn *c);

/* The dead connections of @dom's endpoints go, failing what was on them. */
static void conns_reap_dead(struct sdr_fi_domain *dom)
{
	uint32_t i;

	dom->reap = false;
	for (i = 0; i < dom->conn_cap; i++) {
		struct sdr_fi_conn *c = dom->conn_tab[i];

		if (c && c->dead && !c->connecting)
			conn_drop(c);
	}
}

void sdr_fi_progress(struct sdr_fi_domain *dom)
{
	struct sdr_completion comp[32];
	int64_t now = 0;
	int n, i;

	while ((n = sdr_poll_cq(dom->ctx, comp, 32)) > 0) {
		now = sdr_fi_now_ms();
		for (i = 0; i < n; i++) {
			struct sdr_fi_conn *c;
			uint32_t slot;

			/* a flow destroyed: what was on it already failed */
			if (!comp[i].flow)
				continue;
			c = conn_lookup(dom, comp[i].user_data, &slot);
			if (!c || c->flow != comp[i].flow)
				continue;
			c->last_ms = now;
			if (comp[i].type == SDR_CQE_SEND)
				send_done(c, slot, comp[i].status);
			else if (comp[i].type == SDR_CQE_RECV)
				conn_rx_advance(c);
		}
		if (n < 32)
			break;
	}
	if (dom->reap)
		conns_reap_dead(dom);
}

/* ---- connections ---- */

static int flow_new(struct sdr_fi_ep *ep, struct sdr_fi_conn *c)
{
	struct sdr_flow_attr attr = {
		.policy = ep->policy,
		.max_msg_size = SDR_FI_HDR + ep->part,
		.max_msgs = SDR_FI_SLOTS,
		.ec_k = ep->ec_k,
		.ec_m = ep->ec_m,
	};
	struct sdr_flow_props props;

	c->flow = sdr_flow_create(ep->dom->ctx, &attr);
	if (!c->flow)
		return -errno;
	sdr_flow_props(c->flow, &props);
	c->stride = props.slot_stride;
	c->free_slots = (1U << SDR_FI_SLOTS) - 1;
	c->ep = ep;
	c->txq_tail = &c->txq;
	return 0;
}

/* Packets the flow of @c moved, both ways, as the kernel counts them. */
static uint64_t conn_pkts(const struct sdr_fi_conn *c)
{
	struct sdr_flow_info info;

	memset(&info, 0, sizeof(info));
	if (sdr_flow_info(c->flow, &info))
		return 0;
	return info.tx_packets + info.rx_packets;
}


/* Destroy @c (off every list, unregistered) and its flow. */
static void conn_free(struct sdr_fi_conn *c)
{
	if (c->flow)
		sdr_flow_destroy(c->flow);	/* frees its receives */
	free(c);
}

/* Does the application wait for anything on @c (a send, a receive)? */
static bool conn_busy(const struct sdr_fi_conn *c)
{
	return c->connecting || c->txq || conn_inflight(c) ||
	       c->cur_op || c->cur_u;
}

/* What the listener's thread sees of a connection (conn_look()). */
enum conn_state {
	CONN_BUSY,	/* the application's, or a part it has not taken */
	CONN_QUIET,	/* nothing on it */
	CONN_GONE,	/* nothing on it, and its receives failed */
};

/*
 * Is @c quiet: nothing of the application's on it, and no part arrived
 * that progress has not taken yet (a receive complete in the state area,
 * or one waiting for room)?  Gone, too, if its receives failed (the peer
 * closed the flow or went) though progress has not seen it yet.
 */
static enum conn_state conn_look(const struct sdr_fi_conn *c)
{
	uint32_t i, status;
	bool failed = false;

	if (conn_busy(c) || c->stalled)
		return CONN_BUSY;
	for (i = 0; i < c->nposted; i++) {
		if (sdr_recv_poll(c->rq[(c->rq_head + i) % SDR_FI_SLOTS],
				  &status))
			continue;
		if (status == SDR_STATUS_OK || status == SDR_STATUS_PARTIAL)
			return CONN_BUSY;
		failed = true;
	}
	return failed ? CONN_GONE : CONN_QUIET;
}

/*
 * Reclaim @c: what the application posted on it fails (FI_EIO error
 * completions: a part in flight, the sends queued behind it, the receive
 * its parts were filling), then the flow is destroyed (the peer is told)
 * and its regions go back to the kernel.  A message it brought whole
 * stays on the unexpected list, its own now.
 */
static void conn_drop(struct sdr_fi_conn *c)
{
	struct sdr_fi_ep *ep = c->ep;
	struct sdr_fi_conn **pp;
	uint32_t slot;

	rx_fail(c);
	for (slot = 0; slot < SDR_FI_SLOTS; slot++)
		if (c->slot_op[slot])
			send_done(c, slot, SDR_STATUS_FLUSHED);
	tx_pump(c);		/* dead: the queued sends fail */
	for (pp = &ep->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (!c->tx)
		ep->nr_accepted--;
	ep->reclaimed++;
	conn_unregister(ep->dom, c);
	conn_free(c);
}

/*
 * The listener thread's look at @ep's connections: a dead one goes once
 * the application waits for nothing on it (else its progress drops it,
 * failing what is), a quiet one once idle_ms passed in which the provider
 * saw nothing on it and the kernel counted no packet of its flow over the
 * second half (a long message still arriving moves those counters before
 * the provider sees anything of it; the first half may hold the last
 * ACKs).  No completion is made here: the application sleeps on the
 * device's file, not on this thread.
 */
static void conns_reap(struct sdr_fi_ep *ep, int64_t now)
{
	struct sdr_fi_conn *c, *next;

	for (c = ep->conns; c; c = next) {
		int64_t idle = now - c->last_ms;
		enum conn_state st;
		uint64_t pkts;

		next = c->next;
		if (c->dead) {
			if (!conn_busy(c))
				conn_drop(c);
			continue;
		}
		st = conn_look(c);
		if (st == CONN_GONE) {
			conn_drop(c);
			continue;
		}
		if (!ep->idle_ms || idle < ep->idle_ms / 2 || st != CONN_QUIET)
			continue;
		if (c->pkts_ms <= c->last_ms) {
			/* halfway: the counters the second half starts at */
			c->last_pkts = conn_pkts(c);
			c->pkts_ms = now;
			continue;
		}
		if (idle < ep->idle_ms)
			continue;
		pkts = conn_pkts(c);
		if (pkts != c->last_pkts) {
			c->last_ms = now;	/* traffic: it starts over */
			continue;
		}
		conn_drop(c);
	}
}

/*
 * Does the listener take connection request @req?  Called under the
 * domain's lock for every request, before anything is allocated for it;
 * the checks of who may connect belong here: the request came in on the
 * endpoint's device, its peer holds the job's secret when the domain's
 * context names one (SDR_SECRET_FILE, SDR_SECRET: sdr_cm_check(), which
 * asks the kernel and makes nothing), and the endpoint holds fewer than
 * max_peers accepted connections (dead ones reclaimed first).  Returns 0,
 * or a negative errno: the request is refused (rejected on the wire).
 */
static int sdr_fi_req_admit(struct sdr_fi_ep *ep, struct sdr_cm *req)
{
	const char *dev = sdr_cm_device(req);
	int ret;

	if (!dev || strcmp(dev, ep->dom->dev))
		return -EXDEV;
	ret = sdr_cm_check(req, ep->dom->ctx);
	if (ret) {
		ep->refused++;
		return ret;
	}
	if (ep->nr_accepted >= ep->max_peers) {
		ep->refused++;
		return -EBUSY;
	}
	return 0;
}

/* Accept @req (admitted) with a new flow, receives posted: 0 or -errno. */
static int cm_accept(struct sdr_fi_ep *ep, struct sdr_cm *req)
{
	struct sdr_fi_conn *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return -ENOMEM;
	/* an address to know it by; its listener's port its first part says */
	ret = sdr_cm_peer(req, &c->peer);
	if (ret) {
		free(c);
		return ret;
	}
	c->peer.sin_port = 0;
	ret = conn_register(ep->dom, c);
	if (ret) {
		free(c);
		return ret;
	}
	ret = flow_new(ep, c);
	if (ret) {
		conn_unregister(ep->dom, c);
		free(c);
		return ret;
	}
	/* failing, sdr_cm_accept() rejects the peer itself */
	ret = sdr_cm_accept(req, c->flow);
	while (!ret && c->nposted < SDR_FI_SLOTS)
		ret = conn_post(c);
	if (ret) {
		conn_unregister(ep->dom, c);
		conn_free(c);
		return ret;
	}
	c->last_ms = sdr_fi_now_ms();
	c->next = ep->conns;
	ep->conns = c;
	ep->nr_accepted++;
	return 0;
}

/*
 * The listener's thread: admit each peer's request (sdr_fi_req_admit())
 * and accept it with a flow, and reap dead and idle connections.
 */
static void *cm_thread(void *arg)
{
	struct sdr_fi_ep *ep = arg;
	struct sdr_fi_domain *dom = ep->dom;

	for (;;) {
		struct sdr_cm *req;
		int64_t now;
		bool stop;
		int ret;

		pthread_mutex_lock(&dom->lock);
		stop = ep->cm_stop;
		now = sdr_fi_now_ms();
		if (!stop && now >= ep->reap_at) {
			conns_reap(ep, now);
			ep->reap_at = now + SDR_FI_REAP_MS;
		}
		pthread_mutex_unlock(&dom->lock);
		if (stop)
			break;
		ret = sdr_cm_get_request(ep->listener, SDR_FI_REAP_MS, &req);
		if (ret == -ETIMEDOUT || ret == -EPROTO || ret == -EINTR)
			continue;
		if (ret) {
			fprintf(stderr, "libsdr-fi: %s: listener: %s\n",
				dom->dev, strerror(-ret));
			break;
		}
		pthread_mutex_lock(&dom->lock);
		/* dead connections make room first */
		conns_reap(ep, sdr_fi_now_ms());
		ret = sdr_fi_req_admit(ep, req);
		if (ret)
			sdr_cm_reject(req);
		else
			cm_accept(ep, req);
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
	int64_t end, left;
	int ret;

	for (c = ep->conns; c; c = c->next)
		if (c->tx && !c->dead && sdr_fi_same_addr(&c->peer, to))
			break;
	if (c && c->connecting)
		return -FI_EAGAIN;
	if (c) {
		/*
		 * Its flow may have ended since (the peer closed it): the
		 * next part's post says so, and do_send() connects anew.
		 */
		*out = c;
		return 0;
	}
	/* refused there for a whole connect's time just now: no waiting again */
	if (ep->refused_until > sdr_fi_now_ms() &&
	    sdr_fi_same_addr(&ep->refused_at, to))
		return -FI_EHOSTUNREACH;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	ret = conn_register(dom, c);
	if (ret) {
		free(c);
		return ret;
	}
	ret = flow_new(ep, c);
	if (ret) {
		conn_unregister(dom, c);
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
	/*
	 * Refused: nothing listens at that port (yet: a peer still starting
	 * its endpoint), or its listener turned the request away.  Asked
	 * again until SDR_FI_CONNECT_MS is up.
	 */
	end = sdr_fi_now_ms() + SDR_FI_CONNECT_MS;
	for (;;) {
		left = end - sdr_fi_now_ms();
		ret = -ETIMEDOUT;
		if (left <= 0)
			break;
		ret = sdr_cm_resolve(src, dst, ntohs(to->sin_port), (int)left,
				     &cm);
		if (!ret) {
			left = end - sdr_fi_now_ms();
			ret = sdr_cm_connect(cm, c->flow, left > 0 ? (int)left : 1);
			sdr_cm_destroy(cm);
		}
		if (ret != -ECONNREFUSED ||
		    sdr_fi_now_ms() + SDR_FI_RETRY_MS >= end)
			break;
		usleep(SDR_FI_RETRY_MS * 1000);
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
		conn_unregister(dom, c);
		conn_free(c);
		if (ret == -ECONNREFUSED) {
			ep->refused_at = *to;
			ep->refused_until = sdr_fi_now_ms() + SDR_FI_CONNECT_MS;
		}
		return ret == -ETIMEDOUT || ret == -ECONNREFUSED ?
			-FI_EHOSTUNREACH : ret;
	}
	c->last_ms = sdr_fi_now_ms();
	*out = c;
	return 0;
}

/* ---- sending ---- */

/* Send @op joins @c's queue, behind its earlier sends (parts go in order). */
static void send_queue(struct sdr_fi_ep *ep, struct sdr_fi_conn *c,
		       struct sdr_fi_op *op)
{
	op->conn = c;
	op->queued = true;
	*c->txq_tail = op;
	c->txq_tail = &op->qnext;
	op->next = ep->tx_ops;
	ep->tx_ops = op;
	ep->tx_inflight++;
	tx_pump(c);
}

/* Send @op, @c's only queued one and not started, leaves it again. */
static void send_unqueue(struct sdr_fi_ep *ep, struct sdr_fi_conn *c,
			 struct sdr_fi_op *op)
{
	struct sdr_fi_op **pp;

	c->txq = NULL;
	c->txq_tail = &c->txq;
	op->qnext = NULL;
	op->queued = false;
	op->conn = NULL;
	op->prov_errno = 0;
	for (pp = &ep->tx_ops; *pp; pp = &(*pp)->next)
		if (*pp == op) {
			*pp = op->next;
			break;
		}
	ep->tx_inflight--;
}

/*
 * A send of @len bytes at @buf to @dest.  @flags: the call's (fi_sendmsg)
 * or the endpoint's default operation flags (fi_send and the like);
 * FI_INJECT copies the buffer before return.  @inject_call: fi_inject and
 * the like, which never report a completion (fi_msg(3)).
 */
static ssize_t do_send(struct sdr_fi_ep *ep, const void *buf, size_t len,
		       fi_addr_t dest, void *context, uint32_t op_kind,
		       uint64_t tag, uint64_t data, uint64_t flags,
		       bool inject_call)
{
	struct sdr_fi_domain *dom = ep->dom;
	struct sockaddr_in to;
	struct sdr_fi_conn *c;
	struct sdr_fi_op *op;
	void *owned = NULL;
	bool fresh;
	ssize_t ret;

	if (flags & ~(uint64_t)SEND_FLAGS)
		return -FI_EBADFLAGS;
	if (len > ep->max_msg)
		return -FI_EMSGSIZE;
	if ((flags & FI_INJECT) && len > SDR_FI_INJECT)
		return -FI_EMSGSIZE;
	if (!buf && len)
		return -FI_EINVAL;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -FI_ENOMEM;
	if (flags & FI_INJECT) {
		/* the buffer is the caller's again on return: a copy goes */
		owned = malloc(len ? len : 1);
		if (!owned) {
			free(op);
			return -FI_ENOMEM;
		}
		memcpy(owned, buf, len);
		buf = owned;
	}
	pthread_mutex_lock(&dom->lock);
	if (!ep->enabled) {
		ret = -FI_EOPBADSTATE;
		goto fail;
	}
	if (sdr_fi_av_get(ep->av, dest, &to)) {
		ret = -FI_EINVAL;
		goto fail;
	}
	if (ep->tx_inflight >= SDR_FI_TX_SIZE) {
		sdr_fi_progress(dom);
		if (ep->tx_inflight >= SDR_FI_TX_SIZE) {
			ret = -FI_EAGAIN;
			goto fail;
		}
	}
	ret = tx_conn(ep, &to, &c);
	if (ret)
		goto fail;
	op->context = context;
	op->buf = (void *)buf;
	op->len = len;
	op->owned = owned;
	op->flags = FI_SEND | (op_kind == SDR_FI_OP_TAGGED ? FI_TAGGED : FI_MSG);
	op->tag = tag;
	op->data = data;
	op->kind = (uint16_t)(op_kind |
			      (flags & FI_REMOTE_CQ_DATA ? SDR_FI_F_DATA : 0));
	op->grp = ep->grp;
	if (op->grp)
		op->grp->unposted++;
	op->report = !inject_call &&
		     (!(ep->tx_flags & FI_SELECTIVE_COMPLETION) ||
		      (flags & FI_COMPLETION));
	fresh = !conn_busy(c);
	send_queue(ep, c, op);
	if (fresh && c->ended && c->txq == op) {
		/*
		 * The flow ended since its last send (the peer endpoint
		 * closed; another may listen at its address now) and this
		 * send, its only one, did not start: it goes on a new
		 * flow, as a first send to that address does.
		 */
		send_unqueue(ep, c, op);
		conn_drop(c);
		ret = tx_conn(ep, &to, &c);
		if (ret) {
			group_posted(ep, op);
			goto fail;
		}
		send_queue(ep, c, op);
	}
	pthread_mutex_unlock(&dom->lock);
	return 0;
fail:
	pthread_mutex_unlock(&dom->lock);
	free(owned);
	free(op);
	return ret;
}

static ssize_t ep_send(struct fid_ep *fep, const void *buf, size_t len,
		       void *desc, fi_addr_t dest, void *context)
{
	(void)desc;
	return do_send(ep_of(fep), buf, len, dest, context, SDR_FI_OP_MSG, 0,
		       0, ep_of(fep)->tx_flags & ~FI_SELECTIVE_COMPLETION,
		       false);
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
		       flags, false);
}

static ssize_t ep_inject(struct fid_ep *fep, const void *buf, size_t len,
			 fi_addr_t dest)
{
	return do_send(ep_of(fep), buf, len, dest, NULL, SDR_FI_OP_MSG, 0, 0,
		       FI_INJECT, true);
}

static ssize_t ep_senddata(struct fid_ep *fep, const void *buf, size_t len,
			   void *desc, uint64_t data, fi_addr_t dest,
			   void *context)
{
	(void)desc;
	return do_send(ep_of(fep), buf, len, dest, context, SDR_FI_OP_MSG, 0,
		       data, FI_REMOTE_CQ_DATA |
		       (ep_of(fep)->tx_flags & ~FI_SELECTIVE_COMPLETION), false);
}

static ssize_t ep_injectdata(struct fid_ep *fep, const void *buf, size_t len,
			     uint64_t data, fi_addr_t dest)
{
	return do_send(ep_of(fep), buf, len, dest, NULL, SDR_FI_OP_MSG, 0,
		       data, FI_INJECT | FI_REMOTE_CQ_DATA, true);
}

static ssize_t ep_tsend(struct fid_ep *fep, const void *buf, size_t len,
			void *desc, fi_addr_t dest, uint64_t tag,
			void *context)
{
	(void)desc;
	return do_send(ep_of(fep), buf, len, dest, context, SDR_FI_OP_TAGGED,
		       tag, 0, ep_of(fep)->tx_flags & ~FI_SELECTIVE_COMPLETION,
		       false);
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
		       msg->data, flags, false);
}

static ssize_t ep_tinject(struct fid_ep *fep, const void *buf, size_t len,
			  fi_addr_t dest, uint64_t tag)
{
	return do_send(ep_of(fep), buf, len, dest, NULL, SDR_FI_OP_TAGGED,
		       tag, 0, FI_INJECT, true);
}

static ssize_t ep_tsenddata(struct fid_ep *fep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest,
			    uint64_t tag, void *context)
{
	(void)desc;
	return do_send(ep_of(fep), buf, len, dest, context, SDR_FI_OP_TAGGED,
		       tag, data, FI_REMOTE_CQ_DATA |
		       (ep_of(fep)->tx_flags & ~FI_SELECTIVE_COMPLETION), false);
}

static ssize_t ep_tinjectdata(struct fid_ep *fep, const void *buf,
			      size_t len, uint64_t data, fi_addr_t dest,
			      uint64_t tag)
{
	return do_send(ep_of(fep), buf, len, dest, NULL, SDR_FI_OP_TAGGED,
		       tag, data, FI_INJECT | FI_REMOTE_CQ_DATA, true);
}

/* ---- posting receives ---- */

static ssize_t do_recv(struct sdr_fi_ep *ep, void *buf, size_t len,
		       fi_addr_t src, void *context, bool tagged,
		       uint64_t tag, uint64_t ignore, uint64_t flags)
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
	if (ep->directed && src != FI_ADDR_UNSPEC) {
		if (sdr_fi_av_get(ep->av, src, &op->from)) {
			ret = -FI_EINVAL;
			goto fail;
		}
		op->directed = true;
	}
	sdr_fi_progress(dom);
	/* a message already here that this receive takes */
	for (up = &ep->unexp; (u = *up); up = &u->next) {
		bool t = (u->h.op & SDR_FI_OP_MASK) == SDR_FI_OP_TAGGED;

		if (t != tagged || !op_takes(op, &u->peer, &u->h))
			continue;
		*up = u->next;
		unexp_take(ep, u, op);
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
	if (!ret)
		rx_unstall(ep);		/* a message waiting may be its */
	pthread_mutex_unlock(&dom->lock);
	return ret;
}

static ssize_t ep_recv(struct fid_ep *fep, void *buf, size_t len, void *desc,
		       fi_addr_t src, void *context)
{
	(void)desc;
	return do_recv(ep_of(fep), buf, len, src, context, false, 0, 0,
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
		       msg->addr, msg->context, false, 0, 0, flags);
}

static ssize_t ep_trecv(struct fid_ep *fep, void *buf, size_t len,
			void *desc, fi_addr_t src, uint64_t tag,
			uint64_t ignore, void *context)
{
	(void)desc;
	return do_recv(ep_of(fep), buf, len, src, context, true, tag, ignore,
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
	struct sdr_fi_op probe = {
		.tag = msg->tag, .ignore = msg->ignore,
	};
	ssize_t ret = 0;

	if ((flags & (FI_PEEK | FI_CLAIM)) == 0 ||
	    ((flags & FI_DISCARD) && !(flags & (FI_PEEK | FI_CLAIM))))
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&ep->dom->lock);
	if (!ep->enabled) {
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	if (ep->directed && msg->addr != FI_ADDR_UNSPEC) {
		if (sdr_fi_av_get(ep->av, msg->addr, &probe.from)) {
			ret = -FI_EINVAL;
			goto out;
		}
		probe.directed = true;
	}
	sdr_fi_progress(ep->dom);
	if (flags & FI_PEEK) {
		for (up = &ep->unexp; (u = *up); up = &u->next)
			if ((u->h.op & SDR_FI_OP_MASK) == SDR_FI_OP_TAGGED &&
			    op_takes(&probe, &u->peer, &u->h))
				break;
		if (!u) {
			report_err(ep->rx_cq, msg->context, cflags, FI_ENOMSG,
				   0, 0, 0, msg->tag);
			goto out;
		}
		if (u->h.op & SDR_FI_F_DATA)
			cflags |= FI_REMOTE_CQ_DATA;
		report(ep->rx_cq, msg->context, cflags, u->h.len, NULL,
		       u->h.op & SDR_FI_F_DATA ? u->h.data : 0, u->h.tag,
		       source_of_unexp(ep, u));
		if (flags & (FI_CLAIM | FI_DISCARD)) {
			*up = u->next;
			if (flags & FI_DISCARD) {
				unexp_take(ep, u, NULL);
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
		report(ep->rx_cq, msg->context, cflags, 0, NULL, 0, u->h.tag,
		       source_of_unexp(ep, u));
		unexp_take(ep, u, NULL);
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
		unexp_take(ep, u, op);
	}
out:
	if (!ret)
		rx_unstall(ep);		/* room may have been made */
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
		       msg->addr, msg->context, true, msg->tag, msg->ignore,
		       flags);
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
			recv_fail(ep, op, FI_ECANCELED);
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
	struct sdr_fi_ep *ep = container_of(fid, struct sdr_fi_ep, ep.fid);
	uint32_t v;

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->dom->lock);
	switch (optname) {
	case FI_OPT_SDR_POLICY:
		v = ep->policy;
		break;
	case FI_OPT_SDR_EC_K:
		v = ep->ec_k;
		break;
	case FI_OPT_SDR_EC_M:
		v = ep->ec_m;
		break;
	case FI_OPT_SDR_GROUP:
		v = ep->grp ? ep->grp->id : 0;
		break;
	case FI_OPT_SDR_MAX_PEERS:
		v = ep->max_peers;
		break;
	case FI_OPT_SDR_IDLE_MS:
		v = ep->idle_ms;
		break;
	case FI_OPT_SDR_PEERS:
		v = ep->nr_accepted;
		break;
	case FI_OPT_SDR_REFUSED:
		v = ep->refused;
		break;
	case FI_OPT_SDR_RECLAIMED:
		v = ep->reclaimed;
		break;
	default:
		pthread_mutex_unlock(&ep->dom->lock);
		return -FI_ENOPROTOOPT;
	}
	pthread_mutex_unlock(&ep->dom->lock);
	if (*optlen < sizeof(v)) {
		*optlen = sizeof(v);
		return -FI_ETOOSMALL;
	}
	memcpy(optval, &v, sizeof(v));
	*optlen = sizeof(v);
	return 0;
}

/* Is @v an EC k (@m: an m) this machine's sdr takes?  0: its default. */
static bool ec_ok(uint32_t v, bool m)
{
	struct sdr_caps caps;

	if (!v)
		return true;
	if (sdr_query(NULL, &caps))
		return false;
	return v <= (m ? caps.ec_max_m : caps.ec_max_k);
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval,
		     size_t optlen)
{
	struct sdr_fi_ep *ep = container_of(fid, struct sdr_fi_ep, ep.fid);
	uint32_t v;
	int ret = 0;

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (optname == FI_OPT_SDR_PEERS || optname == FI_OPT_SDR_REFUSED ||
	    optname == FI_OPT_SDR_RECLAIMED)
		return -FI_EINVAL;	/* counters, read only */
	if (optname != FI_OPT_SDR_POLICY && optname != FI_OPT_SDR_EC_K &&
	    optname != FI_OPT_SDR_EC_M && optname != FI_OPT_SDR_GROUP &&
	    optname != FI_OPT_SDR_MAX_PEERS && optname != FI_OPT_SDR_IDLE_MS)
		return -FI_ENOPROTOOPT;
	if (!optval || optlen != sizeof(v))
		return -FI_EINVAL;
	memcpy(&v, optval, sizeof(v));
	if ((optname == FI_OPT_SDR_EC_K || optname == FI_OPT_SDR_EC_M) &&
	    !ec_ok(v, optname == FI_OPT_SDR_EC_M))
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->dom->lock);
	switch (optname) {
	case FI_OPT_SDR_POLICY:
		/* RDM: a reliable policy; DGRAM stays NONE */
		if (ep->enabled)
			ret = -FI_EOPBADSTATE;
		else if (ep->type != FI_EP_RDM || v == SDR_POLICY_NONE ||
			 v >= SDR_POLICY_NR)
			ret = -FI_EINVAL;
		else
			ep->policy = v;
		break;
	case FI_OPT_SDR_EC_K:
	case FI_OPT_SDR_EC_M:
		if (ep->enabled)
			ret = -FI_EOPBADSTATE;
		else if (optname == FI_OPT_SDR_EC_K)
			ep->ec_k = (uint8_t)v;
		else
			ep->ec_m = (uint8_t)v;
		break;
	case FI_OPT_SDR_MAX_PEERS:
	case FI_OPT_SDR_IDLE_MS:
		if (ep->enabled)
			ret = -FI_EOPBADSTATE;
		else if (optname == FI_OPT_SDR_MAX_PEERS)
			ep->max_peers = v;
		else
			ep->idle_ms = v;
		break;
	default:	/* FI_OPT_SDR_GROUP */
		if (!ep->enabled)
			ret = -FI_EOPBADSTATE;
		else if (v > 1)
			ret = -FI_EINVAL;
		else if (v)
			ret = group_begin(ep);
		else
			group_end(ep);
		break;
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
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
			ep->tx_flags |= flags & FI_SELECTIVE_COMPLETION;
			cq->refs++;
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			ep->rx_flags |= flags & FI_SELECTIVE_COMPLETION;
			cq->refs++;
		}
		break;
	}
	case FI_CLASS_CNTR: {
		struct sdr_fi_cntr *c = container_of(bfid, struct sdr_fi_cntr,
						     cntr.fid);

		/* completions of sends (FI_SEND) and receives (FI_RECV) */
		if (c->dom != ep->dom ||
		    (flags & ~(uint64_t)(FI_SEND | FI_RECV)) ||
		    !(flags & (FI_SEND | FI_RECV)) ||
		    ((flags & FI_SEND) && ep->tx_cntr) ||
		    ((flags & FI_RECV) && ep->rx_cntr)) {
			ret = -FI_EINVAL;
			break;
		}
		if (flags & FI_SEND) {
			ep->tx_cntr = c;
			c->refs++;
		}
		if (flags & FI_RECV) {
			ep->rx_cntr = c;
			c->refs++;
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
	/*
	 * The messages kept: their slots go with the flows below; a copy
	 * out, and one whose parts were coming (taken: on no list), is freed.
	 */
	for (c = ep->conns; c; c = c->next) {
		free(c->cur_op);
		if (c->cur_u && c->cur_u->taken) {
			free(c->cur_u->taker);
			free(c->cur_u->heap);
			free(c->cur_u);
		}
	}
	while ((u = ep->unexp)) {
		ep->unexp = u->next;
		free(u->heap);
		free(u);
	}
	while ((u = ep->claimed)) {
		ep->claimed = u->next;
		free(u->heap);
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
		free(op->owned);
		free(op);
	}
	while ((c = ep->conns)) {
		ep->conns = c->next;
		conn_unregister(dom, c);
		conn_free(c);
	}
	/* the groups: closed in sdr, open or waiting for members */
	ep->grp = NULL;
	while (ep->groups)
		group_close(ep, ep->groups);
	if (ep->tx_cq)
		ep->tx_cq->refs--;
	if (ep->rx_cq)
		ep->rx_cq->refs--;
	if (ep->tx_cntr)
		ep->tx_cntr->refs--;
	if (ep->rx_cntr)
		ep->rx_cntr->refs--;
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

/*
 * Listen on the device's address: at the port @info's src_addr names (the
 * service fi_getinfo() was given with FI_SOURCE), or else on a free port
 * of the dynamic range.  A src_addr of another address is -FI_EINVAL; a
 * named port in use, -FI_EADDRINUSE.
 */
static int ep_listen(struct sdr_fi_ep *ep, const struct fi_info *info)
{
	const struct sockaddr_in *src = info->src_addr;
	char ip[INET_ADDRSTRLEN];
	unsigned int seed = (unsigned int)time(NULL) ^ (unsigned int)getpid() ^
			    (unsigned int)(uintptr_t)ep;
	uint16_t port = 0;
	int i, ret = -EADDRINUSE;

	if (src) {
		if (info->src_addrlen < sizeof(*src) ||
		    src->sin_family != AF_INET ||
		    (src->sin_addr.s_addr != INADDR_ANY &&
		     src->sin_addr.s_addr != ep->dom->ip.s_addr))
			return -FI_EINVAL;
		port = ntohs(src->sin_port);
	}
	inet_ntop(AF_INET, &ep->dom->ip, ip, sizeof(ip));
	for (i = 0; i < 64 && ret == -EADDRINUSE; i++) {
		uint16_t p = port ? port :
			     (uint16_t)(49152 + rand_r(&seed) % 16384);

		ret = sdr_cm_listen(ip, p, &ep->listener);
		if (!ret) {
			ep->name.sin_family = AF_INET;
			ep->name.sin_port = htons(p);
			ep->name.sin_addr = ep->dom->ip;
		}
		if (port)
			break;
	}
	return ret;
}

/* FI_SDR_EC_K or FI_SDR_EC_M (@name) into @v: -1 if it is not one. */
static int env_ec(const char *name, uint8_t *v, bool m)
{
	const char *s = getenv(name);
	unsigned long n;
	char *end;

	if (!s || !*s)
		return 0;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || n > 255 || !ec_ok((uint32_t)n, m)) {
		fprintf(stderr, "libsdr-fi: %s=%s: not an EC %s this sdr takes (0, or 1 to sdrctl caps' ec_max_%s)\n",
			name, s, m ? "m" : "k", m ? "m" : "k");
		return -1;
	}
	*v = (uint8_t)n;
	return 0;
}

/*
 * FI_SDR_MAX_PEERS or FI_SDR_IDLE_MS (@name) into @v, if set: -1 if it is
 * not a number up to @max.
 */
static int env_u32(const char *name, uint32_t max, uint32_t *v)
{
	const char *s = getenv(name);
	unsigned long n;
	char *end;

	if (!s || !*s)
		return 0;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || *s == '-' || n > max) {
		fprintf(stderr, "libsdr-fi: %s=%s: not a number 0..%u\n",
			name, s, max);
		return -1;
	}
	*v = (uint32_t)n;
	return 0;
}

int sdr_fi_endpoint(struct fid_domain *domain, struct fi_info *info,
		    struct fid_ep **out, void *context)
{
	struct sdr_fi_domain *dom = container_of(domain, struct sdr_fi_domain,
						 domain);
	const char *pol = getenv("FI_SDR_POLICY");
	struct sdr_fi_ep *ep;
	int ret;

	if (!info || !info->ep_attr || (info->ep_attr->type != FI_EP_RDM &&
					info->ep_attr->type != FI_EP_DGRAM))
		return -FI_EINVAL;
	if (info->caps & ~(uint64_t)SDR_FI_CAPS)
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->dom = dom;
	ep->type = info->ep_attr->type;
	ep->directed = info->caps & FI_DIRECTED_RECV;
	ep->source = info->caps & FI_SOURCE;
	/* the default operation flags: with FI_SELECTIVE_COMPLETION, whether
	 * fi_send() and the like report */
	if (info->tx_attr)
		ep->tx_flags = info->tx_attr->op_flags & SDR_FI_TX_OP_FLAGS;
	if (info->rx_attr)
		ep->rx_flags = info->rx_attr->op_flags & FI_COMPLETION;
	ep->max_peers = SDR_FI_MAX_PEERS;
	ep->idle_ms = SDR_FI_IDLE_MS;
	if (env_ec("FI_SDR_EC_K", &ep->ec_k, false) ||
	    env_ec("FI_SDR_EC_M", &ep->ec_m, true) ||
	    env_u32("FI_SDR_MAX_PEERS", UINT32_MAX, &ep->max_peers) ||
	    env_u32("FI_SDR_IDLE_MS", INT32_MAX, &ep->idle_ms)) {
		free(ep);
		return -FI_EINVAL;
	}
	if (ep->type == FI_EP_DGRAM) {
		/* unreliable: policy NONE, a message one part */
		ep->policy = SDR_POLICY_NONE;
		ep->max_msg = SDR_FI_DGRAM_MAX_MSG;
		ep->part = SDR_FI_PART_DGRAM;
	} else {
		ep->policy = SDR_POLICY_SR;
		ep->max_msg = SDR_FI_MAX_MSG;
		ep->part = SDR_FI_PART_RDM;
		if (pol && *pol && (sdr_policy_parse(pol, &ep->policy) ||
				    ep->policy == SDR_POLICY_NONE)) {
			/* FI_EP_RDM is reliable: NONE is no policy for it */
			fprintf(stderr, "libsdr-fi: FI_SDR_POLICY=%s: not a reliable sdr policy\n",
				pol);
			free(ep);
			return -FI_EINVAL;
		}
	}
	ret = ep_listen(ep, info);
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
