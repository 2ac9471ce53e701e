// SPDX-License-Identifier: GPL-2.0
/*
 * t_fabric: the libfabric provider sdr (provider/, fi_sdr(7)) through
 * libfabric's own API, two RDM endpoints in one process, one on each of
 * the VM's devices.  fi_getinfo() offers what the provider does (RDM and
 * DGRAM endpoints) and refuses what it does not; messages of every size
 * up to the maximum arrive whole (hashed) and in the order they were
 * sent; small messages sent back to back share sdr messages; datagrams
 * arrive whole or not at all, in order; tagged receives
 * match under their ignore bits, also messages that came before their
 * receive (unexpected); a short receive completes FI_ETRUNC with the
 * overflow in olen; a cancelled receive completes FI_ECANCELED; remote CQ
 * data arrives; CQ wait objects sleep and wake; FI_PEEK, FI_CLAIM and
 * FI_DISCARD work on waiting
 * messages; both endpoints send to each other at once, each connecting
 * while the other does; the address vector inserts, looks up, prints and
 * removes;
 * bad calls get their error codes; a send to an address no endpoint
 * listens on fails, and nothing hangs.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "fi_ext_sdr.h"
#include "harness.h"
#include "util.h"

#define MAX_MSG		(1ULL << 30)	/* what the provider says */
#define PART		(1U << 20)	/* its parts */
#define BUF		(4U << 20)	/* the fixture's buffers */
#define FI_VER		FI_VERSION(1, 17)

struct side {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_cntr *tx_cntr, *rx_cntr;	/* side_open_cntr() */
	fi_addr_t peer;
};

/* The provider's fi_info for device @dev, endpoints of @type. */
static struct fi_info *info_of(const char *dev, uint64_t caps,
			       enum fi_ep_type type)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;

	hints->caps = caps;
	hints->ep_attr->type = type;
	hints->fabric_attr->prov_name = strdup("sdr");
	hints->domain_attr->name = strdup(dev);
	if (fi_getinfo(FI_VER, NULL, NULL, 0, hints, &info))
		info = NULL;
	fi_freeinfo(hints);
	return info;
}

/* An endpoint of @type on @dev with its CQ, AV (counters), not enabled. */
static int side_prep(struct side *s, const char *dev,
		     enum fi_wait_obj wait, bool cntrs, enum fi_ep_type type)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_TAGGED,
				  .wait_obj = wait };
	struct fi_av_attr ava = { .type = FI_AV_TABLE };
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP,
				   .wait_obj = FI_WAIT_UNSPEC };

	s->info = info_of(dev, FI_MSG | FI_TAGGED | FI_DIRECTED_RECV |
			  FI_SOURCE, type);
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
	if (cntrs && (fi_cntr_open(s->domain, &ca, &s->tx_cntr, NULL) ||
		      fi_cntr_open(s->domain, &ca, &s->rx_cntr, NULL) ||
		      fi_ep_bind(s->ep, &s->tx_cntr->fid, FI_SEND) ||
		      fi_ep_bind(s->ep, &s->rx_cntr->fid, FI_RECV)))
		return -1;
	return 0;
}

static int side_open_x(struct side *s, const char *dev,
		       enum fi_wait_obj wait, bool cntrs, enum fi_ep_type type)
{
	if (side_prep(s, dev, wait, cntrs, type))
		return -1;
	return fi_enable(s->ep) ? -1 : 0;
}

static int side_open_c(struct side *s, const char *dev,
		       enum fi_wait_obj wait, bool cntrs)
{
	return side_open_x(s, dev, wait, cntrs, FI_EP_RDM);
}

static int side_open_w(struct side *s, const char *dev,
		       enum fi_wait_obj wait)
{
	return side_open_c(s, dev, wait, false);
}

static int side_open(struct side *s, const char *dev)
{
	return side_open_w(s, dev, FI_WAIT_NONE);
}

static void side_close(struct side *s)
{
	if (s->ep)
		fi_close(&s->ep->fid);
	if (s->tx_cntr)
		fi_close(&s->tx_cntr->fid);
	if (s->rx_cntr)
		fi_close(&s->rx_cntr->fid);
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

/* Device @dev's sdr messages sent, all its flows' (sysfs). */
static uint64_t msgs_sent(const char *dev)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/counters/msgs_sent",
		 dev);
	return sysfs_u64_or(path, 0);
}

/* The flows sdr holds on device @dev (its sysfs nr_flows). */
static int count_flows(const char *dev)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/nr_flows", dev);
	return (int)sysfs_u64_or(path, (uint64_t)-1);
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

/*
 * The next completion of @s's CQ within @ms: 1 (in @e, its sender in @src
 * unless NULL: fi_cq_readfrom()), -FI_EAVAIL (the error entry in @err), 0
 * on timeout.
 */
static int next_comp_from(struct side *s, struct fi_cq_tagged_entry *e,
			  struct fi_cq_err_entry *err, int ms, fi_addr_t *src)
{
	int64_t end = now_us() + (int64_t)ms * 1000;
	ssize_t ret;

	do {
		ret = fi_cq_readfrom(s->cq, e, 1, src);
		if (ret == 1)
			return 1;
		if (ret == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			if (fi_cq_readerr(s->cq, err, 0) != 1)
				return -1;
			return -FI_EAVAIL;
		}
		if (ret != -FI_EAGAIN)
			return -1;
		usleep(200);
	} while (now_us() < end);
	return 0;
}

static int next_comp(struct side *s, struct fi_cq_tagged_entry *e,
		     struct fi_cq_err_entry *err, int ms)
{
	return next_comp_from(s, e, err, ms, NULL);
}

/*
 * @n bytes of @s's send buffer to its peer @r, into @r's receive buffer:
 * both completions seen (1 each), else what next_comp() said.
 */
static int deliver(struct side *s, const void *sbuf, struct side *r,
		   void *rbuf, size_t n)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int ret;

	if (fi_recv(r->ep, rbuf, n, NULL, FI_ADDR_UNSPEC, NULL) ||
	    fi_send(s->ep, sbuf, n, NULL, s->peer, NULL))
		return -1;
	ret = next_comp(r, &e, &err, 30000);
	return ret == 1 ? next_comp(s, &e, &err, 30000) : ret;
}

/* Post a send, retrying while the provider says -FI_EAGAIN. */
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

FIXTURE(fab) {
	struct side a, b;	/* a on dev0 sends, b on dev1 receives */
	uint8_t *sbuf, *rbuf;
};

FIXTURE_SETUP(fab)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/provider", SDR_TOP);
	setenv("FI_PROVIDER_PATH", path, 1);
	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	ASSERT_EQ(side_open(&self->a, dev0()), 0);
	ASSERT_EQ(side_open(&self->b, dev1()), 0);
	ASSERT_EQ(know(&self->a, &self->b), 0);
	ASSERT_EQ(know(&self->b, &self->a), 0);
	self->sbuf = malloc(BUF);
	self->rbuf = malloc(BUF);
	ASSERT_TRUE(self->sbuf && self->rbuf);
}

FIXTURE_TEARDOWN(fab)
{
	side_close(&self->a);
	side_close(&self->b);
	free(self->sbuf);
	free(self->rbuf);
}

