// SPDX-License-Identifier: GPL-2.0
/*
 * sdr_perf: perftest-style bandwidth and completion-time benchmark over
 * /dev/sdr.  The server receives, the client sends:
 *
 *   server:  sdr_perf -d rxe1 [opts]
 *   client:  sdr_perf -d rxe0 [opts] SERVER_IP
 *
 * A TCP connection (port -p, default 18515) carries the parameters, the
 * endpoint blobs, receive credits during the run (so a message is sent only
 * once its receive is posted: the NONE policy drops what has no receive),
 * the sender's final count and both sides' results.  See
 * Documentation/sdr_perf.rst.
 *
 * Exit status: 0 ok, 1 error, 2 usage or policy unsupported, 3 verify error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "libsdr.h"

#define DEFAULT_PORT	18515
#define DEFAULT_INFLIGHT 16
#define GIVEUP_US	(3 * 1000000LL)		/* receiver: no completion after DONE */
#define STALL_US	(60 * 1000000LL)	/* any side: no progress at all */
#define CTL_TIMEOUT_MS	30000
#define PERF_MAGIC	0x46524453u		/* "SDRF" */
#define PERF_VERSION	5	/* 2: struct result has spurious; 3: paths; 4: rails;
				 * 5: auth */
#define MB		1048576.0		/* MB/s as perftest reports it */

enum { EXIT_OK = 0, EXIT_ERR = 1, EXIT_USAGE = 2, EXIT_VERIFY = 3 };

struct opts {
	const char *dev;
	const char *server;	/* NULL: we are the server */
	uint16_t port;
	uint64_t size;
	uint64_t count;		/* 0 with duration */
	uint32_t duration_s;
	uint32_t policy;
	uint32_t chunk;
	uint32_t inflight;
	uint32_t mtu;
	uint32_t ec_k, ec_m;	/* 0: the kernel's default */
	uint32_t paths;		/* 0: one (per rail) */
	uint32_t nrails;	/* devices in --rails, 0: none given */
	uint32_t auth;		/* SDR_AUTH_*: 0 the kernel's default */
	int64_t rate_mbit;	/* the sender's fixed rate; -1: the kernel's */
	char rails[SDR_RAILS_MAX][SDR_DEVNAME_LEN];	/* [0] is dev */
	bool verify;
	bool json;
	bool quiet;
	FILE *times;		/* --times: each message's completion time */
};

/* Round 1 of the handshake, both directions (the server's is informative). */
struct hello {
	uint32_t magic, version;
	int32_t status;		/* -errno of the sender's flow creation, or 0 */
	uint32_t policy, chunk, inflight, mtu, verify;
	uint64_t size, count;
	uint32_t duration_s, paths, nrails, auth;
};

/* Round 2: the endpoint, after both know the parameters. */
struct hello2 {
	int32_t status;
	uint32_t pad;
	struct sdr_flow_peer peer;	/* endpoint, QPNs it sends from, auth */
	struct sdr_rail_ep rails[SDR_RAILS_MAX - 1];	/* rails 1.. */
};

/* Control records during and after the run: fixed size. */
enum { CTL_CREDIT = 1, CTL_DONE = 2, CTL_RESULT = 3 };

struct result {
	uint64_t messages;	/* sender: sent; receiver: completed */
	uint64_t bytes;		/* sender: sent; receiver: in completed chunks */
	uint64_t ok, partial, failed;
	uint64_t chunks_missing, verify_errors;
	uint64_t retransmits, tx_packets, rx_packets, rx_dropped;
	uint64_t spurious;	/* retransmissions the original made useless */
	uint64_t parity_sent, recovered;	/* EC */
	uint64_t usec;		/* measured interval */
	uint64_t p50, p99, p999, max;	/* completion times, us */
};

struct ctl {
	uint32_t type, pad;
	union {
		uint64_t v;		/* CREDIT: receives posted; DONE: sent */
		struct result r;
	};
};

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sdr_perf: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- the verify pattern: a function of message number and offset ---- */

static inline uint64_t pattern_word(uint32_t msg, uint64_t word)
{
	uint64_t x = word * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)msg << 32 | msg);

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 32;
	return x;
}

static void pattern_fill(uint8_t *p, uint32_t msg, uint64_t len)
{
	uint64_t w, i;

	for (i = 0; i + 8 <= len; i += 8) {
		w = pattern_word(msg, i / 8);
		memcpy(p + i, &w, 8);
	}
	if (i < len) {
		w = pattern_word(msg, i / 8);
		memcpy(p + i, &w, len - i);
	}
}

/* Bytes [off, off+len) of message msg as found at p: true if right. */
static bool pattern_ok(const uint8_t *p, uint32_t msg, uint64_t off, uint64_t len)
{
	uint64_t i = 0, w;

	/* Unaligned head, then whole words, then the tail. */
	while (i < len && (off + i) % 8) {
		w = pattern_word(msg, (off + i) / 8);
		if (p[i] != (uint8_t)(w >> ((off + i) % 8 * 8)))
			return false;
		i++;
	}
	for (; i + 8 <= len; i += 8) {
		w = pattern_word(msg, (off + i) / 8);
		if (memcmp(p + i, &w, 8))
			return false;
	}
	if (i < len) {
		w = pattern_word(msg, (off + i) / 8);
		if (memcmp(p + i, &w, len - i))
			return false;
	}
	return true;
}

/* ---- the control connection ---- */

static int sock_fd = -1;
static uint8_t ctl_buf[sizeof(struct ctl)];
static size_t ctl_have;

static int send_all(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(sock_fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pf = { sock_fd, POLLOUT, 0 };

				poll(&pf, 1, 100);
				continue;
			}
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int ctl_send(uint32_t type, uint64_t v, const struct result *r)
{
	struct ctl c;

	memset(&c, 0, sizeof(c));
	c.type = type;
	if (r)
		c.r = *r;
	else
		c.v = v;
	return send_all(&c, sizeof(c));
}

/*
 * One control record if it is there within timeout_ms: 1 got one, 0 not
 * yet, negative errno (-ECONNRESET when the peer closed).
 */
static int ctl_recv(struct ctl *out, int timeout_ms)
{
	int64_t end = now_us() + (int64_t)timeout_ms * 1000;

	for (;;) {
		struct pollfd pf = { sock_fd, POLLIN, 0 };
		int64_t left = (end - now_us()) / 1000;
		ssize_t n;
		int r;

		if (ctl_have == sizeof(ctl_buf)) {
			memcpy(out, ctl_buf, sizeof(*out));
			ctl_have = 0;
			return 1;
		}
		r = poll(&pf, 1, left > 0 ? (int)left : 0);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0) {
			if (now_us() >= end)
				return 0;
			continue;
		}
		n = recv(sock_fd, ctl_buf + ctl_have, sizeof(ctl_buf) - ctl_have,
			 MSG_DONTWAIT);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		ctl_have += (size_t)n;
	}
}

