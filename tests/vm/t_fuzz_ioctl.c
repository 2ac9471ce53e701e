// SPDX-License-Identifier: GPL-2.0
/*
 * t_fuzz_ioctl: random sequences of every /dev/sdr ioctl, of mmap, munmap,
 * mprotect and mremap of every area, of open, close, dup, poll, epoll and
 * fork, from several threads and processes that share a few contexts and
 * their flows, for a bounded time.  Written for the debug kernel (KASAN,
 * lockdep, kmemleak) as much as for the stock one: tests/vm/run requires a
 * clean kernel log over the run and an unloadable module afterwards.
 *
 * What must hold whatever the interleaving:
 *  - every ioctl returns 0 or an errno uapi/sdr_uapi.h lists for it (the common
 *    ones or its own); a call whose fd another thread closed or replaced
 *    meanwhile is not judged (EBADF, or another file's answer);
 *  - what the contract makes certain: a short size, a non-zero tail, an
 *    unknown flag, a non-zero __reserved, an unreadable argument fail; an
 *    mmap of a wrong size or offset, of another context's flow, of a
 *    destroyed flow or writable of a read-only area fails; mprotect never
 *    makes a read-only area writable; no sdr mapping grows (mremap);
 *  - a mapping stays usable until it is unmapped, whatever happens to its
 *    flow or context: SIGSEGV/SIGBUS is expected only from a mapping another
 *    thread removed or reprotected (caught, checked, counted);
 *  - what the kernel writes into shared memory is in range (completion
 *    entries, receive slot states);
 *  - nothing blocks: an operation still running after SDR_FUZZ_STUCK
 *    seconds fails the test, with its kernel stack;
 *  - afterwards, every fd closed: no flow, no flows/ entry in sysfs and no
 *    module reference left (tests/vm/run then unloads the module, checks
 *    its leak report and, on the debug kernel, kmemleak).
 *
 * Each thread keeps a history of its last operations; when the kernel log
 * shows trouble during the run, the operations of the seconds before are
 * printed.  Environment:
 *   SDR_FUZZ_SECONDS  how long to fuzz (default 20)
 *   SDR_FUZZ_SEED     the seed (default from the clock; printed, and written
 *                     to the kernel log)
 *   SDR_FUZZ_THREADS  threads of the main process (default 4)
 *   SDR_FUZZ_PROCS    forked worker processes (default 2), THREADS/2 threads
 *                     each, on the contexts they inherit and their own
 *   SDR_FUZZ_TRACE    1: every operation also goes to the kernel log, so a
 *                     crash that kills the guest shows what led to it
 *   SDR_FUZZ_STUCK    seconds after which an operation counts as hung (60)
 *   SDR_FUZZ_PARAMS   1: also change module parameters now and then (they
 *                     are global: only when nothing else uses sdr)
 *   SDR_FUZZ_HOTPLUG  1: also delete and re-add the second device
 * SDR_FUZZ_THREADS=1 SDR_FUZZ_PROCS=0 replays a seed's sequence of
 * operations exactly, up to what the kernel decides (flow ids, timing).
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "harness.h"
#include "util.h"

#define NSLOTS		8		/* fd slots per process */
#define NFLOWS		48		/* flow records per process */
#define NMAPS		128		/* mapping records = arena slots */
#define ARENA_SLOT	(8UL << 20)
#define ARENA_LEN	(NMAPS * ARENA_SLOT)
#define MAX_REGION	(1UL << 20)	/* receive region of a flow, usually */
#define UBUF_LEN	(512U << 10)	/* per-thread source of user pointers */
#define MAX_THREADS	8
#define MAX_PROCS	4
#define NHIST		((MAX_PROCS + 1) * MAX_THREADS * 2)
#define HIST_N		40
#define HIST_LEN	200
#define NSTREAMS	4
#define NRPOSTS		8
#define NSTAT		17		/* 15 ioctls, mmap, unknown ioctls */
#define NERR		140
#define MAX_REPORTS	25
#define PG		4096UL
#define KERNEL_PTR	0xffffffff81000000ULL

/* ---- what one process knows (private; forked workers get a copy) ---- */

struct fzslot {
	int fd;			/* -1: closed */
	unsigned int gen;	/* bumped whenever the fd number changes file */
	int ctx;		/* which open file (dup shares it); -1 unknown */
	int dev;		/* bound to device 0/1; -1 not (known to be) bound */
	int busy;		/* being opened, closed or dup'ed onto */
	struct sdr_bind b;
};

struct fzstream {
	uint32_t seq;
	uint64_t msg_len, ready, base;
	int uptr;
};

struct fzflow {
	int used;
	int slot, ctx, dev;
	uint32_t id;
	int connected;
	int destroyed;		/* FLOW_DESTROY returned 0 for it */
	struct sdr_flow_create c;
	struct fzstream st[NSTREAMS];
	int nst;
	struct { uint32_t slot, seq; } rp[NRPOSTS];
	int nrp;
	int peer;		/* the record of the flow it is paired with, or -1 */
	uint32_t peer_id;
};

enum { M_FREE, M_LIVE, M_BUSY };
enum { K_RING, K_RECV, K_SEND, K_STATE, K_ANON, K_FILE };
static const char *const kind_name[] = {
	"ring", "recv", "send", "state", "anon", "file",
};

struct fzmap {
	int state;
	unsigned int gen;	/* bumped before it is unmapped or changed */
	uint8_t *addr;
	size_t len;
	size_t off0;		/* bytes cut off its front (partial munmap) */
	int prot, flags, kind;
	int holey;		/* a page in the middle was unmapped */
	int slot, ctx;
	uint32_t flow_id;
	/* layout, for reading it */
	uint32_t max_msgs, state_stride, slot_stride;
	uint32_t cq_entries;
	struct sdr_ring_offsets ro;
};

static struct {
	struct fzslot slot[NSLOTS];
	struct fzflow flow[NFLOWS];
	struct fzmap map[NMAPS];
	uint8_t *arena;
	int next_ctx;
	char dev[2][SDR_DEVNAME_LEN];
	uint8_t gid[2][SDR_GID_LEN];
	int have_gid[2];
	int file_fd;		/* a file to map (a memfd) */
	size_t file_len;
	int ep_fd;		/* an epoll instance */
} S;

static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;
/* In a short-lived fork child: one thread, the lock may be stuck held. */
static int in_child;

static void lk(void)
{
	if (!in_child)
		pthread_mutex_lock(&L);
}

static void ulk(void)
{
	if (!in_child)
		pthread_mutex_unlock(&L);
}

/* ---- shared by every process of the run (MAP_SHARED) ---- */

struct hist {
	int used;
	pid_t pid, tid;
	char name[24];
	volatile int64_t busy_since;	/* now_us() while in an operation */
	int stuck_reported;
	volatile unsigned int n;
	int64_t at[HIST_N];
	char e[HIST_N][HIST_LEN];
};

static struct shared {
	int failures;
	int reports;
	int trouble;
	int trouble_dumps;
	long ops;
	long faults;		/* expected faults caught */
	long stat[NSTAT][NERR];
	long cqes[4][4];	/* completions consumed, by type and status */
	struct hist hist[NHIST];
} *G;

static dev_t sdr_rdev;
static int fz_seconds = 20, fz_threads = 4, fz_procs = 2, fz_trace, fz_stuck = 60;
static int fz_hotplug, fz_params;
static char hot_netdev[32];	/* the netdev of the device hotplug removes */
static uint64_t fz_seed;
static int64_t t0_us, deadline_us;
static int kmsg_fd = -1;

struct thr {
	int proc, idx;
	char name[24];
	uint64_t rng;
	struct hist *h;
	int hidx;
	volatile sig_atomic_t guard;
	sigjmp_buf jb;
	volatile uintptr_t fault_addr;
	uint8_t *argpg;		/* a RW page, then a PROT_NONE one */
	uint8_t *ropg;		/* a page made read-only, then PROT_NONE */
	uint8_t *ubuf;
	void *altstack;
	pid_t kid;
	pthread_t pt;
	uint32_t grp[8];	/* groups it opened (on whichever context) */
	int ngrp;
	uint32_t mr[8];		/* registrations it made (on whichever context) */
	int nmr;
};

static __thread struct thr *cur;

/* ---- small helpers ---- */

static uint64_t rnd(struct thr *t)
{
	return splitmix64(&t->rng);
}

static uint32_t below(struct thr *t, uint32_t n)
{
	return n ? (uint32_t)(rnd(t) % n) : 0;
}

static int pct(struct thr *t, int p)
{
	return (int)below(t, 100) < p;
}

static const char *ename(int e)
{
	static __thread char b[16];
	const char *s;

	if (!e)
		return "0";
	s = strerrorname_np(e);
	if (s)
		return s;
	snprintf(b, sizeof(b), "errno %d", e);
	return b;
}