TEST(getinfo_offers_rdm_and_dgram_and_refuses_the_rest)
{
	struct fi_info *hints, *info = NULL, *i;
	char path[512];
	int rdm = 0, dgram = 0;

	snprintf(path, sizeof(path), "%s/provider", SDR_TOP);
	setenv("FI_PROVIDER_PATH", path, 1);
	hints = fi_allocinfo();
	hints->fabric_attr->prov_name = strdup("sdr");
	ASSERT_EQ(fi_getinfo(FI_VER, NULL, NULL, 0, hints, &info), 0);
	for (i = info; i; i = i->next) {
		/* the native entries only: no utility provider on top */
		EXPECT_EQ(strcmp(i->fabric_attr->prov_name, "sdr"), 0);
		EXPECT_TRUE(i->ep_attr->type == FI_EP_RDM ||
			    i->ep_attr->type == FI_EP_DGRAM);
		EXPECT_EQ(i->addr_format, FI_SOCKADDR_IN);
		EXPECT_TRUE((i->caps & (FI_MSG | FI_TAGGED)) ==
			    (FI_MSG | FI_TAGGED));
		EXPECT_EQ(i->ep_attr->max_msg_size,
			  i->ep_attr->type == FI_EP_RDM ? MAX_MSG : PART);
		EXPECT_EQ(i->domain_attr->mr_mode, 0);
		TH_LOG("offered: %s %s %s", i->fabric_attr->prov_name,
		       i->domain_attr->name, fi_tostr(&i->ep_attr->type,
						      FI_TYPE_EP_TYPE));
		rdm += i->ep_attr->type == FI_EP_RDM;
		dgram += i->ep_attr->type == FI_EP_DGRAM;
	}
	EXPECT_GE(rdm, 2);
	EXPECT_EQ(dgram, rdm);
	fi_freeinfo(info);

	/* what it does not do: RMA, connected endpoints */
	hints->caps = FI_MSG | FI_RMA;
	EXPECT_EQ(fi_getinfo(FI_VER, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_MSG;
	EXPECT_EQ(fi_getinfo(FI_VER, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	/* datagrams: one part at most */
	hints->ep_attr->type = FI_EP_DGRAM;
	hints->ep_attr->max_msg_size = PART + 1;
	EXPECT_EQ(fi_getinfo(FI_VER, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	hints->ep_attr->max_msg_size = 0;
	/* a device that is not there */
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->name = strdup("nosuchdev");
	EXPECT_EQ(fi_getinfo(FI_VER, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	/* only FI_MSG asked: FI_TAGGED is not offered */
	free(hints->domain_attr->name);
	hints->domain_attr->name = strdup(dev0());
	ASSERT_EQ(fi_getinfo(FI_VER, NULL, NULL, 0, hints, &info), 0);
	EXPECT_FALSE(info->caps & FI_TAGGED);
	EXPECT_EQ(strcmp(info->domain_attr->name, dev0()), 0);
	EXPECT_EQ(info->next, NULL);
	fi_freeinfo(info);
	/* FI_EP_DGRAM asked: that only */
	hints->ep_attr->type = FI_EP_DGRAM;
	ASSERT_EQ(fi_getinfo(FI_VER, NULL, NULL, 0, hints, &info), 0);
	EXPECT_EQ(info->ep_attr->type, FI_EP_DGRAM);
	EXPECT_EQ(info->ep_attr->max_msg_size, PART);
	EXPECT_EQ(info->next, NULL);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/*
 * 48 messages of sizes from 0 to three parts and more, random bytes, sent
 * back to back (each from its own buffer, which is the provider's until
 * the send completes) while the receiver progresses (manual progress:
 * reading its CQ is what recycles its flow's receive slots): each arrives
 * whole (its hash), in the order sent.
 */
TEST_F_T(fab, messages_whole_and_in_order, 240)
{
	static const uint32_t sizes[] = { 0, 1, 63, 64, 4015, 4016, 4017,
					  65536, 300007, PART - 1, PART,
					  PART + 1, 3 * PART + 5 };
	enum { N = 48, NS = sizeof(sizes) / sizeof(sizes[0]) };
	uint64_t want[N];
	uint32_t len[N], sent = 0, done_tx = 0, done_rx = 0, i;
	uint8_t *sb[N], *rb[N];
	int64_t end = now_us() + 200 * 1000000LL;

	for (i = 0; i < N; i++) {
		len[i] = i < NS ? sizes[i] : (uint32_t)((i * 2654435761U) %
							(2 * PART + 3));
		sb[i] = malloc(len[i] + 1);
		rb[i] = malloc(len[i] + 1);
		ASSERT_TRUE(sb[i] && rb[i]);
		random_fill(sb[i], len[i], 1000 + i);
		want[i] = fnv1a(sb[i], len[i]);
		ASSERT_EQ(fi_trecv(self->b.ep, rb[i], len[i], NULL,
				   FI_ADDR_UNSPEC, 7, 0,
				   (void *)(uintptr_t)(i + 1)), 0);
	}
	while (done_tx < N || done_rx < N) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err;
		ssize_t ret;
		int r;

		ASSERT_LT(now_us(), end);
		if (sent < N) {
			ret = fi_tsend(self->a.ep, sb[sent], len[sent], NULL,
				       self->a.peer, 7,
				       (void *)(uintptr_t)(sent + 1));
			ASSERT_TRUE(ret == 0 || ret == -FI_EAGAIN);
			sent += !ret;
		}
		while ((r = next_comp(&self->a, &e, &err, 0)) == 1) {
			EXPECT_TRUE(e.flags & FI_SEND);
			done_tx++;
		}
		ASSERT_EQ(r, 0);
		r = next_comp(&self->b, &e, &err, sent < N ? 0 : 5);
		if (r == -FI_EAVAIL)
			TH_LOG("rx error %d (%s)", err.err, fi_strerror(err.err));
		ASSERT_GE(r, 0);
		if (!r)
			continue;
		i = done_rx++;
		/* receives are taken in order, by messages in order */
		ASSERT_EQ((uintptr_t)e.op_context, i + 1);
		EXPECT_EQ(e.len, len[i]);
		EXPECT_EQ(e.tag, 7);
		EXPECT_TRUE((e.flags & (FI_RECV | FI_TAGGED)) ==
			    (FI_RECV | FI_TAGGED));
		EXPECT_EQ(fnv1a(rb[i], e.len), want[i]);
	}
	TH_LOG("%u messages sent and received in order, hashes checked",
	       done_rx);
	for (i = 0; i < N; i++) {
		free(sb[i]);
		free(rb[i]);
	}
}

/*
 * Completion counters: a's sends and b's receives count there, with or
 * without CQ entries; a truncated receive counts as an error (and makes
 * a waiter return -FI_EAVAIL); set, add, seterr, adderr; a wait past its
 * time is -FI_ETIMEDOUT; a bound counter cannot be closed.
 */
TEST_F_T(fab, counters, 120)
{
	struct side c = { 0 }, d = { 0 };
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int i, fd = -1;

	ASSERT_EQ(side_open_c(&c, dev0(), FI_WAIT_NONE, true), 0);
	ASSERT_EQ(side_open_c(&d, dev1(), FI_WAIT_NONE, true), 0);
	ASSERT_EQ(know(&c, &d), 0);
	ASSERT_EQ(know(&d, &c), 0);
	EXPECT_EQ(fi_control(&c.tx_cntr->fid, FI_GETWAIT, &fd), 0);
	EXPECT_GE(fd, 0);
	EXPECT_EQ(fi_close(&c.tx_cntr->fid), -FI_EBUSY);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(fi_trecv(d.ep, self->rbuf + i * 1000, 1000, NULL,
				   FI_ADDR_UNSPEC, 3, 0, NULL), 0);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(tsend(&c, self->sbuf, 1000, 3, NULL), 0);
	ASSERT_EQ(fi_tinject(c.ep, self->sbuf, 100, c.peer, 3), 0);
	EXPECT_EQ(fi_cntr_wait(d.rx_cntr, 5, 30000), 0);
	EXPECT_EQ(fi_cntr_wait(c.tx_cntr, 5, 30000), 0);
	EXPECT_EQ(fi_cntr_read(c.tx_cntr), 5);
	EXPECT_EQ(fi_cntr_read(d.rx_cntr), 5);
	EXPECT_EQ(fi_cntr_readerr(d.rx_cntr), 0);
	EXPECT_EQ(fi_cntr_read(c.rx_cntr), 0);
	/* the CQ has the four sends (not the inject) and five receives */
	for (i = 0; i < 4; i++)
		EXPECT_EQ(next_comp(&c, &e, &err, 1000), 1);
	EXPECT_EQ(next_comp(&c, &e, &err, 0), 0);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(next_comp(&d, &e, &err, 1000), 1);
	/* a truncated receive: an error, and a waiter sees it */
	ASSERT_EQ(fi_trecv(d.ep, self->rbuf, 10, NULL, FI_ADDR_UNSPEC, 3, 0,
			   NULL), 0);
	ASSERT_EQ(tsend(&c, self->sbuf, 1000, 3, NULL), 0);
	EXPECT_EQ(fi_cntr_wait(d.rx_cntr, 6, 30000), -FI_EAVAIL);
	EXPECT_EQ(fi_cntr_readerr(d.rx_cntr), 1);
	EXPECT_EQ(fi_cntr_read(d.rx_cntr), 5);
	EXPECT_EQ(next_comp(&d, &e, &err, 1000), -FI_EAVAIL);
	EXPECT_EQ(err.err, FI_ETRUNC);
	/* nothing more comes: a wait times out */
	EXPECT_EQ(fi_cntr_wait(d.rx_cntr, 6, 300), -FI_ETIMEDOUT);
	EXPECT_EQ(fi_cntr_set(d.rx_cntr, 40), 0);
	EXPECT_EQ(fi_cntr_add(d.rx_cntr, 2), 0);
	EXPECT_EQ(fi_cntr_read(d.rx_cntr), 42);
	EXPECT_EQ(fi_cntr_wait(d.rx_cntr, 42, 0), 0);
	EXPECT_EQ(fi_cntr_seterr(d.rx_cntr, 7), 0);
	EXPECT_EQ(fi_cntr_adderr(d.rx_cntr, 1), 0);
	EXPECT_EQ(fi_cntr_readerr(d.rx_cntr), 8);
	side_close(&c);
	side_close(&d);
}

/*
 * A message of several parts that comes before its receive is kept whole
 * (FI_PEEK sees its full length) and lands in the receive posted later; one
 * into a receive too short completes FI_ETRUNC with the rest in olen, and
 * the message after it is intact.
 */
TEST_F_T(fab, long_unexpected_and_truncated, 120)
{
	const uint32_t n = 3 * PART + 77;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	uint64_t want;
	int r, i;

	random_fill(self->sbuf, n, 42);
	want = fnv1a(self->sbuf, n);
	ASSERT_EQ(tsend(&self->a, self->sbuf, n, 0x51, NULL), 0);
	ASSERT_EQ(next_comp(&self->a, &e, &err, 30000), 1);
	/* it is all here before any receive: PEEK says so */
	struct iovec iov = { self->rbuf, n };
	struct fi_msg_tagged m = { .msg_iov = &iov, .iov_count = 1,
				   .addr = FI_ADDR_UNSPEC, .tag = 0x51,
				   .context = (void *)1 };
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(fi_trecvmsg(self->b.ep, &m, FI_PEEK), 0);
		r = next_comp(&self->b, &e, &err, 1000);
		if (r == 1)
			break;
		ASSERT_EQ(r, -FI_EAVAIL);
		ASSERT_EQ(err.err, FI_ENOMSG);
	}
	ASSERT_EQ(r, 1);
	EXPECT_EQ(e.len, n);
	memset(self->rbuf, 0, n);
	ASSERT_EQ(fi_trecv(self->b.ep, self->rbuf, n, NULL, FI_ADDR_UNSPEC,
			   0x51, 0, (void *)2), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 30000), 1);
	EXPECT_EQ((uintptr_t)e.op_context, 2);
	EXPECT_EQ(e.len, n);
	EXPECT_EQ(fnv1a(self->rbuf, n), want);

	/* into a receive of 1.5 parts: truncated, then the next is whole */
	ASSERT_EQ(fi_trecv(self->b.ep, self->rbuf, PART + PART / 2, NULL,
			   FI_ADDR_UNSPEC, 0x52, 0, (void *)3), 0);
	ASSERT_EQ(fi_trecv(self->b.ep, self->rbuf + 2 * PART, 5000, NULL,
			   FI_ADDR_UNSPEC, 0x53, 0, (void *)4), 0);
	ASSERT_EQ(tsend(&self->a, self->sbuf, n, 0x52, NULL), 0);
	ASSERT_EQ(tsend(&self->a, self->sbuf + 1, 5000, 0x53, NULL), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 30000), -FI_EAVAIL);
	EXPECT_EQ(err.err, FI_ETRUNC);
	EXPECT_EQ((uintptr_t)err.op_context, 3);
	EXPECT_EQ(err.olen, n - (PART + PART / 2));
	EXPECT_EQ(fnv1a(self->rbuf, PART + PART / 2),
		  fnv1a(self->sbuf, PART + PART / 2));
	ASSERT_EQ(next_comp(&self->b, &e, &err, 30000), 1);
	EXPECT_EQ((uintptr_t)e.op_context, 4);
	EXPECT_EQ(e.len, 5000);
	EXPECT_EQ(fnv1a(self->rbuf + 2 * PART, 5000),
		  fnv1a(self->sbuf + 1, 5000));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(next_comp(&self->a, &e, &err, 30000), 1);
}

/*
 * FI_DIRECTED_RECV: a receive that names a source takes only that
 * endpoint's messages.  b knows a second address (no endpoint there); its
 * receive for that address stays posted while a's message goes to the
 * receive naming a, and is then cancelled.
 */
TEST_F_T(fab, directed_receive, 60)
{
	struct sockaddr_in other;
	size_t alen = sizeof(other);
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	fi_addr_t b_a = FI_ADDR_UNSPEC, b_other = FI_ADDR_UNSPEC;
	struct sockaddr_in sa;

	ASSERT_EQ(fi_getname(&self->a.ep->fid, &sa, &alen), 0);
	ASSERT_EQ(fi_av_insert(self->b.av, &sa, 1, &b_a, 0, NULL), 1);
	other = sa;
	other.sin_port = htons(ntohs(sa.sin_port) ^ 1);
	ASSERT_EQ(fi_av_insert(self->b.av, &other, 1, &b_other, 0, NULL), 1);
	ASSERT_EQ(fi_trecv(self->b.ep, self->rbuf, 64, NULL, b_other, 0x60, 0,
			   (void *)1), 0);
	ASSERT_EQ(fi_trecv(self->b.ep, self->rbuf + 64, 64, NULL, b_a, 0x60,
			   0, (void *)2), 0);
	memset(self->sbuf, 0x5a, 64);
	ASSERT_EQ(tsend(&self->a, self->sbuf, 64, 0x60, NULL), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 30000), 1);
	EXPECT_EQ((uintptr_t)e.op_context, 2);
	EXPECT_EQ(memcmp(self->rbuf + 64, self->sbuf, 64), 0);
	/* a second one: the receive for the other address still waits */
	ASSERT_EQ(tsend(&self->a, self->sbuf, 64, 0x60, NULL), 0);
	EXPECT_EQ(next_comp(&self->b, &e, &err, 500), 0);
	ASSERT_EQ(fi_cancel(&self->b.ep->fid, (void *)1), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 1000), -FI_EAVAIL);
	EXPECT_EQ(err.err, FI_ECANCELED);
	EXPECT_EQ((uintptr_t)err.op_context, 1);
	/* and a receive naming a, or any source, takes it */
	ASSERT_EQ(fi_trecv(self->b.ep, self->rbuf, 64, NULL, b_a, 0x60, 0,
			   (void *)3), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 30000), 1);
	EXPECT_EQ((uintptr_t)e.op_context, 3);
	/* a bad address is refused */
	EXPECT_EQ(fi_trecv(self->b.ep, self->rbuf, 64, NULL, 12345, 0x60, 0,
			   NULL), -FI_EINVAL);
}

/* Tags match under the receive's ignore bits; unexpected messages wait. */
TEST_F_T(fab, tags_ignore_bits_and_unexpected, 120)
{
	static const uint64_t tags[] = { 0x5, 0x12ab, 0x9900000000000001ULL };
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	uint8_t bufs[3][64];
	uint32_t i, got = 0;

	/* three messages before any receive is posted */
	for (i = 0; i < 3; i++) {
		memset(self->sbuf, 'a' + i, 64);
		ASSERT_EQ(tsend(&self->a, self->sbuf, 64, tags[i], NULL), 0);
	}
	for (i = 0; i < 3; i++)
		ASSERT_EQ(next_comp(&self->a, &e, &err, 30000), 1);
	/*
	 * Receives in another order: the third's tag under its ignore bits
	 * (the low 32 ignored), then 0x12xx, then exactly 0x5.
	 */
	ASSERT_EQ(fi_trecv(self->b.ep, bufs[2], 64, NULL, FI_ADDR_UNSPEC,
			   0x9900000012345678ULL, 0xffffffffULL, (void *)3), 0);
	ASSERT_EQ(fi_trecv(self->b.ep, bufs[1], 64, NULL, FI_ADDR_UNSPEC,
			   0x1200, 0xff, (void *)2), 0);
	ASSERT_EQ(fi_trecv(self->b.ep, bufs[0], 64, NULL, FI_ADDR_UNSPEC,
			   0x5, 0, (void *)1), 0);
	while (got < 3) {
		ASSERT_EQ(next_comp(&self->b, &e, &err, 30000), 1);
		i = (uint32_t)(uintptr_t)e.op_context - 1;
		ASSERT_LT(i, 3);
		EXPECT_EQ(e.tag, tags[i]);
		EXPECT_EQ(first_not(bufs[i], 'a' + i, 64), -1);
		got++;
	}
	/* a receive nothing matches stays posted; FI_MSG does not take tags */
	ASSERT_EQ(fi_trecv(self->b.ep, bufs[0], 64, NULL, FI_ADDR_UNSPEC,
			   0x77, 0, (void *)9), 0);
	ASSERT_EQ(fi_recv(self->b.ep, bufs[1], 64, NULL, FI_ADDR_UNSPEC,
			  (void *)10), 0);
	ASSERT_EQ(tsend(&self->a, self->sbuf, 64, 0x78, NULL), 0);
	ASSERT_EQ(next_comp(&self->a, &e, &err, 30000), 1);
	EXPECT_EQ(next_comp(&self->b, &e, &err, 1000), 0);
	/* a plain send goes to the plain receive */
	memset(self->sbuf, 'm', 64);
	ASSERT_EQ(fi_send(self->a.ep, self->sbuf, 64, NULL, self->a.peer,
			  NULL), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 30000), 1);
	EXPECT_EQ((uintptr_t)e.op_context, 10);
	EXPECT_TRUE(e.flags & FI_MSG);
	EXPECT_EQ(first_not(bufs[1], 'm', 64), -1);
	/* and 0x78 finds its receive once one is posted */
	ASSERT_EQ(fi_trecv(self->b.ep, bufs[2], 64, NULL, FI_ADDR_UNSPEC,
			   0x78, 0, (void *)11), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 30000), 1);
	EXPECT_EQ((uintptr_t)e.op_context, 11);
	EXPECT_EQ(e.tag, 0x78);
	/* the 0x77 one is still posted: cancelled, it completes so */
	EXPECT_EQ(fi_cancel(&self->b.ep->fid, (void *)9), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 1000), -FI_EAVAIL);
	EXPECT_EQ(err.err, FI_ECANCELED);
	EXPECT_EQ((uintptr_t)err.op_context, 9);
	EXPECT_EQ(fi_cancel(&self->b.ep->fid, (void *)9), -FI_ENOENT);
}

