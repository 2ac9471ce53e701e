// SPDX-License-Identifier: GPL-2.0
/*
 * t_loss: policy NONE under netem loss (tests/vm/profiles runs it with
 * "loss 2%" on every veth end).  NONE repairs nothing, so this checks what
 * the bitmap promises: every chunk whose bit is set, and every packet
 * whose bit is set, holds exactly the bytes the sender put there; the
 * bitmaps agree with the state counters; and the share of missing packets
 * is plausible for the link (data flows one way: one 2% drop per packet).
 */
#include "harness.h"
#include "libsdr.h"
#include "util.h"

#define MSG		(1U << 20)
#define NMSGS_FLIGHT	8
#define NMSGS		128	/* 128 MiB: tens of thousands of packets */
#define STALL_US	(10 * 1000000LL)

static int netem_loss(void)
{
	char line[512];
	int found = 0;
	FILE *f = popen("tc qdisc show dev veth0 2>/dev/null", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "netem") && strstr(line, "loss"))
			found = 1;
	pclose(f);
	return found;
}

struct tally {
	uint64_t packets, packets_done, chunks, chunks_done;
	uint32_t ok, partial, failed, lost;
	uint64_t bad_bytes;
};

/* Check every chunk and packet the bitmaps claim against the pattern. */
static void check_message(struct sdr_recv *h, const struct sdr_flow_props *fp,
			  uint32_t msg, struct tally *t)
{
	const struct sdr_recv_state *st = sdr_recv_state(h);
	const uint8_t *data = sdr_recv_data(h);
	uint32_t chunks, c, per = fp->chunk_size / fp->payload;
	uint64_t pkts_seen = 0, chunks_seen = 0, bits[16];
	uint32_t imm, len;

	ASSERT_EQ(sdr_recv_imm(h, &imm, &len), 0);
	ASSERT_EQ(imm, msg);
	ASSERT_EQ(len, MSG);
	ASSERT_EQ(sdr_recv_bitmap(h, NULL, &chunks), 0);
	ASSERT_EQ(chunks, (MSG + fp->chunk_size - 1) / fp->chunk_size);
	ASSERT_EQ(st->packets, (MSG + fp->payload - 1) / fp->payload);
	ASSERT_LE(per, 1024);

	for (c = 0; c < chunks; c++) {
		uint64_t off = (uint64_t)c * fp->chunk_size;
		uint32_t n, i, set = 0;
		int done = sdr_recv_chunk_done(h, c);

		ASSERT_GE(done, 0);
		ASSERT_EQ(sdr_recv_chunk_expand(h, c, bits, 16, &n), 0);
		for (i = 0; i < n; i++) {
			uint64_t po = off + (uint64_t)i * fp->payload;
			uint64_t pl = MSG - po < fp->payload ? MSG - po : fp->payload;
			int64_t at;

			if (!(bits[i / 64] >> (i % 64) & 1))
				continue;
			set++;
			at = pattern_check(data + po, msg, po, pl);
			if (at >= 0) {
				if (!t->bad_bytes)
					TH_LOG("msg %u packet %llu: byte %lld wrong", msg,
					       (unsigned long long)(po / fp->payload),
					       (long long)at);
				t->bad_bytes++;
			}
		}
		pkts_seen += set;
		if (done) {
			chunks_seen++;
			/* A whole chunk: all its packets (so all bytes, checked). */
			if (set != n) {
				TH_LOG("msg %u chunk %u: bit set, %u/%u packets", msg, c, set, n);
				th_failed = 1;
			}
		} else if (set == n) {
			TH_LOG("msg %u chunk %u: all packets, no chunk bit", msg, c);
			th_failed = 1;
		}
	}
	EXPECT_EQ(pkts_seen, st->packets_done);
	EXPECT_EQ(chunks_seen, st->chunks_done);
	t->packets += st->packets;
	t->packets_done += pkts_seen;
	t->chunks += chunks;
	t->chunks_done += chunks_seen;
}