/* Output without stdio: safe in fork children and from any thread. */
static void say(const char *fmt, ...)
{
	char b[600];
	va_list ap;
	int n;

	b[0] = '#';
	b[1] = ' ';
	va_start(ap, fmt);
	n = vsnprintf(b + 2, sizeof(b) - 3, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n += 2;
	if (n > (int)sizeof(b) - 2)
		n = sizeof(b) - 2;
	b[n++] = '\n';
	if (write(1, b, n) < 0)
		return;
}

static void kmsg(const char *fmt, ...)
{
	char b[300];
	va_list ap;
	int n;

	if (kmsg_fd < 0)
		return;
	n = snprintf(b, sizeof(b), "t_fuzz_ioctl: ");
	va_start(ap, fmt);
	n += vsnprintf(b + n, sizeof(b) - n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(b))
		n = sizeof(b) - 1;
	if (write(kmsg_fd, b, n) < 0)
		return;
}

static double rel_s(int64_t us)
{
	return (double)(us - t0_us) / 1e6;
}

static void hist_op(struct thr *t, const char *fmt, ...)
{
	struct hist *h = t->h;
	unsigned int n = h->n, i = n % HIST_N;
	va_list ap;

	h->at[i] = now_us();
	va_start(ap, fmt);
	vsnprintf(h->e[i], HIST_LEN, fmt, ap);
	va_end(ap);
	__atomic_store_n(&h->n, n + 1, __ATOMIC_RELEASE);
	h->busy_since = h->at[i];
	__atomic_add_fetch(&G->ops, 1, __ATOMIC_RELAXED);
	if (fz_trace)
		kmsg("%s %s", t->name, h->e[i]);
}

static void hist_ret(struct thr *t, long ret, int err)
{
	struct hist *h = t->h;
	char *e = h->e[(h->n - 1) % HIST_N];
	size_t l = strlen(e);

	if (l < HIST_LEN - 24 && ret < 0)
		snprintf(e + l, HIST_LEN - l, " -> %s", ename(err));
	else if (l < HIST_LEN - 24)
		snprintf(e + l, HIST_LEN - l, " -> %ld", ret);
	h->busy_since = 0;
}

/* The last @n operations of @h (all of them since @since_us if n == 0). */
static void hist_dump(struct hist *h, unsigned int n, int64_t since_us)
{
	unsigned int end = __atomic_load_n(&h->n, __ATOMIC_ACQUIRE), i;
	unsigned int first = end > HIST_N ? end - HIST_N : 0;

	if (n && end - first > n)
		first = end - n;
	for (i = first; i < end; i++) {
		int64_t at = h->at[i % HIST_N];

		if (!n && at < since_us)
			continue;
		say("  %s +%.3fs %.*s", h->name, rel_s(at), HIST_LEN,
		    h->e[i % HIST_N]);
	}
}

static void fz_fail(struct thr *t, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	__atomic_add_fetch(&G->failures, 1, __ATOMIC_RELAXED);
	if (__atomic_add_fetch(&G->reports, 1, __ATOMIC_RELAXED) > MAX_REPORTS)
		return;
	say("FAIL %s: %s (seed %llu)", t->name, msg,
	    (unsigned long long)fz_seed);
	say("  its last operations:");
	hist_dump(t->h, 8, 0);
}

static void stat_count(int which, int err)
{
	__atomic_add_fetch(&G->stat[which][err < NERR ? err : 0], 1,
			   __ATOMIC_RELAXED);
}

/* ---- the slot, flow and mapping tables ---- */

static void slot_snap(int s, struct fzslot *out)
{
	lk();
	*out = S.slot[s];
	ulk();
}

static unsigned int slot_gen(int s)
{
	return __atomic_load_n(&S.slot[s].gen, __ATOMIC_ACQUIRE);
}

/* A slot with an open fd (bound if @bound, when there is one), or any. */
static int pick_slot(struct thr *t, int bound)
{
	int i, s;

	for (i = 0; i < 12; i++) {
		s = below(t, NSLOTS);
		if (S.slot[s].fd >= 0 && (!bound || S.slot[s].dev >= 0))
			return s;
	}
	for (i = 0; i < 12; i++) {
		s = below(t, NSLOTS);
		if (S.slot[s].fd >= 0)
			return s;
	}
	return below(t, NSLOTS);
}

enum { W_ANY, W_LIVE, W_CONN };

static int flow_ok(const struct fzflow *f, int want)
{
	if (!f->used)
		return 0;
	if (want == W_ANY)
		return 1;
	if (f->destroyed || S.slot[f->slot].ctx != f->ctx)
		return 0;
	return want == W_LIVE || f->connected;
}

/* A copy of a flow record as wanted (or any used one); its index or -1. */
static int pick_flow(struct thr *t, struct fzflow *out, int want)
{
	int i, k, w;

	lk();
	for (w = want; w >= W_ANY; w--)
		for (k = 0; k < 16; k++) {
			i = below(t, NFLOWS);
			if (flow_ok(&S.flow[i], w)) {
				*out = S.flow[i];
				ulk();
				return i;
			}
		}
	ulk();
	return -1;
}

static void flow_destroyed(int fi, uint32_t id)
{
	lk();
	if (S.flow[fi].used && S.flow[fi].id == id)
		S.flow[fi].destroyed = 1;
	ulk();
}

static unsigned int map_gen(int mi)
{
	return __atomic_load_n(&S.map[mi].gen, __ATOMIC_ACQUIRE);
}

static void map_bump(int mi)
{
	__atomic_add_fetch(&S.map[mi].gen, 1, __ATOMIC_ACQ_REL);
}

/* A live mapping whose kind is in @kinds (bit mask); copy, index or -1. */
static int pick_map(struct thr *t, unsigned int kinds, struct fzmap *out)
{
	int i, k;

	lk();
	for (k = 0; k < 24; k++) {
		i = below(t, NMAPS);
		if (S.map[i].state == M_LIVE && (kinds >> S.map[i].kind & 1)) {
			*out = S.map[i];
			ulk();
			return i;
		}
	}
	ulk();
	return -1;
}

/* Take a live mapping for changing it (M_BUSY); index or -1. */
static int take_map(struct thr *t, struct fzmap *out)
{
	int i, k;

	lk();
	for (k = 0; k < 24; k++) {
		i = below(t, NMAPS);
		if (S.map[i].state == M_LIVE) {
			S.map[i].state = M_BUSY;
			map_bump(i);
			*out = S.map[i];
			ulk();
			return i;
		}
	}
	ulk();
	return -1;
}

static int take_free_map(struct thr *t)
{
	int i, k;

	lk();
	for (k = 0; k < 24; k++) {
		i = below(t, NMAPS);
		if (S.map[i].state == M_FREE) {
			S.map[i].state = M_BUSY;
			map_bump(i);
			ulk();
			return i;
		}
	}
	ulk();
	return -1;
}

static void map_set(int mi, int state)
{
	lk();
	S.map[mi].state = state;
	ulk();
}

static uint8_t *slot_addr(int mi)
{
	return S.arena + (size_t)mi * ARENA_SLOT;
}

/*
 * Run @fn(@arg), which touches arena memory, with a fault there jumping
 * back here: 1 if it faulted.  The caller decides whether the fault was
 * expected.  Whatever @fn computes goes through @arg, in memory, so the
 * jump clobbers nothing.
 */
static __attribute__((noinline)) int guarded(struct thr *t,
					     void (*fn)(void *), void *arg)
{
	if (sigsetjmp(t->jb, 1)) {
		t->guard = 0;
		return 1;
	}
	t->guard = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	fn(arg);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->guard = 0;
	return 0;
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	struct thr *t = cur;
	uintptr_t a = (uintptr_t)si->si_addr, base = (uintptr_t)S.arena;
	char b[400];
	int n;

	(void)uc;
	if (t && t->guard && a >= base && a < base + ARENA_LEN) {
		t->guard = 0;
		t->fault_addr = a;
		siglongjmp(t->jb, 1);
	}
	n = snprintf(b, sizeof(b),
		     "# FATAL: signal %d at %p in %s outside a guarded access; seed %llu; last: %.*s\n",
		     sig, si->si_addr, t ? t->name : "?",
		     (unsigned long long)fz_seed, HIST_LEN,
		     t ? t->h->e[(t->h->n - 1) % HIST_N] : "");
	if (write(1, b, n) < 0)
		n = 0;
	signal(sig, SIG_DFL);
}

/* ---- ioctls ---- */

enum { NR_BIND, NR_CREATE, NR_CONNECT, NR_DESTROY, NR_INFO, NR_RPOST,
       NR_RCOMPLETE, NR_SEND, NR_MODIFY, NR_QUERY, NR_RAIL, NR_GROUP,
       NR_MR_REG, NR_MR_DEREG, NR_KEX_CHECK, ST_MMAP, ST_UNKNOWN };

static const struct ioc {
	const char *name;
	unsigned long cmd;
	uint32_t v1;		/* the least size it takes */
	uint32_t cur;		/* the size of the struct this build knows */
	uint32_t flags;		/* the flags it knows */
	int errs[8];		/* its own errnos besides the common ones */
} iocs[] = {
	[NR_BIND] = { "BIND", SDR_IOC_BIND, SDR_BIND_SIZE_V1,
		      sizeof(struct sdr_bind), SDR_BIND_BY_GID,
		      { EBUSY, ENOMEM } },
	[NR_CREATE] = { "FLOW_CREATE", SDR_IOC_FLOW_CREATE,
			SDR_FLOW_CREATE_SIZE_V1, sizeof(struct sdr_flow_create),
			SDR_FLOW_CREATE_MR, { ENOSPC, ENOMEM, ENOKEY } },
	[NR_CONNECT] = { "FLOW_CONNECT", SDR_IOC_FLOW_CONNECT,
			 SDR_FLOW_CONNECT_SIZE_V1,
			 sizeof(struct sdr_flow_connect), 0,
			 { EISCONN, EHOSTUNREACH, EPROTO, EKEYREJECTED } },
	[NR_DESTROY] = { "FLOW_DESTROY", SDR_IOC_FLOW_DESTROY,
			 SDR_FLOW_DESTROY_SIZE_V1,
			 sizeof(struct sdr_flow_destroy), 0, { 0 } },
	[NR_INFO] = { "FLOW_INFO", SDR_IOC_FLOW_INFO, SDR_FLOW_INFO_SIZE_V1,
		      sizeof(struct sdr_flow_info), 0, { 0 } },
	[NR_RPOST] = { "RECV_POST", SDR_IOC_RECV_POST, SDR_RECV_POST_SIZE_V1,
		       sizeof(struct sdr_recv_post), SDR_RECV_GROUP | SDR_RECV_MR,
		       { ENOTCONN, EAGAIN, EPIPE } },
	[NR_RCOMPLETE] = { "RECV_COMPLETE", SDR_IOC_RECV_COMPLETE,
			   SDR_RECV_COMPLETE_SIZE_V1,
			   sizeof(struct sdr_recv_complete), 0, { ESTALE } },
	[NR_SEND] = { "SEND_POST", SDR_IOC_SEND_POST, SDR_SEND_POST_SIZE_V1,
		      sizeof(struct sdr_send_post),
		      SDR_SEND_USER_PTR | SDR_SEND_STREAM_START |
		      SDR_SEND_STREAM_CONT | SDR_SEND_STREAM_END |
		      SDR_SEND_GROUP | SDR_SEND_MR,
		      { ENOTCONN, EAGAIN, ESTALE, EBUSY, EPIPE, ENOMEM } },
	[NR_MODIFY] = { "FLOW_MODIFY", SDR_IOC_FLOW_MODIFY,
			SDR_FLOW_MODIFY_SIZE_V1, sizeof(struct sdr_flow_modify),
			SDR_FLOW_MODIFY_POLICY | SDR_FLOW_MODIFY_EC |
			SDR_FLOW_MODIFY_RATE, { 0 } },
	[NR_QUERY] = { "QUERY", SDR_IOC_QUERY, SDR_QUERY_SIZE_V1,
		       sizeof(struct sdr_query), 0, { 0 } },
	[NR_RAIL] = { "FLOW_RAIL", SDR_IOC_FLOW_RAIL, SDR_FLOW_RAIL_SIZE_V1,
		      sizeof(struct sdr_flow_rail), 0,
		      { EISCONN, ENOSPC, EHOSTUNREACH, ENOMEM } },
	[NR_GROUP] = { "GROUP", SDR_IOC_GROUP, SDR_GROUP_SIZE_V1,
		       sizeof(struct sdr_group), 0, { EAGAIN, ENOMEM } },
	[NR_MR_REG] = { "MR_REG", SDR_IOC_MR_REG, SDR_MR_REG_SIZE_V1,
			sizeof(struct sdr_mr_reg), 0, { ENOMEM, EMFILE } },
	[NR_MR_DEREG] = { "MR_DEREG", SDR_IOC_MR_DEREG, SDR_MR_DEREG_SIZE_V1,
			  sizeof(struct sdr_mr_dereg), 0, { EBUSY } },
	[NR_KEX_CHECK] = { "KEX_CHECK", SDR_IOC_KEX_CHECK,
			   SDR_KEX_CHECK_SIZE_V1, sizeof(struct sdr_kex_check),
			   0, { EKEYREJECTED, ENOKEY, EKEYREVOKED, EKEYEXPIRED,
				EACCES } },
};

static const char *const stat_name[NSTAT] = {
	"BIND", "FLOW_CREATE", "FLOW_CONNECT", "FLOW_DESTROY", "FLOW_INFO",
	"RECV_POST", "RECV_COMPLETE", "SEND_POST", "FLOW_MODIFY", "QUERY",
	"FLOW_RAIL", "GROUP", "MR_REG", "MR_DEREG", "KEX_CHECK", "mmap",
	"unknown ioctl",
};

/* The errors of every ioctl (uapi/sdr_uapi.h, top comment). */
static const int common_errs[] = {
	EFAULT, EINVAL, E2BIG, EOPNOTSUPP, ENOTTY, EBADFD, ENODEV, EIO, ENOENT,
};

static int errno_listed(int nr, int e)
{
	size_t i;

	for (i = 0; i < sizeof(common_errs) / sizeof(common_errs[0]); i++)
		if (e == common_errs[i])
			return 1;
	for (i = 0; i < 8 && iocs[nr].errs[i]; i++)
		if (e == iocs[nr].errs[i])
			return 1;
	return 0;
}

/* Where the argument goes. */
enum { PL_NORMAL, PL_END, PL_MISALIGNED, PL_RO, PL_ARENA, PL_NULL, PL_LOW,
       PL_KERNEL, PL_HOLE, PL_COUNT };
static const char *const pl_name[] = {
	"", " arg@page-end", " arg@misaligned", " arg@read-only",
	" arg@racing-mapping", " arg=NULL", " arg=low", " arg=kernel",
	" arg@hole",
};

struct argcopy {
	uint8_t *dst;
	const void *src;
	size_t len;
	uint32_t size, flags;
};

static void argcopy(void *p)
{
	struct argcopy *a = p;
	uint32_t hdr[2] = { a->size, a->flags };

	memcpy(a->dst, a->src, a->len);
	memcpy(a->dst, hdr, sizeof(hdr));
}

struct call {
	int ret, err;
	int clean;		/* argument as given: outputs are meaningful */
	int fd;
	unsigned int gen;
};

/*
 * Issue ioctl @nr on slot @s with the V1 struct @arg (size set), mutating
 * size, flags or placement with probability @mut percent, and judge the
 * answer.  @must_fail: the caller made the argument invalid.  On a clean
 * success the struct the kernel wrote back is copied into @arg.
 */
static struct call fz_ioctl(struct thr *t, int s, int nr, void *arg, int mut,
			    int must_fail, const char *fmt, ...)
{
	const struct ioc *io = &iocs[nr];
	uint32_t size = io->cur, flags, *hdr;
	int pl = PL_NORMAL, garbage = 0, exact_efault = 0, owned = 1;
	struct call c = { .clean = 1 };
	char what[120], how[40] = "";
	uint8_t *buf = t->argpg;
	struct argcopy ac;
	struct fzslot sl;
	struct fzmap m;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	slot_snap(s, &sl);
	c.fd = sl.fd;
	c.gen = sl.gen;
	memcpy(&flags, (uint8_t *)arg + 4, 4);
	if (must_fail)
		c.clean = 0;
	if (pct(t, mut)) {
		c.clean = 0;
		switch (below(t, 8)) {
		case 0:
			size = io->v1 - 1 - below(t, 8);
			must_fail = 1;
			break;
		case 1:
			size = below(t, 16);
			must_fail = 1;
			break;
		case 2:		/* a longer struct with a zero tail is fine */
			size = io->cur + 1 + below(t, 64);
			c.clean = 1;
			/* an older caller's, from version 1 on: fine too */
			if (io->cur > io->v1 && pct(t, 50))
				size = io->v1 + below(t, io->cur - io->v1);
			break;
		case 3:
			size = io->cur + 1 + below(t, 64);
			garbage = 1;
			must_fail = 1;
			break;
		case 4:
			size = PG;
			c.clean = 1;
			break;
		case 5:		/* zero up to the guard page, then a fault */
			size = pct(t, 50) ? 0xffffffffU : PG + 1 + below(t, PG);
			must_fail = 1;
			break;
		case 6:
			flags |= ~io->flags & (pct(t, 80) ? 1U << below(t, 32) :
					       (uint32_t)rnd(t));
			if (flags & ~io->flags)
				must_fail = 1;
			else
				c.clean = 1;
			break;
		default:
			pl = 1 + below(t, PL_COUNT - 1);
			break;
		}
	}
	switch (pl) {
	case PL_END:
		buf = t->argpg + PG - io->cur;
		break;
	case PL_MISALIGNED:
		buf = t->argpg + 1 + below(t, 7);
		break;
	case PL_RO:
		buf = t->ropg;
		mprotect(t->ropg, PG, PROT_READ | PROT_WRITE);
		c.clean = 0;
		break;
	case PL_ARENA:
		owned = 0;
		c.clean = 0;
		if (pick_map(t, 1 << K_ANON, &m) < 0 || !(m.prot & PROT_WRITE) ||
		    m.len < io->cur + 64) {
			pl = PL_NORMAL;
			owned = 1;
			break;
		}
		buf = m.addr + (below(t, (uint32_t)(m.len - io->cur)) & ~7U);
		ac = (struct argcopy) { buf, arg, io->cur, size, flags };
		if (guarded(t, argcopy, &ac)) {
			__atomic_add_fetch(&G->faults, 1, __ATOMIC_RELAXED);
			pl = PL_NORMAL;
			buf = t->argpg;
			owned = 1;
		}
		break;
	case PL_NULL:
		buf = NULL;
		break;
	case PL_LOW:
		buf = (uint8_t *)(uintptr_t)(1 + below(t, 65535));
		break;
	case PL_KERNEL:
		buf = (uint8_t *)(uintptr_t)KERNEL_PTR;
		break;
	case PL_HOLE:
		owned = 0;
		c.clean = 0;
		buf = S.arena + ARENA_LEN - PG;		/* never mapped */
		break;
	}
	if (pl >= PL_NULL) {
		owned = 0;
		must_fail = 1;
		exact_efault = pl != PL_HOLE;
		c.clean = 0;
	}
	if (owned) {
		size_t room = (size_t)(t->argpg + PG - buf);

		if (pl == PL_RO)
			room = PG;
		memset(buf, 0, room);
		memcpy(buf, arg, io->cur);
		hdr = (uint32_t *)buf;
		hdr[0] = size;
		hdr[1] = flags;
		if (garbage)
			buf[io->cur + below(t, size - io->cur)] = 1 + below(t, 255);
		if (pl == PL_RO)
			mprotect(t->ropg, PG, PROT_READ);
		if (pl == PL_END && size > io->cur)
			must_fail = 1;
	}
	if (pl)
		snprintf(how, sizeof(how), "%s", pl_name[pl]);
	if (garbage)
		snprintf(how + strlen(how), sizeof(how) - strlen(how),
			 " garbage-tail");

	hist_op(t, "%s fd=%d %s size=%u flags=%#x%s", io->name, c.fd, what,
		size, flags, how);
	errno = 0;
	c.ret = ioctl(c.fd, io->cmd, buf);
	c.err = c.ret ? errno : 0;
	hist_ret(t, c.ret, c.err);
	stat_count(nr, c.err);
	if (!c.ret && c.clean && owned && pl != PL_RO)
		memcpy(arg, buf, io->cur);
	/* an older caller's struct: what it does not have is not judged */
	if (c.ret || size < io->cur)
		c.clean = 0;

	if (slot_gen(s) != c.gen)
		return c;	/* the fd changed under us: not judged */
	if (c.fd < 0) {
		if (c.ret != -1 || c.err != EBADF)
			fz_fail(t, "%s on fd -1 returned %s", io->name,
				ename(c.err));
		return c;
	}
	if (!c.ret && must_fail)
		fz_fail(t, "%s %s%s (size %u, flags %#x) succeeded", io->name,
			what, how, size, flags);
	else if (c.ret && !errno_listed(nr, c.err))
		fz_fail(t, "%s %s%s returned %s (%d), which uapi/sdr_uapi.h does not list for it",
			io->name, what, how, ename(c.err), c.err);
	else if (c.ret && exact_efault && c.err != EFAULT)
		fz_fail(t, "%s with an unreadable argument%s returned %s, not EFAULT",
			io->name, how, ename(c.err));
	return c;
}

/* ---- argument values ---- */

static const char *dev_name(struct thr *t, int *dev)
{
	static const char *const bad[] = { "", "rxe", "rxe01", "lo", "rxe0 ",
					   "../rxe0", "rxe1\n" };

	*dev = below(t, 10);
	if (*dev < 9) {
		*dev &= 1;
		return S.dev[*dev];
	}
	*dev = -1;
	return bad[below(t, sizeof(bad) / sizeof(bad[0]))];
}

static uint32_t pick_policy(struct thr *t)
{
	uint32_t r = below(t, 100);

	if (r < 88)
		return r % 3;
	if (r < 93)
		return SDR_POLICY_DEFAULT;
	if (r < 97)
		return SDR_POLICY_ADAPTIVE;
	return pct(t, 50) ? 4 : (uint32_t)rnd(t);
}

static uint32_t payload_of(uint32_t mtu)
{
	return mtu - 40;
}

/* Flow attributes: valid and small most of the time. */
static void pick_attrs(struct thr *t, struct sdr_flow_create *c, uint32_t port_mtu,
		       int sane)
{
	static const uint32_t sizes[] = { 1, 100, 1000, 4096, 4097, 9000,
					  65536, 200000, 262144 };
	static const uint32_t counts[] = { 1, 2, 3, 4, 8, 16 };
	static const uint32_t mtus[] = { 256, 512, 1024, 2048, 4096 };
	uint32_t mms = sizes[below(t, sizeof(sizes) / sizeof(sizes[0]))];
	uint32_t nm = counts[below(t, sizeof(counts) / sizeof(counts[0]))];
	uint32_t mtu;

	while ((uint64_t)((mms + PG - 1) & ~(PG - 1)) * nm > MAX_REGION)
		nm /= 2;
	if (!nm)
		nm = 1;
	flow_create_arg(c, pick_policy(t), mms, nm);
	/* authentication: off (flow_create_arg's), the default or vmac64 */
	if (pct(t, 50))
		c->auth = pct(t, 50) ? SDR_AUTH_DEFAULT : SDR_AUTH_VMAC64;
	if (sane) {
		if (c->policy >= SDR_POLICY_NR && c->policy != SDR_POLICY_DEFAULT)
			c->policy = SDR_POLICY_SR;
		return;
	}
	if (pct(t, 20))
		c->mtu = mtus[below(t, 5)];
	else if (pct(t, 3))
		c->mtu = pct(t, 50) ? 300 : 8192;
	mtu = c->mtu ? c->mtu : port_mtu;
	if (mtu >= 256 && mtu <= 4096 && pct(t, 20))
		c->chunk_size = payload_of(mtu) * (1 + below(t, pct(t, 80) ? 16 : 1024));
	else if (pct(t, 4))
		c->chunk_size = pct(t, 50) ? payload_of(mtu) + 1 : (uint32_t)rnd(t);
	if (pct(t, 10))
		c->flags = pct(t, 90) ? SDR_FLOW_CREATE_MR : (uint32_t)rnd(t);
	if (pct(t, 3)) {
		switch (below(t, 6)) {
		case 0: c->max_msg_size = 0; break;
		case 1: c->max_msg_size = (1U << 30) + 1; break;
		case 2: c->max_msg_size = 0xffffffffU; break;
		/* past max_region_mb: refused before anything is allocated */
		case 3: c->max_msg_size = 1U << 30; c->max_msgs = 1; break;
		case 4: c->max_msgs = pct(t, 50) ? 0 : 1025; break;
		default: c->max_msg_size = 4096; c->max_msgs = 1024; break;
		}
	}
	if (pct(t, 2))
		c->auth = SDR_AUTH_NR + below(t, 300);	/* EINVAL */
	/* EC geometry: 0 (the defaults), in range, or past it (EINVAL) */
	if (pct(t, 20)) {
		c->ec_k = pct(t, 90) ? below(t, 65) : 65 + below(t, 1000);
		c->ec_m = pct(t, 90) ? below(t, 33) : 33 + below(t, 1000);
	}
}

/* A user pointer for @len bytes, described in @d. */
static uint64_t user_ptr(struct thr *t, uint64_t len, char *d, size_t dl)
{
	struct fzmap m;
	uint64_t n = len > UBUF_LEN ? UBUF_LEN : len;

	switch (below(t, 14)) {
	case 0:
		snprintf(d, dl, "NULL");
		return 0;
	case 1:
		snprintf(d, dl, "low");
		return 1 + below(t, 65535);
	case 2:
		snprintf(d, dl, "kernel");
		return KERNEL_PTR;
	case 3:
		snprintf(d, dl, "misaligned");
		return (uintptr_t)t->ubuf + 1 + below(t, 7);
	case 4:
		snprintf(d, dl, "into-guard");
		return (uintptr_t)t->argpg + PG - (n > 2 * PG ? PG : n / 2);
	case 5:
		snprintf(d, dl, "read-only");
		return (uintptr_t)t->ropg;
	case 6:
	case 7:
	case 8:
		if (pick_map(t, ~0U, &m) >= 0) {
			snprintf(d, dl, "%s-mapping", kind_name[m.kind]);
			return (uintptr_t)m.addr +
			       (m.len > n ? below(t, (uint32_t)(m.len - n)) : 0);
		}
		/* fall through */
	default:
		snprintf(d, dl, "buffer");
		return (uintptr_t)t->ubuf + below(t, (uint32_t)(UBUF_LEN - n + 1));
	}
}

/* ---- context operations ---- */

static void flows_of_ctx_gone(int ctx)
{
	int i;

	for (i = 0; i < NSLOTS; i++)
		if (S.slot[i].fd >= 0 && S.slot[i].ctx == ctx)
			return;
	for (i = 0; i < NFLOWS; i++)
		if (S.flow[i].used && S.flow[i].ctx == ctx)
			S.flow[i].connected = 0;
}

static void op_open(struct thr *t)
{
	int s = below(t, NSLOTS), fd, err;

	lk();
	if (S.slot[s].fd >= 0 || S.slot[s].busy) {
		ulk();
		return;
	}
	S.slot[s].busy = 1;
	ulk();
	hist_op(t, "open /dev/sdr (slot %d)", s);
	fd = open("/dev/sdr", O_RDWR | O_CLOEXEC | (pct(t, 20) ? O_NONBLOCK : 0));
	err = errno;
	hist_ret(t, fd, err);
	lk();
	if (fd >= 0) {
		S.slot[s].fd = fd;
		S.slot[s].gen++;
		S.slot[s].ctx = ++S.next_ctx;
		S.slot[s].dev = -1;
	}
	S.slot[s].busy = 0;
	ulk();
	if (fd < 0 && err != ENOMEM && err != EMFILE)
		fz_fail(t, "open /dev/sdr: %s", ename(err));
}

static void op_close(struct thr *t)
{
	int s = below(t, NSLOTS), fd, ctx, ret, err;

	lk();
	if (S.slot[s].fd < 0 || S.slot[s].busy) {
		ulk();
		return;
	}
	fd = S.slot[s].fd;
	ctx = S.slot[s].ctx;
	S.slot[s].fd = -1;
	__atomic_add_fetch(&S.slot[s].gen, 1, __ATOMIC_RELEASE);
	S.slot[s].dev = -1;
	ulk();
	hist_op(t, "close fd=%d (slot %d)", fd, s);
	ret = close(fd);
	err = errno;
	hist_ret(t, ret, err);
	if (ret)
		fz_fail(t, "close of an sdr fd: %s", ename(err));
	lk();
	flows_of_ctx_gone(ctx);
	ulk();
}

/* dup into a closed slot, or dup3 over an open one (which closes it). */
static void op_dup(struct thr *t)
{
	int a = below(t, NSLOTS), b = below(t, NSLOTS), afd, bfd, nfd, err;
	int octx = -1;

	lk();
	if (a == b || S.slot[a].fd < 0 || S.slot[a].busy || S.slot[b].busy) {
		ulk();
		return;
	}
	S.slot[a].busy = S.slot[b].busy = 1;
	afd = S.slot[a].fd;
	bfd = S.slot[b].fd;
	if (bfd >= 0) {
		octx = S.slot[b].ctx;
		S.slot[b].fd = -1;
		__atomic_add_fetch(&S.slot[b].gen, 1, __ATOMIC_RELEASE);
	}
	ulk();
	if (bfd < 0) {
		hist_op(t, "dup fd=%d (slot %d to %d)", afd, a, b);
		nfd = fcntl(afd, F_DUPFD_CLOEXEC, 0);
	} else {
		hist_op(t, "dup3 fd=%d over fd=%d (slot %d over %d)", afd, bfd, a, b);
		nfd = dup3(afd, bfd, O_CLOEXEC);
	}
	err = errno;
	hist_ret(t, nfd, err);
	lk();
	if (nfd >= 0) {
		S.slot[b].fd = nfd;
		__atomic_add_fetch(&S.slot[b].gen, 1, __ATOMIC_RELEASE);
		S.slot[b].ctx = S.slot[a].ctx;
		S.slot[b].dev = S.slot[a].dev;
		S.slot[b].b = S.slot[a].b;
	} else if (bfd >= 0) {
		/* dup3 failed: bfd is still open and still its old file */
		S.slot[b].fd = bfd;
		octx = -1;
	}
	if (octx >= 0)
		flows_of_ctx_gone(octx);
	S.slot[a].busy = S.slot[b].busy = 0;
	ulk();
	if (nfd < 0 && err != EMFILE)
		fz_fail(t, "dup of an sdr fd: %s", ename(err));
}

static void map_ring(struct thr *t, int s);

static void op_bind(struct thr *t)
{
	static const uint32_t cqs[] = { 0, 0, 0, 64, 128, 256, 1024, 4096,
					65536, 32, 100, 131072 };
	struct sdr_bind b;
	struct call c;
	int s = pick_slot(t, 0), dev, must_fail = 0;
	const char *name = dev_name(t, &dev);

	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	snprintf((char *)b.ibdev, sizeof(b.ibdev), "%s", name);
	if (pct(t, 3))
		memset(b.ibdev, 'r', sizeof(b.ibdev));	/* no NUL */
	if (pct(t, 20)) {
		b.flags = SDR_BIND_BY_GID;
		if (dev >= 0 && S.have_gid[dev])
			memcpy(b.gid, S.gid[dev], SDR_GID_LEN);
		else
			random_fill(b.gid, SDR_GID_LEN, rnd(t));
	}
	if (pct(t, 10))
		b.port = pct(t, 50) ? 1 : (uint32_t)rnd(t);
	b.cq_entries = cqs[below(t, sizeof(cqs) / sizeof(cqs[0]))];
	if (pct(t, 3)) {
		b.__reserved = 1;
		must_fail = 1;
	}
	c = fz_ioctl(t, s, NR_BIND, &b, 15, must_fail, "dev=%.12s%s cq=%u",
		     b.ibdev[SDR_DEVNAME_LEN - 1] ? "unterminated" : (char *)b.ibdev,
		     b.flags ? " by-gid" : "", b.cq_entries);
	if (!c.clean)
		return;
	lk();
	if (S.slot[s].gen == c.gen) {
		dev = !strcmp((char *)b.ibdev, S.dev[1]);
		S.slot[s].dev = dev;
		S.slot[s].b = b;
		if (!S.have_gid[dev]) {
			memcpy(S.gid[dev], b.gid, SDR_GID_LEN);
			S.have_gid[dev] = 1;
		}
	}
	ulk();
	if (pct(t, 70))
		map_ring(t, s);
}

/* ---- mappings ---- */

static int map_errno_ok(int e, int prot)
{
	return e == EINVAL || e == EACCES || e == EBADFD || e == ENODEV ||
	       e == ENOMEM || e == EOVERFLOW || (e == EPERM && (prot & PROT_EXEC));
}

static const char *prot_str(int prot)
{
	static const char *const p[] = { "---", "r--", "-w-", "rw-",
					 "--x", "r-x", "-wx", "rwx" };

	return p[prot & 7];
}

/*
 * mmap @len bytes at @off of slot @s into a free arena slot (or anywhere
 * if it cannot fit); @bad says why it must fail, or NULL.
 */
static int map_new(struct thr *t, int s, uint64_t off, size_t len, int prot,
		   int flags, const struct fzmap *geo, const char *bad)
{
	struct fzslot sl;
	int mi = -1, err;
	uint8_t *p, *at = NULL;

	slot_snap(s, &sl);
	if (len && len <= ARENA_SLOT) {
		mi = take_free_map(t);
		if (mi < 0)
			return -1;
		at = slot_addr(mi);
	}
	hist_op(t, "mmap fd=%d %s off=%#llx len=%#zx %s%s -> map %d", sl.fd,
		kind_name[geo->kind], (unsigned long long)off, len, prot_str(prot),
		flags & MAP_PRIVATE ? " private" : "", mi);
	p = mmap(at, len, prot, flags | (at ? MAP_FIXED : 0), sl.fd, (off_t)off);
	err = errno;
	hist_ret(t, p == MAP_FAILED ? -1 : 0, err);
	stat_count(ST_MMAP, p == MAP_FAILED ? err : 0);
	if (p == MAP_FAILED) {
		if (mi >= 0)
			map_set(mi, M_FREE);	/* a hole now, or PROT_NONE */
		if (slot_gen(s) == sl.gen && sl.fd >= 0 && !map_errno_ok(err, prot))
			fz_fail(t, "mmap of %s returned %s", kind_name[geo->kind],
				ename(err));
		return -1;
	}
	if (bad && slot_gen(s) == sl.gen)
		fz_fail(t, "mmap %s %s len %#zx %s succeeded", kind_name[geo->kind],
			bad, len, prot_str(prot));
	if (mi < 0) {
		munmap(p, len);
		return -1;
	}
	lk();
	S.map[mi] = *geo;
	S.map[mi].gen = map_gen(mi) + 1;
	S.map[mi].state = M_LIVE;
	S.map[mi].addr = p;
	S.map[mi].len = len;
	S.map[mi].off0 = 0;
	S.map[mi].prot = prot;
	S.map[mi].flags = flags;
	S.map[mi].holey = 0;
	S.map[mi].slot = s;
	S.map[mi].ctx = sl.ctx;
	ulk();
	return mi;
}

static void geo_of_flow(struct fzmap *g, const struct fzflow *f, int kind)
{
	memset(g, 0, sizeof(*g));
	g->kind = kind;
	g->flow_id = f->id;
	g->max_msgs = f->c.max_msgs;
	g->slot_stride = f->c.slot_stride;
	g->state_stride = f->c.state_stride;
}

static void map_ring(struct thr *t, int s)
{
	struct fzslot sl;
	struct fzmap g;

	slot_snap(s, &sl);
	if (sl.dev < 0)
		return;
	memset(&g, 0, sizeof(g));
	g.kind = K_RING;
	g.ro = sl.b.ring;
	g.cq_entries = sl.b.cq_entries;
	map_new(t, s, sl.b.ring_offset, sl.b.ring_size, PROT_READ | PROT_WRITE,
		MAP_SHARED, &g, NULL);
}

static void map_flow(struct thr *t, const struct fzflow *f, int kind)
{
	struct fzmap g;
	uint64_t off = kind == K_RECV ? f->c.recv_offset :
		       kind == K_SEND ? f->c.send_offset : f->c.state_offset;
	size_t len = kind == K_RECV ? f->c.recv_size :
		     kind == K_SEND ? f->c.send_size : f->c.state_size;

	geo_of_flow(&g, f, kind);
	map_new(t, f->slot, off, len,
		kind == K_SEND ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
		&g, NULL);
}

static void op_mmap(struct thr *t)
{
	struct fzslot sl;
	struct fzflow f;
	struct fzmap g;
	uint64_t off;
	size_t right, len;
	const char *bad = NULL;
	int s, ro, prot, flags = pct(t, 15) ? MAP_PRIVATE : MAP_SHARED;
	int unknown = 0;

	if (pct(t, 25)) {
		s = pick_slot(t, 1);
		slot_snap(s, &sl);
		memset(&g, 0, sizeof(g));
		g.kind = K_RING;
		g.ro = sl.b.ring;
		g.cq_entries = sl.b.cq_entries;
		off = 0;
		right = sl.dev >= 0 ? sl.b.ring_size : PG;
		/* dup'ed slots may not know their context got bound */
		unknown = sl.dev < 0;
	} else {
		if (pick_flow(t, &f, W_LIVE) < 0)
			return;
		s = pct(t, 85) ? f.slot : pick_slot(t, 0);
		slot_snap(s, &sl);
		geo_of_flow(&g, &f, K_RECV + below(t, 3));
		off = g.kind == K_RECV ? f.c.recv_offset :
		      g.kind == K_SEND ? f.c.send_offset : f.c.state_offset;
		right = g.kind == K_RECV ? f.c.recv_size :
			g.kind == K_SEND ? f.c.send_size : f.c.state_size;
		if (f.destroyed && sl.ctx == f.ctx)
			bad = "of a destroyed flow";
		else if (sl.ctx >= 0 && f.ctx >= 0 && sl.ctx != f.ctx &&
			 sl.dev == f.dev)
			bad = "of another context's flow";
	}
	len = right;
	switch (below(t, 12)) {
	case 0:
		len = right + PG;
		bad = "too long";
		break;
	case 1:
		if (right > PG) {
			len = right - PG;
			bad = "too short";
		}
		break;
	case 2:
		off += PG;
		bad = "at an offset that is no cookie";
		break;
	case 3:
		off = (uint64_t)(1 + below(t, 0xffffff)) << 40 |
		      (uint64_t)below(t, 16) << 36;
		break;
	case 4:
		len = pct(t, 50) ? 1ULL << 40 : 0;
		bad = "of a huge or empty length";
		break;
	case 5:
		off |= 1ULL << (12 + below(t, 24));
		bad = "at an offset that is no cookie";
		break;
	default:
		break;
	}
	ro = g.kind == K_RECV || g.kind == K_STATE;
	switch (below(t, 20)) {
	case 0:
		prot = PROT_NONE;
		break;
	case 1:
		prot = PROT_READ | PROT_EXEC;
		break;
	case 2:
		prot = PROT_WRITE;
		break;
	case 3:
	case 4:
		prot = ro ? PROT_READ | PROT_WRITE : PROT_READ;
		break;
	default:
		prot = ro ? PROT_READ : PROT_READ | PROT_WRITE;
		break;
	}
	if (ro && (prot & PROT_WRITE) && !bad)
		bad = "writable, of a read-only area";
	map_new(t, s, off, len, prot, flags, &g, unknown ? NULL : bad);
}

static void op_anon(struct thr *t)
{
	struct fzmap g;
	size_t len;
	int mi, prot, file = pct(t, 20) && S.file_fd >= 0, err;
	uint8_t *p;

	mi = take_free_map(t);
	if (mi < 0)
		return;
	memset(&g, 0, sizeof(g));
	g.kind = file ? K_FILE : K_ANON;
	len = pct(t, 70) ? (1 + below(t, 16)) * PG : UBUF_LEN;
	if (file && len > S.file_len)
		len = S.file_len;
	prot = file || pct(t, 15) ? PROT_READ : PROT_READ | PROT_WRITE;
	hist_op(t, "mmap %s len=%#zx %s -> map %d", kind_name[g.kind], len,
		prot_str(prot), mi);
	p = mmap(slot_addr(mi), len, prot, MAP_PRIVATE | MAP_FIXED |
		 (file ? 0 : MAP_ANONYMOUS), file ? S.file_fd : -1, 0);
	err = errno;
	hist_ret(t, p == MAP_FAILED ? -1 : 0, err);
	if (p == MAP_FAILED) {
		map_set(mi, M_FREE);
		return;
	}
	if (!file && (prot & PROT_WRITE))
		memset(p, 0, len);
	lk();
	S.map[mi] = g;
	S.map[mi].gen = map_gen(mi) + 1;
	S.map[mi].state = M_LIVE;
	S.map[mi].addr = p;
	S.map[mi].len = len;
	S.map[mi].prot = prot;
	S.map[mi].flags = MAP_PRIVATE;
	S.map[mi].slot = -1;
	S.map[mi].ctx = -1;
	ulk();
}

static void op_unmap(struct thr *t)
{
	struct fzmap m;
	int mi = take_map(t, &m), ret, err, mode;
	uint8_t *a = NULL;
	size_t l = 0;

	if (mi < 0)
		return;
	mode = below(t, m.len > 2 * PG ? 5 : 2);
	switch (mode) {
	case 0:		/* all of it: a hole in the arena */
	case 1:		/* replaced by PROT_NONE: no hole */
		a = m.addr;
		l = m.len;
		break;
	case 2:		/* the first page */
		a = m.addr;
		l = PG;
		break;
	case 3:		/* the last page */
		a = m.addr + m.len - PG;
		l = PG;
		break;
	default:	/* a page in the middle */
		a = m.addr + PG * (1 + below(t, (uint32_t)(m.len / PG - 2)));
		l = PG;
		break;
	}
	hist_op(t, "%s map %d (%s) +%#zx len=%#zx", mode == 1 ? "PROT_NONE over" :
		"munmap", mi, kind_name[m.kind], (size_t)(a - m.addr), l);
	if (mode == 1)
		ret = mmap(a, l, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			   MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED ? -1 : 0;
	else
		ret = munmap(a, l);
	err = errno;
	hist_ret(t, ret, err);
	if (ret)
		fz_fail(t, "munmap of a %s mapping: %s", kind_name[m.kind],
			ename(err));
	lk();
	switch (mode) {
	case 2:
		S.map[mi].addr += PG;
		S.map[mi].off0 += PG;
		S.map[mi].len -= PG;
		break;
	case 3:
		S.map[mi].len -= PG;
		break;
	case 4:
		S.map[mi].holey = 1;
		break;
	}
	S.map[mi].state = mode < 2 ? M_FREE : M_LIVE;
	map_bump(mi);
	ulk();
}

static void op_mprotect(struct thr *t)
{
	static const int prots[] = { PROT_NONE, PROT_READ, PROT_WRITE,
				     PROT_READ | PROT_WRITE, PROT_READ | PROT_EXEC };
	struct fzmap m;
	int mi = take_map(t, &m), prot, ret, err, ro;

	if (mi < 0)
		return;
	prot = prots[below(t, 5)];
	ro = m.kind == K_RECV || m.kind == K_STATE || m.kind == K_FILE;
	hist_op(t, "mprotect map %d (%s) %s", mi, kind_name[m.kind], prot_str(prot));
	ret = mprotect(m.addr, m.len, prot);
	err = errno;
	hist_ret(t, ret, err);
	if (!m.holey && m.kind != K_FILE) {
		if (!ret && ro && (prot & PROT_WRITE) && (m.flags & MAP_SHARED))
			fz_fail(t, "mprotect made a read-only %s mapping writable",
				kind_name[m.kind]);
		else if (!ret && ro && (prot & PROT_WRITE))
			fz_fail(t, "mprotect made a private read-only %s mapping writable",
				kind_name[m.kind]);
		else if (ret && !(err == EACCES &&
				  ((ro && (prot & PROT_WRITE)) || (prot & PROT_EXEC))))
			fz_fail(t, "mprotect %s of a %s mapping: %s",
				prot_str(prot), kind_name[m.kind], ename(err));
	}
	lk();
	if (!ret)
		S.map[mi].prot = prot;
	S.map[mi].state = M_LIVE;
	map_bump(mi);
	ulk();
}

static void op_mremap(struct thr *t)
{
	struct fzmap m;
	int mi, to, mode, err, sdr;
	size_t nl;
	uint8_t *p;

	mi = take_map(t, &m);
	if (mi < 0)
		return;
	to = take_free_map(t);
	if (to < 0) {
		map_set(mi, M_LIVE);
		return;
	}
	sdr = m.kind <= K_STATE;
	mode = below(t, 4);
	switch (mode) {
	case 0:
		nl = m.len;
		break;
	case 1:
		nl = m.len + PG * (1 + below(t, 4));
		break;
	case 2:
		nl = m.len > PG ? m.len - PG : m.len;
		break;
	default:	/* grow in place: only sdr mappings, which must refuse */
		nl = m.len + PG;
		if (!sdr)
			nl = m.len > PG ? m.len - PG : m.len;
		break;
	}
	if (nl > ARENA_SLOT)
		nl = m.len;
	hist_op(t, "mremap map %d (%s) len=%#zx -> %#zx%s", mi, kind_name[m.kind],
		m.len, nl, mode < 3 ? " moving" : " in place");
	if (mode < 3)
		p = mremap(m.addr, m.len, nl, MREMAP_MAYMOVE | MREMAP_FIXED,
			   slot_addr(to));
	else
		p = mremap(m.addr, m.len, nl, 0);
	err = errno;
	hist_ret(t, p == MAP_FAILED ? -1 : 0, err);
	if (p != MAP_FAILED && sdr && nl > m.len && !m.holey)
		fz_fail(t, "mremap grew a %s mapping from %#zx to %#zx",
			kind_name[m.kind], m.len, nl);
	if (p == MAP_FAILED && !(err == EFAULT || err == EINVAL || err == ENOMEM))
		fz_fail(t, "mremap of a %s mapping: %s", kind_name[m.kind],
			ename(err));
	lk();
	if (p != MAP_FAILED && mode < 3) {
		unsigned int g = map_gen(to) + 1;

		S.map[to] = S.map[mi];
		S.map[to].gen = g;
		S.map[to].addr = p;
		S.map[to].len = nl;
		/* past the end of the file: SIGBUS there */
		if (m.kind == K_FILE && nl > m.len)
			S.map[to].holey = 1;
		S.map[to].state = M_LIVE;
		S.map[mi].state = M_FREE;
	} else {
		if (p != MAP_FAILED)
			S.map[mi].len = nl;
		S.map[mi].state = M_LIVE;
		S.map[to].state = M_FREE;
	}
	map_bump(mi);
	map_bump(to);
	ulk();
}

/* Is a completion entry one the kernel could have written? */
static const char *cqe_bad(const struct sdr_cqe *e)
{
	if (e->type < SDR_CQE_SEND || e->type > SDR_CQE_GROUP)
		return "type";
	if (e->status > SDR_STATUS_TOOBIG)
		return "status";
	if (e->status == SDR_STATUS_TOOBIG && e->type != SDR_CQE_RECV)
		return "TOOBIG of no receive";
	if (e->__reserved)
		return "__reserved";
	/* a group's: no flow, a group id, no more members failed than it has */
	if (e->type == SDR_CQE_GROUP)
		return e->flow_id ? "flow_id of a group" : !e->seq ? "group 0" :
		       e->imm > e->slot ? "imm of a group" :
		       e->len ? "len of a group" : NULL;
	if (!e->flow_id || e->flow_id > 0xffffff)
		return "flow_id";
	if (e->type == SDR_CQE_SEND && e->slot)
		return "slot of a send";
	return NULL;
}

static const char *state_bad(const struct sdr_recv_state *st)
{
	int i;

	if (st->state > SDR_RECV_DONE)
		return "state";
	if (st->flags & ~SDR_RECV_F_STARTED)
		return "flags";
	if (st->status > SDR_STATUS_TOOBIG)
		return "status";
	for (i = 0; i < (int)(sizeof(st->__reserved) /
			      sizeof(st->__reserved[0])); i++)
		if (st->__reserved[i])
			return "__reserved";
	return NULL;
}

/*
 * After a guarded access to @m: was a fault (or its absence) what the
 * mapping's protection and the other threads explain?
 */
static void judge_access(struct thr *t, int mi, const struct fzmap *m,
			 int faulted, int write)
{
	int allowed = write ? (m->prot & PROT_WRITE) : (m->prot != PROT_NONE);
	int changed = map_gen(mi) != m->gen || m->holey;

	if (faulted)
		__atomic_add_fetch(&G->faults, 1, __ATOMIC_RELAXED);
	if (changed)
		return;
	if (faulted && allowed)
		fz_fail(t, "%s %s mapping (map %d, flow %#x) at +%#zx faulted: it should stay usable until munmap",
			write ? "writing the" : "reading the", kind_name[m->kind],
			mi, m->flow_id,
			(size_t)(t->fault_addr - (uintptr_t)m->addr));
	else if (!faulted && !allowed && m->kind != K_FILE)
		fz_fail(t, "%s a %s %s mapping did not fault",
			write ? "writing" : "reading", prot_str(m->prot),
			kind_name[m->kind]);
}

struct touch {
	const struct fzmap *m;
	size_t off, len;
	int write;
	uint32_t where;
	const char *bad;
	uint64_t sum;
};

static void touch(void *p)
{
	struct touch *a = p;
	const struct fzmap *m = a->m;
	volatile uint8_t *b = m->addr;
	uint32_t i, n;

	if (a->write) {
		for (i = 0; i < a->len; i += 512)
			b[a->off + i] = (uint8_t)i;
	} else if (m->kind == K_STATE && !m->off0 && m->state_stride) {
		n = m->max_msgs;
		if ((size_t)n * m->state_stride > m->len)
			n = (uint32_t)(m->len / m->state_stride);
		for (i = 0; i < n && !a->bad; i++) {
			struct sdr_recv_state st;

			memcpy(&st, (const void *)(b + (size_t)i * m->state_stride),
			       sizeof(st));
			a->bad = state_bad(&st);
			a->where = i;
		}
	} else {
		for (i = 0; i < a->len; i += 256)
			a->sum += b[a->off + i];
	}
}

static void op_touch(struct thr *t)
{
	struct fzmap m;
	struct touch a = { .m = &m };
	int mi = pick_map(t, ~0U, &m), faulted;

	if (mi < 0)
		return;
	a.write = (m.kind == K_SEND || m.kind == K_ANON) ? pct(t, 60) :
		  pct(t, 5);
	if (m.kind == K_RING)
		a.write = 0;	/* op_drain writes the ring */
	a.off = below(t, (uint32_t)m.len);
	a.len = m.len - a.off < 64 * PG ? m.len - a.off : 64 * PG;
	hist_op(t, "%s map %d (%s %s flow %#x) +%#zx len=%#zx",
		a.write ? "write" : "read", mi, kind_name[m.kind],
		prot_str(m.prot), m.flow_id, a.off, a.len);
	faulted = guarded(t, touch, &a);
	hist_ret(t, faulted ? -1 : (long)a.sum, EFAULT);
	judge_access(t, mi, &m, faulted, a.write);
	if (!faulted && a.bad && map_gen(mi) == m.gen)
		fz_fail(t, "receive slot %u of flow %#x: %s out of range",
			a.where, m.flow_id, a.bad);
}

struct drain {
	const struct fzmap *m;
	int garbage;
	uint64_t junk;
	uint32_t t1, t2, h;
	const char *bad;
	struct sdr_cqe e;
	int ngot;
	struct { uint32_t flow, slot, seq; } got[16];
	long seen[4][4];
};

static void drain(void *p)
{
	struct drain *a = p;
	const struct fzmap *m = a->m;
	volatile uint32_t *head = (volatile uint32_t *)(m->addr + m->ro.head);
	volatile uint32_t *tail = (volatile uint32_t *)(m->addr + m->ro.tail);
	const struct sdr_cqe *cqes = (const void *)(m->addr + m->ro.cqes);
	uint32_t mask = m->cq_entries - 1, i;
	struct sdr_cqe e;

	a->t1 = __atomic_load_n(tail, __ATOMIC_ACQUIRE);
	a->h = *head;
	for (i = a->t1 > 8 ? a->t1 - 8 : 0; i < a->t1 && !a->bad; i++) {
		memcpy(&a->e, (const void *)&cqes[i & mask], sizeof(a->e));
		a->bad = cqe_bad(&a->e);
	}
	a->t2 = __atomic_load_n(tail, __ATOMIC_ACQUIRE);
	if (a->t1 - a->h <= m->cq_entries) {
		for (i = a->h; i != a->t1; i++) {
			memcpy(&e, (const void *)&cqes[i & mask], sizeof(e));
			if (e.type <= SDR_CQE_GROUP && e.status <= SDR_STATUS_FLUSHED)
				a->seen[e.type][e.status]++;
			if (e.type == SDR_CQE_RECV && a->ngot < 16) {
				a->got[a->ngot].flow = e.flow_id;
				a->got[a->ngot].slot = e.slot;
				a->got[a->ngot++].seq = e.seq;
			}
		}
		__atomic_store_n(head, i, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(head, a->t1, __ATOMIC_RELEASE);
	}
	if (a->garbage)
		*head = (uint32_t)a->junk;
}

/*
 * Consume a ring: check the newest entries, move head to tail, and give
 * back the receive slots that completed.
 */
static void drain_map(struct thr *t, int mi, struct fzmap m)
{
	struct drain a = { .m = &m };
	int faulted, k;

	if (mi < 0 || m.off0 || !m.cq_entries || !(m.flags & MAP_SHARED) ||
	    m.len < m.ro.cqes + (size_t)m.cq_entries * sizeof(struct sdr_cqe))
		return;
	a.garbage = pct(t, 3);
	a.junk = rnd(t);
	hist_op(t, "drain map %d%s", mi, a.garbage ? " (garbage head)" : "");
	faulted = guarded(t, drain, &a);
	hist_ret(t, faulted ? -1 : (long)(a.t1 - a.h), EFAULT);
	judge_access(t, mi, &m, faulted, 1);
	if (faulted)
		return;
	for (k = 0; k < 16; k++)
		__atomic_add_fetch(&G->cqes[k / 4][k % 4], a.seen[k / 4][k % 4],
				   __ATOMIC_RELAXED);
	/* An entry below tail is written, unless the ring wrapped since. */
	if (a.bad && a.t2 - a.t1 + 8 < m.cq_entries && map_gen(mi) == m.gen)
		fz_fail(t, "ring entry below tail %u: %s out of range (type %u status %u flow %#x)",
			a.t1, a.bad, a.e.type, a.e.status, a.e.flow_id);
	for (k = 0; k < a.ngot; k++) {
		struct sdr_recv_complete rc = {
			.size = sizeof(rc), .flow_id = a.got[k].flow,
			.slot = a.got[k].slot, .seq = a.got[k].seq,
		};

		if (m.slot >= 0)
			fz_ioctl(t, m.slot, NR_RCOMPLETE, &rc, 0, 0,
				 "flow=%#x slot=%u seq=%u (completed)",
				 rc.flow_id, rc.slot, rc.seq);
	}
}

static void op_drain(struct thr *t)
{
	struct fzmap m;
	int mi = pick_map(t, 1 << K_RING, &m);

	drain_map(t, mi, m);
}

/* Drain a shared ring mapping of slot @s, mapping one if there is none. */
static void drain_slot(struct thr *t, int s)
{
	struct fzmap m;
	int i, mi = -1, tries = 0;

again:
	lk();
	for (i = 0; i < NMAPS && mi < 0; i++)
		if (S.map[i].state == M_LIVE && S.map[i].kind == K_RING &&
		    S.map[i].slot == s && (S.map[i].flags & MAP_SHARED)) {
			mi = i;
			m = S.map[i];
		}
	ulk();
	if (mi >= 0) {
		drain_map(t, mi, m);
	} else if (!tries++) {
		map_ring(t, s);
		goto again;
	}
}

/* ---- flow operations ---- */

static int flow_add(struct thr *t, int s, unsigned int gen,
		    const struct sdr_flow_create *c, int connected)
{
	struct fzflow old = { 0 };
	int i, k, fi = -1;

	lk();
	if (S.slot[s].gen != gen) {
		ulk();
		return -1;
	}
	for (k = 0; k < NFLOWS && fi < 0; k++)
		if (!S.flow[k].used)
			fi = k;
	for (k = 0; k < NFLOWS && fi < 0; k++)
		if (S.flow[k].destroyed || S.slot[S.flow[k].slot].ctx != S.flow[k].ctx)
			fi = k;
	if (fi < 0) {
		fi = below(t, NFLOWS);
		old = S.flow[fi];
	}
	memset(&S.flow[fi], 0, sizeof(S.flow[fi]));
	S.flow[fi].used = 1;
	S.flow[fi].slot = s;
	S.flow[fi].ctx = S.slot[s].ctx;
	S.flow[fi].dev = S.slot[s].dev;
	S.flow[fi].id = c->flow_id;
	S.flow[fi].c = *c;
	S.flow[fi].connected = connected;
	S.flow[fi].peer = -1;
	i = fi;
	ulk();
	/* A live flow falling out of the table: destroy it, memory is finite. */
	if (old.used && !old.destroyed) {
		struct sdr_flow_destroy d = { .size = sizeof(d), .flow_id = old.id };

		fz_ioctl(t, old.slot, NR_DESTROY, &d, 0, 0, "flow=%#x (evicted)",
			 old.id);
	}
	return i;
}

static int memchr_nonzero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 1;
	return 0;
}

/*
 * auth out: never a key in ep_auth; a share (struct version 5) with a
 * public key unless OFF, never signed (the fuzzer names no secret)
 */
static int auth_out_ok(const struct sdr_flow_create *c)
{
	int pub = memchr_nonzero(c->ep_kex.pub, sizeof(c->ep_kex.pub));

	if (c->ep_auth.__reserved || c->ep_auth.alg != c->auth ||
	    memchr_nonzero(c->ep_auth.key, sizeof(c->ep_auth.key)) ||
	    c->auth == SDR_AUTH_DEFAULT || c->auth >= SDR_AUTH_NR)
		return 0;
	if (c->size < SDR_FLOW_CREATE_SIZE_V5)
		return 1;
	return c->ep_kex.alg == c->auth && !c->ep_kex.flags &&
	       !memchr_nonzero(c->ep_kex.mac, sizeof(c->ep_kex.mac)) &&
	       (c->auth == SDR_AUTH_OFF) == !pub;
}

static void check_create_out(struct thr *t, const struct sdr_flow_create *c)
{
	const char *bad = NULL;

	if (!c->flow_id || c->flow_id > 0xffffff || c->ep.flow_id != c->flow_id)
		bad = "flow_id";
	else if (c->ep.magic != SDR_EP_MAGIC || c->ep.abi != SDR_ABI_VERSION)
		bad = "endpoint magic/abi";
	else if (!c->payload || c->payload >= c->mtu || c->chunk_size < 64 ||
		 c->chunk_size > 1024 * c->payload)
		bad = "payload/chunk_size";
	else if ((c->flags & SDR_FLOW_CREATE_MR) ?
		 c->recv_size || c->send_size :
		 !c->recv_size || !c->send_size)
		bad = "regions";
	else if (c->policy >= SDR_POLICY_NR)
		bad = "policy";
	else if (!c->ec_k || c->ec_k > 64 || !c->ec_m || c->ec_m > 32)
		bad = "ec_k/ec_m";
	else if (c->size >= SDR_FLOW_CREATE_SIZE_V3 &&
		 (!c->paths || c->paths > SDR_PATHS_MAX ||
		  c->ep_paths.n != c->paths || c->ep_paths.qpn[0] != c->ep.qpn))
		bad = "paths";
	else if (c->size >= SDR_FLOW_CREATE_SIZE_V4 && !auth_out_ok(c))
		bad = "auth";
	else if (c->recv_offset == c->send_offset ||
		 c->recv_offset == c->state_offset ||
		 c->send_offset == c->state_offset || !c->recv_offset)
		bad = "offsets";
	else if ((!(c->flags & SDR_FLOW_CREATE_MR) &&
		  (c->slot_stride < c->max_msg_size ||
		   c->recv_size < (uint64_t)c->max_msgs * c->slot_stride)) ||
		 c->send_size != c->recv_size ||
		 c->state_stride < sizeof(struct sdr_recv_state) ||
		 c->state_size < (uint64_t)c->max_msgs * c->state_stride)
		bad = "sizes";
	if (bad)
		fz_fail(t, "FLOW_CREATE output: bad %s", bad);
}

static void op_create(struct thr *t)
{
	struct sdr_flow_create c;
	struct fzslot sl;
	struct fzflow f;
	struct call r;
	int s = pick_slot(t, 1), must_fail = 0, fi;

	slot_snap(s, &sl);
	pick_attrs(t, &c, sl.dev >= 0 ? sl.b.mtu : 4096, 0);
	if (pct(t, 3)) {
		c.__reserved = 1;
		must_fail = 1;
	}
	r = fz_ioctl(t, s, NR_CREATE, &c, 15, must_fail,
		     "policy=%u mtu=%u chunk=%u msg=%u n=%u", c.policy, c.mtu,
		     c.chunk_size, c.max_msg_size, c.max_msgs);
	if (!r.clean)
		return;
	check_create_out(t, &c);
	fi = flow_add(t, s, r.gen, &c, 0);
	if (fi < 0 || !pct(t, 50))
		return;
	lk();
	f = S.flow[fi];
	ulk();
	map_flow(t, &f, K_RECV + below(t, 3));
}

/* Two flows with the same geometry on two contexts, connected both ways. */
static void op_pair(struct thr *t)
{
	struct sdr_flow_create a, b;
	struct sdr_flow_connect k;
	struct fzslot sa, sb;
	struct fzflow f;
	struct call r;
	int ia = pick_slot(t, 1), ib = pct(t, 20) ? ia : pick_slot(t, 1);
	int fa, fb, self = pct(t, 8), kind;

	slot_snap(ia, &sa);
	slot_snap(ib, &sb);
	if (sa.dev < 0 || sb.dev < 0)
		return;
	pick_attrs(t, &a, sa.b.mtu, 1);
	b = a;
	b.policy = pick_policy(t);
	if (b.policy >= SDR_POLICY_NR && b.policy != SDR_POLICY_DEFAULT)
		b.policy = SDR_POLICY_EC;
	r = fz_ioctl(t, ia, NR_CREATE, &a, 0, 0, "policy=%u msg=%u n=%u (pair)",
		     a.policy, a.max_msg_size, a.max_msgs);
	if (!r.clean)
		return;
	check_create_out(t, &a);
	if (self) {
		memset(&k, 0, sizeof(k));
		k.size = sizeof(k);
		k.flow_id = a.flow_id;
		k.peer = a.ep;
		k.peer_auth = a.ep_auth;
		k.peer_kex = a.ep_kex;
		r = fz_ioctl(t, ia, NR_CONNECT, &k, 0, 0, "flow=%#x to itself",
			     a.flow_id);
		fa = flow_add(t, ia, r.gen, &a, !r.ret);
		lk();
		if (fa >= 0 && S.flow[fa].id == a.flow_id) {
			S.flow[fa].peer = fa;
			S.flow[fa].peer_id = a.flow_id;
		}
		ulk();
		return;
	}
	r = fz_ioctl(t, ib, NR_CREATE, &b, 0, 0, "policy=%u msg=%u n=%u (pair)",
		     b.policy, b.max_msg_size, b.max_msgs);
	if (!r.clean) {
		flow_add(t, ia, sa.gen, &a, 0);
		return;
	}
	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.flow_id = a.flow_id;
	k.peer = b.ep;
	k.peer_auth = b.ep_auth;
	k.peer_kex = b.ep_kex;
	k.peer_paths = b.ep_paths;
	r = fz_ioctl(t, ia, NR_CONNECT, &k, 0, 0, "flow=%#x to %#x", a.flow_id,
		     b.flow_id);
	fa = flow_add(t, ia, r.gen, &a, !r.ret);
	k.flow_id = b.flow_id;
	k.peer = a.ep;
	k.peer_auth = a.ep_auth;
	k.peer_kex = a.ep_kex;
	k.peer_paths = a.ep_paths;
	r = fz_ioctl(t, ib, NR_CONNECT, &k, 0, 0, "flow=%#x to %#x", b.flow_id,
		     a.flow_id);
	fb = flow_add(t, ib, r.gen, &b, !r.ret);
	lk();
	if (fa >= 0 && fb >= 0 && S.flow[fa].id == a.flow_id &&
	    S.flow[fb].id == b.flow_id) {
		S.flow[fa].peer = fb;
		S.flow[fa].peer_id = b.flow_id;
		S.flow[fb].peer = fa;
		S.flow[fb].peer_id = a.flow_id;
	}
	ulk();
	/* Usually map the areas the traffic needs. */
	for (kind = K_RECV; kind <= K_STATE; kind++) {
		if (fa >= 0 && pct(t, 40)) {
			lk();
			f = S.flow[fa];
			ulk();
			map_flow(t, &f, kind);
		}
		if (fb >= 0 && pct(t, 40)) {
			lk();
			f = S.flow[fb];
			ulk();
			map_flow(t, &f, kind);
		}
	}
}

static void op_connect(struct thr *t)
{
	struct sdr_flow_connect k;
	struct fzflow a, b;
	struct call r;
	const char *to = "another flow";
	int ia = pick_flow(t, &a, W_LIVE), s, i, j, must_fail = 0;

	if (ia < 0)
		return;
	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.flow_id = a.id;
	switch (below(t, 8)) {
	case 0:
		k.peer = a.c.ep;
		k.peer_auth = a.c.ep_auth;
		k.peer_kex = a.c.ep_kex;
		to = "itself";
		break;
	case 1:
	case 2:		/* one with the same geometry, maybe destroyed */
		k.peer = a.c.ep;
		to = "itself (no match)";
		lk();
		for (i = 0, j = below(t, NFLOWS); i < NFLOWS; i++, j = (j + 1) % NFLOWS)
			if (S.flow[j].used && j != ia &&
			    S.flow[j].c.payload == a.c.payload &&
			    S.flow[j].c.chunk_size == a.c.chunk_size &&
			    S.flow[j].c.max_msg_size == a.c.max_msg_size &&
			    S.flow[j].c.max_msgs == a.c.max_msgs) {
				k.peer = S.flow[j].c.ep;
				k.peer_auth = S.flow[j].c.ep_auth;
				k.peer_kex = S.flow[j].c.ep_kex;
				to = S.flow[j].destroyed ? "a destroyed match" :
				     "a match";
				break;
			}
		ulk();
		break;
	case 3:		/* one byte of a good endpoint changed */
		k.peer = a.c.ep;
		((uint8_t *)&k.peer)[below(t, sizeof(k.peer))] ^= 1 + below(t, 255);
		to = "a mangled endpoint";
		break;
	case 4:
		random_fill(&k.peer, sizeof(k.peer), rnd(t));
		if (pct(t, 50)) {
			k.peer.magic = SDR_EP_MAGIC;
			k.peer.abi = SDR_ABI_VERSION;
		}
		to = "garbage";
		break;
	case 5:
		k.peer = a.c.ep;
		/* 16..16384 only */
		k.peer.none_window = pct(t, 50) ? below(t, 16) : 16385 + below(t, 1000);
		must_fail = 1;
		to = "an endpoint with its none_window out of range";
		break;
	default:
		if (pick_flow(t, &b, W_ANY) >= 0) {
			k.peer = b.c.ep;
			k.peer_auth = b.c.ep_auth;
			k.peer_kex = b.c.ep_kex;
		}
		break;
	}
	/* the authentication part mangled: not this flow's (EPROTO) */
	if (pct(t, 3))
		((uint8_t *)&k.peer_auth)[below(t, sizeof(k.peer_auth))] ^=
			1 + below(t, 255);
	/* the share mangled: EPROTO, EKEYREJECTED, or keys nobody has */
	if (pct(t, 3))
		((uint8_t *)&k.peer_kex)[below(t, sizeof(k.peer_kex))] ^=
			1 + below(t, 255);
	if (pct(t, 3)) {
		k.__reserved = 1;
		must_fail = 1;
	}
	s = pct(t, 90) ? a.slot : pick_slot(t, 0);
	r = fz_ioctl(t, s, NR_CONNECT, &k, 10, must_fail, "flow=%#x to %s (%#x)",
		     a.id, to, k.peer.flow_id);
	if (r.clean) {
		lk();
		if (S.flow[ia].id == a.id)
			S.flow[ia].connected = 1;
		ulk();
	}
}

static uint32_t some_flow_id(struct thr *t, struct fzflow *f, int *fi, int *s)
{
	*fi = pick_flow(t, f, pct(t, 80) ? W_LIVE : W_ANY);
	if (*fi < 0 || pct(t, 5)) {
		*s = pick_slot(t, 1);
		*fi = -1;
		return pct(t, 50) ? 0 : (uint32_t)rnd(t);
	}
	*s = pct(t, 92) ? f->slot : pick_slot(t, 0);
	return f->id;
}

static void op_destroy(struct thr *t)
{
	struct sdr_flow_destroy d = { .size = sizeof(d) };
	struct fzflow f;
	struct call r;
	int fi, s, must_fail = 0;

	d.flow_id = some_flow_id(t, &f, &fi, &s);
	if (pct(t, 3)) {
		d.__reserved = 1;
		must_fail = 1;
	}
	r = fz_ioctl(t, s, NR_DESTROY, &d, 10, must_fail, "flow=%#x", d.flow_id);
	if (r.clean && fi >= 0 && s == f.slot)
		flow_destroyed(fi, d.flow_id);
}

static void op_info(struct thr *t)
{
	struct sdr_flow_info fi = { .size = sizeof(fi) };
	struct fzflow f;
	struct call r;
	int i, s, must_fail = 0;

	fi.flow_id = some_flow_id(t, &f, &i, &s);
	/* out only: what the caller put there does not matter */
	fi.ec_k = (uint32_t)rnd(t);
	fi.ec_m = (uint32_t)rnd(t);
	fi.spurious_retx = rnd(t);
	r = fz_ioctl(t, s, NR_INFO, &fi, 10, must_fail, "flow=%#x", fi.flow_id);
	if (r.clean && (fi.state > SDR_FLOW_FAILED || fi.policy >= SDR_POLICY_NR ||
			fi.peer_flow_id > 0xffffff || !fi.ec_k || fi.ec_k > 64 ||
			!fi.ec_m || fi.ec_m > 32))
		fz_fail(t, "FLOW_INFO of %#x: state %u policy %u peer %#x ec %u/%u out of range",
			fi.flow_id, fi.state, fi.policy, fi.peer_flow_id,
			fi.ec_k, fi.ec_m);
}

static void op_modify(struct thr *t)
{
	struct sdr_flow_modify m = { .size = sizeof(m) };
	struct fzflow f;
	int fi, s;

	m.flow_id = some_flow_id(t, &f, &fi, &s);
	m.flags = (pct(t, 90) ? SDR_FLOW_MODIFY_POLICY : 0) |
		  (pct(t, 30) ? SDR_FLOW_MODIFY_EC : 0) |
		  (pct(t, 20) ? SDR_FLOW_MODIFY_RATE : 0);
	m.policy = pct(t, 90) ? below(t, 3) : pct(t, 50) ? 3 + below(t, 2) :
		   (uint32_t)rnd(t);
	m.ec_k = pct(t, 90) ? below(t, 66) : (uint32_t)rnd(t);
	m.ec_m = pct(t, 90) ? below(t, 34) : (uint32_t)rnd(t);
	/* a slow rate now and then: the flows it picks still end */
	m.rate_mbit = pct(t, 50) ? 0 : pct(t, 90) ? 10 + below(t, 10000) :
		      (uint32_t)rnd(t);
	m.__reserved = pct(t, 95) ? 0 : (uint32_t)rnd(t);
	fz_ioctl(t, s, NR_MODIFY, &m, 10, 0,
		 "flow=%#x flags=%#x policy=%u ec %u/%u rate %u res %u",
		 m.flow_id, m.flags, m.policy, m.ec_k, m.ec_m, m.rate_mbit,
		 m.__reserved);
}

/*
 * SDR_IOC_FLOW_RAIL: add the other device (or this one, or none such) as
 * a rail of any flow, connect a rail of it to another flow's endpoint
 * (mangled at times); a clean ADD names a rail 1..3.
 */
static void op_rail(struct thr *t)
{
	struct sdr_flow_rail r = { .size = sizeof(r) };
	struct fzflow f, g;
	struct call c;
	int fi, s, gi;

	r.flow_id = some_flow_id(t, &f, &fi, &s);
	if (pct(t, 60)) {
		r.op = SDR_RAIL_ADD;
		r.paths = pct(t, 80) ? below(t, 3) : (uint32_t)rnd(t);
		if (pct(t, 85))
			snprintf((char *)r.ibdev, sizeof(r.ibdev), "%s",
				 S.dev[fi >= 0 ? !f.dev : below(t, 2)]);
		else if (pct(t, 50))
			snprintf((char *)r.ibdev, sizeof(r.ibdev), "sdr_fz%u",
				 below(t, 4));
		else
			random_fill(r.ibdev, sizeof(r.ibdev), rnd(t));
	} else {
		r.op = pct(t, 95) ? SDR_RAIL_CONNECT : (uint32_t)rnd(t);
		r.rail = pct(t, 90) ? below(t, 4) : (uint32_t)rnd(t);
		gi = pick_flow(t, &g, W_ANY);
		if (gi >= 0) {
			r.ep = g.c.ep;
			r.ep_paths = g.c.ep_paths;
		}
		if (pct(t, 10))
			random_fill(&r.ep, sizeof(r.ep), rnd(t));
		if (pct(t, 10))
			random_fill(&r.ep_paths, sizeof(r.ep_paths), rnd(t));
	}
	c = fz_ioctl(t, s, NR_RAIL, &r, 10, 0, "flow=%#x op=%u rail=%u paths=%u",
		     r.flow_id, r.op, r.rail, r.paths);
	if (c.clean && r.op == SDR_RAIL_ADD && (!r.rail || r.rail >= SDR_RAILS_MAX))
		fz_fail(t, "FLOW_RAIL ADD on %#x returned rail %u", r.flow_id,
			r.rail);
}

/* A group id for a post or close: one this thread opened, or any. */
static uint32_t some_group(struct thr *t)
{
	if (t->ngrp && pct(t, 80))
		return t->grp[below(t, (uint32_t)t->ngrp)];
	return pct(t, 50) ? below(t, 300) : (uint32_t)rnd(t);
}

/*
 * SDR_IOC_GROUP: open a group on any context (a clean OPEN names one
 * that is not 0), close one (its id or any), or an op that is none.
 */
static void op_group(struct thr *t)
{
	struct sdr_group g = { .size = sizeof(g) };
	struct fzflow f;
	struct call c;
	int fi, s, must_fail = 0;

	some_flow_id(t, &f, &fi, &s);
	if (pct(t, 55)) {
		g.op = SDR_GROUP_OPEN;
		g.user_data = rnd(t);
		if (pct(t, 5)) {
			g.group = 1 + below(t, 9);	/* an input it is not */
			must_fail = 1;
		}
	} else if (pct(t, 95)) {
		g.op = SDR_GROUP_CLOSE;
		g.group = some_group(t);
	} else {
		g.op = 2 + below(t, 1000);
		must_fail = 1;
	}
	c = fz_ioctl(t, s, NR_GROUP, &g, 6, must_fail, "op=%u group=%u", g.op,
		     g.group);
	if (!c.clean || g.op != SDR_GROUP_OPEN)
		return;
	if (!g.group)
		fz_fail(t, "GROUP OPEN returned group 0");
	t->grp[t->ngrp < 8 ? t->ngrp++ : (int)below(t, 8)] = g.group;
}

/*
 * SDR_IOC_MR_REG of a range of this thread's buffer (or of garbage: an
 * address anywhere, a length up to beyond the limit), and
 * SDR_IOC_MR_DEREG of an id it got or any, on any context; sometimes a
 * receive posted into a registration, which then cannot be removed until
 * the receive is completed (or its flow destroyed).
 */
static void op_mr(struct thr *t)
{
	struct sdr_mr_reg r = { .size = sizeof(r) };
	struct sdr_mr_dereg d = { .size = sizeof(d) };
	struct fzflow f;
	struct call c;
	int fi, s;
	uint64_t off;

	some_flow_id(t, &f, &fi, &s);
	if (pct(t, 60)) {
		if (pct(t, 80)) {
			off = below(t, UBUF_LEN);
			r.addr = (uintptr_t)t->ubuf + off;
			r.len = 1 + below(t, (uint32_t)(UBUF_LEN - off));
		} else {
			r.addr = pct(t, 50) ? rnd(t) : (uintptr_t)t->ubuf;
			r.len = pct(t, 50) ? rnd(t) : SDR_MR_LEN_MAX + below(t, 2);
		}
		c = fz_ioctl(t, s, NR_MR_REG, &r, 4, 0, "addr=%#llx len=%#llx",
			     (unsigned long long)r.addr,
			     (unsigned long long)r.len);
		if (!c.clean)
			return;
		if (!r.mr_id)
			fz_fail(t, "MR_REG returned id 0");
		t->mr[t->nmr < 8 ? t->nmr++ : (int)below(t, 8)] = r.mr_id;
		if (fi >= 0 && pct(t, 30)) {
			struct sdr_recv_post p = { .size = sizeof(p),
						   .flags = SDR_RECV_MR,
						   .flow_id = f.id,
						   .mr_id = r.mr_id,
						   .mr_addr = r.addr,
						   .mr_len = r.len };

			fz_ioctl(t, s, NR_RPOST, &p, 0, 0,
				 "flow=%#x into mr %u", f.id, r.mr_id);
		}
		return;
	}
	d.mr_id = t->nmr && pct(t, 80) ? t->mr[below(t, t->nmr)] :
					 (uint32_t)below(t, 20);
	fz_ioctl(t, s, NR_MR_DEREG, &d, 4, 0, "mr=%u", d.mr_id);
}

/*
 * SDR_IOC_QUERY on any context, bound or not (never EBADFD): a clean
 * answer is this kernel's, whatever else is going on.
 */
static void op_query(struct thr *t)
{
	struct sdr_query q = { .size = sizeof(q) };
	int s = pick_slot(t, 0);
	struct call r;

	r = fz_ioctl(t, s, NR_QUERY, &q, 10, 0, "");
	if (r.ret && r.err == EBADFD)
		fz_fail(t, "QUERY answered EBADFD: it works unbound");
	if (!r.clean)
		return;
	if (q.abi_version != SDR_ABI_VERSION || q.policy_nr != SDR_POLICY_NR ||
	    !(q.policies & (1ULL << SDR_POLICY_NONE)) ||
	    q.policies >> SDR_POLICY_NR ||
	    q.features != (SDR_FEATURE_AUTH | SDR_FEATURE_MULTIPATH | SDR_FEATURE_RAILS |
			   SDR_FEATURE_GROUPS | SDR_FEATURE_MR | SDR_FEATURE_KEX |
			   SDR_FEATURE_AEAD) ||
	    q.ec_max_k != 64 ||
	    q.ec_max_m != 32 || q.max_msg_size != 1U << 30 ||
	    q.max_msgs != 1024 || !q.paths_max ||
	    q.paths_max > SDR_PATHS_MAX || q.__reserved0 ||
	    q.__reserved[0] || q.__reserved[2])
		fz_fail(t, "QUERY: abi %u policy_nr %u policies %#llx features %#llx ec %u/%u msgs %u x %u",
			q.abi_version, q.policy_nr,
			(unsigned long long)q.policies,
			(unsigned long long)q.features, q.ec_max_k, q.ec_max_m,
			q.max_msgs, q.max_msg_size);
}

/* Post a receive on record @fi (a copy in @f) and remember it. */
static void recv_post_on(struct thr *t, int fi, const struct fzflow *f, int mut)
{
	struct sdr_recv_post p = { .size = sizeof(p), .flow_id = f->id };
	struct call r;

	p.user_data = rnd(t);
	r = fz_ioctl(t, f->slot, NR_RPOST, &p, mut, 0, "flow=%#x", p.flow_id);
	if (!r.clean)
		return;
	if (p.slot >= f->c.max_msgs)
		fz_fail(t, "RECV_POST on flow %#x returned slot %u of %u",
			p.flow_id, p.slot, f->c.max_msgs);
	lk();
	if (S.flow[fi].id == p.flow_id) {
		struct fzflow *w = &S.flow[fi];
		int k = w->nrp < NRPOSTS ? w->nrp++ : (int)below(t, NRPOSTS);

		w->rp[k].slot = p.slot;
		w->rp[k].seq = p.seq;
	}
	ulk();
}

/* Before sending on @f: a receive waiting at its peer, usually. */
static void feed_peer(struct thr *t, const struct fzflow *f)
{
	struct fzflow pf;
	int ok = 0;

	if (f->peer < 0 || !pct(t, 60))
		return;
	lk();
	if (S.flow[f->peer].used && S.flow[f->peer].id == f->peer_id) {
		pf = S.flow[f->peer];
		ok = 1;
	}
	ulk();
	if (ok)
		recv_post_on(t, f->peer, &pf, 0);
}

static void op_recv_post(struct thr *t)
{
	struct sdr_recv_post p = { .size = sizeof(p) };
	struct fzflow f;
	struct call r;
	int fi, s;

	p.flow_id = some_flow_id(t, &f, &fi, &s);
	if (fi >= 0 && !f.connected && pct(t, 70)) {
		fi = pick_flow(t, &f, W_CONN);
		if (fi >= 0) {
			p.flow_id = f.id;
			s = f.slot;
		}
	}
	p.user_data = rnd(t);
	if (pct(t, 15)) {
		p.flags = SDR_RECV_GROUP;
		p.group = some_group(t);
	}
	r = fz_ioctl(t, s, NR_RPOST, &p, 8, 0, "flow=%#x group=%u", p.flow_id,
		     p.group);
	if (!r.clean || fi < 0)
		return;
	if (p.slot >= f.c.max_msgs)
		fz_fail(t, "RECV_POST on flow %#x returned slot %u of %u",
			p.flow_id, p.slot, f.c.max_msgs);
	lk();
	if (S.flow[fi].id == p.flow_id) {
		struct fzflow *w = &S.flow[fi];
		int k = w->nrp < NRPOSTS ? w->nrp++ : (int)below(t, NRPOSTS);

		w->rp[k].slot = p.slot;
		w->rp[k].seq = p.seq;
	}
	ulk();
}

static void op_recv_complete(struct thr *t)
{
	struct sdr_recv_complete c = { .size = sizeof(c) };
	struct fzflow f;
	int fi, s, k, must_fail = 0;

	c.flow_id = some_flow_id(t, &f, &fi, &s);
	if (fi >= 0 && f.nrp && pct(t, 75)) {
		k = below(t, f.nrp);
		c.slot = f.rp[k].slot;
		c.seq = f.rp[k].seq;
		lk();
		if (S.flow[fi].id == f.id && k < S.flow[fi].nrp)
			S.flow[fi].rp[k] = S.flow[fi].rp[--S.flow[fi].nrp];
		ulk();
	} else {
		c.slot = pct(t, 50) && fi >= 0 ? below(t, f.c.max_msgs + 2) :
			 (uint32_t)rnd(t);
		c.seq = (uint32_t)rnd(t);
	}
	if (pct(t, 3)) {
		c.__reserved = 1;
		must_fail = 1;
	}
	fz_ioctl(t, s, NR_RCOMPLETE, &c, 8, must_fail, "flow=%#x slot=%u seq=%u",
		 c.flow_id, c.slot, c.seq);
}

static uint64_t pick_len(struct thr *t, const struct fzflow *f)
{
	uint32_t p = f->c.payload ? f->c.payload : 1, m = f->c.max_msg_size;

	switch (below(t, 16)) {
	case 0: return 0;
	case 1: return m + 1;
	case 2: return 1ULL << (32 + below(t, 31));
	case 3: return 1;
	case 4: return p - 1;
	case 5: return p + 1;
	case 6: case 7: return m;
	default: return 1 + below(t, m);
	}
}

struct fill {
	volatile uint8_t *p;
	size_t n;
};

static void fill(void *p)
{
	struct fill *a = p;
	size_t i;

	for (i = 0; i < a->n; i += 64)
		a->p[i] = (uint8_t)(i >> 6);
}

/* Fill the flow's send region through a mapping of it, if there is one. */
static void fill_send_region(struct thr *t, uint32_t flow_id)
{
	struct fzmap m;
	int mi = pick_map(t, 1 << K_SEND, &m), faulted;
	struct fill a;

	if (mi < 0 || m.flow_id != flow_id)
		return;
	a.p = m.addr;
	a.n = m.len < 16 * PG ? m.len : 16 * PG;
	hist_op(t, "fill send region map %d len=%#zx", mi, a.n);
	faulted = guarded(t, fill, &a);
	hist_ret(t, faulted ? -1 : 0, EFAULT);
	judge_access(t, mi, &m, faulted, 1);
}

static void op_send(struct thr *t)
{
	struct sdr_send_post p = { .size = sizeof(p) };
	struct fzflow f;
	char d[24] = "offset";
	int fi, s, must_fail = 0;
	uint64_t region;

	p.flow_id = some_flow_id(t, &f, &fi, &s);
	if (fi >= 0 && !f.connected && pct(t, 70)) {
		fi = pick_flow(t, &f, W_CONN);
		if (fi >= 0) {
			p.flow_id = f.id;
			s = f.slot;
		}
	}
	if (fi < 0)
		memset(&f, 0, sizeof(f));
	else
		feed_peer(t, &f);
	region = f.c.send_size;
	p.len = pick_len(t, &f);
	p.imm = (uint32_t)rnd(t);
	p.user_data = rnd(t);
	if (pct(t, 30)) {
		p.flags = SDR_SEND_USER_PTR;
		p.addr = user_ptr(t, p.len, d, sizeof(d));
	} else {
		switch (below(t, 10)) {
		case 0: p.addr = region; break;
		case 1: p.addr = region - (p.len < region ? p.len : 0) + 1; break;
		case 2: p.addr = UINT64_MAX - below(t, 4096); break;
		case 3: p.addr = region > p.len ? region - p.len : 0; break;
		case 4: p.addr = below(t, (uint32_t)(region + 1)); break;
		default:
			p.addr = f.c.slot_stride ? (uint64_t)f.c.slot_stride *
				 below(t, f.c.max_msgs) : 0;
			break;
		}
		if (pct(t, 20))
			fill_send_region(t, p.flow_id);
	}
	if (pct(t, 3)) {
		p.group = 1 + below(t, 300);	/* without SDR_SEND_GROUP */
		must_fail = 1;
	} else if (pct(t, 15)) {
		p.flags |= SDR_SEND_GROUP;
		p.group = some_group(t);
	}
	fz_ioctl(t, s, NR_SEND, &p, 8, must_fail,
		 "flow=%#x %s addr=%#llx len=%#llx", p.flow_id, d,
		 (unsigned long long)p.addr, (unsigned long long)p.len);
}

/*
 * A transfer that can succeed: a receive at the peer, a small one-shot
 * send, a short wait on the receiver's fd, its ring drained.
 */
static void op_transfer(struct thr *t)
{
	struct sdr_send_post p = { .size = sizeof(p) };
	struct pollfd pf = { .events = POLLIN };
	struct fzflow f, pe;
	int fi = pick_flow(t, &f, W_CONN), ok = 0, i;

	if (fi < 0 || !f.connected || f.peer < 0)
		return;
	lk();
	if (S.flow[f.peer].used && S.flow[f.peer].id == f.peer_id) {
		pe = S.flow[f.peer];
		ok = 1;
	}
	ulk();
	if (!ok)
		return;
	recv_post_on(t, f.peer, &pe, 0);
	p.flow_id = f.id;
	p.len = 1 + below(t, f.c.max_msg_size < 16384 ? f.c.max_msg_size : 16384);
	p.imm = (uint32_t)rnd(t);
	if (pct(t, 50)) {
		p.flags = SDR_SEND_USER_PTR;
		p.addr = (uintptr_t)t->ubuf;
	}
	fz_ioctl(t, f.slot, NR_SEND, &p, 0, 0, "flow=%#x len=%#llx (transfer)",
		 f.id, (unsigned long long)p.len);
	for (i = 0; i < 3; i++) {
		pf.fd = __atomic_load_n(&S.slot[pe.slot].fd, __ATOMIC_RELAXED);
		if (pf.fd < 0)
			return;
		hist_op(t, "poll fd=%d (transfer)", pf.fd);
		hist_ret(t, poll(&pf, 1, 20), errno);
		drain_slot(t, pe.slot);
	}
}

static void stream_forget(int fi, uint32_t id, uint32_t seq)
{
	struct fzflow *w = &S.flow[fi];
	int k;

	lk();
	if (w->id == id)
		for (k = 0; k < w->nst; k++)
			if (w->st[k].seq == seq) {
				w->st[k] = w->st[--w->nst];
				break;
			}
	ulk();
}

/* START, CONT or END of a streamed message, mostly well formed. */
static void op_stream(struct thr *t)
{
	struct sdr_send_post p = { .size = sizeof(p) };
	struct fzstream st;
	struct fzflow f;
	struct call r;
	char d[24] = "offset";
	uint32_t pay;
	uint64_t parts;
	int fi = pick_flow(t, &f, pct(t, 85) ? W_CONN : W_ANY), s, k = -1;

	if (fi < 0)
		return;
	s = pct(t, 95) ? f.slot : pick_slot(t, 0);
	pay = f.c.payload ? f.c.payload : 1;
	p.flow_id = f.id;
	p.imm = (uint32_t)rnd(t);
	if (f.nst && pct(t, 70)) {
		k = below(t, f.nst);
		st = f.st[k];
		p.seq = pct(t, 97) ? st.seq : (uint32_t)rnd(t);
		p.flags = pct(t, 35) ? SDR_SEND_STREAM_END : SDR_SEND_STREAM_CONT;
		parts = (st.msg_len - st.ready) / pay;
		if (p.flags == SDR_SEND_STREAM_END)
			p.len = st.msg_len - st.ready;
		else
			p.len = (uint64_t)pay * (1 + below(t, (uint32_t)(parts ? parts : 1)));
		if (pct(t, 5))
			p.len += 1 + below(t, pay);	/* not aligned */
		if (st.uptr) {
			p.flags |= SDR_SEND_USER_PTR;
			p.addr = user_ptr(t, p.len, d, sizeof(d));
		} else {
			p.addr = st.base + st.ready;
			if (pct(t, 5))
				p.addr += pay;
		}
	} else {
		feed_peer(t, &f);
		memset(&st, 0, sizeof(st));
		p.flags = SDR_SEND_STREAM_START;
		p.msg_len = pct(t, 95) ? 1 + below(t, f.c.max_msg_size ?
						    f.c.max_msg_size : 1) :
			    (uint64_t)f.c.max_msg_size + 1;
		parts = p.msg_len / pay;
		p.len = pct(t, 30) ? 0 : (uint64_t)pay * below(t, (uint32_t)parts + 1);
		if (pct(t, 5))
			p.len = p.msg_len + pay;
		st.msg_len = p.msg_len;
		st.ready = p.len;
		if (pct(t, 40)) {
			p.flags |= SDR_SEND_USER_PTR;
			p.addr = user_ptr(t, p.len, d, sizeof(d));
			st.uptr = 1;
		} else {
			p.addr = f.c.slot_stride ? (uint64_t)f.c.slot_stride *
				 below(t, f.c.max_msgs) : 0;
			st.base = p.addr;
		}
	}
	if (pct(t, 2))
		p.flags |= SDR_SEND_STREAM_START << below(t, 3);	/* two stream flags */
	r = fz_ioctl(t, s, NR_SEND, &p, 5, 0,
		     "flow=%#x stream seq=%u %s addr=%#llx len=%#llx msg_len=%#llx",
		     f.id, p.seq, d, (unsigned long long)p.addr,
		     (unsigned long long)p.len, (unsigned long long)p.msg_len);
	if (!r.clean) {
		if (k >= 0 && (r.err == ESTALE || r.err == EPIPE || r.err == ENOENT))
			stream_forget(fi, f.id, st.seq);
		return;
	}
	lk();
	if (S.flow[fi].id == f.id) {
		struct fzflow *w = &S.flow[fi];

		if (p.flags & SDR_SEND_STREAM_START) {
			st.seq = p.seq;
			if (w->nst < NSTREAMS)
				w->st[w->nst++] = st;
		} else {
			for (k = 0; k < w->nst; k++)
				if (w->st[k].seq == p.seq)
					w->st[k].ready += p.len;
		}
	}
	ulk();
	if (p.flags & SDR_SEND_STREAM_END)
		stream_forget(fi, f.id, p.seq);
}

/*
 * A streamed message from user memory whose peer goes away between its
 * parts: destroy the peer, then copy the next part in from a slow source
 * while the CLOSE packet arrives.
 */
static void op_stream_vs_peer(struct thr *t)
{
	struct sdr_flow_create a, b;
	struct sdr_flow_connect k = { .size = sizeof(k) };
	struct sdr_flow_destroy d = { .size = sizeof(d) };
	struct sdr_send_post p = { .size = sizeof(p) };
	struct fzslot sa, sb;
	struct fzmap m;
	struct call r;
	int ia = pick_slot(t, 1), ib = pick_slot(t, 1), src;
	uint64_t len;

	slot_snap(ia, &sa);
	slot_snap(ib, &sb);
	if (sa.dev < 0 || sb.dev < 0)
		return;
	flow_create_arg(&a, below(t, 3), 256 << 10, 1);
	b = a;
	if (fz_ioctl(t, ia, NR_CREATE, &a, 0, 0, "policy=%u (stream vs peer)",
		     a.policy).ret)
		return;
	r = fz_ioctl(t, ib, NR_CREATE, &b, 0, 0, "policy=%u (stream vs peer)",
		     b.policy);
	if (r.ret) {
		flow_add(t, ia, sa.gen, &a, 0);
		return;
	}
	k.flow_id = a.flow_id;
	k.peer = b.ep;
	fz_ioctl(t, ia, NR_CONNECT, &k, 0, 0, "flow=%#x to %#x", a.flow_id,
		 b.flow_id);
	k.flow_id = b.flow_id;
	k.peer = a.ep;
	fz_ioctl(t, ib, NR_CONNECT, &k, 0, 0, "flow=%#x to %#x", b.flow_id,
		 a.flow_id);
	p.flow_id = a.flow_id;
	p.flags = SDR_SEND_USER_PTR | SDR_SEND_STREAM_START;
	p.msg_len = a.max_msg_size;
	p.len = 0;
	p.addr = (uintptr_t)t->ubuf;
	r = fz_ioctl(t, ia, NR_SEND, &p, 0, 0, "flow=%#x stream start uptr",
		     a.flow_id);
	d.flow_id = b.flow_id;
	fz_ioctl(t, ib, NR_DESTROY, &d, 0, 0, "flow=%#x (the streaming peer)",
		 b.flow_id);
	if (!r.ret) {
		len = a.payload * (p.msg_len / a.payload / 2);
		src = pick_map(t, 1 << K_FILE | 1 << K_ANON, &m);
		if (src >= 0 && m.len >= len && pct(t, 70)) {
			p.addr = (uintptr_t)m.addr;
			if (m.kind == K_FILE)	/* slow again: out of the page cache */
				fallocate(S.file_fd, FALLOC_FL_PUNCH_HOLE |
					  FALLOC_FL_KEEP_SIZE, 0, (off_t)len);
		}
		if (pct(t, 50))
			usleep(below(t, 3000));
		p.flags = SDR_SEND_USER_PTR | SDR_SEND_STREAM_CONT;
		p.len = len;
		fz_ioctl(t, ia, NR_SEND, &p, 0, 0, "flow=%#x stream cont seq=%u len=%#llx",
			 a.flow_id, p.seq, (unsigned long long)len);
		p.flags = SDR_SEND_USER_PTR | SDR_SEND_STREAM_END;
		p.addr = (uintptr_t)t->ubuf;
		p.len = p.msg_len - len;
		fz_ioctl(t, ia, NR_SEND, &p, 0, 0, "flow=%#x stream end seq=%u",
			 a.flow_id, p.seq);
	}
	flow_add(t, ia, sa.gen, &a, 1);
}

/* Random bytes as the argument of a random command number. */
static void op_garbage(struct thr *t)
{
	static const uint32_t sizes[] = { 0, 1, 8, 16, 64, 200, 4096 };
	unsigned long cmd;
	uint32_t nr = below(t, 32), *hdr = (uint32_t *)t->argpg;
	int s = pick_slot(t, 0), ret, err, known;
	struct fzslot sl;

	switch (below(t, 6)) {
	case 0:
		cmd = _IOWR(SDR_IOC_MAGIC, nr, struct sdr_bind);
		break;
	case 1:
		cmd = _IOC(below(t, 4), below(t, 256), nr, below(t, 1 << 14));
		break;
	case 2:
		cmd = (uint32_t)rnd(t);
		break;
	default:
		cmd = _IO(SDR_IOC_MAGIC, nr);
		break;
	}
	known = cmd == _IO(SDR_IOC_MAGIC, nr) && nr <= NR_KEX_CHECK;
	random_fill(t->argpg, PG, rnd(t));
	if (pct(t, 70))
		hdr[0] = sizes[below(t, 7)];
	if (pct(t, 50))
		hdr[1] = 0;
	slot_snap(s, &sl);
	hist_op(t, "ioctl fd=%d cmd=%#lx garbage size=%u flags=%#x", sl.fd, cmd,
		hdr[0], hdr[1]);
	ret = ioctl(sl.fd, cmd, t->argpg);
	err = ret ? errno : 0;
	hist_ret(t, ret, err);
	stat_count(known ? (int)nr : ST_UNKNOWN, err);
	if (slot_gen(s) != sl.gen || sl.fd < 0)
		return;
	if (_IOC_TYPE(cmd) != SDR_IOC_MAGIC)
		return;		/* the VFS answers some of those itself */
	if (!known && (!ret || err != ENOTTY))
		fz_fail(t, "ioctl %#lx (no sdr command) returned %s, not ENOTTY",
			cmd, ename(err));
	else if (known && ret && !errno_listed(nr, err))
		fz_fail(t, "%s with garbage returned %s (%d), which uapi/sdr_uapi.h does not list for it",
			iocs[nr].name, ename(err), err);
}

/* ---- the rest: poll, epoll, fork, sysfs, module parameters ---- */

static void op_poll(struct thr *t)
{
	struct pollfd pf[3];
	struct fzslot sl[3];
	int n = 1 + below(t, 3), i, ret, err, s[3];

	for (i = 0; i < n; i++) {
		s[i] = pick_slot(t, 0);
		slot_snap(s[i], &sl[i]);
		pf[i].fd = sl[i].fd;
		pf[i].events = POLLIN | POLLOUT | POLLPRI;
		pf[i].revents = 0;
	}
	hist_op(t, "poll %d fds (fd=%d)", n, pf[0].fd);
	ret = poll(pf, n, below(t, 10));
	err = errno;
	hist_ret(t, ret, err);
	if (ret < 0) {
		if (err != ENOMEM && err != EINTR)
			fz_fail(t, "poll: %s", ename(err));
		return;
	}
	for (i = 0; i < n; i++) {
		if (pf[i].fd < 0 || slot_gen(s[i]) != sl[i].gen)
			continue;
		if (pf[i].revents & ~(POLLIN | POLLRDNORM | POLLERR | POLLHUP))
			fz_fail(t, "poll: revents %#x on an sdr fd", pf[i].revents);
		else if (!in_child && !fz_hotplug && sl[i].dev >= 0 &&
			 (pf[i].revents & (POLLERR | POLLHUP)))
			fz_fail(t, "poll: %#x on a context bound to a present device (did its QP break?)",
				pf[i].revents);
	}
}

static void op_epoll(struct thr *t)
{
	struct epoll_event ev[8];
	struct fzslot sl;
	int ret, err, op;

	if (pct(t, 50)) {
		slot_snap(pick_slot(t, 0), &sl);
		op = pct(t, 60) ? EPOLL_CTL_ADD : pct(t, 50) ? EPOLL_CTL_DEL :
		     EPOLL_CTL_MOD;
		ev[0].events = EPOLLIN | (pct(t, 30) ? EPOLLET : 0);
		ev[0].data.u64 = sl.fd;
		hist_op(t, "epoll_ctl %d fd=%d", op, sl.fd);
		ret = epoll_ctl(S.ep_fd, op, sl.fd, ev);
	} else {
		hist_op(t, "epoll_wait");
		ret = epoll_wait(S.ep_fd, ev, 8, below(t, 5));
	}
	err = errno;
	hist_ret(t, ret, err);
}

static void op_sysfs(struct thr *t)
{
	static const char *const attrs[] = {
		"state", "policy", "peer", "owner_pid", "owner_uid", "mtu",
		"payload", "chunk_size", "max_msg_size", "max_msgs",
		"sends_inflight", "recvs_posted", "srtt_us",
		"counters/tx_packets", "counters/retransmits",
		"counters/parity_sent", "counters/msgs_failed", "drops/stale",
		"drops/bad_token", "drops/no_recv",
	};
	static const char *const pols[] = { "none\n", "sr\n", "ec\n",
					    "adaptive\n", "bogus\n", "" };
	char path[200], buf[256];
	struct fzflow f;
	int fd, ret, err, wr = pct(t, 15);

	if (pick_flow(t, &f, W_ANY) < 0 || f.dev < 0)
		return;
	if (pct(t, 10))
		snprintf(path, sizeof(path), "/sys/class/sdr/%s/%s", S.dev[f.dev],
			 pct(t, 50) ? "nr_flows" : "counters/tx_packets");
	else
		snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/%s",
			 S.dev[f.dev], f.id, wr ? "policy" :
			 attrs[below(t, sizeof(attrs) / sizeof(attrs[0]))]);
	hist_op(t, "%s %s", wr ? "write" : "read", path);
	fd = open(path, (wr ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0) {
		hist_ret(t, -1, errno);
		return;
	}
	if (wr) {
		const char *v = pols[below(t, 6)];

		ret = write(fd, v, strlen(v));
	} else {
		ret = read(fd, buf, sizeof(buf));
	}
	err = errno;
	close(fd);
	hist_ret(t, ret, err);
}

static const struct param {
	const char *name;
	unsigned int v[4];
} params[] = {
	{ "dead_ms",		{ 300, 2000, 10000, 50 } },
	{ "ec_k",		{ 4, 16, 32, 65 } },
	{ "ec_m",		{ 1, 2, 8, 0 } },
	{ "chunk_pkts",		{ 1, 16, 1024, 0 } },
	{ "default_policy",	{ 1, 3, 4, 7 } },
	{ "max_inflight",	{ 4, 64, 256, 0 } },
	{ "none_idle_ms",	{ 5, 100, 500, 0 } },
	{ "none_reorder_pkts",	{ 0, 8, 1024, 2000000 } },
	{ "none_window",		{ 16, 64, 512, 15 } },
	{ "ack_every",		{ 1, 4, 16, 0 } },
	{ "rto_init_us",	{ 200, 10000, 100000, 1 } },
};
#define NPARAMS (sizeof(params) / sizeof(params[0]))
static char param_saved[NPARAMS][32];

static int param_rw(const char *name, char *buf, size_t n, int wr)
{
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), "/sys/module/sdr/parameters/%s", name);
	fd = open(path, (wr ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = wr ? write(fd, buf, strlen(buf)) : read(fd, buf, n - 1);
	if (!wr && ret >= 0)
		buf[ret] = 0;
	close(fd);
	return ret < 0 ? -1 : 0;
}

static void param_file(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0 && write(fd, v, strlen(v)) < 0)
		fd = fd + 0;
	if (fd >= 0)
		close(fd);
}

static void op_param(struct thr *t)
{
	const struct param *p = &params[below(t, NPARAMS)];
	char v[16];
	int ret;

	if (!fz_params)
		return;		/* global: would change other users' flows */
	snprintf(v, sizeof(v), "%u\n", p->v[below(t, 4)]);
	hist_op(t, "set %s %.*s", p->name, (int)strlen(v) - 1, v);
	ret = param_rw(p->name, v, sizeof(v), 1);
	hist_ret(t, ret, errno);
}

static void print_kstack(pid_t pid, pid_t tid);
static void param_file(const char *path, const char *v);

/*
 * Run a command; its exit status, or -1 (reported) if it hangs for
 * @limit_s seconds.
 */
static int run_cmd(struct thr *t, char *const argv[], int limit_s)
{
	int64_t t0 = now_us(), end = t0 + (int64_t)limit_s * 1000000;
	int st, fd, i;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_us() > end) {
			fz_fail(t, "'%s %s %s %s' stuck for %d s; its kernel stack, sampled (blocked tasks: sysrq-w in the kernel log):",
				argv[0], argv[1], argv[2], argv[3], limit_s);
			param_file("/proc/sysrq-trigger", "w\n");
			for (i = 0; i < 5; i++) {
				print_kstack(pid, pid);
				usleep(300000);
			}
			/* how long it takes, if it ends */
			end = now_us() + 3LL * fz_stuck * 1000000;
			while (waitpid(pid, &st, WNOHANG) == 0 && now_us() < end)
				usleep(100000);
			say("'%s %s %s %s' %s after %.1f s", argv[0], argv[1],
			    argv[2], argv[3], now_us() < end ? "ended" : "still running",
			    (double)(now_us() - t0) / 1e6);
			return -1;
		}
		usleep(10000);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * SDR_FUZZ_HOTPLUG: the second device goes away and comes back.  Most of
 * a delete or add is ib_core creating or removing the port's thousands of
 * sysfs files, CPU-bound: on the debug kernel under the fuzz load that
 * takes a minute or two, so a command only counts as hung after 5 times
 * SDR_FUZZ_STUCK (and the watchdog leaves it alone).
 */
static void op_hotplug(struct thr *t)
{
	char *del[] = { "rdma", "link", "delete", S.dev[1], NULL };
	char *add[] = { "rdma", "link", "add", S.dev[1], "type", "rxe",
			"netdev", hot_netdev, NULL };
	int ret;

	static int64_t next_us;

	/* one thread of the main process, every 5 to 15 s */
	if (!fz_hotplug || !hot_netdev[0] || t->proc || t->idx ||
	    now_us() < next_us)
		return;
	next_us = now_us() + 5000000 + below(t, 10000000);
	hist_op(t, "rdma link delete %s", S.dev[1]);
	t->h->busy_since = 0;
	ret = run_cmd(t, del, 5 * fz_stuck);
	hist_ret(t, ret, 0);
	usleep(below(t, 500000));
	hist_op(t, "rdma link add %s netdev %s", S.dev[1], hot_netdev);
	t->h->busy_since = 0;
	ret = run_cmd(t, add, 5 * fz_stuck);
	hist_ret(t, ret, 0);
}

static void child_ops(struct thr *t);

/* A short-lived child with copies of every mapping and fd. */
static void op_fork(struct thr *t)
{
	int st;
	pid_t pid;

	if (t->kid > 0) {
		pid = waitpid(t->kid, &st, WNOHANG);
		if (pid == 0)
			return;
		if (pid == t->kid && WIFSIGNALED(st))
			fz_fail(t, "fork child died of signal %d", WTERMSIG(st));
		t->kid = 0;
	}
	if (in_child)
		return;
	hist_op(t, "fork");
	pid = fork();
	if (pid == 0)
		child_ops(t);
	hist_ret(t, pid, errno);
	if (pid > 0)
		t->kid = pid;
}

typedef void (*op_fn)(struct thr *t);

static const struct op {
	op_fn fn;
	int weight;
	int child;		/* also in fork children */
} ops[] = {
	{ op_open, 3, 0 },	{ op_close, 2, 1 },	{ op_dup, 2, 0 },
	{ op_bind, 3, 0 },	{ op_create, 5, 1 },	{ op_pair, 5, 0 },
	{ op_connect, 4, 1 },	{ op_destroy, 4, 1 },	{ op_info, 4, 1 },
	{ op_modify, 4, 1 },	{ op_query, 2, 1 },	{ op_recv_post, 10, 1 },
	{ op_rail, 3, 1 },	{ op_group, 4, 1 },	{ op_mr, 3, 1 },
	{ op_recv_complete, 5, 1 },			{ op_send, 12, 1 },
	{ op_transfer, 6, 1 },
	{ op_stream, 8, 1 },	{ op_stream_vs_peer, 2, 0 },
	{ op_garbage, 4, 1 },	{ op_mmap, 8, 1 },	{ op_anon, 2, 0 },
	{ op_unmap, 4, 1 },	{ op_mprotect, 2, 1 },	{ op_mremap, 2, 1 },
	{ op_touch, 8, 1 },	{ op_drain, 8, 1 },	{ op_poll, 3, 1 },
	{ op_epoll, 2, 0 },	{ op_fork, 1, 0 },	{ op_sysfs, 3, 0 },
	{ op_param, 1, 0 },	{ op_hotplug, 1, 0 },
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

static int ops_total;

static void one_op(struct thr *t)
{
	int w, i;

	for (;;) {
		w = below(t, ops_total);
		for (i = 0; w >= ops[i].weight; i++)
			w -= ops[i].weight;
		if (!in_child || ops[i].child)
			break;
	}
	ops[i].fn(t);
}

static void child_ops(struct thr *t)
{
	int i, n;

	in_child = 1;
	t->hidx += NHIST / 2;
	t->h = &G->hist[t->hidx];
	memset(t->h, 0, sizeof(*t->h));
	t->h->used = 1;
	t->h->pid = getpid();
	t->h->tid = getpid();
	{
		char n[sizeof(t->name)];

		snprintf(n, sizeof(n), "%.12s.f", t->name);
		memcpy(t->name, n, sizeof(n));
	}
	snprintf(t->h->name, sizeof(t->h->name), "%s", t->name);
	t->rng ^= 0x5eed;
	t->kid = 0;
	alarm(2 * fz_stuck);	/* the watchdog speaks first */
	/*
	 * fork() copies the fd table before the memory, and the other threads
	 * kept going in between: the tables copied may name fds this process
	 * does not have, or files that are not the ones they say.  Keep the
	 * fds that are /dev/sdr, forget which context each is, and take any
	 * fault on a mapping as possibly explained.
	 */
	for (i = 0; i < NSLOTS; i++) {
		struct stat sb;

		S.slot[i].busy = 0;
		S.slot[i].ctx = -1;
		if (S.slot[i].fd >= 0 && (fstat(S.slot[i].fd, &sb) ||
					  !S_ISCHR(sb.st_mode) || sb.st_rdev != sdr_rdev))
			S.slot[i].fd = -1;
	}
	for (i = 0; i < NMAPS; i++)
		S.map[i].holey = 1;
	n = 10 + below(t, 30);
	for (i = 0; i < n; i++)
		one_op(t);
	_exit(0);
}

/* ---- threads and processes ---- */

static void thr_init(struct thr *t, int proc, int idx)
{
	uint8_t *p;

	memset(t, 0, sizeof(*t));
	t->proc = proc;
	t->idx = idx;
	t->hidx = proc * MAX_THREADS + idx;
	t->h = &G->hist[t->hidx];
	snprintf(t->name, sizeof(t->name), "p%d.t%d", proc, idx);
	t->rng = fz_seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(t->hidx + 1));
	p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		abort();
	mprotect(p + PG, PG, PROT_NONE);
	mprotect(p + 3 * PG, PG, PROT_NONE);
	t->argpg = p;
	t->ropg = p + 2 * PG;
	t->ubuf = mmap(NULL, UBUF_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t->altstack = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->ubuf == MAP_FAILED || t->altstack == MAP_FAILED)
		abort();
	random_fill(t->ubuf, UBUF_LEN, t->rng);
}

static pthread_barrier_t start_barrier;

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	stack_t ss = { .ss_sp = t->altstack, .ss_size = 64 << 10 };
	int st;

	cur = t;
	sigaltstack(&ss, NULL);
	memset(t->h, 0, sizeof(*t->h));
	t->h->used = 1;
	t->h->pid = getpid();
	t->h->tid = (pid_t)syscall(SYS_gettid);
	snprintf(t->h->name, sizeof(t->h->name), "%s", t->name);
	pthread_barrier_wait(&start_barrier);
	while (now_us() < deadline_us)
		one_op(t);
	if (t->kid > 0) {
		int64_t end = now_us() + 3LL * fz_stuck * 1000000;

		while (waitpid(t->kid, &st, WNOHANG) == 0 && now_us() < end)
			usleep(10000);
		if (now_us() >= end) {
			fz_fail(t, "fork child %d still running", t->kid);
			kill(t->kid, SIGKILL);
			waitpid(t->kid, &st, 0);
		} else if (WIFSIGNALED(st)) {
			fz_fail(t, "fork child died of signal %d", WTERMSIG(st));
		}
	}
	return NULL;
}

