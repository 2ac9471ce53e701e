/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The SDR SDK's API (SDR-RDMA's sdr.h), implemented by libsdr over sdr.ko:
 * contexts, QPs, registered memory, receives into it whose arrival is a
 * bitmap of chunks, and sends from it, at a remote offset of the
 * receive's buffer if they like, or in parts whose total is known only at
 * the end (sdr_streaming_send_*), each landing at its own offset.  A
 * program written for the SDK includes <sdr.h> and
 * <sdr_mr.h>, links -lsdr, and builds unchanged.
 *
 * What an SDK QP is here: one sdr flow (libsdr.h) whose receives land in
 * registered memory and whose chunk bitmap the kernel keeps in memory
 * mapped into the process.  Reliability is the flow's policy: SR (selective
 * repeat, so every bit gets set however lossy the path), or the one
 * sdrx_qp_create() names (NONE leaves holes as the SDK's own transport
 * does; EC, ADAPTIVE, AUTO).  Documentation/library.rst, "The SDR SDK's API",
 * says what differs from the SDK's own implementation.
 *
 * Return codes: SDR_SUCCESS, SDR_ERROR (errno says why), SDR_RETRY (not
 * now: resources short or data not there yet; try again).
 *
 * The calls named sdrx_* are sdr's extensions, not the SDK's.
 */
#ifndef SDR_SDK_H
#define SDR_SDK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sdr_context;
struct sdr_qp;
struct sdr_send_handle;
struct sdr_recv_handle;

enum sdr_errcode {
	SDR_SUCCESS = 0,
	SDR_ERROR = 1,
	SDR_RETRY = 2
};

/* Packet size on the wire (sdr needs 256 and up: its header is 80 bytes). */
enum sdr_mtu {
	SDR_MTU_64,
	SDR_MTU_128,
	SDR_MTU_256,
	SDR_MTU_512,
	SDR_MTU_1024,
	SDR_MTU_2048,
	SDR_MTU_4096
};

/*
 * sdr_context_create(): log_max_qps bounds the context's QPs (0: 16);
 * num_channels is accepted and unused (the kernel's receive path does
 * the SDK's DPA threads' work).
 */
struct sdr_dev_attr {
	uint32_t num_channels;
	uint32_t log_max_qps;
};

enum sdr_wr_opcode {
	SDR_WR_WRITE,
	SDR_WR_WRITE_WITH_IMM
};

/*
 * sdr_qp_create(): chunk size of the receive bitmap (2^log bytes), the
 * bytes a QP may have in flight (2^log; also the largest message), the
 * messages in flight each way (2^log, at most 1024), the packet size, the
 * directions wanted (a QP always has both; disabling one refuses its
 * posts) and the send rate in Mbit/s (0: the rate the path allows).
 */
struct sdr_qp_attr {
	uint32_t bitmap_chunk_size_log_bytes;
	size_t max_in_flight_log_bytes;
	uint32_t max_log_num_msgs;
	enum sdr_mtu mtu;
	uint8_t send_enable;
	uint8_t recv_enable;
	uint32_t rate_limit;
};

/*
 * A one-shot send: length bytes at local_addr (registered, lkey), landing
 * remote_offset chunks (of bitmap_chunk_size_log_bytes, the same both ends)
 * into the receive's buffer: bitmap bits remote_offset on.  A receive too
 * short for it takes none of it, and the send fails.
 */
struct sdr_send_wr {
	enum sdr_wr_opcode opcode;
	uint32_t imm_value;	/* SDR_WR_WRITE_WITH_IMM only */
	uint32_t length;
	uint32_t lkey;
	uint64_t local_addr;
	uint64_t remote_offset;	/* in chunks of the receive buffer */
};

/*
 * A streamed send (sdr_streaming_send_start()): its opcode and immediate;
 * then each part (sdr_streaming_send_continue()): length bytes at
 * local_addr (registered, lkey) that land remote_offset chunks into the
 * receive's buffer.
 */
struct sdr_send_start_wr {
	enum sdr_wr_opcode opcode;
	uint32_t imm_value;	/* SDR_WR_WRITE_WITH_IMM only */
};

struct sdr_send_continue_wr {
	uint32_t length;
	uint64_t local_addr;
	uint32_t lkey;
	uint64_t remote_offset;	/* in chunks of the receive buffer */
};

/* A receive: at most max_length bytes at address (registered, lkey). */
struct sdr_recv_wr {
	uint32_t max_length;
	uint32_t lkey;
	uint64_t address;
};

