// SPDX-License-Identifier: GPL-2.0
/*
 * rogue: a hostile sender for the sdr VM tests.  It sprays forged sdr
 * packets at one device's sdr QP, posing as that device's real peer:
 *
 *   raw    whole RoCEv2 frames written with AF_PACKET to the peer's
 *          netdev: Ethernet, IPv4 from the peer's address, UDP to 4791,
 *          BTH (UD SEND_ONLY to the target's sdr QP), DETH (the target
 *          device's Q_Key, source QPN: the peer's sdr QP), the sdr packet
 *          and the ICRC computed as rxe_icrc.c computes it, so rxe
 *          delivers the frame as if the peer's sdr QP had sent it;
 *   verbs  a UD QP of its own on the peer's device (its own QPN, the
 *          peer's real address).
 *
 * It knows what an attacker on the path or on the hosts may learn:
 * addresses, QPNs, the Q_Key (root reads it from sysfs), the flow ids
 * (from sysfs: a guess that hit) and the message sequence numbers (from
 * captured traffic); never a flow's token on its blind forgeries, never
 * a flow's authentication key at all.  In raw mode it also captures
 * genuine frames toward the target from the same socket (so never its
 * own) and uses them two ways:
 *
 *   replay  a captured frame sent again as it was: right token, right
 *           tag, but a packet number the flow has taken already;
 *   copied  a captured frame with one change its tag covers (payload
 *           bytes of DATA, ts or imm of a control packet, or a fresh
 *           packet number under the old tag), the ICRC recomputed: all
 *           it lacks is the key.
 *
 * Each forged packet goes through sdr_wire_decode(), the receiver's own
 * parser (kernel/engine/sdr_wire.c), to predict the drop counter it must
 * land in: the parser's reason, else by the checks sdr_flow_rx() makes in
 * order at the flow the packet names: bad_token for a blind forgery,
 * bad_tag for a copy, replay for a replay at a live flow that
 * authenticates, no_flow at any other id.  Replays at a flow without
 * authentication are not predicted (they meet the policy as duplicates
 * or stale packets), nor are replays for a flow rogue never saw.  A
 * packet aimed at a flow counts as "confirmed" once a sysfs scan a second
 * or more after the send still shows the flow connected (a second bounds
 * only a hung receive path); packets sent less than that before a flow
 * went away, or while it lingers after leaving "connected", may have met
 * it or not and are counted as "late".  The summary (text, and JSON on
 * the last line with --json) gives what was sent by shape and mode, those
 * expectations, what was captured (and whether its ICRC is the one rogue
 * computes) and the flow states seen.
 *
 * With --oversize it sends only raw frames longer than an sdr receive
 * buffer takes (a 40-byte GRH slot and 4096 bytes) and reports what the
 * target's receive-error counters, QP recoveries and ring made of them.
 */
#include <infiniband/verbs.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
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

#include "roce.h"
#include "sdr_wire.h"

/* --oversize: up to what an IPv4 packet in a 9000-byte MTU carries */
#define OVER_MAX_LEN		(9000 - IP4_LEN - UDP_LEN - BTH_LEN - DETH_LEN - \
				 ICRC_LEN)
#define MAX_FLOWS		64
#define RING			256	/* recent captures: duplicates */
#define RESERVOIR		256	/* a sample of all captures: stale */
#define VERBS_SLOTS		128	/* sends in flight on the verbs QP */
#define SCAN_NS			250000000ULL
#define CONFIRM_SCANS		4	/* a send is confirmed 1 s later */
#define COPY_PICKS		32	/* captures tried for one to a live flow */

enum shape {
	SH_DATA,		/* DATA of a live message, random bytes */
	SH_DATA_HUGE,		/* DATA claiming a ~4 GiB message */
	SH_ACK_COMPLETE,	/* "the receiver has it all" */
	SH_ACK_ABORT,		/* "the receiver discarded it" */
	SH_ACK_SACK_ALL,	/* SACK map with every bit set */
	SH_NACK,		/* "resend everything" */
	SH_RNR,
	SH_CLOSE,
	SH_UNKNOWN_FLOW,	/* any type to a flow id nobody has */
	SH_TRUNCATED,		/* cut inside the header */
	SH_MALFORMED,		/* one field broken */
	SH_REPLAY,		/* a captured genuine frame, sent again */
	SH_COPIED,		/* one, altered under its tag */
	SH_NR
};

static const char * const shape_names[SH_NR] = {
	"data", "data_huge", "ack_complete", "ack_abort", "ack_sack_all",
	"nack", "rnr", "close", "unknown_flow", "truncated", "malformed",
	"replay", "copied",
};

enum { M_RAW, M_VERBS, M_NR };

/*
 * The drops a packet aimed at a known flow is predicted to meet there,
 * each confirmed or late by the flow's scans (see the top of the file).
 */
enum { P_TOKEN, P_TAG, P_REPLAY, P_NR };

static const int p_reason[P_NR] = {
	SDR_DROP_TOKEN, SDR_DROP_AUTH, SDR_DROP_REPLAY,
};

struct opts {
	const char *dev, *peer;
	bool mode[M_NR];
	uint64_t count;
	double seconds;
	uint32_t rate;
	uint64_t seed;
	bool seed_set;
	unsigned int replay_pct;
	uint32_t qkey;
	bool qkey_set;			/* else the target's, from sysfs */
	uint32_t qpn, peer_qpn;		/* 0: from sysfs */
	unsigned int probe;
	unsigned int oversize;		/* frames too long for a buffer */
	uint64_t mark;
	bool until_gone;
	double wait_s;
	bool json, quiet;
};

struct devinfo {
	char name[64];
	uint32_t gid_index;
	uint8_t gid[16];
	uint32_t ip;			/* network order */
	char netdev[IFNAMSIZ];
	int ifindex;
	uint8_t mac[6];
};

struct flow_ref {
	uint32_t id, peer_flow, peer_qpn;
	uint8_t peer_gid[16];
	uint8_t policy;
	bool auth;			/* tags its packets, keeps a window */
	bool alive;			/* connected at the last scan */
	bool gone;			/* went away or left "connected" */
	bool lingers;			/* gone, but still in sysfs then */
	char why[48];			/* how it went, for the summary */
	/* aimed at it, not yet confirmed: [i] sent i scans before the last */
	uint64_t pend[P_NR][CONFIRM_SCANS + 1];
	uint64_t confirmed[P_NR], late[P_NR];
};

struct rogue {
	struct opts o;
	struct devinfo tgt, peer;
	uint32_t tgt_qpn, peer_qpn;
	uint64_t rng;
	uint64_t t_start;		/* mono_ns() of the first send */
	double waited_s;		/* for the flows, before it */

	struct flow_ref flows[MAX_FLOWS];
	int nflows;
	int64_t first_bad_state_ms;	/* wall clock, 0: none seen */
	char bad_state[80];

	/* learned from captured frames */
	bool have_data, have_ack;
	uint32_t data_seq, ack_seq, msg_len, pay, aux;
	uint8_t policy;

	/* raw */
	int sock;
	uint16_t ip_id;
	struct frame *ring, *reservoir;
	uint64_t captured, icrc_ok, icrc_bad, cap_by_type[SDR_PKT_TYPE_MAX + 1];
	uint32_t nring, nres;

	/* verbs */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t *vbuf;
	uint32_t vslot, voutstanding;
	uint64_t verbs_errors;

