/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Selective Repeat engine: sender and receiver state machines of one
 * message, as pure functions of (state, event, now_ns).  No sleeping, no
 * allocation, no locks: the kernel runs every call under the flow's lock
 * and drives the engine from its receive path and an hrtimer; the host
 * tests and tools/sdr-sim drive it from an event queue.
 *
 * Guarantee: a sender message ends SDR_SR_DONE only after the receiver has
 * acknowledged every packet (and the receiver completes only once every
 * packet of the message is in place), or it fails with a negative errno
 * (-ETIMEDOUT: no ACK progress for cfg.dead_ns).  Nothing is dropped
 * silently: every lost packet stays on a retransmission timer until it is
 * acknowledged or the message fails.
 *
 * Documentation/protocol.rst describes the algorithm.
 */
#ifndef SDR_SR_H
#define SDR_SR_H

#include "sdr_compat.h"
#include "sdr_wire.h"
#include "sdr_rtt.h"
#include "sdr_path.h"
#include "sdr_cc.h"

#define SDR_SR_NIL		U32_MAX
#define SDR_SR_MAX_BACKOFF	SDR_RTT_MAX_SHIFT
/* a silent peer is probed at least this often per dead_ns before it is dead */
#define SDR_SR_DEAD_PROBES	64
/* transmissions per probe round to a silent peer (ACKREQ each) */
#define SDR_SR_PROBE_TRAIN	8

/* the smallest window a flow's path sets (cfg.win_init) */
#define SDR_SR_WIN_MIN		16

/* sdr_sr_cfg.flags */
#define SDR_SR_CFG_NO_NACK	0x1	/* receiver never sends NACKs */
#define SDR_SR_CFG_ADAPTIVE	0x2	/* policy ADAPTIVE: learn the timers */

struct sdr_sr_cfg {
	/* both ends */
	u32	pay;		/* payload bytes per packet, fixed per flow */
	/* sender */
	u32	max_inflight;	/* packets in flight on the flow, at most */
	/*
	 * The window before the path is measured: the window and the rate
	 * then come from the path (sdr_cc.h), at most max_inflight, with
	 * pace_bps the fixed rate if set.  0: the window is max_inflight
	 * and the rate pace_bps, fixed.
	 */
	u32	win_init;
	u32	loss_cut_pct;	/* sdr_cc_cfg's, with win_init */
	u64	pace_bps;	/* sending rate in bit/s (wire bytes); 0: none */
	u32	pace_burst;	/* bytes that may leave back to back */
	u32	alpha_pct;	/* RTO = SRTT + max(alpha% * SRTT, 4 * RTTVAR) */
	u64	rto_init_ns;	/* RTO before the first RTT sample */
	u64	rto_min_ns;
	u64	rto_max_ns;	/* also caps the backoff */
	u64	dead_ns;	/* no ACK progress this long: fail; 0: never */
	u64	rnr_backoff_ns;	/* pause after an RNR, doubled per RNR */
	u32	max_backoff;	/* RTO doublings while the peer is silent */
	u32	ackreq_every;	/* ACKREQ on every n-th packet sent; 0: never */
	/* receiver */
	u32	ack_every;	/* ACK after this many new packets */
	u64	ack_delay_ns;	/* ... or this long after an unACKed one */
	u64	reorder_ns;	/* hole tolerance before a NACK; 0: SRTT/4 */
	u64	nack_interval_ns; /* between NACK rounds of a message; 0: SRTT */
	/* (ADAPTIVE learns both per flow: these are its first guesses) */
	u32	flags;		/* SDR_SR_CFG_* */
	/* EC messages (sender) */
	u32	ec_beta_pct;	/* RTO hold: + beta% * SRTT + (k+m) packet times */
};

