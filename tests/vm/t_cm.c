// SPDX-License-Identifier: GPL-2.0
/*
 * Connecting flows through rdma_cm (libsdr's sdr_cm_*): the client names
 * the server by IP address and port, rdma_cm resolves the device, and the
 * endpoints travel in its SIDR exchange.  A server thread and the client
 * in one process: messages verified by hash; a wrong device, a rejection,
 * a port nobody listens on, a peer whose request carries no endpoint or a
 * bogus one, a peer with another job secret (-EKEYREJECTED on both
 * ends): each a clear error, and the listener serves the next peer.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "harness.h"
#include "util.h"

#define CM_TIMEOUT_MS	20000
#define NMSG		4
#define MSG		(256 * 1024)

static const char *ip0(void)
{
	const char *s = getenv("SDR_IP0");

	return s && *s ? s : "198.18.0.1";
}

static const char *ip1(void)
{
	const char *s = getenv("SDR_IP1");

	return s && *s ? s : "198.18.0.2";
}

/* What the server thread does with a request, and what it saw. */
enum srv_act { SRV_ACCEPT, SRV_REJECT };

struct srv {
	struct sdr_cm *lcm;
	enum srv_act act;
	const char *secret;	/* the job secret its context names, or NULL */
	int check_ret;		/* sdr_cm_check() of the request */
	int requests;		/* get_request calls until one is served */
	int req_err[4];		/* each call's result */
	char dev[SDR_DEVNAME_LEN];
	int accept_ret;
	int recv_ok;
	uint64_t hash[NMSG];
	struct sdr_ctx *ctx;
	struct sdr_flow *flow;
};

static struct sdr_flow_attr flow_attr(void)
{
	struct sdr_flow_attr fa = { 0 };

	fa.policy = SDR_POLICY_SR;
	fa.max_msg_size = MSG;
	fa.max_msgs = NMSG;
	return fa;
}

static void *server(void *arg)
{
	struct srv *s = arg;
	struct sdr_flow_attr fa = flow_attr();
	struct sdr_completion c;
	struct sdr_recv *h[NMSG];
	struct sdr_cm *req = NULL;
	int64_t end;
	int i, ret;

	s->accept_ret = 1;	/* not answered */
	for (i = 0; i < s->requests; i++) {
		ret = sdr_cm_get_request(s->lcm, CM_TIMEOUT_MS, &req);
		s->req_err[i] = ret;
		if (!ret)
			break;
	}
	if (!req)
		return NULL;
	snprintf(s->dev, sizeof(s->dev), "%s", sdr_cm_device(req));
	if (s->act == SRV_REJECT) {
		s->accept_ret = sdr_cm_reject(req);
		sdr_cm_destroy(req);
		return NULL;
	}
	s->ctx = sdr_open(s->dev, NULL);
	if (s->ctx && s->secret && sdr_ctx_set_secret(s->ctx, s->secret))
		s->ctx = NULL;
	if (s->ctx)
		s->check_ret = sdr_cm_check(req, s->ctx);
	s->flow = s->ctx ? sdr_flow_create(s->ctx, &fa) : NULL;
	if (!s->flow) {
		s->accept_ret = -errno;
		sdr_cm_reject(req);
		sdr_cm_destroy(req);
		return NULL;
	}
	s->accept_ret = sdr_cm_accept(req, s->flow);
	sdr_cm_destroy(req);
	if (s->accept_ret)
		return NULL;
	/* the sender retries what came before these (RNR) */
	for (i = 0; i < NMSG; i++)
		if (sdr_flow_recv_post(s->flow, i, &h[i]))
			return NULL;
	end = now_us() + CM_TIMEOUT_MS * 1000LL;
	while (s->recv_ok < NMSG && now_us() < end) {
		if (sdr_poll_cq(s->ctx, &c, 1) != 1) {
			sdr_wait(s->ctx, 100);
			continue;
		}
		if (c.type != SDR_CQE_RECV || c.status != SDR_STATUS_OK ||
		    c.len != MSG || c.user_data >= NMSG)
			break;
		s->hash[c.user_data] = hash64(sdr_recv_data(h[c.user_data]), MSG);
		s->recv_ok++;
	}
	return NULL;
}

/* Resolve the server from ip0 and open the device the route takes. */
static int client_open(uint16_t port, struct sdr_cm **cm, struct sdr_ctx **ctx,
		       struct sdr_flow **flow)
{
	struct sdr_flow_attr fa = flow_attr();
	int ret = sdr_cm_resolve(ip0(), ip1(), port, CM_TIMEOUT_MS, cm);