	/* what was sent */
	uint64_t sent, sent_shape[SH_NR][M_NR], send_errors;
	uint64_t expect[SDR_DROP_NR];	/* packets by predicted reason */
	uint64_t blind;
	uint64_t copied_pn;		/* copies with a forged packet number */
	uint64_t replay_unsure;		/* replays for flows never seen */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rogue: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- deterministic randomness ---- */

static uint64_t rnd(struct rogue *r)
{
	uint64_t z = (r->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(struct rogue *r, uint32_t n)
{
	return n ? (uint32_t)(rnd(r) % n) : 0;
}

static void rnd_bytes(struct rogue *r, uint8_t *p, size_t n)
{
	uint64_t w;

	for (; n >= 8; n -= 8, p += 8) {
		w = rnd(r);
		memcpy(p, &w, 8);
	}
	w = rnd(r);
	memcpy(p, &w, n);
}

/* ---- sysfs ---- */

static int read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	size_t l;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)n, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	l = strlen(buf);
	while (l && (buf[l - 1] == '\n' || buf[l - 1] == ' '))
		buf[--l] = 0;
	return 0;
}

static long long read_ll(const char *fmt, const char *a, const char *b)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), fmt, a, b);
	if (read_line(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 0);
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int m[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
		   &m[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
	return 0;
}

/* An sdr device's GID, its IPv4 address, netdev and MAC. */
static void devinfo_get(const char *name, struct devinfo *d)
{
	char path[256], buf[128];

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/gid_index", name);
	if (read_line(path, buf, sizeof(buf)))
		die("%s: no sdr device %s (is sdr.ko loaded?)", path, name);
	d->gid_index = (uint32_t)strtoul(buf, NULL, 0);
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/gid", name);
	if (read_line(path, buf, sizeof(buf)) ||
	    inet_pton(AF_INET6, buf, d->gid) != 1)
		die("%s: cannot read a GID", path);
	if (memcmp(d->gid, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12))
		die("%s: GID %s is not IPv4-mapped (RoCEv2 over IPv4 only)",
		    name, buf);
	memcpy(&d->ip, d->gid + 12, 4);
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/%u", name,
		 d->gid_index);
	if (read_line(path, d->netdev, sizeof(d->netdev)))
		die("%s: cannot read the netdev", path);
	d->ifindex = (int)if_nametoindex(d->netdev);
	snprintf(path, sizeof(path), "/sys/class/net/%s/address", d->netdev);
	if (!d->ifindex || read_line(path, buf, sizeof(buf)) ||
	    parse_mac(buf, d->mac))
		die("%s: cannot read the MAC", path);
}

/*
 * The Q_Key @dev's sdr QP takes: random per device, so a sender must have
 * learned it (root may read it; a peer gets it at connect).
 */
static uint32_t qkey_get(const char *dev)
{
	char path[128], buf[32], *end;
	unsigned long q;
	int ret;

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/qkey", dev);
	ret = read_line(path, buf, sizeof(buf));
	if (ret)
		die("%s: %s (root needed; or give --qkey)", path, strerror(-ret));
	errno = 0;
	q = strtoul(buf, &end, 0);
	if (errno || *end || end == buf || q > UINT32_MAX)
		die("%s: no Q_Key in \"%s\"", path, buf);
	return (uint32_t)q;
}

static uint8_t policy_byte(const char *s)
{
	if (!strcmp(s, "sr"))
		return SDR_WIRE_POLICY_SR;
	if (!strcmp(s, "ec"))
		return SDR_WIRE_POLICY_EC;
	if (!strcmp(s, "adaptive"))
		return SDR_WIRE_POLICY_ADAPTIVE;
	return SDR_WIRE_POLICY_NONE;
}

/*
 * One flow directory: 0 and *f filled, or a negative errno (gone), or
 * -EAGAIN (no peer yet: not connected).
 */
static int flow_read(const char *dev, uint32_t id, struct flow_ref *f,
		     char *state, size_t nstate)
{
	char path[256], buf[160], gid[64];
	unsigned int qpn, pf;
	int ret;

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/state", dev, id);
	ret = read_line(path, state, nstate);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/peer", dev, id);
	ret = read_line(path, buf, sizeof(buf));
	if (ret)
		return ret;
	f->id = id;
	if (sscanf(buf, "%63s %u %u", gid, &qpn, &pf) != 3 ||
	    inet_pton(AF_INET6, gid, f->peer_gid) != 1)
		return -EAGAIN;	/* "-": not connected yet */
	f->peer_qpn = qpn;
	f->peer_flow = pf;
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/policy", dev, id);
	if (!read_line(path, buf, sizeof(buf)))
		f->policy = policy_byte(buf);
	/* no such file (a module without auth): nothing to predict by */
	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/auth", dev, id);
	f->auth = !read_line(path, buf, sizeof(buf)) && strcmp(buf, "off");
	return 0;
}

/* Connected-or-later flows of @dev whose peer is @peer_gid. */
static int list_flows(const char *dev, const uint8_t *peer_gid,
		      struct flow_ref *out, int max)
{
	char path[128], state[32];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows", dev);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		struct flow_ref f = { 0 };
		char *end;
		unsigned long id = strtoul(de->d_name, &end, 10);

		if (*end || !id)
			continue;
		if (flow_read(dev, (uint32_t)id, &f, state, sizeof(state)))
			continue;
		if (memcmp(f.peer_gid, peer_gid, 16))
			continue;
		out[n++] = f;
	}
	closedir(d);
	return n;
}

static struct flow_ref *flow_find(struct rogue *r, uint32_t id)
{
	int i;

	for (i = 0; i < r->nflows; i++)
		if (r->flows[i].id == id)
			return &r->flows[i];
	return NULL;
}

/*
 * Scan the target's flows: adopt new ones, confirm what was aimed at the
 * ones still there, note states other than "connected".  Returns how many
 * of the known flows are still there.
 */
static int scan_flows(struct rogue *r, bool final)
{
	struct flow_ref now[MAX_FLOWS];
	int n, i, j, k, alive = 0;
	char state[32];

	n = list_flows(r->tgt.name, r->peer.gid, now, MAX_FLOWS);
	for (i = 0; i < n; i++)
		if (!flow_find(r, now[i].id) && r->nflows < MAX_FLOWS) {
			now[i].alive = true;
			r->flows[r->nflows++] = now[i];
		}
	for (i = 0; i < r->nflows; i++) {
		struct flow_ref *f = &r->flows[i], tmp;
		bool there;
		int ret;

		if (f->gone)
			continue;
		ret = flow_read(r->tgt.name, f->id, &tmp, state, sizeof(state));
		there = !ret;
		if (there && strcmp(state, "connected") && !r->first_bad_state_ms) {
			r->first_bad_state_ms = wall_ms();
			snprintf(r->bad_state, sizeof(r->bad_state),
				 "flow %u %s", f->id, state);
		}
		if (!there || strcmp(state, "connected")) {
			/*
			 * A gone flow drops as no_flow; one that lingers
			 * (closed, not yet destroyed) may still check and
			 * drop as before: what was not confirmed may have
			 * met it connected or not.
			 */
			for (k = 0; k < P_NR; k++)
				for (j = 0; j <= CONFIRM_SCANS; j++) {
					f->late[k] += f->pend[k][j];
					f->pend[k][j] = 0;
				}
			f->alive = false;
			f->gone = true;
			f->lingers = there;
			snprintf(f->why, sizeof(f->why), "%s at %.1f s",
				 there ? state : strerror(-ret),
				 (mono_ns() - r->t_start) / 1e9);
			continue;
		}
		f->alive = true;
		alive++;
		for (k = 0; k < P_NR; k++) {
			/* sent a second or more before a scan that saw it connected */
			f->confirmed[k] += f->pend[k][CONFIRM_SCANS];
			for (j = CONFIRM_SCANS; j > 0; j--)
				f->pend[k][j] = f->pend[k][j - 1];
			f->pend[k][0] = 0;
			if (!final)
				continue;
			/* after the last send and a second of quiet */
			for (j = 0; j <= CONFIRM_SCANS; j++) {
				f->confirmed[k] += f->pend[k][j];
				f->pend[k][j] = 0;
			}
		}
	}
	return alive;
}

/* The target's sdr QPN: the peer's flows name it. */
static uint32_t find_tgt_qpn(struct rogue *r)
{
	struct flow_ref f[MAX_FLOWS];
	int n = list_flows(r->peer.name, r->tgt.gid, f, MAX_FLOWS);

	return n ? f[0].peer_qpn : 0;
}

/* A RoCEv2 UD SEND_ONLY frame carrying @len bytes of @sdr; its length. */
static size_t build_frame(struct rogue *r, uint8_t *f, const uint8_t *sdr,
			  size_t len, bool bad_icrc)
{
	size_t pad = (4 - len % 4) % 4;
	size_t udp_len = UDP_LEN + BTH_LEN + DETH_LEN + len + pad + ICRC_LEN;
	uint8_t *ip = f + ETH_LEN, *udp = ip + IP4_LEN, *bth = udp + UDP_LEN;
	uint8_t *deth = bth + BTH_LEN;
	uint32_t icrc;

	memcpy(f, r->tgt.mac, 6);
	memcpy(f + 6, r->peer.mac, 6);
	put_be16(f + 12, ETH_P_IP);

	memset(ip, 0, IP4_LEN);
	ip[0] = 0x45;
	put_be16(ip + 2, (uint16_t)(IP4_LEN + udp_len));
	put_be16(ip + 4, r->ip_id++);
	put_be16(ip + 6, 0x4000);		/* DF */
	ip[8] = 64;
	ip[9] = 17;				/* UDP */
	memcpy(ip + 12, &r->peer.ip, 4);	/* the spoofed source */
	memcpy(ip + 16, &r->tgt.ip, 4);
	put_be16(ip + 10, ip_csum(ip, IP4_LEN));

	put_be16(udp, (uint16_t)(0xc000 | rnd_below(r, 0x4000)));
	put_be16(udp + 2, ROCE_PORT);
	put_be16(udp + 4, (uint16_t)udp_len);
	put_be16(udp + 6, 0);			/* no UDP checksum, as rxe */

	bth[0] = OP_UD_SEND_ONLY;
	bth[1] = (uint8_t)(pad << 4);		/* TVer 0 */
	put_be16(bth + 2, 0xffff);		/* default P_Key */
	put_be32(bth + 4, r->tgt_qpn & 0xffffff);
	put_be32(bth + 8, rnd_below(r, 1 << 24));	/* PSN: UD ignores it */
	put_be32(deth, r->o.qkey);
	put_be32(deth + 4, r->peer_qpn & 0xffffff);

	memcpy(deth + DETH_LEN, sdr, len);
	memset(deth + DETH_LEN + len, 0, pad);
	icrc = roce_icrc(ip, IP4_LEN + udp_len - ICRC_LEN);
	if (bad_icrc)
		icrc ^= 1U << rnd_below(r, 32);
	put_le32(ip + IP4_LEN + udp_len - ICRC_LEN, icrc);
	return ETH_LEN + IP4_LEN + udp_len;
}

