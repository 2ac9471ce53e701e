// SPDX-License-Identifier: GPL-2.0
/*
 * t_sdk: the SDR SDK's API (userlib/sdr.h, sdr_mr.h) on rxe0 -> rxe1, in
 * one process.  Messages land in registered application memory (checked
 * byte for byte, the bytes around them untouched), their chunk bitmap is
 * the kernel's, in place, and says exactly the chunks that landed, and
 * expansion at MTU granularity says the same per MTU; every "not now"
 * answers SDR_RETRY (receive slots, send window, an immediate not there
 * yet, a send not completed), every bad call SDR_ERROR with its errno;
 * registrations: unaligned ranges work, too large ones are refused, a
 * registration in use cannot go, and a process that exits holding pinned
 * memory gives it all back.  Sends at a remote offset land there, and
 * only there.  sdrx_* extensions: the QP's flow carries the policy and
 * in-flight bound asked for.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <sdr.h>
#include <sdr_mr.h>

#include "harness.h"
#include "libsdr.h"
#include "util.h"

#define MIB	(1U << 20)

FIXTURE(sdk) {
	struct sdr_context *cs, *cr;
	struct sdr_qp *qs, *qr;
};

static struct sdr_qp_attr qp_attr(uint32_t chunk_log, uint32_t msgs_log)
{
	struct sdr_qp_attr a = {
		.bitmap_chunk_size_log_bytes = chunk_log,
		.max_in_flight_log_bytes = 22,	/* 4 MiB */
		.max_log_num_msgs = msgs_log, .mtu = SDR_MTU_4096,
		.send_enable = 1, .recv_enable = 1,
	};

	return a;
}

/* Exchange the QPs' information and connect both ends. */
static int connect_pair(struct sdr_qp *a, struct sdr_qp *b)
{
	uint8_t ia[512], ib[512];
	size_t n;

	if (sdr_qp_info_size_get(a, &n) != SDR_SUCCESS || n > sizeof(ia) ||
	    sdr_qp_info_get(a, ia) != SDR_SUCCESS ||
	    sdr_qp_info_get(b, ib) != SDR_SUCCESS ||
	    sdr_qp_connect(a, ib) != SDR_SUCCESS ||
	    sdr_qp_connect(b, ia) != SDR_SUCCESS)
		return -1;
	return 0;
}

FIXTURE_SETUP(sdk)
{
	struct sdr_dev_attr da = { .num_channels = 1, .log_max_qps = 2 };
	struct sdr_qp_attr a = qp_attr(16, 2);

	if (access("/dev/sdr", F_OK))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	self->cs = sdr_context_create(dev0(), &da);
	ASSERT_TRUE(self->cs);
	self->cr = sdr_context_create(dev1(), &da);
	ASSERT_TRUE(self->cr);
	self->qs = sdr_qp_create(self->cs, &a);
	ASSERT_TRUE(self->qs);
	self->qr = sdr_qp_create(self->cr, &a);
	ASSERT_TRUE(self->qr);
	ASSERT_EQ(connect_pair(self->qs, self->qr), 0);
}

FIXTURE_TEARDOWN(sdk)
{
	if (self->qs)
		EXPECT_EQ(sdr_qp_destroy(self->qs), SDR_SUCCESS);
	if (self->qr)
		EXPECT_EQ(sdr_qp_destroy(self->qr), SDR_SUCCESS);
	if (self->cs)
		EXPECT_EQ(sdr_context_destroy(self->cs), SDR_SUCCESS);
	if (self->cr)
		EXPECT_EQ(sdr_context_destroy(self->cr), SDR_SUCCESS);
}

/* Poll a send to its end: SDR_SUCCESS or SDR_ERROR, -1 on a timeout. */
static int send_wait(struct sdr_send_handle *h, struct sdr_send_status *st)
{
	int64_t end = now_us() + 20000000;
	int done = 0, ret;

	do {
		ret = sdr_send_poll(h, &done, st);
		if (ret != SDR_RETRY)
			return done ? ret : -1;
		usleep(100);
	} while (now_us() < end);
	return -1;
}

/* Wait until chunk bits [from, to) are set; 0 on success. */
static int bits_wait(struct sdr_recv_handle *h, uint32_t from, uint32_t to)
{
	int64_t end = now_us() + 20000000;
	uint8_t *bits;
	size_t nb;
	uint32_t c;

	do {
		if (sdr_recv_bitmap_get(h, &bits, &nb) != SDR_SUCCESS ||
		    nb < (to + 7) / 8)
			return -1;
		for (c = from; c < to; c++)
			if (!(__atomic_load_n(&bits[c / 8], __ATOMIC_ACQUIRE) &
			      (1U << (c % 8))))
				break;
		if (c == to)
			return 0;
		usleep(100);
	} while (now_us() < end);
	return -1;
}

/* Wait until every chunk bit of [0, chunks) is set; 0 on success. */
static int bitmap_wait(struct sdr_recv_handle *h, uint32_t chunks)
{
	return bits_wait(h, 0, chunks);
}

/*
 * A 1 MiB + 123 byte message lands at an unaligned address inside a
 * bigger registration; guard bytes on both sides stay; the bitmap has one
 * bit per 64 KiB chunk of the receive's buffer, set for the 17 chunks the
 * message covers and clear past them; expansion gives 16 bits per chunk,
 * all set, and 1 for the last chunk's 123 bytes; the immediate arrived.
 */
