// SPDX-License-Identifier: GPL-2.0
/*
 * Cauchy Reed-Solomon erasure codec over GF(2^8).
 *
 * Parity row j is sum_i C[j][i] * data[i] with the Cauchy matrix
 * C[j][i] = 1 / (x_j + y_i), x_j = j, y_i = SDR_EC_MAX_M + i: the x and y
 * sets are disjoint, so every entry exists, and every square submatrix of a
 * Cauchy matrix is again Cauchy and nonsingular.  That is the whole MDS
 * argument: with e data symbols lost and e parity rows present, the e x e
 * system "parity rows minus the known data" in the e unknowns is solvable.
 *
 * Encoding and decoding are dot products: each output symbol is a sum of
 * input symbols times coefficients.  All outputs of one call are built in
 * one pass over the inputs, eight at a time (what fits in the registers
 * beside the inputs).  Three implementations, chosen by sdr_ec_init() from
 * the CPU's features (or by sdr_ec_set_impl()), give identical bytes:
 *
 * - gfni: a buffer times c is one gf2p8affineqb of 32 bytes with c's 8x8
 *   bit matrix (sdr_gf_aff, sdr_ec_aff.h: multiplication by a constant is
 *   linear over GF(2), whatever the polynomial; gf2p8mulb's is AES's
 *   0x11b, not ours), as ISA-L's GFNI code does; AVX2 registers, the same
 *   sections as avx2.
 * - avx2: a buffer times c by split nibbles: vpshufb looks up the low and
 *   the high nibble of 32 bytes at once in c's two 16-entry product
 *   tables (sdr_gf_nib, sdr_ec_nib.h, 16 KiB), as ISA-L and lib/raid6
 *   do.  In the kernel, inside kernel_fpu_begin()/end() over
 *   chunks of bounded work (SDR_EC_SIMD_WORK bytes of multiply-xor), and
 *   only where may_use_simd() says so; elsewhere the chunk goes scalar.
 * - scalar: a buffer times c first builds c's 256-entry product table on
 *   the stack (cheap next to a 4 KiB packet), then one lookup and one xor
 *   per byte, eight bytes to a word.
 */
#include "sdr_ec.h"
#include "sdr_ec_nib.h"
#include "sdr_ec_aff.h"

/*
 * Generated once by a throwaway program: exp[i] = 2^i, multiplying by 2
 * and reducing by 0x11d (2 generates the multiplicative group), log its
 * inverse.  tests/host/test_ec.c checks sdr_gf_mul() against shift-and-add
 * for all 65536 pairs.  exp[] is 512 long and periodic with period 255 so
 * that exp[log a + log b] needs no reduction mod 255.  log[0] is unused.
 */
