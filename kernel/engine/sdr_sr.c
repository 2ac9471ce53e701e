// SPDX-License-Identifier: GPL-2.0
/*
 * Selective Repeat: per-packet retransmission driven by cumulative +
 * selective ACKs, receiver NACKs and per-packet RTO with exponential
 * backoff.  See sdr_sr.h for the contract and Documentation/protocol.rst
 * for the algorithm.
 */
#include "sdr_sr.h"
#include "sdr_bitmap.h"
#include "sdr_ec.h"

#define SDR_SR_W_NONE	0	/* unsent or acked */
#define SDR_SR_W_LOST	1
#define SDR_SR_W_FLIGHT	2

/* ntx[]: transmissions (saturating), and why the packet was last resent */
#define SDR_SR_NTX_MASK	0x7f
#define SDR_SR_NTX_RTO	0x80	/* its RTO declared it lost */

/* an echoed timestamp older than this is not an RTT sample (us) */
#define SDR_SR_MAX_RTT_US	60000000U
/* ADAPTIVE: repairs without a late original before the window halves */
#define SDR_SR_AD_CLEAN		16
/* ADAPTIVE: the base RTT is the least of the last one or two of these */
#define SDR_SR_BASE_WIN_NS	10000000000ULL	/* 10 s */

static bool sdr_sr_adaptive(const struct sdr_sr_flow *f)
{
	return f->cfg.flags & SDR_SR_CFG_ADAPTIVE;
}

/*
 * ADAPTIVE's DATA tell the receiver the sender's latest RTT sample (us;
 * 0: none yet): what a repair it asks for now takes, queue included.
 */
static u32 sdr_sr_rtt_us(const struct sdr_sr_flow *f)
{
	return f->rtt.samples ?
	       (u32)min_t(u64, div_u64(f->rtt.latest_ns, 1000), U32_MAX) : 0;
}

static u64 sdr_sat_add(u64 a, u64 b)
{
	return a > U64_MAX - b ? U64_MAX : a + b;
}

void sdr_sr_cfg_default(struct sdr_sr_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pay = 4096;
	cfg->max_inflight = 4096;
	cfg->pace_burst = 16 * 4096;
	cfg->alpha_pct = 25;
	cfg->rto_init_ns = 100000000ULL;	/* 100 ms */
	cfg->rto_min_ns = 200000ULL;		/* 200 us */
	cfg->rto_max_ns = 2000000000ULL;	/* 2 s */
	cfg->dead_ns = 30000000000ULL;		/* 30 s, as UCX UD */
	cfg->rnr_backoff_ns = 1000000ULL;	/* 1 ms */
	cfg->max_backoff = 7;			/* x128 */
	cfg->ackreq_every = 0;
	cfg->ack_every = 16;
	cfg->ack_delay_ns = 100000ULL;		/* 100 us */
	cfg->reorder_ns = 0;
	cfg->nack_interval_ns = 0;
	cfg->ec_beta_pct = 100;
}

static void sdr_sr_pace_burst(struct sdr_sr_flow *f)
{
	f->pace_burst_ns = div_u64(((u64)f->cfg.pace_burst * f->pace_fs1024) >> 10,
				   1000);
}

/*
 * ADAPTIVE's base RTT: the least sample of the last SDR_SR_BASE_WIN_NS
 * and of the one before, so a path that became longer is taken as it is
 * within two windows, and the queue the flow builds never sets it.
 */
static u64 sdr_sr_base_rtt(struct sdr_sr_flow *f, u64 now_ns)
{
	if (now_ns - f->base_at_ns >= SDR_SR_BASE_WIN_NS) {
		f->base_rtt_ns = f->base_win_ns;
		f->base_win_ns = U64_MAX;
		f->base_at_ns = now_ns;
	}
	f->base_win_ns = min(f->base_win_ns, f->rtt.latest_ns);
	return min(f->base_rtt_ns, f->base_win_ns);
}

/*
 * ADAPTIVE's queue on the path: the least RTT sample of this round (one
 * base RTT) and of the one before, over the base RTT.  A queue the flow
 * built holds every sample up for rounds; a host's hiccup (a receiver
 * that took its packets late, a delayed ACK) holds up single samples,
 * which the least of a round does not see.
 */
static u64 sdr_sr_queue(struct sdr_sr_flow *f, u64 base, u64 now_ns)
{
	u64 least;

	if (now_ns - f->rnd_at_ns >= base) {
		f->rnd_prev_ns = f->rnd_min_ns;
		f->rnd_min_ns = U64_MAX;
		f->rnd_at_ns = now_ns;
	}
	f->rnd_min_ns = min(f->rnd_min_ns, f->rtt.latest_ns);
	least = min(f->rnd_prev_ns, f->rnd_min_ns);
	return least > base ? least - base : 0;
}

/*
 * ADAPTIVE paces at the rate its receiver sees packets arrive (@gap_ns
 * apart, full packets), scaled by the queue the path holds: 5/4 of it
 * while the queue is short, so the rate climbs to what the path carries;
 * the rate itself once the queue passes an eighth of the base RTT (and
 * eight packets), so it stops growing; 7/8 of it past twice that, so it
 * drains.  Repairs then wait behind a short queue, not behind a window's
 * worth.  Never faster than cfg.pace_bps allows.
 */
static void sdr_sr_pace_learn(struct sdr_sr_flow *f, u32 gap_ns, u64 now_ns)
{
	u64 base, q, fs, thr;

	f->peer_gap_ns = gap_ns;
	f->pace_gain = 10;
	if (f->rtt.samples) {
		base = sdr_sr_base_rtt(f, now_ns);
		q = sdr_sr_queue(f, base, now_ns);
		thr = max(base >> 3, 8ULL * gap_ns);
		f->pace_gain = q > 2 * thr ? 7 : q > thr ? 8 : 10;
	}
	fs = div_u64(((u64)gap_ns * 1000 * 8 / f->pace_gain) << 10,
		     f->cfg.pay + SDR_WIRE_HDR_LEN);
	f->pace_fs1024 = max(fs, f->pace_cfg_fs1024);
	sdr_sr_pace_burst(f);
}

/*
 * Spread the flow's sends over the paths of @ps (initialized by the
 * caller, living as long as the flow), or over one path (NULL).  Only
 * before its first message.
 */
void sdr_sr_flow_set_paths(struct sdr_sr_flow *f, struct sdr_paths *ps)
{
	f->paths = ps;
}

/* packets the flow may have in flight now */
u32 sdr_sr_window(const struct sdr_sr_flow *f)
{
	return f->cc_on ? sdr_cc_window(&f->cc) : f->cfg.max_inflight;
}

/* the rate the flow paces at, bytes/s (wire bytes); 0: not paced */
u64 sdr_sr_rate_bytes(const struct sdr_sr_flow *f)
{
	return f->pace_fs1024 ? div64_u64(1000000000000ULL << 10,
					  f->pace_fs1024) : 0;
}

/* SR and EC pace at the rate the window's controller sets (ADAPTIVE learns its own) */
static void sdr_sr_cc_pace(struct sdr_sr_flow *f)
{
	u64 r;

	if (!f->cc_on || sdr_sr_adaptive(f))
		return;
	r = sdr_cc_rate(&f->cc);
	f->pace_fs1024 = r ? div64_u64(1000000000000ULL << 10, r) : 0;
	sdr_sr_pace_burst(f);
}

/*
 * A fixed rate (@pace_bps bit/s) or, with 0, the path's own (window and
 * rate from the path only; else the rate is fixed and the window, too,
 * is max_inflight).
 */
void sdr_sr_set_rate(struct sdr_sr_flow *f, u64 pace_bps)
{
	f->cfg.pace_bps = pace_bps;
	f->pace_cfg_fs1024 = pace_bps ?
		div64_u64(8000000000000ULL << 10, pace_bps) : 0;
	if (f->cc_on) {
		sdr_cc_set_rate(&f->cc, div_u64(pace_bps, 8));
		sdr_sr_cc_pace(f);
	} else {
		f->pace_fs1024 = f->pace_cfg_fs1024;
		sdr_sr_pace_burst(f);
	}
}

/* The receiver's window, in packets (U32_MAX: none). */
void sdr_sr_set_rwnd(struct sdr_sr_flow *f, u32 rwnd)
{
	if (f->cc_on)
		sdr_cc_set_rwnd(&f->cc, rwnd);
}

void sdr_sr_flow_init(struct sdr_sr_flow *f, const struct sdr_sr_cfg *cfg)
{
	struct sdr_cc_cfg cc;

	memset(f, 0, sizeof(*f));
	f->cfg = *cfg;
	if (!f->cfg.ack_every)
		f->cfg.ack_every = 1;
	if (!f->cfg.max_inflight)
		f->cfg.max_inflight = 1;
	sdr_rtt_init(&f->rtt, cfg->rto_init_ns, cfg->rto_min_ns,
		     cfg->rto_max_ns, cfg->alpha_pct);
	/* 8e12 ps per bit-second, scaled by 1024 for precision */
	if (cfg->pace_bps)
		f->pace_fs1024 = div64_u64(8000000000000ULL << 10,
					   cfg->pace_bps);
	f->pace_cfg_fs1024 = f->pace_fs1024;
	sdr_sr_pace_burst(f);
	f->base_rtt_ns = U64_MAX;
	f->base_win_ns = U64_MAX;
	f->rnd_min_ns = U64_MAX;
	f->rnd_prev_ns = U64_MAX;
	if (f->cfg.win_init) {
		memset(&cc, 0, sizeof(cc));
		cc.pkt_bytes = f->cfg.pay + SDR_WIRE_HDR_LEN;
		cc.win_init = f->cfg.win_init;
		cc.win_min = SDR_SR_WIN_MIN;
		cc.win_max = f->cfg.max_inflight;
		cc.burst_pkts = f->cfg.pace_burst / cc.pkt_bytes;
		cc.loss_cut_pct = f->cfg.loss_cut_pct;
		cc.rate_Bps = div_u64(f->cfg.pace_bps, 8);
		sdr_cc_init(&f->cc, &cc);
		f->cc_on = true;
		sdr_sr_cc_pace(f);
	}
}

/*
 * @n packets of @m were acknowledged for the first time: the window's
 * controller counts them as delivered, in wire bytes (an EC message's
 * with their share of the parity, which is never acknowledged but held
 * the path as well).
 */
static void sdr_sr_cc_delivered(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
				u32 n, u64 now_ns)
{
	u64 bytes = (u64)n * (m->pay + SDR_WIRE_HDR_LEN);

	if (!f->cc_on)
		return;
	if (m->ec_k)
		bytes = div_u64(bytes * (m->ec_k + m->ec_m), m->ec_k);
	sdr_cc_delivered(&f->cc, bytes,
			 f->rtt.samples ? sdr_sr_base_rtt(f, now_ns) : 0,
			 f->inflight, now_ns);
	sdr_sr_cc_pace(f);
}

/* ------------------------------------------------------------------ */
/* sender */

/*
 * When in-flight packet @i times out.  Backoff applies only while the peer
 * is silent: a packet sent before the last ACK/NACK we heard gets the
 * plain RTO (the peer is alive; random loss needs no backoff), a packet
 * sent since gets RTO << silent_rtos.  At any moment this is monotonic in
 * send time, so the flight list's head is the earliest expiry.
 */
/*
 * An EC message's lost packets are the parity's to repair first: the
 * receiver NACKs the holes of a submessage it cannot decode, and the RTO
 * waits that long more, the rest of the submessage and its parity on the
 * wire plus beta% of an SRTT (the paper's fallback timeout).  The same
 * for every packet of the message, so the flight list stays in expiry
 * order.
 */
static u64 sdr_sr_ec_hold(const struct sdr_sr_flow *f,
			  const struct sdr_sr_tx *m)
{
	if (!m->ec_k)
		return 0;
	/* capped: an SRTT inflated by a loaded host must not hold it longer */
	return min(m->ec_hold_ns + div_u64(sdr_rtt_srtt(&f->rtt) *
					   f->cfg.ec_beta_pct, 100),
		   f->cfg.rto_max_ns);
}

