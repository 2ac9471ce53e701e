/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdr: what the flow core (sdr_flow.c), the flow services it and the
 * policies share (sdr_flow_lib.c), and the policies (sdr_flow_none.c,
 * sdr_flow_sr.c, sdr_flow_ec.c, listed in sdr_policy.c).  All of it runs
 * under flow->lock unless said otherwise.
 *
 * The calls run one way: the flow core calls a policy only through its
 * struct sdr_policy_ops; a policy calls the flow services and the engine,
 * never the flow core.
 */
#ifndef SDR_FLOW_H
#define SDR_FLOW_H

#include "sdr.h"

/* Control packets built under the flow lock, sent after it is dropped. */
struct sdr_ctrl {
	struct sdr_pkt	hdr;
	u32		len;
	u8		body[SDR_ACK_MAX_LEN];
};

struct sdr_ctrlq {
	unsigned int	n;
	struct sdr_ctrl	c[4];
};

/* One pass of the transmitter over a flow's messages, oldest first. */
struct sdr_tx_round {
	u64		now;
	unsigned long	held;	/* bit id: that policy's later messages wait */
	u32		path;	/* tx_next's packet goes on this path (0) */
	bool		urgent;	/* the message is of its context's oldest group */
};

/* EC's payload work inside the SR engine's message handling. */
struct sdr_parity_ops {
	int	(*tx_init)(struct sdr_flow *flow, struct sdr_txmsg *msg);
	const u8 *(*tx_row)(struct sdr_flow *flow, struct sdr_txmsg *msg,
			    u32 g, u32 j);
	u8	*(*rx_buf)(struct sdr_flow *flow, const u8 *payload);
	void	(*rx_put)(struct sdr_flow *flow, u8 *buf);	/* rx_buf's back */
	void	(*rx_keep)(struct sdr_flow *flow, u32 idx,
			   const struct sdr_pkt *pkt, u8 *buf, u64 now);
	void	(*rx_free_group)(struct sdr_flow *flow, u32 idx, u32 g);
	void	(*rx_queue_decode)(struct sdr_flow *flow, u32 idx, u32 g,
				   u64 now);
};

/* struct sdr_policy_ops.features: what the policy needs of the flow */
#define SDR_PF_PARITY	0x1	/* its DATA packets may carry parity */
#define SDR_PF_ACKED	0x2	/* its sends take ACK, NACK and RNR */
#define SDR_PF_PATHS	0x4	/* its tx_next picks among the allowed paths (rails) */
#define SDR_PF_STREAM	0x8	/* it runs streams of parts (SDR_PKT_F_STREAM) */

/*
 * A reliability policy, modelled on tcp_congestion_ops: the flow core
 * holds no policy id tests, it calls these.  A message keeps the ops of
 * the policy it was posted under (msg->ops) and a receive those of its
 * first packet (slot->ops), so a live switch changes only what is posted
 * after it.  Switching in is readying (flow_init, before the switch, if
 * the flow never ran the policy); switching out has nothing to undo:
 * messages and receives of the old policy finish under it, and its state
 * stays until the flow ends, as a peer may go on using it.  Adding a
 * policy is a file that fills one and a line in sdr_policy.c.  Hooks
 * marked optional may be NULL; the rest may not.  All run under
 * flow->lock unless "may sleep" says otherwise.
 */
struct sdr_policy_ops {
	u32		id;		/* SDR_POLICY_*, also on the wire */
	u32		features;	/* SDR_PF_* */
	const struct sdr_parity_ops *parity;	/* optional */
	const struct sdr_policy_ops *base;	/* readied first (optional) */
	/*
	 * Policies on the SR engine: the engine state (RTT, counters,
	 * configuration) its messages and receives run on.  SR and EC
	 * share one; ADAPTIVE learns its own.  Ready once the policy is.
	 */
	struct sdr_sr_flow *(*engine)(struct sdr_flow *flow);

