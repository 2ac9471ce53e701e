// SPDX-License-Identifier: GPL-2.0
/*
 * The replay window of an authenticated flow: see sdr_replay.h.  Unit
 * tested in tests/host/test_replay.c.
 */
#include "sdr_replay.h"

void sdr_replay_init(struct sdr_replay *r)
{
	memset(r, 0, sizeof(*r));
}

static u64 *sdr_replay_word(struct sdr_replay *r, u64 pn)
{
	return &r->map[(pn / 64) % SDR_REPLAY_WORDS];
}

int sdr_replay_check(struct sdr_replay *r, u64 pn)
{
	u64 bit = 1ULL << (pn % 64);
	u64 *w;

	if (!pn)
		return -1;
	if (pn > r->top) {
		u64 from = r->top / 64 + 1, to = pn / 64, i;

		/* clear the words the window slides over, at most all */
		if (to - r->top / 64 >= SDR_REPLAY_WORDS)
			memset(r->map, 0, sizeof(r->map));
		else
			for (i = from; i <= to; i++)
				*sdr_replay_word(r, i * 64) = 0;
		r->top = pn;
		*sdr_replay_word(r, pn) |= bit;
		return 0;
	}
	/* the word of top is shared with numbers above the window's end */
	if (r->top - pn >= SDR_REPLAY_BITS - 64)
		return -1;
	w = sdr_replay_word(r, pn);
	if (*w & bit)
		return -1;
	*w |= bit;
	return 0;
}
