// SPDX-License-Identifier: GPL-2.0
/*
 * Discrete-event simulation of one sdr flow over a long-haul link.
 *
 * The link is a FIFO per direction: a packet departs when the previous
 * one has been serialized (bw) and arrives owd later, unless the loss
 * process drops it.  Because a FIFO with a constant delay delivers in
 * order, the event "queue" is just the heads of the two FIFOs plus the
 * sender's and receiver's deadlines from the engine: O(1) per event, so a
 * 1 GiB message (264k packets) costs a fraction of a second of CPU.
 * Over several paths (rails) each has its own forward FIFO, and the
 * earliest of their heads is the next arrival.
 *
 * Packets travel as decoded struct sdr_pkt / sdr_ack: the codec has its
 * own tests and fuzzer; here it would only cost time.  Likewise for EC
 * the parity carries no payload: when the engine reports a submessage
 * decodable the simulator calls sdr_sr_rx_decoded() at once, as the
 * kernel does after running the Cauchy RS codec (which cannot fail on
 * the rows the engine counted; tests/host/test_sr.c runs the same engine
 * with real payloads and checks every byte).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sim.h"
#include "sim_util.h"
#include "sdr_bitmap.h"
#include "sdr_ec.h"

#define INF_NS	UINT64_MAX

struct fpkt {			/* data, sender -> receiver */
	uint64_t t;
	struct sdr_pkt p;
};

struct rpkt {			/* ACK/NACK, receiver -> sender */
	uint64_t t;
	struct sdr_pkt h;
	struct sdr_ack a;
};

struct link {
	double	free_at;	/* ns, when the serializer is idle */
	int	bad;		/* Gilbert-Elliott state */
};

struct sim {
	const struct sim_params *p;
	uint64_t rng;
	struct sim_drop drop;	/* both directions' loss process */
	uint32_t npaths;	/* forward links: 1, or p->npaths */
	struct link fl[SIM_MAX_PATHS], rl;
	struct ring fwd[SIM_MAX_PATHS], rev;
	struct sdr_paths paths;	/* the sender's, with npaths > 1 */
	uint64_t events;
	uint32_t decode_err;
	uint64_t stall_at, stall_end;	/* the receiver's next (or current) stall */
	uint64_t late_for, late_ns;	/* the sender's timer for late_for fires late_ns late */
	uint64_t stalls;
	uint32_t win_peak;	/* the sender's largest window */
};

static double rndf(struct sim *s)
{
	return sim_rndf(&s->rng);
}

/*
 * When the receiver can act on an event due at @t: at once, or when the
 * stall @t falls into ends (plus @after ns: what arrived waits behind the
 * timers that fell due).  Asked with @t never below the time of the
 * event last handled, so the stalls are drawn in time order.
 */
static uint64_t rx_when(struct sim *s, uint64_t t, uint64_t after)
{
	const struct sim_params *p = s->p;

	if (!p->stall_ns || !p->stall_every_ns || t == INF_NS)
		return t;
	while (s->stall_end <= t) {
		double u = rndf(s);

		s->stall_at = s->stall_end + (uint64_t)(-log(1.0 - u) *
							(double)p->stall_every_ns);
		s->stall_end = s->stall_at + p->stall_ns;
	}
	return t < s->stall_at ? t : s->stall_end + after;
}

/* When the sender's timer for @t fires: late by a draw kept per deadline. */
static uint64_t tx_when(struct sim *s, uint64_t t, uint64_t now)
{
	if (!s->p->tx_late_ns || t == INF_NS || t <= now)
		return t;
	if (s->late_for != t) {
		s->late_for = t;
		s->late_ns = (uint64_t)(-log(1.0 - rndf(s)) *
					(double)s->p->tx_late_ns);
	}
	return t + s->late_ns;
}

/*
 * serialize on @l starting no earlier than @now; arrival time (@extra_ns
 * more than the link's delay) or 0 if lost, @loss the path's own drop
 * probability on top of the link's
 */
