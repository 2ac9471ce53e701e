// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_cm: connecting flows through rdma_cm (librdmacm), as RDMA
 * applications do.  The peer is named by IP address and port; rdma_cm
 * resolves the local device (so the GID) the route to it takes, and each
 * side's endpoint travels in the private data of rdma_cm's UD exchange
 * (RDMA_PS_UDP: a SIDR request and its reply), so no TCP connection is
 * needed.  Calls libsdr_flow.c (the endpoint, the connect) and
 * libsdr_sys.c (the clock).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "libsdr.h"
#include "libsdr_int.h"
#include "libsdr_sys.h"

#define CM_MAGIC	0x43524453u	/* "SDRC" */
#define CM_VERSION	3u
#define CM_BODY		128

/*
 * The private data each side sends: 136 bytes, the most a SIDR reply
 * carries (rdma_cm leaves 180 of a SIDR request).  Everything the peer
 * needs to connect (struct sdr_flow_peer: the endpoint, the paths, the
 * authentication and the key-exchange share) in the fewest bytes each
 * value takes, little-endian (cm_put()).  The endpoint's magic is
 * implied; its ABI travels in a byte.  No secret is in it.
 */
struct cm_blob {
	uint32_t magic;
	uint8_t version;
	uint8_t body[CM_BODY];
};

_Static_assert(sizeof(struct cm_blob) <= 136, "a SIDR reply's private data: 136 at most");

/*
 * Why a server refused a request, in the private data of its reject (a
 * SIDR reply carries some): the errno its connect gave, so the client
 * fails with the same (-EKEYREJECTED: no job secret, or another; -EPROTO:
 * another kind of authentication) instead of a bare -ECONNREFUSED.
 */
#define CM_WHY_MAGIC	0x52524453u	/* "SDRR" */

struct cm_why {
	uint8_t magic[4];		/* CM_WHY_MAGIC, little-endian */
	uint8_t err[4];			/* a positive errno, little-endian */
};

struct cm_cursor {
	uint8_t *p;
	uint8_t *end;
	int err;
};

/* Put @v in @n bytes (-EPROTO if it does not fit). */
static void cm_put(struct cm_cursor *c, uint64_t v, unsigned int n)
{
	unsigned int i;

	if (c->p + n > c->end || (n < 8 && v >> (8 * n))) {
		c->err = -EPROTO;
		return;
	}
	for (i = 0; i < n; i++, v >>= 8)
		*c->p++ = (uint8_t)v;
}

static uint64_t cm_get(struct cm_cursor *c, unsigned int n)
{
	uint64_t v = 0;
	unsigned int i;

	if (c->p + n > c->end) {
		c->err = -EPROTO;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)*c->p++ << (8 * i);
	return v;
}

static void cm_bytes(struct cm_cursor *c, void *dst, const void *src,
		     size_t n)
{
	if (c->p + n > c->end) {
		c->err = -EPROTO;
		return;
	}
	memcpy(dst ? dst : c->p, src ? src : c->p, n);
	c->p += n;
}

/* The blob of @peer (host order: the endpoint's fields as libsdr has them). */
static int cm_encode(const struct sdr_flow_peer *peer, struct cm_blob *b)
{
	const struct sdr_endpoint *ep = &peer->ep;
	struct cm_cursor c = { b->body, b->body + CM_BODY, 0 };
	uint32_t i;

	if (peer->paths.n < 1 || peer->paths.n > SDR_PATHS_MAX ||
	    peer->auth.alg != peer->kex.alg)
		return -EINVAL;
	memset(b, 0, sizeof(*b));
	b->magic = CM_MAGIC;
	b->version = CM_VERSION;
	cm_put(&c, ep->abi, 1);
	cm_put(&c, ep->policy, 1);
	cm_put(&c, peer->kex.alg, 1);
	cm_put(&c, peer->kex.flags, 1);
	cm_put(&c, peer->paths.n, 1);
	cm_bytes(&c, NULL, ep->gid, sizeof(ep->gid));
	cm_put(&c, ep->qpn, 3);
	cm_put(&c, ep->qkey, 4);
	cm_put(&c, ep->flow_id, 3);
	cm_put(&c, ep->payload, 2);
	cm_put(&c, ep->chunk_size, 4);
	cm_put(&c, ep->max_msg_size, 4);
	cm_put(&c, ep->max_msgs, 2);
	cm_put(&c, ep->token_lo, 4);
	cm_put(&c, ep->token_hi, 4);
	cm_put(&c, ep->seq0, 4);
	cm_put(&c, ep->none_window, 4);
	for (i = 1; i < SDR_PATHS_MAX; i++)
		cm_put(&c, i < peer->paths.n ? peer->paths.qpn[i] : 0, 3);
	cm_bytes(&c, NULL, peer->kex.pub, sizeof(peer->kex.pub));
	cm_bytes(&c, NULL, peer->kex.mac, sizeof(peer->kex.mac));
	return c.err;
}

