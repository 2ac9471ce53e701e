// SPDX-License-Identifier: GPL-2.0
/*
 * A flow's window and rate from its path (kernel/engine/sdr_cc.c), driven
 * by a fluid model of one bottleneck: packets leave at the controller's
 * rate while its window allows, queue at the bottleneck, cross it at its
 * capacity, and are acknowledged one propagation round trip later.
 */
#include <stdlib.h>

#include "tap.h"
#include "tests.h"
#include "sdr_cc.h"

#define PKT	4096U
#define STEP_NS	100000ULL		/* 0.1 ms */
#define RING	4096			/* steps of acknowledgements ahead */

struct pipe {
	struct sdr_cc cc;
	double cap;		/* bottleneck, packets per step */
	u32 rtt_steps;		/* propagation round trip */
	double queue;		/* packets at the bottleneck */
	double inflight;	/* sent, not yet acknowledged or lost */
	double credit;		/* packets the rate allows now */
	double acks[RING];	/* packets acknowledged at each step ahead */
	double delivered;
	double loss;		/* of what crosses the bottleneck */
	u64 now;
	u64 step;
	bool idle;		/* the application has nothing to send */
	u64 qmax_steps;		/* the longest queue, in steps of capacity */
};

static void pipe_init(struct pipe *p, double mbit, u32 rtt_ms, u64 rate_Bps,
		      u32 win_max)
{
	struct sdr_cc_cfg cfg = {
		.pkt_bytes = PKT, .win_init = 256, .win_min = 16,
		.win_max = win_max, .burst_pkts = 16, .loss_cut_pct = 25,
		.rate_Bps = rate_Bps,
	};

	memset(p, 0, sizeof(*p));
	sdr_cc_init(&p->cc, &cfg);
	p->cap = mbit * 1e6 / 8 / PKT * (STEP_NS / 1e9);
	p->rtt_steps = rtt_ms * 10;
	p->now = 1000000000ULL;
}

/* run @steps steps; returns the packets delivered meanwhile */
static double pipe_run(struct pipe *p, u64 steps)
{
	double start = p->delivered, send, out, acked, lost;
	u64 rate, i;

	for (i = 0; i < steps; i++, p->step++, p->now += STEP_NS) {
		rate = sdr_cc_rate(&p->cc);
		p->credit += rate ? (double)rate * STEP_NS / 1e9 / PKT : 1e9;
		if (p->credit > 16)
			p->credit = rate ? 16 : p->credit;
		send = sdr_cc_window(&p->cc) - p->inflight;
		if (send > p->credit)
			send = p->credit;
		if (p->idle || send < 1) {
			send = 0;
		} else {
			send = (double)(u64)send;
			for (u32 k = 0; k < (u32)send; k++)
				sdr_cc_sent(&p->cc);
		}
		/* never short of data: whatever it did not send, it was held */
		if (!p->idle)
			sdr_cc_held(&p->cc);
		p->credit -= send;
		p->inflight += send;
		p->queue += send;
		out = p->queue < p->cap ? p->queue : p->cap;
		p->queue -= out;
		if (p->queue / p->cap > p->qmax_steps)
			p->qmax_steps = (u64)(p->queue / p->cap);
		lost = out * p->loss;
		p->acks[(p->step + p->rtt_steps) % RING] += out - lost;
		p->inflight -= lost;
		for (u32 k = 0; k < (u32)(lost + 0.5); k++)
			sdr_cc_lost(&p->cc);
		acked = p->acks[p->step % RING];
		p->acks[p->step % RING] = 0;
		p->inflight -= acked;
		p->delivered += acked;
		if (acked > 0)
			sdr_cc_delivered(&p->cc, (u64)(acked * PKT),
					 p->rtt_steps * STEP_NS, (u32)p->inflight,
					 p->now);
	}
	return p->delivered - start;
}

/* packets per second of what @pkts over @steps is */
static double pps(double pkts, u64 steps)
{
	return pkts / (steps * (STEP_NS / 1e9));
}

/*
 * Auto: startup finds a 1 Gbit/s, 50 ms path within a second, drains,
 * then moves what the path carries with its queue under a few RTTs'
 * worth of packets... of a fraction of one; the window settles at about
 * twice the BDP.
 */