TEST_F(sdk, write_with_imm_lands_in_registered_memory)
{
	const uint32_t len = MIB + 123, maxlen = 2 * MIB, off = 77;
	uint8_t *rbuf = malloc(maxlen + 2 * off), *sbuf = malloc(len + 1);
	struct sdr_recv_handle *rh;
	struct sdr_send_handle *sh;
	struct sdr_send_status st = { 0 };
	struct sdr_mr *rmr, *smr;
	uint32_t rkey, skey, imm = 0, c;
	uint64_t exp[1];
	uint8_t *bits;
	size_t nb;

	ASSERT_TRUE(rbuf && sbuf);
	memset(rbuf, 0xa5, maxlen + 2 * off);
	pattern_fill(sbuf + 1, 7, 0, len);
	rmr = sdr_mr_reg(self->cr, rbuf, maxlen + 2 * off,
			 SDR_ACCESS_REMOTE_WRITE);
	ASSERT_TRUE(rmr);
	smr = sdr_mr_reg(self->cs, sbuf + 1, len, SDR_ACCESS_REMOTE_WRITE);
	ASSERT_TRUE(smr);
	ASSERT_EQ(sdr_mr_lkey_get(rmr, &rkey), SDR_SUCCESS);
	ASSERT_EQ(sdr_mr_lkey_get(smr, &skey), SDR_SUCCESS);
	ASSERT_EQ(sdr_mr_rkey_get(rmr, &c), SDR_SUCCESS);

	struct sdr_recv_wr rw = { .max_length = maxlen, .lkey = rkey,
				  .address = (uintptr_t)(rbuf + off) };
	ASSERT_EQ(sdr_recv_post(self->qr, &rw, &rh), SDR_SUCCESS);
	/* nothing yet: no immediate, an all-clear bitmap over the buffer */
	EXPECT_EQ(sdr_recv_imm_get(rh, &imm), SDR_RETRY);
	ASSERT_EQ(sdr_recv_bitmap_get(rh, &bits, &nb), SDR_SUCCESS);
	EXPECT_EQ(nb, 4);	/* 32 chunks of 64 KiB */
	for (c = 0; c < nb; c++)
		EXPECT_EQ(bits[c], 0);

	struct sdr_send_wr sw = { .opcode = SDR_WR_WRITE_WITH_IMM,
				  .imm_value = 0xfeed, .length = len,
				  .lkey = skey,
				  .local_addr = (uintptr_t)(sbuf + 1) };
	ASSERT_EQ(sdr_send_post(self->qs, &sw, &sh), SDR_SUCCESS);
	ASSERT_EQ(bitmap_wait(rh, 17), 0);
	EXPECT_EQ(send_wait(sh, &st), SDR_SUCCESS);
	EXPECT_EQ(st.flags, 0);
	ASSERT_EQ(sdr_recv_imm_get(rh, &imm), SDR_SUCCESS);
	EXPECT_EQ(imm, 0xfeed);
	ASSERT_EQ(sdr_recv_bitmap_get(rh, &bits, &nb), SDR_SUCCESS);
	EXPECT_EQ(bits[2], 0x01);	/* chunk 16 only */
	EXPECT_EQ(bits[3], 0);
	EXPECT_EQ(memcmp(rbuf + off, sbuf + 1, len), 0);
	EXPECT_EQ(first_not(rbuf, 0xa5, off), -1);
	EXPECT_EQ(first_not(rbuf + off + len, 0xa5, maxlen + off - len), -1);
	ASSERT_EQ(sdr_recv_bitmap_chunk_expand(rh, 3, exp), SDR_SUCCESS);
	EXPECT_EQ(exp[0], 0xffff);
	ASSERT_EQ(sdr_recv_bitmap_chunk_expand(rh, 16, exp), SDR_SUCCESS);
	EXPECT_EQ(exp[0], 0x1);
	ASSERT_EQ(sdr_recv_bitmap_chunk_expand(rh, 20, exp), SDR_SUCCESS);
	EXPECT_EQ(exp[0], 0);
	EXPECT_EQ(sdr_recv_bitmap_chunk_expand(rh, 32, exp), SDR_ERROR);
	EXPECT_EQ(errno, EINVAL);
	/* in use: the registration stays */
	EXPECT_EQ(sdr_mr_dereg(rmr), SDR_ERROR);
	EXPECT_EQ(errno, EBUSY);
	ASSERT_EQ(sdr_recv_complete(rh), SDR_SUCCESS);
	EXPECT_EQ(sdr_recv_complete(rh), SDR_ERROR);
	EXPECT_EQ(sdr_mr_dereg(rmr), SDR_SUCCESS);
	EXPECT_EQ(sdr_mr_dereg(smr), SDR_SUCCESS);
	free(rbuf);
	free(sbuf);
}

/*
 * RETRY: with no receive posted the peer cannot take a message, so four
 * sends (2^max_log_num_msgs) stay in flight: a fifth answers SDR_RETRY and
 * polling one SDR_RETRY; four receives fill the slots, a fifth answers
 * SDR_RETRY; then the messages land in order, WRITE's immediate 0, each
 * checked.  Three rounds: handles and slots are reused.
 */
