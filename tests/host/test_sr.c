// SPDX-License-Identifier: GPL-2.0
/*
 * Selective Repeat (and EC, which is SR plus parity) end to end: a
 * sender and a receiver engine exchange
 * encoded packets through a simulated duplex channel (serialization,
 * delay, jitter, Bernoulli and Gilbert-Elliott loss, reordering,
 * duplication, corruption, receiver not ready).  Every run pushes 10,000
 * messages of random size and checks that each one arrives complete with
 * the right content hash, that the sender reports done only after the
 * receiver completed, and that nothing fails.
 */
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "tests.h"
#include "sdr_sr.h"
#include "sdr_bitmap.h"
#include "sdr_ec.h"

#define US		1000ULL
#define MS		1000000ULL
#define NMSG		10000
#define WINDOW		4		/* messages in flight at once */
#define MAX_LEN		(64 * 1024)
#define PAY		1024
#define FLOW_TX		0x11
#define FLOW_RX		0x22

struct imp {
	const char *name;
	double loss;			/* Bernoulli */
	double ge_gb, ge_bg, ge_bad;	/* Gilbert-Elliott: p(G->B), p(B->G), loss in B */
	double reorder;			/* probability of an extra delay */
	u64 reorder_ns;
	double dup;
	double corrupt;
	u64 jitter_ns;
	int rnr;			/* receives are posted late */
	u32 ec_k, ec_m;			/* EC messages; 0: SR */
	int adaptive;			/* policy ADAPTIVE (learned timers) */
	u64 rto_min_ns, dead_ns;	/* instead of the defaults below */
	/*
	 * Several paths to the receiver (answers come back on one): each
	 * its own 10 Gbit/s link with its own extra delay and loss (on top
	 * of the above); the loss ends once heal_at messages are done.
	 * down_path (1-based) goes down once down_at messages are done.
	 */
	u32 npaths;
	u64 path_delay_ns[4];
	double path_loss[4];
	u32 heal_at, down_path, down_at;
	/*
	 * Rails: the paths split among callers (devices), each taking packets
	 * for its own paths only (sdr_path_allow()), in turn; 0: one caller.
	 */
	u32 nrails;
	u32 rail_mask[4];
	/* every message urgent, both ends (sdr_sr_tx/rx_set_urgent()) */
	int urgent;
	/*
	 * Every message streamed: in parts of 1 to 3 packets' bytes, each
	 * starting a packet, made ready one by one as the sender runs; its
	 * length known at the end.
	 */
	int stream;
	u64 seed;
};

enum { EV_TO_RX, EV_TO_TX, EV_TX_TIMER, EV_RX_TIMER, EV_POST };

struct ev {
	u64 t;
	u64 seq;
	int kind;
	u32 len;
	u32 msg;
	u8 *buf;
};

struct link {
	u64 free_at;
	int bad;			/* GE state */
};

struct txmsg {
	u32 len;
	int state;			/* 0 waiting, 1 active, 2 done */
	struct sdr_sr_tx tx;
	void *mem;
	/* a stream's parts: their lengths; how many, how many given */
	u32 *plen;
	u32 nparts, nready;
};

struct rxmsg {
	int posted;
	int done;
	struct sdr_sr_rx rx;
	void *map;
	u8 *buf;
	u8 **par;			/* EC: ngroups * m parity payloads */
	u64 last_stale_ns;
};

struct world {
	const struct imp *imp;
	u64 rng;
	u64 now;
	u64 seq;
	struct ev *heap;
	size_t nheap, capheap;
	struct link link[2];		/* 0: to receiver, 1: to sender */
	struct link plink[4];		/* the paths to the receiver */
	struct sdr_paths paths;
	int healed, down;
	u64 tx_at_heal[4];		/* tracked packets per path then */
	struct sdr_sr_flow fs, fr;
	struct txmsg *tm;
	struct rxmsg *rm;
	u32 next_start, ndone, nactive;
	u32 rx_active[NMSG];
	u32 nrx_active;
	u64 tx_timer_at, rx_timer_at;
	u64 drops[SDR_DROP_NR];
	u64 wire_lost, wire_dup, wire_corrupt, crc_drop, rnr_sent;
	u64 failed, bad_content, early_done, spins, decode_err;
};

static u64 rnd(struct world *w)
{
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 2685821657736338717ULL;
}

static double rndf(struct world *w)
{
	return (rnd(w) >> 11) * (1.0 / 9007199254740992.0);
}

/* content of message k at offset o, and the hash the receiver must see */
static u8 content(u32 k, u32 o)
{
	u64 x = ((u64)k << 32 | o) * 0x9E3779B97F4A7C15ULL;

	return (u8)(x >> 56);
}

static u64 fnv1a(const u8 *p, u32 n)
{
	u64 h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

static u64 expect_hash(u32 k, u32 len)
{
	u64 h = 0xcbf29ce484222325ULL;
	u32 o;

	for (o = 0; o < len; o++)
		h = (h ^ content(k, o)) * 0x100000001b3ULL;
	return h;
}

static void push(struct world *w, u64 t, int kind, u32 msg, u8 *buf, u32 len)
{
	size_t i;

	if (w->nheap == w->capheap) {
		w->capheap = w->capheap ? 2 * w->capheap : 1024;
		w->heap = realloc(w->heap, w->capheap * sizeof(*w->heap));
	}
	i = w->nheap++;
	while (i) {
		size_t p = (i - 1) / 2;

		if (w->heap[p].t < t || (w->heap[p].t == t && w->heap[p].seq < w->seq))
			break;
		w->heap[i] = w->heap[p];
		i = p;
	}
	w->heap[i] = (struct ev){ t, w->seq++, kind, len, msg, buf };
}

static struct ev pop(struct world *w)
{
	struct ev top = w->heap[0], last = w->heap[--w->nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= w->nheap)
			break;
		if (c + 1 < w->nheap && (w->heap[c + 1].t < w->heap[c].t ||
		    (w->heap[c + 1].t == w->heap[c].t && w->heap[c + 1].seq < w->heap[c].seq)))
			c++;
		if (last.t < w->heap[c].t || (last.t == w->heap[c].t && last.seq < w->heap[c].seq))
			break;
		w->heap[i] = w->heap[c];
		i = c;
	}
	w->heap[i] = last;
	return top;
}

/*
 * put a packet on the wire toward the receiver (dir 0, on @path) or the
 * sender (dir 1)
 */
static void wire_send(struct world *w, int dir, u32 path, u8 *buf, u32 len)
{
	const struct imp *im = w->imp;
	struct link *l = &w->link[dir];
	u64 ser = (u64)(len + 40) * 8 / 10;	/* 10 Gbit/s, +40 B framing */
	u64 t, d = 50 * US;
	bool lost;

	if (im->npaths && !dir) {
		CHECK(path < im->npaths);
		path %= im->npaths;
		l = &w->plink[path];
		d += im->path_delay_ns[path];
		if ((w->down && path == im->down_path - 1) ||
		    (!w->healed && rndf(w) < im->path_loss[path])) {
			w->wire_lost++;
			free(buf);
			return;
		}
	} else {
		CHECK_EQ(path, 0);
	}
	l->free_at = (l->free_at > w->now ? l->free_at : w->now) + ser;
	t = l->free_at;

	if (im->ge_gb > 0) {
		if (l->bad ? rndf(w) < im->ge_bg : rndf(w) < im->ge_gb)
			l->bad = !l->bad;
		lost = l->bad && rndf(w) < im->ge_bad;
	} else {
		lost = rndf(w) < im->loss;
	}
	if (lost) {
		w->wire_lost++;
		free(buf);
		return;
	}
	if (im->jitter_ns)
		d += rnd(w) % im->jitter_ns;
	if (im->reorder > 0 && rndf(w) < im->reorder)
		d += rnd(w) % im->reorder_ns;
	if (im->corrupt > 0 && rndf(w) < im->corrupt) {
		u32 pos = (u32)(rnd(w) % len);

		w->wire_corrupt++;
		buf[pos] ^= (u8)(1 + rnd(w) % 255);
		/*
		 * The link's CRC (RoCE ICRC) drops corruption anywhere but in
		 * the first 8 header bytes, which we hand to the parser to
		 * prove it rejects or safely ignores them.
		 */
		if (pos >= 8) {
			w->crc_drop++;
			free(buf);
			return;
		}
	}
	if (im->dup > 0 && rndf(w) < im->dup) {
		u8 *copy = malloc(len);

		memcpy(copy, buf, len);
		w->wire_dup++;
		push(w, t + d + rnd(w) % (20 * US), dir ? EV_TO_TX : EV_TO_RX, 0, copy, len);
	}
	push(w, t + d, dir ? EV_TO_TX : EV_TO_RX, 0, buf, len);
}

static void send_ctrl(struct world *w, struct sdr_pkt *hdr, const struct sdr_ack *ack,
		      u32 seq)
{
	u32 blen = ack ? sdr_ack_body_len(ack) : 0;
	u8 *buf = malloc(SDR_WIRE_HDR_LEN + blen);

	hdr->dst_flow = FLOW_TX;
	hdr->src_flow = FLOW_RX;
	hdr->msg_seq = seq;
	hdr->policy = w->imp->adaptive ? SDR_WIRE_POLICY_ADAPTIVE :
					 SDR_WIRE_POLICY_SR;
	hdr->payload_len = (u16)blen;
	sdr_wire_encode(hdr, buf);
	if (ack)
		sdr_ack_encode(ack, buf + SDR_WIRE_HDR_LEN);
	wire_send(w, 1, 0, buf, SDR_WIRE_HDR_LEN + blen);
}

/*
 * Cut stream message @m into parts of 1 to 3 packets' bytes that land
 * one after the other; the rest in one part once the packets the stream
 * may have run short.
 */
static void stream_parts(struct world *w, struct txmsg *m)
{
	u32 cap = sdr_stream_max_pkts(MAX_LEN, PAY), off = 0, plen, npk = 0;

	m->plen = calloc(cap, sizeof(u32));
	m->nparts = 0;
	m->nready = 0;
	while (off < m->len) {
		plen = m->len - off;
		if (npk + DIV_ROUND_UP(plen, PAY) + 3 < cap - 1)
			plen = min_t(u32, plen, 1 + (u32)(rnd(w) % (3 * PAY)));
		m->plen[m->nparts++] = plen;
		npk += DIV_ROUND_UP(plen, PAY);
		off += plen;
	}
	CHECK(npk < cap);
}

/*
 * An application that computes each stream's parts just ahead of the
 * sender: on every pump, parts are given until 8 packets wait to be
 * sent (one part at least); the end once all are.
 */
static void stream_feed(struct world *w)
{
	u32 k;

	for (k = w->ndone; k < w->next_start; k++) {
		struct txmsg *m = &w->tm[k];
		bool fed = false;

		if (m->state != 1 || !m->tx.stream_open)
			continue;
		while (m->nready < m->nparts &&
		       (!fed || m->tx.limit - m->tx.next_new < 8)) {
			CHECK_EQ(sdr_sr_tx_stream_part(&m->tx, m->tx.bytes,
						       m->plen[m->nready]),
				 (int)m->nready);
			m->nready++;
			fed = true;
		}
		if (m->nready == m->nparts)
			CHECK_EQ(sdr_sr_tx_stream_end(&m->tx), 0);
	}
}

static void start_msgs(struct world *w)
{
	while (w->nactive < WINDOW && w->next_start < NMSG) {
		u32 k = w->next_start++;
		struct txmsg *m = &w->tm[k];

		if (w->imp->stream) {
			m->mem = malloc(sdr_sr_tx_stream_size(MAX_LEN, PAY));
			CHECK_EQ(sdr_sr_tx_init_stream(&w->fs, &m->tx, k,
						       MAX_LEN, m->mem,
						       w->now), 0);
			stream_parts(w, m);
		} else {
			m->mem = malloc(sdr_sr_tx_size(m->len, PAY));
			CHECK_EQ(sdr_sr_tx_init(&w->fs, &m->tx, k, m->len,
						m->mem, w->now), 0);
		}
		sdr_sr_tx_set_urgent(&m->tx, w->imp->urgent);
		if (w->imp->ec_k)
			CHECK_EQ(sdr_sr_tx_set_ec(&w->fs, &m->tx, w->imp->ec_k,
						  w->imp->ec_m), 0);
		m->state = 1;
		w->nactive++;
		if (w->imp->rnr)	/* the application posts a bit late */
			push(w, w->now + rnd(w) % (400 * US), EV_POST, k, NULL, 0);
	}
}

/* parity row j of submessage g of message k, as the kernel computes it */
static void parity(struct txmsg *m, u32 k, u32 g, u32 j, u8 *out)
{
	static u8 data[SDR_EC_MAX_K][PAY];
	const u8 *ptr[SDR_EC_MAX_K];
	u32 len[SDR_EC_MAX_K], i, o, first = g * m->tx.ec_k;
	u32 kg = min_t(u32, m->tx.ec_k, m->tx.npkts - first);

	for (i = 0; i < kg; i++) {
		o = (first + i) * PAY;
		len[i] = min_t(u32, PAY, m->len - o);
		for (u32 b = 0; b < len[i]; b++)
			data[i][b] = content(k, o + b);
		ptr[i] = data[i];
	}
	CHECK_EQ(sdr_ec_encode(kg, j, ptr, len, PAY, out), 0);
}