	if (ret)
		return ret;
	*ctx = sdr_open(sdr_cm_device(*cm), NULL);
	*flow = *ctx ? sdr_flow_create(*ctx, &fa) : NULL;
	return *flow ? 0 : -errno;
}

/* Send NMSG messages of seeded data; 0 once each completed OK. */
static int client_send(struct sdr_ctx *ctx, struct sdr_flow *flow,
		       uint64_t *hash)
{
	struct sdr_completion c;
	int64_t end = now_us() + CM_TIMEOUT_MS * 1000LL;
	uint8_t *buf = malloc(MSG);
	int i, done = 0;

	if (!buf)
		return -ENOMEM;
	for (i = 0; i < NMSG; i++) {
		random_fill(buf, MSG, 77 + i);
		hash[i] = hash64(buf, MSG);
		if (sdr_flow_send_post_ptr(flow, buf, MSG, i, i, NULL)) {
			free(buf);
			return -EIO;
		}
	}
	free(buf);
	while (done < NMSG && now_us() < end) {
		if (sdr_poll_cq(ctx, &c, 1) != 1) {
			sdr_wait(ctx, 100);
			continue;
		}
		if (c.type != SDR_CQE_SEND || c.status != SDR_STATUS_OK)
			return -EIO;
		done++;
	}
	return done == NMSG ? 0 : -ETIMEDOUT;
}

TEST_T(connect_by_ip_and_send, 180)
{
	struct srv s = { .act = SRV_ACCEPT, .requests = 1 };
	struct sdr_cm *cm = NULL;
	struct sdr_ctx *ctx = NULL;
	struct sdr_flow *flow = NULL;
	uint64_t hash[NMSG];
	pthread_t t;
	int i;

	ASSERT_EQ(sdr_cm_listen(ip1(), 18801, &s.lcm), 0);
	ASSERT_EQ(pthread_create(&t, NULL, server, &s), 0);
	ASSERT_EQ(client_open(18801, &cm, &ctx, &flow), 0);
	EXPECT_EQ(strcmp(sdr_cm_device(cm), dev0()), 0);
	EXPECT_EQ(sdr_cm_connect(cm, flow, CM_TIMEOUT_MS), 0);
	/* connected once: not again */
	EXPECT_EQ(sdr_cm_connect(cm, flow, CM_TIMEOUT_MS), -EINVAL);
	EXPECT_EQ(client_send(ctx, flow, hash), 0);
	pthread_join(t, NULL);
	EXPECT_EQ(s.req_err[0], 0);
	EXPECT_EQ(strcmp(s.dev, dev1()), 0);
	EXPECT_EQ(s.accept_ret, 0);
	EXPECT_EQ(s.recv_ok, NMSG);
	for (i = 0; i < NMSG; i++)
		EXPECT_EQ(s.hash[i], hash[i]);
	TH_LOG("%d messages of %d bytes over a flow rdma_cm connected: %s -> %s",
	       s.recv_ok, MSG, dev0(), s.dev);
	sdr_cm_destroy(cm);
	sdr_cm_destroy(s.lcm);
}

TEST(bad_arguments_and_wrong_device)
{
	struct sdr_flow_attr fa = flow_attr();
	struct sdr_cm *cm = NULL, *l = NULL;
	struct sdr_ctx *ctx;
	struct sdr_flow *flow;

	EXPECT_EQ(sdr_cm_resolve(ip0(), NULL, 18802, 1000, &cm), -EINVAL);
	EXPECT_EQ(sdr_cm_resolve(ip0(), ip1(), 0, 1000, &cm), -EINVAL);
	EXPECT_EQ(sdr_cm_listen(ip1(), 0, &l), -EINVAL);
	EXPECT_EQ(sdr_cm_get_request(NULL, 10, &cm), -EINVAL);
	EXPECT_EQ(sdr_cm_accept(NULL, NULL), -EINVAL);
	EXPECT_EQ(sdr_cm_reject(NULL), -EINVAL);
	errno = 0;
	EXPECT_TRUE(sdr_cm_device(NULL) == NULL);
	EXPECT_EQ(errno, EINVAL);
	/* no route to it (the guest has no default route) */
	EXPECT_NE(sdr_cm_resolve(ip0(), "203.0.113.9", 18802, 5000, &cm), 0);
	/* a listener takes no connect, a resolved id no request */
	ASSERT_EQ(sdr_cm_listen(ip1(), 18802, &l), 0);
	EXPECT_EQ(sdr_cm_get_request(l, 10, &cm), -ETIMEDOUT);
	ASSERT_EQ(sdr_cm_resolve(ip0(), ip1(), 18802, CM_TIMEOUT_MS, &cm), 0);
	EXPECT_EQ(sdr_cm_get_request(cm, 10, &l), -EINVAL);
	/* a flow on another device than the route's */
	ctx = sdr_open(dev1(), NULL);
	ASSERT_TRUE(ctx);
	flow = sdr_flow_create(ctx, &fa);
	ASSERT_TRUE(flow);
	EXPECT_EQ(sdr_cm_connect(cm, flow, CM_TIMEOUT_MS), -EXDEV);
	EXPECT_EQ(sdr_cm_connect(NULL, flow, 10), -EINVAL);
	EXPECT_EQ(sdr_cm_accept(cm, flow), -EINVAL);
	sdr_cm_destroy(cm);
	sdr_cm_destroy(l);
	sdr_cm_destroy(NULL);
}