static const u8 sdr_gf_exp[512] = {
	0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80,
	0x1d, 0x3a, 0x74, 0xe8, 0xcd, 0x87, 0x13, 0x26,
	0x4c, 0x98, 0x2d, 0x5a, 0xb4, 0x75, 0xea, 0xc9,
	0x8f, 0x03, 0x06, 0x0c, 0x18, 0x30, 0x60, 0xc0,
	0x9d, 0x27, 0x4e, 0x9c, 0x25, 0x4a, 0x94, 0x35,
	0x6a, 0xd4, 0xb5, 0x77, 0xee, 0xc1, 0x9f, 0x23,
	0x46, 0x8c, 0x05, 0x0a, 0x14, 0x28, 0x50, 0xa0,
	0x5d, 0xba, 0x69, 0xd2, 0xb9, 0x6f, 0xde, 0xa1,
	0x5f, 0xbe, 0x61, 0xc2, 0x99, 0x2f, 0x5e, 0xbc,
	0x65, 0xca, 0x89, 0x0f, 0x1e, 0x3c, 0x78, 0xf0,
	0xfd, 0xe7, 0xd3, 0xbb, 0x6b, 0xd6, 0xb1, 0x7f,
	0xfe, 0xe1, 0xdf, 0xa3, 0x5b, 0xb6, 0x71, 0xe2,
	0xd9, 0xaf, 0x43, 0x86, 0x11, 0x22, 0x44, 0x88,
	0x0d, 0x1a, 0x34, 0x68, 0xd0, 0xbd, 0x67, 0xce,
	0x81, 0x1f, 0x3e, 0x7c, 0xf8, 0xed, 0xc7, 0x93,
	0x3b, 0x76, 0xec, 0xc5, 0x97, 0x33, 0x66, 0xcc,
	0x85, 0x17, 0x2e, 0x5c, 0xb8, 0x6d, 0xda, 0xa9,
	0x4f, 0x9e, 0x21, 0x42, 0x84, 0x15, 0x2a, 0x54,
	0xa8, 0x4d, 0x9a, 0x29, 0x52, 0xa4, 0x55, 0xaa,
	0x49, 0x92, 0x39, 0x72, 0xe4, 0xd5, 0xb7, 0x73,
	0xe6, 0xd1, 0xbf, 0x63, 0xc6, 0x91, 0x3f, 0x7e,
	0xfc, 0xe5, 0xd7, 0xb3, 0x7b, 0xf6, 0xf1, 0xff,
	0xe3, 0xdb, 0xab, 0x4b, 0x96, 0x31, 0x62, 0xc4,
	0x95, 0x37, 0x6e, 0xdc, 0xa5, 0x57, 0xae, 0x41,
	0x82, 0x19, 0x32, 0x64, 0xc8, 0x8d, 0x07, 0x0e,
	0x1c, 0x38, 0x70, 0xe0, 0xdd, 0xa7, 0x53, 0xa6,
	0x51, 0xa2, 0x59, 0xb2, 0x79, 0xf2, 0xf9, 0xef,
	0xc3, 0x9b, 0x2b, 0x56, 0xac, 0x45, 0x8a, 0x09,
	0x12, 0x24, 0x48, 0x90, 0x3d, 0x7a, 0xf4, 0xf5,
	0xf7, 0xf3, 0xfb, 0xeb, 0xcb, 0x8b, 0x0b, 0x16,
	0x2c, 0x58, 0xb0, 0x7d, 0xfa, 0xe9, 0xcf, 0x83,
	0x1b, 0x36, 0x6c, 0xd8, 0xad, 0x47, 0x8e, 0x01,
	0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1d,
	0x3a, 0x74, 0xe8, 0xcd, 0x87, 0x13, 0x26, 0x4c,
	0x98, 0x2d, 0x5a, 0xb4, 0x75, 0xea, 0xc9, 0x8f,
	0x03, 0x06, 0x0c, 0x18, 0x30, 0x60, 0xc0, 0x9d,
	0x27, 0x4e, 0x9c, 0x25, 0x4a, 0x94, 0x35, 0x6a,
	0xd4, 0xb5, 0x77, 0xee, 0xc1, 0x9f, 0x23, 0x46,
	0x8c, 0x05, 0x0a, 0x14, 0x28, 0x50, 0xa0, 0x5d,
	0xba, 0x69, 0xd2, 0xb9, 0x6f, 0xde, 0xa1, 0x5f,
	0xbe, 0x61, 0xc2, 0x99, 0x2f, 0x5e, 0xbc, 0x65,
	0xca, 0x89, 0x0f, 0x1e, 0x3c, 0x78, 0xf0, 0xfd,
	0xe7, 0xd3, 0xbb, 0x6b, 0xd6, 0xb1, 0x7f, 0xfe,
	0xe1, 0xdf, 0xa3, 0x5b, 0xb6, 0x71, 0xe2, 0xd9,
	0xaf, 0x43, 0x86, 0x11, 0x22, 0x44, 0x88, 0x0d,
	0x1a, 0x34, 0x68, 0xd0, 0xbd, 0x67, 0xce, 0x81,
	0x1f, 0x3e, 0x7c, 0xf8, 0xed, 0xc7, 0x93, 0x3b,
	0x76, 0xec, 0xc5, 0x97, 0x33, 0x66, 0xcc, 0x85,
	0x17, 0x2e, 0x5c, 0xb8, 0x6d, 0xda, 0xa9, 0x4f,
	0x9e, 0x21, 0x42, 0x84, 0x15, 0x2a, 0x54, 0xa8,
	0x4d, 0x9a, 0x29, 0x52, 0xa4, 0x55, 0xaa, 0x49,
	0x92, 0x39, 0x72, 0xe4, 0xd5, 0xb7, 0x73, 0xe6,
	0xd1, 0xbf, 0x63, 0xc6, 0x91, 0x3f, 0x7e, 0xfc,
	0xe5, 0xd7, 0xb3, 0x7b, 0xf6, 0xf1, 0xff, 0xe3,
	0xdb, 0xab, 0x4b, 0x96, 0x31, 0x62, 0xc4, 0x95,
	0x37, 0x6e, 0xdc, 0xa5, 0x57, 0xae, 0x41, 0x82,
	0x19, 0x32, 0x64, 0xc8, 0x8d, 0x07, 0x0e, 0x1c,
	0x38, 0x70, 0xe0, 0xdd, 0xa7, 0x53, 0xa6, 0x51,
	0xa2, 0x59, 0xb2, 0x79, 0xf2, 0xf9, 0xef, 0xc3,
	0x9b, 0x2b, 0x56, 0xac, 0x45, 0x8a, 0x09, 0x12,
	0x24, 0x48, 0x90, 0x3d, 0x7a, 0xf4, 0xf5, 0xf7,
	0xf3, 0xfb, 0xeb, 0xcb, 0x8b, 0x0b, 0x16, 0x2c,
	0x58, 0xb0, 0x7d, 0xfa, 0xe9, 0xcf, 0x83, 0x1b,
	0x36, 0x6c, 0xd8, 0xad, 0x47, 0x8e, 0x01, 0x02,
};

