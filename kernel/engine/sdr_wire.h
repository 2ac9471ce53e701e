/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdr wire format: one 80-byte big-endian header in front of every UD
 * payload, plus the ACK/NACK body.  Documentation/protocol.rst is the
 * normative description; this header and sdr_wire.c implement it.
 */
#ifndef SDR_WIRE_H
#define SDR_WIRE_H

#include "sdr_compat.h"

#define SDR_WIRE_MAGIC		0x5D52
#define SDR_WIRE_VERSION	9
#define SDR_WIRE_HDR_LEN	80
#define SDR_WIRE_PN_OFF		48
/* the tag covers the header before it and the payload */
#define SDR_WIRE_TAG_OFF	64
#define SDR_WIRE_TAG_LEN	16

/* packet types */
enum sdr_pkt_type {
	SDR_PKT_DATA	= 1,
	SDR_PKT_ACK	= 2,
	SDR_PKT_NACK	= 3,
	SDR_PKT_RNR	= 4,	/* receiver not ready: no receive posted */
	SDR_PKT_CLOSE	= 5,	/* flow closed */
	SDR_PKT_CREDIT	= 6,	/* NONE: receives posted, packets grantable */
	SDR_PKT_PROBE	= 7,	/* NONE: a sender waiting for credit asks */
};

#define SDR_PKT_TYPE_MAX	SDR_PKT_PROBE

/*
 * policy byte: the reliability policy of the packet's message (of DATA),
 * or the one a control packet belongs to.  The parser leaves its value
 * to the receiving flow, which drops a policy it does not run
 * (bad_policy); the values the engine itself needs are these.
 */
enum sdr_wire_policy {
	SDR_WIRE_POLICY_NONE	 = 0,
	SDR_WIRE_POLICY_SR	 = 1,
	SDR_WIRE_POLICY_EC	 = 2,
	SDR_WIRE_POLICY_ADAPTIVE = 3,
};
#define SDR_WIRE_POLICY_MAX	SDR_WIRE_POLICY_ADAPTIVE

/* DATA flags */
#define SDR_PKT_F_LAST		0x01	/* ends the message (not with PARITY) */
#define SDR_PKT_F_RETX		0x02	/* retransmission */
#define SDR_PKT_F_PARITY	0x04	/* EC parity, aux = submsg/parity index */
#define SDR_PKT_F_ACKREQ	0x08	/* sender asks for an immediate ACK */
#define SDR_PKT_F_STREAM	0x10	/* of a streamed message (below) */
#define SDR_PKT_F_PART_END	0x20	/* ends a part of a streamed message */
#define SDR_PKT_F_DATA_MASK	0x3f

/*
 * A streamed message (STREAM on every packet) is sent in parts whose
 * total is known only at its end; each part lands at a base of its own
 * (on the flow's chunk grid) in the one receive the message matched.
 * Each part starts a new packet: the n-th packet of the message has
 * offset n * pay, lands at land (its part's base, in part, plus pay per
 * packet of the part before it) and carries pay bytes, but a part's last
 * packet (PART_END) carries what is left, 1 to pay.  msg_len is 0; the
 * message ends with one packet more, LAST with no payload, whose offset
 * is N * pay (N: the data packets) and whose msg_len is the bytes of all
 * parts, N to N * pay (0 when it had no part).  No parity: a stream runs SR or ADAPTIVE.
 */

/*
 * aux of the DATA packets of an EC message: k data and m parity packets
 * per submessage, and for a parity packet its row j (0..m-1).  A parity
 * packet's offset is that of its submessage's first data packet.
 */
#define SDR_EC_AUX(k, m, j)	(((u32)(k) << 24) | ((u32)(m) << 16) | (u32)(j))
#define SDR_EC_AUX_K(aux)	((aux) >> 24)
#define SDR_EC_AUX_M(aux)	(((aux) >> 16) & 0xff)
#define SDR_EC_AUX_J(aux)	((aux) & 0xffff)

/* aux of a NONE DATA packet: its number among the flow's NONE packets */