TEST_T(rejected_and_nobody_listening, 120)
{
	struct srv s = { .act = SRV_REJECT, .requests = 1 };
	struct sdr_cm *cm = NULL;
	struct sdr_ctx *ctx = NULL;
	struct sdr_flow *flow = NULL;
	pthread_t t;

	ASSERT_EQ(sdr_cm_listen(ip1(), 18803, &s.lcm), 0);
	ASSERT_EQ(pthread_create(&t, NULL, server, &s), 0);
	ASSERT_EQ(client_open(18803, &cm, &ctx, &flow), 0);
	EXPECT_EQ(sdr_cm_connect(cm, flow, CM_TIMEOUT_MS), -ECONNREFUSED);
	pthread_join(t, NULL);
	EXPECT_EQ(s.req_err[0], 0);
	EXPECT_EQ(s.accept_ret, 0);
	sdr_cm_destroy(cm);
	sdr_cm_destroy(s.lcm);
	/* the port has no listener now */
	ASSERT_EQ(sdr_cm_resolve(ip0(), ip1(), 18803, CM_TIMEOUT_MS, &cm), 0);
	EXPECT_EQ(sdr_cm_connect(cm, flow, CM_TIMEOUT_MS), -ECONNREFUSED);
	sdr_cm_destroy(cm);
}

/*
 * A raw rdma_cm peer sends @pd as its request's private data; returns
 * what the answer was: 0 accepted, else a negative errno.
 */
static int raw_request(uint16_t port, const void *pd, uint8_t len)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in s = { .sin_family = AF_INET };
	struct sockaddr_in d = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct rdma_conn_param cp = { .private_data = pd,
				      .private_data_len = len };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int ret = -EIO;

	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_UDP))
		return -EIO;
	inet_pton(AF_INET, ip0(), &s.sin_addr);
	inet_pton(AF_INET, ip1(), &d.sin_addr);
	if (rdma_resolve_addr(id, (struct sockaddr *)&s, (struct sockaddr *)&d,
			      5000) || rdma_get_cm_event(ch, &ev))
		goto out;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, 5000) || rdma_get_cm_event(ch, &ev))
		goto out;
	rdma_ack_cm_event(ev);
	if (rdma_connect(id, &cp) || rdma_get_cm_event(ch, &ev))
		goto out;
	ret = ev->event == RDMA_CM_EVENT_ESTABLISHED ? 0 :
	      ev->event == RDMA_CM_EVENT_UNREACHABLE && ev->status > 0 ?
	      -ECONNREFUSED : -EHOSTUNREACH;
	rdma_ack_cm_event(ev);
out:
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return ret;
}

/*
 * A request that carries no sdr endpoint, or a bogus one (rdma_cm pads
 * a SIDR request's private data with zeros: the header alone is an
 * endpoint of zeros, which the kernel refuses).
 */
