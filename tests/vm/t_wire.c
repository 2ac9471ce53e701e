// SPDX-License-Identifier: GPL-2.0
/*
 * t_wire: what arrives off the wire is validated.  A raw ibverbs UD QP on
 * rxe0 plays the peer of an sdr flow on rxe1 (the flow is connected to a
 * forged endpoint naming that QP), so the test can send any bytes: every
 * malformed, foreign, stale or out-of-range packet must be dropped and
 * counted under its reason in /sys/class/sdr/rxe1/drops/, must never land
 * in a receive slot, and a well-formed message sent the same way must
 * still arrive intact.  Packets are built with the kernel's own encoder
 * (kernel/engine/sdr_wire.c, from the host engine library).  Fixture
 * "wire" runs a flow without authentication (the parser's checks);
 * the auth_* tests one with it, the raw QP its peer through a key
 * exchange of its own (tests/vm/kex.h: OpenSSL's X25519, HMAC-SHA256 and
 * ChaCha20-Poly1305, the kernel's vmac64 through AF_ALG): packets tagged
 * with the keys both derived are delivered, bad tags and replays dropped
 * and counted, a share without the job secret refused.
 */
#include <infiniband/verbs.h>

#include "kex.h"
#include "harness.h"
#include "util.h"
#include "libsdr.h"

#include "sdr_wire.h"
#include "sdr_ec.h"

#define QKEY		0x5d520001U	/* the raw QP's; sdr's is random */
#define FAKE_FLOW	77
#define BUF_LEN		8192

struct raw {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t *buf;
	uint32_t remote_qpn;
	uint32_t dst_qkey;	/* the sdr device's Q_Key, from its endpoint */
};

static int read_gid_index(const char *dev, uint32_t *idx)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/gid_index", dev);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fscanf(f, "%u", idx) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/* A sysfs counter, or -1 if it cannot be read. */
static long long read_counter(const char *path)
{
	return (long long)sysfs_u64_or(path, ~0ULL);
}

static long long drops(const char *reason)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/drops/%s", dev1(), reason);
	return read_counter(path);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

