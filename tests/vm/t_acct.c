// SPDX-License-Identifier: GPL-2.0
/*
 * t_acct: every byte a flow makes the kernel hold is charged, and given
 * back exactly.  Sends' copies and state within flow_send_max_mb and the
 * context's limit (EAGAIN while the flow's sends hold some, ENOMEM when
 * nothing would make room), shown in flows/<id>/send_mem, in the
 * process's pinned memory (VmPin) page for page and in its memory
 * cgroup; mapped regions charged until their last mapping goes, so
 * create-mmap-destroy cannot grow without bound; and data still flows,
 * hash-checked, once a flow hit its bound.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "util.h"

#define MIB		(1U << 20)
#define PG		4096UL

static const char *const params[] = {
	"flow_send_max_mb", "ctx_max_mb",
};
#define NPARAMS		(sizeof(params) / sizeof(params[0]))

FIXTURE(acct) {
	unsigned int saved[NPARAMS];
};

FIXTURE_SETUP(acct)
{
	char path[128];
	unsigned int i;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	for (i = 0; i < NPARAMS; i++) {
		snprintf(path, sizeof(path), "/sys/module/sdr/parameters/%s",
			 params[i]);
		self->saved[i] = (unsigned int)sysfs_u64_or(path, 0);
		ASSERT_NE(self->saved[i], 0);
	}
}

FIXTURE_TEARDOWN(acct)
{
	unsigned int i;

	for (i = 0; i < NPARAMS; i++)
		set_param(params[i], self->saved[i]);
}

/* This process's pinned memory (VmPin), bytes; -1 if not shown. */
static long vm_pin(void)
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
	return v < 0 ? -1 : v * 1024;
}

static uint64_t flow_u64(const char *dev, uint32_t id, const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/%s", dev, id,
		 name);
	return sysfs_u64_or(path, ~0ULL);
}

static uint64_t page_up(uint64_t v)
{
	return (v + PG - 1) & ~(PG - 1);
}

/* SR flows a and b of @fd, registered memory only, connected to each other. */
static int sr_loop(int fd, uint32_t max_msg, struct sdr_flow_create *a,
		   struct sdr_flow_create *b)
{
	flow_create_arg(a, SDR_POLICY_SR, max_msg, 64);
	flow_create_arg(b, SDR_POLICY_SR, max_msg, 64);
	a->flags = b->flags = SDR_FLOW_CREATE_MR;
	if (ioctl(fd, SDR_IOC_FLOW_CREATE, a) ||
	    ioctl(fd, SDR_IOC_FLOW_CREATE, b))
		return -1;
	return raw_connect(fd, a->flow_id, &b->ep) ||
	       raw_connect(fd, b->flow_id, &a->ep) ? -1 : 0;
}

/* Stream starts of @len from a user pointer, none of its bytes yet. */
static int start(int fd, uint32_t id, uint64_t len)
{
	static char byte;

	return raw_send_post(fd, id, SDR_SEND_STREAM_START | SDR_SEND_USER_PTR,
			     (uintptr_t)&byte, 0, len, NULL);
}

#define CG	"/sys/fs/cgroup"
#define CGT	CG "/sdr_t_acct"

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -1;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -1;
	close(fd);
	return ret;
}

/* Into a memory cgroup of its own: memory.current then says what it holds. */
static int own_memcg(void)
{
	char buf[32];

	if (access(CG "/cgroup.controllers", F_OK))
		mount("none", CG, "cgroup2", 0, NULL);
	if (access(CG "/cgroup.controllers", F_OK))
		return -1;
	write_str(CG "/cgroup.subtree_control", "+memory");
	rmdir(CGT);
	if (mkdir(CGT, 0755))
		return -1;
	snprintf(buf, sizeof(buf), "%d", getpid());
	return write_str(CGT "/cgroup.procs", buf);
}

static long memcg_current(void)
{
	return (long)sysfs_u64_or(CGT "/memory.current", 0);
}

