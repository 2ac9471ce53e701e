/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libsdr-fi: the libfabric provider "sdr" (fi_sdr(7)).  Internal header.
 *
 * Objects: a fabric; a domain per sdr device (one libsdr context, one lock
 * that every call of the domain's objects takes); reliable datagram
 * endpoints (FI_EP_RDM) with FI_MSG and FI_TAGGED; address vectors of
 * IPv4 socket addresses (the peer endpoint's rdma_cm listener); completion
 * queues; datagram endpoints (FI_EP_DGRAM) the same over policy NONE.
 * An endpoint sends to a peer over a flow it connects through rdma_cm on
 * the first send (sdr_cm_connect()), and receives over the flows its
 * listener accepted (a thread of its own answers requests); every message
 * carries a 32-byte header (op, tag, remote CQ data, length, the sender's
 * port) in front of its bytes, goes in parts of at most 1 MiB (small
 * messages queued together share one), is matched against the posted
 * receives in software and copied out of the flow's receive slots once.
 */
#ifndef SDR_FI_H
#define SDR_FI_H

#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_prov.h>

#include "libsdr.h"
#include "fi_ext_sdr.h"

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

#define SDR_FI_NAME		"sdr"
#define SDR_FI_VERSION		FI_VERSION(0, 1)
#define SDR_FI_API		FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/*
 * The header in front of every part's bytes.  A message of more than a
 * part (SDR_FI_PART_RDM, _DGRAM) goes as several sdr messages (parts)
 * back to back on its flow, the first carrying the header's fields, the
 * others SDR_FI_F_CONT.  Whole messages queued on a flow together go as one part
 * of at most SDR_FI_BATCH bytes: records (header and bytes) back to back,
 * each at a multiple of 8 bytes, every one but the last SDR_FI_F_MORE.
 */
struct sdr_fi_hdr {
	uint32_t magic;		/* SDR_FI_MAGIC */
	uint16_t op;		/* SDR_FI_OP_* | SDR_FI_F_* */
	uint16_t port;		/* the sender's listener port, network order */
	uint64_t tag;		/* FI_TAGGED only */
	uint64_t data;		/* remote CQ data, with SDR_FI_F_DATA */
	uint64_t len;		/* the message's bytes, all its parts */
};
#define SDR_FI_MAGIC		0x53444632U	/* "SDF2" */
#define SDR_FI_OP_MSG		1
#define SDR_FI_OP_TAGGED	2
#define SDR_FI_OP_MASK		0xff
#define SDR_FI_F_DATA		0x100
#define SDR_FI_F_CONT		0x200
#define SDR_FI_F_MORE		0x400	/* another record follows it */
#define SDR_FI_HDR		((uint32_t)sizeof(struct sdr_fi_hdr))

/* Limits, also what fi_getinfo() reports. */
#define SDR_FI_MAX_MSG		(1ULL << 30)	/* application bytes a message */
/*
 * Application bytes a part: an RDM flow's, and a DGRAM flow's (a datagram
 * is one part, so its maximum message).  A flow's send and receive
 * regions are SDR_FI_SLOTS slots of a part and its header each, both
 * allocated whichever way the flow is used: 2 x 16 x 260 KiB = 8.1 MiB
 * an RDM flow (with 1 MiB parts it was 32.1 MiB, what ~128 strangers'
 * requests took to exhaust ctx_max_mb).  16 parts in flight a flow keep
 * 4 MiB on the way to each peer.
 */
#define SDR_FI_PART_RDM		(256U << 10)
#define SDR_FI_PART_DGRAM	(1U << 20)
#define SDR_FI_PART_MAX		SDR_FI_PART_DGRAM
#define SDR_FI_BATCH		(64U << 10)	/* a part of batched records */
#define SDR_FI_DGRAM_MAX_MSG	SDR_FI_PART_DGRAM	/* FI_EP_DGRAM: one part */
#define SDR_FI_UNEXP_BYTES	(256U << 20)	/* unexpected messages held */
#define SDR_FI_SLOTS		16		/* parts in flight a flow */
#define SDR_FI_INJECT		4096
#define SDR_FI_TX_SIZE		256
#define SDR_FI_RX_SIZE		256
#define SDR_FI_CQ_SIZE		1024
#define SDR_FI_CONNECT_MS	10000	/* a connect's bound, refusals retried */
#define SDR_FI_RETRY_MS		100	/* a refused connect asks again after */
/*
 * Accepted connections an endpoint holds (FI_SDR_MAX_PEERS,
 * FI_OPT_SDR_MAX_PEERS).  A domain's context takes at most 128 flows
 * (its 4096-entry completion ring, 2 x SDR_FI_SLOTS entries a flow), and
 * 64 RDM flows map 520 MiB of the default ctx_max_mb (4096): half the
 * flows, an eighth of the memory, so what strangers can make an endpoint
 * accept leaves the application's own connections room.
 */
#define SDR_FI_MAX_PEERS	64
/* A quiet connection is reclaimed after this (FI_SDR_IDLE_MS); 0: never */
#define SDR_FI_IDLE_MS		60000
/* The listener's thread looks for dead and idle connections this often */
#define SDR_FI_REAP_MS		200

#define SDR_FI_CAPS	(FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | \
			 FI_DIRECTED_RECV | FI_SOURCE | FI_LOCAL_COMM | \
			 FI_REMOTE_COMM)

#define SDR_FI_TX_CAPS	(FI_MSG | FI_TAGGED | FI_SEND)
#define SDR_FI_RX_CAPS	(FI_MSG | FI_TAGGED | FI_RECV | FI_DIRECTED_RECV | \
			 FI_SOURCE)
