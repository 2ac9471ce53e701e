// SPDX-License-Identifier: GPL-2.0
/*
 * sdr-codec: sdr's erasure codec against ISA-L, on the same buffers.
 *
 * For each geometry (k, m) it encodes a submessage of k packets into m
 * parity packets with every implementation of sdr_ec (sdr_ec_set_impl)
 * and with ISA-L's ec_encode_data() given sdr's own Cauchy coefficients,
 * checks the parity is byte-identical, then times both: encode, and decode
 * of m lost data packets (sdr_ec_decode against ISA-L's ec_encode_data()
 * with the decode matrix it inverts by gf_invert_matrix(), as ISA-L's own
 * example does).  sdr's decode is timed with all it does per loss
 * pattern (its e x e inversion, its tables, the pass over the data);
 * ISA-L's twice: its pass over the data alone, the ratio's reference,
 * and with its k x k inversion and tables ("+prep").  MB/s counts data bytes in (k packets per submessage),
 * one core, best of several runs.
 *
 * usage: sdr-codec [--geometries "K,M K,M ..."] [--pay BYTES] [--ms N] [--json]
 * Exit status: 0 everything identical, 1 a mismatch, 2 usage or setup error.
 */
#include <isa-l/erasure_code.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdr_ec.h"

#define MAXK	SDR_EC_MAX_K
#define MAXM	SDR_EC_MAX_M

struct geo {
	unsigned int k, m;
};