static int raw_setup(struct raw *r, const uint8_t *dgid, uint32_t qpn)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qkey = QKEY };
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1 };
	uint32_t gidx;

	if (read_gid_index(dev0(), &gidx))
		return -1;
	r->ctx = open_dev(dev0());
	if (!r->ctx)
		return -1;
	r->pd = ibv_alloc_pd(r->ctx);
	r->cq = ibv_create_cq(r->ctx, 64, NULL, NULL, 0);
	if (!r->pd || !r->cq)
		return -1;
	init.send_cq = init.recv_cq = r->cq;
	r->qp = ibv_create_qp(r->pd, &init);
	if (!r->qp)
		return -1;
	if (ibv_modify_qp(r->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(r->qp, &attr, IBV_QP_STATE))
		return -1;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(r->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return -1;
	r->buf = aligned_alloc(4096, BUF_LEN);
	if (!r->buf)
		return -1;
	r->mr = ibv_reg_mr(r->pd, r->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	memcpy(ah.grh.dgid.raw, dgid, 16);
	ah.grh.sgid_index = gidx;
	ah.grh.hop_limit = 64;
	r->ah = ibv_create_ah(r->pd, &ah);
	r->remote_qpn = qpn;
	return r->mr && r->ah ? 0 : -1;
}

static void raw_teardown(struct raw *r)
{
	if (r->ah)
		ibv_destroy_ah(r->ah);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->ctx)
		ibv_close_device(r->ctx);
	free(r->buf);
}

/* Send len bytes of r->buf and wait for the local completion. */
static int wire_send(struct raw *r, uint32_t len, uint32_t qkey)
{
	struct ibv_sge sge = { (uintptr_t)r->buf, len, r->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = r->ah, .remote_qpn = r->remote_qpn,
			   .remote_qkey = qkey },
	}, *bad;
	struct ibv_wc wc;
	int n = 0;

	if (ibv_post_send(r->qp, &wr, &bad))
		return -1;
	/* A deadline, not a number of polls: those run faster or slower. */
	WAIT_UNTIL((n = ibv_poll_cq(r->cq, 1, &wc)) != 0, WAIT_HANG_MS);
	return n == 1 && wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/*
 * Build a DATA packet of the forged peer into r->buf; returns its length.
 * @tmpl's land is where its message lands (its base, 0 for most): the
 * packet says base + offset.
 */
static uint32_t data_pkt(struct raw *r, const struct sdr_pkt *tmpl, uint32_t msg)
{
	struct sdr_pkt p = *tmpl;

	p.land = tmpl->land + tmpl->offset;
	sdr_wire_encode(&p, r->buf);
	pattern_fill(r->buf + SDR_WIRE_HDR_LEN, msg, tmpl->offset, tmpl->payload_len);
	return SDR_WIRE_HDR_LEN + tmpl->payload_len;
}

/* Wait until drops/<reason> reaches want (the receive path is async). */
static long long wait_drops(const char *reason, long long want)
{
	long long v;

	WAIT_UNTIL((v = drops(reason)) >= want, WAIT_HANG_MS);
	return v;
}

/* One completion of @ctx: 1, or 0 if none came (a hang). */
static int wait_cqe(struct sdr_ctx *ctx, struct sdr_completion *c)
{
	int got = 0;

	WAIT_UNTIL((got = sdr_poll_cq(ctx, c, 1)) != 0, WAIT_HANG_MS);
	return got;
}

FIXTURE(wire) {
	struct sdr_ctx *ctx;
	struct sdr_flow *flow;
	struct sdr_flow_props props;
	struct raw raw;
	struct sdr_pkt base;	/* a valid DATA packet of message 0 */
};

/*
 * The flow on rxe1 (@auth: SDR_AUTH_OFF, _VMAC64 or _AEAD; @ctx's job
 * secret @secret, NULL for none) and its forged peer, our raw QP on
 * rxe0, which connects the flow with the share of key exchange @k (NULL
 * with SDR_AUTH_OFF) and derives its keys; @base becomes a valid DATA
 * packet of message 0.  0, or the step that failed; the connect's
 * result in *@conn_ret.
 */
static int forge_pair_kex(struct sdr_ctx **ctx, struct sdr_flow **flow,
			  struct sdr_flow_props *props, struct raw *raw,
			  struct sdr_pkt *base, uint32_t auth,
			  const char *secret, struct kex_peer *k,
			  int *conn_ret)
{
	struct sdr_flow_attr attr = { .max_msg_size = 1 << 20, .max_msgs = 4,
				      .auth = (uint8_t)auth };
	struct sdr_flow_peer me, fake;
	struct sdr_ctx *c0;
	struct sdr_flow *f0;
	struct sdr_flow_peer p0;

	memset(raw, 0, sizeof(*raw));
	*ctx = sdr_open(dev1(), NULL);
	if (!*ctx || sdr_ctx_set_secret(*ctx, secret))
		return 1;
	*flow = sdr_flow_create(*ctx, &attr);
	if (!*flow || sdr_flow_props(*flow, props) ||
	    sdr_flow_peer_info(*flow, &me))
		return 2;
	if (raw_setup(raw, me.ep.gid, me.ep.qpn))
		return 3;
	raw->dst_qkey = me.ep.qkey;

	/* The peer the flow believes in: our raw QP on rxe0. */
	memset(&fake, 0, sizeof(fake));
	fake.ep = me.ep;
	fake.ep.qpn = raw->qp->qp_num;
	fake.ep.qkey = QKEY;
	fake.ep.flow_id = FAKE_FLOW;
	fake.ep.seq0 = 0;		/* our messages are numbered from 0 */
	/*
	 * A peer of policy EC: the flow readies EC and SR (its base) at
	 * connect, as for a real one, so their first forged packets are
	 * judged, not refused while the policy is readied.
	 */
	fake.ep.policy = SDR_POLICY_EC;
	fake.auth.alg = auth;
	/* rxe0's GID, as sdr reports it. */
	c0 = sdr_open(dev0(), NULL);
	if (!c0)
		return 4;
	f0 = sdr_flow_create(c0, &(struct sdr_flow_attr) {
				.max_msg_size = 1 << 20, .max_msgs = 4,
				.auth = SDR_AUTH_OFF });
	if (!f0 || sdr_flow_peer_info(f0, &p0)) {
		sdr_close(c0);
		return 5;
	}
	memcpy(fake.ep.gid, p0.ep.gid, sizeof(fake.ep.gid));
	sdr_close(c0);
	if (k)
		kex_peer_share(k, auth, &fake.ep, &fake.paths, &fake.kex);
	*conn_ret = sdr_flow_connect_peer(*flow, &fake);
	if (k && !*conn_ret &&
	    kex_peer_keys(k, &me.ep, &me.paths, &me.kex, &fake.ep,
			  &fake.paths, &fake.kex))
		return 7;

	*base = (struct sdr_pkt) {
		.type = SDR_PKT_DATA,
		.policy = SDR_WIRE_POLICY_NONE,
		.payload_len = props->payload,
		.dst_flow = props->flow_id,
		.src_flow = FAKE_FLOW,
		.msg_seq = 0,
		.msg_len = 3 * props->payload,
		.offset = 0,
		.imm = 0xabcd,
		/* the flow's own token: we are the peer it was given */
		.token = (uint64_t)me.ep.token_hi << 32 | me.ep.token_lo,
	};
	return 0;
}

/* forge_pair_kex() for a flow without authentication, connected. */
static int forge_pair(struct sdr_ctx **ctx, struct sdr_flow **flow,
		      struct sdr_flow_props *props, struct raw *raw,
		      struct sdr_pkt *base)
{
	int conn = 0, ret = forge_pair_kex(ctx, flow, props, raw, base,
					   SDR_AUTH_OFF, NULL, NULL, &conn);

	return ret ? ret : conn ? 6 : 0;
}

FIXTURE_SETUP(wire)
{
	ASSERT_EQ(forge_pair(&self->ctx, &self->flow, &self->props, &self->raw,
			     &self->base), 0);
	EXPECT_EQ(sdr_flow_auth(self->flow), SDR_AUTH_OFF);
	EXPECT_EQ(sdr_flow_kex(self->flow), SDR_KEX_NONE);
}

FIXTURE_TEARDOWN(wire)
{
	raw_teardown(&self->raw);
	if (self->ctx)
		sdr_close(self->ctx);
}

/* One bad packet per reason; each bumps exactly its counter. */
TEST_F(wire, malformed_dropped_by_reason)
{
	struct raw *r = &self->raw;
	static const char * const reasons[] = {
		"short", "bad_magic", "bad_version", "bad_type", "bad_len",
	};
	uint32_t len;
	size_t i;

	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		long long before = drops(reasons[i]);

		ASSERT_GE(before, 0);
		len = data_pkt(r, &self->base, 0);
		switch (i) {
		case 0: len = 12; break;
		case 1: r->buf[0] ^= 0xff; break;
		case 2: r->buf[2] = SDR_WIRE_VERSION + 1; break;
		case 3: r->buf[3] = 0x7f; break;
		case 4: len -= 100; break;	/* payload_len beyond the bytes */
		}
		ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
		EXPECT_EQ(wait_drops(reasons[i], before + 1), before + 1);
	}
}

TEST_F(wire, foreign_and_unknown_dropped)
{
	struct raw *r = &self->raw;
	struct sdr_pkt p = self->base;
	long long nf = drops("no_flow"), np = drops("not_peer");

	p.dst_flow = 0xfffff0;		/* no such flow */
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("no_flow", nf + 1), nf + 1);

	p = self->base;
	p.src_flow = FAKE_FLOW + 1;	/* right QP, wrong peer flow */
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("not_peer", np + 1), np + 1);
}

