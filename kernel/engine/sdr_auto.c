// SPDX-License-Identifier: GPL-2.0
/*
 * AUTO's model (sdr_auto.h).  The SDR paper's model of a message's
 * completion time, for the recovery sdr runs:
 *
 *   SR, ADAPTIVE: n packets, each lost with probability p.  A loss costs
 *   a recovery round R = RTT + reorder window + T_inj (the hole is NACKed
 *   a reorder window after a later packet came, the resend takes a round
 *   trip); a resend lost again costs R' more each time (ADAPTIVE: R, as
 *   its NACK rounds follow the round trip; SR: its RTO, as its NACK
 *   rounds back off).  The last repair is the maximum of n geometric
 *   chains, so
 *
 *     E[T] = n T_inj + RTT + R * r1 + R' * (rounds(n, p) - r1)
 *            + p * (tail - R)
 *     rounds(n, p) = sum over j >= 1 of 1 - (1 - p^j)^n,  r1 = 1 - (1 - p)^n
 *
 *   where a lost last packet has no later one to reveal it: it waits the
 *   tail (SR: its RTO; ADAPTIVE: its tail wait and a round trip).
 *
 *   EC(k, m): L submessages of k data and m parity packets (a short last
 *   one, sdr_sr_group_m() rows), P parity packets in all.  A submessage
 *   that lost more than m of its k + m packets falls back to SR for its
 *   holes (P_fail); the message falls back if any did:
 *
 *     P_fb = 1 - (1 - P_fail(k + m, m))^(L-1) * (1 - P_fail(last))
 *     E[T] = (n + P) T_inj + RTT + P_fb * R * (1 + rounds(m + 1, p))
 *
 *   its holes NACKed a round after its end, each lost resend another
 *   round; it resends about m + 1 packets.  Coding costs CPU time C per
 *   packet a row takes in (measured: the sender's time to build a parity
 *   row over its k inputs), for the P rows the sender builds and the n p
 *   packets the receiver rebuilds, k inputs each: C k (P + n p) more, in
 *   completion time and in time per message.
 *
 * With W messages in flight at once a message's share of the time is
 * E[T] / W (Little's law), but never below the time its packets hold the
 * path (resends and parity included) and EC's CPU its coding, so the cost
 * of a candidate, what AUTO minimizes, is
 *
 *   cost = max(E[T] / W, (packets sent per message) * T_inj + coding)
 *
 * - completion time when messages go one at a time, goodput when many do.
 *
 * Fixed point: probabilities and round counts in units of 2^-30;
 * (1 - q)^n by squaring, binomial terms by their ratio.
 */
#include "sdr_auto.h"
#include "sdr_sr.h"

#define FX		SDR_AUTO_ONE
#define FX_SHIFT	SDR_AUTO_SHIFT

static u64 fx_mul(u64 a, u64 b)
{
	/* a, b <= FX: no overflow; rounded, as squarings add up errors */
	return (a * b + FX / 2) >> FX_SHIFT;
}

/* @x^@n, x <= FX */
static u64 fx_pow(u64 x, u64 n)
{
	u64 r = FX;

	while (n) {
		if (n & 1)
			r = fx_mul(r, x);
		x = fx_mul(x, x);
		n >>= 1;
	}
	return r;
}

/* @ns * @fx, @fx in FX units (may exceed FX: a round count) */
static u64 fx_scale(u64 ns, u64 fx)
{
	return mul_u64_u64_shr(ns, fx, FX_SHIFT);
}

/* E[rounds]: sum over j >= 1 of 1 - (1 - p^j)^n, p <= FX/2 */
u64 sdr_auto_rounds(u32 n, u64 p)
{
	u64 q = p, sum = 0, t;
	u32 j;

	for (j = 1; j <= 64 && q; j++) {
		t = FX - fx_pow(FX - q, n);
		sum += t;
		if (!t)
			break;
		q = fx_mul(q, p);
	}
	return sum;
}

