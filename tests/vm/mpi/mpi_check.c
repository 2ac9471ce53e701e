// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_check: MPI correctness over whatever transport mpirun picked (t_mpi
 * runs it over the sdr libfabric provider).  Every received byte is
 * checked against the pattern its sender wrote; each part prints
 * "ok <name>" or "not ok <name>: why" on rank 0, and the exit status is 0
 * only if every part passed on every rank.
 *
 *   point-to-point   ring exchange, sizes 0 B .. 16 MiB, MPI_Send/Recv,
 *                    Isend/Irecv with tags posted out of order, Ssend,
 *                    MPI_ANY_SOURCE / MPI_ANY_TAG
 *   probe            MPI_Probe + MPI_Get_count for a size the receiver
 *                    does not know, then MPI_Mprobe + MPI_Mrecv
 *   allreduce        MPI_Allreduce(MPI_SUM) of floats, 1 .. 1 Mi elements
 *                    (4 MiB), every element checked (integers: exact)
 *
 * usage: mpi_check [MAX-BYTES]     (default 16 MiB)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks, failed;

/* The byte at @i of the message @src sends with @salt. */
static inline uint8_t pat(int src, uint32_t salt, size_t i)
{
	uint64_t x = ((uint64_t)src << 40) ^ ((uint64_t)salt << 20) ^ i;

	x ^= x >> 17;
	x *= 0xed5ad4bbU;
	x ^= x >> 11;
	return (uint8_t)(x ^ (x >> 29));
}

static void fill(uint8_t *b, size_t n, int src, uint32_t salt)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(src, salt, i);
}

/* The first index where @b differs from what @src sent, or -1. */
static long bad_at(const uint8_t *b, size_t n, int src, uint32_t salt)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(src, salt, i))
			return (long)i;
	return -1;
}

/* Every rank's verdict on a part, reported once by rank 0. */
static void verdict(const char *name, int local_ok, const char *why)
{
	int all_ok = 0;

	MPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_LAND,
		      MPI_COMM_WORLD);
	if (!local_ok)
		fprintf(stderr, "rank %d: %s: %s\n", rank, name, why);
	if (rank == 0) {
		if (all_ok)
			printf("ok %s\n", name);
		else
			printf("not ok %s\n", name);
		fflush(stdout);
	}
	if (!all_ok)
		failed = 1;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "rank %d: out of memory (%zu bytes)\n", rank,
			n);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

/* Each rank sends @n bytes to the next and receives from the previous. */
static void ring(size_t n, uint32_t salt, int ssend)
{
	int to = (rank + 1) % nranks, from = (rank + nranks - 1) % nranks;
	uint8_t *s = xmalloc(n), *r = xmalloc(n);
	char name[96], why[96] = "";
	MPI_Request rq;
	MPI_Status st;
	int ok = 1, cnt;
	long at;

	fill(s, n, rank, salt);
	memset(r, 0, n);
	MPI_Irecv(r, (int)n, MPI_BYTE, from, (int)salt, MPI_COMM_WORLD, &rq);
	if (ssend)
		MPI_Ssend(s, (int)n, MPI_BYTE, to, (int)salt, MPI_COMM_WORLD);
	else
		MPI_Send(s, (int)n, MPI_BYTE, to, (int)salt, MPI_COMM_WORLD);
	MPI_Wait(&rq, &st);
	MPI_Get_count(&st, MPI_BYTE, &cnt);
	if ((size_t)cnt != n || st.MPI_SOURCE != from) {
		ok = 0;
		snprintf(why, sizeof(why), "count %d source %d", cnt,
			 st.MPI_SOURCE);
	} else if ((at = bad_at(r, n, from, salt)) >= 0) {
		ok = 0;
		snprintf(why, sizeof(why), "byte %ld differs", at);
	}
	snprintf(name, sizeof(name), "ring %s %zu bytes",
		 ssend ? "Ssend" : "Send", n);
	verdict(name, ok, why);
	free(s);
	free(r);
}

/*
 * Rank pairs (0,1), (2,3)...: the even one sends @k messages with tags
 * 0..k-1 in order; the odd one posts its receives with tags in reverse
 * (or MPI_ANY_TAG / MPI_ANY_SOURCE), so matching, not arrival, decides.
 */