static uint64_t transmit(struct sim *s, struct link *l, uint64_t now, uint32_t bytes,
			 uint64_t extra_ns, double loss)
{
	double start = l->free_at > (double)now ? l->free_at : (double)now;

	l->free_at = start + bytes * 8e9 / s->p->bw_bps;
	if (sim_drop(&s->drop, &s->rng, &l->bad) || (loss > 0 && rndf(s) < loss))
		return 0;
	return (uint64_t)(l->free_at + (double)(s->p->owd_ns + extra_ns));
}

/* the paths the flow spreads over (1 without --paths) */
static uint32_t sim_npaths(const struct sim_params *p)
{
	return p->npaths > 1 ? p->npaths : 1;
}

/* the longest extra delay of a path */
static uint64_t sim_path_owd_max(const struct sim_params *p)
{
	uint64_t d = 0;
	uint32_t i;

	for (i = 0; i < sim_npaths(p); i++)
		d = p->path_owd_ns[i] > d ? p->path_owd_ns[i] : d;
	return p->npaths > 1 ? d : 0;
}

void sim_defaults(struct sim_params *p)
{
	memset(p, 0, sizeof(*p));
	p->bw_bps = 400e9;
	p->owd_ns = 12500000;		/* 25 ms RTT */
	p->loss = 1e-4;
	p->size = 1ULL << 30;
	p->count = 10;
	p->pay = 4096 - SDR_WIRE_HDR_LEN;
	p->chunk = 64 * 1024;
	p->seed = 1;
	p->nack = 1;
	p->alpha_pct = 25;
	p->max_backoff = 7;
	p->ack_every = 16;
	p->policy = SIM_SR;
	p->ec_k = 32;
	p->ec_m = 8;
	p->beta_pct = 100;
	p->win_init = 0;
	p->max_window = 1U << 22;
	p->rate_bps = -1;		/* the link's */
}

double sim_tinj_ns(const struct sim_params *p)
{
	return (p->pay + SDR_WIRE_HDR_LEN) * 8e9 / p->bw_bps;
}

static uint32_t ack_bytes(void)
{
	return SDR_WIRE_HDR_LEN + SDR_ACK_MAX_LEN;
}

double sim_base_rtt_ns(const struct sim_params *p)
{
	return 2.0 * p->owd_ns + sim_tinj_ns(p) + ack_bytes() * 8e9 / p->bw_bps;
}

/* The window before the path is measured (sim_params.win_init); 0: fixed. */
uint32_t sim_win_init(const struct sim_params *p)
{
	double bdp = (sim_base_rtt_ns(p) + 2.0 * sim_path_owd_max(p)) /
		     sim_tinj_ns(p) * sim_npaths(p);

	if (p->fixed_window)
		return 0;
	if (p->win_init)
		return p->win_init;
	if (p->module_timers)
		return 256;	/* kernel/sdr_params.c's */
	return bdp * 2 + 1024 > 1e9 ? 1000000000U : (uint32_t)(bdp * 2 + 1024);
}

