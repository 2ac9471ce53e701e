// SPDX-License-Identifier: GPL-2.0
/*
 * sdr-allreduce: a ring all-reduce (reduce-scatter, then all-gather) of N
 * ranks, N processes, over sdr flows and, as the baseline in the same run,
 * over TCP sockets.  Each step is one all-reduce of the ranks' float32
 * vectors; every step's sums are checked against what the ranks' inputs
 * must add up to (small integers, so float sums are exact).  Prints the
 * step time (the slowest rank's) p50/p99 per policy and for TCP.
 * A policy named POLICY+groups runs with each ring step's send and
 * receive in a group of its own (SDR_IOC_GROUP): the kernel gives the
 * oldest step's recovery priority, and every step's group must complete
 * OK with its two members.
 *
 *   sdr-allreduce [-n RANKS] [-d DEV[,DEV...]] [-s BYTES] [-i STEPS]
 *                 [-P POLICY[+groups][,...]] [--tcp IP,IP [--tcp-netns NS]]
 *                 [-p PORT] [-t SECONDS] [--json]
 *
 * Rank r runs on device r % (number of -d devices), so with rxe0,rxe1 every
 * hop of the ring crosses the link; neighbours must be on different
 * devices (two flows of one device do not reach each other).  For TCP, rank r binds the (r % 2)th
 * --tcp address, odd ranks inside network namespace NS (two ends in one
 * namespace would talk through lo, past any netem).
 *
 * Exit status: 0 every step of every transport verified, 1 a wrong sum or
 * a failed transfer, 2 bad usage or setup.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libsdr.h"

#define MAX_RANKS	16
#define MAX_DEVS	8
#define MAX_RUNS	8	/* policies + TCP */
#define MAX_STEPS	100000
#define EXIT_WRONG	1
#define EXIT_SETUP	2

struct opts {
	int ranks;
	int ndev;
	char *dev[MAX_DEVS];
	uint64_t bytes;		/* per rank: the vector */
	int steps;
	int npol;
	uint32_t policy[MAX_RUNS];
	bool groups[MAX_RUNS];		/* that run's steps are groups */
	char *tcp_ip[2];
	char *tcp_netns;
	int port;
	int timeout_s;
	bool json;
};

/* What the ranks share (MAP_SHARED before the fork). */
struct shm {
	unsigned int count, gen;	/* the barrier */
	int abort;
	struct sdr_flow_peer next_ep[MAX_RANKS];	/* rank r's flow to r + 1 */
	struct sdr_flow_peer prev_ep[MAX_RANKS];	/* rank r's flow from r - 1 */
	int rank_err[MAX_RANKS];	/* 0, or what failed (a line of text) */
	char why[MAX_RANKS][160];
	uint64_t wrong[MAX_RUNS][MAX_RANKS];	/* wrong floats */
	/* the ranks' flows' counters (sysfs: FLOW_STATS), per run */
	uint64_t stat[MAX_RUNS][MAX_RANKS][4];
	double us[];		/* step durations: US(run, rank, step) */
};

#define US(run, rank, k) \
	sh->us[((size_t)(run) * MAX_RANKS + (rank)) * (size_t)o.steps + (k)]

static struct opts o;
static struct shm *sh;
static int64_t deadline_us;

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sdr-allreduce [-n RANKS] [-d DEV[,DEV...]] [-s BYTES] [-i STEPS]\n"
		"                     [-P POLICY[+groups][,...]] [--tcp IP,IP [--tcp-netns NS]]\n"
		"                     [-p PORT] [-t SECONDS] [--json]\n");
	exit(EXIT_SETUP);
}

static void fail(int r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Rank @r failed: say why once, tell the others, leave. */
static void fail(int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sh->why[r], sizeof(sh->why[r]), fmt, ap);
	va_end(ap);
	sh->rank_err[r] = 1;
	__atomic_store_n(&sh->abort, 1, __ATOMIC_RELEASE);
	exit(EXIT_WRONG);
}

/* All ranks meet (sense by generation); a rank that failed ends it. */
static void barrier(int r)
{
	unsigned int gen = __atomic_load_n(&sh->gen, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&sh->count, 1, __ATOMIC_ACQ_REL) ==
	    (unsigned int)o.ranks) {
		__atomic_store_n(&sh->count, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sh->gen, 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&sh->gen, __ATOMIC_ACQUIRE) == gen) {
		if (__atomic_load_n(&sh->abort, __ATOMIC_ACQUIRE))
			exit(EXIT_WRONG);
		if (now_us() > deadline_us)
			fail(r, "timed out waiting for the other ranks");
		usleep(50);
	}
}