/*
 * imm of ACK/NACK: in a COMPLETE ACK, the message's data packets whose
 * first transmission never arrived (they came as resends or were rebuilt
 * from parity), the sender's measure of the path's loss; in ADAPTIVE's
 * other ACKs and NACKs, the receiver's arrival gap in ns; else 0.
 */

/*
 * msg_len of ACK/NACK: the receiver's window, the packets of the flow it
 * can take in flight now (its receive ring runs short), or 0 when it
 * states none.  The sender's window is at most that until the next
 * answer says otherwise.
 */

/* aux of ACK/NACK: flags */
#define SDR_ACK_F_COMPLETE	0x01	/* receiver has the whole message */
#define SDR_ACK_F_ABORT		0x02	/* receiver discarded the message */
#define SDR_ACK_F_MASK		0x03

/*
 * Wire header.  Every member sits at its natural alignment so the struct
 * has no padding; the asserts in sdr_wire.c pin each offset.  Never cast a
 * receive buffer to this type: sdr_wire_decode() copies it out first, so
 * the buffer may have any alignment.
 */
struct sdr_wire_hdr {
	__be16	magic;		/*  0 */
	u8	version;	/*  2 */
	u8	type;		/*  3 */
	u8	policy;		/*  4 */
	u8	flags;		/*  5 */
	__be16	payload_len;	/*  6: bytes after the header */
	__be32	dst_flow;	/*  8: receiver's flow id, nonzero */
	__be32	src_flow;	/* 12: sender's flow id, nonzero */
	__be32	msg_seq;	/* 16 */
	__be32	msg_len;	/* 20: DATA; ACK/NACK: rwnd (below) */
	__be32	offset;		/* 24: DATA only */
	__be32	imm;		/* 28: DATA only */
	__be32	ts;		/* 32: DATA: sender us clock; ACK/NACK: echo */
	__be32	aux;		/* 36: policy specific, 0 when unused */
	__be32	token_hi;	/* 40: the receiving flow's token ... */
	__be32	token_lo;	/* 44: ... from its endpoint (connect) */
	__be32	pn_hi;		/* 48: the sender's packet number (auth) ... */
	__be32	pn_lo;		/* 52: ... its nonce and replay-window index */
	__be32	land;		/* 56: DATA: where the payload lands (below) */
	__be32	part;		/* 60: STREAM DATA: its part's base, else 0 */
	/*
	 * 64: the tag over bytes 0..63 and the payload: VMAC-64's in the
	 * first 8 bytes (the rest 0), the AEAD's in all 16, else 0
	 */
	u8	tag[SDR_WIRE_TAG_LEN];
};

/*
 * land of DATA: the offset in the receiver's buffer (the receive the
 * message matched) where the packet's payload lands: the message's base
 * plus offset.  A message lands whole at one base, chosen by its sender
 * (0 unless it asked for another), so land - offset is the same in every
 * packet of a message; a parity packet's is its submessage's first data
 * packet's.  Control packets carry 0.
 */

/* Decoded header, host byte order. */
struct sdr_pkt {
	u8	type;
	u8	policy;
	u8	flags;
	u16	payload_len;
	u32	dst_flow;
	u32	src_flow;
	u32	msg_seq;
	u32	msg_len;
	u32	offset;
	u32	imm;
	u32	ts;
	u32	aux;
	u32	land;		/* DATA: base of the message + offset */
	u32	part;		/* STREAM DATA: base of its part */
	u64	token;		/* the receiving flow's, see sdr_wire_hdr */
	u64	pn;		/* packet number: 0 on unauthenticated flows */
	u8	tag[SDR_WIRE_TAG_LEN];	/* the tag field's bytes */
};

/*
 * Why a packet was dropped.  Parser-level reasons come first (returned
 * negated by the decoders); the rest are for the kernel's receive path and
 * share the table so every drop has one counter name.
 */