/* fi_setopt() of @name to @v (a uint32_t) on @s's endpoint. */
static int setopt_u32(struct side *s, int name, uint32_t v)
{
	return fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, name, &v, sizeof(v));
}

/* fi_getopt() of @name, or ~0 if it fails. */
static uint32_t getopt_u32(struct side *s, int name)
{
	uint32_t v;
	size_t len = sizeof(v);

	return fi_getopt(&s->ep->fid, FI_OPT_ENDPOINT, name, &v, &len) ||
	       len != sizeof(v) ? ~0U : v;
}

/* Device @dev's flow of policy @pol: its "K M" (ec_geometry) in @geo. */
static bool flow_with_policy(const char *dev, const char *pol, char *geo,
			     size_t n)
{
	char path[512], buf[64];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows", dev);
	d = opendir(path);
	while (d && !found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%s/policy",
			 dev, de->d_name);
		if (sysfs_str(path, buf, sizeof(buf)) || strcmp(buf, pol))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/class/sdr/%s/flows/%s/ec_geometry", dev,
			 de->d_name);
		found = !sysfs_str(path, geo, n);
	}
	if (d)
		closedir(d);
	return found;
}

/* @s sends @n tagged messages of 1000 bytes (byte i of message k is
 * k + i) to its peer; @r receives them, checked; all complete. */