void sim_cfg(const struct sim_params *p, struct sdr_sr_cfg *c)
{
	/* over several paths: the slowest one's RTT, all of their rate */
	double rtt = sim_base_rtt_ns(p) + 2.0 * sim_path_owd_max(p);

	sdr_sr_cfg_default(c);
	c->pay = p->pay;
	/* the window and the rate from the path, as the engine sets them */
	c->win_init = sim_win_init(p);
	c->max_inflight = p->max_window;
	c->loss_cut_pct = 25;		/* kernel/sdr_params.c's */
	/* the link's rate; with flows sharing it (sim_load.c), a fair share */
	c->pace_bps = p->rate_bps < 0 ?
		      (uint64_t)(p->bw_bps * sim_npaths(p) /
				 (p->nflows > 1 ? p->nflows : 1)) :
		      (uint64_t)p->rate_bps;
	c->pace_burst = 0;
	c->alpha_pct = p->alpha_pct;
	/* the path's RTT is configured, as in the paper: start at 2x it */
	c->rto_init_ns = (uint64_t)(2 * rtt);
	c->rto_min_ns = 10000;
	c->rto_max_ns = 10000000000ULL;
	c->dead_ns = 0;
	c->max_backoff = p->max_backoff;
	c->ack_every = p->ack_every;
	c->ack_delay_ns = 10000;
	c->reorder_ns = 10000;
	c->nack_interval_ns = (uint64_t)(rtt * (1 + p->alpha_pct / 100.0));
	c->flags = p->nack ? 0 : SDR_SR_CFG_NO_NACK;
	if (p->policy == SIM_ADAPTIVE)
		c->flags |= SDR_SR_CFG_ADAPTIVE;
	c->ec_beta_pct = p->beta_pct;
	if (p->module_timers) {
		/*
		 * kernel/sdr_params.c's defaults, as sdr_flow_engine_cfg()
		 * uses them: no fixed rate, the window from the path.
		 */
		c->max_inflight = 65536;
		c->pace_bps = p->rate_bps < 0 ? 0 : (uint64_t)p->rate_bps;
		c->pace_burst = 16 * 4096;	/* sdr_sr_cfg_default()'s */
		c->rto_init_ns = 100000000ULL;
		c->rto_min_ns = 1000000ULL;
		c->rto_max_ns = 2000000000ULL;
		c->ack_delay_ns = 1000000ULL;
		c->reorder_ns = 5000000ULL;
		c->nack_interval_ns = 20000000ULL;
	}
	if (p->fixed_window)
		c->max_inflight = p->max_window;
}

/*
 * What AUTO (engine/sdr_auto.c) picks for this path and message size, as
 * the kernel's AUTO would once its estimates converged: the engine state
 * the simulated sender runs (sim_cfg()), with its RTT and send gap
 * measured at the path's, gives the model its input (sdr_auto_fill());
 * the drop rate is the path's own, where the kernel measures it from the
 * receivers' reports.  Messages go one at a time here.
 */
void sim_auto_pick(const struct sim_params *p, struct sdr_auto_in *in,
		   struct sdr_auto_pick *pick)
{
	struct sim_params sr = *p;
	struct sdr_sr_flow f;
	struct sdr_sr_cfg cfg;
	struct sdr_auto a;
	int i;

