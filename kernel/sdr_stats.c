// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: what a flow shows of itself (sysfs flows/<id>/ and sdrctl read it
 * through these accessors), and the device's totals of per-flow counters,
 * which outlive the flows that counted them.
 */
#include "sdr.h"
#include "sdr_stats.h"
#include "sdr_flow.h"

/*
 * The RTT estimate of the engine state the flow's policy sends with
 * (AUTO's: that of what it picked).
 */
static const struct sdr_rtt *sdr_flow_rtt(struct sdr_flow *flow)
{
	bool ad = flow->policy == SDR_POLICY_ADAPTIVE ||
		  (flow->policy == SDR_POLICY_AUTO &&
		   flow->au.pick.cand == SDR_AUTO_ADAPTIVE);

	return flow->ad && ad ? &flow->ad->rtt : &flow->sr.rtt;
}

/* Field @f of @flow (flow->lock held). */
u64 sdr_flow_field(struct sdr_flow *flow, enum sdr_flow_field f)
{
	struct sdr_sr_stats st;
	const struct sdr_sr_stats *sr = &st;

	lockdep_assert_held(&flow->lock);
	sdr_flow_engine_stats(flow, &st);
	switch (f) {
	case SDR_FF_OWNER_PID:		return flow->owner_pid;
	case SDR_FF_OWNER_UID:		return flow->owner_uid;
	case SDR_FF_MTU:		return flow->mtu;
	case SDR_FF_PAYLOAD:		return flow->payload;
	case SDR_FF_CHUNK:		return flow->chunk_size;
	case SDR_FF_MAX_MSG:		return flow->max_msg_size;
	case SDR_FF_MAX_MSGS:		return flow->max_msgs;
	case SDR_FF_SENDS:		return flow->tx_inflight_msgs;
	case SDR_FF_RECVS:		return flow->rx_posted;
	/* mem_lock nests in flow->lock: a moment's value either way */
	case SDR_FF_SEND_MEM:		return READ_ONCE(flow->tx_mem);
	case SDR_FF_RECV_MEM:		return READ_ONCE(flow->rx_mem);
	case SDR_FF_TX_PACKETS:		return flow->stats.tx_packets;
	case SDR_FF_TX_BYTES:		return flow->stats.tx_bytes;
	case SDR_FF_RX_PACKETS:		return flow->stats.rx_packets;
	case SDR_FF_RX_BYTES:		return flow->stats.rx_bytes;
	case SDR_FF_RX_DROPPED:		return flow->stats.rx_dropped;
	case SDR_FF_RETX:		return sr->retx_pkts;
	case SDR_FF_TIMEOUTS:		return sr->timeouts;
	case SDR_FF_ACKS_TX:		return sr->acks_tx;
	case SDR_FF_ACKS_RX:		return sr->acks_rx;
	case SDR_FF_NACKS_TX:		return sr->nacks_tx;
	case SDR_FF_NACKS_RX:		return sr->nacks_rx;
	case SDR_FF_RNR_TX:		return flow->stats.rnr_tx;
	case SDR_FF_RNR_RX:		return sr->rnr_rx;
	case SDR_FF_SPURIOUS:		return sr->spurious;
	case SDR_FF_MSGS_SENT:		return flow->stats.msgs_sent;
	case SDR_FF_MSGS_RECEIVED:	return flow->stats.msgs_received;
	case SDR_FF_MSGS_FAILED:	return flow->stats.msgs_failed;
	case SDR_FF_SRTT_US:		return div_u64(sdr_flow_rtt(flow)->srtt_ns, 1000);
	case SDR_FF_PARITY_TX:		return sr->parity_tx;
	case SDR_FF_PARITY_RX:		return sr->parity_rx;
	case SDR_FF_RECOVERED:		return sr->ec_recovered;
	case SDR_FF_DECODES:		return sr->ec_decodes;
	case SDR_FF_NONE_WINDOW:	return flow->none_window;
	case SDR_FF_PATHS:		return flow->paths;
	case SDR_FF_CREDIT_WAITS:	return flow->none_tx.waits;
	case SDR_FF_PROBES_TX:		return flow->none_tx.probes;
	case SDR_FF_CREDITS_TX:		return flow->none_rx.grants;
	}
	return 0;
}

static const enum sdr_flow_field sdr_dev_sums[] = {
	SDR_FF_RETX, SDR_FF_TIMEOUTS, SDR_FF_SPURIOUS, SDR_FF_ACKS_TX,
	SDR_FF_ACKS_RX, SDR_FF_NACKS_TX, SDR_FF_NACKS_RX, SDR_FF_RNR_TX,
	SDR_FF_RNR_RX, SDR_FF_PARITY_TX, SDR_FF_PARITY_RX, SDR_FF_RECOVERED,
	SDR_FF_DECODES, SDR_FF_MSGS_SENT, SDR_FF_MSGS_RECEIVED,
	SDR_FF_MSGS_FAILED,
};
static_assert(ARRAY_SIZE(sdr_dev_sums) == SDR_DEV_FLOW_SUMS);

/*
 * Device total @idx of the per-flow counters (sdr_dev_sums): the live
 * flows' plus what retired flows left.
 */
u64 sdr_dev_flow_sum(struct sdr_dev *sdev, unsigned int idx)
{
	enum sdr_flow_field f = sdr_dev_sums[idx];
	struct sdr_flow *flow;
	unsigned long id;
	u64 v;

	spin_lock_bh(&sdev->stats_lock);
	v = sdev->retired[idx];
	rcu_read_lock();
	xa_for_each(&sdev->flows, id, flow) {
		spin_lock(&flow->lock);
		if (!flow->retired)
			v += sdr_flow_field(flow, f);
		spin_unlock(&flow->lock);
	}
	rcu_read_unlock();
	spin_unlock_bh(&sdev->stats_lock);
	return v;
}

/* @flow leaves the device: its counters move to the device's totals. */
void sdr_flow_retire_stats(struct sdr_flow *flow)
{
	struct sdr_dev *sdev = flow->sdev;
	int i;

	spin_lock_bh(&sdev->stats_lock);
	spin_lock(&flow->lock);
	if (!flow->retired) {
		for (i = 0; i < SDR_DEV_FLOW_SUMS; i++)
			sdev->retired[i] += sdr_flow_field(flow, sdr_dev_sums[i]);
		flow->retired = true;
	}
	spin_unlock(&flow->lock);
	spin_unlock_bh(&sdev->stats_lock);
}