static void group_traffic(struct side *s, struct side *r, uint32_t n,
			  uint64_t tag)
{
	static uint8_t sb[64][1000], rb[64][1000];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	uint32_t k, i, tx = 0, rx = 0;

	ASSERT_LE(n, 64);
	for (k = 0; k < n; k++) {
		for (i = 0; i < 1000; i++)
			sb[k][i] = (uint8_t)(k + i);
		ASSERT_EQ(fi_trecv(r->ep, rb[k], 1000, NULL, FI_ADDR_UNSPEC,
				   tag, 0, NULL), 0);
		ASSERT_EQ(tsend(s, sb[k], 1000, tag, NULL), 0);
	}
	int64_t end = now_us() + 30 * 1000000LL;

	while (tx < n || rx < n) {
		int a = next_comp(s, &e, &err, 0), b = next_comp(r, &e, &err, 5);

		ASSERT_GE(a, 0);
		ASSERT_GE(b, 0);
		ASSERT_LT(now_us(), end);
		tx += a;
		rx += b;
	}
	for (k = 0; k < n; k++)
		EXPECT_EQ(memcmp(rb[k], sb[k], 1000), 0);
}

/*
 * The provider's own endpoint options (fi_ext_sdr.h): policy and EC
 * geometry before fi_enable() (the flow the endpoint then creates has
 * them: sysfs), refused after it or out of range; groups after it: 300
 * groups opened and closed, a message in each (sdr holds at most 256 open
 * or completing a context: each must have been closed and its completion
 * taken), and one of 40 messages closed while most still queue; every
 * message arrives whole.
 */
TEST_T(endpoint_options, 180)
{
	struct side c = { 0 }, d = { 0 };
	char geo[32] = "", path[512];
	uint32_t v = 1, g, i;
	size_t len = 2;

	snprintf(path, sizeof(path), "%s/provider", SDR_TOP);
	setenv("FI_PROVIDER_PATH", path, 1);
	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	ASSERT_EQ(side_prep(&c, dev0(), FI_WAIT_NONE, false, FI_EP_RDM), 0);
	ASSERT_EQ(side_open(&d, dev1()), 0);
	/* before fi_enable(): the policy and EC's k and m */
	EXPECT_EQ(getopt_u32(&c, FI_OPT_SDR_POLICY), FI_SDR_POLICY_SR);
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_POLICY, 0), -FI_EINVAL);
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_POLICY, 99), -FI_EINVAL);
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_EC_K, 1000), -FI_EINVAL);
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_GROUP, 1), -FI_EOPBADSTATE);
	EXPECT_EQ(fi_setopt(&c.ep->fid, FI_OPT_ENDPOINT, FI_OPT_SDR_EC_M, &v,
			    len), -FI_EINVAL);
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_POLICY + 100, 1), -FI_ENOPROTOOPT);
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_POLICY, FI_SDR_POLICY_EC), 0);
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_EC_K, 8), 0);
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_EC_M, 2), 0);
	EXPECT_EQ(getopt_u32(&c, FI_OPT_SDR_POLICY), FI_SDR_POLICY_EC);
	EXPECT_EQ(getopt_u32(&c, FI_OPT_SDR_EC_K), 8);
	EXPECT_EQ(getopt_u32(&c, FI_OPT_SDR_EC_M), 2);
	ASSERT_EQ(fi_enable(c.ep), 0);
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_POLICY, FI_SDR_POLICY_SR),
		  -FI_EOPBADSTATE);
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_EC_K, 4), -FI_EOPBADSTATE);
	ASSERT_EQ(know(&c, &d), 0);
	group_traffic(&c, &d, 4, 0x51);
	EXPECT_TRUE(flow_with_policy(dev0(), "ec", geo, sizeof(geo)));
	TH_LOG("the endpoint's flow on %s: ec, ec_geometry %s", dev0(), geo);
	EXPECT_EQ(strcmp(geo, "8 2"), 0);

	/* groups: open, a message, close; 300 times */
	EXPECT_EQ(getopt_u32(&c, FI_OPT_SDR_GROUP), 0);
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_GROUP, 2), -FI_EINVAL);
	for (i = 0; i < 300; i++) {
		ASSERT_EQ(setopt_u32(&c, FI_OPT_SDR_GROUP, 1), 0);
		g = getopt_u32(&c, FI_OPT_SDR_GROUP);
		ASSERT_TRUE(g != 0 && g != ~0U);
		group_traffic(&c, &d, 1, 0x52);
		ASSERT_EQ(setopt_u32(&c, FI_OPT_SDR_GROUP, 0), 0);
		ASSERT_EQ(getopt_u32(&c, FI_OPT_SDR_GROUP), 0);
	}
	/* 40 messages, the group closed while most wait in the queue */
	ASSERT_EQ(setopt_u32(&c, FI_OPT_SDR_GROUP, 1), 0);
	{
		static uint8_t big[40][65536], rbig[40][65536];
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err;
		uint32_t tx = 0, rx = 0;

		for (i = 0; i < 40; i++) {
			memset(big[i], 'a' + i % 26, sizeof(big[i]));
			ASSERT_EQ(fi_trecv(d.ep, rbig[i], sizeof(rbig[i]), NULL,
					   FI_ADDR_UNSPEC, 0x53, 0, NULL), 0);
			ASSERT_EQ(tsend(&c, big[i], sizeof(big[i]), 0x53,
					NULL), 0);
		}
		int64_t end = now_us() + 60 * 1000000LL;

		ASSERT_EQ(setopt_u32(&c, FI_OPT_SDR_GROUP, 0), 0);
		while (tx < 40 || rx < 40) {
			int a = next_comp(&c, &e, &err, 0);
			int b = next_comp(&d, &e, &err, 20);

			ASSERT_GE(a, 0);
			ASSERT_GE(b, 0);
			ASSERT_LT(now_us(), end);
			tx += a;
			rx += b;
		}
		for (i = 0; i < 40; i++)
			EXPECT_EQ(first_not(rbig[i], 'a' + i % 26,
					    sizeof(rbig[i])), -1);
	}
	/* and a group after those */
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_GROUP, 1), 0);
	EXPECT_EQ(setopt_u32(&c, FI_OPT_SDR_GROUP, 0), 0);
	side_close(&c);
	side_close(&d);
}

