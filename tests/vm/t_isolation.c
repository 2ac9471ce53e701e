// SPDX-License-Identifier: GPL-2.0
/*
 * t_isolation: processes cannot reach each other's flows or memory, a
 * process killed mid-transfer leaves nothing of itself in the module, and
 * a flow's sysfs files are its owner's.
 */
#include <glob.h>
#include <signal.h>
#include <sys/stat.h>

#include "harness.h"
#include "libsdr.h"
#include "util.h"

#define MSG	(1U << 20)

/* What process A tells process B about its flow. */
struct a_facts {
	uint32_t flow_id;
	uint64_t recv_offset, recv_size;
	uint64_t send_offset, send_size;
	uint64_t state_offset, state_size;
	uint64_t ring_offset, ring_size;
};

static long read_long(const char *path)
{
	char buf[64];
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 0);
	fclose(f);
	return v;
}

/*
 * A number describing what the module holds: its reference count (every
 * open /dev/sdr pins it) plus any per-device count sysfs exposes.
 */
static long module_footprint(void)
{
	static const char *const pats[] = {
		"/sys/class/sdr/*/flows", "/sys/class/sdr/*/contexts",
		"/sys/class/sdr/*/nr_flows", "/sys/class/sdr/*/nr_ctx",
		"/sys/class/sdr/*/users",
	};
	long total = read_long("/sys/module/sdr/refcnt");
	glob_t g;
	size_t i, k;

	for (k = 0; k < sizeof(pats) / sizeof(pats[0]); k++) {
		if (glob(pats[k], 0, NULL, &g))
			continue;
		for (i = 0; i < g.gl_pathc; i++) {
			long v = read_long(g.gl_pathv[i]);

			if (v > 0)
				total += v;
		}
		globfree(&g);
	}
	return total;
}

static int wait_footprint(long want, int timeout_ms)
{
	int64_t end = now_us() + (int64_t)timeout_ms * 1000;

	while (module_footprint() != want) {
		if (now_us() > end)
			return -1;
		usleep(20000);
	}
	return 0;
}

TEST(other_process_flows_are_enoent)
{
	struct sdr_flow_create c;
	struct sdr_bind b;
	struct a_facts facts;
	int to_b[2], to_a[2], fa, status;
	char ack;
	pid_t pid;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing");
	ASSERT_EQ(pipe(to_b), 0);
	ASSERT_EQ(pipe(to_a), 0);
	fa = sdr_dev_open();
	ASSERT_GE(fa, 0);
	ASSERT_ERRNO(raw_bind(fa, dev0(), 0, &b), 0);
	ASSERT_ERRNO(raw_flow_create(fa, MSG, 4, &c), 0);
	facts.flow_id = c.flow_id;
	facts.recv_offset = c.recv_offset;
	facts.recv_size = c.recv_size;
	facts.send_offset = c.send_offset;
	facts.send_size = c.send_size;
	facts.state_offset = c.state_offset;
	facts.state_size = c.state_size;
	facts.ring_offset = b.ring_offset;
	facts.ring_size = b.ring_size;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* Process B: its own context, then A's names. */
		struct a_facts f;
		struct sdr_flow_info fi;
		struct sdr_recv_post rp;
		struct sdr_flow_create own;
		int fb = sdr_dev_open(), i;
		void *m;

		th_in_body = 0;
		close(fa);	/* B must not hold A's context */
		if (read(to_b[0], &f, sizeof(f)) != sizeof(f))
			_exit(10);
		if (fb < 0 || raw_bind(fb, dev0(), 0, NULL))
			_exit(11);
		for (i = 0; i < 2; i++) {
			/* i == 1: B has a flow of its own too. */
			if (i == 1 && raw_flow_create(fb, MSG, 4, &own))
				_exit(12);
			if (i == 1 && own.flow_id == f.flow_id) {
				TH_LOG("flow ids are per context: B's own id equals A's");
				break;
			}
			EXPECT_ERRNO(raw_info(fb, f.flow_id, &fi), ENOENT);
			EXPECT_ERRNO(raw_recv_post(fb, f.flow_id, 0, &rp), ENOENT);
			EXPECT_ERRNO(raw_recv_complete(fb, f.flow_id, 0, 0), ENOENT);
			EXPECT_ERRNO(raw_send_post(fb, f.flow_id, 0, 0, 10, 0, NULL), ENOENT);
			EXPECT_ERRNO(raw_destroy(fb, f.flow_id), ENOENT);
			m = mmap(NULL, f.recv_size, PROT_READ, MAP_SHARED, fb,
				 (off_t)f.recv_offset);
			EXPECT_TRUE(m == MAP_FAILED);
			m = mmap(NULL, f.send_size, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fb, (off_t)f.send_offset);
			EXPECT_TRUE(m == MAP_FAILED);
			m = mmap(NULL, f.state_size, PROT_READ, MAP_SHARED, fb,
				 (off_t)f.state_offset);
			EXPECT_TRUE(m == MAP_FAILED);
			if (i == 1 && own.recv_offset == f.recv_offset)
				TH_LOG("mmap cookies are per context (same value in B)");
		}
		/* A's ring offset maps B's own ring, never A's: skip it. */
		close(fb);
		fflush(stdout);
		ack = 1;
		if (write(to_a[1], &ack, 1) != 1)
			_exit(13);
		_exit(th_failed ? 1 : 0);
	}
	ASSERT_EQ(write(to_b[1], &facts, sizeof(facts)), (ssize_t)sizeof(facts));
	ASSERT_EQ(read(to_a[0], &ack, 1), 1);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* A's flow survived B's attempts. */
	{
		struct sdr_flow_info fi;

		EXPECT_ERRNO(raw_info(fa, c.flow_id, &fi), 0);
		EXPECT_EQ(fi.state, SDR_FLOW_IDLE);
	}
	close(fa);
}

