// SPDX-License-Identifier: GPL-2.0
/*
 * sniff: an on-path attacker for the sdr VM tests (t_sniff runs it).  It
 * captures a connect and the traffic of the flows it makes, with a raw
 * socket on a veth, then forges packets into those live flows using
 * everything that was on the wire and nothing else: no sysfs, no key.
 *
 *  1. It captures from before the connect: rdma_cm's SIDR REQ and REP
 *     (RoCEv2 UD sends to QP1 carrying a CM MAD) and, in their private
 *     data, libsdr's CM blob (magic "SDRC", version 3, userlib/libsdr_cm.c
 *     cm_encode()): each side's endpoint (GID, QPN, Q_Key, flow id,
 *     token), paths and key-exchange share (auth, flags, X25519 public
 *     key, signature).  Then the flows' packets both ways: Ethernet, IP
 *     and UDP headers, packet numbers, message numbers and geometry.
 *  2. From the public values it makes candidate keys: the public keys
 *     themselves, their XOR, hashes and HMACs of the two, the share
 *     hashes and the transcript hash (both computed exactly, as the
 *     ends do), the tokens, the signatures, an all-zero key (where the
 *     ABI 8 blob had the key), and the protocol's own HKDF run with every
 *     public stand-in for the X25519 secret it cannot compute (zero, a
 *     public key, "X25519" of the two public keys, their hash) and for
 *     the job secret (zero, the signatures).
 *  3. With each candidate it tags (VMAC-64 through AF_ALG, or
 *     ChaCha20-Poly1305, as the flow's auth in the blob says; kex.h),
 *     under packet numbers the flow has not used yet, packets of every
 *     shape to both ends: a new message's DATA, a captured DATA with
 *     other bytes, an ACK claiming completion, an ACK with every bit
 *     set, a NACK, an RNR, a CLOSE and a captured control packet with
 *     another ts.  Besides: captured frames with a byte changed under
 *     their genuine tag, and captured frames replayed as they were.
 *
 * Every forged packet decodes (sdr_wire_decode(), the receiver's own
 * parser) and carries the right flow ids, token, addresses, QPNs and
 * Q_Key, so the only check that can stop it is the tag (bad_tag); a
 * replay, the window (replay).  It prints per target flow what it sent
 * for each drop, the JSON on the last line; the test compares them with
 * the counters.  The frames' ICRC is rxe's (roce.h).
 *
 * Handshake: "sniff: capturing" once the socket is open (start the
 * connect after it), "sniff: ready" once it has the connect and enough
 * traffic; then it waits for --go FILE to exist (counters read in
 * between), forges, waits a second and reports.
 */
#include "kex.h"	/* first: it sets OpenSSL's API level */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "roce.h"
#include "sdr_wire.h"

#define QP1			1
#define MAD_LEN			256
#define MAD_CLASS_CM		0x07
#define CM_ATTR_SIDR_REQ	0x0017
#define CM_ATTR_SIDR_REP	0x0018
#define SIDR_REQ_PRIV		40	/* MAD header 24, then 16 bytes */
#define SIDR_REQ_PRIV_LEN	216
#define SIDR_REP_PRIV		120	/* 24 + 4 + 4 + 4 + 8 + 4 + 72 */
#define SIDR_REP_PRIV_LEN	136
#define CM_MAGIC		0x43524453u	/* "SDRC" little-endian */
#define CM_VERSION		3
#define CM_BLOB_LEN		(5 + 128)

#define MAX_ENDS		16
#define MAX_DIRS		8	/* four flow pairs */
#define KEEP			64	/* captured frames kept per kind */
#define MAX_CANDS		32

/* One side of a connect, as its blob says. */
struct end {
	struct sdr_endpoint ep;
	struct sdr_ep_paths paths;
	struct sdr_ep_kex kex;
	uint8_t h[KEX_LEN];		/* its share's hash */
	uint32_t ip;			/* network order, from the GID */
	bool req;			/* from a REQ (else a REP) */
	uint64_t tid;			/* the MAD's transaction id */
};

/* What was captured of the packets to one end's flow. */
struct dir {
	struct end *to, *from;
	struct frame data[KEEP], ctrl[KEEP];
	uint32_t ndata, nctrl;		/* captured (the arrays keep the last) */
	uint64_t max_pn, pkts;
	uint32_t last_data_seq;		/* of the DATA the target sends */
	bool have_tmpl;
	struct frame tmpl;		/* a genuine frame: the headers */
	int tx_sock;			/* AF_PACKET on the source's netdev */
	uint64_t next_pn;
	/* what was sent, by the drop it must meet */
	uint64_t sent_tag, sent_replay, sent_copy, by_shape[16];
	uint64_t send_errors, not_decoded;
};

struct cand {
	char name[64];
	uint8_t k[KEX_LEN];
};

