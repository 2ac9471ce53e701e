// SPDX-License-Identifier: GPL-2.0
/*
 * Analytical Selective Repeat model of SDR-RDMA (arXiv 2505.05366):
 *
 *   X_i = i*T_inj + (RTO + T_inj)*(Y_i - 1),  Y_i ~ geometric(1 - p)
 *   T   = max_i X_i + RTT
 *
 * The X_i are independent, so P(max X <= x) = prod_i P(X_i <= x).  With
 * R = RTO + T_inj, X_i <= x iff Y_i <= k_i(x) = floor((x - i*T_inj)/R) + 1,
 * which has probability 1 - p^k_i.  Packets with equal k_i form runs of
 * consecutive i, so the product costs O(number of retry rounds) per x;
 * E[T] = N*T_inj + RTT + integral over x >= N*T_inj of (1 - F(x)).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

/* log P(max_i X_i <= x) */
static double model_logcdf(uint32_t n, double tinj, double r, double p, double x)
{
	double lf = 0;
	uint64_t cj, cnext;
	uint32_t j;

	if (x < n * tinj)
		return -INFINITY;
	cj = n;		/* packets with k_i >= 1 */
	for (j = 1;; j++) {
		double lim = (x - j * r) / tinj;	/* k_i >= j + 1 iff i <= lim */
		double pj;

		cnext = lim < 1 ? 0 : lim >= n ? n : (uint64_t)floor(lim);
		pj = pow(p, j);
		if (cj > cnext)
			lf += (double)(cj - cnext) * log1p(-pj);
		if (!cnext || pj < 1e-300)
			break;
		cj = cnext;
	}
	return lf;
}

/*
 * Mean and quantiles of T = X + rtt from the CDF of X >= x0: the
 * trapezoid rule over the tail 1 - F in steps of h from x0, until the
 * tail is below 1e-12 and p99.9 is known.  Both models use it.
 */
static void model_integrate(double (*cdf)(void *ctx, double x), void *ctx,
			    double x0, double h, double rtt,
			    struct model_result *m)
{
	double x = x0, f = cdf(ctx, x0), prev_tail = 1 - f, integral = 0;
	double q50 = f >= 0.5 ? x0 : 0, q99 = f >= 0.99 ? x0 : 0;
	double q999 = f >= 0.999 ? x0 : 0;
	int steps;

	for (steps = 0; steps < 4000 * 400; steps++) {
		double xn = x + h, tail;

		if (prev_tail < 1e-12 && q999)
			break;
		f = cdf(ctx, xn);
		tail = 1 - f;
		integral += 0.5 * (prev_tail + tail) * h;
		if (!q50 && f >= 0.5)
			q50 = xn;
		if (!q99 && f >= 0.99)
			q99 = xn;
		if (!q999 && f >= 0.999)
			q999 = xn;
		prev_tail = tail;
		x = xn;
	}
	m->mean_ns = x0 + integral + rtt;
	m->p50_ns = (q50 ? q50 : x0) + rtt;
	m->p99_ns = (q99 ? q99 : x0) + rtt;
	m->p999_ns = (q999 ? q999 : x0) + rtt;
}

struct sr_cdf {
	uint32_t n;
	double tinj, r, p;
};

static double sr_cdf(void *ctx, double x)
{
	const struct sr_cdf *c = ctx;

	return exp(model_logcdf(c->n, c->tinj, c->r, c->p, x));
}

int model_sr(uint32_t n, double tinj, double rto, double rtt, double p,
	     struct model_result *m)
{
	struct sr_cdf c = { .n = n, .tinj = tinj, .r = rto + tinj, .p = p };
	double x0 = n * tinj;

	if (!n || tinj <= 0 || rto < 0 || p < 0 || p >= 1)
		return -1;
	if (p == 0) {
		m->mean_ns = m->p50_ns = m->p99_ns = m->p999_ns = x0 + rtt;
		return 0;
	}
	/* 1 - F(x) is flat between retry rounds except for an N*T_inj ramp */
	model_integrate(sr_cdf, &c, x0, c.r / 4000, rtt, m);
	return 0;
}