/* ---- raw socket: send and capture ---- */

static void raw_open(struct rogue *r)
{
	/*
	 * Accept only what rxe sent out of the peer's netdev toward 4791
	 * (pkttype OUTGOING, IPv4 without options, UDP); the rest is
	 * checked in capture_one().
	 */
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 0, 8),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 6),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, ETH_LEN),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x45, 0, 4),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, ETH_LEN + 9),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 2),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, ETH_LEN + IP4_LEN + 2),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ROCE_PORT, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = r->peer.ifindex,
	};
	int rcvbuf = 256 * 1024;	/* a sample is enough: overflow drops */

	r->sock = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
			 r->o.replay_pct ? htons(ETH_P_ALL) : 0);
	if (r->sock < 0)
		die("AF_PACKET socket: %s (root needed)", strerror(errno));
	if (r->o.replay_pct &&
	    setsockopt(r->sock, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)))
		die("SO_ATTACH_FILTER: %s", strerror(errno));
	setsockopt(r->sock, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (!r->o.replay_pct)
		sll.sll_protocol = 0;
	if (bind(r->sock, (struct sockaddr *)&sll, sizeof(sll)))
		die("bind to %s: %s", r->peer.netdev, strerror(errno));
	if (r->o.replay_pct) {
		r->ring = calloc(RING, sizeof(*r->ring));
		r->reservoir = calloc(RESERVOIR, sizeof(*r->reservoir));
		if (!r->ring || !r->reservoir)
			die("out of memory");
	}
}

static int raw_send(struct rogue *r, const uint8_t *f, size_t len)
{
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_IP),
		.sll_ifindex = r->peer.ifindex,
		.sll_halen = 6,
	};
	int tries;

	memcpy(to.sll_addr, r->tgt.mac, 6);
	for (tries = 0; tries < 100; tries++) {
		if (sendto(r->sock, f, len, 0, (struct sockaddr *)&to,
			   sizeof(to)) == (ssize_t)len)
			return 0;
		if (errno != EAGAIN && errno != ENOBUFS)
			break;
		usleep(100);
	}
	return -1;
}

/* Learn sequence numbers and geometry from a genuine packet. */
static void learn(struct rogue *r, const struct sdr_pkt *p)
{
	if (p->type == SDR_PKT_DATA) {
		r->have_data = true;
		r->data_seq = p->msg_seq;
		r->msg_len = p->msg_len;
		r->policy = p->policy;
		r->aux = p->aux;
		if (!(p->flags & SDR_PKT_F_LAST) || p->offset)
			r->pay = p->payload_len;
		else if (!r->pay)
			r->pay = p->payload_len;
	} else if (p->type == SDR_PKT_ACK || p->type == SDR_PKT_NACK) {
		r->have_ack = true;
		r->ack_seq = p->msg_seq;
	}
}

static void capture_one(struct rogue *r, const uint8_t *f, size_t n)
{
	const uint8_t *ip = f + ETH_LEN, *bth = ip + IP4_LEN + UDP_LEN;
	size_t udp_len, pad, sdr_len;
	struct sdr_pkt pkt;
	struct frame *slot;
	uint64_t i;

	if (n < SDR_OFF + ICRC_LEN || n > MAX_FRAME)
		return;
	udp_len = (size_t)ip[IP4_LEN + 4] << 8 | ip[IP4_LEN + 5];
	if (ETH_LEN + IP4_LEN + udp_len > n ||
	    udp_len < UDP_LEN + BTH_LEN + DETH_LEN + ICRC_LEN)
		return;
	if (bth[0] != OP_UD_SEND_ONLY ||
	    (get_be32(bth + 4) & 0xffffff) != r->tgt_qpn ||
	    (get_be32(bth + BTH_LEN + 4) & 0xffffff) != r->peer_qpn ||
	    memcmp(ip + 16, &r->tgt.ip, 4))
		return;		/* not sdr to sdr (e.g. our verbs QP) */
	pad = (bth[1] >> 4) & 3;
	sdr_len = udp_len - UDP_LEN - BTH_LEN - DETH_LEN - ICRC_LEN;
	if (pad > sdr_len)
		return;
	sdr_len -= pad;
	r->captured++;
	if (roce_icrc(ip, IP4_LEN + udp_len - ICRC_LEN) ==
	    get_le32(ip + IP4_LEN + udp_len - ICRC_LEN))
		r->icrc_ok++;
	else
		r->icrc_bad++;
	if (!sdr_wire_decode(f + SDR_OFF, (u32)sdr_len, &pkt)) {
		r->cap_by_type[pkt.type]++;
		learn(r, &pkt);
	}
	/* Recent frames for duplicates, a uniform sample for stale ones. */
	n = ETH_LEN + IP4_LEN + udp_len;
	slot = &r->ring[r->nring++ % RING];
	memcpy(slot->b, f, n);
	slot->len = (uint16_t)n;
	slot->sdr_len = (uint16_t)sdr_len;
	i = r->captured - 1;
	if (i < RESERVOIR)
		slot = &r->reservoir[r->nres++];
	else if ((i = rnd(r) % (i + 1)) < RESERVOIR)
		slot = &r->reservoir[i];
	else
		return;
	memcpy(slot->b, f, n);
	slot->len = (uint16_t)n;
	slot->sdr_len = (uint16_t)sdr_len;
}

static void capture_drain(struct rogue *r)
{
	static uint8_t buf[MAX_FRAME + 64];
	struct sockaddr_ll from;
	socklen_t fl;
	ssize_t n;
	int i;

	if (!r->o.replay_pct)
		return;
	for (i = 0; i < 64; i++) {
		fl = sizeof(from);
		n = recvfrom(r->sock, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
			     (struct sockaddr *)&from, &fl);
		if (n < 0)
			return;
		if (from.sll_pkttype == PACKET_OUTGOING && (size_t)n <= sizeof(buf))
			capture_one(r, buf, (size_t)n);
	}
}

/* ---- verbs: a UD QP of our own on the peer's device ---- */

static void verbs_open(struct rogue *r)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = VERBS_SLOTS, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qkey = r->o.qkey };
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1 };
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	for (i = 0; list && list[i] && !r->ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), r->peer.name))
			r->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!r->ctx)
		die("verbs: cannot open %s", r->peer.name);
	r->pd = ibv_alloc_pd(r->ctx);
	r->cq = ibv_create_cq(r->ctx, VERBS_SLOTS, NULL, NULL, 0);
	if (!r->pd || !r->cq)
		die("verbs: PD/CQ: %s", strerror(errno));
	init.send_cq = init.recv_cq = r->cq;
	r->qp = ibv_create_qp(r->pd, &init);
	if (!r->qp)
		die("verbs: create UD QP: %s", strerror(errno));
	if (ibv_modify_qp(r->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		die("verbs: QP to INIT");
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(r->qp, &attr, IBV_QP_STATE))
		die("verbs: QP to RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(r->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("verbs: QP to RTS");
	r->vbuf = aligned_alloc(4096, (size_t)VERBS_SLOTS * MAX_SDR_LEN);
	if (!r->vbuf)
		die("out of memory");
	r->mr = ibv_reg_mr(r->pd, r->vbuf, (size_t)VERBS_SLOTS * MAX_SDR_LEN,
			   IBV_ACCESS_LOCAL_WRITE);
	memcpy(ah.grh.dgid.raw, r->tgt.gid, 16);
	ah.grh.sgid_index = (uint8_t)r->peer.gid_index;
	ah.grh.hop_limit = 64;
	r->ah = ibv_create_ah(r->pd, &ah);
	if (!r->mr || !r->ah)
		die("verbs: MR/AH: %s", strerror(errno));
}

static void verbs_reap(struct rogue *r, bool all)
{
	struct ibv_wc wc[32];
	uint64_t t0 = mono_ns();
	int n, i;

	do {
		n = ibv_poll_cq(r->cq, 32, wc);
		for (i = 0; i < n; i++) {
			r->voutstanding--;
			if (wc[i].status != IBV_WC_SUCCESS)
				r->verbs_errors++;
		}
		if (n < 0)
			die("verbs: poll CQ");
	} while ((r->voutstanding >= VERBS_SLOTS || (all && r->voutstanding)) &&
		 mono_ns() - t0 < 5000000000ULL);
}

static int verbs_send(struct rogue *r, const uint8_t *sdr, size_t len)
{
	uint8_t *b;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = len ? 1 : 0, .opcode = IBV_WR_SEND,
		.wr.ud = { .ah = r->ah, .remote_qpn = r->tgt_qpn,
			   .remote_qkey = r->o.qkey },
	}, *bad;

	verbs_reap(r, false);
	b = r->vbuf + (size_t)(r->vslot++ % VERBS_SLOTS) * MAX_SDR_LEN;
	memcpy(b, sdr, len);
	sge = (struct ibv_sge){ (uintptr_t)b, (uint32_t)len, r->mr->lkey };
	if (ibv_post_send(r->qp, &wr, &bad))
		return -1;
	r->voutstanding++;
	return 0;
}

