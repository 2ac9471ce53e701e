/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdr: what the flow core (sdr_flow.c) and its policies (sdr_flow_*.c)
 * share.  All of it runs under flow->lock unless said otherwise.
 */
#ifndef SDR_FLOW_H
#define SDR_FLOW_H

#include "sdr.h"

/* Control packets built under the flow lock, sent after it is dropped. */
struct sdr_ctrl {
	struct sdr_pkt	hdr;
	u32		len;
	u8		body[SDR_ACK_MAX_LEN];
};

struct sdr_ctrlq {
	unsigned int	n;
	struct sdr_ctrl	c[4];
};

/* No lock held: sends what @q holds to the flow's peer. */
void sdr_ctrlq_send(struct sdr_flow *flow, struct sdr_ctrlq *q);

void sdr_slot_start(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt);
void sdr_slot_land(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		   const u8 *payload);
void sdr_slot_complete(struct sdr_flow *flow, u32 idx, u8 status);
void sdr_flow_fail(struct sdr_flow *flow);
void sdr_flow_end(struct sdr_flow *flow, u32 state);
void sdr_flow_finish_tx(struct sdr_flow *flow);
bool sdr_none_tx_timer(struct sdr_flow *flow, u64 now, struct sdr_ctrlq *q);

/* Messages of these policies run the SR engine (EC adds parity to it). */
static inline bool sdr_policy_arq(u32 policy)
{
	return policy == SDR_POLICY_SR || policy == SDR_POLICY_EC;
}

static inline bool sdr_policy_supported(u32 policy)
{
	return policy == SDR_POLICY_NONE || sdr_policy_arq(policy);
}

void sdr_slot_mark(struct sdr_flow *flow, u32 idx, u32 pi, u32 len);

/* sdr_flow_sr.c */
void sdr_srk_arm(struct sdr_flow *flow, u64 deadline_ns);
struct sdr_ctrl *sdr_ctrlq_add(struct sdr_flow *flow, struct sdr_ctrlq *q,
			       u32 seq);
void sdr_srk_rx_say(struct sdr_flow *flow, u32 idx, u64 now,
		    struct sdr_ctrlq *q);
void sdr_srk_cfg(struct sdr_flow *flow);
void sdr_srk_rx_init(struct sdr_flow *flow, u32 idx);
int sdr_srk_rx_data(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		    const u8 *payload, struct sdr_ctrlq *q);
void sdr_srk_rx_rnr(struct sdr_flow *flow, const struct sdr_pkt *pkt,
		    struct sdr_ctrlq *q);
void sdr_srk_rx_final(struct sdr_flow *flow, u32 seq, u32 flags, u32 ts,
		      struct sdr_ctrlq *q);
int sdr_srk_rx_ctrl(struct sdr_flow *flow, const struct sdr_pkt *pkt,
		    const u8 *payload);
int sdr_srk_tx_init(struct sdr_flow *flow, struct sdr_txmsg *msg);
bool sdr_srk_tx_next(struct sdr_flow *flow, struct sdr_txmsg *msg, u64 now,
		     struct sdr_pkt *pkt, const u8 **data);

/* sdr_flow_ec.c */
void sdr_eck_flow_init(struct sdr_flow *flow);
int sdr_eck_tx_init(struct sdr_flow *flow, struct sdr_txmsg *msg);
const u8 *sdr_eck_tx_parity(struct sdr_flow *flow, struct sdr_txmsg *msg,
			    u32 g, u32 j);
u8 *sdr_eck_rx_buf(struct sdr_flow *flow, const u8 *payload);
void sdr_eck_rx_keep(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		     u8 *buf, u64 now);
void sdr_eck_rx_free_group(struct sdr_flow *flow, u32 idx, u32 g);
void sdr_eck_rx_queue_decode(struct sdr_flow *flow, u32 idx, u32 g, u64 now);
void sdr_eck_rx_drop_jobs(struct sdr_flow *flow);
void sdr_eck_decode_work(struct work_struct *work);
void sdr_eck_rx_release(struct sdr_flow *flow, u32 idx);

#endif /* SDR_FLOW_H */