/* Rank r's input element i: small integers, so every sum is exact. */
static float input(int r, size_t i)
{
	return (float)((r + 1) * (int)(i % 1000 + 1));
}

static float expect(size_t i)
{
	return (float)(o.ranks * (o.ranks + 1) / 2 * (int)(i % 1000 + 1));
}

static void fill(int r, float *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = input(r, i);
}

static uint64_t count_wrong(const float *v, size_t n)
{
	uint64_t bad = 0;
	size_t i;

	for (i = 0; i < n; i++)
		bad += v[i] != expect(i);
	return bad;
}

/*
 * Step s of the ring (0 .. 2(N-1)-1): the chunk rank r sends, the one it
 * receives, and whether it adds (reduce-scatter) or copies (all-gather).
 */
static void ring_step(int r, int s, int *send, int *recv, bool *add)
{
	int n = o.ranks;

	if (s < n - 1) {
		*send = ((r - s) % n + n) % n;
		*recv = ((r - s - 1) % n + n) % n;
		*add = true;
	} else {
		s -= n - 1;
		*send = ((r + 1 - s) % n + n) % n;
		*recv = ((r - s) % n + n) % n;
		*add = false;
	}
}

static void take(float *dst, const float *src, size_t n, bool add)
{
	size_t i;

	if (!add) {
		memcpy(dst, src, n * sizeof(float));
		return;
	}
	for (i = 0; i < n; i++)
		dst[i] += src[i];
}

/* ---- sdr ---- */

/* The next completion of @ctx, or the rank fails at the deadline. */
static void next_cqe(int r, struct sdr_ctx *ctx, struct sdr_completion *c)
{
	while (sdr_poll_cq(ctx, c, 1) != 1) {
		if (now_us() > deadline_us)
			fail(r, "timed out waiting for a completion");
		if (__atomic_load_n(&sh->abort, __ATOMIC_ACQUIRE))
			exit(EXIT_WRONG);
		sdr_wait(ctx, 100);
	}
}

/*
 * The counters a run reports, summed over the ranks: of the sending
 * flow (fnext) first, then of the receiving one (fprev).
 */
static const char *const stat_name[4] = {
	"retransmits", "urgent_dups", "nacks_tx", "tail_probes",
};
#define STATS_TX	2	/* the first 2 are the sender's */