static struct thr thrs[MAX_THREADS];

/* Run @n fuzz threads in this process until the deadline; 0 if all ended. */
static int run_threads(int proc, int n)
{
	int i, stuck = 0;

	pthread_barrier_init(&start_barrier, NULL, n + 1);
	for (i = 0; i < n; i++) {
		thr_init(&thrs[i], proc, i);
		if (pthread_create(&thrs[i].pt, NULL, thr_main, &thrs[i]))
			abort();
	}
	pthread_barrier_wait(&start_barrier);
	for (i = 0; i < n; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		/* a hotplug command may take 5 + 3 times SDR_FUZZ_STUCK */
		ts.tv_sec += (deadline_us - now_us()) / 1000000 +
			     (fz_hotplug ? 9 : 3) * fz_stuck;
		if (pthread_timedjoin_np(thrs[i].pt, NULL, &ts))
			stuck++;
	}
	return stuck;
}

/* ---- the kernel log watcher and the stuck-operation watchdog ---- */

static int kmsg_trouble(const char *m)
{
	static const char *const pats[] = {
		"WARNING:", "BUG:", "BUG ", "Oops", "general protection",
		"KASAN", "UBSAN", "KFENCE", "kmemleak", "unreferenced object",
		"possible circular locking", "possible recursive locking",
		"inconsistent lock state", "suspicious RCU usage",
		"DEBUG_LOCKS_WARN_ON", "refcount_t:", "list_add corruption",
		"list_del corruption", "sdr: leak", "blocked for more than",
		"soft lockup", "hard LOCKUP", "Kernel panic", "INFO: task",
		"stack-protector", "double fault",
	};
	size_t i;

	if (strstr(m, "t_fuzz_ioctl:"))
		return 0;
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (strstr(m, pats[i]))
			return 1;
	return 0;
}

