// SPDX-License-Identifier: GPL-2.0
/*
 * t_fi_flood: what strangers can make a provider endpoint (provider/,
 * fi_sdr(7)) hold.  A server endpoint on rxe1 (FI_SDR_MAX_PEERS from the
 * environment, then FI_OPT_SDR_MAX_PEERS 8 by fi_setopt; FI_SDR_IDLE_MS
 * 3000) runs a tagged echo exchange with a legitimate client endpoint on
 * rxe0, every message of its own size and content checked by hash both
 * ways, while a hostile requester (a child process, libsdr's rdma_cm
 * calls as the provider's peers make them, with flows of registered
 * memory only, so each costs it nothing) sends 500 connection requests as
 * fast as it can and keeps every connection it gets, silent.  Measured:
 * the server never holds more than 8 accepted connections (its
 * FI_OPT_SDR_PEERS counter, and the kernel's flow count on rxe1), every
 * request is either accepted or refused and counted (FI_OPT_SDR_REFUSED),
 * the exchange goes on and every byte arrives; once the requester stops,
 * idle reclaim takes the server back to the client's connection alone
 * within the idle time; connections whose peer went (the requester
 * exiting) are reclaimed at once; after both ends reclaimed the client's
 * connections for idleness, the exchange connects anew and goes on; and
 * sends to a peer whose endpoint closes with them in flight complete,
 * with an error entry, without a hang.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "fi_ext_sdr.h"
#include "harness.h"
#include "util.h"

#define FI_VER		FI_VERSION(1, 17)
#define MAX_PEERS	8
#define IDLE_MS		3000
#define REQUESTS	500
#define MAXLEN		(600U << 10)	/* spans three of an RDM flow's parts */
#define PART_RDM	(256U << 10)	/* fi_sdr(7): what a connection maps */

struct side {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t peer;
};

static const char *ip0(void)
{
	const char *s = getenv("SDR_IP0");

	return s && *s ? s : "198.18.0.1";
}

/* An RDM endpoint on @dev with its CQ and AV, not enabled. */
static int side_prep(struct side *s, const char *dev)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr ava = { .type = FI_AV_TABLE };
	struct fi_info *hints = fi_allocinfo();

	hints->caps = FI_MSG | FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("sdr");
	hints->domain_attr->name = strdup(dev);
	if (fi_getinfo(FI_VER, NULL, NULL, 0, hints, &s->info))
		s->info = NULL;
	fi_freeinfo(hints);
	if (!s->info)
		return -1;
	if (fi_fabric(s->info->fabric_attr, &s->fabric, NULL) ||
	    fi_domain(s->fabric, s->info, &s->domain, NULL) ||
	    fi_endpoint(s->domain, s->info, &s->ep, NULL) ||
	    fi_cq_open(s->domain, &cqa, &s->cq, NULL) ||
	    fi_av_open(s->domain, &ava, &s->av, NULL) ||
	    fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV) ||
	    fi_ep_bind(s->ep, &s->av->fid, 0))
		return -1;
	return 0;
}

static void side_close(struct side *s)
{
	if (s->ep)
		fi_close(&s->ep->fid);
	if (s->av)
		fi_close(&s->av->fid);
	if (s->cq)
		fi_close(&s->cq->fid);
	if (s->domain)
		fi_close(&s->domain->fid);
	if (s->fabric)
		fi_close(&s->fabric->fid);
	if (s->info)
		fi_freeinfo(s->info);
	memset(s, 0, sizeof(*s));
}

/* Insert @b's address into @a's AV. */
static int know(struct side *a, struct side *b)
{
	struct sockaddr_in sin;
	size_t len = sizeof(sin);

	if (fi_getname(&b->ep->fid, &sin, &len))
		return -1;
	return fi_av_insert(a->av, &sin, 1, &a->peer, 0, NULL) == 1 ? 0 : -1;
}

static uint32_t opt(struct side *s, int name)
{
	uint32_t v = UINT32_MAX;
	size_t len = sizeof(v);

	if (fi_getopt(&s->ep->fid, FI_OPT_ENDPOINT, name, &v, &len))
		return UINT32_MAX;
	return v;
}

static int setopt(struct side *s, int name, uint32_t v)
{
	return fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, name, &v, sizeof(v));
}

/* The flows sdr holds on device @dev (its sysfs nr_flows). */
static int count_flows(const char *dev)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/nr_flows", dev);
	return (int)sysfs_u64_or(path, (uint64_t)-1);
}