static const u8 sdr_gf_log[256] = {
	0x00, 0x00, 0x01, 0x19, 0x02, 0x32, 0x1a, 0xc6,
	0x03, 0xdf, 0x33, 0xee, 0x1b, 0x68, 0xc7, 0x4b,
	0x04, 0x64, 0xe0, 0x0e, 0x34, 0x8d, 0xef, 0x81,
	0x1c, 0xc1, 0x69, 0xf8, 0xc8, 0x08, 0x4c, 0x71,
	0x05, 0x8a, 0x65, 0x2f, 0xe1, 0x24, 0x0f, 0x21,
	0x35, 0x93, 0x8e, 0xda, 0xf0, 0x12, 0x82, 0x45,
	0x1d, 0xb5, 0xc2, 0x7d, 0x6a, 0x27, 0xf9, 0xb9,
	0xc9, 0x9a, 0x09, 0x78, 0x4d, 0xe4, 0x72, 0xa6,
	0x06, 0xbf, 0x8b, 0x62, 0x66, 0xdd, 0x30, 0xfd,
	0xe2, 0x98, 0x25, 0xb3, 0x10, 0x91, 0x22, 0x88,
	0x36, 0xd0, 0x94, 0xce, 0x8f, 0x96, 0xdb, 0xbd,
	0xf1, 0xd2, 0x13, 0x5c, 0x83, 0x38, 0x46, 0x40,
	0x1e, 0x42, 0xb6, 0xa3, 0xc3, 0x48, 0x7e, 0x6e,
	0x6b, 0x3a, 0x28, 0x54, 0xfa, 0x85, 0xba, 0x3d,
	0xca, 0x5e, 0x9b, 0x9f, 0x0a, 0x15, 0x79, 0x2b,
	0x4e, 0xd4, 0xe5, 0xac, 0x73, 0xf3, 0xa7, 0x57,
	0x07, 0x70, 0xc0, 0xf7, 0x8c, 0x80, 0x63, 0x0d,
	0x67, 0x4a, 0xde, 0xed, 0x31, 0xc5, 0xfe, 0x18,
	0xe3, 0xa5, 0x99, 0x77, 0x26, 0xb8, 0xb4, 0x7c,
	0x11, 0x44, 0x92, 0xd9, 0x23, 0x20, 0x89, 0x2e,
	0x37, 0x3f, 0xd1, 0x5b, 0x95, 0xbc, 0xcf, 0xcd,
	0x90, 0x87, 0x97, 0xb2, 0xdc, 0xfc, 0xbe, 0x61,
	0xf2, 0x56, 0xd3, 0xab, 0x14, 0x2a, 0x5d, 0x9e,
	0x84, 0x3c, 0x39, 0x53, 0x47, 0x6d, 0x41, 0xa2,
	0x1f, 0x2d, 0x43, 0xd8, 0xb7, 0x7b, 0xa4, 0x76,
	0xc4, 0x17, 0x49, 0xec, 0x7f, 0x0c, 0x6f, 0xf6,
	0x6c, 0xa1, 0x3b, 0x52, 0x29, 0x9d, 0x55, 0xaa,
	0xfb, 0x60, 0x86, 0xb1, 0xbb, 0xcc, 0x3e, 0x5a,
	0xcb, 0x59, 0x5f, 0xb0, 0x9c, 0xa9, 0xa0, 0x51,
	0x0b, 0xf5, 0x16, 0xeb, 0x7a, 0x75, 0x2c, 0xd7,
	0x4f, 0xae, 0xd5, 0xe9, 0xe6, 0xe7, 0xad, 0xe8,
	0x74, 0xd6, 0xf4, 0xea, 0xa8, 0x50, 0x58, 0xaf,
};

u8 sdr_gf_mul(u8 a, u8 b)
{
	if (!a || !b)
		return 0;
	return sdr_gf_exp[sdr_gf_log[a] + sdr_gf_log[b]];
}

u8 sdr_gf_inv(u8 a)
{
	if (!a)
		return 0;
	return sdr_gf_exp[255 - sdr_gf_log[a]];
}

