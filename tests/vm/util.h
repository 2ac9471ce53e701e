/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the C VM tests: environment, hashing, deterministic
 * data, and raw-ioctl plumbing (t_ioctl must not depend on libsdr).
 */
#ifndef SDR_TEST_UTIL_H
#define SDR_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sdr_uapi.h"
#include "libsdr.h"

static inline const char *dev0(void)
{
	const char *s = getenv("SDR_DEV0");

	return s && *s ? s : "rxe0";
}

static inline const char *dev1(void)
{
	const char *s = getenv("SDR_DEV1");

	return s && *s ? s : "rxe1";
}

static inline int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* FNV-1a 64 over bytes (slow under TCG: use hash64 for bulk data). */
static inline uint64_t fnv1a(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Index of the first byte of p[0..n) that is not v, or -1. */
static inline long first_not(const uint8_t *p, uint8_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}

/*
 * FNV-1a folded over 64-bit little-endian words, then the tail bytes: the
 * same mixing as FNV-1a at an eighth of the steps.  Position-sensitive,
 * so reordered or shifted bytes change it.
 */
static inline uint64_t hash64(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ n, w;

	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&w, b, 8);
		h ^= w;
		h *= 0x100000001b3ULL;
		h ^= h >> 32;
	}
	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Fill n bytes with the stream of generator state seed. */
static inline void random_fill(void *p, size_t n, uint64_t seed);

static inline uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void random_fill(void *p, size_t n, uint64_t seed)
{
	uint8_t *b = p;
	uint64_t w;

	for (; n >= 8; n -= 8, b += 8) {
		w = splitmix64(&seed);
		memcpy(b, &w, 8);
	}
	w = splitmix64(&seed);
	memcpy(b, &w, n);
}

/*
 * The byte at offset off of message msg: a function of both, so a byte
 * landing in the wrong message or at the wrong offset is caught.
 */
static inline uint8_t pattern_byte(uint32_t msg, uint64_t off)
{
	uint64_t x = off / 8 * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)msg << 32 | msg);

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 32;
	return (uint8_t)(x >> ((off % 8) * 8));
}

static inline void pattern_fill(uint8_t *p, uint32_t msg, uint64_t off, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		p[i] = pattern_byte(msg, off + i);
}

/* Index of the first wrong byte, or -1. */
static inline int64_t pattern_check(const uint8_t *p, uint32_t msg,
				    uint64_t off, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		if (p[i] != pattern_byte(msg, off + i))
			return (int64_t)i;
	return -1;
}

/*
 * Tests wait for events, never for a fixed time: poll until a condition
 * holds.  The bound only catches a hang, so make it generous (the guest
 * runs under TCG on a shared machine).
 */
#define WAIT_HANG_MS	30000

/* Poll cond (an expression) every ms until true or timeout_ms: its value. */
#define WAIT_UNTIL(cond, timeout_ms) ({ \
	int64_t _end = now_us() + (int64_t)(timeout_ms) * 1000; \
	int _ok; \
	while (!(_ok = !!(cond)) && now_us() < _end) \
		usleep(1000); \
	_ok; \
})

/* ---- raw ioctl plumbing ---- */

static inline int sdr_dev_open(void)
{
	return open("/dev/sdr", O_RDWR | O_CLOEXEC);
}

/*
 * The tests' "sdr" group: /dev/sdr is 0660 root:root as the module makes
 * it, and make install's udev rule gives it to group sdr; in the VM (no
 * udev) become_user() gives it to this gid, as the rule would.
 */
#define SDR_TEST_GID	4200

/*
 * In a forked child running as root: give /dev/sdr to the test group,
 * then become user (and group) @uid, in the test group when @in_group
 * and in no other.  0, or -1 with errno.
 */
static inline int become_user(uid_t uid, int in_group)
{
	gid_t g = SDR_TEST_GID;

	if (chown("/dev/sdr", (uid_t)-1, SDR_TEST_GID) ||
	    setgroups(in_group ? 1 : 0, &g) || setgid(uid) || setuid(uid))
		return -1;
	return 0;
}

static inline int raw_bind(int fd, const char *dev, uint32_t cq_entries,
			   struct sdr_bind *out)
{
	struct sdr_bind b;
	int ret;

	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	snprintf((char *)b.ibdev, sizeof(b.ibdev), "%s", dev);
	b.cq_entries = cq_entries;
	ret = ioctl(fd, SDR_IOC_BIND, &b);
	if (out)
		*out = b;
	return ret;
}