/* Post a tagged send, retrying while the provider says -FI_EAGAIN. */
static ssize_t tsend(struct side *s, const void *buf, size_t len, uint64_t tag,
		     void *ctx)
{
	int64_t end = now_us() + 30 * 1000000LL;
	ssize_t ret;

	while ((ret = fi_tsend(s->ep, buf, len, NULL, s->peer, tag, ctx)) ==
	       -FI_EAGAIN && now_us() < end)
		usleep(500);
	return ret;
}

/* The echo exchange: its buffers and what it saw. */
struct xchg {
	struct side *cli, *srv;
	uint8_t *cbuf, *crbuf, *sbuf;
	uint32_t rounds, bad;
	/* the server's peak, over the rounds: its counter, its flows */
	uint32_t peers_max;
	int flows_max;
};

/* What a completion's context says it is. */
static char ctx_cs, ctx_cr, ctx_ss, ctx_sr;

/*
 * Read what @s's CQ holds, marking @done[] by context (cs cr ss sr);
 * an error entry counts as bad.  Returns the server's received length
 * (its receive done just now), or -1.
 */
static long drain(struct xchg *x, struct side *s, bool done[4])
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	long got = -1;
	ssize_t ret;

	while ((ret = fi_cq_read(s->cq, &e, 1)) == 1 || ret == -FI_EAVAIL) {
		if (ret == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_cq_readerr(s->cq, &err, 0);
			TH_LOG("round %u: error completion %s", x->rounds,
			       fi_strerror(err.err));
			x->bad++;
			e.op_context = err.op_context;
		}
		if (e.op_context == &ctx_cs)
			done[0] = true;
		else if (e.op_context == &ctx_cr)
			done[1] = true;
		else if (e.op_context == &ctx_ss)
			done[2] = true;
		else if (e.op_context == &ctx_sr) {
			done[3] = true;
			got = ret == 1 ? (long)e.len : -1;
		}
	}
	return got;
}

/*
 * One round: the client sends message @x->rounds (its own length and
 * bytes), the server checks it and echoes it, the client checks the echo.
 * Returns 0, or -1 (counted in bad) if anything was lost, wrong or late.
 */
static int round_trip(struct xchg *x)
{
	uint32_t i = x->rounds++;
	size_t len = 1 + (size_t)i * 104729 % MAXLEN;
	uint64_t want, tag = 0x100000000ULL | i;
	bool done[4] = { false, false, false, false };
	int64_t end = now_us() + 30 * 1000000LL;
	uint32_t peers;
	int flows;

	random_fill(x->cbuf, len, 0x5eed0000ULL + i);
	want = hash64(x->cbuf, len);
	memset(x->crbuf, 0, len);
	if (fi_trecv(x->srv->ep, x->sbuf, MAXLEN, NULL, FI_ADDR_UNSPEC, tag,
		     0, &ctx_sr) ||
	    fi_trecv(x->cli->ep, x->crbuf, MAXLEN, NULL, FI_ADDR_UNSPEC,
		     tag | 1ULL << 40, 0, &ctx_cr) ||
	    tsend(x->cli, x->cbuf, len, tag, &ctx_cs)) {
		x->bad++;
		return -1;
	}
	while (!(done[0] && done[1] && done[2] && done[3]) &&
	       now_us() < end) {
		long got;

		drain(x, x->cli, done);
		got = drain(x, x->srv, done);
		if (got >= 0) {
			if ((size_t)got != len || hash64(x->sbuf, len) != want) {
				TH_LOG("round %u: the server got %ld bytes of %zu, or other bytes",
				       i, got, len);
				x->bad++;
			}
			if (tsend(x->srv, x->sbuf, len, tag | 1ULL << 40,
				  &ctx_ss)) {
				x->bad++;
				return -1;
			}
		}
		usleep(100);
	}
	peers = opt(x->srv, FI_OPT_SDR_PEERS);
	flows = count_flows(dev1());
	if (peers > x->peers_max)
		x->peers_max = peers;
	if (flows > x->flows_max)
		x->flows_max = flows;
	if (!(done[0] && done[1] && done[2] && done[3])) {
		TH_LOG("round %u: not done in 30 s (%d%d%d%d)", i, done[0],
		       done[1], done[2], done[3]);
		x->bad++;
		return -1;
	}
	if (hash64(x->crbuf, len) != want) {
		TH_LOG("round %u: the echo differs", i);
		x->bad++;
		return -1;
	}
	return 0;
}