u8 sdr_ec_coef(u32 j, u32 i)
{
	if (j >= SDR_EC_MAX_M || i >= SDR_EC_MAX_K)
		return 0;
	/* x_j < SDR_EC_MAX_M <= y_i, so x_j ^ y_i is never 0 */
	return sdr_gf_inv((u8)(j ^ (SDR_EC_MAX_M + i)));
}

/* t[x] = c * x for every byte x */
static void sdr_ec_row_table(u8 t[256], u8 c)
{
	const u8 *e = sdr_gf_exp + sdr_gf_log[c];
	u32 x;

	t[0] = 0;
	for (x = 1; x < 256; x++)
		t[x] = e[sdr_gf_log[x]];
}

/*
 * Eight table lookups gathered into one 64-bit word: the loads and stores
 * go a word at a time (memcpy, so unaligned buffers are fine) and the
 * lookups of one word are independent of each other.  Byte k of the word
 * is shifted out and back by the same 8k whatever the endianness.
 */
static inline u64 sdr_ec_lookup8(const u8 t[256], u64 s)
{
	return (u64)t[s & 0xff] |
	       (u64)t[(s >> 8) & 0xff] << 8 |
	       (u64)t[(s >> 16) & 0xff] << 16 |
	       (u64)t[(s >> 24) & 0xff] << 24 |
	       (u64)t[(s >> 32) & 0xff] << 32 |
	       (u64)t[(s >> 40) & 0xff] << 40 |
	       (u64)t[(s >> 48) & 0xff] << 48 |
	       (u64)t[s >> 56] << 56;
}

/* dst[0, n) ^= c * src[0, n) */
static void sdr_ec_mul_xor(u8 *dst, const u8 *src, u32 n, u8 c)
{
	u8 t[256];
	u64 s, d;

	if (!c || !n)
		return;
	if (c == 1) {
		for (; n >= 8; n -= 8, src += 8, dst += 8) {
			memcpy(&s, src, 8);
			memcpy(&d, dst, 8);
			d ^= s;
			memcpy(dst, &d, 8);
		}
		for (; n; n--)
			*dst++ ^= *src++;
		return;
	}
	sdr_ec_row_table(t, c);
	for (; n >= 8; n -= 8, src += 8, dst += 8) {
		memcpy(&s, src, 8);
		memcpy(&d, dst, 8);
		d ^= sdr_ec_lookup8(t, s);
		memcpy(dst, &d, 8);
	}
	for (; n; n--)
		*dst++ ^= t[*src++];
}

/* dst[0, n) = c * src[0, n) */
static void sdr_ec_mul_set(u8 *dst, const u8 *src, u32 n, u8 c)
{
	u8 t[256];
	u64 s;

	if (!n)
		return;
	if (c <= 1) {
		if (c)
			memcpy(dst, src, n);
		else
			memset(dst, 0, n);
		return;
	}
	sdr_ec_row_table(t, c);
	for (; n >= 8; n -= 8, src += 8, dst += 8) {
		memcpy(&s, src, 8);
		s = sdr_ec_lookup8(t, s);
		memcpy(dst, &s, 8);
	}
	for (; n; n--)
		*dst++ = t[*src++];
}

/* outputs per pass of a dot product: what fits in the registers */
#define SDR_EC_BATCH	8

/*
 * A pass's coefficients, input-major as the pass walks them: for input i
 * and output r, c * 64, the offset of coefficient c's row in sdr_gf_nib
 * (so the SIMD loop adds it to the table's base and nothing else).
 */
struct sdr_ec_coefs {
	u16	off[SDR_EC_MAX_K][SDR_EC_BATCH];
};

#define SDR_EC_OFF(c)	((u16)((c) << 6))
#define SDR_EC_C(o)	((u8)((o) >> 6))

/*
 * One dot product over bytes [off, end) of every buffer: out[r] (=, or ^=
 * if @acc) sum over i < n of coefficient co[i][r] times src[i], for r <
 * nout <= SDR_EC_BATCH.  Every src[i] is readable over the whole range.
 */
typedef void (*sdr_ec_dot_fn)(u32 n, const u8 *const src[], u32 off, u32 end,
			      u32 nout, const u16 (*co)[SDR_EC_BATCH],
			      u8 *const out[], bool acc);

static void sdr_ec_dot_scalar(u32 n, const u8 *const src[], u32 off, u32 end,
			      u32 nout, const u16 (*co)[SDR_EC_BATCH],
			      u8 *const out[], bool acc)
{
	u32 r, i;

	for (r = 0; r < nout; r++) {
		i = 0;
		if (!acc) {
			if (n)
				sdr_ec_mul_set(out[r] + off, src[0] + off,
					       end - off, SDR_EC_C(co[i++][r]));
			else
				memset(out[r] + off, 0, end - off);
		}
		for (; i < n; i++)
			sdr_ec_mul_xor(out[r] + off, src[i] + off, end - off,
				       SDR_EC_C(co[i][r]));
	}
}

