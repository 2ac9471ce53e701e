// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_sdk: the SDR SDK's API (sdr.h, sdr_mr.h) over libsdr's own calls.
 * A context is a bound libsdr context, a QP a flow of registered memory
 * only (SDR_FLOW_CREATE_MR), an MR a registration (SDR_IOC_MR_REG) whose
 * id is both its keys, a receive handle a receive slot of the flow and a
 * send handle one message of it.  Calls libsdr_ctx.c, libsdr_flow.c,
 * libsdr_ring.c, libsdr_send.c and libsdr_recv.c through libsdr.h (and
 * libsdr_recv.h), and hands out a receive's chunk bitmap in place.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libsdr_int.h"
#include "libsdr_recv.h"
#include "sdr.h"
#include "sdr_mr.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sdr_recv_bitmap_get() hands out the kernel's bitmap words as bytes"
#endif

#define SDK_QPS_DEFAULT_LOG	4
#define SDK_QPS_MAX_LOG		10
#define SDK_INFO_MAGIC		0x53445251u	/* "SDRQ" */
#define SDK_INFO_VERSION	2	/* 2: the peer has its key-exchange share */

struct sdr_context {
	struct sdr_ctx *ctx;
	uint32_t max_qps;
	uint32_t nr_qps;
	uint32_t nr_mrs;
};

struct sdr_mr {
	struct sdr_context *context;
	uint32_t id;
};

struct sdr_recv_handle {
	struct sdr_qp *qp;
	struct sdr_recv *recv;		/* NULL while the slot is free */
	uint32_t max_length;
};

struct sdr_send_handle {
	struct sdr_qp *qp;
	bool used;
	bool done;
	bool streaming;			/* a streamed send not yet ended */
	uint8_t status;			/* SDR_STATUS_* once done */
	uint32_t seq;
};

struct sdr_qp {
	struct sdr_context *context;
	struct sdr_flow *flow;
	const struct sdr_flow_props *geo;	/* the flow's: chunk size, MTU */
	bool send_enable, recv_enable;
	struct sdr_recv_handle *recvs;	/* max_msgs, by slot */
	struct sdr_send_handle *sends;	/* max_msgs */
};

/* What sdr_qp_info_get() writes: its size is sdr_qp_info_size_get()'s. */
struct sdk_info {
	uint32_t magic;
	uint32_t version;
	uint32_t chunk;
	uint32_t mtu;
	struct sdr_flow_peer peer;
};

/* A libsdr result as the SDK's: -EAGAIN is SDR_RETRY, others set errno. */
static int sdk_rc(int ret)
{
	if (!ret)
		return SDR_SUCCESS;
	if (ret == -EAGAIN)
		return SDR_RETRY;
	errno = -ret;
	return SDR_ERROR;
}

static int sdk_fail(int err)
{
	errno = err;
	return SDR_ERROR;
}

struct sdr_context *sdr_context_create(const char *dev_name,
				       struct sdr_dev_attr *dev_attr)
{
	uint32_t log = dev_attr && dev_attr->log_max_qps ?
		       dev_attr->log_max_qps : SDK_QPS_DEFAULT_LOG;
	struct sdr_ctx_attr attr = { 0 };
	struct sdr_context *c;
	uint64_t cqes;

	if (!dev_name || log > SDK_QPS_MAX_LOG) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->max_qps = 1U << log;
	/* each QP's flow holds two ring entries per message slot */
	cqes = 4096;
	while (cqes < 2ULL * 256 * c->max_qps && cqes < 65536)
		cqes <<= 1;
	attr.cq_entries = (uint32_t)cqes;
	c->ctx = sdr_open(dev_name, &attr);
	if (!c->ctx) {
		free(c);
		return NULL;
	}
	return c;
}

int sdr_context_destroy(struct sdr_context *context)
{
	int ret;

	if (!context)
		return sdk_fail(EINVAL);
	if (context->nr_qps || context->nr_mrs)
		return sdk_fail(EBUSY);
	ret = sdr_close(context->ctx);
	free(context);
	return sdk_rc(ret);
}

static void qp_free(struct sdr_qp *qp)
{
	free(qp->recvs);
	free(qp->sends);
	free(qp);
}