TEST_T(hostile_requests, 180)
{
	struct srv s = { .act = SRV_ACCEPT, .requests = 2 };
	struct sdr_cm *cm = NULL;
	struct sdr_ctx *ctx = NULL;
	struct sdr_flow *flow = NULL;
	uint8_t junk[124];
	/* magic (little-endian "SDRC") and version 3, the rest zeros */
	uint8_t hdr[5] = { 0x53, 0x44, 0x52, 0x43, 3 };
	uint64_t hash[NMSG];
	pthread_t t;
	int i;

	ASSERT_EQ(sdr_cm_listen(ip1(), 18804, &s.lcm), 0);
	ASSERT_EQ(pthread_create(&t, NULL, server, &s), 0);
	/* junk: rejected by the library, the listener goes on */
	memset(junk, 0xaa, sizeof(junk));
	EXPECT_EQ(raw_request(18804, junk, sizeof(junk)), -ECONNREFUSED);
	EXPECT_EQ(raw_request(18804, hdr, sizeof(hdr)), -ECONNREFUSED);
	pthread_join(t, NULL);
	EXPECT_EQ(s.req_err[0], -EPROTO);
	EXPECT_EQ(s.req_err[1], 0);
	EXPECT_LT(s.accept_ret, 0);
	TH_LOG("bogus endpoint: accept said %d", s.accept_ret);
	sdr_cm_destroy(s.lcm);
	/* then a true peer is served */
	memset(&s, 0, sizeof(s));
	s.requests = 1;
	ASSERT_EQ(sdr_cm_listen(ip1(), 18805, &s.lcm), 0);
	ASSERT_EQ(pthread_create(&t, NULL, server, &s), 0);
	ASSERT_EQ(client_open(18805, &cm, &ctx, &flow), 0);
	EXPECT_EQ(sdr_cm_connect(cm, flow, CM_TIMEOUT_MS), 0);
	EXPECT_EQ(client_send(ctx, flow, hash), 0);
	pthread_join(t, NULL);
	EXPECT_EQ(s.recv_ok, NMSG);
	for (i = 0; i < NMSG; i++)
		EXPECT_EQ(s.hash[i], hash[i]);
	sdr_cm_destroy(cm);
	sdr_cm_destroy(s.lcm);
}

/* A job secret @name of 32 bytes from @seed in the process keyring. */
static int secret_load(const char *name, uint64_t seed)
{
	char path[] = "/tmp/t_cm-secret-XXXXXX";
	uint8_t key[32];
	int fd = mkstemp(path), ret;

	if (fd < 0)
		return -errno;
	random_fill(key, sizeof(key), seed);
	ret = write(fd, key, sizeof(key)) == sizeof(key) ? 0 : -EIO;
	close(fd);
	if (!ret)
		ret = sdr_secret_file_load(path, name);
	unlink(path);
	return ret;
}

/*
 * Server and client name different job secrets: the server's check and
 * accept say -EKEYREJECTED, and so does the client's connect (the
 * reject carries why); then both with one secret connect and send.
 */
TEST_T(another_job_secret_is_refused_by_name, 180)
{
	struct sdr_flow_attr fa = flow_attr();
	struct srv s;
	struct sdr_cm *cm = NULL;
	struct sdr_ctx *ctx;
	struct sdr_flow *flow;
	uint64_t hash[NMSG];
	pthread_t t;
	int i;

	ASSERT_EQ(secret_load("tcm-a", 1), 0);
	ASSERT_EQ(secret_load("tcm-b", 2), 0);
	for (i = 0; i < 2; i++) {
		const char *mine = i ? "tcm-a" : "tcm-b";
		int want = i ? 0 : -EKEYREJECTED;

		memset(&s, 0, sizeof(s));
		s.requests = 1;
		s.secret = "tcm-a";
		ASSERT_EQ(sdr_cm_listen(ip1(), 18806 + i, &s.lcm), 0);
		ASSERT_EQ(pthread_create(&t, NULL, server, &s), 0);
		ASSERT_EQ(sdr_cm_resolve(ip0(), ip1(), 18806 + i,
					 CM_TIMEOUT_MS, &cm), 0);
		ctx = sdr_open(sdr_cm_device(cm), NULL);
		ASSERT_TRUE(ctx);
		ASSERT_EQ(sdr_ctx_set_secret(ctx, mine), 0);
		flow = sdr_flow_create(ctx, &fa);
		ASSERT_TRUE(flow);
		EXPECT_EQ(sdr_flow_kex(flow), SDR_KEX_PSK);
		EXPECT_EQ(sdr_cm_connect(cm, flow, CM_TIMEOUT_MS), want);
		if (!want)
			EXPECT_EQ(client_send(ctx, flow, hash), 0);
		pthread_join(t, NULL);
		TH_LOG("client %s, server tcm-a: check %d, accept %d, connect %d",
		       mine, s.check_ret, s.accept_ret, want);
		EXPECT_EQ(s.check_ret, want);
		EXPECT_EQ(s.accept_ret, want);
		if (!want) {
			EXPECT_EQ(s.recv_ok, NMSG);
			for (int k = 0; k < NMSG; k++)
				EXPECT_EQ(s.hash[k], hash[k]);
		}
		sdr_cm_destroy(cm);
		sdr_cm_destroy(s.lcm);
	}
}
