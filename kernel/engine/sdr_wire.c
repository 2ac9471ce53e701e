// SPDX-License-Identifier: GPL-2.0
/*
 * sdr packet codec.  sdr_wire_decode() is the only parser of bytes that
 * come off the wire; it checks every field so the rest of the module can
 * trust a decoded struct sdr_pkt.  Fuzzed by tests/fuzz/fuzz_wire.c.
 */
#include "sdr_wire.h"

SDR_ASSERT_SIZE(struct sdr_wire_hdr, SDR_WIRE_HDR_LEN);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, magic, 0);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, version, 2);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, type, 3);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, policy, 4);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, flags, 5);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, payload_len, 6);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, dst_flow, 8);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, src_flow, 12);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, msg_seq, 16);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, msg_len, 20);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, offset, 24);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, imm, 28);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, ts, 32);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, aux, 36);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, token_hi, 40);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, token_lo, 44);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, pn_hi, 48);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, pn_lo, 52);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, land, 56);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, part, 60);
SDR_ASSERT_OFFSET(struct sdr_wire_hdr, tag, SDR_WIRE_TAG_OFF);

/* Names double as sysfs counter file names: keep them stable. */
static const char * const sdr_drop_names[SDR_DROP_NR] = {
	[SDR_DROP_NONE]		= "none",
	[SDR_DROP_SHORT]	= "short",
	[SDR_DROP_MAGIC]	= "bad_magic",
	[SDR_DROP_VERSION]	= "bad_version",
	[SDR_DROP_TYPE]		= "bad_type",
	[SDR_DROP_FLAGS]	= "bad_flags",
	[SDR_DROP_POLICY]	= "bad_policy",
	[SDR_DROP_LEN]		= "bad_len",
	[SDR_DROP_FLOW]		= "bad_flow",
	[SDR_DROP_RANGE]	= "bad_range",
	[SDR_DROP_RESERVED]	= "bad_reserved",
	[SDR_DROP_ACK]		= "bad_ack",
	[SDR_DROP_NO_FLOW]	= "no_flow",
	[SDR_DROP_PEER]		= "not_peer",
	[SDR_DROP_STALE]	= "stale",
	[SDR_DROP_NO_RECV]	= "no_recv",
	[SDR_DROP_GEOMETRY]	= "bad_geometry",
	[SDR_DROP_DUP]		= "dup",
	[SDR_DROP_MSGLEN]	= "bad_msglen",
	[SDR_DROP_EC]		= "bad_ec",
	[SDR_DROP_NOMEM]	= "no_memory",
	[SDR_DROP_TOKEN]	= "bad_token",
	[SDR_DROP_ACK_CLAIM]	= "bad_claim",
	[SDR_DROP_AUTH]		= "bad_tag",
	[SDR_DROP_REPLAY]	= "replay",
};

/* Accepts a reason or its negation (as returned by the decoders). */
const char *sdr_drop_reason_name(int reason)
{
	if (reason < 0)
		reason = -reason;
	if (reason >= SDR_DROP_NR)
		return "unknown";
	return sdr_drop_names[reason];
}

void sdr_wire_encode(const struct sdr_pkt *pkt, void *buf)
{
	struct sdr_wire_hdr h;

	h.magic = cpu_to_be16(SDR_WIRE_MAGIC);
	h.version = SDR_WIRE_VERSION;
	h.type = pkt->type;
	h.policy = pkt->policy;
	h.flags = pkt->flags;
	h.payload_len = cpu_to_be16(pkt->payload_len);
	h.dst_flow = cpu_to_be32(pkt->dst_flow);
	h.src_flow = cpu_to_be32(pkt->src_flow);
	h.msg_seq = cpu_to_be32(pkt->msg_seq);
	h.msg_len = cpu_to_be32(pkt->msg_len);
	h.offset = cpu_to_be32(pkt->offset);
	h.imm = cpu_to_be32(pkt->imm);
	h.ts = cpu_to_be32(pkt->ts);
	h.aux = cpu_to_be32(pkt->aux);
	h.token_hi = cpu_to_be32((u32)(pkt->token >> 32));
	h.token_lo = cpu_to_be32((u32)pkt->token);
	h.pn_hi = cpu_to_be32((u32)(pkt->pn >> 32));
	h.pn_lo = cpu_to_be32((u32)pkt->pn);
	h.land = cpu_to_be32(pkt->land);
	h.part = cpu_to_be32(pkt->part);
	memcpy(h.tag, pkt->tag, sizeof(h.tag));
	memcpy(buf, &h, sizeof(h));
}

static u32 sdr_get_be32(const u8 *p)
{
	return ((u32)p[0] << 24) | ((u32)p[1] << 16) | ((u32)p[2] << 8) | p[3];
}

