// SPDX-License-Identifier: GPL-2.0
/*
 * Receive credits of NONE messages (sdr_credit.h explains the scheme).
 * No locking, no clock: the caller holds its flow's lock and passes now.
 */
#include "sdr_credit.h"

void sdr_credit_tx_init(struct sdr_credit_tx *tx, u32 peer_window, u32 seq0)
{
	memset(tx, 0, sizeof(*tx));
	tx->window = peer_window;
	tx->limit = peer_window;
	/* no receive of the peer is known until its first CREDIT */
	tx->msg_limit = seq0;
}

int sdr_credit_tx_check(const struct sdr_credit_tx *tx, u32 msg_seq)
{
	if (!sdr_seq_before(msg_seq, tx->msg_limit))
		return SDR_CREDIT_NO_RECV;
	if (!sdr_seq_before(tx->psn, tx->limit))
		return SDR_CREDIT_NO_WINDOW;
	return SDR_CREDIT_GO;
}

/* The number of the NONE packet about to be sent (check() said GO). */
u32 sdr_credit_tx_take(struct sdr_credit_tx *tx)
{
	tx->wait_ns = 0;
	return tx->psn++;
}

/* A message waits for credit: the first probe is due one RTO from now. */
void sdr_credit_tx_wait(struct sdr_credit_tx *tx, u64 now, u64 rto_ns)
{
	if (tx->wait_ns)
		return;
	tx->wait_ns = now ? now : 1;
	tx->backoff_ns = rto_ns ? rto_ns : 1;
	tx->probe_ns = now + tx->backoff_ns;
	tx->waits++;
}

/* No message waits any more (all sent, or flushed). */
void sdr_credit_tx_idle(struct sdr_credit_tx *tx)
{
	tx->wait_ns = 0;
}

/*
 * Is a probe due at @now?  Then *psn is what it carries, and the next one
 * comes after twice the interval, at most @cap_ns.
 */
bool sdr_credit_tx_probe_due(struct sdr_credit_tx *tx, u64 now, u64 cap_ns,
			     u32 *psn)
{
	if (!tx->wait_ns || now < tx->probe_ns)
		return false;
	if (!cap_ns)
		cap_ns = tx->backoff_ns;
	*psn = tx->psn;
	tx->probes++;
	tx->probe_ns = now + min(tx->backoff_ns, cap_ns);
	tx->backoff_ns = min(tx->backoff_ns * 2, cap_ns);
	return true;
}

/*
 * A CREDIT: 1 if it raised a limit, 0 if it said nothing new (a late or
 * duplicate copy), -EPROTO if no true receiver could send it.  A receiver
 * grants its window past the packets it processed, and it cannot have
 * processed packets this side never numbered: a limit beyond psn + window
 * is a lie.  The message limit is the receiver's own business (it may post
 * and abandon receives before anything was sent), so any later one goes.
 */
int sdr_credit_tx_grant(struct sdr_credit_tx *tx, u32 msg_limit, u32 limit)
{
	int raised = 0;

	if (sdr_seq_before(tx->psn + tx->window, limit)) {
		tx->bad++;
		return -EPROTO;
	}
	if (sdr_seq_before(tx->limit, limit)) {
		tx->limit = limit;
		raised = 1;
	}
	if (sdr_seq_before(tx->msg_limit, msg_limit)) {
		tx->msg_limit = msg_limit;
		raised = 1;
	}
	/* a raised limit ends the wait; the next refusal starts a new one */
	if (raised)
		tx->wait_ns = 0;
	return raised;
}

void sdr_credit_rx_init(struct sdr_credit_rx *rx, u32 window)
{
	memset(rx, 0, sizeof(*rx));
	rx->window = window;
	rx->limit = window;
}

/* Is a quarter of the window processed since the last grant? */
static bool sdr_credit_rx_due(const struct sdr_credit_rx *rx)
{
	return rx->next + rx->window - rx->limit >= rx->window / 4;
}

/*
 * A NONE packet numbered @psn was processed (landed or dropped: either
 * way it is off the receive queue).  -EPROTO if the sender was never
 * granted it; else 1 when a CREDIT is due, 0 when not yet.
 */
int sdr_credit_rx_data(struct sdr_credit_rx *rx, u32 psn)
{
	if (!sdr_seq_before(psn, rx->limit)) {
		rx->bad++;
		return -EPROTO;
	}
	if (!sdr_seq_before(psn, rx->next))
		rx->next = psn + 1;
	return sdr_credit_rx_due(rx);
}

/*
 * A PROBE carrying the sender's next number @psn: every packet before it
 * has arrived or never will.  -EPROTO if that is beyond the grant; else 1:
 * a probe is always answered.
 */
int sdr_credit_rx_probe(struct sdr_credit_rx *rx, u32 psn)
{
	if (sdr_seq_before(rx->limit, psn)) {
		rx->bad++;
		return -EPROTO;
	}
	if (sdr_seq_before(rx->next, psn))
		rx->next = psn;
	return 1;
}

/* The packet limit a CREDIT sent now grants. */
u32 sdr_credit_rx_grant(struct sdr_credit_rx *rx)
{
	rx->limit = rx->next + rx->window;
	rx->grants++;
	return rx->limit;
}