/* SDR_IOC_QUERY into @q (any context, bound or not). */
static inline int raw_query(int fd, struct sdr_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	return ioctl(fd, SDR_IOC_QUERY, q);
}

/*
 * Raw flows do not authenticate: their tests are about the ioctls, and
 * raw_connect() gives no peer key.  t_ioctl's auth tests and the libsdr
 * tests (flow_pair()) run authenticated flows.
 */
static inline void flow_create_arg(struct sdr_flow_create *c, uint32_t policy,
				   uint32_t max_msg_size, uint32_t max_msgs)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->policy = policy;
	c->max_msg_size = max_msg_size;
	c->max_msgs = max_msgs;
	c->auth = SDR_AUTH_OFF;
}

static inline int raw_flow_create(int fd, uint32_t max_msg_size,
				  uint32_t max_msgs, struct sdr_flow_create *c)
{
	flow_create_arg(c, SDR_POLICY_NONE, max_msg_size, max_msgs);
	return ioctl(fd, SDR_IOC_FLOW_CREATE, c);
}

/* SDR_IOC_FLOW_CONNECT with the peer's ep_paths (NULL: none given). */
static inline int raw_connect_paths(int fd, uint32_t flow_id,
				    const struct sdr_endpoint *peer,
				    const struct sdr_ep_paths *pp)
{
	struct sdr_flow_connect c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flow_id = flow_id;
	c.peer = *peer;
	if (pp)
		c.peer_paths = *pp;
	return ioctl(fd, SDR_IOC_FLOW_CONNECT, &c);
}

static inline int raw_connect(int fd, uint32_t flow_id,
			      const struct sdr_endpoint *peer)
{
	return raw_connect_paths(fd, flow_id, peer, NULL);
}

static inline int raw_destroy(int fd, uint32_t flow_id)
{
	struct sdr_flow_destroy d;

	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.flow_id = flow_id;
	return ioctl(fd, SDR_IOC_FLOW_DESTROY, &d);
}

static inline int raw_info(int fd, uint32_t flow_id, struct sdr_flow_info *fi)
{
	memset(fi, 0, sizeof(*fi));
	fi->size = sizeof(*fi);
	fi->flow_id = flow_id;
	return ioctl(fd, SDR_IOC_FLOW_INFO, fi);
}

static inline int raw_recv_post(int fd, uint32_t flow_id, uint64_t user_data,
				struct sdr_recv_post *p)
{
	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	p->flow_id = flow_id;
	p->user_data = user_data;
	return ioctl(fd, SDR_IOC_RECV_POST, p);
}

static inline int raw_recv_complete(int fd, uint32_t flow_id, uint32_t slot,
				    uint32_t seq)
{
	struct sdr_recv_complete c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flow_id = flow_id;
	c.slot = slot;
	c.seq = seq;
	return ioctl(fd, SDR_IOC_RECV_COMPLETE, &c);
}

/*
 * A send post naming @group (SDR_SEND_GROUP in @flags, or not), landing
 * @dst_off into the peer's receive.
 */
static inline int raw_send_at(int fd, uint32_t flow_id, uint32_t flags,
			      uint32_t group, uint32_t dst_off, uint64_t addr,
			      uint64_t len, uint64_t msg_len, uint32_t *seq)
{
	struct sdr_send_post p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.flags = flags;
	p.flow_id = flow_id;
	p.addr = addr;
	p.len = len;
	p.msg_len = msg_len;
	p.imm = 0x1234;
	p.group = group;
	p.dst_off = dst_off;
	if (seq)
		p.seq = *seq;
	ret = ioctl(fd, SDR_IOC_SEND_POST, &p);
	if (!ret && seq)
		*seq = p.seq;
	return ret;
}

static inline int raw_send_group(int fd, uint32_t flow_id, uint32_t flags,
				 uint32_t group, uint64_t addr, uint64_t len,
				 uint64_t msg_len, uint32_t *seq)
{
	return raw_send_at(fd, flow_id, flags, group, 0, addr, len, msg_len,
			   seq);
}

static inline int raw_send_post(int fd, uint32_t flow_id, uint32_t flags,
			   uint64_t addr, uint64_t len, uint64_t msg_len,
			   uint32_t *seq)
{
	return raw_send_group(fd, flow_id, flags, 0, addr, len, msg_len, seq);
}

/* A mapped completion ring (raw). */
struct raw_ring {
	uint8_t *map;
	size_t size;
	uint32_t *head;
	const uint32_t *tail;
	const struct sdr_cqe *cqes;
	uint32_t mask;
};

