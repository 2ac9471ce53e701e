// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_send: posting sends - one-shot from the send region or a user
 * pointer, and streams - and handing out the send region's slots.  Their
 * completions come back through the ring (libsdr_ring.c).  Calls only
 * libsdr_sys.c.
 */
#include <errno.h>
#include <string.h>

#include "libsdr_int.h"
#include "libsdr_sys.h"

void *sdr_send_buf(struct sdr_flow *flow, size_t *len)
{
	if (!flow) {
		errno = EINVAL;
		return NULL;
	}
	if (len)
		*len = flow->send_size;
	return flow->send_map;
}

void *sdr_send_slot(struct sdr_flow *flow, uint32_t i)
{
	if (!flow || i >= flow->props.max_msgs) {
		errno = EINVAL;
		return NULL;
	}
	return flow->send_map + (size_t)i * flow->props.slot_stride;
}

static int send_ioctl(struct sdr_flow *flow, uint32_t flags, uint32_t mr_id,
		      uint64_t addr, uint64_t len, uint64_t msg_len,
		      uint32_t dst_off, uint32_t imm, uint64_t user_data,
		      uint32_t *seq)
{
	struct sdr_send_post p;
	int ret;

	if (!flow)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.flags = flags;
	p.mr_id = mr_id;
	p.flow_id = flow->props.flow_id;
	p.imm = imm;
	p.addr = addr;
	p.len = len;
	p.msg_len = msg_len;
	p.dst_off = dst_off;
	p.user_data = user_data;
	if (flags & (SDR_SEND_STREAM_CONT | SDR_SEND_STREAM_END)) {
		p.seq = *seq;
	} else if (flow->group) {
		p.flags |= SDR_SEND_GROUP;
		p.group = flow->group;
	}
	ret = sdr__ioctl(flow->ctx->fd, SDR_IOC_SEND_POST, &p);
	if (!ret && seq && !(flags & (SDR_SEND_STREAM_CONT | SDR_SEND_STREAM_END)))
		*seq = p.seq;
	return ret;
}

int sdr_flow_send_post(struct sdr_flow *flow, uint64_t off, uint64_t len,
		       uint32_t imm, uint64_t user_data, uint32_t *seq)
{
	return send_ioctl(flow, 0, 0, off, len, 0, 0, imm, user_data, seq);
}

int sdr_flow_send_post_ptr(struct sdr_flow *flow, const void *ptr,
			   uint64_t len, uint32_t imm, uint64_t user_data,
			   uint32_t *seq)
{
	return send_ioctl(flow, SDR_SEND_USER_PTR, 0, (uintptr_t)ptr, len, 0,
			  0, imm, user_data, seq);
}

int sdr_flow_send_post_mr(struct sdr_flow *flow, uint32_t mr_id,
			  const void *addr, uint64_t len, uint32_t imm,
			  uint64_t user_data, uint32_t *seq)
{
	return send_ioctl(flow, SDR_SEND_MR, mr_id, (uintptr_t)addr, len, 0,
			  0, imm, user_data, seq);
}

int sdr_flow_send_post_at(struct sdr_flow *flow, uint32_t flags,
			  uint32_t mr_id, uint64_t addr, uint64_t len,
			  uint32_t dst_off, uint32_t imm, uint64_t user_data,
			  uint32_t *seq)
{
	if (flags & ~(SDR_SEND_USER_PTR | SDR_SEND_MR))
		return -EINVAL;
	return send_ioctl(flow, flags, mr_id, addr, len, 0, dst_off, imm,
			  user_data, seq);
}

int sdr_flow_parts_open(struct sdr_flow *flow, uint32_t imm,
			uint64_t user_data, uint32_t *seq)
{
	return send_ioctl(flow, SDR_SEND_PARTS | SDR_SEND_STREAM_START, 0, 0,
			  0, 0, 0, imm, user_data, seq);
}

int sdr_flow_parts_add(struct sdr_flow *flow, uint32_t seq, uint32_t flags,
		       uint32_t mr_id, uint64_t addr, uint64_t len,
		       uint32_t dst_off)
{
	if (flags & ~(SDR_SEND_USER_PTR | SDR_SEND_MR))
		return -EINVAL;
	return send_ioctl(flow, flags | SDR_SEND_PARTS | SDR_SEND_STREAM_CONT,
			  mr_id, addr, len, 0, dst_off, 0, 0, &seq);
}

int sdr_flow_parts_end(struct sdr_flow *flow, uint32_t seq)
{
	return send_ioctl(flow, SDR_SEND_PARTS | SDR_SEND_STREAM_END, 0, 0, 0,
			  0, 0, 0, 0, &seq);
}

int sdr_send_stream_start(struct sdr_flow *flow, uint64_t msg_len,
			  uint64_t addr, uint64_t len, uint32_t flags,
			  uint32_t imm, uint64_t user_data, uint32_t *seq)
{
	if (flags & ~SDR_SEND_USER_PTR)
		return -EINVAL;
	return send_ioctl(flow, flags | SDR_SEND_STREAM_START, 0, addr, len,
			  msg_len, 0, imm, user_data, seq);
}

int sdr_send_stream_continue(struct sdr_flow *flow, uint32_t seq,
			     uint64_t addr, uint64_t len, uint32_t flags)
{
	if (flags & ~SDR_SEND_USER_PTR)
		return -EINVAL;
	return send_ioctl(flow, flags | SDR_SEND_STREAM_CONT, 0, addr, len, 0, 0,
			  0, 0, &seq);
}

int sdr_send_stream_end(struct sdr_flow *flow, uint32_t seq,
			uint64_t addr, uint64_t len, uint32_t flags)
{
	if (flags & ~SDR_SEND_USER_PTR)
		return -EINVAL;
	return send_ioctl(flow, flags | SDR_SEND_STREAM_END, 0, addr, len, 0, 0,
			  0, 0, &seq);
}
