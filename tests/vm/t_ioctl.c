// SPDX-License-Identifier: GPL-2.0
/*
 * t_ioctl: the /dev/sdr contract of uapi/sdr_uapi.h, failure by failure, with
 * raw ioctls and mmaps only (no libsdr), iommufd-selftest style: every
 * command gets size-1, size+1 with garbage, size+1 with zero, an unknown
 * flag and a non-zero __reserved; then each command's own errors.
 */
#include <poll.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/keyctl.h>

#include "harness.h"
#include "util.h"

#define MSG	65536
#define NMSGS	4
#define BIG_FLAG (1U << 31)

FIXTURE(env) {
	int fa, fb;			/* bound to dev0 / dev1 */
	struct sdr_bind ba, bb;
};

FIXTURE_SETUP(env)
{
	self->fa = sdr_dev_open();
	if (self->fa < 0 && (errno == ENOENT || errno == ENODEV))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	ASSERT_GE(self->fa, 0);
	self->fb = sdr_dev_open();
	ASSERT_GE(self->fb, 0);
	ASSERT_ERRNO(raw_bind(self->fa, dev0(), 0, &self->ba), 0);
	ASSERT_ERRNO(raw_bind(self->fb, dev1(), 0, &self->bb), 0);
}

FIXTURE_TEARDOWN(env)
{
	close(self->fa);
	close(self->fb);
}

/* Two flows, one per context, connected to each other. */
static void make_pair(struct env_fixture *self, uint32_t max_msg, uint32_t n,
		      struct sdr_flow_create *a, struct sdr_flow_create *b)
{
	ASSERT_ERRNO(raw_flow_create(self->fa, max_msg, n, a), 0);
	ASSERT_ERRNO(raw_flow_create(self->fb, max_msg, n, b), 0);
	ASSERT_ERRNO(raw_connect(self->fa, a->flow_id, &b->ep), 0);
	ASSERT_ERRNO(raw_connect(self->fb, b->flow_id, &a->ep), 0);
}

/*
 * The size/flags/__reserved matrix.  fill() writes a valid argument for
 * the command into buf (creating whatever objects it needs, fresh each
 * time) and returns the fd to issue it on.
 */
struct cmd_desc {
	const char *name;
	unsigned long cmd;
	uint32_t size;		/* the struct this test and the kernel know */
	uint32_t v1;		/* SDR_*_SIZE_V1: the least the kernel takes */
	long reserved_off;	/* -1: no __reserved field */
	int (*fill)(struct env_fixture *self, void *buf);
};

static int fill_bind(struct env_fixture *self, void *buf)
{
	struct sdr_bind *b = buf;
	int fd = sdr_dev_open();

	(void)self;
	ASSERT_GE(fd, 0);
	memset(b, 0, sizeof(*b));
	b->size = sizeof(*b);
	snprintf((char *)b->ibdev, sizeof(b->ibdev), "%s", dev0());
	return fd;
}

static int fill_create(struct env_fixture *self, void *buf)
{
	flow_create_arg(buf, SDR_POLICY_NONE, MSG, NMSGS);
	return self->fa;
}

static int fill_connect(struct env_fixture *self, void *buf)
{
	struct sdr_flow_create a, b;
	struct sdr_flow_connect *c = buf;

	ASSERT_ERRNO(raw_flow_create(self->fa, MSG, NMSGS, &a), 0);
	ASSERT_ERRNO(raw_flow_create(self->fb, MSG, NMSGS, &b), 0);
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->flow_id = a.flow_id;
	c->peer = b.ep;
	return self->fa;
}

static int fill_destroy(struct env_fixture *self, void *buf)
{
	struct sdr_flow_create a;
	struct sdr_flow_destroy *d = buf;

	ASSERT_ERRNO(raw_flow_create(self->fa, MSG, NMSGS, &a), 0);
	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	d->flow_id = a.flow_id;
	return self->fa;
}

static int fill_info(struct env_fixture *self, void *buf)
{
	struct sdr_flow_create a;
	struct sdr_flow_info *fi = buf;

	ASSERT_ERRNO(raw_flow_create(self->fa, MSG, NMSGS, &a), 0);
	memset(fi, 0, sizeof(*fi));
	fi->size = sizeof(*fi);
	fi->flow_id = a.flow_id;
	return self->fa;
}

static int fill_recv_post(struct env_fixture *self, void *buf)
{
	struct sdr_flow_create a, b;
	struct sdr_recv_post *p = buf;

	make_pair(self, MSG, NMSGS, &a, &b);
	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	p->flow_id = b.flow_id;
	p->user_data = 7;
	return self->fb;
}

static int fill_recv_complete(struct env_fixture *self, void *buf)
{
	struct sdr_flow_create a, b;
	struct sdr_recv_complete *c = buf;
	struct sdr_recv_post p;

	make_pair(self, MSG, NMSGS, &a, &b);
	ASSERT_ERRNO(raw_recv_post(self->fb, b.flow_id, 1, &p), 0);
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->flow_id = b.flow_id;
	c->slot = p.slot;
	c->seq = p.seq;
	return self->fb;
}

static int fill_send(struct env_fixture *self, void *buf)
{
	struct sdr_flow_create a, b;
	struct sdr_send_post *s = buf;

	make_pair(self, MSG, NMSGS, &a, &b);
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->flow_id = a.flow_id;
	s->addr = 0;
	s->len = 100;
	return self->fa;
}

static int fill_modify(struct env_fixture *self, void *buf)
{
	struct sdr_flow_create a, b;
	struct sdr_flow_modify *m = buf;

	make_pair(self, MSG, NMSGS, &a, &b);
	memset(m, 0, sizeof(*m));
	m->size = sizeof(*m);
	m->flags = SDR_FLOW_MODIFY_POLICY;
	m->flow_id = a.flow_id;
	m->policy = SDR_POLICY_SR;
	return self->fa;
}

/* FLOW_RAIL: a new flow on dev0 takes dev1 as its rail. */
static int fill_rail(struct env_fixture *self, void *buf)
{
	struct sdr_flow_rail *r = buf;
	struct sdr_flow_create a;

	ASSERT_ERRNO(raw_flow_create(self->fa, 4096, 1, &a), 0);
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->flow_id = a.flow_id;
	r->op = SDR_RAIL_ADD;
	snprintf((char *)r->ibdev, sizeof(r->ibdev), "%s", dev1());
	return self->fa;
}

/* GROUP: an open (each that succeeds is a group left open). */
static int fill_group(struct env_fixture *self, void *buf)
{
	struct sdr_group *g = buf;

	memset(g, 0, sizeof(*g));
	g->size = sizeof(*g);
	g->op = SDR_GROUP_OPEN;
	g->user_data = 9;
	return self->fa;
}

/* MR_REG: 8 KiB of this process's memory, on the first context. */
static uint8_t mr_buf[8192] __attribute__((aligned(4096)));

static int fill_mr_reg(struct env_fixture *self, void *buf)
{
	struct sdr_mr_reg *r = buf;

	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->addr = (uintptr_t)mr_buf;
	r->len = sizeof(mr_buf);
	return self->fa;
}

/* MR_DEREG: of a registration made for it. */
static int fill_mr_dereg(struct env_fixture *self, void *buf)
{
	struct sdr_mr_dereg *d = buf;
	struct sdr_mr_reg r;

	fill_mr_reg(self, &r);
	ASSERT_ERRNO(ioctl(self->fa, SDR_IOC_MR_REG, &r), 0);
	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	d->mr_id = r.mr_id;
	return self->fa;
}

/* A job secret "sdr:NAME" in this process's keyring: 0 or -1. */
static int add_secret(const char *name, const char *secret)
{
	char desc[64];

	snprintf(desc, sizeof(desc), "sdr:%s", name);
	return syscall(SYS_add_key, "user", desc, secret, strlen(secret),
		       KEY_SPEC_PROCESS_KEYRING) < 0 ? -1 : 0;
}

/* A flow created naming job secret @name, on @fd. */
static int secret_create(int fd, const char *name, struct sdr_flow_create *c)
{
	flow_create_arg(c, SDR_POLICY_SR, MSG, NMSGS);
	c->auth = SDR_AUTH_VMAC64;
	snprintf(c->secret, sizeof(c->secret), "%s", name);
	return ioctl(fd, SDR_IOC_FLOW_CREATE, c);
}

/* KEX_CHECK: a flow's own share, signed with the secret it names. */
static int fill_kex_check(struct env_fixture *self, void *buf)
{
	static struct sdr_flow_create c;
	struct sdr_kex_check *k = buf;

	if (!c.flow_id) {
		ASSERT_EQ(add_secret("t_ioctl", "t_ioctl's job secret, 32 bytes"),
			  0);
		ASSERT_ERRNO(secret_create(self->fa, "t_ioctl", &c), 0);
	}
	memset(k, 0, sizeof(*k));
	k->size = sizeof(*k);
	strcpy(k->secret, "t_ioctl");
	k->peer = c.ep;
	k->peer_paths = c.ep_paths;
	k->peer_kex = c.ep_kex;
	return self->fa;
}

/* QUERY on an unbound context: it must not need a bind. */
static int fill_query(struct env_fixture *self, void *buf)
{
	struct sdr_query *q = buf;
	int fd = sdr_dev_open();

	(void)self;
	ASSERT_GE(fd, 0);
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	return fd;
}

#define CMD(nr, type, v1, resv, fill) \
	{ #nr, SDR_IOC_##nr, sizeof(struct type), v1, resv, fill }

static const struct cmd_desc cmds[] = {
	CMD(BIND, sdr_bind, SDR_BIND_SIZE_V1,
	    offsetof(struct sdr_bind, __reserved), fill_bind),
	CMD(FLOW_CREATE, sdr_flow_create, SDR_FLOW_CREATE_SIZE_V1,
	    offsetof(struct sdr_flow_create, __reserved), fill_create),
	CMD(FLOW_CONNECT, sdr_flow_connect, SDR_FLOW_CONNECT_SIZE_V1,
	    offsetof(struct sdr_flow_connect, __reserved), fill_connect),
	CMD(FLOW_DESTROY, sdr_flow_destroy, SDR_FLOW_DESTROY_SIZE_V1,
	    offsetof(struct sdr_flow_destroy, __reserved), fill_destroy),
	CMD(FLOW_INFO, sdr_flow_info, SDR_FLOW_INFO_SIZE_V1, -1, fill_info),
	/* mr_id without SDR_RECV_MR: EINVAL, as __reserved was */
	CMD(RECV_POST, sdr_recv_post, SDR_RECV_POST_SIZE_V1,
	    offsetof(struct sdr_recv_post, mr_id), fill_recv_post),
	CMD(RECV_COMPLETE, sdr_recv_complete, SDR_RECV_COMPLETE_SIZE_V1,
	    offsetof(struct sdr_recv_complete, __reserved), fill_recv_complete),
	/* group without SDR_SEND_GROUP: EINVAL, as __reserved was */
	CMD(SEND_POST, sdr_send_post, SDR_SEND_POST_SIZE_V1,
	    offsetof(struct sdr_send_post, group), fill_send),
	CMD(FLOW_MODIFY, sdr_flow_modify, SDR_FLOW_MODIFY_SIZE_V1, -1, fill_modify),
	CMD(QUERY, sdr_query, SDR_QUERY_SIZE_V1,
	    offsetof(struct sdr_query, __reserved), fill_query),
	CMD(FLOW_RAIL, sdr_flow_rail, SDR_FLOW_RAIL_SIZE_V1, -1, fill_rail),
	CMD(GROUP, sdr_group, SDR_GROUP_SIZE_V1, -1, fill_group),
	CMD(MR_REG, sdr_mr_reg, SDR_MR_REG_SIZE_V1,
	    offsetof(struct sdr_mr_reg, __reserved), fill_mr_reg),
	CMD(MR_DEREG, sdr_mr_dereg, SDR_MR_DEREG_SIZE_V1,
	    offsetof(struct sdr_mr_dereg, __reserved), fill_mr_dereg),
	CMD(KEX_CHECK, sdr_kex_check, SDR_KEX_CHECK_SIZE_V1, -1, fill_kex_check),
};
#undef CMD

static void size_matrix(struct env_fixture *self, const struct cmd_desc *d)
{
	uint8_t buf[1024];
	uint32_t *hdr = (uint32_t *)buf;
	int fd;

	TH_LOG("%s: size %u (V1 %u)", d->name, d->size, d->v1);
#define CASE(what, mutate, expect) do { \
	memset(buf, 0, sizeof(buf)); \
	fd = d->fill(self, buf); \
	mutate; \
	errno = 0; \
	if ((ioctl(fd, d->cmd, buf) < 0 ? errno : 0) != (expect)) { \
		TH_LOG("%s %s: expected %s, got %s", d->name, what, \
		       (expect) ? strerror(expect) : "success", \
		       errno ? strerror(errno) : "success"); \
		th_failed = 1; \
	} \
} while (0)
	CASE("V1-1", hdr[0] = d->v1 - 1, EINVAL);
	CASE("size 0", hdr[0] = 0, EINVAL);
	CASE("size 8 (header only)", hdr[0] = 8, EINVAL);
	CASE("size+1 non-zero tail", (hdr[0] = d->size + 1, buf[d->size] = 0xa5), E2BIG);
	CASE("size+64 non-zero last byte",
	     (hdr[0] = d->size + 64, buf[d->size + 63] = 1), E2BIG);
	CASE("unknown flag", hdr[1] |= BIG_FLAG, EOPNOTSUPP);
	if (d->reserved_off >= 0)
		CASE("__reserved != 0", buf[d->reserved_off] = 1, EINVAL);
	CASE("size+1 zero tail", (hdr[0] = d->size + 1, buf[d->size] = 0), 0);
	CASE("size+512 zero tail", hdr[0] = d->size + 512, 0);
	CASE("V1", hdr[0] = d->v1, 0);
	CASE("exact size", (void)0, 0);
#undef CASE
}

