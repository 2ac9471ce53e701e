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

int model_sr(uint32_t n, double tinj, double rto, double rtt, double p,
	     struct model_result *m)
{
	double r = rto + tinj, x0 = n * tinj, h, x, integral = 0;
	double prev_tail = 1, q50 = 0, q99 = 0, q999 = 0;
	int steps;

	if (!n || tinj <= 0 || rto < 0 || p < 0 || p >= 1)
		return -1;
	if (p == 0) {
		m->mean_ns = m->p50_ns = m->p99_ns = m->p999_ns = x0 + rtt;
		return 0;
	}
	/* 1 - F(x) is flat between retry rounds except for an N*T_inj ramp */
	h = r / 4000;
	prev_tail = 1 - exp(model_logcdf(n, tinj, r, p, x0));
	for (steps = 0, x = x0; steps < 4000 * 400; steps++) {
		double xn = x + h;
		double f = exp(model_logcdf(n, tinj, r, p, xn));
		double tail = 1 - f;

		integral += 0.5 * (prev_tail + tail) * h;
		if (!q50 && f >= 0.5)
			q50 = xn;
		if (!q99 && f >= 0.99)
			q99 = xn;
		if (!q999 && f >= 0.999)
			q999 = xn;
		prev_tail = tail;
		x = xn;
		if (tail < 1e-12 && q999)
			break;
	}
	m->mean_ns = x0 + integral + rtt;
	m->p50_ns = (q50 ? q50 : x0) + rtt;
	m->p99_ns = (q99 ? q99 : x0) + rtt;
	m->p999_ns = (q999 ? q999 : x0) + rtt;
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
 * What the engine does (kernel/sdr_sr.c): submessage g's k data packets
 * go out, then its m parity packets, so it has been sent completely at
 * e_g = (g + 1)*(k + m)*T_inj; the last one, of kl <= k packets, carries
 * ml = sdr_sr_group_m(k, m, kl) parity rows and ends at e_last =
 * (N + P)*T_inj.  A submessage that lost at most as many packets as it
 * has parity rows is decoded when its last packet arrives.  One that lost
 * more falls back: each lost data packet is resent, first F after e_g
 * and then every R while its resends are lost.  With NACKs F = nack_fb
 * (the NACK of its holes arrives about an RTT after e_g) and R = nack_r
 * (the receiver's full NACK rounds); without, F = rto_fb and R = rto_r,
 * its RTO held by beta% of SRTT + (k+m) packet times.  Parity is never resent, so a submessage
 * that lost a data and b parity packets (a + b > m) is done once
 * a + b - m of its a resent packets got through.  With independent drops
 * (probability p) each lost packet's resends are a geometric chain: it
 * is still missing after j resends with probability p^j, and
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
 * The last submessage is special under NACK recovery: the receiver NACKs
 * only holes below the highest packet it has seen, and closes the last
 * submessage only on its last data packet or one of its parity rows.  Its
 * trailing lost data packets (and all of them if both its last data
 * packet and all its parity rows were lost) are left to the held RTO (first
 * resend rto_fb after e_last, then every rto_r).  ec_last_undone()
 * counts that exactly, by a pass over the submessage's packets from the
 * last one.
 *
 * The NACK itself is lost with probability p too; then the submessage's
 * holes wait for the held RTO as well.  So a full submessage is not done
 * after j NACK-driven and jt RTO-driven rounds with probability
 * (1 - p)*U(j) + p*U(jt), and the last one likewise.
 *
 * Approximations: every packet of a submessage is taken to leave at e_g
 * (its own RTO really starts up to (k + m)*T_inj earlier); a resend costs
 * no link time (it takes the slot of a new packet); a lost NACK's holes
 * wait for the held RTO, while the receiver's full NACK rounds, running
 * every nack_r since the message's first NACK, may resend them sooner
 * (pessimistic when many submessages fail: 1 GiB at (32,2), 1e-2);
 * ACK loss is not modeled otherwise, and the simulator loses ACKs: a
 * lost COMPLETE ACK costs a held RTO, about p^2 per message when the
 * last submessage completed from its data (its last parity row asks for
 * the ACK again), p when it needed parity or a resend.
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

/*
 * U(j) for j = 0.. of a full submessage; entries after the last one
 * stored are taken as 0 (below 1e-30: no CDF here moves visibly).
 * Returns the number stored.
 */
static uint32_t ec_undone(uint32_t kg, uint32_t mg, double p, double *u)
{
	double lp = log(p), lq = log1p(-p);
	uint32_t j, a, b, r;

	for (j = 0; j < EC_MAX_ROUNDS; j++) {
		/* a resend chain still missing after j tries: p^j */
		double ls = j * lp, lqj = j ? log1p(-exp(ls)) : -INFINITY;
		double sum = 0;

		for (a = 0; a <= kg; a++) {
			double pa = exp(lbinom(kg, a, lp, lq));

			for (b = 0; b <= mg; b++) {
				uint32_t need;
				double miss = 0;

				if (a + b <= mg)
					continue;
				need = a + b - mg;	/* <= a since b <= mg */
				if (!j)
					miss = 1;
				for (r = 0; j && r < need; r++)
					miss += exp(lbinom(a, r, lqj, ls));
				sum += pa * exp(lbinom(mg, b, lp, lq)) *
				       (miss > 1 ? 1 : miss);
			}
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
 * st.  Its data packets are walked from the last one down, in one of
 * three modes: TRAIL (all seen so far were lost: at or above the
 * receiver's highest packet, so only the RTO resends them), NACK (a later
 * one arrived and the submessage closed, on its last data packet or, a
 * reorder window after, on any of its parity rows: holes get NACKed) or
 * OPEN (a later one arrived, but neither the last data packet nor any
 * parity row: nothing closes it, the RTO again).  The count is of data
 * packets still missing; lost parity rows add to it; the submessage is
 * done while the sum is <= ml.
 */
static double ec_last_undone1(const struct ec_model *em, double sn, double st)
{
	enum { TRAIL, NACK, OPEN, NMODE };
	double p = em->mp->p;
	double dp[NMODE][EC_MAX_N + 1], nx[NMODE][EC_MAX_N + 1], und = 0;
	uint32_t kl = em->kl, ml = em->ml, all_lost, i, c, b, md;

	/* all_lost: every parity row was lost (b = ml), else b < ml */
	for (all_lost = 0; all_lost <= 1; all_lost++) {
		memset(dp, 0, sizeof(dp));
		dp[TRAIL][0] = 1;
		for (i = kl; i-- > 0;) {
			memset(nx, 0, sizeof(nx));
			for (md = 0; md < NMODE; md++) {
				for (c = 0; c < kl; c++) {
					double v = dp[md][c], s;
					uint32_t to = md;

					if (v == 0)
						continue;
					/* received: ends the trailing run */
					if (md == TRAIL)
						to = !all_lost || i == kl - 1 ? NACK : OPEN;
					nx[to][c] += v * (1 - p);
					/* lost: resent by NACK or by RTO */
					s = md == NACK ? sn : st;
					nx[md][c + 1] += v * p * s;
					nx[md][c] += v * p * (1 - s);
				}
			}
			memcpy(dp, nx, sizeof(dp));
		}
		for (md = 0; md < NMODE; md++) {
			for (c = 0; c <= kl; c++) {
				if (dp[md][c] == 0)
					continue;
				if (all_lost) {
					if (c > 0)
						und += dp[md][c] * pow(p, ml);
					continue;
				}
				for (b = 0; b < ml; b++)
					if (c + b > ml)
						und += dp[md][c] *
						       exp(lbinom(ml, b, log(p), log1p(-p)));
			}
		}
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

int model_ec(const struct ec_model_params *mp, struct model_result *mr)
{
	struct ec_model em;
	double x0, h, x, integral = 0, prev_tail, q50 = 0, q99 = 0, q999 = 0;
	double extra = 0, p = mp->p, fb, r;
	uint32_t L, npar, j, k = mp->k, m = mp->m, n = mp->n;
	int steps;

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
	prev_tail = 1 - exp(ec_logcdf(&em, x0));
	if (prev_tail <= 0.5)
		q50 = x0;
	if (prev_tail <= 0.01)
		q99 = x0;
	if (prev_tail <= 0.001)
		q999 = x0;
	for (steps = 0, x = x0; steps < 4000 * 400; steps++) {
		double xn = x + h;
		double f = exp(ec_logcdf(&em, xn));
		double tail = 1 - f;

		if (prev_tail < 1e-12 && q999)
			break;
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
	free(em.lgf);
	mr->mean_ns = x0 + integral + mp->rtt_ns;
	mr->p50_ns = (q50 ? q50 : x0) + mp->rtt_ns;
	mr->p99_ns = (q99 ? q99 : x0) + mp->rtt_ns;
	mr->p999_ns = (q999 ? q999 : x0) + mp->rtt_ns;
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
