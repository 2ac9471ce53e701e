// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the wire parsers: sdr_wire_decode() and
 * sdr_ack_decode().  Invariants: no crash or sanitizer report on any
 * input; an accepted header re-encodes to the same 80 bytes; an accepted
 * unauthenticated ACK body re-encodes to the same bytes; geometry checks never crash on an
 * accepted DATA packet.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "sdr_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	u8 hdr[SDR_WIRE_HDR_LEN], body[SDR_ACK_MAX_LEN];
	struct sdr_pkt pkt;
	struct sdr_ack ack;
	u32 len = size > U32_MAX ? U32_MAX : (u32)size;

	/* copy so ASan catches any read past the end */
	u8 *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);

	if (!sdr_wire_decode(buf, len, &pkt)) {
		sdr_wire_encode(&pkt, hdr);
		if (memcmp(hdr, buf, SDR_WIRE_HDR_LEN))
			abort();
		if (pkt.type == SDR_PKT_DATA) {
			(void)sdr_wire_check_geometry(&pkt, 4096, U32_MAX);
			(void)sdr_wire_check_geometry(&pkt, 1 + (pkt.imm & 0xffff),
						      pkt.aux);
		}
		/* an authenticated body is parsed after the tag, not here */
		if ((pkt.type == SDR_PKT_ACK || pkt.type == SDR_PKT_NACK) &&
		    !pkt.pn) {
			const u8 *b = buf + SDR_WIRE_HDR_LEN;

			if (sdr_ack_decode(b, pkt.payload_len, &ack))
				abort();
			if (sdr_ack_encode(&ack, body) != pkt.payload_len ||
			    memcmp(body, b, pkt.payload_len))
				abort();
		}
	}
	/* the ACK parser on its own, at every length */
	if (!sdr_ack_decode(buf, len, &ack)) {
		if (sdr_ack_encode(&ack, body) != len || memcmp(body, buf, len))
			abort();
	}
	(void)sdr_drop_reason_name(-sdr_wire_decode(buf, len, &pkt));
	free(buf);
	return 0;
}
