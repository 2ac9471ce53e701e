// SPDX-License-Identifier: GPL-2.0
/*
 * Several flows over one bottleneck: the load CSA-UD's claim is about
 * (">30% lower p99 flow completion under high network load").
 *
 * nflows senders share one forward link, a FIFO whose queue holds
 * queue_bytes and drops what arrives when it is full (drop-tail); the
 * loss process drops on top of that, after the packet has used the link.
 * Every flow runs its own engine pair (kernel/engine/sdr_sr.c, unchanged)
 * and sends count messages one after another, the next as soon as the
 * last completed, so the link stays loaded for the whole run.  Answers
 * come back over one link of the same rate that nothing congests.
 *
 * Both links are FIFOs with one delay, so each delivers in order and the
 * next arrival is the head of one of two rings; the flows' deadlines are
 * scanned, O(nflows) an event.  A packet still on the wire for a message
 * its flow has finished is dropped on arrival, as the kernel drops one
 * for a slot that has moved on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sim.h"
#include "sim_util.h"
#include "sdr_ec.h"

#define INF_NS	UINT64_MAX
#define SIM_MAX_FLOWS	256

struct lpkt {
	uint64_t t;
	uint32_t flow;
	struct sdr_pkt p;	/* a DATA packet, or the header of an answer */
	struct sdr_ack a;	/* an answer's body */
};

struct lflow {
	struct sdr_sr_flow fs, fr;	/* sender, receiver */
	struct sdr_sr_tx tx;
	struct sdr_sr_rx rx;
	void	*txmem, *rxmem;
	uint32_t seq;		/* the message under way */
	uint32_t done;		/* messages completed */
	uint64_t start;		/* when it was posted */
	uint64_t bytes;		/* payload bytes of completed messages */
	uint64_t end;		/* when the last completed */
};

struct lsim {
	const struct sim_params *p;
	uint64_t rng;
	struct sim_drop drop;		/* both links' loss process */
	int	fbad, rbad;		/* ... each link's state */
	double	f_free, r_free;		/* when each link's serializer is idle */
	struct ring fwd, rev;
	struct lflow *fl;
	uint32_t n;
	uint64_t qcap;
	uint64_t qdrops, wdrops, qpkts;
	double	qpeak, qwait_sum;
	uint64_t events;
	uint32_t decode_err;
	uint32_t win_peak;	/* the largest window of any sender */
};

/*
 * A DATA packet of @bytes onto the bottleneck at @now: its arrival time,
 * or 0 when the queue was full or the loss process dropped it.
 */
static uint64_t fwd_send(struct lsim *s, uint64_t now, uint32_t bytes)
{
	double start = s->f_free > (double)now ? s->f_free : (double)now;
	double backlog = (start - (double)now) * s->p->bw_bps / 8e9;

	if (backlog + bytes > (double)s->qcap) {
		s->qdrops++;
		return 0;
	}
	if (backlog > s->qpeak)
		s->qpeak = backlog;
	s->qwait_sum += start - (double)now;
	s->qpkts++;
	s->f_free = start + bytes * 8e9 / s->p->bw_bps;
	if (sim_drop(&s->drop, &s->rng, &s->fbad)) {
		s->wdrops++;
		return 0;
	}
	return (uint64_t)(s->f_free + (double)s->p->owd_ns);
}

static uint64_t rev_send(struct lsim *s, uint64_t now, uint32_t bytes)
{
	double start = s->r_free > (double)now ? s->r_free : (double)now;

	s->r_free = start + bytes * 8e9 / s->p->bw_bps;
	if (sim_drop(&s->drop, &s->rng, &s->rbad))
		return 0;
	return (uint64_t)(s->r_free + (double)s->p->owd_ns);
}