TEST_F_T(sdk, retry_when_resources_are_short, 180)
{
	const uint32_t len = 200000, chunks = (len + 65535) / 65536;
	uint8_t *rbuf = calloc(4, len), *sbuf = malloc(12 * (size_t)len);
	struct sdr_recv_handle *rh[4], *extra;
	struct sdr_send_handle *sh[4], *sx;
	struct sdr_mr *rmr, *smr;
	uint32_t rkey, skey, i, round, imm, m;
	int done;

	ASSERT_TRUE(rbuf && sbuf);
	for (i = 0; i < 12; i++)
		pattern_fill(sbuf + (size_t)i * len, i, 0, len);
	rmr = sdr_mr_reg(self->cr, rbuf, 4 * (size_t)len,
			 SDR_ACCESS_REMOTE_WRITE);
	smr = sdr_mr_reg(self->cs, sbuf, 12 * (size_t)len,
			 SDR_ACCESS_REMOTE_WRITE);
	ASSERT_TRUE(rmr && smr);
	ASSERT_EQ(sdr_mr_lkey_get(rmr, &rkey), SDR_SUCCESS);
	ASSERT_EQ(sdr_mr_lkey_get(smr, &skey), SDR_SUCCESS);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 4; i++) {
			m = round * 4 + i;
			struct sdr_send_wr sw = { .opcode = SDR_WR_WRITE,
				.length = len, .lkey = skey,
				.local_addr = (uintptr_t)(sbuf + (size_t)m * len) };

			ASSERT_EQ(sdr_send_post(self->qs, &sw, &sh[i]),
				  SDR_SUCCESS);
		}
		struct sdr_send_wr sw = { .opcode = SDR_WR_WRITE,
					  .length = len, .lkey = skey,
					  .local_addr = (uintptr_t)sbuf };
		EXPECT_EQ(sdr_send_post(self->qs, &sw, &sx), SDR_RETRY);
		usleep(20000);
		done = -1;
		EXPECT_EQ(sdr_send_poll(sh[0], &done, NULL), SDR_RETRY);
		EXPECT_EQ(done, 0);

		for (i = 0; i < 4; i++) {
			struct sdr_recv_wr rw = { .max_length = len,
				.lkey = rkey,
				.address = (uintptr_t)(rbuf + (size_t)i * len) };

			ASSERT_EQ(sdr_recv_post(self->qr, &rw, &rh[i]),
				  SDR_SUCCESS);
		}
		struct sdr_recv_wr rw = { .max_length = len, .lkey = rkey,
					  .address = (uintptr_t)rbuf };
		EXPECT_EQ(sdr_recv_post(self->qr, &rw, &extra), SDR_RETRY);

		for (i = 0; i < 4; i++) {
			m = round * 4 + i;
			ASSERT_EQ(bitmap_wait(rh[i], chunks), 0);
			EXPECT_EQ(sdr_recv_imm_get(rh[i], &imm), SDR_SUCCESS);
			EXPECT_EQ(imm, 0);
			EXPECT_EQ(memcmp(rbuf + (size_t)i * len,
					 sbuf + (size_t)m * len, len), 0);
			ASSERT_EQ(sdr_recv_complete(rh[i]), SDR_SUCCESS);
		}
		for (i = 0; i < 4; i++)
			EXPECT_EQ(send_wait(sh[i], NULL), SDR_SUCCESS);
	}
	EXPECT_EQ(sdr_mr_dereg(rmr), SDR_SUCCESS);
	EXPECT_EQ(sdr_mr_dereg(smr), SDR_SUCCESS);
	free(rbuf);
	free(sbuf);
}

/* A message longer than its receive: the send fails, nothing lands. */
TEST_F(sdk, longer_than_the_receive_fails_the_send)
{
	uint8_t *rbuf = malloc(8192), *sbuf = malloc(10000);
	struct sdr_send_status st = { 0 };
	struct sdr_recv_handle *rh;
	struct sdr_send_handle *sh;
	struct sdr_mr *rmr, *smr;
	uint32_t rkey, skey;

	ASSERT_TRUE(rbuf && sbuf);
	memset(rbuf, 0x5a, 8192);
	rmr = sdr_mr_reg(self->cr, rbuf, 8192, SDR_ACCESS_REMOTE_WRITE);
	smr = sdr_mr_reg(self->cs, sbuf, 10000, SDR_ACCESS_REMOTE_WRITE);
	ASSERT_TRUE(rmr && smr);
	sdr_mr_lkey_get(rmr, &rkey);
	sdr_mr_lkey_get(smr, &skey);
	struct sdr_recv_wr rw = { .max_length = 8192, .lkey = rkey,
				  .address = (uintptr_t)rbuf };
	ASSERT_EQ(sdr_recv_post(self->qr, &rw, &rh), SDR_SUCCESS);
	struct sdr_send_wr sw = { .opcode = SDR_WR_WRITE, .length = 10000,
				  .lkey = skey, .local_addr = (uintptr_t)sbuf };
	ASSERT_EQ(sdr_send_post(self->qs, &sw, &sh), SDR_SUCCESS);
	EXPECT_EQ(send_wait(sh, &st), SDR_ERROR);
	EXPECT_EQ(errno, EIO);
	EXPECT_EQ(st.flags, SDR_SEND_FAILED);
	EXPECT_EQ(first_not(rbuf, 0x5a, 8192), -1);
	ASSERT_EQ(sdr_recv_complete(rh), SDR_SUCCESS);
	EXPECT_EQ(sdr_mr_dereg(rmr), SDR_SUCCESS);
	EXPECT_EQ(sdr_mr_dereg(smr), SDR_SUCCESS);
	free(rbuf);
	free(sbuf);
}

