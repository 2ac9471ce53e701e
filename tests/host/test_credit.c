// SPDX-License-Identifier: GPL-2.0
/* Receive credits of NONE messages (kernel/engine/sdr_credit.c). */
#include "tap.h"
#include "tests.h"
#include "sdr_credit.h"

#define MS 1000000ULL

/* A message waits for its receive, then for the window; probes back off. */
static void test_credit_tx_limits(void)
{
	struct sdr_credit_tx tx;
	u32 psn = 7, i;

	sdr_credit_tx_init(&tx, 16, 100);
	CHECK_EQ(sdr_credit_tx_check(&tx, 100), SDR_CREDIT_NO_RECV);
	CHECK_EQ(sdr_credit_tx_deadline(&tx), U64_MAX);
	sdr_credit_tx_wait(&tx, 5 * MS, 10 * MS);
	sdr_credit_tx_wait(&tx, 6 * MS, 10 * MS);	/* still the same wait */
	CHECK_EQ(tx.waits, 1);
	CHECK_EQ(sdr_credit_tx_deadline(&tx), 15 * MS);
	CHECK(!sdr_credit_tx_probe_due(&tx, 14 * MS, 100 * MS, &psn));
	CHECK(sdr_credit_tx_probe_due(&tx, 15 * MS, 100 * MS, &psn));
	CHECK_EQ(psn, 0);
	CHECK_EQ(sdr_credit_tx_deadline(&tx), 25 * MS);
	CHECK(sdr_credit_tx_probe_due(&tx, 25 * MS, 100 * MS, &psn));
	CHECK_EQ(sdr_credit_tx_deadline(&tx), 45 * MS);	/* doubled */
	CHECK(sdr_credit_tx_probe_due(&tx, 45 * MS, 30 * MS, &psn));
	CHECK_EQ(sdr_credit_tx_deadline(&tx), 75 * MS);	/* capped */
	CHECK(sdr_credit_tx_probe_due(&tx, 75 * MS, 30 * MS, &psn));
	CHECK_EQ(sdr_credit_tx_deadline(&tx), 105 * MS);
	CHECK_EQ(tx.probes, 4);

	/* one receive posted: message 100 goes, 101 does not */
	CHECK_EQ(sdr_credit_tx_grant(&tx, 101, 16), 1);
	CHECK_EQ(sdr_credit_tx_deadline(&tx), U64_MAX);	/* wait over */
	CHECK_EQ(sdr_credit_tx_check(&tx, 100), SDR_CREDIT_GO);
	CHECK_EQ(sdr_credit_tx_check(&tx, 101), SDR_CREDIT_NO_RECV);
	for (i = 0; i < 16; i++) {
		CHECK_EQ(sdr_credit_tx_check(&tx, 100), SDR_CREDIT_GO);
		CHECK_EQ(sdr_credit_tx_take(&tx), i);
	}
	CHECK_EQ(sdr_credit_tx_check(&tx, 100), SDR_CREDIT_NO_WINDOW);
	/* the receiver processed 4: 4 more */
	CHECK_EQ(sdr_credit_tx_grant(&tx, 101, 20), 1);
	CHECK_EQ(sdr_credit_tx_check(&tx, 100), SDR_CREDIT_GO);
	/* a late copy of an older CREDIT changes nothing */
	CHECK_EQ(sdr_credit_tx_grant(&tx, 100, 18), 0);
	CHECK_EQ(tx.limit, 20);
	CHECK_EQ(tx.msg_limit, 101);
	CHECK_EQ(tx.bad, 0);
}

/*
 * A CREDIT no true receiver could send: it cannot have processed packets
 * never sent, so it cannot grant beyond psn + window.  Rejected, counted,
 * and nothing changes.
 */
