// SPDX-License-Identifier: GPL-2.0
/*
 * t_libsdr: the library's own promises - the error convention (negative
 * errno / NULL + errno), opening by name, GID or IPv4 address, the
 * "retry" answers before a message starts, stale handles, waiting,
 * completion routing between sdr_send_poll and sdr_poll_cq, flushes on
 * destroy, the TCP blob exchange, sdr_query and the policy names.
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
	struct sdr_endpoint es, er;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	ASSERT_EQ(none_idle_max(), 0);
	self->cs = sdr_open(dev0(), NULL);
	self->cr = sdr_open(dev1(), NULL);
	ASSERT_TRUE(self->cs && self->cr);
	self->fs = sdr_flow_create(self->cs, &fa);
	self->fr = sdr_flow_create(self->cr, &fa);
	ASSERT_TRUE(self->fs && self->fr);
	ASSERT_EQ(sdr_flow_endpoint(self->fs, &es), 0);
	ASSERT_EQ(sdr_flow_endpoint(self->fr, &er), 0);
	ASSERT_EQ(sdr_flow_connect(self->fs, &er), 0);
	ASSERT_EQ(sdr_flow_connect(self->fr, &es), 0);
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

TEST_F(lib, before_start_retry_and_stale_handles)
{
	struct sdr_completion c;
	struct sdr_recv *h;
	const uint64_t *bm;
	uint32_t imm, len, chunks, status;
	int64_t end;
	int got = 0;

	ASSERT_EQ(sdr_recv_post(self->fr, 99, &h), 0);
	EXPECT_EQ(sdr_recv_user_data(h), 99);
	EXPECT_LT(sdr_recv_slot(h), 4);
	EXPECT_EQ(sdr_recv_imm_get(h, &imm, &len), -EAGAIN);
	EXPECT_EQ(sdr_recv_bitmap_get(h, &bm, &chunks), -EAGAIN);
	EXPECT_EQ(sdr_recv_chunk_done(h, 0), -EAGAIN);
	EXPECT_EQ(sdr_recv_poll(h, &status), -EAGAIN);
	EXPECT_EQ(sdr_recv_state(h)->state, SDR_RECV_POSTED);

	pattern_fill(sdr_send_slot(self->fs, 1), 5, 0, MSG);
	ASSERT_EQ(sdr_send_post(self->fs, self->p.slot_stride, MSG, 0xabcd, 7, NULL), 0);
	end = now_us() + WAIT_HANG_MS * 1000LL;
	while (!got && now_us() < end) {
		got = sdr_poll_cq(self->cr, &c, 1);
		if (!got)
			sdr_wait(self->cr, 100);
	}
	ASSERT_EQ(got, 1);
	EXPECT_EQ(c.type, SDR_CQE_RECV);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_TRUE(c.flow == self->fr);
	EXPECT_TRUE(c.recv == h);
	EXPECT_EQ(c.user_data, 99);
	EXPECT_EQ(c.imm, 0xabcd);
	EXPECT_EQ(c.len, MSG);
	ASSERT_EQ(sdr_recv_imm_get(h, &imm, &len), 0);
	EXPECT_EQ(imm, 0xabcd);
	EXPECT_EQ(len, MSG);
	ASSERT_EQ(sdr_recv_bitmap_get(h, &bm, &chunks), 0);
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
	EXPECT_EQ(sdr_recv_complete(h), 0);
	/* The handle is dead now. */
	EXPECT_EQ(sdr_recv_complete(h), -ESTALE);
	EXPECT_EQ(sdr_recv_imm_get(h, &imm, &len), -ESTALE);
	EXPECT_EQ(sdr_recv_poll(h, &status), -ESTALE);
}

/* sdr_send_poll takes only its flow's sends; sdr_poll_cq gets the rest once. */
TEST_F(lib, completion_routing)
{
	struct sdr_flow_attr fa = { .policy = SDR_POLICY_NONE,
				    .max_msg_size = MSG, .max_msgs = 4 };
	struct sdr_completion c[8];
	struct sdr_flow *f2, *g2;
	struct sdr_endpoint e1, e2;
	struct sdr_flow_info fi;
	struct sdr_recv *h;
	int64_t end;
	int n1 = 0, n2 = 0, k, got;

	f2 = sdr_flow_create(self->cs, &fa);
	g2 = sdr_flow_create(self->cr, &fa);
	ASSERT_TRUE(f2 && g2);
	ASSERT_EQ(sdr_flow_endpoint(f2, &e1), 0);
	ASSERT_EQ(sdr_flow_endpoint(g2, &e2), 0);
	ASSERT_EQ(sdr_flow_connect(f2, &e2), 0);
	ASSERT_EQ(sdr_flow_connect(g2, &e1), 0);
	ASSERT_EQ(sdr_recv_post(self->fr, 1, &h), 0);
	ASSERT_EQ(sdr_recv_post(g2, 2, &h), 0);
	ASSERT_EQ(sdr_send_post_ptr(self->fs, "one", 3, 1, 11, NULL), 0);
	ASSERT_EQ(sdr_send_post_ptr(f2, "two", 3, 2, 22, NULL), 0);
	/*
	 * Wait until both sends completed (flow 2's is on the ring once its
	 * flow has no send in flight), polling only flow 1's: that poll
	 * passes flow 2's completion by and must keep it.
	 */
	ASSERT_TRUE(WAIT_UNTIL(!sdr_flow_info(f2, &fi) && fi.sends_inflight == 0,
			       WAIT_HANG_MS));
	end = now_us() + WAIT_HANG_MS * 1000LL;
	while (n1 < 1 && now_us() < end) {
		got = sdr_send_poll(self->fs, c, 8);
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
	EXPECT_EQ(sdr_send_poll(self->fs, c, 8), 0);
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
	EXPECT_EQ(sdr_send_poll(self->fs, c, 8), 0);
}

TEST_F(lib, destroy_flushes_to_the_ring)
{
	struct sdr_completion c[8];
	struct sdr_recv *h;
	uint32_t id = self->p.flow_id;
	int64_t end;
	int n = 0, k, got;

	ASSERT_EQ(sdr_recv_post(self->fr, 41, &h), 0);
	ASSERT_EQ(sdr_recv_post(self->fr, 42, &h), 0);
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
	EXPECT_EQ(a.features, SDR_FEATURE_MULTIPATH);
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