TEST_F(env, size_flags_reserved_matrix)
{
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		size_matrix(self, &cmds[i]);
}

TEST_F(env, size_page_beyond_is_efault_or_e2big)
{
	/* An argument that claims more bytes than are mapped. */
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sdr_flow_info *fi;

	ASSERT_TRUE(m != MAP_FAILED);
	ASSERT_EQ(munmap(m + pg, pg), 0);
	fi = (struct sdr_flow_info *)(m + pg - sizeof(*fi));
	memset(fi, 0, sizeof(*fi));
	fi->size = sizeof(*fi) + 64;	/* tail runs into the hole */
	fi->flow_id = 1;
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_INFO, fi), EFAULT);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_INFO, NULL), EFAULT);
	munmap(m, pg);
}

TEST(unbound_is_ebadfd)
{
	uint8_t buf[512];
	int fd = sdr_dev_open();
	size_t i;

	ASSERT_GE(fd, 0);
	for (i = 1; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		/* these work unbound: query_*, job_secret_binds_connect */
		if (cmds[i].cmd == SDR_IOC_QUERY ||
		    cmds[i].cmd == SDR_IOC_KEX_CHECK)
			continue;
		memset(buf, 0, sizeof(buf));
		*(uint32_t *)buf = cmds[i].size;
		((uint32_t *)buf)[2] = 1;	/* flow_id of most structs */
		errno = 0;
		if (ioctl(fd, cmds[i].cmd, buf) == 0 || errno != EBADFD) {
			TH_LOG("%s unbound: expected EBADFD, got %s", cmds[i].name,
			       strerror(errno));
			th_failed = 1;
		}
	}
	/* Nothing to map either. */
	EXPECT_TRUE(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED);
	close(fd);
}

TEST(unknown_ioctl_enotty)
{
	struct sdr_bind b;
	int fd = sdr_dev_open();

	ASSERT_GE(fd, 0);
	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	EXPECT_ERRNO(ioctl(fd, _IO(SDR_IOC_MAGIC, 0x7f), &b), ENOTTY);
	EXPECT_ERRNO(ioctl(fd, _IO(SDR_IOC_MAGIC, 0x0f), &b), ENOTTY);
	EXPECT_ERRNO(ioctl(fd, _IO(SDR_IOC_MAGIC + 1, 0x00), &b), ENOTTY);
	/* The size must not be encoded: _IOWR of a known nr is another ioctl. */
	EXPECT_ERRNO(ioctl(fd, _IOWR(SDR_IOC_MAGIC, 0x00, struct sdr_bind), &b), ENOTTY);
	ASSERT_ERRNO(raw_bind(fd, dev0(), 0, NULL), 0);
	EXPECT_ERRNO(ioctl(fd, _IO(SDR_IOC_MAGIC, 0x7f), &b), ENOTTY);
	EXPECT_ERRNO(ioctl(fd, TCGETS, &b), ENOTTY);
	close(fd);
}

/*
 * SDR_IOC_QUERY needs no bind, and says what this kernel is: its ABI, the
 * policies it defines and runs, no features yet, the EC and flow limits.
 * The answer is the same on a bound context, and every out field is
 * written whatever it held.
 */
TEST(query_unbound_and_bound)
{
	struct sdr_query q, qb;
	uint8_t big[4096], *p;
	int fd = sdr_dev_open();
	size_t i;

	if (fd < 0 && (errno == ENOENT || errno == ENODEV))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	ASSERT_GE(fd, 0);
	memset(&q, 0xa5, sizeof(q));
	q.size = sizeof(q);
	q.flags = 0;
	q.__reserved0 = 0;
	memset(q.__reserved, 0, sizeof(q.__reserved));
	ASSERT_ERRNO(ioctl(fd, SDR_IOC_QUERY, &q), 0);
	EXPECT_EQ(q.size, sizeof(q));
	EXPECT_EQ(q.flags, 0);
	EXPECT_EQ(q.abi_version, SDR_ABI_VERSION);
	EXPECT_EQ(q.policy_nr, SDR_POLICY_NR);
	/* this version runs every defined policy */
	EXPECT_EQ(q.policies, (1ULL << SDR_POLICY_NONE) | (1ULL << SDR_POLICY_SR) |
			      (1ULL << SDR_POLICY_EC) | (1ULL << SDR_POLICY_ADAPTIVE) |
			      (1ULL << SDR_POLICY_AUTO));
	EXPECT_EQ(q.features, SDR_FEATURE_AUTH | SDR_FEATURE_MULTIPATH |
			      SDR_FEATURE_RAILS | SDR_FEATURE_GROUPS |
			      SDR_FEATURE_MR | SDR_FEATURE_KEX |
			      SDR_FEATURE_AEAD);
	/* the module parameter dev_paths, 4 unless changed */
	EXPECT_EQ(q.paths_max, sysfs_u64_or("/sys/module/sdr/parameters/dev_paths", 0));
	EXPECT_EQ(q.__reserved0, 0);
	EXPECT_EQ(q.ec_max_k, 64);
	EXPECT_EQ(q.ec_max_m, 32);
	EXPECT_EQ(q.max_msg_size, 1U << 30);
	EXPECT_EQ(q.max_msgs, 1024);
	for (i = 0; i < sizeof(q.__reserved) / sizeof(q.__reserved[0]); i++)
		EXPECT_EQ(q.__reserved[i], 0);

	/* Bound: the same answer. */
	ASSERT_ERRNO(raw_bind(fd, dev0(), 0, NULL), 0);
	ASSERT_ERRNO(raw_query(fd, &qb), 0);
	EXPECT_EQ(memcmp(&q, &qb, sizeof(q)), 0);

	/* A caller's larger struct: answered, its tail left zero. */
	memset(big, 0, sizeof(big));
	((struct sdr_query *)big)->size = sizeof(big);
	ASSERT_ERRNO(ioctl(fd, SDR_IOC_QUERY, big), 0);
	EXPECT_EQ(memcmp(big + 4, (uint8_t *)&q + 4, sizeof(q) - 4), 0);
	for (p = big + sizeof(q); p < big + sizeof(big) && !*p; p++)
		;
	EXPECT_EQ(p - big, sizeof(big));

	/* A version-1 caller: nothing is written past SDR_QUERY_SIZE_V1. */
	memset(big, 0x5a, sizeof(big));
	memset(big, 0, SDR_QUERY_SIZE_V1);
	((struct sdr_query *)big)->size = SDR_QUERY_SIZE_V1;
	ASSERT_ERRNO(ioctl(fd, SDR_IOC_QUERY, big), 0);
	EXPECT_EQ(((struct sdr_query *)big)->policies, q.policies);
	for (p = big + SDR_QUERY_SIZE_V1; p < big + sizeof(big) && *p == 0x5a; p++)
		;
	EXPECT_EQ(p - big, sizeof(big));
	close(fd);
}

/* The limits QUERY reports are the ones the kernel enforces. */
TEST_F(env, query_limits_are_enforced)
{
	struct sdr_flow_create c;
	struct sdr_query q;
	uint64_t k, m;

	ASSERT_ERRNO(raw_query(self->fa, &q), 0);
	/* EC: the module parameters take up to ec_max_k / ec_max_m. */
	k = sysfs_u64_or("/sys/module/sdr/parameters/ec_k", 0);
	m = sysfs_u64_or("/sys/module/sdr/parameters/ec_m", 0);
	ASSERT_GT(k, 0);
	ASSERT_GT(m, 0);
	EXPECT_EQ(set_param("ec_k", q.ec_max_k), 0);
	EXPECT_NE(set_param("ec_k", q.ec_max_k + 1), 0);
	EXPECT_EQ(set_param("ec_m", q.ec_max_m), 0);
	EXPECT_NE(set_param("ec_m", q.ec_max_m + 1), 0);
	EXPECT_EQ(sysfs_u64_or("/sys/module/sdr/parameters/ec_k", 0), q.ec_max_k);
	EXPECT_EQ(sysfs_u64_or("/sys/module/sdr/parameters/ec_m", 0), q.ec_max_m);
	ASSERT_EQ(set_param("ec_k", (unsigned int)k), 0);
	ASSERT_EQ(set_param("ec_m", (unsigned int)m), 0);

	/* Flows: max_msgs and max_msg_size up to the limits, not beyond. */
	flow_create_arg(&c, SDR_POLICY_NONE, 4096, q.max_msgs);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	flow_create_arg(&c, SDR_POLICY_NONE, 4096, q.max_msgs + 1);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), EINVAL);
	/* in range, but twice 1 GiB is past max_region_mb (1024) */
	flow_create_arg(&c, SDR_POLICY_NONE, q.max_msg_size, 1);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), ENOMEM);
	flow_create_arg(&c, SDR_POLICY_NONE, q.max_msg_size + 1, 1);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), EINVAL);
}

/* Write @word to a flow's sysfs policy file: 0 or the errno. */
static int sysfs_policy_write(const char *dev, uint32_t flow_id, const char *word)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/policy", dev,
		 flow_id);
	return sysfs_write(path, word);
}

/*
 * QUERY's policies are exactly what the kernel takes: for each defined id
 * flow create, FLOW_MODIFY and the sysfs policy file (by the name of
 * SDR_POLICY_NAMES) succeed iff its bit is set, else EOPNOTSUPP; ids from
 * SDR_POLICY_NR on and unknown names are EINVAL.
 */
