// SPDX-License-Identifier: GPL-2.0
/*
 * ADAPTIVE's learning, message by message, on a scripted link: a FIFO at
 * 100 us per packet with 5 ms each way, where a test decides which packet
 * is lost or late.  After a clean message has taught the receiver the
 * arrival gap and the round trip:
 *
 * - a lost tail (the last packets of a message, nothing after them) is
 *   recovered well under one RTO (50 ms here, 5 round trips, as a path
 *   with jitter has it), where SR waits for its RTO;
 * - reordering the flow has seen before costs no NACK and no resend,
 *   where the first time it did (and SR does every time);
 * - a lost COMPLETE ACK costs nothing: the receiver sent two;
 * - the pacing gain follows the queue over the base RTT (the least RTT of
 *   a round), and a path that became longer is taken as it is within two
 *   base-RTT windows.
 */
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "tests.h"
#include "sdr_sr.h"

#define US		1000ULL
#define MS		1000000ULL
#define PAY		1000
#define PKT_NS		(100 * US)	/* serialization of one packet */
#define OWD_NS		(5 * MS)
#define NPKTS		64
#define MAXEV		4096

struct mev {
	u64 t;
	int to_rx;
	struct sdr_pkt p;
	struct sdr_ack a;
};

struct mini {
	struct sdr_sr_flow fs, fr;
	u64 now;
	u64 link_free;
	struct mev ev[MAXEV];
	int nev;
	u32 ntx[NPKTS];			/* transmissions of each packet */
	/* the test's link: drop this transmission, or delay it more */
	bool (*drop)(u32 msg, u32 idx, u32 ntx);
	u64 (*late)(u32 msg, u32 idx, u32 ntx);
	/* drop the @nth (from 1) COMPLETE ACK of message @msg */
	bool (*drop_complete)(u32 msg, u32 nth);
	u32 completes;			/* COMPLETE ACKs of this message */
};

static void mini_init(struct mini *m, bool adaptive, u64 rto_min)
{
	struct sdr_sr_cfg cfg;

	memset(m, 0, sizeof(*m));
	sdr_sr_cfg_default(&cfg);
	cfg.pay = PAY;
	cfg.max_inflight = 256;
	cfg.rto_init_ns = 100 * MS;
	cfg.rto_min_ns = rto_min;
	cfg.rto_max_ns = 2000 * MS;
	cfg.ack_delay_ns = 1 * MS;
	cfg.reorder_ns = 5 * MS;
	cfg.nack_interval_ns = 20 * MS;
	if (adaptive)
		cfg.flags |= SDR_SR_CFG_ADAPTIVE;
	sdr_sr_flow_init(&m->fs, &cfg);
	sdr_sr_flow_init(&m->fr, &cfg);
	m->now = 1000 * MS;
}

static struct mev *mini_push(struct mini *m, u64 t)
{
	if (m->nev == MAXEV)
		abort();
	m->ev[m->nev].t = t;
	return &m->ev[m->nev++];
}

static struct mev mini_pop(struct mini *m, int i)
{
	struct mev e = m->ev[i];

	m->ev[i] = m->ev[--m->nev];
	return e;
}

static u8 mini_policy(const struct mini *m)
{
	return m->fs.cfg.flags & SDR_SR_CFG_ADAPTIVE ?
	       SDR_WIRE_POLICY_ADAPTIVE : SDR_WIRE_POLICY_SR;
}

/*
 * Message @seq of NPKTS packets from post to the sender's DONE: its
 * completion time, 0 if it failed or got stuck.
 */