/*
 * Remote offsets: 100,000 bytes sent 3 chunks (192 KiB) into a 1 MiB
 * receive land exactly there, every other byte of the buffer untouched;
 * the bitmap has bits 3 and 4 (the chunks the bytes cover) and no other;
 * expansion: chunk 3 whole, chunk 4 up to the message's end (9 of 16 MTU
 * pieces), chunk 2 nothing.  Two messages into one QP's next two
 * receives at offsets 0 and 5 chunks land each in its own.  The same
 * 100,000 bytes at 3 chunks into a 256 KiB receive do not fit: the send
 * fails, nothing lands.
 */
TEST_F(sdk, remote_offsets_land_in_place)
{
	const uint32_t len = 100000, maxlen = MIB, at = 3 * 65536;
	uint8_t *rbuf = malloc(3 * (size_t)maxlen), *sbuf = malloc(2 * len);
	struct sdr_send_status st = { 0 };
	struct sdr_recv_handle *rh, *rh2;
	struct sdr_send_handle *sh, *sh2;
	struct sdr_mr *rmr, *smr;
	uint32_t rkey, skey, imm = 0, c;
	uint64_t exp[1];
	uint8_t *bits;
	size_t nb;

	ASSERT_TRUE(rbuf && sbuf);
	memset(rbuf, 0xa5, 3 * (size_t)maxlen);
	pattern_fill(sbuf, 11, 0, 2 * len);
	rmr = sdr_mr_reg(self->cr, rbuf, 3 * (size_t)maxlen,
			 SDR_ACCESS_REMOTE_WRITE);
	smr = sdr_mr_reg(self->cs, sbuf, 2 * len, SDR_ACCESS_REMOTE_WRITE);
	ASSERT_TRUE(rmr && smr);
	ASSERT_EQ(sdr_mr_lkey_get(rmr, &rkey), SDR_SUCCESS);
	ASSERT_EQ(sdr_mr_lkey_get(smr, &skey), SDR_SUCCESS);

	struct sdr_recv_wr rw = { .max_length = maxlen, .lkey = rkey,
				  .address = (uintptr_t)rbuf };
	ASSERT_EQ(sdr_recv_post(self->qr, &rw, &rh), SDR_SUCCESS);
	struct sdr_send_wr sw = { .opcode = SDR_WR_WRITE_WITH_IMM,
				  .imm_value = 0xab, .length = len,
				  .lkey = skey, .local_addr = (uintptr_t)sbuf,
				  .remote_offset = 3 };
	ASSERT_EQ(sdr_send_post(self->qs, &sw, &sh), SDR_SUCCESS);
	ASSERT_EQ(bits_wait(rh, 3, 5), 0);
	EXPECT_EQ(send_wait(sh, &st), SDR_SUCCESS);
	ASSERT_EQ(sdr_recv_imm_get(rh, &imm), SDR_SUCCESS);
	EXPECT_EQ(imm, 0xab);
	ASSERT_EQ(sdr_recv_bitmap_get(rh, &bits, &nb), SDR_SUCCESS);
	ASSERT_EQ(nb, 2);	/* 16 chunks of 64 KiB */
	EXPECT_EQ(bits[0], 0x18);	/* chunks 3 and 4 */
	EXPECT_EQ(bits[1], 0);
	EXPECT_EQ(memcmp(rbuf + at, sbuf, len), 0);
	EXPECT_EQ(first_not(rbuf, 0xa5, at), -1);
	EXPECT_EQ(first_not(rbuf + at + len, 0xa5, maxlen - at - len), -1);
	ASSERT_EQ(sdr_recv_bitmap_chunk_expand(rh, 3, exp), SDR_SUCCESS);
	EXPECT_EQ(exp[0], 0xffff);
	ASSERT_EQ(sdr_recv_bitmap_chunk_expand(rh, 4, exp), SDR_SUCCESS);
	EXPECT_EQ(exp[0], 0x1ff);
	ASSERT_EQ(sdr_recv_bitmap_chunk_expand(rh, 2, exp), SDR_SUCCESS);
	EXPECT_EQ(exp[0], 0);
	ASSERT_EQ(sdr_recv_complete(rh), SDR_SUCCESS);

	/* two receives, two messages: offsets 0 and 5 chunks */
	memset(rbuf, 0xa5, 3 * (size_t)maxlen);
	rw.address = (uintptr_t)(rbuf + maxlen);
	ASSERT_EQ(sdr_recv_post(self->qr, &rw, &rh), SDR_SUCCESS);
	rw.address = (uintptr_t)(rbuf + 2 * (size_t)maxlen);
	ASSERT_EQ(sdr_recv_post(self->qr, &rw, &rh2), SDR_SUCCESS);
	sw.remote_offset = 0;
	ASSERT_EQ(sdr_send_post(self->qs, &sw, &sh), SDR_SUCCESS);
	sw.remote_offset = 5;
	sw.local_addr = (uintptr_t)(sbuf + len);
	ASSERT_EQ(sdr_send_post(self->qs, &sw, &sh2), SDR_SUCCESS);
	ASSERT_EQ(bits_wait(rh, 0, 2), 0);
	ASSERT_EQ(bits_wait(rh2, 5, 7), 0);
	EXPECT_EQ(send_wait(sh, NULL), SDR_SUCCESS);
	EXPECT_EQ(send_wait(sh2, NULL), SDR_SUCCESS);
	EXPECT_EQ(memcmp(rbuf + maxlen, sbuf, len), 0);
	EXPECT_EQ(first_not(rbuf + maxlen + len, 0xa5, maxlen - len), -1);
	EXPECT_EQ(memcmp(rbuf + 2 * (size_t)maxlen + 5 * 65536, sbuf + len,
			 len), 0);
	EXPECT_EQ(first_not(rbuf + 2 * (size_t)maxlen, 0xa5, 5 * 65536), -1);
	EXPECT_EQ(first_not(rbuf + 2 * (size_t)maxlen + 5 * 65536 + len, 0xa5,
			    maxlen - 5 * 65536 - len), -1);
	ASSERT_EQ(sdr_recv_bitmap_get(rh2, &bits, &nb), SDR_SUCCESS);
	EXPECT_EQ(bits[0], 0x60);	/* chunks 5 and 6 */
	EXPECT_EQ(bits[1], 0);
	ASSERT_EQ(sdr_recv_complete(rh), SDR_SUCCESS);
	ASSERT_EQ(sdr_recv_complete(rh2), SDR_SUCCESS);

	/* it does not fit a 256 KiB receive at 192 KiB */
	memset(rbuf, 0xa5, 3 * (size_t)maxlen);
	rw.address = (uintptr_t)rbuf;
	rw.max_length = 4 * 65536;
	ASSERT_EQ(sdr_recv_post(self->qr, &rw, &rh), SDR_SUCCESS);
	sw.remote_offset = 3;
	sw.local_addr = (uintptr_t)sbuf;
	ASSERT_EQ(sdr_send_post(self->qs, &sw, &sh), SDR_SUCCESS);
	EXPECT_EQ(send_wait(sh, &st), SDR_ERROR);
	EXPECT_EQ(errno, EIO);
	EXPECT_EQ(st.flags, SDR_SEND_FAILED);
	EXPECT_EQ(first_not(rbuf, 0xa5, 3 * (size_t)maxlen), -1);
	ASSERT_EQ(sdr_recv_bitmap_get(rh, &bits, &nb), SDR_SUCCESS);
	for (c = 0; c < nb; c++)
		EXPECT_EQ(bits[c], 0);
	ASSERT_EQ(sdr_recv_complete(rh), SDR_SUCCESS);
	EXPECT_EQ(sdr_mr_dereg(rmr), SDR_SUCCESS);
	EXPECT_EQ(sdr_mr_dereg(smr), SDR_SUCCESS);
	free(rbuf);
	free(sbuf);
}