TEST_F(env, query_policies_match_create)
{
	static const char *const names[SDR_POLICY_NR] = SDR_POLICY_NAMES;
	static const uint32_t undefined[] = { SDR_POLICY_NR, SDR_POLICY_NR + 1,
					      63, 64, 1000, 0xfffffffeU };
	struct sdr_flow_create a, b, c;
	struct sdr_flow_modify m;
	struct sdr_flow_info fi;
	struct sdr_query q;
	char path[128], word[32];
	uint32_t id;
	size_t i;
	FILE *f;
	int ret;

	ASSERT_ERRNO(raw_query(self->fa, &q), 0);
	ASSERT_EQ(q.policy_nr, SDR_POLICY_NR);
	EXPECT_NE(q.policies & (1ULL << SDR_POLICY_NONE), 0);
	make_pair(self, MSG, NMSGS, &a, &b);
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/policy", dev0(),
		 a.flow_id);
	for (id = 0; id < SDR_POLICY_NR; id++) {
		int want = q.policies & (1ULL << id) ? 0 : EOPNOTSUPP;

		flow_create_arg(&c, id, MSG, NMSGS);
		errno = 0;
		ret = ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c) ? errno : 0;
		EXPECT_EQ(ret, want);
		if (!ret) {
			EXPECT_EQ(c.policy, id);
			EXPECT_EQ(c.ep.policy, id);
		}

		memset(&m, 0, sizeof(m));
		m.size = sizeof(m);
		m.flags = SDR_FLOW_MODIFY_POLICY;
		m.flow_id = a.flow_id;
		m.policy = id;
		errno = 0;
		ret = ioctl(self->fa, SDR_IOC_FLOW_MODIFY, &m) ? errno : 0;
		EXPECT_EQ(ret, want);
		ASSERT_ERRNO(raw_info(self->fa, a.flow_id, &fi), 0);
		if (!ret)
			EXPECT_EQ(fi.policy, id);

		/* sysfs: the number or the uapi name, the name shown back */
		snprintf(word, sizeof(word), "%u\n", id);
		EXPECT_EQ(sysfs_policy_write(dev0(), a.flow_id, word), want);
		EXPECT_EQ(sysfs_policy_write(dev0(), a.flow_id, names[id]), want);
		f = fopen(path, "r");
		ASSERT_TRUE(f);
		EXPECT_EQ(fscanf(f, "%31s", word), 1);
		fclose(f);
		if (!want)
			EXPECT_EQ(strcmp(word, names[id]), 0);
		else
			EXPECT_NE(strcmp(word, names[id]), 0);
		TH_LOG("policy %u %s: %s", id, names[id], want ? "not run" : "runs");
	}
	for (i = 0; i < sizeof(undefined) / sizeof(undefined[0]); i++) {
		flow_create_arg(&c, undefined[i], MSG, NMSGS);
		EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), EINVAL);
		memset(&m, 0, sizeof(m));
		m.size = sizeof(m);
		m.flags = SDR_FLOW_MODIFY_POLICY;
		m.flow_id = a.flow_id;
		m.policy = undefined[i];
		EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_MODIFY, &m), EINVAL);
	}
	EXPECT_EQ(sysfs_policy_write(dev0(), a.flow_id, "bogus"), EINVAL);
	snprintf(word, sizeof(word), "%u", SDR_POLICY_NR);
	EXPECT_EQ(sysfs_policy_write(dev0(), a.flow_id, word), EINVAL);
}

TEST(bind_errors_and_outputs)
{
	struct sdr_bind b, b2;
	int fd = sdr_dev_open(), fd2;

	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(raw_bind(fd, "no_such_dev", 0, NULL), ENODEV);
	EXPECT_ERRNO(raw_bind(fd, dev0(), 100, NULL), EINVAL);
	EXPECT_ERRNO(raw_bind(fd, dev0(), 32, NULL), EINVAL);
	EXPECT_ERRNO(raw_bind(fd, dev0(), 131072, NULL), EINVAL);
	EXPECT_ERRNO(raw_bind(fd, dev0(), 3, NULL), EINVAL);

	/* Name not NUL-terminated. */
	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	memset(b.ibdev, 'r', sizeof(b.ibdev));
	EXPECT_ERRNO(ioctl(fd, SDR_IOC_BIND, &b), EINVAL);

	/* Unknown GID. */
	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	b.flags = SDR_BIND_BY_GID;
	b.gid[0] = 0x20;
	b.gid[1] = 0x01;
	b.gid[2] = 0x0d;
	b.gid[3] = 0xb8;
	b.gid[15] = 0x77;
	EXPECT_ERRNO(ioctl(fd, SDR_IOC_BIND, &b), ENODEV);

	/* Failed binds leave it unbound: a good one still works. */
	ASSERT_ERRNO(raw_bind(fd, dev0(), 0, &b), 0);
	EXPECT_EQ(strcmp((char *)b.ibdev, dev0()), 0);
	EXPECT_EQ(b.cq_entries, 4096);
	EXPECT_GE(b.port, 1);
	EXPECT_GE(b.mtu, 256);
	EXPECT_LE(b.mtu, 4096);
	EXPECT_EQ(b.mtu & (b.mtu - 1), 0);
	EXPECT_GT(b.ring_size, 0);
	EXPECT_GE(b.ring_size, b.ring.cqes + 4096ULL * sizeof(struct sdr_cqe));
	EXPECT_NE(b.ring.head / 64, b.ring.tail / 64);	/* own cache lines */
	{
		static const uint8_t zero[SDR_GID_LEN];

		EXPECT_NE(memcmp(b.gid, zero, SDR_GID_LEN), 0);
	}

	/* Double bind. */
	EXPECT_ERRNO(raw_bind(fd, dev0(), 0, NULL), EBUSY);
	EXPECT_ERRNO(raw_bind(fd, dev1(), 0, NULL), EBUSY);

	/* By GID finds the same device. */
	fd2 = sdr_dev_open();
	ASSERT_GE(fd2, 0);
	memset(&b2, 0, sizeof(b2));
	b2.size = sizeof(b2);
	b2.flags = SDR_BIND_BY_GID;
	memcpy(b2.gid, b.gid, SDR_GID_LEN);
	b2.cq_entries = 64;
	EXPECT_ERRNO(ioctl(fd2, SDR_IOC_BIND, &b2), 0);
	EXPECT_EQ(strcmp((char *)b2.ibdev, dev0()), 0);
	EXPECT_EQ(b2.cq_entries, 64);
	EXPECT_EQ(memcmp(b2.gid, b.gid, SDR_GID_LEN), 0);
	close(fd2);

	/* The largest ring. */
	fd2 = sdr_dev_open();
	ASSERT_GE(fd2, 0);
	EXPECT_ERRNO(raw_bind(fd2, dev1(), 65536, &b2), 0);
	EXPECT_EQ(b2.cq_entries, 65536);
	close(fd2);
	close(fd);
}

/* FLOW_MODIFY of the EC geometry: 0, or the errno. */
static int modify_ec(int fd, uint32_t flow_id, uint32_t size, uint32_t flags,
		     uint32_t policy, uint32_t k, uint32_t m)
{
	struct sdr_flow_modify fm;

	memset(&fm, 0, sizeof(fm));
	fm.size = size;
	fm.flags = flags;
	fm.flow_id = flow_id;
	fm.policy = policy;
	fm.ec_k = k;
	fm.ec_m = m;
	return ioctl(fd, SDR_IOC_FLOW_MODIFY, &fm) ? errno : 0;
}

/* The flow's ec_geometry file, "K M". */
static void sysfs_ec(const char *dev, uint32_t flow_id, char *out, size_t n)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/ec_geometry",
		 dev, flow_id);
	sysfs_str(path, out, n);
}

/*
 * EC geometry per flow: chosen at creation (0 takes the module's ec_k and
 * ec_m, a version-1 struct too), changed live by FLOW_MODIFY and the
 * sysfs file, shown by FLOW_INFO and sysfs; out of range is EINVAL and
 * changes nothing, also when a policy switch came with it.
 */
TEST_F(env, ec_geometry_per_flow)
{
	/* out of range; the first two only where 0 is not "the default" */
	static const uint32_t bad[][2] = {
		{ 0, 1 }, { 1, 0 }, { 65, 8 }, { 32, 33 }, { 256, 8 },
		{ 65, 0 }, { 0, 33 }, { 0xffffffffU, 0xffffffffU },
	};
	struct sdr_flow_create c;
	struct sdr_flow_info fi;
	char path[128], geo[32];
	uint64_t dk, dm;
	size_t i;

	dk = sysfs_u64_or("/sys/module/sdr/parameters/ec_k", 0);
	dm = sysfs_u64_or("/sys/module/sdr/parameters/ec_m", 0);
	ASSERT_NE(dk, 0);
	/* 0: the defaults, written back */
	flow_create_arg(&c, SDR_POLICY_NONE, MSG, NMSGS);
	ASSERT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.ec_k, dk);
	EXPECT_EQ(c.ec_m, dm);
	/* a version-1 caller: the defaults too */
	flow_create_arg(&c, SDR_POLICY_EC, MSG, NMSGS);
	c.size = SDR_FLOW_CREATE_SIZE_V1;
	c.ec_k = 7;	/* past its size: not read */
	ASSERT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	ASSERT_ERRNO(raw_info(self->fa, c.flow_id, &fi), 0);
	EXPECT_EQ(fi.ec_k, dk);
	EXPECT_EQ(fi.ec_m, dm);
	/* the extremes */
	flow_create_arg(&c, SDR_POLICY_EC, MSG, NMSGS);
	c.ec_k = 64;
	c.ec_m = 32;
	ASSERT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.ec_k, 64);
	EXPECT_EQ(c.ec_m, 32);
	for (i = 2; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sdr_flow_create b;

		flow_create_arg(&b, SDR_POLICY_EC, MSG, NMSGS);
		b.ec_k = bad[i][0];
		b.ec_m = bad[i][1];
		EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &b), EINVAL);
	}
	/* 0 for one of them: that one's default */
	flow_create_arg(&c, SDR_POLICY_EC, MSG, NMSGS);
	c.ec_m = 3;
	ASSERT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.ec_k, dk);
	EXPECT_EQ(c.ec_m, 3);
	flow_create_arg(&c, SDR_POLICY_EC, MSG, NMSGS);
	c.ec_k = 64;
	c.ec_m = 32;
	ASSERT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);

	/* live: FLOW_MODIFY, FLOW_INFO and sysfs agree */
	EXPECT_EQ(modify_ec(self->fa, c.flow_id, sizeof(struct sdr_flow_modify),
			    SDR_FLOW_MODIFY_EC, 0, 1, 1), 0);
	ASSERT_ERRNO(raw_info(self->fa, c.flow_id, &fi), 0);
	EXPECT_EQ(fi.ec_k, 1);
	EXPECT_EQ(fi.ec_m, 1);
	sysfs_ec(dev0(), c.flow_id, geo, sizeof(geo));
	EXPECT_EQ(strcmp(geo, "1 1"), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(modify_ec(self->fa, c.flow_id,
				    sizeof(struct sdr_flow_modify),
				    SDR_FLOW_MODIFY_EC, 0, bad[i][0],
				    bad[i][1]), EINVAL);
	/* with a policy switch: both or neither */
	EXPECT_EQ(modify_ec(self->fa, c.flow_id, sizeof(struct sdr_flow_modify),
			    SDR_FLOW_MODIFY_EC | SDR_FLOW_MODIFY_POLICY,
			    SDR_POLICY_SR, 65, 1), EINVAL);
	EXPECT_EQ(modify_ec(self->fa, c.flow_id, sizeof(struct sdr_flow_modify),
			    SDR_FLOW_MODIFY_EC | SDR_FLOW_MODIFY_POLICY,
			    SDR_POLICY_NR, 2, 2), EINVAL);
	/* a version-1 struct has no geometry to give */
	EXPECT_EQ(modify_ec(self->fa, c.flow_id, SDR_FLOW_MODIFY_SIZE_V1,
			    SDR_FLOW_MODIFY_EC, 0, 2, 2), EINVAL);
	ASSERT_ERRNO(raw_info(self->fa, c.flow_id, &fi), 0);
	EXPECT_EQ(fi.policy, SDR_POLICY_EC);
	EXPECT_EQ(fi.ec_k, 1);
	EXPECT_EQ(fi.ec_m, 1);
	EXPECT_EQ(modify_ec(self->fa, c.flow_id, sizeof(struct sdr_flow_modify),
			    SDR_FLOW_MODIFY_EC | SDR_FLOW_MODIFY_POLICY,
			    SDR_POLICY_SR, 16, 4), 0);
	ASSERT_ERRNO(raw_info(self->fa, c.flow_id, &fi), 0);
	EXPECT_EQ(fi.policy, SDR_POLICY_SR);
	EXPECT_EQ(fi.ec_k, 16);
	EXPECT_EQ(fi.ec_m, 4);

	/* sysfs: "K M" taken; anything else refused, nothing changed */
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/ec_geometry",
		 dev0(), c.flow_id);
	EXPECT_EQ(sysfs_write(path, "8 2\n"), 0);
	sysfs_ec(dev0(), c.flow_id, geo, sizeof(geo));
	EXPECT_EQ(strcmp(geo, "8 2"), 0);
	EXPECT_EQ(sysfs_write(path, "8"), EINVAL);
	EXPECT_EQ(sysfs_write(path, "8 2 1"), EINVAL);
	EXPECT_EQ(sysfs_write(path, "8  2"), EINVAL);
	EXPECT_EQ(sysfs_write(path, "-8 2"), EINVAL);
	EXPECT_EQ(sysfs_write(path, "65 2"), EINVAL);
	EXPECT_EQ(sysfs_write(path, "4294967304 2"), EINVAL);
	EXPECT_EQ(sysfs_write(path, "8 x"), EINVAL);
	EXPECT_EQ(sysfs_write(path, "0 0"), EINVAL);
	ASSERT_ERRNO(raw_info(self->fa, c.flow_id, &fi), 0);
	EXPECT_EQ(fi.ec_k, 8);
	EXPECT_EQ(fi.ec_m, 2);
	/* the module's defaults do not reach a live flow */
	ASSERT_EQ(set_param("ec_k", 5), 0);
	ASSERT_ERRNO(raw_info(self->fa, c.flow_id, &fi), 0);
	EXPECT_EQ(fi.ec_k, 8);
	ASSERT_EQ(set_param("ec_k", (unsigned int)dk), 0);
}