static u16 sdr_get_be16(const u8 *p)
{
	return (u16)(((u16)p[0] << 8) | p[1]);
}

static void sdr_put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static void sdr_put_be16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

/* Validates an ACK/NACK body; fills @out when it is not NULL. */
static int sdr_ack_parse(const u8 *p, u32 len, struct sdr_ack *out)
{
	u32 cum, base, nbits, nbytes;

	if (len < SDR_ACK_FIXED_LEN)
		return -SDR_DROP_ACK;
	cum = sdr_get_be32(p);
	base = sdr_get_be32(p + 4);
	nbits = sdr_get_be16(p + 8);
	if (sdr_get_be16(p + 10) != 0)
		return -SDR_DROP_ACK;
	if (nbits > SDR_ACK_MAX_BITS)
		return -SDR_DROP_ACK;
	nbytes = DIV_ROUND_UP(nbits, 8);
	if (len != SDR_ACK_FIXED_LEN + nbytes)
		return -SDR_DROP_ACK;
	if (base < cum || (u64)base + nbits > U32_MAX)
		return -SDR_DROP_ACK;
	/* unused bits of the last byte must be 0: one encoding per ACK */
	if ((nbits % 8) && (p[SDR_ACK_FIXED_LEN + nbytes - 1] >> (nbits % 8)))
		return -SDR_DROP_ACK;
	if (out) {
		out->cum = cum;
		out->base = base;
		out->nbits = (u16)nbits;
		memcpy(out->map, p + SDR_ACK_FIXED_LEN, nbytes);
		memset(out->map + nbytes, 0, sizeof(out->map) - nbytes);
	}
	return 0;
}

int sdr_ack_decode(const void *buf, u32 len, struct sdr_ack *out)
{
	return sdr_ack_parse(buf, len, out);
}

u32 sdr_ack_encode(const struct sdr_ack *ack, void *buf)
{
	u8 *p = buf;
	u32 nbits = min_t(u32, ack->nbits, SDR_ACK_MAX_BITS);
	u32 nbytes = DIV_ROUND_UP(nbits, 8);

	sdr_put_be32(p, ack->cum);
	sdr_put_be32(p + 4, ack->base);
	sdr_put_be16(p + 8, (u16)nbits);
	sdr_put_be16(p + 10, 0);
	memcpy(p + SDR_ACK_FIXED_LEN, ack->map, nbytes);
	if (nbits % 8)
		p[SDR_ACK_FIXED_LEN + nbytes - 1] &= (u8)((1U << (nbits % 8)) - 1);
	return SDR_ACK_FIXED_LEN + nbytes;
}

/*
 * A packet of a streamed message (sdr_wire.h): a data packet lands
 * within 4 GiB at or past its part's base; the end packet carries no
 * payload, lands nowhere and counts the bytes of the parts, at most pay
 * per packet before it (sdr_wire_check_geometry() knows pay), 0 in a
 * stream that had no part.
 */
static int sdr_check_stream(const struct sdr_pkt *pkt)
{
	if (pkt->flags & SDR_PKT_F_PARITY)
		return -SDR_DROP_FLAGS;
	if (pkt->flags & SDR_PKT_F_LAST) {
		if (pkt->flags & SDR_PKT_F_PART_END)
			return -SDR_DROP_FLAGS;
		if (pkt->payload_len)
			return -SDR_DROP_LEN;
		if (pkt->land || pkt->part)
			return -SDR_DROP_RESERVED;
		/* no part at all: no bytes, and the end packet is the first */
		if (pkt->msg_len > pkt->offset || !pkt->msg_len != !pkt->offset)
			return -SDR_DROP_RANGE;
		return 0;
	}
	if (pkt->payload_len == 0)
		return -SDR_DROP_LEN;
	if (pkt->msg_len)
		return -SDR_DROP_RANGE;
	if (pkt->land < pkt->part ||
	    (u64)pkt->land + pkt->payload_len > U32_MAX)
		return -SDR_DROP_RANGE;
	return 0;
}

