// SPDX-License-Identifier: GPL-2.0
/*
 * AUTO's model (engine/sdr_auto.c) against the same model written here
 * in double precision from its description: over a table of conditions
 * (drop rate, round trip, packet time, message size, messages in flight)
 * the engine's fixed-point choice is the model's wherever the model's
 * best beats its runner-up by more than 1%.  And the choices an
 * experienced user expects, the estimator's memory, the hysteresis.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "tests.h"
#include "sdr_auto.h"
#include "sdr_sr.h"

#define ONE	((double)SDR_AUTO_ONE)

/* ---- the model in double precision ---- */

static double d_rounds(double n, double p)
{
	double s = 0, q = p;
	int j;

	for (j = 1; j <= 64 && q > 1e-300; j++, q *= p)
		s += -expm1(n * log1p(-q));
	return s;
}

static double d_p_fail(unsigned int n, unsigned int m, double p)
{
	double s = 0;
	unsigned int d;

	if (p <= 0 || m >= n)
		return 0;
	for (d = m + 1; d <= n; d++)
		s += exp(lgamma(n + 1.0) - lgamma(d + 1.0) - lgamma(n - d + 1.0) +
			 d * log(p) + (n - d) * log1p(-p));
	return s > 1 ? 1 : s;
}

struct d_in {
	double p, rtt, tinj, n, w, sr_reo, sr_tail, ad_reo, ad_tail, code;
};

static double d_sr_done(const struct d_in *c, double reo, double retry,
			double tail)
{
	double round = c->rtt + reo + c->tinj, all = d_rounds(c->n, c->p);
	double r1 = -expm1(c->n * log1p(-c->p));
	double t = c->n * c->tinj + c->rtt + round * r1;

	t += (retry > 0 ? retry + c->tinj : round) * (all - r1);
	if (tail > round)
		t += (tail - round) * c->p;
	return t;
}

static double d_cost(const struct d_in *c, int cand, unsigned int k,
		     unsigned int m)
{
	double done, wire;

	if (cand != SDR_AUTO_EC) {
		done = cand == SDR_AUTO_SR ?
		       d_sr_done(c, c->sr_reo, c->sr_tail, c->sr_tail) :
		       d_sr_done(c, c->ad_reo, 0, c->ad_tail);
		wire = c->n * c->tinj / (1 - c->p);
	} else {
		unsigned int n = (unsigned int)c->n, g = (n + k - 1) / k;
		unsigned int kl = n - (g - 1) * k, ml = sdr_sr_group_m(k, m, kl);
		double full = d_p_fail(k + m, m, c->p);
		double last = d_p_fail(kl + ml, ml, c->p);
		double par = (double)(g - 1) * m + ml;
		double pfb = 1 - pow(1 - full, g - 1) * (1 - last);
		double round = c->rtt + c->sr_reo + c->tinj;
		double code = c->code * (k < n ? k : n) * (par + n * c->p);

		done = (n + par) * c->tinj + c->rtt + code +
		       pfb * round * (1 + d_rounds(m + 1, c->p));
		wire = (n + par) * c->tinj + code +
		       c->tinj * (full * (g - 1) * (m + 1) + last * (ml + 1));
	}
	return fmax(done / (c->w < 1 ? 1 : c->w), wire);
}

static const unsigned char geo[][2] = {
	{ 8, 1 }, { 8, 2 }, { 8, 4 },
	{ 16, 1 }, { 16, 2 }, { 16, 4 }, { 16, 8 },
	{ 32, 1 }, { 32, 2 }, { 32, 4 }, { 32, 8 }, { 32, 16 },
	{ 64, 2 }, { 64, 4 }, { 64, 8 }, { 64, 16 },
};

/* the model's costs of SR, ADAPTIVE and the best EC */
static void d_eval(const struct d_in *c, double cost[3])
{
	unsigned int i;

	cost[SDR_AUTO_SR] = d_cost(c, SDR_AUTO_SR, 0, 0);
	cost[SDR_AUTO_ADAPTIVE] = d_cost(c, SDR_AUTO_ADAPTIVE, 0, 0);
	cost[SDR_AUTO_EC] = INFINITY;
	for (i = 0; i < sizeof(geo) / sizeof(geo[0]); i++)
		cost[SDR_AUTO_EC] = fmin(cost[SDR_AUTO_EC],
					 d_cost(c, SDR_AUTO_EC, geo[i][0],
						geo[i][1]));
}

/* ---- conditions ---- */

