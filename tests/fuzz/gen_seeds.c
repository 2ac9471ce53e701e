// SPDX-License-Identifier: GPL-2.0
/* Writes the committed seed corpus: make seeds (needs a host cc only). */
#include <stdio.h>
#include <string.h>
#include "sdr_wire.h"

static void put(const char *dir, const char *name, const void *b, size_t n)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		return;
	}
	fwrite(b, 1, n, f);
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "corpus/fuzz_wire";
	u8 buf[SDR_WIRE_HDR_LEN + 256];
	struct sdr_pkt p;
	struct sdr_ack a;
	u32 n;

	memset(buf, 0, sizeof(buf));
	memset(&p, 0, sizeof(p));
	p.type = SDR_PKT_DATA;
	p.policy = SDR_WIRE_POLICY_SR;
	p.dst_flow = 1;
	p.src_flow = 2;
	p.msg_seq = 3;
	p.msg_len = 100;
	p.payload_len = 64;
	p.offset = 0;
	p.ts = 1234;
	sdr_wire_encode(&p, buf);
	memset(buf + SDR_WIRE_HDR_LEN, 0xab, 64);
	put(dir, "data_first", buf, SDR_WIRE_HDR_LEN + 64);
	p.offset = 64;
	p.land = 64;
	p.payload_len = 36;
	p.flags = SDR_PKT_F_LAST | SDR_PKT_F_RETX | SDR_PKT_F_ACKREQ;
	sdr_wire_encode(&p, buf);
	put(dir, "data_last", buf, SDR_WIRE_HDR_LEN + 36);
	p.flags = SDR_PKT_F_PARITY;
	p.policy = SDR_WIRE_POLICY_EC;
	p.offset = 0;
	p.land = 0;
	p.payload_len = 128;
	p.aux = 0x10002;
	sdr_wire_encode(&p, buf);
	put(dir, "data_parity", buf, SDR_WIRE_HDR_LEN + 128);
	/* a streamed message: a part's packet, a part's end, the end */
	p.policy = SDR_WIRE_POLICY_SR;
	p.aux = 0;
	p.msg_len = 0;
	p.flags = SDR_PKT_F_STREAM;
	p.offset = 64;
	p.part = 4096;
	p.land = 4096 + 64;
	p.payload_len = 64;
	sdr_wire_encode(&p, buf);
	put(dir, "stream_data", buf, SDR_WIRE_HDR_LEN + 64);
	p.flags = SDR_PKT_F_STREAM | SDR_PKT_F_PART_END;
	p.offset = 128;
	p.land = 4096 + 128;
	p.payload_len = 9;
	sdr_wire_encode(&p, buf);
	put(dir, "stream_part_end", buf, SDR_WIRE_HDR_LEN + 9);
	p.flags = SDR_PKT_F_STREAM | SDR_PKT_F_LAST;
	p.offset = 192;
	p.land = 0;
	p.part = 0;
	p.msg_len = 137;
	p.payload_len = 0;
	sdr_wire_encode(&p, buf);
	put(dir, "stream_end", buf, SDR_WIRE_HDR_LEN);

	memset(&a, 0, sizeof(a));
	a.cum = 4;
	a.base = 6;
	a.nbits = 20;
	a.map[0] = 0x5a;
	a.map[1] = 0xff;
	a.map[2] = 0x03;
	memset(&p, 0, sizeof(p));
	p.type = SDR_PKT_ACK;
	p.dst_flow = 2;
	p.src_flow = 1;
	p.msg_seq = 3;
	p.ts = 1234;
	n = sdr_ack_encode(&a, buf + SDR_WIRE_HDR_LEN);
	p.payload_len = (u16)n;
	sdr_wire_encode(&p, buf);
	put(dir, "ack", buf, SDR_WIRE_HDR_LEN + n);
	put(dir, "ack_body", buf + SDR_WIRE_HDR_LEN, n);
	p.aux = SDR_ACK_F_COMPLETE;
	sdr_wire_encode(&p, buf);
	put(dir, "ack_complete", buf, SDR_WIRE_HDR_LEN + n);
	p.aux = 0;
	p.type = SDR_PKT_NACK;
	sdr_wire_encode(&p, buf);
	put(dir, "nack", buf, SDR_WIRE_HDR_LEN + n);

	memset(&p, 0, sizeof(p));
	p.type = SDR_PKT_RNR;
	p.dst_flow = 2;
	p.src_flow = 1;
	p.msg_seq = 9;
	sdr_wire_encode(&p, buf);
	put(dir, "rnr", buf, SDR_WIRE_HDR_LEN);
	p.type = SDR_PKT_CLOSE;
	sdr_wire_encode(&p, buf);
	put(dir, "close", buf, SDR_WIRE_HDR_LEN);
	p.type = SDR_PKT_CREDIT;
	p.msg_seq = 0x12345678;
	p.aux = 0xfffffff0;
	sdr_wire_encode(&p, buf);
	put(dir, "credit", buf, SDR_WIRE_HDR_LEN);
	p.type = SDR_PKT_PROBE;
	p.msg_seq = 0;
	p.ts = 77;
	sdr_wire_encode(&p, buf);
	put(dir, "probe", buf, SDR_WIRE_HDR_LEN);
	if (argc > 2) {
		/* fuzz_sr scripts: geometry bytes, then operations */
		static const u8 s1[] = { 0, 0x40, 0, 0x04, 0, 8, 4, 0, 0, 0, 3, 16,
					 0, 2, 0, 2, 1, 2, 2, 0, 1, 0, 0x10, 20, 7, 0,
					 2, 2, 6, 7, 0, 2, 3, 2, 4, 6, 0 };
		static const u8 s2[] = { 0, 0x10, 0, 0x01, 0, 32, 2, 1, 0, 2, 1,
					 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					 0, 0, 0x10, 0xff, 0xff, 5, 1, 0, 0x40, 10,
					 7, 0, 8, 0xab, 0 };
		static const u8 s3[] = { 0, 0, 1, 0, 0x20, 1, 1, 1, 0, 0, 0,
					 0, 2, 0, 3, 1, 0, 0x10, 0, 0, 0, 0, 1, 0,
					 0, 0, 0, 0, 0, 6, 1, 0xff, 0xff, 23, 6, 7, 7 };

		/* s1 over three paths (flags 0x30); path 1 goes down, then up */
		static const u8 s4[] = { 0, 0x40, 0, 0x04, 0, 8, 4, 0x30, 0, 0, 3, 16,
					 0, 2, 0, 2, 1, 2, 2, 0, 8, 0xcd, 0x81, 0,
					 1, 0, 0x10, 20, 7, 0, 8, 0xcd, 0x01, 7, 0,
					 2, 2, 6, 7, 0, 2, 3, 2, 4, 6, 0 };

		put(argv[2], "script_basic", s1, sizeof(s1));
		put(argv[2], "script_paths", s4, sizeof(s4));
		put(argv[2], "script_rnr_abort", s2, sizeof(s2));
		put(argv[2], "script_forged", s3, sizeof(s3));
	}
	if (argc > 3) {
		/*
		 * fuzz_ec: kg - 1, m, pay - 1, last symbol's length, flags,
		 * have (8 bytes, big-endian), parity rows (4), data bytes
		 */
		static const u8 e1[] = { 31, 8, 63, 40, 0,
			0, 0, 0, 0, 0xf0, 0x7f, 0xbf, 0xee,
			0, 0, 0, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
		static const u8 e2[] = { 63, 32, 15, 16, 0,
			0x55, 0x55, 0x55, 0x55, 0xaa, 0xaa, 0xaa, 0xaa,
			0xff, 0xff, 0xff, 0xff, 0xde, 0xad, 0xbe, 0xef };
		static const u8 e3[] = { 4, 2, 7, 3, 0,
			0, 0, 0, 0, 0, 0, 0, 0x03,
			0, 0, 0, 0x01, 0x11, 0x22, 0x33 };
		static const u8 e4[] = { 6, 8, 31, 5, 0,
			0, 0, 0, 0, 0, 0, 0, 0x41,
			0, 0, 0, 0xb5, 0x80, 0x01 };
		static const u8 e5[] = { 9, 4, 20, 0, 0x03,
			0, 0, 0, 0, 0, 0, 0x01, 0xef,
			0, 0, 0, 0x0f };

		put(argv[3], "ec_32_8", e1, sizeof(e1));
		put(argv[3], "ec_64_32", e2, sizeof(e2));
		put(argv[3], "ec_enospc", e3, sizeof(e3));
		put(argv[3], "ec_short_submsg", e4, sizeof(e4));
		put(argv[3], "ec_stray_bit", e5, sizeof(e5));
	}
	if (argc > 4) {
		/*
		 * fuzz_credit: window - 16, seq0 (4), psn0 (4), then
		 * (time step, operation, operands) ...
		 */
		static const u8 c1[] = { 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xf8,
			1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 2, 1, 2,
			1, 3, 0, 1, 1, 0, 1, 5, 1, 2, 1, 3, 0 };
		static const u8 c2[] = { 48, 0x80, 0, 0, 0, 0, 0, 0, 0,
			1, 1, 0, 0, 7, 1, 0, 1, 200, 5, 0, 1, 1, 2, 1, 3, 0,
			1, 4, 0xff, 0xff, 0xff, 0xff, 0, 0, 1, 0, 1, 6, 0, 0,
			0, 99, 1, 1, 0, 0 };

		put(argv[4], "credit_wrap", c1, sizeof(c1));
		put(argv[4], "credit_probe_forged", c2, sizeof(c2));
	}
	return 0;
}
