// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr: contexts and flows - open /dev/sdr, bind, map the completion
 * ring, create/connect/destroy flows and map their regions.
 *
 * Every ioctl argument is zeroed and given size = sizeof(struct) before
 * the fields are filled, so a newer header never sends garbage past what
 * an older kernel knows (it would answer E2BIG).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libsdr_int.h"

int sdr__ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

/* "fe80::1", "::ffff:198.18.0.1" or "198.18.0.1" (a RoCE v2 GID). */
static int parse_gid(const char *s, uint8_t gid[SDR_GID_LEN])
{
	struct in_addr a4;

	if (inet_pton(AF_INET6, s, gid) == 1)
		return 0;
	if (inet_pton(AF_INET, s, &a4) == 1) {
		memset(gid, 0, SDR_GID_LEN);
		gid[10] = 0xff;
		gid[11] = 0xff;
		memcpy(gid + 12, &a4, 4);
		return 0;
	}
	return -EINVAL;
}

static int map_ring(struct sdr_ctx *ctx, const struct sdr_bind *b)
{
	const struct sdr_ring_offsets *o = &b->ring;
	uint64_t cq_end;
	void *p;

	/* Trust but check: every offset must land inside the mapping. */
	cq_end = (uint64_t)o->cqes + (uint64_t)b->cq_entries * sizeof(struct sdr_cqe);
	if (!b->ring_size || b->ring_size > SIZE_MAX ||
	    o->head + 4ULL > b->ring_size || o->tail + 4ULL > b->ring_size ||
	    o->overflow + 4ULL > b->ring_size || cq_end > b->ring_size ||
	    !b->cq_entries || (b->cq_entries & (b->cq_entries - 1)) ||
	    (o->head | o->tail | o->overflow) & 3 || o->cqes & 7)
		return -EPROTO;

	p = mmap(NULL, b->ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 ctx->fd, (off_t)b->ring_offset);
	if (p == MAP_FAILED)
		return -errno;
	ctx->ring_map = p;
	ctx->ring_size = b->ring_size;
	ctx->ring_head = (uint32_t *)(ctx->ring_map + o->head);
	ctx->ring_tail = (const uint32_t *)(ctx->ring_map + o->tail);
	ctx->ring_overflow = (const uint32_t *)(ctx->ring_map + o->overflow);
	ctx->cqes = (const struct sdr_cqe *)(ctx->ring_map + o->cqes);
	ctx->ring_mask = b->cq_entries - 1;
	return 0;
}

struct sdr_ctx *sdr_open(const char *dev, const struct sdr_ctx_attr *attr)
{
	static const struct sdr_ctx_attr defaults;
	struct sdr_bind b;
	struct sdr_ctx *ctx;
	int ret;