static void tags(size_t n, int k, int any)
{
	int peer = rank ^ 1, i, ok = 1;
	char name[96], why[96] = "";

	if (peer >= nranks) {
		verdict("tags", 1, "");
		return;
	}
	uint8_t *buf = xmalloc(n * (size_t)k);
	MPI_Request *rq = xmalloc(sizeof(*rq) * (size_t)k);
	MPI_Status *st = xmalloc(sizeof(*st) * (size_t)k);

	if (rank % 2 == 0) {
		for (i = 0; i < k; i++) {
			fill(buf + (size_t)i * n, n, rank, 1000 + (uint32_t)i);
			MPI_Isend(buf + (size_t)i * n, (int)n, MPI_BYTE, peer,
				  i, MPI_COMM_WORLD, &rq[i]);
		}
		MPI_Waitall(k, rq, st);
	} else {
		for (i = 0; i < k; i++) {
			int tag = any ? MPI_ANY_TAG : k - 1 - i;
			int src = any ? MPI_ANY_SOURCE : peer;

			MPI_Irecv(buf + (size_t)i * n, (int)n, MPI_BYTE, src,
				  tag, MPI_COMM_WORLD, &rq[i]);
		}
		MPI_Waitall(k, rq, st);
		for (i = 0; i < k && ok; i++) {
			/* with ANY_TAG the i-th receive takes the i-th send */
			int tag = any ? i : k - 1 - i;
			int cnt;

			MPI_Get_count(&st[i], MPI_BYTE, &cnt);
			if (st[i].MPI_TAG != tag || st[i].MPI_SOURCE != peer ||
			    (size_t)cnt != n) {
				ok = 0;
				snprintf(why, sizeof(why),
					 "receive %d: tag %d source %d count %d",
					 i, st[i].MPI_TAG, st[i].MPI_SOURCE, cnt);
			} else if (bad_at(buf + (size_t)i * n, n, peer,
					  1000 + (uint32_t)tag) >= 0) {
				ok = 0;
				snprintf(why, sizeof(why),
					 "receive %d: data differs", i);
			}
		}
	}
	snprintf(name, sizeof(name), "%d tagged messages of %zu bytes, %s", k,
		 n, any ? "ANY_SOURCE/ANY_TAG" : "receives in reverse tag order");
	verdict(name, ok, why);
	free(buf);
	free(rq);
	free(st);
}

/* The odd rank of each pair learns the size by probing. */
static void probe(size_t n, int mprobe)
{
	int peer = rank ^ 1, ok = 1, cnt = -1;
	char name[96], why[96] = "";
	MPI_Status st;

	if (peer < nranks && rank % 2 == 0) {
		uint8_t *s = xmalloc(n);

		fill(s, n, rank, 77);
		MPI_Send(s, (int)n, MPI_BYTE, peer, 77, MPI_COMM_WORLD);
		free(s);
	} else if (peer < nranks) {
		uint8_t *r;
		MPI_Message msg;

		if (mprobe)
			MPI_Mprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &msg,
				   &st);
		else
			MPI_Probe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		if (cnt < 0 || (size_t)cnt != n || st.MPI_SOURCE != peer) {
			ok = 0;
			snprintf(why, sizeof(why), "probe: count %d source %d",
				 cnt, st.MPI_SOURCE);
			cnt = (int)n;
		}
		r = xmalloc((size_t)cnt);
		if (mprobe)
			MPI_Mrecv(r, cnt, MPI_BYTE, &msg, &st);
		else
			MPI_Recv(r, cnt, MPI_BYTE, st.MPI_SOURCE, 77,
				 MPI_COMM_WORLD, &st);
		if (ok && bad_at(r, n, peer, 77) >= 0) {
			ok = 0;
			snprintf(why, sizeof(why), "data differs");
		}
		free(r);
	}
	snprintf(name, sizeof(name), "%s of %zu bytes",
		 mprobe ? "MPI_Mprobe + MPI_Mrecv" : "MPI_Probe + MPI_Recv", n);
	verdict(name, ok, why);
}

/* Element i of rank r's vector: small integers, so every sum is exact. */
static float elem(int r, size_t i)
{
	return (float)((int)((i * 7 + (size_t)r * 13) % 1001) - 500);
}

static void allreduce(size_t count)
{
	float *in = xmalloc(count * sizeof(float));
	float *out = xmalloc(count * sizeof(float));
	char name[96], why[96] = "";
	int ok = 1;

	for (size_t i = 0; i < count; i++) {
		in[i] = elem(rank, i);
		out[i] = -1e30f;
	}
	MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	for (size_t i = 0; i < count && ok; i++) {
		float want = 0;

		for (int r = 0; r < nranks; r++)
			want += elem(r, i);
		if (out[i] != want) {
			ok = 0;
			snprintf(why, sizeof(why), "element %zu: %g, want %g",
				 i, out[i], want);
		}
	}
	snprintf(name, sizeof(name), "MPI_Allreduce of %zu floats", count);
	verdict(name, ok, why);
	free(in);
	free(out);
}

int main(int argc, char **argv)
{
	size_t max = 16u << 20, n;
	uint32_t salt = 1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc > 1)
		max = strtoul(argv[1], NULL, 0);
	if (rank == 0) {
		printf("# %d ranks, messages up to %zu bytes\n", nranks, max);
		fflush(stdout);
	}

	ring(0, salt++, 0);
	for (n = 1; n <= max; n *= 8)
		ring(n, salt++, 0);
	ring(max, salt++, 0);
	ring(4096, salt++, 1);
	ring(max / 4, salt++, 1);
	tags(1000, 32, 0);
	tags(100000, 8, 0);
	tags(512, 16, 1);
	probe(3000, 0);
	probe(max / 2 + 5, 0);
	probe(70000, 1);
	allreduce(1);
	allreduce(1000);
	allreduce(1u << 20);

	MPI_Finalize();
	if (rank == 0)
		printf("# %s\n", failed ? "FAILED" : "all passed");
	return failed;
}