struct sdr_sr_stats {
	/* sender */
	u64	tx_pkts;	/* DATA packets handed out, retx included */
	u64	tx_bytes;	/* payload bytes of those */
	u64	retx_pkts;	/* of which retransmissions */
	u64	timeouts;	/* packets declared lost by RTO */
	u64	nack_lost;	/* packets declared lost by a NACK */
	u64	spurious;	/* retransmissions the original made useless */
	u64	acks_rx;
	u64	nacks_rx;
	u64	rnr_rx;
	u64	bad_acks;	/* answers no true receiver sent: ignored */
	u64	tx_aborted;	/* messages the receiver discarded */
	u64	rtt_samples;
	u64	tx_done;
	u64	tx_failed;
	u64	parity_tx;	/* EC parity packets handed out */
	u64	peer_lost;	/* data packets the receivers reported lost */
	u64	peer_pkts;	/* ... of messages with that report */
	/* receiver */
	u64	rx_pkts;	/* DATA packets accepted by the engine */
	u64	rx_bytes;	/* new payload bytes */
	u64	rx_dup;
	u64	acks_tx;
	u64	nacks_tx;
	u64	rx_done;
	u64	parity_rx;	/* EC parity packets accepted (dups included) */
	u64	ec_recovered;	/* data packets rebuilt from parity */
	u64	ec_decodes;	/* submessages decoded */
	/* receiver, ADAPTIVE */
	u64	nack_late;	/* NACKed holes the original filled after all */
	u64	tail_probes;	/* silent tails NACKed (ADAPTIVE, urgent) */
	/* urgent messages (sdr_sr_tx_set_urgent()) */
	u64	urgent_dups;	/* second copies of their resends */
};

/*
 * What ADAPTIVE learns of a flow's arrivals, as the receiver: the gap
 * between new packets and its jitter, how late a reordered packet comes,
 * and the round trip (the sender's latest sample, which its packets
 * carry).  Its
 * reorder window, NACK interval, tail wait and ACK frequency derive from
 * these instead of module parameters.
 */
#define SDR_SR_GAP_WIN		32	/* full packets per gap sample */
/* ADAPTIVE: the smallest reorder window, whatever the arrivals say */
#define SDR_SR_AD_MIN_REO_NS	50000ULL
#define SDR_SR_GAP_SAMPLES	8	/* gap: the median of the last samples */

struct sdr_sr_learn {
	u64	gap_ns;		/* gap between full packets; 0: no sample */
	u64	jitter_ns;	/* longest single gap at the front, decaying */
	u64	gap_win[SDR_SR_GAP_SAMPLES];	/* the latest samples */
	u32	gap_next;	/* gap_win slot of the next one */
	u32	win_bytes;	/* wire bytes at the front since win_start_ns */
	u64	win_start_ns;
	u64	reo_ns;		/* lateness of reordered packets, max-tracked */
	u64	peer_rtt_ns;	/* the sender's latest RTT, from its packets' aux */
	u32	clean;		/* repairs since the window last had to grow */
	u64	grown_ns;	/* when a late NACK last grew it */
};

/*
 * Per-flow state shared by every message of the flow: configuration, RTT
 * estimate, in-flight budget, pacing and counters.
 */
/*
 * A packet of a finished message that was sent twice, its first copy
 * declared lost on a path: a duplicate the receiver names later takes
 * the loss back (sdr_sr_flow_dup()).
 */
struct sdr_sr_lrec {
	u32	seq;
	u32	idx;
	u8	lpath;		/* 1 + the path, 0: a free entry */
};

#define SDR_SR_LREC	64

struct sdr_sr_flow {
	struct sdr_sr_cfg	cfg;
	struct sdr_rtt		rtt;
	struct sdr_sr_stats	st;
	struct sdr_sr_learn	ad;	/* ADAPTIVE only */
	u32	inflight;	/* packets in flight over all messages */
	u32	tx_seq;		/* packets sent, for ackreq_every */
	struct sdr_sr_lrec lrec[SDR_SR_LREC];	/* the latest, a ring */
	u32	lrec_next;
	u64	pace_next_ns;	/* earliest time of the next packet */
	u64	pace_fs1024;	/* wire time per byte: femtoseconds * 1.024 */
	u64	pace_cfg_fs1024; /* ... as cfg.pace_bps sets it */
	u64	peer_gap_ns;	/* ADAPTIVE: the receiver's arrival gap */
	u64	base_rtt_ns;	/* ADAPTIVE: least RTT of the last window */
	u64	base_win_ns;	/* ... least RTT of this window so far */
	u64	base_at_ns;	/* ... when this window started */
	u64	rnd_min_ns;	/* ADAPTIVE: least RTT of this round ... */
	u64	rnd_prev_ns;	/* ... and of the one before */
	u64	rnd_at_ns;	/* ... when this round started */
	u32	pace_gain;	/* ADAPTIVE: pacing gain in eighths (8: 1x) */
	u64	rto_extra_ns;	/* ADAPTIVE: RTO margin spurious timeouts taught */
	u32	rto_clean;	/* messages since it last had to grow */
	u64	pace_burst_ns;
	u32	pace_frac_ps;	/* sub-ns remainder of the pacing clock */
	/* the gap between packets acknowledged while busy (sdr_sr_meter()) */
	u64	gap_ps;		/* 0: no sample yet */
	u64	gap_start_ns;	/* first answer of the window */
	u64	gap_last_ns;	/* latest packet acknowledged */
	u32	gap_n;		/* packets acked in the window after the first answer */
	/* the flow's paths (sdr_sr_flow_set_paths()); NULL: one path */
	struct sdr_paths	*paths;
	/* window and rate from the path, with cfg.win_init */
	bool		cc_on;
	struct sdr_cc	cc;
};