/*
 * How far a timeout backs off while the peer is silent: at most rto_max,
 * and never beyond dead_ns / SDR_SR_DEAD_PROBES (nor below the RTO), so a
 * peer is declared dead only after about that many probes went
 * unanswered, not after a handful that one burst of loss can swallow.
 * SR's retransmissions and NONE's credit probes both back off to it.
 */
u64 sdr_sr_silent_cap(const struct sdr_sr_flow *f)
{
	u64 cap = f->rtt.cap_ns;

	if (f->cfg.dead_ns)
		cap = min(cap, max(div_u64(f->cfg.dead_ns, SDR_SR_DEAD_PROBES),
				   sdr_rtt_rto(&f->rtt)));
	return cap;
}

/*
 * While the peer is silent (shift > 0) the timeout backs off up to
 * sdr_sr_silent_cap().  The timeout never shrinks as shift grows, and
 * over several paths it is the same for all, so expiry stays monotonic
 * in send time.
 */
static u64 sdr_sr_expiry(const struct sdr_sr_flow *f,
			 const struct sdr_sr_tx *m, u32 i)
{
	u32 shift = m->tx_ns[i] < m->last_heard_ns ? 0 :
		    min(m->silent_rtos, f->cfg.max_backoff);
	u64 t = sdr_rtt_backoff(&f->rtt, shift);

	if (shift)
		t = min(t, sdr_sr_silent_cap(f));
	/* over several paths, the slowest path's packets need its RTO */
	if (f->paths && f->paths->n > 1)
		t = max(t, sdr_path_rto(f->paths, f->rtt.init_rto_ns));
	t = sdr_sat_add(t, f->rto_extra_ns);
	return sdr_sat_add(m->tx_ns[i], sdr_sat_add(t, sdr_sr_ec_hold(f, m)));
}

static u32 sdr_sr_npkts(u32 msg_len, u32 pay)
{
	return msg_len / pay + !!(msg_len % pay);
}

/* acked, tx_ns, next, prev, ntx, where, path, lpath; 8-byte aligned */
static size_t sdr_sr_tx_size_n(size_t n)
{
	return sdr_bitmap_size((u32)n) + n * sizeof(u64) +
	       2 * ((n * sizeof(u32) + 7) & ~(size_t)7) +
	       4 * ((n + 7) & ~(size_t)7);
}

size_t sdr_sr_tx_size(u32 msg_len, u32 pay)
{
	return pay ? sdr_sr_tx_size_n(sdr_sr_npkts(msg_len, pay)) : 0;
}

/*
 * A streamed message's state, on a flow whose largest is @max_msg: that
 * of a message of as many packets, then the part of each packet and the
 * parts.
 */
size_t sdr_sr_tx_stream_size(u32 max_msg, u32 pay)
{
	size_t n = sdr_stream_max_pkts(max_msg, pay);

	return pay ? sdr_sr_tx_size_n(n) +
		     ((n * sizeof(u32) + 7) & ~(size_t)7) +
		     n * sizeof(struct sdr_sr_part) : 0;
}

static struct sdr_sr_list *sdr_sr_list_of(struct sdr_sr_tx *m, u8 where)
{
	return where == SDR_SR_W_LOST ? &m->lost : &m->flight;
}

static void sdr_sr_list_init(struct sdr_sr_list *l)
{
	l->head = SDR_SR_NIL;
	l->tail = SDR_SR_NIL;
	l->count = 0;
}

static void sdr_sr_link(struct sdr_sr_tx *m, u32 i, u8 where)
{
	struct sdr_sr_list *l = sdr_sr_list_of(m, where);

	m->where[i] = where;
	m->next[i] = SDR_SR_NIL;
	m->prev[i] = l->tail;
	if (l->tail == SDR_SR_NIL)
		l->head = i;
	else
		m->next[l->tail] = i;
	l->tail = i;
	l->count++;
}

static void sdr_sr_unlink(struct sdr_sr_tx *m, u32 i)
{
	struct sdr_sr_list *l = sdr_sr_list_of(m, m->where[i]);
	u32 n = m->next[i], p = m->prev[i];

	if (p == SDR_SR_NIL)
		l->head = n;
	else
		m->next[p] = n;
	if (n == SDR_SR_NIL)
		l->tail = p;
	else
		m->prev[n] = p;
	l->count--;
	m->where[i] = SDR_SR_W_NONE;
}

static void sdr_sr_leave_flight(struct sdr_sr_flow *f, struct sdr_sr_tx *m)
{
	m->inflight--;
	f->inflight--;
}

/* 1 + the path a copy of packet @i was declared lost on, or 0. */
static void sdr_sr_set_lpath(struct sdr_sr_tx *m, u32 i, u8 v)
{
	if (!m->lpath[i] != !v)
		m->blamed += v ? 1 : -1;
	m->lpath[i] = v;
}

/*
 * in flight -> lost; @blame: the path lost it (not the receiver, which
 * had no receive posted, nor a path that went down).
 */
static void sdr_sr_mark_lost(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u32 i,
			     bool blame, u64 now)
{
	sdr_sr_unlink(m, i);
	sdr_sr_leave_flight(f, m);
	sdr_sr_link(m, i, SDR_SR_W_LOST);
	if (f->cc_on)
		sdr_cc_lost(&f->cc);
	if (f->paths) {
		if (blame)
			sdr_path_lost(f->paths, m->path[i], now);
		else
			sdr_path_forget(f->paths, m->path[i], now);
		/* an answer to this copy takes the loss back */
		sdr_sr_set_lpath(m, i, blame ? (u8)(m->path[i] + 1) : 0);
	}
}

/*
 * A message done: remember its packets sent twice whose first copy still
 * counts lost on a path, for a duplicate named after the end.
 */
static void sdr_sr_keep_blamed(struct sdr_sr_flow *f, struct sdr_sr_tx *m)
{
	struct sdr_sr_lrec *r;
	u32 i, left = m->blamed;

	for (i = 0; left && i < m->npkts; i++) {
		if (!m->lpath[i])
			continue;
		left--;
		if ((m->ntx[i] & SDR_SR_NTX_MASK) != 2)
			continue;
		r = &f->lrec[f->lrec_next++ % SDR_SR_LREC];
		r->seq = m->seq;
		r->idx = i;
		r->lpath = m->lpath[i];
	}
}

/*
 * The receiver names packet @idx of message @seq, which this side
 * finished, as one that came twice: a loss kept by sdr_sr_keep_blamed()
 * is taken back, once.  Any other pair changes nothing.
 */
void sdr_sr_flow_dup(struct sdr_sr_flow *f, u32 seq, u32 idx)
{
	struct sdr_sr_lrec *r;
	u32 i;

	if (!f->paths)
		return;
	for (i = 0; i < SDR_SR_LREC; i++) {
		r = &f->lrec[i];
		if (!r->lpath || r->seq != seq || r->idx != idx)
			continue;
		f->st.spurious++;
		sdr_path_unlost(f->paths, r->lpath - 1);
		r->lpath = 0;
		return;
	}
}

/* Ends the message: its packets stop counting against the flow. */
static void sdr_sr_finish(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
			  int status, u64 now)
{
	u32 i;

	if (f->paths)
		for (i = m->flight.head; i != SDR_SR_NIL; i = m->next[i])
			sdr_path_forget(f->paths, m->path[i], now);
	if (f->paths && status == SDR_SR_DONE && !m->ec_k && m->blamed)
		sdr_sr_keep_blamed(f, m);
	f->inflight -= m->inflight;
	m->inflight = 0;
	m->status = status;
	m->done_ns = now;
	if (status == SDR_SR_DONE)
		f->st.tx_done++;
	else
		f->st.tx_failed++;
	if (f->rto_extra_ns && !m->spurious &&
	    ++f->rto_clean >= SDR_SR_AD_CLEAN) {
		f->rto_extra_ns /= 2;
		f->rto_clean = 0;
	}
}

static void sdr_sr_tx_setup(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
			    u32 seq, u32 n, void *mem, u64 now_ns)
{
	u8 *p = mem;

	m->seq = seq;
	m->npkts = n;
	m->pay = f->cfg.pay;
	m->limit = n;
	m->start_ns = now_ns;
	m->last_progress_ns = now_ns;
	m->last_heard_ns = now_ns;
	/* echoes of packets sent from now on are newer than this */
	m->last_tx_us = (u32)div_u64(now_ns, 1000);
	m->echo_us = m->last_tx_us - 1;
	m->dup_idx = SDR_SR_NIL;
	sdr_sr_list_init(&m->lost);
	sdr_sr_list_init(&m->flight);

	m->acked = (unsigned long *)p;
	p += sdr_bitmap_size(n);
	m->tx_ns = (u64 *)p;
	p += (size_t)n * sizeof(u64);
	m->next = (u32 *)p;
	p += ((size_t)n * sizeof(u32) + 7) & ~(size_t)7;
	m->prev = (u32 *)p;
	p += ((size_t)n * sizeof(u32) + 7) & ~(size_t)7;
	m->ntx = p;
	p += ((size_t)n + 7) & ~(size_t)7;
	m->where = p;
	p += ((size_t)n + 7) & ~(size_t)7;
	m->path = p;
	p += ((size_t)n + 7) & ~(size_t)7;
	m->lpath = p;

	sdr_bitmap_zero(m->acked, n);
	memset(m->ntx, 0, n);
	memset(m->path, 0, n);
	memset(m->lpath, 0, n);
	memset(m->where, SDR_SR_W_NONE, n);
}

int sdr_sr_tx_init(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u32 seq,
		   u32 msg_len, void *mem, u64 now_ns)
{
	memset(m, 0, sizeof(*m));
	if (!msg_len || !f->cfg.pay || !mem)
		return -EINVAL;
	sdr_sr_tx_setup(f, m, seq, sdr_sr_npkts(msg_len, f->cfg.pay), mem,
			now_ns);
	m->msg_len = msg_len;
	return 0;
}

/*
 * A streamed message (sdr_wire.h) in @mem of sdr_sr_tx_stream_size()
 * bytes: nothing may be sent until sdr_sr_tx_stream_part() gave it a
 * part, and it cannot complete before sdr_sr_tx_stream_end().
 */
int sdr_sr_tx_init_stream(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u32 seq,
			  u32 max_msg, void *mem, u64 now_ns)
{
	u32 n = sdr_stream_max_pkts(max_msg, f->cfg.pay);
	u8 *p = mem;

	memset(m, 0, sizeof(*m));
	if (n < 2 || !mem)
		return -EINVAL;
	sdr_sr_tx_setup(f, m, seq, n, mem, now_ns);
	m->stream = true;
	m->stream_open = true;
	m->max_msg = max_msg;
	m->limit = 0;
	p += sdr_sr_tx_size_n(n);
	m->pk_part = (u32 *)p;
	p += ((size_t)n * sizeof(u32) + 7) & ~(size_t)7;
	m->parts = (struct sdr_sr_part *)p;
	return 0;
}

/*
 * The next part of stream @m: @len bytes that land at @base.  It starts
 * a packet of its own, and its packets may be sent at once.  Returns
 * its index among the stream's parts; -ENOSPC when its packets do not
 * fit those the stream may have (one stays for the end), -EINVAL for an
 * empty part, one past max_msg, or a message that is no open stream.
 */
int sdr_sr_tx_stream_part(struct sdr_sr_tx *m, u32 base, u32 len)
{
	u32 n = sdr_sr_npkts(len, m->pay), i;
	struct sdr_sr_part *pt;

	if (!m->stream_open || !len || base > m->max_msg ||
	    len > m->max_msg - base)
		return -EINVAL;
	if (n >= m->npkts - m->ndata || len > U32_MAX - m->bytes)
		return -ENOSPC;
	pt = &m->parts[m->nparts];
	pt->base = base;
	pt->len = len;
	pt->first = m->ndata;
	for (i = 0; i < n; i++)
		m->pk_part[m->ndata + i] = m->nparts;
	m->ndata += n;
	m->bytes += len;
	m->limit = m->ndata;
	return (int)m->nparts++;
}