static u64 mini_msg(struct mini *m, u32 seq)
{
	void *txmem = malloc(sdr_sr_tx_size(NPKTS * PAY, PAY));
	void *rxmem = malloc(sdr_sr_rx_size(NPKTS * PAY, PAY));
	u64 start = m->now, done = 0;
	struct sdr_sr_tx tx;
	struct sdr_sr_rx rx;
	int guard = 0;

	memset(m->ntx, 0, sizeof(m->ntx));
	m->completes = 0;
	sdr_sr_tx_init(&m->fs, &tx, seq, NPKTS * PAY, txmem, m->now);
	sdr_sr_rx_init(&m->fr, &rx, NPKTS * PAY, rxmem);
	while (!done && guard++ < 100000) {
		u64 t = min(sdr_sr_tx_deadline(&m->fs, &tx, m->now),
			    sdr_sr_rx_deadline(&m->fr, &rx));
		struct sdr_sr_txd d;
		struct sdr_pkt h;
		struct sdr_ack a;
		int i, first = -1;

		for (i = 0; i < m->nev; i++)
			if (first < 0 || m->ev[i].t < m->ev[first].t)
				first = i;
		if (first >= 0 && m->ev[first].t < t)
			t = m->ev[first].t;
		if (t == U64_MAX)
			break;
		if (t > m->now)
			m->now = t;
		if (first >= 0 && m->ev[first].t <= m->now) {
			struct mev e = mini_pop(m, first);

			if (e.p.msg_seq != seq)
				continue;
			if (e.to_rx)
				sdr_sr_rx_data(&m->fr, &rx, &e.p, m->now);
			else if (sdr_sr_tx_ack(&m->fs, &tx, &e.p, &e.a, m->now) ==
				 SDR_SR_DONE)
				done = m->now - start;
		}
		while (sdr_sr_rx_next_ctrl(&m->fr, &rx, m->now, &h, &a) == 1) {
			struct mev *e;

			if (h.aux & SDR_ACK_F_COMPLETE && m->drop_complete &&
			    m->drop_complete(seq, ++m->completes))
				continue;
			e = mini_push(m, m->now + OWD_NS);

			h.msg_seq = seq;
			h.policy = mini_policy(m);
			e->to_rx = 0;
			e->p = h;
			e->a = a;
		}
		while (sdr_sr_tx_next(&m->fs, &tx, m->now, &d) == 1) {
			u32 n = ++m->ntx[d.idx];
			struct mev *e;

			m->link_free = max(m->link_free, m->now) + PKT_NS;
			if (m->drop && m->drop(seq, d.idx, n))
				continue;
			e = mini_push(m, m->link_free + OWD_NS +
				      (m->late ? m->late(seq, d.idx, n) : 0));
			memset(&e->p, 0, sizeof(e->p));
			e->to_rx = 1;
			e->p.type = SDR_PKT_DATA;
			e->p.policy = mini_policy(m);
			e->p.flags = d.flags;
			e->p.payload_len = (u16)d.len;
			e->p.msg_seq = seq;
			e->p.msg_len = NPKTS * PAY;
			e->p.offset = d.offset;
			e->p.land = d.offset;
			e->p.ts = d.ts;
			e->p.aux = d.aux;
		}
	}
	/* what is still on the wire was this message's: gone with it */
	m->nev = 0;
	m->now += 10 * MS;
	free(txmem);
	free(rxmem);
	return done;
}

/* message 3 loses the first copy of its last three packets */
static bool drop_tail(u32 msg, u32 idx, u32 ntx)
{
	return msg == 3 && idx >= NPKTS - 3 && ntx == 1;
}

static u64 tail_loss(bool adaptive, u64 *clean, u64 *rto)
{
	struct mini *m = malloc(sizeof(*m));
	u64 t;
	u32 i;

	/* an RTO well above the round trip, as on a path with jitter */
	mini_init(m, adaptive, 50 * MS);
	m->drop = drop_tail;
	for (i = 0; i < 3; i++)
		*clean = mini_msg(m, i);
	*rto = sdr_rtt_rto(&m->fs.rtt);
	t = mini_msg(m, 3);
	tap_diag("%s: clean message %.1f ms, tail lost %.1f ms, RTO %.1f ms; "
		 "timeouts %llu, NACKed %llu, tail probes %llu",
		 adaptive ? "adaptive" : "sr", *clean / 1e6, t / 1e6, *rto / 1e6,
		 (unsigned long long)m->fs.st.timeouts,
		 (unsigned long long)m->fs.st.nack_lost,
		 (unsigned long long)m->fr.st.tail_probes);
	free(m);
	return t;
}

static void test_adaptive_tail_loss_before_rto(void)
{
	u64 clean_sr, clean_ad, rto_sr, rto_ad, sr, ad;

	sr = tail_loss(false, &clean_sr, &rto_sr);
	ad = tail_loss(true, &clean_ad, &rto_ad);
	CHECK(clean_sr > 0 && clean_ad > 0 && sr > 0 && ad > 0);
	/* SR waits for its RTO; ADAPTIVE's receiver asks once it is overdue */
	CHECK(sr - clean_sr >= rto_sr * 3 / 4);
	CHECK(ad - clean_ad < rto_ad / 2);
}

/* messages 2 and 4: packet 20 comes 10 packets late (1 ms) */
static u64 late_20(u32 msg, u32 idx, u32 ntx)
{
	return (msg == 2 || msg == 4) && idx == 20 && ntx == 1 ? 1 * MS : 0;
}