static void test_credit_tx_forged(void)
{
	struct sdr_credit_tx tx;

	sdr_credit_tx_init(&tx, 64, 0);
	CHECK_EQ(sdr_credit_tx_grant(&tx, 1, 65), -EPROTO);
	CHECK_EQ(sdr_credit_tx_grant(&tx, 1, 0x80000000u), -EPROTO);
	CHECK_EQ(tx.bad, 2);
	CHECK_EQ(tx.limit, 64);
	CHECK_EQ(tx.msg_limit, 0);
	CHECK_EQ(sdr_credit_tx_check(&tx, 0), SDR_CREDIT_NO_RECV);
	/* at the bound exactly: fine */
	CHECK_EQ(sdr_credit_tx_grant(&tx, 1, 64), 1);
	sdr_credit_tx_take(&tx);
	CHECK_EQ(sdr_credit_tx_grant(&tx, 1, 66), -EPROTO);
	CHECK_EQ(sdr_credit_tx_grant(&tx, 1, 65), 1);
	/* the message limit is the receiver's business: any later one */
	CHECK_EQ(sdr_credit_tx_grant(&tx, 1000, 65), 1);
	CHECK_EQ(sdr_credit_tx_check(&tx, 999), SDR_CREDIT_GO);
}

/* Serial numbers: the limits work across the 32-bit wrap. */
static void test_credit_wrap(void)
{
	struct sdr_credit_tx tx;
	struct sdr_credit_rx rx;
	u32 i, p;

	sdr_credit_tx_init(&tx, 16, 0xfffffff0u);
	sdr_credit_rx_init(&rx, 16);
	tx.psn = rx.next = 0xfffffff8u;
	tx.limit = rx.limit = 0xfffffff8u + 16;
	CHECK_EQ(sdr_credit_tx_grant(&tx, 0x10, tx.limit), 1);
	for (i = 0; i < 16; i++) {
		CHECK_EQ(sdr_credit_tx_check(&tx, 0xfffffffeu + i % 4),
			 SDR_CREDIT_GO);
		p = sdr_credit_tx_take(&tx);
		CHECK(sdr_credit_rx_data(&rx, p) >= 0);
	}
	CHECK_EQ(tx.psn, 8);
	CHECK_EQ(rx.next, 8);
	CHECK_EQ(sdr_credit_tx_check(&tx, 0), SDR_CREDIT_NO_WINDOW);
	CHECK_EQ(sdr_credit_tx_check(&tx, 0x10), SDR_CREDIT_NO_RECV);
	CHECK_EQ(sdr_credit_rx_grant(&rx), 24);
	CHECK_EQ(sdr_credit_tx_grant(&tx, 0x10, 24), 1);
	CHECK_EQ(sdr_credit_tx_check(&tx, 0), SDR_CREDIT_GO);
}

/* The receiver: packets and probes beyond its grant are refused. */
static void test_credit_rx(void)
{
	struct sdr_credit_rx rx;
	u32 i;

	sdr_credit_rx_init(&rx, 16);
	CHECK_EQ(sdr_credit_rx_data(&rx, 16), -EPROTO);
	CHECK_EQ(sdr_credit_rx_data(&rx, 0x70000000u), -EPROTO);
	CHECK_EQ(sdr_credit_rx_probe(&rx, 17), -EPROTO);
	CHECK_EQ(rx.bad, 3);
	CHECK_EQ(rx.next, 0);
	/* a CREDIT is due once a quarter of the window is processed */
	for (i = 0; i < 3; i++)
		CHECK_EQ(sdr_credit_rx_data(&rx, i), 0);
	CHECK_EQ(sdr_credit_rx_data(&rx, 3), 1);
	/* a late or duplicate packet does not move anything back */
	CHECK_EQ(sdr_credit_rx_data(&rx, 1), 1);
	CHECK_EQ(rx.next, 4);
	CHECK_EQ(sdr_credit_rx_grant(&rx), 20);
	CHECK_EQ(sdr_credit_rx_data(&rx, 4), 0);
	/* a probe says every packet before it is in or lost */
	CHECK_EQ(sdr_credit_rx_probe(&rx, 12), 1);
	CHECK_EQ(rx.next, 12);
	CHECK_EQ(sdr_credit_rx_probe(&rx, 5), 1);	/* an old probe */
	CHECK_EQ(rx.next, 12);
	CHECK_EQ(sdr_credit_rx_grant(&rx), 28);
	CHECK_EQ(rx.grants, 2);
	CHECK_EQ(sdr_credit_rx_probe(&rx, 28), 1);	/* window full: ok */
	CHECK_EQ(sdr_credit_rx_probe(&rx, 29), -EPROTO);
}

