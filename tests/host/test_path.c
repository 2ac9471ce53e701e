// SPDX-License-Identifier: GPL-2.0
/*
 * The paths of a flow (engine/sdr_path.c) on their own: scheduling by
 * packets in flight, a lossy path drained and a recovered one used again,
 * a failed test waiting longer, a path down never used, resends avoiding
 * the path that lost them, what counts as overdue, and each path's own
 * timeout.  test_sr.c runs
 * the SR engine over several paths end to end.
 */
#include <string.h>
#include "tap.h"
#include "tests.h"
#include "sdr_path.h"

#define MS	1000000ULL

static void paths(struct sdr_paths *ps, u32 n)
{
	struct sdr_path_cfg cfg;

	sdr_path_cfg_default(&cfg);
	cfg.probe_ns = 10 * MS;
	cfg.probe_max_ns = 40 * MS;
	CHECK_EQ(sdr_paths_init(ps, n, &cfg), 0);
}

/*
 * Send @count packets picking paths; each resolves at once: lost if its
 * path is in @lossy and it is the n-th of that path with n % @every == 0.
 * Returns how many went to each path in @sent.
 */
static void traffic(struct sdr_paths *ps, u32 count, u32 lossy, u32 every,
		    u64 *now, u32 *sent)
{
	static u32 nth[SDR_PATH_MAX];
	u32 k, i;

	for (k = 0; k < count; k++) {
		i = sdr_path_pick(ps, SDR_PATH_ANY, *now);
		sent[i]++;
		if ((lossy >> i) & 1 && ++nth[i] % every == 0)
			sdr_path_lost(ps, i, *now);
		else
			sdr_path_acked(ps, i, *now - 100000, true, *now);
		*now += 10000;		/* 10 us per packet */
	}
}

static void test_path_init_bounds(void)
{
	struct sdr_paths ps;
	struct sdr_path_cfg cfg;

	sdr_path_cfg_default(&cfg);
	CHECK_EQ(sdr_paths_init(&ps, 0, &cfg), -EINVAL);
	CHECK_EQ(sdr_paths_init(&ps, SDR_PATH_MAX + 1, &cfg), -EINVAL);
	CHECK_EQ(sdr_paths_init(&ps, SDR_PATH_MAX, &cfg), 0);
	cfg.drain_pct = 100;
	CHECK_EQ(sdr_paths_init(&ps, 2, &cfg), -EINVAL);
	sdr_path_cfg_default(&cfg);
	cfg.probe_pkts = 0;
	CHECK_EQ(sdr_paths_init(&ps, 2, &cfg), -EINVAL);
	sdr_path_cfg_default(&cfg);
	cfg.probe_max_ns = cfg.probe_ns - 1;
	CHECK_EQ(sdr_paths_init(&ps, 2, &cfg), -EINVAL);
	paths(&ps, 2);
	/* out-of-range path numbers change nothing */
	sdr_path_acked(&ps, 2, 0, true, 1);
	sdr_path_lost(&ps, 7, 1);
	sdr_path_forget(&ps, 9, 0);
	CHECK(!sdr_path_overdue(&ps, 3, 0));
	CHECK_EQ(sdr_path_rto_of(&ps, 3, 5), 5);
	CHECK_EQ(sdr_path_set_down(&ps, 2, true, 0), -EINVAL);
	CHECK_EQ(ps.p[0].acked + ps.p[1].acked + ps.p[0].lost + ps.p[1].lost, 0);
}