struct sniff {
	const char *ifname, *go, *secret_file;
	double wait_s, rate;
	unsigned int nreplay, ncopy;
	bool json;
	int cap;
	struct end ends[MAX_ENDS];
	int nends, nreq, nrep;
	uint64_t mads, frames, cap_sdr;
	struct dir dirs[MAX_DIRS];	/* [2i] and [2i + 1]: one pair */
	int ndirs;
	uint64_t last_cm_ns;		/* when the last new blob came */
	struct cand cands[MAX_CANDS];
	int ncands;
	uint64_t rng;
	int signed_ok, signed_bad;	/* --secret-file: shares checked */
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sniff: ");
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

static uint64_t rnd(struct sniff *s)
{
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ---- the connect: CM MADs and libsdr's blob ---- */

static uint64_t le(const uint8_t **p, unsigned int n)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	*p += n;
	return v;
}

/* userlib/libsdr_cm.c cm_decode(), from the bytes: 0 or -1. */
static int blob_decode(const uint8_t *b, struct end *e)
{
	struct sdr_endpoint *ep = &e->ep;
	const uint8_t *p = b + 5;
	uint32_t i;

	if (get_le32(b) != CM_MAGIC || b[4] != CM_VERSION)
		return -1;
	memset(e, 0, sizeof(*e));
	ep->magic = SDR_EP_MAGIC;
	ep->abi = (uint32_t)le(&p, 1);
	ep->policy = (uint32_t)le(&p, 1);
	e->kex.alg = (uint32_t)le(&p, 1);
	e->kex.flags = (uint32_t)le(&p, 1);
	e->paths.n = (uint32_t)le(&p, 1);
	memcpy(ep->gid, p, sizeof(ep->gid));
	p += sizeof(ep->gid);
	ep->qpn = (uint32_t)le(&p, 3);
	ep->qkey = (uint32_t)le(&p, 4);
	ep->flow_id = (uint32_t)le(&p, 3);
	ep->payload = (uint32_t)le(&p, 2);
	ep->chunk_size = (uint32_t)le(&p, 4);
	ep->max_msg_size = (uint32_t)le(&p, 4);
	ep->max_msgs = (uint32_t)le(&p, 2);
	ep->token_lo = (uint32_t)le(&p, 4);
	ep->token_hi = (uint32_t)le(&p, 4);
	ep->seq0 = (uint32_t)le(&p, 4);
	ep->none_window = (uint32_t)le(&p, 4);
	e->paths.qpn[0] = ep->qpn;
	for (i = 1; i < SDR_PATHS_MAX; i++)
		e->paths.qpn[i] = (uint32_t)le(&p, 3);
	memcpy(e->kex.pub, p, KEX_LEN);
	p += KEX_LEN;
	memcpy(e->kex.mac, p, SDR_KEX_MAC_LEN);
	if (e->paths.n < 1 || e->paths.n > SDR_PATHS_MAX || !ep->flow_id)
		return -1;
	memcpy(&e->ip, ep->gid + 12, 4);
	kex_share_hash(ep, &e->paths, &e->kex, e->h);
	return 0;
}

/* A CM MAD on QP1: a SIDR REQ's or REP's blob, kept once per TID and side. */
static void cm_mad(struct sniff *s, const uint8_t *mad, size_t len)
{
	uint16_t attr;
	size_t off, n, i, at;
	uint64_t tid;
	struct end e;

	if (len < MAD_LEN || mad[1] != MAD_CLASS_CM)
		return;
	s->mads++;
	attr = (uint16_t)(mad[16] << 8 | mad[17]);
	tid = (uint64_t)get_be32(mad + 8) << 32 | get_be32(mad + 12);
	if (attr == CM_ATTR_SIDR_REQ) {
		off = SIDR_REQ_PRIV;
		n = SIDR_REQ_PRIV_LEN;
	} else if (attr == CM_ATTR_SIDR_REP) {
		off = SIDR_REP_PRIV;
		n = SIDR_REP_PRIV_LEN;
	} else {
		return;
	}
	/* a REQ's private data starts with rdma_cm's own header (36 bytes) */
	for (at = off; at + CM_BLOB_LEN <= off + n; at += 4)
		if (!blob_decode(mad + at, &e))
			break;
	if (at + CM_BLOB_LEN > off + n)
		return;
	e.req = attr == CM_ATTR_SIDR_REQ;
	e.tid = tid;
	for (i = 0; i < (size_t)s->nends; i++)	/* a retry */
		if (s->ends[i].tid == tid && s->ends[i].req == e.req)
			return;
	if (s->nends == MAX_ENDS)
		return;
	s->ends[s->nends++] = e;
	if (e.req)
		s->nreq++;
	else
		s->nrep++;
	s->last_cm_ns = mono_ns();
	printf("sniff: SIDR %s tid %#" PRIx64 ": blob at MAD byte %zu: %s flow %u "
	       "qpn %u qkey %#x token %08x%08x auth %u flags %#x paths %u\n",
	       e.req ? "REQ" : "REP", tid, at, inet_ntoa(*(struct in_addr *)&e.ip),
	       e.ep.flow_id, e.ep.qpn, e.ep.qkey, e.ep.token_hi, e.ep.token_lo,
	       e.kex.alg, e.kex.flags, e.paths.n);
	fflush(stdout);
}

/* ---- the flows' packets ---- */

/*
 * Pair each REP with its REQ (the same transaction): a flow pair under
 * attack, one dir each way.  false while there is none.
 */
static bool pairs_update(struct sniff *s)
{
	int i, j, k;

	for (i = 0; i < s->nends; i++) {
		struct end *p = &s->ends[i];
		bool known = false;

		if (p->req)
			continue;
		for (k = 0; k < s->ndirs; k++)
			known |= s->dirs[k].to == p;
		for (j = 0; j < s->nends && !known; j++) {
			struct end *q = &s->ends[j];

			if (!q->req || q->tid != p->tid || s->ndirs + 2 > MAX_DIRS)
				continue;
			s->dirs[s->ndirs].to = p;
			s->dirs[s->ndirs++].from = q;
			s->dirs[s->ndirs].to = q;
			s->dirs[s->ndirs++].from = p;
			known = true;
		}
	}
	return s->ndirs > 0;
}

static struct dir *partner(struct sniff *s, struct dir *d)
{
	return &s->dirs[(d - s->dirs) ^ 1];
}

static struct dir *dir_of(struct sniff *s, uint32_t dst_ip, uint32_t dst_flow,
			  uint32_t src_flow)
{
	int i;

	for (i = 0; i < s->ndirs; i++)
		if (s->dirs[i].to->ip == dst_ip &&
		    s->dirs[i].to->ep.flow_id == dst_flow &&
		    s->dirs[i].from->ep.flow_id == src_flow)
			return &s->dirs[i];
	return NULL;
}

/*
 * sdr_wire_decode(), but an ACK or NACK body that does not parse is
 * taken as ciphertext (an AEAD flow's: the receiver may read it only
 * once the tag is checked): the header decoded as with an empty body.
 */
static int decode(const uint8_t *buf, size_t len, struct sdr_pkt *p)
{
	uint8_t tmp[SDR_WIRE_HDR_LEN + SDR_ACK_FIXED_LEN] = { 0 };
	int ret = sdr_wire_decode(buf, (u32)len, p);

	if (ret != -SDR_DROP_ACK)
		return ret;
	memcpy(tmp, buf, SDR_WIRE_HDR_LEN);
	put_be16(tmp + 6, SDR_ACK_FIXED_LEN);
	ret = sdr_wire_decode(tmp, sizeof(tmp), p);
	p->payload_len = (uint16_t)(len - SDR_WIRE_HDR_LEN);
	return ret;
}

static void keep(struct frame *ring, uint32_t *n, const uint8_t *f, size_t len,
		 size_t sdr_len)
{
	struct frame *slot = &ring[(*n)++ % KEEP];

	memcpy(slot->b, f, len);
	slot->len = (uint16_t)len;
	slot->sdr_len = (uint16_t)sdr_len;
}

static void sdr_frame(struct sniff *s, const uint8_t *f, size_t len,
		      const uint8_t *pkt, size_t plen)
{
	const uint8_t *ip = f + ETH_LEN;
	struct sdr_pkt p;
	struct dir *d;
	uint32_t dst;

	if (!pairs_update(s) || decode(pkt, plen, &p))
		return;
	memcpy(&dst, ip + 16, 4);
	d = dir_of(s, dst, p.dst_flow, p.src_flow);
	if (!d)
		return;
	s->cap_sdr++;
	d->pkts++;
	if (p.pn > d->max_pn)
		d->max_pn = p.pn;
	if (!d->have_tmpl) {
		memcpy(d->tmpl.b, f, SDR_OFF);
		d->have_tmpl = true;
	}
	if (p.type == SDR_PKT_DATA)
		keep(d->data, &d->ndata, f, len, plen);
	else
		keep(d->ctrl, &d->nctrl, f, len, plen);
	/* the other way's DATA: what an ACK to this end's flow names */
	if (p.type == SDR_PKT_DATA)
		partner(s, d)->last_data_seq = p.msg_seq;
}

/* One captured frame: a CM MAD, an sdr packet of the pair, or nothing. */
static void capture_one(struct sniff *s, const uint8_t *f, size_t n)
{
	const uint8_t *ip = f + ETH_LEN, *bth = ip + IP4_LEN + UDP_LEN;
	size_t udp_len, pad, plen;

	s->frames++;
	if (n < SDR_OFF + ICRC_LEN || n > MAX_FRAME)
		return;
	udp_len = (size_t)ip[IP4_LEN + 4] << 8 | ip[IP4_LEN + 5];
	if (ETH_LEN + IP4_LEN + udp_len > n ||
	    udp_len < UDP_LEN + BTH_LEN + DETH_LEN + ICRC_LEN ||
	    bth[0] != OP_UD_SEND_ONLY)
		return;
	pad = (bth[1] >> 4) & 3;
	plen = udp_len - UDP_LEN - BTH_LEN - DETH_LEN - ICRC_LEN;
	if (pad > plen)
		return;
	plen -= pad;
	if ((get_be32(bth + 4) & 0xffffff) == QP1)
		cm_mad(s, f + SDR_OFF, plen);
	else
		sdr_frame(s, f, ETH_LEN + IP4_LEN + udp_len, f + SDR_OFF, plen);
}

/*
 * Enough to forge with: every flow pair connected has DATA captured one
 * way or the other and a few packets each way (the headers to send
 * with), and no new connect came for a second (another pair may follow:
 * the provider connects each way).
 */
static bool enough(struct sniff *s)
{
	int i;

	if (!s->ndirs || mono_ns() - s->last_cm_ns < 1000000000ULL)
		return false;
	for (i = 0; i < s->ndirs; i += 2)
		if (s->dirs[i].ndata + s->dirs[i + 1].ndata < 8 ||
		    s->dirs[i].pkts < 4 || s->dirs[i + 1].pkts < 4)
			return false;
	return true;
}

static void cap_open(struct sniff *s)
{
	/* IPv4 without options, UDP to 4791, either way */
	struct sock_filter code[] = {
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
		.sll_ifindex = (int)if_nametoindex(s->ifname),
	};
	int rcvbuf = 4 << 20;

	if (!sll.sll_ifindex)
		die("%s: no such interface", s->ifname);
	s->cap = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
			htons(ETH_P_ALL));
	if (s->cap < 0)
		die("AF_PACKET socket: %s (root needed)", strerror(errno));
	if (setsockopt(s->cap, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)))
		die("SO_ATTACH_FILTER: %s", strerror(errno));
	setsockopt(s->cap, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	if (bind(s->cap, (struct sockaddr *)&sll, sizeof(sll)))
		die("bind to %s: %s", s->ifname, strerror(errno));
}

