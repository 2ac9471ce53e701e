// SPDX-License-Identifier: GPL-2.0
/*
 * RFC 6298 estimator in integer ns: gains 1/8 and 1/4 are shifts.  Karn's
 * rule is the caller's: feed only samples that are unambiguous, such as an
 * echoed per-transmission timestamp.
 */
#include "sdr_rtt.h"

static u64 sdr_rtt_clamp(const struct sdr_rtt *r, u64 v)
{
	if (v < r->floor_ns)
		v = r->floor_ns;
	if (v > r->cap_ns)
		v = r->cap_ns;
	return v;
}

void sdr_rtt_init(struct sdr_rtt *r, u64 init_rto_ns, u64 floor_ns,
		  u64 cap_ns, u32 alpha_pct)
{
	memset(r, 0, sizeof(*r));
	r->floor_ns = floor_ns;
	r->cap_ns = cap_ns < floor_ns ? floor_ns : cap_ns;
	r->alpha_pct = min_t(u32, alpha_pct, 1000);
	r->min_ns = U64_MAX;
	r->init_rto_ns = init_rto_ns;
	r->rto_ns = sdr_rtt_clamp(r, init_rto_ns);
}

void sdr_rtt_sample(struct sdr_rtt *r, u64 rtt_ns)
{
	u64 margin, var;

	if (!rtt_ns)
		rtt_ns = 1;
	/* keep products below 2^64: nobody measures RTTs of ~584 years */
	if (rtt_ns > (U64_MAX >> 10))
		rtt_ns = U64_MAX >> 10;
	r->latest_ns = rtt_ns;
	if (rtt_ns < r->min_ns)
		r->min_ns = rtt_ns;
	if (!r->samples) {
		r->srtt_ns = rtt_ns;
		r->rttvar_ns = rtt_ns / 2;
	} else {
		u64 err = r->srtt_ns > rtt_ns ? r->srtt_ns - rtt_ns :
						 rtt_ns - r->srtt_ns;

		r->rttvar_ns = r->rttvar_ns - (r->rttvar_ns >> 2) + (err >> 2);
		r->srtt_ns = r->srtt_ns - (r->srtt_ns >> 3) + (rtt_ns >> 3);
	}
	if (r->samples < U32_MAX)
		r->samples++;

	margin = div_u64(r->srtt_ns * r->alpha_pct, 100);
	var = r->rttvar_ns << 2;
	r->rto_ns = sdr_rtt_clamp(r, r->srtt_ns + max(margin, var));
}

u64 sdr_rtt_backoff(const struct sdr_rtt *r, u32 shift)
{
	u64 rto = r->rto_ns;

	if (shift > SDR_RTT_MAX_SHIFT)
		shift = SDR_RTT_MAX_SHIFT;
	if (rto > (r->cap_ns >> shift))
		return r->cap_ns;
	return sdr_rtt_clamp(r, rto << shift);
}