/* Child: a pair in one process, streaming 1 MiB messages forever. */
static void stream_forever(int ready_fd)
{
	struct sdr_flow_attr fa = { .policy = SDR_POLICY_NONE,
				    .max_msg_size = MSG, .max_msgs = 8 };
	struct sdr_ctx *cs, *cr;
	struct sdr_flow *fs, *fr;
	struct sdr_completion c[16];
	uint32_t n = 0, posted = 0, done = 0, inflight = 0;
	int told = 0;

	if (flow_pair(&fa, &cs, &cr, &fs, &fr))
		_exit(21);
	for (;;) {
		struct sdr_recv *h;
		int k, got;

		while (posted - done < 8 && !sdr_flow_recv_post(fr, posted, &h))
			posted++;
		while (n < posted && inflight < 8 &&
		       !sdr_flow_send_post(fs, (uint64_t)(n % 8) * MSG, MSG, n, n, NULL)) {
			n++;
			inflight++;
		}
		inflight -= (uint32_t)sdr_flow_send_poll(fs, c, 16);
		got = sdr_poll_cq(cr, c, 16);
		for (k = 0; k < got; k++) {
			sdr_recv_release(c[k].recv);
			done++;
		}
		if (done >= 4 && !told) {
			char x = 1;

			told = write(ready_fd, &x, 1) == 1;
		}
		sdr_wait(cr, 2);
	}
}

TEST_T(sigkill_mid_transfer_leaves_nothing, 120)
{
	long base, during;
	int p[2], status = 0, i;
	char x;
	pid_t pid;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing");
	base = module_footprint();
	TH_LOG("module footprint before: %ld", base);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(pipe(p), 0);
		pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			th_in_body = 0;
			close(p[0]);
			stream_forever(p[1]);
		}
		close(p[1]);
		if (read(p[0], &x, 1) != 1) {
			waitpid(pid, &status, 0);
			TH_LOG("streaming child died early (status %#x)", status);
			ASSERT_TRUE(0);
		}
		close(p[0]);
		during = module_footprint();
		EXPECT_GT(during, base);
		/* Kill it at a slightly different point each round. */
		usleep(50000 * i);
		ASSERT_EQ(kill(pid, SIGKILL), 0);
		ASSERT_EQ(waitpid(pid, &status, 0), pid);
		EXPECT_TRUE(WIFSIGNALED(status));
		/* The release may finish in a workqueue: wait for it. */
		if (wait_footprint(base, WAIT_HANG_MS)) {
			TH_LOG("round %d: footprint %ld, not back to %ld after %d s",
			       i, module_footprint(), base, WAIT_HANG_MS / 1000);
			th_failed = 1;
		}
	}
}