/*
 * The OOM loop of issue #40: stream starts of 4 MiB from a user pointer
 * (a 4 MiB copy each, nothing in flight, so no timer ever frees them)
 * until a post fails.  It fails at flow_send_max_mb (EAGAIN: the flow's
 * sends hold memory), the next flow has a bound of its own, the
 * context's ctx_max_mb stops both (EAGAIN), a message no bound can hold
 * fails ENOMEM; VmPin grew by exactly the pages send_mem says, the
 * memory cgroup by at least as much, and destroying the flows gives all
 * of it back.
 */
TEST_F(acct, send_memory_bounded)
{
	int st = -1;
	pid_t pid;

	(void)self;
	ASSERT_EQ(set_param("flow_send_max_mb", 16), 0);
	ASSERT_EQ(set_param("ctx_max_mb", 20), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct sdr_flow_create a, b;
		long pinb, pin0, pin1, cg0 = 0, cg1 = 0;
		uint64_t ma, mb;
		int fd, na = 0, nb = 0, cg, i;

		cg = !own_memcg();
		fd = sdr_dev_open();
		if (fd < 0 || raw_bind(fd, dev0(), 512, NULL))
			_exit(10);
		pinb = vm_pin();
		if (sr_loop(fd, 4 * MIB, &a, &b)) {
			fprintf(stderr, "# sr_loop: %s\n", strerror(errno));
			_exit(11);
		}
		pin0 = vm_pin();
		cg0 = cg ? memcg_current() : 0;
		while (na < 64 && !start(fd, a.flow_id, 4 * MIB))
			na++;
		if (errno != EAGAIN)
			_exit(12);
		/* 16 MiB: three copies of 4 MiB and their state, not four */
		if (na != 3)
			_exit(13);
		ma = flow_u64(dev0(), a.flow_id, "send_mem");
		if (ma < 12 * MIB || ma > 16 * MIB)
			_exit(14);
		pin1 = vm_pin();
		if (pin1 - pin0 != (long)page_up(ma))
			_exit(15);
		/* b has its own bound, but the context's 20 MiB stop it */
		while (nb < 64 && !start(fd, b.flow_id, 4 * MIB))
			nb++;
		if (errno != EAGAIN || nb != 1)
			_exit(16);
		mb = flow_u64(dev0(), b.flow_id, "send_mem");
		if (vm_pin() - pin0 != (long)(page_up(ma) + page_up(mb)) ||
		    vm_pin() > 20L * MIB || vm_pin() + 4L * MIB <= 20L * MIB)
			_exit(17);
		if (cg) {
			cg1 = memcg_current();
			/*
			 * not to the byte: the child's other memory and
			 * the memcg's per-cpu charge batches move it too
			 */
			if (cg1 - cg0 < (long)(ma + mb) / 10 * 9)
				_exit(18);
		}
		fprintf(stderr, "# a %d (%llu B), b %d (%llu B), pin +%ld, memcg +%ld\n",
			na, (unsigned long long)ma, nb, (unsigned long long)mb,
			vm_pin() - pin0, cg1 - cg0);
		/* all back, exactly, as the flows go */
		if (raw_destroy(fd, a.flow_id) || raw_destroy(fd, b.flow_id))
			_exit(19);
		if (vm_pin() != pinb)
			_exit(20);
		/* a message larger than any bound, nothing held: ENOMEM */
		if (sr_loop(fd, 32 * MIB, &a, &b))
			_exit(21);
		pin1 = vm_pin();
		if (!start(fd, a.flow_id, 17 * MIB) || errno != ENOMEM)
			_exit(22);
		if (vm_pin() != pin1 ||
		    flow_u64(dev0(), a.flow_id, "send_mem") != 0)
			_exit(23);
		close(fd);
		if (vm_pin() != 0)
			_exit(24);
		/* the flows' own state goes after an RCU grace period */
		for (i = 0; cg && i < 300 &&
		     memcg_current() > cg0 + 2L * MIB; i++)
			usleep(10000);
		if (cg && memcg_current() > cg0 + 2L * MIB)
			_exit(25);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	TH_LOG("send child: exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	rmdir(CGT);
}

/*
 * Mapped regions keep their charge: create a flow, map its three areas,
 * destroy it, again and again.  Each round stays charged (VmPin grows by
 * the regions' bytes and does not fall at destroy) and the rounds end in
 * ENOMEM at ctx_max_mb; unmapping gives every byte back, and an area of
 * a destroyed flow cannot be mapped.
 */
TEST_F(acct, mapped_regions_keep_charge)
{
	struct { void *p[3]; size_t n[3]; } m[16];
	struct sdr_flow_create c;
	long pin0, per = 0, pin, state = 0;
	int fd, n = 0, i, j;

	(void)self;
	ASSERT_EQ(set_param("ctx_max_mb", 16), 0);
	fd = sdr_dev_open();
	ASSERT_GE(fd, 0);
	ASSERT_EQ(raw_bind(fd, dev0(), 64, NULL), 0);
	pin0 = vm_pin();
	while (n < 16) {
		uint64_t off[3];

		if (raw_flow_create(fd, MIB, 2, &c))
			break;
		off[0] = c.recv_offset;
		off[1] = c.send_offset;
		off[2] = c.state_offset;
		m[n].n[0] = c.recv_size;
		m[n].n[1] = c.send_size;
		m[n].n[2] = c.state_size;
		for (j = 0; j < 3; j++) {
			m[n].p[j] = mmap(NULL, m[n].n[j], j == 1 ? PROT_READ |
					 PROT_WRITE : PROT_READ, MAP_SHARED,
					 fd, (off_t)off[j]);
			ASSERT_NE(m[n].p[j], MAP_FAILED);
		}
		ASSERT_EQ(raw_destroy(fd, c.flow_id), 0);
		/* gone from the context: no new mapping of it */
		EXPECT_EQ(mmap(NULL, m[n].n[2], PROT_READ, MAP_SHARED, fd,
			       (off_t)off[2]), MAP_FAILED);
		pin = vm_pin();
		/* the regions' charge, the flow's own state's is back */
		per = (long)(2 * c.recv_size + c.state_size);
		state = (long)c.state_size;
		/* each round's regions stay charged while mapped */
		EXPECT_EQ(pin - pin0, per * (n + 1));
		n++;
	}
	TH_LOG("rounds %d, %ld bytes each, errno %d", n, per, errno);
	EXPECT_EQ(errno, ENOMEM);
	EXPECT_EQ(per, 4L * MIB + state);
	EXPECT_EQ(n, 3);
	/* the first round's regions go a page, then the rest */
	ASSERT_GE(n, 1);
	ASSERT_EQ(munmap(m[0].p[1], PG), 0);
	EXPECT_EQ(vm_pin() - pin0, per * n);
	for (i = 0; i < n; i++)
		for (j = 0; j < 3; j++) {
			if (!i && j == 1)
				ASSERT_EQ(munmap((char *)m[0].p[1] + PG,
						 m[0].n[1] - PG), 0);
			else
				ASSERT_EQ(munmap(m[i].p[j], m[i].n[j]), 0);
		}
	EXPECT_EQ(vm_pin(), pin0);
	/* room again */
	EXPECT_ERRNO(raw_flow_create(fd, MIB, 2, &c), 0);
	close(fd);
}

/*
 * A fork's copy of a mapping holds the charge too: the parent unmaps and
 * destroys, the charge stays until the child exits.
 */
TEST_F(acct, fork_holds_charge)
{
	struct sdr_flow_create c;
	long pin0;
	int fd, st = -1, pfd[2];
	pid_t pid;
	void *p;
	char x;

	(void)self;
	fd = sdr_dev_open();
	ASSERT_GE(fd, 0);
	ASSERT_EQ(raw_bind(fd, dev0(), 64, NULL), 0);
	pin0 = vm_pin();
	ASSERT_EQ(raw_flow_create(fd, MIB, 2, &c), 0);
	p = mmap(NULL, c.send_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)c.send_offset);
	ASSERT_NE(p, MAP_FAILED);
	ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		close(pfd[1]);
		/* until the parent closes its end */
		if (read(pfd[0], &x, 1) < 0)
			_exit(1);
		((volatile char *)p)[0] = 1;
		_exit(0);
	}
	close(pfd[0]);
	ASSERT_EQ(raw_destroy(fd, c.flow_id), 0);
	ASSERT_EQ(munmap(p, c.send_size), 0);
	/* the child's mapping holds the whole regions' charge */
	EXPECT_EQ(vm_pin() - pin0, (long)(2 * c.recv_size + c.state_size));
	close(pfd[1]);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(vm_pin(), pin0);
	close(fd);
}

