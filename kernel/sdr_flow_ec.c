// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: policy EC in a flow - the payload side of erasure coding.  The SR
 * engine (sdr_sr.c) decides when parity is sent, which submessage can be
 * decoded and when the rest falls back to retransmission; this file
 * builds parity rows from the message with the codec (sdr_ec.c), keeps
 * received parity until its submessage is whole or decoded, and writes
 * the rebuilt packets into the receive region.
 *
 * Everything but sdr_eck_tx_init() and sdr_eck_flow_init() runs under
 * flow->lock, the receive side in softirq context: parity payloads are
 * held in GFP_ATOMIC buffers, and a parity packet that finds no memory is
 * dropped (counted as no_memory) and its submessage falls back to SR.
 * Whatever k and m the peer picked, a receive holds no more parity
 * payloads than its message has packets: a submessage of kg packets is
 * decoded (and its parity freed) as soon as data and parity reach kg, so
 * it never holds more than kg rows.
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include "sdr.h"
#include "sdr_flow.h"
#include "sdr_ec.h"
#include "sdr_trace.h"

int sdr_eck_flow_init(struct sdr_flow *flow)
{
	flow->ec_pad = kmalloc(flow->payload, GFP_KERNEL);
	return flow->ec_pad ? 0 : -ENOMEM;
}

/*
 * Make @msg an EC message with the module's k and m of the moment, and
 * give it room for every parity row (m/k of the message: the bandwidth
 * it costs, too).  May sleep.
 */
int sdr_eck_tx_init(struct sdr_flow *flow, struct sdr_txmsg *msg)
{
	u32 k = READ_ONCE(sdr_ec_k), m = READ_ONCE(sdr_ec_m);
	int ret;

	ret = sdr_sr_tx_set_ec(&flow->sr, &msg->sr, k, m);
	if (ret)
		return ret;
	/* no warning for a size kvmalloc refuses: ENOMEM says it */
	msg->par_buf = kvmalloc(array3_size(msg->sr.ngroups, m, flow->payload),
				GFP_KERNEL | __GFP_NOWARN);
	return msg->par_buf ? 0 : -ENOMEM;
}

/* Parity row @j of submessage @g, built from the message into par_buf. */
const u8 *sdr_eck_tx_parity(struct sdr_flow *flow, struct sdr_txmsg *msg,
			    u32 g, u32 j)
{
	const u8 *data[SDR_EC_MAX_K];
	u32 len[SDR_EC_MAX_K], pay = flow->payload, k = msg->sr.ec_k;
	u32 first = g * k, kg = min(k, msg->npkts - first), i, off;
	u8 *out = msg->par_buf + ((size_t)g * msg->sr.ec_m + j) * pay;

	for (i = 0; i < kg; i++) {
		off = (first + i) * pay;
		data[i] = msg->data + off;
		len[i] = min(pay, msg->msg_len - off);
	}
	/* g, j and kg come from the engine: the codec cannot refuse them */
	sdr_ec_encode(kg, j, data, len, pay, out);
	return out;
}

/* Where parity row j of submessage g of slot @idx is held. */
static u8 **sdr_eck_slot(struct sdr_flow *flow, u32 idx, u32 g, u32 j)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	size_t i = (size_t)g * slot->sr.ec_m + j;

	return slot->ec_par && i < slot->ec_par_n ? &slot->ec_par[i] : NULL;
}

/* A copy of parity packet @pkt's payload for the engine, or NULL. */
u8 *sdr_eck_rx_buf(struct sdr_flow *flow, const u8 *payload)
{
	u8 *buf = kmalloc(flow->payload, GFP_ATOMIC | __GFP_NOWARN);

	if (buf)
		memcpy(buf, payload, flow->payload);
	return buf;
}

/*
 * The engine took parity packet @pkt: hold @buf for its submessage.  The
 * table of held parity is sized, on the message's first parity packet,
 * from the k and m the engine accepted.  Without memory for it, the
 * submessage is left to SR.
 */