const u8 *sdr_gf_nib_row(u8 c)
{
	return sdr_gf_nib[c];
}

u64 sdr_gf_aff_matrix(u8 c)
{
	return sdr_gf_aff[c];
}

#if defined(SDR_HAVE_X86_SIMD) && !defined(__CHECKER__)
/*
 * AVX2, written with GCC's (and clang's) vector extensions and builtins
 * rather than the intrinsics headers, which a kernel build does not have;
 * only these functions are compiled for AVX2.
 */
#define SDR_AVX2	__attribute__((__target__("avx2")))
typedef u8 sdr_v32 __attribute__((__vector_size__(32)));
typedef u8 sdr_v32_un __attribute__((__vector_size__(32), __aligned__(1),
				     __may_alias__));

static SDR_AVX2 __always_inline sdr_v32 sdr_v_load(const u8 *p)
{
	return *(const sdr_v32_un *)p;
}

static SDR_AVX2 __always_inline void sdr_v_store(u8 *p, sdr_v32 v)
{
	*(sdr_v32_un *)p = v;
}

/* vpshufb: t[i] within each 128-bit lane (the builtin takes char vectors) */
static SDR_AVX2 __always_inline sdr_v32 sdr_v_shuf(sdr_v32 t, sdr_v32 i)
{
	return (sdr_v32)__builtin_ia32_pshufb256((char __attribute__((__vector_size__(32))))t,
						 (char __attribute__((__vector_size__(32))))i);
}

/*
 * Call @rows(R, args...) with R = @nout, 1..SDR_EC_BATCH, a constant in
 * each call, so each SIMD implementation keeps its accumulators in
 * registers: one instance per R.
 */
#define SDR_EC_DOT_BY_ROWS(rows, nout, ...)				\
	do {								\
		switch (nout) {						\
		case 8:							\
			rows(8, __VA_ARGS__);				\
			break;						\
		case 7:							\
			rows(7, __VA_ARGS__);				\
			break;						\
		case 6:							\
			rows(6, __VA_ARGS__);				\
			break;						\
		case 5:							\
			rows(5, __VA_ARGS__);				\
			break;						\
		case 4:							\
			rows(4, __VA_ARGS__);				\
			break;						\
		case 3:							\
			rows(3, __VA_ARGS__);				\
			break;						\
		case 2:							\
			rows(2, __VA_ARGS__);				\
			break;						\
		case 1:							\
			rows(1, __VA_ARGS__);				\
			break;						\
		}							\
	} while (0)
static_assert(SDR_EC_BATCH == 8, "SDR_EC_DOT_BY_ROWS has a case per row");

/*
 * The dot product for @R outputs (a constant where this is inlined, so
 * the accumulators live in registers), 32 bytes at a time.
 */
static SDR_AVX2 __always_inline void
sdr_ec_dot_avx2_rows(const u32 R, u32 n, const u8 *const src[], u32 off,
		     u32 end, const u16 (*co)[SDR_EC_BATCH], u8 *const out[],
		     bool acc)
{
	const sdr_v32 mask = {
		15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,
		15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,
	};
	const u8 *nib = &sdr_gf_nib[0][0], *t;
	const sdr_v32 zero = { 0 };
	sdr_v32 a[SDR_EC_BATCH], s, lo, hi;
	u32 pos, i, r;

	for (pos = off; pos < end; pos += 32) {
#pragma GCC unroll 8
		for (r = 0; r < R; r++)
			a[r] = acc ? sdr_v_load(out[r] + pos) : zero;
		for (i = 0; i < n; i++) {
			s = sdr_v_load(src[i] + pos);
			lo = s & mask;
			hi = s >> 4;
#pragma GCC unroll 8
			for (r = 0; r < R; r++) {
				t = nib + co[i][r];
				a[r] ^= sdr_v_shuf(sdr_v_load(t), lo) ^
					sdr_v_shuf(sdr_v_load(t + 32), hi);
			}
		}
#pragma GCC unroll 8
		for (r = 0; r < R; r++)
			sdr_v_store(out[r] + pos, a[r]);
	}
}

/* (end - off) is a multiple of 32; one instance per R, a constant */
static SDR_AVX2 void sdr_ec_dot_avx2(u32 n, const u8 *const src[], u32 off,
				     u32 end, u32 nout,
				     const u16 (*co)[SDR_EC_BATCH],
				     u8 *const out[], bool acc)
{
	SDR_EC_DOT_BY_ROWS(sdr_ec_dot_avx2_rows, nout, n, src, off, end, co, out,
			   acc);
}