#define DMSG		(MIB)
#define DN		12

/*
 * Data still flows once a flow is at its bound: SR from rxe0 to rxe1,
 * 1 MiB sends from a user pointer with flow_send_max_mb 2, so a post
 * waits (EAGAIN) for an earlier send to complete; every message arrives
 * whole (hash), and the flow holds nothing once they are done.
 */
TEST_F(acct, data_flows_at_the_bound)
{
	struct sdr_flow_attr fa = {
		.policy = SDR_POLICY_SR, .max_msg_size = DMSG, .max_msgs = 4,
	};
	struct sdr_ctx *cs, *cr;
	struct sdr_flow *fs, *fr;
	struct sdr_completion cq[8];
	struct sdr_flow_props p;
	uint64_t want[DN];
	struct sdr_recv *h;
	uint8_t *buf;
	int sent = 0, posted = 0, good = 0, again = 0, recvs = 0, k, got;
	int64_t end;

	(void)self;
	ASSERT_EQ(set_param("flow_send_max_mb", 2), 0);
	ASSERT_EQ(flow_pair(&fa, &cs, &cr, &fs, &fr), 0);
	ASSERT_EQ(sdr_flow_props(fs, &p), 0);
	buf = malloc(DMSG);
	ASSERT_TRUE(buf);
	for (k = 0; k < 4; k++)
		ASSERT_EQ(sdr_flow_recv_post(fr, k, &h), 0);
	end = now_us() + 120 * 1000000LL;
	while ((recvs < DN || sent < DN) && now_us() < end) {
		if (posted < DN) {
			random_fill(buf, DMSG, 77 + posted);
			want[posted] = hash64(buf, DMSG);
			k = sdr_flow_send_post_ptr(fs, buf, DMSG, posted,
						   posted, NULL);
			if (!k)
				posted++;
			else if (k == -EAGAIN)
				again++;
			else
				break;
		}
		got = sdr_poll_cq(cr, cq, 8);
		for (k = 0; k < got; k++) {
			if (cq[k].type != SDR_CQE_RECV)
				continue;
			recvs++;
			if (cq[k].status == SDR_STATUS_OK &&
			    cq[k].len == DMSG && cq[k].imm < DN &&
			    hash64(sdr_recv_data(cq[k].recv), DMSG) ==
			    want[cq[k].imm])
				good++;
			sdr_recv_release(cq[k].recv);
			if (recvs + 4 <= DN)
				sdr_flow_recv_post(fr, recvs + 3, &h);
		}
		got = sdr_poll_cq(cs, cq, 8);
		for (k = 0; k < got; k++)
			sent += cq[k].type == SDR_CQE_SEND &&
				cq[k].status == SDR_STATUS_OK;
		if (!got)
			usleep(1000);
	}
	TH_LOG("posted %d, sent %d, received %d whole of %d, EAGAIN %d",
	       posted, sent, good, recvs, again);
	EXPECT_EQ(good, DN);
	EXPECT_EQ(sent, DN);
	EXPECT_GT(again, 0);
	EXPECT_EQ(flow_u64(dev0(), p.flow_id, "send_mem"), 0);
	free(buf);
	sdr_close(cs);
	sdr_close(cr);
}

TEST_F(acct, params_refuse_out_of_range)
{
	(void)self;
	EXPECT_NE(set_param("flow_send_max_mb", 0), 0);
	EXPECT_NE(set_param("flow_send_max_mb", 65537), 0);
	EXPECT_NE(set_param("flow_recv_max_mb", 0), 0);
	EXPECT_EQ(set_param("flow_send_max_mb", 1024), 0);
}