/* FLOW_MODIFY of the rate: 0, or the errno. */
static int modify_rate(int fd, uint32_t flow_id, uint32_t size, uint32_t mbit,
		       uint32_t reserved)
{
	struct sdr_flow_modify fm;

	memset(&fm, 0, sizeof(fm));
	fm.size = size;
	fm.flags = SDR_FLOW_MODIFY_RATE;
	fm.flow_id = flow_id;
	fm.rate_mbit = mbit;
	fm.__reserved = reserved;
	return ioctl(fd, SDR_IOC_FLOW_MODIFY, &fm) ? errno : 0;
}

/* A figure of the flow's window and rate in sysfs (flows/<id>/sr/<name>). */
static uint64_t sysfs_cc(const char *dev, uint32_t flow_id, const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/sr/%s", dev,
		 flow_id, name);
	return sysfs_u64_or(path, UINT64_MAX);
}

/*
 * The window and rate of a flow: win_init packets before anything is
 * measured, not paced (rate 0) until the path is; FLOW_MODIFY's rate
 * (version 3) fixes it and 0 gives it back to the path; a version 2
 * struct, a rate past SDR_RATE_MAX_MBIT or __reserved set is EINVAL and
 * changes nothing; a new flow takes the module parameter rate_mbit.
 */
TEST_F(env, rate_per_flow)
{
	struct sdr_flow_create c;
	uint64_t win_init;

	win_init = sysfs_u64_or("/sys/module/sdr/parameters/win_init", 0);
	ASSERT_NE(win_init, 0);
	flow_create_arg(&c, SDR_POLICY_SR, MSG, NMSGS);
	ASSERT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(sysfs_cc(dev0(), c.flow_id, "window"), win_init);
	EXPECT_EQ(sysfs_cc(dev0(), c.flow_id, "rate_kbit"), 0);
	EXPECT_EQ(sysfs_cc(dev0(), c.flow_id, "cc_cuts"), 0);

	EXPECT_EQ(modify_rate(self->fa, c.flow_id,
			      sizeof(struct sdr_flow_modify), 100, 0), 0);
	EXPECT_EQ(sysfs_cc(dev0(), c.flow_id, "rate_kbit"), 100000);
	EXPECT_EQ(modify_rate(self->fa, c.flow_id, SDR_FLOW_MODIFY_SIZE_V2,
			      50, 0), EINVAL);
	EXPECT_EQ(modify_rate(self->fa, c.flow_id,
			      sizeof(struct sdr_flow_modify),
			      SDR_RATE_MAX_MBIT + 1, 0), EINVAL);
	EXPECT_EQ(modify_rate(self->fa, c.flow_id,
			      sizeof(struct sdr_flow_modify), 50, 1), EINVAL);
	EXPECT_EQ(sysfs_cc(dev0(), c.flow_id, "rate_kbit"), 100000);
	EXPECT_EQ(modify_rate(self->fa, c.flow_id,
			      sizeof(struct sdr_flow_modify),
			      SDR_RATE_MAX_MBIT, 0), 0);
	EXPECT_EQ(sysfs_cc(dev0(), c.flow_id, "rate_kbit"),
		  (uint64_t)SDR_RATE_MAX_MBIT * 1000);
	EXPECT_EQ(modify_rate(self->fa, c.flow_id,
			      sizeof(struct sdr_flow_modify), 0, 0), 0);
	EXPECT_EQ(sysfs_cc(dev0(), c.flow_id, "rate_kbit"), 0);

	/* the module's default reaches new flows only */
	ASSERT_EQ(set_param("rate_mbit", 50), 0);
	EXPECT_EQ(sysfs_cc(dev0(), c.flow_id, "rate_kbit"), 0);
	flow_create_arg(&c, SDR_POLICY_EC, MSG, NMSGS);
	ASSERT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(sysfs_cc(dev0(), c.flow_id, "rate_kbit"), 50000);
	ASSERT_EQ(set_param("rate_mbit", 0), 0);
}

/* SDR_POLICY_DEFAULT and chunk_size 0 take the module's defaults. */
TEST_F(env, flow_create_defaults)
{
	struct sdr_flow_create c;

	ASSERT_EQ(set_param("default_policy", SDR_POLICY_SR), 0);
	ASSERT_EQ(set_param("chunk_pkts", 8), 0);
	flow_create_arg(&c, SDR_POLICY_DEFAULT, MSG, NMSGS);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.policy, SDR_POLICY_SR);
	EXPECT_EQ(c.ep.policy, SDR_POLICY_SR);
	EXPECT_EQ(c.chunk_size, 8 * c.payload);
	/* Out of range: refused, the old value stays. */
	EXPECT_NE(set_param("default_policy", SDR_POLICY_NR), 0);
	EXPECT_NE(set_param("chunk_pkts", 0), 0);
	flow_create_arg(&c, SDR_POLICY_DEFAULT, MSG, NMSGS);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.policy, SDR_POLICY_SR);
	EXPECT_EQ(c.chunk_size, 8 * c.payload);
	/* by name too; a word or number no policy has is EINVAL */
	EXPECT_EQ(set_param_str("default_policy", "adaptive"), 0);
	flow_create_arg(&c, SDR_POLICY_DEFAULT, MSG, NMSGS);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.policy, SDR_POLICY_ADAPTIVE);
	EXPECT_EQ(set_param_str("default_policy", "ec\n"), 0);
	EXPECT_EQ(set_param_str("default_policy", "auto"), 0);
	flow_create_arg(&c, SDR_POLICY_DEFAULT, MSG, NMSGS);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.policy, SDR_POLICY_AUTO);
	EXPECT_EQ(c.ep.policy, SDR_POLICY_AUTO);
	EXPECT_EQ(set_param_str("default_policy", "ec\n"), 0);
	EXPECT_EQ(set_param_str("default_policy", "5"), EINVAL);
	EXPECT_EQ(set_param_str("default_policy", "bogus"), EINVAL);
	EXPECT_EQ(set_param_str("default_policy", "-1"), EINVAL);
	flow_create_arg(&c, SDR_POLICY_DEFAULT, MSG, NMSGS);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.policy, SDR_POLICY_EC);
	ASSERT_EQ(set_param("default_policy", SDR_POLICY_NONE), 0);
	ASSERT_EQ(set_param("chunk_pkts", 16), 0);
	flow_create_arg(&c, SDR_POLICY_DEFAULT, MSG, NMSGS);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.policy, SDR_POLICY_NONE);
	EXPECT_EQ(c.chunk_size, 16 * c.payload);
}

TEST_F(env, flow_create_errors_and_outputs)
{
	struct sdr_flow_create c;
	uint32_t payload;
	int ret;

	flow_create_arg(&c, SDR_POLICY_NONE, MSG, NMSGS);
	ASSERT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	payload = c.payload;
	EXPECT_GT(payload, 0);
	EXPECT_LT(payload, c.mtu);
	EXPECT_EQ(c.mtu, self->ba.mtu);
	EXPECT_EQ(c.chunk_size, 16 * payload);
	EXPECT_EQ(c.ep.magic, SDR_EP_MAGIC);
	EXPECT_EQ(c.ep.abi, SDR_ABI_VERSION);
	EXPECT_EQ(c.ep.flow_id, c.flow_id);
	EXPECT_EQ(c.ep.payload, payload);
	EXPECT_EQ(c.ep.chunk_size, c.chunk_size);
	EXPECT_EQ(c.ep.max_msg_size, MSG);
	EXPECT_EQ(c.ep.max_msgs, NMSGS);
	EXPECT_EQ(c.ep.policy, SDR_POLICY_NONE);
	EXPECT_EQ(memcmp(c.ep.gid, self->ba.gid, SDR_GID_LEN), 0);
	EXPECT_GE(c.slot_stride, MSG);
	EXPECT_GE(c.recv_size, (uint64_t)NMSGS * c.slot_stride);
	EXPECT_GE(c.send_size, (uint64_t)NMSGS * c.slot_stride);
	EXPECT_GE(c.state_stride, sizeof(struct sdr_recv_state));
	EXPECT_GE(c.state_size, (uint64_t)NMSGS * c.state_stride);
	EXPECT_GE(c.chunk_bitmap, sizeof(struct sdr_recv_state));
	EXPECT_GE(c.pkt_bitmap, sizeof(struct sdr_recv_state));
	EXPECT_NE(c.recv_offset, c.send_offset);
	EXPECT_NE(c.recv_offset, c.state_offset);
	EXPECT_NE(c.send_offset, c.state_offset);

#define BAD(field, val, err) do { \
	flow_create_arg(&c, SDR_POLICY_NONE, MSG, NMSGS); \
	c.field = (val); \
	errno = 0; \
	ret = ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c) ? errno : 0; \
	if (ret != (err)) { \
		TH_LOG("FLOW_CREATE %s=%llu: expected %s, got %s", #field, \
		       (unsigned long long)(val), strerror(err), \
		       ret ? strerror(ret) : "success"); \
		th_failed = 1; \
	} \
} while (0)
	BAD(mtu, 100, EINVAL);
	BAD(mtu, 128, EINVAL);
	BAD(mtu, 300, EINVAL);
	BAD(mtu, 8192, EINVAL);
	if (self->ba.mtu < 4096)
		BAD(mtu, self->ba.mtu * 2, EINVAL);
	BAD(max_msg_size, 0, EINVAL);
	BAD(max_msg_size, (1U << 30) + 1, EINVAL);
	BAD(max_msgs, 0, EINVAL);
	BAD(max_msgs, 1025, EINVAL);
	BAD(chunk_size, 63, EINVAL);
	BAD(chunk_size, 1, EINVAL);
	BAD(chunk_size, 1024 * payload + 1, EINVAL);
	BAD(flags, 1U << 1, EOPNOTSUPP);
	BAD(policy, 1000, EINVAL);
	BAD(policy, SDR_POLICY_NR, EINVAL);
	BAD(policy, SDR_POLICY_DEFAULT - 1, EINVAL);
#undef BAD
	/* Boundaries that must work. */
	flow_create_arg(&c, SDR_POLICY_NONE, 1, 1);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	flow_create_arg(&c, SDR_POLICY_NONE, MSG, NMSGS);
	c.mtu = 256;
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.mtu, 256);
	flow_create_arg(&c, SDR_POLICY_NONE, MSG, NMSGS);
	c.chunk_size = payload;
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.chunk_size, payload);
	flow_create_arg(&c, SDR_POLICY_NONE, 1 << 20, NMSGS);
	c.chunk_size = 1024 * payload;
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	/* chunks that are no multiple of the payload (since ABI 6) */
	flow_create_arg(&c, SDR_POLICY_NONE, MSG, NMSGS);
	c.chunk_size = 64;
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.chunk_size, 64);
	flow_create_arg(&c, SDR_POLICY_NONE, MSG, NMSGS);
	c.chunk_size = 65536;
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.chunk_size, 65536);
	/* registered memory only: no regions */
	flow_create_arg(&c, SDR_POLICY_SR, MSG, NMSGS);
	c.flags = SDR_FLOW_CREATE_MR;
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(c.recv_size, 0);
	EXPECT_EQ(c.send_size, 0);
	EXPECT_NE(c.state_size, 0);
	/* max_region_mb bounds the state area too: 64-byte chunks of 64 MiB
	 * messages are 130 KiB of bitmaps a slot, 16.3 MiB for 128 slots */
	ASSERT_EQ(set_param("max_region_mb", 16), 0);
	flow_create_arg(&c, SDR_POLICY_SR, 64 << 20, 128);
	c.flags = SDR_FLOW_CREATE_MR;
	c.chunk_size = 64;
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), ENOMEM);
	flow_create_arg(&c, SDR_POLICY_SR, 64 << 20, 128);
	c.flags = SDR_FLOW_CREATE_MR;
	c.chunk_size = 65536;
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), 0);
	EXPECT_EQ(set_param("max_region_mb", 1024), 0);

	/*
	 * Every defined policy runs, AUTO too; past them EINVAL.
	 * query_policies_match_create says the same from QUERY.
	 */
	for (uint32_t pol = SDR_POLICY_SR; pol <= SDR_POLICY_NR; pol++) {
		flow_create_arg(&c, pol, MSG, NMSGS);
		errno = 0;
		ret = ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c) ? errno : 0;
		EXPECT_EQ(ret, pol == SDR_POLICY_NR ? EINVAL : 0);
		if (!ret)
			EXPECT_EQ(c.policy, pol);
	}

	/* max_msgs * max_msg_size beyond max_region_mb. */
	flow_create_arg(&c, SDR_POLICY_NONE, 1U << 30, 1024);
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &c), ENOMEM);
}

