// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_ring: a context's completion ring - mapping it at the offsets the
 * bind returned, draining it, the backlog of completions taken off it for
 * someone else, and waiting for it (sdr_poll_cq, sdr_flow_send_poll,
 * sdr_group_poll, sdr_wait, sdr_group_wait).
 * Calls only libsdr_sys.c.
 *
 * Memory ordering follows uapi/sdr_uapi.h: the kernel stores the ring tail with
 * release semantics after the entries it covers, so it is loaded here with
 * acquire before an entry is read; the ring head is stored with release
 * after the entries were copied out.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "libsdr_ring.h"
#include "libsdr_sys.h"

/* ---- mapping ---- */

int sdr__ring_map(struct sdr_ctx *ctx, const struct sdr_bind *b)
{
	const struct sdr_ring_offsets *o = &b->ring;
	uint64_t cq_end;
	void *p;

	/* Trust but check: every offset must land inside the mapping. */
	cq_end = (uint64_t)o->cqes + (uint64_t)b->cq_entries * sizeof(struct sdr_cqe);
	if (!b->ring_size || b->ring_size > SIZE_MAX ||
	    o->head + 4ULL > b->ring_size || o->tail + 4ULL > b->ring_size ||
	    o->overflow + 4ULL > b->ring_size || cq_end > b->ring_size ||
	    !b->cq_entries || (b->cq_entries & (b->cq_entries - 1)) ||
	    (o->head | o->tail | o->overflow) & 3 || o->cqes & 7)
		return -EPROTO;

	p = mmap(NULL, b->ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 ctx->fd, (off_t)b->ring_offset);
	if (p == MAP_FAILED)
		return -errno;
	ctx->ring_map = p;
	ctx->ring_size = b->ring_size;
	ctx->ring_head = (uint32_t *)(ctx->ring_map + o->head);
	ctx->ring_tail = (const uint32_t *)(ctx->ring_map + o->tail);
	ctx->ring_overflow = (const uint32_t *)(ctx->ring_map + o->overflow);
	ctx->cqes = (const struct sdr_cqe *)(ctx->ring_map + o->cqes);
	ctx->ring_mask = b->cq_entries - 1;
	return 0;
}

/* Last, once the flows are gone: destroying a flow walks the backlog. */
void sdr__ring_unmap(struct sdr_ctx *ctx)
{
	if (ctx->ring_map)
		munmap(ctx->ring_map, ctx->ring_size);
	free(ctx->backlog.ent);
}

/* ---- the backlog ---- */

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

/*
 * A flow being destroyed: its parked completions stay (sdr_poll_cq still
 * reports them) but no longer point at the flow or its receive handles.
 */
void sdr__ring_drop_flow(struct sdr_ctx *ctx, struct sdr_flow *flow)
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

/* ---- draining ---- */

static struct sdr_flow *flow_by_id(struct sdr_ctx *ctx, uint32_t id)
{
	struct sdr_flow *f;

	for (f = ctx->flows; f; f = f->next)
		if (f->props.flow_id == id)
			return f;
	return NULL;
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
	c->flow = c->type == SDR_CQE_GROUP ? NULL : flow_by_id(ctx, e->flow_id);
	if (c->flow && c->type == SDR_CQE_RECV &&
	    c->slot < c->flow->props.max_msgs) {
		struct sdr_recv *h = &c->flow->recvs[c->slot];

		if (h->posted && h->seq == c->seq)
			c->recv = h;
	}
}

/* What a drain takes: everything, a flow's sends, or a group's entry. */
struct ring_want {
	const struct sdr_flow *flow;	/* its sends */
	uint32_t group;			/* its SDR_CQE_GROUP entry */
};

static bool ring_wants(const struct ring_want *w, const struct sdr_completion *c)
{
	if (!w)
		return true;
	if (w->flow)
		return c->type == SDR_CQE_SEND && c->flow == w->flow;
	return c->type == SDR_CQE_GROUP && c->seq == w->group;
}

