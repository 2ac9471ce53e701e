// SPDX-License-Identifier: GPL-2.0
/*
 * t_libsdr: the library's own promises - the error convention (negative
 * errno / NULL + errno), opening by name, GID or IPv4 address, the
 * "retry" answers before a message starts, stale handles, waiting,
 * completion routing between sdr_flow_send_poll and sdr_poll_cq, a send
 * landing at an offset of its receive, flushes on destroy, the TCP blob exchange, groups, sdr_query and the policy
 * names.
 */
#include <arpa/inet.h>

#include "harness.h"
#include "libsdr.h"
#include "util.h"

#define MSG	(256U << 10)

FIXTURE(lib) {
	struct sdr_ctx *cs, *cr;
	struct sdr_flow *fs, *fr;
	struct sdr_flow_props p;
};

FIXTURE_SETUP(lib)
{
	struct sdr_flow_attr fa = { .policy = SDR_POLICY_NONE,
				    .max_msg_size = MSG, .max_msgs = 4 };
	struct sdr_flow_peer es, er;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	ASSERT_EQ(none_idle_max(), 0);
	self->cs = sdr_open(dev0(), NULL);
	self->cr = sdr_open(dev1(), NULL);
	ASSERT_TRUE(self->cs && self->cr);
	self->fs = sdr_flow_create(self->cs, &fa);
	self->fr = sdr_flow_create(self->cr, &fa);
	ASSERT_TRUE(self->fs && self->fr);
	ASSERT_EQ(sdr_flow_peer_info(self->fs, &es), 0);
	ASSERT_EQ(sdr_flow_peer_info(self->fr, &er), 0);
	ASSERT_EQ(sdr_flow_connect_peer(self->fs, &er), 0);
	ASSERT_EQ(sdr_flow_connect_peer(self->fr, &es), 0);
	ASSERT_EQ(sdr_flow_props(self->fs, &self->p), 0);
}

FIXTURE_TEARDOWN(lib)
{
	if (self->cs)
		sdr_close(self->cs);
	if (self->cr)
		sdr_close(self->cr);
}

TEST(open_by_name_gid_and_ipv4)
{
	struct sdr_ctx_attr attr = { .cq_entries = 128 };
	struct sdr_ctx_info a, b;
	struct sdr_ctx *c, *g;
	char gid[INET6_ADDRSTRLEN], v4[INET_ADDRSTRLEN];

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing");
	c = sdr_open(dev0(), &attr);
	ASSERT_TRUE(c);
	ASSERT_EQ(sdr_ctx_query(c, &a), 0);
	EXPECT_EQ(strcmp(a.ibdev, dev0()), 0);
	EXPECT_EQ(a.cq_entries, 128);
	EXPECT_EQ(a.cq_overflow, 0);
	EXPECT_GE(sdr_ctx_fd(c), 0);
	ASSERT_TRUE(inet_ntop(AF_INET6, a.gid, gid, sizeof(gid)));
	TH_LOG("%s: GID %s, MTU %u", a.ibdev, gid, a.mtu);

	g = sdr_open(gid, NULL);
	ASSERT_TRUE(g);
	ASSERT_EQ(sdr_ctx_query(g, &b), 0);
	EXPECT_EQ(strcmp(b.ibdev, dev0()), 0);
	EXPECT_EQ(sdr_close(g), 0);
	/* A RoCE v2 GID is an IPv4-mapped address: open by the IPv4 form. */
	if (a.gid[10] == 0xff && a.gid[11] == 0xff) {
		ASSERT_TRUE(inet_ntop(AF_INET, a.gid + 12, v4, sizeof(v4)));
		g = sdr_open(v4, NULL);
		ASSERT_TRUE(g);
		ASSERT_EQ(sdr_ctx_query(g, &b), 0);
		EXPECT_EQ(strcmp(b.ibdev, dev0()), 0);
		EXPECT_EQ(sdr_close(g), 0);
	}
	EXPECT_EQ(sdr_close(c), 0);
}

TEST(error_convention)
{
	struct sdr_ctx_attr bad = { .cq_entries = 100 };
	struct sdr_flow_attr fa = { .policy = SDR_POLICY_NONE,
				    .max_msg_size = 0, .max_msgs = 1 };
	struct sdr_ctx *c;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing");
	errno = 0;
	EXPECT_TRUE(sdr_open("no_such_dev", NULL) == NULL);
	EXPECT_EQ(errno, ENODEV);
	errno = 0;
	EXPECT_TRUE(sdr_open(dev0(), &bad) == NULL);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_TRUE(sdr_open(NULL, NULL) == NULL);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_TRUE(sdr_open("fe80::zz", NULL) == NULL);
	EXPECT_EQ(errno, EINVAL);

	c = sdr_open(dev0(), NULL);
	ASSERT_TRUE(c);
	errno = 0;
	EXPECT_TRUE(sdr_flow_create(c, &fa) == NULL);
	EXPECT_EQ(errno, EINVAL);
	fa.max_msg_size = 4096;
	/* past the defined ids: EINVAL */
	fa.policy = SDR_POLICY_NR;
	errno = 0;
	EXPECT_TRUE(sdr_flow_create(c, &fa) == NULL);
	EXPECT_EQ(errno, EINVAL);
	/* int calls: negative errno, and errno untouched. */
	errno = 12345;
	EXPECT_EQ(sdr_poll_cq(c, NULL, 1), -EINVAL);
	EXPECT_EQ(errno, 12345);
	EXPECT_EQ(sdr_wait(c, 30), -ETIMEDOUT);
	EXPECT_EQ(sdr_close(c), 0);
}

/* One completion of @ctx within WAIT_HANG_MS: 1, or 0 (a hang). */
static int poll_one(struct sdr_ctx *ctx, struct sdr_completion *c)
{
	int64_t end = now_us() + WAIT_HANG_MS * 1000LL;
	int got = 0;

	while (!got && now_us() < end) {
		got = sdr_poll_cq(ctx, c, 1);
		if (!got)
			sdr_wait(ctx, 100);
	}
	return got;
}

