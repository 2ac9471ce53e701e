// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_group: opening and closing a context's groups (SDR_IOC_GROUP).
 * Posts join the group their flow names (sdr_flow_set_group, in
 * libsdr_flow.c); the group's completion comes through the ring
 * (sdr_group_poll and sdr_group_wait, libsdr_ring.c).  Calls only
 * libsdr_sys.c.
 */
#include <errno.h>
#include <string.h>

#include "libsdr_int.h"
#include "libsdr_sys.h"

static int group_ioctl(struct sdr_ctx *ctx, uint32_t op, uint32_t *group,
		       uint64_t user_data)
{
	struct sdr_group g;
	int ret;

	memset(&g, 0, sizeof(g));
	g.size = sizeof(g);
	g.op = op;
	g.group = op == SDR_GROUP_CLOSE ? *group : 0;
	g.user_data = user_data;
	ret = sdr__ioctl(ctx->fd, SDR_IOC_GROUP, &g);
	if (!ret && op == SDR_GROUP_OPEN)
		*group = g.group;
	return ret;
}

int sdr_group_open(struct sdr_ctx *ctx, uint64_t user_data, uint32_t *group)
{
	if (!ctx || !group)
		return -EINVAL;
	return group_ioctl(ctx, SDR_GROUP_OPEN, group, user_data);
}

int sdr_group_close(struct sdr_ctx *ctx, uint32_t group)
{
	if (!ctx || !group)
		return -EINVAL;
	return group_ioctl(ctx, SDR_GROUP_CLOSE, &group, 0);
}
