// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the SR engine, EC included.  The input is a
 * script: a message and flow geometry (and EC's k and m, or SR), then
 * operations on one sender and one receiver
 * (send, deliver a sent packet or a forged one, deliver a forged ACK/NACK
 * or RNR, run timers, advance time).  Invariants checked after every step:
 * packet state accounting on both sides, every control packet the
 * receiver builds passes sdr_wire_decode(), deadlines are never in the
 * past while nothing can be sent, a finished sender holds no budget, and
 * every DECODE the receiver reports can be carried out.  Over several
 * paths (the flags byte's bits 4-6), every packet names one of them, a
 * path goes down or up at any step, and the paths' packets in flight add
 * up to the message's.
 *
 * And the guarantee itself: the sender ends DONE only if every packet of
 * the message was handed out at least once (whatever forged answers came
 * in), an answer built by the true receiver is never rejected while only
 * true packets reached it, and the receiver completes only with every
 * packet in.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "sdr_sr.h"
#include "sdr_bitmap.h"
#include "sdr_ec.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SENT_MAX 64

/* which data packets the sender handed out (the wire's view) */
static uint8_t *sent_map;

static void check_tx(const struct sdr_sr_flow *f, const struct sdr_sr_tx *m)
{
	uint32_t i, on_paths = 0;

	if (f->paths) {
		for (i = 0; i < f->paths->n; i++)
			on_paths += f->paths->p[i].inflight;
		if (on_paths != m->inflight)
			abort();
	}

	if (m->status == SDR_SR_DONE)
		for (i = 0; i < m->npkts; i++)
			if (!sent_map[i])
				abort();	/* told delivered, never sent */
	/* a failed message keeps its lists; it just stops counting */
	if (f->inflight != m->inflight ||
	    (!m->status && m->inflight != m->flight.count))
		abort();
	if (m->nacked != sdr_bitmap_weight(m->acked, m->npkts))
		abort();
	if ((uint64_t)m->nacked + m->inflight + m->lost.count > m->npkts)
		abort();
	if (m->status && m->inflight)
		abort();
	if (m->status == SDR_SR_DONE && m->nacked != m->npkts)
		abort();
	if (m->cum != sdr_bitmap_next_zero(m->acked, m->npkts, 0) && !m->status)
		abort();
}

static void check_rx(const struct sdr_sr_rx *r)
{
	uint32_t g;

	if (!r->msg_len && !r->stream)
		return;
	/* a stream's end counts its data packets' bytes, exactly once all came */
	if (r->stream && ((!r->stream_open && r->stream_bytes > r->msg_len) ||
			  (r->complete && (r->stream_open ||
					   r->stream_bytes != r->msg_len))))
		abort();
	for (g = 0; r->ec_k && g < r->ngroups; g++) {
		uint32_t first, kg;
		uint64_t have;

		sdr_sr_rx_group(r, g, &first, &kg, &have);
		/* parity rows beyond the submessage's, or kept for a whole one */
		if ((uint64_t)r->par_mask[g] >> sdr_sr_group_m(r->ec_k, r->ec_m, kg) ||
		    (r->par_mask[g] && have == (kg == 64 ? ~0ULL : (1ULL << kg) - 1)))
			abort();
	}
	if (r->nrecv != sdr_bitmap_weight(r->map, r->npkts))
		abort();
	if (r->cum != sdr_bitmap_next_zero(r->map, r->npkts, 0))
		abort();
	if (r->complete != (r->nrecv == r->npkts))
		abort();
}

/* encode a receiver control packet, decode it, give it to the sender */
static void ctrl_to_tx(struct sdr_sr_flow *fs, struct sdr_sr_tx *m,
		       struct sdr_pkt *hdr, const struct sdr_ack *ack, uint64_t now,
		       int deliver, bool genuine)
{
	uint64_t bad = fs->st.bad_acks;

	uint8_t buf[SDR_WIRE_HDR_LEN + SDR_ACK_MAX_LEN];
	struct sdr_pkt p;
	struct sdr_ack a;

	hdr->dst_flow = 1;
	hdr->src_flow = 2;
	hdr->msg_seq = 0;
	hdr->policy = fs->cfg.flags & SDR_SR_CFG_ADAPTIVE ?
		      SDR_WIRE_POLICY_ADAPTIVE : SDR_WIRE_POLICY_SR;
	sdr_wire_encode(hdr, buf);
	if (sdr_ack_encode(ack, buf + SDR_WIRE_HDR_LEN) != hdr->payload_len)
		abort();
	if (sdr_wire_decode(buf, SDR_WIRE_HDR_LEN + hdr->payload_len, &p))
		abort();
	if (sdr_ack_decode(buf + SDR_WIRE_HDR_LEN, p.payload_len, &a))
		abort();
	if (deliver) {
		sdr_sr_tx_ack(fs, m, &p, &a, now);
		/* a true receiver's answer is always credible */
		if (genuine && fs->st.bad_acks != bad)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct sdr_sr_flow fs, fr;
	struct sdr_sr_cfg cfg;
	struct sdr_sr_tx m;
	struct sdr_sr_rx r;
	struct sdr_pkt sent[SENT_MAX], hdr;
	struct sdr_ack ack;
	uint32_t msg_len, nsent = 0, steps = 0, ec_k, ec_m, flags, npaths;
	struct sdr_paths paths;
	struct sdr_path_cfg pcfg;
	uint8_t policy = SDR_WIRE_POLICY_SR;
	bool foreign = false, forged_in = false;
	uint64_t now = 1000000000ULL;
	void *txmem, *rxmem;

	msg_len = 1 + take(&in, 3) % (256 * 1024);
	sdr_sr_cfg_default(&cfg);
	cfg.pay = 1 + take(&in, 2) % 4096;
	cfg.max_inflight = 1 + take(&in, 1);
	cfg.ack_every = take(&in, 1) % 20;
	flags = take(&in, 1);
	cfg.flags = flags & (SDR_SR_CFG_NO_NACK | SDR_SR_CFG_ADAPTIVE);
	npaths = (flags >> 4) & 7;
	cfg.pace_bps = take(&in, 1) ? 1000000000ULL * take(&in, 1) : 0;
	cfg.max_backoff = take(&in, 1) % 20;
	ec_k = take(&in, 1) % (SDR_EC_MAX_K + 1);	/* 0: SR */
	if (cfg.flags & SDR_SR_CFG_ADAPTIVE) {
		ec_k = 0;	/* ADAPTIVE has no parity */
		policy = SDR_WIRE_POLICY_ADAPTIVE;
	}
	ec_m = 1 + take(&in, 1) % SDR_EC_MAX_M;
	cfg.ec_beta_pct = take(&in, 1);
	sdr_sr_flow_init(&fs, &cfg);
	sdr_sr_flow_init(&fr, &cfg);
	if (npaths > 1) {
		sdr_path_cfg_default(&pcfg);
		pcfg.probe_ns = 1000000;
		pcfg.probe_pkts = 4;
		pcfg.alpha_pct = cfg.alpha_pct;
		if (sdr_paths_init(&paths, npaths, &pcfg))
			abort();
		sdr_sr_flow_set_paths(&fs, &paths);
	}
	txmem = malloc(sdr_sr_tx_size(msg_len, cfg.pay));
	rxmem = malloc(sdr_sr_rx_size(msg_len, cfg.pay));
	if (sdr_sr_tx_init(&fs, &m, 0, msg_len, txmem, now))
		abort();
	if (ec_k) {
		if (sdr_sr_tx_set_ec(&fs, &m, ec_k, ec_m))
			abort();
		policy = SDR_WIRE_POLICY_EC;
	}
	sdr_sr_rx_init(&fr, &r, msg_len, rxmem);
	sent_map = calloc(m.npkts, 1);

	while (in.n && steps++ < 4096) {
		uint32_t op = take(&in, 1);
		struct sdr_sr_txd d;
		struct sdr_pkt p;
		int ret;

		switch (op % 9) {
		case 0:		/* send what may be sent */
			while (sdr_sr_tx_next(&fs, &m, now, &d) == 1) {
				/* parity is pay bytes and may pad past the end */
				if (d.len == 0 || d.offset >= msg_len ||
				    (!(d.flags & SDR_PKT_F_PARITY) &&
				     d.offset + (uint64_t)d.len > msg_len))
					abort();
				if (d.path >= (npaths > 1 ? npaths : 1))
					abort();
				memset(&p, 0, sizeof(p));
				p.type = SDR_PKT_DATA;
				p.flags = d.flags;
				p.payload_len = (uint16_t)d.len;
				p.dst_flow = 2;
				p.src_flow = 1;
				p.msg_len = msg_len;
				p.offset = d.offset;
				p.land = d.offset;
				p.ts = d.ts;
				p.policy = policy;
				p.aux = d.aux;
				if (sdr_wire_check_geometry(&p, cfg.pay, msg_len))
					abort();
				if ((d.flags & SDR_PKT_F_PARITY) &&
				    (!ec_k || d.len != cfg.pay ||
				     SDR_EC_AUX_K(d.aux) != ec_k))
					abort();
				sent[nsent++ % SENT_MAX] = p;
				if (!(d.flags & SDR_PKT_F_PARITY))
					sent_map[d.idx] = 1;
			}
			break;
		case 1:		/* time passes */
			now += (uint64_t)take(&in, 2) << (take(&in, 1) % 24);
			break;
		case 2:		/* deliver a sent packet (maybe again) */
			if (!nsent)
				break;
			p = sent[take(&in, 1) % (nsent < SENT_MAX ? nsent : SENT_MAX)];
			ret = sdr_sr_rx_data(&fr, &r, &p, now);
			/* our own packets are valid unless a forgery came first */
			if (ret < 0 && !foreign)
				abort();
			if (ret > 0 && ret & SDR_SR_RX_DECODE) {
				uint32_t g = p.offset / cfg.pay / r.ec_k, n;

				if (sdr_sr_rx_decoded(&fr, &r, g, now, &n) < 0 || !n)
					abort();
			}
			while (sdr_sr_rx_next_ctrl(&fr, &r, now, &hdr, &ack))
				ctrl_to_tx(&fs, &m, &hdr, &ack, now, take(&in, 1) & 1,
					   !forged_in);
			break;
		case 3: {	/* forged DATA */
			bool first;

			memset(&p, 0, sizeof(p));
			p.type = SDR_PKT_DATA;
			p.flags = take(&in, 1) & SDR_PKT_F_DATA_MASK;
			p.payload_len = (uint16_t)take(&in, 2);
			p.msg_len = take(&in, 1) & 1 ? msg_len : take(&in, 4);
			p.offset = take(&in, 4) % (msg_len + 1);
			p.land = take(&in, 1) & 1 ? p.offset : take(&in, 4);
			/* a streamed message's part (STREAM in flags) */
			p.part = take(&in, 1) & 1 ? 0 : take(&in, 4);
			p.ts = take(&in, 4);
			p.dst_flow = 2;
			p.src_flow = 1;
			p.policy = take(&in, 1) & 1 ? policy : SDR_WIRE_POLICY_EC;
			p.aux = take(&in, 1) & 1 ? SDR_EC_AUX(ec_k, ec_m, take(&in, 1)) :
						   take(&in, 4);
			first = !r.started;
			ret = sdr_sr_rx_data(&fr, &r, &p, now);
			if (first && r.started &&
			    (r.stream || p.msg_len != msg_len || p.policy != policy ||
			     (ec_k && (SDR_EC_AUX_K(p.aux) != ec_k ||
				       SDR_EC_AUX_M(p.aux) != ec_m))))
				foreign = true;
			/* a forged DECODE is still carried out by the caller */
			if (ret > 0 && ret & SDR_SR_RX_DECODE) {
				uint32_t n;

				if (sdr_sr_rx_decoded(&fr, &r, p.offset / cfg.pay / r.ec_k,
						      now, &n) < 0)
					abort();
			}
			if (ret >= 0 && ret & SDR_SR_RX_NEW &&
			    sdr_wire_check_geometry(&p, cfg.pay, msg_len))
				abort();
			if (ret > 0 && (ret & (SDR_SR_RX_NEW | SDR_SR_RX_PARITY)))
				forged_in = true;
			while (sdr_sr_rx_next_ctrl(&fr, &r, now, &hdr, &ack))
				ctrl_to_tx(&fs, &m, &hdr, &ack, now, 0, false);
			break;
		}
		case 4: {	/* forged ACK/NACK body, if it parses */
			uint8_t body[SDR_ACK_MAX_LEN];
			uint32_t nbits = take(&in, 2) % (SDR_ACK_MAX_BITS + 1), i;
			struct sdr_ack a;

			memset(&p, 0, sizeof(p));
			p.type = take(&in, 1) & 1 ? SDR_PKT_NACK : SDR_PKT_ACK;
			p.aux = p.type == SDR_PKT_ACK ? take(&in, 1) % 3 : 0;
			p.msg_seq = take(&in, 1) & 1 ? take(&in, 4) : 0;
			p.ts = take(&in, 4);
			p.imm = take(&in, 1) & 1 ? take(&in, 4) : 0;	/* gap */
			memset(&a, 0, sizeof(a));
			a.cum = take(&in, 3);
			a.base = a.cum + take(&in, 2);
			a.nbits = (uint16_t)nbits;
			for (i = 0; i < (nbits + 7) / 8; i++)
				a.map[i] = (uint8_t)take(&in, 1);
			p.payload_len = (uint16_t)sdr_ack_encode(&a, body);
			if (sdr_ack_decode(body, p.payload_len, &a))
				abort();
			sdr_sr_tx_ack(&fs, &m, &p, &a, now);
			break;
		}
		case 5:
			sdr_sr_tx_rnr(&fs, &m, now);
			break;
		case 6:		/* receiver timer */
			if (sdr_sr_rx_deadline(&fr, &r) <= now)
				while (sdr_sr_rx_next_ctrl(&fr, &r, now, &hdr, &ack))
					ctrl_to_tx(&fs, &m, &hdr, &ack, now, 1,
						   !forged_in);
			/* what was due is done: the timer would spin otherwise */
			if (sdr_sr_rx_deadline(&fr, &r) <= now)
				abort();
			break;
		case 7:		/* sender timer: jump to its deadline */
			{
				uint64_t dl = sdr_sr_tx_deadline(&fs, &m, now);

				if (dl != UINT64_MAX && dl > now)
					now = dl;
				sdr_sr_tx_poll(&fs, &m, now);
			}
			break;
		case 8:
			ret = take(&in, 1);
			if (ret == 0xab)
				sdr_sr_tx_abort(&fs, &m, -5, now);
			if (ret == 0xcd && npaths > 1) {	/* a path down/up */
				uint32_t pi = take(&in, 1);
				bool down = pi & 0x80;

				pi %= npaths;
				if (sdr_path_set_down(&paths, pi, down, now))
					abort();
				if (down)
					sdr_sr_tx_path_down(&fs, &m, pi, now);
			}
			break;
		}
		check_tx(&fs, &m);
		check_rx(&r);
		/*
		 * A deadline that is due means something can be done now:
		 * sending, failing the message or expiring a timer.
		 */
		if (!m.status && sdr_sr_tx_deadline(&fs, &m, now) <= now) {
			struct sdr_sr_txd d;

			int sent_one = sdr_sr_tx_next(&fs, &m, now, &d);

			if (sent_one == 1 && !(d.flags & SDR_PKT_F_PARITY))
				sent_map[d.idx] = 1;	/* lost on the wire */
			if (sent_one != 1 && !m.status &&
			    sdr_sr_tx_deadline(&fs, &m, now) <= now)
				abort();
			check_tx(&fs, &m);
		}
	}
	free(sent_map);
	free(txmem);
	free(rxmem);
	return 0;
}