/* Every bad call: SDR_ERROR (or NULL) and its errno. */
/*
 * A streamed send: parts from two registrations land at their own chunk
 * offsets of one receive, out of order, one of a single byte; the
 * immediate is there with the first part, the send completes only after
 * the end; the bitmap says exactly the chunks the parts filled (a chunk
 * a part ends inside counts once that part is in), every other byte of
 * the receive is untouched.  Then the errors: a part past the QP's
 * largest message, of no bytes, after the end; a stream of more parts
 * than it may have packets (ENOSPC, the stream still usable); a part
 * past the receive's end fails the send and lands nothing.
 */
TEST_F(sdk, streamed_send_lands_part_by_part)
{
	const uint32_t maxlen = MIB, la = 70000, lb = 200000;
	uint8_t *rbuf = malloc(maxlen), *s1 = malloc(lb), *s2 = malloc(la);
	struct sdr_send_status st = { 0 };
	struct sdr_send_handle *sh;
	struct sdr_recv_handle *rh;
	struct sdr_mr *rmr, *m1, *m2;
	uint32_t rkey, k1, k2, imm = 0, n;
	uint64_t exp[1];
	uint8_t *bits;
	size_t nb;
	int done = 0, ret;

	ASSERT_TRUE(rbuf && s1 && s2);
	memset(rbuf, 0xa5, maxlen);
	pattern_fill(s1, 21, 0, lb);
	pattern_fill(s2, 22, 0, la);
	rmr = sdr_mr_reg(self->cr, rbuf, maxlen, SDR_ACCESS_REMOTE_WRITE);
	m1 = sdr_mr_reg(self->cs, s1, lb, SDR_ACCESS_REMOTE_WRITE);
	m2 = sdr_mr_reg(self->cs, s2, la, SDR_ACCESS_REMOTE_WRITE);
	ASSERT_TRUE(rmr && m1 && m2);
	ASSERT_EQ(sdr_mr_lkey_get(rmr, &rkey), SDR_SUCCESS);
	ASSERT_EQ(sdr_mr_lkey_get(m1, &k1), SDR_SUCCESS);
	ASSERT_EQ(sdr_mr_lkey_get(m2, &k2), SDR_SUCCESS);

	struct sdr_recv_wr rw = { .max_length = maxlen, .lkey = rkey,
				  .address = (uintptr_t)rbuf };
	ASSERT_EQ(sdr_recv_post(self->qr, &rw, &rh), SDR_SUCCESS);
	struct sdr_send_start_wr sw = { .opcode = SDR_WR_WRITE_WITH_IMM,
					.imm_value = 0x5ee };
	ASSERT_EQ(sdr_streaming_send_start(self->qs, &sw, &sh), SDR_SUCCESS);
	EXPECT_EQ(sdr_send_poll(sh, &done, NULL), SDR_RETRY);
	EXPECT_EQ(sdr_recv_imm_get(rh, &imm), SDR_RETRY);

	/* 70000 bytes at chunk 10: chunks 10 and 11 (4464 bytes of it) */
	struct sdr_send_continue_wr cw = { .length = la,
					   .local_addr = (uintptr_t)s2,
					   .lkey = k2, .remote_offset = 10 };
	ASSERT_EQ(sdr_streaming_send_continue(sh, &cw), SDR_SUCCESS);
	ASSERT_EQ(bits_wait(rh, 10, 12), 0);
	ASSERT_EQ(sdr_recv_imm_get(rh, &imm), SDR_SUCCESS);
	EXPECT_EQ(imm, 0x5ee);
	usleep(100000);
	EXPECT_EQ(sdr_send_poll(sh, &done, NULL), SDR_RETRY);	/* not ended */
	/* 200000 bytes at chunk 0, then one byte at chunk 7 */
	cw = (struct sdr_send_continue_wr) { .length = lb,
		.local_addr = (uintptr_t)s1, .lkey = k1, .remote_offset = 0 };
	ASSERT_EQ(sdr_streaming_send_continue(sh, &cw), SDR_SUCCESS);
	cw = (struct sdr_send_continue_wr) { .length = 1,
		.local_addr = (uintptr_t)(s1 + 5), .lkey = k1,
		.remote_offset = 7 };
	ASSERT_EQ(sdr_streaming_send_continue(sh, &cw), SDR_SUCCESS);
	/* past the QP's largest message, or empty: refused, nothing sent */
	cw.remote_offset = 4 * MIB / 65536;
	EXPECT_EQ(sdr_streaming_send_continue(sh, &cw), SDR_ERROR);
	EXPECT_EQ(errno, EINVAL);
	cw.remote_offset = 7;
	cw.length = 0;
	EXPECT_EQ(sdr_streaming_send_continue(sh, &cw), SDR_ERROR);
	EXPECT_EQ(errno, EINVAL);
	ASSERT_EQ(sdr_streaming_send_end(sh), SDR_SUCCESS);
	cw.length = 1;
	EXPECT_EQ(sdr_streaming_send_continue(sh, &cw), SDR_ERROR);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(sdr_streaming_send_end(sh), SDR_ERROR);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(send_wait(sh, &st), SDR_SUCCESS);
	EXPECT_EQ(st.flags, 0);

	ASSERT_EQ(sdr_recv_bitmap_get(rh, &bits, &nb), SDR_SUCCESS);
	ASSERT_EQ(nb, 2);
	EXPECT_EQ(bits[0], 0x8f);	/* chunks 0-3 and 7 */
	EXPECT_EQ(bits[1], 0x0c);	/* 10 and 11 */
	EXPECT_EQ(memcmp(rbuf, s1, lb), 0);
	EXPECT_EQ(first_not(rbuf + lb, 0xa5, 7 * 65536 - lb), -1);
	EXPECT_EQ(rbuf[7 * 65536], s1[5]);
	EXPECT_EQ(first_not(rbuf + 7 * 65536 + 1, 0xa5, 3 * 65536 - 1), -1);
	EXPECT_EQ(memcmp(rbuf + 10 * 65536, s2, la), 0);
	EXPECT_EQ(first_not(rbuf + 10 * 65536 + la, 0xa5,
			    maxlen - 10 * 65536 - la), -1);
	ASSERT_EQ(sdr_recv_bitmap_chunk_expand(rh, 0, exp), SDR_SUCCESS);
	EXPECT_EQ(exp[0], 0xffff);
	ASSERT_EQ(sdr_recv_bitmap_chunk_expand(rh, 4, exp), SDR_SUCCESS);
	EXPECT_EQ(exp[0], 0);
	ASSERT_EQ(sdr_recv_complete(rh), SDR_SUCCESS);

	/* one-byte parts until the stream's packets run out */
	ASSERT_EQ(sdr_recv_post(self->qr, &rw, &rh), SDR_SUCCESS);
	sw.opcode = SDR_WR_WRITE;
	ASSERT_EQ(sdr_streaming_send_start(self->qs, &sw, &sh), SDR_SUCCESS);
	for (n = 0; n < 100000; n++) {
		cw = (struct sdr_send_continue_wr) { .length = 1,
			.local_addr = (uintptr_t)(s1 + n % 16), .lkey = k1,
			.remote_offset = n % 16 };
		ret = sdr_streaming_send_continue(sh, &cw);
		if (ret != SDR_SUCCESS)
			break;
	}
	EXPECT_EQ(ret, SDR_ERROR);
	EXPECT_EQ(errno, ENOSPC);
	TH_LOG("%u one-byte parts in a stream", n);
	EXPECT_GT(n, 1000);
	ASSERT_EQ(sdr_streaming_send_end(sh), SDR_SUCCESS);
	EXPECT_EQ(send_wait(sh, NULL), SDR_SUCCESS);
	ASSERT_EQ(bits_wait(rh, 0, 16), 0);
	for (n = 0; n < 16; n++)
		EXPECT_EQ(rbuf[n * 65536], s1[n]);
	ASSERT_EQ(sdr_recv_complete(rh), SDR_SUCCESS);

	/* a part past the receive's end: the send fails, nothing lands */
	memset(rbuf, 0xa5, maxlen);
	rw.max_length = 2 * 65536;
	ASSERT_EQ(sdr_recv_post(self->qr, &rw, &rh), SDR_SUCCESS);
	ASSERT_EQ(sdr_streaming_send_start(self->qs, &sw, &sh), SDR_SUCCESS);
	cw = (struct sdr_send_continue_wr) { .length = 100,
		.local_addr = (uintptr_t)s1, .lkey = k1, .remote_offset = 3 };
	ASSERT_EQ(sdr_streaming_send_continue(sh, &cw), SDR_SUCCESS);
	/* once the refusal is back, a further part fails: ESTALE */
	cw = (struct sdr_send_continue_wr) { .length = 1,
		.local_addr = (uintptr_t)s1, .lkey = k1, .remote_offset = 0 };
	for (n = 0; n < 3000; n++) {
		ret = sdr_streaming_send_continue(sh, &cw);
		if (ret != SDR_SUCCESS)
			break;
		usleep(1000);
	}
	EXPECT_EQ(ret, SDR_ERROR);
	EXPECT_EQ(errno, ESTALE);
	/* it still ends, and the send reports the failure */
	ASSERT_EQ(sdr_streaming_send_end(sh), SDR_SUCCESS);
	EXPECT_EQ(send_wait(sh, &st), SDR_ERROR);
	EXPECT_EQ(errno, EIO);
	EXPECT_EQ(first_not(rbuf, 0xa5, maxlen), -1);
	ASSERT_EQ(sdr_recv_complete(rh), SDR_SUCCESS);

	EXPECT_EQ(sdr_mr_dereg(m1), SDR_SUCCESS);
	EXPECT_EQ(sdr_mr_dereg(m2), SDR_SUCCESS);
	EXPECT_EQ(sdr_mr_dereg(rmr), SDR_SUCCESS);
	free(rbuf);
	free(s1);
	free(s2);
}