/* Post flow @i's next message at @now. */
static int lflow_post(struct lsim *s, uint32_t i, uint64_t now)
{
	const struct sim_params *p = s->p;
	struct lflow *f = &s->fl[i];

	if (sdr_sr_tx_init(&f->fs, &f->tx, f->seq, (uint32_t)p->size,
			   f->txmem, now))
		return -22;
	if (p->policy == SIM_EC &&
	    sdr_sr_tx_set_ec(&f->fs, &f->tx, p->ec_k, p->ec_m))
		return -22;
	sdr_sr_rx_init(&f->fr, &f->rx, (uint32_t)p->size, f->rxmem);
	if (p->urgent) {
		sdr_sr_tx_set_urgent(&f->tx, true);
		sdr_sr_rx_set_urgent(&f->fr, &f->rx, true, now);
	}
	f->start = now;
	return 0;
}

/* Flow @i's receiver sends what answers it has due. */
static void lrx_ctrl(struct lsim *s, uint32_t i, uint64_t now)
{
	struct lflow *f = &s->fl[i];
	struct sdr_pkt hdr;
	struct sdr_ack ack;

	while (sdr_sr_rx_next_ctrl(&f->fr, &f->rx, now, &hdr, &ack)) {
		uint64_t at = rev_send(s, now, SDR_WIRE_HDR_LEN + SDR_ACK_MAX_LEN);
		struct lpkt *n;

		if (!at)
			continue;
		n = ring_push(&s->rev);
		n->t = at;
		n->flow = i;
		n->p = hdr;
		n->p.msg_seq = f->seq;
		n->a = ack;
	}
}

/* Flow @i's sender hands out what it may at @now; <0 on an engine error. */
static int ltx(struct lsim *s, uint32_t i, uint64_t now)
{
	const struct sim_params *p = s->p;
	struct lflow *f = &s->fl[i];
	struct sdr_sr_txd d;
	int ret, sent = 0;

	while ((ret = sdr_sr_tx_next(&f->fs, &f->tx, now, &d)) == 1) {
		uint64_t at = fwd_send(s, now, d.len + SDR_WIRE_HDR_LEN);
		struct lpkt *n;

		sent++;
		if (sdr_sr_window(&f->fs) > s->win_peak)
			s->win_peak = sdr_sr_window(&f->fs);
		if (!at)
			continue;
		n = ring_push(&s->fwd);
		n->t = at;
		n->flow = i;
		sim_data_pkt(&n->p, p, &d, f->seq);
	}
	if (ret < 0)
		return ret;
	if (!sent && sdr_sr_tx_deadline(&f->fs, &f->tx, now) <= now)
		return -5;	/* the engine would spin */
	return 0;
}

/* A DATA packet reaches flow @i's receiver. */
static void lrx_pkt(struct lsim *s, uint32_t i, const struct sdr_pkt *pkt,
		    uint64_t now)
{
	struct lflow *f = &s->fl[i];

	if (sim_rx_data(&f->fr, &f->rx, pkt, now, s->p->pay, &s->decode_err))
		lrx_ctrl(s, i, now);
}

static int lsim_setup(struct lsim *s, const struct sim_params *p)
{
	struct sdr_sr_cfg cfg;
	uint32_t i;

	memset(s, 0, sizeof(*s));
	s->p = p;
	s->n = p->nflows;
	s->rng = p->seed * 0x2545F4914F6CDD1DULL + 1;
	s->fwd.esz = s->rev.esz = sizeof(struct lpkt);
	sim_drop_init(&s->drop, p->loss, p->burst);
	s->qcap = p->queue_bytes ? p->queue_bytes :
		  (uint64_t)(sim_base_rtt_ns(p) * p->bw_bps / 8e9);
	s->fl = calloc(s->n, sizeof(*s->fl));
	if (!s->fl)
		return -12;
	sim_cfg(p, &cfg);
	for (i = 0; i < s->n; i++) {
		struct lflow *f = &s->fl[i];

		sdr_sr_flow_init(&f->fs, &cfg);
		sdr_sr_flow_init(&f->fr, &cfg);
		f->txmem = malloc(sdr_sr_tx_size((uint32_t)p->size, p->pay));
		f->rxmem = malloc(sdr_sr_rx_size((uint32_t)p->size, p->pay));
		if (!f->txmem || !f->rxmem)
			return -12;
	}
	return 0;
}

