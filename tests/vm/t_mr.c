// SPDX-License-Identifier: GPL-2.0
/*
 * t_mr: registered application memory (SDR_IOC_MR_REG/DEREG, ABI 6).
 * Receives land in the process's own buffer (SDR_RECV_MR) and sends go
 * from it (SDR_SEND_MR): every message's bytes are checked where they
 * landed, and the bytes around the receive range must stay as they were.
 * A message longer than its receive's registered range completes
 * SDR_STATUS_TOOBIG and fails its send; a registration in use cannot be
 * removed; bad ranges, ids and flags get their errno; registrations are
 * charged to RLIMIT_MEMLOCK and sdr's limits, and a process that exits
 * holding some gives everything back.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include "harness.h"
#include "libsdr.h"
#include "util.h"

#define MAX_MSG		(2U << 20)
#define MIB		(1U << 20)
#define OTHER_UID	4243

FIXTURE(mr) {
	struct sdr_ctx *cs, *cr;	/* sender, receiver */
	struct sdr_flow *fs, *fr;
	int fds, fdr;			/* their /dev/sdr descriptors */
	uint32_t ids, idr;		/* their flow ids */
};

FIXTURE_SETUP(mr)
{
	struct sdr_flow_attr fa = { .policy = SDR_POLICY_SR,
				    .max_msg_size = MAX_MSG, .max_msgs = 4 };
	struct sdr_flow_props p;
	struct sdr_flow_peer es, er;
	struct sdr_caps caps;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	self->cs = sdr_open(dev0(), NULL);
	ASSERT_TRUE(self->cs);
	self->cr = sdr_open(dev1(), NULL);
	ASSERT_TRUE(self->cr);
	ASSERT_EQ(sdr_query(self->cs, &caps), 0);
	ASSERT_TRUE(caps.features & SDR_FEATURE_MR);
	self->fs = sdr_flow_create(self->cs, &fa);
	ASSERT_TRUE(self->fs);
	self->fr = sdr_flow_create(self->cr, &fa);
	ASSERT_TRUE(self->fr);
	ASSERT_EQ(sdr_flow_peer_info(self->fs, &es), 0);
	ASSERT_EQ(sdr_flow_peer_info(self->fr, &er), 0);
	ASSERT_EQ(sdr_flow_connect_peer(self->fs, &er), 0);
	ASSERT_EQ(sdr_flow_connect_peer(self->fr, &es), 0);
	self->fds = sdr_ctx_fd(self->cs);
	self->fdr = sdr_ctx_fd(self->cr);
	ASSERT_EQ(sdr_flow_props(self->fs, &p), 0);
	self->ids = p.flow_id;
	ASSERT_EQ(sdr_flow_props(self->fr, &p), 0);
	self->idr = p.flow_id;
}

FIXTURE_TEARDOWN(mr)
{
	if (self->fs)
		EXPECT_EQ(sdr_flow_destroy(self->fs), 0);
	if (self->fr)
		EXPECT_EQ(sdr_flow_destroy(self->fr), 0);
	if (self->cs)
		EXPECT_EQ(sdr_close(self->cs), 0);
	if (self->cr)
		EXPECT_EQ(sdr_close(self->cr), 0);
}

static int mr_reg(int fd, const void *addr, uint64_t len, uint32_t *id)
{
	struct sdr_mr_reg r = { .size = sizeof(r),
				.addr = (uintptr_t)addr, .len = len };
	int ret = ioctl(fd, SDR_IOC_MR_REG, &r);

	if (!ret && id)
		*id = r.mr_id;
	return ret;
}

static int mr_dereg(int fd, uint32_t id)
{
	struct sdr_mr_dereg d = { .size = sizeof(d), .mr_id = id };

	return ioctl(fd, SDR_IOC_MR_DEREG, &d);
}

static int recv_mr(int fd, uint32_t flow, uint32_t mr, const void *addr,
		   uint64_t len, uint32_t *slot, uint32_t *seq)
{
	struct sdr_recv_post p = { .size = sizeof(p), .flags = SDR_RECV_MR,
				   .flow_id = flow, .mr_id = mr,
				   .mr_addr = (uintptr_t)addr, .mr_len = len };
	int ret = ioctl(fd, SDR_IOC_RECV_POST, &p);

	if (!ret) {
		*slot = p.slot;
		*seq = p.seq;
	}
	return ret;
}