/*
 * Stream @m has all its parts: its end packet follows their packets,
 * and it is whole once that is acknowledged with the rest.
 */
int sdr_sr_tx_stream_end(struct sdr_sr_tx *m)
{
	if (!m->stream_open)
		return -EINVAL;
	m->stream_open = false;
	m->npkts = m->ndata + 1;
	m->limit = m->npkts;
	m->msg_len = m->bytes;
	return 0;
}

/*
 * Make @m an EC message: after the first transmission of each
 * submessage's k data packets come its @nparity parity packets.  Only
 * before the first packet is handed out.
 */
int sdr_sr_tx_set_ec(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u32 k,
		     u32 nparity)
{
	u64 pkt_ns;

	if (!sdr_ec_geometry_ok(k, nparity))
		return -EINVAL;
	if (!m->npkts || m->stream || m->status || m->next_new ||
	    m->lost.count)
		return -EINVAL;
	m->ec_k = (u8)k;
	m->ec_m = (u8)nparity;
	m->ngroups = DIV_ROUND_UP(m->npkts, k);
	m->par_g = 0;
	m->par_j = 0;
	pkt_ns = div_u64(((u64)(m->pay + SDR_WIRE_HDR_LEN) * f->pace_fs1024) >> 10,
			 1000);
	m->ec_hold_ns = (u64)(k + nparity) * pkt_ns;
	return 0;
}

/*
 * A message sent as its bytes get ready (its length known from the
 * start) may send new packets only below @ready_bytes.
 */
void sdr_sr_tx_set_limit(struct sdr_sr_tx *m, u32 ready_bytes)
{
	m->limit = ready_bytes >= m->msg_len ? m->npkts : ready_bytes / m->pay;
}

/*
 * Make @m urgent or not: the application waits for it before anything
 * else it has in flight (the kernel: its group is the oldest open one of
 * its context).  Each resend of an urgent message's packet a NACK
 * reported lost goes out twice, the copy right after it and on another
 * path if the flow has one: a resend lost again costs a NACK round or a
 * timeout, which the application waits out in full, and two copies make
 * that p^2 instead of p.  A timeout's resend goes once: a timeout may be
 * a queue's delay, which copies would only lengthen.
 */
void sdr_sr_tx_set_urgent(struct sdr_sr_tx *m, bool urgent)
{
	m->urgent = urgent;
	if (!urgent)
		m->dup_idx = SDR_SR_NIL;
}

/*
 * A resend turned out needless.  ADAPTIVE learns from it when the RTO
 * sent it: the timeout waits longer from now on (by an eighth of an
 * SRTT each time, up to one SRTT), and halves that after
 * SDR_SR_AD_CLEAN messages without one.  The receiver's NACKs, which
 * know of reordering, are the fast path; the RTO is the last resort.
 */
static void sdr_sr_spurious(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
			    bool rto)
{
	f->st.spurious++;
	if (!sdr_sr_adaptive(f) || !rto)
		return;
	m->spurious = true;
	f->rto_extra_ns = min(f->rto_extra_ns + (sdr_rtt_srtt(&f->rtt) >> 3),
			      sdr_rtt_srtt(&f->rtt));
	f->rto_clean = 0;
}

/*
 * The time one packet holds the path, as AUTO takes it: the gap between
 * packets the receiver acknowledges while the flow is busy, its delivery
 * rate (the rate the bottleneck passes, where the gap between packets
 * handed out is only how fast the sender can burst into a queue).  A
 * sample is the mean gap over at least SDR_SR_GAP_WIN packets acked after
 * the window's first answer (an answer acks a batch at once); a silence of
 * over two round trips (and over 1 ms and eight gaps) starts a new window,
 * so the time an application leaves between messages is not taken for a
 * slow path.  A moving average of the samples (weight 1/8).  Only SR and
 * ADAPTIVE messages count: EC's deliveries wait for decoding, which AUTO
 * counts apart.
 */
#define SDR_SR_GAP_IDLE_NS	1000000

static void sdr_sr_meter(struct sdr_sr_flow *f, u64 now_ns)
{
	u64 idle = max3((u64)SDR_SR_GAP_IDLE_NS, div_u64(f->gap_ps, 1000) * 8,
			2 * sdr_rtt_srtt(&f->rtt));
	u64 sample;

	if (!f->gap_last_ns || now_ns - f->gap_last_ns > idle) {
		f->gap_start_ns = now_ns;
		f->gap_n = 0;
	} else if (now_ns > f->gap_start_ns &&
		   ++f->gap_n >= SDR_SR_GAP_WIN) {
		sample = div_u64((now_ns - f->gap_start_ns) * 1000, f->gap_n);
		f->gap_ps = f->gap_ps ? (f->gap_ps * 7 + sample) / 8 : sample;
		f->gap_start_ns = now_ns;
		f->gap_n = 0;
	}
	f->gap_last_ns = now_ns;
}

/* Newly acked packet: returns true if it was not acked before. */
static bool sdr_sr_ack_pkt(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u32 i,
			   u64 now)
{
	u8 w;

	if (sdr_bitmap_set(m->acked, m->npkts, i))
		return false;
	m->nacked++;
	if (!m->ec_k)
		sdr_sr_meter(f, now);
	w = m->where[i];
	if (w == SDR_SR_W_LOST && m->lpath[i]) {
		/* not resent yet: the copy declared lost was answered */
		sdr_path_unlost(f->paths, m->lpath[i] - 1);
		sdr_sr_set_lpath(m, i, 0);
	}
	if (w == SDR_SR_W_FLIGHT) {
		/*
		 * An ACK sooner than the path's minimum RTT after a resend
		 * answers an earlier copy: the resend was not needed, and the
		 * copy declared lost was not.
		 */
		if ((m->ntx[i] & SDR_SR_NTX_MASK) > 1 && f->rtt.samples &&
		    now - m->tx_ns[i] < f->rtt.min_ns) {
			sdr_sr_spurious(f, m, m->ntx[i] & SDR_SR_NTX_RTO);
			if (m->lpath[i])
				sdr_path_unlost(f->paths, m->lpath[i] - 1);
			sdr_sr_set_lpath(m, i, 0);
		}
		sdr_sr_leave_flight(f, m);
		if (f->paths)
			sdr_path_acked(f->paths, m->path[i], m->tx_ns[i],
				       (m->ntx[i] & SDR_SR_NTX_MASK) == 1 &&
				       !m->ec_k, now);
	}
	if (w != SDR_SR_W_NONE)
		sdr_sr_unlink(m, i);
	return true;
}

/*
 * Packets the peer owes an answer for.  With none (a streamed message
 * waiting for its next part, everything sent acknowledged) a silent peer
 * is not a dead one.
 */
static bool sdr_sr_outstanding(const struct sdr_sr_tx *m)
{
	return m->inflight || m->lost.count;
}

/* RTO expiry and dead-peer check */
static void sdr_sr_tx_timers(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
			     u64 now)
{
	u32 expired = 0, i;

	if (m->status)
		return;
	if (f->cfg.dead_ns && sdr_sr_outstanding(m) &&
	    now - m->last_progress_ns >= f->cfg.dead_ns) {
		sdr_sr_finish(f, m, -ETIMEDOUT, now);
		return;
	}
	while (m->flight.head != SDR_SR_NIL &&
	       sdr_sr_expiry(f, m, m->flight.head) <= now) {
		i = m->flight.head;
		m->ntx[i] |= SDR_SR_NTX_RTO;
		/*
		 * A path lost it if the flow heard of a packet sent after
		 * it (on any path); a timeout with none is the flow's stall
		 * (a host's hiccup, a queue), no path's loss.
		 */
		sdr_sr_mark_lost(f, m, i, !f->paths ||
				 sdr_path_heard_after(f->paths, m->tx_ns[i]),
				 now);
		f->st.timeouts++;
		expired++;
	}
	/*
	 * A peer silent for a whole RTO makes the next timeouts back off,
	 * and the message probes until an answer acknowledges something: in
	 * rounds of SDR_SR_PROBE_TRAIN transmissions, each with ACKREQ, a
	 * round once the last one's packets were answered or timed out.  A
	 * train and not one packet: loss that comes in bursts counted in
	 * packets (a Gilbert-Elliott link, netem's gemodel) ends only as
	 * packets pass, in each direction, and a round of one packet and at
	 * most one answer moved both ends of such a burst too slowly to fit a
	 * burst into dead_ns once the RTO was long.
	 */
	if (expired && now - m->last_heard_ns >= sdr_rtt_rto(&f->rtt)) {
		if (m->silent_rtos < SDR_SR_MAX_BACKOFF)
			m->silent_rtos++;
		m->probe = sdr_sr_adaptive(f) ? 0 : SDR_SR_PROBE_TRAIN;
		m->probe_left = 0;
	}
}

/* Probing, and this round is spent: its packets are owed an answer. */
static bool sdr_sr_probe_wait(const struct sdr_sr_tx *m)
{
	return m->probe && !m->probe_left && m->inflight;
}

/* A round with transmissions left and packets in flight to copy. */
static bool sdr_sr_probe_copy_due(const struct sdr_sr_tx *m)
{
	return m->probe_left && m->flight.head != SDR_SR_NIL;
}

int sdr_sr_tx_poll(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u64 now_ns)
{
	sdr_sr_tx_timers(f, m, now_ns);
	return m->status;
}

static bool sdr_sr_tx_has_work(struct sdr_sr_tx *m)
{
	u32 lim = min(m->limit, m->npkts);

	while (m->next_new < lim &&
	       sdr_bitmap_test(m->acked, m->npkts, m->next_new))
		m->next_new++;
	return m->lost.count || m->next_new < lim;
}

static u32 sdr_sr_group_end(const struct sdr_sr_tx *m, u32 g)
{
	return min_t(u32, (g + 1) * m->ec_k, m->npkts);
}

/*
 * Parity rows of a submessage of @kg data packets: m for a full one.  A
 * short last one gets as many in proportion, m * kg / k, but at least
 * min(m, kg): with only its proportional share a 3-packet tail of a
 * (32,8) message would have one row and fail a thousand times more often
 * than a full submessage at 1% loss, setting the message's tail latency.
 * So a message pays at most m parity packets more than m/k of its size,
 * and a one-packet message one parity packet, not m.
 */
u32 sdr_sr_group_m(u32 k, u32 m, u32 kg)
{
	return max(DIV_ROUND_UP(m * kg, k), min(m, kg));
}

/* Parity of submessage par_g is due once each of its packets went out. */
static bool sdr_sr_parity_pending(const struct sdr_sr_tx *m)
{
	return m->ec_k && !m->probe && m->par_g < m->ngroups &&
	       m->next_new >= sdr_sr_group_end(m, m->par_g);
}

/* As above, skipping submessages the receiver already has whole. */
static bool sdr_sr_parity_due(struct sdr_sr_tx *m)
{
	u32 first, end;

	while (sdr_sr_parity_pending(m)) {
		first = m->par_g * m->ec_k;
		end = sdr_sr_group_end(m, m->par_g);
		if (m->par_j < sdr_sr_group_m(m->ec_k, m->ec_m, end - first) &&
		    sdr_bitmap_weight_range(m->acked, m->npkts, first,
					    end - first) < end - first)
			return true;
		m->par_g++;
		m->par_j = 0;
	}
	return false;
}