/* The path with fewer packets in flight takes the next; ties alternate. */
static void test_path_least_inflight(void)
{
	struct sdr_paths ps;
	u32 a, b, c;

	paths(&ps, 3);
	a = sdr_path_pick(&ps, SDR_PATH_ANY, 0);
	b = sdr_path_pick(&ps, SDR_PATH_ANY, 0);
	c = sdr_path_pick(&ps, SDR_PATH_ANY, 0);
	CHECK(a != b && b != c && a != c);
	/* path b answers: it has the fewest in flight now */
	sdr_path_acked(&ps, b, 0, true, 1000);
	CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, 2000), b);
	CHECK_EQ(ps.p[b].rtt.srtt_ns, 1000);
	CHECK_EQ(ps.p[a].inflight + ps.p[b].inflight + ps.p[c].inflight, 3);
	/* a resend avoids the path its last copy took */
	sdr_path_lost(&ps, a, 3000);
	CHECK(sdr_path_pick(&ps, a, 3000) != a);
	/* with one path usable, the resend goes there all the same */
	CHECK_EQ(sdr_path_set_down(&ps, b, true, 0), 0);
	CHECK_EQ(sdr_path_set_down(&ps, c, true, 0), 0);
	CHECK_EQ(sdr_path_pick(&ps, a, 4000), a);
}

/*
 * 20% loss on one of four paths: drained within a few loss windows, then
 * it carries only test trains while the loss lasts, and once the loss
 * ends a test finds it clean and it carries its share again.  5% loss on
 * another stays below the threshold: never drained.
 */
static void test_path_drain_restore(void)
{
	struct sdr_paths ps;
	u32 sent[SDR_PATH_MAX] = { 0 }, later[SDR_PATH_MAX] = { 0 };
	u64 now = 1000 * MS;

	paths(&ps, 4);
	traffic(&ps, 4 * 5 * SDR_PATH_WIN, 1u << 2, 5, &now, sent);
	CHECK_EQ(ps.p[2].state, SDR_PATH_DRAINED);
	CHECK_EQ(ps.p[2].drains, 1);
	CHECK(ps.p[2].loss_pct > ps.cfg.drain_pct);
	/* 100 ms more of 20% loss (10 tests' worth of waits, doubling) */
	traffic(&ps, 10000, 1u << 2, 5, &now, later);
	tap_diag("20%% lossy path: %u of %u packets before it was drained and "
		 "in tests, %u of 10000 in tests after", sent[2],
		 4 * 5 * SDR_PATH_WIN, later[2]);
	CHECK_EQ(ps.p[2].state, SDR_PATH_DRAINED);
	CHECK_EQ(ps.p[2].restores, 0);
	CHECK(later[2] > 0);			/* it was tested */
	CHECK(later[2] <= 4 * ps.cfg.probe_pkts);	/* waits doubled */
	CHECK_EQ(ps.p[2].test_wait_ns, ps.cfg.probe_max_ns);
	/* the loss ends: the next test restores it */
	memset(later, 0, sizeof(later));
	traffic(&ps, 8000 + 4000, 0, 1, &now, later);
	CHECK_EQ(ps.p[2].state, SDR_PATH_UP);
	CHECK_EQ(ps.p[2].restores, 1);
	memset(later, 0, sizeof(later));
	traffic(&ps, 4000, 0, 1, &now, later);
	CHECK(later[2] >= 900 && later[2] <= 1100);
	/* 5% loss: below the threshold, kept */
	traffic(&ps, 20000, 1u << 1, 20, &now, later);
	CHECK_EQ(ps.p[1].state, SDR_PATH_UP);
	CHECK_EQ(ps.p[1].drains, 0);
	CHECK(ps.p[1].loss_pct >= 3 && ps.p[1].loss_pct <= 7);
}

/* The last usable path is never drained, however lossy. */
static void test_path_last_kept(void)
{
	struct sdr_paths ps;
	u32 sent[SDR_PATH_MAX] = { 0 };
	u64 now = 0;

	paths(&ps, 2);
	traffic(&ps, 4000, 3, 2, &now, sent);	/* 50% on both */
	CHECK_EQ(ps.p[0].state + ps.p[1].state, SDR_PATH_DRAINED);
	CHECK_EQ(sdr_path_usable(&ps), 1);
	CHECK_EQ(ps.p[0].drains + ps.p[1].drains, 1);
}

/*
 * A test train starts only once the drained path's old packets are
 * resolved, and only with new packets; packets forgotten (their message
 * ended) count for nothing: with under half of the train answered or
 * lost there is no verdict and the test runs again.
 */