static int recv_done(int fd, uint32_t flow, uint32_t slot, uint32_t seq)
{
	struct sdr_recv_complete c = { .size = sizeof(c), .flow_id = flow,
				       .slot = slot, .seq = seq };

	return ioctl(fd, SDR_IOC_RECV_COMPLETE, &c);
}

static int send_mr(int fd, uint32_t flow, uint32_t mr, const void *addr,
		   uint64_t len, uint32_t imm, uint32_t *seq)
{
	struct sdr_send_post s = { .size = sizeof(s), .flags = SDR_SEND_MR,
				   .flow_id = flow, .mr_id = mr, .imm = imm,
				   .addr = (uintptr_t)addr, .len = len };
	int ret = ioctl(fd, SDR_IOC_SEND_POST, &s);

	if (!ret)
		*seq = s.seq;
	return ret;
}

/* The completion of @type and @seq on @ctx (others are dropped): 0 or -1. */
static int wait_cqe(struct sdr_ctx *ctx, uint8_t type, uint32_t seq,
		    struct sdr_completion *out)
{
	int64_t end = now_us() + (int64_t)WAIT_HANG_MS * 1000;
	int n;

	while (now_us() < end) {
		n = sdr_poll_cq(ctx, out, 1);
		if (n < 0)
			return -1;
		if (n && out->type == type && out->seq == seq)
			return 0;
		if (!n)
			sdr_wait(ctx, 100);
	}
	return -1;
}

/* @len bytes of message @msg from a user pointer, then its completion. */
static int send_ptr_wait(struct mr_fixture *self, uint32_t msg, uint32_t len,
			 uint8_t want_status)
{
	struct sdr_completion c;
	uint8_t *src = malloc(len);
	uint32_t seq;
	int ret = -1;

	if (!src)
		return -1;
	pattern_fill(src, msg, 0, len);
	if (!sdr_flow_send_post_ptr(self->fs, src, len, msg, 0, &seq) &&
	    !wait_cqe(self->cs, SDR_CQE_SEND, seq, &c) && c.status == want_status)
		ret = 0;
	free(src);
	return ret;
}

/*
 * Receives into registered memory at an address that is not page aligned,
 * of several sizes: the bytes land there, the bytes around are untouched.
 */
static void __attribute__((noinline)) recv_into_mr(struct mr_fixture *self);

TEST_F_T(mr, recv_into_mr, 180)
{
	recv_into_mr(self);
}

/* (out of the test's frame: its locals are not clobbered by the harness's longjmp) */
static void __attribute__((noinline)) recv_into_mr(struct mr_fixture *self)
{
	static const uint32_t sizes[] = { MIB + 123, 4096, 777, MAX_MSG };
	size_t buf_len = MAX_MSG + 3 * 4096;
	struct sdr_completion c;
	uint32_t i, id = 0, slot = 0, seq = 0;
	uint8_t *buf, *dst;

	buf = malloc(buf_len);
	ASSERT_TRUE(buf);
	ASSERT_ERRNO(mr_reg(self->fdr, buf, buf_len, &id), 0);
	EXPECT_NE(id, 0);
	dst = buf + 4096 + 37;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(buf, 0xa5, buf_len);
		ASSERT_ERRNO(recv_mr(self->fdr, self->idr, id, dst, MAX_MSG,
				     &slot, &seq), 0);
		ASSERT_EQ(send_ptr_wait(self, i + 1, sizes[i], SDR_STATUS_OK), 0);
		ASSERT_EQ(wait_cqe(self->cr, SDR_CQE_RECV, seq, &c), 0);
		EXPECT_EQ(c.status, SDR_STATUS_OK);
		EXPECT_EQ(c.len, sizes[i]);
		EXPECT_EQ(c.imm, i + 1);
		EXPECT_EQ(pattern_check(dst, i + 1, 0, sizes[i]), -1);
		/* nothing before the range, nothing after the message */
		EXPECT_EQ(first_not(buf, 0xa5, dst - buf), -1);
		EXPECT_EQ(first_not(dst + sizes[i], 0xa5,
					buf + buf_len - dst - sizes[i]), -1);
		ASSERT_ERRNO(recv_done(self->fdr, self->idr, slot, seq), 0);
	}
	/*
	 * One more receive left posted: the flow's destruction gives the
	 * registration back, then the context's close removes it.
	 */
	ASSERT_ERRNO(recv_mr(self->fdr, self->idr, id, dst, MAX_MSG, &slot,
			     &seq), 0);
	EXPECT_ERRNO(mr_dereg(self->fdr, id), EBUSY);
	ASSERT_EQ(sdr_flow_destroy(self->fr), 0);
	self->fr = NULL;
	EXPECT_TRUE(WAIT_UNTIL(!mr_dereg(self->fdr, id), WAIT_HANG_MS));
	ASSERT_ERRNO(mr_reg(self->fdr, buf, buf_len, &id), 0);
	/* and the close removes one nobody uses (buf is freed after it) */
	EXPECT_EQ(sdr_close(self->cr), 0);
	self->cr = NULL;
	free(buf);
}

