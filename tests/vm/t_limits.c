// SPDX-License-Identifier: GPL-2.0
/*
 * t_limits: what a process may take of the kernel.  Flows and mapped
 * bytes per open /dev/sdr and per user (module parameters ctx_max_flows,
 * ctx_max_mb, user_max_flows, user_max_mb: EMFILE, ENOMEM), the charge of
 * every region to the opener's RLIMIT_MEMLOCK and pinned memory (VmPin),
 * and to its memory cgroup (memory.max is honoured, without an OOM kill).
 * Every limit given back frees what it counted.
 */
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "util.h"

#define MIB		(1U << 20)
#define OTHER_UID	4242		/* a user of its own: its own counts */

static const char *const params[] = {
	"ctx_max_flows", "ctx_max_mb", "user_max_flows", "user_max_mb",
};

FIXTURE(lim) {
	unsigned int saved[4];
};

FIXTURE_SETUP(lim)
{
	char path[128];
	unsigned int i;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "/sys/module/sdr/parameters/%s",
			 params[i]);
		self->saved[i] = (unsigned int)sysfs_u64_or(path, 0);
		ASSERT_NE(self->saved[i], 0);
	}
}

FIXTURE_TEARDOWN(lim)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		set_param(params[i], self->saved[i]);
}

/* A bound context on the first device (-1 if it cannot be had). */
static int bound(uint32_t cq_entries)
{
	int fd = sdr_dev_open();

	if (fd < 0)
		return -1;
	if (raw_bind(fd, dev0(), cq_entries, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
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

/* Flows per open file, then per user over two files; EMFILE past them. */
TEST_F(lim, flow_counts)
{
	struct sdr_flow_create c[8];
	int a, b, i;

	(void)self;
	ASSERT_EQ(set_param("ctx_max_flows", 3), 0);
	a = bound(0);
	b = bound(0);
	ASSERT_GE(a, 0);
	ASSERT_GE(b, 0);
	for (i = 0; i < 3; i++)
		ASSERT_ERRNO(raw_flow_create(a, 4096, 2, &c[i]), 0);
	EXPECT_ERRNO(raw_flow_create(a, 4096, 2, &c[3]), EMFILE);
	/* another file has its own count */
	ASSERT_ERRNO(raw_flow_create(b, 4096, 2, &c[4]), 0);
	/* one destroyed, one more fits */
	ASSERT_ERRNO(raw_destroy(a, c[0].flow_id), 0);
	EXPECT_ERRNO(raw_flow_create(a, 4096, 2, &c[0]), 0);

	/* the user's: 3 in a and 1 in b are 4 */
	ASSERT_EQ(set_param("user_max_flows", 5), 0);
	ASSERT_EQ(set_param("ctx_max_flows", 100), 0);
	EXPECT_ERRNO(raw_flow_create(b, 4096, 2, &c[5]), 0);
	EXPECT_ERRNO(raw_flow_create(b, 4096, 2, &c[6]), EMFILE);
	EXPECT_ERRNO(raw_flow_create(a, 4096, 2, &c[6]), EMFILE);
	/* a closed file gives its flows back */
	close(a);
	EXPECT_ERRNO(raw_flow_create(b, 4096, 2, &c[6]), 0);
	close(b);
}

/*
 * Mapped bytes per open file and per user: a flow maps two regions of
 * max_msgs * max_msg_size and a state area; the ring counts too.
 */
TEST_F(lim, byte_counts)
{
	struct sdr_flow_create c;
	int a, b;

	(void)self;
	/* 8 MiB a file: one flow of 2 x 2 MiB fits beside the ring, not two */
	ASSERT_EQ(set_param("ctx_max_mb", 8), 0);
	a = bound(0);
	ASSERT_GE(a, 0);
	ASSERT_ERRNO(raw_flow_create(a, MIB, 2, &c), 0);
	EXPECT_ERRNO(raw_flow_create(a, MIB, 2, &c), ENOMEM);
	EXPECT_ERRNO(raw_flow_create(a, 4096, 2, &c), 0);
	/* a ring larger than the limit: the bind fails, nothing kept */
	ASSERT_EQ(set_param("ctx_max_mb", 1), 0);
	b = sdr_dev_open();
	ASSERT_GE(b, 0);
	EXPECT_ERRNO(raw_bind(b, dev0(), 65536, NULL), ENOMEM);
	EXPECT_ERRNO(raw_bind(b, dev0(), 64, NULL), 0);
	close(b);

	/* the user's, over files: a holds about 4 MiB of 6 */
	ASSERT_EQ(set_param("ctx_max_mb", 1024), 0);
	ASSERT_EQ(set_param("user_max_mb", 6), 0);
	b = bound(64);
	ASSERT_GE(b, 0);
	EXPECT_ERRNO(raw_flow_create(b, MIB, 1, &c), ENOMEM);
	EXPECT_ERRNO(raw_flow_create(b, 256 << 10, 1, &c), 0);
	close(a);
	EXPECT_ERRNO(raw_flow_create(b, MIB, 2, &c), 0);
	close(b);
}

/*
 * RLIMIT_MEMLOCK: a user without CAP_IPC_LOCK maps no more than it
 * allows, and what it maps shows as its pinned memory (VmPin) until the
 * flow is destroyed.
 */
TEST_F(lim, memlock)
{
	struct rlimit rl = { 6 * MIB, 6 * MIB };
	struct sdr_flow_create c, d;
	int st = -1, fd;
	long pin0, pin1, pin2;
	pid_t pid;

	(void)self;
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		/* a user of its own, no capability: RLIMIT_MEMLOCK holds */
		if (setrlimit(RLIMIT_MEMLOCK, &rl) ||
		    become_user(OTHER_UID, 1))
			_exit(10);
		fd = bound(64);
		if (fd < 0)
			_exit(11);
		pin0 = vm_pin_kb();
		if (raw_flow_create(fd, MIB, 2, &c))
			_exit(12);
		pin1 = vm_pin_kb();
		/* 4 MiB of regions and a state area pinned */
		if (pin1 - pin0 < 4096 || pin1 - pin0 > 4096 + 64)
			_exit(13);
		if (!raw_flow_create(fd, MIB, 2, &d) || errno != ENOMEM)
			_exit(14);
		/* within what is left, it goes */
		if (raw_flow_create(fd, 256 << 10, 2, &d))
			_exit(15);
		if (raw_destroy(fd, c.flow_id) || raw_destroy(fd, d.flow_id))
			_exit(16);
		pin2 = vm_pin_kb();
		if (pin2 != pin0)
			_exit(17);
		/* given back: the big one fits again */
		if (raw_flow_create(fd, MIB, 2, &c))
			_exit(18);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	TH_LOG("memlock child: exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

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

#define CG	"/sys/fs/cgroup"
#define CGT	CG "/sdr_t_limits"

/*
 * A memory cgroup's memory.max holds: a process in it creating 8 MiB
 * flows gets ENOMEM before it holds 48 MiB of them, and nothing is
 * killed (memory.events: oom_kill 0).
 */
TEST_F(lim, cgroup_memory_max)
{
	struct sdr_flow_create c;
	char buf[64], line[128];
	long oom_kill = -1;
	int st = -1, n = 0, fd;
	pid_t pid;
	FILE *f;

	(void)self;

	if (access(CG "/cgroup.controllers", F_OK))
		mount("none", CG, "cgroup2", 0, NULL);
	if (access(CG "/cgroup.controllers", F_OK))
		SKIP("no cgroup v2");
	write_str(CG "/cgroup.subtree_control", "+memory");
	rmdir(CGT);
	ASSERT_EQ(mkdir(CGT, 0755), 0);
	ASSERT_EQ(write_str(CGT "/memory.max", "48M"), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		snprintf(buf, sizeof(buf), "%d", getpid());
		if (write_str(CGT "/cgroup.procs", buf))
			_exit(100);
		fd = bound(64);
		if (fd < 0)
			_exit(101);
		/* 8 MiB a flow: at most 6 fit in 48 MiB */
		while (n < 20 && !raw_flow_create(fd, MIB, 4, &c))
			n++;
		if (errno != ENOMEM)
			_exit(102);
		_exit(n);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	f = fopen(CGT "/memory.events", "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "oom_kill %ld", &oom_kill);
	if (f)
		fclose(f);
	TH_LOG("cgroup child: %s %d, oom_kill %ld", WIFEXITED(st) ? "exit" :
	       "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
	       oom_kill);
	EXPECT_TRUE(WIFEXITED(st));
	/* some flows fit, and no more than the limit holds */
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) >= 1 &&
		    WEXITSTATUS(st) <= 5);
	EXPECT_EQ(oom_kill, 0);
	EXPECT_EQ(rmdir(CGT), 0);
}

/* The limits are module parameters in sysfs, with their ranges. */
TEST_F(lim, params_refuse_out_of_range)
{
	(void)self;
	EXPECT_NE(set_param("ctx_max_flows", 0), 0);
	EXPECT_NE(set_param("ctx_max_flows", 32769), 0);
	EXPECT_NE(set_param("ctx_max_mb", 0), 0);
	EXPECT_NE(set_param("user_max_flows", 0), 0);
	EXPECT_NE(set_param("user_max_mb", 0), 0);
	EXPECT_EQ(set_param("user_max_mb", 100), 0);
}
