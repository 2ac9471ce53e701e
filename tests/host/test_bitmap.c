// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "tests.h"
#include "sdr_bitmap.h"
#include "sdr_wire.h"

/* reference model: one byte per bit */
struct ref {
	u32 n;
	u8 *b;
	unsigned long *map;
};

static void ref_init(struct ref *r, u32 n)
{
	r->n = n;
	r->b = calloc(1, n + 1);
	r->map = malloc(sdr_bitmap_size(n) + sizeof(long));
	memset(r->map, 0xa5, sdr_bitmap_size(n) + sizeof(long));
	sdr_bitmap_zero(r->map, n);
}

static void ref_free(struct ref *r)
{
	free(r->b);
	free(r->map);
}

static u64 rng(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_bitmap_sizes(void)
{
	CHECK_EQ(sdr_bitmap_size(0), 0);
	CHECK_EQ(sdr_bitmap_size(1), sizeof(long));
	CHECK_EQ(sdr_bitmap_size(BITS_PER_LONG), sizeof(long));
	CHECK_EQ(sdr_bitmap_size(BITS_PER_LONG + 1), 2 * sizeof(long));
	CHECK_EQ(sdr_bitmap_size(U32_MAX), (size_t)(U32_MAX / BITS_PER_LONG + 1) * sizeof(long));
	CHECK_EQ(sdr_msg_npkts(1, 4096), 1);
	CHECK_EQ(sdr_msg_npkts(4096, 4096), 1);
	CHECK_EQ(sdr_msg_npkts(4097, 4096), 2);
	CHECK_EQ(sdr_msg_npkts(1U << 30, 4096), 262144);
	CHECK_EQ(sdr_msg_npkts(U32_MAX, 4096), 1048576);
	CHECK_EQ(sdr_msg_npkts(U32_MAX, 1), U32_MAX);
	CHECK_EQ(sdr_msg_nchunks(1U << 30, 65536), 16384);
	CHECK_EQ(sdr_msg_nchunks(65537, 65536), 2);
	CHECK_EQ(sdr_msg_nchunks(1, 65536), 1);
	CHECK_EQ(sdr_msg_nchunks(U32_MAX, 64), (U32_MAX >> 6) + 1);
}

static void test_bitmap_basic(void)
{
	struct ref r;
	u32 n = 200, i;

	ref_init(&r, n);
	CHECK_EQ(sdr_bitmap_weight(r.map, n), 0);
	CHECK_EQ(sdr_bitmap_missing(r.map, n), n);
	CHECK_EQ(sdr_bitmap_next_zero(r.map, n, 0), 0);
	CHECK_EQ(sdr_bitmap_next_set(r.map, n, 0), n);
	CHECK_EQ(sdr_bitmap_set(r.map, n, 63), 0);
	CHECK_EQ(sdr_bitmap_set(r.map, n, 63), -EEXIST);
	CHECK_EQ(sdr_bitmap_set(r.map, n, n), -ERANGE);
	CHECK(sdr_bitmap_test(r.map, n, 63));
	CHECK(!sdr_bitmap_test(r.map, n, 64));
	CHECK(!sdr_bitmap_test(r.map, n, n + 5));
	CHECK_EQ(sdr_bitmap_next_set(r.map, n, 0), 63);
	CHECK_EQ(sdr_bitmap_next_set(r.map, n, 63), 63);
	CHECK_EQ(sdr_bitmap_next_set(r.map, n, 64), n);
	CHECK_EQ(sdr_bitmap_set_range(r.map, n, 0, 63), 63);
	CHECK_EQ(sdr_bitmap_next_zero(r.map, n, 0), 64);
	CHECK_EQ(sdr_bitmap_set_range(r.map, n, 60, 10), 6);
	CHECK_EQ(sdr_bitmap_next_zero(r.map, n, 0), 70);
	CHECK_EQ(sdr_bitmap_set_range(r.map, n, 150, 1000), 50);
	CHECK_EQ(sdr_bitmap_weight(r.map, n), 120);
	CHECK_EQ(sdr_bitmap_missing(r.map, n), 80);
	CHECK_EQ(sdr_bitmap_next_zero(r.map, n, 150), n);
	CHECK_EQ(sdr_bitmap_set_range(r.map, n, 70, 80), 80);
	CHECK_EQ(sdr_bitmap_next_zero(r.map, n, 0), n);
	CHECK_EQ(sdr_bitmap_set_range(r.map, n, n, 5), 0);
	for (i = 0; i < n; i++)
		CHECK(sdr_bitmap_test(r.map, n, i));
	/* the tail word's unused bits stay clear: the 0xa5 fill is gone */
	CHECK_EQ(r.map[BIT_WORD(n)] >> (n % BITS_PER_LONG), 0);
	ref_free(&r);
}

static void test_bitmap_chunks(void)
{
	/* chunks of whole packets: 37 packets of 100 bytes, 8 per chunk */
	u32 pay = 100, len = 3650, ch = 800, n = 37, c;
	struct ref r;

	ref_init(&r, n);
	for (c = 0; c < 5; c++)
		CHECK(!sdr_bitmap_chunk_complete(r.map, len, pay, ch, c));
	sdr_bitmap_set_range(r.map, n, 32, 5);	/* last, short chunk */
	CHECK(sdr_bitmap_chunk_complete(r.map, len, pay, ch, 4));
	CHECK(!sdr_bitmap_chunk_complete(r.map, len, pay, ch, 5));
	CHECK(!sdr_bitmap_chunk_complete(r.map, len, pay, 0, 0));
	CHECK(!sdr_bitmap_chunk_complete(r.map, len, 0, ch, 0));
	sdr_bitmap_set_range(r.map, n, 8, 7);
	CHECK(!sdr_bitmap_chunk_complete(r.map, len, pay, ch, 1));
	sdr_bitmap_set(r.map, n, 15);
	CHECK(sdr_bitmap_chunk_complete(r.map, len, pay, ch, 1));
	CHECK(!sdr_bitmap_chunk_complete(r.map, len, pay, ch, 0));
	CHECK(!sdr_bitmap_chunk_complete(r.map, len, pay, ch, U32_MAX));
	ref_free(&r);
}

/*
 * Chunks that are no multiple of the payload (the SDK's 64 KiB chunks of
 * 4032-byte packets), and chunks smaller than a packet: each span against
 * a byte-by-byte count, and a chunk complete exactly when every byte of
 * it arrived, packets landing in a random order.
 */
static u64 end_of(u32 i, u32 unit, u32 len)	/* end of piece i, clipped */
{
	u64 e = (u64)(i + 1) * unit;

	return e < len ? e : len;
}

static void test_bitmap_chunk_bytes(void)
{
	static const u32 geo[][3] = {	/* pay, chunk, msg_len */
		{ 4032, 65536, 1U << 20 }, { 4032, 65536, 200000 },
		{ 4032, 4096, 50001 }, { 4032, 1024, 20000 }, { 192, 64, 1000 },
		{ 1000, 4000, 12000 }, { 4032, 4032 * 16, 4032 * 40 + 7 },
	};
	u32 g, c, p, first, n, i;
	u64 b;

	for (g = 0; g < sizeof(geo) / sizeof(geo[0]); g++) {
		u32 pay = geo[g][0], ch = geo[g][1], len = geo[g][2];
		u32 np = sdr_msg_npkts(len, pay), nc = sdr_msg_nchunks(len, ch);
		u32 *order = calloc(np, sizeof(*order));
		struct ref r;
		bool ok = true;

		for (c = 0; c < nc; c++) {
			n = sdr_chunk_span(len, pay, ch, c, &first);
			ok &= first == c * ch / pay &&
			      first + n - 1 ==
			      (end_of(c, ch, len) - 1) / pay;
		}
		CHECK(ok);
		CHECK_EQ(sdr_chunk_span(len, pay, ch, nc, &first), 0);
		for (p = 0, ok = true; p < np; p++) {
			n = sdr_pkt_span(len, pay, ch, p, &first);
			ok &= first == p * pay / ch &&
			      first + n - 1 ==
			      (end_of(p, pay, len) - 1) / ch;
		}
		CHECK(ok);
		CHECK_EQ(sdr_pkt_span(len, pay, ch, np, &first), 0);

		for (p = 0; p < np; p++)
			order[p] = p;
		for (p = np - 1; p > 0; p--) {
			u32 j = (u32)rand() % (p + 1), t = order[p];

			order[p] = order[j];
			order[j] = t;
		}
		ref_init(&r, np);
		for (i = 0, ok = true; i < np; i++) {
			sdr_bitmap_set(r.map, np, order[i]);
			for (c = 0; c < nc; c++) {
				bool all = true;

				/* every packet holding a byte of the chunk */
				for (b = c * ch; b < end_of(c, ch, len);
				     b = (b / pay + 1) * pay)
					all &= sdr_bitmap_test(r.map, np, b / pay);
				ok &= all == sdr_bitmap_chunk_complete(r.map, len,
								       pay, ch, c);
			}
		}
		CHECK(ok);
		ref_free(&r);
		free(order);
	}
}

/* random ops against the byte-per-bit model, many sizes around words */
static void test_bitmap_random(void)
{
	static const u32 sizes[] = { 1, 2, 7, 8, 9, 63, 64, 65, 127, 128, 129,
				     1000, 1024, 1025, 4097 };
	u64 s = 0x9e3779b97f4a7c15ULL;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(sizes); k++) {
		u32 n = sizes[k], it;
		struct ref r;

		ref_init(&r, n);
		for (it = 0; it < 3000; it++) {
			u32 op = rng(&s) % 6, a = rng(&s) % (n + 3);
			u32 len = rng(&s) % (n + 70), i, want;

			switch (op) {
			case 0: {
				int exp = a >= n ? -ERANGE : r.b[a] ? -EEXIST : 0;

				CHECK_EQ(sdr_bitmap_set(r.map, n, a), exp);
				if (a < n)
					r.b[a] = 1;
				break;
			}
			case 1:
				if (rng(&s) % 4)
					break;	/* keep the maps sparse */
				want = 0;
				for (i = a; i < n && i - a < len; i++) {
					want += !r.b[i];
					r.b[i] = 1;
				}
				CHECK_EQ(sdr_bitmap_set_range(r.map, n, a, len), want);
				break;
			case 2:
				want = 0;
				for (i = a; i < n && i - a < len; i++)
					want += r.b[i];
				CHECK_EQ(sdr_bitmap_weight_range(r.map, n, a, len), want);
				break;
			case 3:
				for (i = a; i < n && r.b[i]; i++)
					;
				CHECK_EQ(sdr_bitmap_next_zero(r.map, n, a), a >= n ? n : i);
				for (i = a; i < n && !r.b[i]; i++)
					;
				CHECK_EQ(sdr_bitmap_next_set(r.map, n, a), a >= n ? n : i);
				break;
			case 4:
				CHECK_EQ(sdr_bitmap_test(r.map, n, a), a < n && r.b[a]);
				break;
			case 5: {
				want = 0;
				for (i = 0; i < n; i++)
					want += r.b[i];
				CHECK_EQ(sdr_bitmap_weight(r.map, n), want);
				break;
			}
			}
		}
		ref_free(&r);
	}
}