/* Take what the socket has; wait up to @ms for the first. */
static void cap_drain(struct sniff *s, int ms)
{
	static uint8_t buf[MAX_FRAME + 64];
	struct pollfd pfd = { .fd = s->cap, .events = POLLIN };
	struct sockaddr_ll from;
	socklen_t fl;
	ssize_t n;

	if (poll(&pfd, 1, ms) <= 0)
		return;
	for (;;) {
		fl = sizeof(from);
		n = recvfrom(s->cap, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
			     (struct sockaddr *)&from, &fl);
		if (n < 0)
			return;
		if ((size_t)n <= sizeof(buf))
			capture_one(s, buf, (size_t)n);
	}
}

/* ---- candidate keys: everything public, run through every step ---- */

static void add_cand(struct sniff *s, const char *name, const void *k,
		     size_t len)
{
	struct cand *c;

	if (s->ncands == MAX_CANDS)
		die("too many candidate keys");
	c = &s->cands[s->ncands++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	memset(c->k, 0, sizeof(c->k));
	memcpy(c->k, k, len < KEX_LEN ? len : KEX_LEN);
}

static void sha(const uint8_t *a, size_t la, const uint8_t *b, size_t lb,
		uint8_t out[KEX_LEN])
{
	SHA256_CTX c;

	SHA256_Init(&c);
	SHA256_Update(&c, a, la);
	SHA256_Update(&c, b, lb);
	SHA256_Final(out, &c);
}

static void hmac1(const uint8_t *key, size_t klen, const uint8_t *m,
		  size_t mlen, uint8_t out[KEX_LEN])
{
	const uint8_t *p[1] = { m };
	size_t l[1] = { mlen };

	kex_hmac(key, klen, p, l, 1, out);
}

/*
 * The protocol's HKDF ("Key exchange") with @z for the X25519 secret and
 * @salt (32 bytes) for the job secret's S: the key of @sender's packets.
 */
static void hkdf_guess(const uint8_t *salt, const uint8_t *z,
		       const uint8_t *t, const struct end *sender,
		       uint8_t out[KEX_LEN])
{
	static const uint8_t one = 1;
	const uint8_t *p[4] = { (const uint8_t *)"sdr key v1", t,
				sender->kex.pub, &one };
	size_t l[4] = { 10, KEX_LEN, KEX_LEN, 1 };
	uint8_t prk[KEX_LEN];

	hmac1(salt, KEX_LEN, z, KEX_LEN, prk);
	kex_hmac(prk, KEX_LEN, p, l, 4, out);
}

/* X25519 with a public key's bytes taken for a private key: 0 or -1. */
static int x25519_pub_pub(const uint8_t *a, const uint8_t *b,
			  uint8_t out[KEX_LEN])
{
	EVP_PKEY *me = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, a,
						    KEX_LEN);
	EVP_PKEY *them = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, b,
						     KEX_LEN);
	EVP_PKEY_CTX *c = me ? EVP_PKEY_CTX_new(me, NULL) : NULL;
	size_t n = KEX_LEN;
	int ret = -1;

	if (c && them && EVP_PKEY_derive_init(c) > 0 &&
	    EVP_PKEY_derive_set_peer(c, them) > 0 &&
	    EVP_PKEY_derive(c, out, &n) > 0)
		ret = 0;
	EVP_PKEY_CTX_free(c);
	EVP_PKEY_free(me);
	EVP_PKEY_free(them);
	return ret;
}