void sdr_eck_rx_keep(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		     u8 *buf, u64 now)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	u32 g = pkt->offset / flow->payload / slot->sr.ec_k;
	u8 **p;

	if (!slot->ec_par) {
		slot->ec_par = kcalloc(slot->sr.ngroups * slot->sr.ec_m,
				       sizeof(*slot->ec_par),
				       GFP_ATOMIC | __GFP_NOWARN);
		if (slot->ec_par)
			slot->ec_par_n = slot->sr.ngroups * slot->sr.ec_m;
	}
	p = sdr_eck_slot(flow, idx, g, SDR_EC_AUX_J(pkt->aux));
	if (!p) {
		kfree(buf);
		sdr_eck_rx_free_group(flow, idx, g);
		sdr_sr_rx_undecodable(&flow->sr, &slot->sr, g, now);
		return;
	}
	kfree(*p);
	*p = buf;
}

void sdr_eck_rx_free_group(struct sdr_flow *flow, u32 idx, u32 g)
{
	u32 j, m = flow->slots[idx].sr.ec_m;
	u8 **p;

	for (j = 0; j < m; j++) {
		p = sdr_eck_slot(flow, idx, g, j);
		if (p) {
			kfree(*p);
			*p = NULL;
		}
	}
}

/* Free every parity payload slot @idx holds. */
void sdr_eck_rx_release(struct sdr_flow *flow, u32 idx)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	u32 i;

	if (!slot->ec_par)
		return;
	for (i = 0; i < slot->ec_par_n; i++)
		kfree(slot->ec_par[i]);
	kfree(slot->ec_par);
	slot->ec_par = NULL;
	slot->ec_par_n = 0;
}

/*
 * Submessage @g of slot @idx can be decoded: rebuild its missing packets
 * in the receive region, then set their bits.  A short last packet is
 * decoded through flow->ec_pad, so nothing is written past the message.
 * Returns the engine's SDR_SR_RX_* bits.
 */
int sdr_eck_rx_decode(struct sdr_flow *flow, u32 idx, u32 g, u64 now)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	struct sdr_sr_rx *r = &slot->sr;
	u8 *data[SDR_EC_MAX_K], *par[SDR_EC_MAX_M];
	u32 pay = flow->payload, first, kg, i, n, last = r->npkts - 1;
	u8 *base = flow->recv_region + (size_t)idx * flow->slot_stride;
	u32 tail = r->msg_len - last * pay;
	bool short_last;
	int ret;
	u64 have;

	sdr_sr_rx_group(r, g, &first, &kg, &have);
	short_last = first + kg - 1 == last && tail < pay;
	for (i = 0; i < kg; i++)
		data[i] = base + (size_t)(first + i) * pay;
	if (short_last) {
		memset(flow->ec_pad, 0, pay);
		if (have & BIT_ULL(kg - 1))
			memcpy(flow->ec_pad, data[kg - 1], tail);
		data[kg - 1] = flow->ec_pad;
	}
	for (i = 0; i < r->ec_m; i++) {
		u8 **p = sdr_eck_slot(flow, idx, g, i);

		par[i] = p ? *p : NULL;
	}
	ret = sdr_ec_decode(kg, r->ec_m, have, data, par, pay);
	sdr_eck_rx_free_group(flow, idx, g);
	if (ret < 0) {
		/* held parity went missing: let SR repair the submessage */
		sdr_sr_rx_undecodable(&flow->sr, r, g, now);
		return 0;
	}
	if (short_last && !(have & BIT_ULL(kg - 1)))
		memcpy(base + (size_t)last * pay, flow->ec_pad, tail);

	ret = sdr_sr_rx_decoded(&flow->sr, r, g, now, &n);
	if (ret < 0)
		return 0;
	for (i = 0; i < kg; i++)
		if (!(have & BIT_ULL(i)))
			sdr_slot_mark(flow, idx, first + i,
				      first + i == last ? tail : pay);
	trace_sdr_pkt_recovered(flow->id, slot->seq, g, n);
	return ret;
}