	if (!attr)
		attr = &defaults;
	if (!dev || attr->reserved || (attr->flags & ~SDR_CTX_BY_GID)) {
		errno = EINVAL;
		return NULL;
	}

	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	b.port = attr->port;
	b.cq_entries = attr->cq_entries;
	if ((attr->flags & SDR_CTX_BY_GID) || strchr(dev, ':') ||
	    parse_gid(dev, b.gid) == 0) {
		if (parse_gid(dev, b.gid)) {
			errno = EINVAL;
			return NULL;
		}
		b.flags |= SDR_BIND_BY_GID;
	} else {
		if (strlen(dev) >= sizeof(b.ibdev)) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		strcpy((char *)b.ibdev, dev);
	}

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->fd = open(SDR_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (ctx->fd < 0) {
		ret = -errno;
		goto err_free;
	}
	ret = sdr__ioctl(ctx->fd, SDR_IOC_BIND, &b);
	if (ret)
		goto err_close;
	ret = map_ring(ctx, &b);
	if (ret)
		goto err_close;

	memcpy(ctx->info.ibdev, b.ibdev, sizeof(ctx->info.ibdev));
	ctx->info.ibdev[sizeof(ctx->info.ibdev) - 1] = 0;
	memcpy(ctx->info.gid, b.gid, sizeof(ctx->info.gid));
	ctx->info.port = b.port;
	ctx->info.mtu = b.mtu;
	ctx->info.cq_entries = b.cq_entries;
	return ctx;

err_close:
	close(ctx->fd);
err_free:
	free(ctx);
	errno = -ret;
	return NULL;
}

int sdr_close(struct sdr_ctx *ctx)
{
	int ret = 0;

	if (!ctx)
		return -EINVAL;
	while (ctx->flows) {
		int r = sdr_flow_destroy(ctx->flows);

		if (r && !ret)
			ret = r;
	}
	if (ctx->ring_map)
		munmap(ctx->ring_map, ctx->ring_size);
	if (close(ctx->fd) && !ret)
		ret = -errno;
	free(ctx->backlog.ent);
	free(ctx);
	return ret;
}

int sdr_ctx_fd(const struct sdr_ctx *ctx)
{
	return ctx ? ctx->fd : -EINVAL;
}

int sdr_ctx_query(const struct sdr_ctx *ctx, struct sdr_ctx_info *info)
{
	if (!ctx || !info)
		return -EINVAL;
	*info = ctx->info;
	info->cq_overflow = __atomic_load_n(ctx->ring_overflow, __ATOMIC_RELAXED);
	return 0;
}

struct sdr_flow *sdr__flow_by_id(struct sdr_ctx *ctx, uint32_t id)
{
	struct sdr_flow *f;

	for (f = ctx->flows; f; f = f->next)
		if (f->props.flow_id == id)
			return f;
	return NULL;
}

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

	if (!c->payload || !c->chunk_size || !n || stride < c->max_msg_size)
		return -EPROTO;
	if (c->recv_size < n * stride || c->send_size < n * stride)
		return -EPROTO;
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

	if (!ctx || !attr || attr->reserved) {
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
	f->state_stride = c.state_stride;
	f->chunk_bitmap = c.chunk_bitmap;
	f->pkt_bitmap = c.pkt_bitmap;

	f->recv_map = map_area(ctx->fd, c.recv_offset, c.recv_size, PROT_READ);
	if (f->recv_map == MAP_FAILED)
		goto err_map;
	f->recv_size = c.recv_size;
	f->send_map = map_area(ctx->fd, c.send_offset, c.send_size,
			       PROT_READ | PROT_WRITE);
	if (f->send_map == MAP_FAILED)
		goto err_map;
	f->send_size = c.send_size;
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
		h->data = f->recv_map + (size_t)i * c.slot_stride;
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
	sdr__backlog_drop_flow(ctx, flow);
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

int sdr_flow_set_policy(struct sdr_flow *flow, uint32_t policy)
{
	struct sdr_flow_modify m;

	if (!flow)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.size = sizeof(m);
	m.flags = SDR_FLOW_MODIFY_POLICY;
	m.flow_id = flow->props.flow_id;
	m.policy = policy;
	return sdr__ioctl(flow->ctx->fd, SDR_IOC_FLOW_MODIFY, &m);
}

int sdr_flow_endpoint(const struct sdr_flow *flow, struct sdr_endpoint *ep)
{
	if (!flow || !ep)
		return -EINVAL;
	*ep = flow->ep;
	return 0;
}

int sdr_flow_connect(struct sdr_flow *flow, const struct sdr_endpoint *peer)
{
	struct sdr_flow_connect c;

	if (!flow || !peer)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flow_id = flow->props.flow_id;
	c.peer = *peer;
	return sdr__ioctl(flow->ctx->fd, SDR_IOC_FLOW_CONNECT, &c);
}

struct sdr_ctx *sdr_flow_ctx(const struct sdr_flow *flow)
{
	return flow ? flow->ctx : NULL;
}
