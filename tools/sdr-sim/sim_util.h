/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the one-flow simulation (sim.c) and the shared-bottleneck one
 * (sim_load.c) both use: a growable FIFO of fixed-size entries and the
 * random numbers (splitmix64), so a seed gives the same run everywhere.
 */
#ifndef SDR_SIM_UTIL_H
#define SDR_SIM_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ring {
	void	*v;
	size_t	esz, cap, head, len;
};

/* A new entry at the tail (exits on allocation failure: a tool). */
static inline void *ring_push(struct ring *r)
{
	if (r->len == r->cap) {
		size_t ncap = r->cap ? 2 * r->cap : 4096, i;
		char *nv = malloc(ncap * r->esz);

		if (!nv) {
			perror("sdr-sim");
			exit(1);
		}
		for (i = 0; i < r->len; i++)
			memcpy(nv + i * r->esz,
			       (char *)r->v + ((r->head + i) % r->cap) * r->esz, r->esz);
		free(r->v);
		r->v = nv;
		r->cap = ncap;
		r->head = 0;
	}
	return (char *)r->v + ((r->head + r->len++) % r->cap) * r->esz;
}

/* The head, NULL when empty. */
static inline void *ring_front(struct ring *r)
{
	return r->len ? (char *)r->v + r->head * r->esz : NULL;
}

static inline void ring_pop(struct ring *r)
{
	r->head = (r->head + 1) % r->cap;
	r->len--;
}

/* splitmix64: the next number of the stream *@state */
static inline uint64_t sim_rnd(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* uniform in [0, 1) */
static inline double sim_rndf(uint64_t *state)
{
	return (sim_rnd(state) >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * A link direction's loss process: independent drops of probability
 * loss, or with burst > 1 Gilbert-Elliott bursts of that mean length
 * and the same long-run rate.
 */
struct sim_drop {
	double	loss, burst;
	double	p_gb, p_bg;	/* the transitions good -> bad, bad -> good */
};

static inline void sim_drop_init(struct sim_drop *d, double loss, double burst)
{
	d->loss = loss;
	d->burst = burst;
	d->p_gb = d->p_bg = 0;
	if (burst > 1 && loss > 0 && loss < 1) {
		d->p_bg = 1.0 / burst;
		d->p_gb = loss * d->p_bg / (1.0 - loss);
	}
}

/* Whether the next packet is dropped; *@bad is the link's burst state. */
static inline int sim_drop(const struct sim_drop *d, uint64_t *rng, int *bad)
{
	if (d->loss <= 0)
		return 0;
	if (d->burst <= 1)
		return sim_rndf(rng) < d->loss;
	if (*bad ? sim_rndf(rng) < d->p_bg : sim_rndf(rng) < d->p_gb)
		*bad = !*bad;
	return *bad;
}

#endif /* SDR_SIM_UTIL_H */
