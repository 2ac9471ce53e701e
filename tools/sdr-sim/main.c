// SPDX-License-Identifier: GPL-2.0
/*
 * sdr-sim: message completion times of the sdr SR engine, with or without
 * erasure coding (policy EC), on a long-haul link, and the analytical SR
 * and EC models for comparison.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "sim.h"
#include "sdr_ec.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: sdr-sim [options]\n"
"  --bw RATE          link rate in bit/s, suffix K M G T (default 400G)\n"
"  --rtt TIME         round-trip propagation, suffix ns us ms s (default 25ms)\n"
"  --delay TIME       one-way propagation (RTT = 2 * delay)\n"
"  --distance LEN     one-way distance, suffix m km; delay = LEN / c\n"
"                     (3750km = 12.5 ms, the paper's 25 ms RTT)\n"
"  --loss P           packet drop probability, both directions (1e-4)\n"
"  --burst LEN        mean loss burst length in packets (Gilbert-Elliott)\n"
"  --size BYTES       message size, suffix K M G = KiB MiB GiB (1G)\n"
"  --count N          messages, sent one after another (10)\n"
"  --policy sr|ec|adaptive|auto  reliability policy: selective repeat, SR\n"
"                     plus erasure coding (k data + m parity per submessage),\n"
"                     SR with its timers learned per flow, or what AUTO's\n"
"                     model (the kernel's, engine/sdr_auto.c) picks for the\n"
"                     path and message size, k and m included (sr)\n"
"  -P POLICY          the same\n"
"  --k N              EC: data packets per submessage, 1..64 (32)\n"
"  --m N              EC: parity packets per submessage, 1..32 (8)\n"
"  --beta PCT         EC: a lost packet's RTO waits beta%% of SRTT more\n"
"                     (plus k+m packet times) for parity to repair it (100)\n"
"  --chunk BYTES      user bitmap chunk (64K)\n"
"  --mtu BYTES        UD MTU: payload = MTU - 64 byte sdr header (4096)\n"
"  --recovery MODE    nack (receiver NACKs + RTO, default) or rto (RTO only)\n"
"  --timers MODE      path: paced at the link rate, timers from its RTT\n"
"                     (default); module: as sdr.ko runs the engine with its\n"
"                     default parameters (no pacing, 256 packets in flight,\n"
"                     reorder 5 ms, NACK rounds 20 ms, RTO from 100 ms)\n"
"  --rate RATE|auto  the sender's rate: fixed (bit/s, suffix K M G T), or\n"
"                     auto, the engine's controller (default: the link's\n"
"                     rate, fixed, as for a dedicated link)\n"
"  --max-window N     the most packets in flight (default 4194304); the\n"
"                     window is sized from the path up to it\n"
"  --win-init N       the window before the path is measured (path timers:\n"
"                     2 x the configured path's BDP + 1024; module: 256)\n"
"  --fixed-window     the window is --max-window whatever the path, as\n"
"                     sdr.ko ran SR before it sized the window\n"
"  --alpha PCT        RTO = SRTT + max(alpha%% * SRTT, 4 RTTVAR) (25)\n"
"  --backoff N        RTO doublings while the peer is silent, 0..16 (7)\n"
"  --ack-every N      receiver ACKs every N packets (16)\n"
"  --stall TIME       the receiving host stalls this long (0: never)...\n"
"  --stall-every TIME ... on average this often (exponential gaps): what\n"
"                     arrives meanwhile waits behind its timers\n"
"  --tx-late TIME     the sender's timers fire this late on average (0)\n"
"  --paths N          spread the flow over N links (rails), each at --bw with\n"
"                     --loss, as the engine's path scheduler picks (1..8, 1)\n"
"  --path-delay LIST  one-way delay each path adds, comma-separated (0,...)\n"
"  --path-loss LIST   drop probability each path adds, comma-separated\n"
"                     (0,...): \"--paths 2 --loss 0 --path-loss 0,0.05\" is a\n"
"                     clean rail beside one that loses 5%%\n"
"  --groups           each message is its own group, the one the application\n"
"                     waits for (the kernel's urgent treatment: resends go\n"
"                     twice, a silent tail is NACKed whatever the policy)\n"
"  --flows N          N flows (2..256) share one bottleneck of --bw, each\n"
"                     sending --count messages one after another: the\n"
"                     completion times of all; --rate defaults to a fair\n"
"                     share of the link (1: one flow alone)\n"
"  --queue BYTES      the bottleneck's drop-tail queue (default: the link's\n"
"                     bandwidth-delay product)\n"
"  --seed S           random seed (1)\n"
"  --model            also print the analytical model of the policy\n"
"  --json             one JSON object on stdout\n");
}

static int parse_num(const char *s, double *v, const char **rest)
{
	char *end;

	*v = strtod(s, &end);
	if (end == s || *v < 0 || !isfinite(*v))
		return -1;
	*rest = end;
	return 0;
}

static int parse_rate(const char *s, double *v)
{
	const char *u;

	if (parse_num(s, v, &u))
		return -1;
	switch (*u) {
	case 'k': case 'K': *v *= 1e3; u++; break;
	case 'm': case 'M': *v *= 1e6; u++; break;
	case 'g': case 'G': *v *= 1e9; u++; break;
	case 't': case 'T': *v *= 1e12; u++; break;
	}
	if (!strcasecmp(u, "bit/s") || !strcasecmp(u, "bps") || !strcasecmp(u, "b"))
		u += strlen(u);
	return *u || *v <= 0 ? -1 : 0;
}

static int parse_time_ns(const char *s, double *v)
{
	const char *u;

	if (parse_num(s, v, &u))
		return -1;
	if (!strcmp(u, "ns"))
		;
	else if (!strcmp(u, "us"))
		*v *= 1e3;
	else if (!strcmp(u, "ms"))
		*v *= 1e6;
	else if (!strcmp(u, "s") || !*u)
		*v *= 1e9;
	else
		return -1;
	return 0;
}

static int parse_size(const char *s, double *v)
{
	const char *u;

	if (parse_num(s, v, &u))
		return -1;
	switch (*u) {
	case 'k': case 'K': *v *= 1024; u++; break;
	case 'm': case 'M': *v *= 1024 * 1024; u++; break;
	case 'g': case 'G': *v *= 1024.0 * 1024 * 1024; u++; break;
	}
	if (*u == 'i')
		u++;
	if (*u == 'B')
		u++;
	return *u ? -1 : 0;
}

/* a whole number in [lo, hi] */
static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *v)
{
	char *end;
	unsigned long x = strtoul(s, &end, 0);

	if (end == s || *end || *s == '-' || x < lo || x > hi)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/*
 * A comma-separated list of at most SIM_MAX_PATHS values, times (@time)
 * or probabilities below 1, into @v; the count in @n.
 */
static int parse_list(const char *s, int time, double *v, uint32_t *n)
{
	char buf[256], *tok, *save = NULL;
	const char *rest;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == SIM_MAX_PATHS)
			return -1;
		if (time ? parse_time_ns(tok, &v[*n]) :
			   parse_num(tok, &v[*n], &rest) || *rest ||
			   v[*n] >= 1)
			return -1;
		(*n)++;
	}
	return *n ? 0 : -1;
}