/*
 * Small messages queued on a flow go together: 2000 tagged messages of 0
 * to 300 bytes, sent back to back while the receiver takes them (at most
 * 200 receives posted, one tag each: the rest wait as unexpected), each
 * arrive whole (its hash) and in order, in far fewer sdr messages than
 * 2000 (the device's msgs_sent).
 */
TEST_F_T(fab, small_messages_batched, 180)
{
	enum { N = 2000, POSTED = 200, MAXLEN = 300 };
	static uint8_t sb[N][MAXLEN], rb[N][MAXLEN];
	uint32_t len[N], sent = 0, posted = 0, done_tx = 0, done_rx = 0, i;
	uint64_t want[N], before = msgs_sent(dev0()), used;
	int64_t end = now_us() + 150 * 1000000LL;

	for (i = 0; i < N; i++) {
		len[i] = (i * 2654435761U) % (MAXLEN + 1);
		random_fill(sb[i], len[i], 5000 + i);
		want[i] = fnv1a(sb[i], len[i]);
	}
	while (done_tx < N || done_rx < N) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err;
		ssize_t ret;
		int r;

		ASSERT_LT(now_us(), end);
		/* a burst of sends: the flow's 16 slots fill, the rest queue */
		while (sent < N) {
			ret = fi_tsend(self->a.ep, sb[sent], len[sent], NULL,
				       self->a.peer, 0x1000 + sent,
				       (void *)(uintptr_t)(sent + 1));
			ASSERT_TRUE(ret == 0 || ret == -FI_EAGAIN);
			if (ret)
				break;
			sent++;
		}
		while (posted < N && posted - done_rx < POSTED) {
			ASSERT_EQ(fi_trecv(self->b.ep, rb[posted], MAXLEN,
					   NULL, FI_ADDR_UNSPEC,
					   0x1000 + posted, 0,
					   (void *)(uintptr_t)(posted + 1)), 0);
			posted++;
		}
		while ((r = next_comp(&self->a, &e, &err, 0)) == 1)
			done_tx++;
		ASSERT_EQ(r, 0);
		while ((r = next_comp(&self->b, &e, &err, 0)) == 1) {
			i = done_rx++;
			ASSERT_EQ((uintptr_t)e.op_context, i + 1);
			ASSERT_EQ(e.len, len[i]);
			EXPECT_EQ(e.tag, 0x1000 + i);
			EXPECT_EQ(fnv1a(rb[i], e.len), want[i]);
		}
		if (r == -FI_EAVAIL)
			TH_LOG("rx error %d (%s)", err.err, fi_strerror(err.err));
		ASSERT_EQ(r, 0);
		usleep(100);
	}
	used = msgs_sent(dev0()) - before;
	TH_LOG("%u messages, hashes checked, in %llu sdr messages", N,
	       (unsigned long long)used);
	EXPECT_GT(used, 0);
	EXPECT_LE(used, N / 4);
}

/*
 * @s's next receive completion within @ms, cancelled ones skipped, its
 * sender in @src (FI_SOURCE, fi_cq_readfrom()).
 */
static int dgram_comp(struct side *s, struct fi_cq_tagged_entry *e,
		      fi_addr_t *src, int ms)
{
	struct fi_cq_err_entry err;
	int r;

	do {
		r = next_comp_from(s, e, &err, ms, src);
	} while (r == -FI_EAVAIL && err.err == FI_ECANCELED);
	return r;
}

/*
 * Datagram endpoints (FI_EP_DGRAM, policy NONE): 200 datagrams of 0 to
 * 64 KiB, each starting with its number, sent back to back: those that
 * arrive are whole (their hashes) and in the order sent; on a loss-free
 * link (the default boot) all of them, under loss (T_FABRIC_LOSSY=1: the
 * t_mpi boot's netem profile) the others are dropped whole, never
 * delivered in part.  Each names its sender (FI_SOURCE: the fi_addr the
 * receiver's AV has for it).  A datagram longer than max_msg_size is
 * refused.
 */
TEST_T(dgram_datagrams, 180)
{
	enum { N = 200, MAXLEN = 65536 };
	bool lossy = getenv("T_FABRIC_LOSSY") != NULL;
	struct side a = { 0 }, b = { 0 };
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	uint32_t len[N], sent = 0, done_tx = 0, got = 0, last = 0, i;
	fi_addr_t src = FI_ADDR_UNSPEC;
	uint64_t want[N];
	uint8_t *sb, *rb;
	char path[512];
	int64_t end = now_us() + 150 * 1000000LL;
	int r;

	snprintf(path, sizeof(path), "%s/provider", SDR_TOP);
	setenv("FI_PROVIDER_PATH", path, 1);
	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	ASSERT_EQ(side_open_x(&a, dev0(), FI_WAIT_NONE, false, FI_EP_DGRAM), 0);
	ASSERT_EQ(side_open_x(&b, dev1(), FI_WAIT_NONE, false, FI_EP_DGRAM), 0);
	ASSERT_EQ(a.info->ep_attr->max_msg_size, PART);
	ASSERT_TRUE(a.info->caps & FI_SOURCE);
	ASSERT_EQ(know(&a, &b), 0);
	/* b knows a at index 1 (index 0 is another address) */
	{
		struct sockaddr_in other = { .sin_family = AF_INET,
					     .sin_port = htons(9) };
		fi_addr_t o;

		other.sin_addr.s_addr = htonl(0x7f000001);
		ASSERT_EQ(fi_av_insert(b.av, &other, 1, &o, 0, NULL), 1);
		ASSERT_EQ(know(&b, &a), 0);
		ASSERT_EQ(b.peer, 1);
	}
	sb = malloc((size_t)N * MAXLEN);
	rb = malloc((size_t)N * MAXLEN);
	ASSERT_TRUE(sb && rb);
	for (i = 0; i < N; i++) {
		uint8_t *p = sb + (size_t)i * MAXLEN;

		len[i] = 4 + (i * 2654435761U) % (MAXLEN - 3);
		random_fill(p, len[i], 9000 + i);
		memcpy(p, &i, 4);
		want[i] = fnv1a(p, len[i]);
	}
	/* (200 receives: within the endpoint's rx_attr->size, 256) */
	for (i = 0; i < N; i++)
		ASSERT_EQ(fi_recv(b.ep, rb + (size_t)i * MAXLEN, MAXLEN, NULL,
				  FI_ADDR_UNSPEC, (void *)(uintptr_t)(i + 1)),
			  0);
	EXPECT_EQ(fi_send(a.ep, sb, PART + 1, NULL, a.peer, NULL),
		  -FI_EMSGSIZE);
	for (;;) {
		ASSERT_LT(now_us(), end);
		if (sent < N) {
			ssize_t ret = fi_send(a.ep, sb + (size_t)sent * MAXLEN,
					      len[sent], NULL, a.peer, NULL);

			ASSERT_TRUE(ret == 0 || ret == -FI_EAGAIN);
			sent += !ret;
		}
		while ((r = next_comp(&a, &e, &err, 0)) == 1)
			done_tx++;
		if (r == -FI_EAVAIL)
			TH_LOG("tx error %d (%s)", err.err, fi_strerror(err.err));
		ASSERT_EQ(r, 0);
		/*
		 * the receiver takes what came meanwhile; once every send
		 * is done, the rest, until nothing came for 3 s
		 */
		while ((r = dgram_comp(&b, &e, &src,
				       done_tx < N ? 0 : 3000)) == 1) {
			uint8_t *p = e.buf;
			uint32_t k;

			EXPECT_EQ(src, b.peer);
			memcpy(&k, p, 4);
			ASSERT_LT(k, N);
			ASSERT_TRUE(got == 0 || k > last);
			EXPECT_EQ(e.len, len[k]);
			EXPECT_EQ(fnv1a(p, e.len), want[k]);
			last = k;
			got++;
		}
		ASSERT_EQ(r, 0);
		if (done_tx == N)
			break;
	}
	TH_LOG("%u of %u datagrams arrived whole and in order (%s link)", got,
	       N, lossy ? "lossy" : "loss-free");
	if (lossy)
		EXPECT_GE(got, N / 4);
	else
		EXPECT_EQ(got, N);
	for (i = 0; i < N; i++)
		fi_cancel(&b.ep->fid, (void *)(uintptr_t)(i + 1));
	side_close(&a);
	side_close(&b);
	free(sb);
	free(rb);
}