/*
 * Sends from registered memory, one-shot and streamed in parts, into
 * registered memory and into the receive region.
 */
static void __attribute__((noinline)) send_from_mr(struct mr_fixture *self);

TEST_F_T(mr, send_from_mr, 180)
{
	send_from_mr(self);
}

/* (out of the test's frame: its locals are not clobbered by the harness's longjmp) */
static void __attribute__((noinline)) send_from_mr(struct mr_fixture *self)
{
	uint32_t len = MIB + 4000, ids = 0, idr = 0, slot = 0, seq = 0, sseq = 0;
	struct sdr_completion c;
	struct sdr_send_post s;
	struct sdr_flow_props p;
	struct sdr_recv *h;
	uint8_t *src, *dst;
	uint32_t status;

	src = aligned_alloc(4096, 2 * MIB);
	dst = aligned_alloc(4096, 2 * MIB);
	ASSERT_TRUE(src && dst);
	ASSERT_ERRNO(mr_reg(self->fds, src, 2 * MIB, &ids), 0);
	ASSERT_ERRNO(mr_reg(self->fdr, dst, 2 * MIB, &idr), 0);
	pattern_fill(src + 11, 7, 0, len);

	/* one-shot, MR to MR */
	ASSERT_ERRNO(recv_mr(self->fdr, self->idr, idr, dst, 2 * MIB, &slot,
			     &seq), 0);
	ASSERT_ERRNO(send_mr(self->fds, self->ids, ids, src + 11, len, 7, &sseq), 0);
	ASSERT_EQ(wait_cqe(self->cs, SDR_CQE_SEND, sseq, &c), 0);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	ASSERT_EQ(wait_cqe(self->cr, SDR_CQE_RECV, seq, &c), 0);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_EQ(c.len, len);
	EXPECT_EQ(pattern_check(dst, 7, 0, len), -1);
	ASSERT_ERRNO(recv_done(self->fdr, self->idr, slot, seq), 0);

	/* streamed in three parts from the MR, into the receive region */
	ASSERT_EQ(sdr_flow_props(self->fs, &p), 0);
	ASSERT_EQ(sdr_flow_recv_post(self->fr, 9, &h), 0);
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.flags = SDR_SEND_MR | SDR_SEND_STREAM_START;
	s.flow_id = self->ids;
	s.mr_id = ids;
	s.addr = (uintptr_t)(src + 11);
	s.len = 64 * p.payload;
	s.msg_len = len;
	s.imm = 8;
	ASSERT_ERRNO(ioctl(self->fds, SDR_IOC_SEND_POST, &s), 0);
	sseq = s.seq;
	s.flags = SDR_SEND_MR | SDR_SEND_STREAM_CONT;
	s.addr += s.len;
	s.len = 100 * p.payload;
	/* a part from another registration, or not contiguous: EINVAL */
	s.mr_id = ids + 5;
	EXPECT_ERRNO(ioctl(self->fds, SDR_IOC_SEND_POST, &s), EINVAL);
	s.mr_id = ids;
	s.addr += 1;
	EXPECT_ERRNO(ioctl(self->fds, SDR_IOC_SEND_POST, &s), EINVAL);
	s.addr -= 1;
	ASSERT_ERRNO(ioctl(self->fds, SDR_IOC_SEND_POST, &s), 0);
	/* in flight: the registration stays */
	EXPECT_ERRNO(mr_dereg(self->fds, ids), EBUSY);
	s.flags = SDR_SEND_MR | SDR_SEND_STREAM_END;
	s.addr += s.len;
	s.len = len - 164 * p.payload;
	ASSERT_ERRNO(ioctl(self->fds, SDR_IOC_SEND_POST, &s), 0);
	ASSERT_EQ(wait_cqe(self->cs, SDR_CQE_SEND, sseq, &c), 0);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	ASSERT_TRUE(WAIT_UNTIL(!sdr_recv_poll(h, &status), WAIT_HANG_MS));
	EXPECT_EQ(status, SDR_STATUS_OK);
	EXPECT_EQ(pattern_check(sdr_recv_data(h), 7, 0, len), -1);
	ASSERT_EQ(sdr_recv_release(h), 0);

	EXPECT_ERRNO(mr_dereg(self->fds, ids), 0);
	EXPECT_ERRNO(mr_dereg(self->fdr, idr), 0);
	free(src);
	free(dst);
}