static void tx_pump(struct world *w)
{
	u32 rail, nrails = w->imp->nrails ? w->imp->nrails : 1;
	u64 dl;
	u32 k, sent;

	start_msgs(w);
	if (w->imp->stream)
		stream_feed(w);
	/* rails take turns until a whole round sends nothing */
	do {
	dl = U64_MAX;
	sent = 0;
	for (rail = 0; rail < nrails; rail++) {
	if (w->imp->nrails)
		sdr_path_allow(&w->paths, w->imp->rail_mask[rail]);
	for (k = w->ndone; k < w->next_start; k++) {
		struct txmsg *m = &w->tm[k];
		struct sdr_sr_txd d;
		int ret;

		if (m->state != 1)
			continue;
		while ((ret = sdr_sr_tx_next(&w->fs, &m->tx, w->now, &d)) == 1) {
			struct sdr_pkt p = {
				.type = SDR_PKT_DATA,
				.policy = m->tx.ec_k ? SDR_WIRE_POLICY_EC :
					  w->imp->adaptive ?
					  SDR_WIRE_POLICY_ADAPTIVE :
					  SDR_WIRE_POLICY_SR,
				.flags = d.flags, .payload_len = (u16)d.len,
				.dst_flow = FLOW_RX, .src_flow = FLOW_TX,
				.msg_seq = k, .msg_len = m->len, .offset = d.offset,
				.land = d.offset,
				.imm = k ^ 0xabcd, .ts = d.ts, .aux = d.aux,
			};
			u8 *buf;
			u32 i;

			if (m->tx.stream) {
				p.msg_len = d.flags & SDR_PKT_F_LAST ?
					    m->tx.msg_len : 0;
				p.land = d.land;
				p.part = d.part_base;
			}
			buf = malloc(SDR_WIRE_HDR_LEN + d.len);

			sent++;
			if (w->imp->nrails)
				CHECK(w->imp->rail_mask[rail] & (1U << d.path));
			sdr_wire_encode(&p, buf);
			if (d.flags & SDR_PKT_F_PARITY)
				parity(m, k, d.idx, SDR_EC_AUX_J(d.aux),
				       buf + SDR_WIRE_HDR_LEN);
			else
				for (i = 0; i < d.len; i++)
					buf[SDR_WIRE_HDR_LEN + i] =
						content(k, p.land + i);
			wire_send(w, 0, d.path, buf, SDR_WIRE_HDR_LEN + d.len);
		}
		if (ret < 0) {
			tap_diag("msg %u failed: %d", k, ret);
			w->failed++;
			m->state = 2;
			w->nactive--;
			continue;
		}
		dl = min(dl, sdr_sr_tx_deadline(&w->fs, &m->tx, w->now));
	}
	}
	} while (w->imp->nrails && sent);
	if (w->imp->nrails)
		sdr_path_allow(&w->paths, 0);
	if (dl <= w->now) {
		w->spins++;
		dl = w->now + 1 * US;
	}
	if (dl != U64_MAX && (dl < w->tx_timer_at || w->tx_timer_at <= w->now)) {
		w->tx_timer_at = dl;
		push(w, dl, EV_TX_TIMER, 0, NULL, 0);
	}
}

/* a lossy path heals, a path goes down, as the imp says */
static void path_events(struct world *w)
{
	const struct imp *im = w->imp;
	u32 i, k;

	if (!im->npaths)
		return;
	if (im->heal_at && !w->healed && w->ndone >= im->heal_at) {
		w->healed = 1;
		for (i = 0; i < im->npaths; i++)
			w->tx_at_heal[i] = w->paths.p[i].tx_pkts;
	}
	if (im->down_path && !w->down && w->ndone >= im->down_at) {
		w->down = 1;
		i = im->down_path - 1;
		CHECK_EQ(sdr_path_set_down(&w->paths, i, true, w->now), 0);
		for (k = w->ndone; k < w->next_start; k++)
			if (w->tm[k].state == 1)
				sdr_sr_tx_path_down(&w->fs, &w->tm[k].tx, i,
						    w->now);
		w->tx_at_heal[i] = w->paths.p[i].tx_pkts;
	}
}

static void tx_recv(struct world *w, const u8 *buf, u32 len)
{
	struct sdr_pkt p;
	struct sdr_ack a;
	struct txmsg *m;
	int ret = sdr_wire_decode(buf, len, &p);

	if (ret) {
		w->drops[-ret]++;
		return;
	}
	if (p.msg_seq >= NMSG || p.dst_flow != FLOW_TX) {
		w->drops[SDR_DROP_NO_FLOW]++;
		return;
	}
	m = &w->tm[p.msg_seq];
	if (m->state != 1) {
		/* as the kernel does: a late answer may name a duplicate */
		if (m->state == 2 && p.type == SDR_PKT_ACK && p.offset)
			sdr_sr_flow_dup(&w->fs, p.msg_seq, p.offset - 1);
		w->drops[SDR_DROP_STALE]++;
		return;
	}
	if (p.type == SDR_PKT_RNR) {
		sdr_sr_tx_rnr(&w->fs, &m->tx, w->now);
	} else if (p.type == SDR_PKT_ACK || p.type == SDR_PKT_NACK) {
		sdr_ack_decode(buf + SDR_WIRE_HDR_LEN, p.payload_len, &a);
		ret = sdr_sr_tx_ack(&w->fs, &m->tx, &p, &a, w->now);
		if (ret == SDR_SR_DONE) {
			/* the guarantee: done at the sender => complete at the receiver */
			if (!w->rm[p.msg_seq].done)
				w->early_done++;
			m->state = 2;
			free(m->mem);
			m->mem = NULL;
			w->nactive--;
			while (w->ndone < NMSG && w->tm[w->ndone].state == 2)
				w->ndone++;
			path_events(w);
		}
	}
	tx_pump(w);
}

static void rx_arm(struct world *w)
{
	u64 dl = U64_MAX;
	u32 i;

	for (i = 0; i < w->nrx_active; i++)
		dl = min(dl, sdr_sr_rx_deadline(&w->fr, &w->rm[w->rx_active[i]].rx));
	if (dl <= w->now)
		dl = w->now + 1;
	if (dl != U64_MAX && (dl < w->rx_timer_at || w->rx_timer_at <= w->now)) {
		w->rx_timer_at = dl;
		push(w, dl, EV_RX_TIMER, 0, NULL, 0);
	}
}

static void rx_ctrl(struct world *w, u32 k)
{
	struct rxmsg *r = &w->rm[k];
	struct sdr_pkt hdr;
	struct sdr_ack ack;

	while (sdr_sr_rx_next_ctrl(&w->fr, &r->rx, w->now, &hdr, &ack))
		send_ctrl(w, &hdr, &ack, k);
}

static void rx_post(struct world *w, u32 k)
{
	struct rxmsg *r = &w->rm[k];

	if (r->posted)
		return;
	r->posted = 1;
	r->map = malloc(sdr_sr_rx_size(MAX_LEN, PAY));
	r->buf = malloc(MAX_LEN);
	sdr_sr_rx_init(&w->fr, &r->rx, MAX_LEN, r->map);
	sdr_sr_rx_set_urgent(&w->fr, &r->rx, w->imp->urgent, w->now);
	w->rx_active[w->nrx_active++] = k;
}

static void par_free(struct rxmsg *r, u32 g)
{
	u32 j;

	for (j = 0; r->par && j < r->rx.ec_m; j++) {
		free(r->par[g * r->rx.ec_m + j]);
		r->par[g * r->rx.ec_m + j] = NULL;
	}
}

static void par_free_all(struct rxmsg *r)
{
	u32 g;

	for (g = 0; r->par && g < r->rx.ngroups; g++)
		par_free(r, g);
	free(r->par);
	r->par = NULL;
}

/* rebuild the missing packets of submessage g; returns sdr_sr_rx_decoded() */
static int rx_decode(struct world *w, struct rxmsg *r, u32 g)
{
	static u8 pad[PAY];
	u8 *data[SDR_EC_MAX_K], *par[SDR_EC_MAX_M];
	u32 first, kg, i, last = r->rx.npkts - 1, tail, n;
	u32 m = r->rx.ec_m;
	bool short_last;
	u64 have;
	int ret;

	sdr_sr_rx_group(&r->rx, g, &first, &kg, &have);
	tail = r->rx.msg_len - last * PAY;
	short_last = first + kg - 1 == last && tail < PAY;
	for (i = 0; i < kg; i++)
		data[i] = r->buf + (first + i) * PAY;
	if (short_last) {
		/* the last packet is short: decode it zero-padded */
		memset(pad, 0, sizeof(pad));
		if (have & BIT_ULL(kg - 1))
			memcpy(pad, r->buf + last * PAY, tail);
		data[kg - 1] = pad;
	}
	for (i = 0; i < m; i++)
		par[i] = r->par[g * m + i];
	if (sdr_ec_decode(kg, m, have, data, par, PAY) < 0) {
		w->decode_err++;
		return 0;
	}
	if (short_last && !(have & BIT_ULL(kg - 1)))
		memcpy(r->buf + last * PAY, pad, tail);
	ret = sdr_sr_rx_decoded(&w->fr, &r->rx, g, w->now, &n);
	if (ret < 0 || n != kg - (u32)__builtin_popcountll(have))
		w->decode_err++;
	par_free(r, g);
	return ret < 0 ? 0 : ret;
}

static void rx_retire(struct world *w, u32 k)
{
	struct rxmsg *r = &w->rm[k];
	u32 i;

	par_free_all(r);
	if (fnv1a(r->buf, r->rx.msg_len) != expect_hash(k, w->tm[k].len) ||
	    r->rx.msg_len != w->tm[k].len)
		w->bad_content++;
	r->done = 1;
	free(r->map);
	free(r->buf);
	r->map = NULL;
	r->buf = NULL;
	for (i = 0; i < w->nrx_active; i++)
		if (w->rx_active[i] == k) {
			w->rx_active[i] = w->rx_active[--w->nrx_active];
			break;
		}
}

static void rx_recv(struct world *w, const u8 *buf, u32 len)
{
	struct sdr_pkt p, hdr;
	struct sdr_ack ack;
	struct rxmsg *r;
	int ret = sdr_wire_decode(buf, len, &p);

	if (ret) {
		w->drops[-ret]++;
		return;
	}
	if (p.type != SDR_PKT_DATA || p.dst_flow != FLOW_RX || p.msg_seq >= NMSG) {
		w->drops[SDR_DROP_NO_FLOW]++;
		return;
	}
	r = &w->rm[p.msg_seq];
	if (r->done) {
		/* recycled slot: tell the sender again that it is complete */
		w->drops[SDR_DROP_STALE]++;
		if (p.flags & SDR_PKT_F_ACKREQ || w->now - r->last_stale_ns > 50 * US) {
			r->last_stale_ns = w->now;
			sdr_sr_stale_ack(&hdr, &ack, SDR_ACK_F_COMPLETE, p.ts,
					 p.flags & SDR_PKT_F_PARITY ? 0 :
					 p.offset / PAY + 1);
			send_ctrl(w, &hdr, &ack, p.msg_seq);
		}
		return;
	}
	if (!w->imp->rnr)
		rx_post(w, p.msg_seq);
	if (!r->posted) {
		w->drops[SDR_DROP_NO_RECV]++;
		memset(&hdr, 0, sizeof(hdr));
		hdr.type = SDR_PKT_RNR;
		w->rnr_sent++;
		send_ctrl(w, &hdr, NULL, p.msg_seq);
		return;
	}
	ret = sdr_sr_rx_data(&w->fr, &r->rx, &p, w->now);
	if (ret < 0) {
		w->drops[-ret]++;
		return;
	}
	if (ret & SDR_SR_RX_NEW)
		memcpy(r->buf + p.land, buf + SDR_WIRE_HDR_LEN, p.payload_len);
	if (ret & SDR_SR_RX_PARITY) {
		u32 g = p.offset / PAY / r->rx.ec_k, slot;

		if (!r->par)
			r->par = calloc((size_t)r->rx.ngroups * r->rx.ec_m,
					sizeof(*r->par));
		slot = g * r->rx.ec_m + SDR_EC_AUX_J(p.aux);
		r->par[slot] = malloc(PAY);
		memcpy(r->par[slot], buf + SDR_WIRE_HDR_LEN, PAY);
	}
	if (ret & SDR_SR_RX_FREE_PAR)
		par_free(r, p.offset / PAY / r->rx.ec_k);
	if (ret & SDR_SR_RX_DECODE)
		ret |= rx_decode(w, r, p.offset / PAY / r->rx.ec_k);
	rx_ctrl(w, p.msg_seq);
	if (ret & SDR_SR_RX_COMPLETE)
		rx_retire(w, p.msg_seq);
	rx_arm(w);
}

static void rx_timer(struct world *w)
{
	u32 i;

	for (i = 0; i < w->nrx_active; i++)
		rx_ctrl(w, w->rx_active[i]);
	rx_arm(w);
}

/*
 * Over several paths: a path at 15% loss or more was drained and, healed,
 * used again for its share; a path with 5% loss or less was kept, and a
 * clean one, however slower than the others, lost (almost) nothing; a
 * path down carried nothing after.
 */