struct sdr_qp *sdrx_qp_create(struct sdr_context *ctx,
			      struct sdr_qp_attr *qp_attr,
			      const struct sdrx_qp_attr *ext)
{
	struct sdr_flow_attr fa = { 0 };
	struct sdr_qp *qp;
	uint64_t inflight, pay;
	uint32_t i;
	int ret;

	if (!ctx || !qp_attr || qp_attr->bitmap_chunk_size_log_bytes > 30 ||
	    qp_attr->max_log_num_msgs > 10 || qp_attr->mtu > SDR_MTU_4096 ||
	    qp_attr->max_in_flight_log_bytes > 63 ||
	    (ext && (ext->flags & ~(SDRX_QP_POLICY | SDRX_QP_EC |
				    SDRX_QP_PATHS | SDRX_QP_AUTH) ||
		     ext->reserved[0] || ext->reserved[1] ||
		     ext->reserved[2] || ext->reserved[3] ||
		     ext->reserved[4]))) {
		errno = EINVAL;
		return NULL;
	}
	if (ctx->nr_qps >= ctx->max_qps) {
		errno = ENOSPC;
		return NULL;
	}
	/* the SDK's programs wait for every bit: a reliable policy */
	fa.policy = SDR_POLICY_SR;
	fa.mtu = 64U << qp_attr->mtu;
	fa.chunk_size = 1U << qp_attr->bitmap_chunk_size_log_bytes;
	fa.max_msgs = 1U << qp_attr->max_log_num_msgs;
	/* the largest message: what may be in flight, at most 1 GiB */
	inflight = 1ULL << qp_attr->max_in_flight_log_bytes;
	fa.max_msg_size = inflight > (1U << 30) ? 1U << 30 : (uint32_t)inflight;
	fa.flags = SDR_FLOW_CREATE_MR;
	/* max_in_flight_log_bytes bounds the window, in packets */
	pay = fa.mtu > 64 ? fa.mtu - 64 : 1;
	fa.max_inflight = inflight / pay >= UINT32_MAX ? 0 :
			  (uint32_t)((inflight + pay - 1) / pay);
	if (ext && (ext->flags & SDRX_QP_POLICY))
		fa.policy = ext->policy;
	if (ext && (ext->flags & SDRX_QP_EC)) {
		fa.ec_k = ext->ec_k;
		fa.ec_m = ext->ec_m;
	}
	if (ext && (ext->flags & SDRX_QP_PATHS))
		fa.paths = ext->paths;
	if (ext && (ext->flags & SDRX_QP_AUTH))
		fa.auth = ext->auth;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->recvs = calloc(fa.max_msgs, sizeof(*qp->recvs));
	qp->sends = calloc(fa.max_msgs, sizeof(*qp->sends));
	if (!qp->recvs || !qp->sends)
		goto err_free;
	qp->flow = sdr_flow_create(ctx->ctx, &fa);
	if (!qp->flow)
		goto err_free;
	ret = qp_attr->rate_limit ?
	      sdr_flow_set_rate(qp->flow, qp_attr->rate_limit) : 0;
	if (ret) {
		sdr_flow_destroy(qp->flow);
		errno = -ret;
		goto err_free;
	}
	qp->context = ctx;
	qp->geo = &qp->flow->props;
	qp->send_enable = qp_attr->send_enable;
	qp->recv_enable = qp_attr->recv_enable;
	for (i = 0; i < fa.max_msgs; i++) {
		qp->recvs[i].qp = qp;
		qp->sends[i].qp = qp;
	}
	ctx->nr_qps++;
	return qp;

err_free:
	ret = errno;
	qp_free(qp);
	errno = ret;
	return NULL;
}

struct sdr_qp *sdr_qp_create(struct sdr_context *ctx,
			     struct sdr_qp_attr *qp_attr)
{
	return sdrx_qp_create(ctx, qp_attr, NULL);
}

int sdr_qp_destroy(struct sdr_qp *qp)
{
	int ret;

	if (!qp)
		return sdk_fail(EINVAL);
	/* what is still posted goes with the flow (completes FAILED) */
	ret = sdr_flow_destroy(qp->flow);
	if (ret)
		return sdk_rc(ret);
	qp->context->nr_qps--;
	qp_free(qp);
	return SDR_SUCCESS;
}

int sdr_qp_info_size_get(struct sdr_qp *qp, size_t *info_size)
{
	if (!qp || !info_size)
		return sdk_fail(EINVAL);
	*info_size = sizeof(struct sdk_info);
	return SDR_SUCCESS;
}

int sdr_qp_info_get(struct sdr_qp *qp, void *info)
{
	struct sdk_info in;
	int ret;

	if (!qp || !info)
		return sdk_fail(EINVAL);
	memset(&in, 0, sizeof(in));
	in.magic = SDK_INFO_MAGIC;
	in.version = SDK_INFO_VERSION;
	in.chunk = qp->geo->chunk_size;
	in.mtu = qp->geo->mtu;
	ret = sdr_flow_peer_info(qp->flow, &in.peer);
	if (ret)
		return sdk_rc(ret);
	memcpy(info, &in, sizeof(in));
	return SDR_SUCCESS;
}