static u64 rng_next(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#define QCAP	4096
struct q {
	u32	v[QCAP];
	u64	at[QCAP];	/* arrival time */
	u32	head, n;
};

static void q_push(struct q *q, u32 v, u64 at)
{
	u32 i = (q->head + q->n) % QCAP;

	if (q->n == QCAP)
		return;
	q->v[i] = v;
	q->at[i] = at;
	q->n++;
}

static bool q_pop(struct q *q, u64 now, u32 *v)
{
	if (!q->n || q->at[q->head] > now)
		return false;
	*v = q->v[q->head];
	q->head = (q->head + 1) % QCAP;
	q->n--;
	return true;
}

/*
 * Sender and receiver over a FIFO path that loses data, CREDITs and
 * PROBEs alike, with a receiver that processes fewer packets per tick
 * than the sender could send.  Checked: no packet beyond the grant ever
 * reaches the receiver, its queue never holds more than the window (the
 * overrun the credits exist to stop), and every packet goes out in the end
 * (lost CREDITs never deadlock the flow: probes recover).
 */
static void run_credit_path(u64 seed, u32 window, u32 loss_pct, u32 rx_rate,
			    u32 total)
{
	static struct q data, ctl_rev, probes;
	struct sdr_credit_tx tx;
	struct sdr_credit_rx rx;
	u64 now, lat = 50, rng = seed, end = 2000000;
	u32 v, k, backlog_max = 0, sent = 0, bad = 0;

	memset(&data, 0, sizeof(data));
	memset(&ctl_rev, 0, sizeof(ctl_rev));
	memset(&probes, 0, sizeof(probes));
	sdr_credit_tx_init(&tx, window, 0);
	sdr_credit_rx_init(&rx, window);
	for (now = 0; now < end && sent < total; now++) {
		/* the receiver posts its one receive at tick 10 */
		if (now == 10 && rng_next(&rng) % 100 >= loss_pct)
			q_push(&ctl_rev, 1, now + lat);
		/* sender: everything the limits allow this tick */
		while (sent < total && sdr_credit_tx_check(&tx, 0) == SDR_CREDIT_GO) {
			v = sdr_credit_tx_take(&tx);
			sent++;
			if (rng_next(&rng) % 100 >= loss_pct)
				q_push(&data, v, now + lat);
		}
		if (sent < total)
			sdr_credit_tx_wait(&tx, now, 200);
		if (sdr_credit_tx_probe_due(&tx, now, 5000, &v) &&
		    rng_next(&rng) % 100 >= loss_pct)
			q_push(&data, v | 0x80000000u, now + lat);
		/* receiver: rx_rate packets per tick, in arrival order */
		if (data.n > backlog_max)
			backlog_max = data.n;
		for (k = 0; k < rx_rate && q_pop(&data, now, &v); k++) {
			int r;

			if (v & 0x80000000u)
				r = sdr_credit_rx_probe(&rx, v & 0x7fffffffu);
			else
				r = sdr_credit_rx_data(&rx, v);
			if (r < 0)
				bad++;
			if (r > 0 && rng_next(&rng) % 100 >= loss_pct)
				q_push(&ctl_rev, sdr_credit_rx_grant(&rx) << 1 | 1,
				       now + lat);
		}
		/* CREDITs back: the receive stays posted (message limit 1) */
		while (q_pop(&ctl_rev, now, &v))
			if (sdr_credit_tx_grant(&tx, 1, v >> 1) < 0)
				bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(tx.bad, 0);
	CHECK_EQ(sent, total);
	/* in flight never more than the window (plus probes) */
	CHECK(backlog_max <= window + 8);
	if (bad || sent != total || backlog_max > window + 8)
		tap_diag("seed %llu window %u loss %u%%: sent %u/%u at tick %llu, backlog max %u, probes %llu",
			 (unsigned long long)seed, window, loss_pct, sent,
			 total, (unsigned long long)now, backlog_max,
			 (unsigned long long)tx.probes);
}

static void test_credit_lossy_path(void)
{
	u64 seed;

	for (seed = 1; seed <= 20; seed++) {
		run_credit_path(seed, 16, 0, 1, 5000);
		run_credit_path(seed, 64, 5, 2, 20000);
		run_credit_path(seed, 512, 30, 3, 20000);
		run_credit_path(seed, 16, 50, 1, 2000);
	}
}

void test_credit(void)
{
	TAP_RUN(test_credit_tx_limits);
	TAP_RUN(test_credit_tx_forged);
	TAP_RUN(test_credit_wrap);
	TAP_RUN(test_credit_rx);
	TAP_RUN(test_credit_lossy_path);
}