static int sdr_check_data(const struct sdr_pkt *pkt)
{
	bool parity = pkt->flags & SDR_PKT_F_PARITY;
	u64 end = (u64)pkt->offset + pkt->payload_len;

	if (pkt->flags & ~SDR_PKT_F_DATA_MASK)
		return -SDR_DROP_FLAGS;
	if (pkt->flags & SDR_PKT_F_STREAM)
		return sdr_check_stream(pkt);
	if (pkt->flags & SDR_PKT_F_PART_END)
		return -SDR_DROP_FLAGS;
	if (pkt->part)
		return -SDR_DROP_RESERVED;
	if (parity && (pkt->flags & SDR_PKT_F_LAST))
		return -SDR_DROP_FLAGS;
	if (pkt->payload_len == 0)
		return -SDR_DROP_LEN;
	if (pkt->msg_len == 0 || pkt->offset >= pkt->msg_len)
		return -SDR_DROP_RANGE;
	/* the message's base (land - offset) and its end within 4 GiB */
	if (pkt->land < pkt->offset ||
	    (u64)pkt->land - pkt->offset + pkt->msg_len > U32_MAX)
		return -SDR_DROP_RANGE;
	if (parity)
		return 0;	/* parity may pad past the message end */
	if (end > pkt->msg_len)
		return -SDR_DROP_RANGE;
	/* LAST marks exactly the packet that ends the message */
	if (!!(pkt->flags & SDR_PKT_F_LAST) != (end == pkt->msg_len))
		return -SDR_DROP_FLAGS;
	return 0;
}

static int sdr_check_control(const struct sdr_pkt *pkt, const u8 *body)
{
	if (pkt->flags)
		return -SDR_DROP_FLAGS;
	/*
	 * imm: a COMPLETE ACK's is the message's lost data packets, and
	 * ADAPTIVE's other ACKs and NACKs carry the receiver's arrival gap;
	 * offset: an ACK's (not an ABORT's) or NACK's names a packet that
	 * came twice; msg_len: an ACK's or NACK's is the receiver's window
	 */
	if (pkt->land || pkt->part ||
	    (pkt->msg_len && pkt->type != SDR_PKT_ACK &&
	     pkt->type != SDR_PKT_NACK) ||
	    (pkt->offset && ((pkt->type != SDR_PKT_ACK &&
			      pkt->type != SDR_PKT_NACK) ||
			     (pkt->aux & SDR_ACK_F_ABORT))) ||
	    (pkt->imm && !(pkt->type == SDR_PKT_ACK &&
			   (pkt->aux & SDR_ACK_F_COMPLETE)) &&
	     !(pkt->policy == SDR_WIRE_POLICY_ADAPTIVE &&
	       (pkt->type == SDR_PKT_ACK || pkt->type == SDR_PKT_NACK))))
		return -SDR_DROP_RESERVED;

	switch (pkt->type) {
	case SDR_PKT_ACK:
	case SDR_PKT_NACK:
		if (pkt->aux & ~SDR_ACK_F_MASK)
			return -SDR_DROP_FLAGS;
		/* COMPLETE and ABORT are final answers: ACKs, one at a time */
		if (pkt->type == SDR_PKT_NACK && pkt->aux)
			return -SDR_DROP_FLAGS;
		if (pkt->aux == (SDR_ACK_F_COMPLETE | SDR_ACK_F_ABORT))
			return -SDR_DROP_FLAGS;
		/*
		 * An authenticated packet's body may be AEAD ciphertext until
		 * its flow checks the tag; the flow parses it after that
		 * (sdr_ack_decode()), so only a bare flow's is parsed here.
		 */
		if (pkt->pn)
			return 0;
		return sdr_ack_parse(body, pkt->payload_len, NULL);
	case SDR_PKT_CREDIT:	/* msg_seq, aux: the limits */
	case SDR_PKT_PROBE:	/* aux: the sender's next packet number */
		if (pkt->policy != SDR_WIRE_POLICY_NONE)
			return -SDR_DROP_POLICY;
		if (pkt->payload_len)
			return -SDR_DROP_LEN;
		if (pkt->type == SDR_PKT_PROBE && pkt->msg_seq)
			return -SDR_DROP_RESERVED;
		return 0;
	default:	/* RNR, CLOSE */
		if (pkt->payload_len)
			return -SDR_DROP_LEN;
		if (pkt->aux)
			return -SDR_DROP_RESERVED;
		return 0;
	}
}

