/* SPDX-License-Identifier: GPL-2.0 */
/* The fuzz targets read their scripts through this: bytes, big-endian. */
#ifndef SDR_FUZZ_INPUT_H
#define SDR_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct in {
	const uint8_t *p;
	size_t n;
};

/* The next @bytes (up to 8) of the input; missing bytes read as 0. */
static inline uint64_t take(struct in *in, int bytes)
{
	uint64_t v = 0;

	while (bytes--) {
		v <<= 8;
		if (in->n) {
			v |= *in->p++;
			in->n--;
		}
	}
	return v;
}

#endif /* SDR_FUZZ_INPUT_H */