/* After the kills, a fresh pair still moves a message intact. */
TEST(works_after_kill)
{
	struct sdr_flow_attr fa = { .policy = SDR_POLICY_NONE,
				    .max_msg_size = MSG, .max_msgs = 2 };
	struct sdr_ctx *cs, *cr;
	struct sdr_flow *fs, *fr;
	struct sdr_completion c;
	struct sdr_recv *h;
	int64_t end;
	int got = 0;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing");
	ASSERT_EQ(none_idle_max(), 0);
	ASSERT_EQ(flow_pair(&fa, &cs, &cr, &fs, &fr), 0);
	ASSERT_EQ(sdr_flow_recv_post(fr, 0, &h), 0);
	pattern_fill(sdr_send_slot(fs, 0), 77, 0, MSG);
	ASSERT_EQ(sdr_flow_send_post(fs, 0, MSG, 77, 0, NULL), 0);
	end = now_us() + WAIT_HANG_MS * 1000LL;
	while (!got && now_us() < end) {
		got = sdr_poll_cq(cr, &c, 1);
		if (!got)
			sdr_wait(cr, 10);
	}
	ASSERT_EQ(got, 1);
	EXPECT_TRUE(c.recv == h);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_EQ(c.imm, 77);
	EXPECT_EQ(c.len, MSG);
	EXPECT_EQ(pattern_check(sdr_recv_data(h), 77, 0, MSG), -1);
	EXPECT_EQ(sdr_recv_release(h), 0);
	EXPECT_EQ(sdr_close(cs), 0);
	EXPECT_EQ(sdr_close(cr), 0);
}

