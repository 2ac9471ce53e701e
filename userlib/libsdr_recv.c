// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_recv: posting receives and reading a receive in place - its
 * immediate, chunk and packet bitmaps, data and outcome - until
 * sdr_recv_release hands the slot back.  Calls only libsdr_sys.c.
 *
 * Memory ordering follows uapi/sdr_uapi.h: the kernel stores a slot's flags,
 * state and every bitmap bit with release semantics after the data they
 * cover, so each is loaded here with acquire before the bytes are read.
 */
#include <errno.h>
#include <string.h>

#include "libsdr_int.h"
#include "libsdr_recv.h"
#include "libsdr_sys.h"

static int recv_post(struct sdr_flow *flow, struct sdr_recv_post *p,
		     struct sdr_recv **handle)
{
	struct sdr_recv *h;
	int ret;

	p->size = sizeof(*p);
	p->flow_id = flow->props.flow_id;
	if (flow->group) {
		p->flags |= SDR_RECV_GROUP;
		p->group = flow->group;
	}
	ret = sdr__ioctl(flow->ctx->fd, SDR_IOC_RECV_POST, p);
	if (ret)
		return ret;
	if (p->slot >= flow->props.max_msgs)
		return -EPROTO;
	h = &flow->recvs[p->slot];
	h->seq = p->seq;
	h->gen = p->gen;
	h->user_data = p->user_data;
	h->data = p->flags & SDR_RECV_MR ?
		  (const uint8_t *)(uintptr_t)p->mr_addr : h->region;
	h->len = p->flags & SDR_RECV_MR ? p->mr_len : flow->props.max_msg_size;
	h->posted = true;
	*handle = h;
	return 0;
}

int sdr_flow_recv_post(struct sdr_flow *flow, uint64_t user_data,
		       struct sdr_recv **handle)
{
	struct sdr_recv_post p;

	if (!flow || !handle)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.user_data = user_data;
	return recv_post(flow, &p, handle);
}

int sdr_flow_recv_post_mr(struct sdr_flow *flow, uint32_t mr_id, void *addr,
			  uint64_t len, uint64_t user_data,
			  struct sdr_recv **handle)
{
	struct sdr_recv_post p;

	if (!flow || !handle)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.flags = SDR_RECV_MR;
	p.mr_id = mr_id;
	p.mr_addr = (uintptr_t)addr;
	p.mr_len = len;
	p.user_data = user_data;
	return recv_post(flow, &p, handle);
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

int sdr_recv_imm(struct sdr_recv *h, uint32_t *imm, uint32_t *msg_len)
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

/* A stream of parts started the receive (recv_started() said so). */
static bool recv_stream(const struct sdr_recv *h)
{
	return h->state->flags & SDR_RECV_F_STREAM;
}

/*
 * The chunks the message has: a stream's parts land anywhere in the
 * buffer, so its chunks are the buffer's.
 */
static uint32_t recv_chunks(const struct sdr_recv *h)
{
	uint64_t cs = h->flow->props.chunk_size;

	return recv_stream(h) ? (uint32_t)((h->len + cs - 1) / cs) :
				h->state->chunks;
}

int sdr_recv_bitmap(struct sdr_recv *h, const uint64_t **bitmap,
		    uint32_t *chunks)
{
	int ret = recv_started(h);

	if (ret)
		return ret;
	if (bitmap)
		*bitmap = h->chunk_bm;
	if (chunks)
		*chunks = recv_chunks(h);
	return 0;
}

/* Chunk @chunk of the message: bit dst_off / chunk_size + chunk. */
int sdr_recv_chunk_done(struct sdr_recv *h, uint32_t chunk)
{
	uint64_t w, bit;
	int ret = recv_started(h);

	if (ret)
		return ret;
	if (chunk >= recv_chunks(h))
		return -EINVAL;
	bit = h->state->dst_off / h->flow->props.chunk_size + chunk;
	w = __atomic_load_n(&h->chunk_bm[bit / 64], __ATOMIC_ACQUIRE);
	return (int)((w >> (bit % 64)) & 1);
}

/* Bit @bit of @h's buffer's chunk bitmap, loaded with acquire. */
bool sdr__recv_chunk_bit(const struct sdr_recv *h, uint64_t bit)
{
	return (__atomic_load_n(&h->chunk_bm[bit / 64], __ATOMIC_ACQUIRE) >>
		(bit % 64)) & 1;
}

/*
 * The packets holding a byte of [from, to) of @h's message, clipped to
 * its length: [*first, *first + n), n returned (0 for no byte).
 */
static uint32_t pkt_span(const struct sdr_recv *h, uint64_t from, uint64_t to,
			 uint32_t *first)
{
	uint32_t pay = h->flow->props.payload;

	if (to > h->state->msg_len)
		to = h->state->msg_len;
	*first = (uint32_t)(from / pay);
	if (from >= to)
		return 0;
	return (uint32_t)((to + pay - 1) / pay) - *first;
}

/* Packet @p's bit, loaded with acquire. */
static bool pkt_landed(const struct sdr_recv *h, uint32_t p)
{
	return (__atomic_load_n(&h->pkt_bm[p / 64], __ATOMIC_ACQUIRE) >>
		(p % 64)) & 1;
}

bool sdr__recv_bytes_landed(const struct sdr_recv *h, uint64_t from,
			    uint64_t to)
{
	uint32_t first, n = pkt_span(h, from, to, &first), i;

	for (i = 0; i < n; i++)
		if (!pkt_landed(h, first + i))
			return false;
	return n > 0;
}

int sdr_recv_chunk_expand(struct sdr_recv *h, uint32_t chunk,
			  uint64_t *pkt_bits, uint32_t nwords, uint32_t *npkts)
{
	uint64_t size = h ? h->flow->props.chunk_size : 0;
	uint32_t first, n, i;
	int ret = recv_started(h);

	if (ret)
		return ret;
	if (chunk >= recv_chunks(h) || !pkt_bits)
		return -EINVAL;
	if (recv_stream(h)) {
		/*
		 * No packet grid: the packets the chunk's bytes take, all
		 * landed once its bit is set, none before.
		 */
		uint64_t bytes = h->len - chunk * size;
		uint32_t pay = h->flow->props.payload;
		bool done = sdr__recv_chunk_bit(h, chunk);

		n = (uint32_t)(((bytes < size ? bytes : size) + pay - 1) / pay);
		if ((uint64_t)nwords * 64 < n)
			return -ENOSPC;
		memset(pkt_bits, 0, (size_t)nwords * sizeof(*pkt_bits));
		for (i = 0; done && i < n; i++)
			pkt_bits[i / 64] |= 1ULL << (i % 64);
		if (npkts)
			*npkts = n;
		return 0;
	}
	/* the packets holding a byte of the chunk (they may be shared) */
	n = pkt_span(h, chunk * size, (chunk + 1) * size, &first);
	if ((uint64_t)nwords * 64 < n)
		return -ENOSPC;
	memset(pkt_bits, 0, (size_t)nwords * sizeof(*pkt_bits));
	for (i = 0; i < n; i++)
		if (pkt_landed(h, first + i))
			pkt_bits[i / 64] |= 1ULL << (i % 64);
	if (npkts)
		*npkts = n;
	return 0;
}

/* The message's first byte: dst_off into the slot, once it started. */
const void *sdr_recv_data(const struct sdr_recv *h)
{
	if (!h) {
		errno = EINVAL;
		return NULL;
	}
	if (!h->data || recv_started(h))
		return h->data;
	return (const uint8_t *)h->data + h->state->dst_off;
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

int sdr_recv_release(struct sdr_recv *h)
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