/* ---- forging ---- */

static uint32_t guess_data_seq(struct rogue *r)
{
	if (!r->have_data)
		return (uint32_t)rnd(r);
	return r->data_seq - 4 + rnd_below(r, 20);
}

static uint32_t guess_ack_seq(struct rogue *r)
{
	if (!r->have_ack)
		return r->have_data ? guess_data_seq(r) : (uint32_t)rnd(r);
	return r->ack_seq - 2 + rnd_below(r, 10);
}

static uint32_t unknown_flow_id(struct rogue *r)
{
	uint32_t id;

	do
		id = 1 + rnd_below(r, 0xffffff);
	while (flow_find(r, id));
	return id;
}

/* Header fields shared by every forgery at flow @f (NULL: unknown id). */
static void forge_base(struct rogue *r, struct flow_ref *f, struct sdr_pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->dst_flow = f ? f->id : unknown_flow_id(r);
	p->src_flow = f ? f->peer_flow : 1 + rnd_below(r, 0xffffff);
	p->policy = r->have_data ? r->policy : f ? f->policy : SDR_WIRE_POLICY_SR;
	p->token = rnd(r);	/* blind: 2^-64 to hit */
}

static size_t forge_data(struct rogue *r, struct sdr_pkt *p, uint8_t *buf,
			 bool huge)
{
	uint32_t pay = r->pay ? r->pay : MAX_SDR_LEN - SDR_WIRE_HDR_LEN;
	uint32_t len = r->have_data ? r->msg_len : pay * (1 + rnd_below(r, 256));
	uint32_t npkts;

	if (huge)
		len = 0xffffffffU - rnd_below(r, pay);
	npkts = (uint32_t)DIV_ROUND_UP((uint64_t)len, pay);
	p->type = SDR_PKT_DATA;
	p->msg_seq = guess_data_seq(r);
	p->msg_len = len;
	p->offset = (huge && rnd_below(r, 2) ? npkts - 1 : rnd_below(r, npkts)) * pay;
	p->payload_len = (uint16_t)min_t(uint32_t, pay, len - p->offset);
	p->flags = p->offset + p->payload_len == len ? SDR_PKT_F_LAST : 0;
	if (rnd_below(r, 4) == 0)
		p->flags |= SDR_PKT_F_ACKREQ;
	if (rnd_below(r, 4) == 0)
		p->flags |= SDR_PKT_F_RETX;
	p->imm = (uint32_t)rnd(r);
	p->ts = (uint32_t)rnd(r);
	p->land = p->offset;	/* a message landing at its receive's start */
	if (p->policy == SDR_WIRE_POLICY_EC) {
		p->aux = r->aux ? r->aux : SDR_EC_AUX(32, 8, 0);
		if (rnd_below(r, 4) == 0 && !(p->flags & SDR_PKT_F_LAST)) {
			uint32_t k = SDR_EC_AUX_K(p->aux) ? SDR_EC_AUX_K(p->aux) : 1;

			p->flags |= SDR_PKT_F_PARITY;
			p->offset -= p->offset % (k * pay);
			p->land = p->offset;
			p->payload_len = (uint16_t)pay;
			p->aux |= rnd_below(r, SDR_EC_AUX_M(p->aux) + 1);
		}
	} else if (rnd_below(r, 4) == 0) {
		/* a streamed message's packet (part 0), or its end */
		p->flags &= SDR_PKT_F_ACKREQ | SDR_PKT_F_RETX;
		p->flags |= SDR_PKT_F_STREAM;
		p->part = 0;
		p->msg_len = 0;
		if (rnd_below(r, 2)) {
			p->flags |= SDR_PKT_F_LAST;
			p->land = 0;
			p->payload_len = 0;
			if (p->offset)
				p->msg_len = p->offset / pay +
					     (uint32_t)rnd_below(r, p->offset -
							p->offset / pay + 1);
		} else {
			p->payload_len = (uint16_t)(1 + rnd_below(r, pay));
			if (p->payload_len < pay)
				p->flags |= SDR_PKT_F_PART_END;
		}
	}
	sdr_wire_encode(p, buf);
	rnd_bytes(r, buf + SDR_WIRE_HDR_LEN, p->payload_len);
	return SDR_WIRE_HDR_LEN + p->payload_len;
}

/* ACK/NACK with @aux and a body of @nbits starting at @base. */
static size_t forge_ack(struct rogue *r, struct sdr_pkt *p, uint8_t *buf,
			uint8_t type, uint32_t aux, uint32_t cum, uint16_t nbits,
			bool ones)
{
	struct sdr_ack ack = { .cum = cum, .base = cum, .nbits = nbits };

	if ((uint64_t)cum + nbits > U32_MAX)
		ack.cum = ack.base = U32_MAX - nbits;
	memset(ack.map, ones ? 0xff : 0, sizeof(ack.map));
	p->type = type;
	p->msg_seq = guess_ack_seq(r);
	p->aux = aux;
	p->ts = rnd_below(r, 2) ? (uint32_t)rnd(r) : 0;
	p->payload_len = (uint16_t)sdr_ack_encode(&ack, buf + SDR_WIRE_HDR_LEN);
	sdr_wire_encode(p, buf);
	return SDR_WIRE_HDR_LEN + p->payload_len;
}

/* One well-formed forgery of a random type, or of @type if not 0. */
static size_t forge_typed(struct rogue *r, struct sdr_pkt *p, uint8_t *buf,
			  int type)
{
	if (!type)
		type = SDR_PKT_DATA + (int)rnd_below(r, SDR_PKT_CLOSE);
	switch (type) {
	case SDR_PKT_DATA:
		return forge_data(r, p, buf, false);
	case SDR_PKT_ACK:
		return forge_ack(r, p, buf, SDR_PKT_ACK,
				 rnd_below(r, 3), rnd_below(r, 1 << 20),
				 (uint16_t)rnd_below(r, SDR_ACK_MAX_BITS + 1),
				 rnd_below(r, 2));
	case SDR_PKT_NACK:
		return forge_ack(r, p, buf, SDR_PKT_NACK, 0, 0,
				 SDR_ACK_MAX_BITS, false);
	default:	/* RNR, CLOSE */
		p->type = (uint8_t)type;
		p->msg_seq = type == SDR_PKT_RNR ? guess_data_seq(r) : 0;
		sdr_wire_encode(p, buf);
		return SDR_WIRE_HDR_LEN;
	}
}