static void mk_in(struct sdr_auto_in *in, struct d_in *c, double p,
		  double rtt_ns, double tinj_ns, unsigned int n, unsigned int w)
{
	memset(in, 0, sizeof(*in));
	in->loss = (u64)(p * ONE);
	in->rtt_ns = (u64)rtt_ns;
	in->tinj_ps = (u64)(tinj_ns * 1000);
	in->msg_pkts = n;
	in->inflight = w;
	/* SR: the module's reorder window, its RTO 1.5 round trips */
	in->sr_reorder_ns = 50000;
	in->sr_tail_ns = (u64)(rtt_ns * 1.5) + 200000;
	/* ADAPTIVE: two packet times, tail a quarter round trip more */
	in->ad_reorder_ns = (u64)fmax(2 * tinj_ns, 50000);
	in->ad_tail_ns = (u64)(rtt_ns + fmax(in->ad_reorder_ns + 2 * tinj_ns,
					     rtt_ns / 4));
	in->max_k = 64;
	in->max_m = 32;
	c->p = in->loss / ONE;
	c->rtt = (double)in->rtt_ns;
	c->tinj = in->tinj_ps / 1000.0;
	c->n = n;
	c->w = w;
	c->sr_reo = (double)in->sr_reorder_ns;
	c->sr_tail = (double)in->sr_tail_ns;
	c->ad_reo = (double)in->ad_reorder_ns;
	c->ad_tail = (double)in->ad_tail_ns;
	c->code = 0;
}

/* mk_in() with EC's coding costing @code_ns a packet */
static void set_code(struct sdr_auto_in *in, struct d_in *c, double code_ns)
{
	in->code_ps = (u64)(code_ns * 1000);
	c->code = in->code_ps / 1000.0;
}

static void test_auto_building_blocks(void)
{
	static const double ps[] = { 1e-6, 1e-4, 1e-2, 0.05, 0.3 };
	static const unsigned int ns[] = { 1, 16, 1024, 262144 };
	unsigned int i, j, m;

	for (i = 0; i < 5; i++) {
		u64 p = (u64)(ps[i] * ONE);
		double pd = p / ONE;

		for (j = 0; j < 4; j++) {
			double want = d_rounds(ns[j], pd);
			double got = sdr_auto_rounds(ns[j], p) / ONE;

			CHECK(fabs(got - want) <= 1e-6 + want * 1e-4);
		}
		for (m = 0; m <= 16; m += 4) {
			double want = d_p_fail(32 + m, m, pd);
			double got = sdr_auto_p_fail(32 + m, m, p) / ONE;

			CHECK(fabs(got - want) <= 1e-7 + want * 1e-5);
		}
	}
	CHECK_EQ(sdr_auto_p_fail(40, 8, 0), 0);
	CHECK_EQ(sdr_auto_rounds(1024, 0), 0);
}

/*
 * The grid: 6 drop rates, 3 round trips, 3 packet times (4 KiB at
 * 400 Gbit/s, at 25 Gbit/s, 1 KiB at 80 Mbit/s), 4 message sizes,
 * 3 in-flight counts.  The engine picks the model's best wherever that
 * wins by over 1%; within 1% either is right.
 */
static void test_auto_table_equals_model(void)
{
	static const double ps[] = { 0, 1e-6, 1e-4, 1e-3, 1e-2, 5e-2 };
	static const double rtts[] = { 100e3, 2e6, 25e6 };
	static const double tinjs[] = { 82, 1311, 105000 };
	static const unsigned int ns[] = { 4, 64, 1024, 65536 };
	static const unsigned int ws[] = { 1, 4, 16 };
	unsigned int a, b, c, d, e, compared = 0, rows = 0, wrong = 0;
	unsigned int picked[SDR_AUTO_NCAND] = { 0 };

	for (a = 0; a < 6; a++)
	for (b = 0; b < 3; b++)
	for (c = 0; c < 3; c++)
	for (d = 0; d < 4; d++)
	for (e = 0; e < 3; e++) {
		struct sdr_auto_in in;
		struct sdr_auto_pick pk;
		struct d_in di;
		double cost[3], best = INFINITY, second = INFINITY;
		int i, want = 0;

		mk_in(&in, &di, ps[a], rtts[b], tinjs[c], ns[d], ws[e]);
		/* half the rows: coding a row input a tenth of a packet time */
		if ((a + b + d + e) % 2)
			set_code(&in, &di, tinjs[c] / 10);
		d_eval(&di, cost);
		for (i = 0; i < 3; i++)
			if (cost[i] < best) {
				second = best;
				best = cost[i];
				want = i;
			} else if (cost[i] < second) {
				second = cost[i];
			}
		sdr_auto_eval(&in, &pk);
		rows++;
		picked[pk.cand]++;
		/* each cost within 0.1% of the double model's */
		for (i = 0; i < 3; i++)
			CHECK(fabs((double)pk.cost_ns[i] - cost[i]) <=
			      cost[i] * 1e-3 + 2);
		/* the engine's pick costs what the model's best does */
		if (cost[pk.cand] > best * 1.01) {
			wrong++;
			tap_diag("p %g rtt %g tinj %g n %u w %u: engine %u (%.0f ns), model %d (%.0f ns)",
				 ps[a], rtts[b], tinjs[c], ns[d], ws[e], pk.cand,
				 cost[pk.cand], want, best);
		}
		if (second <= best * 1.01)
			continue;
		/* and where the model's best is clear, it is that one */
		compared++;
		if ((int)pk.cand != want) {
			wrong++;
			tap_diag("p %g rtt %g tinj %g n %u w %u: engine %u, model %d",
				 ps[a], rtts[b], tinjs[c], ns[d], ws[e], pk.cand,
				 want);
		}
	}
	tap_diag("%u conditions, %u clear-cut, %u differ; engine picked SR %u, ADAPTIVE %u, EC %u",
		 rows, compared, wrong, picked[0], picked[1], picked[2]);
	CHECK_EQ(wrong, 0);
	CHECK(compared >= rows / 5);
	/* the table exercises every choice */
	CHECK(picked[SDR_AUTO_SR] && picked[SDR_AUTO_ADAPTIVE] &&
	      picked[SDR_AUTO_EC]);
}