/* What a hostile requester reports when its requests are out. */
struct hostile_report {
	uint32_t sent, accepted, refused, other;
};

/*
 * The hostile requester (a child): @n requests to @to as fast as they
 * go, each a flow of registered memory only (no regions: nothing to it)
 * with the geometry the provider's RDM flows have, so that the server's
 * sdr connects them; each accepted flow is kept, silent.  It reports on
 * @wfd, then holds its flows until @rfd closes, and exits (its flows
 * destroyed: the peer is told).
 */
static void hostile(const struct sockaddr_in *to, uint32_t n, int wfd, int rfd)
{
	struct sdr_ctx_attr ca = { .cq_entries = 65536 };
	struct sdr_flow_attr fa = {
		.policy = SDR_POLICY_SR,
		.max_msg_size = 32 + PART_RDM,	/* the header, a part */
		.max_msgs = 16,
		.flags = SDR_FLOW_CREATE_MR,
	};
	struct hostile_report r = { 0 };
	char dst[INET_ADDRSTRLEN], c;
	struct sdr_ctx *ctx;
	uint32_t i;

	inet_ntop(AF_INET, &to->sin_addr, dst, sizeof(dst));
	ctx = sdr_open(dev0(), &ca);
	if (!ctx)
		_exit(2);
	for (i = 0; i < n; i++) {
		struct sdr_flow *f = sdr_flow_create(ctx, &fa);
		struct sdr_cm *cm;
		int ret;

		if (!f) {
			r.other++;
			continue;
		}
		r.sent++;
		ret = sdr_cm_resolve(ip0(), dst, ntohs(to->sin_port), 10000,
				     &cm);
		if (!ret) {
			ret = sdr_cm_connect(cm, f, 10000);
			sdr_cm_destroy(cm);
		}
		if (!ret) {
			r.accepted++;
			continue;	/* kept */
		}
		if (ret == -ECONNREFUSED)
			r.refused++;
		else
			r.other++;
		sdr_flow_destroy(f);
	}
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(3);
	while (read(rfd, &c, 1) > 0)
		;
	sdr_close(ctx);
	_exit(0);
}

struct child {
	pid_t pid;
	int rfd, wfd;		/* its report; its go (close: exit) */
};

static int hostile_start(struct child *ch, struct side *srv, uint32_t n)
{
	struct sockaddr_in sin;
	size_t len = sizeof(sin);
	int rep[2], go[2];

	if (fi_getname(&srv->ep->fid, &sin, &len) || pipe(rep) || pipe(go))
		return -1;
	ch->pid = fork();
	if (ch->pid < 0)
		return -1;
	if (!ch->pid) {
		close(rep[0]);
		close(go[1]);
		hostile(&sin, n, rep[1], go[0]);
	}
	close(rep[1]);
	close(go[0]);
	ch->rfd = rep[0];
	ch->wfd = go[1];
	return 0;
}

/* Has the requester reported?  1 (in @r), 0 not yet, -1 it failed. */
static int hostile_report(struct child *ch, struct hostile_report *r)
{
	struct pollfd p = { .fd = ch->rfd, .events = POLLIN };

	if (poll(&p, 1, 0) <= 0)
		return 0;
	return read(ch->rfd, r, sizeof(*r)) == sizeof(*r) ? 1 : -1;
}

