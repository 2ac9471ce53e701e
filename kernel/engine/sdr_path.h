/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The paths of one flow, in plain C (sdr_compat.h rules): which path each
 * transmission takes, and how healthy each path is.
 *
 * A path is one way from the sender to the receiver: another UD QP of the
 * same device (the NIC picks the UDP source port per QP, so ECMP sees a
 * distinct flow) or another device (a rail).  The engine numbers them
 * 0..n-1; what a number means is the caller's.
 *
 * Scheduling: a tracked packet (one the SR engine keeps on its flight
 * list) goes to the usable path with the fewest packets in flight, so a
 * path that answers sooner, or carries more, takes more; a resend avoids
 * the path its last copy took when another is usable.  Untracked packets
 * (EC parity, probe copies) go where a tracked one would, uncounted.
 *
 * Health: every tracked packet ends acknowledged, declared lost, or
 * forgotten (its message ended first).  Each path keeps its own RTT (and
 * the SR engine times a packet out no sooner than the slowest path's RTO
 * allows) and its loss: per SDR_PATH_WIN resolved packets a sample, the
 * first taken as it is, then a moving average (weight 1/4), so a path
 * that loses 5% is not drained for one bad window.  A path whose loss
 * passes cfg.drain_pct is drained (no new packets) while another path is
 * usable; once its packets in flight are resolved and cfg.probe_ns has
 * passed, a train of cfg.probe_pkts new packets tests it: lost at most
 * half the drain threshold and it is used again, else the next test
 * waits twice as long (up to cfg.probe_max_ns).  A path the caller
 * reports down (its device went away) is never used until reported up.
 *
 * Loss versus reordering: a hole the receiver names is lost only once a
 * packet sent after it on the same path has arrived (sdr_path_overdue()),
 * else it is still on its way over a slower path than the packets after
 * it; a timeout waits for the slowest path in use (sdr_path_rto()).  A
 * path slower than another is not lossy for that.  That evidence, and RTT
 * samples, come only from answers to packets sent once, by SR's rules:
 * EC may rebuild a packet from parity and answer for it before its copy
 * arrived, so an EC hole is lost once its path's own timeout has passed
 * (sdr_path_rto_of()).  A packet declared lost whose copy on the path was
 * answered after all (a needless resend: the RTO or a NACK round came
 * before a late answer) is taken back from the path's loss
 * (sdr_path_unlost()), so a host's hiccups do not drain a clean path.
 */
#ifndef SDR_PATH_H
#define SDR_PATH_H

#include "sdr_compat.h"
#include "sdr_rtt.h"

#define SDR_PATH_MAX		8
#define SDR_PATH_ANY		U32_MAX	/* sdr_path_pick(): nothing to avoid */
#define SDR_PATH_WIN		64	/* resolved packets per loss sample */

enum sdr_path_state {
	SDR_PATH_UP = 0,
	SDR_PATH_DRAINED,	/* too lossy: only test trains */
	SDR_PATH_DOWN,		/* the caller said so: nothing */
};

struct sdr_path_cfg {
	u32	drain_pct;	/* window loss above this drains a path */
	u32	probe_pkts;	/* packets in a test train of a drained path */
	u64	probe_ns;	/* first test this long after the drain */
	u64	probe_max_ns;	/* the wait doubles per failed test, to this */
	u32	alpha_pct;	/* a path's RTO, as the flow's (sdr_rtt.h) */
};

struct sdr_path {
	u8	state;		/* enum sdr_path_state */
	bool	testing;	/* a test train is out (DRAINED only) */
	u32	inflight;	/* tracked packets not yet resolved */
	u32	train_left;	/* test packets still to send */
	u32	train_done;	/* ... resolved of those sent (not forgotten) */
	u32	train_lost;	/* ... lost of those */
	u32	win_acked;	/* this loss window so far */
	u32	win_lost;
	u32	win_unlost;	/* losses taken back after their window */
	u32	loss_pct;	/* loss, moving average of the windows' */
	u32	windows;	/* loss samples taken */
	struct sdr_rtt	rtt;	/* its own samples (rtt.samples 0: none yet) */
	u64	newest_tx_ns;	/* send time of the newest packet delivered */
	u64	test_at_ns;	/* DRAINED: the next test train not before */
	u64	test_wait_ns;	/* ... the wait after the last failed one */
	/* counters */
	u64	tx_pkts;	/* tracked packets sent */
	u64	untracked;	/* parity and probe copies sent */
	u64	acked;
	u64	lost;
	u64	unlost;		/* declared lost, then answered after all */
	u64	drains;
	u64	restores;
};

/*
 * A caller narrowed to some of the paths takes a packet while its least
 * loaded usable path has at most this many more in flight than the
 * flow's least loaded one.
 */
#define SDR_PATH_RAIL_SLACK	8

struct sdr_paths {
	struct sdr_path_cfg	cfg;
	u32	n;		/* paths 0..n-1 */
	u32	rr;		/* where the next tie-break starts */
	/*
	 * The paths the next picks may take (bit i: path i), all of them
	 * unless the caller narrows it: a device sending for a flow over
	 * several devices (rails) takes packets for its own paths only.
	 */
	u32	allow;
	struct sdr_path		p[SDR_PATH_MAX];
};

void sdr_path_cfg_default(struct sdr_path_cfg *cfg);
int sdr_paths_init(struct sdr_paths *ps, u32 n, const struct sdr_path_cfg *cfg);
u32 sdr_path_pick(struct sdr_paths *ps, u32 avoid, u64 now_ns);
u32 sdr_path_pick_untracked(struct sdr_paths *ps, u32 avoid);
void sdr_path_acked(struct sdr_paths *ps, u32 i, u64 tx_ns, bool sample,
		    u64 now_ns);
void sdr_path_lost(struct sdr_paths *ps, u32 i, u64 now_ns);
void sdr_path_forget(struct sdr_paths *ps, u32 i, u64 now_ns);
void sdr_path_unlost(struct sdr_paths *ps, u32 i);
bool sdr_path_overdue(const struct sdr_paths *ps, u32 i, u64 tx_ns);
bool sdr_path_heard_after(const struct sdr_paths *ps, u64 tx_ns);
u64 sdr_path_rto_of(const struct sdr_paths *ps, u32 i, u64 fallback_ns);
int sdr_path_set_down(struct sdr_paths *ps, u32 i, bool down, u64 now_ns);
u32 sdr_path_usable(const struct sdr_paths *ps);
void sdr_path_allow(struct sdr_paths *ps, u32 mask);
bool sdr_path_can_send(struct sdr_paths *ps, u64 now_ns);
bool sdr_path_resend_ok(struct sdr_paths *ps, u32 last, u64 now_ns);
u64 sdr_path_rto(const struct sdr_paths *ps, u64 init_ns);

#endif /* SDR_PATH_H */