static void test_bitmap_slices(void)
{
	static const u32 sizes[] = { 1, 8, 63, 64, 65, 128, 1023, 1024, 1025,
				     2048, 3001 };
	static const u32 bases[] = { 0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 129,
				     1000, 1024, 2047 };
	u64 s = 42;
	size_t k, j;

	for (k = 0; k < ARRAY_SIZE(sizes); k++) {
		u32 n = sizes[k], i;
		struct ref r;

		ref_init(&r, n);
		for (i = 0; i < n; i++)
			if (rng(&s) & 1) {
				r.b[i] = 1;
				sdr_bitmap_set(r.map, n, i);
			}
		for (j = 0; j < ARRAY_SIZE(bases); j++) {
			u32 base = bases[j], maxb, got, want, b;
			u8 out[SDR_ACK_MAX_BITS / 8 + 1];
			struct ref back;

			for (maxb = 0; maxb <= SDR_ACK_MAX_BITS + 1; maxb += (maxb < 70 ? 1 : 257)) {
				memset(out, 0xee, sizeof(out));
				got = sdr_bitmap_get_slice(r.map, n, base, maxb, out);
				want = base >= n ? 0 : n - base;
				if (want > maxb)
					want = maxb;
				if (want > SDR_ACK_MAX_BITS)
					want = SDR_ACK_MAX_BITS;
				CHECK_EQ(got, want);
				for (b = 0; b < got; b++)
					if (!!(out[b / 8] & (1 << (b % 8))) != r.b[base + b]) {
						CHECK(0);
						break;
					}
				if (got % 8)
					CHECK_EQ(out[got / 8] >> (got % 8), 0);
				CHECK_EQ(out[DIV_ROUND_UP(got, 8)], 0xee);

				/* apply it to an empty map: same bits back */
				ref_init(&back, n);
				want = 0;
				for (b = 0; b < got; b++)
					want += r.b[base + b];
				CHECK_EQ(sdr_bitmap_apply_slice(back.map, n, base, out, got), want);
				CHECK_EQ(sdr_bitmap_weight_range(back.map, n, base, got), want);
				CHECK_EQ(sdr_bitmap_weight(back.map, n), want);
				/* again: nothing new */
				CHECK_EQ(sdr_bitmap_apply_slice(back.map, n, base, out, got), 0);
				ref_free(&back);
			}
		}
		ref_free(&r);
	}
}

