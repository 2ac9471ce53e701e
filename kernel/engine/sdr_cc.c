// SPDX-License-Identifier: GPL-2.0
/*
 * A flow's window and sending rate from its path: see sdr_cc.h and
 * Documentation/protocol.rst, "Window and rate".
 */
#include "sdr_cc.h"

/* gains in 256ths: startup's 2/ln 2, drain its inverse */
#define SDR_CC_STARTUP_GAIN	739
#define SDR_CC_DRAIN_GAIN	89
#define SDR_CC_UNIT		256
/* the probing cycle's rate gains, in eighths, one round each */
static const u8 sdr_cc_cycle[8] = { 10, 6, 8, 8, 8, 8, 8, 8 };
#define SDR_CC_CYCLE_START	2	/* a 1x round: no probe right after drain */
#define SDR_CC_FULL_ROUNDS	3
#define SDR_CC_MIN_LOSS_PKTS	16	/* a round resolves this many to judge loss */
#define SDR_CC_HEAVY_ROUNDS	2	/* lossy rounds in a row that restart */

const char *sdr_cc_state_name(u8 state)
{
	switch (state) {
	case SDR_CC_STARTUP:	return "startup";
	case SDR_CC_DRAIN:	return "drain";
	case SDR_CC_PROBE:	return "probe";
	case SDR_CC_FIXED:	return "fixed";
	}
	return "?";
}

/* packets of @rate (bytes/s) over the minimum RTT, 0 if either is unknown */
static u64 sdr_cc_bdp(const struct sdr_cc *cc, u64 rate)
{
	if (!rate || !cc->rtt_us)
		return 0;
	return div_u64(div64_u64(rate * cc->rtt_us, 1000000), cc->cfg.pkt_bytes);
}

static void sdr_cc_update(struct sdr_cc *cc)
{
	u64 base, w;

	switch (cc->state) {
	case SDR_CC_FIXED:
		cc->rate = cc->cfg.rate_Bps;
		break;
	case SDR_CC_STARTUP:
		cc->rate = div_u64(cc->bw * SDR_CC_STARTUP_GAIN, SDR_CC_UNIT);
		break;
	case SDR_CC_DRAIN:
		cc->rate = div_u64(cc->bw * SDR_CC_DRAIN_GAIN, SDR_CC_UNIT);
		break;
	default:
		cc->rate = div_u64(cc->bw * sdr_cc_cycle[cc->cycle], 8);
		break;
	}
	base = cc->state == SDR_CC_FIXED ? cc->cfg.rate_Bps : cc->bw;
	w = sdr_cc_bdp(cc, base);
	w = min_t(u64, w, U32_MAX);
	if (!w) {
		w = cc->cfg.win_init;
	} else {
		if (cc->state == SDR_CC_STARTUP)
			w = div_u64(w * SDR_CC_STARTUP_GAIN, SDR_CC_UNIT);
		else
			w *= 2;
		w += cc->cfg.burst_pkts;
		/* startup only grows: a round's noise must not shrink it */
		if (cc->state == SDR_CC_STARTUP)
			w = max_t(u64, w, cc->win);
	}
	w = clamp_t(u64, w, cc->cfg.win_min, cc->cfg.win_max);
	cc->win = (u32)w;
}

void sdr_cc_init(struct sdr_cc *cc, const struct sdr_cc_cfg *cfg)
{
	memset(cc, 0, sizeof(*cc));
	cc->cfg = *cfg;
	if (!cc->cfg.pkt_bytes)
		cc->cfg.pkt_bytes = 1;
	if (!cc->cfg.win_max)
		cc->cfg.win_max = 1;
	cc->cfg.win_min = clamp_t(u32, cc->cfg.win_min, 1, cc->cfg.win_max);
	cc->cfg.win_init = clamp_t(u32, cc->cfg.win_init, cc->cfg.win_min,
				   cc->cfg.win_max);
	cc->cfg.rate_Bps = min_t(u64, cc->cfg.rate_Bps, SDR_CC_MAX_BPS);
	cc->rwnd = U32_MAX;
	cc->state = cc->cfg.rate_Bps ? SDR_CC_FIXED : SDR_CC_STARTUP;
	sdr_cc_update(cc);
}

void sdr_cc_set_rate(struct sdr_cc *cc, u64 rate_Bps)
{
	cc->cfg.rate_Bps = min_t(u64, rate_Bps, SDR_CC_MAX_BPS);
	if (cc->cfg.rate_Bps) {
		cc->state = SDR_CC_FIXED;
	} else {
		cc->state = SDR_CC_STARTUP;
		cc->full_bw = 0;
		cc->full_rounds = 0;
	}
	sdr_cc_update(cc);
}

void sdr_cc_set_rwnd(struct sdr_cc *cc, u32 rwnd)
{
	cc->rwnd = max_t(u32, rwnd, 1);
}