static const char *fmt_time(double ns, char *buf, size_t n)
{
	if (ns >= 1e9)
		snprintf(buf, n, "%.3f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, n, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, n, "%.3f us", ns / 1e3);
	return buf;
}

enum {
	O_BW = 256, O_RTT, O_DELAY, O_DIST, O_LOSS, O_BURST, O_SIZE, O_COUNT,
	O_POLICY, O_CHUNK, O_MTU, O_SEED, O_JSON, O_MODEL, O_RECOVERY,
	O_ALPHA, O_BACKOFF, O_ACKEVERY, O_HELP, O_K, O_M, O_BETA, O_TIMERS,
	O_STALL, O_STALL_EVERY, O_TX_LATE, O_PATHS, O_PATH_DELAY, O_PATH_LOSS,
	O_GROUPS, O_RATE, O_MAXWIN, O_WININIT, O_FIXWIN, O_FLOWS, O_QUEUE,
};

static const struct option opts[] = {
	{ "bw", 1, NULL, O_BW }, { "rtt", 1, NULL, O_RTT },
	{ "delay", 1, NULL, O_DELAY }, { "distance", 1, NULL, O_DIST },
	{ "loss", 1, NULL, O_LOSS }, { "burst", 1, NULL, O_BURST },
	{ "size", 1, NULL, O_SIZE }, { "count", 1, NULL, O_COUNT },
	{ "policy", 1, NULL, O_POLICY }, { "chunk", 1, NULL, O_CHUNK },
	{ "mtu", 1, NULL, O_MTU }, { "seed", 1, NULL, O_SEED },
	{ "json", 0, NULL, O_JSON }, { "model", 0, NULL, O_MODEL },
	{ "recovery", 1, NULL, O_RECOVERY }, { "alpha", 1, NULL, O_ALPHA },
	{ "backoff", 1, NULL, O_BACKOFF }, { "ack-every", 1, NULL, O_ACKEVERY },
	{ "help", 0, NULL, O_HELP }, { "k", 1, NULL, O_K },
	{ "m", 1, NULL, O_M }, { "beta", 1, NULL, O_BETA },
	{ "timers", 1, NULL, O_TIMERS },
	{ "rate", 1, NULL, O_RATE },
	{ "max-window", 1, NULL, O_MAXWIN },
	{ "win-init", 1, NULL, O_WININIT },
	{ "fixed-window", 0, NULL, O_FIXWIN },
	{ "stall", 1, NULL, O_STALL }, { "stall-every", 1, NULL, O_STALL_EVERY },
	{ "tx-late", 1, NULL, O_TX_LATE },
	{ "paths", 1, NULL, O_PATHS }, { "path-delay", 1, NULL, O_PATH_DELAY },
	{ "path-loss", 1, NULL, O_PATH_LOSS },
	{ "groups", 0, NULL, O_GROUPS },
	{ "flows", 1, NULL, O_FLOWS }, { "queue", 1, NULL, O_QUEUE },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	struct sim_params p;
	struct sim_result r;
	struct model_result m;
	int c, json = 0, model = 0, have_model = 0, autop = 0;
	static const char *const cand[] = { "sr", "adaptive", "ec" };
	static const char *const path_state[] = { "up", "drained", "down" };
	struct sdr_auto_pick pick;
	struct sdr_auto_in ain;
	const char *pol;
	uint32_t mtu = 4096, i, nd = 0, nl = 0;
	double v, lv[SIM_MAX_PATHS];
	char b1[32], b2[32], b3[32], b4[32];

	sim_defaults(&p);
	while ((c = getopt_long(argc, argv, "hP:", opts, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case O_BW: bad = parse_rate(optarg, &p.bw_bps); break;
		case O_RTT:
			bad = parse_time_ns(optarg, &v);
			p.owd_ns = (uint64_t)(v / 2);
			break;
		case O_DELAY:
			bad = parse_time_ns(optarg, &v);
			p.owd_ns = (uint64_t)v;
			break;
		case O_STALL:
			bad = parse_time_ns(optarg, &v);
			p.stall_ns = (uint64_t)v;
			break;
		case O_TX_LATE:
			bad = parse_time_ns(optarg, &v);
			p.tx_late_ns = (uint64_t)v;
			break;
		case O_STALL_EVERY:
			bad = parse_time_ns(optarg, &v);
			p.stall_every_ns = (uint64_t)v;
			break;
		case O_DIST: {
			const char *u;

			bad = parse_num(optarg, &v, &u);
			if (!strcmp(u, "km"))
				v *= 1e3;
			else if (strcmp(u, "m") && *u)
				bad = 1;
			p.owd_ns = (uint64_t)(v / 299792458.0 * 1e9);
			break;
		}
		case O_LOSS:
			bad = parse_num(optarg, &p.loss, (const char **)&optarg) ||
			      *optarg || p.loss >= 1;
			break;
		case O_BURST:
			bad = parse_num(optarg, &p.burst, (const char **)&optarg) ||
			      *optarg;
			break;
		case O_SIZE:
			bad = parse_size(optarg, &v) || v < 1 || v > 4294967295.0;
			p.size = (uint64_t)v;
			break;
		case O_COUNT: p.count = (uint32_t)strtoul(optarg, NULL, 0); break;
		case O_POLICY: case 'P':
			if (!strcasecmp(optarg, "sr")) {
				p.policy = SIM_SR;
			} else if (!strcasecmp(optarg, "ec")) {
				p.policy = SIM_EC;
			} else if (!strcasecmp(optarg, "adaptive")) {
				p.policy = SIM_ADAPTIVE;
			} else if (!strcasecmp(optarg, "auto")) {
				autop = 1;
			} else {
				fprintf(stderr, "sdr-sim: policy '%s' is not simulated (sr, ec, adaptive, auto)\n",
					optarg);
				return 2;
			}
			break;
		case O_K: bad = parse_u32(optarg, 1, SDR_EC_MAX_K, &p.ec_k); break;
		case O_M: bad = parse_u32(optarg, 1, SDR_EC_MAX_M, &p.ec_m); break;
		case O_BETA: bad = parse_u32(optarg, 0, 10000, &p.beta_pct); break;
		case O_CHUNK:
			bad = parse_size(optarg, &v) || v < 1;
			p.chunk = (uint32_t)v;
			break;
		case O_MTU:
			mtu = (uint32_t)strtoul(optarg, NULL, 0);
			bad = mtu <= SDR_WIRE_HDR_LEN || mtu > 65535;
			break;
		case O_SEED: p.seed = strtoull(optarg, NULL, 0); break;
		case O_JSON: json = 1; break;
		case O_MODEL: model = 1; break;
		case O_RECOVERY:
			if (!strcmp(optarg, "nack"))
				p.nack = 1;
			else if (!strcmp(optarg, "rto"))
				p.nack = 0;
			else
				bad = 1;
			break;
		case O_TIMERS:
			if (!strcmp(optarg, "path"))
				p.module_timers = 0;
			else if (!strcmp(optarg, "module"))
				p.module_timers = 1;
			else
				bad = 1;
			break;
		case O_GROUPS:
			p.urgent = 1;
			break;
		case O_RATE:
			if (!strcmp(optarg, "auto"))
				p.rate_bps = 0;
			else
				bad = parse_rate(optarg, &p.rate_bps) || p.rate_bps < 1;
			break;
		case O_MAXWIN:
			bad = parse_u32(optarg, SDR_SR_WIN_MIN, 1U << 30, &p.max_window);
			break;
		case O_FIXWIN:
			p.fixed_window = 1;
			break;
		case O_WININIT:
			bad = parse_u32(optarg, 1, 1U << 30, &p.win_init);
			break;
		case O_FLOWS:
			bad = parse_u32(optarg, 1, 256, &p.nflows);
			break;
		case O_QUEUE:
			bad = parse_size(optarg, &v) || v < 1 || v > 1e15;
			p.queue_bytes = (uint64_t)v;
			break;
		case O_PATHS:
			bad = parse_u32(optarg, 1, SIM_MAX_PATHS, &p.npaths);
			break;
		case O_PATH_DELAY:
			bad = parse_list(optarg, 1, lv, &nd);
			for (i = 0; !bad && i < nd; i++)
				p.path_owd_ns[i] = (uint64_t)lv[i];
			break;
		case O_PATH_LOSS:
			bad = parse_list(optarg, 0, lv, &nl);
			for (i = 0; !bad && i < nl; i++)
				p.path_loss[i] = lv[i];
			break;
		case O_ALPHA: p.alpha_pct = (uint32_t)strtoul(optarg, NULL, 0); break;
		case O_BACKOFF:
			p.max_backoff = (uint32_t)strtoul(optarg, NULL, 0);
			bad = p.max_backoff > SDR_SR_MAX_BACKOFF;
			break;
		case O_ACKEVERY:
			p.ack_every = (uint32_t)strtoul(optarg, NULL, 0);
			bad = !p.ack_every;
			break;
		case O_HELP: case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (bad) {
			fprintf(stderr, "sdr-sim: bad value '%s'\n", optarg);
			return 2;
		}
	}
	if (optind < argc || !p.count) {
		usage(stderr);
		return 2;
	}
	if (nd > (p.npaths ? p.npaths : 1) || nl > (p.npaths ? p.npaths : 1)) {
		fprintf(stderr, "sdr-sim: --path-delay and --path-loss name at most --paths values\n");
		return 2;
	}
	if (p.nflows > 1 && (p.npaths > 1 || p.stall_ns || p.tx_late_ns || autop)) {
		fprintf(stderr, "sdr-sim: --flows runs one link: no --paths, --stall, --tx-late or -P auto\n");
		return 2;
	}
	p.pay = mtu - SDR_WIRE_HDR_LEN;
	if (autop) {
		sim_auto_pick(&p, &ain, &pick);
		p.policy = pick.cand == SDR_AUTO_EC ? SIM_EC :
			   pick.cand == SDR_AUTO_ADAPTIVE ? SIM_ADAPTIVE : SIM_SR;
		if (pick.cand == SDR_AUTO_EC) {
			p.ec_k = pick.ec_k;
			p.ec_m = pick.ec_m;
		}
	}

	if (sim_run(&p, &r) && !r.n) {
		fprintf(stderr, "sdr-sim: simulation failed\n");
		return 1;
	}
	if (model)
		have_model = !sim_model(&p, &m);

	pol = p.policy == SIM_EC ? "ec" : p.policy == SIM_ADAPTIVE ? "adaptive" : "sr";
	if (json) {
		printf("{\"policy\":\"%s\",\"bw_bps\":%.0f,\"rtt_ns\":%llu,\"loss\":%g,"
		       "\"burst\":%g,\"size\":%llu,\"count\":%u,\"mtu\":%u,\"payload\":%u,"
		       "\"recovery\":\"%s\",\"timers\":\"%s\",\"alpha_pct\":%u,\"backoff\":%u,\"seed\":%llu,"
		       "\"completed\":%u,\"failed\":%u,"
		       "\"mean_ns\":%.0f,\"p50_ns\":%.0f,\"p99_ns\":%.0f,\"p999_ns\":%.0f,"
		       "\"goodput_bps\":%.0f,\"srtt_ns\":%.0f,\"rto_ns\":%.0f,"
		       "\"tx_pkts\":%llu,\"retx_pkts\":%llu,\"timeouts\":%llu,"
		       "\"nack_lost\":%llu,\"spurious\":%llu,\"acks\":%llu,\"nacks\":%llu,"
		       "\"events\":%llu,\"cpu_s\":%.3f",
		       pol, p.bw_bps, (unsigned long long)(2 * p.owd_ns), p.loss, p.burst,
		       (unsigned long long)p.size, p.count, mtu, p.pay,
		       p.nack ? "nack" : "rto", p.module_timers ? "module" : "path",
		       p.alpha_pct, p.max_backoff,
		       (unsigned long long)p.seed, r.n, r.failed,
		       r.mean_ns, r.p50_ns, r.p99_ns, r.p999_ns, r.goodput_bps,
		       r.srtt_ns, r.rto_ns,
		       (unsigned long long)r.st.tx_pkts, (unsigned long long)r.st.retx_pkts,
		       (unsigned long long)r.st.timeouts, (unsigned long long)r.st.nack_lost,
		       (unsigned long long)r.st.spurious, (unsigned long long)r.st.acks_tx,
		       (unsigned long long)r.st.nacks_tx, (unsigned long long)r.events,
		       r.cpu_s);
		printf(",\"se_ns\":%.0f,\"retx_msgs\":%u,\"rx_dup\":%llu", r.se_ns,
		       r.retx_msgs, (unsigned long long)r.st.rx_dup);
		printf(",\"rate\":\"%s\",\"max_window\":%u,\"win_init\":%u,"
		       "\"window\":%u,\"win_peak\":%u,\"cc_state\":\"%s\","
		       "\"rate_Bps\":%llu,\"bw_Bps\":%llu,\"cc_rounds\":%llu,"
		       "\"cc_cuts\":%llu",
		       p.rate_bps < 0 ? "link" : p.rate_bps ? "fixed" : "auto",
		       p.max_window, sim_win_init(&p), r.window, r.win_peak,
		       p.fixed_window ? "fixed" : sdr_cc_state_name(r.cc.state),
		       (unsigned long long)r.rate_Bps,
		       (unsigned long long)r.cc.bw,
		       (unsigned long long)r.cc.rounds,
		       (unsigned long long)r.cc.cuts);
		if (p.urgent)
			printf(",\"groups\":true,\"urgent_dups\":%llu",
			       (unsigned long long)r.st.urgent_dups);
		if (p.urgent && p.policy != SIM_ADAPTIVE)
			printf(",\"tail_probes\":%llu",
			       (unsigned long long)r.st.tail_probes);
		if (p.stall_ns && p.stall_every_ns)
			printf(",\"stall_ns\":%llu,\"stall_every_ns\":%llu,\"stalled_events\":%llu",
			       (unsigned long long)p.stall_ns,
			       (unsigned long long)p.stall_every_ns,
			       (unsigned long long)r.stalls);
		if (p.nflows > 1)
			printf(",\"flows\":%u,\"queue_bytes\":%llu,\"queue_drops\":%llu,"
			       "\"wire_drops\":%llu,\"queue_peak_bytes\":%.0f,"
			       "\"queue_wait_ns\":%.0f,\"util\":%.4f,"
			       "\"flow_min_bps\":%.0f,\"flow_max_bps\":%.0f,\"sim_s\":%.3f",
			       p.nflows, (unsigned long long)r.load.queue_bytes,
			       (unsigned long long)r.load.queue_drops,
			       (unsigned long long)r.load.wire_drops,
			       r.load.queue_peak_bytes, r.load.queue_mean_ns,
			       r.load.util, r.load.flow_min_bps, r.load.flow_max_bps,
			       r.sim_s);
		if (autop)
			printf(",\"auto\":{\"choice\":\"%s\",\"ec_k\":%u,\"ec_m\":%u,"
			       "\"cost_sr_ns\":%llu,\"cost_adaptive_ns\":%llu,"
			       "\"cost_ec_ns\":%llu}",
			       cand[pick.cand], pick.ec_k, pick.ec_m,
			       (unsigned long long)pick.cost_ns[SDR_AUTO_SR],
			       (unsigned long long)pick.cost_ns[SDR_AUTO_ADAPTIVE],
			       (unsigned long long)pick.cost_ns[SDR_AUTO_EC]);
		if (p.policy == SIM_ADAPTIVE)
			printf(",\"reorder_ns\":%.0f,\"nack_interval_ns\":%.0f,"
			       "\"tail_wait_ns\":%.0f,\"gap_ns\":%llu,\"peer_rtt_ns\":%llu,"
			       "\"nack_late\":%llu,\"tail_probes\":%llu",
			       r.reorder_ns, r.nack_iv_ns, r.tail_wait_ns,
			       (unsigned long long)r.ad.gap_ns,
			       (unsigned long long)r.ad.peer_rtt_ns,
			       (unsigned long long)r.st.nack_late,
			       (unsigned long long)r.st.tail_probes);
		if (p.policy == SIM_EC)
			printf(",\"k\":%u,\"m\":%u,\"beta_pct\":%u,\"parity_tx\":%llu,"
			       "\"parity_rx\":%llu,\"decodes\":%llu,\"recovered\":%llu,"
			       "\"decode_err\":%u",
			       p.ec_k, p.ec_m, p.beta_pct,
			       (unsigned long long)r.st.parity_tx,
			       (unsigned long long)r.st.parity_rx,
			       (unsigned long long)r.st.ec_decodes,
			       (unsigned long long)r.st.ec_recovered, r.decode_err);
		if (p.npaths > 1) {
			printf(",\"paths\":[");
			for (i = 0; i < p.npaths; i++)
				printf("%s{\"delay_ns\":%llu,\"loss\":%g,\"tx_pkts\":%llu,"
				       "\"acked\":%llu,\"lost\":%llu,\"srtt_ns\":%llu,"
				       "\"loss_pct\":%u,\"drains\":%llu,\"restores\":%llu,"
				       "\"state\":\"%s\"}",
				       i ? "," : "", (unsigned long long)p.path_owd_ns[i],
				       p.path_loss[i],
				       (unsigned long long)r.path[i].tx_pkts,
				       (unsigned long long)r.path[i].acked,
				       (unsigned long long)r.path[i].lost,
				       (unsigned long long)r.path[i].rtt.srtt_ns,
				       r.path[i].loss_pct,
				       (unsigned long long)r.path[i].drains,
				       (unsigned long long)r.path[i].restores,
				       path_state[r.path[i].state]);
			printf("]");
		}
		if (have_model) {
			printf(",\"model\":{\"mean_ns\":%.0f,\"p50_ns\":%.0f,\"p99_ns\":%.0f,"
			       "\"p999_ns\":%.0f", m.mean_ns, m.p50_ns, m.p99_ns, m.p999_ns);
			if (p.policy == SIM_EC)
				printf(",\"p_dec\":%.17g,\"p_fail\":%.6g,\"p_fallback\":%.6g,"
				       "\"p_ack\":%.6g,\"paper_ns\":%.0f",
				       m.p_dec, m.p_fail, m.p_fallback, m.p_ack,
				       m.paper_ns);
			printf("}");
		}
		printf("}\n");
	} else {
		printf("sdr-sim: %s, %llu B x %u, %.0f Gbit/s, RTT %s, loss %g%s, MTU %u, recovery %s\n",
		       pol, (unsigned long long)p.size, p.count, p.bw_bps / 1e9,
		       fmt_time(2.0 * p.owd_ns, b1, sizeof(b1)), p.loss,
		       p.burst > 1 ? " (bursts)" : "", mtu, p.nack ? "nack+rto" : "rto");
		if (autop)
			printf("auto: chose %s", cand[pick.cand]);
		if (autop && pick.cand == SDR_AUTO_EC)
			printf(" k %u m %u", pick.ec_k, pick.ec_m);
		if (autop)
			printf("; the model's time per message: sr %s, adaptive %s, ec(%u,%u) %s\n",
			       fmt_time((double)pick.cost_ns[SDR_AUTO_SR], b1, sizeof(b1)),
			       fmt_time((double)pick.cost_ns[SDR_AUTO_ADAPTIVE], b2, sizeof(b2)),
			       pick.ec_k, pick.ec_m,
			       fmt_time((double)pick.cost_ns[SDR_AUTO_EC], b3, sizeof(b3)));
		printf("completion  mean %s (+-%.2f%%)  p50 %s  p99 %s  p99.9 %s  goodput %.2f Gbit/s\n",
		       fmt_time(r.mean_ns, b1, sizeof(b1)),
		       r.mean_ns > 0 ? 100 * r.se_ns / r.mean_ns : 0,
		       fmt_time(r.p50_ns, b2, sizeof(b2)),
		       fmt_time(r.p99_ns, b3, sizeof(b3)), fmt_time(r.p999_ns, b4, sizeof(b4)),
		       r.goodput_bps / 1e9);
		printf("window      peak %u packets (at most %u, first %u), %s rate, "
		       "end: %s, %u packets, rate %.2f Gbit/s, delivery %.2f Gbit/s\n",
		       r.win_peak, p.max_window, sim_win_init(&p),
		       p.rate_bps < 0 ? "the link's" : p.rate_bps ? "fixed" : "auto",
		       p.fixed_window ? "fixed window" : sdr_cc_state_name(r.cc.state),
		       r.window, r.rate_Bps * 8 / 1e9, r.cc.bw * 8 / 1e9);
		if (have_model)
			printf("model       mean %s  p50 %s  p99 %s  p99.9 %s  (sim/model %.3f)\n",
			       fmt_time(m.mean_ns, b1, sizeof(b1)),
			       fmt_time(m.p50_ns, b2, sizeof(b2)),
			       fmt_time(m.p99_ns, b3, sizeof(b3)),
			       fmt_time(m.p999_ns, b4, sizeof(b4)), r.mean_ns / m.mean_ns);
		if (have_model && p.policy == SIM_EC)
			printf("ec model    P_dec 1 - %.3g  P_fallback %.3g  P_ack %.3g  paper's form %s\n",
			       m.p_fail, m.p_fallback, m.p_ack,
			       fmt_time(m.paper_ns, b1, sizeof(b1)));
		if (p.policy == SIM_EC)
			printf("ec (%u,%u)   parity sent %llu rx %llu  decodes %llu (%llu packets rebuilt)  "
			       "messages with retx %u%s\n",
			       p.ec_k, p.ec_m, (unsigned long long)r.st.parity_tx,
			       (unsigned long long)r.st.parity_rx,
			       (unsigned long long)r.st.ec_decodes,
			       (unsigned long long)r.st.ec_recovered, r.retx_msgs,
			       r.decode_err ? "  DECODE REFUSED (engine bug)" : "");
		printf("packets     sent %llu  retx %llu (rto %llu, nack %llu, spurious %llu)  dups at the receiver %llu  acks %llu  nacks %llu\n",
		       (unsigned long long)r.st.tx_pkts, (unsigned long long)r.st.retx_pkts,
		       (unsigned long long)r.st.timeouts, (unsigned long long)r.st.nack_lost,
		       (unsigned long long)r.st.spurious, (unsigned long long)r.st.rx_dup,
		       (unsigned long long)r.st.acks_tx,
		       (unsigned long long)r.st.nacks_tx);
		if (p.policy == SIM_ADAPTIVE) {
			char b5[32];

			printf("learned     reorder %s  NACK interval %s  tail wait %s  gap %s  srtt %s;  late NACKs %llu  tail probes %llu\n",
			       fmt_time(r.reorder_ns, b1, sizeof(b1)),
			       fmt_time(r.nack_iv_ns, b2, sizeof(b2)),
			       fmt_time(r.tail_wait_ns, b3, sizeof(b3)),
			       fmt_time((double)r.ad.gap_ns, b4, sizeof(b4)),
			       fmt_time((double)r.ad.peer_rtt_ns, b5, sizeof(b5)),
			       (unsigned long long)r.st.nack_late,
			       (unsigned long long)r.st.tail_probes);
		}
		if (p.nflows > 1)
			printf("load        %u flows, queue %llu B: %.1f%% of the link delivered; "
			       "queue drops %llu, wire drops %llu, mean wait %s, peak %.0f B; "
			       "flows %.3f-%.3f Gbit/s\n",
			       p.nflows, (unsigned long long)r.load.queue_bytes,
			       100 * r.load.util, (unsigned long long)r.load.queue_drops,
			       (unsigned long long)r.load.wire_drops,
			       fmt_time(r.load.queue_mean_ns, b1, sizeof(b1)),
			       r.load.queue_peak_bytes, r.load.flow_min_bps / 1e9,
			       r.load.flow_max_bps / 1e9);
		if (p.stall_ns && p.stall_every_ns)
			printf("stalls      receiver stalls %s every %s on average: %llu events held back\n",
			       fmt_time((double)p.stall_ns, b1, sizeof(b1)),
			       fmt_time((double)p.stall_every_ns, b2, sizeof(b2)),
			       (unsigned long long)r.stalls);
		for (i = 0; p.npaths > 1 && i < p.npaths; i++)
			printf("path %u      +%s, loss +%g: %llu packets sent, %llu lost (%u%%), srtt %s;  drained %llu, restored %llu, %s\n",
			       i, fmt_time((double)p.path_owd_ns[i], b1, sizeof(b1)),
			       p.path_loss[i], (unsigned long long)r.path[i].tx_pkts,
			       (unsigned long long)r.path[i].lost, r.path[i].loss_pct,
			       fmt_time((double)r.path[i].rtt.srtt_ns, b2, sizeof(b2)),
			       (unsigned long long)r.path[i].drains,
			       (unsigned long long)r.path[i].restores,
			       path_state[r.path[i].state]);
		printf("engine      srtt %s  rto %s;  %u done, %u failed;  %llu events, %.2f s CPU\n",
		       fmt_time(r.srtt_ns, b1, sizeof(b1)), fmt_time(r.rto_ns, b2, sizeof(b2)),
		       r.n, r.failed, (unsigned long long)r.events, r.cpu_s);
	}
	sim_result_free(&r);
	return r.failed ? 1 : 0;
}