int sdr_qp_connect(struct sdr_qp *qp, void *remote_qp_info)
{
	struct sdk_info in;

	if (!qp || !remote_qp_info)
		return sdk_fail(EINVAL);
	memcpy(&in, remote_qp_info, sizeof(in));
	if (in.magic != SDK_INFO_MAGIC || in.version != SDK_INFO_VERSION)
		return sdk_fail(EPROTO);
	/* both ends must cut messages into the same chunks and packets */
	if (in.chunk != qp->geo->chunk_size || in.mtu != qp->geo->mtu)
		return sdk_fail(EINVAL);
	return sdk_rc(sdr_flow_connect_peer(qp->flow, &in.peer));
}

/* ---- memory ---- */

struct sdr_mr *sdr_mr_reg(struct sdr_context *sdr_ctx, void *addr,
			  size_t length, enum sdr_access_flags access)
{
	struct sdr_mr *mr;
	int ret;

	if (!sdr_ctx || access != SDR_ACCESS_REMOTE_WRITE) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	ret = sdr_ctx_mr_reg(sdr_ctx->ctx, addr, length, &mr->id);
	if (ret) {
		free(mr);
		errno = -ret;
		return NULL;
	}
	mr->context = sdr_ctx;
	sdr_ctx->nr_mrs++;
	return mr;
}

int sdr_mr_dereg(struct sdr_mr *mr)
{
	int ret;

	if (!mr)
		return sdk_fail(EINVAL);
	ret = sdr_ctx_mr_dereg(mr->context->ctx, mr->id);
	if (ret)
		return sdk_fail(-ret);	/* EBUSY: a receive or send uses it */
	mr->context->nr_mrs--;
	free(mr);
	return SDR_SUCCESS;
}

int sdr_mr_lkey_get(struct sdr_mr *mr, uint32_t *lkey)
{
	if (!mr || !lkey)
		return sdk_fail(EINVAL);
	*lkey = mr->id;
	return SDR_SUCCESS;
}

/* Sends name no remote memory here: the rkey is the lkey, unused. */
int sdr_mr_rkey_get(struct sdr_mr *mr, uint32_t *rkey)
{
	return sdr_mr_lkey_get(mr, rkey);
}

/* ---- receiving ---- */

int sdr_recv_post(struct sdr_qp *qp, struct sdr_recv_wr *wr,
		  struct sdr_recv_handle **handle)
{
	struct sdr_recv *r;
	struct sdr_recv_handle *h;
	int ret;

	if (!qp || !wr || !handle || !wr->max_length)
		return sdk_fail(EINVAL);
	if (!qp->recv_enable)
		return sdk_fail(EPERM);
	ret = sdr_flow_recv_post_mr(qp->flow, wr->lkey,
				    (void *)(uintptr_t)wr->address,
				    wr->max_length, 0, &r);
	if (ret)
		return sdk_rc(ret);
	h = &qp->recvs[sdr_recv_slot(r)];
	h->recv = r;
	h->max_length = wr->max_length;
	*handle = h;
	return SDR_SUCCESS;
}

static int recv_handle_ok(const struct sdr_recv_handle *h)
{
	return h && h->recv ? 0 : -EINVAL;
}

int sdr_recv_imm_get(struct sdr_recv_handle *handle, uint32_t *immediate)
{
	int ret = recv_handle_ok(handle);

	if (!ret && !immediate)
		ret = -EINVAL;
	if (!ret)
		ret = sdr_recv_imm(handle->recv, immediate, NULL);
	return sdk_rc(ret);
}

/*
 * The chunk bitmap of the receive, in place: the kernel sets chunk i's bit
 * (byte i / 8, bit i % 8) once every byte of it landed.  It covers the
 * receive's buffer; chunks past the message stay clear.
 */
int sdr_recv_bitmap_get(struct sdr_recv_handle *handle,
			uint8_t **bitmap_bytes, size_t *bitmap_num_bytes)
{
	uint64_t chunks;
	int ret = recv_handle_ok(handle);

	if (!ret && (!bitmap_bytes || !bitmap_num_bytes))
		ret = -EINVAL;
	if (ret)
		return sdk_rc(ret);
	chunks = (handle->max_length + (uint64_t)handle->qp->geo->chunk_size -
		  1) / handle->qp->geo->chunk_size;
	*bitmap_bytes = (uint8_t *)(uintptr_t)handle->recv->chunk_bm;
	*bitmap_num_bytes = (size_t)((chunks + 7) / 8);
	return SDR_SUCCESS;
}