/* Break one field of a well-formed forgery; the parser must catch it. */
static size_t forge_malformed(struct rogue *r, struct sdr_pkt *p, uint8_t *buf)
{
	size_t len = forge_typed(r, p, buf, 0);

	switch (rnd_below(r, 12)) {
	case 0:
		buf[0] ^= (uint8_t)(1 + rnd_below(r, 255));		/* magic */
		break;
	case 1:
		buf[2] = rnd_below(r, 2) ? 1 : (uint8_t)(3 + rnd_below(r, 253));
		break;
	case 2:
		buf[3] = rnd_below(r, 2) ? 0 : (uint8_t)(6 + rnd_below(r, 250));
		break;
	case 3:
		buf[4] = (uint8_t)(SDR_WIRE_POLICY_MAX + 1 + rnd_below(r, 250));
		break;
	case 4:
		buf[5] |= (uint8_t)(0x10 << rnd_below(r, 4));		/* flags */
		break;
	case 5:								/* payload_len past the end */
		put_be16(buf + 6, (uint16_t)(len - SDR_WIRE_HDR_LEN + 1 +
					     rnd_below(r, 4000)));
		break;
	case 6:
		put_be32(buf + (rnd_below(r, 2) ? 8 : 12), 0);		/* flow 0 */
		break;
	case 7:		/* DATA past its message or landing below its start,
			   or reserved fields set */
		if (p->type == SDR_PKT_DATA && rnd_below(r, 2))
			put_be32(buf + 24, p->msg_len + rnd_below(r, 1 << 20));
		else if (p->type == SDR_PKT_DATA && p->offset)
			put_be32(buf + 56, rnd_below(r, p->offset));
		else if (p->type == SDR_PKT_DATA)
			put_be32(buf + 60, 1 + rnd_below(r, 1000));
		else
			put_be32(buf + (rnd_below(r, 2) ? 20 + 4 * rnd_below(r, 3) :
					56 + 4 * rnd_below(r, 2)),
				 1 + rnd_below(r, 1000));
		break;
	case 8:		/* a body the ACK parser refuses */
		len = forge_ack(r, p, buf, SDR_PKT_ACK, 0, 100, 64, true);
		switch (rnd_below(r, 3)) {
		case 0: put_be16(buf + SDR_WIRE_HDR_LEN + 8, 2000); break;
		case 1: put_be16(buf + SDR_WIRE_HDR_LEN + 10, 1); break;
		default: put_be32(buf + SDR_WIRE_HDR_LEN + 4, 5); break;
		}
		break;
	case 9:		/* COMPLETE|ABORT, or a NACK with COMPLETE */
		len = forge_ack(r, p, buf, rnd_below(r, 2) ? SDR_PKT_ACK : SDR_PKT_NACK,
				SDR_ACK_F_COMPLETE | (rnd_below(r, 2) ? SDR_ACK_F_ABORT : 0),
				0, 0, false);
		break;
	case 10:	/* RNR/CLOSE with a payload or aux */
		p->type = rnd_below(r, 2) ? SDR_PKT_RNR : SDR_PKT_CLOSE;
		p->aux = rnd_below(r, 2);
		p->payload_len = p->aux ? 0 : 8;
		sdr_wire_encode(p, buf);
		len = SDR_WIRE_HDR_LEN + p->payload_len;
		break;
	default:	/* DATA with no payload */
		len = forge_data(r, p, buf, false);
		put_be16(buf + 6, 0);
		len = SDR_WIRE_HDR_LEN;
		break;
	}
	return len;
}

/* Build one forgery of @sh into @buf: its length; *f = the flow aimed at. */
static size_t forge(struct rogue *r, enum shape sh, uint8_t *buf,
		    struct flow_ref **fp)
{
	struct flow_ref *f = r->nflows ? &r->flows[rnd_below(r, r->nflows)] : NULL;
	struct sdr_pkt p;
	size_t len;

	if (f && !f->alive) {	/* aim at live flows while there are any */
		int i;

		for (i = 0; i < r->nflows && !r->flows[i].alive; i++)
			;
		f = i < r->nflows ? &r->flows[i] : f;
	}
	if (sh == SH_UNKNOWN_FLOW)
		f = NULL;
	forge_base(r, f, &p);
	switch (sh) {
	case SH_DATA:
		len = forge_data(r, &p, buf, false);
		break;
	case SH_DATA_HUGE:
		len = forge_data(r, &p, buf, true);
		break;
	case SH_ACK_COMPLETE:
		len = forge_ack(r, &p, buf, SDR_PKT_ACK, SDR_ACK_F_COMPLETE, 0, 0, false);
		break;
	case SH_ACK_ABORT:
		len = forge_ack(r, &p, buf, SDR_PKT_ACK, SDR_ACK_F_ABORT, 0, 0, false);
		break;
	case SH_ACK_SACK_ALL:
		len = forge_ack(r, &p, buf, SDR_PKT_ACK, 0,
				rnd_below(r, 2) ? rnd_below(r, 1 << 16) : U32_MAX,
				SDR_ACK_MAX_BITS, true);
		break;
	case SH_NACK:
		len = forge_typed(r, &p, buf, SDR_PKT_NACK);
		break;
	case SH_RNR:
		len = forge_typed(r, &p, buf, SDR_PKT_RNR);
		break;
	case SH_CLOSE:
		len = forge_typed(r, &p, buf, SDR_PKT_CLOSE);
		break;
	case SH_UNKNOWN_FLOW:
		len = forge_typed(r, &p, buf, 0);
		break;
	case SH_TRUNCATED:
		forge_typed(r, &p, buf, 0);
		len = rnd_below(r, SDR_WIRE_HDR_LEN);
		break;
	default:
		len = forge_malformed(r, &p, buf);
		break;
	}
	*fp = f;
	return len;
}

/* A captured frame: a recent one or one of the uniform sample. */
static const struct frame *pick_capture(struct rogue *r)
{
	return rnd_below(r, 2) ?
		&r->ring[rnd_below(r, min_t(uint32_t, r->nring, RING))] :
		&r->reservoir[rnd_below(r, r->nres)];
}

/*
 * A captured frame for a known flow that authenticates, a live one if a
 * few random picks find one, and its packet in *p: what SH_COPIED alters
 * (at a flow without tags a copy would be taken, and corrupt the data).
 * NULL: none.
 */
static const struct frame *pick_copy(struct rogue *r, struct sdr_pkt *p)
{
	const struct frame *c, *best = NULL;
	bool best_alive = false;
	struct flow_ref *f;
	struct sdr_pkt q;
	int i;

	for (i = 0; i < COPY_PICKS && !best_alive; i++) {
		c = pick_capture(r);
		if (sdr_wire_decode(c->b + SDR_OFF, c->sdr_len, &q))
			continue;
		f = flow_find(r, q.dst_flow);
		if (!f || !f->auth || (best && !f->alive))
			continue;
		best = c;
		best_alive = f->alive;
		*p = q;
	}
	return best;
}

static void put_hdr32_xor(struct rogue *r, uint8_t *buf, size_t off)
{
	/* never 0: the field must change */
	put_be32(buf + off, get_be32(buf + off) ^ (1 + rnd_below(r, U32_MAX)));
}

/*
 * SH_COPIED: captured genuine packet @p, framed in @c, into @buf with one
 * change its tag covers.  Flow ids, token, msg_seq, offset and the tag
 * stay and the packet still decodes, so all that can turn it away is the
 * tag check: rogue has everything but the key.  Its length; *pn_forged:
 * the change was the packet number.
 */
static size_t forge_copied(struct rogue *r, const struct frame *c,
			   const struct sdr_pkt *p, uint8_t *buf,
			   bool *pn_forged)
{
	const size_t imm = offsetof(struct sdr_wire_hdr, imm);
	uint8_t *pay = buf + SDR_WIRE_HDR_LEN;
	size_t len = c->sdr_len;
	struct sdr_pkt q;
	uint32_t i, n;

	memcpy(buf, c->b + SDR_OFF, len);
	*pn_forged = !rnd_below(r, 4);
	if (*pn_forged) {
		/*
		 * The same packet under a number the flow has not taken (one
		 * the peer may use later: a bad tag never moves the window).
		 */
		uint64_t pn = p->pn + 1 + rnd_below(r, 1 << 20);

		put_be32(buf + SDR_WIRE_PN_OFF, (uint32_t)(pn >> 32));
		put_be32(buf + SDR_WIRE_PN_OFF + 4, (uint32_t)pn);
		return len;
	}
	if (p->type == SDR_PKT_DATA) {
		/* a run of payload bytes, each one changed */
		i = rnd_below(r, p->payload_len);
		n = min_t(uint32_t, 1 + rnd_below(r, 8), p->payload_len - i);
		while (n--)
			pay[i++] ^= (uint8_t)(1 + rnd_below(r, 255));
		return len;
	}
	/*
	 * A control packet: imm where the parser allows one (a COMPLETE
	 * ACK's, ADAPTIVE's ACKs and NACKs), else ts, which it never checks.
	 */
	put_hdr32_xor(r, buf, imm);
	if (rnd_below(r, 2) || sdr_wire_decode(buf, (u32)len, &q)) {
		memcpy(buf + imm, c->b + SDR_OFF + imm, 4);
		put_hdr32_xor(r, buf, offsetof(struct sdr_wire_hdr, ts));
	}
	return len;
}

/*
 * Count a decoded packet under predicted drop @k at known flow @f (NULL:
 * an id the target does not have): settled at a later scan while @f is
 * live; @k or no_flow while it lingers after leaving "connected"; no_flow
 * once it is gone.
 */