/* Charge @len payload bytes to the pacing clock. */
static void sdr_sr_pace(struct sdr_sr_flow *f, u32 len, u64 now_ns)
{
	u64 cost_ps, floor_ns;
	u32 rem;

	if (f->cc_on)
		sdr_cc_sent(&f->cc);
	if (!f->pace_fs1024)
		return;
	floor_ns = now_ns > f->pace_burst_ns ? now_ns - f->pace_burst_ns : 0;
	if (f->pace_next_ns < floor_ns)
		f->pace_next_ns = floor_ns;
	cost_ps = (((u64)len + SDR_WIRE_HDR_LEN) * f->pace_fs1024) >> 10;
	/*
	 * Over several paths a configured rate is all of theirs: with some
	 * drained or down, the rest carry their own share, not all of it.
	 * (ADAPTIVE paces at what arrives, which follows by itself.)
	 */
	if (f->paths && f->paths->n > 1 && f->pace_cfg_fs1024 &&
	    !sdr_sr_adaptive(f)) {
		u32 usable = sdr_path_usable(f->paths);

		if (usable && usable < f->paths->n)
			cost_ps = div_u64(cost_ps * f->paths->n, usable);
	}
	cost_ps += f->pace_frac_ps;
	f->pace_next_ns += div_u64_rem(cost_ps, 1000, &rem);
	f->pace_frac_ps = rem;
}

/*
 * Parity row par_j of submessage par_g.  Parity is sent once and never
 * tracked: a submessage it cannot repair falls back to the data's own
 * retransmission.  It does not count against the in-flight budget.
 */
static void sdr_sr_tx_parity(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
			     u64 now_ns, struct sdr_sr_txd *out)
{
	u32 g = m->par_g, j = m->par_j, first = g * m->ec_k;
	u32 mg = sdr_sr_group_m(m->ec_k, m->ec_m,
				sdr_sr_group_end(m, g) - first);

	if (++m->par_j == mg) {
		m->par_g++;
		m->par_j = 0;
	}
	out->idx = g;
	out->offset = g * m->ec_k * m->pay;
	out->land = out->offset;
	out->part = 0;
	out->part_base = 0;
	out->len = m->pay;
	out->flags = SDR_PKT_F_PARITY;
	/* the tail's last parity asks the receiver to report at once */
	if (j == mg - 1 && !sdr_sr_tx_has_work(m))
		out->flags |= SDR_PKT_F_ACKREQ;
	out->ts = (u32)div_u64(now_ns, 1000);
	m->last_tx_us = out->ts;
	out->aux = SDR_EC_AUX(m->ec_k, m->ec_m, j);
	out->path = f->paths ? sdr_path_pick_untracked(f->paths, SDR_PATH_ANY) : 0;
	f->st.parity_tx++;
	sdr_sr_pace(f, out->len, now_ns);
}

/* The descriptor of a transmission of packet @i (not parity). */
static void sdr_sr_tx_fill(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
			   u32 i, u8 flags, u64 now_ns, struct sdr_sr_txd *out)
{
	out->idx = i;
	out->offset = i * m->pay;
	out->land = out->offset;
	out->part = 0;
	out->part_base = 0;
	if (m->stream && i < m->ndata) {
		const struct sdr_sr_part *pt = &m->parts[m->pk_part[i]];
		u32 at = (i - pt->first) * m->pay;

		out->part = m->pk_part[i];
		out->part_base = pt->base;
		out->land = pt->base + at;
		out->len = min(m->pay, pt->len - at);
		flags |= SDR_PKT_F_STREAM;
		if (at + out->len == pt->len)
			flags |= SDR_PKT_F_PART_END;
	} else if (m->stream) {
		/* the end: no payload, lands nowhere */
		out->land = 0;
		out->len = 0;
		flags |= SDR_PKT_F_STREAM | SDR_PKT_F_LAST;
	} else {
		out->len = i == m->npkts - 1 ? m->msg_len - out->offset :
		      m->pay;
		if (i == m->npkts - 1)
			flags |= SDR_PKT_F_LAST;
	}
	out->flags = flags;
	out->ts = (u32)div_u64(now_ns, 1000);
	m->last_tx_us = out->ts;
	out->aux = m->ec_k ? SDR_EC_AUX(m->ec_k, m->ec_m, 0) :
		   sdr_sr_adaptive(f) ? sdr_sr_rtt_us(f) : 0;

	f->st.tx_pkts++;
	f->st.tx_bytes += out->len;
	sdr_sr_pace(f, out->len, now_ns);
}

/*
 * A probe round with fewer packets to resend than its train sends copies
 * of packets in flight, oldest first and round robin, each asking for an
 * answer.  A copy is not tracked: the packet keeps its own timeout.
 */
static void sdr_sr_tx_copy(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
			   u64 now_ns, struct sdr_sr_txd *out)
{
	u32 i = m->probe_copy;

	if (i >= m->npkts || m->where[i] != SDR_SR_W_FLIGHT)
		i = m->flight.head;
	m->probe_copy = m->next[i];
	m->probe_left--;
	f->st.retx_pkts++;
	sdr_sr_tx_fill(f, m, i, SDR_PKT_F_RETX | SDR_PKT_F_ACKREQ, now_ns, out);
	out->path = f->paths ? sdr_path_pick_untracked(f->paths, SDR_PATH_ANY) : 0;
}

/*
 * The second copy of an urgent message's resend, unless an answer came
 * for it meanwhile.  Untracked, as a probe's copies: the packet keeps its
 * own timeout.
 */
static bool sdr_sr_tx_urgent_copy(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
				  u64 now_ns, struct sdr_sr_txd *out)
{
	u32 i = m->dup_idx;

	m->dup_idx = SDR_SR_NIL;
	if (i >= m->npkts || m->where[i] != SDR_SR_W_FLIGHT)
		return false;
	f->st.retx_pkts++;
	f->st.urgent_dups++;
	/*
	 * Counted a transmission: a duplicate the receiver names then says
	 * nothing of whether the first copy arrived (sdr_sr_tx_dup()).
	 */
	if ((m->ntx[i] & SDR_SR_NTX_MASK) < SDR_SR_NTX_MASK)
		m->ntx[i]++;
	sdr_sr_tx_fill(f, m, i, SDR_PKT_F_RETX, now_ns, out);
	out->path = f->paths ? sdr_path_pick_untracked(f->paths, m->path[i]) : 0;
	return true;
}

int sdr_sr_tx_next(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u64 now_ns,
		   struct sdr_sr_txd *out)
{
	bool work, resend = false;
	u8 flags = 0;
	u32 i;

	sdr_sr_tx_timers(f, m, now_ns);
	if (m->status)
		return m->status < 0 ? m->status : 0;
	if (now_ns < m->rnr_until_ns)
		return 0;
	if (f->pace_next_ns > now_ns) {
		if (f->cc_on && (sdr_sr_tx_has_work(m) || sdr_sr_parity_due(m)))
			sdr_cc_held(&f->cc);
		return 0;
	}
	/*
	 * A caller allowed only some paths (a rail) resends what another
	 * cannot better, before anything; else it takes a packet only if
	 * its paths can (sdr_path_can_send()).
	 */
	if (f->paths) {
		resend = m->lost.count &&
			 sdr_path_resend_ok(f->paths, m->path[m->lost.head],
					    now_ns);
		if (!resend && !sdr_path_can_send(f->paths, now_ns))
			return 0;
	}
	if (m->dup_idx != SDR_SR_NIL && sdr_sr_tx_urgent_copy(f, m, now_ns, out))
		return 1;
	work = sdr_sr_tx_has_work(m);
	if (sdr_sr_parity_due(m)) {
		sdr_sr_tx_parity(f, m, now_ns, out);
		return 1;
	}
	if (f->inflight >= sdr_sr_window(f)) {
		if (work && f->cc_on)
			sdr_cc_held(&f->cc);
		return 0;
	}
	if (sdr_sr_probe_wait(m))
		return 0;
	/* probing: the last round's packets are resolved, a new one starts */
	if (m->probe && !m->probe_left)
		m->probe_left = m->probe;
	if (!work) {
		if (!sdr_sr_probe_copy_due(m))
			return 0;
		sdr_sr_tx_copy(f, m, now_ns, out);
		return 1;
	}

	/* the dead-peer clock starts with the first packet owed an answer */
	if (!sdr_sr_outstanding(m) && m->last_progress_ns < now_ns)
		m->last_progress_ns = now_ns;
	if (m->lost.count && f->paths && !resend) {
		/* another caller resends it: new packets only, if any */
		if (m->next_new >= min(m->limit, m->npkts))
			return 0;
		i = m->next_new++;
	} else if (m->lost.count) {
		i = m->lost.head;
		sdr_sr_unlink(m, i);
	} else {
		i = m->next_new++;
	}
	if (m->ntx[i]) {
		flags |= SDR_PKT_F_RETX;
		f->st.retx_pkts++;
		/*
		 * An urgent loss a NACK reported gets its copy; a timeout's
		 * may be a queue's delay, which a copy would only add to.
		 */
		if (m->urgent && !m->probe && !(m->ntx[i] & SDR_SR_NTX_RTO))
			m->dup_idx = i;
	}
	if (f->paths)
		m->path[i] = (u8)sdr_path_pick(f->paths, m->ntx[i] ?
					       m->path[i] : SDR_PATH_ANY, now_ns);
	if ((m->ntx[i] & SDR_SR_NTX_MASK) < SDR_SR_NTX_MASK)
		m->ntx[i]++;
	m->tx_ns[i] = now_ns;
	sdr_sr_link(m, i, SDR_SR_W_FLIGHT);
	m->inflight++;
	f->inflight++;
	if (m->probe_left)
		m->probe_left--;

	f->tx_seq++;
	/* ask for an ACK at once when probing or when this is the tail */
	if (m->probe || (f->cfg.ackreq_every &&
			 f->tx_seq % f->cfg.ackreq_every == 0) ||
	    !sdr_sr_tx_has_work(m))
		flags |= SDR_PKT_F_ACKREQ;
	sdr_sr_tx_fill(f, m, i, flags, now_ns, out);
	out->path = m->path[i];
	return 1;
}

/*
 * Packets [0, next_new) were all sent at least once and none after them
 * was (new packets go out in order; a packet is acknowledged only once it
 * was sent).  So what a receiver can truthfully claim is bounded by
 * next_new, and a claim beyond it is a forged, corrupted or misdirected
 * answer.
 */
static u32 sdr_sr_highest_bit(const struct sdr_ack *ack)
{
	u32 b = DIV_ROUND_UP((u32)ack->nbits, 8);

	u32 v, h;

	while (b--) {
		v = ack->map[b];
		if (!v)
			continue;
		for (h = 0; v >>= 1; h++)
			;
		return b * 8 + h;
	}
	return U32_MAX;
}

/*
 * Whether an ACK/NACK could have been sent by the receiver of @m: it names
 * this message, claims only packets that were sent, COMPLETE only once
 * every packet was sent, ABORT only once the receiver could have seen a
 * packet.  Nothing of an answer that fails this is used.
 */
static bool sdr_sr_ack_credible(const struct sdr_sr_tx *m,
				const struct sdr_pkt *hdr,
				const struct sdr_ack *ack)
{
	u32 hi;

	if (hdr->msg_seq != m->seq)
		return false;
	/* COMPLETE: at most every data packet was lost */
	if (hdr->aux & SDR_ACK_F_COMPLETE)
		return hdr->type == SDR_PKT_ACK && m->next_new == m->npkts &&
		       hdr->imm <= m->npkts;
	if (hdr->aux & SDR_ACK_F_ABORT)
		return hdr->type == SDR_PKT_ACK && m->next_new > 0;
	if (ack->cum > m->next_new || (u64)ack->base + ack->nbits > m->npkts)
		return false;
	hi = sdr_sr_highest_bit(ack);
	return hi == U32_MAX || ack->base + hi < m->next_new;
}

/*
 * An echoed timestamp is an RTT sample only if it is one this message
 * sent (between its post and its latest transmission) and newer than
 * every echo already sampled: a duplicated, reordered or replayed answer
 * echoes an older one and would inflate the estimate.
 */
static bool sdr_sr_echo_usable(const struct sdr_sr_tx *m, u32 ts)
{
	return ts && (s32)(ts - m->echo_us) > 0 &&
	       (s32)(m->last_tx_us - ts) >= 0;
}

/*
 * Over several paths a hole the receiver names may only be on a slower
 * path than the packets after it: it is lost once a packet sent after it
 * on its own path has arrived, or (EC, whose answers may be for packets
 * rebuilt before their copy came) once its path's timeout has passed.
 * Else the next NACK round, or the flow's timeout, decides.
 */