static void lsim_free(struct lsim *s)
{
	uint32_t i;

	for (i = 0; s->fl && i < s->n; i++) {
		free(s->fl[i].txmem);
		free(s->fl[i].rxmem);
	}
	free(s->fl);
	free(s->fwd.v);
	free(s->rev.v);
}

/* The earliest deadline of any flow's engines: its time, the flow in *@who, *@rx. */
static uint64_t lnext_deadline(struct lsim *s, uint32_t *who, int *rx, uint64_t now)
{
	uint64_t t = INF_NS, d;
	uint32_t i;

	for (i = 0; i < s->n; i++) {
		struct lflow *f = &s->fl[i];

		if (f->done >= s->p->count)
			continue;
		d = sdr_sr_rx_deadline(&f->fr, &f->rx);
		if (d < t) {
			t = d;
			*who = i;
			*rx = 1;
		}
		d = sdr_sr_tx_deadline(&f->fs, &f->tx, now);
		if (d < t) {
			t = d;
			*who = i;
			*rx = 0;
		}
	}
	return t;
}

/* Run until every flow has completed p->count messages. */
static int lsim_loop(struct lsim *s, struct sim_result *res, uint64_t *nowp)
{
	const struct sim_params *p = s->p;
	uint64_t now = *nowp;
	uint32_t active = s->n, i;
	int ret;

	for (i = 0; i < s->n; i++)
		if (lflow_post(s, i, now))
			return -22;
	while (active) {
		struct lpkt *fp = ring_front(&s->fwd), *rp = ring_front(&s->rev);
		uint64_t t_f = fp ? fp->t : INF_NS, t_r = rp ? rp->t : INF_NS;
		uint32_t who = 0;
		int rx = 0;
		uint64_t t_d = lnext_deadline(s, &who, &rx, now);
		uint64_t t = t_f < t_r ? t_f : t_r;

		t = t_d < t ? t_d : t;
		if (t == INF_NS)
			return -5;	/* stuck: nothing will ever happen */
		if (t > now)
			now = t;
		s->events++;
		if (t_f <= now) {
			struct lflow *f = &s->fl[fp->flow];

			if (f->done < p->count && fp->p.msg_seq == f->seq)
				lrx_pkt(s, fp->flow, &fp->p, now);
			ring_pop(&s->fwd);
		} else if (t_r <= now) {
			uint32_t k = rp->flow;
			struct lflow *f = &s->fl[k];

			ret = 0;
			if (f->done < p->count && rp->p.msg_seq == f->seq)
				ret = sdr_sr_tx_ack(&f->fs, &f->tx, &rp->p, &rp->a, now);
			ring_pop(&s->rev);
			if (ret < 0)
				return ret;
			if (ret != SDR_SR_DONE)
				continue;
			res->ct_ns[res->n++] = (double)(now - f->start);
			f->done++;
			f->bytes += p->size;
			f->end = now;
			f->seq++;
			if (f->done == p->count)
				active--;
			else if (lflow_post(s, k, now))
				return -22;
		} else if (rx) {
			lrx_ctrl(s, who, now);
			if (sdr_sr_rx_deadline(&s->fl[who].fr, &s->fl[who].rx) <= now)
				return -5;	/* the engine would spin */
		} else {
			ret = ltx(s, who, now);
			if (ret < 0)
				return ret;
		}
	}
	*nowp = now;
	return 0;
}

