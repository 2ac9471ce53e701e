/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Erasure-coding codec: a systematic MDS code, Cauchy Reed-Solomon over
 * GF(2^8).  A submessage is kg <= SDR_EC_MAX_K data symbols (packets of
 * pay bytes, the last one possibly short and read as zero-padded) and m <=
 * SDR_EC_MAX_M parity symbols; any kg of the kg + m symbols give back the
 * data.  Parity row j is the same linear form whatever kg and m are, so a
 * short last submessage (kg < k) and a flow that sends fewer parity rows
 * need no other matrix.  Callers own all buffers; nothing here allocates
 * or locks.  Stack: under 2 KiB (decode's 32 x 32 matrix, an 8 x 64
 * coefficient block, a 256-byte product table).
 */
#ifndef SDR_EC_H
#define SDR_EC_H

#include "sdr_compat.h"

#define SDR_EC_MAX_K	64	/* data symbols per submessage */
#define SDR_EC_MAX_M	32	/* parity symbols per submessage */

/* Whether k data and m parity symbols per submessage is a code this has. */
static inline bool sdr_ec_geometry_ok(u32 k, u32 m)
{
	return k && k <= SDR_EC_MAX_K && m && m <= SDR_EC_MAX_M;
}

/* GF(2^8), polynomial x^8+x^4+x^3+x^2+1 (0x11d) */
u8 sdr_gf_mul(u8 a, u8 b);
u8 sdr_gf_inv(u8 a);		/* a != 0; returns 0 for 0 */

/*
 * Cauchy coefficient of parity row j (0..SDR_EC_MAX_M-1) for data column i
 * (0..SDR_EC_MAX_K-1): 1 / (x_j + y_i) with x_j = j, y_i = SDR_EC_MAX_M + i.
 * Rows do not depend on k or m, so any kg <= 64 data symbols and any subset
 * of rows give a nonsingular Cauchy submatrix: MDS for every (kg, m).
 * Returns 0 (never a coefficient) if j or i is out of range.
 */
u8 sdr_ec_coef(u32 j, u32 i);

/*
 * The codec's implementation: "gfni" (where the CPU has GFNI and AVX2),
 * "avx2" (AVX2) or "scalar"; every one gives the same bytes.  sdr_ec_init() picks the
 * fastest this CPU has (sdr_ec_set_impl("auto")); until something picks,
 * it is "scalar".  A call codes with the one in use when it started, so
 * switching while other threads code is safe.
 */
void sdr_ec_init(void);
const char *sdr_ec_impl(void);
/* 0; -EOPNOTSUPP if this CPU lacks @name; -EINVAL if there is none */
int sdr_ec_set_impl(const char *name);
/* c's split-nibble product tables (sdr_ec_nib.h), for the tests */
const u8 *sdr_gf_nib_row(u8 c);
/* c's GFNI affine matrix (sdr_ec_aff.h), for the tests */
u64 sdr_gf_aff_matrix(u8 c);

/*
 * out (pay bytes) = parity row j over the kg data symbols data[i], each
 * len[i] <= pay bytes, treated as zero-padded to pay.  data[i] may be NULL
 * if len[i] is 0.  -EINVAL on bad args (kg 0 or > SDR_EC_MAX_K,
 * j >= SDR_EC_MAX_M, len > pay), else 0.
 */
int sdr_ec_encode(u32 kg, u32 j, const u8 *const data[], const u32 len[],
		  u32 pay, u8 *out);

/*
 * out[r] (pay bytes each) = parity row j0 + r for r < nrows, all in one
 * pass over the data (eight rows per pass at most); data and len as for
 * sdr_ec_encode().  -EINVAL on bad args (nrows 0, j0 + nrows >
 * SDR_EC_MAX_M, or as sdr_ec_encode()), else 0.
 */
int sdr_ec_encode_rows(u32 kg, u32 j0, u32 nrows, const u8 *const data[],
		       const u32 len[], u32 pay, u8 *const out[]);

/*
 * Recover the missing data symbols of one submessage.  kg data symbols,
 * m parity rows.  Bit i of have set = data[i] holds symbol i (pay bytes,
 * zero-padded by the caller if the symbol is short); clear = data[i] is a
 * pay-byte output buffer to fill (a short symbol comes back zero-padded).
 * par[j] (j < m) is parity row j (pay bytes) or NULL if it did not arrive.
 * The first e present parity rows (e = number of missing symbols) are
 * read, none is written; no other memory is needed.  The e outputs are
 * built together, eight per pass over the kg symbols that arrived.
 * Returns the number of symbols recovered (0 if none missing), -EINVAL
 * on bad arguments (kg 0 or > SDR_EC_MAX_K, m > SDR_EC_MAX_M, a bit of
 * have at or above kg), -ENOSPC if popcount(have) + parity present < kg.
 * Nothing is written when an error is returned.
 */
int sdr_ec_decode(u32 kg, u32 m, u64 have, u8 *const data[], u8 *const par[],
		  u32 pay);

#endif /* SDR_EC_H */
