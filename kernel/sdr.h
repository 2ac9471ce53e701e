/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdr: software-defined reliability over UD - internal definitions.
 *
 * Objects: a struct sdr_dev per bound RDMA device owns one UD QP, its CQs,
 * the receive buffers and the send contexts.  A struct sdr_ctx per open
 * /dev/sdr is bound to one sdr_dev and owns flows.  A struct sdr_flow is one
 * end of a message channel; packets find it by id in the device's xarray.
 *
 * Lock order (outermost first):
 *   sdr_devs_lock (mutex, sdr_dev.c)
 *     sdr_dev.rwsem (users vs. removal)
 *       sdr_ctx.lock (mutex)
 *         [a rail's sdr_dev.rwsem, read, only ever tried]
 *         sdr_flow.policy_mutex (readying a policy's state)
 *         sdr_dev.crypt_mutex (making the AEAD pages)
 *         sdr_rail.mutex (letting go of a rail's device)
 *           sdr_dev.stats_lock (spinlock, _bh; only around flow->lock)
 *           sdr_dev.tx_lock (spinlock, _bh; any device's, one at a time)
 *             sdr_flow.lock (spinlock, _bh)
 *               sdr_ctx.grp_lock (spinlock, _bh)
 *                 sdr_ctx.cq_lock (spinlock, _bh)
 * A device's removal takes its rwsem for write, then its rails' mutexes.
 */
#ifndef SDR_H
#define SDR_H

#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "../uapi/sdr_uapi.h"
#include "sdr_kcompat.h"
#include "sdr_wire.h"
#include "sdr_sr.h"
#include "sdr_credit.h"
#include "sdr_auto.h"
#include "sdr_replay.h"

#if BITS_PER_LONG != 64
#error "sdr shares u64 bitmaps with userspace as unsigned long: 64-bit only"
#endif

/* Q_Keys with this bit are controlled: only privileged senders use them */
#define SDR_QKEY_CONTROLLED	0x80000000U
#define SDR_MAX_MSGS		1024
#define SDR_MAX_MSG_SIZE	(1U << 30)
#define SDR_MAX_CHUNK_PKTS	1024
#define SDR_MIN_CHUNK		64	/* bytes */
#define SDR_MAX_FLOW_ID		0xffffff
/* receives whose outcome a flow remembers, for late packets (> max_msgs) */
#define SDR_RX_HIST		2048
#define SDR_TX_SGE		3	/* header + a payload spanning 2 pages */
/* sdev->flows: marks the entries of other devices' flows' rails here */
#define SDR_XA_RAIL		XA_MARK_1

/* Module parameters (sdr_params.c). */
extern unsigned int sdr_recv_depth;
extern unsigned int sdr_recv_max;
extern unsigned int sdr_flow_rx_window;
extern unsigned int sdr_send_depth;
extern unsigned int sdr_dev_paths;
extern unsigned int sdr_max_region_mb;
extern unsigned int sdr_ctx_max_flows;
extern unsigned int sdr_ctx_max_mrs;
extern unsigned int sdr_ctx_max_mb;
extern unsigned int sdr_user_max_flows;
extern unsigned int sdr_user_max_mb;
extern unsigned int sdr_flow_send_max_mb;
extern unsigned int sdr_flow_recv_max_mb;
extern unsigned int sdr_none_idle_ms;
extern unsigned int sdr_none_reorder_pkts;
extern unsigned int sdr_default_policy;
extern unsigned int sdr_chunk_pkts;
extern unsigned int sdr_rto_min_us;
extern unsigned int sdr_rto_max_us;
extern unsigned int sdr_rto_init_us;
extern unsigned int sdr_alpha_pct;
extern unsigned int sdr_dead_ms;
extern unsigned int sdr_none_window;
extern unsigned int sdr_ack_every;
extern unsigned int sdr_ack_delay_us;
extern unsigned int sdr_max_inflight;
extern unsigned int sdr_win_init;
extern unsigned int sdr_rate_mbit;
extern unsigned int sdr_loss_cut_pct;
extern unsigned int sdr_reorder_us;
extern unsigned int sdr_nack_interval_us;
extern unsigned int sdr_ec_k;
extern unsigned int sdr_ec_m;
extern unsigned int sdr_ec_beta_pct;
extern unsigned int sdr_ec_rx_max_k;
extern unsigned int sdr_ec_rx_max_m;
extern unsigned int sdr_fail_qp_recovery;

enum sdr_dev_counter {
	SDR_DEV_TX_PACKETS,
	SDR_DEV_TX_BYTES,
	SDR_DEV_RX_PACKETS,
	SDR_DEV_RX_BYTES,
	SDR_DEV_TX_ERRORS,	/* send completions with an error */
	SDR_DEV_RX_ERRORS,	/* receive completions with an error */
	SDR_DEV_CTRL_DROPPED,	/* control packets not sent (no send context) */
	SDR_DEV_QP_RECOVERIES,	/* times the QP came back from an error */
	SDR_DEV_RX_GROWN,	/* receive buffers added to the initial recv_depth */
	/* SDR_DEV_RX_ERRORS by reason (sdr_rx_error()) */
	SDR_DEV_RX_ERR_LENGTH,	/* IB_WC_LOC_LEN_ERR: longer than the buffer */
	SDR_DEV_RX_ERR_LOCAL,	/* the other IB_WC_LOC_* errors */
	SDR_DEV_RX_ERR_OTHER,	/* any other error but a flush */
	SDR_DEV_NR_COUNTERS
};

/* per-flow counters the device also shows as totals (sdr_sysfs.c) */
#define SDR_DEV_FLOW_SUMS	16

struct sdr_tx;
struct sdr_rx;
struct sdr_policy_ops;
struct sdr_flow;
struct sdr_dev;

/*
 * What the flow core asks of a device's UD transport.  sdr_net.c fills it
 * (sdr_net_init()); the flow core calls through it, so the transport can
 * sit above the flows whose packets it carries and calls.
 */
struct sdr_xmit_ops {
	/* packets of flows on tx_flows are ready: send what the QP takes */
	void	(*kick)(struct sdr_dev *sdev);
	/* send one control packet (header @pkt, @len bytes of @body) now */
	int	(*send_ctrl)(struct sdr_dev *sdev, struct sdr_flow *flow,
			     const struct sdr_pkt *pkt, const void *body,
			     u32 len);
	/* a flow came to the device: grow the receive ring for it */
	void	(*rx_fit)(struct sdr_dev *sdev);
	/* an AEAD flow uses the device: give its sends pages to encrypt into */
	int	(*crypt_enable)(struct sdr_dev *sdev);
};

/* receive buffers come in chunks of this many (a GRH block each) */
#define SDR_RX_CHUNK		1024
#define SDR_RX_MAX		65536	/* recv_max's top */
#define SDR_RX_CHUNKS		(SDR_RX_MAX / SDR_RX_CHUNK)

/* One bound RDMA device (its first RoCE port). */
struct sdr_dev {
	struct list_head	list;		/* in sdr_devs, under sdr_devs_lock */
	struct kref		ref;		/* the list holds one; each ctx one */
	struct ib_device	*ibdev;
	u32			port;
	struct device		*cdev;		/* /sys/class/sdr/<ibdev> */
	struct kobject		*flows_kobj;	/* .../flows/ */
	char			name[IB_DEVICE_NAME_MAX];
	u32			qkey;		/* random, fixed: its QPs' Q_Key */

	/*
	 * Users (ioctls touching the ib_device) hold it for read; removal
	 * takes it for write to set dying, after which nobody starts using
	 * the ib_device again.
	 */
	struct rw_semaphore	rwsem;
	bool			dying;

	const struct sdr_xmit_ops *xmit;	/* set before any flow exists */
	struct ib_pd		*pd;
	struct ib_cq		*send_cq;
	struct ib_cq		*recv_cq;
	struct ib_qp		*qp;		/* path 0: sends and receives */
	/*
	 * paths 1..nr_paths-1: send-only QPs (sdr_net_qp()), same CQs;
	 * nr_paths is fixed by sdr_net_init(), xqp[] go with qp at stop
	 */
	struct ib_qp		*xqp[SDR_PATHS_MAX - 1];
	u32			nr_paths;
	u32			path_qpn[SDR_PATHS_MAX];	/* of each, fixed */
	u32			mtu;		/* IB MTU when the QP was made */
	bool			rx_stopped;	/* do not repost receives */
	bool			stopping;	/* sdr_net_stop() began */
	bool			tx_paused;	/* QP recovering (tx_lock) */
	bool			broken;		/* QP could not be recovered */
	struct mutex		qp_mutex;	/* QP state changes vs. its destruction */
	/* back to RTS after a send error, a QP in ERR or a lost receive */
	struct work_struct	resume_work;
	struct ib_cqe		drain_cqe;	/* marker receive of a recovery */
	struct completion	drained;	/* ... came back */

	/*
	 * Receive buffers: a GRH slot and a page each, always posted.
	 * nr_rx of rx_cap exist (recv_depth at first); the ring grows
	 * (rx_grow_work, under qp_mutex) with the flows on the device,
	 * whose share of it receivers state to their senders
	 * (sdr_net_rwnd()).
	 */
	struct sdr_rx		*rx;
	unsigned int		nr_rx;
	unsigned int		rx_cap;
	atomic_t		rx_posted;
	unsigned long		rx_flags;	/* SDR_RX_* bits */
	struct work_struct	rx_grow_work;
	void			*grh[SDR_RX_CHUNKS];	/* 40 bytes a buffer */
	u64			grh_dma[SDR_RX_CHUNKS];
	void			*rx_spill;	/* behind every buffer (sdr_net.c) */
	u64			rx_spill_dma;

	/* Send contexts; tx_free and tx_flows are guarded by tx_lock. */
	spinlock_t		tx_lock;
	struct sdr_tx		*tx;
	unsigned int		nr_tx;
	struct list_head	tx_free;
	struct list_head	tx_flows;	/* flows with packets to send */
	atomic_t		tx_inflight;	/* posted, not completed */
	wait_queue_head_t	tx_wait;	/* removal waits for inflight 0 */
	void			*hdrs;		/* nr_tx headers */
	/* AEAD: every send context has a page (sdr_net_crypt_enable()) */
	bool			crypt_ready;
	struct mutex		crypt_mutex;	/* guards making the pages */
	u64			hdrs_dma;

	/* Flows of this device by id; values are struct sdr_flow *. */
	struct xarray		flows;
	atomic_t		nr_flows;

	atomic64_t		counters[SDR_DEV_NR_COUNTERS];
	atomic64_t		drops[SDR_DROP_NR];

	/*
	 * Device totals of per-flow counters: the live flows' plus these,
	 * left by flows already destroyed.  stats_lock makes a flow count
	 * either live or retired, never both or neither.
	 */
	spinlock_t		stats_lock;
	u64			retired[SDR_DEV_FLOW_SUMS];
};

extern struct mutex sdr_devs_lock;
extern struct list_head sdr_devs;
extern atomic_t sdr_nr_ctx;		/* open contexts, for leak checks */
extern atomic_t sdr_nr_flows;		/* live flows, for leak checks */
extern struct workqueue_struct *sdr_wq;

/* sdr_flow_ec.c */
void sdr_ec_codec_init(void);

/* sdr_dev.c */
int sdr_dev_init(void);
void sdr_dev_exit(void);
struct sdr_dev *sdr_dev_alloc(struct ib_device *ibdev, u32 port);
void sdr_dev_list_add(struct sdr_dev *sdev);
void sdr_dev_list_del(struct sdr_dev *sdev);
void sdr_dev_rename(struct sdr_dev *sdev, const char *name);
struct sdr_dev *sdr_dev_get_by_name(const char *name);
struct sdr_dev *sdr_dev_get_by_gid(const u8 *gid);
void sdr_dev_put(struct sdr_dev *sdev);
int sdr_dev_query_gid(struct sdr_dev *sdev, union ib_gid *gid, u32 *index);
u32 sdr_dev_mtu(struct sdr_dev *sdev);

static inline void sdr_dev_count(struct sdr_dev *sdev, int c, s64 v)
{
	atomic64_add(v, &sdev->counters[c]);
}

static inline void sdr_dev_drop(struct sdr_dev *sdev, int reason)
{
	atomic64_inc(&sdev->drops[reason]);
}

/* sdr_net.c: the device's UD transport */
int sdr_net_init(struct sdr_dev *sdev);
void sdr_net_stop(struct sdr_dev *sdev);
void sdr_net_free(struct sdr_dev *sdev);

/* ------------------------------------------------------------------ */
/* Contexts, flows, messages */

/* A group of a context's sends and receives (sdr_group.c). */
struct sdr_grp {
	u32			id;		/* 0: a free entry */
	u32			members;	/* joined so far */
	u32			pending;	/* members without their completion */
	u32			not_ok;		/* members completed other than OK */
	u64			born;		/* open order */
	u64			user_data;
	u8			status;		/* the highest member status */
	bool			closed;		/* no more members */
};

/* Who pays for a context's memory and flows (sdr_acct.c). */
struct sdr_acct {
	struct kref		ref;		/* the context's, and a flow's each */
	struct user_struct	*user;		/* locked_vm: RLIMIT_MEMLOCK */
	struct mm_struct	*mm;		/* pinned_vm (mmgrab'ed) */
	struct sdr_uacct	*ua;		/* sdr's per-user counts */
	bool			unlimited;	/* CAP_IPC_LOCK at open */
	unsigned long		memlock_pages;	/* RLIMIT_MEMLOCK at open */
	struct mem_cgroup	*memcg;		/* the opener's, or NULL */
	atomic_t		flows;
	atomic64_t		pages;
};

struct sdr_mcharge;

struct sdr_ctx {
	struct sdr_dev		*sdev;		/* bound device, or NULL */
	struct sdr_acct		*acct;		/* its opener's */
	struct mutex		lock;		/* bind, flows list, flow create/destroy */
	struct xarray		flows;		/* this context's flows by id */
	u32			cq_budget;	/* sum of 2 * max_msgs of flows */

	/* Completion ring, shared with the process. */
	spinlock_t		cq_lock;	/* tail, cq_pending, overflow */
	void			*ring;		/* vmalloc_user */
	size_t			ring_size;
	u32			cq_entries;
	u32			cq_tail;	/* ours; the shared copy is output only */
	u32			cq_pending;	/* ops that will produce a CQE */
	wait_queue_head_t	wq;		/* poll() readiness */
	pid_t			pid;

	/* Groups (sdr_group.c). */
	spinlock_t		grp_lock;	/* the table and its counters */
	struct sdr_grp		*grps;		/* SDR_GROUPS_MAX, or NULL */
	u32			grp_live;	/* entries in use */
	u32			grp_next;	/* the next id to try */
	u64			grp_born;	/* groups opened */
	u32			grp_oldest;	/* the oldest live group's id, 0: none */

	/* Registered memory (sdr_mr.c): ids from 1. */
	struct xarray		mrs;
	atomic_t		nr_mrs;
};

struct sdr_ring_hdr {			/* page 0 of the ring mapping */
	u32	head;			/* written by the process */
	u8	pad0[60];
	u32	tail;			/* written by the kernel */
	u8	pad1[60];
	u32	mask;
	u32	overflow;
};
#define SDR_RING_CQES_OFF	256

/* A part of a stream of parts (SDR_SEND_PARTS): its bytes, their holder. */
struct sdr_txpart {
	const u8		*data;
	struct sdr_mr		*mr;		/* SDR_SEND_MR: the registration */
	void			*staging;	/* SDR_SEND_USER_PTR: the copy */
};

/*
 * A message being sent.  References: flow->tx_msgs holds one while it is
 * listed, a streamed part's copy one while it runs unlocked; the memory
 * goes with the last.  Its packets still posted (pkts_posted - pkts_done)
 * keep it listed, or, once it was flushed off the list, keep its
 * completion back until the device is done reading it.
 */
struct sdr_txmsg {
	struct kref		ref;
	struct list_head	node;		/* flow->tx_msgs */
	const struct sdr_policy_ops *ops;	/* the flow's policy when posted */
	u32			seq;
	u32			imm;
	u32			msg_len;
	u32			dst_off;	/* where it lands in the receive */
	u32			ready;		/* bytes that may be sent */
	u32			next_off;	/* next byte to send */
	u32			npkts;
	u32			pkts_posted;	/* handed to the QP */
	u32			pkts_done;	/* send completions seen */
	bool			streaming;	/* more parts to come */
	bool			parts;		/* a stream of parts (SDR_SEND_PARTS) */
	struct sdr_txpart	*tparts;	/* its parts, by the engine's index */
	bool			uptr;		/* data is a staging copy */
	bool			failed;		/* a packet failed to go out */
	bool			flushed;	/* off the list by shutdown */
	bool			listed;		/* on flow->tx_msgs */
	bool			copying;	/* a streamed part is being copied in */
	u8			flush_status;	/* its completion, once flushed */
	u64			base;		/* send-region offset, or address in mr */
	struct sdr_mr		*mr;		/* SDR_SEND_MR: the registration */
	const u8		*data;		/* first byte of the message */
	void			*staging;	/* kvmalloc'ed copy, or NULL */
	/* no reference: a message never outlives its flow */
	struct sdr_flow		*flow;
	size_t			charged;	/* bytes in flow->tx_mem */
	u64			user_data;
	u32			group;		/* the group it joined, 0: none */
	struct sdr_sr_tx	sr;		/* SR sender state */
	void			*sr_mem;	/* its per-packet arrays */
	u8			*par_buf;	/* EC: parity rows, built as sent */
	unsigned long		*par_built;	/* EC: submessages built */
	u8			ec_k;		/* EC: its geometry, from the post */
	u8			ec_m;
	void			*priv;		/* its policy's: tx_init to tx_free */
};

/* Kernel-private part of a receive slot (the public part is shared). */
struct sdr_rxslot {
	const struct sdr_policy_ops *ops;	/* the first packet's policy; NULL: none came */
	u32			seq;
	u32			state;		/* SDR_RECV_* (mirrors shared) */
	u32			msg_len;
	u32			dst_off;	/* where the message lands (its base) */
	u32			npkts;
	u32			nchunks;
	u32			pkts_done;
	u32			chunks_done;
	u64			user_data;
	u32			group;		/* the group it joined, 0: none */
	u64			done_at_pkt;	/* NONE: give up at this stats.rx_packets */
	struct sdr_sr_rx	sr;		/* SR receiver state */
	u8			**ec_par;	/* EC: parity payloads held, or NULL */
	u32			ec_par_n;	/* entries of ec_par */
	void			*priv;		/* its policy's, freed by rx_release */
	/*
	 * SDR_RECV_MR: the registration the message lands in, where, and
	 * the most it may hold; NULL: the slot of the receive region
	 */
	struct sdr_mr		*mr;
	u8			*dst;
	u64			dst_len;
	bool			refused;	/* completed SDR_STATUS_TOOBIG */
	/*
	 * A streamed message (SDR_PKT_F_STREAM): parts land where each
	 * says; per chunk of the buffer the bytes landed and, where a part
	 * ended inside it, the bytes it will have (0: all of it).  Slices
	 * of flow->stream_chunks, nchunks of max_msg_size each.
	 */
	bool			stream;
	u32			*chunk_bytes;
	u32			*chunk_want;
};

/* Per-flow counters beyond the engine's (flow->lock). */
struct sdr_flow_stats {
	u64			tx_packets;
	u64			tx_bytes;
	u64			rx_packets;
	u64			rx_bytes;
	u64			rx_dropped;
	u64			rnr_tx;
	u64			msgs_sent;
	u64			msgs_received;
	u64			msgs_failed;
	u64			drops[SDR_DROP_NR];	/* rx_dropped by reason */
};

/*
 * A flow's place in the send queue of one of its devices (rail): on
 * sdev->tx_flows (under that device's tx_lock) while it may have packets
 * for the device.  Its posted count is the work requests the device holds
 * for it; teardown waits for 0 on sdev->tx_wait.
 */
struct sdr_txq {
	struct list_head	node;		/* in sdev->tx_flows */
	bool			queued;
	u32			rail;		/* 0: the flow's own device */
	struct sdr_flow		*flow;
	atomic_t		posted;
	/* the flow's packets over this rail (under flow->lock) */
	u64			tx_packets;	/* DATA handed to the device */
	u64			rx_packets;	/* the peer's, taken in */
};

/*
 * One more device a flow sends over and receives on (rail 1..).  Made
 * and connected before the flow connects (under the context's lock and,
 * tried, the device's users lock: never waiting for it while holding the
 * flow's own device's); fixed from then on but for gone (flow->lock),
 * set when the device goes away or breaks, and what mutex guards.  Freed
 * with the flow.
 */
struct sdr_rail {
	struct sdr_dev		*sdev;		/* holds a reference */
	u32			id;		/* the flow's id in sdev->flows */
	u32			first;		/* the flow's paths first.. */
	u32			n;		/* ...first + n - 1 */
	bool			connected;
	bool			gone;		/* its device was removed */
	/*
	 * Letting go of the device, by the flow's destruction or by the
	 * device's removal, whichever comes first: listed and ah.  The
	 * removal frees the device's PD only after it held this mutex.
	 */
	struct mutex		mutex;
	bool			listed;		/* in sdev->flows (SDR_XA_RAIL) */
	struct sdr_txq		txq;
	/* the peer's same rail */
	struct ib_ah		*ah;
	u32			peer_qpn;
	u32			peer_qkey;
	u32			peer_flow;	/* its id on its device */
	u32			peer_npaths;
	u32			peer_path_qpn[SDR_PATHS_MAX];
	union ib_gid		peer_gid;
	struct sdr_endpoint	peer_ep;	/* checked at the flow's connect */
};

/* A key, a hash, an X25519 value: 32 bytes. */
#define SDR_KEY_LEN	32

/*
 * A flow's packet authentication (sdr_auth.c) and key exchange
 * (sdr_kex.c).  From create to connect the flow holds its X25519 secret
 * and the job secret's key (kex_secret, psk); connect derives one key
 * per direction, keys the VMAC transforms or copies the AEAD keys,
 * forgets both secrets and then sets ready (release), which the receive
 * path reads (acquire) before it uses any key.  Keys never change after
 * that: they are read without a lock and freed with the flow.  The
 * replay window is under flow->lock.
 */
struct sdr_auth {
	u32			alg;		/* SDR_AUTH_OFF, _VMAC64, _AEAD */
	bool			ready;		/* keys set: connect */
	bool			has_psk;	/* the flow named a job secret */
	struct crypto_shash	*rx_tfm;	/* VMAC64 */
	struct crypto_shash	*tx_tfm;
	u8			rx_key[SDR_KEY_LEN];	/* AEAD */
	u8			tx_key[SDR_KEY_LEN];
	u8			kex_secret[SDR_KEY_LEN];
	u8			kex_pub[SDR_KEY_LEN];
	u8			psk[SDR_KEY_LEN];
	u8			share_hash[SDR_KEY_LEN];	/* our share's */
	atomic64_t		tx_pn;		/* last packet number sent */
	struct sdr_replay	replay;
};

/* What sdr_auth_accept() derives for sdr_auth_commit(). */
struct sdr_auth_keys {
	u8			tx[SDR_KEY_LEN];
	u8			rx[SDR_KEY_LEN];
};

struct sdr_flow {
	struct kref		ref;
	/* kfree_rcu() takes it only in the struct's first 4 KiB: first */
	struct rcu_head		rcu;
	u32			id;
	struct sdr_dev		*sdev;		/* holds a reference */
	struct sdr_ctx		*ctx;		/* NULL once detached */
	spinlock_t		lock;		/* everything below */

	u32			state;		/* SDR_FLOW_* */
	u32			policy;
	u8			ec_k;		/* EC geometry of messages */
	u8			ec_m;		/* posted from now on */
	u32			rate_mbit;	/* fixed rate, 0: the path's */
	/* the largest EC geometry taken from the peer: fixed at connect */
	u8			ec_rx_max_k;
	u8			ec_rx_max_m;
	pid_t			owner_pid;
	uid_t			owner_uid;	/* in the init namespace */
	u32			mtu;
	u32			payload;
	u32			chunk_size;	/* bytes per chunk bit */
	bool			mr_only;	/* SDR_FLOW_CREATE_MR: no regions */
	u32			max_inflight;	/* packets; 0: the parameter's */
	u32			max_msg_size;
	u32			max_msgs;
	bool			dead;		/* destroyed: ignore packets */

	/*
	 * paths: QPs it sends over, rail 0's (sdev's first rail0_paths)
	 * then each rail's; the engine's view of them
	 */
	u32			paths;
	u32			rail0_paths;
	u32			path_qpn[SDR_PATHS_MAX];	/* theirs, fixed */
	struct sdr_paths	*ps;		/* paths > 1 only */

	/* peer */
	struct ib_ah		*ah;
	u32			peer_qpn;
	/* QPNs the peer sends from: peer_qpn and its other paths' */
	u32			peer_npaths;
	u32			peer_path_qpn[SDR_PATHS_MAX];
	u32			peer_qkey;
	u32			peer_flow;
	u64			peer_token;	/* goes in every packet we send */
	union ib_gid		peer_gid;
	u64			token;		/* every packet to us must carry it */
	struct sdr_auth		auth;

	/*
	 * What the flow charges to its opener (sdr_acct.c): acct is held
	 * from create to the flow's free, so its sends' memory can be given
	 * back as it goes; charged (its own state, whole pages) and its
	 * count go back as it leaves its context; mcharge, the regions',
	 * once the flow and every mapping of them let go (flow->lock).
	 */
	struct sdr_acct		*acct;		/* NULL until charged */
	atomic_long_t		charged;	/* bytes charged to acct */
	bool			counted;	/* in acct's flows */
	struct sdr_mcharge	*mcharge;	/* NULL once detached */
	/*
	 * Memory its sends hold (within flow_send_max_mb) and EC parity its
	 * receives hold (flow_recv_max_mb), each charged to acct in whole
	 * pages of its total.
	 */
	spinlock_t		mem_lock;	/* a leaf: tx_mem, rx_mem */
	size_t			tx_mem;		/* bytes */
	size_t			rx_mem;		/* bytes */
	/* shared regions (sdr_vmalloc_user) */
	u8			*recv_region;
	u32			*stream_chunks;	/* per slot: 2 x nchunks(max_msg) */
	u32			max_chunks;	/* nchunks(max_msg_size) */
	u8			*send_region;
	u8			*state_area;
	size_t			region_size;	/* each of recv and send */
	size_t			state_size;
	u32			slot_stride;
	u32			state_stride;
	u32			chunk_bitmap_off;
	u32			pkt_bitmap_off;

	/* send side */
	struct list_head	tx_msgs;	/* posted, oldest first */
	struct sdr_txq		txq;		/* rail 0's: on sdev->tx_flows */
	u32			tx_next_seq;
	u32			tx_inflight_msgs;

	/* rails 1..nrails-1 (SDR_IOC_FLOW_RAIL); rail 0 is sdev */
	u32			nrails;
	struct sdr_rail		*rails[SDR_RAILS_MAX - 1];

	/* receive side: slot i holds seq with seq % max_msgs == i */
	struct sdr_rxslot	*slots;
	u32			rx_seq0;	/* the peer's first seq */
	u32			rx_next_post;	/* seq the next post takes */
	/* bit seq % SDR_RX_HIST: receive seq was delivered (last HIST posts) */
	DECLARE_BITMAP(rx_delivered, SDR_RX_HIST);
	u32			rx_posted;	/* slots not FREE */
	u32			rx_last_seq;	/* seq of the newest NONE DATA */
	u32			rx_low;		/* the peer's low-water mark */
	u64			rx_reap_at;	/* smallest done_at_pkt, or 0 */
	u64			rx_last_ns;	/* when the last one came */
	struct hrtimer		rx_timer;	/* NONE idle completion */
	bool			rx_timer_armed;

	/*
	 * Policies whose per-flow state exists (bit id; set under
	 * policy_mutex and lock, read under either): this flow's own, the
	 * peer's at connect, and one the peer switched to once its first
	 * packet asked for it (policies_wanted, readied by policy_work).
	 */
	unsigned long		policies_ready;
	unsigned long		policies_wanted;
	struct mutex		policy_mutex;
	struct work_struct	policy_work;
	struct sdr_endpoint	peer_ep;	/* for a policy readied later */

	/* the flow's timer, for every policy (sdr_flow_arm()) */
	struct hrtimer		timer;
	u64			timer_at;	/* its expiry, 0 if not armed */
	u64			dead_ns;	/* peer silent this long: dead; 0 never */

	/* SR: engine state shared by the flow's SR and EC messages */
	struct sdr_sr_flow	sr;
	struct sdr_sr_flow	*ad;		/* ADAPTIVE's, once it is ready */
	/* AUTO (sdr_flow_auto.c): its measures and choice, its last input */
	struct sdr_auto		au;
	struct sdr_auto_in	au_in;
	u64			ec_code_ps;	/* EC: parity time per row input */
	void			*sr_rx_mem;	/* max_msgs receive maps */
	size_t			sr_rx_size;	/* bytes of one */
	u64			sr_heard_ns;	/* last ACK/NACK/RNR from the peer */
	u64			sr_data_ns;	/* last packet from the peer */
	/* NONE: receive credits (sdr_credit.h), probed from the timer */
	struct sdr_credit_tx	none_tx;
	struct sdr_credit_rx	none_rx;	/* once NONE is ready */
	u32			none_window;	/* ours, from create: the endpoint says it */
	struct list_head	ec_jobs;	/* EC: submessages to decode */
	struct work_struct	ec_work;	/* ... by sdr_eck_decode_work() */

	struct sdr_flow_stats	stats;
	bool			retired;	/* counted in sdev->retired */
	struct kobject		*kobj;		/* flows/<id> in sysfs */
	struct work_struct	free_work;
};

/*
 * struct sdr_endpoint travels between hosts: its __u32 fields hold
 * little-endian values (uapi keeps __le32 out of its types).
 */
static inline __u32 sdr_ep_put(u32 v)
{
	return (__force __u32)cpu_to_le32(v);
}

static inline u32 sdr_ep_get(__u32 v)
{
	return le32_to_cpu((__force __le32)v);
}

void sdr_flow_get(struct sdr_flow *flow);
void sdr_flow_put(struct sdr_flow *flow);
struct sdr_flow *sdr_flow_lookup_rcu(struct xarray *flows, u32 id);
struct sdr_flow *sdr_ctx_flow(struct sdr_ctx *ctx, u32 id);

/* sdr_flow.c */
int sdr_flow_create(struct sdr_ctx *ctx, struct sdr_flow_create *arg);
int sdr_flow_connect(struct sdr_ctx *ctx, struct sdr_flow_connect *arg);
int sdr_flow_destroy(struct sdr_ctx *ctx, u32 flow_id);
void sdr_flow_shutdown(struct sdr_flow *flow, u8 status);
int sdr_flow_info(struct sdr_ctx *ctx, struct sdr_flow_info *arg);
int sdr_recv_post(struct sdr_ctx *ctx, struct sdr_recv_post *arg);
int sdr_recv_complete(struct sdr_ctx *ctx, struct sdr_recv_complete *arg);
int sdr_send_post(struct sdr_ctx *ctx, struct sdr_send_post *arg);
void sdr_flow_destroy_all(struct sdr_ctx *ctx);
void sdr_dev_fail_flows(struct sdr_dev *sdev);
int sdr_flow_mmap_area(struct sdr_flow *flow, u64 cookie, void **mem,
		       size_t *size, bool *writable, struct sdr_mcharge **charge);
/* sdr_auth.c */
extern bool sdr_auth_required;
int sdr_auth_param_alg(void);
int sdr_auth_init(struct sdr_auth *a, u32 alg, const char *secret,
		  size_t size);
void sdr_auth_fill_ep(const struct sdr_auth *a, struct sdr_ep_auth *ep);
void sdr_auth_fill_kex(struct sdr_auth *a, const struct sdr_endpoint *ep,
		       const struct sdr_ep_paths *pp, struct sdr_ep_kex *kex);
int sdr_auth_accept(const struct sdr_auth *a, const struct sdr_ep_auth *peer,
		    const struct sdr_ep_kex *kex, const struct sdr_endpoint *ep,
		    const struct sdr_ep_paths *pp, struct sdr_auth_keys *keys);
int sdr_auth_commit(struct sdr_auth *a, struct sdr_auth_keys *keys);
void sdr_auth_free(struct sdr_auth *a);
int sdr_auth_sign(struct sdr_auth *a, u8 *hdr, const void *payload, u32 len,
		  u8 *out);
bool sdr_auth_ready(const struct sdr_auth *a);
bool sdr_auth_verify(const struct sdr_auth *a, u8 *hdr,
		     const struct sdr_pkt *pkt);
const char *sdr_auth_name(u32 alg);
const char *sdr_kex_name(u32 kex);
u32 sdr_auth_kex(const struct sdr_auth *a);
/* sdr_kex.c */
int sdr_kex_psk(const char *name, size_t size, u8 out[SDR_KEY_LEN]);
void sdr_kex_share_hash(const struct sdr_endpoint *ep, u32 n, const u32 *qpn,
			u32 alg, u32 flags, const u8 *pub,
			u8 out[SDR_KEY_LEN]);
void sdr_kex_mac(const u8 psk[SDR_KEY_LEN], const u8 hash[SDR_KEY_LEN],
		 u8 mac[SDR_KEX_MAC_LEN]);
int sdr_kex_derive(const u8 *secret, const u8 *pub, const u8 *peer_pub,
		   const u8 *hash, const u8 *peer_hash, const u8 *psk,
		   u8 tx[SDR_KEY_LEN], u8 rx[SDR_KEY_LEN]);
int sdr_kex_keypair(u8 secret[SDR_KEY_LEN], u8 pub[SDR_KEY_LEN]);
int sdr_kex_check(struct sdr_kex_check *arg);

void sdr_flow_rx(struct sdr_dev *sdev, struct sdr_flow *flow,
		 const struct sdr_pkt *pkt, u8 *hdr, u32 src_qp,
		 const union ib_gid *sgid);
int sdr_flow_set_policy(struct sdr_flow *flow, u32 policy);
int sdr_flow_set_ec(struct sdr_flow *flow, u32 k, u32 m);
void sdr_flow_set_rate(struct sdr_flow *flow, u32 mbit);
/* where a packet sdr_flow_tx_next() gave goes */
struct sdr_tx_dest {
	struct ib_ah		*ah;
	u32			qpn;
	u32			qkey;
	u32			qp;		/* the device's path QP it leaves by */
	bool			urgent;		/* a repair of the oldest group: first */
};

bool sdr_flow_tx_next(struct sdr_flow *flow, u32 rail, struct sdr_pkt *pkt,
		      const u8 **data, struct sdr_txmsg **msg,
		      struct sdr_tx_dest *dest);
struct sdr_txq *sdr_flow_txq(struct sdr_flow *flow, u32 rail);
int sdr_flow_rail(struct sdr_ctx *ctx, struct sdr_flow_rail *arg);
void sdr_flow_rail_gone(struct sdr_flow *flow, struct sdr_dev *sdev);
void sdr_dev_rails_gone(struct sdr_dev *sdev);
void sdr_dev_rails_release(struct sdr_dev *sdev);
void sdr_flow_tx_done(struct sdr_flow *flow, struct sdr_txmsg *msg, bool ok);
void sdr_flow_queue_tx(struct sdr_flow *flow);

/* sdr_ctx.c */
bool sdr_ctx_cq_ready(struct sdr_ctx *ctx);
bool sdr_ctx_cq_reserve(struct sdr_ctx *ctx);
void sdr_ctx_cq_unreserve(struct sdr_ctx *ctx);
void sdr_ctx_cq_push(struct sdr_ctx *ctx, const struct sdr_cqe *cqe);

/* sdr_acct.c */
struct sdr_acct *sdr_acct_new(void);
void sdr_acct_get(struct sdr_acct *a);
void sdr_acct_put(struct sdr_acct *a);
int sdr_acct_charge(struct sdr_acct *a, size_t bytes);
struct mem_cgroup *sdr_acct_memcg_enter(struct sdr_acct *a);
void sdr_acct_memcg_leave(struct mem_cgroup *old);
struct sdr_mcharge *sdr_mcharge_new(struct sdr_acct *a, size_t bytes);
struct sdr_mcharge *sdr_mcharge_get(struct sdr_mcharge *c);
void sdr_mcharge_put(struct sdr_mcharge *c);

/* sdr_mr.c */
struct sdr_mr;
int sdr_mr_reg(struct sdr_ctx *ctx, struct sdr_mr_reg *arg);
int sdr_mr_dereg(struct sdr_ctx *ctx, struct sdr_mr_dereg *arg);
struct sdr_mr *sdr_mr_use(struct sdr_ctx *ctx, u32 id, u64 addr, u64 len,
			  u8 **kva);
void sdr_mr_put(struct sdr_mr *mr);
u32 sdr_mr_id(const struct sdr_mr *mr);
void sdr_mr_ctx_release(struct sdr_ctx *ctx);
void sdr_acct_uncharge(struct sdr_acct *a, size_t bytes);
int sdr_acct_flow_add(struct sdr_acct *a);
void sdr_acct_flow_del(struct sdr_acct *a);
void *sdr_vmalloc_user(size_t size);
int sdr_map_vmalloc(struct vm_area_struct *vma, void *mem, size_t size,
		    struct sdr_mcharge *c);

/* sdr_group.c */
int sdr_group_ioctl(struct sdr_ctx *ctx, struct sdr_group *arg);
int sdr_group_join(struct sdr_ctx *ctx, u32 id);
void sdr_group_done(struct sdr_ctx *ctx, u32 id, u8 status);
bool sdr_group_urgent(struct sdr_ctx *ctx, u32 id);
void sdr_group_free(struct sdr_ctx *ctx);

int sdr_sysfs_init(void);
void sdr_sysfs_exit(void);
int sdr_sysfs_add_dev(struct sdr_dev *sdev);
void sdr_sysfs_del_dev(struct sdr_dev *sdev);
int sdr_sysfs_add_flow(struct sdr_flow *flow);
void sdr_sysfs_del_flow(struct sdr_flow *flow);

/* sdr_cdev.c */
int sdr_cdev_init(void);
void sdr_cdev_exit(void);

#endif /* SDR_H */
