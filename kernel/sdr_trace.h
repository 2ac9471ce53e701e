/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdr tracepoints: tracefs events/sdr/, usable with bpftrace.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sdr

#if !defined(_SDR_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SDR_TRACE_H

#include <linux/tracepoint.h>

#include "sdr_auto.h"

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

/*
 * A packet to an authenticated flow was dropped: its tag was wrong
 * (bad_tag: forged or damaged), or its packet number was seen already or
 * is older than the replay window (replay).  @src_flow and @pn are what
 * the packet claims.
 */
TRACE_EVENT(sdr_auth_drop,
	TP_PROTO(u32 flow, u32 src_flow, u64 pn, bool replay),
	TP_ARGS(flow, src_flow, pn, replay),
	TP_STRUCT__entry(
		__field(u32, flow)
		__field(u32, src_flow)
		__field(u64, pn)
		__field(bool, replay)
	),
	TP_fast_assign(
		__entry->flow = flow;
		__entry->src_flow = src_flow;
		__entry->pn = pn;
		__entry->replay = replay;
	),
	TP_printk("flow=%u src_flow=%u pn=%llu %s", __entry->flow,
		  __entry->src_flow, __entry->pn,
		  __entry->replay ? "replay" : "bad_tag")
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

/*
 * AUTO decided (engine/sdr_auto.c): what it chose (cand 0 sr,
 * 1 adaptive, 2 ec with k and m), whether that is a switch, from what it
 * measured, and why: each candidate's cost, the model's time per message.
 */
TRACE_EVENT(sdr_auto,
	TP_PROTO(u32 flow, const struct sdr_auto_in *in,
		 const struct sdr_auto_pick *pick, bool moved),
	TP_ARGS(flow, in, pick, moved),
	TP_STRUCT__entry(
		__field(u32, flow)
		__field(u32, cand)
		__field(u32, k)
		__field(u32, m)
		__field(bool, moved)
		__field(u32, loss_ppm)
		__field(u64, rtt_ns)
		__field(u64, tinj_ps)
		__field(u64, code_ps)
		__field(u32, msg_pkts)
		__field(u32, inflight)
		__field(u64, cost_sr)
		__field(u64, cost_adaptive)
		__field(u64, cost_ec)
	),
	TP_fast_assign(
		__entry->flow = flow;
		__entry->cand = pick->cand;
		__entry->k = pick->ec_k;
		__entry->m = pick->ec_m;
		__entry->moved = moved;
		__entry->loss_ppm = (u32)((in->loss * 1000000) >> SDR_AUTO_SHIFT);
		__entry->rtt_ns = in->rtt_ns;
		__entry->tinj_ps = in->tinj_ps;
		__entry->code_ps = in->code_ps;
		__entry->msg_pkts = in->msg_pkts;
		__entry->inflight = in->inflight;
		__entry->cost_sr = pick->cost_ns[SDR_AUTO_SR];
		__entry->cost_adaptive = pick->cost_ns[SDR_AUTO_ADAPTIVE];
		__entry->cost_ec = pick->cost_ns[SDR_AUTO_EC];
	),
	TP_printk("flow=%u chose=%s k=%u m=%u%s loss_ppm=%u rtt_ns=%llu tinj_ps=%llu code_ps=%llu msg_pkts=%u inflight=%u cost_ns sr=%llu adaptive=%llu ec=%llu",
		  __entry->flow,
		  __print_symbolic(__entry->cand, { 0, "sr" }, { 1, "adaptive" },
				   { 2, "ec" }),
		  __entry->k, __entry->m, __entry->moved ? " switch" : "",
		  __entry->loss_ppm, __entry->rtt_ns, __entry->tinj_ps,
		  __entry->code_ps, __entry->msg_pkts, __entry->inflight, __entry->cost_sr,
		  __entry->cost_adaptive, __entry->cost_ec)
);

#endif /* _SDR_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE sdr_trace
#include <trace/define_trace.h>
