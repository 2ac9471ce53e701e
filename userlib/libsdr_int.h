/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libsdr internals: the objects behind the opaque handles.  Types only:
 * every function lives in exactly one file, and the files call each other
 * one way.  Top to bottom, each calls only the files below it:
 *
 *   libsdr_ctx.c    contexts: open and bind, close, query; sdr_query
 *   libsdr_flow.c   flows: create and map, connect, destroy, properties
 *   libsdr_ring.c   the completion ring: map, drain, backlog, wait
 *   libsdr_sys.c    the ioctl and clock wrappers
 *
 * Beside them, calling only libsdr_sys.c: libsdr_send.c (posting sends),
 * libsdr_recv.c (posting receives, reading their state in place),
 * libsdr_group.c (opening and closing groups) and libsdr_xchg.c
 * (endpoint exchange over TCP) and libsdr_secret.c (the job secret a
 * context names; libsdr_ctx.c calls it at open).  libsdr_cm.c (connecting
 * through rdma_cm) calls libsdr_flow.c, libsdr_ctx.c (sdr_ctx_query),
 * libsdr_secret.c and libsdr_sys.c.  libsdr_names.c (names of
 * the uapi constants) calls nothing.  libsdr_sdk.c (the SDR SDK's API,
 * sdr.h and sdr_mr.h) sits on top: it calls the others through libsdr.h
 * and libsdr_recv.c's sdr__recv_bytes_landed().  libsdr_sys.h,
 * libsdr_ring.h and libsdr_recv.h declare what their file offers the files
 * above; the rest is libsdr.h.
 */
#ifndef LIBSDR_INT_H
#define LIBSDR_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "libsdr.h"

struct sdr_recv {
	struct sdr_flow *flow;
	uint32_t slot;
	uint32_t seq;
	uint32_t gen;
	bool posted;		/* between sdr_flow_recv_post and _complete */
	uint64_t user_data;
	const struct sdr_recv_state *state;
	const uint64_t *chunk_bm;
	const uint64_t *pkt_bm;
	const uint8_t *region;	/* the slot in the receive region, or NULL */
	const uint8_t *data;	/* where this receive lands: region or MR */
	uint64_t len;		/* ... and how many bytes it holds */
};

struct sdr_flow {
	struct sdr_ctx *ctx;
	struct sdr_flow *next;		/* in ctx->flows */
	struct sdr_flow_props props;
	struct sdr_endpoint ep;
	struct sdr_ep_paths paths;
	struct sdr_ep_auth auth;
	struct sdr_ep_kex kex;
	uint8_t *recv_map;
	size_t recv_size;
	uint8_t *send_map;
	size_t send_size;
	uint8_t *state_map;
	size_t state_size;
	uint32_t state_stride;
	uint32_t chunk_bitmap;
	uint32_t pkt_bitmap;
	struct sdr_recv *recvs;		/* max_msgs handles, by slot */
	uint32_t group;			/* posts join it (sdr_flow_set_group) */
};

/* Completions taken off the ring for someone else, in ring order. */
struct sdr_backlog {
	struct sdr_completion *ent;
	uint32_t cap;			/* power of two */
	uint32_t head, tail;		/* free-running */
};

struct sdr_ctx {
	int fd;
	struct sdr_ctx_info info;
	uint8_t *ring_map;
	size_t ring_size;
	uint32_t *ring_head;
	const uint32_t *ring_tail;
	const uint32_t *ring_overflow;
	const struct sdr_cqe *cqes;
	uint32_t ring_mask;
	bool cq_polled;			/* sdr_poll_cq() was used */
	struct sdr_flow *flows;
	struct sdr_backlog backlog;
	char secret[SDR_SECRET_NAME_LEN];	/* the job secret's NAME, or "" */
};

int sdr__secret_from_env(struct sdr_ctx *ctx);

#endif /* LIBSDR_INT_H */
