/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A flow's window and sending rate, from its path, in plain C
 * (sdr_compat.h rules).  Documentation/protocol.rst, "Window and rate".
 *
 * Window: the packets the flow may have in flight, sized from the measured
 * bandwidth-delay product: the highest delivery rate of the last
 * SDR_CC_BW_ROUNDS rounds (a round lasts one minimum RTT, at least
 * SDR_CC_MIN_ROUND_NS, long against the grain of timers and of answers
 * that come bunched; its rate is what it delivered over its length) times
 * the minimum RTT, times a gain (2 once the
 * pipe is full: one BDP on the path, one for what recovery and batched
 * answers hold back), plus a pacing burst; at least win_min, at most
 * win_max (the flow's local limit) and the receiver's window.  Before the
 * first estimate it is win_init.
 *
 * Rate, two modes:
 *  - auto (cfg.rate_Bps 0): model-based, in the manner of BBR.  Startup
 *    multiplies rate and window by 2.89 a round until three rounds that
 *    were not short of data grew the delivery rate by under a quarter;
 *    drain sends at a third of it until what is in flight fits one BDP
 *    (the queue startup built is gone); then the rate cycles 5/4, 3/4
 *    and six rounds of 1x the delivery rate: the 5/4 round finds
 *    bandwidth that appeared, the 3/4 round drains the queue it built.
 *    The minimum RTT (its caller's: sdr_sr.c keeps the least of the last
 *    10-20 s) says where queues start.  Random loss takes packets, not
 *    rate: what arrives still arrives at the path's rate, so the estimate
 *    stands.  Two rounds in a row in which more than loss_cut_pct of the
 *    packets the path resolved (delivered or declared lost) were lost
 *    are a pattern, not noise (a policer, a queue overflowing): the
 *    estimate restarts from that round's delivery rate, in startup.
 *  - fixed (cfg.rate_Bps > 0): that rate, for a dedicated long-haul link
 *    as the SDR paper assumes; the window is still from the path
 *    (2 x rate x minimum RTT once an RTT is known).
 *
 * A round's delivery rate counts only if the flow was held by its window
 * or its rate during the round (sdr_cc_held()), or if it is higher than
 * the estimate: a flow short of data says nothing of the path.
 */
#ifndef SDR_CC_H
#define SDR_CC_H

#include "sdr_compat.h"

#define SDR_CC_BW_ROUNDS	10
#define SDR_CC_MIN_ROUND_NS	5000000ULL	/* 5 ms: timers' and batches' grain */
/* estimates are bounded so products stay in 64 bits */
#define SDR_CC_MAX_BPS		(1ULL << 40)	/* bytes/s: 8.8 Tbit/s */
#define SDR_CC_MAX_RTT_US	10000000ULL	/* 10 s */

enum sdr_cc_state {
	SDR_CC_STARTUP	= 0,
	SDR_CC_DRAIN	= 1,
	SDR_CC_PROBE	= 2,
	SDR_CC_FIXED	= 3,
};

struct sdr_cc_cfg {
	u32	pkt_bytes;	/* wire bytes of a full packet, > 0 */
	u32	win_init;	/* window before the first estimate */
	u32	win_min;
	u32	win_max;	/* the local limit */
	u32	burst_pkts;	/* packets the pacer lets leave back to back */
	u32	loss_cut_pct;	/* auto: loss in a round that restarts; 0: never */
	u64	rate_Bps;	/* fixed rate in bytes/s; 0: auto */
};

struct sdr_cc {
	struct sdr_cc_cfg cfg;
	u8	state;		/* enum sdr_cc_state */
	u8	cycle;		/* PROBE: the round's place in the gain cycle */
	bool	held;		/* this round the window or the rate held it */
	u32	full_rounds;	/* STARTUP: rounds that grew under 25% */
	u32	win;		/* packets in flight allowed, before rwnd */
	u32	rwnd;		/* the receiver's window, U32_MAX: none */
	u64	bw;		/* delivery rate estimate, bytes/s; 0: none */
	u64	bw_win[SDR_CC_BW_ROUNDS];	/* the latest rounds' rates */
	u32	bw_next;
	u64	full_bw;	/* STARTUP: the rate three rounds must beat */
	u64	rate;		/* pacing rate, bytes/s; 0: not paced */
	u64	rtt_us;		/* the minimum RTT last given, 0: none */
	u64	rnd_start_ns;	/* 0: no round open */
	u64	rnd_bytes;	/* delivered in this round */
	u32	rnd_sent;	/* packets sent in this round */
	u32	rnd_lost;	/* packets declared lost in this round */
	u32	heavy_rounds;	/* rounds in a row over loss_cut_pct */
	/* counters */
	u64	rounds;
	u64	cuts;		/* rounds whose loss restarted the estimate */
};

void sdr_cc_init(struct sdr_cc *cc, const struct sdr_cc_cfg *cfg);
/* fixed rate in bytes/s, or 0 for auto (which starts over) */
void sdr_cc_set_rate(struct sdr_cc *cc, u64 rate_Bps);
/* the receiver's window in packets; U32_MAX: none */
void sdr_cc_set_rwnd(struct sdr_cc *cc, u32 rwnd);
void sdr_cc_sent(struct sdr_cc *cc);
void sdr_cc_lost(struct sdr_cc *cc);
void sdr_cc_held(struct sdr_cc *cc);
/*
 * @bytes were delivered (acknowledged for the first time) at @now_ns;
 * @min_rtt_ns is the path's minimum RTT (0: none yet), @inflight the
 * flow's packets in flight now.
 */
void sdr_cc_delivered(struct sdr_cc *cc, u64 bytes, u64 min_rtt_ns,
		      u32 inflight, u64 now_ns);

static inline u32 sdr_cc_window(const struct sdr_cc *cc)
{
	return min(cc->win, cc->rwnd);
}

/* pacing rate in bytes/s; 0: none */
static inline u64 sdr_cc_rate(const struct sdr_cc *cc)
{
	return cc->rate;
}

const char *sdr_cc_state_name(u8 state);

#endif /* SDR_CC_H */
