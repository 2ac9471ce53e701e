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

int sim_model(const struct sim_params *p, struct model_result *m)
{
	double tinj = sim_tinj_ns(p);
	double brtt = sim_base_rtt_ns(p);
	double rto = brtt * (1 + p->alpha_pct / 100.0);
	double ack = brtt - 2.0 * p->owd_ns - tinj;
	uint32_t n = (uint32_t)((p->size + p->pay - 1) / p->pay);

	if (rto < 10000)
		rto = 10000;	/* the engine's floor in sim_cfg() */
	return model_sr(n, tinj, rto, 2.0 * p->owd_ns + ack, p->loss, m);
}