TEST(flow_create_enospc)
{
	struct sdr_flow_create c;
	int fd = sdr_dev_open();

	ASSERT_GE(fd, 0);
	ASSERT_ERRNO(raw_bind(fd, dev0(), 64, NULL), 0);
	/* 2 * 32 = 64 completions: the ring is fully spoken for. */
	EXPECT_ERRNO(raw_flow_create(fd, 4096, 32, &c), 0);
	EXPECT_ERRNO(raw_flow_create(fd, 4096, 1, &c), ENOSPC);
	close(fd);
}

TEST_F(env, connect_errors)
{
	struct sdr_flow_create a, b, x;
	struct sdr_endpoint ep;
	struct sdr_flow_info fi;

	ASSERT_ERRNO(raw_flow_create(self->fa, MSG, NMSGS, &a), 0);
	ASSERT_ERRNO(raw_flow_create(self->fb, MSG, NMSGS, &b), 0);
	ASSERT_ERRNO(raw_info(self->fa, a.flow_id, &fi), 0);
	EXPECT_EQ(fi.state, SDR_FLOW_IDLE);

#define BADEP(mut, err) do { \
	ep = b.ep; \
	mut; \
	EXPECT_ERRNO(raw_connect(self->fa, a.flow_id, &ep), err); \
} while (0)
	BADEP(ep.magic ^= 1, EINVAL);
	BADEP(ep.abi = SDR_ABI_VERSION + 1, EINVAL);
	BADEP(ep.payload -= 1, EINVAL);
	BADEP(ep.chunk_size *= 2, EINVAL);
	BADEP(ep.max_msg_size /= 2, EINVAL);
	BADEP(ep.max_msgs += 1, EINVAL);
	BADEP(ep.policy = SDR_POLICY_NR, EINVAL);
	BADEP(ep.flow_id = 0, EINVAL);
	BADEP(ep.qpn = 0, EINVAL);
	/* A GID nobody has: no route, or at least no hang. */
	ep = b.ep;
	memset(ep.gid, 0, sizeof(ep.gid));
	ep.gid[10] = ep.gid[11] = 0xff;
	ep.gid[12] = 203;
	ep.gid[14] = 113;
	ep.gid[15] = 9;
	errno = 0;
	if (raw_connect(self->fa, a.flow_id, &ep)) {
		EXPECT_EQ(errno, EHOSTUNREACH);
	} else {
		TH_LOG("connect to an unroutable GID succeeded (AH created lazily?)");
		/* It is connected now: use a fresh flow for the rest. */
		ASSERT_ERRNO(raw_flow_create(self->fa, MSG, NMSGS, &a), 0);
	}
#undef BADEP
	/* Still idle after all the failures. */
	ASSERT_ERRNO(raw_info(self->fa, a.flow_id, &fi), 0);
	EXPECT_EQ(fi.state, SDR_FLOW_IDLE);

	ASSERT_ERRNO(raw_connect(self->fa, a.flow_id, &b.ep), 0);
	ASSERT_ERRNO(raw_info(self->fa, a.flow_id, &fi), 0);
	EXPECT_EQ(fi.state, SDR_FLOW_CONNECTED);
	EXPECT_EQ(fi.peer_flow_id, b.flow_id);
	EXPECT_EQ(fi.policy, SDR_POLICY_NONE);
	EXPECT_ERRNO(raw_connect(self->fa, a.flow_id, &b.ep), EISCONN);
	/* Another flow of ours is not affected. */
	ASSERT_ERRNO(raw_flow_create(self->fa, MSG, NMSGS, &x), 0);
	EXPECT_ERRNO(raw_connect(self->fa, x.flow_id, &b.ep), 0);
}

/*
 * SDR_IOC_FLOW_CONNECT with the peer's auth (NULL: none, as version 2)
 * and share (NULL: none, as version 3).
 */
static int connect_kex(int fd, uint32_t id, const struct sdr_flow_create *peer,
		       const struct sdr_ep_auth *pa,
		       const struct sdr_ep_kex *pk, uint32_t size)
{
	struct sdr_flow_connect c;

	memset(&c, 0, sizeof(c));
	c.size = size;
	c.flow_id = id;
	c.peer = peer->ep;
	c.peer_paths = peer->ep_paths;
	if (pa)
		c.peer_auth = *pa;
	if (pk)
		c.peer_kex = *pk;
	return ioctl(fd, SDR_IOC_FLOW_CONNECT, &c);
}

static int connect_auth(int fd, uint32_t id, const struct sdr_flow_create *peer,
			const struct sdr_ep_auth *pa, uint32_t size)
{
	return connect_kex(fd, id, peer, pa, &peer->ep_kex, size);
}

static int auth_create(int fd, uint32_t auth, struct sdr_flow_create *c)
{
	flow_create_arg(c, SDR_POLICY_SR, MSG, NMSGS);
	c->auth = auth;
	return ioctl(fd, SDR_IOC_FLOW_CREATE, c);
}

#define AUTH_PARAM	"/sys/module/sdr/parameters/auth"
#define AUTH_REQUIRED	"/sys/module/sdr/parameters/auth_required"

/*
 * The job secret: two flows naming the same one connect (kex psk), a
 * flow naming another or none is refused with EKEYREJECTED at connect,
 * on both ends; SDR_IOC_KEX_CHECK says the same without a flow, on an
 * unbound file too, and refuses an unsigned share, a missing name and a
 * missing key.
 */
TEST_F(env, job_secret_binds_connect)
{
	struct sdr_flow_create a, b, c, d, e;
	struct sdr_kex_check k;
	struct sdr_flow_info fi;
	int fd;

	ASSERT_EQ(add_secret("job-a", "the first job's secret, 32 bytes"), 0);
	ASSERT_EQ(add_secret("job-b", "the other job's secret, 32 bytes"), 0);
	ASSERT_EQ(add_secret("short", "15 bytes only.."), 0);
	ASSERT_ERRNO(secret_create(self->fa, "job-a", &a), 0);
	EXPECT_EQ(a.ep_kex.flags, SDR_KEX_F_PSK);
	ASSERT_ERRNO(secret_create(self->fb, "job-a", &b), 0);
	ASSERT_ERRNO(secret_create(self->fb, "job-b", &c), 0);
	ASSERT_ERRNO(auth_create(self->fb, SDR_AUTH_VMAC64, &d), 0);
	EXPECT_ERRNO(secret_create(self->fb, "short", &e), EINVAL);
	/* another secret, or none: refused on either end */
	EXPECT_ERRNO(connect_auth(self->fa, a.flow_id, &c, &c.ep_auth,
				  sizeof(struct sdr_flow_connect)), EKEYREJECTED);
	EXPECT_ERRNO(connect_auth(self->fb, c.flow_id, &a, &a.ep_auth,
				  sizeof(struct sdr_flow_connect)), EKEYREJECTED);
	EXPECT_ERRNO(connect_auth(self->fa, a.flow_id, &d, &d.ep_auth,
				  sizeof(struct sdr_flow_connect)), EKEYREJECTED);
	EXPECT_ERRNO(connect_auth(self->fb, d.flow_id, &a, &a.ep_auth,
				  sizeof(struct sdr_flow_connect)), EKEYREJECTED);
	/* a share signed for another endpoint: the signature covers it */
	b.ep.seq0 ^= 1;
	EXPECT_ERRNO(connect_auth(self->fa, a.flow_id, &b, &b.ep_auth,
				  sizeof(struct sdr_flow_connect)), EKEYREJECTED);
	b.ep.seq0 ^= 1;
	ASSERT_ERRNO(raw_info(self->fa, a.flow_id, &fi), 0);
	EXPECT_EQ(fi.state, SDR_FLOW_IDLE);
	/* the same secret: both connect */
	ASSERT_ERRNO(connect_auth(self->fa, a.flow_id, &b, &b.ep_auth,
				  sizeof(struct sdr_flow_connect)), 0);
	ASSERT_ERRNO(connect_auth(self->fb, b.flow_id, &a, &a.ep_auth,
				  sizeof(struct sdr_flow_connect)), 0);

	/* KEX_CHECK, on an unbound file */
	fd = sdr_dev_open();
	ASSERT_GE(fd, 0);
	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	strcpy(k.secret, "job-a");
	k.peer = b.ep;
	k.peer_paths = b.ep_paths;
	k.peer_kex = b.ep_kex;
	EXPECT_ERRNO(ioctl(fd, SDR_IOC_KEX_CHECK, &k), 0);
	strcpy(k.secret, "job-b");
	EXPECT_ERRNO(ioctl(fd, SDR_IOC_KEX_CHECK, &k), EKEYREJECTED);
	strcpy(k.secret, "no-such-job");
	EXPECT_ERRNO(ioctl(fd, SDR_IOC_KEX_CHECK, &k), ENOKEY);
	memset(k.secret, 0, sizeof(k.secret));
	EXPECT_ERRNO(ioctl(fd, SDR_IOC_KEX_CHECK, &k), EINVAL);
	strcpy(k.secret, "job-a");
	k.peer_kex = d.ep_kex;	/* unsigned */
	k.peer = d.ep;
	k.peer_paths = d.ep_paths;
	EXPECT_ERRNO(ioctl(fd, SDR_IOC_KEX_CHECK, &k), EKEYREJECTED);
	k.peer_paths.n = SDR_PATHS_MAX + 1;
	EXPECT_ERRNO(ioctl(fd, SDR_IOC_KEX_CHECK, &k), EINVAL);
	close(fd);
}

/*
 * Authentication at create and connect: the default is the module's
 * (vmac64 unless changed); no key leaves the kernel (ep_auth's key is
 * zero), each flow's share has a public key of its own; a peer's part
 * that is not this flow's (alg, a key, reserved bits, no share, a share
 * of another alg or flags) is EPROTO and leaves the flow idle;
 * auth_required makes OFF EPERM without CAP_NET_ADMIN.
 */