static void expect_at(struct rogue *r, struct flow_ref *f, int k)
{
	if (f && f->alive)
		f->pend[k][0]++;
	else if (f && f->lingers)
		f->late[k]++;
	else
		r->expect[SDR_DROP_NO_FLOW]++;
}

/*
 * Count a packet sent under the drop it must land in at the target: the
 * parser's reason, else what sdr_flow_rx() checks first that it fails:
 * the token for a blind forgery (P_TOKEN), the tag for a copy (P_TAG),
 * the replay window for a replay (P_REPLAY: the peer's own bytes pass
 * token, tag and peer checks, and their packet number was taken by the
 * original, or, if the replay overtook it, the original meets a taken
 * number instead).
 */
static void predict(struct rogue *r, const uint8_t *buf, size_t len, int k)
{
	struct sdr_pkt p;
	int ret = sdr_wire_decode(buf, (u32)len, &p);
	struct flow_ref *f;

	if (ret < 0) {
		r->expect[-ret]++;
		return;
	}
	f = flow_find(r, p.dst_flow);
	/*
	 * A flow without a window takes a replay to its policy as a
	 * duplicate or a stale packet: nothing exact to predict.
	 */
	if (k != P_REPLAY || (f && f->auth))
		expect_at(r, f, k);
	else if (!f)
		r->replay_unsure++;	/* a flow not scanned yet may hold it */
}

/* ---- the run ---- */

static enum shape pick_shape(struct rogue *r, int mode)
{
	if (mode == M_RAW && r->o.replay_pct && r->captured &&
	    rnd_below(r, 100) < r->o.replay_pct)
		return rnd_below(r, 2) ? SH_REPLAY : SH_COPIED;
	return (enum shape)rnd_below(r, SH_REPLAY);
}

static int send_one(struct rogue *r, int mode)
{
	static uint8_t buf[MAX_SDR_LEN], fr[MAX_FRAME];
	enum shape sh = pick_shape(r, mode);
	const struct frame *c;
	struct flow_ref *f;
	struct sdr_pkt p;
	bool pn_forged;
	size_t len;
	int ret;

	if (sh == SH_REPLAY) {
		c = pick_capture(r);
		ret = raw_send(r, c->b, c->len);
		if (!ret)
			predict(r, c->b + SDR_OFF, c->sdr_len, P_REPLAY);
		goto out;
	}
	if (sh == SH_COPIED) {
		c = pick_copy(r, &p);
		if (c) {
			len = forge_copied(r, c, &p, buf, &pn_forged);
			ret = raw_send(r, fr, build_frame(r, fr, buf, len, false));
			if (!ret) {
				r->copied_pn += pn_forged;
				predict(r, buf, len, P_TAG);
			}
			goto out;
		}
		/* nothing captured for a flow that authenticates */
		sh = (enum shape)rnd_below(r, SH_REPLAY);
	}
	len = forge(r, sh, buf, &f);
	if (mode == M_RAW)
		ret = raw_send(r, fr, build_frame(r, fr, buf, len, false));
	else
		ret = verbs_send(r, buf, len);
	if (!ret) {
		r->blind++;
		predict(r, buf, len, P_TOKEN);
	}
out:
	if (ret) {
		r->send_errors++;
		return -1;
	}
	r->sent_shape[sh][mode]++;
	r->sent++;
	return 0;
}

/* Raw frames with a good and then a bad ICRC to an unknown flow. */
static int probe(struct rogue *r)
{
	static uint8_t buf[MAX_SDR_LEN], fr[MAX_FRAME];
	long long nf0, nf1, nf2, rp0, rp1, rp2;
	const char *fmt_nf = "/sys/class/sdr/%s/drops/%s";
	const char *fmt_rp = "/sys/class/infiniband/%s/ports/1/hw_counters/%s";
	struct sdr_pkt p;
	unsigned int i, pass;
	size_t len;

	nf0 = read_ll(fmt_nf, r->tgt.name, "no_flow");
	rp0 = read_ll(fmt_rp, r->tgt.name, "rcvd_pkts");
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < r->o.probe; i++) {
			forge_base(r, NULL, &p);
			len = forge_data(r, &p, buf, false);
			if (raw_send(r, fr, build_frame(r, fr, buf, len, pass)))
				die("probe: sendto: %s", strerror(errno));
		}
		usleep(500000);
		if (!pass) {
			nf1 = read_ll(fmt_nf, r->tgt.name, "no_flow");
			rp1 = read_ll(fmt_rp, r->tgt.name, "rcvd_pkts");
		}
	}
	nf2 = read_ll(fmt_nf, r->tgt.name, "no_flow");
	rp2 = read_ll(fmt_rp, r->tgt.name, "rcvd_pkts");
	printf("probe %s: %u frames, good ICRC: no_flow +%lld, rxe rcvd_pkts +%lld; "
	       "bad ICRC: no_flow +%lld, rxe rcvd_pkts +%lld\n", r->tgt.name,
	       r->o.probe, nf1 - nf0, rp1 - rp0, nf2 - nf1, rp2 - rp1);
	if (r->o.json)
		printf("{\"probe\":%u,\"good_no_flow\":%lld,\"good_rcvd_pkts\":%lld,"
		       "\"bad_no_flow\":%lld,\"bad_rcvd_pkts\":%lld}\n", r->o.probe,
		       nf1 - nf0, rp1 - rp0, nf2 - nf1, rp2 - rp1);
	return nf1 - nf0 == r->o.probe && nf2 == nf1 ? 0 : 1;
}

/* The target's receive-error counters, QP recoveries and rxe's count. */
struct rx_snap {
	long long err, len, local, other, recov, rcvd;
};

static void rx_snap(struct rogue *r, struct rx_snap *s)
{
	const char *c = "/sys/class/sdr/%s/counters/%s";

	s->err = read_ll(c, r->tgt.name, "rx_errors");
	s->len = read_ll(c, r->tgt.name, "rx_err_length");
	s->local = read_ll(c, r->tgt.name, "rx_err_local");
	s->other = read_ll(c, r->tgt.name, "rx_err_other");
	s->recov = read_ll(c, r->tgt.name, "qp_recoveries");
	s->rcvd = read_ll("/sys/class/infiniband/%s/ports/1/hw_counters/%s",
			  r->tgt.name, "rcvd_pkts");
}

/* The target's ring has every buffer it made posted: "made posted most". */
static bool ring_full(struct rogue *r, long long *made, long long *posted)
{
	char path[128], buf[64];

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/recv_ring", r->tgt.name);
	if (read_line(path, buf, sizeof(buf)) ||
	    sscanf(buf, "%lld %lld", made, posted) != 2)
		die("%s: cannot read the ring", path);
	return *made == *posted;
}

/*
 * Wait up to 30 s for @cond; false if it never held.  Polls every
 * millisecond: a recovery under TCG takes tens of them.
 */
#define WAIT_UNTIL(cond) ({						\
	uint64_t _end = mono_ns() + 30000000000ULL;			\
	bool _ok;							\
	while (!(_ok = (cond)) && mono_ns() < _end && !stop)		\
		usleep(1000);						\
	_ok;								\
})

/*
 * --oversize N: N raw frames to the target's sdr QP whose payload is
 * longer than a receive buffer takes (4097 bytes up to what a 9000-byte
 * MTU carries, random), at most -r per second.  Each should end as one
 * rx_err_length: sdr's spill area takes the rest of the message and sdr
 * drops it (without the spill, rxe of 6.1 fails the receive with
 * IB_WC_LOC_QP_OP_ERR and puts the QP in ERR, and frames that come
 * while it is not ready are dropped before the responder).  Prints the
 * counters' rise once the ring is full again; exit 1 if it never is.
 */