/*
 * The candidates for the key of packets from @snd to @rcv.  Everything
 * here is computed from the two blobs alone.
 */
static void make_cands(struct sniff *s, const struct end *snd,
		       const struct end *rcv)
{
	static const uint8_t zero[KEX_LEN];
	const uint8_t *a = snd->kex.pub, *b = rcv->kex.pub;
	uint8_t t[KEX_LEN], x[KEX_LEN], z[KEX_LEN], k[KEX_LEN], salt[KEX_LEN];
	uint8_t tok[16];
	bool a_first = memcmp(a, b, KEX_LEN) < 0;
	SHA256_CTX c;
	int i;

	s->ncands = 0;
	add_cand(s, "zero (the ABI 8 key field)", zero, KEX_LEN);
	add_cand(s, "sender public key", a, KEX_LEN);
	add_cand(s, "receiver public key", b, KEX_LEN);
	for (i = 0; i < KEX_LEN; i++)
		x[i] = a[i] ^ b[i];
	add_cand(s, "xor of public keys", x, KEX_LEN);
	sha(a, KEX_LEN, b, KEX_LEN, k);
	add_cand(s, "sha256(sender|receiver pub)", k, KEX_LEN);
	sha(b, KEX_LEN, a, KEX_LEN, k);
	add_cand(s, "sha256(receiver|sender pub)", k, KEX_LEN);
	hmac1(a, KEX_LEN, b, KEX_LEN, k);
	add_cand(s, "hmac(sender pub, receiver pub)", k, KEX_LEN);
	hmac1(b, KEX_LEN, a, KEX_LEN, k);
	add_cand(s, "hmac(receiver pub, sender pub)", k, KEX_LEN);
	add_cand(s, "sender share hash", snd->h, KEX_LEN);
	add_cand(s, "receiver share hash", rcv->h, KEX_LEN);
	/* the transcript hash, exactly as the ends compute it */
	SHA256_Init(&c);
	SHA256_Update(&c, KEX_STR("sdr transcript v1"));
	SHA256_Update(&c, a_first ? snd->h : rcv->h, KEX_LEN);
	SHA256_Update(&c, a_first ? rcv->h : snd->h, KEX_LEN);
	SHA256_Final(t, &c);
	add_cand(s, "transcript hash", t, KEX_LEN);
	/* the receiving flow's token (what a packet to it carries), twice */
	put_be32(tok, rcv->ep.token_hi);
	put_be32(tok + 4, rcv->ep.token_lo);
	memcpy(tok + 8, tok, 8);
	add_cand(s, "receiver token", tok, 16);
	memcpy(k, snd->kex.mac, SDR_KEX_MAC_LEN);
	memcpy(k + SDR_KEX_MAC_LEN, rcv->kex.mac, SDR_KEX_MAC_LEN);
	add_cand(s, "signatures", k, KEX_LEN);
	/* HKDF as specified, the X25519 secret and S guessed */
	hkdf_guess(zero, zero, t, snd, k);
	add_cand(s, "hkdf(Z=0)", k, KEX_LEN);
	hkdf_guess(zero, a, t, snd, k);
	add_cand(s, "hkdf(Z=sender pub)", k, KEX_LEN);
	hkdf_guess(zero, b, t, snd, k);
	add_cand(s, "hkdf(Z=receiver pub)", k, KEX_LEN);
	hkdf_guess(zero, x, t, snd, k);
	add_cand(s, "hkdf(Z=xor of pubs)", k, KEX_LEN);
	sha(a_first ? a : b, KEX_LEN, a_first ? b : a, KEX_LEN, z);
	hkdf_guess(zero, z, t, snd, k);
	add_cand(s, "hkdf(Z=sha256 of pubs)", k, KEX_LEN);
	if (!x25519_pub_pub(a, b, z)) {
		hkdf_guess(zero, z, t, snd, k);
		add_cand(s, "hkdf(Z=x25519(sender pub, receiver pub))", k, KEX_LEN);
	}
	if (!x25519_pub_pub(b, a, z)) {
		hkdf_guess(zero, z, t, snd, k);
		add_cand(s, "hkdf(Z=x25519(receiver pub, sender pub))", k, KEX_LEN);
	}
	/* the job secret's S guessed from the signatures (psk flows) */
	memset(salt, 0, sizeof(salt));
	memcpy(salt, snd->kex.mac, SDR_KEX_MAC_LEN);
	memcpy(salt + SDR_KEX_MAC_LEN, rcv->kex.mac, SDR_KEX_MAC_LEN);
	hkdf_guess(salt, zero, t, snd, k);
	add_cand(s, "hkdf(S=signatures, Z=0)", k, KEX_LEN);
	hkdf_guess(salt, x, t, snd, k);
	add_cand(s, "hkdf(S=signatures, Z=xor of pubs)", k, KEX_LEN);
	/* the key a flow of ABI 8 sent would sit in the endpoint: none */
	put_be32(k, rcv->ep.qkey);
	put_be32(k + 4, rcv->ep.flow_id);
	memcpy(k + 8, tok, 8);
	memcpy(k + 16, rcv->ep.gid, 16);
	add_cand(s, "receiver endpoint bytes", k, KEX_LEN);
}