/* A counter of @flow's policy directory in sysfs, or 0. */
static uint64_t flow_stat(int r, struct sdr_flow *flow, uint32_t policy,
			  const char *name)
{
	struct sdr_flow_props p;
	unsigned long long v = 0;
	char path[256];
	FILE *f;

	if (sdr_flow_props(flow, &p))
		return 0;
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/%s/%s",
		 o.dev[r % o.ndev], p.flow_id, sdr_policy_str(policy), name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* A completion of the step loop: a send, a receive or a step's group. */
static void take_cqe(int r, const struct sdr_completion *c, int nsteps,
		     size_t chunk, int s, bool *got, int *sends_open,
		     int *groups_open)
{
	if (c->type == SDR_CQE_GROUP) {
		if (c->status != SDR_STATUS_OK || c->slot != 2 ||
		    c->user_data >= (uint64_t)nsteps)
			fail(r, "group of step %llu: %s, %u members",
			     (unsigned long long)c->user_data,
			     sdr_status_str(c->status), c->slot);
		(*groups_open)--;
		return;
	}
	if (c->type == SDR_CQE_SEND) {
		if (c->status != SDR_STATUS_OK)
			fail(r, "send %s", sdr_status_str(c->status));
		(*sends_open)--;
		return;
	}
	if (c->status != SDR_STATUS_OK)
		fail(r, "receive %s", sdr_status_str(c->status));
	if (c->user_data >= (uint64_t)nsteps || got[c->user_data] ||
	    c->len != chunk * sizeof(float))
		fail(r, "receive %llu of %u bytes at step %d",
		     (unsigned long long)c->user_data, c->len, s);
	got[c->user_data] = true;
}

static void run_sdr(int r, int run, uint32_t policy, bool groups)
{
	int n = o.ranks, nsteps = 2 * (n - 1), s, k, send, recv;
	size_t elems = o.bytes / sizeof(float), chunk = elems / n;
	struct sdr_flow_attr fa = { 0 };
	struct sdr_recv *h[2 * MAX_RANKS];
	struct sdr_completion c;
	struct sdr_flow *fnext, *fprev;
	struct sdr_ctx *ctx;
	bool got[2 * MAX_RANKS];
	uint32_t gid[2 * MAX_RANKS];
	int sends_open, groups_open;
	float *v = malloc(elems * sizeof(float));
	bool add;
	int64_t t0;
	int ret;

	ctx = sdr_open(o.dev[r % o.ndev], NULL);
	if (!ctx || !v)
		fail(r, "open %s: %s", o.dev[r % o.ndev], strerror(errno));
	fa.policy = policy;
	fa.max_msg_size = (uint32_t)(chunk * sizeof(float));
	fa.max_msgs = (uint32_t)nsteps;
	fnext = sdr_flow_create(ctx, &fa);
	fprev = sdr_flow_create(ctx, &fa);
	if (!fnext || !fprev)
		fail(r, "flow create (%s): %s", sdr_policy_str(policy),
		     strerror(errno));
	sdr_flow_peer_info(fnext, &sh->next_ep[r]);
	sdr_flow_peer_info(fprev, &sh->prev_ep[r]);
	barrier(r);
	ret = sdr_flow_connect_peer(fnext, &sh->prev_ep[(r + 1) % n]);
	if (!ret)
		ret = sdr_flow_connect_peer(fprev, &sh->next_ep[(r + n - 1) % n]);
	if (ret)
		fail(r, "connect: %s", strerror(-ret));
	barrier(r);

	for (k = 0; k < o.steps; k++) {
		fill(r, v, elems);
		memset(got, 0, sizeof(got));
		groups_open = 0;
		/* a group per ring step: its receive now, its send later */
		for (s = 0; s < nsteps; s++) {
			if (groups) {
				ret = sdr_group_open(ctx, (uint64_t)s, &gid[s]);
				if (!ret)
					ret = sdr_flow_set_group(fprev, gid[s]);
				if (ret)
					fail(r, "group open: %s", strerror(-ret));
				groups_open++;
			}
			ret = sdr_flow_recv_post(fprev, (uint64_t)s, &h[s]);
			if (ret)
				fail(r, "recv post: %s", strerror(-ret));
		}
		barrier(r);
		t0 = now_us();
		sends_open = 0;
		for (s = 0; s < nsteps; s++) {
			ring_step(r, s, &send, &recv, &add);
			if (groups) {
				ret = sdr_flow_set_group(fnext, gid[s]);
				if (ret)
					fail(r, "group: %s", strerror(-ret));
			}
			ret = sdr_flow_send_post_ptr(fnext, v + send * chunk,
						chunk * sizeof(float), (uint32_t)s,
						(uint64_t)s, NULL);
			if (ret)
				fail(r, "send post: %s", strerror(-ret));
			sends_open++;
			if (groups) {
				ret = sdr_group_close(ctx, gid[s]);
				if (ret)
					fail(r, "group close: %s", strerror(-ret));
			}
			/* a later step's message may complete first */
			while (!got[s]) {
				next_cqe(r, ctx, &c);
				take_cqe(r, &c, nsteps, chunk, s, got,
					 &sends_open, &groups_open);
			}
			take(v + recv * chunk, sdr_recv_data(h[s]), chunk, add);
			sdr_recv_release(h[s]);
		}
		while (sends_open || groups_open) {
			next_cqe(r, ctx, &c);
			if (c.type == SDR_CQE_RECV)
				fail(r, "a receive completed twice");
			take_cqe(r, &c, nsteps, chunk, s, got, &sends_open,
				 &groups_open);
		}
		US(run, r, k) = (double)(now_us() - t0);
		sh->wrong[run][r] += count_wrong(v, chunk * n);
	}
	for (k = 0; k < 4; k++)
		sh->stat[run][r][k] = flow_stat(r, k < STATS_TX ? fnext : fprev,
						policy, stat_name[k]);
	barrier(r);
	sdr_flow_destroy(fnext);
	sdr_flow_destroy(fprev);
	sdr_close(ctx);
	free(v);
}

/* ---- TCP ---- */

static int tcp_addr(int r, int port, struct sockaddr_in *a)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, o.tcp_ip[r % 2], &a->sin_addr) == 1 ? 0 : -1;
}

