/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdr-sim core: a discrete-event simulation of one flow over a long-haul
 * link, driving the kernel's SR engine (kernel/sdr_sr.c) unchanged, plus
 * the analytical SR model of SDR-RDMA.  Shared by the sdr-sim tool and the
 * host tests.
 */
#ifndef SDR_SIM_H
#define SDR_SIM_H

#include <stdint.h>
#include "sdr_sr.h"

struct sim_params {
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
};

struct sim_result {
	double	*ct_ns;		/* completion time of each message */
	uint32_t n;
	uint32_t failed;
	double	mean_ns, p50_ns, p99_ns, p999_ns;
	double	goodput_bps;
	double	rto_ns;		/* final RTO estimate */
	double	srtt_ns;
	double	cpu_s;
	double	sim_s;		/* simulated time */
	uint64_t events;
	struct sdr_sr_stats st;	/* sender and receiver counters */
};

struct model_result {
	double	mean_ns, p50_ns, p99_ns, p999_ns;
};

void sim_defaults(struct sim_params *p);
int sim_run(const struct sim_params *p, struct sim_result *r);
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
/* the model with the RTO the engine converges to on this path */
int sim_model(const struct sim_params *p, struct model_result *m);

#endif /* SDR_SIM_H */