static void test_bitmap_apply_clip(void)
{
	struct ref r;
	u8 in[4] = { 0xff, 0xff, 0xff, 0xff };

	ref_init(&r, 10);
	/* slice runs past the map: bits >= nbits ignored */
	CHECK_EQ(sdr_bitmap_apply_slice(r.map, 10, 4, in, 32), 6);
	CHECK_EQ(sdr_bitmap_weight(r.map, 10), 6);
	/* slice_bits not a multiple of 8: extra bits of the last byte ignored */
	CHECK_EQ(sdr_bitmap_apply_slice(r.map, 10, 0, in, 3), 3);
	CHECK_EQ(sdr_bitmap_next_zero(r.map, 10, 0), 3);
	/* base near U32_MAX must not wrap */
	CHECK_EQ(sdr_bitmap_apply_slice(r.map, 10, U32_MAX - 3, in, 32), 0);
	CHECK_EQ(sdr_bitmap_get_slice(r.map, 10, 10, 100, in), 0);
	ref_free(&r);
}

void test_bitmap(void)
{
	TAP_RUN(test_bitmap_sizes);
	TAP_RUN(test_bitmap_basic);
	TAP_RUN(test_bitmap_chunks);
	TAP_RUN(test_bitmap_chunk_bytes);
	TAP_RUN(test_bitmap_random);
	TAP_RUN(test_bitmap_slices);
	TAP_RUN(test_bitmap_apply_clip);
}