static void check_paths(struct world *w)
{
	const struct imp *im = w->imp;
	u64 total = 0, at_heal = 0, after;
	u32 i;

	for (i = 0; i < im->npaths; i++) {
		total += w->paths.p[i].tx_pkts;
		at_heal += w->tx_at_heal[i];
	}
	for (i = 0; i < im->npaths; i++) {
		const struct sdr_path *p = &w->paths.p[i];

		tap_diag("%s: path %u (+%llu us, loss %g): tx %llu (%llu untracked), "
			 "acked %llu, lost %llu, srtt %.1f us, drained %llu, restored %llu, state %u loss %u%%",
			 im->name, i, (unsigned long long)im->path_delay_ns[i] / US,
			 im->path_loss[i], (unsigned long long)p->tx_pkts,
			 (unsigned long long)p->untracked,
			 (unsigned long long)p->acked, (unsigned long long)p->lost,
			 p->rtt.srtt_ns / 1e3, (unsigned long long)p->drains,
			 (unsigned long long)p->restores, p->state, p->loss_pct);
		CHECK_EQ(p->inflight, 0);
		if (im->down_path == i + 1) {
			CHECK_EQ(p->state, SDR_PATH_DOWN);
			CHECK_EQ(p->tx_pkts, w->tx_at_heal[i]);
			continue;
		}
		if (im->path_loss[i] >= 0.15) {
			CHECK(p->drains >= 1);
			/* drained: little of what went before the heal */
			if (im->heal_at)
				CHECK(w->tx_at_heal[i] * 10 < at_heal);
		} else {
			CHECK_EQ(p->drains, 0);
			CHECK(p->tx_pkts * im->npaths * 2 > total);
		}
		if (im->path_loss[i] == 0 && !im->loss)
			CHECK(p->lost * 1000 <= p->tx_pkts);
		if (im->heal_at && im->path_loss[i] >= 0.15) {
			after = p->tx_pkts - w->tx_at_heal[i];
			CHECK(p->restores >= 1);
			CHECK(after * im->npaths * 2 > total - at_heal);
		}
	}
}

static void run(const struct imp *im)
{
	struct world *w = calloc(1, sizeof(*w));
	struct sdr_sr_cfg cfg;
	u32 k, incomplete = 0;
	u64 limit = 600ULL * 1000 * MS;	/* simulated 600 s: never reached */

	w->imp = im;
	w->rng = im->seed;
	w->now = 1000 * MS;
	sdr_sr_cfg_default(&cfg);
	cfg.pay = PAY;
	cfg.max_inflight = 128;
	cfg.pace_bps = 10000000000ULL;
	cfg.pace_burst = 8 * 1024;
	cfg.rto_init_ns = 2 * MS;
	cfg.rto_min_ns = 200 * US;
	cfg.rto_max_ns = 100 * MS;
	cfg.dead_ns = 5000 * MS;
	if (im->rto_min_ns) {
		cfg.rto_min_ns = im->rto_min_ns;
		cfg.rto_init_ns = im->rto_min_ns;
		cfg.rto_max_ns = 4 * im->rto_min_ns;
	}
	if (im->dead_ns)
		cfg.dead_ns = im->dead_ns;
	cfg.rnr_backoff_ns = 100 * US;
	cfg.ack_every = 8;
	cfg.ack_delay_ns = 20 * US;
	cfg.reorder_ns = 30 * US;
	cfg.nack_interval_ns = 150 * US;
	if (im->adaptive)
		cfg.flags |= SDR_SR_CFG_ADAPTIVE;
	sdr_sr_flow_init(&w->fs, &cfg);
	sdr_sr_flow_init(&w->fr, &cfg);
	if (im->npaths) {
		struct sdr_path_cfg pc;

		sdr_path_cfg_default(&pc);
		pc.probe_ns = 2 * MS;
		pc.probe_max_ns = 16 * MS;
		pc.alpha_pct = cfg.alpha_pct;
		CHECK_EQ(sdr_paths_init(&w->paths, im->npaths, &pc), 0);
		sdr_sr_flow_set_paths(&w->fs, &w->paths);
	}

	w->tm = calloc(NMSG, sizeof(*w->tm));
	w->rm = calloc(NMSG, sizeof(*w->rm));
	for (k = 0; k < NMSG; k++) {
		u64 x = rnd(w);

		/* a third tiny, the rest up to 64 KiB: edge sizes included */
		w->tm[k].len = x % 3 == 0 ? 1 + (u32)(rnd(w) % (2 * PAY)) :
			       1 + (u32)(rnd(w) % MAX_LEN);
		if (k % 97 == 0)
			w->tm[k].len = MAX_LEN;
		if (k % 89 == 0)
			w->tm[k].len = PAY * (1 + k % 7);
	}

	tx_pump(w);
	while (w->nheap && w->ndone < NMSG && w->now < limit) {
		struct ev e = pop(w);

		w->now = e.t;
		switch (e.kind) {
		case EV_TO_RX:
			rx_recv(w, e.buf, e.len);
			free(e.buf);
			break;
		case EV_TO_TX:
			tx_recv(w, e.buf, e.len);
			free(e.buf);
			break;
		case EV_TX_TIMER:
			tx_pump(w);
			break;
		case EV_RX_TIMER:
			rx_timer(w);
			break;
		case EV_POST:
			rx_post(w, e.msg);
			rx_arm(w);
			break;
		}
	}
	for (k = 0; k < NMSG; k++)
		if (!w->rm[k].done || w->tm[k].state != 2)
			incomplete++;

	if (im->ec_k)
		tap_diag("%s: parity tx %llu rx %llu; %llu packets rebuilt in %llu decodes",
			 im->name, (unsigned long long)w->fs.st.parity_tx,
			 (unsigned long long)w->fr.st.parity_rx,
			 (unsigned long long)w->fr.st.ec_recovered,
			 (unsigned long long)w->fr.st.ec_decodes);
	tap_diag("%s: %.3f s simulated; tx %llu pkts (%llu retx: %llu rto, %llu nack, %llu spurious), "
		 "rx dup %llu; acks %llu nacks %llu; wire lost %llu dup %llu corrupt %llu "
		 "(parser saw %llu); rnr %llu; srtt %.0f us rto %.0f us",
		 im->name, (w->now - 1000 * MS) / 1e9,
		 (unsigned long long)w->fs.st.tx_pkts, (unsigned long long)w->fs.st.retx_pkts,
		 (unsigned long long)w->fs.st.timeouts, (unsigned long long)w->fs.st.nack_lost,
		 (unsigned long long)w->fs.st.spurious, (unsigned long long)w->fr.st.rx_dup,
		 (unsigned long long)w->fr.st.acks_tx, (unsigned long long)w->fr.st.nacks_tx,
		 (unsigned long long)w->wire_lost, (unsigned long long)w->wire_dup,
		 (unsigned long long)w->wire_corrupt,
		 (unsigned long long)(w->wire_corrupt - w->crc_drop),
		 (unsigned long long)w->rnr_sent,
		 w->fs.rtt.srtt_ns / 1e3, w->fs.rtt.rto_ns / 1e3);
	CHECK_EQ(incomplete, 0);
	CHECK_EQ(w->failed, 0);
	CHECK_EQ(w->bad_content, 0);
	CHECK_EQ(w->early_done, 0);
	CHECK_EQ(w->fs.st.tx_done, NMSG);
	CHECK_EQ(w->fr.st.rx_done, NMSG);
	CHECK_EQ(w->fs.inflight, 0);
	CHECK_EQ(w->spins, 0);
	CHECK_EQ(w->decode_err, 0);
	if (im->ec_k) {
		/* one round of parity per submessage, never repeated */
		CHECK(w->fs.st.parity_tx > 0);
		if (im->loss > 0 || im->ge_gb > 0)
			CHECK(w->fr.st.ec_recovered > 0);
	}
	if (im->corrupt > 0) {
		u64 parser = 0;

		for (k = SDR_DROP_SHORT; k <= SDR_DROP_ACK; k++)
			parser += w->drops[k];
		CHECK(parser > 0);
	}
	if ((im->loss > 0 || im->ge_gb > 0) && !im->ec_k)
		CHECK(w->fs.st.retx_pkts > 0);
	if (im->rnr)
		CHECK(w->fs.st.rnr_rx > 0);
	if (im->adaptive) {
		tap_diag("%s: learned gap %.1f us, reorder %.1f us, sender SRTT %.1f us, NACK interval %.1f us; "
			 "late NACKs %llu, tail probes %llu",
			 im->name, w->fr.ad.gap_ns / 1e3,
			 sdr_sr_reorder_ns(&w->fr) / 1e3, w->fr.ad.peer_rtt_ns / 1e3,
			 sdr_sr_nack_interval_ns(&w->fr) / 1e3,
			 (unsigned long long)w->fr.st.nack_late,
			 (unsigned long long)w->fr.st.tail_probes);
		CHECK(w->fr.ad.gap_ns > 0);
		CHECK(w->fs.peer_gap_ns > 0);
	}
	if (im->urgent && (im->loss > 0 || im->path_loss[2] > 0))
		CHECK(w->fs.st.urgent_dups > 0);
	if (!im->urgent)
		CHECK_EQ(w->fs.st.urgent_dups, 0);
	if (im->npaths)
		check_paths(w);
	/* reordering inside what ADAPTIVE learned costs no resends */
	if (im->adaptive && im->reorder > 0 && !im->loss && !im->dup)
		CHECK(w->fr.st.rx_dup * 100 < w->fs.st.tx_pkts);

	while (w->nheap) {
		struct ev e = pop(w);

		free(e.buf);
	}
	for (k = 0; k < NMSG; k++) {
		par_free_all(&w->rm[k]);
		free(w->tm[k].mem);
		free(w->tm[k].plen);
		free(w->rm[k].map);
		free(w->rm[k].buf);
	}
	free(w->heap);
	free(w->tm);
	free(w->rm);
	free(w);
}