static const struct geo default_geos[] = {
	{ 10, 4 }, { 16, 4 }, { 32, 8 }, { 64, 8 },
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* a few buffer sets, so one pass does not run only in L1 */
#define SETS	8

struct bufs {
	unsigned int k, m, pay;
	u8 *data[SETS][MAXK];
	u8 *par[SETS][MAXM];		/* sdr's parity */
	u8 *ipar[SETS][MAXM];		/* ISA-L's */
	u8 *rec[MAXM];			/* decode outputs */
	u32 len[MAXK];
	u8 coef[MAXM * MAXK];		/* (m x k), ISA-L's layout */
	u8 tbls[32 * MAXM * MAXK];
};

static u8 *xalloc(size_t n)
{
	u8 *p = aligned_alloc(64, (n + 63) & ~(size_t)63);

	if (!p) {
		perror("sdr-codec: aligned_alloc");
		exit(2);
	}
	return p;
}

static void setup(struct bufs *b, unsigned int k, unsigned int m,
		  unsigned int pay)
{
	unsigned int s, i, j;

	memset(b, 0, sizeof(*b));
	b->k = k;
	b->m = m;
	b->pay = pay;
	srand(k * 131 + m);
	for (s = 0; s < SETS; s++) {
		for (i = 0; i < k; i++) {
			b->data[s][i] = xalloc(pay);
			for (j = 0; j < pay; j++)
				b->data[s][i][j] = (u8)rand();
		}
		for (j = 0; j < m; j++) {
			b->par[s][j] = xalloc(pay);
			b->ipar[s][j] = xalloc(pay);
		}
	}
	for (j = 0; j < m; j++) {
		b->rec[j] = xalloc(pay);
	}
	for (i = 0; i < k; i++)
		b->len[i] = pay;
	for (j = 0; j < m; j++)
		for (i = 0; i < k; i++)
			b->coef[j * k + i] = sdr_ec_coef(j, i);
	ec_init_tables((int)k, (int)m, b->coef, b->tbls);
}

static void teardown(struct bufs *b)
{
	unsigned int s, i;

	for (s = 0; s < SETS; s++) {
		for (i = 0; i < b->k; i++)
			free(b->data[s][i]);
		for (i = 0; i < b->m; i++) {
			free(b->par[s][i]);
			free(b->ipar[s][i]);
		}
	}
	for (i = 0; i < b->m; i++) {
		free(b->rec[i]);
	}
}

static void sdr_enc(struct bufs *b, unsigned int s)
{
	if (sdr_ec_encode_rows(b->k, 0, b->m, (const u8 *const *)b->data[s],
			       b->len, b->pay, b->par[s])) {
		fprintf(stderr, "sdr-codec: sdr_ec_encode_rows refused (%u,%u)\n",
			b->k, b->m);
		exit(2);
	}
}

static void isal_enc(struct bufs *b, unsigned int s)
{
	ec_encode_data((int)b->pay, (int)b->k, (int)b->m, b->tbls,
		       b->data[s], b->ipar[s]);
}

/*
 * The first m data packets are lost; they come back in rec[].
 */
static int sdr_dec(struct bufs *b, unsigned int s)
{
	u8 *data[MAXK], *par[MAXM];
	unsigned int i;
	u64 have = (b->k == 64 ? ~0ULL : (1ULL << b->k) - 1) &
		   ~((1ULL << b->m) - 1);

	for (i = 0; i < b->k; i++)
		data[i] = i < b->m ? b->rec[i] : b->data[s][i];
	for (i = 0; i < b->m; i++)
		par[i] = b->par[s][i];
	return sdr_ec_decode(b->k, b->m, have, data, par, b->pay);
}

/* ISA-L: decode matrix = rows of inv(B) for the lost packets, B the k x k
 * matrix of the k packets that survive (data m..k-1, parity 0..m-1) */
struct idec {
	u8 tbls[32 * MAXM * MAXK];
	u8 *src[MAXK];
};

static int isal_dec_prepare(struct bufs *b, struct idec *d, unsigned int s)
{
	unsigned int k = b->k, m = b->m, r, i, n = 0;
	u8 full[(MAXK + MAXM) * MAXK], bm[MAXK * MAXK], inv[MAXK * MAXK];
	u8 dm[MAXM * MAXK];

	/* the whole encode matrix: identity over parity rows */
	memset(full, 0, sizeof(full));
	for (i = 0; i < k; i++)
		full[i * k + i] = 1;
	memcpy(full + k * k, b->coef, (size_t)m * k);
	for (r = m; r < k + m; r++) {	/* surviving rows: data m.., parity */
		memcpy(bm + n * k, full + r * k, k);
		d->src[n++] = r < k ? b->data[s][r] : b->ipar[s][r - k];
	}
	if (gf_invert_matrix(bm, inv, (int)k))
		return -1;
	for (r = 0; r < m; r++)		/* lost data packet r = row r of inv */
		memcpy(dm + r * k, inv + r * k, k);
	ec_init_tables((int)k, (int)m, dm, d->tbls);
	return 0;
}

static double best_rate(void (*fn)(struct bufs *, unsigned int), struct bufs *b,
			double ms)
{
	double best = 0, t0, t, bytes = (double)b->k * b->pay;
	unsigned int round, n, s;

	for (round = 0; round < 5; round++) {
		n = 0;
		t0 = now_s();
		do {
			for (s = 0; s < SETS; s++)
				fn(b, s);
			n += SETS;
			t = now_s() - t0;
		} while (t < ms / 1e3);
		if (n * bytes / t > best)
			best = n * bytes / t;
	}
	return best / 1e6;
}

static struct idec g_idec[SETS];

static void sdr_dec_fn(struct bufs *b, unsigned int s)
{
	if (sdr_dec(b, s) != (int)b->m) {
		fprintf(stderr, "sdr-codec: sdr_ec_decode failed\n");
		exit(2);
	}
}

/* ISA-L's pass over the data, its decode tables made beforehand */
static void isal_dec_fn(struct bufs *b, unsigned int s)
{
	ec_encode_data((int)b->pay, (int)b->k, (int)b->m, g_idec[s].tbls,
		       g_idec[s].src, b->rec);
}

/* what a decoder does per loss pattern: the matrix, then the data */
static void isal_dec_prep_fn(struct bufs *b, unsigned int s)
{
	if (isal_dec_prepare(b, &g_idec[s], s)) {
		fprintf(stderr, "sdr-codec: gf_invert_matrix failed\n");
		exit(2);
	}
	isal_dec_fn(b, s);
}

int main(int argc, char **argv)
{
	struct geo geos[32];
	unsigned int ngeo = 0, pay = 4056, g, s, i;
	const char *impls[] = { "gfni", "avx2", "scalar" };
	double ms = 200;
	int json = 0, bad = 0;
	static struct bufs b;

	for (i = 1; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "--geometries") && i + 1 < (unsigned int)argc) {
			char *p = argv[++i];
			unsigned int k, m;
			int used;

			while (ngeo < 32 && sscanf(p, " %u,%u%n", &k, &m, &used) == 2) {
				if (!sdr_ec_geometry_ok(k, m) || m > k) {
					fprintf(stderr, "sdr-codec: bad geometry %u,%u\n", k, m);
					return 2;
				}
				geos[ngeo].k = k;
				geos[ngeo++].m = m;
				p += used;
			}
		} else if (!strcmp(argv[i], "--pay") && i + 1 < (unsigned int)argc) {
			pay = (unsigned int)strtoul(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--ms") && i + 1 < (unsigned int)argc) {
			ms = strtod(argv[++i], NULL);
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else {
			fprintf(stderr, "usage: sdr-codec [--geometries \"K,M ...\"] [--pay BYTES] [--ms N] [--json]\n");
			return 2;
		}
	}
	if (!pay || pay > 65536) {
		fprintf(stderr, "sdr-codec: --pay 1..65536\n");
		return 2;
	}
	if (!ngeo) {
		memcpy(geos, default_geos, sizeof(default_geos));
		ngeo = sizeof(default_geos) / sizeof(default_geos[0]);
	}
	sdr_ec_init();
	if (!json)
		printf("%-8s %-7s %9s %9s %6s %9s %9s %6s %10s  %s\n", "k,m",
		       "impl", "enc MB/s", "isal", "ratio", "dec MB/s", "isal",
		       "ratio", "isal+prep", "output");
	for (g = 0; g < ngeo; g++) {
		double ienc, idec, iprep;

		setup(&b, geos[g].k, geos[g].m, pay);
		for (s = 0; s < SETS; s++) {
			isal_enc(&b, s);
			if (isal_dec_prepare(&b, &g_idec[s], s)) {
				fprintf(stderr, "sdr-codec: gf_invert_matrix failed\n");
				return 2;
			}
		}
		ienc = best_rate(isal_enc, &b, ms);
		idec = best_rate(isal_dec_fn, &b, ms);
		iprep = best_rate(isal_dec_prep_fn, &b, ms);
		for (i = 0; i < sizeof(impls) / sizeof(impls[0]); i++) {
			double enc, dec;
			int same = 1;

			if (sdr_ec_set_impl(impls[i]))
				continue;
			for (s = 0; s < SETS; s++) {
				sdr_enc(&b, s);
				for (unsigned int j = 0; j < b.m; j++)
					same &= !memcmp(b.par[s][j], b.ipar[s][j], pay);
				sdr_dec_fn(&b, s);
				for (unsigned int j = 0; j < b.m; j++)
					same &= !memcmp(b.rec[j], b.data[s][j], pay);
			}
			enc = best_rate(sdr_enc, &b, ms);
			dec = best_rate(sdr_dec_fn, &b, ms);
			bad |= !same;
			if (json)
				printf("{\"k\":%u,\"m\":%u,\"pay\":%u,\"impl\":\"%s\",\"encode_mbps\":%.0f,\"isal_encode_mbps\":%.0f,\"encode_ratio\":%.3f,\"decode_mbps\":%.0f,\"isal_decode_mbps\":%.0f,\"decode_ratio\":%.3f,\"isal_decode_prep_mbps\":%.0f,\"identical\":%s}\n",
				       b.k, b.m, pay, impls[i], enc, ienc, enc / ienc, dec,
				       idec, dec / idec, iprep, same ? "true" : "false");
			else
				printf("%3u,%-4u %-7s %9.0f %9.0f %6.3f %9.0f %9.0f %6.3f %10.0f  %s\n",
				       b.k, b.m, impls[i], enc, ienc, enc / ienc, dec, idec,
				       dec / idec, iprep, same ? "identical" : "DIFFERENT");
		}
		teardown(&b);
	}
	return bad;
}