	/*
	 * Per-flow state, made only for the policies a flow uses: flow_init
	 * (may sleep) runs when the flow readies the policy (its own at
	 * creation or on a switch, the peer's at connect or at its first
	 * packet), after its base's; the other hooks run only on a flow
	 * where it is ready.  flow_free at the end (no lock, no packet can
	 * come); flow_stop when the flow shuts down: stop timers and work
	 * (optional).
	 */
	int	(*flow_init)(struct sdr_flow *flow);
	void	(*flow_stop)(struct sdr_flow *flow);
	void	(*flow_free)(struct sdr_flow *flow);
	/* connected to @peer (optional) */
	void	(*connect)(struct sdr_flow *flow, const struct sdr_endpoint *peer,
			   struct sdr_ctrlq *q);
	/* Sending.  tx_init may sleep; tx_free runs with the last reference. */
	int	(*tx_init)(struct sdr_flow *flow, struct sdr_txmsg *msg);
	void	(*tx_free)(struct sdr_txmsg *msg);		/* optional */
	/* a streamed message's ready grew (optional) */
	void	(*tx_ready)(struct sdr_flow *flow, struct sdr_txmsg *msg);
	/* fill @pkt (header prepared) and @data if @msg sends one now */
	bool	(*tx_next)(struct sdr_flow *flow, struct sdr_txmsg *msg,
			   struct sdr_tx_round *r, struct sdr_pkt *pkt,
			   const u8 **data);
	/* whether @msg is finished, and then its SDR_STATUS_* in @status */
	bool	(*tx_status)(struct sdr_flow *flow, struct sdr_txmsg *msg,
			     u8 *status);
	/* the flow's timer, per message: true if the peer is dead (optional) */
	bool	(*tx_poll)(struct sdr_flow *flow, struct sdr_txmsg *msg, u64 now);

	/* Receiving.  rx_post: a receive was posted in slot @idx (optional) */
	void	(*rx_post)(struct sdr_flow *flow, u32 idx, struct sdr_ctrlq *q);
	/* DATA for slot @idx, matched and checked: 0 or a drop reason */
	int	(*rx_data)(struct sdr_flow *flow, u32 idx,
			   const struct sdr_pkt *pkt, const u8 *payload,
			   struct sdr_ctrlq *q);
	/* DATA of this policy before any check (optional): 0 or a drop reason */
	int	(*rx_accept)(struct sdr_flow *flow, const struct sdr_pkt *pkt,
			     struct sdr_ctrlq *q);
	/* DATA for no posted receive, @ahead of the next post (optional) */
	void	(*rx_unmatched)(struct sdr_flow *flow, const struct sdr_pkt *pkt,
				s32 ahead, struct sdr_ctrlq *q);
	/* a control packet with this policy: 0 or a drop reason */
	int	(*rx_ctrl)(struct sdr_flow *flow, const struct sdr_pkt *pkt,
			   const u8 *payload, struct sdr_ctrlq *q);
	/* the application gave up slot @idx before it completed (optional) */
	void	(*rx_abandon)(struct sdr_flow *flow, u32 idx,
			      struct sdr_ctrlq *q);
	/* slot @idx ends: free what the policy holds for it (optional) */
	void	(*rx_release)(struct sdr_flow *flow, u32 idx);
	/* the flow's timer, per started slot: true if the peer is dead (optional) */
	bool	(*rx_poll)(struct sdr_flow *flow, u32 idx, u64 now,
			   struct sdr_ctrlq *q);
	/* the flow's timer, once per policy: true if the peer is dead (optional) */
	bool	(*flow_timer)(struct sdr_flow *flow, u64 now,
			      struct sdr_ctrlq *q);

	/*
	 * What it shows of a flow (optional): flows/<id>/<policy>/<name>
	 * in sysfs, and sdrctl flow show.  @stats names them, NULL ended;
	 * stat(flow, i) reads the i-th (flow->lock held, policy ready).
	 */
	const char * const *stats;
	u64	(*stat)(struct sdr_flow *flow, u32 i);
};

/* sdr_policy.c: the policies this kernel runs */
const struct sdr_policy_ops *sdr_policy_get(u32 id);
const char *sdr_policy_name(u32 id);
int sdr_policy_parse(const char *buf);
const struct sdr_policy_ops *sdr_policy_iter(u32 *i, unsigned long mask);
bool sdr_policy_runs(u32 id);
u32 sdr_auto_cand_policy(u32 cand);
unsigned long sdr_auto_policies(void);