/* sdr_send_poll(): flags 0 when the send delivered, else SDR_SEND_FAILED. */
struct sdr_send_status {
	uint32_t flags;
};

#define SDR_SEND_FAILED	(1U << 0)	/* extension: the send did not deliver */

struct sdr_context *sdr_context_create(const char *dev_name,
				       struct sdr_dev_attr *dev_attr);
int sdr_context_destroy(struct sdr_context *context);

struct sdr_qp *sdr_qp_create(struct sdr_context *ctx,
			     struct sdr_qp_attr *qp_attr);
int sdr_qp_destroy(struct sdr_qp *qp);

/* The out-of-band exchange: info_get's bytes go to the peer's connect. */
int sdr_qp_info_size_get(struct sdr_qp *qp, size_t *info_size);
int sdr_qp_info_get(struct sdr_qp *qp, void *info);
int sdr_qp_connect(struct sdr_qp *qp, void *remote_qp_info);

int sdr_recv_post(struct sdr_qp *qp, struct sdr_recv_wr *wr,
		  struct sdr_recv_handle **handle);
int sdr_recv_imm_get(struct sdr_recv_handle *handle, uint32_t *immediate);
int sdr_recv_bitmap_get(struct sdr_recv_handle *handle,
			uint8_t **bitmap_bytes, size_t *bitmap_num_bytes);
int sdr_recv_bitmap_chunk_expand(struct sdr_recv_handle *handle,
				 uint32_t chunk_offset, uint64_t *bitmap);
int sdr_recv_complete(struct sdr_recv_handle *handle);

int sdr_send_post(struct sdr_qp *qp, struct sdr_send_wr *wr,
		  struct sdr_send_handle **handle);
int sdr_send_poll(struct sdr_send_handle *handle, int *completed_flag,
		  struct sdr_send_status *status);

/*
 * One message sent in parts, its total unknown at the start: each part
 * goes as soon as it is posted and lands at its own chunk offset of the
 * one receive it matches; the send completes (sdr_send_poll()) once
 * every part arrived and the stream ended.  A part smaller than a packet
 * takes a packet: a stream holds at most twice the packets of a message
 * of the QP's largest size (SDR_ERROR, errno ENOSPC, past that).  Once
 * the send has failed (the receiver refused a part: it lands past the
 * receive's end) a further part fails with errno ESTALE; end it still,
 * and sdr_send_poll() reports the failure.
 */
int sdr_streaming_send_start(struct sdr_qp *qp, struct sdr_send_start_wr *wr,
			     struct sdr_send_handle **handle);
int sdr_streaming_send_continue(struct sdr_send_handle *handle,
				struct sdr_send_continue_wr *wr);
int sdr_streaming_send_end(struct sdr_send_handle *handle);

/* ---- sdr's extensions ---- */

struct sdr_ctx;
struct sdr_flow;

/*
 * sdrx_qp_create(): an SDK QP with sdr's own choices, each taken when its
 * flag is set in flags (the others as sdr_qp_create() takes them): policy
 * an SDR_POLICY_* value, ec_k and ec_m the EC geometry, paths how many of
 * the device's QPs its packets spread over, auth an SDR_AUTH_* value
 * (<sdr/sdr_uapi.h> has the values).
 */
#define SDRX_QP_POLICY	(1U << 0)
#define SDRX_QP_EC	(1U << 1)
#define SDRX_QP_PATHS	(1U << 2)
#define SDRX_QP_AUTH	(1U << 3)
struct sdrx_qp_attr {
	uint32_t flags;		/* SDRX_QP_* */
	uint32_t policy;
	uint8_t ec_k;
	uint8_t ec_m;
	uint8_t paths;
	uint8_t auth;
	uint32_t reserved[5];	/* 0 */
};
struct sdr_qp *sdrx_qp_create(struct sdr_context *ctx,
			      struct sdr_qp_attr *qp_attr,
			      const struct sdrx_qp_attr *ext);

/*
 * The libsdr objects underneath (libsdr.h): the flow an SDK QP is, and the
 * context it is bound through, for everything else sdr offers (policy
 * changes, groups, rails, counters, waiting on the context's fd).  They
 * belong to the SDK objects: do not destroy them.
 */
struct sdr_flow *sdrx_qp_flow(struct sdr_qp *qp);
struct sdr_ctx *sdrx_context_ctx(struct sdr_context *context);

#ifdef __cplusplus
}
#endif

#endif /* SDR_SDK_H */