/* Out-of-range, stale, duplicate: dropped, and the slot stays clean. */
TEST_F(wire, range_stale_dup_and_valid_delivery)
{
	const uint32_t pay = self->props.payload;
	struct raw *r = &self->raw;
	struct sdr_completion c;
	struct sdr_pkt p;
	struct sdr_recv *h;
	long long geo = drops("bad_geometry"), nr = drops("no_recv"),
		  dup = drops("dup"), ml = drops("bad_msglen"),
		  st = drops("stale"), rg = drops("bad_range");
	const uint8_t *data;
	int i;

	/* No receive posted yet: message 0 has nowhere to go. */
	ASSERT_EQ(wire_send(r, data_pkt(r, &self->base, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("no_recv", nr + 1), nr + 1);

	ASSERT_EQ(sdr_flow_recv_post(self->flow, 1, &h), 0);

	p = self->base;			/* offset off the packet grid */
	p.offset = 100;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_geometry", geo + 1), geo + 1);

	p = self->base;			/* short payload mid-message */
	p.payload_len = pay - 8;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_geometry", geo + 2), geo + 2);

	p = self->base;			/* beyond the message */
	p.offset = p.msg_len;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_range", rg + 1), rg + 1);

	p = self->base;			/* larger than the slot */
	p.msg_len = (1 << 20) + pay;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_msglen", ml + 1), ml + 1);

	p = self->base;			/* landing off the chunk grid */
	p.land = self->props.chunk_size / 2;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_geometry", geo + 3), geo + 3);

	p = self->base;			/* landing so far it ends past the slot */
	p.land = (self->props.max_msg_size - p.msg_len) /
		 self->props.chunk_size * self->props.chunk_size +
		 self->props.chunk_size;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_msglen", ml + 2), ml + 2);
	ml++;

	/* Packet 0 lands; a copy of it is a duplicate. */
	ASSERT_EQ(wire_send(r, data_pkt(r, &self->base, 0), r->dst_qkey), 0);
	ASSERT_EQ(wire_send(r, data_pkt(r, &self->base, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("dup", dup + 1), dup + 1);

	p = self->base;			/* msg_len changes mid-message */
	p.offset = pay;
	p.msg_len = 4 * pay;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_msglen", ml + 2), ml + 2);

	p = self->base;			/* where it lands changes mid-message */
	p.offset = pay;
	p.land = self->props.chunk_size;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_msglen", ml + 3), ml + 3);

	/* The rest of the message, last packet flagged. */
	for (i = 1; i < 3; i++) {
		p = self->base;
		p.offset = i * pay;
		if (i == 2)
			p.flags = SDR_PKT_F_LAST;
		ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	}
	ASSERT_EQ(wait_cqe(self->ctx, &c), 1);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_EQ(c.len, 3 * pay);
	EXPECT_EQ(c.imm, 0xabcd);
	data = sdr_recv_data(h);
	EXPECT_EQ(pattern_check(data, 0, 0, 3 * pay), -1);

	/* A late copy for the completed message: stale, slot untouched. */
	ASSERT_EQ(wire_send(r, data_pkt(r, &self->base, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("stale", st + 1), st + 1);
	EXPECT_EQ(pattern_check(data, 0, 0, 3 * pay), -1);
	ASSERT_EQ(sdr_recv_release(h), 0);
}

/* A counter of the fixture's flow ("counters/NAME", "drops/NAME"). */
static long long flow_counter(struct sdr_flow_props *props, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/%s",
		 dev1(), props->flow_id, name);
	return read_counter(path);
}


/*
 * EC from a forged peer, k = 2 and m = 1 over a 3-packet message: parity
 * on a NONE message and EC fields that disagree with the message are
 * dropped by reason; a valid parity row rebuilds the packet never sent,
 * and the message completes with the right bytes.
 */
TEST_F(wire, ec_fields_checked_and_parity_decoded)
{
	const uint32_t pay = self->props.payload;
	struct raw *r = &self->raw;
	long long bf = drops("bad_flags"), be = drops("bad_ec");
	uint8_t *sym = malloc(2 * (size_t)pay);
	const uint8_t *dp[2] = { sym, sym + pay };
	const uint32_t len[2] = { pay, pay };
	struct sdr_completion c;
	struct sdr_recv *h;
	struct sdr_pkt p, ec;

	ASSERT_TRUE(sym);
	ASSERT_EQ(sdr_flow_recv_post(self->flow, 1, &h), 0);

	p = self->base;			/* parity in a NONE message */
	p.flags = SDR_PKT_F_PARITY;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_flags", bf + 1), bf + 1);

	ec = self->base;
	ec.policy = SDR_WIRE_POLICY_EC;
	p = ec;				/* k = 0 */
	p.aux = SDR_EC_AUX(0, 1, 0);
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_ec", be + 1), be + 1);

	ec.aux = SDR_EC_AUX(2, 1, 0);	/* packet 0 lands; packet 1 never sent */
	ASSERT_EQ(wire_send(r, data_pkt(r, &ec, 0), r->dst_qkey), 0);

	p = ec;				/* parity with another k */
	p.flags = SDR_PKT_F_PARITY;
	p.aux = SDR_EC_AUX(4, 1, 0);
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_ec", be + 2), be + 2);
	p.aux = SDR_EC_AUX(2, 1, 1);	/* row 1 of a 1-row code */
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_ec", be + 3), be + 3);
	p.aux = SDR_EC_AUX(2, 1, 0);	/* not at a submessage start */
	p.offset = pay;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_ec", be + 4), be + 4);
	p = ec;				/* a data packet with a parity row */
	p.offset = pay;
	p.aux = SDR_EC_AUX(2, 1, 1);
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_ec", be + 5), be + 5);

	/* The real parity row 0 of submessage 0 (packets 0 and 1). */
	pattern_fill(sym, 0, 0, 2 * (uint64_t)pay);
	p = ec;
	p.flags = SDR_PKT_F_PARITY;
	sdr_wire_encode(&p, r->buf);
	ASSERT_EQ(sdr_ec_encode(2, 0, dp, len, pay, r->buf + SDR_WIRE_HDR_LEN), 0);
	ASSERT_EQ(wire_send(r, SDR_WIRE_HDR_LEN + pay, r->dst_qkey), 0);
	WAIT_UNTIL(flow_counter(&self->props, "counters/pkts_recovered") >= 1,
		   WAIT_HANG_MS);
	EXPECT_EQ(flow_counter(&self->props, "counters/pkts_recovered"), 1);
	EXPECT_EQ(flow_counter(&self->props, "counters/parity_received"), 1);
	/* the flow counted its own drops by reason, as the device did */
	EXPECT_EQ(flow_counter(&self->props, "drops/bad_flags"), 1);
	EXPECT_EQ(flow_counter(&self->props, "drops/bad_ec"), 5);
	EXPECT_EQ(flow_counter(&self->props, "counters/rx_dropped"), 6);

	p = ec;				/* the last packet: the message is whole */
	p.offset = 2 * pay;
	p.flags = SDR_PKT_F_LAST;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	ASSERT_EQ(wait_cqe(self->ctx, &c), 1);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_EQ(c.len, 3 * pay);
	EXPECT_EQ(pattern_check(sdr_recv_data(h), 0, 0, 3 * pay), -1);
	EXPECT_EQ(sdr_recv_release(h), 0);
	free(sym);
}

/*
 * A streamed packet of the forged peer into r->buf (its length): of
 * message 0 under @base's policy, packet @idx, landing at @land in its
 * part at @part with @len bytes of message 0's pattern for those places;
 * or with SDR_PKT_F_LAST in @flags its end packet, counting @len bytes.
 */
static uint32_t stream_pkt(struct raw *r, const struct sdr_pkt *base,
			   uint32_t idx, uint32_t land, uint32_t part,
			   uint32_t len, uint32_t flags)
{
	struct sdr_pkt p = *base;

	p.flags = SDR_PKT_F_STREAM | flags;
	p.offset = (uint64_t)idx * base->payload_len;
	p.msg_len = 0;
	p.land = land;
	p.part = part;
	p.payload_len = len;
	if (flags & SDR_PKT_F_LAST) {
		p.msg_len = len;
		p.payload_len = 0;
	}
	sdr_wire_encode(&p, r->buf);
	pattern_fill(r->buf + SDR_WIRE_HDR_LEN, 0, land, p.payload_len);
	return SDR_WIRE_HDR_LEN + p.payload_len;
}

/* r->buf's packet (@len bytes) with @edit applied, re-encoded */
#define REFORGE(r, len, edit) do {					\
	struct sdr_pkt q_;						\
	ASSERT_EQ(sdr_wire_decode((r)->buf, (len), &q_), 0);		\
	edit;								\
	sdr_wire_encode(&q_, (r)->buf);					\
} while (0)

/*
 * A streamed message (parts, then an end that counts their bytes) off a
 * raw QP: a stream under NONE, packets off their grids, a part off the
 * chunk grid, landing past the flow's largest message, a length on a
 * data packet, bytes on the end, a one-shot packet in the stream, ends
 * that miscount or sit below a packet: each dropped under its reason.
 * The true packets deliver it: bytes at their parts' places and nowhere
 * else, its length the parts' bytes.
 */
TEST_F(wire, stream_packets_checked)
{
	const uint32_t pay = self->props.payload, cs = self->props.chunk_size;
	const uint32_t max = self->props.max_msg_size, part2 = 2 * cs;
	const uint32_t bytes = pay + 10 + pay;
	long long geo = drops("bad_geometry"), ml = drops("bad_msglen"),
		  bf = drops("bad_flags"), rg = drops("bad_range"),
		  bl = drops("bad_len"), dup = drops("dup");
	struct raw *r = &self->raw;
	struct sdr_pkt sr = self->base, none = self->base, p;
	struct sdr_completion c;
	const uint8_t *data;
	struct sdr_recv *h;
	uint32_t len, far;

	ASSERT_LT(pay, cs);
	sr.policy = SDR_WIRE_POLICY_SR;
	ASSERT_EQ(sdr_flow_recv_post(self->flow, 1, &h), 0);
	data = sdr_recv_data(h);

	/* a stream under NONE: that policy has none */
	ASSERT_EQ(wire_send(r, stream_pkt(r, &none, 0, 0, 0, pay, 0),
			    r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_flags", bf + 1), bf + 1);
	/* packet 0 (part 0 at 0) lands */
	ASSERT_EQ(wire_send(r, stream_pkt(r, &sr, 0, 0, 0, pay, 0),
			    r->dst_qkey), 0);
	/* off the packet grid */
	len = stream_pkt(r, &sr, 1, pay, 0, pay, 0);
	REFORGE(r, len, q_.offset = pay + 100);
	ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_geometry", geo + 1), geo + 1);
	/* off its part's packet grid */
	ASSERT_EQ(wire_send(r, stream_pkt(r, &sr, 1, pay + 1, 0, pay, 0),
			    r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_geometry", geo + 2), geo + 2);
	/* a part off the chunk grid */
	ASSERT_EQ(wire_send(r, stream_pkt(r, &sr, 1, pay, pay, pay, 0),
			    r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_geometry", geo + 3), geo + 3);
	/* short, and ends no part */
	ASSERT_EQ(wire_send(r, stream_pkt(r, &sr, 1, pay, 0, 10, 0),
			    r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_geometry", geo + 4), geo + 4);
	/* past the flow's largest message, on the grids */
	far = max / cs * cs;
	far += (max - far) / pay * pay;
	ASSERT_EQ(wire_send(r, stream_pkt(r, &sr, 1, far, max / cs * cs, pay,
					  0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_msglen", ml + 1), ml + 1);
	/* a data packet that says a length */
	len = stream_pkt(r, &sr, 1, pay, 0, pay, 0);
	REFORGE(r, len, q_.msg_len = 3 * pay);
	ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_range", rg + 1), rg + 1);
	/* an end that carries bytes */
	len = stream_pkt(r, &sr, 1, 0, 0, pay, SDR_PKT_F_LAST);
	REFORGE(r, len, q_.payload_len = 8);
	ASSERT_EQ(wire_send(r, len + 8, r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_len", bl + 1), bl + 1);
	/* a one-shot packet of the message the stream started */
	p = sr;
	p.offset = pay;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_msglen", ml + 2), ml + 2);

	/* part 0 ends 10 bytes into packet 1; part 1 at chunk 2 */
	ASSERT_EQ(wire_send(r, stream_pkt(r, &sr, 1, pay, 0, 10,
					  SDR_PKT_F_PART_END), r->dst_qkey), 0);
	ASSERT_EQ(wire_send(r, stream_pkt(r, &sr, 2, part2, part2, pay, 0),
			    r->dst_qkey), 0);
	/* ends that count fewer or more bytes than came, or sit below one */
	ASSERT_EQ(wire_send(r, stream_pkt(r, &sr, 3, 0, 0, bytes - 1,
					  SDR_PKT_F_LAST), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_msglen", ml + 3), ml + 3);
	ASSERT_EQ(wire_send(r, stream_pkt(r, &sr, 3, 0, 0, bytes + 1,
					  SDR_PKT_F_LAST), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_msglen", ml + 4), ml + 4);
	ASSERT_EQ(wire_send(r, stream_pkt(r, &sr, 2, 0, 0, 2 * pay,
					  SDR_PKT_F_LAST), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_msglen", ml + 5), ml + 5);
	EXPECT_EQ(sdr_poll_cq(self->ctx, &c, 1), 0);
	/* the true end */
	ASSERT_EQ(wire_send(r, stream_pkt(r, &sr, 3, 0, 0, bytes,
					  SDR_PKT_F_LAST), r->dst_qkey), 0);
	ASSERT_EQ(wait_cqe(self->ctx, &c), 1);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_EQ(c.len, bytes);
	EXPECT_EQ(c.imm, 0xabcd);
	EXPECT_EQ(pattern_check(data, 0, 0, pay + 10), -1);
	EXPECT_EQ(first_not(data + pay + 10, 0, part2 - pay - 10), -1);
	EXPECT_EQ(pattern_check(data + part2, 0, part2, pay), -1);
	EXPECT_EQ(first_not(data + part2 + pay, 0, max - part2 - pay), -1);
	/*
	 * a late copy: a duplicate (SR answers it again: the sender may
	 * have missed the end's ACK), the receive untouched
	 */
	ASSERT_EQ(wire_send(r, stream_pkt(r, &sr, 0, 0, 0, pay, 0),
			    r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("dup", dup + 1), dup + 1);
	EXPECT_EQ(drops("bad_geometry"), geo + 4);
	EXPECT_EQ(first_not(data + part2 + pay, 0, max - part2 - pay), -1);
	ASSERT_EQ(sdr_recv_release(h), 0);
}

/*
 * Blind forgeries: the right flow ids, QP and GID, but not the flow's
 * token.  DATA, CLOSE and a COMPLETE ACK are each dropped as bad_token
 * and change nothing: the receive stays empty, the flow stays connected.
 * The true packets then still deliver the message intact, and a CLOSE
 * with the token does close the flow.
 */
TEST_F(wire, blind_forgeries_dropped)
{
	const uint32_t pay = self->props.payload;
	struct raw *r = &self->raw;
	struct sdr_flow_info info;
	struct sdr_completion c;
	struct sdr_recv *h;
	struct sdr_pkt p;
	long long bt = drops("bad_token");
	uint32_t len;
	int i;

	ASSERT_EQ(sdr_flow_recv_post(self->flow, 1, &h), 0);
	p = self->base;
	p.token ^= 1;
	ASSERT_EQ(wire_send(r, data_pkt(r, &p, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_token", bt + 1), bt + 1);

	memset(&p, 0, sizeof(p));
	p.type = SDR_PKT_CLOSE;
	p.dst_flow = self->props.flow_id;
	p.src_flow = FAKE_FLOW;
	p.token = self->base.token + 1;
	sdr_wire_encode(&p, r->buf);
	ASSERT_EQ(wire_send(r, SDR_WIRE_HDR_LEN, r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_token", bt + 2), bt + 2);

	p.type = SDR_PKT_ACK;
	p.aux = SDR_ACK_F_COMPLETE;
	p.payload_len = SDR_ACK_FIXED_LEN;
	sdr_wire_encode(&p, r->buf);
	memset(r->buf + SDR_WIRE_HDR_LEN, 0, SDR_ACK_FIXED_LEN);
	ASSERT_EQ(wire_send(r, SDR_WIRE_HDR_LEN + SDR_ACK_FIXED_LEN, r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_token", bt + 3), bt + 3);

	EXPECT_EQ(sdr_recv_state(h)->packets_done, 0);
	EXPECT_EQ(sdr_recv_state(h)->flags, 0);	/* not started by a forgery */
	ASSERT_EQ(sdr_flow_info(self->flow, &info), 0);
	EXPECT_EQ(info.state, SDR_FLOW_CONNECTED);

	/* the true peer's message arrives whole and right */
	for (i = 0; i < 3; i++) {
		p = self->base;
		p.offset = i * pay;
		p.flags = i == 2 ? SDR_PKT_F_LAST : 0;
		len = data_pkt(r, &p, 0);
		ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
	}
	ASSERT_EQ(wait_cqe(self->ctx, &c), 1);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_EQ(c.imm, 0xabcd);
	EXPECT_EQ(pattern_check(sdr_recv_data(h), 0, 0, 3 * pay), -1);

	memset(&p, 0, sizeof(p));
	p.type = SDR_PKT_CLOSE;
	p.dst_flow = self->props.flow_id;
	p.src_flow = FAKE_FLOW;
	p.token = self->base.token;
	sdr_wire_encode(&p, r->buf);
	ASSERT_EQ(wire_send(r, SDR_WIRE_HDR_LEN, r->dst_qkey), 0);
	WAIT_UNTIL(!sdr_flow_info(self->flow, &info) &&
		   info.state == SDR_FLOW_CLOSED, WAIT_HANG_MS);
	EXPECT_EQ(info.state, SDR_FLOW_CLOSED);
}

/*
 * A wrong Q_Key never reaches sdr at all (the device drops it).  Instead of
 * sleeping "long enough", send a marker after it with the right Q_Key - a
 * packet for no flow, counted under no_flow - and wait for that count: the
 * QP pair delivers in order, so by then the bad packet has been dropped.
 */
TEST_F(wire, wrong_qkey_never_delivered)
{
	struct raw *r = &self->raw;
	struct sdr_recv *h;
	struct sdr_completion c;
	struct sdr_pkt marker = self->base;
	long long nf = drops("no_flow");

	ASSERT_EQ(sdr_flow_recv_post(self->flow, 1, &h), 0);
	/* random per device, never the constant of old, top bit clear */
	EXPECT_NE(r->dst_qkey, QKEY);
	EXPECT_EQ(r->dst_qkey & 0x80000000U, 0);
	ASSERT_EQ(wire_send(r, data_pkt(r, &self->base, 0), QKEY), 0);
	ASSERT_EQ(wire_send(r, data_pkt(r, &self->base, 0), r->dst_qkey ^ 1), 0);
	marker.dst_flow = 0xfffff0;
	ASSERT_EQ(wire_send(r, data_pkt(r, &marker, 0), r->dst_qkey), 0);
	ASSERT_EQ(wait_drops("no_flow", nf + 1), nf + 1);
	EXPECT_EQ(sdr_poll_cq(self->ctx, &c, 1), 0);
	EXPECT_EQ(sdr_recv_state(h)->packets_done, 0);
}

/* The job secret the auth tests share with the flow's process keyring. */
static const char job_secret[] = "t_wire: a job secret of 32 bytes";

struct authwire {
	struct sdr_ctx *ctx;
	struct sdr_flow *flow;
	struct sdr_flow_props props;
	struct raw raw;
	struct sdr_pkt base;
	struct kex_peer k;
	uint32_t alg;
};

static void authwire_teardown(struct authwire *a)
{
	raw_teardown(&a->raw);
	if (a->ctx)
		sdr_close(a->ctx);
}

/*
 * Build DATA packet @tmpl under number @pn with the keys of @a's
 * exchange (@key: ours, or another to forge with); its length, 0 if the
 * tag could not be made.
 */
static uint32_t sealed_pkt(struct authwire *a, const uint8_t *key,
			   struct sdr_pkt tmpl, uint64_t pn)
{
	uint32_t len;

	tmpl.pn = pn;
	memset(tmpl.tag, 0, sizeof(tmpl.tag));
	len = data_pkt(&a->raw, &tmpl, 0);
	if (kex_seal(a->alg, key, pn, a->raw.buf, SDR_WIRE_HDR_LEN,
		     SDR_WIRE_TAG_OFF, tmpl.payload_len))
		return 0;
	return len;
}

static long long auth_flow_drops(struct sdr_flow_props *props,
				 const char *reason)
{
	char name[64];

	snprintf(name, sizeof(name), "drops/%s", reason);
	return flow_counter(props, name);
}

static void flow_word(struct sdr_flow_props *props, const char *file,
		      char *word, size_t len)
{
	char path[128], fmt[16];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/sdr/%s/flows/%u/%s", dev1(),
		 props->flow_id, file);
	snprintf(fmt, sizeof(fmt), "%%%zus", len - 1);
	word[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return;
	if (fscanf(f, fmt, word) != 1)
		word[0] = 0;
	fclose(f);
}

/*
 * Packets tagged with the key both ends derived are delivered; a wrong
 * tag, a packet tagged for other bytes, a missing number, a key made of
 * what a sniffer sees (the shares' public keys), a replay and a number
 * older than the window are each dropped and counted, never touching
 * the slot.  With AEAD the payload travels encrypted and arrives plain.
 */
static void tags_and_replays(struct authwire *a)
{
	const uint32_t pay = a->props.payload;
	struct raw *r = &a->raw;
	struct sdr_completion c;
	struct sdr_recv *h;
	struct sdr_pkt p;
	long long bt = drops("bad_tag"), rp = drops("replay");
	uint8_t sniffed[KEX_LEN];
	char word[16];
	uint32_t len;
	int i;

	flow_word(&a->props, "auth", word, sizeof(word));
	EXPECT_EQ(strcmp(word, a->alg == SDR_AUTH_AEAD ? "aead" : "vmac64"), 0);
	flow_word(&a->props, "kex", word, sizeof(word));
	EXPECT_EQ(strcmp(word, "psk"), 0);
	EXPECT_EQ(sdr_flow_kex(a->flow), SDR_KEX_PSK);
	ASSERT_EQ(sdr_flow_recv_post(a->flow, 1, &h), 0);

	/* unsigned, as a flow without authentication would send it */
	ASSERT_EQ(wire_send(r, data_pkt(r, &a->base, 0), r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_tag", bt + 1), bt + 1);
	/* sealed, then one tag bit flipped */
	len = sealed_pkt(a, a->k.tx, a->base, 1);
	ASSERT_GT(len, 0);
	r->buf[SDR_WIRE_TAG_OFF + 7] ^= 1;
	ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_tag", bt + 2), bt + 2);
	/* sealed, then a payload byte changed: a captured header, new bytes */
	len = sealed_pkt(a, a->k.tx, a->base, 2);
	r->buf[SDR_WIRE_HDR_LEN + 9] ^= 0x40;
	ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_tag", bt + 3), bt + 3);
	/* sealed with the number 0, which no sender uses */
	len = sealed_pkt(a, a->k.tx, a->base, 0);
	ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_tag", bt + 4), bt + 4);
	/* sealed with the flow's own direction's key, not ours */
	len = sealed_pkt(a, a->k.rx, a->base, 3);
	ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_tag", bt + 5), bt + 5);
	/* sealed with keys made of what travelled: the public keys */
	memcpy(sniffed, a->k.pub, sizeof(sniffed));
	len = sealed_pkt(a, sniffed, a->base, 4);
	ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_tag", bt + 6), bt + 6);
	EXPECT_EQ(sdr_recv_state(h)->packets_done, 0);
	EXPECT_EQ(sdr_recv_state(h)->flags, 0);

	/* packet 0 sealed right lands; the same bytes again are a replay */
	len = sealed_pkt(a, a->k.tx, a->base, 10000);
	ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
	ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("replay", rp + 1), rp + 1);
	EXPECT_EQ(sdr_recv_state(h)->packets_done, 1);
	/* packet 1 under a number older than the window: a replay too */
	p = a->base;
	p.offset = pay;
	len = sealed_pkt(a, a->k.tx, p, 10000 - 4096);
	ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
	EXPECT_EQ(wait_drops("replay", rp + 2), rp + 2);
	EXPECT_EQ(sdr_recv_state(h)->packets_done, 1);
	EXPECT_EQ(auth_flow_drops(&a->props, "bad_tag"), 6);
	EXPECT_EQ(auth_flow_drops(&a->props, "replay"), 2);

	/* the rest, reordered inside the window: the message arrives whole */
	for (i = 2; i >= 1; i--) {
		p = a->base;
		p.offset = i * pay;
		p.flags = i == 2 ? SDR_PKT_F_LAST : 0;
		len = sealed_pkt(a, a->k.tx, p, 10000 - 100 + i);
		ASSERT_EQ(wire_send(r, len, r->dst_qkey), 0);
	}
	ASSERT_EQ(wait_cqe(a->ctx, &c), 1);
	EXPECT_EQ(c.status, SDR_STATUS_OK);
	EXPECT_EQ(c.imm, 0xabcd);
	EXPECT_EQ(pattern_check(sdr_recv_data(h), 0, 0, 3 * pay), -1);
}

static void authwire_setup(struct authwire *a, uint32_t alg)
{
	int conn = -1;

	memset(a, 0, sizeof(*a));
	a->alg = alg;
	ASSERT_EQ(kex_add_secret("t_wire", job_secret, sizeof(job_secret) - 1),
		  0);
	ASSERT_EQ(kex_peer_init(&a->k, job_secret, sizeof(job_secret) - 1), 0);
	ASSERT_EQ(forge_pair_kex(&a->ctx, &a->flow, &a->props, &a->raw,
				 &a->base, alg, "t_wire", &a->k, &conn), 0);
	ASSERT_EQ(conn, 0);
}

TEST(auth_vmac_tags_and_replays)
{
	struct authwire a;

	authwire_setup(&a, SDR_AUTH_VMAC64);
	tags_and_replays(&a);
	authwire_teardown(&a);
}

TEST(auth_aead_tags_and_replays)
{
	struct authwire a;

	authwire_setup(&a, SDR_AUTH_AEAD);
	tags_and_replays(&a);
	authwire_teardown(&a);
}

/*
 * What the flow sends its peer under AEAD opens with the key the peer
 * derived, in OpenSSL: the flow's first answer to a message is read off
 * the raw QP, its header authenticated and any body decrypted.
 */
TEST(auth_aead_flow_packets_open)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct authwire a;
	struct sdr_recv *h;
	struct sdr_pkt p, got;
	uint8_t *pkt;
	uint32_t len;
	int i;

	authwire_setup(&a, SDR_AUTH_AEAD);
	/* the answer lands past the GRH; wire_send() takes its completion */
	pkt = a.raw.buf + 4096 + 40;
	memset(pkt, 0, 64);
	sge = (struct ibv_sge) { (uintptr_t)a.raw.buf + 4096, 4096,
				 a.raw.mr->lkey };
	ASSERT_EQ(ibv_post_recv(a.raw.qp, &wr, &bad), 0);
	ASSERT_EQ(sdr_flow_recv_post(a.flow, 1, &h), 0);
	for (i = 0; i < 3; i++) {
		p = a.base;
		p.policy = SDR_WIRE_POLICY_SR;
		p.offset = i * a.props.payload;
		p.flags = i == 2 ? SDR_PKT_F_LAST : 0;
		ASSERT_GT(sealed_pkt(&a, a.k.tx, p, 1 + i), 0);
		ASSERT_EQ(wire_send(&a.raw, SDR_WIRE_HDR_LEN + p.payload_len,
				    a.raw.dst_qkey), 0);
	}
	WAIT_UNTIL(pkt[0] == 0x5d && pkt[1] == 0x52, WAIT_HANG_MS);
	ASSERT_EQ(pkt[0], 0x5d);
	len = SDR_WIRE_HDR_LEN + ((uint32_t)pkt[6] << 8 | pkt[7]);
	ASSERT_LE(len, 4096 - 40);
	ASSERT_EQ(sdr_wire_decode(pkt, len, &got), 0);
	EXPECT_GE(got.pn, 1);
	/* a control packet: an ACK, NACK or the credit it grants */
	EXPECT_NE(got.type, SDR_PKT_DATA);
	EXPECT_EQ(kex_open(a.k.rx, got.pn, pkt, SDR_WIRE_HDR_LEN,
			   SDR_WIRE_TAG_OFF, got.payload_len), 0);
	/* one bit of the header changed and it does not open */
	pkt[16] ^= 1;
	EXPECT_EQ(kex_open(a.k.rx, got.pn, pkt, SDR_WIRE_HDR_LEN,
			   SDR_WIRE_TAG_OFF, got.payload_len), -1);
	authwire_teardown(&a);
}

/*
 * A share that does not prove the job secret is refused with
 * EKEYREJECTED (a peer with another secret; a peer with none), and a
 * flow that names none refuses a share that claims one; a low-order
 * public key is refused too (EPROTO).  None of it connects the flow.
 */
TEST(auth_share_without_secret_refused)
{
	static const char other[] = "t_wire: another secret, 32 bytes";
	struct sdr_flow_props props;
	struct sdr_ctx *ctx = NULL;
	struct sdr_flow *flow = NULL;
	struct kex_peer k;
	struct sdr_pkt base;
	struct raw raw;
	int conn = 0;
	char word[16];

	ASSERT_EQ(kex_add_secret("t_wire", job_secret, sizeof(job_secret) - 1),
		  0);
	/* the peer holds another secret */
	ASSERT_EQ(kex_peer_init(&k, other, sizeof(other) - 1), 0);
	ASSERT_EQ(forge_pair_kex(&ctx, &flow, &props, &raw, &base,
				 SDR_AUTH_VMAC64, "t_wire", &k, &conn), 0);
	EXPECT_EQ(conn, -EKEYREJECTED);
	flow_word(&props, "state", word, sizeof(word));
	EXPECT_EQ(strcmp(word, "idle"), 0);
	raw_teardown(&raw);
	sdr_close(ctx);
	/* the peer holds none */
	ASSERT_EQ(kex_peer_init(&k, NULL, 0), 0);
	ASSERT_EQ(forge_pair_kex(&ctx, &flow, &props, &raw, &base,
				 SDR_AUTH_AEAD, "t_wire", &k, &conn), 0);
	EXPECT_EQ(conn, -EKEYREJECTED);
	raw_teardown(&raw);
	sdr_close(ctx);
	/* the flow names none, the peer signs with one */
	ASSERT_EQ(kex_peer_init(&k, job_secret, sizeof(job_secret) - 1), 0);
	ASSERT_EQ(forge_pair_kex(&ctx, &flow, &props, &raw, &base,
				 SDR_AUTH_VMAC64, NULL, &k, &conn), 0);
	EXPECT_EQ(conn, -EKEYREJECTED);
	raw_teardown(&raw);
	sdr_close(ctx);
	/* neither names one: an exchange alone, which connects */
	ASSERT_EQ(kex_peer_init(&k, NULL, 0), 0);
	ASSERT_EQ(forge_pair_kex(&ctx, &flow, &props, &raw, &base,
				 SDR_AUTH_VMAC64, NULL, &k, &conn), 0);
	EXPECT_EQ(conn, 0);
	EXPECT_EQ(sdr_flow_kex(flow), SDR_KEX_EPHEMERAL);
	flow_word(&props, "kex", word, sizeof(word));
	EXPECT_EQ(strcmp(word, "ephemeral"), 0);
	raw_teardown(&raw);
	sdr_close(ctx);
	/* a public key of order 1 (all zero): the secret would be 0 */
	ASSERT_EQ(kex_peer_init(&k, NULL, 0), 0);
	memset(k.pub, 0, sizeof(k.pub));
	ASSERT_EQ(forge_pair_kex(&ctx, &flow, &props, &raw, &base,
				 SDR_AUTH_VMAC64, NULL, &k, &conn), 0);
	EXPECT_EQ(conn, -EPROTO);
	raw_teardown(&raw);
	sdr_close(ctx);
}

/*
 * A flow takes no larger EC code than the local limits allowed when it
 * connected (ec_rx_max_k, ec_rx_max_m): a packet of a larger k or m is
 * bad_ec and leaves the receive untouched, whatever the limits say later;
 * one within them lands.
 */
TEST(ec_geometry_bounded_at_connect)
{
	static const char *const km = "/sys/module/sdr/parameters/ec_rx_max_k";
	static const char *const mm = "/sys/module/sdr/parameters/ec_rx_max_m";
	struct sdr_flow_props props;
	struct sdr_ctx *ctx = NULL;
	struct sdr_flow *flow = NULL;
	struct sdr_recv *h;
	struct raw raw;
	struct sdr_pkt base, p;
	long long be = drops("bad_ec");
	int ret;

	ASSERT_EQ(sysfs_write(km, "4"), 0);
	ASSERT_EQ(sysfs_write(mm, "2"), 0);
	ret = forge_pair(&ctx, &flow, &props, &raw, &base);
	/* the flow keeps what it read at connect */
	EXPECT_EQ(sysfs_write(km, "64"), 0);
	EXPECT_EQ(sysfs_write(mm, "32"), 0);
	ASSERT_EQ(ret, 0);
	ASSERT_EQ(sdr_flow_recv_post(flow, 1, &h), 0);
	base.policy = SDR_WIRE_POLICY_EC;
	base.msg_len = 8 * props.payload;
	p = base;
	p.aux = SDR_EC_AUX(8, 2, 0);		/* k over the limit */
	ASSERT_EQ(wire_send(&raw, data_pkt(&raw, &p, 0), raw.dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_ec", be + 1), be + 1);
	p.aux = SDR_EC_AUX(4, 3, 0);		/* m over the limit */
	ASSERT_EQ(wire_send(&raw, data_pkt(&raw, &p, 0), raw.dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_ec", be + 2), be + 2);
	p.flags = SDR_PKT_F_PARITY;		/* parity of a too-large code */
	p.aux = SDR_EC_AUX(4, 32, 5);
	ASSERT_EQ(wire_send(&raw, data_pkt(&raw, &p, 0), raw.dst_qkey), 0);
	EXPECT_EQ(wait_drops("bad_ec", be + 3), be + 3);
	EXPECT_EQ(sdr_recv_state(h)->packets_done, 0);
	EXPECT_EQ(sdr_recv_state(h)->flags, 0);
	p = base;				/* within: it lands */
	p.aux = SDR_EC_AUX(4, 2, 0);
	ASSERT_EQ(wire_send(&raw, data_pkt(&raw, &p, 0), raw.dst_qkey), 0);
	WAIT_UNTIL(sdr_recv_state(h)->packets_done == 1, WAIT_HANG_MS);
	EXPECT_EQ(sdr_recv_state(h)->packets_done, 1);
	EXPECT_EQ(drops("bad_ec"), be + 3);
	raw_teardown(&raw);
	sdr_close(ctx);
}
