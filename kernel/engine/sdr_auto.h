/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AUTO: which policy a flow's next messages take - SR, EC with its k and
 * m, or ADAPTIVE - from what was measured of the path (drop rate, round
 * trip, the time a packet holds the path) and of the traffic (message
 * size, messages in flight), by the SDR paper's model of completion
 * time, in fixed point so the kernel and the host (tools/sdr-sim, the
 * tests) run the same arithmetic.  Documentation/protocol.rst describes
 * the model and what it leaves out.
 */
#ifndef SDR_AUTO_H
#define SDR_AUTO_H

#include "sdr_compat.h"

/* probabilities and round counts in fixed point: SDR_AUTO_ONE is 1 */
#define SDR_AUTO_SHIFT		30
#define SDR_AUTO_ONE		(1ULL << SDR_AUTO_SHIFT)

/* the model's candidates, in the order a tie goes (SR first) */
enum sdr_auto_cand {
	SDR_AUTO_SR,
	SDR_AUTO_ADAPTIVE,
	SDR_AUTO_EC,
	SDR_AUTO_NCAND
};

/* What the model is given of a flow. */
struct sdr_auto_in {
	u64	loss;		/* drop probability, SDR_AUTO_ONE = 1 */
	u64	rtt_ns;		/* round trip */
	u64	tinj_ps;	/* time one packet holds the path */
	u32	msg_pkts;	/* data packets per message */
	u32	inflight;	/* messages in flight at once */
	u64	sr_reorder_ns;	/* SR: a hole waits this long for a NACK */
	u64	sr_tail_ns;	/* SR: a lost tail waits this long (its RTO) */
	u64	ad_reorder_ns;	/* ADAPTIVE: its reorder window */
	u64	ad_tail_ns;	/* ADAPTIVE: its tail wait */
	u64	code_ps;	/* EC: CPU time per packet a parity row takes in */
	u32	max_k;		/* local EC limits */
	u32	max_m;
};

/* What it makes of them: each candidate's cost, the best. */
struct sdr_auto_pick {
	u32	cand;		/* enum sdr_auto_cand */
	u32	ec_k;		/* EC's best geometry (whatever cand is) */
	u32	ec_m;
	u64	cost_ns[SDR_AUTO_NCAND];	/* time per message */
	u64	done_ns[SDR_AUTO_NCAND];	/* one message's completion */
};

u64 sdr_auto_rounds(u32 n, u64 p);
u64 sdr_auto_p_fail(u32 n, u32 m, u64 p);
u64 sdr_auto_cost_ns(const struct sdr_auto_in *in, u32 cand, u32 k, u32 m,
		     u64 *done);
void sdr_auto_eval(const struct sdr_auto_in *in, struct sdr_auto_pick *out);

/*
 * A flow's AUTO: its measurements (what the receivers reported lost, the
 * sizes and number of messages it posts), when it next looks, and what
 * it chose.
 */
#define SDR_AUTO_WINDOW		16384	/* packets: older reports weigh half */
#define SDR_AUTO_HALF_NS	2000000000ULL	/* ... and after this long */

struct sdr_auto {
	u64	lost;		/* reported lost, decayed */
	u64	pkts;		/* ... of this many data packets */
	u64	aged_ns;	/* when they last weighed half for their age */
	u64	msg_pkts16;	/* packets per message, moving average, x16 */
	u64	inflight16;	/* messages in flight at a post, x16 */
	u64	next_ns;	/* decide again from then */
	u64	seen_lost;	/* engine totals already taken in */
	u64	seen_pkts;
	struct sdr_auto_pick	pick;	/* what the flow runs */
	u64	decisions;
	u64	switches;
};

void sdr_auto_init(struct sdr_auto *a);
void sdr_auto_posted(struct sdr_auto *a, u32 msg_pkts, u32 inflight);
void sdr_auto_report(struct sdr_auto *a, u64 lost, u64 pkts, u64 now_ns);
u64 sdr_auto_loss(const struct sdr_auto *a);
u32 sdr_auto_msg_pkts(const struct sdr_auto *a);
u32 sdr_auto_inflight(const struct sdr_auto *a);
bool sdr_auto_due(const struct sdr_auto *a, u64 now_ns);

struct sdr_sr_flow;
void sdr_auto_collect(struct sdr_auto *a, const struct sdr_sr_flow *sr,
		      const struct sdr_sr_flow *ad, u64 now_ns);
bool sdr_auto_fill(const struct sdr_auto *a, const struct sdr_sr_flow *sr,
		   const struct sdr_sr_flow *ad, u32 max_k, u32 max_m,
		   struct sdr_auto_in *in);
bool sdr_auto_decide(struct sdr_auto *a, const struct sdr_auto_in *in,
		     u64 now_ns);

#endif /* SDR_AUTO_H */