/*
 * A message longer than the registered range of its receive: TOOBIG for
 * the receive, FAILED for the send, and the flow goes on.
 */
static void __attribute__((noinline)) too_big(struct mr_fixture *self);

TEST_F_T(mr, too_big, 120)
{
	too_big(self);
}

/* (out of the test's frame: its locals are not clobbered by the harness's longjmp) */
static void __attribute__((noinline)) too_big(struct mr_fixture *self)
{
	struct sdr_completion c;
	uint32_t id = 0, slot = 0, seq = 0;
	uint8_t *buf = malloc(64 << 10);

	ASSERT_TRUE(buf);
	memset(buf, 0x5a, 64 << 10);
	ASSERT_ERRNO(mr_reg(self->fdr, buf, 64 << 10, &id), 0);
	ASSERT_ERRNO(recv_mr(self->fdr, self->idr, id, buf, 8192, &slot, &seq), 0);
	ASSERT_EQ(send_ptr_wait(self, 3, 100000, SDR_STATUS_FAILED), 0);
	ASSERT_EQ(wait_cqe(self->cr, SDR_CQE_RECV, seq, &c), 0);
	EXPECT_EQ(c.status, SDR_STATUS_TOOBIG);
	EXPECT_EQ(c.len, 100000);
	EXPECT_EQ(first_not(buf, 0x5a, 64 << 10), -1);
	ASSERT_ERRNO(recv_done(self->fdr, self->idr, slot, seq), 0);
	/* the next one fits */
	ASSERT_ERRNO(recv_mr(self->fdr, self->idr, id, buf, 8192, &slot, &seq), 0);
	ASSERT_EQ(send_ptr_wait(self, 4, 8192, SDR_STATUS_OK), 0);
	ASSERT_EQ(wait_cqe(self->cr, SDR_CQE_RECV, seq, &c), 0);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_EQ(pattern_check(buf, 4, 0, 8192), -1);
	ASSERT_ERRNO(recv_done(self->fdr, self->idr, slot, seq), 0);
	EXPECT_ERRNO(mr_dereg(self->fdr, id), 0);
	free(buf);
}

/* Bad registrations, and posts that name them wrongly. */
static void __attribute__((noinline)) errors(struct mr_fixture *self);

TEST_F(mr, errors)
{
	errors(self);
}