static const struct imp imps[] = {
	{ .name = "clean", .seed = 1 },
	{ .name = "loss1pct", .loss = 0.01, .seed = 2 },
	{ .name = "loss10pct", .loss = 0.10, .seed = 3 },
	{ .name = "gilbert_elliott", .ge_gb = 0.01, .ge_bg = 0.25, .ge_bad = 0.9, .seed = 4 },
	{ .name = "reorder", .reorder = 0.2, .reorder_ns = 80 * US, .seed = 5 },
	{ .name = "duplicate", .dup = 0.05, .seed = 6 },
	{ .name = "corrupt", .corrupt = 0.05, .seed = 7 },
	{ .name = "delay_jitter", .jitter_ns = 40 * US, .seed = 8 },
	{ .name = "rnr", .rnr = 1, .loss = 0.002, .seed = 9 },
	{ .name = "everything", .loss = 0.02, .reorder = 0.1, .reorder_ns = 60 * US,
	  .dup = 0.02, .corrupt = 0.02, .jitter_ns = 10 * US, .seed = 10 },
	{ .name = "ad_clean", .adaptive = 1, .seed = 21 },
	{ .name = "ad_loss1pct", .loss = 0.01, .adaptive = 1, .seed = 22 },
	{ .name = "ad_loss10pct", .loss = 0.10, .adaptive = 1, .seed = 23 },
	{ .name = "ad_gilbert_elliott", .ge_gb = 0.01, .ge_bg = 0.25, .ge_bad = 0.9,
	  .adaptive = 1, .seed = 24 },
	{ .name = "ad_reorder", .reorder = 0.2, .reorder_ns = 80 * US, .adaptive = 1,
	  .seed = 25 },
	{ .name = "ad_rnr", .rnr = 1, .loss = 0.002, .adaptive = 1, .seed = 29 },
	{ .name = "ad_everything", .loss = 0.02, .reorder = 0.1, .reorder_ns = 60 * US,
	  .dup = 0.02, .corrupt = 0.02, .jitter_ns = 10 * US, .adaptive = 1, .seed = 30 },
	{ .name = "ec_clean", .ec_k = 8, .ec_m = 2, .seed = 11 },
	{ .name = "ec_loss1pct", .loss = 0.01, .ec_k = 8, .ec_m = 2, .seed = 12 },
	{ .name = "ec_loss10pct", .loss = 0.10, .ec_k = 16, .ec_m = 4, .seed = 13 },
	{ .name = "ec_gilbert_elliott", .ge_gb = 0.01, .ge_bg = 0.25, .ge_bad = 0.9,
	  .ec_k = 32, .ec_m = 8, .seed = 14 },
	/*
	 * netem's "loss gemodel 1% 10%" (bursts of 10 packets on average, all
	 * lost, each direction its own chain moved by its own packets) with
	 * an RTO a tenth of dead_ns, as on the debug kernel: a silent peer
	 * gets about ten probe rounds before it is declared dead, and a
	 * round of one packet often left a burst unfinished in that time.
	 * Even so about one realization in ten (seeds 1 and 17 of 1..20 with
	 * the 64-byte header; 18 and 22 of EC's with the 80-byte one) meets
	 * a bad run longer than the dead time's rounds and fails the flow,
	 * as it should: seeds 19 and 20 are usual ones.
	 */
	{ .name = "gemodel_long_rto", .ge_gb = 0.01, .ge_bg = 0.10, .ge_bad = 1.0,
	  .rto_min_ns = 200 * MS, .dead_ns = 2000 * MS, .seed = 19 },
	{ .name = "ec_gemodel_long_rto", .ge_gb = 0.01, .ge_bg = 0.10, .ge_bad = 1.0,
	  .ec_k = 8, .ec_m = 2, .rto_min_ns = 200 * MS, .dead_ns = 2000 * MS,
	  .seed = 20 },
	{ .name = "ec_rnr", .rnr = 1, .loss = 0.002, .ec_k = 4, .ec_m = 1, .seed = 15 },
	/* four paths, 0-300 us apart: reassembly from out-of-order paths */
	{ .name = "paths4_skew", .npaths = 4,
	  .path_delay_ns = { 0, 100 * US, 200 * US, 300 * US }, .seed = 41 },
	/* one path of four at 20% loss, healed half way */
	{ .name = "paths4_lossy_heals", .npaths = 4,
	  .path_delay_ns = { 0, 50 * US, 0, 80 * US },
	  .path_loss = { 0, 0, 0.20, 0 }, .heal_at = NMSG / 2, .seed = 42 },
	/* 5% on one: kept; a path goes down a third of the way */
	{ .name = "paths3_lossy_down", .npaths = 3, .path_loss = { 0.05, 0, 0 },
	  .path_delay_ns = { 0, 40 * US, 0 }, .down_path = 3,
	  .down_at = NMSG / 3, .seed = 43 },
	/* two rails of two paths each, one rail's paths clean, then lossy */
	{ .name = "rails2_clean", .npaths = 4, .nrails = 2,
	  .rail_mask = { 0x3, 0xc }, .path_delay_ns = { 0, 20 * US, 300 * US,
	  320 * US }, .seed = 46 },
	{ .name = "rails2_lossy_heals", .npaths = 4, .nrails = 2,
	  .rail_mask = { 0x3, 0xc }, .path_delay_ns = { 0, 20 * US, 50 * US,
	  70 * US }, .path_loss = { 0, 0, 0.20, 0.20 }, .heal_at = NMSG / 2,
	  .seed = 47 },
	/* urgent messages (a group's): resends twice, silent tails NACKed */
	{ .name = "urgent_loss1pct", .loss = 0.01, .urgent = 1, .seed = 51 },
	{ .name = "urgent_everything", .loss = 0.02, .reorder = 0.1,
	  .reorder_ns = 60 * US, .dup = 0.02, .corrupt = 0.02,
	  .jitter_ns = 10 * US, .urgent = 1, .seed = 52 },
	{ .name = "ec_urgent_loss10pct", .loss = 0.10, .ec_k = 16, .ec_m = 4,
	  .urgent = 1, .seed = 53 },
	{ .name = "ad_urgent_paths4_lossy_heals", .npaths = 4, .adaptive = 1,
	  .urgent = 1, .path_delay_ns = { 0, 50 * US, 0, 80 * US },
	  .path_loss = { 0, 0, 0.20, 0 }, .heal_at = NMSG / 2, .seed = 54 },
	{ .name = "ad_paths4_lossy_heals", .npaths = 4, .adaptive = 1,
	  .path_delay_ns = { 0, 50 * US, 0, 80 * US },
	  .path_loss = { 0, 0, 0.20, 0 }, .heal_at = NMSG / 2, .seed = 44 },
	/*
	 * EC: parity hides a 20% path's loss from the sender (a rebuilt
	 * packet is answered as arrived), so a path that loses everything
	 * (until it heals): what parity cannot hide, the sender sees.
	 */
	{ .name = "ec_paths2_blackhole", .npaths = 2, .ec_k = 8, .ec_m = 2,
	  .path_delay_ns = { 0, 100 * US }, .path_loss = { 0.01, 1.0 },
	  .heal_at = NMSG / 2, .seed = 45 },
	/* streamed messages: parts made ready as the sender goes */
	{ .name = "stream_loss1pct", .loss = 0.01, .stream = 1, .seed = 61 },
	{ .name = "stream_everything", .loss = 0.02, .reorder = 0.1,
	  .reorder_ns = 60 * US, .dup = 0.02, .corrupt = 0.02,
	  .jitter_ns = 10 * US, .stream = 1, .seed = 62 },
	{ .name = "stream_rnr", .rnr = 1, .loss = 0.002, .stream = 1,
	  .seed = 63 },
	{ .name = "ad_stream_everything", .loss = 0.02, .reorder = 0.1,
	  .reorder_ns = 60 * US, .dup = 0.02, .corrupt = 0.02,
	  .jitter_ns = 10 * US, .adaptive = 1, .stream = 1, .seed = 64 },
	{ .name = "stream_urgent_paths4_lossy_heals", .npaths = 4,
	  .urgent = 1, .path_delay_ns = { 0, 50 * US, 0, 80 * US },
	  .path_loss = { 0, 0, 0.20, 0 }, .heal_at = NMSG / 2, .stream = 1,
	  .seed = 65 },
	{ .name = "ec_everything", .loss = 0.02, .reorder = 0.1, .reorder_ns = 60 * US,
	  .dup = 0.02, .corrupt = 0.02, .jitter_ns = 10 * US, .ec_k = 64, .ec_m = 32,
	  .seed = 16 },
};

/* A sender with fast timers (RTO 1..64 ms, dead after 1 s), for silent peers. */
static void silent_flow(struct sdr_sr_flow *f, u32 pay)
{
	struct sdr_sr_cfg cfg;

	sdr_sr_cfg_default(&cfg);
	cfg.pay = pay;
	cfg.rto_init_ns = 1 * MS;
	cfg.rto_min_ns = 1 * MS;
	cfg.rto_max_ns = 64 * MS;
	cfg.dead_ns = 1000 * MS;
	sdr_sr_flow_init(f, &cfg);
}

/* a peer that never answers: backoff, then -ETIMEDOUT after dead_ns */
static void test_sr_dead_peer(void)
{
	struct sdr_sr_flow f;
	struct sdr_sr_tx m;
	struct sdr_sr_txd d;
	void *mem;
	u64 now = 1000 * MS, dl;
	u32 sent = 0, loops = 0;
	int ret = 0;

	silent_flow(&f, 1000);
	mem = malloc(sdr_sr_tx_size(10000, 1000));
	CHECK_EQ(sdr_sr_tx_init(&f, &m, 0, 10000, mem, now), 0);
	while (loops++ < 100000) {
		while ((ret = sdr_sr_tx_next(&f, &m, now, &d)) == 1)
			sent++;
		if (ret < 0)
			break;
		dl = sdr_sr_tx_deadline(&f, &m, now);
		CHECK(dl > now);
		if (dl <= now)
			break;
		now = dl;
	}
	CHECK_EQ(ret, -ETIMEDOUT);
	CHECK_EQ(m.status, -ETIMEDOUT);
	CHECK_EQ(f.inflight, 0);
	CHECK_EQ(f.st.tx_failed, 1);
	/*
	 * 10 packets, then one probe round (a train of SDR_SR_PROBE_TRAIN
	 * packets) per timeout while the peer is silent: RTOs of 1, 2, 4, 8
	 * ms, then capped at dead_ns / 64 (15.6 ms, below rto_max): about 64
	 * rounds before the peer is dead, so one burst of loss cannot fake a
	 * death, and not 1000 (no backoff) either.
	 */
	tap_diag("dead peer: %u packets sent in 1 s, %u timer loops", sent, loops);
	CHECK_EQ((sent - 10) % SDR_SR_PROBE_TRAIN, 0);
	CHECK((sent - 10) / SDR_SR_PROBE_TRAIN >= SDR_SR_DEAD_PROBES - 1 &&
	      (sent - 10) / SDR_SR_PROBE_TRAIN <= SDR_SR_DEAD_PROBES + 16);
	CHECK_EQ(sdr_sr_tx_deadline(&f, &m, now), U64_MAX);
	free(mem);
}

/*
 * A silent peer is probed in rounds of SDR_SR_PROBE_TRAIN transmissions:
 * the lost packets, then copies of what is in flight, each asking for an
 * answer; the next round waits for this one's packets to time out, and
 * an answer that acknowledges something ends the probing.
 */
static void test_sr_probe_train(void)
{
	struct sdr_sr_flow f;
	struct sdr_sr_tx m;
	struct sdr_sr_txd d;
	struct sdr_pkt h = { .type = SDR_PKT_ACK };
	struct sdr_ack a = { 0 };
	u32 idx[SDR_SR_PROBE_TRAIN], n = 0, i;
	void *mem;
	u64 now = 1000 * MS, dl;

	silent_flow(&f, 100);
	mem = malloc(sdr_sr_tx_size(300, 100));
	CHECK_EQ(sdr_sr_tx_init(&f, &m, 0, 300, mem, now), 0);
	while (sdr_sr_tx_next(&f, &m, now, &d) == 1)
		n++;
	CHECK_EQ(n, 3);
	/* all three time out unanswered: the first round */
	dl = sdr_sr_tx_deadline(&f, &m, now);
	CHECK(dl > now && dl < U64_MAX);
	now = dl;
	n = 0;
	while (n < SDR_SR_PROBE_TRAIN && sdr_sr_tx_next(&f, &m, now, &d) == 1) {
		CHECK(d.flags & SDR_PKT_F_ACKREQ);
		CHECK(d.flags & SDR_PKT_F_RETX);
		CHECK_EQ(d.offset, d.idx * 100);
		idx[n++] = d.idx;
	}
	CHECK_EQ(n, SDR_SR_PROBE_TRAIN);
	/* the three resent, then copies round robin from the oldest */
	for (i = 0; i < n; i++)
		CHECK_EQ(idx[i], i % 3);
	CHECK_EQ(f.st.timeouts, 3);
	CHECK_EQ(f.st.retx_pkts, SDR_SR_PROBE_TRAIN);
	CHECK_EQ(m.inflight, 3);
	CHECK_EQ(f.inflight, 3);
	/* the round is spent: nothing more until its packets time out */
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d), 0);
	dl = sdr_sr_tx_deadline(&f, &m, now);
	CHECK(dl > now);
	/* the second round, after a longer (backed-off) timeout */
	now = dl;
	n = 0;
	while (sdr_sr_tx_next(&f, &m, now, &d) == 1)
		n++;
	CHECK_EQ(n, SDR_SR_PROBE_TRAIN);
	CHECK_EQ(f.st.timeouts, 6);
	/* an answer to one of them ends the probing: no copies after it */
	a.cum = 1;
	a.base = 1;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + 100 * US), 0);
	CHECK_EQ(m.nacked, 1);
	CHECK_EQ(m.probe, 0);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now + 100 * US, &d), 0);
	CHECK(sdr_sr_tx_deadline(&f, &m, now + 100 * US) > now + 100 * US);
	/* the rest acknowledged: done, nothing left in flight */
	a.cum = 3;
	a.base = 3;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + 200 * US), SDR_SR_DONE);
	CHECK_EQ(f.inflight, 0);
	free(mem);
}

/* ACKs that claim unsent packets or run past the message are ignored */
static void test_sr_bad_ack(void)
{
	struct sdr_sr_flow f;
	struct sdr_sr_cfg cfg;
	struct sdr_sr_tx m;
	struct sdr_sr_txd d;
	struct sdr_pkt h = { .type = SDR_PKT_ACK };
	struct sdr_ack a = { 0 };
	void *mem;
	u64 now = 1000 * MS;

	sdr_sr_cfg_default(&cfg);
	cfg.pay = 100;
	sdr_sr_flow_init(&f, &cfg);
	mem = malloc(sdr_sr_tx_size(1000, 100));
	CHECK_EQ(sdr_sr_tx_init(&f, &m, 0, 1000, mem, now), 0);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d), 1);
	CHECK_EQ(d.idx, 0);
	CHECK_EQ(d.flags, 0);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d), 1);
	a.cum = 5;		/* only 2 sent */
	a.base = 5;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + MS), 0);
	CHECK_EQ(f.st.bad_acks, 1);
	a.cum = 1;
	a.base = 5;
	a.nbits = 6;		/* 5 + 6 > 10 packets */
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + MS), 0);
	CHECK_EQ(f.st.bad_acks, 2);
	CHECK_EQ(m.nacked, 0);
	a.nbits = 0;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + MS), 0);
	CHECK_EQ(m.nacked, 1);
	CHECK_EQ(m.cum, 1);
	CHECK_EQ(f.inflight, 1);
	/* COMPLETE before every packet was sent is a lie: ignored */
	h.aux = SDR_ACK_F_COMPLETE;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + MS), 0);
	CHECK_EQ(f.st.bad_acks, 3);
	CHECK_EQ(m.nacked, 1);
	CHECK_EQ(f.inflight, 1);
	/* once all went out, COMPLETE ends it whatever the body says */
	now += MS;
	while (sdr_sr_tx_next(&f, &m, now, &d) == 1)
		;
	CHECK_EQ(m.next_new, 10);
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + MS), SDR_SR_DONE);
	CHECK_EQ(f.inflight, 0);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d), 0);
	free(mem);
}

/*
 * Forged, stale, duplicated and misdirected answers of every shape, fed
 * to a sender at each stage of a message (nothing sent, part sent, all
 * sent, part acknowledged).  A shape no true receiver could have sent is
 * counted in bad_acks and changes nothing: no packet becomes acked, the
 * message does not end, the RTT estimate does not move.  True answers
 * still work afterwards, and the message ends DONE only once every packet
 * was sent and acknowledged.
 */
