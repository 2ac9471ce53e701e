/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The replay window of an authenticated flow, in plain C (sdr_compat.h
 * rules).
 *
 * Every packet a flow sends carries a packet number, counted from 1 by
 * the sender and covered by the packet's tag.  The receiver accepts each
 * number once: it keeps the highest number accepted and one bit for each
 * of the SDR_REPLAY_BITS numbers up to it, as IPsec's anti-replay window
 * does (RFC 4303, 3.4.3).  A number at or below the highest one that is
 * marked, or so far below that the window no longer covers it, is a
 * replay.  Paths and rails reorder packets, so the window is wide: a
 * genuine packet overtaken by SDR_REPLAY_BITS later ones is dropped as a
 * replay and recovered like any lost one.
 *
 * Call sdr_replay_check() only for a packet whose tag was verified, so
 * that only the peer moves the window.
 */
#ifndef SDR_REPLAY_H
#define SDR_REPLAY_H

#include "sdr_compat.h"

#define SDR_REPLAY_BITS		4096
#define SDR_REPLAY_WORDS	(SDR_REPLAY_BITS / 64)

struct sdr_replay {
	u64	top;		/* highest number accepted; 0: none yet */
	u64	map[SDR_REPLAY_WORDS];	/* bit n % BITS: n accepted */
};

void sdr_replay_init(struct sdr_replay *r);
/* 0: @pn is new, now marked; -1: a replay (or 0, never sent) */
int sdr_replay_check(struct sdr_replay *r, u64 pn);

#endif /* SDR_REPLAY_H */