/* ---- forging ---- */

enum shape {
	F_DATA_NEW,		/* a new message's first packet */
	F_DATA_RETAG,		/* a captured DATA, other bytes, our tag */
	F_ACK_COMPLETE,
	F_ACK_SACK_ALL,
	F_NACK,
	F_RNR,
	F_CLOSE,
	F_CTRL_RETAG,		/* a captured control packet, other ts, our tag */
	F_NR_KEYED,
	F_COPY = F_NR_KEYED,	/* a captured frame altered under its tag */
	F_REPLAY,		/* a captured frame as it was */
	F_NR
};

static const char * const shape_names[F_NR] = {
	"data_new", "data_retag", "ack_complete", "ack_sack_all", "nack",
	"rnr", "close", "ctrl_retag", "copy", "replay",
};

/* The AF_PACKET socket on the netdev whose MAC is @mac (the source's). */
static int tx_open(const uint8_t *mac)
{
	struct ifaddrs *ifa, *i;
	int idx = 0, fd;

	if (getifaddrs(&ifa))
		die("getifaddrs: %s", strerror(errno));
	for (i = ifa; i && !idx; i = i->ifa_next) {
		struct sockaddr_ll *sl = (struct sockaddr_ll *)i->ifa_addr;

		if (sl && sl->sll_family == AF_PACKET && sl->sll_halen == 6 &&
		    !memcmp(sl->sll_addr, mac, 6))
			idx = sl->sll_ifindex;
	}
	freeifaddrs(ifa);
	if (!idx)
		die("no netdev here has MAC %02x:%02x:%02x:%02x:%02x:%02x", mac[0],
		    mac[1], mac[2], mac[3], mac[4], mac[5]);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("AF_PACKET socket: %s", strerror(errno));
	{
		struct sockaddr_ll sll = { .sll_family = AF_PACKET,
					   .sll_ifindex = idx };

		if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
			die("bind: %s", strerror(errno));
	}
	return fd;
}

static int tx(struct dir *d, const uint8_t *f, size_t len)
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		if (send(d->tx_sock, f, len, 0) == (ssize_t)len)
			return 0;
		if (errno != EAGAIN && errno != ENOBUFS)
			break;
		usleep(100);
	}
	d->send_errors++;
	return -1;
}

/* The sdr packet @sdr of @len bytes in a frame with @d's headers. */
static size_t frame_of(struct sniff *s, struct dir *d, uint8_t *f,
		       const uint8_t *sdr, size_t len)
{
	size_t pad = (4 - len % 4) % 4;
	size_t udp_len = UDP_LEN + BTH_LEN + DETH_LEN + len + pad + ICRC_LEN;
	uint8_t *ip = f + ETH_LEN, *udp = ip + IP4_LEN, *bth = udp + UDP_LEN;

	memcpy(f, d->tmpl.b, SDR_OFF);
	put_be16(ip + 2, (uint16_t)(IP4_LEN + udp_len));
	put_be16(ip + 4, (uint16_t)rnd(s));
	put_be16(ip + 10, 0);
	put_be16(ip + 10, ip_csum(ip, IP4_LEN));
	put_be16(udp + 4, (uint16_t)udp_len);
	bth[1] = (uint8_t)((bth[1] & 0xcf) | pad << 4);
	put_be32(bth + 8, (uint32_t)rnd(s) & 0xffffff);
	memcpy(f + SDR_OFF, sdr, len);
	memset(f + SDR_OFF + len, 0, pad);
	put_le32(ip + IP4_LEN + udp_len - ICRC_LEN,
		 roce_icrc(ip, IP4_LEN + udp_len - ICRC_LEN));
	return ETH_LEN + IP4_LEN + udp_len;
}

static const struct frame *pick(struct sniff *s, const struct frame *ring,
				uint32_t n)
{
	uint32_t have = n < KEEP ? n : KEEP;

	return have ? &ring[rnd(s) % have] : NULL;
}

/*
 * A captured DATA (@data) or control packet to @d's target, else one the
 * other way (each pair carries data one way, answers the other), in *p
 * with @d's flow ids and token.  NULL: none.
 */