static bool sdr_sr_path_overdue(const struct sdr_sr_flow *f,
				const struct sdr_sr_tx *m, u32 i, u64 now_ns)
{
	if (!f->paths || f->paths->n == 1)
		return true;
	if (m->ec_k)
		return now_ns - m->tx_ns[i] >=
		       sdr_path_rto_of(f->paths, m->path[i],
				       sdr_rtt_rto(&f->rtt));
	return sdr_path_overdue(f->paths, m->path[i], m->tx_ns[i]);
}

/*
 * The receiver got packet @i twice.  Sent twice (once declared lost,
 * once resent), both copies arrived: the resend was needless, and the
 * copy declared lost was not, whenever its answer came.  A packet sent
 * more often, or one EC rebuilt from parity before its copy came, says
 * nothing of which copy arrived.  An answer may name any packet: only
 * one this side sent twice, had answered and still counts lost on a path
 * is taken back.
 */
static void sdr_sr_tx_dup(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u32 i)
{
	if (i >= m->npkts || m->ec_k ||
	    !sdr_bitmap_test(m->acked, m->npkts, i) ||
	    (m->ntx[i] & SDR_SR_NTX_MASK) != 2)
		return;
	if (f->paths && m->lpath[i]) {
		sdr_sr_spurious(f, m, m->ntx[i] & SDR_SR_NTX_RTO);
		sdr_path_unlost(f->paths, m->lpath[i] - 1);
		sdr_sr_set_lpath(m, i, 0);
	}
}

int sdr_sr_tx_ack(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
		  const struct sdr_pkt *hdr, const struct sdr_ack *ack,
		  u64 now_ns)
{
	bool nack = hdr->type == SDR_PKT_NACK;
	u32 n = m->npkts, progress = 0, i, b, end;

	if (m->status) {
		if (hdr->offset)
			sdr_sr_flow_dup(f, m->seq, hdr->offset - 1);
		return m->status;
	}
	if (nack)
		f->st.nacks_rx++;
	else
		f->st.acks_rx++;
	if (!sdr_sr_ack_credible(m, hdr, ack)) {
		f->st.bad_acks++;
		return m->status;
	}
	if (sdr_sr_echo_usable(m, hdr->ts)) {
		u32 d = (u32)div_u64(now_ns, 1000) - hdr->ts;

		m->echo_us = hdr->ts;
		if (d < SDR_SR_MAX_RTT_US) {
			sdr_rtt_sample(&f->rtt, (u64)d * 1000);
			f->st.rtt_samples++;
		}
	}
	m->last_heard_ns = now_ns;
	m->silent_rtos = 0;
	sdr_sr_set_rwnd(f, hdr->msg_len ? hdr->msg_len : U32_MAX);
	if (sdr_sr_adaptive(f) && hdr->imm &&
	    !(hdr->aux & (SDR_ACK_F_COMPLETE | SDR_ACK_F_ABORT)))
		sdr_sr_pace_learn(f, min_t(u32, hdr->imm,
					   (u32)min_t(u64, f->cfg.rto_max_ns,
						      U32_MAX)), now_ns);

	if (hdr->aux & SDR_ACK_F_ABORT) {
		/* the receiver discarded the message: it failed, not arrived */
		f->st.tx_aborted++;
		sdr_sr_finish(f, m, -ECONNABORTED, now_ns);
		return m->status;
	}
	if (hdr->aux & SDR_ACK_F_COMPLETE) {
		f->st.peer_lost += hdr->imm;
		f->st.peer_pkts += n;
		for (i = sdr_bitmap_next_zero(m->acked, n, 0); i < n;
		     i = sdr_bitmap_next_zero(m->acked, n, i + 1))
			progress += sdr_sr_ack_pkt(f, m, i, now_ns);
		m->cum = n;
		goto out;
	}
	for (i = sdr_bitmap_next_zero(m->acked, n, m->cum); i < ack->cum;
	     i = sdr_bitmap_next_zero(m->acked, n, i + 1))
		progress += sdr_sr_ack_pkt(f, m, i, now_ns);
	for (b = 0; b < ack->nbits; b += 8) {
		u32 bits = ack->map[b / 8];

		while (bits) {
			u32 bit = (u32)sdr_ffs_long(bits);

			bits &= bits - 1;
			if (b + bit < ack->nbits)
				progress += sdr_sr_ack_pkt(f, m, ack->base + b + bit,
							   now_ns);
		}
	}
	m->cum = sdr_bitmap_next_zero(m->acked, n, m->cum);
	if (hdr->offset)
		sdr_sr_tx_dup(f, m, hdr->offset - 1);

	if (nack) {
		/*
		 * Resend a named hole only if its last copy had time to
		 * arrive before the receiver looked (one SRTT ago): a copy
		 * sent since then is still on its way.  ADAPTIVE takes the
		 * latest RTT sample instead (as RACK does): it follows the
		 * queue the path holds now, where the SRTT lags behind.
		 */
		u64 guard = !f->rtt.samples ? 0 :
			    sdr_sr_adaptive(f) ? f->rtt.latest_ns : f->rtt.srtt_ns;

		end = min_t(u32, ack->base + ack->nbits, m->next_new);
		for (i = ack->base; i < end; i++) {
			if (sdr_ack_bit(ack, i - ack->base))
				continue;
			if (m->where[i] == SDR_SR_W_FLIGHT &&
			    now_ns - m->tx_ns[i] >= guard &&
			    sdr_sr_path_overdue(f, m, i, now_ns)) {
				m->ntx[i] &= ~SDR_SR_NTX_RTO;
				sdr_sr_mark_lost(f, m, i, true, now_ns);
				f->st.nack_lost++;
			}
		}
	}
out:
	if (progress) {
		sdr_sr_cc_delivered(f, m, progress, now_ns);
		m->last_progress_ns = now_ns;
		m->probe = 0;
		m->probe_left = 0;
		m->rnr_count = 0;
	}
	if (m->nacked == n)
		sdr_sr_finish(f, m, SDR_SR_DONE, now_ns);
	return m->status;
}

int sdr_sr_tx_rnr(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u64 now_ns)
{
	u64 backoff;
	u32 shift;

	if (m->status)
		return m->status;
	f->st.rnr_rx++;
	/* a receiver that got nothing of the message has nothing to refuse */
	if (!m->next_new) {
		f->st.bad_acks++;
		return m->status;
	}
	/* one pause per burst: the RNRs of packets already sent add nothing */
	if (now_ns < m->rnr_until_ns)
		return m->status;
	shift = min_t(u32, m->rnr_count, 20);
	m->rnr_count++;
	backoff = f->cfg.rnr_backoff_ns;
	if (backoff > (f->cfg.rto_max_ns >> shift))
		backoff = max(f->cfg.rto_max_ns, f->cfg.rnr_backoff_ns);
	else
		backoff <<= shift;
	m->rnr_until_ns = sdr_sat_add(now_ns, backoff);
	/* the receiver dropped what it got: resend it all, one probe first */
	while (m->flight.head != SDR_SR_NIL)
		sdr_sr_mark_lost(f, m, m->flight.head, false, now_ns);
	m->probe = 1;
	m->probe_left = 0;
	sdr_sr_tx_timers(f, m, now_ns);
	return m->status;
}

u64 sdr_sr_tx_deadline(const struct sdr_sr_flow *f,
		       const struct sdr_sr_tx *m, u64 now_ns)
{
	u64 d = U64_MAX;
	bool free;

	if (m->status)
		return U64_MAX;
	if (f->cfg.dead_ns && sdr_sr_outstanding(m))
		d = sdr_sat_add(m->last_progress_ns, f->cfg.dead_ns);
	if (m->flight.head != SDR_SR_NIL)
		d = min(d, sdr_sr_expiry(f, m, m->flight.head));
	/* parity and an urgent resend's copy take no in-flight budget */
	free = sdr_sr_parity_pending(m) || m->dup_idx != SDR_SR_NIL;
	if (free || m->lost.count || sdr_sr_probe_copy_due(m) ||
	    m->next_new < min(m->limit, m->npkts)) {
		if (now_ns < m->rnr_until_ns)
			d = min(d, m->rnr_until_ns);
		else if (free || (f->inflight < sdr_sr_window(f) &&
				  !sdr_sr_probe_wait(m)))
			d = min(d, max(now_ns, f->pace_next_ns));
		/* else: an ACK or a timeout above frees the budget */
	}
	return d;
}

void sdr_sr_tx_abort(struct sdr_sr_flow *f, struct sdr_sr_tx *m, int err,
		     u64 now_ns)
{
	if (!m->status)
		sdr_sr_finish(f, m, err < 0 ? err : -ECANCELED, now_ns);
}

/*
 * Path @path of the flow went down (sdr_path_set_down()): the packets of
 * @m in flight on it will not arrive; they are resent on the others.
 */
void sdr_sr_tx_path_down(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
			 u32 path, u64 now_ns)
{
	u32 i, next;

	if (m->status || !f->paths)
		return;
	for (i = m->flight.head; i != SDR_SR_NIL; i = next) {
		next = m->next[i];
		if (m->path[i] == path)
			sdr_sr_mark_lost(f, m, i, false, now_ns);
	}
}

/* ------------------------------------------------------------------ */
/* receiver */

/*
 * The receive map, as long as a streamed message's packets may be, then
 * a parity mask per submessage (k >= 1).
 */
size_t sdr_sr_rx_size(u32 max_len, u32 pay)
{
	u32 n;

	if (!pay)
		return 0;
	n = sdr_sr_npkts(max_len, pay);
	return sdr_bitmap_size(sdr_stream_max_pkts(max_len, pay)) +
	       (((size_t)n * sizeof(u32) + 7) & ~(size_t)7);
}

void sdr_sr_rx_init(struct sdr_sr_flow *f, struct sdr_sr_rx *r, u32 max_len,
		    void *mem)
{
	u32 n = f->cfg.pay ? sdr_sr_npkts(max_len, f->cfg.pay) : 0;
	u32 ns = sdr_stream_max_pkts(max_len, f->cfg.pay);

	memset(r, 0, sizeof(*r));
	r->max_len = max_len;
	r->map = mem;
	r->par_mask = (u32 *)((u8 *)mem + sdr_bitmap_size(ns));
	r->ack_due_ns = U64_MAX;
	r->nack_at_ns = U64_MAX;
	r->nack_fresh_at_ns = U64_MAX;
	r->ec_tail_at_ns = U64_MAX;
	r->tail_at_ns = U64_MAX;
	if (n)
		sdr_bitmap_zero(r->map, ns);
}

/*
 * How long a hole may stay before it is NACKed.  ADAPTIVE: as late as
 * reordered packets were seen to come, and at least two gaps between
 * packets; the configured value until the flow has seen two arrivals.
 */
u64 sdr_sr_reorder_ns(const struct sdr_sr_flow *f)
{
	if (sdr_sr_adaptive(f) && f->ad.gap_ns)
		return max3(f->ad.reo_ns, 2 * f->ad.gap_ns, SDR_SR_AD_MIN_REO_NS);
	if (f->cfg.reorder_ns)
		return f->cfg.reorder_ns;
	return sdr_rtt_srtt(&f->rtt) >> 2;
}

/*
 * Between NACK rounds of a message.  ADAPTIVE: a round trip (the
 * sender's latest) plus the reorder window and twice the arrival jitter,
 * so a round NACKs only repairs that are overdue.
 */
u64 sdr_sr_nack_interval_ns(const struct sdr_sr_flow *f)
{
	if (sdr_sr_adaptive(f) && f->ad.peer_rtt_ns)
		return f->ad.peer_rtt_ns + sdr_sr_reorder_ns(f) +
		       2 * f->ad.jitter_ns;
	if (f->cfg.nack_interval_ns)
		return f->cfg.nack_interval_ns;
	return sdr_rtt_srtt(&f->rtt);
}