static void dump_all_hist(int64_t since)
{
	int i;

	for (i = 0; i < NHIST; i++)
		if (G->hist[i].used)
			hist_dump(&G->hist[i], 0, since);
}

static void print_kstack(pid_t pid, pid_t tid)
{
	char path[64], buf[2048];
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = 0;
		/* "pid (comm) S ...": the state after the comm */
		say("    %d: state %c", tid, strrchr(buf, ')') ? strrchr(buf, ')')[2] : '?');
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
		say("    %s", l);
}

static volatile int watch_stop;

/* Reads the kernel log and watches for stuck operations while fuzzing. */
static void *watch_main(void *arg)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC), i;
	char rec[2048];
	ssize_t n;

	(void)arg;
	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	while (!watch_stop) {
		while (fd >= 0 && (n = read(fd, rec, sizeof(rec) - 1)) != 0) {
			char *msg, *nl;

			if (n < 0) {
				if (errno == EPIPE)
					continue;	/* overwritten: go on */
				break;
			}
			rec[n] = 0;
			msg = strchr(rec, ';');
			msg = msg ? msg + 1 : rec;
			nl = strchr(msg, '\n');
			if (nl)
				*nl = 0;
			if (!kmsg_trouble(msg))
				continue;
			__atomic_add_fetch(&G->trouble, 1, __ATOMIC_RELAXED);
			say("kernel: %s", msg);
			if (G->trouble_dumps++ < 3) {
				say("operations of the last 2 s (seed %llu):",
				    (unsigned long long)fz_seed);
				dump_all_hist(now_us() - 2000000);
			}
		}
		for (i = 0; i < NHIST; i++) {
			struct hist *h = &G->hist[i];
			int64_t b = h->busy_since;

			if (!h->used || !b || h->stuck_reported ||
			    now_us() - b < (int64_t)fz_stuck * 1000000)
				continue;
			h->stuck_reported = 1;
			__atomic_add_fetch(&G->failures, 1, __ATOMIC_RELAXED);
			say("FAIL %s: stuck for %d s in: %.*s (seed %llu); kernel stack:",
			    h->name, fz_stuck, HIST_LEN,
			    h->e[(h->n - 1) % HIST_N], (unsigned long long)fz_seed);
			print_kstack(h->pid, h->tid);
		}
		usleep(100000);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* ---- setup and the tests ---- */

static long env_long(const char *name, long def, long min, long max)
{
	const char *s = getenv(name);
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, NULL, 0);
	return v < min ? min : v > max ? max : v;
}