/*
 * Erasure coding (policy EC).  The paper's model:
 *
 *   P_dec      = P(at most m drops among k + m)
 *   P_fallback = 1 - P_dec^L                       (L submessages)
 *   E[T_EC]   >= (M + M*m/k)*T_inj + P_fallback*(1 + beta)*RTT
 *                + E[T_SR of the failed submessages]
 *
 * What the engine does (kernel/engine/sdr_sr.c): submessage g's k data packets
 * go out, then its m parity packets, so it has been sent completely at
 * e_g = (g + 1)*(k + m)*T_inj; the last one, of kl <= k packets, carries
 * ml = sdr_sr_group_m(k, m, kl) parity rows and ends at e_last =
 * (N + P)*T_inj.  A submessage that lost at most as many packets as it
 * has parity rows is decoded when its last packet arrives.  One that lost
 * more falls back: each lost data packet is resent, first F after e_g
 * and then every R while its resends are lost.  With NACKs F = nack_fb
 * (the NACK of its holes arrives about an RTT after e_g) and R = nack_r
 * (the receiver's full NACK rounds); without, F = rto_fb and R = rto_r,
 * its RTO held by beta% of SRTT + (k+m) packet times.  Parity is never
 * resent, so a submessage that lost a data and b parity packets
 * (a + b > m) is done once a + b - m of its a resent packets got
 * through.  With independent drops (probability p) each lost packet's
 * resends are a geometric chain: it is still missing after j resends
 * with probability p^j, and
 *
 *   U(j) = P(submessage not done after j resend rounds)
 *        = sum over a + b > m of Bin(k, p)(a) * Bin(m, p)(b)
 *                                * P(Bin(a, 1 - p^j) < a + b - m)
 *
 * with U(0) = 1 - P_dec.  Submessages are independent, so with j_g(x) the
 * resend rounds submessage g has had by x (0 before e_g + F, then
 * floor((x - e_g - F)/R) + 1),
 *
 *   P(T - RTT <= x) = prod_g (1 - U(j_g(x))),   x >= e_last
 *
 * Submessages with equal j_g(x) are consecutive, so the product costs one
 * term per resend round, as in the SR model, and E[T] integrates 1 - F.
 *
 * The last submessage is special under NACK recovery: no later packet
 * closes it.  The receiver closes it on its last parity row, or a reorder
 * window after its last data packet or any of its parity rows arrived,
 * and then NACKs all its holes, past the highest packet received too
 * (sdr_sr_nack_horizon()).  Only if its last data packet and every parity
 * row were lost (probability p^(ml + 1)) does nothing close it: then its
 * lost data packets are left to the held RTO (first resend rto_fb after
 * e_last, then every rto_r).  ec_last_undone() sums the two cases over
 * the binomial counts of lost data and parity, exactly.
 *
 * The NACK itself is lost with probability p too; then the submessage's
 * holes wait for the held RTO as well.  So a full submessage is not done
 * after j NACK-driven and jt RTO-driven rounds with probability
 * (1 - p)*U(j) + p*U(jt), and the last one likewise.
 *
 * Approximations: every packet of a submessage is taken to leave at e_g
 * (its own RTO really starts up to (k + m)*T_inj earlier, and the last
 * submessage may close, and be NACKed, up to ml*T_inj before e_last when
 * its last parity rows are lost); a resend costs no link time (it takes
 * the slot of a new packet); a lost NACK's holes wait for the held RTO,
 * while the receiver's full NACK rounds, running every nack_r since the
 * message's first NACK, may resend them sooner (pessimistic when many
 * submessages fail: 1 GiB at (32,2), 1e-2); once the RTO has resent an
 * open last submessage's last data packet, its arrival closes the
 * submessage and NACKs resend its remaining holes, where the model keeps
 * waiting for the RTO (pessimistic, at probability about p^(ml + 2)).
 *
 * Lost ACKs mostly cost nothing (later ACKs cover their packets), but a
 * lost COMPLETE ACK (probability p) leaves the sender waiting for the
 * held RTO of its unacknowledged packets, whose resends make the
 * receiver repeat it: the message completes rto_fb later.  When nothing
 * fell back, the last submessage completed on its kl-th packet to
 * arrive, and its last parity row (which asks for an ACK) repeats the
 * COMPLETE ACK if it arrived after that: if it arrived and at most
 * ml - 1 of the submessage's other kl + ml - 1 packets were lost.  So a
 * message is delayed by rto_fb with probability
 *
 *   P_ack    = P(no full submessage fell back)
 *              * p * (P_clean - P_rescue * (1 - p))
 *   P_clean  = P(at most ml of kl + ml lost)
 *   P_rescue = (1 - p) * P(at most ml - 1 of kl + ml - 1 lost)
 *
 * about 2 p^2 (the ACK, and the last parity row or its repeated ACK):
 * 2e-4 at 1e-2, 5e-3 at 5e-2, where it sets p99.9.  Not modeled: a lost
 * repeat (the resends repeat the ACK on the first to arrive and on the
 * last, which asks for one: about p^2, or 1 - (1 - p)^2 with a single
 * packet outstanding), and the lost COMPLETE ACK of a message that fell
 * back (at most p; repeated if a resend of the final burst arrives after
 * the one that completed the message).
 *
 * The paper's closed form is also returned (paper_ns), with F as its
 * fallback wait ((1 + beta)*RTT there: the FTO, then the NACK's RTT) and
 * E[T_SR] = R * sum_{j >= 1} U(j)/U(0), the resend rounds a failed
 * submessage needs.  It charges a fallback to the end of the message and
 * counts one failed submessage; the distribution above does neither, so
 * the two differ when failures are frequent or the injection time is not
 * small next to F.
 */

