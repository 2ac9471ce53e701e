/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdr tracepoints: tracefs events/sdr/, usable with bpftrace.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sdr

#if !defined(_SDR_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SDR_TRACE_H

#include <linux/tracepoint.h>

/* A DATA packet sent again (SR): one event per retransmission. */
TRACE_EVENT(sdr_retransmit,
	TP_PROTO(u32 flow, u32 seq, u32 pkt, u32 offset),
	TP_ARGS(flow, seq, pkt, offset),
	TP_STRUCT__entry(
		__field(u32, flow)
		__field(u32, seq)
		__field(u32, pkt)
		__field(u32, offset)
	),
	TP_fast_assign(
		__entry->flow = flow;
		__entry->seq = seq;
		__entry->pkt = pkt;
		__entry->offset = offset;
	),
	TP_printk("flow=%u seq=%u pkt=%u offset=%u", __entry->flow,
		  __entry->seq, __entry->pkt, __entry->offset)
);

/* Packets of a message declared lost (SR): by timeout or by a NACK. */
TRACE_EVENT(sdr_pkt_lost,
	TP_PROTO(u32 flow, u32 seq, u32 count, bool nack),
	TP_ARGS(flow, seq, count, nack),
	TP_STRUCT__entry(
		__field(u32, flow)
		__field(u32, seq)
		__field(u32, count)
		__field(bool, nack)
	),
	TP_fast_assign(
		__entry->flow = flow;
		__entry->seq = seq;
		__entry->count = count;
		__entry->nack = nack;
	),
	TP_printk("flow=%u seq=%u count=%u by=%s", __entry->flow,
		  __entry->seq, __entry->count,
		  __entry->nack ? "nack" : "timeout")
);

/* A message ended: done (ok, or partial under NONE) or failed. */
DECLARE_EVENT_CLASS(sdr_msg,
	TP_PROTO(u32 flow, bool recv, u32 seq, u32 len, u8 status),
	TP_ARGS(flow, recv, seq, len, status),
	TP_STRUCT__entry(
		__field(u32, flow)
		__field(bool, recv)
		__field(u32, seq)
		__field(u32, len)
		__field(u8, status)
	),
	TP_fast_assign(
		__entry->flow = flow;
		__entry->recv = recv;
		__entry->seq = seq;
		__entry->len = len;
		__entry->status = status;
	),
	TP_printk("flow=%u %s seq=%u len=%u status=%s", __entry->flow,
		  __entry->recv ? "recv" : "send", __entry->seq, __entry->len,
		  __print_symbolic(__entry->status, { 0, "ok" },
				   { 1, "partial" }, { 2, "failed" },
				   { 3, "flushed" }))
);

DEFINE_EVENT(sdr_msg, sdr_msg_done,
	TP_PROTO(u32 flow, bool recv, u32 seq, u32 len, u8 status),
	TP_ARGS(flow, recv, seq, len, status)
);

/* status failed (peer dead, send error) or flushed (flow torn down) */
DEFINE_EVENT(sdr_msg, sdr_msg_failed,
	TP_PROTO(u32 flow, bool recv, u32 seq, u32 len, u8 status),
	TP_ARGS(flow, recv, seq, len, status)
);

/* EC: packets of submessage @group rebuilt from parity. */
TRACE_EVENT(sdr_pkt_recovered,
	TP_PROTO(u32 flow, u32 seq, u32 group, u32 count),
	TP_ARGS(flow, seq, group, count),
	TP_STRUCT__entry(
		__field(u32, flow)
		__field(u32, seq)
		__field(u32, group)
		__field(u32, count)
	),
	TP_fast_assign(
		__entry->flow = flow;
		__entry->seq = seq;
		__entry->group = group;
		__entry->count = count;
	),
	TP_printk("flow=%u seq=%u submsg=%u count=%u", __entry->flow,
		  __entry->seq, __entry->group, __entry->count)
);

/*
 * An ACK, NACK or RNR for message @seq that no true receiver could have
 * sent (it claims packets never sent, COMPLETE before all were sent, ...):
 * ignored.
 */
TRACE_EVENT(sdr_ack_rejected,
	TP_PROTO(u32 flow, u32 seq, u8 type, u32 flags),
	TP_ARGS(flow, seq, type, flags),
	TP_STRUCT__entry(
		__field(u32, flow)
		__field(u32, seq)
		__field(u8, type)
		__field(u32, flags)
	),
	TP_fast_assign(
		__entry->flow = flow;
		__entry->seq = seq;
		__entry->type = type;
		__entry->flags = flags;
	),
	TP_printk("flow=%u seq=%u %s flags=%#x", __entry->flow, __entry->seq,
		  __print_symbolic(__entry->type, { 2, "ack" }, { 3, "nack" },
				   { 4, "rnr" }),
		  __entry->flags)
);

/* A flow changed state (idle, connected, closed, failed). */
TRACE_EVENT(sdr_flow_state,
	TP_PROTO(u32 flow, u32 old_state, u32 new_state),
	TP_ARGS(flow, old_state, new_state),
	TP_STRUCT__entry(
		__field(u32, flow)
		__field(u32, old_state)
		__field(u32, new_state)
	),
	TP_fast_assign(
		__entry->flow = flow;
		__entry->old_state = old_state;
		__entry->new_state = new_state;
	),
	TP_printk("flow=%u %s -> %s", __entry->flow,
		  __print_symbolic(__entry->old_state, { 0, "idle" },
				   { 1, "connected" }, { 2, "closed" },
				   { 3, "failed" }),
		  __print_symbolic(__entry->new_state, { 0, "idle" },
				   { 1, "connected" }, { 2, "closed" },
				   { 3, "failed" }))
);

#endif /* _SDR_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE sdr_trace
#include <trace/define_trace.h>
