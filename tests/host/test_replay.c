// SPDX-License-Identifier: GPL-2.0
/* The replay window of authenticated flows (kernel/engine/sdr_replay.c). */
#include <stdlib.h>

#include "tap.h"
#include "tests.h"
#include "sdr_replay.h"

#define WIN	(SDR_REPLAY_BITS - 64)	/* the span the window always covers */

/* In order, then each one again: accepted once. */
static void test_replay_basic(void)
{
	struct sdr_replay r;
	u64 pn;

	sdr_replay_init(&r);
	CHECK_EQ(sdr_replay_check(&r, 0), -1);	/* never sent */
	for (pn = 1; pn <= 3 * SDR_REPLAY_BITS; pn++)
		CHECK_EQ(sdr_replay_check(&r, pn), 0);
	for (pn = 3 * SDR_REPLAY_BITS; pn > 0; pn--)
		CHECK_EQ(sdr_replay_check(&r, pn), -1);
	CHECK_EQ(r.top, 3 * SDR_REPLAY_BITS);
}

/* Reordered inside the window: each accepted once; older: refused. */
static void test_replay_reorder(void)
{
	struct sdr_replay r;
	u64 top = 10 * SDR_REPLAY_BITS + 17, pn;

	sdr_replay_init(&r);
	CHECK_EQ(sdr_replay_check(&r, top), 0);
	for (pn = top - 1; pn > top - WIN; pn -= 3)
		CHECK_EQ(sdr_replay_check(&r, pn), 0);
	for (pn = top - 1; pn > top - WIN; pn -= 3)
		CHECK_EQ(sdr_replay_check(&r, pn), -1);
	CHECK_EQ(sdr_replay_check(&r, top - WIN), -1);	/* past the window */
	CHECK_EQ(sdr_replay_check(&r, 1), -1);
	/* a jump of more than the window forgets everything below it */
	CHECK_EQ(sdr_replay_check(&r, top + 5 * SDR_REPLAY_BITS), 0);
	CHECK_EQ(sdr_replay_check(&r, top + 5 * SDR_REPLAY_BITS - 1), 0);
	CHECK_EQ(sdr_replay_check(&r, top), -1);
	/* the highest number possible */
	CHECK_EQ(sdr_replay_check(&r, U64_MAX), 0);
	CHECK_EQ(sdr_replay_check(&r, U64_MAX), -1);
	CHECK_EQ(sdr_replay_check(&r, U64_MAX - 1), 0);
}

/*
 * Against a model that remembers every number: random arrivals (new
 * numbers with jitter, duplicates, stale ones), the window answers as the
 * model does for every number the window must cover, and never accepts a
 * number twice.
 */
static void test_replay_model(void)
{
	enum { N = 200000 };
	unsigned char *seen = calloc(N + 1, 1);
	struct sdr_replay r;
	u64 next = 1, top = 0;
	unsigned int seed = 7, i, bad = 0;

	sdr_replay_init(&r);
	for (i = 0; i < 400000 && next < N - 10000; i++) {
		u64 pn;
		int want, got;

		switch (rand_r(&seed) % 4) {
		case 0:		/* late: anything up to 1.5 windows back */
			pn = next > 1 ? next - 1 - rand_r(&seed) %
				(next - 1 < 6000 ? next - 1 : 6000) : 1;
			break;
		case 1:		/* a jump ahead */
			next += rand_r(&seed) % 64;
			/* fallthrough */
		default:
			pn = next++;
			break;
		}
		if (!pn)
			pn = 1;
		if (seen[pn])
			want = -1;
		else if (pn > top || top - pn < WIN)
			want = 0;
		else
			want = -1;	/* older than the window covers */
		got = sdr_replay_check(&r, pn);
		if (got != want)
			bad++;
		if (!got) {
			if (seen[pn])
				bad += 1000;	/* accepted twice */
			seen[pn] = 1;
			if (pn > top)
				top = pn;
		}
	}
	CHECK_EQ(bad, 0);
	free(seen);
}

void test_replay(void)
{
	TAP_RUN(test_replay_basic);
	TAP_RUN(test_replay_reorder);
	TAP_RUN(test_replay_model);
}
