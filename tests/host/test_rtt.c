// SPDX-License-Identifier: GPL-2.0
#include "tap.h"
#include "tests.h"
#include "sdr_rtt.h"

#define MS 1000000ULL

static void test_rtt_first_sample(void)
{
	struct sdr_rtt r;

	sdr_rtt_init(&r, 100 * MS, 1 * MS, 1000 * MS, 25);
	CHECK_EQ(sdr_rtt_rto(&r), 100 * MS);
	CHECK_EQ(sdr_rtt_srtt(&r), 100 * MS);
	sdr_rtt_sample(&r, 20 * MS);
	CHECK_EQ(r.srtt_ns, 20 * MS);
	CHECK_EQ(r.rttvar_ns, 10 * MS);
	/* 20 + max(5, 40) */
	CHECK_EQ(sdr_rtt_rto(&r), 60 * MS);
	CHECK_EQ(r.min_ns, 20 * MS);
}

static void test_rtt_converges(void)
{
	struct sdr_rtt r;
	int i;

	sdr_rtt_init(&r, 100 * MS, 1 * MS, 1000 * MS, 25);
	for (i = 0; i < 200; i++)
		sdr_rtt_sample(&r, 25 * MS);
	/* steady path: RTO -> (1 + alpha) * RTT */
	CHECK_EQ(r.srtt_ns, 25 * MS);
	CHECK(sdr_rtt_rto(&r) >= 31 * MS + 250000 - 1000);
	CHECK(sdr_rtt_rto(&r) <= 31 * MS + 250000 + 1000);
	/* a jump is followed with gain 1/8 */
	sdr_rtt_sample(&r, 33 * MS);
	CHECK_EQ(r.srtt_ns, 26 * MS);
	/* integer decay leaves RTTVAR a few ns above 0 */
	CHECK(r.rttvar_ns >= 2 * MS && r.rttvar_ns < 2 * MS + 10);
	CHECK(sdr_rtt_rto(&r) >= 34 * MS && sdr_rtt_rto(&r) < 34 * MS + 40);
	sdr_rtt_sample(&r, 1 * MS);
	CHECK_EQ(r.min_ns, 1 * MS);
	CHECK_EQ(r.samples, 202);
}

static void test_rtt_clamp_backoff(void)
{
	struct sdr_rtt r;

	sdr_rtt_init(&r, 100 * MS, 2 * MS, 500 * MS, 25);
	sdr_rtt_sample(&r, 10000);		/* 10 us: RTO floors */
	CHECK_EQ(sdr_rtt_rto(&r), 2 * MS);
	CHECK_EQ(sdr_rtt_backoff(&r, 0), 2 * MS);
	CHECK_EQ(sdr_rtt_backoff(&r, 1), 4 * MS);
	CHECK_EQ(sdr_rtt_backoff(&r, 7), 256 * MS);
	CHECK_EQ(sdr_rtt_backoff(&r, 8), 500 * MS);
	CHECK_EQ(sdr_rtt_backoff(&r, 1000), 500 * MS);
	sdr_rtt_init(&r, 100 * MS, 2 * MS, 500 * MS, 25);
	sdr_rtt_sample(&r, 100000 * MS);	/* huge: RTO caps */
	CHECK_EQ(sdr_rtt_rto(&r), 500 * MS);
	sdr_rtt_sample(&r, ~0ULL);		/* no overflow */
	CHECK_EQ(sdr_rtt_rto(&r), 500 * MS);
	sdr_rtt_sample(&r, 0);
	CHECK(r.min_ns == 1);
	/* cap below floor: the floor wins */
	sdr_rtt_init(&r, 100 * MS, 2 * MS, 1 * MS, 25);
	CHECK_EQ(sdr_rtt_rto(&r), 2 * MS);
}

void test_rtt(void)
{
	TAP_RUN(test_rtt_first_sample);
	TAP_RUN(test_rtt_converges);
	TAP_RUN(test_rtt_clamp_backoff);
}