struct sdr_sr_list {
	u32	head;
	u32	tail;
	u32	count;
};

/* message status: 0 while active */
#define SDR_SR_DONE		1

/* A part of a streamed message: where it lands, its bytes, first packet. */
struct sdr_sr_part {
	u32	base;
	u32	len;
	u32	first;
};

/*
 * Sender state of one message.  Per-packet arrays live in caller memory
 * of sdr_sr_tx_size() bytes.  Each packet is in exactly one state:
 * unsent (not acked, never sent), in flight (on the flight list), lost
 * (on the lost list, waiting to be resent) or acked (bit set).  Every
 * transmission appends to the flight list, so it is in send order and its
 * head is the next packet to time out.
 */
struct sdr_sr_tx {
	u32	seq;		/* message sequence number: answers name it */
	u32	msg_len;
	u32	npkts;
	u32	pay;
	int	status;		/* 0, SDR_SR_DONE or -errno */
	u32	next_new;	/* lowest packet never sent */
	u32	cum;		/* packets [0, cum) all acked */
	u32	nacked;		/* packets acked */
	u32	inflight;	/* this message's share of flow->inflight */
	u32	rnr_count;	/* RNRs since the last progress */
	u32	blamed;		/* packets whose lpath is set */
	u32	silent_rtos;	/* timeouts while the peer is silent */
	u8	probe;		/* probing: transmissions per round; 0: not */
	u8	probe_left;	/* transmissions left in this round */
	u32	probe_copy;	/* the packet in flight a probe copies next */
	bool	spurious;	/* a resend of it was needless */
	/*
	 * Urgent: the application waits for it first (the oldest open
	 * group of its context).  Each resend goes twice, the copy on
	 * another path if there is one.
	 */
	bool	urgent;
	u32	dup_idx;	/* the resend whose copy is due, or SDR_SR_NIL */
	u64	start_ns;
	u64	done_ns;	/* when the status left 0 */
	u64	last_progress_ns;	/* last ACK that acked something new */
	u64	last_heard_ns;		/* last valid ACK/NACK */
	u64	rnr_until_ns;
	u32	echo_us;	/* newest ts echo taken as an RTT sample */
	u32	last_tx_us;	/* ts of the latest transmission */
	u32	limit;		/* new packets below this may be sent */
	/*
	 * A streamed message (sdr_wire.h): npkts is the most it may have
	 * until its end is known, then its data packets and the end one.
	 */
	bool	stream;
	bool	stream_open;	/* its end is not known yet */
	u32	max_msg;	/* a stream's parts land below this */
	u32	nparts;		/* a stream's parts so far */
	u32	ndata;		/* ... their data packets */
	u32	bytes;		/* ... their bytes */
	u32	*pk_part;	/* a stream's: part of each data packet */
	struct sdr_sr_part	*parts;
	/* EC: k data + m parity packets per submessage; ec_k 0: plain SR */
	u8	ec_k;
	u8	ec_m;
	u32	ngroups;	/* submessages */
	u32	par_g;		/* next submessage whose parity is due */
	u32	par_j;		/* next parity row of it */
	u64	ec_hold_ns;	/* (k+m) packet times at the paced rate */
	struct sdr_sr_list	lost;
	struct sdr_sr_list	flight;
	unsigned long	*acked;	/* npkts bits */
	u64	*tx_ns;		/* last transmission time */
	u32	*next;		/* list links */
	u32	*prev;
	u8	*ntx;		/* transmissions (to 127), SDR_SR_NTX_RTO */
	u8	*where;		/* which list the packet is on */
	u8	*path;		/* path of its last transmission */
	u8	*lpath;		/* 1 + path of a copy declared lost, or 0 */
};

