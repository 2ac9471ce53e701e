// SPDX-License-Identifier: GPL-2.0
/*
 * Cauchy Reed-Solomon codec: the field against a shift-and-add reference,
 * every erasure pattern of small codes, random worst-case patterns (exactly
 * m erasures) of the large ones, short symbols and short submessages, bad
 * arguments, each under every implementation this CPU has (sdr_ec_impl:
 * gfni, avx2, scalar).  The implementations against each other and against
 * ISA-L's ec_encode_data() given sdr's coefficients: identical bytes on
 * random geometries, lengths and alignments.  Every buffer is its own
 * malloc of the exact size, so ASan sees any access past a symbol.
 */
#include <isa-l/erasure_code.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tap.h"
#include "tests.h"
#include "sdr_ec.h"

#define CANARY	0xa5

static u64 rng(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* carry-less multiply, reduced by 0x11d one bit at a time */
static u8 ref_mul(u8 a, u8 b)
{
	unsigned int r = 0, x = a;

	while (b) {
		if (b & 1)
			r ^= x;
		b >>= 1;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11d;
	}
	return (u8)r;
}

static void test_ec_gf(void)
{
	unsigned int a, b, bad = 0;

	for (a = 0; a < 256; a++)
		for (b = 0; b < 256; b++)
			if (sdr_gf_mul((u8)a, (u8)b) != ref_mul((u8)a, (u8)b) &&
			    bad++ < 5)
				tap_diag("mul(%u, %u) = %u, want %u", a, b,
					 sdr_gf_mul((u8)a, (u8)b),
					 ref_mul((u8)a, (u8)b));
	CHECK_EQ(bad, 0);
	for (a = 1; a < 256; a++)
		CHECK_EQ(sdr_gf_mul(sdr_gf_inv((u8)a), (u8)a), 1);
	CHECK_EQ(sdr_gf_inv(0), 0);
	CHECK_EQ(sdr_gf_inv(1), 1);
}

/* sdr_ec_nib.h: every entry, both lanes */
static void test_ec_nib_table(void)
{
	u32 c, x, bad = 0;

	for (c = 0; c < 256; c++) {
		const u8 *t = sdr_gf_nib_row((u8)c);

		for (x = 0; x < 16; x++) {
			u8 lo = ref_mul((u8)c, (u8)x);
			u8 hi = ref_mul((u8)c, (u8)(x << 4));

			bad += t[x] != lo || t[x + 16] != lo ||
			       t[x + 32] != hi || t[x + 48] != hi;
		}
	}
	CHECK_EQ(bad, 0);
	/*
	 * GFNI's matrices: gf2p8affineqb(x, A, 0) bit i is the parity of
	 * A's byte 7 - i and x, for every c and x
	 */
	for (c = 0; c < 256; c++) {
		u64 a = sdr_gf_aff_matrix((u8)c);

		for (x = 0; x < 256; x++) {
			u8 y = 0;
			u32 i;

			for (i = 0; i < 8; i++)
				y |= (u8)(__builtin_parity((u32)((a >> (8 * (7 - i))) &
							      x)) << i);
			bad += y != ref_mul((u8)c, (u8)x);
		}
	}
	CHECK_EQ(bad, 0);
	/* the choice of implementation, by name */
	CHECK_EQ(sdr_ec_set_impl("bogus"), -EINVAL);
	CHECK_EQ(sdr_ec_set_impl("scalar"), 0);
	CHECK(!strcmp(sdr_ec_impl(), "scalar"));
	CHECK_EQ(sdr_ec_set_impl("auto"), 0);
	CHECK(!strcmp(sdr_ec_impl(),
		      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("gfni") ?
		      "gfni" : __builtin_cpu_supports("avx2") ? "avx2" : "scalar"));
}

static void test_ec_coef(void)
{
	u32 j, i, bad = 0;

	for (j = 0; j < SDR_EC_MAX_M; j++)
		for (i = 0; i < SDR_EC_MAX_K; i++) {
			u8 c = sdr_ec_coef(j, i);
			u8 x = (u8)(j ^ (SDR_EC_MAX_M + i));

			if (!c || sdr_gf_mul(c, x) != 1)
				bad++;
		}
	CHECK_EQ(bad, 0);
	CHECK_EQ(sdr_ec_coef(SDR_EC_MAX_M, 0), 0);
	CHECK_EQ(sdr_ec_coef(0, SDR_EC_MAX_K), 0);
	/* 1 / (0 ^ 32) = 1 / x^5 = x^250 */
	CHECK_EQ(sdr_gf_mul(sdr_ec_coef(0, 0), 32), 1);
}

/*
 * One submessage: the original symbols (exact length), their parity rows,
 * and the receiver's buffers (pay bytes each) that decode works on.
 */
struct sub {
	u32 kg, m, pay;
	u32 len[SDR_EC_MAX_K];
	u8 *orig[SDR_EC_MAX_K];
	u8 *rx[SDR_EC_MAX_K];
	u8 *par[SDR_EC_MAX_M];
	u8 *prx[SDR_EC_MAX_M];
	u8 *pptr[SDR_EC_MAX_M];
};

static void sub_init(struct sub *s, u32 kg, u32 m, u32 pay, u32 last_len,
		     u64 *seed)
{
	u32 i, b;

	memset(s, 0, sizeof(*s));
	s->kg = kg;
	s->m = m;
	s->pay = pay;
	for (i = 0; i < kg; i++) {
		s->len[i] = i == kg - 1 ? last_len : pay;
		s->orig[i] = malloc(s->len[i] ? s->len[i] : 1);
		for (b = 0; b < s->len[i]; b++)
			s->orig[i][b] = (u8)rng(seed);
		s->rx[i] = malloc(pay);
	}
	for (i = 0; i < m; i++) {
		s->par[i] = malloc(pay);
		s->prx[i] = malloc(pay);
		if (sdr_ec_encode(kg, i, (const u8 *const *)s->orig, s->len,
				  pay, s->par[i]))
			tap_diag("encode (%u, %u) row %u failed", kg, m, i);
	}
}

static void sub_free(struct sub *s)
{
	u32 i;

	for (i = 0; i < s->kg; i++) {
		free(s->orig[i]);
		free(s->rx[i]);
	}
	for (i = 0; i < s->m; i++) {
		free(s->par[i]);
		free(s->prx[i]);
	}
}

/* symbol i as the receiver holds it: zero-padded to pay */
static int sym_eq(const struct sub *s, u32 i, const u8 *buf)
{
	u32 b;

	if (memcmp(buf, s->orig[i], s->len[i]))
		return 0;
	for (b = s->len[i]; b < s->pay; b++)
		if (buf[b])
			return 0;
	return 1;
}

static int all_canary(const u8 *buf, u32 n)
{
	while (n--)
		if (*buf++ != CANARY)
			return 0;
	return 1;
}

/*
 * Receive the data symbols in have and the parity rows in pmask, decode,
 * and check the result.  Returns 0 if all is well, else a short reason.
 */
static const char *sub_try(struct sub *s, u64 have, u32 pmask)
{
	u32 i, j, npar = 0, e = 0, used = 0;
	int ret, enospc;

	for (i = 0; i < s->kg; i++) {
		if (have & BIT_ULL(i)) {
			memcpy(s->rx[i], s->orig[i], s->len[i]);
			memset(s->rx[i] + s->len[i], 0, s->pay - s->len[i]);
		} else {
			memset(s->rx[i], CANARY, s->pay);
			e++;
		}
	}
	for (j = 0; j < s->m; j++) {
		if (pmask & BIT(j)) {
			memcpy(s->prx[j], s->par[j], s->pay);
			s->pptr[j] = s->prx[j];
			npar++;
		} else {
			s->pptr[j] = NULL;
		}
	}
	enospc = __builtin_popcountll(have) + npar < s->kg;
	ret = sdr_ec_decode(s->kg, s->m, have, s->rx, s->pptr, s->pay);
	if (enospc) {
		if (ret != -ENOSPC)
			return "want -ENOSPC";
		for (i = 0; i < s->kg; i++)
			if (!(have & BIT_ULL(i)) &&
			    !all_canary(s->rx[i], s->pay))
				return "-ENOSPC but data was written";
		for (j = 0; j < s->m; j++)
			if (s->pptr[j] &&
			    memcmp(s->prx[j], s->par[j], s->pay))
				return "-ENOSPC but parity was written";
		return NULL;
	}
	if (ret != (int)e)
		return "wrong count recovered";
	for (i = 0; i < s->kg; i++)
		if (!sym_eq(s, i, s->rx[i]))
			return "data differs";
	/* only the first e present rows may serve as scratch */
	for (j = 0; j < s->m; j++) {
		if (!s->pptr[j])
			continue;
		if (used++ >= e && memcmp(s->prx[j], s->par[j], s->pay))
			return "an unused parity row was written";
	}
	return NULL;
}

static void test_ec_exhaustive(void)
{
	static const u32 km[][2] = { {1, 1}, {3, 1}, {4, 2}, {5, 3}, {6, 4} };
	u64 seed = 0x1234567887654321ULL;
	u32 n, fails = 0, runs = 0;

	for (n = 0; n < ARRAY_SIZE(km); n++) {
		u32 kg = km[n][0], m = km[n][1];
		/* odd pay: the word loop and the byte tail both run */
		u32 pay = 37, last;

		for (last = pay - 9; last <= pay; last += 9) {
			const char *why;
			struct sub s;
			u64 have;
			u32 pmask;

			sub_init(&s, kg, m, pay, last, &seed);
			for (have = 0; have < BIT_ULL(kg); have++)
				for (pmask = 0; pmask < BIT(m); pmask++) {
					why = sub_try(&s, have, pmask);
					runs++;
					if (!why || fails++ >= 5)
						continue;
					tap_diag("(%u, %u) last %u have %#llx par %#x: %s",
						 kg, m, last,
						 (unsigned long long)have,
						 pmask, why);
				}
			sub_free(&s);
		}
	}
	CHECK_EQ(fails, 0);
	CHECK_EQ(runs, 2 * (2 * 2 + 8 * 2 + 16 * 4 + 32 * 8 + 64 * 16));
}

/* Erase exactly `lose` of the kg + m symbols, chosen at random. */
static void random_erasure(u32 kg, u32 m, u32 lose, u64 *seed, u64 *have,
			   u32 *pmask)
{
	u32 n = kg + m, k = 0;

	*have = kg == 64 ? ~0ULL : BIT_ULL(kg) - 1;
	*pmask = m == 32 ? ~0U : (u32)BIT(m) - 1;
	while (k < lose) {
		u32 x = (u32)(rng(seed) % n);

		if (x < kg) {
			if (!(*have & BIT_ULL(x)))
				continue;
			*have &= ~BIT_ULL(x);
		} else {
			if (!(*pmask & BIT(x - kg)))
				continue;
			*pmask &= ~(u32)BIT(x - kg);
		}
		k++;
	}
}

static void run_random(u32 kg, u32 m, u32 pay, u32 last, u32 iters,
		       u32 lose_max, u64 *seed)
{
	struct sub s;
	u32 it, fails = 0;

	sub_init(&s, kg, m, pay, last, seed);
	for (it = 0; it < iters; it++) {
		u32 lose = lose_max ? (u32)(rng(seed) % (lose_max + 1)) : m;
		const char *why;
		u32 pmask;
		u64 have;

		random_erasure(kg, m, lose, seed, &have, &pmask);
		why = sub_try(&s, have, pmask);
		if (why && fails++ < 5)
			tap_diag("(%u, %u) pay %u have %#llx par %#x: %s", kg,
				 m, pay, (unsigned long long)have, pmask, why);
	}
	sub_free(&s);
	CHECK_EQ(fails, 0);
}

static void test_ec_random_large(void)
{
	u64 seed = 0xfeedfacecafebeefULL;

	/* every loss pattern here leaves exactly kg symbols */
	run_random(32, 8, 4056, 1001, 40, 0, &seed);
	run_random(64, 32, 4056, 4055, 8, 0, &seed);
	run_random(10, 4, 4056, 1, 60, 0, &seed);
	/* 64 data symbols, no parity to spare: the full-mask edge */
	run_random(64, 1, 100, 7, 40, 0, &seed);
}

/*
 * A short last submessage (kg = 7 of k = 64) uses the same rows as a full
 * one whose missing symbols are zero, and decodes with up to m losses.
 */
static void test_ec_short_submsg(void)
{
	u64 seed = 0x0badc0de0badc0deULL;
	const u8 *full[SDR_EC_MAX_K];
	u32 flen[SDR_EC_MAX_K], j;
	u8 out[512];
	struct sub s;

	sub_init(&s, 7, 8, 512, 300, &seed);
	memset(full, 0, sizeof(full));
	memset(flen, 0, sizeof(flen));
	memcpy(full, s.orig, 7 * sizeof(full[0]));
	memcpy(flen, s.len, sizeof(s.len[0]) * 7);
	for (j = 0; j < 8; j++) {
		CHECK_EQ(sdr_ec_encode(64, j, full, flen, 512, out), 0);
		CHECK(!memcmp(out, s.par[j], 512));
	}
	sub_free(&s);
	run_random(7, 8, 512, 300, 3000, 15, &seed);
	run_random(7, 8, 61, 61, 3000, 15, &seed);
	run_random(2, 32, 64, 3, 3000, 34, &seed);
}

static void test_ec_bad_args(void)
{
	u8 d0[16], d1[16], out[16], p0[16], ref[16];
	const u8 *cdata[2] = { d0, d1 };
	u8 *data[2] = { d0, d1 };
	u8 *par[SDR_EC_MAX_K];	/* also serves as 64 data pointers */
	u32 len[2] = { 16, 16 };
	u32 i;

	for (i = 0; i < 16; i++) {
		d0[i] = (u8)i;
		d1[i] = (u8)(3 * i + 1);
	}
	memset(out, CANARY, sizeof(out));
	CHECK_EQ(sdr_ec_encode(0, 0, cdata, len, 16, out), -EINVAL);
	CHECK_EQ(sdr_ec_encode(SDR_EC_MAX_K + 1, 0, cdata, len, 16, out),
		 -EINVAL);
	CHECK_EQ(sdr_ec_encode(2, SDR_EC_MAX_M, cdata, len, 16, out), -EINVAL);
	CHECK_EQ(sdr_ec_encode(2, 0, cdata, len, 15, out), -EINVAL);
	len[1] = 17;
	CHECK_EQ(sdr_ec_encode(2, 0, cdata, len, 16, out), -EINVAL);
	CHECK(all_canary(out, sizeof(out)));
	len[1] = 16;
	CHECK_EQ(sdr_ec_encode(2, 0, cdata, len, 16, p0), 0);
	memcpy(ref, p0, sizeof(ref));

	for (i = 0; i < ARRAY_SIZE(par); i++)
		par[i] = p0;
	memset(d1, CANARY, sizeof(d1));
	CHECK_EQ(sdr_ec_decode(0, 1, 0, data, par, 16), -EINVAL);
	CHECK_EQ(sdr_ec_decode(SDR_EC_MAX_K + 1, 1, 1, data, par, 16),
		 -EINVAL);
	CHECK_EQ(sdr_ec_decode(2, SDR_EC_MAX_M + 1, 1, data, par, 16),
		 -EINVAL);
	/* a present bit at or above kg */
	CHECK_EQ(sdr_ec_decode(2, 1, 1 | BIT_ULL(2), data, par, 16), -EINVAL);
	CHECK_EQ(sdr_ec_decode(2, 1, BIT_ULL(63), data, par, 16), -EINVAL);
	CHECK(all_canary(d1, sizeof(d1)));
	CHECK(!memcmp(p0, ref, sizeof(ref)));
	/* nothing missing: 0, even without any parity */
	CHECK_EQ(sdr_ec_decode(1, 0, 1, data, par, 16), 0);
	CHECK_EQ(sdr_ec_decode(64, 0, ~0ULL, (u8 *const *)par, par, 16), 0);
	/* more lost than m rows could ever cover */
	CHECK_EQ(sdr_ec_decode(64, SDR_EC_MAX_M, 0, (u8 *const *)par, par, 16),
		 -ENOSPC);
	CHECK(!memcmp(p0, ref, sizeof(ref)));
	/* missing with m = 0 */
	CHECK_EQ(sdr_ec_decode(2, 0, 1, data, par, 16), -ENOSPC);
	CHECK(all_canary(d1, sizeof(d1)));
	/* and the real thing still works on these buffers */
	CHECK_EQ(sdr_ec_decode(2, 1, 1, data, par, 16), 1);
	for (i = 0; i < 16; i++)
		CHECK_EQ(d1[i], (u8)(3 * i + 1));
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Rough numbers only: this binary is built with ASan and UBSan. */
static void test_ec_throughput(void)
{
	u64 seed = 42;
	struct sub s;
	double t0, dt;
	u32 it = 0, j;
	u64 have;
	u32 pmask;

	sub_init(&s, 32, 8, 4056, 4056, &seed);
	t0 = now_s();
	do {
		for (j = 0; j < 8; j++)
			CHECK_EQ(sdr_ec_encode(32, j, (const u8 *const *)s.orig,
					       s.len, 4056, s.par[j]), 0);
		it++;
		dt = now_s() - t0;
	} while (dt < 0.3);
	tap_diag("ec encode (32,8): %.0f MB/s", it * 32.0 * 4056 / dt / 1e6);

	random_erasure(32, 8, 8, &seed, &have, &pmask);
	it = 0;
	t0 = now_s();
	do {
		CHECK(!sub_try(&s, have, pmask));
		it++;
		dt = now_s() - t0;
	} while (dt < 0.3);
	tap_diag("ec decode (32,8), %d of 32 data lost: %.0f MB/s",
		 32 - __builtin_popcountll(have),
		 it * 32.0 * 4056 / dt / 1e6);
	sub_free(&s);
}

static const char *const impls[] = { "gfni", "avx2", "scalar" };

/* Run @fn under each implementation this CPU has; say which ran. */
static void each_impl(void (*fn)(void))
{
	u32 i, ran = 0;

	for (i = 0; i < ARRAY_SIZE(impls); i++) {
		int ret = sdr_ec_set_impl(impls[i]);

		if (ret == -EOPNOTSUPP) {
			tap_diag("%s: not on this CPU", impls[i]);
			continue;
		}
		CHECK_EQ(ret, 0);
		CHECK(!strcmp(sdr_ec_impl(), impls[i]));
		fn();
		ran++;
	}
	CHECK(ran > 0);
	sdr_ec_init();
}

static void test_ec_exhaustive_all(void)
{
	each_impl(test_ec_exhaustive);
}

static void test_ec_random_large_all(void)
{
	each_impl(test_ec_random_large);
}

static void test_ec_short_submsg_all(void)
{
	each_impl(test_ec_short_submsg);
}

static void test_ec_bad_args_all(void)
{
	each_impl(test_ec_bad_args);
}

/*
 * Random geometry, packet size (1..5000: under 32 bytes, not a multiple
 * of 32), short symbols anywhere and buffers at odd addresses: parity
 * from sdr_ec_encode_rows() under every implementation, from
 * sdr_ec_encode() row by row, and from ISA-L, all the same; decode of a
 * random loss pattern the same under every implementation.
 */
static void test_ec_impls_identical(void)
{
	u64 seed = 0x5eed5eed12345678ULL;
	u32 it, fails = 0, avx2 = !sdr_ec_set_impl("avx2");

	if (!avx2)
		tap_diag("avx2: not on this CPU; scalar against ISA-L only");
	for (it = 0; it < 300; it++) {
		u32 kg = 1 + (u32)(rng(&seed) % SDR_EC_MAX_K);
		u32 m = 1 + (u32)(rng(&seed) % SDR_EC_MAX_M);
		u32 pay = 1 + (u32)(rng(&seed) % 5000), i, j, b, x;
		u8 *raw[SDR_EC_MAX_K], *d[SDR_EC_MAX_K], *full[SDR_EC_MAX_K];
		u8 *par[2][SDR_EC_MAX_M], *row1[SDR_EC_MAX_M], *ip[SDR_EC_MAX_M];
		u8 *rx[2][SDR_EC_MAX_K];
		u8 coef[SDR_EC_MAX_M * SDR_EC_MAX_K];
		u8 *tbls = malloc(32 * SDR_EC_MAX_M * SDR_EC_MAX_K);
		u32 len[SDR_EC_MAX_K];
		u32 pmask;
		u64 have;
		int bad = 0;

		for (i = 0; i < kg; i++) {
			x = (u32)(rng(&seed) % 4);
			len[i] = x ? pay : (u32)(rng(&seed) % (pay + 1));
			raw[i] = malloc(len[i] + 8);
			d[i] = raw[i] + (rng(&seed) % 8);
			for (b = 0; b < len[i]; b++)
				d[i][b] = (u8)rng(&seed);
			full[i] = calloc(1, pay);	/* zero-padded, for ISA-L */
			memcpy(full[i], d[i], len[i]);
		}
		for (j = 0; j < m; j++) {
			par[0][j] = malloc(pay);
			par[1][j] = malloc(pay);
			row1[j] = malloc(pay);
			ip[j] = malloc(pay);
			for (i = 0; i < kg; i++)
				coef[j * kg + i] = sdr_ec_coef(j, i);
		}
		for (x = 0; x < 2; x++) {
			if (sdr_ec_set_impl(impls[x]))
				continue;
			CHECK_EQ(sdr_ec_encode_rows(kg, 0, m, (const u8 *const *)d,
						    len, pay, par[x]), 0);
		}
		if (!avx2)
			for (j = 0; j < m; j++)
				memcpy(par[0][j], par[1][j], pay);
		for (j = 0; j < m; j++)
			CHECK_EQ(sdr_ec_encode(kg, j, (const u8 *const *)d, len,
					       pay, row1[j]), 0);
		ec_init_tables((int)kg, (int)m, coef, tbls);
		ec_encode_data((int)pay, (int)kg, (int)m, tbls, full, ip);
		for (j = 0; j < m; j++)
			bad |= memcmp(par[0][j], ip[j], pay) ||
			       memcmp(par[1][j], ip[j], pay) ||
			       memcmp(row1[j], ip[j], pay);

		/* decode: up to m of the kg + m lost, both implementations */
		random_erasure(kg, m, (u32)(rng(&seed) % (m + 1)), &seed, &have,
			       &pmask);
		for (x = 0; x < 2; x++) {
			u8 *pp[SDR_EC_MAX_M];
			int ret;

			for (i = 0; i < kg; i++) {
				rx[x][i] = malloc(pay);
				if (have & BIT_ULL(i))
					memcpy(rx[x][i], full[i], pay);
				else
					memset(rx[x][i], CANARY, pay);
			}
			for (j = 0; j < m; j++)
				pp[j] = pmask & BIT(j) ? ip[j] : NULL;
			if (sdr_ec_set_impl(impls[x]))
				continue;
			ret = sdr_ec_decode(kg, m, have, rx[x], pp, pay);
			bad |= ret != (int)(kg - __builtin_popcountll(have));
			for (i = 0; i < kg; i++)
				bad |= memcmp(rx[x][i], full[i], pay) != 0;
		}
		for (i = 0; i < kg; i++) {
			free(rx[0][i]);
			free(rx[1][i]);
			free(raw[i]);
			free(full[i]);
		}
		for (j = 0; j < m; j++) {
			free(par[0][j]);
			free(par[1][j]);
			free(row1[j]);
			free(ip[j]);
		}
		free(tbls);
		if (bad && fails++ < 5)
			tap_diag("(%u, %u) pay %u: outputs differ", kg, m, pay);
	}
	sdr_ec_init();
	CHECK_EQ(fails, 0);
}

void test_ec(void)
{
	tap_diag("codec: %s", sdr_ec_impl());
	TAP_RUN(test_ec_gf);
	TAP_RUN(test_ec_coef);
	TAP_RUN(test_ec_nib_table);
	TAP_RUN(test_ec_exhaustive_all);
	TAP_RUN(test_ec_random_large_all);
	TAP_RUN(test_ec_short_submsg_all);
	TAP_RUN(test_ec_bad_args_all);
	TAP_RUN(test_ec_impls_identical);
	TAP_RUN(test_ec_throughput);
}
