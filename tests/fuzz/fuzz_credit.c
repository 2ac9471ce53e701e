// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the receive credits of NONE messages
 * (kernel/engine/sdr_credit.c): a sender and a receiver over a FIFO path that the
 * input loses, delays and sprays with CREDITs and PROBEs of any value.
 *
 * The guarantee asserted, while no forged CREDIT was accepted: the sender
 * never has a packet beyond the receiver's grant (so the receiver never
 * refuses a genuine packet or probe), and genuine CREDITs are always
 * accepted.  Always: an accepted CREDIT never grants beyond what a true
 * receiver could (psn + window), a refused one changes nothing, and a
 * waiting sender always has a probe ahead.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "sdr_credit.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define QN	512
#define PROBE	0x100000000ULL	/* marks a probe in the data FIFO */

struct fifo {
	u64	v[QN];
	u32	head, n;
};

static bool push(struct fifo *f, u64 v)
{
	if (f->n == QN)
		return false;
	f->v[(f->head + f->n++) % QN] = v;
	return true;
}

static bool pop(struct fifo *f, u64 *v)
{
	if (!f->n)
		return false;
	*v = f->v[f->head];
	f->head = (f->head + 1) % QN;
	f->n--;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fifo fwd, rev;
	struct in in = { data, size };
	struct sdr_credit_tx tx, before;
	struct sdr_credit_rx rx;
	u32 window = SDR_CREDIT_WIN_MIN + (u32)take(&in, 1);
	u32 seq0 = (u32)take(&in, 4), msgs = seq0, p;
	bool forged = false;
	u64 now = 0, v;
	int r;

	memset(&fwd, 0, sizeof(fwd));
	memset(&rev, 0, sizeof(rev));
	sdr_credit_tx_init(&tx, window, seq0);
	sdr_credit_rx_init(&rx, window);
	tx.psn = rx.next = (u32)take(&in, 4);	/* anywhere, wrap included */
	tx.limit = rx.limit = tx.psn + window;

	while (in.n) {
		now += take(&in, 1);
		switch (take(&in, 1) % 8) {
		case 0:	/* the application posts a receive: a CREDIT */
			msgs++;
			push(&rev, (u64)msgs << 32 | sdr_credit_rx_grant(&rx));
			break;
		case 1:	/* the sender sends what it may */
			r = sdr_credit_tx_check(&tx, seq0 + (u32)take(&in, 1) % 4);
			if (r == SDR_CREDIT_GO) {
				p = sdr_credit_tx_take(&tx);
				if (!forged && !sdr_seq_before(p, rx.limit))
					abort();	/* beyond the grant */
				if (!(take(&in, 1) & 1))	/* else lost */
					push(&fwd, p);
			} else {
				sdr_credit_tx_wait(&tx, now, 1 + take(&in, 1));
				if (sdr_credit_tx_deadline(&tx) == U64_MAX)
					abort();
			}
			break;
		case 2:	/* the receiver takes one packet or probe */
			if (!pop(&fwd, &v))
				break;
			if (v & PROBE)
				r = sdr_credit_rx_probe(&rx, (u32)v);
			else
				r = sdr_credit_rx_data(&rx, (u32)v);
			if (r < 0 && !forged)
				abort();	/* a genuine one refused */
			if (r > 0)
				push(&rev, (u64)msgs << 32 | sdr_credit_rx_grant(&rx));
			break;
		case 3:	/* a CREDIT comes back, or is lost */
			if (!pop(&rev, &v) || (take(&in, 1) & 1))
				break;
			r = sdr_credit_tx_grant(&tx, (u32)(v >> 32), (u32)v);
			if (r < 0 && !forged)
				abort();	/* a genuine one refused */
			break;
		case 4:	/* a CREDIT of any value (a buggy or lying peer) */
			before = tx;
			r = sdr_credit_tx_grant(&tx, (u32)take(&in, 4),
						(u32)take(&in, 4));
			if (r < 0 && (memcmp(&before, &tx, offsetof(struct sdr_credit_tx, bad)) ||
				      tx.bad != before.bad + 1))
				abort();	/* a refusal changed something */
			if (r > 0 && sdr_seq_before(before.limit, tx.limit))
				forged = true;
			break;
		case 5:	/* the timer: a due probe goes out */
			if (sdr_credit_tx_probe_due(&tx, now, 1 + take(&in, 2), &p)) {
				if (p != tx.psn || sdr_credit_tx_deadline(&tx) <= now)
					abort();
				push(&fwd, PROBE | p);
			}
			break;
		case 6:	/* a probe of any value */
			p = (u32)take(&in, 4);
			r = sdr_credit_rx_probe(&rx, p);
			if (r > 0 && sdr_seq_before(tx.psn, p))
				forged = true;	/* it claimed unsent packets */
			if (r > 0)
				push(&rev, (u64)msgs << 32 | sdr_credit_rx_grant(&rx));
			break;
		case 7:	/* nothing waits any more */
			sdr_credit_tx_idle(&tx);
			break;
		}
		/* never more granted than a true receiver could */
		if (sdr_seq_before(tx.psn + tx.window, tx.limit))
			abort();
	}
	return 0;
}