/* One packet to transmit, from sdr_sr_tx_next(). */
struct sdr_sr_txd {
	u32	idx;		/* packet index */
	u32	offset;		/* byte offset in the message */
	u32	len;		/* payload bytes */
	u32	land;		/* a stream's: where it lands; else offset */
	u32	part;		/* a stream's: its part (index), its base: */
	u32	part_base;
	u8	flags;		/* SDR_PKT_F_LAST/RETX/ACKREQ/PARITY/STREAM/PART_END */
	u32	ts;		/* value for the header's ts */
	u32	aux;		/* value for the header's aux (EC) */
	u32	path;		/* the path to send it on (0 with one path) */
};

/* sdr_sr_rx_data() result bits (or a negative -SDR_DROP_* reason) */
#define SDR_SR_RX_NEW		0x01	/* new packet: copy its payload */
#define SDR_SR_RX_DUP		0x02	/* already had it: drop payload */
/* 0x04 unused */
#define SDR_SR_RX_COMPLETE	0x08	/* the whole message is in */
#define SDR_SR_RX_CTRL		0x10	/* an ACK/NACK is due now */
#define SDR_SR_RX_PARITY	0x20	/* new parity: keep its payload */
#define SDR_SR_RX_DECODE	0x40	/* its submessage can be decoded now */
#define SDR_SR_RX_FREE_PAR	0x80	/* its submessage's parity is useless */

#define SDR_SR_NACK_FRESH	1
#define SDR_SR_NACK_FULL	2

/* Receiver state of one message (one posted receive). */
struct sdr_sr_rx {
	u32	max_len;	/* posted buffer size */
	u32	msg_len;	/* 0 until the first packet (a stream: its end) */
	u32	npkts;		/* a stream's: the most it may have until its end */
	u32	cum;		/* packets [0, cum) all received */
	u32	nrecv;
	u32	high;		/* highest packet received + 1 */
	u32	unacked;	/* new packets since the last ACK */
	u32	ack_trigger;	/* packet the pending ACK should cover */
	u32	last_ts;	/* ts of the newest DATA, echoed */
	u32	nack_cursor;	/* NACK sweep: next packet to describe */
	u32	nack_end;	/* NACK sweep: end of its range */
	u32	nack_hi;	/* holes below this were NACKed at least once */
	u32	nack_fresh_end;	/* end of the gaps the fresh sweep covers */
	u32	lost;		/* data packets that came resent or rebuilt */
	u32	dup;		/* 1 + a data packet that came again, or 0 */
	bool	started;	/* a packet of the message came */
	bool	stream;		/* a streamed message (sdr_wire.h) */
	bool	stream_open;	/* ... whose end did not come yet */
	u64	stream_bytes;	/* a stream's: its data packets' bytes so far */
	bool	ack_now;
	bool	complete;
	u8	complete_ack;	/* COMPLETE ACKs due (ADAPTIVE sends two) */
	u8	nack_round;	/* sweep in progress: SDR_SR_NACK_* or 0 */
	u8	nack_shift;	/* full-round backoff since the last new packet */
	u64	ack_due_ns;	/* delayed ACK, U64_MAX: none */
	u64	nack_at_ns;	/* next full NACK round, U64_MAX: none */
	u64	nack_fresh_at_ns; /* NACK of new gaps, U64_MAX: none */
	u64	last_ack_ns;
	u64	last_ts_ns;	/* when last_ts arrived */
	/* ADAPTIVE */
	u64	last_new_ns;	/* when the front last moved */
	u64	tail_at_ns;	/* NACK the unseen tail then, U64_MAX: not armed */
	bool	tail_open;	/* the tail past high counts as holes */
	bool	tail_check;	/* tail_at_ns is the second look at the silence */
	/*
	 * Urgent (sdr_sr_rx_set_urgent()): a silent tail is NACKed, any
	 * policy, and full NACK rounds do not back off.
	 */
	bool	urgent;
	/* EC: 0 for an SR message */
	u8	ec_k;
	u8	ec_m;
	u32	ngroups;
	u32	ec_closed;	/* submessages [0, ec_closed) get no more parity */
	u64	ec_tail_at_ns;	/* close the last one then, U64_MAX: not armed */
	unsigned long	*map;	/* packets received */
	u32	*par_mask;	/* per submessage: parity rows held */
};