/*
 * Take ring entries into out (all of them, or only what @want names).
 * Entries not taken are parked in the backlog for whoever asks later:
 * sends of a live flow and groups' entries always (their sdr_flow_send_poll,
 * sdr_group_poll or sdr_poll_cq), the rest only once sdr_poll_cq has been
 * used on the context; otherwise they are dropped - a receive's outcome
 * is also in the state area.
 */
static int ring_drain(struct sdr_ctx *ctx, struct sdr_completion *out, int max,
		      const struct ring_want *want)
{
	uint32_t head = *ctx->ring_head, tail;
	int n = 0;

	tail = __atomic_load_n(ctx->ring_tail, __ATOMIC_ACQUIRE);
	while (head != tail && n < max) {
		struct sdr_completion c;

		cqe_convert(ctx, &ctx->cqes[head & ctx->ring_mask], &c);
		if (ring_wants(want, &c)) {
			out[n++] = c;
		} else if (ctx->cq_polled || c.type == SDR_CQE_GROUP ||
			   (c.type == SDR_CQE_SEND && c.flow)) {
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

/* What @want names, from the backlog first and then the ring. */
static int poll_want(struct sdr_ctx *ctx, const struct ring_want *want,
		     struct sdr_completion *out, int max)
{
	struct sdr_backlog *b = &ctx->backlog;
	uint32_t i;
	int n = 0;

	for (i = b->head; i != b->tail && n < max; i++) {
		struct sdr_completion *c = &b->ent[i & (b->cap - 1)];

		if (c->type && ring_wants(want, c)) {
			out[n++] = *c;
			c->type = 0;
		}
	}
	backlog_trim(b);
	if (n < max)
		n += ring_drain(ctx, out + n, max - n, want);
	return n;
}

int sdr_flow_send_poll(struct sdr_flow *flow, struct sdr_completion *out,
		       int max)
{
	struct ring_want w = { .flow = flow };

	if (!flow || !out || max < 0)
		return -EINVAL;
	return poll_want(flow->ctx, &w, out, max);
}

int sdr_group_poll(struct sdr_ctx *ctx, uint32_t group,
		   struct sdr_completion *out)
{
	struct ring_want w = { .group = group };

	if (!ctx || !group || !out)
		return -EINVAL;
	return poll_want(ctx, &w, out, 1);
}

/* ---- waiting ---- */

/* The ring holds entries, or (@backlog) the backlog parked some. */
static int ring_ready(struct sdr_ctx *ctx, bool backlog)
{
	if (backlog && ctx->cq_polled && ctx->backlog.head != ctx->backlog.tail)
		return 1;
	return __atomic_load_n(ctx->ring_tail, __ATOMIC_ACQUIRE) != *ctx->ring_head;
}

/* Until ring_ready(@backlog), or -ETIMEDOUT at @deadline (ms, or INT64_MAX). */
static int wait_ring(struct sdr_ctx *ctx, int64_t deadline, bool backlog)
{
	struct pollfd pfd;

	for (;;) {
		int64_t left;
		int ret;

		if (ring_ready(ctx, backlog))
			return 0;
		left = deadline == INT64_MAX ? -1 : deadline - sdr__now_ms();
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
		if (ret > 0 && !ring_ready(ctx, backlog)) {
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

int sdr_wait(struct sdr_ctx *ctx, int timeout_ms)
{
	if (!ctx)
		return -EINVAL;
	return wait_ring(ctx, timeout_ms < 0 ? INT64_MAX :
			 sdr__now_ms() + timeout_ms, true);
}

/*
 * The group's entry may be parked already; else it comes with the ring's
 * next entries (what else comes is parked for its own poll).
 */
int sdr_group_wait(struct sdr_ctx *ctx, uint32_t group, int timeout_ms,
		   struct sdr_completion *out)
{
	int64_t deadline;
	int ret;

	if (!ctx || !group || !out)
		return -EINVAL;
	deadline = timeout_ms < 0 ? INT64_MAX : sdr__now_ms() + timeout_ms;
	for (;;) {
		ret = sdr_group_poll(ctx, group, out);
		if (ret)
			return ret < 0 ? ret : 0;
		ret = wait_ring(ctx, deadline, false);
		if (ret)
			return ret;
	}
}
