// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_bench: a small MPI benchmark for tools/bench-mpi, transport-neutral
 * (mpirun picks it: sdr through the libfabric provider, or Open MPI's
 * TCP BTL).  Ranks 0 and 1 measure, for each message size:
 *
 *   latency     half the round trip of an MPI_Send/MPI_Recv ping-pong
 *   bandwidth   about 16 MiB in MPI_Isend windows of up to 8 messages
 *               from 0 to 1, acknowledged per window; received bytes
 *               over the time (MB/s), the last window's bytes checked
 *   allreduce   the mean time of MPI_Allreduce(MPI_SUM) over all ranks of
 *               the size in floats, every result element checked
 *
 * Prints, on rank 0, one line per size:
 *   MPIB <bytes> <latency us> <bandwidth MB/s> <allreduce ms>
 * and exits non-zero if any check failed.
 *
 * usage: mpi_bench [BYTES...]   (default 8 B, 64 B ... 256 KiB, 1, 4, 16 MiB)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW	8

static int rank, nranks, bad;

static uint8_t pat(size_t i, uint32_t salt)
{
	uint32_t x = (uint32_t)i * 2654435761U ^ salt * 40503U;

	return (uint8_t)(x ^ (x >> 13) ^ (x >> 24));
}

static size_t clamp(size_t v, size_t lo, size_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Warm-up rounds below 1 MiB only: above, one round costs seconds. */
static int first_round(size_t n)
{
	return n < (1u << 20) ? -1 : 0;
}

static double latency_us(uint8_t *buf, size_t n)
{
	int iters = (int)clamp((1u << 20) / (n ? n : 1), 1, 50), i;
	double t0 = 0;

	for (i = first_round(n); i < iters; i++) {
		if (i == 0)
			t0 = MPI_Wtime();
		if (rank == 0) {
			MPI_Send(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) * 1e6 / iters / 2;
}

/* About 16 MiB a size: windows of up to WINDOW messages. */
static double bandwidth_MBps(uint8_t *buf, size_t n)
{
	int wn = (int)clamp((16u << 20) / n, 1, WINDOW);
	int windows = (int)clamp((16u << 20) / (n * (size_t)wn), 1, 100);
	MPI_Request rq[WINDOW];
	uint32_t salt = (uint32_t)n;
	double t0 = 0, t;
	int w, i;

	for (w = first_round(n); w < windows; w++) {
		if (w == 0)
			t0 = MPI_Wtime();
		if (rank == 0) {
			if (w == windows - 1)
				for (i = 0; i < wn; i++)
					for (size_t j = 0; j < n; j++)
						buf[(size_t)i * n + j] =
							pat(j, salt + (uint32_t)i);
			for (i = 0; i < wn; i++)
				MPI_Isend(buf + (size_t)i * n, (int)n, MPI_BYTE,
					  1, 2, MPI_COMM_WORLD, &rq[i]);
			MPI_Waitall(wn, rq, MPI_STATUSES_IGNORE);
			MPI_Recv(NULL, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			if (w == windows - 1)
				memset(buf, 0, n * (size_t)wn);
			for (i = 0; i < wn; i++)
				MPI_Irecv(buf + (size_t)i * n, (int)n, MPI_BYTE,
					  0, 2, MPI_COMM_WORLD, &rq[i]);
			MPI_Waitall(wn, rq, MPI_STATUSES_IGNORE);
			MPI_Send(NULL, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
		}
	}
	t = MPI_Wtime() - t0;
	if (rank == 1)
		for (i = 0; i < wn; i++)
			for (size_t j = 0; j < n; j++)
				if (buf[(size_t)i * n + j] !=
				    pat(j, salt + (uint32_t)i)) {
					fprintf(stderr,
						"rank 1: %zu bytes: message %d byte %zu differs\n",
						n, i, j);
					bad = 1;
					i = wn;
					break;
				}
	return (double)n * wn * windows / t / 1e6;
}

static float elem(int r, size_t i)
{
	return (float)((int)((i * 5 + (size_t)r * 7) % 999) - 499);
}

static double allreduce_ms(size_t n)
{
	size_t count = n / sizeof(float) ? n / sizeof(float) : 1;
	float *in = malloc(count * sizeof(float));
	float *out = malloc(count * sizeof(float));
	int iters = (int)clamp((4u << 20) / n, 3, 20), i;
	double t0 = 0, t;

	if (!in || !out) {
		fprintf(stderr, "rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (size_t j = 0; j < count; j++)
		in[j] = elem(rank, j);
	for (i = first_round(n); i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		memset(out, 0, count * sizeof(float));
		MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM,
			      MPI_COMM_WORLD);
	}
	t = MPI_Wtime() - t0;
	for (size_t j = 0; j < count; j++) {
		float want = 0;

		for (int r = 0; r < nranks; r++)
			want += elem(r, j);
		if (out[j] != want) {
			fprintf(stderr, "rank %d: allreduce of %zu bytes: element %zu is %g, not %g\n",
				rank, n, j, out[j], want);
			bad = 1;
			break;
		}
	}
	free(in);
	free(out);
	return t * 1e3 / iters;
}

int main(int argc, char **argv)
{
	static const size_t def[] = { 8, 64, 512, 4096, 32768, 262144,
				      1u << 20, 4u << 20, 16u << 20 };
	size_t sizes[64], nsizes = 0, max = 0, i;
	uint8_t *buf;
	int all_bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (i = 1; i < (size_t)argc && nsizes < 64; i++) {
		char *end;

		sizes[nsizes] = strtoul(argv[i], &end, 0);
		if (*end || !sizes[nsizes] || sizes[nsizes] > (1u << 30)) {
			nsizes = 0;
			break;
		}
		nsizes++;
	}
	if (argc == 1)
		for (nsizes = 0; nsizes < sizeof(def) / sizeof(def[0]); nsizes++)
			sizes[nsizes] = def[nsizes];
	if (nranks < 2 || !nsizes || (size_t)argc > 65) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np N (N >= 2) mpi_bench [BYTES...]\n");
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < nsizes; i++)
		max = sizes[i] > max ? sizes[i] : max;
	buf = malloc(max * WINDOW);
	if (!buf) {
		fprintf(stderr, "rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	memset(buf, 0, max * WINDOW);
	if (rank == 0) {
		printf("# %d ranks; bytes, latency (us), bandwidth (MB/s), allreduce (ms)\n",
		       nranks);
		fflush(stdout);
	}
	for (i = 0; i < nsizes; i++) {
		size_t n = sizes[i];
		double lat = latency_us(buf, n);
		double bw = bandwidth_MBps(buf, n);
		double ar = allreduce_ms(n);

		if (rank == 0) {
			printf("MPIB %zu %.1f %.3f %.3f\n", n, lat, bw, ar);
			fflush(stdout);
		}
	}
	MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0 && all_bad)
		printf("# FAILED: a check failed\n");
	free(buf);
	MPI_Finalize();
	return all_bad;
}