TEST_T(none_under_loss, 900)
{
	struct sdr_flow_attr fa = { .policy = SDR_POLICY_NONE,
				    .max_msg_size = MSG, .max_msgs = NMSGS_FLIGHT };
	struct sdr_ctx *cs, *cr;
	struct sdr_flow *fs, *fr;
	struct sdr_flow_props fp;
	struct sdr_recv *rh[NMSGS];
	uint32_t posted = 0, sent = 0, sdone = 0, rdone = 0, slots_free = NMSGS_FLIGHT;
	struct tally t = { 0 };
	int64_t last;
	double frac;
	uint32_t i;

	if (!netem_loss())
		SKIP("no netem loss on veth0 (run under the t_loss profile)");
	ASSERT_EQ(flow_pair(&fa, &cs, &cr, &fs, &fr), 0);
	ASSERT_EQ(sdr_flow_props(fs, &fp), 0);
	/* Each send slot holds one message's pattern; refill per message. */
	last = now_us();
	while (rdone < NMSGS) {
		struct sdr_completion c[16];
		int k, got, progress = 0;

		while (posted < NMSGS && posted - rdone < NMSGS_FLIGHT &&
		       sdr_flow_recv_post(fr, posted, &rh[posted]) == 0) {
			posted++;
			progress = 1;
		}
		while (sent < posted && slots_free) {
			uint32_t slot = sent % NMSGS_FLIGHT;
			int ret;

			pattern_fill(sdr_send_slot(fs, slot), sent, 0, MSG);
			ret = sdr_flow_send_post(fs, (uint64_t)slot * fp.slot_stride, MSG,
					    sent, sent, NULL);
			if (ret == -EAGAIN)
				break;
			ASSERT_EQ(ret, 0);
			slots_free--;
			sent++;
			progress = 1;
		}
		got = sdr_flow_send_poll(fs, c, 16);
		ASSERT_GE(got, 0);
		for (k = 0; k < got; k++) {
			/* Sends complete in order under NONE: slots recycle FIFO. */
			EXPECT_EQ(c[k].type, SDR_CQE_SEND);
			EXPECT_EQ(c[k].user_data, sdone);
			EXPECT_EQ(c[k].status, SDR_STATUS_OK);
			sdone++;
			slots_free++;
			progress = 1;
		}
		got = sdr_poll_cq(cr, c, 16);
		ASSERT_GE(got, 0);
		for (k = 0; k < got; k++) {
			i = (uint32_t)c[k].user_data;
			ASSERT_LT(i, posted);
			ASSERT_EQ(c[k].type, SDR_CQE_RECV);
			ASSERT_TRUE(c[k].recv == rh[i]);
			if (c[k].status == SDR_STATUS_OK)
				t.ok++;
			else if (c[k].status == SDR_STATUS_PARTIAL)
				t.partial++;
			else
				t.failed++;
			if (c[k].status <= SDR_STATUS_PARTIAL)
				check_message(rh[i], &fp, i, &t);
			ASSERT_EQ(sdr_recv_release(rh[i]), 0);
			rh[i] = NULL;
			rdone++;
			progress = 1;
		}
		if (progress) {
			last = now_us();
			continue;
		}
		if (now_us() - last > STALL_US && sdone == NMSGS) {
			/* Messages that never completed: whole loss or a stall. */
			for (i = 0; i < posted; i++) {
				if (!rh[i])
					continue;
				t.lost++;
				t.packets += (MSG + fp.payload - 1) / fp.payload;
				EXPECT_EQ(sdr_recv_release(rh[i]), 0);
				rh[i] = NULL;
				rdone++;
			}
			break;
		}
		ASSERT_LT(now_us() - last, 6 * STALL_US);
		sdr_wait(cr, 5);
	}
	frac = t.packets ? 1.0 - (double)t.packets_done / t.packets : 0;
	TH_LOG("%u messages: %u ok, %u partial, %u failed, %u never completed",
	       NMSGS, t.ok, t.partial, t.failed, t.lost);
	TH_LOG("packets %llu, delivered %llu, missing %.3f%%; chunks %llu, whole %llu",
	       (unsigned long long)t.packets, (unsigned long long)t.packets_done,
	       100 * frac, (unsigned long long)t.chunks,
	       (unsigned long long)t.chunks_done);
	EXPECT_EQ(t.bad_bytes, 0);
	EXPECT_EQ(t.failed, 0);
	EXPECT_LE(t.lost, 2);
	EXPECT_GT(t.partial, 0);	/* 2% of ~260 packets per message */
	EXPECT_GE(frac, 0.005);
	EXPECT_LE(frac, 0.06);
	sdr_close(cs);
	sdr_close(cr);
}