static const struct frame *pick_pkt(struct sniff *s, struct dir *d, bool data,
				    struct sdr_pkt *p)
{
	struct dir *o = partner(s, d);
	const struct frame *c = data ? pick(s, d->data, d->ndata) :
				       pick(s, d->ctrl, d->nctrl);

	if (!c)
		c = data ? pick(s, o->data, o->ndata) : pick(s, o->ctrl, o->nctrl);
	if (!c || decode(c->b + SDR_OFF, c->sdr_len, p))
		return NULL;
	p->dst_flow = d->to->ep.flow_id;
	p->src_flow = d->from->ep.flow_id;
	p->token = (uint64_t)d->to->ep.token_hi << 32 | d->to->ep.token_lo;
	return c;
}

/* A control packet's header to @d's target: its fields from the capture. */
static void ctrl_base(struct dir *d, struct sdr_pkt *p, uint8_t type)
{
	memset(p, 0, sizeof(*p));
	p->type = type;
	p->policy = (uint8_t)d->to->ep.policy;
	p->dst_flow = d->to->ep.flow_id;
	p->src_flow = d->from->ep.flow_id;
	p->token = (uint64_t)d->to->ep.token_hi << 32 | d->to->ep.token_lo;
	p->msg_seq = d->last_data_seq;
}

/*
 * Shape @sh to @d's target, tagged with @key: its sdr bytes in @buf and
 * their length, 0 if nothing captured makes it.
 */
static size_t forge_keyed(struct sniff *s, struct dir *d, enum shape sh,
			  const uint8_t *key, uint8_t *buf)
{
	struct sdr_ack ack = { 0 };
	const struct frame *c;
	struct sdr_pkt p, chk;
	size_t len;
	uint32_t i;

	switch (sh) {
	case F_DATA_NEW:
	case F_DATA_RETAG:
		if (!pick_pkt(s, d, true, &p))
			return 0;
		if (sh == F_DATA_NEW) {
			/* the next message's first packet, its geometry */
			p.land -= p.offset;
			p.offset = 0;
			p.msg_seq++;
			if (p.payload_len >= p.msg_len) {
				p.payload_len = (uint16_t)p.msg_len;
				p.flags |= SDR_PKT_F_LAST;
			} else {
				p.flags &= (uint8_t)~SDR_PKT_F_LAST;
			}
			p.flags &= (uint8_t)~(SDR_PKT_F_RETX | SDR_PKT_F_PARITY);
			p.imm = (uint32_t)rnd(s);
		}
		p.ts = (uint32_t)rnd(s);
		for (i = 0; i < p.payload_len; i++)
			buf[SDR_WIRE_HDR_LEN + i] = (uint8_t)rnd(s);
		break;
	case F_ACK_COMPLETE:
	case F_ACK_SACK_ALL:
	case F_NACK:
		ctrl_base(d, &p, sh == F_NACK ? SDR_PKT_NACK : SDR_PKT_ACK);
		if (sh == F_ACK_COMPLETE) {
			p.aux = SDR_ACK_F_COMPLETE;
		} else {
			ack.nbits = SDR_ACK_MAX_BITS;
			memset(ack.map, sh == F_NACK ? 0 : 0xff, sizeof(ack.map));
		}
		p.payload_len = (uint16_t)sdr_ack_encode(&ack, buf + SDR_WIRE_HDR_LEN);
		break;
	case F_RNR:
	case F_CLOSE:
		ctrl_base(d, &p, sh == F_RNR ? SDR_PKT_RNR : SDR_PKT_CLOSE);
		if (sh == F_CLOSE)
			p.msg_seq = 0;
		break;
	default:	/* F_CTRL_RETAG */
		c = pick_pkt(s, d, false, &p);
		if (!c)
			return 0;
		memcpy(buf + SDR_WIRE_HDR_LEN, c->b + SDR_OFF + SDR_WIRE_HDR_LEN,
		       p.payload_len);
		/* an AEAD flow's body is ciphertext: one of its length instead */
		if ((p.type == SDR_PKT_ACK || p.type == SDR_PKT_NACK) &&
		    sdr_ack_decode(buf + SDR_WIRE_HDR_LEN, p.payload_len, &ack) &&
		    p.payload_len >= SDR_ACK_FIXED_LEN &&
		    p.payload_len <= SDR_ACK_MAX_LEN) {
			ack.nbits = (uint16_t)((p.payload_len - SDR_ACK_FIXED_LEN) * 8);
			memset(&ack, 0, offsetof(struct sdr_ack, nbits));
			memset(ack.map, 0, sizeof(ack.map));
			sdr_ack_encode(&ack, buf + SDR_WIRE_HDR_LEN);
		}
		p.ts ^= 1 + (uint32_t)(rnd(s) % 0xfffffffeU);
		break;
	}
	/* a number the receiver has not seen: what a real forger would use */
	p.pn = d->next_pn++;
	memset(p.tag, 0, sizeof(p.tag));
	sdr_wire_encode(&p, buf);
	len = SDR_WIRE_HDR_LEN + p.payload_len;
	/* the receiver's parser takes it (AEAD: before encryption) */
	if (sdr_wire_decode(buf, (u32)len, &chk)) {
		d->not_decoded++;
		return 0;
	}
	if (kex_seal(d->to->kex.alg, key, p.pn, buf, SDR_WIRE_HDR_LEN,
		     SDR_WIRE_TAG_OFF, p.payload_len))
		die("kex_seal failed (AF_ALG vmac64(aes) or OpenSSL)");
	return len;
}