#define EC_MAX_ROUNDS	64
#define EC_MAX_N	(64 + 32)

/* log C(n, r) + r*lp + (n - r)*lq, n <= EC_MAX_N */
static double lbinom(uint32_t n, uint32_t r, double lp, double lq)
{
	static double lfact[EC_MAX_N + 1];
	uint32_t i;

	if (!lfact[2])
		for (i = 2; i <= EC_MAX_N; i++)
			lfact[i] = lfact[i - 1] + log((double)i);
	return lfact[n] - lfact[r] - lfact[n - r] + r * lp + (n - r) * lq;
}

/* P(more than m drops among n), summed directly: 1 - P_dec loses it */
static double ec_p_fail(uint32_t n, uint32_t m, double p)
{
	double s = 0;
	uint32_t d;

	if (p <= 0)
		return 0;
	for (d = m + 1; d <= n; d++)
		s += exp(lbinom(n, d, log(p), log1p(-p)));
	return s > 1 ? 1 : s;
}

double model_p_dec(uint32_t n, uint32_t m, double p)
{
	return 1 - ec_p_fail(n, m, p);
}

/* P(fewer than @need of @a resend chains got through), each missing with @s */
static double ec_miss(uint32_t a, uint32_t need, double s)
{
	double ls, lqs, miss = 0;
	uint32_t r;

	if (!need)
		return 0;
	if (s >= 1)
		return 1;
	if (s <= 0)
		return 0;
	ls = log(s);
	lqs = log1p(-s);
	for (r = 0; r < need; r++)
		miss += exp(lbinom(a, r, lqs, ls));
	return miss > 1 ? 1 : miss;
}

/*
 * U(j) for j = 0.. of a full submessage; entries after the last one
 * stored are taken as 0 (below 1e-30: no CDF here moves visibly).
 * Returns the number stored.
 */
static uint32_t ec_undone(uint32_t kg, uint32_t mg, double p, double *u)
{
	double lp = log(p), lq = log1p(-p);
	uint32_t j, a, b;

	for (j = 0; j < EC_MAX_ROUNDS; j++) {
		/* a resend chain still missing after j tries: p^j */
		double s = exp(j * lp), sum = 0;

		for (a = 0; a <= kg; a++) {
			double pa = exp(lbinom(kg, a, lp, lq));

			/* a + b - mg <= a resends needed, since b <= mg */
			for (b = 0; b <= mg; b++)
				if (a + b > mg)
					sum += pa * exp(lbinom(mg, b, lp, lq)) *
					       ec_miss(a, a + b - mg, s);
		}
		u[j] = sum;
		if (sum < 1e-30)
			return j + 1;
	}
	return j;
}

