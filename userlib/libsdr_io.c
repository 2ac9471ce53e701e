// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr: the data path - posting sends and receives, draining the
 * completion ring, reading receive state and bitmaps in place.
 *
 * Memory ordering follows uapi/sdr.h: the kernel stores the ring tail and
 * every bitmap bit with release semantics after the data they cover, so
 * each is loaded here with acquire before the entry / bytes are read; the
 * ring head is stored with release after the entries were copied out.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libsdr_int.h"

/* ---- sends ---- */

void *sdr_send_buf(struct sdr_flow *flow, size_t *len)
{
	if (!flow) {
		errno = EINVAL;
		return NULL;
	}
	if (len)
		*len = flow->send_size;
	return flow->send_map;
}

void *sdr_send_slot(struct sdr_flow *flow, uint32_t i)
{
	if (!flow || i >= flow->props.max_msgs) {
		errno = EINVAL;
		return NULL;
	}
	return flow->send_map + (size_t)i * flow->props.slot_stride;
}

static int send_ioctl(struct sdr_flow *flow, uint32_t flags, uint64_t addr,
		      uint64_t len, uint64_t msg_len, uint32_t imm,
		      uint64_t user_data, uint32_t *seq)
{
	struct sdr_send_post p;
	int ret;

	if (!flow)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.flags = flags;
	p.flow_id = flow->props.flow_id;
	p.imm = imm;
	p.addr = addr;
	p.len = len;
	p.msg_len = msg_len;
	p.user_data = user_data;
	if (flags & (SDR_SEND_STREAM_CONT | SDR_SEND_STREAM_END))
		p.seq = *seq;
	ret = sdr__ioctl(flow->ctx->fd, SDR_IOC_SEND_POST, &p);
	if (!ret && seq && !(flags & (SDR_SEND_STREAM_CONT | SDR_SEND_STREAM_END)))
		*seq = p.seq;
	return ret;
}

int sdr_send_post(struct sdr_flow *flow, uint64_t off, uint64_t len,
		  uint32_t imm, uint64_t user_data, uint32_t *seq)
{
	return send_ioctl(flow, 0, off, len, 0, imm, user_data, seq);
}

int sdr_send_post_ptr(struct sdr_flow *flow, const void *ptr, uint64_t len,
		      uint32_t imm, uint64_t user_data, uint32_t *seq)
{
	return send_ioctl(flow, SDR_SEND_USER_PTR, (uintptr_t)ptr, len, 0, imm,
			  user_data, seq);
}

int sdr_send_stream_start(struct sdr_flow *flow, uint64_t msg_len,
			  uint64_t addr, uint64_t len, uint32_t flags,
			  uint32_t imm, uint64_t user_data, uint32_t *seq)
{
	if (flags & ~SDR_SEND_USER_PTR)
		return -EINVAL;
	return send_ioctl(flow, flags | SDR_SEND_STREAM_START, addr, len,
			  msg_len, imm, user_data, seq);
}

int sdr_send_stream_continue(struct sdr_flow *flow, uint32_t seq,
			     uint64_t addr, uint64_t len, uint32_t flags)
{
	if (flags & ~SDR_SEND_USER_PTR)
		return -EINVAL;
	return send_ioctl(flow, flags | SDR_SEND_STREAM_CONT, addr, len, 0, 0,
			  0, &seq);
}

int sdr_send_stream_end(struct sdr_flow *flow, uint32_t seq,
			uint64_t addr, uint64_t len, uint32_t flags)
{
	if (flags & ~SDR_SEND_USER_PTR)
		return -EINVAL;
	return send_ioctl(flow, flags | SDR_SEND_STREAM_END, addr, len, 0, 0,
			  0, &seq);
}

/* ---- the completion ring and the backlog ---- */