/* What a user expects of it, by the model. */
static void test_auto_expected_choices(void)
{
	struct sdr_auto_in in;
	struct sdr_auto_pick pk;
	struct d_in di;

	/* no loss: SR, as cheap as anything, and no parity */
	mk_in(&in, &di, 0, 20e6, 105000, 1024, 1);
	sdr_auto_eval(&in, &pk);
	CHECK_EQ(pk.cand, SDR_AUTO_SR);
	/* 1 MiB one at a time over 80 Mbit/s, 20 ms, 1%: parity beats rounds */
	mk_in(&in, &di, 0.01, 20e6, 105000, 1024, 1);
	sdr_auto_eval(&in, &pk);
	CHECK_EQ(pk.cand, SDR_AUTO_EC);
	CHECK(pk.ec_m >= 2 && pk.ec_m * 8 <= pk.ec_k);
	/* ... 16 at a time: the path is the limit, parity only costs; SR
	 * and ADAPTIVE cost the same (ADAPTIVE is done sooner) and SR, the
	 * one with less work per packet, stays */
	mk_in(&in, &di, 0.01, 20e6, 105000, 1024, 16);
	sdr_auto_eval(&in, &pk);
	CHECK_EQ(pk.cand, SDR_AUTO_SR);
	CHECK_EQ(pk.cost_ns[SDR_AUTO_SR], pk.cost_ns[SDR_AUTO_ADAPTIVE]);
	CHECK(pk.done_ns[SDR_AUTO_ADAPTIVE] < pk.done_ns[SDR_AUTO_SR]);
	{
		struct sdr_auto a;

		sdr_auto_init(&a);
		CHECK(!sdr_auto_decide(&a, &in, 1000000000ULL));
		CHECK_EQ(a.pick.cand, SDR_AUTO_SR);
		/* one at a time, heavy loss, slow coding: ADAPTIVE */
		mk_in(&in, &di, 0.05, 25e6, 1311, 65536, 1);
		set_code(&in, &di, 30e3);
		CHECK(sdr_auto_decide(&a, &in, 2000000000ULL));
		CHECK_EQ(a.pick.cand, SDR_AUTO_ADAPTIVE);
		/* 16 at a time again: as cheap, and SR comes first */
		mk_in(&in, &di, 0.01, 20e6, 105000, 1024, 16);
		CHECK(sdr_auto_decide(&a, &in, 3000000000ULL));
		CHECK_EQ(a.pick.cand, SDR_AUTO_SR);
	}
	/* a long path at 1e-3 with small messages one at a time: EC */
	mk_in(&in, &di, 1e-3, 25e6, 82, 64, 1);
	sdr_auto_eval(&in, &pk);
	CHECK_EQ(pk.cand, SDR_AUTO_EC);
	/* ... unless coding takes the CPU longer than the rounds it saves */
	mk_in(&in, &di, 0.01, 20e6, 105000, 1024, 1);
	set_code(&in, &di, 30e3);
	sdr_auto_eval(&in, &pk);
	CHECK(pk.cand != SDR_AUTO_EC);
	CHECK(pk.cost_ns[SDR_AUTO_EC] > pk.cost_ns[pk.cand]);
	/* ADAPTIVE where the round trips of SR's retries hurt: heavy loss */
	mk_in(&in, &di, 0.05, 25e6, 1311, 65536, 1);
	sdr_auto_eval(&in, &pk);
	CHECK(pk.cost_ns[SDR_AUTO_ADAPTIVE] < pk.cost_ns[SDR_AUTO_SR]);
}