struct ec_model {
	const struct ec_model_params *mp;
	uint32_t lf;		/* full submessages before the last */
	uint32_t kl, ml;	/* the last one */
	double	e_unit;		/* (k + m) * T_inj */
	double	e_last;		/* (N + P) * T_inj */
	uint32_t nf;		/* U entries stored */
	double	u[EC_MAX_ROUNDS];
	/* log P(done) by (j, jt): full submessages, then the last; NAN: not yet */
	double	*lgf, *lgl;
};

/* resend rounds by time x of a chain that starts fb after e, period r */
static uint32_t ec_rounds(double e, double fb, double r, double x)
{
	double y = x - e - fb;

	if (y < 0)
		return 0;
	y = floor(y / r) + 1;
	return y >= EC_MAX_ROUNDS - 1 ? EC_MAX_ROUNDS - 1 : (uint32_t)y;
}

/*
 * P(the last submessage is not done), where a hole the receiver NACKs is
 * still missing with probability sn and one only the RTO resends with
 * st.  The receiver NACKs its holes once it is closed: on its last
 * parity row, or a reorder window after its last data packet or any of
 * its parity rows arrived.  So it stays open, and the RTO resends its
 * holes, only if its last data packet and all its ml parity rows were
 * lost; then all of its a lost data packets must get through.  Else a
 * data and b parity packets lost leave it undone while fewer than
 * a + b - ml resends got through, as for a full submessage.  Splitting
 * on the last data packet: a lost among the kl - 1 before it, and
 *
 *   open:   p * Bin(kl-1, p)(a-1) * p^ml         resends missing: st
 *   closed: the rest of Bin(kl, p)(a) Bin(ml, p)(b), with b = ml only
 *           when the last data packet arrived: (1-p) Bin(kl-1, p)(a) p^ml
 */
static double ec_last_undone1(const struct ec_model *em, double sn, double st)
{
	double p = em->mp->p, lp = log(p), lq = log1p(-p), und = 0;
	uint32_t kl = em->kl, ml = em->ml, a, b;

	for (a = 0; a <= kl; a++) {
		for (b = 0; b <= ml; b++) {
			double pc;

			if (a + b <= ml)
				continue;
			if (b < ml)
				pc = exp(lbinom(kl, a, lp, lq) +
					 lbinom(ml, b, lp, lq));
			else if (a < kl)
				pc = exp(lq + lbinom(kl - 1, a, lp, lq) + ml * lp);
			else
				pc = 0;
			und += pc * ec_miss(a, a + b - ml, sn);
		}
		/* open: the last data packet and every parity row lost */
		if (a)
			und += exp(lp + lbinom(kl - 1, a - 1, lp, lq) + ml * lp) *
			       ec_miss(a, a, st);
	}
	return und > 1 ? 1 : und;
}

static double ec_last_undone(const struct ec_model *em, uint32_t j, uint32_t jt)
{
	double p = em->mp->p, sn = j ? pow(p, j) : 1, st = jt ? pow(p, jt) : 1;

	if (!em->mp->nack)
		return ec_last_undone1(em, st, st);
	/* its NACK arrived, or not: then the RTO resends all */
	return (1 - p) * ec_last_undone1(em, sn, st) +
	       p * ec_last_undone1(em, st, st);
}

static double ec_full_undone(const struct ec_model *em, uint32_t j, uint32_t jt)
{
	double p = em->mp->p;
	double uj = j < em->nf ? em->u[j] : 0, ut = jt < em->nf ? em->u[jt] : 0;

	return em->mp->nack ? (1 - p) * uj + p * ut : ut;
}

/* log P(done) of a submessage by (j, jt) rounds, from the memo @tab */
static double ec_lg(struct ec_model *em, double *tab, bool last, uint32_t j,
		    uint32_t jt)
{
	double *l = &tab[j * EC_MAX_ROUNDS + jt];

	if (isnan(*l))
		*l = log1p(-(last ? ec_last_undone(em, j, jt) :
				    ec_full_undone(em, j, jt)));
	return *l;
}

/*
 * Full submessages g < c have had at least j rounds of a chain (fb, r)
 * by x, where g + 1 <= (x - fb - (j - 1)*r)/e_unit (e_g = (g + 1)*e_unit).
 */