struct forge {
	const char *name;
	u8 type;
	u32 aux;
	u32 seq;		/* added to the message's sequence number */
	u32 cum, base, nbits;	/* base/cum relative to next_new if rel */
	bool rel;
	u8 fill;		/* SACK map bytes */
	u8 true_from;		/* a true answer from this stage on (0: never) */
};

static const struct forge forges[] = {
	{ "COMPLETE of a message not all sent", SDR_PKT_ACK, SDR_ACK_F_COMPLETE,
	  0, 0, 0, 0, false, 0, 0 },
	{ "ACK of another message", SDR_PKT_ACK, 0, 1, 0, 0, 0, true, 0, 0 },
	{ "COMPLETE of another message", SDR_PKT_ACK, SDR_ACK_F_COMPLETE, 7,
	  0, 0, 0, false, 0, 0 },
	{ "ABORT of another message", SDR_PKT_ACK, SDR_ACK_F_ABORT, 0x80000000,
	  0, 0, 0, false, 0, 0 },
	{ "cum past the sent packets", SDR_PKT_ACK, 0, 0, 1, 1, 0, true, 0, 0 },
	{ "SACK of one unsent packet", SDR_PKT_ACK, 0, 0, 0, 0, 1, true, 0x01, 0 },
	{ "SACK of every packet", SDR_PKT_ACK, 0, 0, 0, 0, 1024, false, 0xff, 0 },
	{ "NACK with SACK of unsent packets", SDR_PKT_NACK, 0, 0, 0, 0, 64, true,
	  0xff, 0 },
	{ "SACK past the message end", SDR_PKT_ACK, 0, 0, 0, 60, 8, false, 0x00, 0 },
	{ "NACK past the message end", SDR_PKT_NACK, 0, 0, 0, 63, 8, false, 0x00, 0 },
	{ "cum past the message end", SDR_PKT_ACK, 0, 0, 1000, 1000, 0, false, 0, 0 },
	{ "NACK of a message not posted yet", SDR_PKT_NACK, 0, 2, 0, 0, 8, false,
	  0x0f, 0 },
	{ "SACK of all 64 packets", SDR_PKT_ACK, 0, 0, 0, 0, 64, false, 0xff, 2 },
	{ "cum of all 64 packets", SDR_PKT_ACK, 0, 0, 64, 64, 0, false, 0, 2 },
};

#define FORGE_LEN	(64 * 100)	/* 64 packets of 100 bytes */

static void forge_ack(const struct forge *fg, const struct sdr_sr_tx *m,
		      struct sdr_pkt *h, struct sdr_ack *a)
{
	memset(h, 0, sizeof(*h));
	memset(a, 0, sizeof(*a));
	h->type = fg->type;
	h->aux = fg->aux;
	h->msg_seq = m->seq + fg->seq;
	h->ts = m->last_tx_us;
	a->cum = fg->cum + (fg->rel ? m->next_new : 0);
	a->base = fg->base + (fg->rel ? m->next_new : 0);
	a->nbits = (u16)fg->nbits;
	memset(a->map, fg->fill, (fg->nbits + 7) / 8);
	if (fg->nbits % 8)
		a->map[fg->nbits / 8] &= (u8)((1U << (fg->nbits % 8)) - 1);
}

static void test_sr_forged_acks(void)
{
	u32 stage, i, sent, rejected = 0, tried = 0;
	struct sdr_sr_flow f;
	struct sdr_sr_cfg cfg;
	struct sdr_sr_tx m;
	struct sdr_sr_txd d;
	struct sdr_pkt h;
	struct sdr_ack a;
	void *mem = malloc(sdr_sr_tx_size(FORGE_LEN, 100));

	sdr_sr_cfg_default(&cfg);
	cfg.pay = 100;
	cfg.max_inflight = 1000;
	for (stage = 0; stage < 4; stage++) {
		for (i = 0; i < ARRAY_SIZE(forges); i++) {
			const struct forge *fg = &forges[i];
			u64 now = 1000 * MS, srtt, bad;
			u32 nacked;

			sdr_sr_flow_init(&f, &cfg);
			CHECK_EQ(sdr_sr_tx_init(&f, &m, 0xfffffff0, FORGE_LEN, mem,
						now), 0);
			/* stage 0: nothing sent; 1: 16 sent; 2, 3: all sent */
			sent = stage == 0 ? 0 : stage == 1 ? 16 : 64;
			sdr_sr_tx_set_limit(&m, sent * 100);
			while (sdr_sr_tx_next(&f, &m, now, &d) == 1)
				;
			CHECK_EQ(m.next_new, sent);
			now += 10 * MS;
			if (stage == 3) {	/* half acknowledged, truly */
				memset(&h, 0, sizeof(h));
				memset(&a, 0, sizeof(a));
				h.type = SDR_PKT_ACK;
				h.msg_seq = m.seq;
				h.ts = m.last_tx_us;
				a.cum = 32;
				a.base = 32;
				CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
				CHECK_EQ(m.nacked, 32);
			}
			/* the true answers of stages 2 and 3 are no forgery */
			if ((stage >= 2 && !fg->seq && fg->aux == SDR_ACK_F_COMPLETE) ||
			    (fg->true_from && stage >= fg->true_from))
				continue;
			forge_ack(fg, &m, &h, &a);
			if (h.type == SDR_PKT_NACK && h.aux)
				continue;	/* the decoder refuses it */
			tried++;
			bad = f.st.bad_acks;
			nacked = m.nacked;
			srtt = f.rtt.srtt_ns;
			sdr_sr_tx_ack(&f, &m, &h, &a, now + 50000 * MS);
			if (f.st.bad_acks != bad + 1 || m.nacked != nacked ||
			    m.status || f.rtt.srtt_ns != srtt) {
				tap_diag("stage %u: %s: bad_acks %llu -> %llu, acked %u -> %u, status %d",
					 stage, fg->name, (unsigned long long)bad,
					 (unsigned long long)f.st.bad_acks, nacked,
					 m.nacked, m.status);
				CHECK(0);
				continue;
			}
			rejected++;
			/* the true receiver still gets the message through */
			sdr_sr_tx_set_limit(&m, FORGE_LEN);
			while (sdr_sr_tx_next(&f, &m, now, &d) == 1)
				;
			memset(&h, 0, sizeof(h));
			memset(&a, 0, sizeof(a));
			h.type = SDR_PKT_ACK;
			h.msg_seq = m.seq;
			h.aux = SDR_ACK_F_COMPLETE;
			h.ts = m.last_tx_us;
			CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + MS), SDR_SR_DONE);
			CHECK_EQ(m.nacked, 64);
			CHECK_EQ(f.st.rtt_samples, 1);
		}
	}
	tap_diag("%u forged answers over 4 stages, %u rejected", tried, rejected);
	CHECK_EQ(rejected, tried);
	free(mem);
}

/*
 * RTT samples come only from echoes this message sent: not from a
 * timestamp older than the message (a replay, or 50 s stale), nor from an
 * echo older than one already sampled (a duplicated or reordered ACK),
 * nor from one newer than the latest transmission.
 */
static void test_sr_echo_trust(void)
{
	struct sdr_sr_flow f;
	struct sdr_sr_cfg cfg;
	struct sdr_sr_tx m;
	struct sdr_sr_txd d;
	struct sdr_pkt h = { .type = SDR_PKT_ACK, .msg_seq = 5 };
	struct sdr_ack a = { 0 };
	u64 now = 100000 * MS;
	u32 ts0, ts1;
	void *mem = malloc(sdr_sr_tx_size(1000, 100));

	sdr_sr_cfg_default(&cfg);
	cfg.pay = 100;
	sdr_sr_flow_init(&f, &cfg);
	CHECK_EQ(sdr_sr_tx_init(&f, &m, 5, 1000, mem, now), 0);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d), 1);
	ts0 = d.ts;
	now += 10 * MS;
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d), 1);
	ts1 = d.ts;
	now += 20 * MS;
	/* 50 s before the message: no sample */
	h.ts = ts0 - 50000000;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
	CHECK_EQ(f.st.rtt_samples, 0);
	/* from the future: no sample */
	h.ts = ts1 + 1000;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
	CHECK_EQ(f.st.rtt_samples, 0);
	/* the second packet's echo: 20 ms */
	h.ts = ts1;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
	CHECK_EQ(f.st.rtt_samples, 1);
	CHECK_EQ(f.rtt.srtt_ns, 20 * MS);
	/* the first packet's echo, late (reordered or duplicated): none */
	h.ts = ts0;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + 5 * MS), 0);
	CHECK_EQ(f.st.rtt_samples, 1);
	/* the same echo again: none */
	h.ts = ts1;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + 5 * MS), 0);
	CHECK_EQ(f.st.rtt_samples, 1);
	CHECK_EQ(f.st.bad_acks, 0);
	free(mem);
}

/*
 * An EC message's RTO waits for parity (ec_beta_pct of SRTT more), but
 * never more than rto_max longer: an SRTT inflated by a loaded host must
 * not silence the sender past the receiver's dead-peer time.
 */
static void test_sr_ec_hold_capped(void)
{
	struct sdr_sr_flow f;
	struct sdr_sr_cfg cfg;
	struct sdr_sr_tx m;
	struct sdr_sr_txd d;
	u64 now = 1000 * MS;
	void *mem = malloc(sdr_sr_tx_size(4000, 100));
	int i;

	sdr_sr_cfg_default(&cfg);
	cfg.pay = 100;
	cfg.ec_beta_pct = 10000;		/* 100 x SRTT */
	sdr_sr_flow_init(&f, &cfg);
	for (i = 0; i < 8; i++)
		sdr_rtt_sample(&f.rtt, 1000 * MS);	/* SRTT 1 s */
	CHECK_EQ(sdr_sr_tx_init(&f, &m, 1, 4000, mem, now), 0);
	CHECK_EQ(sdr_sr_tx_set_ec(&f, &m, 8, 2), 0);
	while (sdr_sr_tx_next(&f, &m, now, &d) == 1)
		;
	CHECK_EQ(m.next_new, 40);
	/* RTO (capped at rto_max) plus the hold (capped at rto_max) */
	CHECK(sdr_sr_tx_deadline(&f, &m, now) <= now + 2 * cfg.rto_max_ns);
	CHECK(sdr_sr_tx_deadline(&f, &m, now) > now + cfg.rto_max_ns);
	free(mem);
}

/* An ABORT ends the message failed, never DONE, and only once sent. */
static void test_sr_abort(void)
{
	struct sdr_sr_flow f;
	struct sdr_sr_cfg cfg;
	struct sdr_sr_tx m;
	struct sdr_sr_txd d;
	struct sdr_pkt h = { .type = SDR_PKT_ACK, .msg_seq = 9,
			     .aux = SDR_ACK_F_ABORT };
	struct sdr_ack a = { 0 };
	u64 now = 1000 * MS;
	void *mem = malloc(sdr_sr_tx_size(1000, 100));

	sdr_sr_cfg_default(&cfg);
	cfg.pay = 100;
	sdr_sr_flow_init(&f, &cfg);
	CHECK_EQ(sdr_sr_tx_init(&f, &m, 9, 1000, mem, now), 0);
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);	/* nothing sent */
	CHECK_EQ(f.st.bad_acks, 1);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d), 1);
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + MS), -ECONNABORTED);
	CHECK_EQ(f.st.tx_aborted, 1);
	CHECK_EQ(f.st.tx_done, 0);
	CHECK_EQ(f.inflight, 0);
	free(mem);
}

/*
 * A streamed message that waits for its next part longer than dead_ns,
 * with everything sent so far acknowledged, is not failed: the peer owes
 * nothing.  Once more is ready it continues, and a silent peer is judged
 * from then on.
 */
static void test_sr_stream_pause(void)
{
	struct sdr_sr_flow f;
	struct sdr_sr_cfg cfg;
	struct sdr_sr_tx m;
	struct sdr_sr_txd d;
	struct sdr_pkt h = { .type = SDR_PKT_ACK };
	struct sdr_ack a = { 0 };
	u64 now = 1000 * MS;
	void *mem;
	int n = 0;

	sdr_sr_cfg_default(&cfg);
	cfg.pay = 100;
	cfg.dead_ns = 50 * MS;
	sdr_sr_flow_init(&f, &cfg);
	mem = malloc(sdr_sr_tx_size(1000, 100));
	CHECK_EQ(sdr_sr_tx_init(&f, &m, 0, 1000, mem, now), 0);
	sdr_sr_tx_set_limit(&m, 300);		/* 3 of 10 packets ready */
	while (sdr_sr_tx_next(&f, &m, now, &d) == 1)
		n++;
	CHECK_EQ(n, 3);
	a.cum = 3;
	a.base = 3;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + MS), 0);
	CHECK_EQ(sdr_sr_tx_deadline(&f, &m, now + MS), U64_MAX);
	now += 10 * cfg.dead_ns;		/* the application is slow */
	CHECK_EQ(sdr_sr_tx_poll(&f, &m, now), 0);
	sdr_sr_tx_set_limit(&m, 1000);
	while (sdr_sr_tx_next(&f, &m, now, &d) == 1)
		n++;
	CHECK_EQ(n, 10);
	CHECK_EQ(m.status, 0);
	/* now the peer owes 7 packets: silence is death after dead_ns */
	CHECK_EQ(sdr_sr_tx_deadline(&f, &m, now) <= now + cfg.dead_ns, 1);
	CHECK_EQ(sdr_sr_tx_poll(&f, &m, now + cfg.dead_ns), -ETIMEDOUT);
	free(mem);
}