TEST_F(env, auth_errors)
{
	static const uint8_t zero[SDR_KEX_PUB_LEN];
	struct sdr_flow_create a, b, off, off2;
	struct sdr_ep_auth pa;
	struct sdr_ep_kex pk;
	struct sdr_flow_info fi;
	char word[16] = "";
	int st = -1;
	pid_t pid;
	FILE *f;

	EXPECT_ERRNO(auth_create(self->fa, SDR_AUTH_NR, &a), EINVAL);
	EXPECT_ERRNO(auth_create(self->fa, 255, &a), EINVAL);
	ASSERT_ERRNO(auth_create(self->fa, SDR_AUTH_DEFAULT, &a), 0);
	EXPECT_EQ(a.auth, SDR_AUTH_VMAC64);
	EXPECT_EQ(a.ep_auth.alg, SDR_AUTH_VMAC64);
	EXPECT_EQ(a.ep_auth.__reserved, 0);
	EXPECT_EQ(memcmp(a.ep_auth.key, zero, sizeof(a.ep_auth.key)), 0);
	EXPECT_EQ(a.ep_kex.alg, SDR_AUTH_VMAC64);
	EXPECT_EQ(a.ep_kex.flags, 0);
	EXPECT_NE(memcmp(a.ep_kex.pub, zero, sizeof(zero)), 0);
	EXPECT_EQ(memcmp(a.ep_kex.mac, zero, sizeof(a.ep_kex.mac)), 0);
	ASSERT_ERRNO(auth_create(self->fb, SDR_AUTH_VMAC64, &b), 0);
	EXPECT_NE(memcmp(a.ep_kex.pub, b.ep_kex.pub, sizeof(zero)), 0);
	ASSERT_ERRNO(auth_create(self->fb, SDR_AUTH_OFF, &off), 0);
	EXPECT_EQ(off.auth, SDR_AUTH_OFF);
	EXPECT_EQ(off.ep_auth.alg, SDR_AUTH_OFF);
	EXPECT_EQ(off.ep_kex.alg, SDR_AUTH_OFF);
	EXPECT_EQ(memcmp(off.ep_kex.pub, zero, sizeof(zero)), 0);
	/* a job secret for a flow without authentication; a bad name */
	flow_create_arg(&off2, SDR_POLICY_SR, MSG, NMSGS);
	off2.auth = SDR_AUTH_OFF;
	strcpy(off2.secret, "job");
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &off2), EINVAL);
	off2.auth = SDR_AUTH_VMAC64;
	strcpy(off2.secret, "two words");
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &off2), EINVAL);
	memset(off2.secret, 'x', sizeof(off2.secret));
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &off2), EINVAL);
	strcpy(off2.secret, "no-such-key");
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &off2), ENOKEY);

	/* what the peer gives must be this flow's kind of authentication */
	EXPECT_ERRNO(connect_auth(self->fa, a.flow_id, &off, &off.ep_auth,
				  sizeof(struct sdr_flow_connect)), EPROTO);
	EXPECT_ERRNO(connect_auth(self->fa, a.flow_id, &b, NULL,
				  sizeof(struct sdr_flow_connect)), EPROTO);
	EXPECT_ERRNO(connect_auth(self->fa, a.flow_id, &b, &b.ep_auth,
				  SDR_FLOW_CONNECT_SIZE_V2), EPROTO);
	/* an older caller's connect: the auth, no share */
	EXPECT_ERRNO(connect_auth(self->fa, a.flow_id, &b, &b.ep_auth,
				  SDR_FLOW_CONNECT_SIZE_V3), EPROTO);
	EXPECT_ERRNO(connect_kex(self->fa, a.flow_id, &b, &b.ep_auth, NULL,
				 sizeof(struct sdr_flow_connect)), EPROTO);
	/* a key in the auth: what ABI 8 sent, refused */
	pa = b.ep_auth;
	memset(pa.key, 0x5a, sizeof(pa.key));
	EXPECT_ERRNO(connect_auth(self->fa, a.flow_id, &b, &pa,
				  sizeof(struct sdr_flow_connect)), EPROTO);
	pa = b.ep_auth;
	pa.__reserved = 1;
	EXPECT_ERRNO(connect_auth(self->fa, a.flow_id, &b, &pa,
				  sizeof(struct sdr_flow_connect)), EPROTO);
	pa = b.ep_auth;
	pa.alg = SDR_AUTH_NR;
	EXPECT_ERRNO(connect_auth(self->fa, a.flow_id, &b, &pa,
				  sizeof(struct sdr_flow_connect)), EPROTO);
	pk = b.ep_kex;
	pk.alg = SDR_AUTH_AEAD;
	EXPECT_ERRNO(connect_kex(self->fa, a.flow_id, &b, &b.ep_auth, &pk,
				 sizeof(struct sdr_flow_connect)), EPROTO);
	pk = b.ep_kex;
	pk.flags = 1U << 7;
	EXPECT_ERRNO(connect_kex(self->fa, a.flow_id, &b, &b.ep_auth, &pk,
				 sizeof(struct sdr_flow_connect)), EPROTO);
	pk = b.ep_kex;
	pk.mac[0] = 1;	/* a signature without the flag */
	EXPECT_ERRNO(connect_kex(self->fa, a.flow_id, &b, &b.ep_auth, &pk,
				 sizeof(struct sdr_flow_connect)), EPROTO);
	pk = b.ep_kex;
	pk.flags = SDR_KEX_F_PSK;	/* it claims a secret a has not */
	EXPECT_ERRNO(connect_kex(self->fa, a.flow_id, &b, &b.ep_auth, &pk,
				 sizeof(struct sdr_flow_connect)), EKEYREJECTED);
	ASSERT_ERRNO(raw_info(self->fa, a.flow_id, &fi), 0);
	EXPECT_EQ(fi.state, SDR_FLOW_IDLE);
	ASSERT_ERRNO(connect_auth(self->fa, a.flow_id, &b, &b.ep_auth,
				  sizeof(struct sdr_flow_connect)), 0);

	/* a flow without authentication takes none, or an older caller's */
	ASSERT_ERRNO(auth_create(self->fa, SDR_AUTH_OFF, &off2), 0);
	EXPECT_ERRNO(connect_auth(self->fa, off2.flow_id, &b, &b.ep_auth,
				  sizeof(struct sdr_flow_connect)), EPROTO);
	pa = off.ep_auth;
	pa.key[3] = 1;
	EXPECT_ERRNO(connect_auth(self->fa, off2.flow_id, &off, &pa,
				  sizeof(struct sdr_flow_connect)), EPROTO);
	EXPECT_ERRNO(connect_auth(self->fa, off2.flow_id, &off, NULL,
				  SDR_FLOW_CONNECT_SIZE_V2), 0);

	/* the module parameter: names only, and it is the default */
	EXPECT_EQ(sysfs_write(AUTH_PARAM, "bogus"), EINVAL);
	EXPECT_EQ(sysfs_write(AUTH_PARAM, "default"), EINVAL);
	ASSERT_EQ(sysfs_write(AUTH_PARAM, "off"), 0);
	ASSERT_ERRNO(auth_create(self->fa, SDR_AUTH_DEFAULT, &off2), 0);
	EXPECT_EQ(off2.auth, SDR_AUTH_OFF);
	ASSERT_EQ(sysfs_write(AUTH_PARAM, "vmac64"), 0);
	f = fopen(AUTH_PARAM, "r");
	ASSERT_TRUE(f);
	EXPECT_EQ(fscanf(f, "%15s", word), 1);
	fclose(f);
	EXPECT_EQ(strcmp(word, "vmac64"), 0);

	/* auth_required: OFF takes CAP_NET_ADMIN */
	ASSERT_EQ(sysfs_write(AUTH_REQUIRED, "1"), 0);
	EXPECT_ERRNO(auth_create(self->fa, SDR_AUTH_OFF, &off2), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		int fd;

		if (become_user(4243, 1))
			_exit(10);
		fd = sdr_dev_open();
		if (fd < 0 || raw_bind(fd, dev0(), 0, NULL))
			_exit(11);
		if (!auth_create(fd, SDR_AUTH_OFF, &off2) || errno != EPERM)
			_exit(12);
		if (auth_create(fd, SDR_AUTH_DEFAULT, &off2) ||
		    off2.auth != SDR_AUTH_VMAC64)
			_exit(13);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_EQ(sysfs_write(AUTH_REQUIRED, "0"), 0);
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(WEXITSTATUS(st), 0);
}

TEST_F(env, enoent_foreign_and_stale_flow_ids)
{
	struct sdr_flow_create a, b;
	struct sdr_recv_post rp;
	struct sdr_flow_info fi;
	uint32_t ids[3], seq = 1;
	int fresh, i;

	ASSERT_ERRNO(raw_flow_create(self->fa, MSG, NMSGS, &a), 0);
	ASSERT_ERRNO(raw_flow_create(self->fb, MSG, NMSGS, &b), 0);
	/* A context with no flows: any id, including b's, is foreign. */
	fresh = sdr_dev_open();
	ASSERT_GE(fresh, 0);
	ASSERT_ERRNO(raw_bind(fresh, dev0(), 0, NULL), 0);
	ids[0] = a.flow_id;
	ids[1] = b.flow_id;
	ids[2] = 0xdeadbeef;
	for (i = 0; i < 3; i++) {
		EXPECT_ERRNO(raw_info(fresh, ids[i], &fi), ENOENT);
		EXPECT_ERRNO(raw_connect(fresh, ids[i], &a.ep), ENOENT);
		EXPECT_ERRNO(raw_recv_post(fresh, ids[i], 0, &rp), ENOENT);
		EXPECT_ERRNO(raw_recv_complete(fresh, ids[i], 0, 0), ENOENT);
		EXPECT_ERRNO(raw_send_post(fresh, ids[i], 0, 0, 1, 0, NULL), ENOENT);
		EXPECT_ERRNO(raw_send_post(fresh, ids[i], SDR_SEND_STREAM_CONT, 0, 1, 0, &seq), ENOENT);
		EXPECT_ERRNO(raw_destroy(fresh, ids[i]), ENOENT);
	}
	close(fresh);
	/* b's flow is untouched by all that. */
	ASSERT_ERRNO(raw_info(self->fb, b.flow_id, &fi), 0);
	EXPECT_EQ(fi.state, SDR_FLOW_IDLE);

	/* Stale: destroyed. */
	ASSERT_ERRNO(raw_destroy(self->fa, a.flow_id), 0);
	EXPECT_ERRNO(raw_info(self->fa, a.flow_id, &fi), ENOENT);
	EXPECT_ERRNO(raw_destroy(self->fa, a.flow_id), ENOENT);
	EXPECT_ERRNO(raw_connect(self->fa, a.flow_id, &b.ep), ENOENT);
	EXPECT_ERRNO(raw_recv_post(self->fa, a.flow_id, 0, &rp), ENOENT);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, 0, 0, 1, 0, NULL), ENOENT);
	/* A new flow does not resurrect the old id. */
	ASSERT_ERRNO(raw_flow_create(self->fa, MSG, NMSGS, &a), 0);
	EXPECT_NE(a.flow_id, ids[0]);
}

TEST_F(env, send_errors)
{
	struct sdr_flow_create a, b, idle;
	uint32_t seq = 0, seqs[NMSGS], p;
	uint8_t *buf;
	int i;

	ASSERT_ERRNO(raw_flow_create(self->fa, MSG, NMSGS, &idle), 0);
	EXPECT_ERRNO(raw_send_post(self->fa, idle.flow_id, 0, 0, 10, 0, NULL), ENOTCONN);

	make_pair(self, MSG, NMSGS, &a, &b);
	p = a.payload;
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, 0, 0, 0, 0, NULL), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, 0, 0, MSG + 1, 0, NULL), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, 0, a.send_size - 10, 11, 0, NULL), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, 0, a.send_size, 1, 0, NULL), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, 0, UINT64_MAX - 5, 10, 0, NULL), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, 0, 0, UINT64_MAX, 0, NULL), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id,
			      SDR_SEND_STREAM_START | SDR_SEND_STREAM_END, 0, p, 2 * p, &seq), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id,
			      SDR_SEND_STREAM_CONT | SDR_SEND_STREAM_END, 0, p, 0, &seq), EINVAL);
	/* User pointers. */
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_USER_PTR, 0, 100, 0, NULL), EFAULT);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_USER_PTR, 4096, 100, 0, NULL), EFAULT);
	buf = malloc(MSG + 1);
	ASSERT_TRUE(buf);
	memset(buf, 0x5a, MSG + 1);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_USER_PTR, (uintptr_t)buf, MSG + 1, 0, NULL), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_USER_PTR, (uintptr_t)buf, 0, 0, NULL), EINVAL);

	/* Streams: alignment, bounds, unknown seq. */
	seq = 0x7fffffff;
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_CONT, 0, p, 0, &seq), ESTALE);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_END, 0, p, 0, &seq), ESTALE);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_START, 0, p + 1, 4 * p, &seq), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_START, 0, p, MSG + 1, &seq), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_START, 0, 5 * p, 4 * p, &seq), EINVAL);
	ASSERT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_START, 0, p, 4 * p, &seq), 0);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_CONT, p, p + 1, 0, &seq), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_CONT, p, 4 * p, 0, &seq), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_END, p, p, 0, &seq), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_CONT, p, p, 0, &seq), 0);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_END, 2 * p, 2 * p, 0, &seq), 0);
	/* Closed now. */
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_CONT, 0, p, 0, &seq), ESTALE);

	/*
	 * Where a message lands (dst_off): on the chunk grid, ending within
	 * max_msg_size, said by the first post of a message only.
	 */
	EXPECT_ERRNO(raw_send_at(self->fa, a.flow_id, 0, 0, a.chunk_size / 2, 0, 10, 0, NULL), EINVAL);
	EXPECT_ERRNO(raw_send_at(self->fa, a.flow_id, 0, 0, 1, 0, 10, 0, NULL), EINVAL);
	EXPECT_ERRNO(raw_send_at(self->fa, a.flow_id, 0, 0, a.chunk_size, 0,
				 MSG - a.chunk_size + 1, 0, NULL), EINVAL);
	EXPECT_ERRNO(raw_send_at(self->fa, a.flow_id, SDR_SEND_STREAM_START, 0,
				 a.chunk_size, 0, 0, MSG - a.chunk_size + 1, &seq), EINVAL);
	/* 1000 bytes a chunk in: ready by a CONT, closed by an END */
	ASSERT_ERRNO(raw_send_at(self->fa, a.flow_id, SDR_SEND_STREAM_START, 0,
				 a.chunk_size, 0, 0, 1000, &seq), 0);
	EXPECT_ERRNO(raw_send_at(self->fa, a.flow_id, SDR_SEND_STREAM_CONT, 0,
				 a.chunk_size, 0, 1000, 0, &seq), EINVAL);
	ASSERT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_CONT, 0, 1000, 0, &seq), 0);
	EXPECT_ERRNO(raw_send_at(self->fa, a.flow_id, SDR_SEND_STREAM_END, 0,
				 a.chunk_size, 1000, 0, 0, &seq), EINVAL);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_END, 1000, 0, 0, &seq), 0);

	/*
	 * EAGAIN: NMSGS open streams hold every send, once the two above are
	 * done: they went out once the peer posted their receives (NONE waits
	 * for receive credit).
	 */
	{
		struct sdr_recv_post rp;
		struct sdr_flow_info fi;

		ASSERT_ERRNO(raw_recv_post(self->fb, b.flow_id, 0, &rp), 0);
		ASSERT_ERRNO(raw_recv_post(self->fb, b.flow_id, 0, &rp), 0);
		ASSERT_TRUE(WAIT_UNTIL(!raw_info(self->fa, a.flow_id, &fi) &&
				       fi.sends_inflight == 0, WAIT_HANG_MS));
	}
	for (i = 0; i < NMSGS; i++)
		ASSERT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_START,
					   0, p, 2 * p, &seqs[i]), 0);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, 0, 0, 10, 0, NULL), EAGAIN);
	EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_START, 0, p, 2 * p, &seq), EAGAIN);
	for (i = 0; i < NMSGS; i++)
		EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, SDR_SEND_STREAM_END,
				      p, p, 0, &seqs[i]), 0);
	free(buf);
}

