// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: AUTO in a flow.  AUTO is no policy of its own and never on the
 * wire: each message posted on an AUTO flow runs SR, EC with a k and m,
 * or ADAPTIVE, whichever the engine's model (engine/sdr_auto.c) says
 * costs least on what the flow measured - the loss its receivers report
 * in COMPLETE ACKs, the path's round trip, the gap between packets
 * delivered, EC's coding time, the size and number of messages it posts.
 * It decides again every two round trips (10 ms at least) as it posts; a
 * message keeps the policy it was posted under, so a switch loses and
 * repeats nothing.  flows/<id>/auto/ and the sdr_auto tracepoint show
 * what it chose and why.
 */
#include "sdr.h"
#include "sdr_ec.h"
#include "sdr_flow.h"
#include "sdr_trace.h"

/*
 * The policy of a message of @npkts packets posted now on AUTO flow
 * @flow, and in *@k, *@m its EC geometry if that is EC (flow->lock held).
 */
u32 sdr_flow_auto_pick(struct sdr_flow *flow, u32 npkts, u64 now, u32 *k,
		       u32 *m)
{
	struct sdr_auto *a = &flow->au;
	struct sdr_auto_in in;
	bool moved;

	lockdep_assert_held(&flow->lock);
	sdr_auto_posted(a, npkts, flow->tx_inflight_msgs);
	sdr_auto_collect(a, &flow->sr, flow->ad, now);
	if (sdr_auto_due(a, now) &&
	    sdr_auto_fill(a, &flow->sr, flow->ad, SDR_EC_MAX_K, SDR_EC_MAX_M,
			  &in)) {
		in.code_ps = flow->ec_code_ps;
		moved = sdr_auto_decide(a, &in, now);
		flow->au_in = in;
		trace_sdr_auto(flow->id, &in, &a->pick, moved);
	}
	if (a->pick.cand == SDR_AUTO_EC) {
		*k = a->pick.ec_k;
		*m = a->pick.ec_m;
	}
	return sdr_auto_cand_policy(a->pick.cand);
}

/*
 * flows/<id>/auto/: what it chose (choice: "sr", "adaptive" or
 * "ec <k> <m>"), from what (the last decision's input) and why (each
 * candidate's cost, the model's time per message), and how often.
 */
const char * const sdr_flow_auto_stats[SDR_AUTO_NSTATS + 1] = {
	"choice", "loss_ppm", "rtt_us", "tinj_ns", "msg_pkts", "inflight",
	"cost_sr_us", "cost_adaptive_us", "cost_ec_us", "decisions",
	"switches", "code_ns", NULL,
};

ssize_t sdr_flow_auto_show(struct sdr_flow *flow, u32 i, char *buf)
{
	const struct sdr_auto *a = &flow->au;
	const struct sdr_auto_in *in = &flow->au_in;
	u64 v = 0;

	lockdep_assert_held(&flow->lock);
	switch (i) {
	case 0:
		if (a->pick.cand == SDR_AUTO_EC)
			return sysfs_emit(buf, "ec %u %u\n", a->pick.ec_k,
					  a->pick.ec_m);
		return sysfs_emit(buf, "%s\n",
				  sdr_policy_name(sdr_auto_cand_policy(a->pick.cand)));
	case 1:
		v = (in->loss * 1000000) >> SDR_AUTO_SHIFT;
		break;
	case 2:
		v = div_u64(in->rtt_ns, NSEC_PER_USEC);
		break;
	case 3:
		v = div_u64(in->tinj_ps, 1000);
		break;
	case 4:
		v = in->msg_pkts;
		break;
	case 5:
		v = in->inflight;
		break;
	case 6: case 7: case 8:
		v = a->pick.cost_ns[i - 6] == U64_MAX ? 0 :
		    div_u64(a->pick.cost_ns[i - 6], NSEC_PER_USEC);
		break;
	case 9:
		v = a->decisions;
		break;
	case 10:
		v = a->switches;
		break;
	case 11:
		v = div_u64(in->code_ps, 1000);
		break;
	}
	return sysfs_emit(buf, "%llu\n", v);
}