#define SDR_EC_HAVE_AVX2	1

/*
 * GFNI on AVX2 registers: each multiply-xor is one vgf2p8affineqb with
 * the coefficient's matrix broadcast to the four qwords.
 */
#define SDR_GFNI	__attribute__((__target__("avx2,gfni")))
typedef u64 sdr_v4q __attribute__((__vector_size__(32)));

static SDR_GFNI __always_inline sdr_v32 sdr_v_aff(sdr_v32 x, u64 m)
{
	const sdr_v4q a = { m, m, m, m };

	return (sdr_v32)__builtin_ia32_vgf2p8affineqb_v32qi(
		(char __attribute__((__vector_size__(32))))x,
		(char __attribute__((__vector_size__(32))))a, 0);
}

static SDR_GFNI __always_inline void
sdr_ec_dot_gfni_rows(const u32 R, u32 n, const u8 *const src[], u32 off,
		     u32 end, const u16 (*co)[SDR_EC_BATCH], u8 *const out[],
		     bool acc)
{
	const sdr_v32 zero = { 0 };
	sdr_v32 a[SDR_EC_BATCH], s;
	u32 pos, i, r;

	for (pos = off; pos < end; pos += 32) {
#pragma GCC unroll 8
		for (r = 0; r < R; r++)
			a[r] = acc ? sdr_v_load(out[r] + pos) : zero;
		for (i = 0; i < n; i++) {
			s = sdr_v_load(src[i] + pos);
#pragma GCC unroll 8
			for (r = 0; r < R; r++)
				a[r] ^= sdr_v_aff(s, sdr_gf_aff[SDR_EC_C(co[i][r])]);
		}
#pragma GCC unroll 8
		for (r = 0; r < R; r++)
			sdr_v_store(out[r] + pos, a[r]);
	}
}

/* (end - off) is a multiple of 32; one instance per R, a constant */
static SDR_GFNI void sdr_ec_dot_gfni(u32 n, const u8 *const src[], u32 off,
				     u32 end, u32 nout,
				     const u16 (*co)[SDR_EC_BATCH],
				     u8 *const out[], bool acc)
{
	SDR_EC_DOT_BY_ROWS(sdr_ec_dot_gfni_rows, nout, n, src, off, end, co, out,
			   acc);
}
#endif

struct sdr_ec_impl {
	const char	*name;
	sdr_ec_dot_fn	dot;	/* NULL: sdr_ec_dot_scalar() only */
	bool		(*usable)(void);
};

static bool sdr_ec_always(void)
{
	return true;
}

/* the fastest first: "auto" takes the first this CPU has */
static const struct sdr_ec_impl sdr_ec_impls[] = {
#ifdef SDR_EC_HAVE_AVX2
	{ "gfni", sdr_ec_dot_gfni, sdr_cpu_gfni },
	{ "avx2", sdr_ec_dot_avx2, sdr_cpu_avx2 },
#endif
	{ "scalar", NULL, sdr_ec_always },
};

/* what sdr_ec_set_impl() chose: the last entry (scalar) until it runs */
static const struct sdr_ec_impl *sdr_ec_cur =
	&sdr_ec_impls[ARRAY_SIZE(sdr_ec_impls) - 1];

void sdr_ec_init(void)
{
	sdr_ec_set_impl("auto");
}

const char *sdr_ec_impl(void)
{
	return READ_ONCE(sdr_ec_cur)->name;
}

int sdr_ec_set_impl(const char *name)
{
	bool any = !strcmp(name, "auto");
	u32 i;

	for (i = 0; i < ARRAY_SIZE(sdr_ec_impls); i++) {
		if (!any && strcmp(name, sdr_ec_impls[i].name))
			continue;
		if (!sdr_ec_impls[i].usable()) {
			if (any)
				continue;
			return -EOPNOTSUPP;
		}
		WRITE_ONCE(sdr_ec_cur, &sdr_ec_impls[i]);
		return 0;
	}
	return -EINVAL;
}

/* out[r][from, end) ^= co[i][r] * src[i] below len[i], nibble by nibble */
static void sdr_ec_dot_tail(u32 n, const u8 *const src[], const u32 len[],
			    u32 from, u32 end, u32 nout,
			    const u16 (*co)[SDR_EC_BATCH], u8 *const out[])
{
	u32 r, i, b, e;

	for (r = 0; r < nout; r++)
		for (i = 0; i < n; i++) {
			const u8 *t = &sdr_gf_nib[0][0] + co[i][r];

			e = len ? min(len[i], end) : end;
			for (b = from; b < e; b++)
				out[r][b] ^= t[src[i][b] & 15] ^
					     t[32 + (src[i][b] >> 4)];
		}
}

