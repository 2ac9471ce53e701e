/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libsdr: userspace access to /dev/sdr (software-defined reliability over
 * RDMA UD).  The library wraps the ioctls of uapi/sdr_uapi.h and the memory the
 * kernel maps into the process; it holds no reliability logic of its own.
 *
 * Error convention (every call): functions returning int return 0 (or a
 * documented non-negative value) on success and a negative errno on
 * failure, as liburing does; constructors return NULL and set errno.
 * -EAGAIN always means "not yet / no resources now, retry".
 *
 * Threads: a context and its flows may be used from one thread at a time;
 * serialise calls on one context yourself.
 */
#ifndef LIBSDR_H
#define LIBSDR_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_uapi.h"	/* uapi: struct sdr_endpoint, SDR_POLICY_*, SDR_STATUS_* */

#ifdef __cplusplus
extern "C" {
#endif

struct sdr_ctx;
struct sdr_flow;
struct sdr_recv;

/* sdr_open() attributes; a NULL attr means all defaults. */
struct sdr_ctx_attr {
	uint32_t port;		/* 0: the first RoCE port */
	uint32_t cq_entries;	/* power of two 64..65536; 0: 4096 */
	uint32_t flags;		/* SDR_CTX_* */
	uint32_t reserved;	/* must be 0 */
};

/* Treat the name given to sdr_open() as a GID (or IPv4 address) only. */
#define SDR_CTX_BY_GID		(1U << 0)

struct sdr_ctx *sdr_open(const char *dev, const struct sdr_ctx_attr *attr);
int sdr_close(struct sdr_ctx *ctx);
/*
 * The job secret (since 2.4) of the authenticated flows created on ctx
 * from now on: name is NAME of a user key "sdr:NAME" in the process's
 * keyrings (keyctl add user sdr:NAME ...), NULL or "" for none.  Both
 * ends of a flow must name the same secret, or its connect fails with
 * -EKEYREJECTED on both.  sdr_open() sets it from the environment:
 * SDR_SECRET_FILE (a file of 16 to 4096 bytes, put in the process
 * keyring as "sdr:file") or else SDR_SECRET (a NAME); if the file
 * cannot be read sdr_open() fails with that errno.  Returns 0 or
 * -EINVAL (a name of spaces, non-ASCII or SDR_SECRET_NAME_LEN bytes or
 * more).  The key is looked up at each flow create.
 */
int sdr_ctx_set_secret(struct sdr_ctx *ctx, const char *name);
/*
 * Whether peer's share is signed with ctx's job secret (since 2.4), with
 * no flow made (SDR_IOC_KEX_CHECK): 0 when it is or ctx names none,
 * -EKEYREJECTED when it is not, the keyring's errno otherwise.
 */
struct sdr_flow_peer;
int sdr_ctx_check_peer(struct sdr_ctx *ctx, const struct sdr_flow_peer *peer);
/* Load a secret file into the process keyring as "sdr:NAME" (since 2.4). */
int sdr_secret_file_load(const char *path, const char *name);
int sdr_ctx_fd(const struct sdr_ctx *ctx);

/* What SDR_IOC_BIND answered. */
struct sdr_ctx_info {
	char ibdev[SDR_DEVNAME_LEN];
	uint8_t gid[SDR_GID_LEN];
	uint32_t port;
	uint32_t mtu;
	uint32_t cq_entries;
	uint32_t reserved;
	uint64_t cq_overflow;	/* ring overflow counter (0 by design) */
};
int sdr_ctx_query(const struct sdr_ctx *ctx, struct sdr_ctx_info *info);

/* What SDR_IOC_QUERY answered: what the loaded sdr.ko offers. */
struct sdr_caps {
	uint32_t abi_version;	/* the kernel's SDR_ABI_VERSION */
	uint32_t policy_nr;	/* policy ids below this are defined */
	uint64_t policies;	/* bit SDR_POLICY_x (1ULL << x): the kernel runs x */
	uint64_t features;	/* SDR_FEATURE_* */
	uint32_t ec_max_k;	/* EC data packets per submessage, at most */
	uint32_t ec_max_m;	/* EC parity packets per submessage, at most */
	uint32_t max_msg_size;	/* largest sdr_flow_attr.max_msg_size */
	uint32_t max_msgs;	/* largest sdr_flow_attr.max_msgs */
	/* (since 1.3) the most paths a flow takes: QPs of the device a
	 * flow spreads over (sdr_flow_attr.paths) */
	uint32_t paths_max;
	uint32_t reserved32;	/* 0 */
	uint64_t reserved[3];	/* 0 */
};
/* ctx NULL: asks through an unbound /dev/sdr of its own. */
int sdr_query(const struct sdr_ctx *ctx, struct sdr_caps *caps);

/* sdr_flow_create() attributes; zero means "the kernel's default". */
struct sdr_flow_attr {
	uint32_t policy;	/* SDR_POLICY_* */
	uint32_t mtu;		/* 0: the port's */
	uint32_t chunk_size;	/* bytes per bitmap bit; 0: 16 packets */
	uint32_t max_msg_size;	/* 1..1 GiB */
	uint32_t max_msgs;	/* 1..1024 */
	/* EC geometry (since 1.2): data and parity packets per submessage,
	 * 1..sdr_caps.ec_max_k and ec_max_m; 0: the module's ec_k, ec_m */
	uint8_t ec_k;
	uint8_t ec_m;
	/* paths (since 1.3): QPs of the device the flow's packets spread
	 * over, 1..sdr_caps.paths_max; 0: 1 */
	uint8_t paths;
	/* packet authentication (since 1.7): SDR_AUTH_*; 0: the module's
	 * default (vmac64 unless the administrator changed it) */
	uint8_t auth;
	/* (since 2.0) SDR_FLOW_CREATE_MR: registered memory only, no
	 * regions (sdr_send_buf() and sdr_recv_data() give NULL) */
	uint32_t flags;
	/* (since 2.0) the most packets in flight, whatever the path allows;
	 * 0: the module parameter max_inflight */
	uint32_t max_inflight;
};

/* The flow's geometry, as the kernel chose it. */
struct sdr_flow_props {
	uint32_t flow_id;
	uint32_t policy;
	uint32_t mtu;
	uint32_t payload;	/* message bytes per packet */
	uint32_t chunk_size;
	uint32_t max_msg_size;
	uint32_t max_msgs;
	uint32_t slot_stride;	/* bytes between slots of both regions */
};

struct sdr_flow *sdr_flow_create(struct sdr_ctx *ctx,
				 const struct sdr_flow_attr *attr);
int sdr_flow_destroy(struct sdr_flow *flow);
int sdr_flow_props(const struct sdr_flow *flow, struct sdr_flow_props *props);
/* SDR_IOC_FLOW_INFO: state and counters (struct from uapi/sdr_uapi.h). */
int sdr_flow_info(struct sdr_flow *flow, struct sdr_flow_info *info);
/* Policy of messages posted from now on (SDR_IOC_FLOW_MODIFY). */
int sdr_flow_set_policy(struct sdr_flow *flow, uint32_t policy);
/* EC geometry of EC messages posted from now on (since 1.2); the
 * current one is in sdr_flow_info()'s ec_k and ec_m. */
int sdr_flow_set_ec(struct sdr_flow *flow, uint32_t k, uint32_t m);
/*
 * The rate SR and EC send at (ADAPTIVE's ceiling), Mbit/s of sdr packets
 * (payload and sdr's 80-byte header), for a dedicated link; 0: the path's,
 * measured (since 1.8).  At once, for every message; the window still
 * comes from the path.
 */
int sdr_flow_set_rate(struct sdr_flow *flow, uint32_t mbit);
/*
 * Everything the peer needs to connect (since 1.7), to give it as bytes:
 * the endpoint, the QPNs the flow sends from, its authentication and
 * (since 2.4) its key-exchange share, none of it secret: no key travels
 * (sdr_ctx_set_secret()).  The peer connects with
 * sdr_flow_connect_peer().
 */
struct sdr_flow_peer {
	struct sdr_endpoint ep;
	struct sdr_ep_paths paths;
	struct sdr_ep_auth auth;
	struct sdr_ep_kex kex;		/* since 2.4 */
};
int sdr_flow_peer_info(const struct sdr_flow *flow, struct sdr_flow_peer *out);
int sdr_flow_connect_peer(struct sdr_flow *flow,
			  const struct sdr_flow_peer *peer);
/* The authentication the flow runs (since 1.7): SDR_AUTH_OFF or a MAC. */
uint32_t sdr_flow_auth(const struct sdr_flow *flow);
/*
 * What its keys rest on (since 2.4): SDR_KEX_NONE (no authentication),
 * SDR_KEX_EPHEMERAL (a key exchange alone: safe from a host that only
 * sees the traffic, not from one that answers the connect in the peer's
 * place) or SDR_KEX_PSK (and the job secret: only its holders connect).
 */
uint32_t sdr_flow_kex(const struct sdr_flow *flow);

/*
 * The endpoint blob alone: sizeof(struct sdr_endpoint) bytes.  A connect
 * with it and no more (sdr_flow_connect(), sdr_flow_connect_paths())
 * works only between flows created with auth SDR_AUTH_OFF; else -EPROTO.
 */
int sdr_flow_endpoint(const struct sdr_flow *flow, struct sdr_endpoint *ep);
int sdr_flow_connect(struct sdr_flow *flow, const struct sdr_endpoint *peer);
/*
 * Multipath (since 1.3): the QPNs this flow sends from, to give the peer
 * with the endpoint (n is the flow's paths), and a connect that takes the
 * peer's: a flow drops its peer's packets from QPNs it was not given, so
 * a peer on several paths must be connected with them.
 */
int sdr_flow_paths(const struct sdr_flow *flow, struct sdr_ep_paths *paths);
int sdr_flow_connect_paths(struct sdr_flow *flow,
			   const struct sdr_endpoint *peer,
			   const struct sdr_ep_paths *peer_paths);
struct sdr_ctx *sdr_flow_ctx(const struct sdr_flow *flow);
/*
 * Rails (since 1.5): before it connects, spread a flow over another
 * bound device (SDR_IOC_FLOW_RAIL) with @paths of its QPs (0: 1).  Returns
 * the rail's index (1..) and fills @out, the rail's endpoint and QPNs to
 * give the peer; the peer connects its own rail of that index with it
 * (sdr_flow_rail_connect()), every rail before the flow itself.
 */
struct sdr_rail_ep {
	struct sdr_endpoint ep;
	struct sdr_ep_paths paths;
};
int sdr_flow_rail_add(struct sdr_flow *flow, const char *ibdev,
		      uint32_t paths, struct sdr_rail_ep *out);
int sdr_flow_rail_connect(struct sdr_flow *flow, uint32_t rail,
			  const struct sdr_rail_ep *peer);

/*
 * Sending.  The send region is max_msgs slots of slot_stride bytes; a send
 * names a byte range of it, which must not change until the send's
 * completion.  _ptr sends copy the bytes before returning.
 */
void *sdr_send_buf(struct sdr_flow *flow, size_t *len);
void *sdr_send_slot(struct sdr_flow *flow, uint32_t i);
int sdr_flow_send_post(struct sdr_flow *flow, uint64_t off, uint64_t len,
		       uint32_t imm, uint64_t user_data, uint32_t *seq);
int sdr_flow_send_post_ptr(struct sdr_flow *flow, const void *ptr,
			   uint64_t len, uint32_t imm, uint64_t user_data,
			   uint32_t *seq);

/*
 * Streaming: announce msg_len bytes, hand over parts as they become ready.
 * addr is a send-region offset, or a pointer when flags has
 * SDR_SEND_USER_PTR.  Every part but the last is a multiple of the payload.
 */
int sdr_send_stream_start(struct sdr_flow *flow, uint64_t msg_len,
			  uint64_t addr, uint64_t len, uint32_t flags,
			  uint32_t imm, uint64_t user_data, uint32_t *seq);
int sdr_send_stream_continue(struct sdr_flow *flow, uint32_t seq,
			     uint64_t addr, uint64_t len, uint32_t flags);
int sdr_send_stream_end(struct sdr_flow *flow, uint32_t seq,
			uint64_t addr, uint64_t len, uint32_t flags);

/* One completion, as sdr_poll_cq() and sdr_flow_send_poll() return it. */
struct sdr_completion {
	uint64_t user_data;
	struct sdr_flow *flow;	/* NULL if the flow is gone */
	struct sdr_recv *recv;	/* receive handle (SDR_CQE_RECV), else NULL */
	uint32_t flow_id;
	uint32_t seq;
	uint32_t slot;
	uint32_t len;
	uint32_t imm;
	uint8_t type;		/* SDR_CQE_SEND / SDR_CQE_RECV / SDR_CQE_GROUP */
	uint8_t status;		/* SDR_STATUS_* */
	uint16_t reserved;
};

/* Up to max completions of the context; returns how many (>= 0). */
int sdr_poll_cq(struct sdr_ctx *ctx, struct sdr_completion *out, int max);
/* Up to max send completions of this flow only. */
int sdr_flow_send_poll(struct sdr_flow *flow, struct sdr_completion *out,
		       int max);
/* Sleep in poll(2) until a completion may be ready: 0 or -ETIMEDOUT. */
int sdr_wait(struct sdr_ctx *ctx, int timeout_ms);

/*
 * Groups (since 1.6; sdr_caps.features SDR_FEATURE_GROUPS): sends and
 * receives of any of the context's flows that the application waits for
 * together, one collective step say.  sdr_group_open() opens one and
 * returns its id; sdr_flow_set_group() makes the flow's later posts join
 * it (0: none; a flow names one group at a time, set it before posting
 * from one thread); sdr_group_close() says no more members come.  Once
 * it is closed and each member completed (or was abandoned, which counts
 * as FAILED), the group completes: an SDR_CQE_GROUP completion with its
 * id in seq, its user_data, its members in slot, how many completed
 * other than OK in imm and the highest member status in status.
 * sdr_group_poll() takes it if it came (1, else 0); sdr_group_wait()
 * waits for it (0, or -ETIMEDOUT); completions they pass over are kept
 * for sdr_poll_cq() and sdr_flow_send_poll().  The kernel gives recovery of
 * the oldest group not yet completed priority (uapi/sdr_uapi.h,
 * SDR_IOC_GROUP).  Each open group holds a completion ring entry until
 * its completion is taken.  Errors: -EAGAIN (ring full, or
 * SDR_GROUPS_MAX groups open), -ENOENT (close, or a post naming a group
 * that is not open).
 */
int sdr_group_open(struct sdr_ctx *ctx, uint64_t user_data, uint32_t *group);
int sdr_group_close(struct sdr_ctx *ctx, uint32_t group);
int sdr_flow_set_group(struct sdr_flow *flow, uint32_t group);
int sdr_group_poll(struct sdr_ctx *ctx, uint32_t group,
		   struct sdr_completion *out);
int sdr_group_wait(struct sdr_ctx *ctx, uint32_t group, int timeout_ms,
		   struct sdr_completion *out);

/*
 * Receiving.  The n-th receive posted on a flow takes the n-th message.
 * The handle stays valid until sdr_recv_release() recycles the slot.
 */
int sdr_flow_recv_post(struct sdr_flow *flow, uint64_t user_data,
		       struct sdr_recv **handle);
int sdr_recv_imm(struct sdr_recv *h, uint32_t *imm, uint32_t *msg_len);
int sdr_recv_bitmap(struct sdr_recv *h, const uint64_t **bitmap,
		    uint32_t *chunks);
int sdr_recv_chunk_done(struct sdr_recv *h, uint32_t chunk);
int sdr_recv_chunk_expand(struct sdr_recv *h, uint32_t chunk,
			  uint64_t *pkt_bits, uint32_t nwords,
			  uint32_t *npkts);
const void *sdr_recv_data(const struct sdr_recv *h);
/* 0 and *status once the message completed, -EAGAIN before. */
int sdr_recv_poll(struct sdr_recv *h, uint32_t *status);
const struct sdr_recv_state *sdr_recv_state(const struct sdr_recv *h);
uint32_t sdr_recv_seq(const struct sdr_recv *h);
uint32_t sdr_recv_slot(const struct sdr_recv *h);
uint64_t sdr_recv_user_data(const struct sdr_recv *h);
int sdr_recv_release(struct sdr_recv *h);

/*
 * Registered memory (since 2.0; sdr_caps.features SDR_FEATURE_MR): any
 * range of the process's writable memory, pinned and charged to
 * RLIMIT_MEMLOCK while registered.  sdr_ctx_mr_reg() returns its id;
 * receives land in it (sdr_flow_recv_post_mr(): at most len bytes at
 * addr, a longer message completes SDR_STATUS_TOOBIG) and sends go from
 * it without a copy (sdr_flow_send_post_mr()).  sdr_ctx_mr_dereg() fails
 * -EBUSY while a receive or send uses it.  Errors as SDR_IOC_MR_REG's and
 * SDR_IOC_RECV_POST's (uapi/sdr_uapi.h).
 */
int sdr_ctx_mr_reg(struct sdr_ctx *ctx, void *addr, uint64_t len,
		   uint32_t *mr_id);
int sdr_ctx_mr_dereg(struct sdr_ctx *ctx, uint32_t mr_id);
int sdr_flow_recv_post_mr(struct sdr_flow *flow, uint32_t mr_id, void *addr,
			  uint64_t len, uint64_t user_data,
			  struct sdr_recv **handle);
int sdr_flow_send_post_mr(struct sdr_flow *flow, uint32_t mr_id,
			  const void *addr, uint64_t len, uint32_t imm,
			  uint64_t user_data, uint32_t *seq);

/*
 * A one-shot send that lands dst_off bytes into the peer's receive (since
 * 2.2, sdr 0.13.0; ABI 7): dst_off a multiple of chunk_size, dst_off + len
 * at most max_msg_size (-EINVAL otherwise).  flags says what addr is: 0 an
 * offset in the send region (sdr_flow_send_post()), SDR_SEND_USER_PTR a
 * pointer (sdr_flow_send_post_ptr()), SDR_SEND_MR an address in
 * registration mr_id (sdr_flow_send_post_mr()).  A receive whose buffer
 * ends before dst_off + len takes none of it (SDR_STATUS_TOOBIG) and the
 * send fails.  The receiver sees the message's chunks from chunk
 * dst_off / chunk_size of its buffer on (sdr_recv_bitmap());
 * sdr_recv_chunk_done(), _chunk_expand() and sdr_recv_imm()'s msg_len
 * count from the message's first byte.
 */
int sdr_flow_send_post_at(struct sdr_flow *flow, uint32_t flags,
			  uint32_t mr_id, uint64_t addr, uint64_t len,
			  uint32_t dst_off, uint32_t imm, uint64_t user_data,
			  uint32_t *seq);

/*
 * A stream of parts (since 2.3, sdr 0.14.0; ABI 8): one message whose
 * total is known only at its end, sent in parts, each from its own source
 * (flags as for sdr_flow_send_post_at(): a region offset, a pointer, or
 * registered memory mr_id) to its own place in the peer's receive
 * (dst_off: a multiple of chunk_size, dst_off + len at most
 * max_msg_size), in any order.  sdr_flow_parts_open() opens it (*seq:
 * its number); sdr_flow_parts_add() adds a part of len bytes (1 and up),
 * sent at once; sdr_flow_parts_end() ends it.  Its send completes once
 * every part arrived and it ended; the receive's chunk bits are set as
 * chunks fill (a chunk a part ends inside is complete at that end), its
 * msg_len (the parts' bytes) known when it completes.  The receiver sees
 * SDR_RECV_F_STREAM in sdr_recv_state()'s flags once it started; its
 * chunks are the buffer's (sdr_recv_bitmap()'s count, what
 * sdr_recv_chunk_done() takes), and sdr_recv_chunk_expand() reports all
 * of a chunk's packets once its bit is set, none before (a stream has no
 * packet grid to read them from).  Each part starts
 * a packet: a stream holds at most twice the packets of a max_msg_size
 * message (-ENOSPC past that; the stream stays open).  It runs SR
 * (ADAPTIVE on an ADAPTIVE flow); -EOPNOTSUPP on a NONE flow.  -ESTALE:
 * seq names no open stream of parts: also once its send has completed
 * in failure before it ended (the receiver refused a part, or its
 * retries ran out), its completion then on the ring.
 */
int sdr_flow_parts_open(struct sdr_flow *flow, uint32_t imm,
			uint64_t user_data, uint32_t *seq);
int sdr_flow_parts_add(struct sdr_flow *flow, uint32_t seq, uint32_t flags,
		       uint32_t mr_id, uint64_t addr, uint64_t len,
		       uint32_t dst_off);
int sdr_flow_parts_end(struct sdr_flow *flow, uint32_t seq);

/*
 * Exchange endpoint blobs (or any len bytes) over TCP.  host NULL: listen
 * on port and accept one peer; else connect to host:port, retrying while
 * the peer is not listening yet.  timeout_ms < 0 waits forever.  With sock
 * non-NULL the connected socket is handed back for the caller's own use.
 */
int sdr_exchange_tcp(const char *host, uint16_t port, const void *local,
		     void *remote, size_t len, int timeout_ms, int *sock);

/*
 * (since 1.4) Connecting a flow through rdma_cm, as RDMA applications do:
 * the peer named by IP address (or host name) and port.  rdma_cm
 * resolves the device the route to the peer takes, and the endpoints
 * travel in the private data of its UD exchange (RDMA_PS_UDP: a SIDR
 * request and reply), no TCP connection needed.
 *
 * Client: sdr_cm_resolve() (src: the local address to go from, or NULL)
 * resolves address and route; open sdr_cm_device(cm) with sdr_open(),
 * create the flow there, and sdr_cm_connect() sends its endpoint and
 * connects it to the one the server answers.
 *
 * Server: sdr_cm_listen() (addr NULL: every address); each
 * sdr_cm_get_request() hands over one peer's request (-EPROTO: a request
 * that carried no sdr endpoint came and was rejected; listen on);
 * sdr_cm_device(req) names the device it came in on: open it, create the
 * flow, and sdr_cm_accept() connects the flow and answers with its
 * endpoint (failing, it rejects the request), or sdr_cm_reject() refuses.
 * sdr_cm_peer() gives the peer's IPv4 address and port (a request's: the
 * port it connected from), of a request or a resolved handle.
 *
 * The flow must be on the device named (else -EXDEV).  Errors: -errno,
 * -ETIMEDOUT (timeout_ms passed; < 0 waits forever), -ECONNREFUSED (the
 * server rejected), -EKEYREJECTED (since 2.4: it rejected because one
 * end lacks the other's job secret, or holds another: its accept or
 * check said so), -EHOSTUNREACH, -EPROTO (the peer's answer is no sdr
 * endpoint, or it authenticates differently), or the connect's
 * (sdr_flow_connect_paths()).  Destroy every
 * handle with sdr_cm_destroy(), a request's before its listener's.
 */
struct sdr_cm;
int sdr_cm_resolve(const char *src, const char *dst, uint16_t port,
		   int timeout_ms, struct sdr_cm **cm);
int sdr_cm_connect(struct sdr_cm *cm, struct sdr_flow *flow, int timeout_ms);
int sdr_cm_listen(const char *addr, uint16_t port, struct sdr_cm **cm);
int sdr_cm_get_request(struct sdr_cm *listener, int timeout_ms,
		       struct sdr_cm **req);
int sdr_cm_accept(struct sdr_cm *req, struct sdr_flow *flow);
int sdr_cm_reject(struct sdr_cm *req);
/* The local device's name (sdr_open()), or NULL and errno EINVAL. */
const char *sdr_cm_device(const struct sdr_cm *cm);
struct sockaddr_in;
int sdr_cm_peer(const struct sdr_cm *cm, struct sockaddr_in *addr);
/*
 * (since 2.4) Whether a request's peer holds ctx's job secret, before
 * anything is made for it: 0 when it does or ctx names no secret,
 * -EKEYREJECTED when its share is unsigned or signed with another,
 * -EPROTO when it carried no share (sdr_ctx_check_peer()).  A
 * sdr_cm_reject() after -EKEYREJECTED tells the client so.
 */
int sdr_cm_check(struct sdr_cm *req, struct sdr_ctx *ctx);
void sdr_cm_destroy(struct sdr_cm *cm);

/* A static string for an SDR_STATUS_* / SDR_POLICY_* value. */
const char *sdr_status_str(uint32_t status);
const char *sdr_policy_str(uint32_t policy);
/* SDR_AUTH_* (since 1.7): "off", "vmac64" ("default" for 0) */
const char *sdr_auth_str(uint32_t auth);
/* SDR_KEX_* (since 2.4): "none", "ephemeral", "psk" */
const char *sdr_kex_str(uint32_t kex);
/*
 * Parse a policy name of uapi/sdr_uapi.h (SDR_POLICY_NAMES: "none", "sr",
 * "ec", "adaptive", "auto") or a number; -EINVAL if neither.  Whether the
 * kernel runs it is the kernel's answer (sdr_query(), EOPNOTSUPP).
 */
int sdr_policy_parse(const char *s, uint32_t *policy);
/*
 * The names of the policies whose bits are set in mask (a
 * sdr_caps.policies), in id order, joined by sep, into buf as snprintf
 * would; returns the length of the whole list, or -EINVAL.
 */
int sdr_policy_list(uint64_t mask, const char *sep, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* LIBSDR_H */