/*
 * P(more than @m of @n packets lost), p <= FX/2.  The binomial terms
 * relative to the first, (n-d)/(d+1) * p/(1-p) each from the one before,
 * rescaled as they grow: (1-p)^n itself may be below 2^-30.
 */
u64 sdr_auto_p_fail(u32 n, u32 m, u64 p)
{
	u64 ratio, rel = FX, total = FX, tail = 0;
	u32 d;

	if (!p || m >= n)
		return 0;
	ratio = div64_u64(p << FX_SHIFT, FX - p);	/* p / (1 - p) <= FX */
	for (d = 0; d < n && rel; d++) {
		rel = div_u64(mul_u64_u64_shr(rel, ratio, FX_SHIFT) * (n - d),
			      d + 1);
		total += rel;
		if (d + 1 > m)
			tail += rel;
		if (total > (1ULL << 50)) {
			rel >>= 20;
			total >>= 20;
			tail >>= 20;
		}
	}
	while (total > (1ULL << 33)) {
		total >>= 1;
		tail >>= 1;
	}
	return min_t(u64, div64_u64(tail << FX_SHIFT, total), FX);
}

static u64 sdr_auto_inj_ns(const struct sdr_auto_in *in, u64 pkts)
{
	return div_u64(pkts * in->tinj_ps, 1000);
}

static u64 sdr_auto_loss_of(const struct sdr_auto_in *in)
{
	return min_t(u64, in->loss, FX / 2);
}

/* EC's coding: @parity rows built, n p packets rebuilt, @k inputs each */
static u64 sdr_auto_code_ns(const struct sdr_auto_in *in, u64 n, u64 parity,
			    u32 k)
{
	u64 rows = (parity << FX_SHIFT) + n * sdr_auto_loss_of(in);

	return div_u64(fx_scale(in->code_ps * min_t(u64, k, n), rows), 1000);
}

/* completion time of one message under SR recovery (rounds, tail) */
static u64 sdr_auto_sr_done(const struct sdr_auto_in *in, u64 reorder,
			    u64 retry, u64 tail)
{
	u64 p = sdr_auto_loss_of(in), n = max_t(u32, in->msg_pkts, 1);
	u64 tinj = div_u64(in->tinj_ps, 1000);
	u64 round = in->rtt_ns + reorder + tinj;
	u64 t = sdr_auto_inj_ns(in, n) + in->rtt_ns;
	u64 all = sdr_auto_rounds((u32)n, p), r1 = FX - fx_pow(FX - p, n);

	t += fx_scale(round, r1);
	if (all > r1)
		t += fx_scale(retry ? retry + tinj : round, all - r1);
	if (tail > round)
		t += fx_scale(tail - round, p);
	return t;
}

struct sdr_auto_ec {
	u64	parity;		/* parity packets per message */
	u64	p_fb;		/* P(some submessage falls back) */
	u64	resent;		/* packets it resends, FX units */
};

static void sdr_auto_ec_shape(const struct sdr_auto_in *in, u32 k, u32 m,
			      struct sdr_auto_ec *e)
{
	u32 n = max_t(u32, in->msg_pkts, 1), groups = DIV_ROUND_UP(n, k);
	u32 kl = n - (groups - 1) * k, ml = sdr_sr_group_m(k, m, kl);
	u64 p = sdr_auto_loss_of(in), ok, full, last;

	full = sdr_auto_p_fail(k + m, m, p);
	last = sdr_auto_p_fail(kl + ml, ml, p);
	e->parity = (u64)(groups - 1) * m + ml;
	ok = fx_mul(fx_pow(FX - full, groups - 1), FX - last);
	e->p_fb = FX - ok;
	e->resent = full * (groups - 1) * (m + 1) + last * (ml + 1);
}

/*
 * Candidate @cand's cost (EC: geometry @k, @m): its share of the time with
 * in->inflight messages at once; one message's completion time in @done.
 */