/* ---- statistics ---- */

struct lat {
	uint32_t *us;
	size_t n, cap;
};

static void lat_add(struct lat *l, int64_t us)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4096;
		l->us = realloc(l->us, l->cap * sizeof(*l->us));
		if (!l->us)
			die(EXIT_ERR, "out of memory");
	}
	l->us[l->n++] = us < 0 ? 0 : us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile. */
static uint64_t pct(const struct lat *l, double p)
{
	size_t k;

	if (!l->n)
		return 0;
	k = (size_t)(p / 100.0 * l->n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > l->n)
		k = l->n;
	return l->us[k - 1];
}

static void lat_finish(struct lat *l, struct result *r)
{
	qsort(l->us, l->n, sizeof(*l->us), cmp_u32);
	r->p50 = pct(l, 50);
	r->p99 = pct(l, 99);
	r->p999 = pct(l, 99.9);
	r->max = l->n ? l->us[l->n - 1] : 0;
}

/* ---- options ---- */

/*
 * The policies the loaded sdr.ko runs (SDR_IOC_QUERY), joined by sep;
 * false, with every defined policy in buf, when it cannot say.
 */
static bool kernel_policies(const char *sep, char *buf, size_t len)
{
	struct sdr_caps caps;
	bool known = !sdr_query(NULL, &caps);

	sdr_policy_list(known ? caps.policies : (1ULL << SDR_POLICY_NR) - 1,
			sep, buf, len);
	return known;
}

static void usage(FILE *f)
{
	char pols[128];

	/* the choices: what this sdr.ko runs */
	kernel_policies("|", pols, sizeof(pols));
	fprintf(f,
"usage: sdr_perf -d DEV [options]               (server: receives)\n"
"       sdr_perf -d DEV [options] SERVER_IP     (client: sends)\n"
"  -d, --ib-dev=DEV       RDMA device name or GID (required)\n"
"  -p, --port=PORT        TCP port of the control connection (default %d)\n"
"  -s, --size=BYTES       message size, K/M/G suffixes (default 1M)\n"
"  -n, --iters=COUNT      messages to send (default 1000)\n"
"  -D, --duration=SEC     send for SEC seconds instead of a count\n"
"  -P, --policy=POLICY    %s (default none)\n"
"  -c, --chunk=BYTES      bitmap chunk size (default: the kernel's)\n"
"  -m, --max-msgs=N       messages in flight / receive slots (default %d)\n"
"  -k, --ec-k=K           EC: data packets per submessage (default: the kernel's)\n"
"  -M, --ec-m=M           EC: parity packets per submessage (default: the kernel's)\n"
"      --paths=N          spread the flow over N QPs of the device (default 1)\n"
"      --rails=DEV,DEV... spread it over these devices, N QPs each (the first\n"
"                         is the flow's own, instead of -d; the peer names\n"
"                         as many of its own)\n"
"      --mtu=BYTES        flow MTU (default: the port's)\n"
"      --auth=on|off|vmac64|aead  authenticated packets (default: the\n"
"                         kernel's, normally vmac64); aead also encrypts\n"
"                         every payload; off only for a trusted fabric\n"
"      --secret-file=PATH the job secret (16..4096 bytes) both ends hold:\n"
"                         only its holders connect (also SDR_SECRET_FILE)\n"
"      --rate=MBIT        the sender's rate, Mbit/s of sdr packets, fixed (a\n"
"                         dedicated link); 0: the path's, measured (default:\n"
"                         the kernel's rate_mbit, normally 0)\n"
"      --verify           fill and check every byte (exit 3 on a mismatch)\n"
"      --json             one JSON object on the last line of stdout\n"
"      --times=PATH       each message's completion time (the client: send\n"
"                         post to send completion; the server: receive post\n"
"                         to receive completion), microseconds, one a line,\n"
"                         in completion order, into PATH\n"
"  -q, --quiet            no progress line\n"
"  -h, --help\n"
"Client-side parameters win: the server takes size, count, policy, chunk,\n"
"max-msgs, mtu, paths, auth and verify from the client; EC geometry is the sender's.\n",
		DEFAULT_PORT, pols, DEFAULT_INFLIGHT);
}

static uint64_t parse_size(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		goto bad;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end == 'i' || *end == 'B')
		end++;
	if (*end == 'B')
		end++;
	if (*end)
		goto bad;
	return v;
bad:
	fprintf(stderr, "sdr_perf: bad %s '%s'\n", what, s);
	usage(stderr);
	exit(EXIT_USAGE);
}