static int oversize(struct rogue *r)
{
	static uint8_t buf[OVER_MAX_LEN], fr[ETH_LEN + IP4_LEN + UDP_LEN +
					      BTH_LEN + DETH_LEN +
					      OVER_MAX_LEN + 3 + ICRC_LEN];
	uint64_t t0 = mono_ns(), interval = 0, next = t0, now;
	long long made0, made, posted;
	struct rx_snap s0, s1;
	unsigned int i;
	size_t len;
	bool full;

	if (r->o.rate)
		interval = 1000000000ULL / r->o.rate;
	rx_snap(r, &s0);
	ring_full(r, &made0, &posted);
	for (i = 0; i < r->o.oversize && !stop; i++) {
		now = mono_ns();
		if (interval && now < next) {
			uint64_t d = next - now;
			struct timespec ts = { (time_t)(d / 1000000000ULL),
					       (long)(d % 1000000000ULL) };

			nanosleep(&ts, NULL);
		}
		next += interval;
		len = MAX_SDR_LEN + 1 + rnd_below(r, OVER_MAX_LEN - MAX_SDR_LEN);
		rnd_bytes(r, buf, len);
		if (raw_send(r, fr, build_frame(r, fr, buf, len, false)))
			die("oversize: sendto: %s", strerror(errno));
	}
	/* the last frames land, the QP is back if it went to ERR */
	usleep(500000);
	full = WAIT_UNTIL(ring_full(r, &made, &posted));
	rx_snap(r, &s1);
	printf("oversize %s: %u frames of %u..%u bytes in %.1f s: rx_errors +%lld "
	       "(length +%lld, local +%lld, other +%lld), qp_recoveries +%lld, "
	       "rxe rcvd_pkts +%lld; ring %lld made (%lld before), %lld posted\n",
	       r->tgt.name, i, MAX_SDR_LEN + 1, OVER_MAX_LEN,
	       (mono_ns() - t0) / 1e9, s1.err - s0.err, s1.len - s0.len,
	       s1.local - s0.local, s1.other - s0.other, s1.recov - s0.recov,
	       s1.rcvd - s0.rcvd, made, made0, posted);
	if (r->o.json)
		printf("{\"oversize\":%u,\"rx_errors\":%lld,"
		       "\"rx_err_length\":%lld,\"rx_err_local\":%lld,"
		       "\"rx_err_other\":%lld,\"qp_recoveries\":%lld,"
		       "\"rcvd_pkts\":%lld,\"made_before\":%lld,\"made\":%lld,"
		       "\"posted\":%lld,\"ring_full\":%s}\n",
		       i, s1.err - s0.err, s1.len - s0.len, s1.local - s0.local,
		       s1.other - s0.other, s1.recov - s0.recov, s1.rcvd - s0.rcvd,
		       made0, made, posted, full ? "true" : "false");
	return full ? 0 : 1;
}

/* A JSON object of @v by the drop each P_ index predicts. */
static void json_by_reason(const char *key, const uint64_t *v)
{
	int k;

	printf(",\"%s\":{", key);
	for (k = 0; k < P_NR; k++)
		printf("%s\"%s\":%" PRIu64, k ? "," : "",
		       sdr_drop_reason_name(p_reason[k]), v[k]);
	printf("}");
}

static bool is_p_reason(int reason)
{
	int k;

	for (k = 0; k < P_NR; k++)
		if (p_reason[k] == reason)
			return true;
	return false;
}