/* The peer of blob @b (its magic and version checked). */
static int cm_decode(const struct cm_blob *b, struct sdr_flow_peer *peer)
{
	struct cm_blob copy = *b;
	struct sdr_endpoint *ep = &peer->ep;
	struct cm_cursor c = { copy.body, copy.body + CM_BODY, 0 };
	uint32_t i;

	memset(peer, 0, sizeof(*peer));
	ep->magic = SDR_EP_MAGIC;
	ep->abi = (uint32_t)cm_get(&c, 1);
	ep->policy = (uint32_t)cm_get(&c, 1);
	peer->kex.alg = (uint32_t)cm_get(&c, 1);
	peer->auth.alg = peer->kex.alg;
	peer->kex.flags = (uint32_t)cm_get(&c, 1);
	peer->paths.n = (uint32_t)cm_get(&c, 1);
	cm_bytes(&c, ep->gid, NULL, sizeof(ep->gid));
	ep->qpn = (uint32_t)cm_get(&c, 3);
	ep->qkey = (uint32_t)cm_get(&c, 4);
	ep->flow_id = (uint32_t)cm_get(&c, 3);
	ep->payload = (uint32_t)cm_get(&c, 2);
	ep->chunk_size = (uint32_t)cm_get(&c, 4);
	ep->max_msg_size = (uint32_t)cm_get(&c, 4);
	ep->max_msgs = (uint32_t)cm_get(&c, 2);
	ep->token_lo = (uint32_t)cm_get(&c, 4);
	ep->token_hi = (uint32_t)cm_get(&c, 4);
	ep->seq0 = (uint32_t)cm_get(&c, 4);
	ep->none_window = (uint32_t)cm_get(&c, 4);
	peer->paths.qpn[0] = ep->qpn;
	for (i = 1; i < SDR_PATHS_MAX; i++)
		peer->paths.qpn[i] = (uint32_t)cm_get(&c, 3);
	cm_bytes(&c, peer->kex.pub, NULL, sizeof(peer->kex.pub));
	cm_bytes(&c, peer->kex.mac, NULL, sizeof(peer->kex.mac));
	if (c.err || peer->paths.n < 1 || peer->paths.n > SDR_PATHS_MAX)
		return -EPROTO;
	for (i = peer->paths.n; i < SDR_PATHS_MAX; i++)
		if (peer->paths.qpn[i])
			return -EPROTO;
	return 0;
}

struct sdr_cm {
	struct rdma_event_channel *ch;	/* NULL: a request's, the listener's */
	struct rdma_cm_id *id;
	bool listener;
	bool request;			/* from sdr_cm_get_request() */
	bool resolved;			/* sdr_cm_resolve() done */
	bool answered;			/* accepted, rejected or connected */
	int refused;			/* sdr_cm_check()'s -EKEYREJECTED */
	struct cm_blob peer;		/* a request's */
	char dev[SDR_DEVNAME_LEN];
};

/* The next event on @ch before @deadline (ms, < 0: none), or -errno. */
static int cm_next_event(struct rdma_event_channel *ch, int64_t deadline,
			 struct rdma_cm_event **ev)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	int ret;

	for (;;) {
		if (!rdma_get_cm_event(ch, ev))
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		ret = poll(&p, 1, sdr__left_ms(deadline));
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (!ret)
			return -ETIMEDOUT;
	}
}

