/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RTT estimator, RFC 6298 in integer nanoseconds, with the SDR-RDMA
 * retransmission timeout RTO = SRTT + max(alpha * SRTT, 4 * RTTVAR):
 * on a steady path RTTVAR decays and RTO tends to (1 + alpha) * RTT.
 */
#ifndef SDR_RTT_H
#define SDR_RTT_H

#include "sdr_compat.h"

/* backoff doublings beyond this are capped (RTO << 16 >= any sane cap) */
#define SDR_RTT_MAX_SHIFT	16

struct sdr_rtt {
	u64	srtt_ns;	/* 0 until the first sample */
	u64	rttvar_ns;
	u64	min_ns;		/* smallest sample seen, U64_MAX before */
	u64	latest_ns;	/* last sample */
	u64	rto_ns;		/* current base RTO, clamped */
	u64	init_rto_ns;	/* RTO before the first sample */
	u64	floor_ns;
	u64	cap_ns;
	u32	alpha_pct;
	u32	samples;
};

void sdr_rtt_init(struct sdr_rtt *r, u64 init_rto_ns, u64 floor_ns,
		  u64 cap_ns, u32 alpha_pct);
void sdr_rtt_sample(struct sdr_rtt *r, u64 rtt_ns);

static inline u64 sdr_rtt_rto(const struct sdr_rtt *r)
{
	return r->rto_ns;
}

/* RTO after @shift timeouts of the same packet: rto << shift, capped */
u64 sdr_rtt_backoff(const struct sdr_rtt *r, u32 shift);

/* RTT to plan with: SRTT, or the initial RTO before any sample */
static inline u64 sdr_rtt_srtt(const struct sdr_rtt *r)
{
	return r->samples ? r->srtt_ns : r->init_rto_ns;
}

#endif /* SDR_RTT_H */
