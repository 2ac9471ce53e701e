// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_ctx: contexts - open /dev/sdr, bind it to a device or GID, map
 * the completion ring (libsdr_ring.c), close (destroying the flows left,
 * libsdr_flow.c) and query; and what the kernel offers (SDR_IOC_QUERY).
 * The top of libsdr: nothing calls into it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libsdr_int.h"
#include "libsdr_ring.h"
#include "libsdr_sys.h"

#define SDR_DEV_PATH	"/dev/sdr"

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
	ret = sdr__secret_from_env(ctx);
	if (ret)
		goto err_free;
	ctx->fd = open(SDR_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (ctx->fd < 0) {
		ret = -errno;
		goto err_free;
	}
	ret = sdr__ioctl(ctx->fd, SDR_IOC_BIND, &b);
	if (ret)
		goto err_close;
	ret = sdr__ring_map(ctx, &b);
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
	sdr__ring_unmap(ctx);
	if (close(ctx->fd) && !ret)
		ret = -errno;
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

int sdr_query(const struct sdr_ctx *ctx, struct sdr_caps *caps)
{
	struct sdr_query q;
	int fd, ret;

	if (!caps)
		return -EINVAL;
	fd = ctx ? ctx->fd : open(SDR_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	ret = sdr__ioctl(fd, SDR_IOC_QUERY, &q);
	if (!ctx)
		close(fd);
	if (ret)
		return ret;
	memset(caps, 0, sizeof(*caps));
	caps->abi_version = q.abi_version;
	caps->policy_nr = q.policy_nr;
	caps->policies = q.policies;
	caps->features = q.features;
	caps->ec_max_k = q.ec_max_k;
	caps->ec_max_m = q.ec_max_m;
	caps->max_msg_size = q.max_msg_size;
	caps->max_msgs = q.max_msgs;
	caps->paths_max = q.paths_max;
	return 0;
}

int sdr_ctx_mr_reg(struct sdr_ctx *ctx, void *addr, uint64_t len,
		   uint32_t *mr_id)
{
	struct sdr_mr_reg r;
	int ret;

	if (!ctx || !mr_id)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.addr = (uintptr_t)addr;
	r.len = len;
	ret = sdr__ioctl(ctx->fd, SDR_IOC_MR_REG, &r);
	if (!ret)
		*mr_id = r.mr_id;
	return ret;
}

int sdr_ctx_mr_dereg(struct sdr_ctx *ctx, uint32_t mr_id)
{
	struct sdr_mr_dereg d;

	if (!ctx)
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.mr_id = mr_id;
	return sdr__ioctl(ctx->fd, SDR_IOC_MR_DEREG, &d);
}