TEST_F(lib, before_start_retry_and_stale_handles)
{
	struct sdr_completion c;
	struct sdr_recv *h;
	const uint64_t *bm;
	uint32_t imm, len, chunks, status;

	ASSERT_EQ(sdr_flow_recv_post(self->fr, 99, &h), 0);
	EXPECT_EQ(sdr_recv_user_data(h), 99);
	EXPECT_LT(sdr_recv_slot(h), 4);
	EXPECT_EQ(sdr_recv_imm(h, &imm, &len), -EAGAIN);
	EXPECT_EQ(sdr_recv_bitmap(h, &bm, &chunks), -EAGAIN);
	EXPECT_EQ(sdr_recv_chunk_done(h, 0), -EAGAIN);
	EXPECT_EQ(sdr_recv_poll(h, &status), -EAGAIN);
	EXPECT_EQ(sdr_recv_state(h)->state, SDR_RECV_POSTED);

	pattern_fill(sdr_send_slot(self->fs, 1), 5, 0, MSG);
	ASSERT_EQ(sdr_flow_send_post(self->fs, self->p.slot_stride, MSG, 0xabcd, 7, NULL), 0);
	ASSERT_EQ(poll_one(self->cr, &c), 1);
	EXPECT_EQ(c.type, SDR_CQE_RECV);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_TRUE(c.flow == self->fr);
	EXPECT_TRUE(c.recv == h);
	EXPECT_EQ(c.user_data, 99);
	EXPECT_EQ(c.imm, 0xabcd);
	EXPECT_EQ(c.len, MSG);
	ASSERT_EQ(sdr_recv_imm(h, &imm, &len), 0);
	EXPECT_EQ(imm, 0xabcd);
	EXPECT_EQ(len, MSG);
	ASSERT_EQ(sdr_recv_bitmap(h, &bm, &chunks), 0);
	EXPECT_EQ(chunks, (MSG + self->p.chunk_size - 1) / self->p.chunk_size);
	EXPECT_EQ(sdr_recv_chunk_done(h, chunks - 1), 1);
	EXPECT_EQ(sdr_recv_chunk_done(h, chunks), -EINVAL);
	{
		uint64_t bits[16];
		uint32_t np;

		EXPECT_EQ(sdr_recv_chunk_expand(h, 0, bits, 0, &np), -ENOSPC);
		ASSERT_EQ(sdr_recv_chunk_expand(h, 0, bits, 16, &np), 0);
		EXPECT_EQ(np, self->p.chunk_size / self->p.payload);
		EXPECT_EQ(bits[0] & 1, 1);
	}
	EXPECT_EQ(sdr_recv_poll(h, &status), 0);
	EXPECT_EQ(status, SDR_STATUS_OK);
	EXPECT_EQ(pattern_check(sdr_recv_data(h), 5, 0, MSG), -1);
	EXPECT_EQ(sdr_recv_release(h), 0);
	/* The handle is dead now. */
	EXPECT_EQ(sdr_recv_release(h), -ESTALE);
	EXPECT_EQ(sdr_recv_imm(h, &imm, &len), -ESTALE);
	EXPECT_EQ(sdr_recv_poll(h, &status), -ESTALE);
}

/*
 * sdr_flow_send_post_at: a message sent two chunks into the receive lands
 * there (sdr_recv_data() is its first byte, dst_off in the slot state);
 * the chunk bitmap has the message's chunks from bit 2 on and bits 0 and
 * 1 clear, and sdr_recv_chunk_done() counts from the message's first
 * chunk.  An offset off the chunk grid, one that ends the message past
 * max_msg_size, and a flag it does not take are -EINVAL.
 */
TEST_F(lib, send_at_an_offset_lands_there)
{
	uint32_t cs = self->p.chunk_size, len = MSG - 2 * cs - 1000;
	uint32_t chunks, k, status;
	struct sdr_completion c;
	struct sdr_recv *h;
	const uint64_t *bm;
	const uint8_t *slot;

	pattern_fill(sdr_send_slot(self->fs, 0), 9, 0, len);
	EXPECT_EQ(sdr_flow_send_post_at(self->fs, 0, 0, 0, len, cs + 1, 0, 0,
					NULL), -EINVAL);
	EXPECT_EQ(sdr_flow_send_post_at(self->fs, 0, 0, 0, len, 3 * cs, 0, 0,
					NULL), -EINVAL);
	EXPECT_EQ(sdr_flow_send_post_at(self->fs, SDR_SEND_STREAM_START, 0, 0,
					len, 0, 0, 0, NULL), -EINVAL);
	ASSERT_EQ(sdr_flow_recv_post(self->fr, 3, &h), 0);
	slot = sdr_recv_data(h);
	ASSERT_TRUE(slot);
	ASSERT_EQ(sdr_flow_send_post_at(self->fs, 0, 0, 0, len, 2 * cs, 0x77,
					5, NULL), 0);
	ASSERT_EQ(poll_one(self->cr, &c), 1);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_EQ(c.len, len);
	EXPECT_EQ(c.imm, 0x77);
	ASSERT_EQ(sdr_recv_poll(h, &status), 0);
	EXPECT_EQ(status, SDR_STATUS_OK);
	EXPECT_EQ(sdr_recv_state(h)->dst_off, 2 * cs);
	EXPECT_TRUE((const uint8_t *)sdr_recv_data(h) == slot + 2 * cs);
	EXPECT_EQ(pattern_check(sdr_recv_data(h), 9, 0, len), -1);
	ASSERT_EQ(sdr_recv_bitmap(h, &bm, &chunks), 0);
	EXPECT_EQ(chunks, (len + cs - 1) / cs);
	EXPECT_EQ(bm[0] & 3, 0);
	for (k = 0; k < chunks; k++) {
		EXPECT_EQ((bm[(k + 2) / 64] >> ((k + 2) % 64)) & 1, 1);
		EXPECT_EQ(sdr_recv_chunk_done(h, k), 1);
	}
	EXPECT_EQ(sdr_recv_release(h), 0);
}

/*
 * A stream of parts through libsdr: refused on a NONE flow; on SR, a part
 * from a pointer and one from the send region land at chunks of their
 * own, in the order posted, each chunk's bit set as it fills (the chunk a
 * part ends in at its end), before the stream ended.  The receive says
 * STREAM, its chunks are the buffer's, its length (0 until then) the
 * parts' bytes once it completed; nothing lands anywhere else.
 */