static inline int raw_ring_map(int fd, const struct sdr_bind *b,
			       struct raw_ring *r)
{
	void *p = mmap(NULL, b->ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, (off_t)b->ring_offset);

	if (p == MAP_FAILED)
		return -1;
	r->map = p;
	r->size = b->ring_size;
	r->head = (uint32_t *)(r->map + b->ring.head);
	r->tail = (const uint32_t *)(r->map + b->ring.tail);
	r->cqes = (const struct sdr_cqe *)(r->map + b->ring.cqes);
	r->mask = b->cq_entries - 1;
	return 0;
}

/* Next completion within timeout_ms: 1 got one, 0 timed out. */
static inline int raw_ring_next(struct raw_ring *r, struct sdr_cqe *out,
				int timeout_ms)
{
	int64_t end = now_us() + (int64_t)timeout_ms * 1000;

	for (;;) {
		uint32_t head = *r->head;

		if (__atomic_load_n(r->tail, __ATOMIC_ACQUIRE) != head) {
			*out = r->cqes[head & r->mask];
			__atomic_store_n(r->head, head + 1, __ATOMIC_RELEASE);
			return 1;
		}
		if (now_us() > end)
			return 0;
		usleep(1000);
	}
}

/*
 * A context on each device (dev0 sends, dev1 receives), one flow in each,
 * connected to each other.  0, or -1 if any step failed (whatever was
 * opened is left to the process's exit).
 */
static inline int flow_pair(const struct sdr_flow_attr *fa,
			    struct sdr_ctx **cs, struct sdr_ctx **cr,
			    struct sdr_flow **fs, struct sdr_flow **fr)
{
	struct sdr_flow_peer es, er;

	*cs = sdr_open(dev0(), NULL);
	*cr = sdr_open(dev1(), NULL);
	*fs = *cs ? sdr_flow_create(*cs, fa) : NULL;
	*fr = *cr ? sdr_flow_create(*cr, fa) : NULL;
	if (!*fs || !*fr || sdr_flow_peer_info(*fs, &es) ||
	    sdr_flow_peer_info(*fr, &er) || sdr_flow_connect_peer(*fs, &er) ||
	    sdr_flow_connect_peer(*fr, &es))
		return -1;
	return 0;
}

/* Write @word to sysfs file @path in one write: 0 or its errno. */
static inline int sysfs_write(const char *path, const char *word)
{
	size_t len = strlen(word);
	ssize_t n;
	int fd, err;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	n = write(fd, word, len);
	err = n == (ssize_t)len ? 0 : n < 0 ? errno : EIO;
	close(fd);
	return err;
}

/* Write @word to module parameter @name: 0 or the errno of the write. */
static inline int set_param_str(const char *name, const char *word)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/sdr/parameters/%s", name);
	return sysfs_write(path, word);
}

/* Write module parameter @name; 0, or -1 if refused. */
static inline int set_param(const char *name, unsigned int v)
{
	char word[16];

	snprintf(word, sizeof(word), "%u\n", v);
	return set_param_str(name, word) ? -1 : 0;
}

/*
 * Policy NONE completes a receive with holes once its flow saw no packet
 * for none_idle_ms (default 500 ms).  On a loss-free link that happens
 * only when the guest is starved of CPU (TCG on a loaded machine), so a
 * test that expects every NONE message whole first sets it to its
 * maximum, 60 s: then only a real loss leaves holes.
 */
static inline int none_idle_max(void)
{
	return set_param("none_idle_ms", 60000);
}

/* The number in sysfs file @path, or @err when it cannot be read. */
static inline uint64_t sysfs_u64_or(const char *path, uint64_t err)
{
	unsigned long long v;
	FILE *f = fopen(path, "r");

	if (!f)
		return err;
	if (fscanf(f, "%llu", &v) != 1)
		v = err;
	fclose(f);
	return v;
}

/* The first line of sysfs file @path, without its newline, in @out ("" if
 * it cannot be read); 0, or -1 then. */
static inline int sysfs_str(const char *path, char *out, size_t n)
{
	FILE *f = fopen(path, "r");
	int ret = 0;

	out[0] = 0;
	if (!f)
		return -1;
	if (!fgets(out, (int)n, f)) {
		out[0] = 0;
		ret = -1;
	}
	out[strcspn(out, "\n")] = 0;
	fclose(f);
	return ret;
}

#endif /* SDR_TEST_UTIL_H */
