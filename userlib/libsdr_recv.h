/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libsdr_recv: what reading a receive in place offers the SDK's calls.
 */
#ifndef LIBSDR_RECV_H
#define LIBSDR_RECV_H

#include <stdbool.h>
#include <stdint.h>

#include "libsdr_int.h"

/*
 * Every packet holding a byte of [from, to) of the message (clipped to
 * its msg_len) has landed, its bit loaded with acquire; false when the
 * range holds no byte.  The receive has started (sdr_recv_imm() is 0).
 */
bool sdr__recv_chunk_bit(const struct sdr_recv *h, uint64_t bit);
bool sdr__recv_bytes_landed(const struct sdr_recv *h, uint64_t from,
			    uint64_t to);

#endif /* LIBSDR_RECV_H */