enum sdr_drop_reason {
	SDR_DROP_NONE = 0,
	SDR_DROP_SHORT,		/* shorter than the header */
	SDR_DROP_MAGIC,
	SDR_DROP_VERSION,
	SDR_DROP_TYPE,
	SDR_DROP_FLAGS,		/* unknown flag bits or bad combination */
	SDR_DROP_POLICY,	/* unknown policy value */
	SDR_DROP_LEN,		/* payload_len vs buffer or vs type */
	SDR_DROP_FLOW,		/* zero flow id */
	SDR_DROP_RANGE,		/* msg_len/offset/payload_len inconsistent */
	SDR_DROP_RESERVED,	/* a field that must be 0 is not */
	SDR_DROP_ACK,		/* malformed ACK/NACK body */
	/* not parser level: used by the kernel receive path */
	SDR_DROP_NO_FLOW,	/* dst_flow unknown */
	SDR_DROP_PEER,		/* not from the flow's peer */
	SDR_DROP_STALE,		/* msg_seq of a recycled/completed slot */
	SDR_DROP_NO_RECV,	/* no receive posted */
	SDR_DROP_GEOMETRY,	/* offset/length not on the flow's packet grid */
	SDR_DROP_DUP,		/* already have it */
	SDR_DROP_MSGLEN,	/* msg_len too big or differs from earlier */
	SDR_DROP_EC,		/* EC fields bad or differ from earlier */
	SDR_DROP_NOMEM,		/* no memory to keep a parity packet */
	SDR_DROP_TOKEN,		/* token is not the flow's: blind forgery */
	SDR_DROP_ACK_CLAIM,	/* a claim no true peer could make */
	SDR_DROP_AUTH,		/* tag wrong, or missing on a flow with auth */
	SDR_DROP_REPLAY,	/* packet number seen, or older than the window */
	SDR_DROP_NR
};

const char *sdr_drop_reason_name(int reason);

void sdr_wire_encode(const struct sdr_pkt *pkt, void *buf);
int sdr_wire_decode(const void *buf, u32 buf_len, struct sdr_pkt *out);
int sdr_wire_check_geometry(const struct sdr_pkt *pkt, u32 pay, u32 max_msg);
u32 sdr_stream_max_pkts(u32 max_msg, u32 pay);

/* Payload of a decoded packet: it always follows the header directly. */
static inline const void *sdr_wire_payload(const void *buf)
{
	return (const u8 *)buf + SDR_WIRE_HDR_LEN;
}

/*
 * ACK/NACK body (payload of SDR_PKT_ACK and SDR_PKT_NACK), big-endian:
 *
 *   off 0  __be32 cum     packets [0, cum) are all received
 *   off 4  __be32 base    first packet the bitmap describes, base >= cum
 *   off 8  __be16 nbits   bits in the bitmap, 0..SDR_ACK_MAX_BITS
 *   off 10 __be16 rsvd    0
 *   off 12 u8 map[DIV_ROUND_UP(nbits, 8)]
 *                         bit i (byte i / 8, bit i % 8, LSB first) set =
 *                         packet base + i received; bits past nbits are 0
 *
 * payload_len must be exactly 12 + DIV_ROUND_UP(nbits, 8).  An ACK states
 * what is received; a NACK carries the same body and asks the sender to
 * resend now every clear bit of the slice.  The header's msg_seq names the
 * message, ts echoes the ts of the DATA packet that triggered it (0 if
 * none), aux carries SDR_ACK_F_*.
 */
#define SDR_ACK_MAX_BITS	1024
#define SDR_ACK_FIXED_LEN	12
#define SDR_ACK_MAX_LEN		(SDR_ACK_FIXED_LEN + SDR_ACK_MAX_BITS / 8)

struct sdr_ack {
	u32	cum;
	u32	base;
	u16	nbits;
	u8	map[SDR_ACK_MAX_BITS / 8];
};

static inline u32 sdr_ack_body_len(const struct sdr_ack *ack)
{
	return SDR_ACK_FIXED_LEN + DIV_ROUND_UP((u32)ack->nbits, 8);
}

/* returns bytes written (sdr_ack_body_len()) */
u32 sdr_ack_encode(const struct sdr_ack *ack, void *buf);
int sdr_ack_decode(const void *buf, u32 len, struct sdr_ack *out);

static inline bool sdr_ack_bit(const struct sdr_ack *ack, u32 i)
{
	return ack->map[i / 8] & (1U << (i % 8));
}

#endif /* SDR_WIRE_H */