static void fz_config(void)
{
	const char *s = getenv("SDR_FUZZ_SEED");

	fz_seconds = env_long("SDR_FUZZ_SECONDS", 20, 1, 7 * 24 * 3600);
	fz_threads = env_long("SDR_FUZZ_THREADS", 4, 1, MAX_THREADS);
	fz_procs = env_long("SDR_FUZZ_PROCS", 2, 0, MAX_PROCS);
	fz_trace = env_long("SDR_FUZZ_TRACE", 0, 0, 1);
	fz_hotplug = env_long("SDR_FUZZ_HOTPLUG", 0, 0, 1);
	fz_params = env_long("SDR_FUZZ_PARAMS", 0, 0, 1);
	fz_stuck = env_long("SDR_FUZZ_STUCK", 60, 5, 3600);
	if (s && *s)
		fz_seed = strtoull(s, NULL, 0);
	else
		fz_seed = (uint64_t)time(NULL) * 1000003 ^ (uint64_t)getpid();
}

/* Open slot @s, bind it to device @dev with @cq entries, map its ring. */
static int setup_slot(struct thr *t, int s, int dev, uint32_t cq)
{
	struct sdr_bind b;
	int fd = sdr_dev_open();

	if (fd < 0 || raw_bind(fd, S.dev[dev], cq, &b))
		return -1;
	S.slot[s].fd = fd;
	S.slot[s].gen = 1;
	S.slot[s].ctx = ++S.next_ctx;
	S.slot[s].dev = dev;
	S.slot[s].b = b;
	memcpy(S.gid[dev], b.gid, SDR_GID_LEN);
	S.have_gid[dev] = 1;
	map_ring(t, s);
	return 0;
}