TEST_F(env, recv_errors)
{
	struct sdr_flow_create a, b, idle;
	struct sdr_recv_post p[NMSGS + 1];
	struct sdr_recv_post extra;
	int i;

	ASSERT_ERRNO(raw_flow_create(self->fb, MSG, NMSGS, &idle), 0);
	EXPECT_ERRNO(raw_recv_post(self->fb, idle.flow_id, 0, &extra), ENOTCONN);

	make_pair(self, MSG, NMSGS, &a, &b);
	for (i = 0; i < NMSGS; i++) {
		ASSERT_ERRNO(raw_recv_post(self->fb, b.flow_id, 100 + i, &p[i]), 0);
		EXPECT_LT(p[i].slot, NMSGS);
		if (i)
			EXPECT_EQ(p[i].seq, p[i - 1].seq + 1);
	}
	EXPECT_ERRNO(raw_recv_post(self->fb, b.flow_id, 0, &extra), EAGAIN);

	EXPECT_ERRNO(raw_recv_complete(self->fb, b.flow_id, NMSGS, p[0].seq), EINVAL);
	EXPECT_ERRNO(raw_recv_complete(self->fb, b.flow_id, UINT32_MAX, p[0].seq), EINVAL);
	EXPECT_ERRNO(raw_recv_complete(self->fb, b.flow_id, p[0].slot, p[0].seq + 1000), ESTALE);
	EXPECT_ERRNO(raw_recv_complete(self->fb, b.flow_id, p[1].slot, p[0].seq), ESTALE);
	ASSERT_ERRNO(raw_recv_complete(self->fb, b.flow_id, p[0].slot, p[0].seq), 0);
	/* Completed twice: stale. */
	EXPECT_ERRNO(raw_recv_complete(self->fb, b.flow_id, p[0].slot, p[0].seq), ESTALE);
	/* The slot is free again; a new post gets a new seq and generation. */
	ASSERT_ERRNO(raw_recv_post(self->fb, b.flow_id, 0, &extra), 0);
	EXPECT_NE(extra.seq, p[0].seq);
	if (extra.slot == p[0].slot)
		EXPECT_NE(extra.gen, p[0].gen);
	EXPECT_ERRNO(raw_recv_complete(self->fb, b.flow_id, extra.slot, p[0].seq), ESTALE);
}

static int raw_group(int fd, uint32_t op, uint32_t *group, uint64_t user_data)
{
	struct sdr_group g;
	int ret;

	memset(&g, 0, sizeof(g));
	g.size = sizeof(g);
	g.op = op;
	g.group = *group;
	g.user_data = user_data;
	ret = ioctl(fd, SDR_IOC_GROUP, &g);
	if (!ret)
		*group = g.group;
	return ret;
}

static int raw_recv_post_group(int fd, uint32_t flow_id, uint32_t flags,
			       uint32_t group, struct sdr_recv_post *p)
{
	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	p->flags = flags;
	p->flow_id = flow_id;
	p->group = group;
	return ioctl(fd, SDR_IOC_RECV_POST, p);
}

/*
 * SDR_IOC_GROUP and the posts that join groups: every way to get it
 * wrong has its errno, and the limits (SDR_GROUPS_MAX; a ring entry
 * each) hold.
 */
TEST_F(env, group_errors)
{
	struct sdr_flow_create a, b, c;
	struct sdr_recv_post rp;
	struct sdr_bind small;
	uint32_t g1 = 0, g2 = 0, g = 0, seq = 0, p, n;
	int fc;

	ASSERT_ERRNO(raw_group(self->fa, SDR_GROUP_OPEN, &g1, 1), 0);
	ASSERT_ERRNO(raw_group(self->fa, SDR_GROUP_OPEN, &g2, 2), 0);
	EXPECT_NE(g1, 0);
	EXPECT_NE(g2, 0);
	EXPECT_NE(g1, g2);
	/* inputs that are no input of the op, ops that are none */
	g = 5;
	EXPECT_ERRNO(raw_group(self->fa, SDR_GROUP_OPEN, &g, 0), EINVAL);
	g = g1;
	EXPECT_ERRNO(raw_group(self->fa, SDR_GROUP_CLOSE, &g, 1), EINVAL);
	EXPECT_ERRNO(raw_group(self->fa, 2, &g, 0), EINVAL);
	EXPECT_ERRNO(raw_group(self->fa, UINT32_MAX, &g, 0), EINVAL);
	/* closing what is not open */
	g = 0;
	EXPECT_ERRNO(raw_group(self->fa, SDR_GROUP_CLOSE, &g, 0), ENOENT);
	g = 0xdeadbeef;
	EXPECT_ERRNO(raw_group(self->fa, SDR_GROUP_CLOSE, &g, 0), ENOENT);
	g = g1 + SDR_GROUPS_MAX;	/* same table entry, not the group */
	EXPECT_ERRNO(raw_group(self->fa, SDR_GROUP_CLOSE, &g, 0), ENOENT);
	/* another context's group is none of this one's */
	g = g1;
	EXPECT_ERRNO(raw_group(self->fb, SDR_GROUP_CLOSE, &g, 0), ENOENT);

	make_pair(self, MSG, NMSGS, &a, &b);
	p = a.payload;
	EXPECT_ERRNO(raw_send_group(self->fa, a.flow_id, SDR_SEND_GROUP,
				    0xdeadbeef, 0, 10, 0, NULL), ENOENT);
	EXPECT_ERRNO(raw_send_group(self->fa, a.flow_id, SDR_SEND_GROUP, 0, 0,
				    10, 0, NULL), ENOENT);
	EXPECT_ERRNO(raw_send_group(self->fa, a.flow_id, 0, g1, 0, 10, 0, NULL),
		     EINVAL);
	/* a stream joins at START only */
	ASSERT_ERRNO(raw_send_group(self->fa, a.flow_id,
				    SDR_SEND_STREAM_START | SDR_SEND_GROUP, g1, 0,
				    p, 2 * p, &seq), 0);
	EXPECT_ERRNO(raw_send_group(self->fa, a.flow_id,
				    SDR_SEND_STREAM_END | SDR_SEND_GROUP, g1, p,
				    p, 0, &seq), EINVAL);
	EXPECT_ERRNO(raw_send_group(self->fa, a.flow_id, SDR_SEND_STREAM_END,
				    0, p, p, 0, &seq), 0);
	EXPECT_ERRNO(raw_recv_post_group(self->fb, b.flow_id, SDR_RECV_GROUP,
					 g1, &rp), ENOENT);
	EXPECT_ERRNO(raw_recv_post_group(self->fb, b.flow_id, 0, 7, &rp),
		     EINVAL);
	/* closed: nothing joins it any more, and it closes once */
	g = g2;
	ASSERT_ERRNO(raw_group(self->fa, SDR_GROUP_CLOSE, &g, 0), 0);
	EXPECT_ERRNO(raw_group(self->fa, SDR_GROUP_CLOSE, &g, 0), ENOENT);
	EXPECT_ERRNO(raw_send_group(self->fa, a.flow_id, SDR_SEND_GROUP, g2, 0,
				    10, 0, NULL), ENOENT);

	/* SDR_GROUPS_MAX open at once (g1 is), then EAGAIN */
	for (n = 1; n < SDR_GROUPS_MAX + 8; n++) {
		g = 0;
		if (raw_group(self->fa, SDR_GROUP_OPEN, &g, n))
			break;
	}
	EXPECT_EQ(errno, EAGAIN);
	EXPECT_EQ(n, SDR_GROUPS_MAX);

	/* each open group holds a ring entry: a 64-entry ring fills */
	fc = sdr_dev_open();
	ASSERT_GE(fc, 0);
	ASSERT_ERRNO(raw_bind(fc, dev0(), 64, &small), 0);
	ASSERT_ERRNO(raw_flow_create(fc, MSG, 16, &c), 0);
	for (n = 0; n < 100; n++) {
		g = 0;
		if (raw_group(fc, SDR_GROUP_OPEN, &g, n))
			break;
	}
	EXPECT_EQ(errno, EAGAIN);
	EXPECT_EQ(n, 64);
	close(fc);
}

/* Mapping rules: offsets are cookies, sizes exact, read-only areas stay so. */
TEST_F(env, mmap_rules)
{
	struct sdr_flow_create a;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m;

	ASSERT_ERRNO(raw_flow_create(self->fa, MSG, NMSGS, &a), 0);

#define MAPS(off, sz, prot, err) do { \
	errno = 0; \
	m = mmap(NULL, (sz), (prot), MAP_SHARED, self->fa, (off_t)(off)); \
	if (m == MAP_FAILED) { \
		if (errno != (err)) { \
			TH_LOG("mmap(%s, %s): expected %s, got %s", #off, #sz, \
			       (err) ? strerror(err) : "success", strerror(errno)); \
			th_failed = 1; \
		} \
	} else { \
		if (err) { \
			TH_LOG("mmap(%s, %s): expected %s, got success", \
			       #off, #sz, strerror(err)); \
			th_failed = 1; \
		} \
		munmap(m, (sz)); \
	} \
} while (0)
	/* Wrong sizes. */
	MAPS(a.recv_offset, a.recv_size + pg, PROT_READ, EINVAL);
	MAPS(a.recv_offset, a.recv_size - pg, PROT_READ, EINVAL);
	MAPS(a.send_offset, a.send_size + pg, PROT_READ | PROT_WRITE, EINVAL);
	MAPS(a.state_offset, pg / 2 + a.state_size, PROT_READ, EINVAL);
	MAPS(self->ba.ring_offset, self->ba.ring_size + pg, PROT_READ | PROT_WRITE, EINVAL);
	/* Offsets that are no cookie. */
	MAPS(a.recv_offset + pg, a.recv_size, PROT_READ, EINVAL);
	MAPS(0x7ff000000000ULL, a.recv_size, PROT_READ, EINVAL);
	MAPS(a.send_offset + 64 * pg, a.send_size, PROT_READ, EINVAL);
	/* Read-only areas. */
	MAPS(a.recv_offset, a.recv_size, PROT_READ | PROT_WRITE, EACCES);
	MAPS(a.state_offset, a.state_size, PROT_READ | PROT_WRITE, EACCES);
	MAPS(a.recv_offset, a.recv_size, PROT_READ, 0);
	MAPS(a.state_offset, a.state_size, PROT_READ, 0);
	MAPS(a.send_offset, a.send_size, PROT_READ | PROT_WRITE, 0);
	MAPS(self->ba.ring_offset, self->ba.ring_size, PROT_READ | PROT_WRITE, 0);
#undef MAPS
	/* A later mprotect to writable is refused too. */
	m = mmap(NULL, a.recv_size, PROT_READ, MAP_SHARED, self->fa, (off_t)a.recv_offset);
	ASSERT_TRUE(m != MAP_FAILED);
	EXPECT_ERRNO(mprotect(m, a.recv_size, PROT_READ | PROT_WRITE), EACCES);
	munmap(m, a.recv_size);
	m = mmap(NULL, a.state_size, PROT_READ, MAP_SHARED, self->fa, (off_t)a.state_offset);
	ASSERT_TRUE(m != MAP_FAILED);
	EXPECT_ERRNO(mprotect(m, a.state_size, PROT_READ | PROT_WRITE), EACCES);
	munmap(m, a.state_size);
	/* Another context's cookies are not ours. */
	m = mmap(NULL, a.recv_size, PROT_READ, MAP_SHARED, self->fb, (off_t)a.recv_offset);
	EXPECT_TRUE(m == MAP_FAILED);
	if (m != MAP_FAILED)
		munmap(m, a.recv_size);
	/* A destroyed flow's cookies are gone. */
	ASSERT_ERRNO(raw_destroy(self->fa, a.flow_id), 0);
	m = mmap(NULL, a.recv_size, PROT_READ, MAP_SHARED, self->fa, (off_t)a.recv_offset);
	EXPECT_TRUE(m == MAP_FAILED);
	if (m != MAP_FAILED)
		munmap(m, a.recv_size);
}