/*
 * The SIMD dot over [off, end) (a multiple of 32 long) in chunks of
 * SDR_EC_SIMD_WORK bytes of multiply-xor at most: a kernel holds
 * preemption off inside each.  A chunk where SIMD is not usable goes
 * scalar.
 */
#define SDR_EC_SIMD_WORK	(256U << 10)

static void sdr_ec_dot_simd(sdr_ec_dot_fn dot, u32 n, const u8 *const src[],
			    u32 off, u32 end, u32 nout,
			    const u16 (*co)[SDR_EC_BATCH], u8 *const out[],
			    bool acc)
{
	u32 step = max(SDR_EC_SIMD_WORK / max(n * nout, 1U), 32U) & ~31U, e;

	for (; off < end; off = e) {
		e = end - off > step ? off + step : end;
		if (sdr_simd_begin()) {
			dot(n, src, off, e, nout, co, out, acc);
			sdr_simd_end();
		} else {
			sdr_ec_dot_scalar(n, src, off, e, nout, co, out, acc);
		}
	}
}

/*
 * out[r] (=, or ^= if @acc) sum over i < n of co[i][r] times src[i], for
 * r < nout <= SDR_EC_BATCH, pay bytes each, src[i] read as zero past
 * len[i] (NULL: all pay).
 */
static void sdr_ec_dot(u32 n, const u8 *const src[], const u32 len[], u32 pay,
		       u32 nout, const u16 (*co)[SDR_EC_BATCH], u8 *const out[],
		       bool acc)
{
	sdr_ec_dot_fn dot = READ_ONCE(sdr_ec_cur)->dot;
	u32 pv = pay & ~31U, i, r, lv;
	bool all_full = true;

	for (i = 0; len && i < n; i++)
		all_full &= len[i] >= pay;
	if (!dot || pay < 32) {
		if (all_full) {
			sdr_ec_dot_scalar(n, src, 0, pay, nout, co, out, acc);
			return;
		}
		if (!acc)
			for (r = 0; r < nout; r++)
				memset(out[r], 0, pay);
		for (r = 0; r < nout; r++)
			for (i = 0; i < n; i++)
				sdr_ec_mul_xor(out[r], src[i], len[i],
					       SDR_EC_C(co[i][r]));
		return;
	}
	if (all_full && !acc) {
		/* the last 32 bytes again, overlapping: = is idempotent */
		sdr_ec_dot_simd(dot, n, src, 0, pv, nout, co, out, false);
		if (pv < pay)
			sdr_ec_dot_simd(dot, n, src, pay - 32, pay, nout, co,
					out, false);
		return;
	}
	if (!acc)
		for (r = 0; r < nout; r++)
			memset(out[r], 0, pay);
	/* runs of full inputs together; a short one (a last packet) alone */
	for (i = 0; i < n; i = r) {
		lv = len && len[i] < pay ? len[i] : pay;
		r = i + 1;
		if (lv == pay)
			while (r < n && (!len || len[r] >= pay))
				r++;
		sdr_ec_dot_simd(dot, r - i, src + i, 0, lv & ~31U, nout,
				co + i, out, true);
		sdr_ec_dot_tail(r - i, src + i, NULL, lv & ~31U, lv, nout,
				co + i, out);
	}
}

int sdr_ec_encode_rows(u32 kg, u32 j0, u32 nrows, const u8 *const data[],
		       const u32 len[], u32 pay, u8 *const out[])
{
	struct sdr_ec_coefs co;
	u32 i, r, k, t;

	if (!kg || kg > SDR_EC_MAX_K || !nrows || j0 >= SDR_EC_MAX_M ||
	    nrows > SDR_EC_MAX_M - j0)
		return -EINVAL;
	for (i = 0; i < kg; i++)
		if (len[i] > pay)
			return -EINVAL;
	for (r = 0; r < nrows; r += k) {
		k = min(nrows - r, (u32)SDR_EC_BATCH);
		for (i = 0; i < kg; i++)
			for (t = 0; t < k; t++)
				co.off[i][t] = SDR_EC_OFF(sdr_ec_coef(j0 + r + t, i));
		sdr_ec_dot(kg, data, len, pay, k, co.off, out + r, false);
	}
	return 0;
}

int sdr_ec_encode(u32 kg, u32 j, const u8 *const data[], const u32 len[],
		  u32 pay, u8 *out)
{
	return sdr_ec_encode_rows(kg, j, 1, data, len, pay, &out);
}