/* 0 if @path opens with @flags (and reads or writes @w), else errno. */
static int try_file(const char *path, int flags, const char *w)
{
	char buf[128];
	int fd = open(path, flags | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (w ? write(fd, w, strlen(w)) < 0 : read(fd, buf, sizeof(buf)) < 0)
		err = errno;
	close(fd);
	return err;
}

/*
 * A flow's sysfs files are its owner's: a flow made by user 4242 takes
 * its policy writes and shows it its pid and peer; user 4343 reads its
 * counters but not who owns it or whom it talks to, and writes nothing;
 * root reads everything.
 */
TEST(flow_files_belong_to_owner)
{
	char dir[128], path[192], val[32];
	int up[2], down[2], st = -1, fd;
	struct sdr_flow_create c;
	uint32_t id = 0;
	struct stat sb;
	pid_t a, b;
	char go;

	ASSERT_EQ(pipe(up), 0);
	ASSERT_EQ(pipe(down), 0);
	a = fork();
	ASSERT_GE(a, 0);
	if (!a) {
		if (become_user(4242, 1))
			_exit(10);
		fd = sdr_dev_open();
		if (fd < 0 || raw_bind(fd, dev0(), 64, NULL) ||
		    raw_flow_create(fd, 4096, 2, &c))
			_exit(11);
		snprintf(dir, sizeof(dir), "/sys/class/sdr/%s/flows/%u", dev0(),
			 c.flow_id);
		snprintf(path, sizeof(path), "%s/policy", dir);
		if (try_file(path, O_WRONLY, "sr\n"))
			_exit(12);
		snprintf(path, sizeof(path), "%s/owner_pid", dir);
		if (try_file(path, O_RDONLY, NULL))
			_exit(13);
		snprintf(path, sizeof(path), "%s/peer", dir);
		if (try_file(path, O_RDONLY, NULL))
			_exit(14);
		if (write(up[1], &c.flow_id, sizeof(c.flow_id)) != sizeof(c.flow_id) ||
		    read(down[0], &go, 1) != 1)
			_exit(15);
		_exit(0);
	}
	ASSERT_EQ(read(up[0], &id, sizeof(id)), (ssize_t)sizeof(id));
	snprintf(dir, sizeof(dir), "/sys/class/sdr/%s/flows/%u", dev0(), id);
	snprintf(path, sizeof(path), "%s/policy", dir);
	ASSERT_EQ(stat(path, &sb), 0);
	EXPECT_EQ(sb.st_uid, 4242);
	EXPECT_EQ(sb.st_mode & 0777, 0644);
	/* the owner's write took */
	EXPECT_EQ(sysfs_str(path, val, sizeof(val)), 0);
	EXPECT_EQ(strcmp(val, "sr"), 0);
	b = fork();
	ASSERT_GE(b, 0);
	if (!b) {
		if (become_user(4343, 1))
			_exit(20);
		snprintf(path, sizeof(path), "%s/policy", dir);
		if (try_file(path, O_WRONLY, "ec\n") != EACCES)
			_exit(21);
		snprintf(path, sizeof(path), "%s/ec_geometry", dir);
		if (try_file(path, O_WRONLY, "8 2\n") != EACCES)
			_exit(22);
		snprintf(path, sizeof(path), "%s/owner_pid", dir);
		if (try_file(path, O_RDONLY, NULL) != EACCES)
			_exit(23);
		snprintf(path, sizeof(path), "%s/owner_uid", dir);
		if (try_file(path, O_RDONLY, NULL) != EACCES)
			_exit(24);
		snprintf(path, sizeof(path), "%s/peer", dir);
		if (try_file(path, O_RDONLY, NULL) != EACCES)
			_exit(25);
		snprintf(path, sizeof(path), "%s/mtu", dir);
		if (try_file(path, O_RDONLY, NULL))
			_exit(26);
		snprintf(path, sizeof(path), "%s/policy", dir);
		if (try_file(path, O_RDONLY, NULL))
			_exit(27);
		_exit(0);
	}
	ASSERT_EQ(waitpid(b, &st, 0), b);
	TH_LOG("other user: exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* root reads all of it */
	snprintf(path, sizeof(path), "%s/owner_uid", dir);
	EXPECT_EQ(sysfs_u64_or(path, 0), 4242);
	snprintf(path, sizeof(path), "%s/owner_pid", dir);
	EXPECT_EQ(sysfs_u64_or(path, 0), (uint64_t)a);
	EXPECT_EQ(write(down[1], "x", 1), 1);
	ASSERT_EQ(waitpid(a, &st, 0), a);
	TH_LOG("owner: exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Run @fn in a child as user 4243, in the sdr group or not: its status. */
static int as_user(int in_group, int (*fn)(void))
{
	int st = -1;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (become_user(4243, in_group))
			_exit(100);
		_exit(fn());
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int open_fails_eacces(void)
{
	int fd = sdr_dev_open();

	return fd < 0 && errno == EACCES ? 0 : 1;
}

static int open_and_bind(void)
{
	int fd = sdr_dev_open();

	if (fd < 0)
		return 1;
	return raw_bind(fd, dev0(), 64, NULL) ? 2 : 0;
}

/*
 * /dev/sdr is 0660: a user outside its group cannot open it, one in the
 * group (make install's udev rule: "sdr") can, and binds.
 */
TEST(dev_node_takes_the_group)
{
	struct stat sb;

	ASSERT_EQ(stat("/dev/sdr", &sb), 0);
	EXPECT_EQ(sb.st_mode & 0777, 0660);
	EXPECT_EQ(as_user(0, open_fails_eacces), 0);
	EXPECT_EQ(as_user(1, open_and_bind), 0);
	ASSERT_EQ(stat("/dev/sdr", &sb), 0);
	EXPECT_EQ(sb.st_gid, SDR_TEST_GID);
}