/*
 * A sender over two paths and its receiver, 100-byte payloads, an ACK
 * for every packet (@cfg is theirs).
 */
static void dup_flows(struct sdr_sr_cfg *cfg, struct sdr_sr_flow *f,
		      struct sdr_sr_flow *fr, struct sdr_paths *ps)
{
	struct sdr_path_cfg pc;

	sdr_sr_cfg_default(cfg);
	cfg->pay = 100;
	cfg->ack_every = 1;
	sdr_sr_flow_init(f, cfg);
	sdr_sr_flow_init(fr, cfg);
	sdr_path_cfg_default(&pc);
	CHECK_EQ(sdr_paths_init(ps, 2, &pc), 0);
	sdr_sr_flow_set_paths(f, ps);
}

/* a data packet the sender handed out, as the receiver takes it */
static struct sdr_pkt dup_data(const struct sdr_sr_tx *m,
			       const struct sdr_sr_txd *d)
{
	struct sdr_pkt p = {
		.type = SDR_PKT_DATA, .policy = SDR_WIRE_POLICY_SR,
		.flags = d->flags, .payload_len = (u16)d->len,
		.msg_seq = m->seq, .msg_len = m->msg_len, .offset = d->offset,
		.land = d->offset,
		.ts = d->ts,
	};

	return p;
}

/*
 * Two paths.  Packet 0 (path 0) is late, not lost: the timeout blames
 * path 0 (a packet sent after it was answered), the resend goes on path
 * 1 and is answered, then the late copy arrives.  The receiver names the
 * packet that came twice in its next answer (the header's offset), and
 * the sender takes the loss back from path 0.  A named packet not sent
 * twice, out of range, or named again changes nothing.
 */
static void test_sr_dup_takes_loss_back(void)
{
	struct sdr_sr_flow f, fr;
	struct sdr_sr_cfg cfg;
	struct sdr_paths ps;
	struct sdr_sr_tx m;
	struct sdr_sr_rx r;
	struct sdr_sr_txd d[10], re;
	struct sdr_pkt h, p;
	struct sdr_ack a;
	u64 now = 1000 * MS;
	void *mem = malloc(sdr_sr_tx_size(1000, 100));
	void *rmem = malloc(sdr_sr_rx_size(1000, 100));
	u32 i, n = 0, retx = 0;
	u64 spurious;

	dup_flows(&cfg, &f, &fr, &ps);
	CHECK_EQ(sdr_sr_tx_init(&f, &m, 3, 1000, mem, now), 0);
	sdr_sr_rx_init(&fr, &r, 1000, rmem);
	/* packets 0..8 (9 is not ready yet, so the message stays open) */
	sdr_sr_tx_set_limit(&m, 100);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d[n++]), 1);
	CHECK_EQ(d[0].idx, 0);
	CHECK_EQ(d[0].path, 0);
	now += 100 * US;
	sdr_sr_tx_set_limit(&m, 900);
	while (n < 10 && sdr_sr_tx_next(&f, &m, now, &d[n]) == 1)
		n++;
	CHECK_EQ(n, 9);
	/* 1..8 arrive and are answered, 1 ms later; 0 is late */
	now += MS;
	for (i = 1; i < n; i++) {
		p = dup_data(&m, &d[i]);
		CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_NEW);
	}
	CHECK_EQ(sdr_sr_rx_next_ctrl(&fr, &r, now, &h, &a), 1);
	CHECK_EQ(h.type, SDR_PKT_ACK);
	CHECK_EQ(h.offset, 0);
	h.msg_seq = m.seq;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
	CHECK_EQ(m.nacked, 8);
	/* 0 times out: path 0 is blamed, the resend takes path 1 */
	now = sdr_sr_tx_deadline(&f, &m, now);
	CHECK_EQ(sdr_sr_tx_poll(&f, &m, now), 0);
	CHECK_EQ(f.st.timeouts, 1);
	CHECK_EQ(ps.p[0].lost, 1);
	while (sdr_sr_tx_next(&f, &m, now, &re) == 1)
		retx++;
	CHECK_EQ(retx, 1);
	CHECK_EQ(re.idx, 0);
	CHECK_EQ(re.path, 1);
	/* the resend arrives and is answered a whole RTT later */
	now += MS;
	p = dup_data(&m, &re);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_NEW);
	CHECK_EQ(sdr_sr_rx_next_ctrl(&fr, &r, now, &h, &a), 1);
	CHECK_EQ(h.offset, 0);
	h.msg_seq = m.seq;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
	CHECK_EQ(m.nacked, 9);
	CHECK_EQ(ps.p[0].lost, 1);	/* no telling which copy came */
	/* the late first copy comes too: a duplicate, named in the answer */
	p = dup_data(&m, &d[0]);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_DUP);
	CHECK_EQ(r.dup, 1);
	spurious = f.st.spurious;
	h.offset = 1 + 5;		/* sent once: nothing */
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
	h.offset = 1 + 9;		/* not sent yet */
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
	h.offset = U32_MAX;		/* no such packet */
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
	CHECK_EQ(ps.p[0].lost, 1);
	CHECK_EQ(f.st.spurious, spurious);
	now += 10 * US;
	CHECK_EQ(sdr_sr_rx_next_ctrl(&fr, &r, now + MS, &h, &a), 1);
	CHECK_EQ(h.offset, 1);
	CHECK_EQ(r.dup, 0);
	h.msg_seq = m.seq;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
	CHECK_EQ(ps.p[0].lost, 0);
	CHECK_EQ(ps.p[0].unlost, 1);
	CHECK_EQ(f.st.spurious, spurious + 1);
	/* named again: taken back once only */
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
	CHECK_EQ(ps.p[0].unlost, 1);
	CHECK_EQ(f.st.spurious, spurious + 1);
	CHECK_EQ(f.st.bad_acks, 0);
	/* the last packet: done */
	sdr_sr_tx_set_limit(&m, 1000);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &re), 1);
	CHECK_EQ(re.idx, 9);
	p = dup_data(&m, &re);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now + MS) & SDR_SR_RX_COMPLETE);
	CHECK_EQ(sdr_sr_rx_next_ctrl(&fr, &r, now + MS, &h, &a), 1);
	h.msg_seq = m.seq;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now + MS), SDR_SR_DONE);
	free(mem);
	free(rmem);
}

/* a stream packet the sender handed out, as the receiver takes it */
static struct sdr_pkt stream_data(const struct sdr_sr_tx *m,
				  const struct sdr_sr_txd *d)
{
	struct sdr_pkt p = dup_data(m, d);

	p.msg_len = (d->flags & SDR_PKT_F_LAST) ? m->msg_len : 0;
	p.land = d->land;
	p.part = d->part_base;
	return p;
}

/*
 * A streamed message of three parts whose total the sender learns only
 * at its end: 250 bytes at 0 (packets 0-2), 100 at 300 (3), 30 at 500
 * (4), then the end packet (5).  Packet 1 is lost and resent; the end
 * comes before packet 4.  The receiver learns the length from the end;
 * neither side is done before it; packets that contradict it are
 * refused.
 */
static void test_sr_stream(void)
{
	static const u32 land[6] = { 0, 100, 200, 300, 500, 0 };
	static const u32 len[6] = { 100, 100, 50, 100, 30, 0 };
	static const u32 part[6] = { 0, 0, 0, 1, 2, 0 };
	static const u8 pend[6] = { 0, 0, 1, 1, 1, 0 };
	struct sdr_sr_flow f, fr;
	struct sdr_sr_cfg cfg;
	struct sdr_paths ps;
	struct sdr_sr_tx m;
	struct sdr_sr_rx r;
	struct sdr_sr_txd d[6], re;
	struct sdr_pkt h, p;
	struct sdr_ack a;
	u64 now = 1000 * MS;
	void *mem = malloc(sdr_sr_tx_stream_size(1000, 100));
	void *rmem = malloc(sdr_sr_rx_size(1000, 100));
	u32 i, n = 0;
	int ret;

	CHECK(sdr_sr_tx_stream_size(1000, 100) > sdr_sr_tx_size(1000, 100));
	dup_flows(&cfg, &f, &fr, &ps);
	sdr_sr_flow_set_paths(&f, NULL);
	CHECK_EQ(sdr_sr_tx_init_stream(&f, &m, 7, 1000, mem, now), 0);
	CHECK_EQ(m.npkts, 20);
	CHECK_EQ(sdr_sr_tx_set_ec(&f, &m, 4, 2), -EINVAL);
	sdr_sr_rx_init(&fr, &r, 1000, rmem);
	/* nothing given: nothing to send */
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d[0]), 0);
	CHECK_EQ(sdr_sr_tx_stream_part(&m, 0, 0), -EINVAL);
	CHECK_EQ(sdr_sr_tx_stream_part(&m, 900, 101), -EINVAL);
	CHECK_EQ(sdr_sr_tx_stream_part(&m, 1001, 1), -EINVAL);
	CHECK_EQ(sdr_sr_tx_stream_part(&m, 0, 250), 0);
	while (n < 6 && sdr_sr_tx_next(&f, &m, now, &d[n]) == 1)
		n++;
	CHECK_EQ(n, 3);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(d[i].idx, i);
		CHECK_EQ(d[i].offset, i * 100);
		CHECK_EQ(d[i].land, land[i]);
		CHECK_EQ(d[i].len, len[i]);
		CHECK_EQ(d[i].part, part[i]);
		CHECK_EQ(d[i].flags & (SDR_PKT_F_STREAM | SDR_PKT_F_LAST |
				       SDR_PKT_F_PART_END),
			 SDR_PKT_F_STREAM | (pend[i] ? SDR_PKT_F_PART_END : 0));
	}
	/* 0 and 2 arrive, 1 is lost; the stream is open at the receiver */
	now += MS;
	for (i = 0; i < 3; i += 2) {
		p = stream_data(&m, &d[i]);
		CHECK_EQ(sdr_wire_check_geometry(&p, 100, 1000), 0);
		ret = sdr_sr_rx_data(&fr, &r, &p, now);
		CHECK(ret > 0 && (ret & SDR_SR_RX_NEW));
		CHECK(!(ret & SDR_SR_RX_COMPLETE));
	}
	CHECK(r.stream && r.stream_open);
	CHECK_EQ(r.npkts, 20);
	/* a packet of a message of known length: not this one */
	p = dup_data(&m, &d[1]);
	p.flags = 0;
	p.msg_len = 1000;
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_MSGLEN);
	/* the last packet is kept for the end */
	p = stream_data(&m, &d[1]);
	p.offset = 19 * 100;
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_GEOMETRY);

	/* two more parts, then the end: 380 bytes in 5 data packets */
	CHECK_EQ(sdr_sr_tx_stream_part(&m, 300, 100), 1);
	CHECK_EQ(sdr_sr_tx_stream_part(&m, 500, 30), 2);
	CHECK_EQ(sdr_sr_tx_stream_end(&m), 0);
	CHECK_EQ(sdr_sr_tx_stream_end(&m), -EINVAL);
	CHECK_EQ(sdr_sr_tx_stream_part(&m, 600, 1), -EINVAL);
	CHECK_EQ(m.npkts, 6);
	CHECK_EQ(m.msg_len, 380);
	while (n < 6 && sdr_sr_tx_next(&f, &m, now, &d[n]) == 1)
		n++;
	CHECK_EQ(n, 6);
	for (i = 3; i < 6; i++) {
		CHECK_EQ(d[i].idx, i);
		CHECK_EQ(d[i].land, land[i]);
		CHECK_EQ(d[i].len, len[i]);
		CHECK_EQ(!!(d[i].flags & SDR_PKT_F_PART_END), pend[i]);
	}
	CHECK_EQ(d[5].flags & (SDR_PKT_F_STREAM | SDR_PKT_F_LAST),
		 SDR_PKT_F_STREAM | SDR_PKT_F_LAST);
	/* 3, then the end, then 4 */
	now += MS;
	p = stream_data(&m, &d[3]);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_NEW);
	/* an end below a packet that came contradicts it */
	p = stream_data(&m, &d[5]);
	p.offset = 300;
	p.msg_len = 300;
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_MSGLEN);
	CHECK(r.stream_open);
	p = stream_data(&m, &d[5]);
	CHECK_EQ(p.msg_len, 380);
	CHECK_EQ(sdr_wire_check_geometry(&p, 100, 1000), 0);
	ret = sdr_sr_rx_data(&fr, &r, &p, now);
	CHECK(ret > 0 && (ret & SDR_SR_RX_NEW) && !(ret & SDR_SR_RX_COMPLETE));
	CHECK(!r.stream_open);
	CHECK_EQ(r.npkts, 6);
	CHECK_EQ(r.msg_len, 380);
	/* another end, a packet past it: refused */
	p.msg_len = 381;
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_MSGLEN);
	p = stream_data(&m, &d[4]);
	p.offset = 600;
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_GEOMETRY);
	p = stream_data(&m, &d[4]);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_NEW);
	CHECK(!r.complete);
	/* the answer: 1 missing; the sender is not done */
	CHECK_EQ(sdr_sr_rx_next_ctrl(&fr, &r, now, &h, &a), 1);
	h.msg_seq = m.seq;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
	CHECK_EQ(m.nacked, 5);
	/* 1 times out and is resent, as it was: the message is whole */
	now = sdr_sr_tx_deadline(&f, &m, now);
	CHECK_EQ(sdr_sr_tx_poll(&f, &m, now), 0);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &re), 1);
	CHECK_EQ(re.idx, 1);
	CHECK_EQ(re.land, 100);
	CHECK_EQ(re.len, 100);
	CHECK(re.flags & SDR_PKT_F_RETX);
	CHECK(re.flags & SDR_PKT_F_STREAM);
	CHECK(!(re.flags & (SDR_PKT_F_LAST | SDR_PKT_F_PART_END)));
	p = stream_data(&m, &re);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_COMPLETE);
	CHECK_EQ(sdr_sr_rx_next_ctrl(&fr, &r, now, &h, &a), 1);
	CHECK(h.aux & SDR_ACK_F_COMPLETE);
	h.msg_seq = m.seq;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), SDR_SR_DONE);
	CHECK_EQ(f.st.bad_acks, 0);
	free(mem);
	free(rmem);
}