TEST_F(lib, parts_land_where_each_says)
{
	uint32_t cs = self->p.chunk_size, pay = self->p.payload;
	uint32_t bytes = 2 * cs + 100, chunks, seq, imm, len, n;
	uint8_t *part = malloc(cs + 100);
	struct sdr_completion c;
	struct sdr_recv *h;
	const uint64_t *bm;
	const uint8_t *d;
	uint64_t bits[4];

	ASSERT_TRUE(part);
	ASSERT_GE(MSG, 3 * cs + 100);
	ASSERT_LE((cs + pay - 1) / pay, 63);
	EXPECT_EQ(sdr_flow_parts_open(self->fs, 0, 0, &seq), -EOPNOTSUPP);
	ASSERT_EQ(sdr_flow_set_policy(self->fs, SDR_POLICY_SR), 0);
	ASSERT_EQ(sdr_flow_set_policy(self->fr, SDR_POLICY_SR), 0);
	ASSERT_EQ(sdr_flow_recv_post(self->fr, 7, &h), 0);
	ASSERT_EQ(sdr_flow_parts_open(self->fs, 0x55, 9, &seq), 0);
	/* cs + 100 bytes from a pointer at chunk 2: into chunk 3 */
	pattern_fill(part, 4, 2 * cs, cs + 100);
	ASSERT_EQ(sdr_flow_parts_add(self->fs, seq, SDR_SEND_USER_PTR, 0,
				     (uintptr_t)part, cs + 100, 2 * cs), 0);
	memset(part, 0, cs + 100);	/* copied at the call */
	/* a chunk from the send region at chunk 0 */
	pattern_fill(sdr_send_slot(self->fs, 0), 4, 0, cs);
	ASSERT_EQ(sdr_flow_parts_add(self->fs, seq, 0, 0, 0, cs, 0), 0);
	EXPECT_EQ(sdr_flow_parts_add(self->fs, seq, 0, 0, 0, cs, cs + 1),
		  -EINVAL);
	ASSERT_TRUE(WAIT_UNTIL(sdr_recv_chunk_done(h, 0) == 1 &&
			       sdr_recv_chunk_done(h, 2) == 1 &&
			       sdr_recv_chunk_done(h, 3) == 1, WAIT_HANG_MS));
	EXPECT_EQ(sdr_recv_chunk_done(h, 1), 0);
	EXPECT_TRUE(sdr_recv_state(h)->flags & SDR_RECV_F_STREAM);
	ASSERT_EQ(sdr_recv_imm(h, &imm, &len), 0);
	EXPECT_EQ(imm, 0x55);
	EXPECT_EQ(len, 0);		/* not ended */
	ASSERT_EQ(sdr_recv_bitmap(h, &bm, &chunks), 0);
	EXPECT_EQ(chunks, (MSG + cs - 1) / cs);
	EXPECT_EQ(bm[0] & 0xf, 0xd);
	EXPECT_EQ(sdr_recv_chunk_done(h, chunks), -EINVAL);
	ASSERT_EQ(sdr_recv_chunk_expand(h, 1, bits, 4, &n), 0);
	EXPECT_EQ(n, (cs + pay - 1) / pay);
	EXPECT_EQ(bits[0], 0);
	ASSERT_EQ(sdr_recv_chunk_expand(h, 0, bits, 4, &n), 0);
	EXPECT_EQ(bits[0], (1ULL << n) - 1);
	EXPECT_EQ(sdr_recv_poll(h, NULL), -EAGAIN);

	ASSERT_EQ(sdr_flow_parts_end(self->fs, seq), 0);
	EXPECT_EQ(sdr_flow_parts_end(self->fs, seq), -ESTALE);
	ASSERT_EQ(poll_one(self->cr, &c), 1);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_EQ(c.len, bytes);
	EXPECT_EQ(c.imm, 0x55);
	ASSERT_EQ(sdr_recv_imm(h, NULL, &len), 0);
	EXPECT_EQ(len, bytes);
	d = sdr_recv_data(h);
	EXPECT_EQ(pattern_check(d, 4, 0, cs), -1);
	EXPECT_EQ(first_not(d + cs, 0, cs), -1);
	EXPECT_EQ(pattern_check(d + 2 * cs, 4, 2 * cs, cs + 100), -1);
	EXPECT_EQ(first_not(d + 3 * cs + 100, 0, MSG - 3 * cs - 100), -1);
	ASSERT_EQ(poll_one(self->cs, &c), 1);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_EQ(c.user_data, 9);
	EXPECT_EQ(sdr_recv_release(h), 0);
	free(part);
}

/* sdr_flow_send_poll takes only its flow's sends; sdr_poll_cq gets the rest once. */
TEST_F(lib, completion_routing)
{
	struct sdr_flow_attr fa = { .policy = SDR_POLICY_NONE,
				    .max_msg_size = MSG, .max_msgs = 4 };
	struct sdr_completion c[8];
	struct sdr_flow *f2, *g2;
	struct sdr_flow_peer e1, e2;
	struct sdr_flow_info fi;
	struct sdr_recv *h;
	int64_t end;
	int n1 = 0, n2 = 0, k, got;

	f2 = sdr_flow_create(self->cs, &fa);
	g2 = sdr_flow_create(self->cr, &fa);
	ASSERT_TRUE(f2 && g2);
	ASSERT_EQ(sdr_flow_peer_info(f2, &e1), 0);
	ASSERT_EQ(sdr_flow_peer_info(g2, &e2), 0);
	ASSERT_EQ(sdr_flow_connect_peer(f2, &e2), 0);
	ASSERT_EQ(sdr_flow_connect_peer(g2, &e1), 0);
	ASSERT_EQ(sdr_flow_recv_post(self->fr, 1, &h), 0);
	ASSERT_EQ(sdr_flow_recv_post(g2, 2, &h), 0);
	ASSERT_EQ(sdr_flow_send_post_ptr(self->fs, "one", 3, 1, 11, NULL), 0);
	ASSERT_EQ(sdr_flow_send_post_ptr(f2, "two", 3, 2, 22, NULL), 0);
	/*
	 * Wait until both sends completed (flow 2's is on the ring once its
	 * flow has no send in flight), polling only flow 1's: that poll
	 * passes flow 2's completion by and must keep it.
	 */
	ASSERT_TRUE(WAIT_UNTIL(!sdr_flow_info(f2, &fi) && fi.sends_inflight == 0,
			       WAIT_HANG_MS));
	end = now_us() + WAIT_HANG_MS * 1000LL;
	while (n1 < 1 && now_us() < end) {
		got = sdr_flow_send_poll(self->fs, c, 8);
		ASSERT_GE(got, 0);
		for (k = 0; k < got; k++) {
			EXPECT_TRUE(c[k].flow == self->fs);
			EXPECT_EQ(c[k].type, SDR_CQE_SEND);
			EXPECT_EQ(c[k].status, SDR_STATUS_OK);
			EXPECT_EQ(c[k].user_data, 11);
			n1++;
		}
		if (!got)
			usleep(10000);
	}
	EXPECT_EQ(n1, 1);
	EXPECT_EQ(sdr_flow_send_poll(self->fs, c, 8), 0);
	/* Flow 2's send completion is still there for sdr_poll_cq, once. */
	end = now_us() + WAIT_HANG_MS * 1000LL;
	while (n2 < 1 && now_us() < end) {
		got = sdr_poll_cq(self->cs, c, 8);
		ASSERT_GE(got, 0);
		for (k = 0; k < got; k++) {
			EXPECT_TRUE(c[k].flow == f2);
			EXPECT_EQ(c[k].type, SDR_CQE_SEND);
			EXPECT_EQ(c[k].status, SDR_STATUS_OK);
			EXPECT_EQ(c[k].user_data, 22);
			n2++;
		}
		if (!got)
			sdr_wait(self->cs, 50);
	}
	EXPECT_EQ(n2, 1);
	EXPECT_EQ(sdr_poll_cq(self->cs, c, 8), 0);
	EXPECT_EQ(sdr_flow_send_poll(self->fs, c, 8), 0);
}