/* Let the requester exit (its flows destroyed) and reap it: its status. */
static int hostile_end(struct child *ch)
{
	int status;

	close(ch->wfd);
	close(ch->rfd);
	if (waitpid(ch->pid, &status, 0) != ch->pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Rounds until the server holds @peers accepted connections or @ms pass:
 * how long it took (ms), or -1.  The rounds are checked as ever.
 */
static int64_t rounds_until_peers(struct xchg *x, uint32_t peers, int ms)
{
	int64_t t0 = now_us(), end = t0 + (int64_t)ms * 1000;

	while (now_us() < end) {
		if (round_trip(x))
			return -1;
		if (opt(x->srv, FI_OPT_SDR_PEERS) == peers)
			return (now_us() - t0) / 1000;
		usleep(20000);
	}
	return -1;
}

TEST_T(flood_is_bounded_and_reclaimed, 500)
{
	struct side cli = { 0 }, srv = { 0 };
	struct hostile_report r;
	struct xchg x = { .cli = &cli, .srv = &srv };
	uint32_t before, reclaimed0, refused;
	int64_t t0, took;
	struct child ch;
	char path[512];
	int ret, i;

	snprintf(path, sizeof(path), "%s/provider", SDR_TOP);
	setenv("FI_PROVIDER_PATH", path, 1);
	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	/* the environment's limits, for every endpoint */
	setenv("FI_SDR_MAX_PEERS", "6", 1);
	setenv("FI_SDR_IDLE_MS", "3000", 1);
	ASSERT_EQ(side_prep(&srv, dev1()), 0);
	ASSERT_EQ(side_prep(&cli, dev0()), 0);
	EXPECT_EQ(opt(&srv, FI_OPT_SDR_MAX_PEERS), 6);
	EXPECT_EQ(opt(&srv, FI_OPT_SDR_IDLE_MS), IDLE_MS);
	/* fi_setopt() before fi_enable() overrides it, not after */
	ASSERT_EQ(setopt(&srv, FI_OPT_SDR_MAX_PEERS, MAX_PEERS), 0);
	EXPECT_EQ(opt(&srv, FI_OPT_SDR_MAX_PEERS), MAX_PEERS);
	ASSERT_EQ(fi_enable(srv.ep), 0);
	ASSERT_EQ(fi_enable(cli.ep), 0);
	EXPECT_EQ(setopt(&srv, FI_OPT_SDR_MAX_PEERS, 9), -FI_EOPBADSTATE);
	EXPECT_EQ(setopt(&srv, FI_OPT_SDR_PEERS, 0), -FI_EINVAL);
	ASSERT_EQ(know(&cli, &srv), 0);
	ASSERT_EQ(know(&srv, &cli), 0);
	x.cbuf = malloc(MAXLEN);
	x.crbuf = malloc(MAXLEN);
	x.sbuf = malloc(MAXLEN);
	ASSERT_TRUE(x.cbuf && x.crbuf && x.sbuf);

	for (i = 0; i < 4; i++)
		ASSERT_EQ(round_trip(&x), 0);
	EXPECT_EQ(opt(&srv, FI_OPT_SDR_PEERS), 1);
	reclaimed0 = opt(&srv, FI_OPT_SDR_RECLAIMED);

	/* the flood, the exchange going on meanwhile */
	x.peers_max = 0;
	x.flows_max = 0;
	before = x.rounds;
	t0 = now_us();
	ASSERT_EQ(hostile_start(&ch, &srv, REQUESTS), 0);
	while (!(ret = hostile_report(&ch, &r)))
		if (round_trip(&x))
			break;
	ASSERT_EQ(ret, 1);
	refused = opt(&srv, FI_OPT_SDR_REFUSED);
	TH_LOG("flood: %u requests in %lld ms: %u accepted, %u refused, %u other; server: %u refused, %u reclaimed, at most %u peers, %d flows on %s; %u rounds, %u bad",
	       r.sent, (long long)(now_us() - t0) / 1000, r.accepted,
	       r.refused, r.other, refused,
	       opt(&srv, FI_OPT_SDR_RECLAIMED) - reclaimed0, x.peers_max,
	       x.flows_max, dev1(), x.rounds - before, x.bad);
	EXPECT_EQ(r.sent, REQUESTS);
	EXPECT_EQ(r.other, 0);
	EXPECT_EQ(r.accepted + r.refused, r.sent);
	/* every refusal the requester saw the server counted */
	EXPECT_EQ(refused, r.refused);
	EXPECT_GT(r.refused, 0);
	EXPECT_LE(x.peers_max, MAX_PEERS);
	/* the server's flows: its accepted ones, and its own to the client */
	EXPECT_LE(x.flows_max, MAX_PEERS + 1);
	EXPECT_GT(x.rounds - before, 0);
	EXPECT_EQ(x.bad, 0);

	/* the requester silent, its flows kept: idle reclaim takes them */
	before = opt(&srv, FI_OPT_SDR_PEERS);
	took = rounds_until_peers(&x, 1, IDLE_MS + 5000);
	TH_LOG("idle: %u peers to 1 in %lld ms (idle time %d ms)", before,
	       (long long)took, IDLE_MS);
	EXPECT_GE(took, 0);
	EXPECT_EQ(opt(&srv, FI_OPT_SDR_PEERS), 1);
	EXPECT_EQ(count_flows(dev1()), 2);
	EXPECT_EQ(x.bad, 0);
	EXPECT_EQ(hostile_end(&ch), 0);

	/* peers that go (the requester exits) are reclaimed, not idle */
	ASSERT_EQ(hostile_start(&ch, &srv, 5), 0);
	while (!(ret = hostile_report(&ch, &r)))
		usleep(10000);
	ASSERT_EQ(ret, 1);
	EXPECT_EQ(r.accepted, 5);
	EXPECT_EQ(opt(&srv, FI_OPT_SDR_PEERS), 6);
	EXPECT_EQ(hostile_end(&ch), 0);
	took = rounds_until_peers(&x, 1, IDLE_MS - 500);
	TH_LOG("dead: 6 peers to 1 in %lld ms", (long long)took);
	EXPECT_GE(took, 0);
	EXPECT_EQ(x.bad, 0);

	/* quiet past the idle time: both ends reclaim, then connect anew */
	before = opt(&srv, FI_OPT_SDR_RECLAIMED);
	usleep((IDLE_MS + 1500) * 1000);
	EXPECT_EQ(opt(&srv, FI_OPT_SDR_PEERS), 0);
	EXPECT_EQ(opt(&cli, FI_OPT_SDR_PEERS), 0);
	EXPECT_GE(opt(&srv, FI_OPT_SDR_RECLAIMED) - before, 2);
	EXPECT_EQ(count_flows(dev1()), 0);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(round_trip(&x), 0);
	EXPECT_EQ(opt(&srv, FI_OPT_SDR_PEERS), 1);
	EXPECT_EQ(x.bad, 0);
	TH_LOG("%u rounds, every byte checked both ways", x.rounds);

	free(x.cbuf);
	free(x.crbuf);
	free(x.sbuf);
	side_close(&cli);
	side_close(&srv);
}

/*
 * Sends in flight to a peer whose endpoint closes: each completes, the
 * ones the peer never had with an error entry, and nothing hangs.
 */
TEST_T(sends_to_a_peer_that_goes_complete, 120)
{
	struct side cli = { 0 }, srv = { 0 };
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	static char ctx[8];
	int64_t end;
	uint8_t *buf;
	int ok = 0, failed = 0, i;
	char path[512];

	snprintf(path, sizeof(path), "%s/provider", SDR_TOP);
	setenv("FI_PROVIDER_PATH", path, 1);
	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	ASSERT_EQ(side_prep(&srv, dev1()), 0);
	ASSERT_EQ(side_prep(&cli, dev0()), 0);
	ASSERT_EQ(fi_enable(srv.ep), 0);
	ASSERT_EQ(fi_enable(cli.ep), 0);
	ASSERT_EQ(know(&cli, &srv), 0);
	buf = malloc(1U << 20);
	ASSERT_TRUE(buf);
	random_fill(buf, 1U << 20, 7);
	/* 8 MiB: more parts than the server's flow holds unread */
	for (i = 0; i < 8; i++)
		ASSERT_EQ(tsend(&cli, buf, 1U << 20, i, &ctx[i]), 0);
	for (end = now_us() + 2000000; now_us() < end;) {
		ssize_t ret = fi_cq_read(cli.cq, &e, 1);

		if (ret == 1)
			ok++;
		else if (ret == -FI_EAVAIL && fi_cq_readerr(cli.cq, &err, 0) == 1)
			failed++;
		usleep(1000);
	}
	side_close(&srv);
	for (end = now_us() + 60000000; ok + failed < 8 && now_us() < end;) {
		ssize_t ret = fi_cq_read(cli.cq, &e, 1);

		if (ret == 1) {
			ok++;
		} else if (ret == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			if (fi_cq_readerr(cli.cq, &err, 0) == 1) {
				failed++;
				EXPECT_EQ(err.err, FI_EIO);
			}
		} else {
			usleep(2000);
		}
	}
	TH_LOG("8 sends of 1 MiB: %d complete, %d failed once the peer went",
	       ok, failed);
	EXPECT_EQ(ok + failed, 8);
	EXPECT_GT(failed, 0);
	/* the dead connection is gone: a send to the closed endpoint fails */
	EXPECT_EQ(opt(&cli, FI_OPT_SDR_RECLAIMED), 1);
	free(buf);
	side_close(&cli);
}