/* Send @slen bytes on @out while receiving @rlen on @in, interleaved. */
static void tcp_xfer(int r, int out, const void *sbuf, size_t slen, int in,
		     void *rbuf, size_t rlen)
{
	size_t sent = 0, got = 0;

	while (sent < slen || got < rlen) {
		struct pollfd p[2] = {
			{ .fd = sent < slen ? out : -1, .events = POLLOUT },
			{ .fd = got < rlen ? in : -1, .events = POLLIN },
		};
		ssize_t k;

		if (poll(p, 2, 100) < 0 && errno != EINTR)
			fail(r, "poll: %s", strerror(errno));
		if (now_us() > deadline_us)
			fail(r, "TCP timed out");
		if (p[0].revents & (POLLOUT | POLLERR | POLLHUP)) {
			k = send(out, (const char *)sbuf + sent, slen - sent,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (k < 0 && errno != EAGAIN && errno != EINTR)
				fail(r, "TCP send: %s", strerror(errno));
			if (k > 0)
				sent += (size_t)k;
		}
		if (p[1].revents & (POLLIN | POLLERR | POLLHUP)) {
			k = recv(in, (char *)rbuf + got, rlen - got, MSG_DONTWAIT);
			if (k == 0)
				fail(r, "TCP: the previous rank closed");
			if (k < 0 && errno != EAGAIN && errno != EINTR)
				fail(r, "TCP recv: %s", strerror(errno));
			if (k > 0)
				got += (size_t)k;
		}
	}
}

static void run_tcp(int r, int run)
{
	int n = o.ranks, nsteps = 2 * (n - 1), s, k, send, recv;
	size_t elems = o.bytes / sizeof(float), chunk = elems / n;
	float *v = malloc(elems * sizeof(float));
	float *tmp = malloc(chunk * sizeof(float));
	struct sockaddr_in me, next;
	int ls, out = -1, in, one = 1, ns;
	bool add;
	int64_t t0;

	if (!v || !tmp)
		fail(r, "out of memory");
	if (o.tcp_netns && r % 2) {
		char path[256];

		snprintf(path, sizeof(path), "/run/netns/%s", o.tcp_netns);
		ns = open(path, O_RDONLY | O_CLOEXEC);
		if (ns < 0 || setns(ns, CLONE_NEWNET))
			fail(r, "netns %s: %s", o.tcp_netns, strerror(errno));
		close(ns);
	}
	if (tcp_addr(r, o.port + r, &me) || tcp_addr(r + 1, o.port + (r + 1) % n, &next))
		fail(r, "bad --tcp address");
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&me, sizeof(me)) || listen(ls, 1))
		fail(r, "TCP listen on %s:%d: %s", o.tcp_ip[r % 2], o.port + r,
		     strerror(errno));
	barrier(r);
	while (out < 0) {
		out = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (out >= 0 && !connect(out, (struct sockaddr *)&next, sizeof(next)))
			break;
		if (now_us() > deadline_us)
			fail(r, "TCP connect to rank %d: %s", (r + 1) % n,
			     strerror(errno));
		close(out);
		out = -1;
		usleep(10000);
	}
	setsockopt(out, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	in = accept(ls, NULL, NULL);
	if (in < 0)
		fail(r, "TCP accept: %s", strerror(errno));
	close(ls);
	barrier(r);
	for (k = 0; k < o.steps; k++) {
		fill(r, v, elems);
		barrier(r);
		t0 = now_us();
		for (s = 0; s < nsteps; s++) {
			ring_step(r, s, &send, &recv, &add);
			tcp_xfer(r, out, v + send * chunk, chunk * sizeof(float),
				 in, tmp, chunk * sizeof(float));
			take(v + recv * chunk, tmp, chunk, add);
		}
		US(run, r, k) = (double)(now_us() - t0);
		sh->wrong[run][r] += count_wrong(v, chunk * n);
	}
	barrier(r);
	close(out);
	close(in);
	free(v);
	free(tmp);
}