int sdr_wire_decode(const void *buf, u32 buf_len, struct sdr_pkt *out)
{
	const u8 *p = buf;
	struct sdr_pkt pkt;
	int ret;

	if (buf_len < SDR_WIRE_HDR_LEN)
		return -SDR_DROP_SHORT;
	if (sdr_get_be16(p) != SDR_WIRE_MAGIC)
		return -SDR_DROP_MAGIC;
	if (p[2] != SDR_WIRE_VERSION)
		return -SDR_DROP_VERSION;

	pkt.type = p[3];
	pkt.policy = p[4];
	pkt.flags = p[5];
	pkt.payload_len = sdr_get_be16(p + 6);
	pkt.dst_flow = sdr_get_be32(p + 8);
	pkt.src_flow = sdr_get_be32(p + 12);
	pkt.msg_seq = sdr_get_be32(p + 16);
	pkt.msg_len = sdr_get_be32(p + 20);
	pkt.offset = sdr_get_be32(p + 24);
	pkt.imm = sdr_get_be32(p + 28);
	pkt.ts = sdr_get_be32(p + 32);
	pkt.aux = sdr_get_be32(p + 36);
	pkt.token = (u64)sdr_get_be32(p + 40) << 32 | sdr_get_be32(p + 44);
	pkt.pn = (u64)sdr_get_be32(p + 48) << 32 | sdr_get_be32(p + 52);
	pkt.land = sdr_get_be32(p + 56);
	pkt.part = sdr_get_be32(p + 60);
	memcpy(pkt.tag, p + SDR_WIRE_TAG_OFF, sizeof(pkt.tag));

	if (pkt.type < SDR_PKT_DATA || pkt.type > SDR_PKT_TYPE_MAX)
		return -SDR_DROP_TYPE;
	/* the frame is the header and the payload, nothing more */
	if (pkt.payload_len != buf_len - SDR_WIRE_HDR_LEN)
		return -SDR_DROP_LEN;
	if (!pkt.dst_flow || !pkt.src_flow)
		return -SDR_DROP_FLOW;

	if (pkt.type == SDR_PKT_DATA)
		ret = sdr_check_data(&pkt);
	else
		ret = sdr_check_control(&pkt, p + SDR_WIRE_HDR_LEN);
	if (ret)
		return ret;
	*out = pkt;
	return 0;
}

/*
 * The packets a streamed message may have, its end packet included: a
 * part starts a new packet, so a stream of parts smaller than a packet
 * has more packets than a message as long; twice as many as a message of
 * @max_msg bytes, and never more than 2^31.
 */
u32 sdr_stream_max_pkts(u32 max_msg, u32 pay)
{
	u64 n;

	if (!pay)
		return 0;
	n = 2 * ((u64)max_msg / pay + !!(max_msg % pay));
	return (u32)min_t(u64, n, 1U << 31);
}

/*
 * A streamed message's packet: on the packet grid of the message and
 * of its part, within the stream's packets, pay bytes but at a part's
 * end, landing within @max_msg; the end packet counts at least a byte
 * and at most pay per data packet.
 */
static int sdr_check_stream_geometry(const struct sdr_pkt *pkt, u32 pay,
				     u32 max_msg)
{
	u32 rem, idx = (u32)div_u64_rem(pkt->offset, pay, &rem);

	if (rem || idx >= sdr_stream_max_pkts(max_msg, pay))
		return -SDR_DROP_GEOMETRY;
	if (pkt->flags & SDR_PKT_F_LAST) {
		if (pkt->msg_len > max_msg || pkt->msg_len < idx ||
		    pkt->msg_len > pkt->offset)
			return -SDR_DROP_MSGLEN;
		return 0;
	}
	div_u64_rem(pkt->land - pkt->part, pay, &rem);
	if (rem || !pkt->payload_len || pkt->payload_len > pay ||
	    (pkt->payload_len < pay && !(pkt->flags & SDR_PKT_F_PART_END)))
		return -SDR_DROP_GEOMETRY;
	if ((u64)pkt->land + pkt->payload_len > max_msg)
		return -SDR_DROP_MSGLEN;
	return 0;
}

/*
 * A flow cuts every message into packets of @pay bytes (the last one
 * shorter).  A DATA packet must be exactly one of those packets, so the
 * receiver can place it with one bit and never sees overlapping ranges.
 * Parity packets are always @pay long and start on the grid.
 */
int sdr_wire_check_geometry(const struct sdr_pkt *pkt, u32 pay, u32 max_msg)
{
	u32 rem, want;

	if (pkt->type != SDR_PKT_DATA || pay == 0)
		return -SDR_DROP_GEOMETRY;
	if (pkt->flags & SDR_PKT_F_STREAM)
		return sdr_check_stream_geometry(pkt, pay, max_msg);
	/* sdr_wire_decode() refuses these too; engines may skip it */
	if (!pkt->msg_len || pkt->offset >= pkt->msg_len)
		return -SDR_DROP_RANGE;
	if (pkt->msg_len > max_msg)
		return -SDR_DROP_MSGLEN;
	div_u64_rem(pkt->offset, pay, &rem);
	if (rem)
		return -SDR_DROP_GEOMETRY;
	if (pkt->flags & SDR_PKT_F_PARITY)
		want = pay;
	else
		want = min_t(u32, pay, pkt->msg_len - pkt->offset);
	if (pkt->payload_len != want)
		return -SDR_DROP_GEOMETRY;
	return 0;
}
