// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_flow: flows - create one and map its receive, send and state
 * regions at the offsets the kernel returned, set up its receive handles,
 * connect, change policy, destroy, and report properties and counters.
 * Calls libsdr_ring.c (to forget a destroyed flow's parked completions)
 * and libsdr_sys.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "libsdr_int.h"
#include "libsdr_ring.h"
#include "libsdr_sys.h"

static void *map_area(int fd, uint64_t off, uint64_t size, int prot)
{
	void *p;

	if (!size || size > SIZE_MAX) {
		errno = EPROTO;
		return MAP_FAILED;
	}
	p = mmap(NULL, size, prot, MAP_SHARED, fd, (off_t)off);
	return p;
}

static void unmap_flow(struct sdr_flow *f)
{
	if (f->recv_map)
		munmap(f->recv_map, f->recv_size);
	if (f->send_map)
		munmap(f->send_map, f->send_size);
	if (f->state_map)
		munmap(f->state_map, f->state_size);
	f->recv_map = f->send_map = f->state_map = NULL;
}

/* Check that the layout the kernel returned covers every slot. */
static int check_layout(const struct sdr_flow_create *c)
{
	uint64_t n = c->max_msgs, stride = c->slot_stride;
	uint64_t words_c, words_p, packets, chunks;

	if (!c->payload || !c->chunk_size || !n)
		return -EPROTO;
	if (c->flags & SDR_FLOW_CREATE_MR) {
		if (c->recv_size || c->send_size)	/* no regions */
			return -EPROTO;
	} else if (stride < c->max_msg_size || c->recv_size < n * stride ||
		   c->send_size < n * stride) {
		return -EPROTO;
	}
	if (c->state_size < n * c->state_stride ||
	    c->state_stride < sizeof(struct sdr_recv_state))
		return -EPROTO;
	packets = (c->max_msg_size + c->payload - 1) / c->payload;
	chunks = (c->max_msg_size + c->chunk_size - 1) / c->chunk_size;
	words_c = (chunks + 63) / 64;
	words_p = (packets + 63) / 64;
	if ((c->chunk_bitmap & 7) || (c->pkt_bitmap & 7) ||
	    c->chunk_bitmap + words_c * 8 > c->state_stride ||
	    c->pkt_bitmap + words_p * 8 > c->state_stride)
		return -EPROTO;
	return 0;
}

struct sdr_flow *sdr_flow_create(struct sdr_ctx *ctx,
				 const struct sdr_flow_attr *attr)
{
	struct sdr_flow_create c;
	struct sdr_flow_destroy d;
	struct sdr_flow *f;
	uint32_t i;
	int ret;

	if (!ctx || !attr) {
		errno = EINVAL;
		return NULL;
	}
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.policy = attr->policy;
	c.mtu = attr->mtu;
	c.chunk_size = attr->chunk_size;
	c.max_msg_size = attr->max_msg_size;
	c.max_msgs = attr->max_msgs;
	c.ec_k = attr->ec_k;
	c.ec_m = attr->ec_m;
	c.paths = attr->paths;
	c.auth = attr->auth;
	if (attr->auth != SDR_AUTH_OFF)
		memcpy(c.secret, ctx->secret, sizeof(c.secret));
	c.flags = attr->flags;
	c.max_inflight = attr->max_inflight;

	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	ret = sdr__ioctl(ctx->fd, SDR_IOC_FLOW_CREATE, &c);
	if (ret)
		goto err_free;

	ret = check_layout(&c);
	if (ret)
		goto err_destroy;
	f->ctx = ctx;
	f->props.flow_id = c.flow_id;
	f->props.policy = c.policy;
	f->props.mtu = c.mtu;
	f->props.payload = c.payload;
	f->props.chunk_size = c.chunk_size;
	f->props.max_msg_size = c.max_msg_size;
	f->props.max_msgs = c.max_msgs;
	f->props.slot_stride = c.slot_stride;
	f->ep = c.ep;
	f->paths = c.ep_paths;
	f->auth = c.ep_auth;
	f->kex = c.ep_kex;
	f->state_stride = c.state_stride;
	f->chunk_bitmap = c.chunk_bitmap;
	f->pkt_bitmap = c.pkt_bitmap;

	if (!(c.flags & SDR_FLOW_CREATE_MR)) {
		f->recv_map = map_area(ctx->fd, c.recv_offset, c.recv_size,
				       PROT_READ);
		if (f->recv_map == MAP_FAILED)
			goto err_map;
		f->recv_size = c.recv_size;
		f->send_map = map_area(ctx->fd, c.send_offset, c.send_size,
				       PROT_READ | PROT_WRITE);
		if (f->send_map == MAP_FAILED)
			goto err_map;
		f->send_size = c.send_size;
	}
	f->state_map = map_area(ctx->fd, c.state_offset, c.state_size, PROT_READ);
	if (f->state_map == MAP_FAILED)
		goto err_map;
	f->state_size = c.state_size;

	f->recvs = calloc(c.max_msgs, sizeof(*f->recvs));
	if (!f->recvs) {
		ret = -ENOMEM;
		goto err_unmap;
	}
	for (i = 0; i < c.max_msgs; i++) {
		struct sdr_recv *h = &f->recvs[i];
		const uint8_t *st = f->state_map + (size_t)i * c.state_stride;

		h->flow = f;
		h->slot = i;
		h->state = (const struct sdr_recv_state *)st;
		h->chunk_bm = (const uint64_t *)(st + c.chunk_bitmap);
		h->pkt_bm = (const uint64_t *)(st + c.pkt_bitmap);
		h->region = f->recv_map ? f->recv_map + (size_t)i * c.slot_stride :
					  NULL;
	}
	f->next = ctx->flows;
	ctx->flows = f;
	return f;

err_map:
	ret = -errno;
	if (f->recv_map == MAP_FAILED)
		f->recv_map = NULL;
	if (f->send_map == MAP_FAILED)
		f->send_map = NULL;
	if (f->state_map == MAP_FAILED)
		f->state_map = NULL;
err_unmap:
	unmap_flow(f);
err_destroy:
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.flow_id = c.flow_id;
	sdr__ioctl(ctx->fd, SDR_IOC_FLOW_DESTROY, &d);
err_free:
	free(f);
	errno = -ret;
	return NULL;
}

int sdr_flow_destroy(struct sdr_flow *flow)
{
	struct sdr_flow_destroy d;
	struct sdr_ctx *ctx;
	struct sdr_flow **pp;
	int ret;

	if (!flow)
		return -EINVAL;
	ctx = flow->ctx;
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.flow_id = flow->props.flow_id;
	ret = sdr__ioctl(ctx->fd, SDR_IOC_FLOW_DESTROY, &d);

	for (pp = &ctx->flows; *pp; pp = &(*pp)->next) {
		if (*pp == flow) {
			*pp = flow->next;
			break;
		}
	}
	sdr__ring_drop_flow(ctx, flow);
	unmap_flow(flow);
	free(flow->recvs);
	free(flow);
	return ret;
}

int sdr_flow_props(const struct sdr_flow *flow, struct sdr_flow_props *props)
{
	if (!flow || !props)
		return -EINVAL;
	*props = flow->props;
	return 0;
}

int sdr_flow_info(struct sdr_flow *flow, struct sdr_flow_info *info)
{
	struct sdr_flow_info fi;
	int ret;

	if (!flow || !info)
		return -EINVAL;
	memset(&fi, 0, sizeof(fi));
	fi.size = sizeof(fi);
	fi.flow_id = flow->props.flow_id;
	ret = sdr__ioctl(flow->ctx->fd, SDR_IOC_FLOW_INFO, &fi);
	if (!ret)
		*info = fi;
	return ret;
}

/* SDR_IOC_FLOW_MODIFY with @flags: the policy, the EC geometry, the rate. */
static int flow_modify(struct sdr_flow *flow, uint32_t flags, uint32_t policy,
		       uint32_t k, uint32_t m, uint32_t mbit)
{
	struct sdr_flow_modify fm;

	if (!flow)
		return -EINVAL;
	memset(&fm, 0, sizeof(fm));
	fm.size = sizeof(fm);
	fm.flags = flags;
	fm.flow_id = flow->props.flow_id;
	fm.policy = policy;
	fm.ec_k = k;
	fm.ec_m = m;
	fm.rate_mbit = mbit;
	return sdr__ioctl(flow->ctx->fd, SDR_IOC_FLOW_MODIFY, &fm);
}

int sdr_flow_set_policy(struct sdr_flow *flow, uint32_t policy)
{
	return flow_modify(flow, SDR_FLOW_MODIFY_POLICY, policy, 0, 0, 0);
}

int sdr_flow_set_ec(struct sdr_flow *flow, uint32_t k, uint32_t m)
{
	return flow_modify(flow, SDR_FLOW_MODIFY_EC, 0, k, m, 0);
}

int sdr_flow_set_rate(struct sdr_flow *flow, uint32_t mbit)
{
	return flow_modify(flow, SDR_FLOW_MODIFY_RATE, 0, 0, 0, mbit);
}

int sdr_flow_set_group(struct sdr_flow *flow, uint32_t group)
{
	if (!flow)
		return -EINVAL;
	flow->group = group;
	return 0;
}

int sdr_flow_endpoint(const struct sdr_flow *flow, struct sdr_endpoint *ep)
{
	if (!flow || !ep)
		return -EINVAL;
	*ep = flow->ep;
	return 0;
}

int sdr_flow_paths(const struct sdr_flow *flow, struct sdr_ep_paths *paths)
{
	if (!flow || !paths)
		return -EINVAL;
	*paths = flow->paths;
	return 0;
}

static int flow_connect(struct sdr_flow *flow, const struct sdr_endpoint *peer,
			const struct sdr_ep_paths *peer_paths,
			const struct sdr_ep_auth *peer_auth,
			const struct sdr_ep_kex *peer_kex)
{
	struct sdr_flow_connect c;

	if (!flow || !peer)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flow_id = flow->props.flow_id;
	c.peer = *peer;
	if (peer_paths)
		c.peer_paths = *peer_paths;
	if (peer_auth)
		c.peer_auth = *peer_auth;
	if (peer_kex)
		c.peer_kex = *peer_kex;
	return sdr__ioctl(flow->ctx->fd, SDR_IOC_FLOW_CONNECT, &c);
}

int sdr_flow_connect_paths(struct sdr_flow *flow,
			   const struct sdr_endpoint *peer,
			   const struct sdr_ep_paths *peer_paths)
{
	return flow_connect(flow, peer, peer_paths, NULL, NULL);
}

#ifdef LIBSDR_SHARED
/*
 * libsdr.so: these two are version 2.4's (the 2.0 ones, below, take the
 * struct without the share); in libsdr.a they are plain.
 */
#define sdr_flow_peer_info	sdr_flow_peer_info_2_4
#define sdr_flow_connect_peer	sdr_flow_connect_peer_2_4
int sdr_flow_peer_info_2_4(const struct sdr_flow *flow,
			   struct sdr_flow_peer *out);
int sdr_flow_connect_peer_2_4(struct sdr_flow *flow,
			      const struct sdr_flow_peer *peer);
__asm__(".symver sdr_flow_peer_info_2_4, sdr_flow_peer_info@@LIBSDR_2.4");
__asm__(".symver sdr_flow_connect_peer_2_4, sdr_flow_connect_peer@@LIBSDR_2.4");
#endif

int sdr_flow_peer_info(const struct sdr_flow *flow, struct sdr_flow_peer *out)
{
	if (!flow || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->ep = flow->ep;
	out->paths = flow->paths;
	out->auth = flow->auth;
	out->kex = flow->kex;
	return 0;
}

int sdr_flow_connect_peer(struct sdr_flow *flow,
			  const struct sdr_flow_peer *peer)
{
	if (!peer)
		return -EINVAL;
	return flow_connect(flow, &peer->ep, &peer->paths, &peer->auth,
			    &peer->kex);
}

#ifdef LIBSDR_SHARED
#undef sdr_flow_peer_info
#undef sdr_flow_connect_peer
/*
 * libsdr 2.0 to 2.3's struct sdr_flow_peer, without the share: binaries
 * built against them keep their calls.  Only flows that do not
 * authenticate connect with it (as with any peer that gives no share).
 */
struct sdr_flow_peer_2_0 {
	struct sdr_endpoint ep;
	struct sdr_ep_paths paths;
	struct sdr_ep_auth auth;
};

int sdr_flow_peer_info_2_0(const struct sdr_flow *flow,
			   struct sdr_flow_peer_2_0 *out);
int sdr_flow_connect_peer_2_0(struct sdr_flow *flow,
			      const struct sdr_flow_peer_2_0 *peer);
__asm__(".symver sdr_flow_peer_info_2_0, sdr_flow_peer_info@LIBSDR_2.0");
__asm__(".symver sdr_flow_connect_peer_2_0, sdr_flow_connect_peer@LIBSDR_2.0");

int sdr_flow_peer_info_2_0(const struct sdr_flow *flow,
			   struct sdr_flow_peer_2_0 *out)
{
	if (!flow || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->ep = flow->ep;
	out->paths = flow->paths;
	out->auth = flow->auth;
	return 0;
}

int sdr_flow_connect_peer_2_0(struct sdr_flow *flow,
			      const struct sdr_flow_peer_2_0 *peer)
{
	if (!peer)
		return -EINVAL;
	return flow_connect(flow, &peer->ep, &peer->paths, &peer->auth, NULL);
}
#endif

uint32_t sdr_flow_auth(const struct sdr_flow *flow)
{
	return flow ? flow->auth.alg : 0;
}

uint32_t sdr_flow_kex(const struct sdr_flow *flow)
{
	if (!flow || flow->kex.alg == SDR_AUTH_OFF || !flow->kex.alg)
		return SDR_KEX_NONE;
	return flow->kex.flags & SDR_KEX_F_PSK ? SDR_KEX_PSK :
						 SDR_KEX_EPHEMERAL;
}

int sdr_flow_connect(struct sdr_flow *flow, const struct sdr_endpoint *peer)
{
	return sdr_flow_connect_paths(flow, peer, NULL);
}

int sdr_flow_rail_add(struct sdr_flow *flow, const char *ibdev,
		      uint32_t paths, struct sdr_rail_ep *out)
{
	struct sdr_flow_rail r;
	int ret;

	if (!flow || !ibdev || !out || strlen(ibdev) >= sizeof(r.ibdev))
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.flow_id = flow->props.flow_id;
	r.op = SDR_RAIL_ADD;
	r.paths = paths;
	memcpy(r.ibdev, ibdev, strlen(ibdev));
	ret = sdr__ioctl(flow->ctx->fd, SDR_IOC_FLOW_RAIL, &r);
	if (ret)
		return ret;
	out->ep = r.ep;
	out->paths = r.ep_paths;
	return (int)r.rail;
}

int sdr_flow_rail_connect(struct sdr_flow *flow, uint32_t rail,
			  const struct sdr_rail_ep *peer)
{
	struct sdr_flow_rail r;

	if (!flow || !peer)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.flow_id = flow->props.flow_id;
	r.op = SDR_RAIL_CONNECT;
	r.rail = rail;
	r.ep = peer->ep;
	r.ep_paths = peer->paths;
	return sdr__ioctl(flow->ctx->fd, SDR_IOC_FLOW_RAIL, &r);
}

struct sdr_ctx *sdr_flow_ctx(const struct sdr_flow *flow)
{
	return flow ? flow->ctx : NULL;
}