static void print_stats(void)
{
	char line[600];
	int i, e, n;

	for (i = 0; i < NSTAT; i++) {
		long tot = 0;

		for (e = 0; e < NERR; e++)
			tot += G->stat[i][e];
		if (!tot)
			continue;
		n = snprintf(line, sizeof(line), "%-14s %6ld:", stat_name[i], tot);
		for (e = 0; e < NERR && n < (int)sizeof(line) - 32; e++)
			if (G->stat[i][e])
				n += snprintf(line + n, sizeof(line) - n, " %s %ld",
					      ename(e), G->stat[i][e]);
		say("%s", line);
	}
	say("completions   send: ok %ld failed %ld flushed %ld; recv: ok %ld partial %ld failed %ld flushed %ld; group: ok %ld failed %ld flushed %ld",
	    G->cqes[1][0], G->cqes[1][2], G->cqes[1][3], G->cqes[2][0],
	    G->cqes[2][1], G->cqes[2][2], G->cqes[2][3], G->cqes[3][0],
	    G->cqes[3][2], G->cqes[3][3]);
}

TEST_T(fuzz, 300)
{
	struct thr setup_thr;
	struct sigaction sa;
	pthread_t watcher;
	pid_t workers[MAX_PROCS];
	int i, st, nworkers = 0, stuck;
	size_t k;

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	{
		struct stat sb;

		ASSERT_EQ(stat("/dev/sdr", &sb), 0);
		sdr_rdev = sb.st_rdev;
	}
	fz_config();
	for (k = 0; k < NOPS; k++)
		ops_total += ops[k].weight;
	/* The harness gave 300 s; a soak run needs its own bound. */
	alarm(fz_seconds + (fz_hotplug ? 14 : 6) * fz_stuck + 120);
	TH_LOG("seed %llu (SDR_FUZZ_SEED=%llu to replay), %d s, %d threads, %d worker processes of %d threads",
	       (unsigned long long)fz_seed, (unsigned long long)fz_seed,
	       fz_seconds, fz_threads, fz_procs, fz_procs ? (fz_threads + 1) / 2 : 0);
	kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	kmsg("seed %llu, %d s, %d threads, %d processes: start",
	     (unsigned long long)fz_seed, fz_seconds, fz_threads, fz_procs);
	if (fz_trace)	/* every line, not 10 per 5 s */
		param_file("/proc/sys/kernel/printk_devkmsg", "on\n");

	G = mmap(NULL, sizeof(*G), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(G != MAP_FAILED);
	S.arena = mmap(NULL, ARENA_LEN, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_TRUE(S.arena != MAP_FAILED);
	for (i = 0; i < NSLOTS; i++)
		S.slot[i].fd = -1;
	snprintf(S.dev[0], sizeof(S.dev[0]), "%s", dev0());
	snprintf(S.dev[1], sizeof(S.dev[1]), "%s", dev1());
	/*
	 * A file to map and send from: a memfd, not a file of the shared
	 * root (the host may rewrite those under the guest).
	 */
	S.file_len = UBUF_LEN;
	S.file_fd = memfd_create("t_fuzz_ioctl", MFD_CLOEXEC);
	if (S.file_fd >= 0 && ftruncate(S.file_fd, (off_t)S.file_len)) {
		close(S.file_fd);
		S.file_fd = -1;
	}
	if (fz_hotplug) {
		char path[160];
		int fd, n;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/0", S.dev[1]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, hot_netdev, sizeof(hot_netdev) - 1) : -1;
		if (fd >= 0)
			close(fd);
		hot_netdev[n > 0 ? n : 0] = 0;
		if (strchr(hot_netdev, '\n'))
			*strchr(hot_netdev, '\n') = 0;
		TH_LOG("hotplug: %s on %s goes and comes back", S.dev[1],
		       hot_netdev[0] ? hot_netdev : "(netdev unknown: off)");
	}
	S.ep_fd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(S.ep_fd, 0);
	for (k = 0; k < NPARAMS; k++)
		param_rw(params[k].name, param_saved[k], sizeof(param_saved[k]), 0);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);

	/* Two contexts per device, rings mapped, a few connected pairs. */
	thr_init(&setup_thr, MAX_PROCS, MAX_THREADS - 1);
	cur = &setup_thr;
	setup_thr.h->used = 1;
	snprintf(setup_thr.h->name, sizeof(setup_thr.h->name), "setup");
	ASSERT_EQ(setup_slot(&setup_thr, 0, 0, 0), 0);
	ASSERT_EQ(setup_slot(&setup_thr, 1, 1, 0), 0);
	ASSERT_EQ(setup_slot(&setup_thr, 2, 0, 256), 0);
	ASSERT_EQ(setup_slot(&setup_thr, 3, 1, 64), 0);
	for (i = 0; i < 6; i++)
		op_pair(&setup_thr);
	EXPECT_EQ(G->failures, 0);

	t0_us = now_us();
	deadline_us = t0_us + (int64_t)fz_seconds * 1000000;
	fflush(stdout);
	for (i = 0; i < fz_procs; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			_exit(run_threads(1 + i, (fz_threads + 1) / 2) ? 3 : 0);
		}
		if (pid > 0)
			workers[nworkers++] = pid;
	}
	pthread_create(&watcher, NULL, watch_main, NULL);
	stuck = run_threads(0, fz_threads);
	if (stuck)
		TH_LOG("%d threads did not finish", stuck);
	EXPECT_EQ(stuck, 0);
	for (i = 0; i < nworkers; i++) {
		int64_t end = now_us() + 3LL * fz_stuck * 1000000;

		while (waitpid(workers[i], &st, WNOHANG) == 0 && now_us() < end)
			usleep(20000);
		if (now_us() >= end) {
			TH_LOG("worker %d did not finish: killing it", i + 1);
			kill(workers[i], SIGKILL);
			waitpid(workers[i], &st, 0);
			th_failed = 1;
			continue;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			TH_LOG("worker %d: %s %d", i + 1,
			       WIFSIGNALED(st) ? "killed by signal" : "exit status",
			       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			th_failed = 1;
		}
	}
	/* Everything closed: the contexts go with their last mapping. */
	for (i = 0; i < NSLOTS; i++)
		if (S.slot[i].fd >= 0)
			close(S.slot[i].fd);
	munmap(S.arena, ARENA_LEN);
	close(S.ep_fd);
	usleep(500000);
	watch_stop = 1;
	pthread_join(watcher, NULL);
	if (fz_hotplug && hot_netdev[0]) {
		char *add[] = { "rdma", "link", "add", S.dev[1], "type", "rxe",
				"netdev", hot_netdev, NULL };
		char path[100];

		/* leave the device there for the tests after this one */
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s", S.dev[1]);
		if (access(path, F_OK))
			run_cmd(&setup_thr, add, 5 * fz_stuck);
	}
	for (k = 0; k < NPARAMS; k++)
		if (param_saved[k][0])
			param_rw(params[k].name, param_saved[k], 0, 1);

	TH_LOG("%ld operations, %ld expected faults caught", G->ops, G->faults);
	print_stats();
	kmsg("seed %llu: end, %d failures", (unsigned long long)fz_seed,
	     G->failures);
	if (fz_trace)
		param_file("/proc/sys/kernel/printk_devkmsg", "ratelimit\n");
	if (G->failures)
		TH_LOG("%d failures with seed %llu", G->failures,
		       (unsigned long long)fz_seed);
	EXPECT_EQ(G->failures, 0);
	EXPECT_EQ(G->trouble, 0);
}

static long read_long(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 0);
}