static uint64_t ec_count(const struct ec_model *em, double fb, double r,
			 uint32_t j, double x)
{
	double lim = (x - fb - (j - 1.0) * r) / em->e_unit;

	return lim < 1 ? 0 : lim >= em->lf ? em->lf : (uint64_t)floor(lim);
}

/* log P(every submessage done by x), x >= e_last */
static double ec_logcdf(struct ec_model *em, double x)
{
	const struct ec_model_params *mp = em->mp;
	uint64_t g = 0, end;
	uint32_t j, jt;
	double lf;

	j = mp->nack ? ec_rounds(em->e_last, mp->nack_fb_ns, mp->nack_r_ns, x) : 0;
	jt = ec_rounds(em->e_last, mp->rto_fb_ns, mp->rto_r_ns, x);
	lf = ec_lg(em, em->lgl, true, j, jt);
	/*
	 * Full submessages in order of age: the rounds of both chains only
	 * fall with g, so they form runs of equal (j, jt), one per change.
	 */
	while (g < em->lf) {
		double e = (g + 1.0) * em->e_unit;

		j = mp->nack ? ec_rounds(e, mp->nack_fb_ns, mp->nack_r_ns, x) : 0;
		jt = ec_rounds(e, mp->rto_fb_ns, mp->rto_r_ns, x);
		end = em->lf;
		/* g has j rounds: so do the next ones, up to the count with j */
		if (j) {
			uint64_t c = ec_count(em, mp->nack_fb_ns, mp->nack_r_ns, j, x);

			end = c < end ? c : end;
		}
		if (jt) {
			uint64_t c = ec_count(em, mp->rto_fb_ns, mp->rto_r_ns, jt, x);

			end = c < end ? c : end;
		}
		if (end <= g)
			end = g + 1;	/* rounding at a run's edge */
		lf += (double)(end - g) * ec_lg(em, em->lgf, false, j, jt);
		g = end;
	}
	return lf;
}

/* The EC model's CDF, less the messages a lost COMPLETE ACK holds back. */
struct ec_cdf {
	struct ec_model *em;
	double ack_end, p_ack;
};

static double ec_cdf(void *ctx, double x)
{
	const struct ec_cdf *c = ctx;

	return exp(ec_logcdf(c->em, x)) - (x < c->ack_end ? c->p_ack : 0);
}