static void test_path_test_train(void)
{
	struct sdr_paths ps;
	u64 now = 1000 * MS;
	u32 k, i, held;

	paths(&ps, 2);
	/* path 1: one packet stays in flight while its others are all lost */
	CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, now), 0);
	held = sdr_path_pick(&ps, SDR_PATH_ANY, now);
	CHECK_EQ(held, 1);
	sdr_path_acked(&ps, 0, now, true, now);
	for (k = 0; k < SDR_PATH_WIN; k++) {
		i = sdr_path_pick(&ps, 0, now);
		CHECK_EQ(i, 1);
		sdr_path_lost(&ps, i, now);
	}
	CHECK_EQ(ps.p[1].state, SDR_PATH_DRAINED);
	now += 20 * MS;
	/* wait over, but a packet of it is still out: no test */
	CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, now), 0);
	CHECK(!ps.p[1].testing);
	sdr_path_forget(&ps, held, now);
	CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, now), 1);
	CHECK(ps.p[1].testing);
	/* a resend does not join the train */
	CHECK_EQ(sdr_path_pick(&ps, 0, now), 0);
	for (k = 1; k < ps.cfg.probe_pkts; k++)
		CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, now), 1);
	/* the train is out: new packets go to the usable path */
	CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, now), 0);
	/* its message ended: no verdict, a new train */
	for (k = 0; k < ps.cfg.probe_pkts; k++)
		sdr_path_forget(&ps, 1, now);
	CHECK(!ps.p[1].testing);
	CHECK_EQ(ps.p[1].state, SDR_PATH_DRAINED);
	CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, now), 1);
	CHECK(ps.p[1].testing);
	/* 40 of it answered, the rest forgotten: a verdict on the 40 */
	for (k = 1; k < ps.cfg.probe_pkts; k++)
		CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, now), 1);
	for (k = 0; k < 40; k++)
		sdr_path_acked(&ps, 1, now, true, now + 1000);
	for (; k < ps.cfg.probe_pkts; k++)
		sdr_path_forget(&ps, 1, now);
	CHECK_EQ(ps.p[1].state, SDR_PATH_UP);
	CHECK_EQ(ps.p[1].restores, 1);
}

/* Down: never picked; up again: tested before it carries data. */
static void test_path_down_up(void)
{
	struct sdr_paths ps;
	u32 sent[SDR_PATH_MAX] = { 0 };
	u64 now = 0;

	paths(&ps, 3);
	CHECK_EQ(sdr_path_set_down(&ps, 1, true, now), 0);
	traffic(&ps, 3000, 0, 1, &now, sent);
	CHECK_EQ(sent[1], 0);
	CHECK_EQ(sdr_path_usable(&ps), 2);
	CHECK_EQ(sdr_path_pick_untracked(&ps, SDR_PATH_ANY) == 1, 0);
	CHECK_EQ(sdr_path_set_down(&ps, 1, false, now), 0);
	CHECK_EQ(ps.p[1].state, SDR_PATH_DRAINED);
	traffic(&ps, 3000, 0, 1, &now, sent);
	CHECK_EQ(ps.p[1].state, SDR_PATH_UP);
	CHECK_EQ(ps.p[1].restores, 1);
	CHECK(sent[1] > 900);
	/* every path down: path 0, whose packets time out */
	CHECK_EQ(sdr_path_set_down(&ps, 0, true, now), 0);
	CHECK_EQ(sdr_path_set_down(&ps, 1, true, now), 0);
	CHECK_EQ(sdr_path_set_down(&ps, 2, true, now), 0);
	CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, now), 0);
}

/*
 * Overdue: only once a later packet of the same path was delivered, as
 * an answer to a packet sent once says.  Each path's own round trip and
 * timeout.
 */