/*
 * ADAPTIVE and urgent receives: silence after which a message's packets past the highest
 * one received count as lost, so a lost tail is NACKed like any hole
 * instead of waiting for the sender's RTO: the reorder window plus twice
 * the longest gap seen lately between arrivals (a loss counts as one),
 * and at least a quarter of a round trip (a host's hiccup is no loss).
 */
u64 sdr_sr_tail_wait_ns(const struct sdr_sr_flow *f)
{
	return max(sdr_sr_reorder_ns(f) + 2 * max(f->ad.gap_ns, f->ad.jitter_ns),
		   f->ad.peer_rtt_ns >> 2);
}

/*
 * ADAPTIVE's ACK frequency: about four per round trip at the rate packets
 * arrive, 2..64 packets; the configured one until it knows both.
 */
u32 sdr_sr_ack_every(const struct sdr_sr_flow *f)
{
	u64 n;

	if (!sdr_sr_adaptive(f) || !f->ad.gap_ns || !f->ad.peer_rtt_ns)
		return f->cfg.ack_every;
	n = div64_u64(f->ad.peer_rtt_ns >> 2, f->ad.gap_ns);
	return (u32)clamp_t(u64, n, 2, 64);
}

static void sdr_sr_nack_disarm(struct sdr_sr_rx *r)
{
	r->nack_at_ns = U64_MAX;
	r->nack_fresh_at_ns = U64_MAX;
	r->nack_round = 0;
}

/*
 * Holes below this may be NACKed.  For an EC message only those of
 * closed submessages: the others may still be repaired by parity.
 */
static u32 sdr_sr_nack_horizon(const struct sdr_sr_rx *r)
{
	if (!r->ec_k)
		return r->tail_open && !r->stream_open ? r->npkts : r->high;
	/*
	 * A closed submessage's data were all sent before its parity or
	 * the next submessage: its holes past the highest packet received
	 * (a lost tail) are losses too.
	 */
	return min(r->npkts, r->ec_closed * (u32)r->ec_k);
}

static int sdr_sr_rx_complete(struct sdr_sr_flow *f, struct sdr_sr_rx *r)
{
	r->complete = true;
	/*
	 * ADAPTIVE says it twice: a lost COMPLETE ACK would leave the
	 * sender waiting for its RTO with everything delivered.
	 */
	r->complete_ack = sdr_sr_adaptive(f) ? 2 : 1;
	r->ack_now = false;
	r->ack_due_ns = U64_MAX;
	r->ec_tail_at_ns = U64_MAX;
	r->tail_at_ns = U64_MAX;
	sdr_sr_nack_disarm(r);
	f->st.rx_done++;
	return SDR_SR_RX_COMPLETE | SDR_SR_RX_CTRL;
}

/*
 * Submessage @g of an EC message: its first packet, its number of data
 * packets, and which of them are in (bit i: packet first + i).
 */
void sdr_sr_rx_group(const struct sdr_sr_rx *r, u32 g, u32 *first, u32 *kg,
		     u64 *have)
{
	u32 i;

	*first = g * r->ec_k;
	*kg = min_t(u32, r->ec_k, r->npkts - *first);
	*have = 0;
	for (i = 0; i < *kg; i++)
		if (sdr_bitmap_test(r->map, r->npkts, *first + i))
			*have |= BIT_ULL(i);
}

static u32 sdr_sr_weight64(u64 v)
{
	return (u32)sdr_hweight_long((unsigned long)v);
}

/* Not whole yet, but enough data and parity in to rebuild the rest. */
static bool sdr_sr_decodable(const struct sdr_sr_rx *r, u32 g, u32 kg,
			     u64 have)
{
	u32 nd = sdr_sr_weight64(have);

	return nd < kg && nd + sdr_sr_weight64(r->par_mask[g]) >= kg;
}

static bool sdr_sr_group_whole(u32 kg, u64 have)
{
	return sdr_sr_weight64(have) == kg;
}

/*
 * No more parity comes for submessages below @upto (a later one's packets
 * or its own last parity row arrived): the holes of those that cannot be
 * decoded fall back to NACKs, sent at @nack_ns.
 */
static void sdr_sr_ec_close(struct sdr_sr_flow *f, struct sdr_sr_rx *r,
			    u32 upto, u64 nack_ns)
{
	bool holes = false;
	u32 g, first, kg;
	u64 have;

	upto = min(upto, r->ngroups);
	if (upto <= r->ec_closed)
		return;
	for (g = r->ec_closed; g < upto; g++) {
		sdr_sr_rx_group(r, g, &first, &kg, &have);
		if (!sdr_sr_group_whole(kg, have) &&
		    !sdr_sr_decodable(r, g, kg, have))
			holes = true;
	}
	r->ec_closed = upto;
	if (!holes || (f->cfg.flags & SDR_SR_CFG_NO_NACK))
		return;
	if (r->nack_fresh_at_ns == U64_MAX) {
		r->nack_fresh_at_ns = nack_ns;
		r->nack_fresh_end = sdr_sr_nack_horizon(r);
	} else {
		r->nack_fresh_end = max(r->nack_fresh_end,
					sdr_sr_nack_horizon(r));
	}
}

/*
 * The EC fields of packet @idx of a message of @npkts packets make sense
 * on their own: k and m in range, a data packet with row 0, a parity
 * packet at a submessage's start with a row it has.  Checked before the
 * packet changes anything, so a bad first packet cannot fix a message's k
 * and m.
 */
static bool sdr_sr_ec_fields_ok(const struct sdr_pkt *pkt, u32 idx,
				u32 npkts)
{
	u32 k = SDR_EC_AUX_K(pkt->aux), m = SDR_EC_AUX_M(pkt->aux);
	u32 j = SDR_EC_AUX_J(pkt->aux);

	if (!k || k > SDR_EC_MAX_K || !m || m > SDR_EC_MAX_M)
		return false;
	if (!(pkt->flags & SDR_PKT_F_PARITY))
		return j == 0;
	return idx % k == 0 &&
	       j < sdr_sr_group_m(k, m, min(k, npkts - idx));
}

/* The first packet of an EC message names its k and m. */
static void sdr_sr_rx_ec_start(struct sdr_sr_rx *r, const struct sdr_pkt *pkt,
			       u32 npkts)
{
	u32 k = SDR_EC_AUX_K(pkt->aux);

	r->ec_k = (u8)k;
	r->ec_m = (u8)SDR_EC_AUX_M(pkt->aux);
	r->ngroups = DIV_ROUND_UP(npkts, k);
	r->ec_closed = 0;
	memset(r->par_mask, 0, (size_t)r->ngroups * sizeof(u32));
}

/* An ACKREQ that is not a new data packet: report now. */
static void sdr_sr_rx_ackreq(struct sdr_sr_rx *r, u32 idx)
{
	if (r->complete) {
		r->complete_ack = max_t(u8, r->complete_ack, 1);
	} else {
		r->ack_now = true;
		r->ack_trigger = idx;
	}
}

static int sdr_sr_rx_parity(struct sdr_sr_flow *f, struct sdr_sr_rx *r,
			    const struct sdr_pkt *pkt, u32 idx, u64 now_ns)
{
	u32 g = idx / r->ec_k, j = SDR_EC_AUX_J(pkt->aux), first, kg, mg;
	int flags;
	u64 have;

	/* sdr_sr_ec_fields_ok() checked the row and the offset */
	sdr_sr_rx_group(r, g, &first, &kg, &have);
	mg = sdr_sr_group_m(r->ec_k, r->ec_m, kg);
	r->last_ts = pkt->ts;
	r->last_ts_ns = now_ns;
	f->st.parity_rx++;
	if (r->complete || sdr_sr_group_whole(kg, have) ||
	    (r->par_mask[g] & BIT(j))) {
		f->st.rx_dup++;
		flags = SDR_SR_RX_DUP;
	} else {
		r->par_mask[g] |= (u32)BIT(j);
		flags = SDR_SR_RX_PARITY;
		if (sdr_sr_decodable(r, g, kg, have))
			flags |= SDR_SR_RX_DECODE;
	}
	if (!r->complete) {
		if (j == mg - 1)
			sdr_sr_ec_close(f, r, g + 1,
					sdr_sat_add(now_ns, sdr_sr_reorder_ns(f)));
		if (g == r->ngroups - 1 && r->ec_tail_at_ns == U64_MAX)
			r->ec_tail_at_ns = sdr_sat_add(now_ns,
						       sdr_sr_reorder_ns(f));
	}
	if (pkt->flags & SDR_PKT_F_ACKREQ)
		sdr_sr_rx_ackreq(r, r->high ? r->high - 1 : 0);
	if (r->complete ? r->complete_ack : r->ack_now)
		flags |= SDR_SR_RX_CTRL;
	return flags;
}

/*
 * A new data packet of an EC message: is its submessage whole now (its
 * parity can go), or decodable?  And it closes every submessage before
 * its own.
 */
static int sdr_sr_rx_ec_data(struct sdr_sr_flow *f, struct sdr_sr_rx *r,
			     u32 idx, u64 now_ns)
{
	u32 g = idx / r->ec_k, first, kg;
	u64 reorder = sdr_sat_add(now_ns, sdr_sr_reorder_ns(f));
	int flags = 0;
	u64 have;

	sdr_sr_rx_group(r, g, &first, &kg, &have);
	if (sdr_sr_group_whole(kg, have)) {
		if (r->par_mask[g]) {
			r->par_mask[g] = 0;
			flags |= SDR_SR_RX_FREE_PAR;
		}
	} else if (sdr_sr_decodable(r, g, kg, have)) {
		flags |= SDR_SR_RX_DECODE;
	}
	sdr_sr_ec_close(f, r, g, reorder);
	/*
	 * The last submessage closes on its last parity row, or at the
	 * latest one reorder window after the message's last packet.
	 */
	if (idx == r->npkts - 1 && r->ec_tail_at_ns == U64_MAX)
		r->ec_tail_at_ns = reorder;
	return flags;
}