/* --rails=DEV,DEV...: 2..SDR_RAILS_MAX device names, none twice. */
static void parse_rails(const char *arg, struct opts *o)
{
	const char *p = arg, *end;
	size_t n;
	uint32_t i;

	o->nrails = 0;
	for (;;) {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		if (!n || n >= SDR_DEVNAME_LEN || o->nrails == SDR_RAILS_MAX)
			die(EXIT_USAGE, "rails must be 2..%d device names, comma-separated",
			    SDR_RAILS_MAX);
		memcpy(o->rails[o->nrails], p, n);
		o->rails[o->nrails][n] = 0;
		for (i = 0; i < o->nrails; i++)
			if (!strcmp(o->rails[i], o->rails[o->nrails]))
				die(EXIT_USAGE, "rail %s named twice", o->rails[i]);
		o->nrails++;
		if (!end)
			break;
		p = end + 1;
	}
	if (o->nrails < 2)
		die(EXIT_USAGE, "rails must be 2..%d device names, comma-separated",
		    SDR_RAILS_MAX);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_MTU = 256, O_VERIFY, O_JSON, O_PATHS, O_RAILS, O_AUTH, O_RATE,
	       O_SECRET, O_TIMES };
	static const struct option lo[] = {
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'D' },
		{ "policy", required_argument, NULL, 'P' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "max-msgs", required_argument, NULL, 'm' },
		{ "ec-k", required_argument, NULL, 'k' },
		{ "ec-m", required_argument, NULL, 'M' },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "paths", required_argument, NULL, O_PATHS },
		{ "rails", required_argument, NULL, O_RAILS },
		{ "verify", no_argument, NULL, O_VERIFY },
		{ "auth", required_argument, NULL, O_AUTH },
		{ "rate", required_argument, NULL, O_RATE },
		{ "secret-file", required_argument, NULL, O_SECRET },
		{ "json", no_argument, NULL, O_JSON },
		{ "times", required_argument, NULL, O_TIMES },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = DEFAULT_PORT;
	o->size = 1 << 20;
	o->count = 1000;
	o->inflight = DEFAULT_INFLIGHT;
	o->rate_mbit = -1;
	while ((c = getopt_long(argc, argv, "d:p:s:n:D:P:c:m:k:M:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'p':
			v = parse_size(optarg, "port");
			if (!v || v > 65535)
				die(EXIT_USAGE, "bad port '%s'", optarg);
			o->port = (uint16_t)v;
			break;
		case 's': o->size = parse_size(optarg, "size"); break;
		case 'n': o->count = parse_size(optarg, "count"); o->duration_s = 0; break;
		case 'D':
			v = parse_size(optarg, "duration");
			if (!v || v > 86400)
				die(EXIT_USAGE, "bad duration '%s'", optarg);
			o->duration_s = (uint32_t)v;
			o->count = 0;
			break;
		case 'P':
			if (sdr_policy_parse(optarg, &o->policy)) {
				char pols[128];

				kernel_policies("|", pols, sizeof(pols));
				die(EXIT_USAGE, "unknown policy '%s' (%s)", optarg, pols);
			}
			break;
		case 'c':
			v = parse_size(optarg, "chunk size");
			if (v > UINT32_MAX)
				die(EXIT_USAGE, "chunk size too large");
			o->chunk = (uint32_t)v;
			break;
		case 'm':
			v = parse_size(optarg, "max-msgs");
			if (!v || v > 1024)
				die(EXIT_USAGE, "max-msgs must be 1..1024");
			o->inflight = (uint32_t)v;
			break;
		case 'k':
		case 'M':
			/* the range is the kernel's to check (sdr_query) */
			v = parse_size(optarg, c == 'k' ? "ec-k" : "ec-m");
			if (!v || v > 255)
				die(EXIT_USAGE, "%s must be 1..255", c == 'k' ? "ec-k" : "ec-m");
			*(c == 'k' ? &o->ec_k : &o->ec_m) = (uint32_t)v;
			break;
		case O_MTU:
			v = parse_size(optarg, "mtu");
			if (v > 4096)
				die(EXIT_USAGE, "mtu must be at most 4096");
			o->mtu = (uint32_t)v;
			break;
		case O_PATHS:
			/* the range is the kernel's to check (sdr_query) */
			v = parse_size(optarg, "paths");
			if (!v || v > SDR_PATHS_MAX)
				die(EXIT_USAGE, "paths must be 1..%d", SDR_PATHS_MAX);
			o->paths = (uint32_t)v;
			break;
		case O_RAILS:
			parse_rails(optarg, o);
			break;
		case O_AUTH:
			if (!strcmp(optarg, "on"))
				o->auth = SDR_AUTH_VMAC64;
			else if (!strcmp(optarg, "off"))
				o->auth = SDR_AUTH_OFF;
			else if (!strcmp(optarg, "vmac64"))
				o->auth = SDR_AUTH_VMAC64;
			else if (!strcmp(optarg, "aead"))
				o->auth = SDR_AUTH_AEAD;
			else
				die(EXIT_USAGE, "--auth must be on, off, vmac64 or aead");
			break;
		case O_SECRET:
			/* libsdr's sdr_open() reads it, for every context */
			if (setenv("SDR_SECRET_FILE", optarg, 1))
				die(EXIT_USAGE, "--secret-file: %s", strerror(errno));
			break;
		case O_RATE:
			v = parse_size(optarg, "rate");
			if (v > SDR_RATE_MAX_MBIT)
				die(EXIT_USAGE, "rate must be 0..%d Mbit/s", SDR_RATE_MAX_MBIT);
			o->rate_mbit = (int64_t)v;
			break;
		case O_VERIFY: o->verify = true; break;
		case O_JSON: o->json = true; break;
		case O_TIMES:
			/* opened now: a bad path fails before any transfer */
			if (o->times)
				fclose(o->times);
			o->times = fopen(optarg, "w");
			if (!o->times)
				die(EXIT_USAGE, "--times: %s: %s", optarg,
				    strerror(errno));
			break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); exit(EXIT_OK);
		default: usage(stderr); exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		o->server = argv[optind++];
	if (o->nrails)
		o->dev = o->rails[0];
	if (optind < argc || !o->dev) {
		if (!o->dev)
			fprintf(stderr, "sdr_perf: -d DEV is required\n");
		usage(stderr);
		exit(EXIT_USAGE);
	}
	if (!o->size || o->size > (1ULL << 30))
		die(EXIT_USAGE, "size must be 1..1G");
	if (!o->duration_s && !o->count)
		die(EXIT_USAGE, "count must be at least 1");
}

/* ---- flow setup ---- */

static struct sdr_flow *make_flow(struct sdr_ctx *ctx, const struct opts *o,
				  int *err)
{
	struct sdr_flow_attr fa = {
		.policy = o->policy, .mtu = o->mtu, .chunk_size = o->chunk,
		.max_msg_size = (uint32_t)o->size, .max_msgs = o->inflight,
		.ec_k = (uint8_t)o->ec_k, .ec_m = (uint8_t)o->ec_m,
		.paths = (uint8_t)o->paths, .auth = (uint8_t)o->auth,
	};
	struct sdr_flow *f = sdr_flow_create(ctx, &fa);

	*err = f ? 0 : -errno;
	if (f && o->rate_mbit >= 0) {
		*err = sdr_flow_set_rate(f, (uint32_t)o->rate_mbit);
		if (*err) {
			sdr_flow_destroy(f);
			f = NULL;
		}
	}
	return f;
}

/*
 * Report a failed flow creation and exit with the matching status.  @who
 * is "" for ours, else the peer's ("client: ", "server: "), whose module
 * may run other policies than ours.
 */
static void flow_error(const struct opts *o, int err, const char *who)
{
	char pols[128];

	if (err == -EOPNOTSUPP && !*who && kernel_policies(", ", pols, sizeof(pols)))
		die(EXIT_USAGE, "policy '%s' is not supported by this sdr.ko (%s); "
		    "it runs %s", sdr_policy_str(o->policy), strerror(-err), pols);
	if (err == -EOPNOTSUPP)
		die(EXIT_USAGE, "%spolicy '%s' is not supported by %s sdr.ko (%s)",
		    who, sdr_policy_str(o->policy), *who ? "its" : "this",
		    strerror(-err));
	if (err == -EINVAL && o->policy >= SDR_POLICY_NR &&
	    o->policy != SDR_POLICY_DEFAULT)
		die(EXIT_USAGE, "%spolicy %u is not defined (%s)", who, o->policy,
		    strerror(-err));
	if (err == -EINVAL && !*who && (o->ec_k || o->ec_m)) {
		struct sdr_caps caps;

		if (!sdr_query(NULL, &caps) &&
		    (o->ec_k > caps.ec_max_k || o->ec_m > caps.ec_max_m))
			die(EXIT_USAGE, "EC geometry k %u m %u out of range: this sdr.ko takes k 1..%u, m 1..%u",
			    o->ec_k, o->ec_m, caps.ec_max_k, caps.ec_max_m);
	}
	if (err == -EINVAL && o->paths > 1) {
		struct sdr_caps caps;

		if (!sdr_query(NULL, &caps) && o->paths > caps.paths_max)
			die(EXIT_USAGE, "%s%u paths: this sdr.ko gives a flow at most %u (module parameter dev_paths)",
			    who, o->paths, caps.paths_max);
	}
	if (err == -ENOMEM)
		die(EXIT_ERR, "%scannot allocate %u x %" PRIu64 " byte regions "
		    "(lower -m or -s, or raise sdr.ko max_region_mb)", who,
		    o->inflight, o->size);
	die(EXIT_ERR, "%sflow create: %s", who, strerror(-err));
}

/* ---- the sender (client) ---- */

/* The per-path figures shown (flows/<id>/path/, one value per path). */
static const char *const pathfig_names[] = {
	"qpn", "state", "tx_packets", "acked", "lost", "loss_pct", "srtt_us",
	"drains", "restores",
};
#define NPATHFIG (sizeof(pathfig_names) / sizeof(pathfig_names[0]))

struct run {
	struct opts o;
	struct sdr_ctx *ctx;
	struct sdr_flow *flow;
	struct sdr_flow_props fp;
	struct result me, peer;
	uint32_t ec_k, ec_m;	/* the flow's EC geometry */
	char auto_choice[64];	/* AUTO: what it chose last, or "" */
	char auto_decisions[24], auto_switches[24];
	char pathfig[NPATHFIG][128];	/* flows/<id>/paths/<figure> */
	bool have_peer;
	struct lat lat;
	int64_t t_start, t_end;
};

static void progress(const struct run *r, uint64_t msgs, uint64_t bytes,
		     int64_t *last)
{
	int64_t t = now_us();

	if (r->o.quiet || t - r->t_start < 3000000 || t - *last < 2000000)
		return;
	*last = t;
	fprintf(stderr, "sdr_perf: %6.1f s  %10" PRIu64 " msgs  %9.2f MB/s\n",
		(t - r->t_start) / 1e6, msgs, bytes / MB / ((t - r->t_start) / 1e6));
}

static void run_sender(struct run *r)
{
	struct opts *o = &r->o;
	uint32_t n = r->fp.max_msgs, nfree = n, *free_slots;
	int64_t *t_post, deadline = 0, last_prog = 0, last_progress;
	uint64_t limit = o->count ? o->count : UINT64_MAX;
	uint64_t credits = 0, sent = 0, sdone = 0, sbytes = 0;
	struct ctl c;
	uint32_t i;
	int ret;

	free_slots = calloc(n, sizeof(*free_slots));
	t_post = calloc(n, sizeof(*t_post));
	if (!free_slots || !t_post)
		die(EXIT_ERR, "out of memory");
	for (i = 0; i < n; i++) {
		free_slots[i] = n - 1 - i;
		if (!o->verify)	/* fixed content once: the copy is not the test */
			memset(sdr_send_slot(r->flow, i), 0x5a, o->size);
	}
	r->t_start = now_us();
	last_progress = r->t_start;
	if (o->duration_s)
		deadline = r->t_start + (int64_t)o->duration_s * 1000000;

	for (;;) {
		struct sdr_completion cq[32];
		int k, got;
		bool moved = false;

		while ((ret = ctl_recv(&c, 0)) > 0) {
			if (c.type == CTL_CREDIT && c.v > credits)
				credits = c.v;
			/* Under SR the receiver may finish first: keep its report. */
			if (c.type == CTL_RESULT) {
				r->peer = c.r;
				r->have_peer = true;
			}
		}
		if (ret < 0)
			die(EXIT_ERR, "control connection: %s", strerror(-ret));
		if ((deadline && now_us() >= deadline) || interrupted)
			limit = sent;
		while (sent < limit && sent < credits && nfree) {
			uint32_t slot = free_slots[nfree - 1];
			uint64_t off = (uint64_t)slot * r->fp.slot_stride;

			if (o->verify)
				pattern_fill(sdr_send_slot(r->flow, slot), (uint32_t)sent, o->size);
			/*
			 * The clock starts before the post: the call itself
			 * may send (the kernel posts what the flow's window
			 * allows before it returns), and that is part of the
			 * message's time.
			 */
			t_post[slot] = now_us();
			/* user_data carries the slot; seq order is post order. */
			ret = sdr_flow_send_post(r->flow, off, o->size, (uint32_t)sent,
					    slot, NULL);
			if (ret == -EAGAIN)
				break;
			if (ret == -EPIPE)
				die(EXIT_ERR, "send: the peer closed the flow");
			if (ret)
				die(EXIT_ERR, "send post: %s", strerror(-ret));
			nfree--;
			sent++;
			moved = true;
		}
		got = sdr_flow_send_poll(r->flow, cq, 32);
		if (got < 0)
			die(EXIT_ERR, "send poll: %s", strerror(-got));
		for (k = 0; k < got; k++) {
			uint32_t slot = (uint32_t)cq[k].user_data;

			if (slot >= n)
				die(EXIT_ERR, "bad completion user_data %" PRIu64, cq[k].user_data);
			lat_add(&r->lat, now_us() - t_post[slot]);
			free_slots[nfree++] = slot;
			sdone++;
			if (cq[k].status == SDR_STATUS_OK) {
				r->me.ok++;
				sbytes += cq[k].len;
			} else {
				r->me.failed++;
			}
			moved = true;
		}
		if (moved)
			last_progress = now_us();
		if (sent == limit && sdone == sent)
			break;
		if (now_us() - last_progress > STALL_US)
			die(EXIT_ERR, "no progress for %lld s (%" PRIu64 " sent, %" PRIu64
			    " completed, %" PRIu64 " credits)", STALL_US / 1000000,
			    sent, sdone, credits);
		progress(r, sdone, sbytes, &last_prog);
		if (!got && !moved)
			sdr_wait(r->ctx, 1);
	}
	r->t_end = now_us();
	r->me.messages = sent;
	r->me.bytes = sbytes;
	ret = ctl_send(CTL_DONE, sent, NULL);
	if (ret)
		die(EXIT_ERR, "control connection: %s", strerror(-ret));
	free(free_slots);
	free(t_post);
}

/* ---- the receiver (server) ---- */

static void check_recv(struct run *r, struct sdr_recv *h, uint32_t msg,
		       const struct sdr_completion *c)
{
	uint32_t chunks = 0, k, imm = 0, len = 0;
	uint64_t cs = r->fp.chunk_size;
	const uint8_t *data = sdr_recv_data(h);

	if (c->status != SDR_STATUS_OK && c->status != SDR_STATUS_PARTIAL) {
		r->me.failed++;
		return;
	}
	/* a NONE receive may complete with nothing of its message: a loss */
	if (c->status == SDR_STATUS_PARTIAL &&
	    sdr_recv_imm(h, &imm, &len) == -EAGAIN) {
		r->me.partial++;
		r->me.chunks_missing += (r->o.size + cs - 1) / cs;
		return;
	}
	if (sdr_recv_imm(h, &imm, &len) || imm != msg || len != r->o.size) {
		fprintf(stderr, "sdr_perf: message %u: imm %u len %u (want %u %" PRIu64 ")\n",
			msg, imm, len, msg, r->o.size);
		r->me.verify_errors++;
	}
	if (sdr_recv_bitmap(h, NULL, &chunks)) {
		r->me.failed++;
		return;
	}
	if (c->status == SDR_STATUS_OK)
		r->me.ok++;
	else
		r->me.partial++;
	for (k = 0; k < chunks; k++) {
		uint64_t off = k * cs, cl = len - off < cs ? len - off : cs;

		if (sdr_recv_chunk_done(h, k) != 1) {
			r->me.chunks_missing++;
			continue;
		}
		r->me.bytes += cl;
		if (r->o.verify && !pattern_ok(data + off, msg, off, cl)) {
			if (!r->me.verify_errors)
				fprintf(stderr, "sdr_perf: message %u chunk %u: "
					"content mismatch\n", msg, k);
			r->me.verify_errors++;
		}
	}
}

static void run_receiver(struct run *r)
{
	struct opts *o = &r->o;
	uint32_t n = r->fp.max_msgs;
	uint64_t count = o->count ? o->count : UINT64_MAX;	/* known after DONE */
	uint64_t posted = 0, done = 0, credited = 0;
	struct sdr_recv **rh;
	int64_t *t_post, last_progress, last_prog = 0, done_at = 0;
	bool have_done = false;
	struct ctl c;
	int ret;

	rh = calloc(n, sizeof(*rh));
	t_post = calloc(n, sizeof(*t_post));
	if (!rh || !t_post)
		die(EXIT_ERR, "out of memory");
	r->t_start = now_us();
	last_progress = r->t_start;

	for (;;) {
		struct sdr_completion cq[32];
		int k, got;

		while (posted < count && posted - done < n) {
			struct sdr_recv *h;
			uint32_t slot;

			ret = sdr_flow_recv_post(r->flow, posted, &h);
			if (ret == -EAGAIN)
				break;
			if (ret)
				die(EXIT_ERR, "recv post: %s", strerror(-ret));
			slot = sdr_recv_slot(h);
			rh[slot] = h;
			t_post[slot] = now_us();
			posted++;
		}
		if (posted != credited) {
			ret = ctl_send(CTL_CREDIT, posted, NULL);
			if (ret)
				die(EXIT_ERR, "control connection: %s", strerror(-ret));
			credited = posted;
		}
		got = sdr_poll_cq(r->ctx, cq, 32);
		if (got < 0)
			die(EXIT_ERR, "poll: %s", strerror(-got));
		for (k = 0; k < got; k++) {
			uint64_t idx = cq[k].user_data;
			uint32_t slot = cq[k].slot;

			if (cq[k].type != SDR_CQE_RECV)
				continue;
			/*
			 * Receives take messages in post order, but a partial
			 * one may complete after a later whole one.
			 */
			if (slot >= n || !cq[k].recv || rh[slot] != cq[k].recv ||
			    idx >= posted)
				die(EXIT_ERR, "completion for message %" PRIu64
				    " slot %u matches no posted receive", idx, slot);
			lat_add(&r->lat, now_us() - t_post[slot]);
			check_recv(r, cq[k].recv, (uint32_t)idx, &cq[k]);
			ret = sdr_recv_release(cq[k].recv);
			if (ret)
				die(EXIT_ERR, "recv complete: %s", strerror(-ret));
			rh[slot] = NULL;
			done++;
			r->t_end = now_us();
			last_progress = r->t_end;
		}
		while (!have_done && (ret = ctl_recv(&c, 0)) > 0) {
			if (c.type == CTL_DONE) {
				have_done = true;
				count = c.v;
				done_at = now_us();
			}
		}
		if (!have_done && ret < 0)
			die(EXIT_ERR, "control connection: %s", strerror(-ret));
		if (done >= count)
			break;
		if (have_done && now_us() - last_progress > GIVEUP_US &&
		    now_us() - done_at > GIVEUP_US) {
			fprintf(stderr, "sdr_perf: no completion for %lld s: giving up on "
				"%" PRIu64 " messages\n", GIVEUP_US / 1000000, count - done);
			r->me.failed += count - done;
			break;
		}
		if (now_us() - last_progress > STALL_US)
			die(EXIT_ERR, "no message for %lld s (%" PRIu64 " received)",
			    STALL_US / 1000000, done);
		progress(r, done, r->me.bytes, &last_prog);
		if (!got)
			sdr_wait(r->ctx, 1);
	}
	if (!r->t_end)
		r->t_end = now_us();
	r->me.messages = done;
	/* Receives posted beyond the count, or given up on: hand back. */
	for (uint32_t i = 0; i < n; i++)
		if (rh[i])
			sdr_recv_release(rh[i]);
	free(rh);
	free(t_post);
}

/* ---- reporting ---- */

/* One sysfs value of the flow (flows/<id>/<name>), newline cut; "" if none. */
static void flow_attr(struct run *r, const char *name, char *buf, size_t len)
{
	struct sdr_ctx_info ci;
	char path[256];
	FILE *f;

	buf[0] = 0;
	if (sdr_ctx_query(r->ctx, &ci))
		return;
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/%s", ci.ibdev,
		 r->fp.flow_id, name);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/* Value @i (space separated) of figure @fig, into @out; false if none. */
static bool pathfig(const struct run *r, unsigned int fig, unsigned int i,
		    char *out, size_t len)
{
	const char *s = r->pathfig[fig];
	size_t n;

	while (i--) {
		s = strchr(s, ' ');
		if (!s)
			return false;
		s++;
	}
	n = strcspn(s, " \n");
	if (!n || n >= len)
		return false;
	memcpy(out, s, n);
	out[n] = 0;
	return true;
}

/* The flow's paths: --paths on each rail. */
static uint32_t npaths(const struct opts *o)
{
	return (o->paths ? o->paths : 1) * (o->nrails ? o->nrails : 1);
}

/* Per-path figures: a table, or a JSON array of objects. */
static void report_paths(const struct run *r, bool json)
{
	/* the columns of the header below */
	static const int width[NPATHFIG] = { 8, 8, 11, 10, 8, 9, 9, 7, 8 };
	char v[32];
	unsigned int i, f;

	if (json)
		printf(",\"paths\":[");
	else
		printf(" %-5s %-8s %-8s %-11s %-10s %-8s %-9s %-9s %-7s %-8s\n",
		       "path", "qpn", "state", "tx packets", "acked", "lost",
		       "loss [%]", "srtt [us]", "drains", "restores");
	for (i = 0; npaths(&r->o) > 1 && i < npaths(&r->o); i++) {
		if (json)
			printf("%s{\"path\":%u", i ? "," : "", i);
		else
			printf(" %-5u", i);
		for (f = 0; f < NPATHFIG; f++) {
			if (!pathfig(r, f, i, v, sizeof(v)))
				strcpy(v, "-");
			if (!json)
				printf(" %-*s", width[f], v);
			else if (f == 1 || !strcmp(v, "-"))
				printf(",\"%s\":\"%s\"", pathfig_names[f], v);
			else
				printf(",\"%s\":%s", pathfig_names[f], v);
		}
		printf(json ? "}" : "\n");
	}
	if (json)
		printf("]");
}

static void report(struct run *r)
{
	struct opts *o = &r->o;
	bool client = o->server != NULL;
	const struct result *rx = client ? (r->have_peer ? &r->peer : NULL) : &r->me;
	const struct result *tx = client ? &r->me : (r->have_peer ? &r->peer : NULL);
	double secs = (r->t_end - r->t_start) / 1e6;
	uint64_t delivered = rx ? rx->bytes : r->me.bytes;
	double mbps = secs > 0 ? delivered / MB / secs : 0;
	uint64_t messages = r->me.messages;
	uint64_t missing = rx ? rx->chunks_missing : 0;
	uint64_t failed = rx ? rx->failed : r->me.failed;
	uint64_t verr = rx ? rx->verify_errors : 0;
	uint64_t retx = tx ? tx->retransmits : 0;
	uint64_t spurious = tx ? tx->spurious : 0;
	uint64_t parity = tx ? tx->parity_sent : 0;
	uint64_t recovered = rx ? rx->recovered : 0;

	{
		printf("---------------------------------------------------------------------------------------\n");
		printf("                    SDR %s BW Test (%s side)\n", "Send",
		       client ? "client/sender" : "server/receiver");
		printf(" Device          : %s\n", o->dev);
		for (uint32_t i = 1; i < o->nrails; i++)
			printf(" Rail %u          : %s\n", i, o->rails[i]);
		printf(" Policy          : %s\n", sdr_policy_str(o->policy));
		printf(" MTU / payload   : %u / %u bytes\n", r->fp.mtu, r->fp.payload);
		printf(" Chunk size      : %u bytes (%u packets)\n", r->fp.chunk_size,
		       r->fp.chunk_size / r->fp.payload);
		printf(" Max in flight   : %u messages\n", r->fp.max_msgs);
		printf(" Verify          : %s\n", o->verify ? "on" : "off");
		printf(" Authentication  : %s, keys: %s\n",
		       sdr_auth_str(sdr_flow_auth(r->flow)),
		       sdr_kex_str(sdr_flow_kex(r->flow)));
		if (o->rate_mbit > 0)
			printf(" Rate            : %" PRId64 " Mbit/s, fixed\n", o->rate_mbit);
		else
			printf(" Rate            : the path's%s\n",
			       o->rate_mbit ? " (the kernel's default)" : "");
		printf(" Completion time : %s\n", client ?
		       "send post -> send completion (sender)" :
		       "receive post -> receive completion (receiver)");
		printf("---------------------------------------------------------------------------------------\n");
		printf(" %-10s %-11s %-9s %-12s %-10s %-10s %-11s %-10s\n", "#bytes",
		       "#messages", "seconds", "BW [MB/sec]", "p50 [us]", "p99 [us]",
		       "p99.9 [us]", "max [us]");
		printf(" %-10" PRIu64 " %-11" PRIu64 " %-9.3f %-12.2f %-10" PRIu64
		       " %-10" PRIu64 " %-11" PRIu64 " %-10" PRIu64 "\n",
		       o->size, messages, secs, mbps, r->me.p50, r->me.p99,
		       r->me.p999, r->me.max);
		printf("---------------------------------------------------------------------------------------\n");
		printf(" ok %" PRIu64 "  partial %" PRIu64 "  failed %" PRIu64
		       "  chunks missing %" PRIu64 "  verify errors %" PRIu64
		       "  retransmitted packets %" PRIu64 " (%" PRIu64 " spurious)%s\n",
		       rx ? rx->ok : 0, rx ? rx->partial : 0, failed, missing, verr,
		       retx, spurious, r->have_peer ? "" : "  (peer results missing)");
		if (o->policy == SDR_POLICY_EC)
			printf(" parity packets sent %" PRIu64
			       "  packets rebuilt from parity %" PRIu64
			       "  (k %u, m %u this side)\n",
			       parity, recovered, r->ec_k, r->ec_m);
		if (r->auto_choice[0])
			printf(" AUTO chose      : %s, %s decisions, %s switches\n",
			       r->auto_choice, r->auto_decisions, r->auto_switches);
		printf(" tx packets %" PRIu64 "  rx packets %" PRIu64
		       "  rx dropped %" PRIu64 " (this side)\n",
		       r->me.tx_packets, r->me.rx_packets, r->me.rx_dropped);
		if (npaths(o) > 1)
			report_paths(r, false);
		printf("---------------------------------------------------------------------------------------\n");
	}
	if (o->json) {
		printf("{\"role\":\"%s\",\"device\":\"%s\",\"policy\":\"%s\","
		       "\"auth\":\"%s\",\"kex\":\"%s\",\"rate_mbit\":%" PRId64 ","
		       "\"msg_bytes\":%" PRIu64 ",\"messages\":%" PRIu64
		       ",\"seconds\":%.6f,\"goodput_MBps\":%.3f,"
		       "\"completion_us\":{\"p50\":%" PRIu64 ",\"p99\":%" PRIu64
		       ",\"p999\":%" PRIu64 ",\"max\":%" PRIu64 "},"
		       "\"completion_time\":\"%s\","
		       "\"chunks_missing\":%" PRIu64 ",\"retransmitted_packets\":%" PRIu64
		       ",\"spurious_retransmits\":%" PRIu64
		       ",\"parity_packets\":%" PRIu64 ",\"recovered_packets\":%" PRIu64
		       ",\"failed_messages\":%" PRIu64 ",\"verify_errors\":%" PRIu64
		       ",\"partial_messages\":%" PRIu64 ",\"delivered_bytes\":%" PRIu64
		       ",\"sent_messages\":%" PRIu64 ",\"send_ok\":%" PRIu64
		       ",\"send_failed\":%" PRIu64 ",\"recv_ok\":%" PRIu64
		       ",\"chunk_size\":%u,\"mtu\":%u,\"payload\":%u,\"max_msgs\":%u,\"ec_k\":%u,\"ec_m\":%u"
		       ",\"peer_results\":%s,\"auto_choice\":\"%s\"",
		       client ? "client" : "server", o->dev, sdr_policy_str(o->policy),
		       sdr_auth_str(sdr_flow_auth(r->flow)),
		       sdr_kex_str(sdr_flow_kex(r->flow)), o->rate_mbit, o->size, messages, secs, mbps, r->me.p50, r->me.p99,
		       r->me.p999, r->me.max,
		       client ? "send_post_to_send_completion" : "recv_post_to_recv_completion",
		       missing, retx, spurious, parity, recovered, failed, verr, rx ? rx->partial : 0, delivered,
		       tx ? tx->messages : 0, tx ? tx->ok : 0, tx ? tx->failed : 0,
		       rx ? rx->ok : 0, r->fp.chunk_size, r->fp.mtu, r->fp.payload,
		       r->fp.max_msgs, r->ec_k, r->ec_m, r->have_peer ? "true" : "false",
		       r->auto_choice);
		printf(",\"paths_n\":%u,\"rails_n\":%u", npaths(o),
		       o->nrails ? o->nrails : 1);
		report_paths(r, true);
		printf("}\n");
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct hello mine, theirs;
	struct hello2 m2, t2;
	struct sdr_flow_info fi;
	struct run r;
	struct ctl c;
	bool client;
	unsigned int i;
	int err = 0, ret;

	memset(&r, 0, sizeof(r));
	parse_opts(argc, argv, &r.o);
	client = r.o.server != NULL;
	signal(SIGINT, on_sigint);
	signal(SIGPIPE, SIG_IGN);

	r.ctx = sdr_open(r.o.dev, NULL);
	if (!r.ctx)
		die(EXIT_ERR, "open %s: %s%s", r.o.dev, strerror(errno),
		    errno == ENOENT ? " (is sdr.ko loaded, and SDR_SECRET_FILE "
		    "readable if set?)" : "");

	/* Round 1: parameters.  The client creates its flow first. */
	if (client)
		r.flow = make_flow(r.ctx, &r.o, &err);
	memset(&mine, 0, sizeof(mine));
	mine.magic = PERF_MAGIC;
	mine.version = PERF_VERSION;
	mine.status = err;
	mine.policy = r.o.policy;
	mine.chunk = r.o.chunk;
	mine.inflight = r.o.inflight;
	mine.mtu = r.o.mtu;
	mine.verify = r.o.verify;
	mine.size = r.o.size;
	mine.count = r.o.count;
	mine.duration_s = r.o.duration_s;
	mine.paths = r.o.paths;
	mine.nrails = r.o.nrails;
	mine.auth = r.o.auth;
	if (!client && !r.o.quiet)
		fprintf(stderr, "sdr_perf: waiting for a client on port %u\n", r.o.port);
	ret = sdr_exchange_tcp(r.o.server, r.o.port, &mine, &theirs, sizeof(mine),
			       client ? CTL_TIMEOUT_MS : -1, &sock_fd);
	if (ret)
		die(EXIT_ERR, "control connection to %s port %u: %s",
		    client ? r.o.server : "(listening)", r.o.port, strerror(-ret));
	if (theirs.magic != PERF_MAGIC || theirs.version != PERF_VERSION)
		die(EXIT_ERR, "the peer is not a compatible sdr_perf");
	if (client && err)
		flow_error(&r.o, err, "");
	if (!client) {
		r.o.policy = theirs.policy;
		if (theirs.status)	/* the client already said why */
			flow_error(&r.o, theirs.status, "client: ");
		r.o.chunk = theirs.chunk;
		r.o.inflight = theirs.inflight;
		r.o.mtu = theirs.mtu;
		r.o.verify = theirs.verify;
		r.o.size = theirs.size;
		r.o.count = theirs.count;
		r.o.duration_s = theirs.duration_s;
		r.o.paths = theirs.paths;
		r.o.auth = theirs.auth;
		r.flow = make_flow(r.ctx, &r.o, &err);
	}
	if (theirs.nrails != r.o.nrails)
		die(EXIT_ERR, "this side has %u rails, the peer %u: give both as many",
		    r.o.nrails ? r.o.nrails : 1, theirs.nrails ? theirs.nrails : 1);

	/* Round 2: endpoints. */
	memset(&m2, 0, sizeof(m2));
	m2.status = err;
	if (r.flow)
		sdr_flow_peer_info(r.flow, &m2.peer);
	for (i = 1; r.flow && !err && i < r.o.nrails; i++) {
		ret = sdr_flow_rail_add(r.flow, r.o.rails[i], r.o.paths,
					&m2.rails[i - 1]);
		if (ret < 0)
			die(EXIT_ERR, "rail %s: %s", r.o.rails[i], strerror(-ret));
	}
	ret = send_all(&m2, sizeof(m2));
	if (!ret) {
		uint8_t *p = (uint8_t *)&t2;
		size_t have = 0;

		while (have < sizeof(t2)) {
			struct pollfd pf = { sock_fd, POLLIN, 0 };
			ssize_t n;

			if (poll(&pf, 1, CTL_TIMEOUT_MS) <= 0) {
				ret = -ETIMEDOUT;
				break;
			}
			n = recv(sock_fd, p + have, sizeof(t2) - have, 0);
			if (n <= 0) {
				ret = n ? -errno : -ECONNRESET;
				break;
			}
			have += (size_t)n;
		}
	}
	if (ret)
		die(EXIT_ERR, "endpoint exchange: %s", strerror(-ret));
	if (err)
		flow_error(&r.o, err, "");
	if (t2.status)
		flow_error(&r.o, t2.status, client ? "server: " : "client: ");
	for (i = 1; i < r.o.nrails; i++) {
		ret = sdr_flow_rail_connect(r.flow, i, &t2.rails[i - 1]);
		if (ret)
			die(EXIT_ERR, "connect rail %s: %s", r.o.rails[i],
			    strerror(-ret));
	}
	ret = sdr_flow_connect_peer(r.flow, &t2.peer);
	if (ret == -EKEYREJECTED && sdr_flow_kex(r.flow) != SDR_KEX_PSK)
		die(EXIT_ERR, "connect: %s: the peer holds a job secret and this "
		    "side none (--secret-file, SDR_SECRET_FILE)", strerror(-ret));
	if (ret == -EKEYREJECTED)
		die(EXIT_ERR, "connect: %s: the peer does not hold this job's "
		    "secret (--secret-file, SDR_SECRET_FILE)", strerror(-ret));
	if (ret)
		die(EXIT_ERR, "connect: %s", strerror(-ret));
	sdr_flow_props(r.flow, &r.fp);

	if (client)
		run_sender(&r);
	else
		run_receiver(&r);
	if (r.o.times) {
		size_t i;

		for (i = 0; i < r.lat.n; i++)
			fprintf(r.o.times, "%" PRIu32 "\n", r.lat.us[i]);
		if (fclose(r.o.times))
			die(EXIT_ERR, "--times: %s", strerror(errno));
		r.o.times = NULL;
	}
	lat_finish(&r.lat, &r.me);
	if (!sdr_flow_info(r.flow, &fi)) {
		r.me.retransmits = fi.retransmits;
		r.me.spurious = fi.spurious_retx;
		r.me.parity_sent = fi.parity_sent;
		r.me.recovered = fi.recovered;
		r.me.tx_packets = fi.tx_packets;
		r.me.rx_packets = fi.rx_packets;
		r.me.rx_dropped = fi.rx_dropped;
		r.ec_k = fi.ec_k;
		r.ec_m = fi.ec_m;
	}
	for (i = 0; npaths(&r.o) > 1 && i < NPATHFIG; i++) {
		char name[64];

		snprintf(name, sizeof(name), "path/%s", pathfig_names[i]);
		flow_attr(&r, name, r.pathfig[i], sizeof(r.pathfig[i]));
	}
	if (client && r.o.policy == SDR_POLICY_AUTO) {
		flow_attr(&r, "auto/choice", r.auto_choice, sizeof(r.auto_choice));
		flow_attr(&r, "auto/decisions", r.auto_decisions,
			  sizeof(r.auto_decisions));
		flow_attr(&r, "auto/switches", r.auto_switches,
			  sizeof(r.auto_switches));
	}
	r.me.usec = (uint64_t)(r.t_end - r.t_start);

	/* The final exchange: both report both views. */
	ret = ctl_send(CTL_RESULT, 0, &r.me);
	while (!ret && !r.have_peer) {
		ret = ctl_recv(&c, CTL_TIMEOUT_MS);
		if (ret == 1 && c.type == CTL_RESULT) {
			r.peer = c.r;
			r.have_peer = true;
			break;
		}
		if (ret == 1)
			ret = 0;	/* a late credit or done: skip */
		else if (ret == 0)
			ret = -ETIMEDOUT;
	}
	if (!r.have_peer)
		fprintf(stderr, "sdr_perf: no results from the peer: %s\n",
			strerror(-ret));
	report(&r);

	close(sock_fd);
	sdr_close(r.ctx);
	{
		const struct result *rx = client ? (r.have_peer ? &r.peer : NULL) : &r.me;

		if (rx && rx->verify_errors)
			return EXIT_VERIFY;
		if (!r.have_peer)
			return EXIT_ERR;
	}
	return EXIT_OK;
}