TEST_F(lib, destroy_flushes_to_the_ring)
{
	struct sdr_completion c[8];
	struct sdr_recv *h;
	uint32_t id = self->p.flow_id;
	int64_t end;
	int n = 0, k, got;

	ASSERT_EQ(sdr_flow_recv_post(self->fr, 41, &h), 0);
	ASSERT_EQ(sdr_flow_recv_post(self->fr, 42, &h), 0);
	{
		struct sdr_flow_props rp;

		ASSERT_EQ(sdr_flow_props(self->fr, &rp), 0);
		id = rp.flow_id;
	}
	ASSERT_EQ(sdr_poll_cq(self->cr, c, 8), 0);	/* route to the backlog */
	ASSERT_EQ(sdr_flow_destroy(self->fr), 0);
	self->fr = NULL;
	end = now_us() + WAIT_HANG_MS * 1000LL;
	while (n < 2 && now_us() < end) {
		got = sdr_poll_cq(self->cr, c, 8);
		for (k = 0; k < got; k++) {
			EXPECT_EQ(c[k].type, SDR_CQE_RECV);
			EXPECT_EQ(c[k].status, SDR_STATUS_FLUSHED);
			EXPECT_EQ(c[k].flow_id, id);
			EXPECT_TRUE(c[k].flow == NULL);
			EXPECT_TRUE(c[k].recv == NULL);
			EXPECT_EQ(c[k].user_data, 41 + n);
			n++;
		}
		if (!got)
			sdr_wait(self->cr, 50);
	}
	EXPECT_EQ(n, 2);
}

TEST(exchange_tcp_loopback)
{
	struct sdr_endpoint a, b, got;
	int status, sock = -1;
	char x = 0;
	pid_t pid;

	memset(&a, 0xa1, sizeof(a));
	memset(&b, 0xb2, sizeof(b));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct sdr_endpoint r;
		int s;

		th_in_body = 0;
		if (sdr_exchange_tcp("127.0.0.1", 18777, &b, &r, sizeof(r), 10000, &s))
			_exit(1);
		if (memcmp(&r, &a, sizeof(r)))
			_exit(2);
		if (write(s, "k", 1) != 1)
			_exit(3);
		close(s);
		_exit(0);
	}
	/*
	 * The server starts late on purpose (not a wait for an event): the
	 * client's connect is refused at first and must retry until it listens.
	 */
	usleep(300000);
	ASSERT_EQ(sdr_exchange_tcp(NULL, 18777, &a, &got, sizeof(got), 10000, &sock), 0);
	EXPECT_EQ(memcmp(&got, &b, sizeof(got)), 0);
	EXPECT_EQ(read(sock, &x, 1), 1);
	EXPECT_EQ(x, 'k');
	close(sock);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Nobody there: a bounded wait. */
	EXPECT_EQ(sdr_exchange_tcp("127.0.0.1", 18778, &a, &got, sizeof(got), 300, NULL),
		  -ETIMEDOUT);
	/* Lengths that differ: -EPROTO on both ends. */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		char r[8];

		th_in_body = 0;
		_exit(sdr_exchange_tcp("127.0.0.1", 18779, "1234567", r, 8, 10000, NULL) ==
		      -EPROTO ? 0 : 1);
	}
	EXPECT_EQ(sdr_exchange_tcp(NULL, 18779, &a, &got, sizeof(got), 10000, NULL), -EPROTO);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * sdr_query with and without a context: the kernel's answer (the same as
 * the raw ioctl), and its policies are what flow creation and
 * sdr_flow_set_policy take.
 */
/*
 * Rails over the two devices: a flow on dev0 takes dev1 as its rail 1
 * and its peer on dev1 takes dev0, so rail 0 runs dev0 -> dev1 and rail
 * 1 dev1 -> dev0, each its own pair of QPs.  0, or -1 if a step failed.
 */
static int rails_pair(const struct sdr_flow_attr *fa, struct sdr_ctx **cs,
		      struct sdr_ctx **cr, struct sdr_flow **fs,
		      struct sdr_flow **fr)
{
	struct sdr_flow_peer es, er;
	struct sdr_rail_ep rs, rr;

	*cs = sdr_open(dev0(), NULL);
	*cr = sdr_open(dev1(), NULL);
	*fs = *cs ? sdr_flow_create(*cs, fa) : NULL;
	*fr = *cr ? sdr_flow_create(*cr, fa) : NULL;
	if (!*fs || !*fr || sdr_flow_rail_add(*fs, dev1(), 0, &rs) != 1 ||
	    sdr_flow_rail_add(*fr, dev0(), 0, &rr) != 1 ||
	    sdr_flow_rail_connect(*fs, 1, &rr) ||
	    sdr_flow_rail_connect(*fr, 1, &rs) ||
	    sdr_flow_peer_info(*fs, &es) || sdr_flow_peer_info(*fr, &er) ||
	    sdr_flow_connect_peer(*fs, &er) || sdr_flow_connect_peer(*fr, &es))
		return -1;
	return 0;
}

/*
 * @n messages of MSG random bytes (seeded by @seed) from @fs to @fr, four
 * at a time: how many arrived complete with the hash they were sent with.
 */