/* each policy this kernel runs whose bit is set in @mask, in id order */
#define sdr_for_each_policy_in(ops, i, mask)				\
	for ((i) = 0; ((ops) = sdr_policy_iter(&(i), (mask))); (i)++)

/* each policy this kernel runs, in id order; @i is a u32 cursor */
#define sdr_for_each_policy(ops, i)	sdr_for_each_policy_in(ops, i, ~0UL)

/* sdr_flow_lib.c: flow services for the flow core and the policies */
struct sdr_recv_state *sdr_slot_state(struct sdr_flow *flow, u32 idx);
unsigned long *sdr_slot_pkt_bits(struct sdr_flow *flow, u32 idx);
u32 sdr_rx_slot_of(const struct sdr_flow *flow, u32 seq);
bool sdr_slot_waiting(const struct sdr_rxslot *s);
void sdr_slot_start(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt);
void sdr_slot_stream_done(struct sdr_flow *flow, u32 idx, u32 msg_len,
			  u32 npkts);
u8 *sdr_slot_data(struct sdr_flow *flow, u32 idx);
void sdr_slot_refuse(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		     struct sdr_ctrlq *q);
void sdr_slot_land(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		   const u8 *payload);
void sdr_slot_mark(struct sdr_flow *flow, u32 idx, u32 pi, u32 len);
void sdr_slot_complete(struct sdr_flow *flow, u32 idx, u8 status);
void sdr_flow_cqe(struct sdr_flow *flow, u8 type, u8 status, u32 seq,
		  u32 slot, u32 len, u32 imm, u64 user_data, u32 group);
void sdr_txmsg_put(struct sdr_txmsg *msg);
int sdr_flow_charge(struct sdr_flow *flow, size_t bytes);
int sdr_flow_tx_charge(struct sdr_flow *flow, size_t bytes);
void sdr_flow_tx_uncharge(struct sdr_flow *flow, size_t bytes);
int sdr_flow_rx_charge(struct sdr_flow *flow, size_t bytes);
void sdr_flow_rx_uncharge(struct sdr_flow *flow, size_t bytes);
int sdr_txmsg_charge(struct sdr_flow *flow, struct sdr_txmsg *msg,
		     size_t bytes);
void sdr_txmsg_unlist(struct sdr_flow *flow, struct sdr_txmsg *msg);
int sdr_flow_gone(struct sdr_flow *flow);
int sdr_flow_usable(struct sdr_flow *flow);
void sdr_flow_fail(struct sdr_flow *flow);
void sdr_flow_end(struct sdr_flow *flow, u32 state);
void sdr_flow_flush_rx(struct sdr_flow *flow, u8 status);
void sdr_flow_flush_tx(struct sdr_flow *flow, u8 status);
void sdr_flow_flushed_done(struct sdr_flow *flow, struct sdr_txmsg *msg);
void sdr_flow_arm(struct sdr_flow *flow, u64 deadline_ns);
int sdr_flow_engine_init(struct sdr_flow *flow);
void sdr_flow_engine_cfg(struct sdr_flow *flow, struct sdr_sr_cfg *cfg);
void sdr_flow_engine_stats(struct sdr_flow *flow, struct sdr_sr_stats *st);
/* a policy's sysfs names of sdr_flow_cc_stat()'s figures, in its order */
#define SDR_FLOW_CC_NAMES \
	"window", "rate_kbit", "delivery_kbit", "cc_rounds", "cc_cuts"
#define SDR_FLOW_CC_STATS	5
u64 sdr_flow_cc_stat(const struct sdr_sr_flow *f, u32 i);
struct sdr_ctrl *sdr_ctrlq_add(struct sdr_flow *flow, struct sdr_ctrlq *q,
			       u32 policy, u32 seq);
/* No lock held: sends what @q holds to the flow's peer. */
void sdr_ctrlq_send(struct sdr_flow *flow, struct sdr_ctrlq *q);

int sdr_flow_paths_init(struct sdr_flow *flow, struct sdr_paths *ps, u32 n);

/* sdr_flow_lib.c: what the rails share with the flow core */
int sdr_flow_alloc_id(struct sdr_dev *sdev, u32 *id);
void sdr_flow_fill_ep(struct sdr_flow *flow, struct sdr_dev *sdev,
		      const union ib_gid *gid, u32 id,
		      struct sdr_endpoint *ep);
