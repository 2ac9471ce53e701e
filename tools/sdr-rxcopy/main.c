// SPDX-License-Identifier: GPL-2.0
/*
 * sdr-rxcopy: what the receive path's one copy costs per packet on this
 * host, the copy sdr_slot_land() (kernel/sdr_flow_lib.c) makes of every
 * data packet from the device's receive ring into the message's slot in
 * the flow's receive region.
 *
 * The model is the module's: a ring of recv_depth buffers (40-byte GRH,
 * then the packet: sdr's header and the payload), posted in turn; a
 * receive region of max_msgs slots of the message size, so the
 * destination streams through memory the way a transfer's does.  Three
 * cases of where the packet is when the copy starts:
 *
 *   written  the "device" has just written the buffer (a store of every
 *            line, as a NIC with DDIO leaves it in the cache, or as rxe's
 *            own copy does under Soft-RoCE); then the copy;
 *   cold     the buffer was flushed from the caches (clflush): DMA that
 *            bypasses them;
 *   hot      a ring of 16 buffers that stay in L1/L2: the copy alone.
 *
 * The "written" case times only the copy, not the device's store.  It
 * prints ns per packet, GB/s of payload, and the cores the copy alone
 * would take at 100 and 400 Gbit/s of such packets.  One core, best of
 * --runs.
 *
 * usage: sdr-rxcopy [--pay BYTES] [--depth N] [--msg BYTES] [--msgs N]
 *                   [--packets N] [--runs N]
 * Exit status: 0, 2 usage or setup error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GRH_LEN	40
#define HDR_LEN	64	/* SDR_WIRE_HDR_LEN: sdr's header on a data packet */

struct cfg {
	size_t pay, depth, msg, msgs, packets, runs;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void flush(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i += 64)
		__builtin_ia32_clflush(p + i);
}

enum mode { WRITTEN, COLD, HOT };
static const char *const mode_name[] = { "written", "cold", "hot" };

/* ns per packet of one pass of @c->packets copies in @m's conditions */
static double one_pass(const struct cfg *c, enum mode m, uint8_t *ring,
		       size_t slot, uint8_t *region)
{
	size_t depth = m == HOT ? 16 : c->depth, per_msg, i;
	double t = 0, t0 = 0;
	size_t off = 0;

	per_msg = (c->msg + c->pay - 1) / c->pay;
	for (i = 0; i < c->packets; i++) {
		uint8_t *b = ring + (i % depth) * slot;
		size_t len = c->pay, at;

		at = (i / per_msg) % c->msgs * c->msg + (i % per_msg) * c->pay;
		if ((i % per_msg) * c->pay + len > c->msg)	/* a short last packet */
			len = c->msg - (i % per_msg) * c->pay;
		if (m == WRITTEN)
			memset(b + GRH_LEN + HDR_LEN, (int)i, len);
		else if (m == COLD)
			flush(b, GRH_LEN + HDR_LEN + len);
		if (m != HOT) {
			__asm__ volatile("mfence" ::: "memory");
			t0 = now_ns();
		} else if (i == 0) {
			t0 = now_ns();
		}
		memcpy(region + at, b + GRH_LEN + HDR_LEN, len);
		off += len;
		if (m != HOT)
			t += now_ns() - t0;
	}
	if (m == HOT)
		t = now_ns() - t0;
	__asm__ volatile("" : : "r"(region), "r"(off) : "memory");
	return t / (double)c->packets;
}

static int parse(int argc, char **argv, struct cfg *c)
{
	for (int i = 1; i < argc; i++) {
		size_t *v = NULL;

		if (!strcmp(argv[i], "--pay"))
			v = &c->pay;
		else if (!strcmp(argv[i], "--depth"))
			v = &c->depth;
		else if (!strcmp(argv[i], "--msg"))
			v = &c->msg;
		else if (!strcmp(argv[i], "--msgs"))
			v = &c->msgs;
		else if (!strcmp(argv[i], "--packets"))
			v = &c->packets;
		else if (!strcmp(argv[i], "--runs"))
			v = &c->runs;
		if (!v || i + 1 >= argc) {
			fprintf(stderr, "sdr-rxcopy: unknown or incomplete option '%s'\n",
				argv[i]);
			return -1;
		}
		*v = strtoull(argv[++i], NULL, 0);
		if (!*v) {
			fprintf(stderr, "sdr-rxcopy: %s needs a positive number\n",
				argv[i - 1]);
			return -1;
		}
	}
	if (c->pay > 9000 || c->msg < c->pay || c->depth > 65536) {
		fprintf(stderr, "sdr-rxcopy: --pay at most 9000, --msg at least --pay, --depth at most 65536\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cfg c = { .pay = 4032, .depth = 2048, .msg = 1 << 20,
			 .msgs = 16, .packets = 200000, .runs = 5 };
	uint8_t *ring, *region;
	size_t slot;

	if (parse(argc, argv, &c))
		return 2;
	slot = (GRH_LEN + HDR_LEN + c.pay + 63) & ~(size_t)63;
	ring = aligned_alloc(4096, (c.depth * slot + 4095) & ~(size_t)4095);
	region = aligned_alloc(4096, (c.msg * c.msgs + 4095) & ~(size_t)4095);
	if (!ring || !region) {
		fprintf(stderr, "sdr-rxcopy: out of memory\n");
		return 2;
	}
	memset(ring, 1, c.depth * slot);
	memset(region, 0, c.msg * c.msgs);
	printf("receive copy: %zu-byte payloads, ring of %zu buffers, %zu slots of %zu bytes, %zu packets, best of %zu\n",
	       c.pay, c.depth, c.msgs, c.msg, c.packets, c.runs);
	printf("%-8s %10s %10s %14s %14s\n", "source", "ns/pkt", "GB/s",
	       "cores@100G", "cores@400G");
	for (int m = WRITTEN; m <= HOT; m++) {
		double best = 1e30, pps100, wire;

		for (size_t r = 0; r < c.runs; r++) {
			double ns = one_pass(&c, m, ring, slot, region);

			if (ns < best)
				best = ns;
		}
		/*
		 * Packets per second 100 Gbit/s carries: RoCEv2 framing is
		 * Ethernet 14, IPv4 20, UDP 8, BTH 12, DETH 8, ICRC 4, FCS 4,
		 * preamble and gap 20 bytes around sdr's header and payload.
		 */
		wire = (double)(c.pay + HDR_LEN + 90);
		pps100 = 100e9 / 8 / wire;
		printf("%-8s %10.1f %10.2f %14.2f %14.2f\n", mode_name[m], best,
		       c.pay / best, pps100 * best / 1e9, 4 * pps100 * best / 1e9);
	}
	free(ring);
	free(region);
	return 0;
}