/* The median of the gap samples taken so far (at most the last N). */
static u64 sdr_sr_gap_median(const struct sdr_sr_learn *l)
{
	u64 v[SDR_SR_GAP_SAMPLES], x;
	u32 n = 0, i, j;

	for (i = 0; i < SDR_SR_GAP_SAMPLES; i++) {
		x = l->gap_win[i];
		if (!x)
			continue;
		for (j = n++; j && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return n ? v[n / 2] : 0;
}

/*
 * ADAPTIVE's gap between packets: @pkt is new to its message (in order
 * or not: under reordering the front advances in jumps, and counting
 * only the packets that move it would make the path look slower than it
 * is).  A sample is the mean gap over SDR_SR_GAP_WIN packets' worth of
 * bytes (a host that takes packets in batches sees single gaps of 0 and
 * of a whole batch); the gap is the median of the last
 * SDR_SR_GAP_SAMPLES, so neither a window where the sender paused
 * (waiting for ACKs, for the application, for a timeout) nor one a
 * batch squeezed moves it.  Measured per message, from its first
 * packet's arrival.  The longest single gap at the front (@front: @pkt
 * moved it), decaying, is the arrival jitter a silent tail must outlast.
 */
static void sdr_sr_learn_gap(struct sdr_sr_flow *f, struct sdr_sr_rx *r,
			     const struct sdr_pkt *pkt, bool front, u64 now_ns)
{
	struct sdr_sr_learn *l = &f->ad;
	u32 full = f->cfg.pay + SDR_WIRE_HDR_LEN;
	u64 cap = f->cfg.rto_max_ns, d;

	if (r->nrecv == 1) {
		r->last_new_ns = now_ns;
		l->win_start_ns = now_ns;
		l->win_bytes = 0;
		return;
	}
	/* a repair that waited a round trip is no jitter of the arrivals */
	if (front) {
		d = min(now_ns - r->last_new_ns, cap);
		l->jitter_ns = max(d, l->jitter_ns - (l->jitter_ns >> 4));
		r->last_new_ns = now_ns;
	}
	l->win_bytes += pkt->payload_len + SDR_WIRE_HDR_LEN;
	if (l->win_bytes < SDR_SR_GAP_WIN * full)
		return;
	d = min(now_ns - l->win_start_ns, cap);
	l->gap_win[l->gap_next] = max_t(u64, div_u64(d * full, l->win_bytes), 1);
	l->gap_next = (l->gap_next + 1) % SDR_SR_GAP_SAMPLES;
	l->win_start_ns = now_ns;
	l->win_bytes = 0;
	l->gap_ns = sdr_sr_gap_median(l);
}

/*
 * ADAPTIVE learns from new packet @idx of @r (@old_high before it): the
 * gap between arrivals; for a packet that fills a hole, either how long
 * a NACKed hole was repaired (a retransmission) or how late a reordered
 * original came.  An original that fills a hole already NACKed shows the
 * window was too short: it grows at once, by a quarter at least, and by
 * that quarter once per window (the originals of one NACK round all come
 * late together: they are one lesson, not one each).  After
 * SDR_SR_AD_CLEAN repairs without that, it halves, so a window a burst of
 * reordering widened comes back.  The sender's latest RTT comes in the
 * aux of every packet: the receiver's measure of the round trip.
 */
static void sdr_sr_learn(struct sdr_sr_flow *f, struct sdr_sr_rx *r,
			 const struct sdr_pkt *pkt, u32 idx, u32 old_high,
			 u64 now_ns)
{
	struct sdr_sr_learn *l = &f->ad;
	u64 cap = f->cfg.rto_max_ns, late;

	if (pkt->aux)
		l->peer_rtt_ns = min((u64)pkt->aux * 1000, cap);
	sdr_sr_learn_gap(f, r, pkt, idx >= old_high, now_ns);
	if (idx >= old_high)
		return;		/* in order: nothing overtook it */
	if (pkt->flags & SDR_PKT_F_RETX) {
		if (idx >= r->nack_hi)
			return;	/* the sender's RTO, not a NACK, repaired it */
		if (++l->clean >= SDR_SR_AD_CLEAN) {
			l->reo_ns /= 2;
			l->clean = 0;
		}
		return;
	}
	/* the original, overtaken by the packets that came before it */
	late = min((u64)(old_high - 1 - idx) * l->gap_ns, cap);
	if (idx < r->nack_hi) {
		f->st.nack_late++;
		if (now_ns - l->grown_ns >= sdr_sr_reorder_ns(f)) {
			late = max(late, sdr_sr_reorder_ns(f) * 5 / 4);
			l->grown_ns = now_ns;
		}
		l->clean = 0;
	}
	l->reo_ns = min(max(l->reo_ns, late + late / 4), cap);
}

/*
 * Packets may be missing past the highest one received: not in a stream
 * whose end did not come (nothing says there are any), nor once the
 * tail was opened for NACKs.
 */
static bool sdr_sr_tail_unseen(const struct sdr_sr_rx *r)
{
	return r->high < r->npkts && !r->tail_open && !r->stream_open;
}

/*
 * Make @r urgent or not: the application waits for it (the kernel: it
 * belongs to a group).  An urgent receive NACKs a silent tail as
 * ADAPTIVE's do, whatever its policy (the sender's timeout, the other
 * way to learn of a lost tail, is the slower), and its full NACK rounds
 * do not back off.
 */
void sdr_sr_rx_set_urgent(struct sdr_sr_flow *f, struct sdr_sr_rx *r,
			  bool urgent, u64 now_ns)
{
	if (r->urgent == urgent)
		return;
	r->urgent = urgent;
	if (sdr_sr_adaptive(f) || r->complete || !r->started ||
	    (f->cfg.flags & SDR_SR_CFG_NO_NACK))
		return;
	r->tail_at_ns = urgent && sdr_sr_tail_unseen(r) ?
			sdr_sat_add(now_ns, sdr_sr_tail_wait_ns(f)) : U64_MAX;
	r->tail_check = false;
}

/*
 * A streamed message's packet (sdr_wire_check_geometry() placed it):
 * one of a stream, not EC; a data packet below the end if that came, the
 * end past every packet that came and the same each time.  The end
 * tells how many packets the message has and its bytes: never fewer than
 * the data packets that came carry, and exactly theirs once all came.
 */
static int sdr_sr_rx_stream(struct sdr_sr_rx *r, const struct sdr_pkt *pkt,
			    u32 pay, u32 idx, bool ec)
{
	bool end = pkt->flags & SDR_PKT_F_LAST, open = true;
	u64 bytes = r->stream_bytes + pkt->payload_len;
	u32 npkts = sdr_stream_max_pkts(r->max_len, pay);

	if (ec)
		return -SDR_DROP_FLAGS;
	if (r->started) {
		if (!r->stream)
			return -SDR_DROP_MSGLEN;
		npkts = r->npkts;
		open = r->stream_open;
	}
	if (!end) {
		if (idx >= npkts - 1)
			return -SDR_DROP_GEOMETRY;
		if (r->started && sdr_bitmap_test(r->map, npkts, idx))
			return 0;		/* a duplicate */
		/* the last data packet to come makes the end's count */
		if (!open && (bytes > r->msg_len ||
			      (r->nrecv + 1 == npkts && bytes != r->msg_len)))
			return -SDR_DROP_MSGLEN;
		r->stream_bytes = bytes;
	} else if (!open) {
		return idx == npkts - 1 && pkt->msg_len == r->msg_len ?
		       0 : -SDR_DROP_MSGLEN;
	} else {
		/* every data packet that came is below it (nrecv == idx: all) */
		if (idx < r->high || pkt->msg_len < r->stream_bytes ||
		    (r->nrecv == idx && pkt->msg_len != r->stream_bytes))
			return -SDR_DROP_MSGLEN;
		open = false;
		npkts = idx + 1;
		r->msg_len = pkt->msg_len;
	}
	/* accepted: only now is the receive a stream's */
	r->started = true;
	r->stream = true;
	r->stream_open = open;
	r->npkts = npkts;
	return 0;
}

int sdr_sr_rx_data(struct sdr_sr_flow *f, struct sdr_sr_rx *r,
		   const struct sdr_pkt *pkt, u64 now_ns)
{
	u32 pay = f->cfg.pay, idx, old_high;
	bool want_ack = pkt->flags & (SDR_PKT_F_LAST | SDR_PKT_F_ACKREQ);
	bool ec = pkt->policy == SDR_WIRE_POLICY_EC;
	int ret, flags = SDR_SR_RX_NEW;
	u32 npkts;

	if (sdr_sr_adaptive(f) ? pkt->policy != SDR_WIRE_POLICY_ADAPTIVE :
	    !ec && pkt->policy != SDR_WIRE_POLICY_SR)
		return -SDR_DROP_POLICY;	/* not a message of this engine */
	if ((pkt->flags & SDR_PKT_F_PARITY) && !ec)
		return -SDR_DROP_FLAGS;		/* SR has no parity */
	ret = sdr_wire_check_geometry(pkt, pay, r->max_len);
	if (ret)
		return ret;
	idx = pkt->offset / pay;
	if (pkt->flags & SDR_PKT_F_STREAM) {
		ret = sdr_sr_rx_stream(r, pkt, pay, idx, ec);
		if (ret)
			return ret;
		goto placed;
	}
	npkts = sdr_sr_npkts(pkt->msg_len, pay);
	if (ec && !sdr_sr_ec_fields_ok(pkt, idx, npkts))
		return -SDR_DROP_EC;
	if (!r->started) {
		if (ec)
			sdr_sr_rx_ec_start(r, pkt, npkts);
		r->started = true;
		r->msg_len = pkt->msg_len;
		r->npkts = npkts;
	} else if (r->stream || pkt->msg_len != r->msg_len) {
		return -SDR_DROP_MSGLEN;
	}
	/* one message, one k and m */
	if (ec != !!r->ec_k ||
	    (ec && (SDR_EC_AUX_K(pkt->aux) != r->ec_k ||
		    SDR_EC_AUX_M(pkt->aux) != r->ec_m)))
		return -SDR_DROP_EC;
	if (pkt->flags & SDR_PKT_F_PARITY)
		return sdr_sr_rx_parity(f, r, pkt, idx, now_ns);
placed:
	r->last_ts = pkt->ts;
	r->last_ts_ns = now_ns;
	f->st.rx_pkts++;

	if (sdr_bitmap_set(r->map, r->npkts, idx)) {
		f->st.rx_dup++;
		r->dup = idx + 1;
		/* the sender resends: it may have missed our ACKs */
		if (pkt->flags & SDR_PKT_F_ACKREQ ||
		    now_ns - r->last_ack_ns >= f->cfg.ack_delay_ns) {
			sdr_sr_rx_ackreq(r, idx);
			return SDR_SR_RX_DUP | SDR_SR_RX_CTRL;
		}
		return SDR_SR_RX_DUP;
	}

	r->nrecv++;
	r->nack_shift = 0;
	if (pkt->flags & SDR_PKT_F_RETX)
		r->lost++;
	f->st.rx_bytes += pkt->payload_len;
	old_high = r->high;
	if (idx >= r->high)
		r->high = idx + 1;
	if (idx == r->cum)
		r->cum = sdr_bitmap_next_zero(r->map, r->npkts, r->cum);
	if (r->ec_k)
		flags |= sdr_sr_rx_ec_data(f, r, idx, now_ns);
	if (sdr_sr_adaptive(f))
		sdr_sr_learn(f, r, pkt, idx, old_high, now_ns);

	if (r->nrecv == r->npkts)
		return flags | sdr_sr_rx_complete(f, r);

	/*
	 * ADAPTIVE, and any urgent receive: the tail past high is lost if
	 * nothing comes for a while.
	 */
	if ((sdr_sr_adaptive(f) || r->urgent) &&
	    !(f->cfg.flags & SDR_SR_CFG_NO_NACK)) {
		if (idx >= old_high)
			r->tail_open = false;
		r->tail_at_ns = sdr_sr_tail_unseen(r) ?
				sdr_sat_add(now_ns, sdr_sr_tail_wait_ns(f)) :
				U64_MAX;
		r->tail_check = false;
	}

	if (++r->unacked >= sdr_sr_ack_every(f) || want_ack) {
		r->ack_now = true;
		r->ack_trigger = idx;
	} else if (r->ack_due_ns == U64_MAX) {
		r->ack_due_ns = sdr_sat_add(now_ns, f->cfg.ack_delay_ns);
	}

	if (!(f->cfg.flags & SDR_SR_CFG_NO_NACK)) {
		if (r->cum >= sdr_sr_nack_horizon(r)) {
			sdr_sr_nack_disarm(r);
		} else if (idx > old_high && r->nack_fresh_at_ns == U64_MAX &&
			   !r->ec_k) {
			/* a new gap [old_high, idx): NACK it after the reorder window */
			r->nack_fresh_at_ns = sdr_sat_add(now_ns, sdr_sr_reorder_ns(f));
			r->nack_fresh_end = r->high;
		}
	}
	return r->ack_now ? flags | SDR_SR_RX_CTRL : flags;
}

/*
 * Echo the newest DATA timestamp only while it is fresh: a control packet
 * sent by a timer long after that DATA arrived (a NACK round, say) would
 * hand the sender an RTT sample inflated by the wait.
 */
static u32 sdr_sr_echo_ts(const struct sdr_sr_flow *f,
			  const struct sdr_sr_rx *r, u64 now_ns)
{
	u64 fresh = max(f->cfg.ack_delay_ns, sdr_sr_reorder_ns(f));

	return now_ns - r->last_ts_ns <= fresh ? r->last_ts : 0;
}

static void sdr_sr_ctrl_hdr(struct sdr_pkt *hdr, u8 type, u32 aux,
			    const struct sdr_ack *ack, u32 ts)
{
	hdr->imm = 0;
	hdr->type = type;
	hdr->flags = 0;
	hdr->msg_len = 0;
	hdr->offset = 0;
	hdr->land = 0;
	hdr->part = 0;
	hdr->ts = ts;
	hdr->aux = aux;
	hdr->payload_len = (u16)sdr_ack_body_len(ack);
}

/* An ACK or NACK names the latest data packet that came again. */
static void sdr_sr_report_dup(struct sdr_sr_rx *r, struct sdr_pkt *hdr)
{
	hdr->offset = r->dup;
	r->dup = 0;
}

/*
 * ADAPTIVE's ACKs and NACKs tell the sender the gap between arrivals
 * (in imm, ns), which it paces by; 0: not known, or not ADAPTIVE.
 */
static u32 sdr_sr_gap_report(const struct sdr_sr_flow *f)
{
	return sdr_sr_adaptive(f) ? (u32)min_t(u64, f->ad.gap_ns, U32_MAX) : 0;
}

/* selective slice [base, base + nbits) of the receive map */
static void sdr_sr_fill_slice(struct sdr_sr_rx *r, struct sdr_ack *ack,
			      u32 base, u32 limit)
{
	ack->cum = r->cum;
	ack->base = base;
	ack->nbits = (u16)sdr_bitmap_get_slice(r->map, r->npkts, base,
					       min_t(u32, limit,
						     SDR_ACK_MAX_BITS),
					       ack->map);
}

/*
 * End of a NACK sweep.  Full rounds repeat every nack_interval, doubling
 * (up to x1024) while no new packet arrives: a pausing sender needs no
 * more NACKs.  After a fresh sweep, gaps opened since it was armed get
 * their own reorder window.
 */
static void sdr_sr_nack_sweep_end(const struct sdr_sr_flow *f,
				  struct sdr_sr_rx *r, u64 now_ns)
{
	u64 iv = sdr_sr_nack_interval_ns(f);
	u32 hz = sdr_sr_nack_horizon(r);

	if (r->nack_end > r->nack_hi)
		r->nack_hi = r->nack_end;
	if (r->nack_round == SDR_SR_NACK_FULL || r->nack_at_ns == U64_MAX) {
		iv = iv > (U64_MAX >> r->nack_shift) ? U64_MAX :
						       iv << r->nack_shift;
		r->nack_at_ns = sdr_sat_add(now_ns, iv);
		/* an urgent receive's sender is not pausing: it is waited for */
		if (r->nack_round == SDR_SR_NACK_FULL && r->nack_shift < 10 &&
		    !r->urgent)
			r->nack_shift++;
	}
	if (r->nack_round == SDR_SR_NACK_FRESH &&
	    r->nack_fresh_at_ns == U64_MAX && hz > r->nack_end &&
	    sdr_bitmap_next_zero(r->map, r->npkts, r->nack_end) < hz) {
		r->nack_fresh_at_ns = sdr_sat_add(now_ns, sdr_sr_reorder_ns(f));
		r->nack_fresh_end = hz;
	}
	r->nack_round = 0;
}

int sdr_sr_rx_next_ctrl(struct sdr_sr_flow *f, struct sdr_sr_rx *r,
			u64 now_ns, struct sdr_pkt *hdr, struct sdr_ack *ack)
{
	u32 base, start;

	if (r->complete) {
		if (!r->complete_ack)
			return 0;
		r->complete_ack--;
		r->last_ack_ns = now_ns;
		ack->cum = r->npkts;
		ack->base = r->npkts;
		ack->nbits = 0;
		sdr_sr_ctrl_hdr(hdr, SDR_PKT_ACK, SDR_ACK_F_COMPLETE, ack,
				sdr_sr_echo_ts(f, r, now_ns));
		hdr->imm = r->lost;
		sdr_sr_report_dup(r, hdr);
		f->st.acks_tx++;
		return 1;
	}
	if (!r->started)
		return 0;
	if (r->ec_tail_at_ns <= now_ns) {
		r->ec_tail_at_ns = U64_MAX;
		sdr_sr_ec_close(f, r, r->ngroups, now_ns);
	}
	if (r->tail_at_ns <= now_ns && !r->tail_check) {
		/*
		 * ADAPTIVE: the tail looks overdue.  Look again a little
		 * later: silence is evidence only if this host was taking
		 * packets all along, and one that stalled (a busy softirq, a
		 * preempted guest) runs its overdue timers before it takes
		 * what arrived meanwhile; NACKing the tail then resent what
		 * was waiting to be read.
		 */
		r->tail_check = true;
		r->tail_at_ns = sdr_sat_add(now_ns,
					    sdr_sr_tail_wait_ns(f) >> 2);
	}
	if (r->tail_at_ns <= now_ns) {
		/* ADAPTIVE: the tail is overdue; NACK it with the holes */
		r->tail_at_ns = U64_MAX;
		r->tail_check = false;
		r->tail_open = true;
		f->st.tail_probes++;
		if (r->nack_fresh_at_ns == U64_MAX)
			r->nack_fresh_at_ns = now_ns;
		r->nack_fresh_end = r->npkts;
	}

	if (r->ack_now || r->ack_due_ns <= now_ns) {
		u32 trig = r->ack_now ? r->ack_trigger : r->high - 1;

		/* the slice ends at the trigger: it covers the newest arrivals */
		base = trig + 1 > SDR_ACK_MAX_BITS ? trig + 1 - SDR_ACK_MAX_BITS : 0;
		base = max(base, r->cum);
		sdr_sr_fill_slice(r, ack, base,
				  r->high > base ? r->high - base : 0);
		sdr_sr_ctrl_hdr(hdr, SDR_PKT_ACK, 0, ack,
				sdr_sr_echo_ts(f, r, now_ns));
		hdr->imm = sdr_sr_gap_report(f);
		sdr_sr_report_dup(r, hdr);
		r->ack_now = false;
		r->ack_due_ns = U64_MAX;
		r->unacked = 0;
		r->last_ack_ns = now_ns;
		f->st.acks_tx++;
		return 1;
	}

	if (f->cfg.flags & SDR_SR_CFG_NO_NACK)
		return 0;
	if (r->cum >= sdr_sr_nack_horizon(r)) {
		sdr_sr_nack_disarm(r);
		return 0;
	}
	/*
	 * A sweep describes the holes of [from, end) in NACKs of up to 1024
	 * packets.  A fresh sweep covers gaps first seen one reorder window
	 * ago; a full round re-covers everything below high, for holes whose
	 * resend or NACK was lost too.
	 */
	for (;;) {
		if (!r->nack_round) {
			if (r->nack_fresh_at_ns <= now_ns) {
				r->nack_round = SDR_SR_NACK_FRESH;
				r->nack_cursor = max(r->nack_hi, r->cum);
				r->nack_end = r->nack_fresh_end;
				r->nack_fresh_at_ns = U64_MAX;
			} else if (r->nack_at_ns <= now_ns) {
				r->nack_round = SDR_SR_NACK_FULL;
				r->nack_cursor = r->cum;
				r->nack_end = sdr_sr_nack_horizon(r);
			} else {
				return 0;
			}
		}
		start = sdr_bitmap_next_zero(r->map, r->npkts,
					     max(r->nack_cursor, r->cum));
		if (start < r->nack_end)
			break;
		sdr_sr_nack_sweep_end(f, r, now_ns);
	}
	sdr_sr_fill_slice(r, ack, start, r->nack_end - start);
	sdr_sr_ctrl_hdr(hdr, SDR_PKT_NACK, 0, ack,
			sdr_sr_echo_ts(f, r, now_ns));
	hdr->imm = sdr_sr_gap_report(f);
	sdr_sr_report_dup(r, hdr);
	r->nack_cursor = start + ack->nbits;
	if (r->nack_cursor >= r->nack_end)
		sdr_sr_nack_sweep_end(f, r, now_ns);
	r->last_ack_ns = now_ns;
	f->st.nacks_tx++;
	return 1;
}

u64 sdr_sr_rx_deadline(const struct sdr_sr_flow *f,
		       const struct sdr_sr_rx *r)
{
	u64 d;

	if (r->complete)
		return r->complete_ack ? 0 : U64_MAX;
	if (r->ack_now)
		return 0;
	d = min3(r->ack_due_ns, r->ec_tail_at_ns, r->tail_at_ns);
	if (!(f->cfg.flags & SDR_SR_CFG_NO_NACK) &&
	    r->cum < sdr_sr_nack_horizon(r)) {
		if (r->nack_round)
			return 0;
		d = min(d, min(r->nack_at_ns, r->nack_fresh_at_ns));
	}
	return d;
}

/*
 * The caller rebuilt the missing data packets of submessage @g (which
 * sdr_sr_rx_data() reported SDR_SR_RX_DECODE) from its parity: they count
 * as received.  Returns SDR_SR_RX_* bits and the number rebuilt in
 * *@recovered, or -EINVAL if @g was not decodable.
 */
int sdr_sr_rx_decoded(struct sdr_sr_flow *f, struct sdr_sr_rx *r, u32 g,
		      u64 now_ns, u32 *recovered)
{
	u32 first, kg, i, idx, n = 0;
	u64 have;

	*recovered = 0;
	if (!r->ec_k || r->complete || g >= r->ngroups)
		return -EINVAL;
	sdr_sr_rx_group(r, g, &first, &kg, &have);
	if (!sdr_sr_decodable(r, g, kg, have))
		return -EINVAL;
	for (i = 0; i < kg; i++) {
		if (have & BIT_ULL(i))
			continue;
		idx = first + i;
		sdr_bitmap_set(r->map, r->npkts, idx);
		f->st.rx_bytes += idx == r->npkts - 1 ?
				  r->msg_len - idx * f->cfg.pay : f->cfg.pay;
		if (idx >= r->high)
			r->high = idx + 1;
		n++;
	}
	r->nrecv += n;
	r->lost += n;
	r->par_mask[g] = 0;
	r->cum = sdr_bitmap_next_zero(r->map, r->npkts, r->cum);
	r->nack_shift = 0;
	f->st.ec_recovered += n;
	f->st.ec_decodes++;
	*recovered = n;
	if (r->nrecv == r->npkts)
		return sdr_sr_rx_complete(f, r);
	r->unacked += n;
	if (r->unacked >= f->cfg.ack_every) {
		r->ack_now = true;
		r->ack_trigger = first + kg - 1;
	} else if (r->ack_due_ns == U64_MAX) {
		r->ack_due_ns = sdr_sat_add(now_ns, f->cfg.ack_delay_ns);
	}
	if (r->cum >= sdr_sr_nack_horizon(r))
		sdr_sr_nack_disarm(r);
	return r->ack_now ? SDR_SR_RX_CTRL : 0;
}

/*
 * The final answer for a message whose receive already ended and was
 * recycled, while the sender is still resending: SDR_ACK_F_COMPLETE if it
 * was delivered (the sender missed that ACK), SDR_ACK_F_ABORT if the
 * application discarded it.  @dup: 1 + the data packet that came again
 * (a COMPLETE's), or 0.
 */
void sdr_sr_stale_ack(struct sdr_pkt *hdr, struct sdr_ack *ack, u32 flags,
		      u32 ts, u32 dup)
{
	ack->cum = 0;
	ack->base = 0;
	ack->nbits = 0;
	sdr_sr_ctrl_hdr(hdr, SDR_PKT_ACK, flags, ack, ts);
	if (flags == SDR_ACK_F_COMPLETE)
		hdr->offset = dup;
}

/*
 * The caller could not use the parity it holds for submessage @g (it
 * failed to decode, or lost the payloads): forget it, so the holes fall
 * back to NACKs like those of any submessage parity cannot repair.
 */
void sdr_sr_rx_undecodable(struct sdr_sr_flow *f, struct sdr_sr_rx *r, u32 g,
			   u64 now_ns)
{
	if (!r->ec_k || g >= r->ngroups || r->complete)
		return;
	r->par_mask[g] = 0;
	if (g < r->ec_closed && !(f->cfg.flags & SDR_SR_CFG_NO_NACK)) {
		if (r->nack_fresh_at_ns == U64_MAX) {
			r->nack_fresh_at_ns = now_ns;
			r->nack_fresh_end = sdr_sr_nack_horizon(r);
		}
		r->nack_hi = min(r->nack_hi, g * (u32)r->ec_k);
	}
}
