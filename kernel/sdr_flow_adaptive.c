// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: policy ADAPTIVE in a flow - the SR engine with its timers learned
 * per flow instead of taken from module parameters.  CSA-UD's idea: loss
 * recovery decoupled from sending and driven by what is observed.  The
 * engine (engine/sdr_sr.c, SDR_SR_CFG_ADAPTIVE) does it: the receiver
 * learns the gap between arrivals, how late reordered packets come and
 * how long a NACKed hole takes to be repaired; it NACKs a hole once it is
 * overdue and a silent tail once nothing came for a while, and reports
 * the gap, by which the sender paces; the sender keeps sending through
 * recovery and learns its RTO margin from needless timeouts.  The module
 * parameters (reorder_us, nack_interval_us, ack_every) are only its first
 * guesses.  Documentation/protocol.rst describes it.
 *
 * ADAPTIVE runs on engine state of its own (flow->ad: RTT estimate,
 * counters, what it learned), so the flow's SR and EC messages keep
 * theirs; it shares SR's receive maps (SR is its base) and SR's hooks.
 */
#include <linux/slab.h>

#include "sdr.h"
#include "sdr_flow.h"

static struct sdr_sr_flow *sdr_adk_engine(struct sdr_flow *flow)
{
	return flow->ad;
}

/* Its engine state: SR's configuration, learning.  May sleep. */
static int sdr_adk_flow_init(struct sdr_flow *flow)
{
	struct sdr_sr_flow *ad;
	struct sdr_sr_cfg cfg;

	if (sdr_flow_charge(flow, sizeof(*ad)))
		return -ENOMEM;
	ad = kzalloc(sizeof(*ad), GFP_KERNEL_ACCOUNT);
	if (!ad)
		return -ENOMEM;
	sdr_flow_engine_cfg(flow, &cfg);
	cfg.flags |= SDR_SR_CFG_ADAPTIVE;
	sdr_sr_flow_init(ad, &cfg);
	if (flow->ps)
		sdr_sr_flow_set_paths(ad, flow->ps);
	spin_lock_bh(&flow->lock);
	flow->ad = ad;
	spin_unlock_bh(&flow->lock);
	return 0;
}

static void sdr_adk_flow_free(struct sdr_flow *flow)
{
	kfree(flow->ad);
	flow->ad = NULL;
}

/* What it learned (as the receiver, and as the sender), and its counters. */
static const char * const sdr_adk_stats[] = {
	"reorder_us", "nack_interval_us", "tail_wait_us", "gap_ns",
	"jitter_us", "peer_rtt_us", "pace_gap_ns", "pace_gain_pct", "base_rtt_us",
	"rto_extra_us", "srtt_us", "rto_us",
	"ack_every", "retransmits", "timeouts", "spurious_retx", "late_nacks",
	"tail_probes", "acks_tx", "acks_rx", "nacks_tx", "nacks_rx",
	"urgent_dups", SDR_FLOW_CC_NAMES, NULL,
};

static u64 sdr_adk_stat(struct sdr_flow *flow, u32 i)
{
	const struct sdr_sr_flow *f = flow->ad;

	lockdep_assert_held(&flow->lock);
	switch (i) {
	case 0: return div_u64(sdr_sr_reorder_ns(f), NSEC_PER_USEC);
	case 1: return div_u64(sdr_sr_nack_interval_ns(f), NSEC_PER_USEC);
	case 2: return div_u64(sdr_sr_tail_wait_ns(f), NSEC_PER_USEC);
	case 3: return f->ad.gap_ns;
	case 4: return div_u64(f->ad.jitter_ns, NSEC_PER_USEC);
	case 5: return div_u64(f->ad.peer_rtt_ns, NSEC_PER_USEC);
	case 6: return f->peer_gap_ns;
	case 7: return f->pace_gain * 100 / 8;
	case 8: return f->base_rtt_ns == U64_MAX && f->base_win_ns == U64_MAX ? 0 :
		       div_u64(min(f->base_rtt_ns, f->base_win_ns), NSEC_PER_USEC);
	case 9: return div_u64(f->rto_extra_ns, NSEC_PER_USEC);
	case 10: return div_u64(f->rtt.srtt_ns, NSEC_PER_USEC);
	case 11: return div_u64(sdr_rtt_rto(&f->rtt) + f->rto_extra_ns,
			       NSEC_PER_USEC);
	case 12: return sdr_sr_ack_every(f);
	case 13: return f->st.retx_pkts;
	case 14: return f->st.timeouts;
	case 15: return f->st.spurious;
	case 16: return f->st.nack_late;
	case 17: return f->st.tail_probes;
	case 18: return f->st.acks_tx;
	case 19: return f->st.acks_rx;
	case 20: return f->st.nacks_tx;
	case 21: return f->st.nacks_rx;
	case 22: return f->st.urgent_dups;
	}
	if (i >= 23 && i < 23 + SDR_FLOW_CC_STATS)
		return sdr_flow_cc_stat(f, i - 23);
	return 0;
}

const struct sdr_policy_ops sdr_adaptive_ops = {
	.id		= SDR_POLICY_ADAPTIVE,
	.features	= SDR_PF_ACKED | SDR_PF_PATHS | SDR_PF_STREAM,
	.base		= &sdr_sr_ops,
	.engine		= sdr_adk_engine,
	.flow_init	= sdr_adk_flow_init,
	.flow_free	= sdr_adk_flow_free,
	.tx_init	= sdr_srk_tx_init,
	.tx_free	= sdr_srk_tx_free,
	.tx_ready	= sdr_srk_tx_ready,
	.tx_next	= sdr_srk_tx_next,
	.tx_status	= sdr_srk_tx_status,
	.tx_poll	= sdr_srk_tx_poll,
	.rx_data	= sdr_srk_rx_data,
	.rx_unmatched	= sdr_srk_rx_unmatched,
	.rx_ctrl	= sdr_srk_rx_ctrl,
	.rx_abandon	= sdr_srk_rx_abandon,
	.rx_poll	= sdr_srk_rx_poll,
	.stats		= sdr_adk_stats,
	.stat		= sdr_adk_stat,
};