/*
 * A stream's packets run out: a part whose packets leave none for the
 * end is refused, and a stream of parts smaller than a packet still
 * holds as many as a message of max_msg bytes has packets.
 */
static void test_sr_stream_full(void)
{
	struct sdr_sr_flow f;
	struct sdr_sr_cfg cfg;
	struct sdr_sr_tx m;
	void *mem = malloc(sdr_sr_tx_stream_size(1000, 100));
	u32 i;

	sdr_sr_cfg_default(&cfg);
	cfg.pay = 100;
	sdr_sr_flow_init(&f, &cfg);
	CHECK_EQ(sdr_sr_tx_init_stream(&f, &m, 1, 1000, mem, 0), 0);
	for (i = 0; i < 10; i++)
		CHECK_EQ(sdr_sr_tx_stream_part(&m, i * 100, 1), (int)i);
	CHECK_EQ(sdr_sr_tx_stream_part(&m, 0, 1000), -ENOSPC);
	CHECK_EQ(sdr_sr_tx_stream_part(&m, 0, 900), (int)i);
	CHECK_EQ(sdr_sr_tx_stream_part(&m, 0, 1), -ENOSPC);
	CHECK_EQ(sdr_sr_tx_stream_end(&m), 0);
	CHECK_EQ(m.npkts, 20);
	CHECK_EQ(m.msg_len, 910);
	free(mem);
}

/*
 * A stream the sender ends with no part: the end is packet 0, of no
 * bytes, and completes at once.  A receive that took a message of known
 * length refuses a stream packet in it.
 */
static void test_sr_stream_empty(void)
{
	struct sdr_sr_flow f, fr;
	struct sdr_sr_cfg cfg;
	struct sdr_paths ps;
	struct sdr_sr_tx m;
	struct sdr_sr_rx r;
	struct sdr_sr_txd d;
	struct sdr_pkt h, p;
	struct sdr_ack a;
	u64 now = 1000 * MS;
	void *mem = malloc(sdr_sr_tx_stream_size(1000, 100));
	void *rmem = malloc(sdr_sr_rx_size(1000, 100));

	dup_flows(&cfg, &f, &fr, &ps);
	sdr_sr_flow_set_paths(&f, NULL);
	CHECK_EQ(sdr_sr_tx_init_stream(&f, &m, 9, 1000, mem, now), 0);
	CHECK_EQ(sdr_sr_tx_stream_end(&m), 0);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d), 1);
	CHECK_EQ(d.idx, 0);
	CHECK_EQ(d.len, 0);
	CHECK(d.flags & SDR_PKT_F_LAST);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d), 0);
	sdr_sr_rx_init(&fr, &r, 1000, rmem);
	p = stream_data(&m, &d);
	CHECK_EQ(sdr_wire_check_geometry(&p, 100, 1000), 0);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_COMPLETE);
	CHECK_EQ(r.msg_len, 0);
	CHECK_EQ(sdr_sr_rx_next_ctrl(&fr, &r, now, &h, &a), 1);
	h.msg_seq = m.seq;
	CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), SDR_SR_DONE);

	/* a message of 300 bytes started this receive: no stream in it */
	CHECK_EQ(sdr_sr_tx_init(&f, &m, 10, 300, mem, now), 0);
	sdr_sr_rx_init(&fr, &r, 1000, rmem);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d), 1);
	p = dup_data(&m, &d);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_NEW);
	p.flags = SDR_PKT_F_STREAM | SDR_PKT_F_PART_END;
	p.msg_len = 0;
	p.offset = 100;
	p.land = 100;
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_MSGLEN);
	free(mem);
	free(rmem);
}

/* a forged packet of stream 3: data (len 1..100 at land) or its end */
static struct sdr_pkt stream_pkt(u32 idx, u32 land, u32 part, u32 len,
				 u32 end_bytes, bool end)
{
	struct sdr_pkt p = {
		.type = SDR_PKT_DATA, .policy = SDR_WIRE_POLICY_SR,
		.msg_seq = 3, .offset = idx * 100,
		.flags = SDR_PKT_F_STREAM | (end ? SDR_PKT_F_LAST : 0) |
			 (!end && len < 100 ? SDR_PKT_F_PART_END : 0),
		.payload_len = end ? 0 : len, .msg_len = end ? end_bytes : 0,
		.land = end ? 0 : land, .part = end ? 0 : part,
	};

	return p;
}

/*
 * A peer's end packet counts the bytes of its parts: never fewer than
 * the data packets that came carry, exactly theirs once all came, in
 * either order; a packet that would contradict it is refused and the
 * message completes with the true count.
 */
static void test_sr_stream_end_counts(void)
{
	struct sdr_sr_flow f, fr;
	struct sdr_sr_cfg cfg;
	struct sdr_paths ps;
	struct sdr_sr_rx r;
	struct sdr_pkt p;
	u64 now = 1000 * MS;
	void *rmem = malloc(sdr_sr_rx_size(1000, 100));

	dup_flows(&cfg, &f, &fr, &ps);
	/* the end first: 150 bytes in three packets */
	sdr_sr_rx_init(&fr, &r, 1000, rmem);
	p = stream_pkt(0, 0, 0, 100, 0, false);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_NEW);
	p = stream_pkt(2, 0, 0, 0, 99, true);	/* fewer than came */
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_MSGLEN);
	p = stream_pkt(2, 0, 0, 0, 150, true);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_NEW);
	p = stream_pkt(2, 0, 0, 0, 160, true);	/* another end */
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_MSGLEN);
	p = stream_pkt(1, 100, 100, 100, 0, false);	/* 200 > 150 */
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_MSGLEN);
	p = stream_pkt(1, 300, 300, 40, 0, false);	/* 140 != 150 */
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_MSGLEN);
	CHECK(!r.complete);
	p = stream_pkt(1, 300, 300, 50, 0, false);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_COMPLETE);
	CHECK_EQ(r.msg_len, 150);

	/* the data first: 130 bytes, then ends that miscount them */
	sdr_sr_rx_init(&fr, &r, 1000, rmem);
	p = stream_pkt(0, 0, 0, 100, 0, false);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_NEW);
	p = stream_pkt(1, 100, 100, 30, 0, false);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_NEW);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_DUP);
	p = stream_pkt(2, 0, 0, 0, 100, true);
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_MSGLEN);
	p = stream_pkt(2, 0, 0, 0, 140, true);
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_MSGLEN);
	p = stream_pkt(1, 0, 0, 0, 130, true);	/* below a packet that came */
	CHECK_EQ(sdr_sr_rx_data(&fr, &r, &p, now), -SDR_DROP_MSGLEN);
	CHECK(!r.complete);
	p = stream_pkt(2, 0, 0, 0, 130, true);
	CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_COMPLETE);
	CHECK_EQ(r.msg_len, 130);
	free(rmem);
}

/*
 * The late first copy of a message's last packet comes after its resend
 * completed the message: the COMPLETE answer names it (or, the receive
 * recycled, the stale answer does), and the finished message's loss on
 * path 0 is taken back, once.
 */
static void test_sr_dup_after_done(void)
{
	struct sdr_sr_flow f, fr;
	struct sdr_sr_cfg cfg;
	struct sdr_paths ps;
	struct sdr_sr_tx m;
	struct sdr_sr_rx r;
	struct sdr_sr_txd d[2], re;
	struct sdr_pkt h, p;
	struct sdr_ack a;
	u64 now = 1000 * MS;
	void *mem = malloc(sdr_sr_tx_size(200, 100));
	void *rmem = malloc(sdr_sr_rx_size(200, 100));
	u32 round;

	dup_flows(&cfg, &f, &fr, &ps);
	for (round = 0; round < 2; round++) {
		sdr_sr_flow_init(&fr, &cfg);
		sdr_sr_rx_init(&fr, &r, 200, rmem);
		CHECK_EQ(sdr_sr_tx_init(&f, &m, 7 + round, 200, mem, now), 0);
		sdr_sr_tx_set_limit(&m, 100);
		CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d[0]), 1);
		now += 100 * US;
		sdr_sr_tx_set_limit(&m, 200);
		CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &d[1]), 1);
		CHECK_EQ(d[0].path, 0);
		CHECK_EQ(d[1].path, 1);
		/* packet 1 arrives and is answered; 0 is late */
		now += MS;
		p = dup_data(&m, &d[1]);
		CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_NEW);
		CHECK_EQ(sdr_sr_rx_next_ctrl(&fr, &r, now, &h, &a), 1);
		h.msg_seq = m.seq;
		CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), 0);
		now = sdr_sr_tx_deadline(&f, &m, now);
		CHECK_EQ(sdr_sr_tx_poll(&f, &m, now), 0);
		CHECK_EQ(ps.p[0].lost, 1);
		CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &re), 1);
		CHECK_EQ(re.idx, 0);
		/* the resend completes the message at both ends */
		now += MS;
		p = dup_data(&m, &re);
		CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_COMPLETE);
		CHECK_EQ(sdr_sr_rx_next_ctrl(&fr, &r, now, &h, &a), 1);
		CHECK_EQ(h.offset, 0);
		h.msg_seq = m.seq;
		CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), SDR_SR_DONE);
		CHECK_EQ(ps.p[0].lost, 1);
		/* then the late first copy */
		p = dup_data(&m, &d[0]);
		p.flags |= SDR_PKT_F_ACKREQ;
		CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_DUP);
		if (round == 0) {
			/* the receive is still there: its COMPLETE names it */
			CHECK_EQ(sdr_sr_rx_next_ctrl(&fr, &r, now, &h, &a), 1);
			CHECK_EQ(h.aux, SDR_ACK_F_COMPLETE);
			CHECK_EQ(h.offset, 1);
			h.msg_seq = m.seq;
			CHECK_EQ(sdr_sr_tx_ack(&f, &m, &h, &a, now), SDR_SR_DONE);
		} else {
			/* recycled: the stale answer names it; the message is gone */
			sdr_sr_stale_ack(&h, &a, SDR_ACK_F_COMPLETE, p.ts, 1);
			CHECK_EQ(h.offset, 1);
			sdr_sr_flow_dup(&f, m.seq + 1, 0);	/* no such message */
			sdr_sr_flow_dup(&f, m.seq, 1);		/* sent once */
			CHECK_EQ(ps.p[0].lost, 1);
			sdr_sr_flow_dup(&f, m.seq, h.offset - 1);
		}
		CHECK_EQ(ps.p[0].lost, 0);
		CHECK_EQ(ps.p[0].unlost, round + 1);
		/* named again: nothing more */
		sdr_sr_flow_dup(&f, m.seq, 0);
		CHECK_EQ(ps.p[0].unlost, round + 1);
		sdr_sr_stale_ack(&h, &a, SDR_ACK_F_ABORT, 0, 1);
		CHECK_EQ(h.offset, 0);
	}
	free(mem);
	free(rmem);
}

/* Receiver of an EC (4,2) message of 8 packets: two submessages. */
struct ec_rx {
	struct sdr_sr_flow f;
	struct sdr_sr_rx r;
	void *mem;
};

static void ec_rx_init(struct ec_rx *e)
{
	struct sdr_sr_cfg cfg;

	sdr_sr_cfg_default(&cfg);
	cfg.pay = 100;
	cfg.reorder_ns = 1 * MS;
	cfg.nack_interval_ns = 10 * MS;
	cfg.ack_every = 64;
	sdr_sr_flow_init(&e->f, &cfg);
	e->mem = malloc(sdr_sr_rx_size(800, 100));
	sdr_sr_rx_init(&e->f, &e->r, 800, e->mem);
}

/* deliver data packet i (or parity row j of submessage i with parity) */
static int ec_rx_pkt(struct ec_rx *e, u32 i, bool parity, u32 j, u64 now)
{
	struct sdr_pkt p = {
		.type = SDR_PKT_DATA, .policy = SDR_WIRE_POLICY_EC,
		.payload_len = 100, .msg_len = 800, .offset = i * 100,
		.aux = SDR_EC_AUX(4, 2, j),
	};

	if (parity)
		p.flags = SDR_PKT_F_PARITY;
	else if (i == 7)
		p.flags = SDR_PKT_F_LAST;
	return sdr_sr_rx_data(&e->f, &e->r, &p, now);
}