static void test_adaptive_learned_reordering_costs_nothing(void)
{
	struct mini *m = malloc(sizeof(*m));
	u64 nacks, retx, late;
	u32 i;

	mini_init(m, true, 1 * MS);
	m->late = late_20;
	for (i = 0; i < 2; i++)
		CHECK(mini_msg(m, i) > 0);
	/* the first time: NACKed (and resent) before the original came */
	nacks = m->fr.st.nacks_tx;
	CHECK(mini_msg(m, 2) > 0);
	late = m->fr.st.nack_late;
	tap_diag("first reordering: %llu NACKs, %llu late; reorder window now %.1f us",
		 (unsigned long long)(m->fr.st.nacks_tx - nacks),
		 (unsigned long long)late, sdr_sr_reorder_ns(&m->fr) / 1e3);
	CHECK(m->fr.st.nacks_tx > nacks);
	CHECK_EQ(late, 1);
	CHECK(sdr_sr_reorder_ns(&m->fr) > 1 * MS);
	CHECK(mini_msg(m, 3) > 0);
	/* the same again: inside the learned window, nothing is asked for */
	nacks = m->fr.st.nacks_tx;
	retx = m->fs.st.retx_pkts;
	CHECK(mini_msg(m, 4) > 0);
	tap_diag("second reordering: %llu NACKs, %llu resends",
		 (unsigned long long)(m->fr.st.nacks_tx - nacks),
		 (unsigned long long)(m->fs.st.retx_pkts - retx));
	CHECK_EQ(m->fr.st.nacks_tx - nacks, 0);
	CHECK_EQ(m->fs.st.retx_pkts - retx, 0);
	CHECK_EQ(m->fr.st.nack_late, late);
	free(m);
}

/* message 1 loses the first copy of packets 5, 6 and 40, the second of 6 */
static bool drop_three(u32 msg, u32 idx, u32 ntx)
{
	return msg == 1 && (((idx == 5 || idx == 6 || idx == 40) && ntx == 1) ||
			    (idx == 6 && ntx == 2));
}

/*
 * The COMPLETE ACK tells the sender how many data packets never came the
 * first time (AUTO's loss measure): each once, however many resends it
 * took, under SR and ADAPTIVE alike.  A COMPLETE claiming more losses
 * than the message has packets is no true receiver's: dropped, counted.
 */
static void test_adaptive_complete_reports_lost(void)
{
	struct mini *m = malloc(sizeof(*m));
	int adaptive;

	for (adaptive = 0; adaptive < 2; adaptive++) {
		mini_init(m, adaptive, 50 * MS);
		m->drop = drop_three;
		CHECK(mini_msg(m, 0) > 0);
		CHECK_EQ(m->fs.st.peer_lost, 0);
		CHECK_EQ(m->fs.st.peer_pkts, NPKTS);
		CHECK(mini_msg(m, 1) > 0);
		CHECK_EQ(m->fs.st.peer_lost, 3);
		CHECK_EQ(m->fs.st.peer_pkts, 2 * NPKTS);
	}
	{
		void *txmem = malloc(sdr_sr_tx_size(NPKTS * PAY, PAY));
		struct sdr_sr_tx tx;
		struct sdr_sr_txd d;
		struct sdr_pkt h;
		struct sdr_ack a;
		u64 bad;

		mini_init(m, false, 50 * MS);
		sdr_sr_tx_init(&m->fs, &tx, 9, NPKTS * PAY, txmem, m->now);
		while (sdr_sr_tx_next(&m->fs, &tx, m->now, &d) == 1)
			m->now += PKT_NS;
		memset(&h, 0, sizeof(h));
		memset(&a, 0, sizeof(a));
		h.type = SDR_PKT_ACK;
		h.policy = SDR_WIRE_POLICY_SR;
		h.msg_seq = 9;
		h.aux = SDR_ACK_F_COMPLETE;
		h.imm = NPKTS + 1;
		bad = m->fs.st.bad_acks;
		CHECK_EQ(sdr_sr_tx_ack(&m->fs, &tx, &h, &a, m->now), 0);
		CHECK_EQ(m->fs.st.bad_acks, bad + 1);
		CHECK_EQ(m->fs.st.peer_lost, 0);
		h.imm = NPKTS;
		CHECK_EQ(sdr_sr_tx_ack(&m->fs, &tx, &h, &a, m->now), SDR_SR_DONE);
		CHECK_EQ(m->fs.st.peer_lost, NPKTS);
		free(txmem);
	}
	free(m);
}