void sdr_flow_fill_paths(struct sdr_flow *flow, struct sdr_dev *sdev,
			 u32 first, u32 n, struct sdr_ep_paths *pp);
int sdr_flow_check_peer(const struct sdr_flow *flow,
			const struct sdr_endpoint *p);
int sdr_flow_peer_paths(const struct sdr_endpoint *p,
			const struct sdr_ep_paths *pp,
			struct sdr_ep_paths *out);
struct ib_ah *sdr_dev_ah(struct sdr_dev *sdev, struct sdr_flow *flow,
			 const u8 *gid);
struct ib_ah *sdr_txq_take_ah(struct sdr_flow *flow, struct sdr_dev *sdev,
			      struct sdr_txq *q, struct ib_ah **ahp);

/* sdr_flow_rail.c: a flow over more devices */
int sdr_rail_add(struct sdr_flow *flow, struct sdr_flow_rail *arg);
int sdr_rail_connect(struct sdr_flow *flow, struct sdr_flow_rail *arg);
int sdr_flow_rails_check(struct sdr_flow *flow, const struct sdr_endpoint *p);
void sdr_flow_rail_unqueue(struct sdr_flow *flow, struct sdr_rail *rl);
void sdr_flow_rails_detach(struct sdr_flow *flow);

/* sdr_flow_auto.c: AUTO, which picks one of them per message */
u32 sdr_flow_auto_pick(struct sdr_flow *flow, u32 npkts, u64 now, u32 *k,
		       u32 *m);
#define SDR_AUTO_NSTATS	12	/* flows/<id>/auto/ files */
extern const char * const sdr_flow_auto_stats[SDR_AUTO_NSTATS + 1];
ssize_t sdr_flow_auto_show(struct sdr_flow *flow, u32 i, char *buf);

/* sdr_flow_sr.c: the SR engine in a flow, which EC and ADAPTIVE build on */
extern const struct sdr_policy_ops sdr_sr_ops;
struct sdr_sr_flow *sdr_srk_engine(struct sdr_flow *flow);
int sdr_srk_flow_init(struct sdr_flow *flow);
int sdr_srk_tx_init(struct sdr_flow *flow, struct sdr_txmsg *msg);
void sdr_srk_tx_free(struct sdr_txmsg *msg);
void sdr_srk_rx_say(struct sdr_flow *flow, u32 idx, u64 now,
		    struct sdr_ctrlq *q);
/* SR's hooks, which EC's ops reuse */
void sdr_srk_tx_ready(struct sdr_flow *flow, struct sdr_txmsg *msg);
bool sdr_srk_tx_next(struct sdr_flow *flow, struct sdr_txmsg *msg,
		     struct sdr_tx_round *r, struct sdr_pkt *pkt,
		     const u8 **data);
bool sdr_srk_tx_status(struct sdr_flow *flow, struct sdr_txmsg *msg,
		       u8 *status);
bool sdr_srk_tx_poll(struct sdr_flow *flow, struct sdr_txmsg *msg, u64 now);
void sdr_srk_rx_post(struct sdr_flow *flow, u32 idx, struct sdr_ctrlq *q);
int sdr_srk_rx_data(struct sdr_flow *flow, u32 idx, const struct sdr_pkt *pkt,
		    const u8 *payload, struct sdr_ctrlq *q);
void sdr_srk_rx_unmatched(struct sdr_flow *flow, const struct sdr_pkt *pkt,
			  s32 ahead, struct sdr_ctrlq *q);
int sdr_srk_rx_ctrl(struct sdr_flow *flow, const struct sdr_pkt *pkt,
		    const u8 *payload, struct sdr_ctrlq *q);
void sdr_srk_rx_abandon(struct sdr_flow *flow, u32 idx, struct sdr_ctrlq *q);
bool sdr_srk_rx_poll(struct sdr_flow *flow, u32 idx, u64 now,
		     struct sdr_ctrlq *q);

/* the other policies */
extern const struct sdr_policy_ops sdr_none_ops;
extern const struct sdr_policy_ops sdr_ec_ops;
extern const struct sdr_policy_ops sdr_adaptive_ops;

#endif /* SDR_FLOW_H */
