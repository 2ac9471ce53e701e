/* SPDX-License-Identifier: GPL-2.0 */
/* sdr: accessors of what a flow shows of itself (sdr_stats.c). */
#ifndef SDR_STATS_H
#define SDR_STATS_H

#include "sdr.h"

enum sdr_flow_field {
	SDR_FF_OWNER_PID, SDR_FF_OWNER_UID, SDR_FF_MTU, SDR_FF_PAYLOAD,
	SDR_FF_CHUNK, SDR_FF_MAX_MSG, SDR_FF_MAX_MSGS, SDR_FF_SENDS,
	SDR_FF_RECVS, SDR_FF_NONE_WINDOW, SDR_FF_PATHS, SDR_FF_SEND_MEM,
	SDR_FF_RECV_MEM,
	/* counters/ */
	SDR_FF_TX_PACKETS, SDR_FF_TX_BYTES, SDR_FF_RX_PACKETS, SDR_FF_RX_BYTES,
	SDR_FF_RX_DROPPED, SDR_FF_RETX, SDR_FF_TIMEOUTS, SDR_FF_ACKS_TX,
	SDR_FF_ACKS_RX, SDR_FF_NACKS_TX, SDR_FF_NACKS_RX, SDR_FF_RNR_TX,
	SDR_FF_RNR_RX, SDR_FF_SPURIOUS, SDR_FF_MSGS_SENT, SDR_FF_MSGS_RECEIVED,
	SDR_FF_MSGS_FAILED, SDR_FF_SRTT_US, SDR_FF_PARITY_TX, SDR_FF_PARITY_RX,
	SDR_FF_RECOVERED, SDR_FF_DECODES, SDR_FF_CREDIT_WAITS, SDR_FF_PROBES_TX,
	SDR_FF_CREDITS_TX,
};

u64 sdr_flow_field(struct sdr_flow *flow, enum sdr_flow_field f);
u64 sdr_dev_flow_sum(struct sdr_dev *sdev, unsigned int idx);
void sdr_flow_retire_stats(struct sdr_flow *flow);

#endif /* SDR_STATS_H */