/* A captured frame with one change under its genuine tag: its length. */
static size_t forge_copy(struct sniff *s, struct dir *d, uint8_t *buf)
{
	bool data = !d->nctrl || (d->ndata && rnd(s) % 2);
	const struct frame *c = data ? pick(s, d->data, d->ndata) :
				       pick(s, d->ctrl, d->nctrl);
	size_t len;
	uint32_t i;

	if (!c)
		return 0;
	len = c->sdr_len;
	memcpy(buf, c->b + SDR_OFF, len);
	switch (rnd(s) % 3) {
	case 0:		/* a fresh packet number */
		i = (uint32_t)d->next_pn++;
		put_be32(buf + SDR_WIRE_PN_OFF, 0);
		put_be32(buf + SDR_WIRE_PN_OFF + 4, i);
		break;
	case 1:		/* ts */
		buf[32 + rnd(s) % 4] ^= (uint8_t)(1 + rnd(s) % 255);
		break;
	default:	/* a DATA payload byte, else the tag itself */
		i = data && len > SDR_WIRE_HDR_LEN ?
		    SDR_WIRE_HDR_LEN + (uint32_t)(rnd(s) % (len - SDR_WIRE_HDR_LEN)) :
		    SDR_WIRE_TAG_OFF + (uint32_t)(rnd(s) % 8);
		buf[i] ^= (uint8_t)(1 + rnd(s) % 255);
		break;
	}
	return len;
}

static void pace(struct sniff *s, uint64_t *next)
{
	uint64_t now = mono_ns();

	if (s->rate <= 0)
		return;
	if (now < *next) {
		uint64_t w = *next - now;
		struct timespec ts = { (time_t)(w / 1000000000ULL),
				       (long)(w % 1000000000ULL) };

		nanosleep(&ts, NULL);
	}
	*next += (uint64_t)(1e9 / s->rate);
}

/* Send everything to @d's target. */
static void forge_dir(struct sniff *s, struct dir *d, uint64_t *next)
{
	static uint8_t buf[MAX_SDR_LEN], fr[MAX_FRAME];
	struct sdr_pkt chk;
	unsigned int i;
	size_t len;
	int k, sh;

	make_cands(s, d->from, d->to);
	d->tx_sock = tx_open(d->tmpl.b + 6);
	/* past what the sender used so far, with room for what it sends now */
	d->next_pn = d->max_pn + 1 + 256;
	for (k = 0; k < s->ncands; k++)
		for (sh = 0; sh < F_NR_KEYED; sh++) {
			len = forge_keyed(s, d, (enum shape)sh, s->cands[k].k, buf);
			if (!len)
				continue;
			pace(s, next);
			if (tx(d, fr, frame_of(s, d, fr, buf, len)))
				continue;
			d->sent_tag++;
			d->by_shape[sh]++;
		}
	for (i = 0; i < s->ncopy; i++) {
		len = forge_copy(s, d, buf);
		if (!len || decode(buf, len, &chk)) {
			d->not_decoded += !!len;
			continue;
		}
		pace(s, next);
		if (tx(d, fr, frame_of(s, d, fr, buf, len)))
			continue;
		d->sent_copy++;
		d->sent_tag++;
		d->by_shape[F_COPY]++;
	}
	for (i = 0; i < s->nreplay; i++) {
		/* the genuine frame, bytes and ICRC as they were */
		bool data = !d->nctrl || (d->ndata && i % 2);
		const struct frame *c = data ? pick(s, d->data, d->ndata) :
					       pick(s, d->ctrl, d->nctrl);

		if (!c)
			continue;
		pace(s, next);
		if (tx(d, c->b, c->len))
			continue;
		d->sent_replay++;
		d->by_shape[F_REPLAY]++;
	}
}

/* --secret-file: each share's signature, as the test's check of the decode. */
static void check_signatures(struct sniff *s)
{
	static uint8_t secret[4097];
	struct kex_peer k;
	struct sdr_ep_kex mine;
	FILE *f = fopen(s->secret_file, "rb");
	size_t n;
	int i;

	if (!f)
		die("%s: %s", s->secret_file, strerror(errno));
	n = fread(secret, 1, sizeof(secret), f);
	fclose(f);
	if (kex_peer_init(&k, secret, n))
		die("kex_peer_init");
	for (i = 0; i < s->nends; i++) {
		const struct end *e = &s->ends[i];

		/* kex_peer_share() signs with our key pair: put theirs */
		memcpy(k.pub, e->kex.pub, KEX_LEN);
		kex_peer_share(&k, e->kex.alg, &e->ep, &e->paths, &mine);
		if (e->kex.flags == SDR_KEX_F_PSK &&
		    !memcmp(mine.mac, e->kex.mac, SDR_KEX_MAC_LEN))
			s->signed_ok++;
		else
			s->signed_bad++;
	}
}