static void test_path_overdue_rto(void)
{
	struct sdr_paths ps;

	paths(&ps, 2);
	CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, 100), 0);
	CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, 200), 1);
	CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, 300), 0);
	CHECK_EQ(sdr_path_rto_of(&ps, 0, 777), 777);
	/* path 0's later packet (sent at 300) arrived: its first is overdue */
	sdr_path_acked(&ps, 0, 300, true, 1300);
	CHECK(sdr_path_overdue(&ps, 0, 100));
	CHECK(!sdr_path_overdue(&ps, 0, 300));
	/* path 1 delivered nothing sent after 200: only slower */
	CHECK(!sdr_path_overdue(&ps, 1, 200));
	/* an answer to a resent or rebuilt packet proves nothing */
	sdr_path_acked(&ps, 1, 500, false, 600);
	CHECK(!sdr_path_overdue(&ps, 1, 200));
	CHECK_EQ(ps.p[1].rtt.srtt_ns, 0);
	CHECK_EQ(ps.p[1].acked, 1);
	/* first sample: SRTT 1000, RTTVAR 500: RTO 1000 + 4 * 500 */
	CHECK_EQ(ps.p[0].rtt.srtt_ns, 1000);
	CHECK_EQ(sdr_path_rto_of(&ps, 0, 777), 3000);
	CHECK_EQ(sdr_path_rto(&ps, 5000), 3000);
	/* a path with packets out and no sample: the initial RTO */
	CHECK_EQ(sdr_path_pick(&ps, 0, 400), 1);
	CHECK_EQ(sdr_path_rto(&ps, 5000), 5000);
	/* a down path's timeout no longer counts */
	CHECK_EQ(sdr_path_set_down(&ps, 1, true, 500), 0);
	CHECK_EQ(sdr_path_rto(&ps, 5000), 3000);
}

/*
 * Losses taken back (sdr_path_unlost(): the copy declared lost was
 * answered after all): a path whose every fifth packet is declared lost
 * and then answered keeps a clean figure and is never drained, whether
 * the answer comes in the window that counted the loss or after it was
 * sampled; the counters move the loss to acked.
 */
static void test_path_unlost(void)
{
	struct sdr_paths ps;
	u64 now = 1000 * MS;
	u32 k, i, pending = SDR_PATH_ANY;

	paths(&ps, 2);
	for (k = 0; k < 20 * SDR_PATH_WIN; k++) {
		i = sdr_path_pick(&ps, SDR_PATH_ANY, now);
		if (i == 0 && k % 5 == 0) {
			sdr_path_lost(&ps, i, now);
			/* the late answer: at once, or after one more packet
			 * (which may close the window) */
			if (k % 10)
				sdr_path_unlost(&ps, i);
			else
				pending = i;
		} else {
			sdr_path_acked(&ps, i, now - 100000, true, now);
			if (pending != SDR_PATH_ANY) {
				sdr_path_unlost(&ps, pending);
				pending = SDR_PATH_ANY;
			}
		}
		now += 10000;
	}
	CHECK_EQ(ps.p[0].state, SDR_PATH_UP);
	CHECK_EQ(ps.p[0].drains, 0);
	CHECK_EQ(ps.p[0].lost, 0);
	CHECK(ps.p[0].unlost > 0);
	CHECK(ps.p[0].loss_pct <= 2);
	/* the same losses, never answered: drained */
	paths(&ps, 2);
	for (k = 0; k < 20 * SDR_PATH_WIN; k++) {
		i = sdr_path_pick(&ps, SDR_PATH_ANY, now);
		if (i == 0 && k % 5 == 0)
			sdr_path_lost(&ps, i, now);
		else
			sdr_path_acked(&ps, i, now - 100000, true, now);
		now += 10000;
	}
	CHECK(ps.p[0].drains >= 1);
	/* nothing to take back: no effect */
	paths(&ps, 2);
	sdr_path_unlost(&ps, 1);
	sdr_path_unlost(&ps, SDR_PATH_MAX);
	CHECK_EQ(ps.p[1].acked, 0);
	CHECK_EQ(ps.p[1].unlost, 0);
}

/*
 * A caller narrowed to some paths (one device of a flow over several)
 * picks among them only; it sends nothing while its paths are drained or
 * down and others are up, except a due test train; a mask of none of the
 * flow's paths allows them all.
 */