TEST_F(sdk, errors)
{
	struct sdr_qp_attr a = qp_attr(16, 2);
	struct sdr_dev_attr da = { .log_max_qps = 11 };
	struct sdr_recv_handle *rh;
	struct sdr_send_handle *sh;
	uint8_t buf[4096], info[512];
	struct sdr_mr *mr;
	uint32_t key;
	size_t n;

	errno = 0;
	EXPECT_FALSE(sdr_context_create(dev0(), &da));
	EXPECT_EQ(errno, EINVAL);
	EXPECT_FALSE(sdr_context_create("no-such-device", NULL));
	a.mtu = SDR_MTU_128;
	EXPECT_FALSE(sdr_qp_create(self->cs, &a));
	EXPECT_EQ(errno, EINVAL);
	a = qp_attr(5, 2);	/* 32-byte chunks: below sdr's 64 */
	EXPECT_FALSE(sdr_qp_create(self->cs, &a));
	EXPECT_EQ(errno, EINVAL);
	a = qp_attr(16, 11);
	EXPECT_FALSE(sdr_qp_create(self->cs, &a));
	EXPECT_EQ(errno, EINVAL);
	/* a context holding QPs stays */
	EXPECT_EQ(sdr_context_destroy(self->cs), SDR_ERROR);
	EXPECT_EQ(errno, EBUSY);
	/* someone else's information */
	ASSERT_EQ(sdr_qp_info_size_get(self->qs, &n), SDR_SUCCESS);
	ASSERT_LE(n, sizeof(info));
	memset(info, 0x33, sizeof(info));
	EXPECT_EQ(sdr_qp_connect(self->qs, info), SDR_ERROR);
	EXPECT_EQ(errno, EPROTO);

	mr = sdr_mr_reg(self->cs, buf, sizeof(buf), SDR_ACCESS_REMOTE_WRITE);
	ASSERT_TRUE(mr);
	ASSERT_EQ(sdr_mr_lkey_get(mr, &key), SDR_SUCCESS);
	/* outside the registration, an unknown key, no length */
	struct sdr_recv_wr rw = { .max_length = 8192, .lkey = key,
				  .address = (uintptr_t)buf };
	EXPECT_EQ(sdr_recv_post(self->qs, &rw, &rh), SDR_ERROR);
	EXPECT_EQ(errno, EFAULT);
	rw.max_length = 100;
	rw.lkey = key + 100;
	EXPECT_EQ(sdr_recv_post(self->qs, &rw, &rh), SDR_ERROR);
	EXPECT_EQ(errno, ENOENT);
	rw.lkey = key;
	rw.max_length = 0;
	EXPECT_EQ(sdr_recv_post(self->qs, &rw, &rh), SDR_ERROR);
	EXPECT_EQ(errno, EINVAL);
	/* a remote offset that ends the message past the QP's 4 MiB */
	struct sdr_send_wr sw = { .opcode = SDR_WR_WRITE, .length = 100,
				  .lkey = key, .local_addr = (uintptr_t)buf,
				  .remote_offset = 64 };
	EXPECT_EQ(sdr_send_post(self->qs, &sw, &sh), SDR_ERROR);
	EXPECT_EQ(errno, EINVAL);
	sw.remote_offset = 1ULL << 40;
	EXPECT_EQ(sdr_send_post(self->qs, &sw, &sh), SDR_ERROR);
	EXPECT_EQ(errno, EINVAL);
	sw.remote_offset = 0;
	sw.opcode = (enum sdr_wr_opcode)7;
	EXPECT_EQ(sdr_send_post(self->qs, &sw, &sh), SDR_ERROR);
	EXPECT_EQ(errno, EINVAL);
	sw.opcode = SDR_WR_WRITE;
	sw.length = 8192;
	EXPECT_EQ(sdr_send_post(self->qs, &sw, &sh), SDR_ERROR);
	EXPECT_EQ(errno, EFAULT);
	EXPECT_EQ(sdr_mr_dereg(mr), SDR_SUCCESS);
	/* registrations: access flags, a range the process cannot write */
	EXPECT_FALSE(sdr_mr_reg(self->cs, buf, sizeof(buf),
				(enum sdr_access_flags)3));
	EXPECT_EQ(errno, EINVAL);
	EXPECT_FALSE(sdr_mr_reg(self->cs, (void *)"constant", 9,
				SDR_ACCESS_REMOTE_WRITE));
	EXPECT_FALSE(sdr_mr_reg(self->cs, buf, 0, SDR_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(errno, EINVAL);
	EXPECT_FALSE(sdr_mr_reg(self->cs, buf, (size_t)1 << 41,
				SDR_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(errno, EINVAL);
}

/*
 * Registration and the limits: past the user's RLIMIT_MEMLOCK (no
 * CAP_IPC_LOCK) is refused ENOMEM; under sdr's per-user limit (user_max_mb
 * 12), a process that exits holding 8 MiB pinned, a QP and a posted
 * receive into it gives it all back: the next process of that user
 * registers 8 + 3 MiB.
 */
#define SDK_UID	4250

static int sdk_child(uint8_t *big, size_t first, size_t second, int hold)
{
	struct rlimit rl = { 16 * MIB, 16 * MIB };
	struct sdr_dev_attr da = { .log_max_qps = 1 };
	struct sdr_qp_attr a = qp_attr(16, 2);
	struct sdr_recv_handle *h;
	struct sdr_context *c, *c0;
	struct sdr_mr *m1, *m2;
	struct sdr_qp *q, *q0;
	uint32_t key;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || become_user(SDK_UID, 1))
		return 10;
	c = sdr_context_create(dev1(), &da);
	c0 = sdr_context_create(dev0(), &da);
	q = c ? sdr_qp_create(c, &a) : NULL;
	q0 = c0 ? sdr_qp_create(c0, &a) : NULL;
	if (!q || !q0 || connect_pair(q, q0))
		return 11;
	m1 = sdr_mr_reg(c, big, first, SDR_ACCESS_REMOTE_WRITE);
	if (!m1 || sdr_mr_lkey_get(m1, &key) != SDR_SUCCESS)
		return 12;
	if (hold) {
		/* past RLIMIT_MEMLOCK: refused */
		if (sdr_mr_reg(c, big + first, 9 * MIB,
			       SDR_ACCESS_REMOTE_WRITE) || errno != ENOMEM)
			return 13;
		struct sdr_recv_wr w = { .max_length = 4096, .lkey = key,
					 .address = (uintptr_t)big };
		if (sdr_recv_post(q, &w, &h) != SDR_SUCCESS)
			return 14;
		return 0;	/* exits holding all of it */
	}
	m2 = sdr_mr_reg(c, big + first, second, SDR_ACCESS_REMOTE_WRITE);
	if (!m2)
		return 15;
	if (sdr_mr_dereg(m1) != SDR_SUCCESS || sdr_mr_dereg(m2) != SDR_SUCCESS ||
	    sdr_qp_destroy(q) != SDR_SUCCESS || sdr_qp_destroy(q0) != SDR_SUCCESS ||
	    sdr_context_destroy(c) != SDR_SUCCESS ||
	    sdr_context_destroy(c0) != SDR_SUCCESS)
		return 16;
	return 0;
}

TEST_F_T(sdk, registrations_are_charged_and_given_back, 120)
{
	unsigned int user_max = (unsigned int)sysfs_u64_or(
		"/sys/module/sdr/parameters/user_max_mb", 0);
	uint8_t *big = aligned_alloc(4096, 24 * MIB);
	int status, i;
	pid_t pid;

	(void)self;
	ASSERT_TRUE(big);
	ASSERT_NE(user_max, 0);
	memset(big, 1, 24 * MIB);
	ASSERT_EQ(set_param("user_max_mb", 12), 0);
	for (i = 0; i < 2; i++) {
		pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0)
			_exit(i ? sdk_child(big, 8 * MIB, 3 * MIB, 0) :
				  sdk_child(big, 8 * MIB, 0, 1));
		ASSERT_EQ(waitpid(pid, &status, 0), pid);
		TH_LOG("child %d: exit %d", i,
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	EXPECT_EQ(set_param("user_max_mb", user_max), 0);
	free(big);
}

/* sdrx_qp_create(): policy and the in-flight bound reach the flow. */
TEST_F(sdk, extensions_reach_the_flow)
{
	struct sdr_qp_attr a = qp_attr(16, 2);
	struct sdrx_qp_attr x = { .flags = SDRX_QP_POLICY | SDRX_QP_EC,
				  .policy = SDR_POLICY_EC, .ec_k = 8,
				  .ec_m = 2 };
	struct sdr_flow_info fi;
	struct sdr_qp *q;

	q = sdrx_qp_create(self->cs, &a, &x);
	ASSERT_TRUE(q);
	ASSERT_TRUE(sdrx_qp_flow(q));
	EXPECT_TRUE(sdrx_context_ctx(self->cs) ==
		    sdr_flow_ctx(sdrx_qp_flow(q)));
	ASSERT_EQ(sdr_flow_info(sdrx_qp_flow(q), &fi), 0);
	EXPECT_EQ(fi.policy, SDR_POLICY_EC);
	EXPECT_EQ(fi.ec_k, 8);
	EXPECT_EQ(fi.ec_m, 2);
	EXPECT_EQ(sdr_qp_destroy(q), SDR_SUCCESS);
	x.reserved[0] = 1;
	EXPECT_FALSE(sdrx_qp_create(self->cs, &a, &x));
	EXPECT_EQ(errno, EINVAL);
}