static int rails_xfer(struct sdr_ctx *cs, struct sdr_ctx *cr,
		      struct sdr_flow *fs, struct sdr_flow *fr, int n,
		      uint64_t seed)
{
	struct sdr_flow_props p;
	struct sdr_completion c[8];
	uint64_t want[4];
	struct sdr_recv *h;
	int i, k, got, good = 0, sends;
	int64_t end;

	if (sdr_flow_props(fs, &p))
		return -1;
	for (i = 0; i < n; i += 4) {
		int batch = n - i < 4 ? n - i : 4, recvs = 0;

		sends = 0;
		for (k = 0; k < batch; k++) {
			uint8_t *buf = sdr_send_slot(fs, k);

			random_fill(buf, MSG, seed + i + k);
			want[k] = hash64(buf, MSG);
			if (sdr_flow_recv_post(fr, k, &h) ||
			    sdr_flow_send_post(fs, (uint64_t)k * p.slot_stride, MSG,
					  k, k, NULL))
				return -1;
		}
		end = now_us() + WAIT_HANG_MS * 1000LL;
		while ((recvs < batch || sends < batch) && now_us() < end) {
			got = sdr_poll_cq(cr, c, 8);
			for (k = 0; k < got; k++) {
				recvs++;
				if (c[k].type == SDR_CQE_RECV &&
				    c[k].status == SDR_STATUS_OK &&
				    c[k].len == MSG && c[k].imm < 4 &&
				    hash64(sdr_recv_data(c[k].recv), MSG) ==
				    want[c[k].imm])
					good++;
				sdr_recv_release(c[k].recv);
			}
			got = sdr_poll_cq(cs, c, 8);
			for (k = 0; k < got; k++)
				sends += c[k].type == SDR_CQE_SEND &&
					 c[k].status == SDR_STATUS_OK;
			if (!got)
				usleep(2000);
		}
	}
	return good;
}

/* The packets each of the flow's paths sent (flows/<id>/path/tx_packets). */
static int path_tx(const char *dev, struct sdr_flow *f, uint64_t *tx, int n)
{
	struct sdr_flow_props p;
	char path[160], buf[256], *s = buf, *e;
	int i;

	if (sdr_flow_props(f, &p))
		return -1;
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/path/tx_packets",
		 dev, p.flow_id);
	if (sysfs_str(path, buf, sizeof(buf)))
		return -1;
	for (i = 0; i < n; i++) {
		tx[i] = strtoull(s, &e, 10);
		if (e == s)
			return -1;
		s = e;
	}
	return 0;
}

/*
 * Rail @r's line of flows/<id>/rails of flow @f on @dev: its device name
 * in @name, its state in @state, its packets out and in.  0 or -1.
 */