	sr.policy = SIM_SR;
	sim_cfg(&sr, &cfg);
	sdr_sr_flow_init(&f, &cfg);
	for (i = 0; i < 16; i++)
		sdr_rtt_sample(&f.rtt, (uint64_t)sim_base_rtt_ns(p));
	f.gap_ps = (uint64_t)(sim_tinj_ns(p) * 1000);
	sdr_auto_init(&a);
	sdr_auto_posted(&a, (uint32_t)((p->size + p->pay - 1) / p->pay), 0);
	sdr_auto_fill(&a, &f, NULL, SDR_EC_MAX_K, SDR_EC_MAX_M, in);
	in->loss = (uint64_t)(p->loss * SDR_AUTO_ONE);
	sdr_auto_eval(in, pick);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double quantile(const double *sorted, uint32_t n, double q)
{
	uint32_t i = (uint32_t)ceil(q * n);

	return sorted[i ? i - 1 : 0];
}

/* mean, its standard error, p50/p99/p99.9 of res->ct_ns; goodput per message */
void sim_result_stats(struct sim_result *res, uint64_t size)
{
	double sum = 0, *sorted;
	uint32_t i;

	if (!res->n)
		return;
	sorted = malloc(res->n * sizeof(double));
	if (!sorted) {
		perror("sdr-sim");
		exit(1);
	}
	memcpy(sorted, res->ct_ns, res->n * sizeof(double));
	qsort(sorted, res->n, sizeof(double), cmp_d);
	for (i = 0; i < res->n; i++)
		sum += res->ct_ns[i];
	res->mean_ns = sum / res->n;
	for (sum = 0, i = 0; i < res->n; i++)
		sum += (res->ct_ns[i] - res->mean_ns) *
		       (res->ct_ns[i] - res->mean_ns);
	res->se_ns = res->n > 1 ? sqrt(sum / (res->n - 1) / res->n) : 0;
	res->p50_ns = quantile(sorted, res->n, 0.5);
	res->p99_ns = quantile(sorted, res->n, 0.99);
	res->p999_ns = quantile(sorted, res->n, 0.999);
	res->goodput_bps = size * 8e9 / res->mean_ns;
	free(sorted);
}

static void add_stats(struct sdr_sr_stats *d, const struct sdr_sr_stats *tx,
		      const struct sdr_sr_stats *rx)
{
	*d = *tx;
	d->rx_pkts = rx->rx_pkts;
	d->rx_bytes = rx->rx_bytes;
	d->rx_dup = rx->rx_dup;
	d->acks_tx = rx->acks_tx;
	d->nacks_tx = rx->nacks_tx;
	d->rx_done = rx->rx_done;
	d->parity_rx = rx->parity_rx;
	d->ec_recovered = rx->ec_recovered;
	d->ec_decodes = rx->ec_decodes;
	d->nack_late = rx->nack_late;
	d->tail_probes = rx->tail_probes;
}

/* The DATA packet @d of message @seq as the receiver decodes it. */
void sim_data_pkt(struct sdr_pkt *pk, const struct sim_params *p,
		  const struct sdr_sr_txd *d, uint32_t seq)
{
	memset(pk, 0, sizeof(*pk));
	pk->type = SDR_PKT_DATA;
	pk->policy = p->policy == SIM_EC ? SDR_WIRE_POLICY_EC :
		     p->policy == SIM_ADAPTIVE ? SDR_WIRE_POLICY_ADAPTIVE :
		     SDR_WIRE_POLICY_SR;
	pk->flags = d->flags;
	pk->payload_len = (uint16_t)d->len;
	pk->msg_seq = seq;
	pk->msg_len = (uint32_t)p->size;
	pk->offset = d->offset;
	pk->land = d->offset;
	pk->ts = d->ts;
	pk->aux = d->aux;
}

/*
 * A DATA or parity packet into the receiver's engine; a submessage it
 * says is decodable is decoded at once, as the kernel does after the
 * codec (*@decode_err counts the engine refusing that: its own bug).
 * Whether the engine took the packet (then the receiver may answer).
 */
int sim_rx_data(struct sdr_sr_flow *fr, struct sdr_sr_rx *rx,
		const struct sdr_pkt *pkt, uint64_t now, uint32_t pay,
		uint32_t *decode_err)
{
	int ret = sdr_sr_rx_data(fr, rx, pkt, now);
	uint32_t n;

	if (ret < 0)
		return 0;
	if ((ret & SDR_SR_RX_DECODE) &&
	    sdr_sr_rx_decoded(fr, rx, pkt->offset / pay / rx->ec_k, now, &n) < 0)
		(*decode_err)++;
	return 1;
}

/* send whatever ACK/NACK the receiver has due now */
static void rx_ctrl(struct sim *s, struct sdr_sr_flow *fr, struct sdr_sr_rx *rx,
		    uint64_t now, uint32_t seq)
{
	struct sdr_pkt hdr;
	struct sdr_ack ack;

	while (sdr_sr_rx_next_ctrl(fr, rx, now, &hdr, &ack)) {
		uint64_t at = transmit(s, &s->rl, now, ack_bytes(), 0, 0);

		if (at) {
			struct rpkt *n = ring_push(&s->rev);

			n->t = at;
			n->h = hdr;
			n->h.msg_seq = seq;
			n->a = ack;
		}
	}
}

/* a DATA or parity packet reaches the receiver */
static void rx_pkt(struct sim *s, struct sdr_sr_flow *fr, struct sdr_sr_rx *rx,
		   const struct sdr_pkt *pkt, uint64_t now, uint32_t seq)
{
	if (sim_rx_data(fr, rx, pkt, now, s->p->pay, &s->decode_err))
		rx_ctrl(s, fr, rx, now, seq);
}

/* one message; returns its completion time or a negative errno */
static int64_t run_msg(struct sim *s, struct sdr_sr_flow *fs, struct sdr_sr_flow *fr,
		       uint64_t *nowp, uint32_t seq, void *txmem, void *rxmem)
{
	const struct sim_params *p = s->p;
	uint32_t len = (uint32_t)p->size;
	uint64_t now = *nowp, start = now;
	struct sdr_sr_tx tx;
	struct sdr_sr_rx rx;
	uint32_t i;
	int ret;

	if (sdr_sr_tx_init(fs, &tx, seq, len, txmem, now))
		return -22;
	if (p->policy == SIM_EC && sdr_sr_tx_set_ec(fs, &tx, p->ec_k, p->ec_m))
		return -22;
	sdr_sr_rx_init(fr, &rx, len, rxmem);
	if (p->urgent) {
		sdr_sr_tx_set_urgent(&tx, true);
		sdr_sr_rx_set_urgent(fr, &rx, true, now);
	}

	for (;;) {
		struct fpkt *f = NULL, *h;
		struct rpkt *r = ring_front(&s->rev);
		uint32_t fi = 0;

		for (i = 0; i < s->npaths; i++) {
			h = ring_front(&s->fwd[i]);
			if (h && (!f || h->t < f->t)) {
				f = h;
				fi = i;
			}
		}
		uint64_t t_tx = tx_when(s, sdr_sr_tx_deadline(fs, &tx, now), now);
		uint64_t t_rx = rx_when(s, sdr_sr_rx_deadline(fr, &rx), 0);
		uint64_t t_f = f ? rx_when(s, f->t, 1) : INF_NS;
		uint64_t t_r = r ? r->t : INF_NS;
		uint64_t t = t_f;

		if ((f && t_f != f->t) || t_rx != sdr_sr_rx_deadline(fr, &rx))
			s->stalls++;

		t = t_r < t ? t_r : t;
		t = t_rx < t ? t_rx : t;
		t = t_tx < t ? t_tx : t;
		if (t == INF_NS)
			return -5;	/* stuck: nothing will ever happen */
		if (t > now)
			now = t;
		s->events++;

		if (t_f <= now) {
			if (f->p.msg_seq == seq)
				rx_pkt(s, fr, &rx, &f->p, now, seq);
			ring_pop(&s->fwd[fi]);
		} else if (t_r <= now) {
			ret = 0;
			if (r->h.msg_seq == seq)
				ret = sdr_sr_tx_ack(fs, &tx, &r->h, &r->a, now);
			ring_pop(&s->rev);
			if (ret == SDR_SR_DONE)
				break;
			if (ret < 0)
				return ret;
		} else if (t_rx <= now) {
			rx_ctrl(s, fr, &rx, now, seq);
			if (sdr_sr_rx_deadline(fr, &rx) <= now)
				return -5;	/* engine would spin */
		} else {
			struct sdr_sr_txd d;
			int sent = 0;

			while ((ret = sdr_sr_tx_next(fs, &tx, now, &d)) == 1) {
				uint32_t pi = d.path < s->npaths ? d.path : 0;
				uint64_t at = transmit(s, &s->fl[pi], now,
						       d.len + SDR_WIRE_HDR_LEN,
						       s->npaths > 1 ? p->path_owd_ns[pi] : 0,
						       s->npaths > 1 ? p->path_loss[pi] : 0);

				sent++;
				if (sdr_sr_window(fs) > s->win_peak)
					s->win_peak = sdr_sr_window(fs);
				if (at) {
					struct fpkt *n = ring_push(&s->fwd[pi]);

					n->t = at;
					sim_data_pkt(&n->p, p, &d, seq);
				}
			}
			if (ret < 0)
				return ret;
			if (!sent && sdr_sr_tx_deadline(fs, &tx, now) <= now)
				return -5;	/* engine would spin */
		}
	}
	/* what is still on the wire belongs to this message: discard it */
	for (i = 0; i < s->npaths; i++)
		s->fwd[i].len = 0;
	s->rev.len = 0;
	*nowp = now;
	return (int64_t)(now - start);
}

int sim_run(const struct sim_params *p, struct sim_result *res)
{
	struct sdr_sr_flow *fs, *fr;
	struct sdr_sr_cfg cfg;
	struct sim s;
	struct timespec c0, c1;
	uint64_t now = 1000000000ULL, t0 = now;
	void *txmem, *rxmem;
	uint32_t i;

	if (p->nflows > 1)
		return sim_run_load(p, res);
	memset(res, 0, sizeof(*res));
	if (!p->size || p->size > UINT32_MAX || !p->pay || !p->count ||
	    p->bw_bps <= 0)
		return -22;
	if (p->policy == SIM_EC &&
	    (!p->ec_k || p->ec_k > SDR_EC_MAX_K || !p->ec_m || p->ec_m > SDR_EC_MAX_M))
		return -22;
	if (p->npaths > SIM_MAX_PATHS)
		return -22;
	memset(&s, 0, sizeof(s));
	s.p = p;
	s.rng = p->seed * 0x2545F4914F6CDD1DULL + 1;
	s.npaths = sim_npaths(p);
	for (i = 0; i < s.npaths; i++)
		s.fwd[i].esz = sizeof(struct fpkt);
	s.rev.esz = sizeof(struct rpkt);
	sim_drop_init(&s.drop, p->loss, p->burst);

	sim_cfg(p, &cfg);
	fs = malloc(sizeof(*fs));
	fr = malloc(sizeof(*fr));
	sdr_sr_flow_init(fs, &cfg);
	sdr_sr_flow_init(fr, &cfg);
	if (s.npaths > 1) {
		struct sdr_path_cfg pc;

		sdr_path_cfg_default(&pc);
		pc.alpha_pct = cfg.alpha_pct;
		if (sdr_paths_init(&s.paths, s.npaths, &pc))
			return -22;
		sdr_sr_flow_set_paths(fs, &s.paths);
	}
	txmem = malloc(sdr_sr_tx_size((uint32_t)p->size, p->pay));
	rxmem = malloc(sdr_sr_rx_size((uint32_t)p->size, p->pay));
	res->ct_ns = calloc(p->count, sizeof(double));
	if (!fs || !fr || !txmem || !rxmem || !res->ct_ns) {
		perror("sdr-sim");
		exit(1);
	}

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	for (i = 0; i < p->count; i++) {
		uint64_t retx = fs->st.retx_pkts;
		int64_t ct = run_msg(&s, fs, fr, &now, i, txmem, rxmem);

		if (ct < 0) {
			res->failed++;
			fprintf(stderr, "sdr-sim: message %u failed (%lld)\n", i,
				(long long)ct);
			break;
		}
		res->ct_ns[res->n++] = (double)ct;
		res->retx_msgs += fs->st.retx_pkts != retx;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	res->cpu_s = (c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9;
	res->sim_s = (now - t0) / 1e9;
	res->events = s.events;
	res->decode_err = s.decode_err;
	res->stalls = s.stalls;
	res->rto_ns = (double)fs->rtt.rto_ns;
	res->srtt_ns = (double)fs->rtt.srtt_ns;
	res->cc = fs->cc;
	res->window = sdr_sr_window(fs);
	res->rate_Bps = sdr_sr_rate_bytes(fs);
	res->win_peak = s.win_peak;
	add_stats(&res->st, &fs->st, &fr->st);
	res->ad = fr->ad;
	res->reorder_ns = (double)sdr_sr_reorder_ns(fr);
	res->nack_iv_ns = (double)sdr_sr_nack_interval_ns(fr);
	res->tail_wait_ns = (double)sdr_sr_tail_wait_ns(fr);
	if (s.npaths > 1)
		memcpy(res->path, s.paths.p, sizeof(res->path));

	sim_result_stats(res, p->size);
	for (i = 0; i < s.npaths; i++)
		free(s.fwd[i].v);
	free(s.rev.v);
	free(txmem);
	free(rxmem);
	free(fs);
	free(fr);
	return res->failed ? -5 : 0;
}

void sim_result_free(struct sim_result *r)
{
	free(r->ct_ns);
	r->ct_ns = NULL;
}