static void report(struct sniff *s)
{
	int i, sh;

	for (i = 0; i < s->ndirs; i++) {
		struct dir *d = &s->dirs[i];

		printf("sniff: to %s flow %u (from flow %u): captured %" PRIu64
		       " packets (data %u, control %u, highest pn %" PRIu64
		       "); sent %" PRIu64 " for bad_tag (%d candidate keys x %d "
		       "shapes, %" PRIu64 " altered copies), %" PRIu64
		       " replays; %" PRIu64 " send errors, %" PRIu64
		       " not decoded\n", inet_ntoa(*(struct in_addr *)&d->to->ip),
		       d->to->ep.flow_id, d->from->ep.flow_id, d->pkts, d->ndata,
		       d->nctrl, d->max_pn, d->sent_tag, s->ncands, F_NR_KEYED,
		       d->sent_copy, d->sent_replay, d->send_errors,
		       d->not_decoded);
	}
	for (i = 0; i < s->ncands; i++)
		printf("sniff: candidate key %d: %s\n", i, s->cands[i].name);
	if (s->secret_file)
		printf("sniff: signatures checked with the job secret: %d right, "
		       "%d wrong\n", s->signed_ok, s->signed_bad);
	if (!s->json)
		return;
	printf("{\"mads\":%" PRIu64 ",\"req\":%d,\"rep\":%d,\"frames\":%" PRIu64
	       ",\"captured\":%" PRIu64 ",\"candidates\":%d,\"signed_ok\":%d,"
	       "\"signed_bad\":%d,\"dirs\":[", s->mads, s->nreq, s->nrep,
	       s->frames, s->cap_sdr, s->ncands, s->signed_ok, s->signed_bad);
	for (i = 0; i < s->ndirs; i++) {
		struct dir *d = &s->dirs[i];

		printf("%s{\"ip\":\"%s\",\"flow\":%u,\"peer_flow\":%u,"
		       "\"auth\":%u,\"kex_flags\":%u,\"mac_zero\":%s,"
		       "\"captured\":%" PRIu64 ",\"data\":%u,\"ctrl\":%u,"
		       "\"bad_tag\":%" PRIu64 ",\"replay\":%" PRIu64
		       ",\"send_errors\":%" PRIu64 ",\"not_decoded\":%" PRIu64
		       ",\"shapes\":{", i ? "," : "",
		       inet_ntoa(*(struct in_addr *)&d->to->ip), d->to->ep.flow_id,
		       d->from->ep.flow_id, d->to->kex.alg, d->to->kex.flags,
		       memcmp(d->to->kex.mac, (uint8_t[SDR_KEX_MAC_LEN]){ 0 },
			      SDR_KEX_MAC_LEN) ? "false" : "true",
		       d->pkts, d->ndata, d->nctrl, d->sent_tag, d->sent_replay,
		       d->send_errors, d->not_decoded);
		for (sh = 0; sh < F_NR; sh++)
			printf("%s\"%s\":%" PRIu64, sh ? "," : "", shape_names[sh],
			       d->by_shape[sh]);
		printf("}}");
	}
	printf("]}\n");
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: sniff -i IFACE --go FILE [options]\n"
"Capture an sdr connect over rdma_cm and its flows' traffic on IFACE, then\n"
"forge packets into both flows with keys made of what was captured.\n"
"  -i IFACE           capture here (both directions)\n"
"      --go FILE      forge once FILE exists (after \"sniff: ready\")\n"
"  -w, --wait SEC     give up (exit 1) if the connect and traffic are not\n"
"                     captured within SEC (60)\n"
"  -r, --rate PPS     forged packets per second (400; 0: no limit)\n"
"      --copies N     altered captured frames per flow (24)\n"
"      --replays N    replayed captured frames per flow (24)\n"
"      --secret-file F  also check each captured share's signature with\n"
"                     the job secret in F (the test's check of the decode)\n"
"      --json         a JSON summary on the last line\n");
}

int main(int argc, char **argv)
{
	enum { O_GO = 256, O_COPIES, O_REPLAYS, O_SECRET, O_JSON };
	static const struct option lo[] = {
		{ "go", required_argument, NULL, O_GO },
		{ "wait", required_argument, NULL, 'w' },
		{ "rate", required_argument, NULL, 'r' },
		{ "copies", required_argument, NULL, O_COPIES },
		{ "replays", required_argument, NULL, O_REPLAYS },
		{ "secret-file", required_argument, NULL, O_SECRET },
		{ "json", no_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sniff *s = calloc(1, sizeof(*s));
	uint64_t t0, next;
	struct stat st;
	int c, i;

	if (!s)
		die("out of memory");
	s->wait_s = 60;
	s->rate = 400;
	s->ncopy = 24;
	s->nreplay = 24;
	while ((c = getopt_long(argc, argv, "i:w:r:h", lo, NULL)) != -1) {
		switch (c) {
		case 'i': s->ifname = optarg; break;
		case 'w': s->wait_s = strtod(optarg, NULL); break;
		case 'r': s->rate = strtod(optarg, NULL); break;
		case O_GO: s->go = optarg; break;
		case O_COPIES: s->ncopy = (unsigned int)strtoul(optarg, NULL, 0); break;
		case O_REPLAYS: s->nreplay = (unsigned int)strtoul(optarg, NULL, 0); break;
		case O_SECRET: s->secret_file = optarg; break;
		case O_JSON: s->json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || !s->ifname || !s->go) {
		usage(stderr);
		return 2;
	}
	s->rng = mono_ns() ^ (uint64_t)getpid() << 32;
	crc_init();
	cap_open(s);
	printf("sniff: capturing on %s\n", s->ifname);
	fflush(stdout);

	/* the connect, then enough of the flows' traffic both ways */
	t0 = mono_ns();
	for (;;) {
		cap_drain(s, 20);
		if (enough(s))
			break;
		if (mono_ns() - t0 > (uint64_t)(s->wait_s * 1e9))
			die("after %.0f s: %d REQ, %d REP blobs, %" PRIu64 " CM MADs, "
			    "%" PRIu64 " frames, %" PRIu64 " sdr packets of %d flow "
			    "pairs", s->wait_s, s->nreq, s->nrep, s->mads, s->frames,
			    s->cap_sdr, s->ndirs / 2);
	}
	if (s->secret_file)
		check_signatures(s);
	printf("sniff: ready after %.1f s, %d flow pairs\n", (mono_ns() - t0) / 1e9,
	       s->ndirs / 2);
	fflush(stdout);
	/* keep the packet numbers current until the test says go */
	while (stat(s->go, &st)) {
		cap_drain(s, 20);
		if (mono_ns() - t0 > (uint64_t)(s->wait_s * 1e9) * 4)
			die("%s never appeared", s->go);
	}
	cap_drain(s, 0);
	close(s->cap);	/* from here on it would hear its own frames */
	t0 = next = mono_ns();
	for (i = 0; i < s->ndirs; i++)
		forge_dir(s, &s->dirs[i], &next);
	printf("sniff: forged in %.1f s\n", (mono_ns() - t0) / 1e9);
	/* the last frames land */
	sleep(1);
	report(s);
	return 0;
}