/* message 2 loses the first COMPLETE ACK its receiver sends */
static bool drop_first_complete(u32 msg, u32 nth)
{
	return msg == 2 && nth == 1;
}

/*
 * ADAPTIVE's receiver sends a message's COMPLETE ACK twice: with the
 * first lost, the sender is done as soon as with none lost.  SR's
 * receiver sends one: its sender learns it only after an RTO, from the
 * answer to a resend.  Either way the sender counts the message's
 * losses once.
 */
static void test_adaptive_complete_said_twice(void)
{
	struct mini *m = malloc(sizeof(*m));
	u64 clean, t, rto, acks;
	int adaptive;

	for (adaptive = 0; adaptive < 2; adaptive++) {
		mini_init(m, adaptive, 50 * MS);
		m->drop_complete = drop_first_complete;
		clean = mini_msg(m, 0);
		CHECK(clean > 0);
		CHECK_EQ(m->completes, adaptive ? 2 : 1);
		CHECK(mini_msg(m, 1) > 0);
		rto = sdr_rtt_rto(&m->fs.rtt);
		acks = m->fs.st.acks_rx;
		t = mini_msg(m, 2);
		tap_diag("%s: clean %.1f ms, first COMPLETE lost %.1f ms, RTO %.1f ms",
			 adaptive ? "adaptive" : "sr", clean / 1e6, t / 1e6,
			 rto / 1e6);
		CHECK(t > 0);
		if (adaptive) {
			CHECK(t <= clean + PKT_NS);
			CHECK_EQ(m->fs.st.timeouts, 0);
		} else {
			CHECK(t >= clean + rto * 3 / 4);
			CHECK(m->fs.st.timeouts > 0);
		}
		CHECK(m->fs.st.acks_rx > acks);
		CHECK_EQ(m->fs.st.peer_pkts, 3 * NPKTS);
		CHECK_EQ(m->fs.st.tx_done, 3);
	}
	free(m);
}

/* from message 10 on, every packet takes 6 ms longer: a longer path */
static u64 longer_path(u32 msg, u32 idx, u32 ntx)
{
	(void)idx;
	(void)ntx;
	return msg >= 10 ? 6 * MS : 0;
}

static u64 base_rtt(const struct sdr_sr_flow *f)
{
	return min(f->base_rtt_ns, f->base_win_ns);
}

static void test_adaptive_pace_follows_queue(void)
{
	struct mini *m = malloc(sizeof(*m));
	u64 base0, t0;
	u32 i;

	mini_init(m, true, 1 * MS);
	m->late = longer_path;
	for (i = 0; i < 10; i++)
		CHECK(mini_msg(m, i) > 0);
	base0 = base_rtt(&m->fs);
	tap_diag("clean: base RTT %.2f ms, gain %u/8, gap %llu ns",
		 base0 / 1e6, m->fs.pace_gain,
		 (unsigned long long)m->fs.peer_gap_ns);
	/* 10 ms of propagation, a packet's serialization, the ACK delay */
	CHECK(base0 >= 10 * MS && base0 < 12 * MS);
	CHECK(m->fs.pace_gain >= 8);
	/*
	 * 6 ms more than the base is a queue past twice the threshold, once
	 * a whole round (a base RTT) saw nothing less
	 */
	CHECK(mini_msg(m, 10) > 0);
	CHECK(mini_msg(m, 11) > 0);
	tap_diag("6 ms longer: latest RTT %.2f ms, gain %u/8",
		 m->fs.rtt.latest_ns / 1e6, m->fs.pace_gain);
	CHECK_EQ(m->fs.pace_gain, 7);
	CHECK_EQ(base_rtt(&m->fs), base0);
	/* two 10 s windows later the longer path is the base */
	t0 = m->now;
	for (i = 12; m->now - t0 < 21000 * MS && i < 5000; i++)
		CHECK(mini_msg(m, i) > 0);
	tap_diag("after %u messages, %.1f s: base RTT %.2f ms, gain %u/8",
		 i - 12, (m->now - t0) / 1e9, base_rtt(&m->fs) / 1e6,
		 m->fs.pace_gain);
	CHECK(base_rtt(&m->fs) >= 16 * MS);
	CHECK(m->fs.pace_gain >= 8);
	free(m);
}

void test_adaptive(void)
{
	TAP_RUN(test_adaptive_tail_loss_before_rto);
	TAP_RUN(test_adaptive_learned_reordering_costs_nothing);
	TAP_RUN(test_adaptive_complete_reports_lost);
	TAP_RUN(test_adaptive_complete_said_twice);
	TAP_RUN(test_adaptive_pace_follows_queue);
}