static int backlog_push(struct sdr_backlog *b, const struct sdr_completion *c)
{
	if (b->tail - b->head == b->cap) {
		uint32_t ncap = b->cap ? b->cap * 2 : 256, i, n = b->tail - b->head;
		struct sdr_completion *ne = malloc(ncap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		for (i = 0; i < n; i++)
			ne[i] = b->ent[(b->head + i) & (b->cap - 1)];
		free(b->ent);
		b->ent = ne;
		b->cap = ncap;
		b->head = 0;
		b->tail = n;
	}
	b->ent[b->tail++ & (b->cap - 1)] = *c;
	return 0;
}

/* Drop consumed (type 0) entries at the front. */
static void backlog_trim(struct sdr_backlog *b)
{
	while (b->head != b->tail && !b->ent[b->head & (b->cap - 1)].type)
		b->head++;
}

void sdr__backlog_drop_flow(struct sdr_ctx *ctx, struct sdr_flow *flow)
{
	struct sdr_backlog *b = &ctx->backlog;
	uint32_t i;

	for (i = b->head; i != b->tail; i++) {
		struct sdr_completion *c = &b->ent[i & (b->cap - 1)];

		if (c->flow == flow) {
			c->flow = NULL;
			c->recv = NULL;
		}
	}
}

static void cqe_convert(struct sdr_ctx *ctx, const struct sdr_cqe *e,
			struct sdr_completion *c)
{
	memset(c, 0, sizeof(*c));
	c->user_data = e->user_data;
	c->flow_id = e->flow_id;
	c->seq = e->seq;
	c->slot = e->slot;
	c->len = e->len;
	c->imm = e->imm;
	c->type = e->type;
	c->status = e->status;
	c->flow = sdr__flow_by_id(ctx, e->flow_id);
	if (c->flow && c->type == SDR_CQE_RECV &&
	    c->slot < c->flow->props.max_msgs) {
		struct sdr_recv *h = &c->flow->recvs[c->slot];

		if (h->posted && h->seq == c->seq)
			c->recv = h;
	}
}

/*
 * Take ring entries into out (all of them, or only the sends of flow
 * "only").  Entries not taken are parked in the backlog for whoever asks
 * later: sends of a live flow always (its sdr_send_poll or sdr_poll_cq),
 * the rest only once sdr_poll_cq has been used on the context; otherwise
 * they are dropped - a receive's outcome is also in the state area.
 */
static int ring_drain(struct sdr_ctx *ctx, struct sdr_completion *out, int max,
		      const struct sdr_flow *only)
{
	uint32_t head = *ctx->ring_head, tail;
	int n = 0;

	tail = __atomic_load_n(ctx->ring_tail, __ATOMIC_ACQUIRE);
	while (head != tail && n < max) {
		struct sdr_completion c;

		cqe_convert(ctx, &ctx->cqes[head & ctx->ring_mask], &c);
		if (!only || (c.type == SDR_CQE_SEND && c.flow == only)) {
			out[n++] = c;
		} else if (ctx->cq_polled || (c.type == SDR_CQE_SEND && c.flow)) {
			if (backlog_push(&ctx->backlog, &c))
				break;	/* keep it in the ring */
		}
		head++;
	}
	/* Entries are copied out: hand the ring space back. */
	__atomic_store_n(ctx->ring_head, head, __ATOMIC_RELEASE);
	return n;
}

int sdr_poll_cq(struct sdr_ctx *ctx, struct sdr_completion *out, int max)
{
	struct sdr_backlog *b;
	int n = 0;

	if (!ctx || !out || max < 0)
		return -EINVAL;
	ctx->cq_polled = true;
	b = &ctx->backlog;
	while (b->head != b->tail && n < max) {
		struct sdr_completion *c = &b->ent[b->head++ & (b->cap - 1)];

		if (c->type)
			out[n++] = *c;
	}
	backlog_trim(b);
	if (n < max)
		n += ring_drain(ctx, out + n, max - n, NULL);
	return n;
}

int sdr_send_poll(struct sdr_flow *flow, struct sdr_completion *out, int max)
{
	struct sdr_backlog *b;
	uint32_t i;
	int n = 0;

	if (!flow || !out || max < 0)
		return -EINVAL;
	b = &flow->ctx->backlog;
	for (i = b->head; i != b->tail && n < max; i++) {
		struct sdr_completion *c = &b->ent[i & (b->cap - 1)];

		if (c->type == SDR_CQE_SEND && c->flow == flow) {
			out[n++] = *c;
			c->type = 0;
		}
	}
	backlog_trim(b);
	if (n < max)
		n += ring_drain(flow->ctx, out + n, max - n, flow);
	return n;
}

static int ring_ready(struct sdr_ctx *ctx)
{
	if (ctx->cq_polled && ctx->backlog.head != ctx->backlog.tail)
		return 1;
	return __atomic_load_n(ctx->ring_tail, __ATOMIC_ACQUIRE) != *ctx->ring_head;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int sdr_wait(struct sdr_ctx *ctx, int timeout_ms)
{
	int64_t deadline;
	struct pollfd pfd;

	if (!ctx)
		return -EINVAL;
	deadline = timeout_ms < 0 ? INT64_MAX : now_ms() + timeout_ms;
	for (;;) {
		int64_t left;
		int ret;

		if (ring_ready(ctx))
			return 0;
		left = deadline == INT64_MAX ? -1 : deadline - now_ms();
		if (deadline != INT64_MAX && left <= 0)
			return -ETIMEDOUT;
		pfd.fd = ctx->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		ret = poll(&pfd, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret > 0 && (pfd.revents & (POLLERR | POLLNVAL)))
			return -ENODEV;
		if (ret > 0 && !ring_ready(ctx)) {
			/*
			 * Readable but nothing in the ring (a spurious wakeup,
			 * or a device without poll support reporting always
			 * ready): back off briefly instead of spinning.
			 */
			struct timespec ts = { 0, 200 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
}

/* ---- receives ---- */

int sdr_recv_post(struct sdr_flow *flow, uint64_t user_data,
		  struct sdr_recv **handle)
{
	struct sdr_recv_post p;
	struct sdr_recv *h;
	int ret;

	if (!flow || !handle)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.flow_id = flow->props.flow_id;
	p.user_data = user_data;
	ret = sdr__ioctl(flow->ctx->fd, SDR_IOC_RECV_POST, &p);
	if (ret)
		return ret;
	if (p.slot >= flow->props.max_msgs)
		return -EPROTO;
	h = &flow->recvs[p.slot];
	h->seq = p.seq;
	h->gen = p.gen;
	h->user_data = user_data;
	h->posted = true;
	*handle = h;
	return 0;
}

static int recv_check(const struct sdr_recv *h)
{
	if (!h)
		return -EINVAL;
	if (!h->posted)
		return -ESTALE;
	return 0;
}

/* The slot's flags with acquire: imm, msg_len, chunks valid once STARTED. */
static int recv_started(const struct sdr_recv *h)
{
	uint32_t flags;
	int ret = recv_check(h);

	if (ret)
		return ret;
	flags = __atomic_load_n(&h->state->flags, __ATOMIC_ACQUIRE);
	if (!(flags & SDR_RECV_F_STARTED))
		return -EAGAIN;
	if (h->state->seq != h->seq)
		return -ESTALE;
	return 0;
}

int sdr_recv_imm_get(struct sdr_recv *h, uint32_t *imm, uint32_t *msg_len)
{
	int ret = recv_started(h);

	if (ret)
		return ret;
	if (imm)
		*imm = h->state->imm;
	if (msg_len)
		*msg_len = h->state->msg_len;
	return 0;
}

int sdr_recv_bitmap_get(struct sdr_recv *h, const uint64_t **bitmap,
			uint32_t *chunks)
{
	int ret = recv_started(h);

	if (ret)
		return ret;
	if (bitmap)
		*bitmap = h->chunk_bm;
	if (chunks)
		*chunks = h->state->chunks;
	return 0;
}

int sdr_recv_chunk_done(struct sdr_recv *h, uint32_t chunk)
{
	uint64_t w;
	int ret = recv_started(h);

	if (ret)
		return ret;
	if (chunk >= h->state->chunks)
		return -EINVAL;
	w = __atomic_load_n(&h->chunk_bm[chunk / 64], __ATOMIC_ACQUIRE);
	return (int)((w >> (chunk % 64)) & 1);
}

int sdr_recv_chunk_expand(struct sdr_recv *h, uint32_t chunk,
			  uint64_t *pkt_bits, uint32_t nwords, uint32_t *npkts)
{
	const struct sdr_flow_props *fp;
	uint32_t per, first, n, i, wi = UINT32_MAX;
	uint64_t w = 0;
	int ret = recv_started(h);

	if (ret)
		return ret;
	if (chunk >= h->state->chunks || !pkt_bits)
		return -EINVAL;
	fp = &h->flow->props;
	per = fp->chunk_size / fp->payload;
	first = chunk * per;
	n = h->state->packets - first;
	if (n > per)
		n = per;
	if ((uint64_t)nwords * 64 < n)
		return -ENOSPC;
	memset(pkt_bits, 0, (size_t)nwords * sizeof(*pkt_bits));
	for (i = 0; i < n; i++) {
		uint32_t p = first + i;

		if (p / 64 != wi) {
			wi = p / 64;
			w = __atomic_load_n(&h->pkt_bm[wi], __ATOMIC_ACQUIRE);
		}
		if ((w >> (p % 64)) & 1)
			pkt_bits[i / 64] |= 1ULL << (i % 64);
	}
	if (npkts)
		*npkts = n;
	return 0;
}

const void *sdr_recv_data(const struct sdr_recv *h)
{
	if (!h) {
		errno = EINVAL;
		return NULL;
	}
	return h->data;
}

int sdr_recv_poll(struct sdr_recv *h, uint32_t *status)
{
	int ret = recv_check(h);

	if (ret)
		return ret;
	if (__atomic_load_n(&h->state->state, __ATOMIC_ACQUIRE) != SDR_RECV_DONE)
		return -EAGAIN;
	if (h->state->seq != h->seq)
		return -ESTALE;
	if (status)
		*status = __atomic_load_n(&h->state->status, __ATOMIC_ACQUIRE);
	return 0;
}

const struct sdr_recv_state *sdr_recv_state(const struct sdr_recv *h)
{
	return h ? h->state : NULL;
}

uint32_t sdr_recv_seq(const struct sdr_recv *h)
{
	return h ? h->seq : 0;
}

uint32_t sdr_recv_slot(const struct sdr_recv *h)
{
	return h ? h->slot : 0;
}

uint64_t sdr_recv_user_data(const struct sdr_recv *h)
{
	return h ? h->user_data : 0;
}

int sdr_recv_complete(struct sdr_recv *h)
{
	struct sdr_recv_complete c;
	int ret = recv_check(h);

	if (ret)
		return ret;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flow_id = h->flow->props.flow_id;
	c.slot = h->slot;
	c.seq = h->seq;
	ret = sdr__ioctl(h->flow->ctx->fd, SDR_IOC_RECV_COMPLETE, &c);
	if (!ret || ret == -ESTALE)
		h->posted = false;
	return ret;
}