/* Flows the module still has (every device), -1 if sdr is not loaded. */
static long flows_left(void)
{
	char path[128];
	long n = 0, v;
	int d;

	for (d = 0; d < 2; d++) {
		snprintf(path, sizeof(path), "/sys/class/sdr/%s/nr_flows",
			 d ? dev1() : dev0());
		v = read_long(path);
		if (v > 0)
			n += v;
	}
	return n;
}

/* Entries under /sys/class/sdr/<dev>/flows/ of both devices. */
static long flow_dirs_left(void)
{
	char path[128];
	struct dirent *de;
	long n = 0;
	int d;
	DIR *dir;

	for (d = 0; d < 2; d++) {
		snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows",
			 d ? dev1() : dev0());
		dir = opendir(path);
		if (!dir)
			continue;
		while ((de = readdir(dir)))
			n += de->d_name[0] != '.';
		closedir(dir);
	}
	return n;
}

/*
 * The fuzzing processes are gone, and with them every fd and mapping:
 * nothing of theirs may be left in the module.  (kmemleak and the
 * module's own count at unload are tests/vm/run's.)
 */
TEST_T(nothing_left, 120)
{
	int64_t end = now_us() + 60000000;
	long refs, flows, dirs;

	if (access("/sys/module/sdr", F_OK))
		SKIP("sdr not loaded");
	do {
		refs = read_long("/sys/module/sdr/refcnt");
		flows = flows_left();
		dirs = flow_dirs_left();
		if (!refs && !flows && !dirs)
			break;
		usleep(100000);
	} while (now_us() < end);
	TH_LOG("module references %ld, flows %ld, flows/ entries %ld", refs,
	       flows, dirs);
	EXPECT_EQ(refs, 0);
	EXPECT_EQ(flows, 0);
	EXPECT_EQ(dirs, 0);
}