#define SDR_FI_DOMAIN_CAPS	(FI_LOCAL_COMM | FI_REMOTE_COMM)
/* the default operation flags a transmit context takes (tx_attr->op_flags) */
#define SDR_FI_TX_OP_FLAGS	(FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | \
				 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)
/* a flow's messages arrive, and match, in the order they were sent */
#define SDR_FI_ORDER		FI_ORDER_SAS

struct sdr_fi_domain;
struct sdr_fi_ep;
struct sdr_fi_cq;

/*
 * An sdr group an endpoint's sends join (FI_OPT_SDR_GROUP): closed in sdr
 * once the application closed it and its last member send is posted.
 */
struct sdr_fi_group {
	struct sdr_fi_group *next;
	uint32_t id;
	uint32_t unposted;		/* member sends not wholly posted */
	bool closing;			/* the application closed it */
};

struct sdr_fi_fabric {
	struct fid_fabric fabric;
};

struct sdr_fi_domain {
	struct fid_domain domain;
	pthread_mutex_t lock;		/* every call on the domain's objects */
	struct sdr_ctx *ctx;		/* the device's libsdr context */
	char dev[64];
	struct in_addr ip;		/* the device's IPv4 address */
	int refs;			/* endpoints, CQs, AVs open on it */
	/*
	 * The connections of the domain's endpoints by handle (under lock):
	 * a completion's user_data names its connection by index and
	 * generation, never by pointer, so that one of a flow already
	 * destroyed (reclaimed) finds nothing instead of freed memory.
	 */
	struct sdr_fi_conn **conn_tab;
	uint32_t conn_cap;
	uint32_t conn_gen;		/* the last generation handed out */
	bool reap;			/* a connection died: reap at progress */
};

/* A completion, and for a receive its sender (FI_SOURCE). */
struct sdr_fi_comp {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
};

struct sdr_fi_cq {
	struct fid_cq cq;
	struct sdr_fi_domain *dom;
	enum fi_cq_format format;
	enum fi_wait_obj wait_obj;		/* NONE or FD */
	struct sdr_fi_comp *ring;		/* completions, FIFO */
	uint32_t cap, head, count;
	struct fi_cq_err_entry *err;		/* error completions, FIFO */
	uint32_t err_cap, err_head, err_count;
	int refs;				/* endpoints bound */
};

/* A completion counter (fi_cntr(3)). */
struct sdr_fi_cntr {
	struct fid_cntr cntr;
	struct sdr_fi_domain *dom;
	enum fi_wait_obj wait_obj;		/* NONE or FD */
	uint64_t value, errors;
	int refs;				/* endpoints bound */
};

struct sdr_fi_av {
	struct fid_av av;
	struct sdr_fi_domain *dom;
	struct sockaddr_in *addr;	/* index = fi_addr */
	bool *valid;
	size_t n, cap;
	uint64_t gen;			/* changes with every insert, remove */
	int refs;			/* endpoints bound */
};