u64 sdr_auto_cost_ns(const struct sdr_auto_in *in, u32 cand, u32 k, u32 m,
		     u64 *done)
{
	u64 p = sdr_auto_loss_of(in), n = max_t(u32, in->msg_pkts, 1);
	u64 tinj = div_u64(in->tinj_ps, 1000), round, code, wire;
	struct sdr_auto_ec e;

	if (cand == SDR_AUTO_EC) {
		sdr_auto_ec_shape(in, k, m, &e);
		round = in->rtt_ns + in->sr_reorder_ns + tinj;
		code = sdr_auto_code_ns(in, n, e.parity, k);
		*done = sdr_auto_inj_ns(in, n + e.parity) + in->rtt_ns + code +
			fx_scale(fx_scale(round, FX + sdr_auto_rounds(m + 1, p)),
				 e.p_fb);
		wire = sdr_auto_inj_ns(in, n + e.parity) +
		       fx_scale(tinj, e.resent) + code;
	} else {
		*done = cand == SDR_AUTO_SR ?
			sdr_auto_sr_done(in, in->sr_reorder_ns, in->sr_tail_ns,
					 in->sr_tail_ns) :
			sdr_auto_sr_done(in, in->ad_reorder_ns, 0,
					 in->ad_tail_ns);
		/* each loss resent: n / (1 - p) packets */
		wire = div64_u64(sdr_auto_inj_ns(in, n) << FX_SHIFT, FX - p);
	}
	return max(div_u64(*done, max_t(u32, in->inflight, 1)), wire);
}

/* EC geometries AUTO considers: the paper's (32,8) and its neighbours */
static const u8 sdr_auto_geo[][2] = {
	{ 8, 1 }, { 8, 2 }, { 8, 4 },
	{ 16, 1 }, { 16, 2 }, { 16, 4 }, { 16, 8 },
	{ 32, 1 }, { 32, 2 }, { 32, 4 }, { 32, 8 }, { 32, 16 },
	{ 64, 2 }, { 64, 4 }, { 64, 8 }, { 64, 16 },
};

/*
 * Every candidate's cost and the cheapest: a later candidate (in enum
 * order, EC geometries in table order) only if strictly cheaper.  Where
 * the path is the limit SR and ADAPTIVE cost the same, and SR runs: it
 * moves the same bytes with less work per packet (ADAPTIVE's receiver
 * learns the arrivals, its sender paces by them).
 */
void sdr_auto_eval(const struct sdr_auto_in *in, struct sdr_auto_pick *out)
{
	u64 best = U64_MAX, c, done;
	u32 i;

	memset(out, 0, sizeof(*out));
	out->cost_ns[SDR_AUTO_EC] = U64_MAX;
	out->done_ns[SDR_AUTO_EC] = U64_MAX;
	for (i = 0; i < ARRAY_SIZE(sdr_auto_geo); i++) {
		u32 k = sdr_auto_geo[i][0], m = sdr_auto_geo[i][1];

		if (k > in->max_k || m > in->max_m)
			continue;
		c = sdr_auto_cost_ns(in, SDR_AUTO_EC, k, m, &done);
		if (c < out->cost_ns[SDR_AUTO_EC]) {
			out->cost_ns[SDR_AUTO_EC] = c;
			out->done_ns[SDR_AUTO_EC] = done;
			out->ec_k = k;
			out->ec_m = m;
		}
	}
	for (i = SDR_AUTO_SR; i < SDR_AUTO_EC; i++)
		out->cost_ns[i] = sdr_auto_cost_ns(in, i, 0, 0,
						   &out->done_ns[i]);
	for (i = 0; i < SDR_AUTO_NCAND; i++) {
		if (out->cost_ns[i] < best) {
			best = out->cost_ns[i];
			out->cand = i;
		}
	}
}

/* ------------------------------------------------------------------ */

void sdr_auto_init(struct sdr_auto *a)
{
	memset(a, 0, sizeof(*a));
	a->pick.cand = SDR_AUTO_SR;
}

