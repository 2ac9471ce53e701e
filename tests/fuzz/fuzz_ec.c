// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the erasure codec.  The input picks a code and a
 * loss pattern: kg, m, pay, the last symbol's length, flags, the have mask,
 * the parity rows that arrived, then the data bytes (a fixed pattern once
 * the input runs out).  The target encodes, erases and decodes.
 * Invariants: -ENOSPC exactly when fewer than kg symbols arrived, and then
 * nothing is written; otherwise every data symbol comes back (zero-padded
 * to pay) and only the first e present parity rows were touched; a stray
 * have bit at or above kg gives -EINVAL and writes nothing.  Each symbol is
 * its own allocation of the exact size, so ASan sees any stray access.
 * The flags pick the codec's implementation (sdr_ec_set_impl: the fastest
 * this CPU has, avx2 where it has it, or scalar); each parity row is also
 * built by scalar (by the fastest when scalar codes) and must be the same
 * bytes.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "sdr_ec.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CANARY		0xa5
#define F_STRAY		0x01	/* set a have bit at or above kg */
/* flags >> 1, mod 3: the implementation that codes */
static const char *const impl_names[] = { "auto", "avx2", "scalar" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	u8 *orig[SDR_EC_MAX_K], *rx[SDR_EC_MAX_K];
	u8 *par[SDR_EC_MAX_M], *prx[SDR_EC_MAX_M], *pptr[SDR_EC_MAX_M];
	u32 len[SDR_EC_MAX_K];
	u32 kg, m, pay, last, flags, pmask, i, j, b, npar = 0, e = 0, used;
	u64 all, have;
	int ret, enospc;
	const char *mine, *other;

	kg = 1 + take(&in, 1) % SDR_EC_MAX_K;
	m = take(&in, 1) % (SDR_EC_MAX_M + 1);
	pay = 1 + take(&in, 1);		/* 1..256: SIMD blocks and tails */
	last = take(&in, 1) % (pay + 1);
	flags = take(&in, 1);
	mine = impl_names[(flags >> 1) % 3];
	if (sdr_ec_set_impl(mine)) {
		mine = "auto";		/* avx2 on a CPU without it */
		if (sdr_ec_set_impl(mine))
			abort();
	}
	other = strcmp(mine, "scalar") ? "scalar" : "auto";
	all = kg == 64 ? ~0ULL : BIT_ULL(kg) - 1;
	have = take(&in, 8) & all;
	pmask = (u32)take(&in, 4) & (m == 32 ? ~0U : (u32)BIT(m) - 1);

	for (i = 0; i < kg; i++) {
		len[i] = i == kg - 1 ? last : pay;
		orig[i] = malloc(len[i] ? len[i] : 1);
		for (b = 0; b < len[i]; b++)
			orig[i][b] = in.n ? (u8)take(&in, 1) :
				     (u8)(i * 67 + b * 131 + 17);
		rx[i] = malloc(pay);
		if (have & BIT_ULL(i)) {
			memcpy(rx[i], orig[i], len[i]);
			memset(rx[i] + len[i], 0, pay - len[i]);
		} else {
			memset(rx[i], CANARY, pay);
			e++;
		}
	}
	/* rows that did not arrive need no encoding: that halves the cost */
	for (j = 0; j < m; j++) {
		pptr[j] = NULL;
		if (!(pmask & BIT(j)))
			continue;
		par[j] = malloc(pay);
		prx[j] = malloc(pay);
		if (sdr_ec_encode(kg, j, (const u8 *const *)orig, len, pay,
				  par[j]))
			abort();
		/* the other implementation: the same bytes */
		if (sdr_ec_set_impl(other) ||
		    sdr_ec_encode_rows(kg, j, 1, (const u8 *const *)orig, len,
				       pay, &prx[j]) ||
		    memcmp(prx[j], par[j], pay) ||
		    sdr_ec_set_impl(mine))
			abort();
		memcpy(prx[j], par[j], pay);
		pptr[j] = prx[j];
		npar++;
	}

	if ((flags & F_STRAY) && kg < 64) {
		if (sdr_ec_decode(kg, m, have | BIT_ULL(kg + flags % (64 - kg)),
				  rx, pptr, pay) != -EINVAL)
			abort();
		goto check_untouched;
	}

	enospc = (u32)__builtin_popcountll(have) + npar < kg;
	ret = sdr_ec_decode(kg, m, have, rx, pptr, pay);
	if (enospc) {
		if (ret != -ENOSPC)
			abort();
		goto check_untouched;
	}
	if (ret != (int)e)
		abort();
	for (i = 0; i < kg; i++) {
		if (memcmp(rx[i], orig[i], len[i]))
			abort();
		for (b = len[i]; b < pay; b++)
			if (rx[i][b])
				abort();
	}
	for (j = 0, used = 0; j < m; j++)
		if (pptr[j] && used++ >= e && memcmp(prx[j], par[j], pay))
			abort();
	goto out;

check_untouched:
	for (i = 0; i < kg; i++)
		if (!(have & BIT_ULL(i)))
			for (b = 0; b < pay; b++)
				if (rx[i][b] != CANARY)
					abort();
	for (j = 0; j < m; j++)
		if (pptr[j] && memcmp(prx[j], par[j], pay))
			abort();
out:
	for (i = 0; i < kg; i++) {
		free(orig[i]);
		free(rx[i]);
	}
	for (j = 0; j < m; j++) {
		if (!pptr[j])
			continue;
		free(par[j]);
		free(prx[j]);
	}
	return 0;
}