/* A flow to or from one peer. */
struct sdr_fi_conn {
	struct sdr_fi_conn *next;
	struct sdr_fi_ep *ep;
	struct sdr_flow *flow;
	uint32_t idx, gen;		/* its handle: dom->conn_tab[idx] */
	/*
	 * the last traffic the provider saw; the flow's packets (the
	 * kernel's counters) when it had been quiet half the idle time
	 */
	int64_t last_ms;
	int64_t pkts_ms;
	uint64_t last_pkts;
	/*
	 * tx: the peer's listener; rx: the peer's address (rdma_cm's) and the
	 * listener port its first message named (port_known)
	 */
	struct sockaddr_in peer;
	bool port_known;
	bool tx;			/* we connected it, to send */
	bool connecting;		/* tx: the peer has not answered yet */
	bool dead;			/* failed, or its peer went away */
	bool ended;			/* tx: the flow ended between sends */
	uint32_t stride;		/* send slot stride */
	uint32_t free_slots;		/* bit i: send slot i unused */
	/* tx: the send each busy slot carries a part of */
	struct sdr_fi_op *slot_op[SDR_FI_SLOTS];
	/* tx: sends not wholly posted yet, oldest first */
	struct sdr_fi_op *txq, **txq_tail;
	/* rx: the posted receives, oldest first (it takes the next part) */
	struct sdr_recv *rq[SDR_FI_SLOTS];
	uint32_t rq_head, nposted;
	bool stalled;			/* rx: a message waits for room */
	uint32_t group;			/* tx: the group the flow's posts join */
	/* rx, FI_SOURCE: the peer's fi_addr while the AV is at src_gen */
	fi_addr_t src;
	uint64_t src_gen;
	bool src_known;
	uint32_t rx_off;		/* rx: the oldest part's next record */
	/* rx: the message whose further parts come next, and where to */
	struct sdr_fi_hdr cur;
	uint64_t cur_got;
	struct sdr_fi_op *cur_op;	/* a receive that took it ... */
	struct sdr_fi_unexp *cur_u;	/* ... or its unexpected copy */
};

/* A posted fi_recv / fi_trecv, or a send. */
struct sdr_fi_op {
	struct sdr_fi_op *next;		/* a posted list, or ep->tx_ops */
	struct sdr_fi_op *qnext;	/* send: its flow's queue */
	struct sdr_fi_op *bnext;	/* send: the next in its batch */
	void *context;
	void *buf;
	size_t len;
	uint64_t tag, ignore;
	uint64_t flags;			/* FI_MSG / FI_TAGGED | FI_RECV/SEND */
	bool report;			/* a completion is wanted */
	/* recv: FI_DIRECTED_RECV, only from this peer's endpoint */
	bool directed;
	struct sockaddr_in from;
	/* send */
	struct sdr_fi_conn *conn;
	struct sdr_fi_group *grp;	/* FI_OPT_SDR_GROUP's, or NULL */
	void *owned;			/* FI_INJECT: buf, a copy */
	uint64_t data;
	uint16_t kind;			/* SDR_FI_OP_* | SDR_FI_F_DATA */
	bool started, queued;
	size_t off;			/* bytes posted */
	uint32_t parts;			/* parts posted, not complete */
	int err, prov_errno;		/* the first failure */
};

/*
 * A message that came before its receive was posted, copied out of its
 * slots (so that the flow goes on) part by part.
 */
struct sdr_fi_unexp {
	struct sdr_fi_unexp *next;
	/*
	 * its connection while parts are coming (cur_u), else NULL: a whole
	 * one outlives its connection (reclaimed), so it keeps the peer's
	 * address (rdma_cm's, and the listener port its parts carried)
	 */
	struct sdr_fi_conn *conn;
	struct sockaddr_in peer;
	struct sdr_fi_hdr h;
	uint8_t *heap;			/* h.len bytes */
	uint64_t got;			/* bytes arrived */
	void *claim;			/* FI_CLAIM: the context it is kept for */
	/* taken (off every list) before its last part came: for taker */
	bool taken;
	struct sdr_fi_op *taker;	/* NULL: discarded */
};