void sdr_cc_sent(struct sdr_cc *cc)
{
	cc->rnd_sent++;
}

void sdr_cc_lost(struct sdr_cc *cc)
{
	cc->rnd_lost++;
}

void sdr_cc_held(struct sdr_cc *cc)
{
	cc->held = true;
}

static void sdr_cc_push(struct sdr_cc *cc, u64 sample)
{
	u32 i;

	cc->bw_win[cc->bw_next] = sample;
	cc->bw_next = (cc->bw_next + 1) % SDR_CC_BW_ROUNDS;
	cc->bw = 0;
	for (i = 0; i < SDR_CC_BW_ROUNDS; i++)
		cc->bw = max(cc->bw, cc->bw_win[i]);
}

/* One round ended with delivery rate @sample: what it says of the path. */
static void sdr_cc_round(struct sdr_cc *cc, u64 sample)
{
	/*
	 * The round's loss: of the packets the path resolved in it, lost
	 * or delivered (what it sent itself is resolved a round later).
	 */
	u64 done = div_u64(cc->rnd_bytes, cc->cfg.pkt_bytes) + cc->rnd_lost;
	bool heavy = cc->cfg.loss_cut_pct && done >= SDR_CC_MIN_LOSS_PKTS &&
		     (u64)cc->rnd_lost * 100 > (u64)cc->cfg.loss_cut_pct * done;
	bool valid = cc->held || sample > cc->bw;

	cc->rounds++;
	cc->heavy_rounds = heavy ? cc->heavy_rounds + 1 : 0;
	if (cc->heavy_rounds >= SDR_CC_HEAVY_ROUNDS &&
	    cc->state != SDR_CC_FIXED) {
		/*
		 * Two rounds in a row: a pattern.  Start again from what
		 * this round delivered, in startup, which finds within a
		 * few rounds whatever rate the path still has.
		 */
		memset(cc->bw_win, 0, sizeof(cc->bw_win));
		cc->bw_next = 0;
		sdr_cc_push(cc, sample);
		cc->full_bw = cc->bw;
		cc->full_rounds = 0;
		cc->heavy_rounds = 0;
		cc->cuts++;
		cc->state = SDR_CC_STARTUP;
		cc->win = 0;	/* startup's only-grows starts from here */
	} else if (valid) {
		sdr_cc_push(cc, sample);
		if (cc->state == SDR_CC_STARTUP) {
			if (cc->bw >= cc->full_bw + (cc->full_bw >> 2)) {
				cc->full_bw = cc->bw;
				cc->full_rounds = 0;
			} else if (++cc->full_rounds >= SDR_CC_FULL_ROUNDS) {
				cc->state = SDR_CC_DRAIN;
			}
		}
	}
	if (cc->state == SDR_CC_PROBE)
		cc->cycle = (cc->cycle + 1) % ARRAY_SIZE(sdr_cc_cycle);
	cc->held = false;
	cc->rnd_bytes = 0;
	cc->rnd_sent = 0;
	cc->rnd_lost = 0;
}

void sdr_cc_delivered(struct sdr_cc *cc, u64 bytes, u64 min_rtt_ns,
		      u32 inflight, u64 now_ns)
{
	u64 round = max(min_rtt_ns, SDR_CC_MIN_ROUND_NS), dur_us, sample;

	cc->rtt_us = min_rtt_ns && min_rtt_ns != U64_MAX ?
		     clamp_t(u64, div_u64(min_rtt_ns, 1000), 1,
			     SDR_CC_MAX_RTT_US) : 0;
	if (!cc->rnd_start_ns || now_ns < cc->rnd_start_ns) {
		/* the first delivery opens the first round: its bytes came before */
		cc->rnd_start_ns = max_t(u64, now_ns, 1);
		cc->rnd_bytes = 0;
		sdr_cc_update(cc);
		return;
	}
	cc->rnd_bytes = min_t(u64, cc->rnd_bytes + bytes, SDR_CC_MAX_BPS);
	if (now_ns - cc->rnd_start_ns >= round) {
		dur_us = max_t(u64, div_u64(now_ns - cc->rnd_start_ns, 1000), 1);
		sample = min_t(u64, div64_u64(cc->rnd_bytes * 1000000, dur_us),
			       SDR_CC_MAX_BPS);
		sdr_cc_round(cc, sample);
		cc->rnd_start_ns = now_ns;
	}
	/* drain ends once what is in flight fits one BDP: the queue is gone */
	if (cc->state == SDR_CC_DRAIN && inflight <= sdr_cc_bdp(cc, cc->bw)) {
		cc->state = SDR_CC_PROBE;
		cc->cycle = SDR_CC_CYCLE_START;
	}
	sdr_cc_update(cc);
}