void sdr_sr_cfg_default(struct sdr_sr_cfg *cfg);
void sdr_sr_flow_init(struct sdr_sr_flow *f, const struct sdr_sr_cfg *cfg);
u64 sdr_sr_silent_cap(const struct sdr_sr_flow *f);
u32 sdr_sr_window(const struct sdr_sr_flow *f);
u64 sdr_sr_rate_bytes(const struct sdr_sr_flow *f);
void sdr_sr_set_rate(struct sdr_sr_flow *f, u64 pace_bps);
void sdr_sr_set_rwnd(struct sdr_sr_flow *f, u32 rwnd);
u64 sdr_sr_reorder_ns(const struct sdr_sr_flow *f);
u64 sdr_sr_nack_interval_ns(const struct sdr_sr_flow *f);
u64 sdr_sr_tail_wait_ns(const struct sdr_sr_flow *f);
u32 sdr_sr_ack_every(const struct sdr_sr_flow *f);
void sdr_sr_flow_set_paths(struct sdr_sr_flow *f, struct sdr_paths *ps);

/* sender */
size_t sdr_sr_tx_size(u32 msg_len, u32 pay);
size_t sdr_sr_tx_stream_size(u32 max_msg, u32 pay);
int sdr_sr_tx_init(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u32 seq,
		   u32 msg_len, void *mem, u64 now_ns);
int sdr_sr_tx_init_stream(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u32 seq,
			  u32 max_msg, void *mem, u64 now_ns);
int sdr_sr_tx_stream_part(struct sdr_sr_tx *m, u32 base, u32 len);
int sdr_sr_tx_stream_end(struct sdr_sr_tx *m);
int sdr_sr_tx_set_ec(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u32 k,
		     u32 nparity);
void sdr_sr_tx_set_limit(struct sdr_sr_tx *m, u32 ready_bytes);
void sdr_sr_tx_set_urgent(struct sdr_sr_tx *m, bool urgent);
u32 sdr_sr_group_m(u32 k, u32 m, u32 kg);
int sdr_sr_tx_next(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u64 now_ns,
		   struct sdr_sr_txd *out);
int sdr_sr_tx_ack(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
		  const struct sdr_pkt *hdr, const struct sdr_ack *ack,
		  u64 now_ns);
int sdr_sr_tx_rnr(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u64 now_ns);
void sdr_sr_flow_dup(struct sdr_sr_flow *f, u32 seq, u32 idx);
int sdr_sr_tx_poll(struct sdr_sr_flow *f, struct sdr_sr_tx *m, u64 now_ns);
u64 sdr_sr_tx_deadline(const struct sdr_sr_flow *f,
		       const struct sdr_sr_tx *m, u64 now_ns);
void sdr_sr_tx_abort(struct sdr_sr_flow *f, struct sdr_sr_tx *m, int err,
		     u64 now_ns);
void sdr_sr_tx_path_down(struct sdr_sr_flow *f, struct sdr_sr_tx *m,
			 u32 path, u64 now_ns);

/* receiver */
size_t sdr_sr_rx_size(u32 max_len, u32 pay);
void sdr_sr_rx_init(struct sdr_sr_flow *f, struct sdr_sr_rx *r, u32 max_len,
		    void *mem);
void sdr_sr_rx_set_urgent(struct sdr_sr_flow *f, struct sdr_sr_rx *r,
			  bool urgent, u64 now_ns);
int sdr_sr_rx_data(struct sdr_sr_flow *f, struct sdr_sr_rx *r,
		   const struct sdr_pkt *pkt, u64 now_ns);
int sdr_sr_rx_next_ctrl(struct sdr_sr_flow *f, struct sdr_sr_rx *r,
			u64 now_ns, struct sdr_pkt *hdr, struct sdr_ack *ack);
u64 sdr_sr_rx_deadline(const struct sdr_sr_flow *f,
		       const struct sdr_sr_rx *r);
void sdr_sr_rx_group(const struct sdr_sr_rx *r, u32 g, u32 *first, u32 *kg,
		     u64 *have);
int sdr_sr_rx_decoded(struct sdr_sr_flow *f, struct sdr_sr_rx *r, u32 g,
		      u64 now_ns, u32 *recovered);
void sdr_sr_rx_undecodable(struct sdr_sr_flow *f, struct sdr_sr_rx *r, u32 g,
			   u64 now_ns);
void sdr_sr_stale_ack(struct sdr_pkt *hdr, struct sdr_ack *ack, u32 flags,
		      u32 ts, u32 dup);

#endif /* SDR_SR_H */