/*
 * Chunk chunk_offset at MTU granularity: bit u of @bitmap is the chunk's
 * u-th MTU-sized piece, set once every packet holding a byte of it landed
 * (sdr's packets carry the MTU less its 64-byte header, so a piece may
 * wait for two).  Writes chunk size / MTU bits (at least one) in 64-bit
 * words; pieces past the message read 0.
 */
int sdr_recv_bitmap_chunk_expand(struct sdr_recv_handle *handle,
				 uint32_t chunk_offset, uint64_t *bitmap)
{
	uint64_t chunk, unit, from, u, nunits, base;
	int ret = recv_handle_ok(handle);

	if (!ret && !bitmap)
		ret = -EINVAL;
	if (ret)
		return sdk_rc(ret);
	chunk = handle->qp->geo->chunk_size;
	unit = handle->qp->geo->mtu < chunk ? handle->qp->geo->mtu : chunk;
	if (chunk_offset * chunk >= handle->max_length)
		return sdk_fail(EINVAL);
	nunits = chunk / unit;
	memset(bitmap, 0, (size_t)((nunits + 63) / 64) * sizeof(*bitmap));
	ret = sdr_recv_imm(handle->recv, NULL, NULL);
	if (ret == -EAGAIN)
		return SDR_SUCCESS;	/* nothing arrived yet */
	if (ret)
		return sdk_rc(ret);
	/*
	 * A streamed message's parts land where each says and it publishes
	 * chunk bits only: a chunk's units count once the chunk is whole.
	 */
	if (sdr_recv_state(handle->recv)->flags & SDR_RECV_F_STREAM) {
		if (sdr__recv_chunk_bit(handle->recv, chunk_offset))
			for (u = 0; u < nunits; u++)
				bitmap[u / 64] |= 1ULL << (u % 64);
		return SDR_SUCCESS;
	}
	/* the message starts dst_off into the buffer (a chunk boundary) */
	base = sdr_recv_state(handle->recv)->dst_off;
	for (u = 0; u < nunits; u++) {
		from = chunk_offset * chunk + u * unit;
		if (from >= base &&
		    sdr__recv_bytes_landed(handle->recv, from - base,
					   from - base + unit))
			bitmap[u / 64] |= 1ULL << (u % 64);
	}
	return SDR_SUCCESS;
}

int sdr_recv_complete(struct sdr_recv_handle *handle)
{
	int ret = recv_handle_ok(handle);

	if (ret)
		return sdk_rc(ret);
	ret = sdr_recv_release(handle->recv);
	if (ret)
		return sdk_rc(ret);
	handle->recv = NULL;
	return SDR_SUCCESS;
}

/* ---- sending ---- */

static struct sdr_send_handle *send_handle_get(struct sdr_qp *qp)
{
	uint32_t i;

	for (i = 0; i < qp->geo->max_msgs; i++)
		if (!qp->sends[i].used)
			return &qp->sends[i];
	return NULL;
}

int sdr_send_post(struct sdr_qp *qp, struct sdr_send_wr *wr,
		  struct sdr_send_handle **handle)
{
	struct sdr_send_handle *h;
	int ret;

	if (!qp || !wr || !handle || !wr->length ||
	    (wr->opcode != SDR_WR_WRITE && wr->opcode != SDR_WR_WRITE_WITH_IMM))
		return sdk_fail(EINVAL);
	if (!qp->send_enable)
		return sdk_fail(EPERM);
	/* it lands remote_offset chunks into the receive's buffer */
	if (wr->length > qp->geo->max_msg_size ||
	    wr->remote_offset > (qp->geo->max_msg_size - wr->length) /
				qp->geo->chunk_size)
		return sdk_fail(EINVAL);
	h = send_handle_get(qp);
	if (!h)
		return SDR_RETRY;	/* max messages in flight */
	ret = sdr_flow_send_post_at(qp->flow, SDR_SEND_MR, wr->lkey,
				    wr->local_addr, wr->length,
				    (uint32_t)(wr->remote_offset *
					       qp->geo->chunk_size),
				    wr->opcode == SDR_WR_WRITE_WITH_IMM ?
				    wr->imm_value : 0,
				    (uintptr_t)h, &h->seq);
	if (ret)
		return sdk_rc(ret);
	h->used = true;
	h->done = false;
	*handle = h;
	return SDR_SUCCESS;
}

