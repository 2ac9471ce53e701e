/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Receive credits of NONE messages, in plain C (sdr_compat.h rules).
 *
 * NONE never resends, so a packet the receiver had no room for is lost
 * for good.  The receiver therefore grants two limits, in CREDIT packets:
 *
 *  - a message limit: messages numbered before it have a receive posted
 *    (the receiver's next receive sequence number), and
 *  - a packet limit: NONE packets are numbered per flow (psn, in the DATA
 *    header's aux) and those before the limit may be sent.  The limit is
 *    the number after the highest packet the receiver has processed plus
 *    its window, advertised in its endpoint.
 *
 * A sender that waits for either limit probes (PROBE, carrying its next
 * psn) with a backoff from the flow's RTO; the receiver answers with a
 * CREDIT.  A probe travels behind every packet sent before it, so when it
 * arrives those packets have arrived or are lost: the receiver counts all
 * of them as processed, and lost packets never hold the window.
 *
 * Numbers compare as serial numbers (RFC 1982): a before b iff
 * (s32)(a - b) < 0.
 */
#ifndef SDR_CREDIT_H
#define SDR_CREDIT_H

#include "sdr_compat.h"

/* the range of a flow's window (packets), endpoint and module parameter */
#define SDR_CREDIT_WIN_MIN	16
#define SDR_CREDIT_WIN_MAX	16384

static inline bool sdr_seq_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

/* Sender side of one flow. */
struct sdr_credit_tx {
	u32	window;		/* the peer's, from its endpoint */
	u32	psn;		/* number of the next NONE packet */
	u32	limit;		/* packets before it may be sent */
	u32	msg_limit;	/* messages before it have a receive */
	u64	wait_ns;	/* since when a message waits, 0 if none does */
	u64	probe_ns;	/* when the next probe is due */
	u64	backoff_ns;	/* the interval after it */
	u64	waits;		/* times a message started to wait */
	u64	probes;		/* probes sent */
	u64	bad;		/* CREDITs no true receiver could send */
};

/* Receiver side of one flow. */
struct sdr_credit_rx {
	u32	window;		/* ours, advertised in our endpoint */
	u32	next;		/* after the highest packet number processed */
	u32	limit;		/* the highest packet limit granted */
	u64	grants;		/* CREDITs sent */
	u64	bad;		/* packets or probes beyond what was granted */
};

/* why a NONE packet may not go now */
enum sdr_credit_wait {
	SDR_CREDIT_GO = 0,
	SDR_CREDIT_NO_RECV,	/* its message has no receive posted */
	SDR_CREDIT_NO_WINDOW,	/* the packet window is full */
};

void sdr_credit_tx_init(struct sdr_credit_tx *tx, u32 peer_window, u32 seq0);
int sdr_credit_tx_check(const struct sdr_credit_tx *tx, u32 msg_seq);
u32 sdr_credit_tx_take(struct sdr_credit_tx *tx);
void sdr_credit_tx_wait(struct sdr_credit_tx *tx, u64 now, u64 rto_ns);
void sdr_credit_tx_idle(struct sdr_credit_tx *tx);
bool sdr_credit_tx_probe_due(struct sdr_credit_tx *tx, u64 now, u64 cap_ns,
			     u32 *psn);
int sdr_credit_tx_grant(struct sdr_credit_tx *tx, u32 msg_limit, u32 limit);

/* When the sender must act next: its next probe, or U64_MAX. */
static inline u64 sdr_credit_tx_deadline(const struct sdr_credit_tx *tx)
{
	return tx->wait_ns ? tx->probe_ns : U64_MAX;
}

void sdr_credit_rx_init(struct sdr_credit_rx *rx, u32 window);
int sdr_credit_rx_data(struct sdr_credit_rx *rx, u32 psn);
int sdr_credit_rx_probe(struct sdr_credit_rx *rx, u32 psn);
u32 sdr_credit_rx_grant(struct sdr_credit_rx *rx);

#endif /* SDR_CREDIT_H */
