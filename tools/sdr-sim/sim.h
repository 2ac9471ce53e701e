/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdr-sim core: a discrete-event simulation of one flow over a long-haul
 * link, driving the kernel's SR engine (kernel/engine/sdr_sr.c) unchanged, with
 * or without erasure coding (policy EC: SR plus parity), plus the
 * analytical SR and EC models of SDR-RDMA.  Shared by the sdr-sim tool
 * and the host tests.
 */
#ifndef SDR_SIM_H
#define SDR_SIM_H

#include <stdint.h>
#include "sdr_sr.h"
#include "sdr_auto.h"

#define SIM_MAX_PATHS	SDR_PATH_MAX

enum sim_policy {
	SIM_SR,
	SIM_EC,
	SIM_ADAPTIVE,
};

struct sim_params {
	enum sim_policy policy;
	double	bw_bps;		/* link rate, bit/s, both directions */
	uint64_t owd_ns;	/* one-way propagation delay */
	double	loss;		/* packet drop probability, both directions */
	double	burst;		/* mean burst length (Gilbert-Elliott); <= 1: Bernoulli */
	uint64_t size;		/* message bytes */
	uint32_t count;		/* messages, sent one after another */
	uint32_t pay;		/* payload bytes per packet */
	uint32_t chunk;		/* user bitmap chunk bytes */
	uint64_t seed;
	int	nack;		/* receiver NACKs (else RTO-only recovery) */
	uint32_t alpha_pct;
	uint32_t max_backoff;
	uint32_t ack_every;
	/* policy EC: k data + m parity packets per submessage */
	uint32_t ec_k;
	uint32_t ec_m;
	uint32_t beta_pct;	/* EC RTO hold: + beta% of SRTT + (k+m) packet times */
	/*
	 * 1: the engine configured as sdr.ko configures it with its module
	 * parameters' defaults (no pacing: the sender hands out up to
	 * max_inflight packets at once and the link queues them; fixed
	 * reorder and NACK timers, RTO from 100 ms), not for the path.
	 */
	int	module_timers;
	/*
	 * Window and rate, as the engine sets them from the path
	 * (engine/sdr_cc.h): win_init packets before it is measured (0:
	 * with path timers, the configured path's, 2 x BDP + 1024, as its
	 * RTO is; with module timers the module's 256), at most max_window;
	 * rate_bps fixed (sim_defaults: the link's, as the SDR paper
	 * assumes a dedicated link), 0: the engine's controller.
	 * fixed_window: the window is max_window whatever the path (the
	 * engine's cfg.win_init 0), as sdr.ko ran SR before it sized it.
	 */
	uint32_t win_init;
	int	fixed_window;
	uint32_t max_window;
	double	rate_bps;
	/*
	 * Every message is urgent (its group the oldest open one, as the
	 * kernel makes a grouped message the application waits for first).
	 */
	int	urgent;
	/*
	 * The receiving host stalls for stall_ns, on average every
	 * stall_every_ns (exponential gaps; 0: never): what arrives meanwhile
	 * waits, and its timers that fell due run first when it resumes, as
	 * a busy host's softirqs or a preempted guest's can.
	 */
	uint64_t stall_ns;
	uint64_t stall_every_ns;
	/* the sender's timers fire late by this on average (exponential) */
	uint64_t tx_late_ns;
	/*
	 * npaths > 1: the sender spreads the flow over that many links to
	 * the receiver (rails), each at bw_bps with the loss above, plus
	 * path_owd_ns more one-way delay and path_loss more drop
	 * probability of its own; answers come back over one link.
	 */
	uint32_t npaths;
	uint64_t path_owd_ns[SIM_MAX_PATHS];
	double	path_loss[SIM_MAX_PATHS];
	/*
	 * nflows > 1: that many flows share one bottleneck, each its own
	 * sender and receiver, sending count messages one after another
	 * (sim_run_load()).  The bottleneck's queue holds queue_bytes
	 * (drop-tail; 0: the link's bandwidth-delay product); loss and burst
	 * drop on top of what the queue drops.  Answers come back on an
	 * uncongested link of the same rate.
	 */
	uint32_t nflows;
	uint64_t queue_bytes;
};