/*
 * The last submessage lost its tail (packets 6 and 7) and one parity row;
 * its last parity row closes it, it cannot be decoded (2 data + 1 parity
 * of 4), so one reorder window later a NACK names 6 and 7 although no
 * packet past 5 ever arrived.
 */
static void test_ec_nack_lost_tail(void)
{
	struct ec_rx e;
	struct sdr_pkt h;
	struct sdr_ack a;
	u64 now = 1000 * MS;
	u32 i;
	int n = 0, nacks = 0;

	ec_rx_init(&e);
	for (i = 0; i < 6; i++)
		CHECK(ec_rx_pkt(&e, i, false, 0, now) >= 0);
	CHECK(ec_rx_pkt(&e, 4, true, 1, now) & SDR_SR_RX_PARITY);
	CHECK_EQ(e.r.high, 6);
	CHECK_EQ(e.r.ec_closed, 2);
	CHECK_EQ(sdr_sr_rx_deadline(&e.f, &e.r) <= now + 1 * MS, 1);
	now += 1 * MS;
	while (sdr_sr_rx_next_ctrl(&e.f, &e.r, now, &h, &a) == 1 && n++ < 8) {
		if (h.type != SDR_PKT_NACK)
			continue;
		nacks++;
		CHECK(a.base <= 6 && a.base + a.nbits == 8);
		CHECK(!sdr_ack_bit(&a, 6 - a.base) && !sdr_ack_bit(&a, 7 - a.base));
	}
	CHECK_EQ(nacks, 1);
	free(e.mem);
}

/*
 * The last data packet and every parity row of the last submessage are
 * lost: nothing tells the receiver the submessage is over, so it never
 * NACKs it (its holes may be parity's to fill); the sender's RTO resends.
 */
static void test_ec_silent_tail_left_to_rto(void)
{
	struct ec_rx e;
	struct sdr_pkt h;
	struct sdr_ack a;
	u64 now = 1000 * MS;
	u32 i;
	int n = 0;

	ec_rx_init(&e);
	for (i = 0; i < 6; i++)		/* 6 and 7 and the parity lost */
		CHECK(ec_rx_pkt(&e, i, false, 0, now) >= 0);
	CHECK_EQ(e.r.ec_closed, 1);
	now += 1000 * MS;
	while (sdr_sr_rx_next_ctrl(&e.f, &e.r, now, &h, &a) == 1 && n++ < 8)
		CHECK_EQ(h.type, SDR_PKT_ACK);
	CHECK_EQ(e.f.st.nacks_tx, 0);
	CHECK_EQ(sdr_sr_rx_deadline(&e.f, &e.r), U64_MAX);
	/*
	 * The resent last packet arrives: the submessage closes one reorder
	 * window later and, still short of 4, NACKs packet 6.
	 */
	CHECK(ec_rx_pkt(&e, 7, false, 0, now) >= 0);
	CHECK_EQ(e.r.ec_tail_at_ns, now + 1 * MS);
	now += 1 * MS;
	n = 0;
	while (sdr_sr_rx_next_ctrl(&e.f, &e.r, now, &h, &a) == 1 && n++ < 8)
		if (h.type == SDR_PKT_NACK)
			CHECK(a.base <= 6 && !sdr_ack_bit(&a, 6 - a.base));
	CHECK_EQ(e.f.st.nacks_tx, 1);
	free(e.mem);
}

/*
 * Deliver what the sender handed out in @d (all but @skip, a bit mask of
 * indexes into @d), take the receiver's answers until it has none due by
 * @now, and give each to the sender.
 */
static void urgent_exchange(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
			    struct sdr_sr_flow *fr, struct sdr_sr_rx *r,
			    const struct sdr_sr_txd *d, u32 n, u32 skip,
			    u64 now)
{
	struct sdr_pkt h, p;
	struct sdr_ack a;
	u32 i;

	for (i = 0; i < n; i++) {
		if (skip & (1U << i))
			continue;
		p = dup_data(m, &d[i]);
		CHECK(sdr_sr_rx_data(fr, r, &p, now) >= 0);
	}
	while (sdr_sr_rx_next_ctrl(fr, r, now, &h, &a) == 1) {
		h.msg_seq = m->seq;
		CHECK(sdr_sr_tx_ack(f, m, &h, &a, now) >= 0);
	}
}

/*
 * An urgent message's resend goes out twice, the copy at once and on the
 * other path; one that is not urgent resends once.  The copy is not
 * tracked (nothing more in flight), and an answer that comes before the
 * copy is due leaves it out.
 */
static void test_sr_urgent_resend_twice(void)
{
	struct sdr_sr_flow f, fr;
	struct sdr_sr_cfg cfg;
	struct sdr_paths ps;
	struct sdr_sr_tx m;
	struct sdr_sr_rx r;
	struct sdr_sr_txd d[8], re, cp;
	void *mem = malloc(sdr_sr_tx_size(500, 100));
	void *rmem = malloc(sdr_sr_rx_size(500, 100));
	u64 now;
	u32 n, urgent, inflight;

	for (urgent = 0; urgent < 2; urgent++) {
		now = 1000 * MS;
		dup_flows(&cfg, &f, &fr, &ps);
		CHECK_EQ(sdr_sr_tx_init(&f, &m, 7, 500, mem, now), 0);
		sdr_sr_rx_init(&fr, &r, 500, rmem);
		sdr_sr_tx_set_urgent(&m, urgent);
		n = 0;
		while (n < 8 && sdr_sr_tx_next(&f, &m, now, &d[n]) == 1) {
			n++;
			now += 10 * US;
		}
		CHECK_EQ(n, 5);
		/* packet 2 is lost; the receiver NACKs it a reorder window later */
		now += 100 * US;
		urgent_exchange(&f, &m, &fr, &r, d, n, 1U << 2, now);
		now += sdr_sr_reorder_ns(&fr);
		urgent_exchange(&f, &m, &fr, &r, d, 0, 0, now);
		CHECK_EQ(m.lost.count, 1);
		CHECK_EQ(sdr_sr_tx_deadline(&f, &m, now), now);
		CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &re), 1);
		CHECK_EQ(re.idx, 2);
		CHECK(re.flags & SDR_PKT_F_RETX);
		inflight = f.inflight;
		if (!urgent) {
			CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &cp), 0);
			CHECK_EQ(f.st.urgent_dups, 0);
			continue;
		}
		/* the copy is due now, takes the other path, adds no flight */
		CHECK_EQ(sdr_sr_tx_deadline(&f, &m, now), now);
		CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &cp), 1);
		CHECK_EQ(cp.idx, 2);
		CHECK_EQ(cp.offset, 200);
		CHECK(cp.flags & SDR_PKT_F_RETX);
		CHECK(cp.path != re.path);
		CHECK_EQ(f.inflight, inflight);
		CHECK_EQ(f.st.urgent_dups, 1);
		CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &cp), 0);
		/* both arrive: the second is a duplicate, the message done */
		now += 100 * US;
		urgent_exchange(&f, &m, &fr, &r, &re, 1, 0, now);
		CHECK_EQ(m.status, SDR_SR_DONE);
		CHECK_EQ(f.inflight, 0);
	}
	/* answered before its copy went: the copy is left out */
	now = 2000 * MS;
	dup_flows(&cfg, &f, &fr, &ps);
	CHECK_EQ(sdr_sr_tx_init(&f, &m, 8, 500, mem, now), 0);
	sdr_sr_rx_init(&fr, &r, 500, rmem);
	sdr_sr_tx_set_urgent(&m, true);
	n = 0;
	while (n < 8 && sdr_sr_tx_next(&f, &m, now, &d[n]) == 1) {
		n++;
		now += 10 * US;
	}
	/* the tail (4) is lost: the timeout resends it */
	now += 100 * US;
	urgent_exchange(&f, &m, &fr, &r, d, n, 1U << 4, now);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &re), 0);
	now = sdr_sr_tx_deadline(&f, &m, now);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &re), 1);
	CHECK_EQ(re.idx, 4);
	urgent_exchange(&f, &m, &fr, &r, &re, 1, 0, now);
	CHECK_EQ(m.status, SDR_SR_DONE);
	CHECK_EQ(sdr_sr_tx_next(&f, &m, now, &cp), 0);
	CHECK_EQ(f.st.urgent_dups, 0);
	free(mem);
	free(rmem);
}

/*
 * An SR receive whose last packets are lost hears nothing more: urgent,
 * it NACKs the silent tail after the tail wait (and a second look); not
 * urgent, it leaves it to the sender's timeout.  Made urgent while
 * waiting, it arms the wait then.
 */
static void test_sr_urgent_rx_tail(void)
{
	struct sdr_sr_flow f, fr;
	struct sdr_sr_cfg cfg;
	struct sdr_paths ps;
	struct sdr_sr_tx m;
	struct sdr_sr_rx r;
	struct sdr_sr_txd d[8];
	struct sdr_pkt h, p;
	struct sdr_ack a;
	void *mem = malloc(sdr_sr_tx_size(500, 100));
	void *rmem = malloc(sdr_sr_rx_size(500, 100));
	u64 now, t0, dl;
	u32 n, i, mode, nacks;

	/* mode 0: not urgent; 1: urgent from the post; 2: made urgent late */
	for (mode = 0; mode < 3; mode++) {
		now = 1000 * MS;
		dup_flows(&cfg, &f, &fr, &ps);
		CHECK_EQ(sdr_sr_tx_init(&f, &m, 9, 500, mem, now), 0);
		sdr_sr_rx_init(&fr, &r, 500, rmem);
		if (mode == 1)
			sdr_sr_rx_set_urgent(&fr, &r, true, now);
		n = 0;
		while (n < 8 && sdr_sr_tx_next(&f, &m, now, &d[n]) == 1)
			n++;
		CHECK_EQ(n, 5);
		now += 100 * US;
		for (i = 0; i < 3; i++) {
			p = dup_data(&m, &d[i]);
			CHECK(sdr_sr_rx_data(&fr, &r, &p, now) & SDR_SR_RX_NEW);
		}
		while (sdr_sr_rx_next_ctrl(&fr, &r, now, &h, &a) == 1)
			CHECK_EQ(h.type, SDR_PKT_ACK);
		t0 = now;
		if (mode == 2) {
			now += 10 * US;
			sdr_sr_rx_set_urgent(&fr, &r, true, now);
			t0 = now;
		}
		dl = sdr_sr_rx_deadline(&fr, &r);
		if (!mode) {
			CHECK_EQ(dl, U64_MAX);
			CHECK_EQ(fr.st.tail_probes, 0);
			continue;
		}
		CHECK_EQ(dl, t0 + sdr_sr_tail_wait_ns(&fr));
		/* the second look, a quarter of the wait later, NACKs 3 and 4 */
		nacks = 0;
		for (i = 0; i < 4 && (dl = sdr_sr_rx_deadline(&fr, &r)) < U64_MAX; i++) {
			now = dl;
			while (sdr_sr_rx_next_ctrl(&fr, &r, now, &h, &a) == 1) {
				if (h.type != SDR_PKT_NACK)
					continue;
				nacks++;
				CHECK_EQ(a.base, 3);
				CHECK(!sdr_ack_bit(&a, 0) && !sdr_ack_bit(&a, 1));
			}
			if (nacks)
				break;
		}
		CHECK_EQ(nacks, 1);
		CHECK_EQ(fr.st.tail_probes, 1);
		CHECK_EQ(now, t0 + sdr_sr_tail_wait_ns(&fr) +
			 (sdr_sr_tail_wait_ns(&fr) >> 2));
	}
	free(mem);
	free(rmem);
}

static const struct imp *cur;

static void one(void)
{
	run(cur);
}

void test_sr(void)
{
	size_t i;
	char name[64];

	TAP_RUN(test_sr_dead_peer);
	TAP_RUN(test_sr_probe_train);
	TAP_RUN(test_sr_bad_ack);
	TAP_RUN(test_sr_forged_acks);
	TAP_RUN(test_sr_echo_trust);
	TAP_RUN(test_sr_abort);
	TAP_RUN(test_sr_ec_hold_capped);
	TAP_RUN(test_sr_stream_pause);
	TAP_RUN(test_sr_dup_takes_loss_back);
	TAP_RUN(test_sr_stream);
	TAP_RUN(test_sr_stream_full);
	TAP_RUN(test_sr_stream_empty);
	TAP_RUN(test_sr_stream_end_counts);
	TAP_RUN(test_sr_dup_after_done);
	TAP_RUN(test_sr_urgent_resend_twice);
	TAP_RUN(test_sr_urgent_rx_tail);
	TAP_RUN(test_ec_nack_lost_tail);
	TAP_RUN(test_ec_silent_tail_left_to_rto);
	for (i = 0; i < ARRAY_SIZE(imps); i++) {
		cur = &imps[i];
		snprintf(name, sizeof(name), "%s_10k_messages_%s",
			 imps[i].ec_k ? "ec" : imps[i].adaptive ? "adaptive" : "sr",
			 imps[i].name);
		tap_run(name, one);
	}
}