/*
 * More messages than the flow has receive slots (16), all before any
 * receive is posted: the receiver, progressing, copies each out of its
 * slot, so every send completes though nothing was posted; once receives
 * come every one arrives whole, in order.
 */
TEST_F_T(fab, more_unexpected_than_slots, 120)
{
	enum { N = 40 };
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	uint32_t sent = 0, done = 0, got = 0, i;
	int64_t end = now_us() + 90 * 1000000LL;
	static uint8_t sb[N][128], bufs[N][128];

	while (done < N) {
		ssize_t ret = -FI_EAGAIN;

		ASSERT_LT(now_us(), end);
		if (sent < N) {
			memset(sb[sent], 'A' + sent, 128);
			ret = fi_tsend(self->a.ep, sb[sent], 128, NULL,
				       self->a.peer, 0x40, NULL);
			ASSERT_TRUE(ret == 0 || ret == -FI_EAGAIN);
			sent += !ret;
		}
		while (next_comp(&self->a, &e, &err, 0) == 1)
			done++;
		/* the receiver progresses, with nothing posted */
		EXPECT_EQ(next_comp(&self->b, &e, &err, 0), 0);
		if (ret)
			usleep(1000);
	}
	for (i = 0; i < N; i++)
		ASSERT_EQ(fi_trecv(self->b.ep, bufs[i], 128, NULL,
				   FI_ADDR_UNSPEC, 0x40, 0,
				   (void *)(uintptr_t)(i + 1)), 0);
	while (got < N) {
		ASSERT_EQ(next_comp(&self->b, &e, &err, 10000), 1);
		i = got++;
		ASSERT_EQ((uintptr_t)e.op_context, i + 1);
		EXPECT_EQ(first_not(bufs[i], 'A' + i, 128), -1);
	}
}

/* A receive shorter than its message: FI_ETRUNC, the overflow in olen. */
TEST_F_T(fab, truncation_and_remote_data, 120)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	random_fill(self->sbuf, 1000, 42);
	memset(self->rbuf, 0, 200);
	ASSERT_EQ(fi_trecv(self->b.ep, self->rbuf, 100, NULL, FI_ADDR_UNSPEC,
			   1, 0, (void *)1), 0);
	ASSERT_EQ(tsend(&self->a, self->sbuf, 1000, 1, NULL), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 30000), -FI_EAVAIL);
	EXPECT_EQ(err.err, FI_ETRUNC);
	EXPECT_EQ(err.olen, 900);
	EXPECT_EQ(err.len, 100);
	EXPECT_EQ((uintptr_t)err.op_context, 1);
	EXPECT_EQ(memcmp(self->rbuf, self->sbuf, 100), 0);
	EXPECT_EQ(first_not(self->rbuf + 100, 0, 100), -1);
	ASSERT_EQ(next_comp(&self->a, &e, &err, 30000), 1);

	/* remote CQ data */
	ASSERT_EQ(fi_recv(self->b.ep, self->rbuf, 64, NULL, FI_ADDR_UNSPEC,
			  (void *)2), 0);
	ASSERT_EQ(fi_senddata(self->a.ep, self->sbuf, 64, NULL,
			      0x1122334455667788ULL, self->a.peer, NULL), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 30000), 1);
	EXPECT_TRUE(e.flags & FI_REMOTE_CQ_DATA);
	EXPECT_EQ(e.data, 0x1122334455667788ULL);
	EXPECT_EQ(memcmp(self->rbuf, self->sbuf, 64), 0);
	/* inject: no completion, the buffer is free at once */
	ASSERT_EQ(fi_recv(self->b.ep, self->rbuf, 64, NULL, FI_ADDR_UNSPEC,
			  (void *)3), 0);
	memset(self->sbuf, 'i', 64);
	ASSERT_EQ(fi_inject(self->a.ep, self->sbuf, 64, self->a.peer), 0);
	memset(self->sbuf, 0, 64);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 30000), 1);
	EXPECT_EQ(first_not(self->rbuf, 'i', 64), -1);
	ASSERT_EQ(next_comp(&self->a, &e, &err, 30000), 1);	/* senddata's */
	EXPECT_EQ(next_comp(&self->a, &e, &err, 500), 0);	/* none for inject */
}

/* FI_PEEK, FI_CLAIM, FI_DISCARD on messages that wait for a receive. */
TEST_F_T(fab, peek_claim_discard, 120)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct iovec iov = { self->rbuf, 1000 };
	struct fi_msg_tagged m = { .msg_iov = &iov, .iov_count = 1,
				   .addr = FI_ADDR_UNSPEC, .ignore = 0 };
	struct fi_context claim_ctx, peek_ctx;

	memset(self->sbuf, 'p', 300);
	ASSERT_EQ(tsend(&self->a, self->sbuf, 300, 0x31, NULL), 0);
	memset(self->sbuf, 'q', 40);
	ASSERT_EQ(tsend(&self->a, self->sbuf, 40, 0x32, NULL), 0);
	ASSERT_EQ(next_comp(&self->a, &e, &err, 30000), 1);
	ASSERT_EQ(next_comp(&self->a, &e, &err, 30000), 1);

	/* nothing tagged 0x33: FI_ENOMSG */
	m.tag = 0x33;
	m.context = &peek_ctx;
	ASSERT_EQ(fi_trecvmsg(self->b.ep, &m, FI_PEEK), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 5000), -FI_EAVAIL);
	EXPECT_EQ(err.err, FI_ENOMSG);
	/* 0x31 is there: its length and tag, and it stays */
	m.tag = 0x31;
	ASSERT_EQ(fi_trecvmsg(self->b.ep, &m, FI_PEEK), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 5000), 1);
	EXPECT_EQ(e.len, 300);
	EXPECT_EQ(e.tag, 0x31);
	EXPECT_EQ(e.op_context, &peek_ctx);
	/* claimed: an ordinary receive no longer takes it */
	m.context = &claim_ctx;
	ASSERT_EQ(fi_trecvmsg(self->b.ep, &m, FI_PEEK | FI_CLAIM), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 5000), 1);
	ASSERT_EQ(fi_trecv(self->b.ep, self->rbuf + 2000, 1000, NULL,
			   FI_ADDR_UNSPEC, 0x31, 0, (void *)77), 0);
	EXPECT_EQ(next_comp(&self->b, &e, &err, 500), 0);
	/* the claim takes it into the buffer */
	memset(self->rbuf, 0, 1000);
	ASSERT_EQ(fi_trecvmsg(self->b.ep, &m, FI_CLAIM), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 5000), 1);
	EXPECT_EQ(e.op_context, &claim_ctx);
	EXPECT_EQ(e.len, 300);
	EXPECT_EQ(first_not(self->rbuf, 'p', 300), -1);
	EXPECT_EQ(first_not(self->rbuf + 300, 0, 700), -1);
	/* a claim for a context that claimed nothing */
	EXPECT_EQ(fi_trecvmsg(self->b.ep, &m, FI_CLAIM), -FI_EINVAL);
	/* discard 0x32 without reading it: gone */
	m.tag = 0x32;
	m.context = &peek_ctx;
	ASSERT_EQ(fi_trecvmsg(self->b.ep, &m, FI_PEEK | FI_DISCARD), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 5000), 1);
	EXPECT_EQ(e.tag, 0x32);
	ASSERT_EQ(fi_trecvmsg(self->b.ep, &m, FI_PEEK), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 5000), -FI_EAVAIL);
	EXPECT_EQ(err.err, FI_ENOMSG);
	EXPECT_EQ(fi_trecvmsg(self->b.ep, &m, FI_DISCARD), -FI_EBADFLAGS);
	EXPECT_EQ(fi_cancel(&self->b.ep->fid, (void *)77), 0);
	ASSERT_EQ(next_comp(&self->b, &e, &err, 1000), -FI_EAVAIL);
	EXPECT_EQ(err.err, FI_ECANCELED);
	/* RMA is not offered: its calls fail */
	EXPECT_EQ(fi_write(self->a.ep, self->sbuf, 8, NULL, self->a.peer, 0, 0,
			   NULL), -FI_ENOSYS);
}