static uint32_t cm_le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The errno a reject @ev says (cm_reject_why()), else -ECONNREFUSED. */
static int cm_why_get(const struct rdma_cm_event *ev)
{
	const struct cm_why *w = ev->param.ud.private_data;
	uint32_t err;

	if (!w || ev->param.ud.private_data_len < sizeof(*w) ||
	    cm_le32(w->magic) != CM_WHY_MAGIC)
		return -ECONNREFUSED;
	err = cm_le32(w->err);
	/* only what a connect says of the peer's share; else just refused */
	return err == EKEYREJECTED || err == EPROTO ? -(int)err : -ECONNREFUSED;
}

/*
 * Wait for event @want on cm's own id; an error event gives the errno
 * that says why.  Acks every event it takes but a wanted one, which the
 * caller acks.
 */
static int cm_wait(struct sdr_cm *cm, enum rdma_cm_event_type want,
		   int64_t deadline, struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev;
	int ret, status;

	for (;;) {
		ret = cm_next_event(cm->ch, deadline, &ev);
		if (ret)
			return ret;
		if (ev->event == want && !ev->status) {
			*out = ev;
			return 0;
		}
		status = ev->status;
		switch (ev->event) {
		case RDMA_CM_EVENT_ADDR_ERROR:
		case RDMA_CM_EVENT_ROUTE_ERROR:
			ret = status < 0 ? status : -EHOSTUNREACH;
			break;
		case RDMA_CM_EVENT_UNREACHABLE:
			/* a SIDR reply's status > 0: the peer rejected it */
			ret = status == -ETIMEDOUT ? -ETIMEDOUT :
			      status > 0 ? cm_why_get(ev) : -EHOSTUNREACH;
			break;
		case RDMA_CM_EVENT_REJECTED:
			ret = -ECONNREFUSED;
			break;
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			ret = -ENODEV;
			break;
		case RDMA_CM_EVENT_ADDR_CHANGE:
			ret = -ENETRESET;
			break;
		default:
			/* another id's, or nothing to act on: not this wait's */
			ret = ev->event == want ? -EPROTO : 0;
			break;
		}
		rdma_ack_cm_event(ev);
		if (ret)
			return ret;
	}
}