/*
 * Invert the e x e matrix a (row stride SDR_EC_MAX_M) in place by
 * Gauss-Jordan elimination.  No row exchanges: every leading principal
 * submatrix of a Cauchy matrix is Cauchy, hence nonsingular, so no pivot
 * can be 0.  The check stays so that a wrong matrix fails instead of
 * producing garbage.  Storing the inverse in place works because column k
 * of the reduced matrix is the unit vector e_k once step k is done: its
 * slot is free to hold column k of the inverse.
 */
static int sdr_ec_invert(u8 a[][SDR_EC_MAX_M], u32 e)
{
	u32 k, r, c;

	for (k = 0; k < e; k++) {
		u8 p = a[k][k], pinv;

		if (!p)
			return -EINVAL;
		pinv = sdr_gf_inv(p);
		a[k][k] = 1;
		for (c = 0; c < e; c++)
			a[k][c] = sdr_gf_mul(a[k][c], pinv);
		for (r = 0; r < e; r++) {
			u8 f = a[r][k];

			if (r == k || !f)
				continue;
			a[r][k] = 0;
			for (c = 0; c < e; c++)
				a[r][c] ^= sdr_gf_mul(f, a[k][c]);
		}
	}
	return 0;
}

/*
 * Decode's pass over the data: data[miss[t]] = sum over the kg symbols
 * that arrived (the present data, and parity rows row[0 .. e) standing in
 * for the missing) of D[t][.] times each, where D = Ainv x [C over the
 * present data | I over the parity rows] and Ainv (@a) inverts C over the
 * missing columns.  Eight outputs per pass.  A function of its own so
 * that neither frame holds both this one's tables and @a.
 */
static noinline void sdr_ec_decode_apply(u32 kg, u32 e, u64 have,
					 u8 a[][SDR_EC_MAX_M], const u8 *miss,
					 const u8 *row, u8 *const data[],
					 u8 *const par[], u32 pay)
{
	const u8 *in[SDR_EC_MAX_K];
	struct sdr_ec_coefs co;
	u8 *o[SDR_EC_BATCH], x;
	u32 i, t, tt, k, r, lost;

	for (i = 0, lost = 0; i < kg; i++)
		in[i] = have & BIT_ULL(i) ? data[i] : par[row[lost++]];
	for (t = 0; t < e; t += k) {
		k = min(e - t, (u32)SDR_EC_BATCH);
		for (tt = 0; tt < k; tt++) {
			o[tt] = data[miss[t + tt]];
			for (i = 0, lost = 0; i < kg; i++) {
				if (!(have & BIT_ULL(i))) {
					co.off[i][tt] = SDR_EC_OFF(a[t + tt][lost++]);
					continue;
				}
				for (r = 0, x = 0; r < e; r++)
					x ^= sdr_gf_mul(a[t + tt][r],
							sdr_ec_coef(row[r], i));
				co.off[i][tt] = SDR_EC_OFF(x);
			}
		}
		sdr_ec_dot(kg, in, NULL, pay, k, co.off, o, false);
	}
}

int sdr_ec_decode(u32 kg, u32 m, u64 have, u8 *const data[], u8 *const par[],
		  u32 pay)
{
	u8 a[SDR_EC_MAX_M][SDR_EC_MAX_M];
	u8 miss[SDR_EC_MAX_M], row[SDR_EC_MAX_M];
	u64 all, lost;
	u32 e, n, i, j, r, t;

	if (!kg || kg > SDR_EC_MAX_K || m > SDR_EC_MAX_M)
		return -EINVAL;
	all = kg == 64 ? U64_MAX : BIT_ULL(kg) - 1;
	if (have & ~all)
		return -EINVAL;
	lost = all & ~have;
	if (!lost)
		return 0;

	/*
	 * e parity rows are needed; take the first e that arrived.  e > m
	 * also lands here, as m parity rows can never cover it.
	 */
	e = 0;
	for (i = 0; i < kg; i++)
		if (lost & BIT_ULL(i)) {
			if (e == m)
				return -ENOSPC;
			miss[e++] = (u8)i;
		}
	for (j = 0, n = 0; j < m && n < e; j++)
		if (par[j])
			row[n++] = (u8)j;
	if (n < e)
		return -ENOSPC;

	/* solve first, so that a failure leaves every buffer untouched */
	for (r = 0; r < e; r++)
		for (t = 0; t < e; t++)
			a[r][t] = sdr_ec_coef(row[r], miss[t]);
	if (sdr_ec_invert(a, e))
		return -EINVAL;
	sdr_ec_decode_apply(kg, e, have, a, miss, row, data, par, pay);
	return e;
}