/* A message of @msg_pkts packets posted with @inflight others out. */
void sdr_auto_posted(struct sdr_auto *a, u32 msg_pkts, u32 inflight)
{
	u64 n = (u64)max_t(u32, msg_pkts, 1) << 4, w = (u64)(inflight + 1) << 4;

	a->msg_pkts16 = a->msg_pkts16 ? (a->msg_pkts16 * 7 + n) / 8 : n;
	a->inflight16 = a->inflight16 ? (a->inflight16 * 7 + w) / 8 : w;
}

/*
 * Receivers reported @lost of @pkts data packets lost (COMPLETE ACKs) by
 * @now_ns.  The older reports weigh half past SDR_AUTO_WINDOW packets and
 * again every SDR_AUTO_HALF_NS, so the estimate follows a path that
 * changes, on a fast path within a few thousand packets, on a slow one
 * within seconds.
 */
void sdr_auto_report(struct sdr_auto *a, u64 lost, u64 pkts, u64 now_ns)
{
	u64 halves;

	if (now_ns > a->aged_ns + SDR_AUTO_HALF_NS) {
		halves = div64_u64(now_ns - a->aged_ns, SDR_AUTO_HALF_NS);
		a->lost >>= min_t(u64, halves, 63);
		a->pkts >>= min_t(u64, halves, 63);
		a->aged_ns = now_ns;
	}
	a->lost += min(lost, pkts);
	a->pkts += pkts;
	while (a->pkts >= SDR_AUTO_WINDOW) {
		a->lost /= 2;
		a->pkts /= 2;
	}
}

u64 sdr_auto_loss(const struct sdr_auto *a)
{
	return a->pkts ? div64_u64(a->lost << SDR_AUTO_SHIFT, a->pkts) : 0;
}

u32 sdr_auto_msg_pkts(const struct sdr_auto *a)
{
	return (u32)max_t(u64, a->msg_pkts16 >> 4, 1);
}

u32 sdr_auto_inflight(const struct sdr_auto *a)
{
	return (u32)max_t(u64, a->inflight16 >> 4, 1);
}

bool sdr_auto_due(const struct sdr_auto *a, u64 now_ns)
{
	return now_ns >= a->next_ns;
}

/*
 * Take in what the receivers reported since the last look: the COMPLETE
 * ACKs' lost counts the engine states @sr (SR and EC messages) and @ad
 * (ADAPTIVE's, NULL if the flow has none) summed up, at @now_ns.
 */
void sdr_auto_collect(struct sdr_auto *a, const struct sdr_sr_flow *sr,
		      const struct sdr_sr_flow *ad, u64 now_ns)
{
	u64 lost = sr->st.peer_lost + (ad ? ad->st.peer_lost : 0);
	u64 pkts = sr->st.peer_pkts + (ad ? ad->st.peer_pkts : 0);

	if (pkts > a->seen_pkts && lost >= a->seen_lost)
		sdr_auto_report(a, lost - a->seen_lost, pkts - a->seen_pkts,
				now_ns);
	a->seen_lost = lost;
	a->seen_pkts = pkts;
}

/*
 * The model's input for a flow: AUTO's own measures, and the path's from
 * the engine state of what it runs now (ADAPTIVE's own, or the one SR
 * and EC share), else the other: the round trip (the smallest sample: the
 * path's, without the queue the flow's own messages in flight build,
 * which W accounts for) and the gap between packets delivered.  SR's
 * reorder window and RTO are its own; ADAPTIVE's are what its receiver
 * would learn of such a path (two packet times, at least 50 us, and its
 * tail wait; the receiver's learning stays at the receiver).  False until
 * a round trip and a gap were measured: nothing to decide from yet.
 */
bool sdr_auto_fill(const struct sdr_auto *a, const struct sdr_sr_flow *sr,
		   const struct sdr_sr_flow *ad, u32 max_k, u32 max_m,
		   struct sdr_auto_in *in)
{
	const struct sdr_sr_flow *first = sr, *second = ad;
	u64 tinj_ns, reo;

