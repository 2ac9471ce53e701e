/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Packet-level bitmaps of one message: bit i = packet i (bytes
 * [i * pay, min((i + 1) * pay, msg_len))) is present.  The arrays belong to
 * the caller; nothing here locks or uses atomics.  The kernel publishes the
 * user-visible per-chunk bits itself (release semantics) after
 * sdr_bitmap_chunk_complete() says a chunk is whole.
 */
#ifndef SDR_BITMAP_H
#define SDR_BITMAP_H

#include "sdr_compat.h"

/* Bytes of an unsigned long array holding @nbits bits. */
static inline size_t sdr_bitmap_size(u32 nbits)
{
	return ((size_t)(nbits / BITS_PER_LONG) + !!(nbits % BITS_PER_LONG)) *
	       sizeof(unsigned long);
}

/* Packets of a @msg_len byte message cut into @pay byte packets. */
static inline u32 sdr_msg_npkts(u32 msg_len, u32 pay)
{
	return msg_len / pay + !!(msg_len % pay);
}

/* Chunks (bitmap bits the user sees) of a @msg_len byte message. */
static inline u32 sdr_msg_nchunks(u32 msg_len, u32 chunk)
{
	return msg_len / chunk + !!(msg_len % chunk);
}

void sdr_bitmap_zero(unsigned long *map, u32 nbits);
/* 0 if newly set, -EEXIST if it already was, -ERANGE if idx >= nbits */
int sdr_bitmap_set(unsigned long *map, u32 nbits, u32 idx);
bool sdr_bitmap_test(const unsigned long *map, u32 nbits, u32 idx);
/* sets [start, start + len) clipped to nbits; returns bits newly set */
u32 sdr_bitmap_set_range(unsigned long *map, u32 nbits, u32 start, u32 len);
u32 sdr_bitmap_weight(const unsigned long *map, u32 nbits);
/* bits set in [start, start + len) clipped to nbits */
u32 sdr_bitmap_weight_range(const unsigned long *map, u32 nbits,
			    u32 start, u32 len);
static inline u32 sdr_bitmap_missing(const unsigned long *map, u32 nbits)
{
	return nbits - sdr_bitmap_weight(map, nbits);
}

/* first clear (resp. set) bit >= from, or nbits if none */
u32 sdr_bitmap_next_zero(const unsigned long *map, u32 nbits, u32 from);
u32 sdr_bitmap_next_set(const unsigned long *map, u32 nbits, u32 from);

/*
 * Chunks are @chunk bytes of the message, packets @pay bytes; neither need
 * divide the other.  sdr_chunk_span(): the packets chunk @c of a @msg_len
 * byte message overlaps, [*first, *first + n), n returned (0 past the
 * end).  sdr_pkt_span(): the chunks packet @pi overlaps, likewise.
 * sdr_bitmap_chunk_complete(): every packet chunk @c overlaps is set in
 * @map, the message's packet bitmap.
 */
u32 sdr_chunk_span(u32 msg_len, u32 pay, u32 chunk, u32 c, u32 *first);
u32 sdr_pkt_span(u32 msg_len, u32 pay, u32 chunk, u32 pi, u32 *first);
bool sdr_bitmap_chunk_complete(const unsigned long *map, u32 msg_len,
			       u32 pay, u32 chunk, u32 c);

/*
 * Copy bits [base, base + min(maxbits, nbits - base)) into @out as an ACK
 * slice (bit i at out[i / 8] bit i % 8), maxbits <= SDR_ACK_MAX_BITS.
 * Writes DIV_ROUND_UP(n, 8) bytes with unused high bits 0 and returns n
 * (0 if base >= nbits).
 */
u32 sdr_bitmap_get_slice(const unsigned long *map, u32 nbits, u32 base,
			 u32 maxbits, u8 *out);

/*
 * The inverse, for a sender's acked map: OR slice bits into @map (bits that
 * fall at or past nbits are ignored).  Returns the number of bits newly
 * set.
 */
u32 sdr_bitmap_apply_slice(unsigned long *map, u32 nbits, u32 base,
			   const u8 *in, u32 slice_bits);

#endif /* SDR_BITMAP_H */