struct both_arg {
	struct side *from;
	uint64_t seed;
	int ret;
	int recvd;	/* receive completions it read meanwhile */
};

/* 16 messages of 64 KiB from one side, hashed by their seed. */
static void *send_16(void *p)
{
	struct both_arg *a = p;
	/* a buffer each: a send's is the provider's until it completes */
	uint8_t *buf = malloc(16 * 65536);
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int i, done = 0;

	a->ret = -1;
	if (!buf)
		return NULL;
	for (i = 0; i < 16; i++) {
		random_fill(buf + i * 65536, 65536, a->seed + i);
		if (tsend(a->from, buf + i * 65536, 65536, 9, NULL))
			goto out;
	}
	/* the CQ holds both directions' completions: count the sends */
	while (done < 16) {
		int r = next_comp(a->from, &e, &err, 60000);

		if (r != 1)
			goto out;
		if (e.flags & FI_SEND)
			done++;
		else
			a->recvd++;
	}
	a->ret = 0;
out:
	free(buf);
	return NULL;
}

/*
 * Both endpoints send to each other at once (each connects while the
 * other does): every message arrives whole.  Receives are posted first,
 * so the sending threads see only send completions.
 */
TEST_F_T(fab, both_ways_at_once, 180)
{
	struct both_arg aa = { &self->a, 500, 0, 0 }, ba = { &self->b, 700, 0, 0 };
	uint8_t *ra = malloc(16 * 65536), *rb = malloc(16 * 65536);
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	pthread_t ta, tb;
	int i;

	ASSERT_TRUE(ra && rb);
	/* large receives first, then the senders; completions come later */
	for (i = 0; i < 16; i++) {
		ASSERT_EQ(fi_trecv(self->a.ep, ra + i * 65536, 65536, NULL,
				   FI_ADDR_UNSPEC, 9, 0,
				   (void *)(uintptr_t)(100 + i)), 0);
		ASSERT_EQ(fi_trecv(self->b.ep, rb + i * 65536, 65536, NULL,
				   FI_ADDR_UNSPEC, 9, 0,
				   (void *)(uintptr_t)(200 + i)), 0);
	}
	ASSERT_EQ(pthread_create(&ta, NULL, send_16, &aa), 0);
	ASSERT_EQ(pthread_create(&tb, NULL, send_16, &ba), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	EXPECT_EQ(aa.ret, 0);
	EXPECT_EQ(ba.ret, 0);
	/* the receive completions the sending threads did not read */
	int got_a = aa.recvd, got_b = ba.recvd;

	while (got_a < 16 && next_comp(&self->a, &e, &err, 30000) == 1)
		got_a += !!(e.flags & FI_RECV);
	while (got_b < 16 && next_comp(&self->b, &e, &err, 30000) == 1)
		got_b += !!(e.flags & FI_RECV);
	EXPECT_EQ(got_a, 16);
	EXPECT_EQ(got_b, 16);
	for (i = 0; i < 16; i++) {
		random_fill(self->sbuf, 65536, 700 + i);
		EXPECT_EQ(memcmp(ra + i * 65536, self->sbuf, 65536), 0);
		random_fill(self->sbuf, 65536, 500 + i);
		EXPECT_EQ(memcmp(rb + i * 65536, self->sbuf, 65536), 0);
	}
	free(ra);
	free(rb);
}

/*
 * Wait objects: without one fi_cq_sread() is -FI_ENOSYS; with FI_WAIT_FD
 * the CQ hands out the device's fd (FI_GETWAIT), fi_trywait() says whether
 * blocking on it is safe, poll(2) wakes when a message is there and
 * fi_cq_sread() sleeps until a completion or its timeout.
 */
TEST_F_T(fab, wait_objects, 120)
{
	struct fi_cq_tagged_entry e;
	struct fid *fids[1];
	struct pollfd pfd = { .events = POLLIN };
	int64_t t0;
	int fd = -1;

	EXPECT_EQ(fi_cq_sread(self->b.cq, &e, 1, NULL, 10), -FI_ENOSYS);
	EXPECT_EQ(fi_control(&self->b.cq->fid, FI_GETWAIT, &fd), -FI_ENODATA);
	side_close(&self->b);
	ASSERT_EQ(side_open_w(&self->b, dev1(), FI_WAIT_FD), 0);
	ASSERT_EQ(know(&self->a, &self->b), 0);
	ASSERT_EQ(know(&self->b, &self->a), 0);
	ASSERT_EQ(fi_control(&self->b.cq->fid, FI_GETWAIT, &fd), 0);
	ASSERT_GE(fd, 0);
	fids[0] = &self->b.cq->fid;
	EXPECT_EQ(fi_trywait(self->b.fabric, fids, 1), 0);
	/* nothing comes: sread times out after about its timeout */
	t0 = now_us();
	EXPECT_EQ(fi_cq_sread(self->b.cq, &e, 1, NULL, 300), -FI_EAGAIN);
	EXPECT_GE(now_us() - t0, 250000);
	/* a message: the fd wakes, trywait says no, sread returns it */
	ASSERT_EQ(fi_recv(self->b.ep, self->rbuf, 64, NULL, FI_ADDR_UNSPEC,
			  (void *)5), 0);
	memset(self->sbuf, 'w', 64);
	ASSERT_EQ(fi_send(self->a.ep, self->sbuf, 64, NULL, self->a.peer,
			  NULL), 0);
	pfd.fd = fd;
	EXPECT_EQ(poll(&pfd, 1, 30000), 1);
	EXPECT_EQ(fi_trywait(self->b.fabric, fids, 1), -FI_EAGAIN);
	ASSERT_EQ(fi_cq_sread(self->b.cq, &e, 1, NULL, 30000), 1);
	EXPECT_EQ((uintptr_t)e.op_context, 5);
	EXPECT_EQ(first_not(self->rbuf, 'w', 64), -1);
	/* and a send's completion wakes an sread blocked with no timeout */
	ASSERT_EQ(fi_send(self->b.ep, self->sbuf, 64, NULL, self->b.peer,
			  NULL), 0);
	ASSERT_EQ(fi_cq_sread(self->b.cq, &e, 1, NULL, -1), 1);
	EXPECT_TRUE(e.flags & FI_SEND);
}

TEST_F_T(fab, av_and_errors, 120)
{
	struct sockaddr_in sin, out, bad = { .sin_family = AF_INET };
	fi_addr_t fa[2];
	size_t len = sizeof(sin);
	char str[64];
	struct fid_domain *busy;

	ASSERT_EQ(fi_getname(&self->b.ep->fid, &sin, &len), 0);
	EXPECT_EQ(len, sizeof(sin));
	len = 4;
	EXPECT_EQ(fi_getname(&self->b.ep->fid, &sin, &len), -FI_ETOOSMALL);
	EXPECT_EQ(len, sizeof(sin));
	/* a valid and an invalid address: one inserted */
	struct sockaddr_in two[2] = { sin, bad };
	EXPECT_EQ(fi_av_insert(self->a.av, two, 2, fa, 0, NULL), 1);
	EXPECT_EQ(fa[1], FI_ADDR_NOTAVAIL);
	len = sizeof(out);
	ASSERT_EQ(fi_av_lookup(self->a.av, fa[0], &out, &len), 0);
	EXPECT_EQ(memcmp(&out, &sin, sizeof(sin)), 0);
	len = sizeof(str);
	fi_av_straddr(self->a.av, &sin, str, &len);
	TH_LOG("peer %s", str);
	EXPECT_EQ(strncmp(str, "fi_sockaddr_in://", 17), 0);
	EXPECT_EQ(fi_av_remove(self->a.av, &fa[0], 1, 0), 0);
	EXPECT_EQ(fi_av_lookup(self->a.av, fa[0], &out, &len), -FI_EINVAL);
	EXPECT_EQ(fi_send(self->a.ep, self->sbuf, 8, NULL, fa[0], NULL),
		  -FI_EINVAL);
	EXPECT_EQ(fi_send(self->a.ep, self->sbuf, 8, NULL, 12345, NULL),
		  -FI_EINVAL);

	/* sizes and flags */
	EXPECT_EQ(fi_send(self->a.ep, self->sbuf, MAX_MSG + 1, NULL,
			  self->a.peer, NULL), -FI_EMSGSIZE);
	EXPECT_EQ(fi_inject(self->a.ep, self->sbuf, 4097, self->a.peer),
		  -FI_EMSGSIZE);
	struct iovec iov = { self->sbuf, 8 };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1,
			      .addr = self->a.peer };
	EXPECT_EQ(fi_sendmsg(self->a.ep, &msg, FI_MULTI_RECV), -FI_EBADFLAGS);
	msg.iov_count = 2;
	EXPECT_EQ(fi_sendmsg(self->a.ep, &msg, 0), -FI_EINVAL);
	/* a domain with an endpoint open cannot close */
	busy = self->a.domain;
	EXPECT_EQ(fi_close(&busy->fid), -FI_EBUSY);
	/* NONE is no policy for a reliable endpoint */
	struct fid_ep *ep;
	setenv("FI_SDR_POLICY", "none", 1);
	EXPECT_EQ(fi_endpoint(self->a.domain, self->a.info, &ep, NULL),
		  -FI_EINVAL);
	setenv("FI_SDR_POLICY", "bogus", 1);
	EXPECT_EQ(fi_endpoint(self->a.domain, self->a.info, &ep, NULL),
		  -FI_EINVAL);
	unsetenv("FI_SDR_POLICY");
	/* nor an EC geometry sdr does not take */
	setenv("FI_SDR_EC_K", "999", 1);
	EXPECT_EQ(fi_endpoint(self->a.domain, self->a.info, &ep, NULL),
		  -FI_EINVAL);
	unsetenv("FI_SDR_EC_K");
	setenv("FI_SDR_EC_M", "2x", 1);
	EXPECT_EQ(fi_endpoint(self->a.domain, self->a.info, &ep, NULL),
		  -FI_EINVAL);
	unsetenv("FI_SDR_EC_M");
}

