// SPDX-License-Identifier: GPL-2.0
/*
 * tools/sdr-sim against the analytical SR model of SDR-RDMA.  With
 * RTO-only recovery and no backoff the simulator implements the model's
 * assumptions, so its mean completion time must match within 10%.  With
 * NACKs it must beat the model (one RTT per loss instead of one RTO), and
 * the SR shape must hold: completion time grows by several times from
 * 1e-5 to 1e-2 drop rate at 400 Gbit/s and 25 ms RTT.
 */
#include <math.h>
#include "tap.h"
#include "tests.h"
#include "sim.h"

struct point {
	double loss;
	uint64_t size;
	uint32_t count;
};

static const struct point points[] = {
	{ 1e-3, 1ULL << 20, 400 },
	{ 1e-2, 4ULL << 20, 200 },
	{ 1e-4, 64ULL << 20, 100 },
};

static void params(struct sim_params *p, const struct point *pt)
{
	sim_defaults(p);
	p->bw_bps = 400e9;
	p->owd_ns = 12500000;
	p->loss = pt->loss;
	p->size = pt->size;
	p->count = pt->count;
	p->seed = 7;
}

static void test_sim_matches_model(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(points); i++) {
		struct sim_params p;
		struct sim_result r;
		struct model_result m;
		double ratio;

		params(&p, &points[i]);
		p.nack = 0;
		p.max_backoff = 0;
		CHECK_EQ(sim_run(&p, &r), 0);
		CHECK_EQ(sim_model(&p, &m), 0);
		ratio = r.mean_ns / m.mean_ns;
		tap_diag("loss %g size %llu MiB x %u: sim mean %.3f ms, model %.3f ms, ratio %.3f (%.2f s CPU)",
			 p.loss, (unsigned long long)(p.size >> 20), p.count,
			 r.mean_ns / 1e6, m.mean_ns / 1e6, ratio, r.cpu_s);
		CHECK(ratio > 0.9 && ratio < 1.1);
		CHECK_EQ(r.failed, 0);
		sim_result_free(&r);
	}
}

static void test_sim_nack_beats_rto(void)
{
	struct sim_params p;
	struct sim_result r;
	struct model_result m;

	params(&p, &points[1]);
	CHECK_EQ(sim_run(&p, &r), 0);
	CHECK_EQ(sim_model(&p, &m), 0);
	tap_diag("nack: sim mean %.3f ms vs RTO-only model %.3f ms", r.mean_ns / 1e6,
		 m.mean_ns / 1e6);
	CHECK(r.mean_ns < m.mean_ns);
	CHECK(r.st.nack_lost > 0);
	sim_result_free(&r);
}

static void test_sim_sr_shape(void)
{
	struct point pt = { 1e-5, 16ULL << 20, 60 };
	struct sim_params p;
	struct sim_result lo, hi;

	params(&p, &pt);
	p.nack = 0;
	CHECK_EQ(sim_run(&p, &lo), 0);
	p.loss = 1e-2;
	CHECK_EQ(sim_run(&p, &hi), 0);
	tap_diag("16 MiB, RTO-only: mean %.1f ms at 1e-5, %.1f ms at 1e-2 (x%.2f)",
		 lo.mean_ns / 1e6, hi.mean_ns / 1e6, hi.mean_ns / lo.mean_ns);
	CHECK(hi.mean_ns > 2 * lo.mean_ns);
	sim_result_free(&lo);
	sim_result_free(&hi);
}

static void test_model_sanity(void)
{
	struct model_result m;

	/* no loss: injection + RTT */
	CHECK_EQ(model_sr(1000, 100, 1000, 5000, 0, &m), 0);
	CHECK(fabs(m.mean_ns - 105000) < 1e-6);
	/* one packet: E[Y - 1] = p / (1 - p) retries of (RTO + T_inj) */
	CHECK_EQ(model_sr(1, 100, 10000, 5000, 0.5, &m), 0);
	CHECK(fabs(m.mean_ns - (100 + 5000 + 10100 * 1.0)) < 10100 * 0.01);
	CHECK(m.p50_ns <= m.p99_ns && m.p99_ns <= m.p999_ns);
	CHECK(model_sr(0, 100, 1000, 5000, 0.1, &m) < 0);
}

void test_sim(void)
{
	TAP_RUN(test_model_sanity);
	TAP_RUN(test_sim_matches_model);
	TAP_RUN(test_sim_nack_beats_rto);
	TAP_RUN(test_sim_sr_shape);
}