static void summary(struct rogue *r, double secs)
{
	uint64_t confirmed[P_NR] = { 0 }, late[P_NR] = { 0 };
	const struct flow_ref *f;
	const char *sep = "";
	int s, i, k;

	for (i = 0; i < r->nflows; i++)
		for (k = 0; k < P_NR; k++) {
			confirmed[k] += r->flows[i].confirmed[k];
			/* the final scan emptied pend[] */
			late[k] += r->flows[i].late[k];
		}
	for (k = 0; k < P_NR; k++)
		r->expect[p_reason[k]] = confirmed[k];
	if (!r->o.quiet) {
		printf("rogue: %s (qpn %u) as %s (qpn %u, %s on %s, qkey %#x): %"
		       PRIu64 " packets in %.1f s, seed %" PRIu64 "\n", r->tgt.name,
		       r->tgt_qpn, r->peer.name, r->peer_qpn,
		       inet_ntoa(*(struct in_addr *)&r->peer.ip), r->peer.netdev,
		       r->o.qkey, r->sent, secs, r->o.seed);
		printf("  %-14s %8s %8s\n", "shape", "raw", "verbs");
		for (s = 0; s < SH_NR; s++)
			printf("  %-14s %8" PRIu64 " %8" PRIu64 "\n", shape_names[s],
			       r->sent_shape[s][M_RAW], r->sent_shape[s][M_VERBS]);
		printf("  blind %" PRIu64 ": aimed at live flows %" PRIu64
		       " (+%" PRIu64 " late)", r->blind, confirmed[P_TOKEN],
		       late[P_TOKEN]);
		for (s = 1; s < SDR_DROP_NR; s++)
			if (r->expect[s] && !is_p_reason(s))
				printf(", %s %" PRIu64, sdr_drop_reason_name(s), r->expect[s]);
		printf("\n  at live flows that authenticate: replays %" PRIu64
		       " (+%" PRIu64 " late, %" PRIu64 " for flows never seen)",
		       confirmed[P_REPLAY], late[P_REPLAY], r->replay_unsure);
		printf(", copies %" PRIu64 " (+%" PRIu64 " late; %" PRIu64
		       " with a forged packet number)\n", confirmed[P_TAG],
		       late[P_TAG], r->copied_pn);
		printf("  captured %" PRIu64 " (ICRC as computed %" PRIu64
		       ", differs %" PRIu64 "), send errors %" PRIu64
		       ", verbs completion errors %" PRIu64 "\n", r->captured,
		       r->icrc_ok, r->icrc_bad, r->send_errors, r->verbs_errors);
		for (i = 0; i < r->nflows; i++) {
			f = &r->flows[i];
			printf("  flow %u (auth %s): confirmed %" PRIu64 "/%" PRIu64
			       "/%" PRIu64 " late %" PRIu64 "/%" PRIu64 "/%" PRIu64
			       " (token/tag/replay)%s%s\n", f->id,
			       f->auth ? "on" : "off", f->confirmed[P_TOKEN],
			       f->confirmed[P_TAG], f->confirmed[P_REPLAY],
			       f->late[P_TOKEN], f->late[P_TAG], f->late[P_REPLAY],
			       f->gone ? ", gone: " : "", f->why);
		}
		if (r->first_bad_state_ms)
			printf("  state seen: %s at %" PRId64 " ms\n", r->bad_state,
			       r->first_bad_state_ms);
	}
	if (!r->o.json)
		return;
	printf("{\"dev\":\"%s\",\"peer\":\"%s\",\"qpn\":%u,\"peer_qpn\":%u,"
	       "\"qkey\":%u,\"seed\":%" PRIu64 ",\"waited\":%.3f,\"seconds\":%.3f,"
	       "\"sent\":%" PRIu64 ",\"send_errors\":%" PRIu64
	       ",\"verbs_errors\":%" PRIu64 ",\"shapes\":{",
	       r->tgt.name, r->peer.name, r->tgt_qpn, r->peer_qpn, r->o.qkey,
	       r->o.seed, r->waited_s, secs,
	       r->sent, r->send_errors, r->verbs_errors);
	for (s = 0; s < SH_NR; s++) {
		printf("%s\"%s\":[%" PRIu64 ",%" PRIu64 "]", sep, shape_names[s],
		       r->sent_shape[s][M_RAW], r->sent_shape[s][M_VERBS]);
		sep = ",";
	}
	/* "late": bad_token's, as before there were other predictions */
	printf("},\"blind\":%" PRIu64 ",\"late\":%" PRIu64 ",\"expect\":{",
	       r->blind, late[P_TOKEN]);
	sep = "";
	for (s = 1; s < SDR_DROP_NR; s++) {
		if (!r->expect[s])
			continue;
		printf("%s\"%s\":%" PRIu64, sep, sdr_drop_reason_name(s), r->expect[s]);
		sep = ",";
	}
	printf("}");
	json_by_reason("confirmed", confirmed);
	json_by_reason("late_by", late);
	printf(",\"unsure\":{\"replay\":%" PRIu64 "},\"copied_pn\":%" PRIu64
	       ",\"flows\":{", r->replay_unsure, r->copied_pn);
	for (i = 0; i < r->nflows; i++) {
		f = &r->flows[i];
		printf("%s\"%u\":{\"auth\":%s", i ? "," : "", f->id,
		       f->auth ? "true" : "false");
		json_by_reason("confirmed", f->confirmed);
		json_by_reason("late", f->late);
		printf(",\"why\":\"%s\"}", f->why);
	}
	printf("},\"captured\":%" PRIu64 ",\"captured_by_type\":{\"data\":%" PRIu64
	       ",\"ack\":%" PRIu64 ",\"nack\":%" PRIu64 ",\"rnr\":%" PRIu64
	       ",\"close\":%" PRIu64 ",\"credit\":%" PRIu64 ",\"probe\":%" PRIu64
	       "},\"icrc_ok\":%" PRIu64 ",\"icrc_bad\":%" PRIu64
	       ",\"bad_state\":\"%s\",\"bad_state_ms\":%" PRId64 "}\n",
	       r->captured, r->cap_by_type[SDR_PKT_DATA], r->cap_by_type[SDR_PKT_ACK],
	       r->cap_by_type[SDR_PKT_NACK], r->cap_by_type[SDR_PKT_RNR],
	       r->cap_by_type[SDR_PKT_CLOSE], r->cap_by_type[SDR_PKT_CREDIT],
	       r->cap_by_type[SDR_PKT_PROBE], r->icrc_ok, r->icrc_bad,
	       r->bad_state, r->first_bad_state_ms);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: rogue -d DEV -p PEER [options]\n"
"Spray forged sdr packets at DEV's sdr QP, posing as PEER (another sdr\n"
"device): raw RoCEv2 frames with a spoofed source, and a verbs UD QP.\n"
"  -d, --dev DEV        target sdr device (e.g. rxe1)\n"
"  -p, --peer DEV       the device whose identity is spoofed (e.g. rxe0)\n"
"  -m, --mode MODE      raw, verbs or both (both: alternate)\n"
"  -n, --count N        stop after N packets (100000)\n"
"  -t, --time SEC       stop after SEC seconds (10)\n"
"  -r, --rate PPS       at most PPS packets per second (0: no limit; 1000)\n"
"  -s, --seed N         random seed (default: from the clock; printed)\n"
"      --replay PCT     share of raw packets made from captured genuine\n"
"                       frames, once some were captured: half replayed as\n"
"                       they were, half copied with a change under their\n"
"                       tag (20; 0: no capture)\n"
"      --until-gone     also stop when every target flow seen has gone\n"
"      --wait SEC       wait up to SEC for a connected flow on DEV (0)\n"
"      --mark N         print \"rogue: mark N\" once N packets are out\n"
"      --qkey Q         Q_Key (default: DEV's, /sys/class/sdr/DEV/qkey)\n"
"      --qpn N          DEV's sdr QPN (default: from PEER's flows in sysfs)\n"
"      --peer-qpn N     PEER's sdr QPN (default: from DEV's flows)\n"
"      --probe N        only check that rxe takes the raw frames: N to an\n"
"                       unknown flow id with a good ICRC (no_flow must rise\n"
"                       by N), N with a bad one (must not rise); exit 0/1\n"
"      --oversize N     only send N raw frames longer than a receive buffer\n"
"                       (4097..8948 bytes of payload, at most -r a second)\n"
"                       and report the target's receive errors, QP\n"
"                       recoveries and ring; exit 1 if it did not fill again\n"
"      --json           a JSON summary on the last line of stdout\n"
"  -q, --quiet          only the JSON summary\n"
"Exit: 0 done, 1 error or probe failed, 2 usage.\n");
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_REPLAY = 256, O_QKEY, O_QPN, O_PQPN, O_PROBE, O_JSON, O_GONE,
	       O_WAIT, O_MARK, O_OVERSIZE };
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "peer", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "count", required_argument, NULL, 'n' },
		{ "time", required_argument, NULL, 't' },
		{ "rate", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },
		{ "replay", required_argument, NULL, O_REPLAY },
		{ "until-gone", no_argument, NULL, O_GONE },
		{ "wait", required_argument, NULL, O_WAIT },
		{ "mark", required_argument, NULL, O_MARK },
		{ "qkey", required_argument, NULL, O_QKEY },
		{ "qpn", required_argument, NULL, O_QPN },
		{ "peer-qpn", required_argument, NULL, O_PQPN },
		{ "probe", required_argument, NULL, O_PROBE },
		{ "oversize", required_argument, NULL, O_OVERSIZE },
		{ "json", no_argument, NULL, O_JSON },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->mode[M_RAW] = o->mode[M_VERBS] = true;
	o->count = 100000;
	o->seconds = 10;
	o->rate = 1000;
	o->replay_pct = 20;
	while ((c = getopt_long(argc, argv, "d:p:m:n:t:r:s:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'p': o->peer = optarg; break;
		case 'm':
			o->mode[M_RAW] = !strcmp(optarg, "raw") || !strcmp(optarg, "both");
			o->mode[M_VERBS] = !strcmp(optarg, "verbs") || !strcmp(optarg, "both");
			if (!o->mode[M_RAW] && !o->mode[M_VERBS]) {
				usage(stderr);
				exit(2);
			}
			break;
		case 'n': o->count = strtoull(optarg, NULL, 0); break;
		case 't': o->seconds = strtod(optarg, NULL); break;
		case 'r': o->rate = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's':
			o->seed = strtoull(optarg, NULL, 0);
			o->seed_set = true;
			break;
		case O_REPLAY: o->replay_pct = (unsigned int)strtoul(optarg, NULL, 0); break;
		case O_GONE: o->until_gone = true; break;
		case O_WAIT: o->wait_s = strtod(optarg, NULL); break;
		case O_MARK: o->mark = strtoull(optarg, NULL, 0); break;
		case O_QKEY:
			o->qkey = (uint32_t)strtoul(optarg, NULL, 0);
			o->qkey_set = true;
			break;
		case O_QPN: o->qpn = (uint32_t)strtoul(optarg, NULL, 0); break;
		case O_PQPN: o->peer_qpn = (uint32_t)strtoul(optarg, NULL, 0); break;
		case O_PROBE: o->probe = (unsigned int)strtoul(optarg, NULL, 0); break;
		case O_OVERSIZE: o->oversize = (unsigned int)strtoul(optarg, NULL, 0); break;
		case O_JSON: o->json = true; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind != argc || !o->dev || !o->peer || o->replay_pct > 100 ||
	    o->seconds <= 0) {
		usage(stderr);
		exit(2);
	}
	if (!o->mode[M_RAW])
		o->replay_pct = 0;
}

int main(int argc, char **argv)
{
	struct rogue *r = calloc(1, sizeof(*r));
	uint64_t t0, end, next, interval = 0, next_scan;
	int mode = 0;

	if (!r)
		die("out of memory");
	parse_opts(argc, argv, &r->o);
	if (!r->o.seed_set)
		r->o.seed = mono_ns() ^ ((uint64_t)getpid() << 32);
	r->rng = r->o.seed;
	crc_init();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	devinfo_get(r->o.dev, &r->tgt);
	devinfo_get(r->o.peer, &r->peer);
	if (!r->o.qkey_set)
		r->o.qkey = qkey_get(r->tgt.name);

	/* Both QPNs from the flows between the two (both ends connected). */
	t0 = mono_ns();
	for (;;) {
		scan_flows(r, false);
		r->tgt_qpn = r->o.qpn ? r->o.qpn : find_tgt_qpn(r);
		r->peer_qpn = r->o.peer_qpn ? r->o.peer_qpn :
			      r->nflows ? r->flows[0].peer_qpn : 0;
		if ((r->tgt_qpn && r->peer_qpn &&
		     (r->nflows || r->o.probe || r->o.oversize)) ||
		    mono_ns() - t0 >= (uint64_t)(r->o.wait_s * 1e9) || stop)
			break;
		usleep(50000);
	}
	if (!r->tgt_qpn || !r->peer_qpn)
		die("%s's or %s's sdr QPN unknown: no connected flow between them "
		    "in sysfs (give --qpn and --peer-qpn)", r->tgt.name, r->peer.name);
	if (r->o.mode[M_RAW] || r->o.probe || r->o.oversize)
		raw_open(r);
	if (r->o.probe)
		return probe(r);
	if (r->o.oversize)
		return oversize(r);
	if (r->o.mode[M_VERBS])
		verbs_open(r);

	r->waited_s = (mono_ns() - t0) / 1e9;
	t0 = mono_ns();
	r->t_start = t0;
	end = t0 + (uint64_t)(r->o.seconds * 1e9);
	next = t0;
	next_scan = t0 + SCAN_NS;
	if (r->o.rate)
		interval = 1000000000ULL / r->o.rate;
	while (!stop && r->sent < r->o.count) {
		uint64_t now = mono_ns();

		if (now >= end)
			break;
		if (now >= next_scan) {
			next_scan = now + SCAN_NS;
			if (!scan_flows(r, false) && r->o.until_gone && r->nflows)
				break;
		}
		capture_drain(r);
		if (interval) {
			if (now < next) {
				uint64_t d = next - now;
				struct timespec ts = { (time_t)(d / 1000000000ULL),
						       (long)(d % 1000000000ULL) };

				nanosleep(&ts, NULL);
				continue;
			}
			/* behind: catch up at most a few packets, no burst */
			next = max_t(uint64_t, next + interval, now - 4 * interval);
		}
		do
			mode = (mode + 1) % M_NR;
		while (!r->o.mode[mode]);
		send_one(r, mode);
		if (r->o.mark && r->sent == r->o.mark) {
			printf("rogue: mark %" PRIu64 "\n", r->sent);
			fflush(stdout);
		}
	}
	if (r->qp)
		verbs_reap(r, true);
	/* Let the last packets arrive, then confirm against live flows. */
	sleep(1);
	scan_flows(r, true);
	summary(r, (mono_ns() - t0) / 1e9);
	return 0;
}