/*
 * A destroyed flow flushes its posted receives; they show up as
 * completions with SDR_STATUS_FLUSHED and their user_data.
 */
TEST_F(env, destroy_flushes_receives)
{
	struct sdr_flow_create a, b;
	struct sdr_recv_post p[2];
	struct raw_ring ring;
	struct sdr_cqe e;
	int i, got = 0;

	ASSERT_EQ(raw_ring_map(self->fb, &self->bb, &ring), 0);
	make_pair(self, MSG, NMSGS, &a, &b);
	ASSERT_ERRNO(raw_recv_post(self->fb, b.flow_id, 0xabc0, &p[0]), 0);
	ASSERT_ERRNO(raw_recv_post(self->fb, b.flow_id, 0xabc1, &p[1]), 0);
	ASSERT_ERRNO(raw_destroy(self->fb, b.flow_id), 0);
	for (i = 0; i < 2 && raw_ring_next(&ring, &e, 5000); i++) {
		EXPECT_EQ(e.type, SDR_CQE_RECV);
		EXPECT_EQ(e.status, SDR_STATUS_FLUSHED);
		EXPECT_EQ(e.flow_id, b.flow_id);
		EXPECT_EQ(e.user_data, 0xabc0 + i);
		EXPECT_EQ(e.seq, p[i].seq);
		got++;
	}
	EXPECT_EQ(got, 2);
}

/* One send completion of flow_id off the ring: OK, or FAILED once closed. */
static void peer_gone_cqe(const struct sdr_cqe *e, uint32_t flow_id)
{
	EXPECT_EQ(e->type, SDR_CQE_SEND);
	EXPECT_EQ(e->flow_id, flow_id);
	EXPECT_TRUE(e->status == SDR_STATUS_OK || e->status == SDR_STATUS_FAILED);
}

/*
 * The peer goes away (flow destroyed, then its whole context closed): it
 * tells us (SDR_PKT_CLOSE), so our flow ends CLOSED and new sends fail
 * with EPIPE.  Sends racing with that either fail with EPIPE at once or
 * complete - OK if they went out before the close, FAILED if it caught
 * them - one completion each; nothing hangs.
 */
TEST_F_T(env, peer_gone_no_hang, 180)
{
	struct sdr_flow_create a, b;
	struct sdr_flow_info fi;
	struct raw_ring ring;
	struct sdr_cqe e;
	int i, round, posted, completed;

	ASSERT_EQ(raw_ring_map(self->fa, &self->ba, &ring), 0);
	for (round = 0; round < 2; round++) {
		make_pair(self, MSG, NMSGS, &a, &b);
		if (round == 0) {
			ASSERT_ERRNO(raw_destroy(self->fb, b.flow_id), 0);
		} else {
			close(self->fb);
			self->fb = sdr_dev_open();
			ASSERT_GE(self->fb, 0);
			ASSERT_ERRNO(raw_bind(self->fb, dev1(), 0, &self->bb), 0);
		}
		/* No waiting for the close: the sends race with it. */
		posted = completed = 0;
		for (i = 0; i < 3 * NMSGS; i++) {
			int64_t t0 = now_us();
			int err = raw_send_post(self->fa, a.flow_id, 0, 0, 3 * a.payload + 7, 0, NULL) ? errno : 0;

			/* A post never blocks; the bound only catches a hang. */
			EXPECT_LT(now_us() - t0, WAIT_HANG_MS * 1000LL);
			if (err == EPIPE)
				break;
			if (err == EAGAIN) {
				/* Wait for a completion to free a send. */
				if (!raw_ring_next(&ring, &e, WAIT_HANG_MS)) {
					TH_LOG("round %d: send stuck: no completion", round);
					th_failed = 1;
					break;
				}
				peer_gone_cqe(&e, a.flow_id);
				completed++;
				continue;
			}
			EXPECT_EQ(err, 0);
			posted += !err;
		}
		/* Every posted send completes, once. */
		while (completed < posted && raw_ring_next(&ring, &e, WAIT_HANG_MS)) {
			peer_gone_cqe(&e, a.flow_id);
			completed++;
		}
		EXPECT_EQ(completed, posted);
		EXPECT_EQ(raw_ring_next(&ring, &e, 0), 0);
		/* The peer's close arrives (a loss-free link: best effort suffices). */
		EXPECT_TRUE(WAIT_UNTIL(!raw_info(self->fa, a.flow_id, &fi) &&
				       fi.state != SDR_FLOW_CONNECTED, WAIT_HANG_MS));
		TH_LOG("round %d: %d sends completed; flow state %u after the peer left",
		       round, completed, fi.state);
		EXPECT_EQ(fi.state, SDR_FLOW_CLOSED);
		EXPECT_EQ(fi.sends_inflight, 0);
		EXPECT_ERRNO(raw_send_post(self->fa, a.flow_id, 0, 0, 10, 0, NULL), EPIPE);
		ASSERT_ERRNO(raw_destroy(self->fa, a.flow_id), 0);
	}
}

/* Whether the n QPNs of @p are the n first of @dev's path_qpns. */
static int qpns_match(const char *dev, const struct sdr_ep_paths *p)
{
	char path[128], buf[256], *tok, *save = NULL;
	uint32_t i = 0;

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/path_qpns", dev);
	if (sysfs_str(path, buf, sizeof(buf)))
		return 0;
	for (tok = strtok_r(buf, " ", &save); tok && i < p->n;
	     tok = strtok_r(NULL, " ", &save), i++)
		if (strtoul(tok, NULL, 0) != p->qpn[i])
			return 0;
	return i == p->n;
}

/*
 * Multipath attributes: a flow takes 1..paths_max of its device's QPs and
 * names them in ep_paths (qpn[0] the endpoint's, all the device's
 * path_qpns in order); an older caller's struct gets one path; connect
 * refuses a peer_paths that does not fit its endpoint, before anything
 * changed, and then takes a good one.
 */
TEST_F(env, multipath_attrs)
{
	struct sdr_flow_create a, b, old;
	struct sdr_ep_paths pp;
	struct sdr_query q;
	char path[160];
	uint32_t i, j;

	ASSERT_ERRNO(raw_query(self->fa, &q), 0);
	ASSERT_GE(q.paths_max, 2);
	ASSERT_LE(q.paths_max, SDR_PATHS_MAX);

	/* out of range */
	flow_create_arg(&a, SDR_POLICY_SR, MSG, NMSGS);
	a.paths = q.paths_max + 1;
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &a), EINVAL);
	flow_create_arg(&a, SDR_POLICY_SR, MSG, NMSGS);
	a.paths = 2;
	a.__reserved3 = 1;
	EXPECT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &a), EINVAL);

	/* version 2 of the struct: one path */
	flow_create_arg(&old, SDR_POLICY_SR, MSG, NMSGS);
	old.size = SDR_FLOW_CREATE_SIZE_V2;
	ASSERT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &old), 0);
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/paths", dev0(),
		 old.flow_id);
	EXPECT_EQ(sysfs_u64_or(path, 0), 1);

	/* all of them, and the peer on two */
	flow_create_arg(&a, SDR_POLICY_SR, MSG, NMSGS);
	a.paths = q.paths_max;
	ASSERT_ERRNO(ioctl(self->fa, SDR_IOC_FLOW_CREATE, &a), 0);
	EXPECT_EQ(a.paths, q.paths_max);
	EXPECT_EQ(a.ep_paths.n, q.paths_max);
	EXPECT_EQ(a.ep_paths.qpn[0], a.ep.qpn);
	for (i = 0; i < a.ep_paths.n; i++)
		for (j = 0; j < i; j++)
			EXPECT_NE(a.ep_paths.qpn[i], a.ep_paths.qpn[j]);
	EXPECT_TRUE(qpns_match(dev0(), &a.ep_paths));
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/paths", dev0(),
		 a.flow_id);
	EXPECT_EQ(sysfs_u64_or(path, 0), q.paths_max);
	flow_create_arg(&b, SDR_POLICY_SR, MSG, NMSGS);
	b.paths = 2;
	ASSERT_ERRNO(ioctl(self->fb, SDR_IOC_FLOW_CREATE, &b), 0);
	EXPECT_EQ(b.ep_paths.n, 2);
	EXPECT_TRUE(qpns_match(dev1(), &b.ep_paths));

	/* peer_paths that do not fit: EINVAL, the flow still unconnected */
	pp = b.ep_paths;
	pp.n = SDR_PATHS_MAX + 1;
	EXPECT_ERRNO(raw_connect_paths(self->fa, a.flow_id, &b.ep, &pp), EINVAL);
	pp = b.ep_paths;
	pp.__reserved = 1;
	EXPECT_ERRNO(raw_connect_paths(self->fa, a.flow_id, &b.ep, &pp), EINVAL);
	pp = b.ep_paths;
	pp.qpn[0] = b.ep_paths.qpn[1];		/* not the endpoint's */
	EXPECT_ERRNO(raw_connect_paths(self->fa, a.flow_id, &b.ep, &pp), EINVAL);
	pp = b.ep_paths;
	pp.qpn[1] = pp.qpn[0];			/* twice */
	EXPECT_ERRNO(raw_connect_paths(self->fa, a.flow_id, &b.ep, &pp), EINVAL);
	pp = b.ep_paths;
	pp.qpn[1] = 0;
	EXPECT_ERRNO(raw_connect_paths(self->fa, a.flow_id, &b.ep, &pp), EINVAL);
	pp = b.ep_paths;
	pp.qpn[1] = 1U << 24;
	EXPECT_ERRNO(raw_connect_paths(self->fa, a.flow_id, &b.ep, &pp), EINVAL);
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/path/peer_qpns",
		 dev0(), a.flow_id);
	{
		char buf[128], want[64];

		EXPECT_EQ(sysfs_str(path, buf, sizeof(buf)), 0);
		EXPECT_EQ(strcmp(buf, "-"), 0);
		ASSERT_ERRNO(raw_connect_paths(self->fa, a.flow_id, &b.ep, &b.ep_paths), 0);
		snprintf(want, sizeof(want), "%u %u", b.ep_paths.qpn[0],
			 b.ep_paths.qpn[1]);
		EXPECT_EQ(sysfs_str(path, buf, sizeof(buf)), 0);
		EXPECT_EQ(strcmp(buf, want), 0);
		TH_LOG("peer_qpns %s", buf);
	}
	EXPECT_ERRNO(raw_connect_paths(self->fa, a.flow_id, &b.ep, &b.ep_paths), EISCONN);
	/* n 0: the endpoint's QPN only */
	memset(&pp, 0, sizeof(pp));
	ASSERT_ERRNO(raw_connect_paths(self->fb, b.flow_id, &a.ep, &pp), 0);
}