/* ---- the parent ---- */

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, int n, double p)
{
	int i = (int)(p * (n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "tcp", required_argument, NULL, 'T' },
		{ "tcp-netns", required_argument, NULL, 'N' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char *tok, *save, *pol = "sr,adaptive";
	int c;

	o.ranks = 4;
	o.bytes = 1 << 20;
	o.steps = 20;
	o.port = 18900;
	o.timeout_s = 600;
	while ((c = getopt_long(argc, argv, "n:d:s:i:P:p:t:h", lo, NULL)) != -1) {
		switch (c) {
		case 'n': o.ranks = atoi(optarg); break;
		case 'd':
			for (tok = strtok_r(optarg, ",", &save); tok && o.ndev < MAX_DEVS;
			     tok = strtok_r(NULL, ",", &save))
				o.dev[o.ndev++] = tok;
			break;
		case 's': o.bytes = strtoull(optarg, &tok, 0);
			if (*tok == 'K' || *tok == 'k')
				o.bytes <<= 10;
			else if (*tok == 'M' || *tok == 'm')
				o.bytes <<= 20;
			break;
		case 'i': o.steps = atoi(optarg); break;
		case 'P': pol = optarg; break;
		case 'p': o.port = atoi(optarg); break;
		case 't': o.timeout_s = atoi(optarg); break;
		case 'T':
			o.tcp_ip[0] = strtok_r(optarg, ",", &save);
			o.tcp_ip[1] = strtok_r(NULL, ",", &save);
			if (!o.tcp_ip[1])
				o.tcp_ip[1] = o.tcp_ip[0];
			break;
		case 'N': o.tcp_netns = optarg; break;
		case 'j': o.json = true; break;
		default: usage();
		}
	}
	if (optind != argc || o.ranks < 2 || o.ranks > MAX_RANKS ||
	    o.steps < 1 || o.steps > MAX_STEPS || o.timeout_s < 1 ||
	    o.port < 1 || o.port + o.ranks > 65535)
		usage();
	if (!o.ndev) {
		o.dev[o.ndev++] = "rxe0";
		o.dev[o.ndev++] = "rxe1";
	}
	for (tok = strtok_r(pol, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *plus = strchr(tok, '+');

		if (plus && !strcmp(plus, "+groups")) {
			o.groups[o.npol] = true;
			*plus = 0;
		}
		if (o.npol == MAX_RUNS - 1 || sdr_policy_parse(tok, &o.policy[o.npol])) {
			fprintf(stderr, "sdr-allreduce: bad policy list\n");
			exit(EXIT_SETUP);
		}
		o.npol++;
	}
	/*
	 * Neighbours on one device: two flows of one device do not reach
	 * each other (the device's QP would send to itself; over rxe
	 * nothing arrives), so every hop must join two devices.
	 */
	for (c = 0; c < o.ranks; c++)
		if (!strcmp(o.dev[c % o.ndev], o.dev[(c + 1) % o.ranks % o.ndev])) {
			fprintf(stderr, "sdr-allreduce: ranks %d and %d would share device %s: give devices so that neighbours differ (%d ranks over %d devices)\n",
				c, (c + 1) % o.ranks, o.dev[c % o.ndev], o.ranks, o.ndev);
			exit(EXIT_SETUP);
		}
	/* a chunk per rank, whole floats, at most the 1 GiB of a message */
	if (o.bytes % (sizeof(float) * o.ranks) || !o.bytes ||
	    o.bytes / o.ranks > (1u << 30)) {
		fprintf(stderr, "sdr-allreduce: -s must be a nonzero multiple of 4 * ranks bytes\n");
		exit(EXIT_SETUP);
	}
}

static void rank_main(int r)
{
	int i;

	for (i = 0; i < o.npol; i++)
		run_sdr(r, i, o.policy[i], o.groups[i]);
	if (o.tcp_ip[0])
		run_tcp(r, o.npol);
	exit(0);
}

int main(int argc, char **argv)
{
	int nruns, i, k, r, status, bad_exit = 0;
	uint64_t wrong_total = 0;
	double *step;
	size_t shsize;
	pid_t pid[MAX_RANKS];

	parse(argc, argv);
	nruns = o.npol + (o.tcp_ip[0] ? 1 : 0);
	if (!nruns)
		usage();
	shsize = sizeof(*sh) + sizeof(double) * MAX_RUNS * MAX_RANKS * (size_t)o.steps;
	sh = mmap(NULL, shsize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return EXIT_SETUP;
	}
	deadline_us = now_us() + (int64_t)o.timeout_s * 1000000;
	signal(SIGPIPE, SIG_IGN);
	for (r = 0; r < o.ranks; r++) {
		pid[r] = fork();
		if (pid[r] < 0) {
			perror("fork");
			sh->abort = 1;
			return EXIT_SETUP;
		}
		if (!pid[r])
			rank_main(r);
	}
	for (r = 0; r < o.ranks; r++) {
		if (waitpid(pid[r], &status, 0) < 0)
			status = -1;
		if (status) {
			bad_exit = 1;
			__atomic_store_n(&sh->abort, 1, __ATOMIC_RELEASE);
		}
		if (WIFSIGNALED(status))
			fprintf(stderr, "sdr-allreduce: rank %d: killed by signal %d\n",
				r, WTERMSIG(status));
	}
	for (r = 0; r < o.ranks; r++)
		if (sh->rank_err[r])
			fprintf(stderr, "sdr-allreduce: rank %d: %s\n", r, sh->why[r]);
	if (bad_exit)
		return EXIT_WRONG;

	step = calloc((size_t)o.steps, sizeof(double));
	if (!step)
		return EXIT_SETUP;
	if (!o.json)
		printf("sdr-allreduce: %d ranks, %llu bytes (%llu floats) each, %d steps, devices",
		       o.ranks, (unsigned long long)o.bytes,
		       (unsigned long long)(o.bytes / sizeof(float)), o.steps);
	if (!o.json) {
		for (i = 0; i < o.ndev; i++)
			printf("%s%s", i ? "," : " ", o.dev[i]);
		printf("\n");
	} else {
		printf("{\"ranks\": %d, \"bytes\": %llu, \"steps\": %d, \"runs\": [",
		       o.ranks, (unsigned long long)o.bytes, o.steps);
	}
	for (i = 0; i < nruns; i++) {
		const char *name = i < o.npol ? sdr_policy_str(o.policy[i]) : "tcp";
		uint64_t wrong = 0, st[4] = { 0 };
		char label[32];
		double mean = 0;

		snprintf(label, sizeof(label), "%s%s", name,
			 i < o.npol && o.groups[i] ? "+groups" : "");
		for (r = 0; r < o.ranks; r++)
			for (k = 0; k < 4; k++)
				st[k] += sh->stat[i][r][k];
		for (k = 0; k < o.steps; k++) {
			step[k] = 0;
			for (r = 0; r < o.ranks; r++)
				if (US(i, r, k) > step[k])
					step[k] = US(i, r, k);
			mean += step[k] / o.steps;
		}
		for (r = 0; r < o.ranks; r++)
			wrong += sh->wrong[i][r];
		wrong_total += wrong;
		qsort(step, (size_t)o.steps, sizeof(double), cmp_d);
		if (o.json)
			printf("%s{\"transport\": \"%s\", \"p50_ms\": %.3f, \"p99_ms\": %.3f, "
			       "\"mean_ms\": %.3f, \"max_ms\": %.3f, \"wrong_floats\": %llu, "
			       "\"%s\": %llu, \"%s\": %llu, \"%s\": %llu, \"%s\": %llu}",
			       i ? ", " : "", label, pct(step, o.steps, 0.5) / 1e3,
			       pct(step, o.steps, 0.99) / 1e3, mean / 1e3,
			       step[o.steps - 1] / 1e3, (unsigned long long)wrong,
			       stat_name[0], (unsigned long long)st[0],
			       stat_name[1], (unsigned long long)st[1],
			       stat_name[2], (unsigned long long)st[2],
			       stat_name[3], (unsigned long long)st[3]);
		else
			printf("%-16s step p50 %9.3f ms  p99 %9.3f ms  mean %9.3f ms  %s\n",
			       label, pct(step, o.steps, 0.5) / 1e3,
			       pct(step, o.steps, 0.99) / 1e3, mean / 1e3,
			       wrong ? "WRONG SUMS" : "sums verified");
	}
	if (o.json)
		printf("], \"verified\": %s}\n", wrong_total ? "false" : "true");
	free(step);
	return wrong_total ? EXIT_WRONG : 0;
}