static void test_cc_auto_fills_the_pipe(void)
{
	struct pipe p;
	double link_pps, got, bdp;

	pipe_init(&p, 1000, 50, 0, 1U << 20);
	link_pps = p.cap / (STEP_NS / 1e9);
	bdp = link_pps * 0.05;
	pipe_run(&p, 20000);			/* 2 s */
	got = pps(pipe_run(&p, 50000), 50000);	/* then 5 s */
	tap_diag("auto 1 Gbit/s 50 ms: %.3f of the link, state %s, window %u (BDP %.0f), rate %.3f of the link, queue max %llu steps",
		 got / link_pps, sdr_cc_state_name(p.cc.state), sdr_cc_window(&p.cc),
		 bdp, sdr_cc_rate(&p.cc) / PKT / link_pps,
		 (unsigned long long)p.qmax_steps);
	CHECK_EQ(p.cc.state, SDR_CC_PROBE);
	CHECK(got > 0.95 * link_pps);
	CHECK(sdr_cc_window(&p.cc) > 1.5 * bdp && sdr_cc_window(&p.cc) < 3 * bdp);
	CHECK(p.cc.bw > 0.95 * link_pps * PKT && p.cc.bw < 1.05 * link_pps * PKT);
	CHECK_EQ(p.cc.cuts, 0);
}

/* Random loss of 1% and 5% takes packets, not the rate. */
static void test_cc_random_loss_keeps_rate(void)
{
	static const double loss[] = { 0.01, 0.05 };
	struct pipe p;
	double link_pps, got;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(loss); i++) {
		pipe_init(&p, 1000, 50, 0, 1U << 20);
		p.loss = loss[i];
		link_pps = p.cap / (STEP_NS / 1e9);
		pipe_run(&p, 20000);
		got = pps(pipe_run(&p, 50000), 50000);
		tap_diag("auto, loss %.0f%%: %.3f of (1-p) x link, %llu cuts",
			 loss[i] * 100, got / ((1 - loss[i]) * link_pps),
			 (unsigned long long)p.cc.cuts);
		CHECK(got > 0.93 * (1 - loss[i]) * link_pps);
		CHECK_EQ(p.cc.cuts, 0);
	}
}

/* A loss pattern (40% of what crosses) restarts the estimate. */
static void test_cc_heavy_loss_cuts(void)
{
	struct pipe p;

	pipe_init(&p, 1000, 50, 0, 1U << 20);
	pipe_run(&p, 20000);
	CHECK_EQ(p.cc.cuts, 0);
	p.loss = 0.4;
	pipe_run(&p, 5000);
	CHECK(p.cc.cuts > 0);
}

/* Fixed: the configured rate, the window twice its BDP plus a burst. */
static void test_cc_fixed_rate(void)
{
	struct pipe p;
	u64 rate = 1000000000ULL / 8;	/* 1 Gbit/s */
	double got, bdp = (double)rate * 0.05 / PKT;

	pipe_init(&p, 1000, 50, rate, 1U << 20);
	CHECK_EQ(p.cc.state, SDR_CC_FIXED);
	CHECK_EQ(sdr_cc_window(&p.cc), 256);	/* no RTT yet */
	CHECK_EQ(sdr_cc_rate(&p.cc), rate);
	pipe_run(&p, 10000);
	got = pps(pipe_run(&p, 20000), 20000);
	CHECK(got > 0.97 * rate / PKT);
	CHECK(sdr_cc_window(&p.cc) >= (u32)(2 * bdp) &&
	      sdr_cc_window(&p.cc) <= (u32)(2 * bdp) + 17);
	CHECK_EQ(sdr_cc_rate(&p.cc), rate);
	/* back to auto: startup again, from what it measured */
	sdr_cc_set_rate(&p.cc, 0);
	CHECK_EQ(p.cc.state, SDR_CC_STARTUP);
}

/* The local limit and the receiver's window bound it; the first never is 0. */
static void test_cc_bounds(void)
{
	struct pipe p;

	pipe_init(&p, 1000, 50, 0, 1000);
	pipe_run(&p, 20000);
	CHECK_EQ(sdr_cc_window(&p.cc), 1000);
	sdr_cc_set_rwnd(&p.cc, 300);
	CHECK_EQ(sdr_cc_window(&p.cc), 300);
	sdr_cc_set_rwnd(&p.cc, 0);
	CHECK_EQ(sdr_cc_window(&p.cc), 1);
	sdr_cc_set_rwnd(&p.cc, U32_MAX);
	CHECK_EQ(sdr_cc_window(&p.cc), 1000);
}

/* A flow short of data says nothing of the path: the estimate stands. */
static void test_cc_idle_keeps_estimate(void)
{
	struct pipe p;
	u64 bw;

	pipe_init(&p, 1000, 50, 0, 1U << 20);
	pipe_run(&p, 20000);
	bw = p.cc.bw;
	p.idle = true;
	pipe_run(&p, 30000);
	p.idle = false;
	CHECK(p.cc.bw >= bw * 9 / 10);
	CHECK_EQ(p.cc.state, SDR_CC_PROBE);
}

void test_cc(void)
{
	TAP_RUN(test_cc_auto_fills_the_pipe);
	TAP_RUN(test_cc_random_loss_keeps_rate);
	TAP_RUN(test_cc_heavy_loss_cuts);
	TAP_RUN(test_cc_fixed_rate);
	TAP_RUN(test_cc_bounds);
	TAP_RUN(test_cc_idle_keeps_estimate);
}