int sdr_streaming_send_start(struct sdr_qp *qp, struct sdr_send_start_wr *wr,
			     struct sdr_send_handle **handle)
{
	struct sdr_send_handle *h;
	int ret;

	if (!qp || !wr || !handle ||
	    (wr->opcode != SDR_WR_WRITE && wr->opcode != SDR_WR_WRITE_WITH_IMM))
		return sdk_fail(EINVAL);
	if (!qp->send_enable)
		return sdk_fail(EPERM);
	h = send_handle_get(qp);
	if (!h)
		return SDR_RETRY;	/* max messages in flight */
	ret = sdr_flow_parts_open(qp->flow,
				  wr->opcode == SDR_WR_WRITE_WITH_IMM ?
				  wr->imm_value : 0, (uintptr_t)h, &h->seq);
	if (ret)
		return sdk_rc(ret);
	h->used = true;
	h->done = false;
	h->streaming = true;
	*handle = h;
	return SDR_SUCCESS;
}

int sdr_streaming_send_continue(struct sdr_send_handle *handle,
				struct sdr_send_continue_wr *wr)
{
	const struct sdr_flow_props *geo;
	int ret;

	if (!handle || !handle->used || !handle->streaming || !wr ||
	    !wr->length)
		return sdk_fail(EINVAL);
	geo = handle->qp->geo;
	if (wr->length > geo->max_msg_size ||
	    wr->remote_offset > (geo->max_msg_size - wr->length) /
				geo->chunk_size)
		return sdk_fail(EINVAL);
	ret = sdr_flow_parts_add(handle->qp->flow, handle->seq, SDR_SEND_MR,
				 wr->lkey, wr->local_addr, wr->length,
				 (uint32_t)(wr->remote_offset *
					    geo->chunk_size));
	return ret ? sdk_fail(-ret) : SDR_SUCCESS;
}

int sdr_streaming_send_end(struct sdr_send_handle *handle)
{
	int ret;

	if (!handle || !handle->used || !handle->streaming)
		return sdk_fail(EINVAL);
	ret = sdr_flow_parts_end(handle->qp->flow, handle->seq);
	/*
	 * ESTALE: the send already ended, failed (the receiver refused a
	 * part, the flow failed); sdr_send_poll() reports how.
	 */
	if (ret && ret != -ESTALE)
		return sdk_fail(-ret);
	handle->streaming = false;
	return SDR_SUCCESS;
}

/* Take the QP's send completions off the ring into their handles. */
static int send_reap(struct sdr_qp *qp)
{
	struct sdr_completion c[16];
	struct sdr_send_handle *h;
	int n, i;

	do {
		n = sdr_flow_send_poll(qp->flow, c, 16);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			h = (struct sdr_send_handle *)(uintptr_t)c[i].user_data;
			if (h < qp->sends || h >= qp->sends + qp->geo->max_msgs ||
			    !h->used || h->seq != c[i].seq)
				return -EPROTO;
			h->done = true;
			h->status = c[i].status;
		}
	} while (n == 16);
	return 0;
}

/*
 * SDR_RETRY (*completed_flag 0) until the send completed; then
 * *completed_flag 1 and the handle is spent: SDR_SUCCESS if the message
 * was delivered, else SDR_ERROR with errno EIO and SDR_SEND_FAILED in
 * status->flags.
 */
int sdr_send_poll(struct sdr_send_handle *handle, int *completed_flag,
		  struct sdr_send_status *status)
{
	int ret;

	if (!handle || !handle->used || !completed_flag)
		return sdk_fail(EINVAL);
	*completed_flag = 0;
	if (!handle->done) {
		ret = send_reap(handle->qp);
		if (ret)
			return sdk_rc(ret);
	}
	if (!handle->done)
		return SDR_RETRY;
	*completed_flag = 1;
	handle->used = false;
	if (status)
		status->flags = handle->status == SDR_STATUS_OK ? 0 :
				SDR_SEND_FAILED;
	return handle->status == SDR_STATUS_OK ? SDR_SUCCESS : sdk_fail(EIO);
}

/* ---- extensions ---- */

struct sdr_flow *sdrx_qp_flow(struct sdr_qp *qp)
{
	if (!qp) {
		errno = EINVAL;
		return NULL;
	}
	return qp->flow;
}

struct sdr_ctx *sdrx_context_ctx(struct sdr_context *context)
{
	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	return context->ctx;
}