int sim_run_load(const struct sim_params *p, struct sim_result *res)
{
	uint64_t now = 1000000000ULL, t0 = now, delivered = 0;
	struct timespec c0, c1;
	struct lsim s;
	uint32_t i;
	int ret;

	memset(res, 0, sizeof(*res));
	if (p->nflows < 2 || p->nflows > SIM_MAX_FLOWS || !p->size ||
	    p->size > UINT32_MAX || !p->pay || !p->count || p->bw_bps <= 0 ||
	    p->npaths > 1 || p->stall_ns || p->tx_late_ns)
		return -22;
	if (p->policy == SIM_EC &&
	    (!p->ec_k || p->ec_k > SDR_EC_MAX_K || !p->ec_m || p->ec_m > SDR_EC_MAX_M))
		return -22;
	res->ct_ns = calloc((size_t)p->nflows * p->count, sizeof(double));
	ret = res->ct_ns ? lsim_setup(&s, p) : -12;
	if (ret) {
		if (ret == -12)
			perror("sdr-sim");
		if (res->ct_ns)
			lsim_free(&s);
		sim_result_free(res);
		return ret;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	ret = lsim_loop(&s, res, &now);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	if (ret) {
		fprintf(stderr, "sdr-sim: %u flows: stopped after %u messages (%d)\n",
			p->nflows, res->n, ret);
		res->failed = p->nflows * p->count - res->n;
	}
	res->cpu_s = (c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9;
	res->sim_s = (now - t0) / 1e9;
	res->events = s.events;
	res->decode_err = s.decode_err;
	res->win_peak = s.win_peak;
	res->load.queue_bytes = s.qcap;
	res->load.queue_drops = s.qdrops;
	res->load.wire_drops = s.wdrops;
	res->load.queue_peak_bytes = s.qpeak;
	res->load.queue_mean_ns = s.qpkts ? s.qwait_sum / s.qpkts : 0;
	res->load.flow_min_bps = INFINITY;
	for (i = 0; i < s.n; i++) {
		struct lflow *f = &s.fl[i];
		double bps = f->end > t0 ? f->bytes * 8e9 / (f->end - t0) : 0;
		struct sdr_sr_stats *d = &res->st;
		const struct sdr_sr_stats *tx = &f->fs.st, *rx = &f->fr.st;

		res->load.flow_min_bps = bps < res->load.flow_min_bps ? bps :
					 res->load.flow_min_bps;
		res->load.flow_max_bps = bps > res->load.flow_max_bps ? bps :
					 res->load.flow_max_bps;
		delivered += f->bytes;
		d->tx_pkts += tx->tx_pkts;
		d->retx_pkts += tx->retx_pkts;
		d->timeouts += tx->timeouts;
		d->nack_lost += tx->nack_lost;
		d->spurious += tx->spurious;
		d->parity_tx += tx->parity_tx;
		d->urgent_dups += tx->urgent_dups;
		d->rx_pkts += rx->rx_pkts;
		d->rx_dup += rx->rx_dup;
		d->acks_tx += rx->acks_tx;
		d->nacks_tx += rx->nacks_tx;
		d->parity_rx += rx->parity_rx;
		d->ec_recovered += rx->ec_recovered;
		d->ec_decodes += rx->ec_decodes;
		d->nack_late += rx->nack_late;
		d->tail_probes += rx->tail_probes;
	}
	res->load.util = now > t0 ? delivered * 8e9 / ((now - t0) * p->bw_bps) : 0;
	/* the first flow's engines stand for the rest in the per-flow lines */
	res->rto_ns = (double)s.fl[0].fs.rtt.rto_ns;
	res->srtt_ns = (double)s.fl[0].fs.rtt.srtt_ns;
	res->cc = s.fl[0].fs.cc;
	res->window = sdr_sr_window(&s.fl[0].fs);
	res->rate_Bps = sdr_sr_rate_bytes(&s.fl[0].fs);
	res->ad = s.fl[0].fr.ad;
	res->reorder_ns = (double)sdr_sr_reorder_ns(&s.fl[0].fr);
	res->nack_iv_ns = (double)sdr_sr_nack_interval_ns(&s.fl[0].fr);
	res->tail_wait_ns = (double)sdr_sr_tail_wait_ns(&s.fl[0].fr);
	sim_result_stats(res, p->size);
	lsim_free(&s);
	return ret ? -5 : 0;
}