/*
 * The peer endpoint closes and a new one opens at its address (a client
 * that restarts, fabtests' fi_rdm_multi_client): the new one's message
 * arrives, and the reply to the same fi_addr goes to the new endpoint
 * whole, on a new flow, not into the old one its peer ended (which failed
 * it: FI_EIO, provider errno EPIPE).
 */
TEST_F_T(fab, peer_reopened_at_its_address, 120)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct sockaddr_in at;
	size_t len = sizeof(at);
	int64_t t0;
	uint64_t h;
	int ret;

	for (int round = 0; round < 3; round++) {
		random_fill(self->sbuf, 4096, 7 + round);
		h = fnv1a(self->sbuf, 4096);
		/* a -> b: a's connection to b has carried a message */
		ASSERT_EQ(deliver(&self->a, self->sbuf, &self->b, self->rbuf,
				  4096), 1);
		EXPECT_EQ(fnv1a(self->rbuf, 4096), h);
		/*
		 * b's endpoint goes; a new one opens at its address (the
		 * same domain, CQ and AV) and says hello
		 */
		t0 = now_us();
		ASSERT_EQ(fi_getname(&self->b.ep->fid, &at, &len), 0);
		ASSERT_EQ(fi_close(&self->b.ep->fid), 0);
		ASSERT_EQ(self->b.info->src_addrlen, sizeof(at));
		memcpy(self->b.info->src_addr, &at, sizeof(at));
		ASSERT_EQ(fi_endpoint(self->b.domain, self->b.info, &self->b.ep,
				      NULL), 0);
		ASSERT_EQ(fi_ep_bind(self->b.ep, &self->b.cq->fid,
				     FI_TRANSMIT | FI_RECV), 0);
		ASSERT_EQ(fi_ep_bind(self->b.ep, &self->b.av->fid, 0), 0);
		ASSERT_EQ(fi_enable(self->b.ep), 0);
		ASSERT_EQ(deliver(&self->b, self->sbuf, &self->a, self->rbuf,
				  64), 1);
		/* a answers the same fi_addr at once: the new b has it */
		random_fill(self->sbuf, 4096, 70 + round);
		h = fnv1a(self->sbuf, 4096);
		memset(self->rbuf, 0, 4096);
		ASSERT_EQ(fi_recv(self->b.ep, self->rbuf, 4096, NULL,
				  FI_ADDR_UNSPEC, NULL), 0);
		TH_LOG("round %d: a answers %lld ms after b's endpoint closed",
		       round, (long long)(now_us() - t0) / 1000);
		ASSERT_EQ(fi_send(self->a.ep, self->sbuf, 4096, NULL,
				  self->a.peer, NULL), 0);
		ret = next_comp(&self->a, &e, &err, 30000);
		if (ret == -FI_EAVAIL)
			TH_LOG("a's send: %s (provider errno %d)",
			       fi_strerror(err.err), err.prov_errno);
		ASSERT_EQ(ret, 1);
		ASSERT_EQ(next_comp(&self->b, &e, &err, 30000), 1);
		EXPECT_EQ(fnv1a(self->rbuf, 4096), h);
	}
}

/* A send to an address no endpoint listens on fails; nothing hangs. */
TEST_F_T(fab, send_to_nobody_fails, 120)
{
	struct sockaddr_in sin;
	size_t len = sizeof(sin);
	fi_addr_t fa;
	int64_t t0 = now_us();
	ssize_t ret;

	ASSERT_EQ(fi_getname(&self->b.ep->fid, &sin, &len), 0);
	sin.sin_port = htons(ntohs(sin.sin_port) ^ 1);
	ASSERT_EQ(fi_av_insert(self->a.av, &sin, 1, &fa, 0, NULL), 1);
	ret = fi_send(self->a.ep, self->sbuf, 8, NULL, fa, NULL);
	TH_LOG("send to nobody: %zd (%s) after %lld ms", ret,
	       fi_strerror((int)-ret), (long long)(now_us() - t0) / 1000);
	EXPECT_TRUE(ret == -FI_EHOSTUNREACH || ret == -FI_ECONNREFUSED);
	/* again and again: each attempt fails alike, none leaves a flow */
	int before = count_flows(dev0());

	ASSERT_GE(before, 0);

	for (int k = 0; k < 20; k++)
		ASSERT_EQ(fi_send(self->a.ep, self->sbuf, 8, NULL, fa, NULL),
			  ret);
	EXPECT_EQ(count_flows(dev0()), before);
	/* the real peer is still reachable */
	ASSERT_EQ(fi_recv(self->b.ep, self->rbuf, 8, NULL, FI_ADDR_UNSPEC,
			  NULL), 0);
	ASSERT_EQ(fi_send(self->a.ep, self->sbuf, 8, NULL, self->a.peer, NULL),
		  0);
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	EXPECT_EQ(next_comp(&self->b, &e, &err, 30000), 1);
}
