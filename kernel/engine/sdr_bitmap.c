// SPDX-License-Identifier: GPL-2.0
/*
 * Packet bitmaps of a message, on caller-provided unsigned long arrays.
 * Word-at-a-time so a 1 GiB message (262144 packets of 4 KiB) costs
 * 4096 words per full scan.
 */
#include "sdr_bitmap.h"
#include "sdr_wire.h"

/* mask of bits [lo, hi) inside one word, 0 <= lo < hi <= BITS_PER_LONG */
static unsigned long sdr_word_mask(u32 lo, u32 hi)
{
	unsigned long m = ~0UL << lo;

	if (hi < BITS_PER_LONG)
		m &= ~(~0UL << hi);
	return m;
}

static u32 sdr_nwords(u32 nbits)
{
	return nbits / BITS_PER_LONG + !!(nbits % BITS_PER_LONG);
}

void sdr_bitmap_zero(unsigned long *map, u32 nbits)
{
	memset(map, 0, sdr_bitmap_size(nbits));
}

int sdr_bitmap_set(unsigned long *map, u32 nbits, u32 idx)
{
	unsigned long *w, m;

	if (idx >= nbits)
		return -ERANGE;
	w = &map[BIT_WORD(idx)];
	m = BIT_MASK(idx);
	if (*w & m)
		return -EEXIST;
	*w |= m;
	return 0;
}

bool sdr_bitmap_test(const unsigned long *map, u32 nbits, u32 idx)
{
	if (idx >= nbits)
		return false;
	return map[BIT_WORD(idx)] & BIT_MASK(idx);
}

u32 sdr_bitmap_set_range(unsigned long *map, u32 nbits, u32 start, u32 len)
{
	u32 end, added = 0;

	if (start >= nbits)
		return 0;
	end = nbits - start < len ? nbits : start + len;
	while (start < end) {
		u32 word = BIT_WORD(start);
		u32 lo = start % BITS_PER_LONG;
		u32 hi = min_t(u32, BITS_PER_LONG, lo + (end - start));
		unsigned long m = sdr_word_mask(lo, hi);

		added += sdr_hweight_long(m & ~map[word]);
		map[word] |= m;
		start += hi - lo;
	}
	return added;
}

u32 sdr_bitmap_weight_range(const unsigned long *map, u32 nbits,
			    u32 start, u32 len)
{
	u32 end, n = 0;

	if (start >= nbits)
		return 0;
	end = nbits - start < len ? nbits : start + len;
	while (start < end) {
		u32 word = BIT_WORD(start);
		u32 lo = start % BITS_PER_LONG;
		u32 hi = min_t(u32, BITS_PER_LONG, lo + (end - start));

		n += sdr_hweight_long(map[word] & sdr_word_mask(lo, hi));
		start += hi - lo;
	}
	return n;
}

u32 sdr_bitmap_weight(const unsigned long *map, u32 nbits)
{
	return sdr_bitmap_weight_range(map, nbits, 0, nbits);
}

static u32 sdr_bitmap_find(const unsigned long *map, u32 nbits, u32 from,
			   unsigned long invert)
{
	u32 word, nwords = sdr_nwords(nbits);
	unsigned long w;

	if (from >= nbits)
		return nbits;
	word = BIT_WORD(from);
	w = (map[word] ^ invert) & (~0UL << (from % BITS_PER_LONG));
	for (;;) {
		if (w) {
			u64 idx = (u64)word * BITS_PER_LONG + sdr_ffs_long(w);

			return idx < nbits ? (u32)idx : nbits;
		}
		if (++word >= nwords)
			return nbits;
		w = map[word] ^ invert;
	}
}

u32 sdr_bitmap_next_zero(const unsigned long *map, u32 nbits, u32 from)
{
	return sdr_bitmap_find(map, nbits, from, ~0UL);
}

u32 sdr_bitmap_next_set(const unsigned long *map, u32 nbits, u32 from)
{
	return sdr_bitmap_find(map, nbits, from, 0);
}

/* [*first, *first + n) of @unit-sized pieces overlapping [from, to) */
static u32 sdr_span(u64 from, u64 to, u32 unit, u32 *first)
{
	u64 a = from / unit, b = (to + unit - 1) / unit;

	*first = (u32)a;
	return (u32)(b - a);
}

u32 sdr_chunk_span(u32 msg_len, u32 pay, u32 chunk, u32 c, u32 *first)
{
	u64 from = (u64)c * chunk;

	*first = 0;
	if (!pay || !chunk || from >= msg_len)
		return 0;
	return sdr_span(from, min_t(u64, from + chunk, msg_len), pay, first);
}

u32 sdr_pkt_span(u32 msg_len, u32 pay, u32 chunk, u32 pi, u32 *first)
{
	u64 from = (u64)pi * pay;

	*first = 0;
	if (!pay || !chunk || from >= msg_len)
		return 0;
	return sdr_span(from, min_t(u64, from + pay, msg_len), chunk, first);
}

bool sdr_bitmap_chunk_complete(const unsigned long *map, u32 msg_len,
			       u32 pay, u32 chunk, u32 c)
{
	u32 first, n = sdr_chunk_span(msg_len, pay, chunk, c, &first);

	return n && sdr_bitmap_weight_range(map, sdr_msg_npkts(msg_len, pay),
					    first, n) == n;
}

/* up to BITS_PER_LONG bits starting at @pos; bits at or past nbits read 0 */
static unsigned long sdr_bitmap_get_word(const unsigned long *map, u32 nbits,
					 u32 pos)
{
	u32 word = BIT_WORD(pos), sh = pos % BITS_PER_LONG;
	u32 nwords = sdr_nwords(nbits);
	unsigned long w = map[word] >> sh;

	if (sh && word + 1 < nwords)
		w |= map[word + 1] << (BITS_PER_LONG - sh);
	if (nbits - pos < BITS_PER_LONG)
		w &= ~(~0UL << (nbits - pos));
	return w;
}

u32 sdr_bitmap_get_slice(const unsigned long *map, u32 nbits, u32 base,
			 u32 maxbits, u8 *out)
{
	u32 n, i, nbytes;

	if (base >= nbits)
		return 0;
	n = min_t(u32, min_t(u32, maxbits, SDR_ACK_MAX_BITS), nbits - base);
	nbytes = DIV_ROUND_UP(n, 8);
	for (i = 0; i < n; i += BITS_PER_LONG) {
		unsigned long w = sdr_bitmap_get_word(map, nbits, base + i);
		u32 b;

		for (b = 0; b < BITS_PER_LONG / 8 && i / 8 + b < nbytes; b++)
			out[i / 8 + b] = (u8)(w >> (8 * b));
	}
	if (n % 8)
		out[nbytes - 1] &= (u8)((1U << (n % 8)) - 1);
	return n;
}

u32 sdr_bitmap_apply_slice(unsigned long *map, u32 nbits, u32 base,
			   const u8 *in, u32 slice_bits)
{
	u32 i, added = 0;

	for (i = 0; i < slice_bits; i += 8) {
		u32 bits = in[i / 8];

		if (slice_bits - i < 8)
			bits &= (1U << (slice_bits - i)) - 1;
		while (bits) {
			u32 b = (u32)sdr_ffs_long(bits);
			u64 pos = (u64)base + i + b;

			bits &= bits - 1;
			if (pos < nbits && !sdr_bitmap_set(map, nbits, (u32)pos))
				added++;
		}
	}
	return added;
}