static void __attribute__((noinline)) errors(struct mr_fixture *self)
{
	struct sdr_mr_reg r = { .size = sizeof(r) };
	struct sdr_send_post s = { .size = sizeof(s) };
	uint32_t id = 0, slot = 0, seq = 0;
	size_t pg = 4096;
	uint8_t *buf = malloc(4 * pg), *ro, *gone;

	ASSERT_TRUE(buf);
	EXPECT_ERRNO(mr_reg(self->fdr, buf, 0, &id), EINVAL);
	EXPECT_ERRNO(mr_reg(self->fdr, buf, SDR_MR_LEN_MAX + 1, &id), EINVAL);
	EXPECT_ERRNO(mr_reg(self->fdr, (void *)(uintptr_t)-4096, 8192, &id), EINVAL);
	/* flags this kernel does not know */
	r.addr = (uintptr_t)buf;
	r.len = pg;
	r.flags = 1;
	EXPECT_ERRNO(ioctl(self->fdr, SDR_IOC_MR_REG, &r), EOPNOTSUPP);
	/* unmapped, and read-only, memory */
	gone = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(gone, MAP_FAILED);
	ASSERT_EQ(munmap(gone, 2 * pg), 0);
	EXPECT_ERRNO(mr_reg(self->fdr, gone, 2 * pg, &id), EFAULT);
	ro = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(ro, MAP_FAILED);
	EXPECT_ERRNO(mr_reg(self->fdr, ro, 2 * pg, &id), EFAULT);
	munmap(ro, 2 * pg);
	/* unbound context: EBADFD */
	{
		int fd = sdr_dev_open();

		ASSERT_GE(fd, 0);
		EXPECT_ERRNO(mr_reg(fd, buf, pg, &id), EBADFD);
		close(fd);
	}

	ASSERT_ERRNO(mr_reg(self->fdr, buf, 2 * pg, &id), 0);
	EXPECT_ERRNO(mr_dereg(self->fdr, id + 1000), ENOENT);
	/* receives: unknown id, range outside, too long, fields without flag */
	EXPECT_ERRNO(recv_mr(self->fdr, self->idr, id + 1000, buf, pg, &slot, &seq), ENOENT);
	EXPECT_ERRNO(recv_mr(self->fdr, self->idr, id, buf + pg, 2 * pg, &slot, &seq), EFAULT);
	EXPECT_ERRNO(recv_mr(self->fdr, self->idr, id, buf - 1, pg, &slot, &seq), EFAULT);
	EXPECT_ERRNO(recv_mr(self->fdr, self->idr, id, buf, 0, &slot, &seq), EINVAL);
	EXPECT_ERRNO(recv_mr(self->fdr, self->idr, id, buf, MAX_MSG + 1, &slot, &seq), EINVAL);
	{
		struct sdr_recv_post p = { .size = sizeof(p),
					   .flow_id = self->idr, .mr_id = id };

		EXPECT_ERRNO(ioctl(self->fdr, SDR_IOC_RECV_POST, &p), EINVAL);
	}
	/* another context's registration is not this one's */
	EXPECT_ERRNO(send_mr(self->fds, self->ids, id, buf, pg, 0, &seq), ENOENT);
	/* sends: range outside, two sources, an id without the flag */
	s.flow_id = self->idr;
	s.flags = SDR_SEND_MR;
	s.mr_id = id;
	s.addr = (uintptr_t)buf + pg;
	s.len = 2 * pg;
	EXPECT_ERRNO(ioctl(self->fdr, SDR_IOC_SEND_POST, &s), EFAULT);
	s.flags = SDR_SEND_MR | SDR_SEND_USER_PTR;
	s.len = pg;
	EXPECT_ERRNO(ioctl(self->fdr, SDR_IOC_SEND_POST, &s), EINVAL);
	s.flags = SDR_SEND_USER_PTR;
	EXPECT_ERRNO(ioctl(self->fdr, SDR_IOC_SEND_POST, &s), EINVAL);

	/* in use by a posted receive: EBUSY until it is given back */
	ASSERT_ERRNO(recv_mr(self->fdr, self->idr, id, buf, pg, &slot, &seq), 0);
	EXPECT_ERRNO(mr_dereg(self->fdr, id), EBUSY);
	ASSERT_ERRNO(recv_done(self->fdr, self->idr, slot, seq), 0);
	EXPECT_ERRNO(mr_dereg(self->fdr, id), 0);
	EXPECT_ERRNO(mr_dereg(self->fdr, id), ENOENT);
	free(buf);
}