static void test_path_allow(void)
{
	struct sdr_paths ps;
	u32 sent[SDR_PATH_MAX] = { 0 }, k, i;
	u64 now = 1000 * MS;

	paths(&ps, 4);
	CHECK_EQ(ps.allow, 0xf);
	sdr_path_allow(&ps, 0xc);
	CHECK(sdr_path_can_send(&ps, now));
	traffic(&ps, 200, 0, 1, &now, sent);
	CHECK_EQ(sent[0] + sent[1], 0);
	CHECK(sent[2] > 80 && sent[3] > 80);
	for (k = 0; k < 20; k++) {
		i = sdr_path_pick_untracked(&ps, SDR_PATH_ANY);
		CHECK(i == 2 || i == 3);
	}
	/* a resend avoids its last path among the allowed ones ... */
	i = sdr_path_pick(&ps, 2, now);
	CHECK_EQ(i, 3);
	sdr_path_forget(&ps, i, now);
	/* ... unless it is the only one allowed */
	sdr_path_allow(&ps, 0x4);
	i = sdr_path_pick(&ps, 2, now);
	CHECK_EQ(i, 2);
	sdr_path_forget(&ps, i, now);
	/* a resend of path 2's: not for a caller allowed 2 alone ... */
	sdr_path_allow(&ps, 0x4);
	CHECK(!sdr_path_resend_ok(&ps, 2, now));
	/* ... but for one with another usable path, or for everyone */
	sdr_path_allow(&ps, 0xc);
	CHECK(sdr_path_resend_ok(&ps, 2, now));
	sdr_path_allow(&ps, 0x3);
	CHECK(sdr_path_resend_ok(&ps, 2, now));
	sdr_path_allow(&ps, 0);
	CHECK(sdr_path_resend_ok(&ps, 2, now));
	/* the lone caller of path 2, the others down: it resends after all */
	sdr_path_allow(&ps, 0x4);
	for (k = 0; k < 4; k++)
		if (k != 2)
			CHECK_EQ(sdr_path_set_down(&ps, k, true, now), 0);
	CHECK(sdr_path_resend_ok(&ps, 2, now));
	/* a caller whose paths are all down leaves it to path 2's */
	sdr_path_allow(&ps, 0x3);
	CHECK(!sdr_path_resend_ok(&ps, 2, now));
	paths(&ps, 4);
	/* nothing for this caller while its paths are down and others up */
	sdr_path_allow(&ps, 0xc);
	CHECK_EQ(sdr_path_set_down(&ps, 2, true, now), 0);
	CHECK(sdr_path_can_send(&ps, now));
	CHECK_EQ(sdr_path_set_down(&ps, 3, true, now), 0);
	CHECK(!sdr_path_can_send(&ps, now));
	/* with every path allowed, as before: always something */
	sdr_path_allow(&ps, 0);
	CHECK_EQ(ps.allow, 0xf);
	CHECK(sdr_path_can_send(&ps, now));
	sdr_path_allow(&ps, 0x100);
	CHECK_EQ(ps.allow, 0xf);
	/* a drained allowed path: nothing until its test train is due */
	paths(&ps, 2);
	memset(sent, 0, sizeof(sent));
	traffic(&ps, 40 * SDR_PATH_WIN, 0x2, 2, &now, sent);
	CHECK_EQ(ps.p[1].state, SDR_PATH_DRAINED);
	sdr_path_allow(&ps, 0x2);
	CHECK(!sdr_path_can_send(&ps, now));
	now += ps.cfg.probe_max_ns;
	CHECK(sdr_path_can_send(&ps, now));
	CHECK(ps.p[1].testing);
	CHECK_EQ(sdr_path_pick(&ps, SDR_PATH_ANY, now), 1);
}

void test_path(void)
{
	TAP_RUN(test_path_init_bounds);
	TAP_RUN(test_path_least_inflight);
	TAP_RUN(test_path_drain_restore);
	TAP_RUN(test_path_last_kept);
	TAP_RUN(test_path_test_train);
	TAP_RUN(test_path_down_up);
	TAP_RUN(test_path_overdue_rto);
	TAP_RUN(test_path_unlost);
	TAP_RUN(test_path_allow);
}
