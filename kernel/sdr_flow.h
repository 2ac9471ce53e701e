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

void sdr_slot_land(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		   const u8 *payload);
void sdr_slot_complete(struct sdr_flow *flow, u32 idx, u8 status);
void sdr_flow_fail(struct sdr_flow *flow);
void sdr_flow_end(struct sdr_flow *flow, u32 state);
void sdr_flow_finish_tx(struct sdr_flow *flow);


/* sdr_flow_sr.c */
void sdr_srk_cfg(struct sdr_flow *flow);
void sdr_srk_rx_init(struct sdr_flow *flow, u32 idx);
int sdr_srk_rx_data(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		    const u8 *payload, struct sdr_ctrlq *q);
void sdr_srk_rx_unmatched(struct sdr_flow *flow, const struct sdr_pkt *pkt,
			  int reason, struct sdr_ctrlq *q);
int sdr_srk_rx_ctrl(struct sdr_flow *flow, const struct sdr_pkt *pkt,
		    const u8 *payload);
int sdr_srk_tx_init(struct sdr_flow *flow, struct sdr_txmsg *msg);
bool sdr_srk_tx_next(struct sdr_flow *flow, struct sdr_txmsg *msg, u64 now,
		     struct sdr_pkt *pkt);

#endif /* SDR_FLOW_H */