/* This process's pinned memory (VmPin), kB; -1 if not shown. */
static long vm_pin_kb(void)
{
	char line[128];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* A bound context on dev1 (-1 if it cannot be had). */
static int bound_fd(void)
{
	int fd = sdr_dev_open();

	if (fd >= 0 && raw_bind(fd, dev1(), 64, NULL)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * RLIMIT_MEMLOCK, as a user without CAP_IPC_LOCK: registrations count in
 * VmPin and against the limit, and give it back.  Then sdr's limit per
 * user over processes: one that exits holding a registration leaves
 * nothing charged (the next process of that user gets it all).
 */
TEST_F_T(mr, memlock_and_exit, 120)
{
	struct rlimit rl = { 4 * MIB, 4 * MIB };
	unsigned int user_max = (unsigned int)sysfs_u64_or(
		"/sys/module/sdr/parameters/user_max_mb", 0);
	int st = -1, i;
	pid_t pid;

	(void)self;
	ASSERT_NE(user_max, 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		uint8_t *buf = aligned_alloc(4096, 4 * MIB);
		uint32_t a, b;
		long pin0, pin1;
		int fd;

		if (!buf || setrlimit(RLIMIT_MEMLOCK, &rl) ||
		    become_user(OTHER_UID, 1))
			_exit(10);
		fd = bound_fd();
		if (fd < 0)
			_exit(11);
		pin0 = vm_pin_kb();
		if (mr_reg(fd, buf, 2 * MIB, &a))
			_exit(12);
		pin1 = vm_pin_kb();
		if (pin1 - pin0 != 2048)
			_exit(13);
		/* 2 MiB more would pass the 4 MiB (the ring counts too) */
		if (!mr_reg(fd, buf + 2 * MIB, 2 * MIB, &b) || errno != ENOMEM)
			_exit(14);
		if (mr_dereg(fd, a) || vm_pin_kb() != pin0)
			_exit(15);
		if (mr_reg(fd, buf, 3 * MIB, &b))
			_exit(16);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	TH_LOG("memlock child: exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* 12 MiB a user: each child registers 10 and exits holding them */
	ASSERT_EQ(set_param("user_max_mb", 12), 0);
	for (i = 0; i < 3; i++) {
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid) {
			struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };
			uint8_t *buf = aligned_alloc(4096, 10 * MIB);
			uint32_t a;
			int fd;

			/* only sdr's limit per user binds */
			if (!buf || setrlimit(RLIMIT_MEMLOCK, &inf) ||
			    become_user(OTHER_UID + 1, 1))
				_exit(20);
			fd = bound_fd();
			if (fd < 0)
				_exit(21);
			if (mr_reg(fd, buf, 10 * MIB, &a))
				_exit(22);
			_exit(0);	/* the descriptor and the pin with it */
		}
		ASSERT_EQ(waitpid(pid, &st, 0), pid);
		TH_LOG("exit child %d: exit %d", i,
		       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	EXPECT_EQ(set_param("user_max_mb", user_max), 0);
}

/* ctx_max_mrs registrations a context, then EMFILE; freed ones count out. */
TEST_F(mr, count_limit)
{
	unsigned int saved = (unsigned int)sysfs_u64_or(
		"/sys/module/sdr/parameters/ctx_max_mrs", 0);
	uint8_t *buf = malloc(4 * 4096);
	uint32_t id[4];
	int i;

	ASSERT_TRUE(buf);
	ASSERT_NE(saved, 0);
	ASSERT_EQ(set_param("ctx_max_mrs", 3), 0);
	for (i = 0; i < 3; i++)
		ASSERT_ERRNO(mr_reg(self->fdr, buf + i * 4096, 4096, &id[i]), 0);
	EXPECT_ERRNO(mr_reg(self->fdr, buf, 4096, &id[3]), EMFILE);
	ASSERT_ERRNO(mr_dereg(self->fdr, id[1]), 0);
	EXPECT_ERRNO(mr_reg(self->fdr, buf, 4096, &id[3]), 0);
	EXPECT_EQ(set_param("ctx_max_mrs", saved), 0);
	free(buf);
}