/* Reports, their memory, and the hysteresis. */
static void test_auto_estimator_and_switching(void)
{
	struct sdr_auto_pick pk;
	struct sdr_auto a;
	struct sdr_auto_in in;
	struct d_in di;
	u64 now = 1000000000ULL;
	u32 i;

	sdr_auto_init(&a);
	CHECK_EQ(a.pick.cand, SDR_AUTO_SR);
	CHECK_EQ(sdr_auto_loss(&a), 0);
	for (i = 0; i < 10; i++)
		sdr_auto_posted(&a, 1024, 0);
	CHECK_EQ(sdr_auto_msg_pkts(&a), 1024);
	CHECK_EQ(sdr_auto_inflight(&a), 1);
	/* 2% lost: the estimate says so */
	for (i = 0; i < 20; i++)
		sdr_auto_report(&a, 20, 1000, 0);
	CHECK(llabs((long long)sdr_auto_loss(&a) - (long long)(0.02 * ONE)) <
	      (long long)(0.001 * ONE));
	/* a lying receiver cannot claim more than every packet */
	sdr_auto_report(&a, 5000, 1000, 0);
	CHECK(sdr_auto_loss(&a) <= SDR_AUTO_ONE);
	/* the path heals: 64k clean packets bring it under 0.2% */
	for (i = 0; i < 64; i++)
		sdr_auto_report(&a, 0, 1024, 0);
	CHECK(sdr_auto_loss(&a) < (u64)(0.002 * ONE));
	/*
	 * A slow path: 3000 clean packets, then 10 s of 2% at 80 packets a
	 * second: the old ones have aged out, the estimate is the new loss
	 */
	sdr_auto_init(&a);
	sdr_auto_report(&a, 0, 3000, 0);
	for (i = 1; i <= 10; i++)
		sdr_auto_report(&a, 2 * 8, 800, i * 1000000000ULL);
	CHECK(llabs((long long)sdr_auto_loss(&a) - (long long)(0.02 * ONE)) <
	      (long long)(0.004 * ONE));
	/* a report after a long silence stands on its own */
	sdr_auto_report(&a, 0, 400, 1000 * 1000000000ULL);
	CHECK_EQ(sdr_auto_loss(&a), 0);

	/* 1% one at a time: it moves to EC, once */
	sdr_auto_init(&a);
	mk_in(&in, &di, 0.01, 20e6, 105000, 1024, 1);
	CHECK(sdr_auto_due(&a, now));
	CHECK(sdr_auto_decide(&a, &in, now));
	CHECK_EQ(a.pick.cand, SDR_AUTO_EC);
	CHECK_EQ(a.switches, 1);
	CHECK(!sdr_auto_due(&a, now + 39000000ULL));	/* two round trips */
	CHECK(sdr_auto_due(&a, now + 40000000ULL));
	CHECK(!sdr_auto_decide(&a, &in, now + 40000000ULL));
	CHECK_EQ(a.switches, 1);
	CHECK_EQ(a.decisions, 2);
	/* 4e-4: a lighter geometry is worth it (a switch too) ... */
	mk_in(&in, &di, 4e-4, 20e6, 105000, 1024, 1);
	CHECK(sdr_auto_decide(&a, &in, now + 80000000ULL));
	CHECK_EQ(a.pick.cand, SDR_AUTO_EC);
	CHECK_EQ(a.switches, 2);
	/* ... SR under 1/64 cheaper (1.5e-4) is not */
	mk_in(&in, &di, 1.5e-4, 20e6, 105000, 1024, 1);
	sdr_auto_eval(&in, &pk);
	CHECK_EQ(pk.cand, SDR_AUTO_SR);
	CHECK(!sdr_auto_decide(&a, &in, now + 120000000ULL));
	CHECK_EQ(a.pick.cand, SDR_AUTO_EC);
	/* ... no loss at 16 in flight is: back to SR */
	mk_in(&in, &di, 0, 20e6, 105000, 1024, 16);
	CHECK(sdr_auto_decide(&a, &in, now + 160000000ULL));
	CHECK_EQ(a.pick.cand, SDR_AUTO_SR);
	CHECK_EQ(a.switches, 3);
	CHECK_EQ(a.decisions, 5);
}

void test_auto(void)
{
	TAP_RUN(test_auto_building_blocks);
	TAP_RUN(test_auto_table_equals_model);
	TAP_RUN(test_auto_expected_choices);
	TAP_RUN(test_auto_estimator_and_switching);
}
