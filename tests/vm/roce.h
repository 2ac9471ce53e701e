/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw RoCEv2 frames for the hostile VM tools (rogue.c, sniff.c): the
 * layout of a UD SEND_ONLY frame as rxe sends it over IPv4, byte order
 * helpers, the IPv4 checksum and the ICRC as
 * drivers/infiniband/sw/rxe/rxe_icrc.c computes it.
 */
#ifndef SDR_TEST_ROCE_H
#define SDR_TEST_ROCE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ROCE_PORT		4791
#define OP_UD_SEND_ONLY		0x64
#define ETH_LEN			14
#define IP4_LEN			20
#define UDP_LEN			8
#define BTH_LEN			12
#define DETH_LEN		8
#define ICRC_LEN		4
/* where the UD payload (an sdr packet, a MAD) starts in the frame */
#define SDR_OFF			(ETH_LEN + IP4_LEN + UDP_LEN + BTH_LEN + DETH_LEN)
#define MAX_SDR_LEN		4096	/* what an sdr receive buffer holds */
#define MAX_FRAME		(SDR_OFF + MAX_SDR_LEN + 3 + ICRC_LEN)

/* A captured frame and the length of the UD payload at SDR_OFF. */
struct frame {
	uint16_t len;
	uint16_t sdr_len;
	uint8_t b[MAX_FRAME];
};

static uint32_t crc_table[256];

static inline void crc_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320U : c >> 1;
		crc_table[i] = c;
	}
}

/* crc32_le() of the kernel: reflected, no pre- or post-inversion. */
static inline uint32_t crc32_le(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

/*
 * @ip: the IPv4 header (20 bytes, no options), then UDP, BTH, DETH,
 * payload and pad: @len bytes.  rxe seeds with the CRC of 8 bytes of 0xff
 * (a masked LRH), masks the variant fields of a copy of IPv4+UDP+BTH to
 * ones (tos, ttl, IP checksum, UDP checksum, BTH resv8a), runs crc32_le
 * over that and the rest, and stores the complement in CPU order (little
 * endian on every machine rxe runs here).
 */
static inline uint32_t roce_icrc(const uint8_t *ip, size_t len)
{
	uint8_t ph[IP4_LEN + UDP_LEN + BTH_LEN];
	uint32_t crc = 0xdebb20e3U;

	memcpy(ph, ip, sizeof(ph));
	ph[1] = 0xff;				/* tos */
	ph[8] = 0xff;				/* ttl */
	ph[10] = ph[11] = 0xff;			/* IP checksum */
	ph[IP4_LEN + 6] = ph[IP4_LEN + 7] = 0xff;	/* UDP checksum */
	ph[IP4_LEN + UDP_LEN + 4] = 0xff;	/* BTH resv8a */
	crc = crc32_le(crc, ph, sizeof(ph));
	crc = crc32_le(crc, ip + sizeof(ph), len - sizeof(ph));
	return ~crc;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint16_t ip_csum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

#endif /* SDR_TEST_ROCE_H */