static int rail_line(const char *dev, struct sdr_flow *f, unsigned int r,
		     char *name, char *state, uint64_t *tx, uint64_t *rx)
{
	struct sdr_flow_props p;
	char path[160], buf[512], *line = buf;
	unsigned int idx, first, last;
	unsigned long long t, x;
	FILE *fp;

	if (sdr_flow_props(f, &p))
		return -1;
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/rails", dev,
		 p.flow_id);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	t = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[t] = 0;
	while (line && *line) {
		if (sscanf(line, "%u %63s paths %u-%u %15s tx %llu rx %llu", &idx,
			   name, &first, &last, state, &t, &x) == 7 && idx == r) {
			*tx = t;
			*rx = x;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -1;
}

/*
 * A flow over two rails: every message arrives whole with its hash under
 * SR, EC and ADAPTIVE, both rails' paths carry packets and sysfs counts
 * them per rail on both ends; NONE sends over rail 0 only.
 */
TEST(rails_carry_every_policy)
{
	struct sdr_flow_attr fa = { .policy = SDR_POLICY_SR,
				    .max_msg_size = MSG, .max_msgs = 4 };
	static const uint32_t pol[] = { SDR_POLICY_SR, SDR_POLICY_EC,
					SDR_POLICY_ADAPTIVE };
	uint64_t tx[2], t0, r0, t1, r1, t0b, t1b;
	char name[64], state[16];
	struct sdr_ctx *cs, *cr;
	struct sdr_flow *fs, *fr;
	unsigned int i;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	ASSERT_EQ(rails_pair(&fa, &cs, &cr, &fs, &fr), 0);
	for (i = 0; i < sizeof(pol) / sizeof(pol[0]); i++) {
		ASSERT_EQ(sdr_flow_set_policy(fs, pol[i]), 0);
		EXPECT_EQ(rails_xfer(cs, cr, fs, fr, 8, 100 * i), 8);
	}
	ASSERT_EQ(path_tx(dev0(), fs, tx, 2), 0);
	TH_LOG("path tx packets: rail 0 %llu, rail 1 %llu",
	       (unsigned long long)tx[0], (unsigned long long)tx[1]);
	EXPECT_GT(tx[0], 0);
	EXPECT_GT(tx[1], 0);

	/* per rail in sysfs: the sender's out, the receiver's in */
	ASSERT_EQ(rail_line(dev0(), fs, 1, name, state, &t1, &r1), 0);
	EXPECT_EQ(strcmp(name, dev1()), 0);
	EXPECT_EQ(strcmp(state, "up"), 0);
	EXPECT_GE(t1, tx[1]);
	ASSERT_EQ(rail_line(dev1(), fr, 1, name, state, &t0, &r0), 0);
	EXPECT_EQ(strcmp(name, dev0()), 0);
	EXPECT_GT(r0, 0);
	EXPECT_LE(r0, t1);	/* what came by rail 1 was sent by it */
	ASSERT_EQ(rail_line(dev0(), fs, 0, name, state, &t0, &r0), 0);
	EXPECT_EQ(strcmp(name, dev0()), 0);

	/* NONE: rail 0 only */
	ASSERT_EQ(sdr_flow_set_policy(fs, SDR_POLICY_NONE), 0);
	EXPECT_EQ(rails_xfer(cs, cr, fs, fr, 4, 1000), 4);
	ASSERT_EQ(rail_line(dev0(), fs, 0, name, state, &t0b, &r0), 0);
	ASSERT_EQ(rail_line(dev0(), fs, 1, name, state, &t1b, &r1), 0);
	{
		struct sdr_flow_props pp;

		ASSERT_EQ(sdr_flow_props(fs, &pp), 0);
		EXPECT_GE(t0b - t0, 4 * (MSG / pp.payload));
	}
	EXPECT_EQ(t1b, t1);
	sdr_close(cs);
	sdr_close(cr);
}

/* A connected SR pair on the two devices, for the group tests. */
static int group_pair(struct sdr_ctx **ca, struct sdr_ctx **cb,
		      struct sdr_flow **fa, struct sdr_flow **fb)
{
	struct sdr_flow_attr at = { .policy = SDR_POLICY_SR,
				    .max_msg_size = MSG, .max_msgs = 8 };
	struct sdr_flow_peer ea, eb;

	*ca = sdr_open(dev0(), NULL);
	*cb = sdr_open(dev1(), NULL);
	if (!*ca || !*cb)
		return -1;
	*fa = sdr_flow_create(*ca, &at);
	*fb = sdr_flow_create(*cb, &at);
	if (!*fa || !*fb || sdr_flow_peer_info(*fa, &ea) ||
	    sdr_flow_peer_info(*fb, &eb) || sdr_flow_connect_peer(*fa, &eb) ||
	    sdr_flow_connect_peer(*fb, &ea))
		return -1;
	return 0;
}

/*
 * Completions of @ctx through sdr_poll_cq until group @g's: how many OK
 * ones of @type came before it (-1: it did not come).
 */
static int members_before(struct sdr_ctx *ctx, uint8_t type, uint32_t g)
{
	int64_t end = now_us() + WAIT_HANG_MS * 1000LL;
	struct sdr_completion c[16];
	int k, got, n = 0;

	while (now_us() < end) {
		got = sdr_poll_cq(ctx, c, 16);
		for (k = 0; k < got; k++) {
			if (c[k].type == SDR_CQE_GROUP) {
				EXPECT_EQ(c[k].seq, g);
				return n;
			}
			EXPECT_EQ(c[k].type, type);
			EXPECT_EQ(c[k].status, SDR_STATUS_OK);
			n++;
		}
		if (!got)
			sdr_wait(ctx, 50);
	}
	return -1;
}

/*
 * Groups: a closed group completes once each member did, after them in
 * the ring, with their count and the worst status; sdr_group_wait keeps
 * what it passes over for sdr_poll_cq and sdr_flow_send_poll.  Delivered bytes
 * are checked by hash.  An empty group completes at its close, an
 * abandoned receive counts FAILED, a flushed one FLUSHED.
 */
TEST(groups_complete_after_members)
{
	static const uint32_t len[4] = { MSG, 1, 5000, 30000 };
	struct sdr_completion c[16], gc;
	struct sdr_recv *h[4];
	struct sdr_ctx *ca, *cb;
	struct sdr_flow *fa, *fb;
	uint32_t ga, gb, seq, round, i;
	uint8_t *buf = malloc(MSG);
	int k, got;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	ASSERT_TRUE(buf);
	ASSERT_EQ(group_pair(&ca, &cb, &fa, &fb), 0);
	/* completions passed over are kept (sdr_poll_cq is in use) */
	ASSERT_EQ(sdr_poll_cq(cb, c, 0), 0);
	for (round = 0; round < 3; round++) {
		ASSERT_EQ(sdr_group_open(ca, 100 + round, &ga), 0);
		ASSERT_EQ(sdr_group_open(cb, 200 + round, &gb), 0);
		ASSERT_EQ(sdr_flow_set_group(fb, gb), 0);
		for (i = 0; i < 4; i++)
			ASSERT_EQ(sdr_flow_recv_post(fb, round * 10 + i, &h[i]), 0);
		ASSERT_EQ(sdr_flow_set_group(fb, 0), 0);
		ASSERT_EQ(sdr_group_close(cb, gb), 0);
		ASSERT_EQ(sdr_flow_set_group(fa, ga), 0);
		for (i = 0; i < 4; i++) {
			random_fill(buf, len[i], round * 10 + i);
			ASSERT_EQ(sdr_flow_send_post_ptr(fa, buf, len[i], i,
						    round * 10 + i, &seq), 0);
		}
		ASSERT_EQ(sdr_flow_set_group(fa, 0), 0);
		/* not closed yet: nothing completes it */
		EXPECT_EQ(sdr_group_poll(ca, ga, &gc), 0);
		ASSERT_EQ(sdr_group_close(ca, ga), 0);
		if (round < 2) {
			ASSERT_EQ(sdr_group_wait(cb, gb, WAIT_HANG_MS, &gc), 0);
			EXPECT_EQ(gc.type, SDR_CQE_GROUP);
			EXPECT_EQ(gc.seq, gb);
			EXPECT_EQ(gc.slot, 4);
			EXPECT_EQ(gc.imm, 0);
			EXPECT_EQ(gc.status, SDR_STATUS_OK);
			EXPECT_EQ(gc.user_data, 200 + round);
			EXPECT_TRUE(gc.flow == NULL && gc.recv == NULL);
			/* its members' completions are there, kept */
			got = sdr_poll_cq(cb, c, 16);
			EXPECT_EQ(got, 4);
			for (k = 0; k < got; k++)
				EXPECT_EQ(c[k].type, SDR_CQE_RECV);
			ASSERT_EQ(sdr_group_wait(ca, ga, WAIT_HANG_MS, &gc), 0);
			EXPECT_EQ(gc.seq, ga);
			EXPECT_EQ(gc.slot, 4);
			EXPECT_EQ(gc.status, SDR_STATUS_OK);
			EXPECT_EQ(gc.user_data, 100 + round);
			EXPECT_EQ(sdr_flow_send_poll(fa, c, 16), 4);
		} else {
			/* one ring order: the members, then the group */
			EXPECT_EQ(members_before(cb, SDR_CQE_RECV, gb), 4);
			EXPECT_EQ(members_before(ca, SDR_CQE_SEND, ga), 4);
		}
		for (i = 0; i < 4; i++) {
			uint32_t st = 99;

			EXPECT_EQ(sdr_recv_poll(h[i], &st), 0);
			EXPECT_EQ(st, SDR_STATUS_OK);
			random_fill(buf, len[i], round * 10 + i);
			EXPECT_EQ(hash64(sdr_recv_data(h[i]), len[i]),
				  hash64(buf, len[i]));
			EXPECT_EQ(sdr_recv_release(h[i]), 0);
		}
	}

	/* an empty group completes as it closes */
	ASSERT_EQ(sdr_group_open(ca, 7, &ga), 0);
	ASSERT_EQ(sdr_group_close(ca, ga), 0);
	ASSERT_EQ(sdr_group_wait(ca, ga, 0, &gc), 0);
	EXPECT_EQ(gc.slot, 0);
	EXPECT_EQ(gc.status, SDR_STATUS_OK);
	EXPECT_EQ(sdr_group_wait(ca, ga, 0, &gc), -ETIMEDOUT);
	EXPECT_EQ(sdr_group_close(ca, ga), -ENOENT);

	/* a receive given back before it completed counts FAILED */
	ASSERT_EQ(sdr_group_open(cb, 8, &gb), 0);
	ASSERT_EQ(sdr_flow_set_group(fb, gb), 0);
	ASSERT_EQ(sdr_flow_recv_post(fb, 1, &h[0]), 0);
	ASSERT_EQ(sdr_flow_recv_post(fb, 2, &h[1]), 0);
	ASSERT_EQ(sdr_flow_set_group(fb, 0), 0);
	ASSERT_EQ(sdr_recv_release(h[0]), 0);
	ASSERT_EQ(sdr_group_close(cb, gb), 0);
	/* a flow naming a group that is not open: its posts fail */
	ASSERT_EQ(sdr_flow_set_group(fa, 0xfffffff0), 0);
	EXPECT_EQ(sdr_flow_send_post_ptr(fa, buf, 10, 0, 0, NULL), -ENOENT);
	EXPECT_EQ(sdr_group_poll(cb, gb, &gc), 0);	/* h[1] is pending */
	/* ... and one its flow's destroy flushes, FLUSHED */
	ASSERT_EQ(sdr_flow_destroy(fb), 0);
	ASSERT_EQ(sdr_group_wait(cb, gb, WAIT_HANG_MS, &gc), 0);
	EXPECT_EQ(gc.slot, 2);
	EXPECT_EQ(gc.imm, 2);
	EXPECT_EQ(gc.status, SDR_STATUS_FLUSHED);
	EXPECT_EQ(gc.user_data, 8);

	EXPECT_EQ(sdr_group_open(NULL, 0, &ga), -EINVAL);
	EXPECT_EQ(sdr_group_close(ca, 0), -EINVAL);
	EXPECT_EQ(sdr_group_wait(ca, 0, 0, &gc), -EINVAL);
	EXPECT_EQ(sdr_flow_set_group(NULL, 1), -EINVAL);
	sdr_close(ca);
	sdr_close(cb);
	free(buf);
}

/* SDR_IOC_FLOW_RAIL's errors, each with nothing changed. */
TEST(rails_errors)
{
	struct sdr_flow_attr fa = { .policy = SDR_POLICY_SR,
				    .max_msg_size = 4096, .max_msgs = 4 };
	struct sdr_rail_ep r1, r2, bad;
	struct sdr_flow_peer es, er, eo;
	struct sdr_flow *fs, *fr, *fo;
	struct sdr_ctx *cs, *cr;
	struct sdr_flow_rail raw;
	struct sdr_caps caps;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	cs = sdr_open(dev0(), NULL);
	cr = sdr_open(dev1(), NULL);
	ASSERT_TRUE(cs && cr);
	ASSERT_EQ(sdr_query(cs, &caps), 0);
	fs = sdr_flow_create(cs, &fa);
	fr = sdr_flow_create(cr, &fa);
	fo = sdr_flow_create(cr, &fa);
	ASSERT_TRUE(fs && fr && fo);

	/* its own device, none such, too many paths, a bad op or field */
	EXPECT_EQ(sdr_flow_rail_add(fs, dev0(), 0, &r1), -EINVAL);
	EXPECT_EQ(sdr_flow_rail_add(fs, "sdr_no_such_dev", 0, &r1), -ENODEV);
	EXPECT_EQ(sdr_flow_rail_add(fs, dev1(), caps.paths_max + 1, &r1),
		  -EINVAL);
	memset(&raw, 0, sizeof(raw));
	raw.size = sizeof(raw);
	raw.flow_id = 0x7fffff;
	raw.op = SDR_RAIL_ADD;
	strcpy((char *)raw.ibdev, dev1());
	EXPECT_EQ(ioctl(sdr_ctx_fd(cs), SDR_IOC_FLOW_RAIL, &raw), -1);
	EXPECT_EQ(errno, ENOENT);
	EXPECT_EQ(sdr_flow_props(fs, &(struct sdr_flow_props){ 0 }), 0);
	{
		struct sdr_flow_props p;

		ASSERT_EQ(sdr_flow_props(fs, &p), 0);
		raw.flow_id = p.flow_id;
	}
	raw.op = 7;
	EXPECT_EQ(ioctl(sdr_ctx_fd(cs), SDR_IOC_FLOW_RAIL, &raw), -1);
	EXPECT_EQ(errno, EINVAL);
	raw.op = SDR_RAIL_ADD;
	memset(raw.ibdev, 'x', sizeof(raw.ibdev));	/* no NUL */
	EXPECT_EQ(ioctl(sdr_ctx_fd(cs), SDR_IOC_FLOW_RAIL, &raw), -1);
	EXPECT_EQ(errno, EINVAL);

	/* the rail, once; not twice */
	ASSERT_EQ(sdr_flow_rail_add(fs, dev1(), 0, &r1), 1);
	EXPECT_EQ(sdr_flow_rail_add(fs, dev1(), 0, &r1), -EINVAL);
	ASSERT_EQ(sdr_flow_rail_add(fr, dev0(), 0, &r2), 1);

	/* connecting: no such rail, a bad endpoint, then the flow too early */
	EXPECT_EQ(sdr_flow_rail_connect(fs, 0, &r2), -EINVAL);
	EXPECT_EQ(sdr_flow_rail_connect(fs, 2, &r2), -EINVAL);
	bad = r2;
	bad.ep.magic ^= 1;
	EXPECT_EQ(sdr_flow_rail_connect(fs, 1, &bad), -EINVAL);
	bad = r2;
	bad.ep.qpn = 0;
	EXPECT_EQ(sdr_flow_rail_connect(fs, 1, &bad), -EINVAL);
	bad = r2;
	bad.paths.qpn[0] ^= 1;	/* not the endpoint's qpn */
	EXPECT_EQ(sdr_flow_rail_connect(fs, 1, &bad), -EINVAL);
	ASSERT_EQ(sdr_flow_peer_info(fs, &es), 0);
	ASSERT_EQ(sdr_flow_peer_info(fr, &er), 0);
	ASSERT_EQ(sdr_flow_peer_info(fo, &eo), 0);
	EXPECT_EQ(sdr_flow_connect_peer(fs, &er), -EINVAL);	/* rail 1 not yet */
	ASSERT_EQ(sdr_flow_rail_connect(fs, 1, &r2), 0);
	EXPECT_EQ(sdr_flow_rail_connect(fs, 1, &r2), -EISCONN);
	/* the rail is fr's: a flow that is not its peer is refused */
	EXPECT_EQ(sdr_flow_connect_peer(fs, &eo), -EINVAL);
	ASSERT_EQ(sdr_flow_connect_peer(fs, &er), 0);
	ASSERT_EQ(sdr_flow_rail_connect(fr, 1, &r1), 0);
	ASSERT_EQ(sdr_flow_connect_peer(fr, &es), 0);
	/* connected: no more rails */
	EXPECT_EQ(sdr_flow_rail_add(fs, dev1(), 0, &r1), -EISCONN);
	EXPECT_EQ(sdr_flow_rail_connect(fs, 1, &r2), -EISCONN);
	/* and it runs */
	EXPECT_EQ(sdr_flow_send_post_ptr(fs, "rail", 4, 1, 1, NULL), 0);
	sdr_close(cs);
	sdr_close(cr);
}

TEST(query)
{
	struct sdr_flow_attr fa = { .max_msg_size = 4096, .max_msgs = 2 };
	struct sdr_caps a, b;
	struct sdr_query q;
	struct sdr_flow *f, *g;
	struct sdr_ctx *c;
	char list[64];
	uint32_t id;
	int fd;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing");
	EXPECT_EQ(sdr_query(NULL, NULL), -EINVAL);
	memset(&a, 0xa5, sizeof(a));
	ASSERT_EQ(sdr_query(NULL, &a), 0);
	fd = sdr_dev_open();
	ASSERT_GE(fd, 0);
	ASSERT_EQ(raw_query(fd, &q), 0);
	close(fd);
	EXPECT_EQ(a.abi_version, q.abi_version);
	EXPECT_EQ(a.abi_version, SDR_ABI_VERSION);
	EXPECT_EQ(a.policy_nr, SDR_POLICY_NR);
	EXPECT_EQ(a.policies, q.policies);
	EXPECT_EQ(a.features, q.features);
	EXPECT_EQ(a.features, SDR_FEATURE_AUTH | SDR_FEATURE_MULTIPATH |
			      SDR_FEATURE_RAILS | SDR_FEATURE_GROUPS |
			      SDR_FEATURE_MR | SDR_FEATURE_KEX |
			      SDR_FEATURE_AEAD);
	EXPECT_EQ(a.paths_max, q.paths_max);
	EXPECT_EQ(a.reserved32, 0);
	EXPECT_EQ(a.ec_max_k, q.ec_max_k);
	EXPECT_EQ(a.ec_max_m, q.ec_max_m);
	EXPECT_EQ(a.max_msg_size, q.max_msg_size);
	EXPECT_EQ(a.max_msgs, q.max_msgs);
	EXPECT_EQ(a.max_msgs, 1024);
	for (id = 0; id < 3; id++)
		EXPECT_EQ(a.reserved[id], 0);
	/* this version: none, sr, ec, adaptive and auto */
	EXPECT_EQ(sdr_policy_list(a.policies, ", ", list, sizeof(list)), 28);
	EXPECT_EQ(strcmp(list, "none, sr, ec, adaptive, auto"), 0);

	c = sdr_open(dev0(), NULL);
	ASSERT_TRUE(c);
	ASSERT_EQ(sdr_query(c, &b), 0);
	EXPECT_EQ(memcmp(&a, &b, sizeof(a)), 0);
	fa.policy = SDR_POLICY_NONE;
	g = sdr_flow_create(c, &fa);
	ASSERT_TRUE(g);
	for (id = 0; id < SDR_POLICY_NR; id++) {
		int run = !!(a.policies & (1ULL << id));
		struct sdr_flow_props p;

		fa.policy = id;
		errno = 0;
		f = sdr_flow_create(c, &fa);
		EXPECT_EQ(f != NULL, run);
		if (f) {
			EXPECT_EQ(sdr_flow_props(f, &p), 0);
			EXPECT_EQ(p.policy, id);
			EXPECT_EQ(sdr_flow_destroy(f), 0);
		} else {
			EXPECT_EQ(errno, EOPNOTSUPP);
		}
		EXPECT_EQ(sdr_flow_set_policy(g, id), run ? 0 : -EOPNOTSUPP);
	}
	EXPECT_EQ(sdr_flow_set_policy(g, SDR_POLICY_NR), -EINVAL);
	EXPECT_EQ(sdr_close(c), 0);
}

TEST(names)
{
	char buf[64];
	uint32_t p;

	EXPECT_EQ(strcmp(sdr_status_str(SDR_STATUS_PARTIAL), "partial"), 0);
	EXPECT_EQ(strcmp(sdr_status_str(77), "unknown"), 0);
	EXPECT_EQ(strcmp(sdr_policy_str(SDR_POLICY_SR), "sr"), 0);
	EXPECT_EQ(sdr_policy_parse("Adaptive", &p), 0);
	EXPECT_EQ(p, SDR_POLICY_ADAPTIVE);
	EXPECT_EQ(sdr_policy_parse("auto", &p), 0);
	EXPECT_EQ(p, SDR_POLICY_AUTO);
	EXPECT_EQ(SDR_POLICY_AUTO, 4);
	EXPECT_EQ(strcmp(sdr_policy_str(SDR_POLICY_AUTO), "auto"), 0);
	EXPECT_EQ(strcmp(sdr_policy_str(SDR_POLICY_NR), "unknown"), 0);
	/* every defined id has a name, which parses back to it */
	for (uint32_t i = 0; i < SDR_POLICY_NR; i++) {
		EXPECT_NE(strcmp(sdr_policy_str(i), "unknown"), 0);
		EXPECT_EQ(sdr_policy_parse(sdr_policy_str(i), &p), 0);
		EXPECT_EQ(p, i);
	}
	/* masks to lists, cut as snprintf cuts */
	EXPECT_EQ(sdr_policy_list((1ULL << SDR_POLICY_NR) - 1, "|", buf, sizeof(buf)),
		  (int)strlen("none|sr|ec|adaptive|auto"));
	EXPECT_EQ(strcmp(buf, "none|sr|ec|adaptive|auto"), 0);
	EXPECT_EQ(sdr_policy_list(1ULL << SDR_POLICY_EC | 1ULL << 40, ", ", buf,
				  sizeof(buf)), 6);
	EXPECT_EQ(strcmp(buf, "ec, 40"), 0);
	EXPECT_EQ(sdr_policy_list(0, ",", buf, sizeof(buf)), 0);
	EXPECT_EQ(buf[0], 0);
	EXPECT_EQ(sdr_policy_list(7, ", ", buf, 7), 12);
	EXPECT_EQ(strcmp(buf, "none, "), 0);
	EXPECT_EQ(sdr_policy_list(7, ", ", NULL, 0), 12);
	EXPECT_EQ(sdr_policy_list(7, NULL, buf, sizeof(buf)), -EINVAL);
	EXPECT_EQ(sdr_policy_list(7, ",", NULL, 4), -EINVAL);
	EXPECT_EQ(sdr_policy_parse("2", &p), 0);
	EXPECT_EQ(p, SDR_POLICY_EC);
	EXPECT_EQ(sdr_policy_parse("bogus", &p), -EINVAL);
}