	if (ad && a->pick.cand == SDR_AUTO_ADAPTIVE) {
		first = ad;
		second = sr;
	}
	memset(in, 0, sizeof(*in));
	in->rtt_ns = first->rtt.samples ? first->rtt.min_ns :
		     second && second->rtt.samples ? second->rtt.min_ns : 0;
	in->tinj_ps = first->gap_ps ? first->gap_ps :
		      second ? second->gap_ps : 0;
	if (!in->rtt_ns || !in->tinj_ps)
		return false;
	in->loss = sdr_auto_loss(a);
	in->msg_pkts = sdr_auto_msg_pkts(a);
	in->inflight = sdr_auto_inflight(a);
	in->sr_reorder_ns = sdr_sr_reorder_ns(sr);
	in->sr_tail_ns = sdr_rtt_rto(sr->rtt.samples ? &sr->rtt : &first->rtt);
	tinj_ns = div_u64(in->tinj_ps, 1000);
	reo = max_t(u64, 2 * tinj_ns, SDR_SR_AD_MIN_REO_NS);
	in->ad_reorder_ns = reo;
	in->ad_tail_ns = in->rtt_ns + max(reo + 2 * tinj_ns, in->rtt_ns / 4);
	in->max_k = max_k;
	in->max_m = max_m;
	return true;
}

/*
 * Decide again from @in (its loss, msg_pkts and inflight are this AUTO's
 * measures; the caller fills the path's).  The choice moves only to a
 * candidate 1/64 cheaper than what runs, so measurement noise right at a
 * boundary does not flip it back and forth, or to one exactly as cheap
 * that comes first in the order of a tie (where the path is the limit,
 * from ADAPTIVE back to SR).
 * A switch itself costs nothing: each message keeps the policy it was
 * posted under.  The next decision comes two round trips later, and not
 * before 10 ms.  Returns whether it moved.
 */
#define SDR_AUTO_MIN_PERIOD_NS	10000000ULL

bool sdr_auto_decide(struct sdr_auto *a, const struct sdr_auto_in *in,
		     u64 now_ns)
{
	struct sdr_auto_pick p;
	u32 cur = a->pick.cand;
	u64 cur_cost, cur_done;
	bool moved;

	sdr_auto_eval(in, &p);
	a->decisions++;
	a->next_ns = now_ns + max_t(u64, 2 * in->rtt_ns, SDR_AUTO_MIN_PERIOD_NS);
	/* what runs now, at today's measures (EC: the geometry it runs) */
	if (cur == SDR_AUTO_EC && a->pick.ec_k) {
		cur_cost = sdr_auto_cost_ns(in, cur, a->pick.ec_k,
					    a->pick.ec_m, &cur_done);
	} else {
		cur_cost = p.cost_ns[cur];
		cur_done = p.done_ns[cur];
	}
	moved = p.cand != cur || (cur == SDR_AUTO_EC &&
				  (p.ec_k != a->pick.ec_k ||
				   p.ec_m != a->pick.ec_m));
	/* 1/64 cheaper, or as cheap and first in the order (ADAPTIVE to SR) */
	if (moved && p.cost_ns[p.cand] >= cur_cost - cur_cost / 64 &&
	    !(p.cost_ns[p.cand] == cur_cost && p.cand < cur)) {
		/* not worth a switch: keep what runs, with today's costs */
		p.cand = cur;
		if (cur == SDR_AUTO_EC) {
			p.ec_k = a->pick.ec_k;
			p.ec_m = a->pick.ec_m;
			p.cost_ns[SDR_AUTO_EC] = cur_cost;
			p.done_ns[SDR_AUTO_EC] = cur_done;
		}
		moved = false;
	}
	if (moved)
		a->switches++;
	a->pick = p;
	return moved;
}