static int cm_new(bool with_channel, struct sdr_cm **out)
{
	struct sdr_cm *cm = calloc(1, sizeof(*cm));
	int flags, ret;

	if (!cm)
		return -ENOMEM;
	if (with_channel) {
		cm->ch = rdma_create_event_channel();
		if (!cm->ch)
			goto err;
		flags = fcntl(cm->ch->fd, F_GETFL);
		if (flags < 0 ||
		    fcntl(cm->ch->fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
		    rdma_create_id(cm->ch, &cm->id, cm, RDMA_PS_UDP))
			goto err;
	}
	*out = cm;
	return 0;
err:
	ret = errno ? -errno : -ENOMEM;
	if (cm->ch)
		rdma_destroy_event_channel(cm->ch);
	free(cm);
	return ret;
}

/* An IPv4 or IPv6 address (a name resolves to its first) and a port. */
static int cm_addr(const char *host, uint16_t port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_DGRAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai;
	char serv[8];
	int ret;

	if (!host) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		memset(ss, 0, sizeof(*ss));
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_any;
		a->sin6_port = htons(port);
		return 0;
	}
	snprintf(serv, sizeof(serv), "%u", port);
	ret = getaddrinfo(host, serv, &hints, &ai);
	if (ret)
		return ret == EAI_SYSTEM ? -errno : -EADDRNOTAVAIL;
	if (ai->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(ai);
		return -EAFNOSUPPORT;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

static void cm_set_dev(struct sdr_cm *cm)
{
	const char *name = cm->id && cm->id->verbs ?
			   ibv_get_device_name(cm->id->verbs->device) : NULL;

	snprintf(cm->dev, sizeof(cm->dev), "%s", name ? name : "");
}

int sdr_cm_listen(const char *addr, uint16_t port, struct sdr_cm **out)
{
	struct sockaddr_storage ss;
	struct sdr_cm *cm;
	int ret;

	if (!out || !port)
		return -EINVAL;
	ret = cm_addr(addr, port, &ss);
	if (ret)
		return ret;
	ret = cm_new(true, &cm);
	if (ret)
		return ret;
	if (rdma_bind_addr(cm->id, (struct sockaddr *)&ss) ||
	    rdma_listen(cm->id, 16)) {
		ret = -errno;
		sdr_cm_destroy(cm);
		return ret;
	}
	cm->listener = true;
	*out = cm;
	return 0;
}

/*
 * A peer's request whose private data is no sdr endpoint (too short, the
 * wrong magic or version) is rejected and reported (-EPROTO); the
 * listener goes on listening.
 */
int sdr_cm_get_request(struct sdr_cm *lcm, int timeout_ms,
		       struct sdr_cm **out)
{
	int64_t deadline = sdr__deadline(timeout_ms);
	struct rdma_cm_event *ev;
	struct sdr_cm *req;
	int ret;

	if (!lcm || !out || !lcm->listener)
		return -EINVAL;
	for (;;) {
		ret = cm_next_event(lcm->ch, deadline, &ev);
		if (ret)
			return ret;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		ret = ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL &&
		      ev->id == lcm->id ? -ENODEV : 0;
		rdma_ack_cm_event(ev);
		if (ret)
			return ret;
	}
	ret = cm_new(false, &req);
	if (ret) {
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		rdma_ack_cm_event(ev);
		return ret;
	}
	req->id = ev->id;
	req->id->context = req;
	req->request = true;
	if (ev->param.ud.private_data_len >= sizeof(req->peer) &&
	    ev->param.ud.private_data)
		memcpy(&req->peer, ev->param.ud.private_data,
		       sizeof(req->peer));
	rdma_ack_cm_event(ev);
	if (req->peer.magic != CM_MAGIC || req->peer.version != CM_VERSION) {
		sdr_cm_reject(req);
		sdr_cm_destroy(req);
		return -EPROTO;
	}
	cm_set_dev(req);
	*out = req;
	return 0;
}

int sdr_cm_resolve(const char *src, const char *dst, uint16_t port,
		   int timeout_ms, struct sdr_cm **out)
{
	int64_t deadline = sdr__deadline(timeout_ms);
	int step = timeout_ms < 0 ? 2000 : timeout_ms > 0 ? timeout_ms : 1;
	struct sockaddr_storage s, d;
	struct rdma_cm_event *ev;
	struct sdr_cm *cm;
	int ret;

	if (!dst || !out || !port)
		return -EINVAL;
	ret = cm_addr(dst, port, &d);
	if (!ret && src)
		ret = cm_addr(src, 0, &s);
	if (ret)
		return ret;
	ret = cm_new(true, &cm);
	if (ret)
		return ret;
	if (rdma_resolve_addr(cm->id, src ? (struct sockaddr *)&s : NULL,
			      (struct sockaddr *)&d, step)) {
		ret = -errno;
		goto err;
	}
	ret = cm_wait(cm, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, &ev);
	if (ret)
		goto err;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(cm->id, step)) {
		ret = -errno;
		goto err;
	}
	ret = cm_wait(cm, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, &ev);
	if (ret)
		goto err;
	rdma_ack_cm_event(ev);
	cm->resolved = true;
	cm_set_dev(cm);
	*out = cm;
	return 0;
err:
	sdr_cm_destroy(cm);
	return ret;
}

const char *sdr_cm_device(const struct sdr_cm *cm)
{
	if (!cm || (!cm->resolved && !cm->request)) {
		errno = EINVAL;
		return NULL;
	}
	return cm->dev;
}

int sdr_cm_peer(const struct sdr_cm *cm, struct sockaddr_in *addr)
{
	const struct sockaddr *sa;

	if (!cm || !addr || (!cm->resolved && !cm->request))
		return -EINVAL;
	sa = rdma_get_peer_addr(cm->id);
	if (sa->sa_family != AF_INET)
		return -EAFNOSUPPORT;
	memcpy(addr, sa, sizeof(*addr));
	return 0;
}

int sdr_cm_check(struct sdr_cm *req, struct sdr_ctx *ctx)
{
	struct sdr_flow_peer peer;
	int ret;

	if (!req || !ctx || !req->request)
		return -EINVAL;
	ret = cm_decode(&req->peer, &peer);
	if (!ret)
		ret = sdr_ctx_check_peer(ctx, &peer);
	/* sdr_cm_reject() tells the client */
	req->refused = ret == -EKEYREJECTED ? ret : 0;
	return ret;
}

/* @flow is on the device the route takes, and its blob. */
static int cm_flow_blob(const struct sdr_cm *cm, const struct sdr_flow *flow,
			struct cm_blob *b)
{
	struct sdr_ctx_info info;
	struct sdr_flow_peer peer;
	int ret = sdr_ctx_query(sdr_flow_ctx(flow), &info);

	if (ret)
		return ret;
	if (strncmp(info.ibdev, cm->dev, sizeof(info.ibdev)))
		return -EXDEV;
	ret = sdr_flow_peer_info(flow, &peer);
	if (ret)
		return ret;
	return cm_encode(&peer, b);
}

/* Connect @flow to the peer of blob @b (its magic and version checked). */
static int cm_connect_blob(struct sdr_flow *flow, const struct cm_blob *b)
{
	struct sdr_flow_peer peer;
	int ret = cm_decode(b, &peer);

	return ret ? ret : sdr_flow_connect_peer(flow, &peer);
}

int sdr_cm_connect(struct sdr_cm *cm, struct sdr_flow *flow, int timeout_ms)
{
	int64_t deadline = sdr__deadline(timeout_ms);
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct cm_blob mine, theirs;
	int ret;

	if (!cm || !flow || !cm->resolved || cm->answered)
		return -EINVAL;
	ret = cm_flow_blob(cm, flow, &mine);
	if (ret)
		return ret;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = &mine;
	cp.private_data_len = sizeof(mine);
	cp.qp_num = flow->ep.qpn;
	if (rdma_connect(cm->id, &cp))
		return -errno;
	cm->answered = true;
	ret = cm_wait(cm, RDMA_CM_EVENT_ESTABLISHED, deadline, &ev);
	if (ret)
		return ret;
	memset(&theirs, 0, sizeof(theirs));
	if (ev->param.ud.private_data &&
	    ev->param.ud.private_data_len >= sizeof(theirs))
		memcpy(&theirs, ev->param.ud.private_data, sizeof(theirs));
	rdma_ack_cm_event(ev);
	if (theirs.magic != CM_MAGIC || theirs.version != CM_VERSION)
		return -EPROTO;
	return cm_connect_blob(flow, &theirs);
}

/*
 * Reject @req, telling the client the errno @err (< 0) its connect gave;
 * 0 tells nothing.
 */
static int cm_reject_why(struct sdr_cm *req, int err)
{
	struct cm_why w;
	unsigned int i;

	if (!req || !req->request || req->answered)
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		w.magic[i] = (uint8_t)(CM_WHY_MAGIC >> (8 * i));
		w.err[i] = (uint8_t)((uint32_t)-err >> (8 * i));
	}
	req->answered = true;
	if (!err)
		return rdma_reject(req->id, NULL, 0) ? -errno : 0;
	return rdma_reject(req->id, &w, sizeof(w)) ? -errno : 0;
}

int sdr_cm_accept(struct sdr_cm *req, struct sdr_flow *flow)
{
	struct rdma_conn_param cp;
	struct cm_blob mine;
	int ret;

	if (!req || !flow || !req->request || req->answered)
		return -EINVAL;
	ret = cm_flow_blob(req, flow, &mine);
	if (!ret)
		ret = cm_connect_blob(flow, &req->peer);
	if (ret) {
		cm_reject_why(req, ret);
		return ret;
	}
	memset(&cp, 0, sizeof(cp));
	cp.private_data = &mine;
	cp.private_data_len = sizeof(mine);
	cp.qp_num = flow->ep.qpn;
	req->answered = true;
	if (rdma_accept(req->id, &cp))
		return -errno;
	return 0;
}

int sdr_cm_reject(struct sdr_cm *req)
{
	return cm_reject_why(req, req ? req->refused : 0);
}

void sdr_cm_destroy(struct sdr_cm *cm)
{
	if (!cm)
		return;
	if (cm->id)
		rdma_destroy_id(cm->id);
	if (cm->ch)
		rdma_destroy_event_channel(cm->ch);
	free(cm);
}