struct sdr_fi_ep {
	struct fid_ep ep;
	struct sdr_fi_domain *dom;
	struct sdr_fi_cq *tx_cq, *rx_cq;
	struct sdr_fi_cntr *tx_cntr, *rx_cntr;	/* FI_SEND, FI_RECV */
	/* FI_SELECTIVE_COMPLETION, and the default operation flags */
	uint64_t tx_flags, rx_flags;
	struct sdr_fi_av *av;
	bool enabled;
	enum fi_ep_type type;		/* FI_EP_RDM or FI_EP_DGRAM */
	uint32_t policy;		/* RDM: FI_SDR_POLICY (SR); DGRAM: NONE */
	uint64_t max_msg;		/* SDR_FI_MAX_MSG, DGRAM one part */
	uint8_t ec_k, ec_m;		/* FI_OPT_SDR_EC_K, _M (0: sdr's) */
	struct sdr_fi_group *grp;	/* the open group, or NULL */
	struct sdr_fi_group *groups;	/* open and closing */
	struct sockaddr_in name;	/* the listener's address */
	struct sdr_cm *listener;
	pthread_t cm_thread;
	bool cm_running, cm_stop;
	struct sdr_fi_conn *conns;
	/*
	 * Strangers' cost: accepted connections at most max_peers (more are
	 * refused), a quiet one reclaimed after idle_ms (0: never)
	 */
	uint32_t max_peers, idle_ms;
	uint32_t nr_accepted;		/* accepted connections held */
	uint32_t refused;		/* requests refused over max_peers */
	uint32_t reclaimed;		/* connections reclaimed, idle or dead */
	/*
	 * The last peer address a connect was refused at for all of
	 * SDR_FI_CONNECT_MS: sends to it fail at once until refused_until
	 */
	struct sockaddr_in refused_at;
	int64_t refused_until;
	int64_t reap_at;		/* the listener thread's next look */
	uint32_t part;			/* SDR_FI_PART_RDM or _DGRAM */
	struct sdr_fi_op *posted_msg, *posted_tag;	/* FIFO each */
	struct sdr_fi_unexp *unexp;			/* FIFO */
	struct sdr_fi_unexp *claimed;			/* FI_PEEK | FI_CLAIM */
	struct sdr_fi_op *tx_ops;			/* sends not complete */
	uint32_t tx_inflight;
	uint64_t unexp_bytes;		/* held by unexpected heap copies */
	bool directed;			/* FI_DIRECTED_RECV */
	bool source;			/* FI_SOURCE */
};

/* objects */
int sdr_fi_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fab,
		       void *context);
int sdr_fi_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		   struct fid_av **av, void *context);
int sdr_fi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		   struct fid_cq **cq, void *context);
int sdr_fi_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		     struct fid_cntr **cntr, void *context);
int sdr_fi_endpoint(struct fid_domain *domain, struct fi_info *info,
		    struct fid_ep **ep, void *context);

/* data path */
void sdr_fi_progress(struct sdr_fi_domain *dom);
int sdr_fi_cq_push(struct sdr_fi_cq *cq, const struct fi_cq_tagged_entry *e,
		   fi_addr_t src);
int sdr_fi_cq_push_err(struct sdr_fi_cq *cq, const struct fi_cq_err_entry *e);
int sdr_fi_cq_trywait(struct fid *fid);
int64_t sdr_fi_now_ms(void);

/* The same IPv4 address and port (an endpoint's name, a peer's). */
static inline bool sdr_fi_same_addr(const struct sockaddr_in *a,
				    const struct sockaddr_in *b)
{
	return a->sin_addr.s_addr == b->sin_addr.s_addr &&
	       a->sin_port == b->sin_port;
}
int64_t sdr_fi_deadline(int timeout);
int sdr_fi_wait_fd(struct sdr_fi_domain *dom, int64_t end);
int sdr_fi_av_get(struct sdr_fi_av *av, fi_addr_t a, struct sockaddr_in *out);
fi_addr_t sdr_fi_av_find(const struct sdr_fi_av *av,
			 const struct sockaddr_in *sin);

/* the devices and their addresses */
int sdr_fi_dev_ip(const char *dev, struct in_addr *ip);

/* the nosys ops */
int sdr_fi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int sdr_fi_no_control(struct fid *fid, int command, void *arg);
int sdr_fi_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		       void **ops, void *context);

extern struct fi_provider sdr_fi_prov;

#endif /* SDR_FI_H */
