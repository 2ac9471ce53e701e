/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libsdr_ring: what the completion ring offers contexts and flows.
 */
#ifndef LIBSDR_RING_H
#define LIBSDR_RING_H

#include "libsdr_int.h"

int sdr__ring_map(struct sdr_ctx *ctx, const struct sdr_bind *b);
void sdr__ring_unmap(struct sdr_ctx *ctx);
void sdr__ring_drop_flow(struct sdr_ctx *ctx, struct sdr_flow *flow);

#endif /* LIBSDR_RING_H */