struct sim_result {
	double	*ct_ns;		/* completion time of each message */
	uint32_t n;
	uint32_t failed;
	uint32_t retx_msgs;	/* messages that resent (EC: fallback, lost final ACK) */
	double	mean_ns, p50_ns, p99_ns, p999_ns;
	double	se_ns;		/* standard error of mean_ns */
	double	goodput_bps;
	double	rto_ns;		/* final RTO estimate */
	double	srtt_ns;
	double	cpu_s;
	double	sim_s;		/* simulated time */
	uint64_t events;
	uint32_t decode_err;	/* sdr_sr_rx_decoded() refused a DECODE: engine bug */
	uint64_t stalls;	/* receiver stalls that held back an event */
	struct sdr_sr_stats st;	/* sender and receiver counters */
	/* what the receiver learned (ADAPTIVE), and its timers from it */
	struct sdr_sr_learn ad;
	/* the sender's window and rate at the end */
	struct sdr_cc cc;
	uint32_t win_peak;	/* the largest window it had */
	uint32_t window;	/* ... and at the end */
	uint64_t rate_Bps;	/* its pacing rate at the end, 0: none */
	double	reorder_ns, nack_iv_ns, tail_wait_ns;
	/* npaths > 1: each path as the sender's engine saw it at the end */
	struct sdr_path	path[SIM_MAX_PATHS];
	/* nflows > 1: the bottleneck and the flows' shares of it */
	struct {
		uint64_t queue_bytes;	/* its queue's size */
		uint64_t queue_drops;	/* packets the full queue dropped */
		uint64_t wire_drops;	/* packets loss/burst dropped */
		double	queue_peak_bytes;
		double	queue_mean_ns;	/* mean wait in the queue, per packet */
		double	util;		/* new payload delivered / link capacity */
		double	flow_min_bps, flow_max_bps;	/* goodput of the slowest, fastest flow */
	} load;
};

struct model_result {
	double	mean_ns, p50_ns, p99_ns, p999_ns;
	/* EC only (0 for SR) */
	double	p_dec;		/* a full submessage decodes from its first pass */
	double	p_fail;		/* 1 - p_dec, without the rounding */
	double	p_fallback;	/* some submessage of the message cannot */
	double	p_ack;		/* none can, but the COMPLETE ACK is lost */
	double	paper_ns;	/* the paper's closed form for E[T_EC] */
};

void sim_defaults(struct sim_params *p);
uint32_t sim_win_init(const struct sim_params *p);
/* what AUTO's model picks for this path and message size */
void sim_auto_pick(const struct sim_params *p, struct sdr_auto_in *in,
		   struct sdr_auto_pick *pick);
int sim_run(const struct sim_params *p, struct sim_result *r);
/* p->nflows > 1: the flows over one bottleneck (sim_load.c); sim_run() calls it */
int sim_run_load(const struct sim_params *p, struct sim_result *r);
/* the engine's configuration for p, as sim_run() gives it to a flow */
void sim_cfg(const struct sim_params *p, struct sdr_sr_cfg *c);
/* a packet into the receiver's engine, decoding at once; whether it took it */
int sim_rx_data(struct sdr_sr_flow *fr, struct sdr_sr_rx *rx,
		const struct sdr_pkt *pkt, uint64_t now, uint32_t pay,
		uint32_t *decode_err);
/* the DATA packet d of message seq, as the receiver decodes it */
void sim_data_pkt(struct sdr_pkt *pk, const struct sim_params *p,
		  const struct sdr_sr_txd *d, uint32_t seq);
/* mean, its standard error, quantiles of r->ct_ns; goodput per message of size bytes */
void sim_result_stats(struct sim_result *r, uint64_t size);
void sim_result_free(struct sim_result *r);

/* wire time of one data packet (payload + sdr header) */
double sim_tinj_ns(const struct sim_params *p);
/* base RTT a data packet and its ACK see: 2 * owd + both serializations */
double sim_base_rtt_ns(const struct sim_params *p);

/*
 * SR model: X_i = i*T_inj + (RTO + T_inj)*(Y_i - 1), Y_i ~ geometric(1-p)
 * per packet, T = max_i X_i + RTT.  Exact CDF of the max, integrated
 * numerically.
 */
int model_sr(uint32_t npkts, double tinj_ns, double rto_ns, double rtt_ns,
	     double p, struct model_result *m);
/*
 * EC model: n data packets in submessages of k data + m parity packets
 * (the last one shorter, with sdr_sr_group_m() parity rows).  A
 * submessage with at most its parity count of drops is decoded when its
 * last packet is sent; otherwise its lost data packets are resent until
 * enough got through to decode it: first nack_fb_ns after the submessage
 * was sent, then every nack_r_ns if the receiver NACKs the hole; rto_fb_ns
 * and rto_r_ns if only the sender's RTO does (no NACKs, a lost NACK, or a
 * last submessage that nothing closes).  T = the latest submessage
 * completion + RTT, rto_fb_ns more if the final ACK of a message that
 * needed no fallback is lost.  model.c derives it and lists the
 * approximations.
 */
struct ec_model_params {
	uint32_t n, k, m;
	double	tinj_ns, rtt_ns, p;
	int	nack;		/* receiver NACKs; else nack_* are unused */
	double	nack_fb_ns, nack_r_ns;
	double	rto_fb_ns, rto_r_ns;
};

int model_ec(const struct ec_model_params *mp, struct model_result *mr);
/* P(at most m drops among n packets) */
double model_p_dec(uint32_t n, uint32_t m, double p);
/* the model of p->policy with the timers the engine converges to on this path */
int sim_model(const struct sim_params *p, struct model_result *m);

#endif /* SDR_SIM_H */