int model_ec(const struct ec_model_params *mp, struct model_result *mr)
{
	struct ec_model em;
	struct ec_cdf c = { .em = &em };
	double x0, h, extra = 0, p = mp->p, fb, r, pclean, prescue;
	uint32_t L, npar, j, k = mp->k, m = mp->m, n = mp->n;

	if (!n || !k || !m || k + m > EC_MAX_N || mp->tinj_ns <= 0 ||
	    (mp->nack && (mp->nack_fb_ns < 0 || mp->nack_r_ns <= 0)) ||
	    mp->rto_fb_ns < 0 || mp->rto_r_ns <= 0 || p < 0 || p >= 1)
		return -1;
	fb = mp->nack ? mp->nack_fb_ns : mp->rto_fb_ns;
	r = mp->nack ? mp->nack_r_ns : mp->rto_r_ns;
	memset(&em, 0, sizeof(em));
	em.mp = mp;
	L = (n + k - 1) / k;
	em.lf = L - 1;
	em.kl = n - (L - 1) * k;
	em.ml = sdr_sr_group_m(k, m, em.kl);
	npar = (L - 1) * m + em.ml;
	x0 = (double)(n + npar) * mp->tinj_ns;
	em.e_unit = (k + m) * mp->tinj_ns;
	em.e_last = x0;

	memset(mr, 0, sizeof(*mr));
	mr->p_fail = ec_p_fail(k + m, m, p);
	mr->p_dec = 1 - mr->p_fail;
	if (p == 0) {
		mr->mean_ns = mr->p50_ns = mr->p99_ns = mr->p999_ns = x0 + mp->rtt_ns;
		mr->paper_ns = x0 + mp->rtt_ns;
		return 0;
	}
	mr->p_fallback = -expm1((L - 1) * log1p(-mr->p_fail) +
				log1p(-ec_p_fail(em.kl + em.ml, em.ml, p)));
	/* a lost COMPLETE ACK, not repeated on the last parity row */
	pclean = 1 - ec_p_fail(em.kl + em.ml, em.ml, p);
	prescue = (1 - p) * (1 - ec_p_fail(em.kl + em.ml - 1, em.ml - 1, p));
	mr->p_ack = p * (pclean - prescue * (1 - p)) *
		    exp((L - 1) * log1p(-mr->p_fail));
	c.ack_end = x0 + mp->rto_fb_ns;
	c.p_ack = mr->p_ack;

	em.nf = ec_undone(k, m, p, em.u);
	/* the paper's form: one failed submessage, charged to the end */
	for (j = 1; j < em.nf && em.u[0] > 0; j++)
		extra += r * em.u[j] / em.u[0];
	mr->paper_ns = x0 + mp->rtt_ns + mr->p_fallback * (fb + extra);

	em.lgf = malloc(2 * EC_MAX_ROUNDS * EC_MAX_ROUNDS * sizeof(double));
	if (!em.lgf)
		return -1;
	em.lgl = em.lgf + EC_MAX_ROUNDS * EC_MAX_ROUNDS;
	for (j = 0; j < 2 * EC_MAX_ROUNDS * EC_MAX_ROUNDS; j++)
		em.lgf[j] = NAN;

	/* 1 - F(x) is flat but for ramps as wide as the injection time */
	h = fmin(fmin(fb, r), fmin(mp->rto_fb_ns, mp->rto_r_ns)) / 4000;
	if (h <= 0)
		h = fmin(r, mp->rto_r_ns) / 4000;
	model_integrate(ec_cdf, &c, x0, h, mp->rtt_ns, mr);
	free(em.lgf);
	return 0;
}

/*
 * The engine's timers on the simulated path (sim.c's sim_cfg()): SRTT
 * converges to the base RTT, RTO = (1 + alpha)*SRTT, and an EC message's
 * RTO waits beta%*SRTT + (k+m)*T_inj more.  The SR model is the paper's
 * (RTO-only recovery) whatever --recovery says; the EC model follows the
 * recovery mode, since it decides how soon a submessage falls back.
 */
int sim_model(const struct sim_params *p, struct model_result *m)
{
	double tinj = sim_tinj_ns(p);
	double brtt = sim_base_rtt_ns(p);
	double rto = brtt * (1 + p->alpha_pct / 100.0);
	double ack = brtt - 2.0 * p->owd_ns - tinj;
	double rtt = 2.0 * p->owd_ns + ack;
	uint32_t n = (uint32_t)((p->size + p->pay - 1) / p->pay);
	struct ec_model_params mp;
	double held;

	if (rto < 10000)
		rto = 10000;	/* the engine's floor in sim_cfg() */
	if (p->policy == SIM_ADAPTIVE)
		return -1;	/* learned timers: no closed form */
	if (p->policy != SIM_EC) {
		memset(m, 0, sizeof(*m));
		return model_sr(n, tinj, rto, rtt, p->loss, m);
	}
	held = rto + (p->ec_k + p->ec_m) * tinj + brtt * p->beta_pct / 100.0;
	memset(&mp, 0, sizeof(mp));
	mp.n = n;
	mp.k = p->ec_k;
	mp.m = p->ec_m;
	mp.tinj_ns = tinj;
	mp.rtt_ns = rtt;
	mp.p = p->loss;
	mp.nack = p->nack;
	mp.rto_fb_ns = held;
	mp.rto_r_ns = held + tinj;
	if (p->nack) {
		/*
		 * A submessage closes when its last packet arrives; its holes
		 * are NACKed a reorder window (10 us in sim_cfg()) later and
		 * resent when the NACK arrives.  A lost resend is NACKed
		 * again by the next full round ((1 + alpha)*RTT later), or
		 * resent by the held RTO if that is sooner.
		 */
		mp.nack_fb_ns = rtt + 10000;
		mp.nack_r_ns = fmin(brtt * (1 + p->alpha_pct / 100.0), held) + tinj;
	}
	return model_ec(&mp, m);
}
