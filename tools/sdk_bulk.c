// SPDX-License-Identifier: GPL-2.0
/*
 * sdk_bulk: a bulk-write benchmark written against the SDR SDK's header
 * only (<sdr.h>, <sdr_mr.h>; no sdr-specific line), as an SDK user writes
 * one: a window of large messages into registered memory, 64 KiB chunks,
 * each message done when every bit of its bitmap is set, every byte
 * checked.  The QP information goes over a TCP connection of its own.
 *
 *   sdk_bulk -d DEV [-p PORT]                       receiver (listens)
 *   sdk_bulk -d DEV [-p PORT] [-n MSGS] [-s SIZE] [-w WINDOW] [-c LOG]
 *            [-r MBIT] HOST                         sender
 *
 * Both print one line "sdk_bulk: N messages of S bytes in T s: G MB/s,
 * E verify errors" (the receiver's G is the goodput: message bytes over
 * the time from the first post to the last message verified) and exit 0
 * only if every message arrived whole and right.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sdr.h>
#include <sdr_mr.h>

struct opts {
	const char *dev, *host;
	int port;
	uint32_t msgs, size, window, chunk_log, rate;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The byte at @off of message @i: both ends compute it. */
static uint8_t pattern(uint32_t i, uint64_t off)
{
	uint64_t x = (off / 8) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)i << 40;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	return (uint8_t)(x >> (8 * (off % 8)));
}

static int full_io(int fd, void *buf, size_t len, int rd)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = rd ? read(fd, p, len) : write(fd, p, len);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One TCP connection: the receiver listens, the sender connects (retrying). */
static int tcp_connect(const struct opts *o)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd, s, one = 1, tries;

	a.sin_port = htons((uint16_t)o->port);
	if (!o->host) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0)
			return -1;
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		a.sin_addr.s_addr = htonl(INADDR_ANY);
		if (bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 1)) {
			close(s);
			return -1;
		}
		fd = accept(s, NULL, NULL);
		close(s);
		return fd;
	}
	if (inet_pton(AF_INET, o->host, &a.sin_addr) != 1)
		return -1;
	for (tries = 0; tries < 300; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			return fd;
		close(fd);
		usleep(100000);
	}
	return -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: sdk_bulk -d DEV [-p PORT] [-n MSGS] [-s SIZE] "
		"[-w WINDOW] [-c CHUNK_LOG] [-r MBIT] [HOST]\n");
	return 2;
}

static int receiver(const struct opts *o, struct sdr_qp *qp, uint8_t *buf,
		    uint32_t lkey, int sock)
{
	struct sdr_recv_handle **h = calloc(o->window, sizeof(*h));
	uint32_t posted = 0, done = 0, errors = 0, chunks, imm;
	uint64_t chunk = 1ULL << o->chunk_log, off;
	double t0 = 0, t1;
	uint8_t *bits, go = 1;
	size_t nbytes, b;
	int ret;

	if (!h)
		return 1;
	chunks = (uint32_t)((o->size + chunk - 1) / chunk);
	t0 = now_s();
	while (done < o->msgs) {
		while (posted < o->msgs && posted - done < o->window) {
			struct sdr_recv_wr wr = {
				.max_length = o->size, .lkey = lkey,
				.address = (uintptr_t)(buf + (uint64_t)(posted %
					o->window) * o->size),
			};

			ret = sdr_recv_post(qp, &wr, &h[posted % o->window]);
			if (ret == SDR_RETRY)
				break;
			if (ret != SDR_SUCCESS) {
				perror("sdr_recv_post");
				return 1;
			}
			/* the window is posted: the sender may go */
			if (++posted == (o->msgs < o->window ? o->msgs :
							       o->window) &&
			    full_io(sock, &go, 1, 0)) {
				perror("tcp");
				return 1;
			}
		}
		/* the oldest message: done when every chunk's bit is set */
		ret = sdr_recv_bitmap_get(h[done % o->window], &bits, &nbytes);
		if (ret != SDR_SUCCESS) {
			perror("sdr_recv_bitmap_get");
			return 1;
		}
		for (b = 0; b < chunks; b++)
			if (!(__atomic_load_n(&bits[b / 8], __ATOMIC_ACQUIRE) &
			      (1U << (b % 8))))
				break;
		if (b < chunks) {
			usleep(20);	/* leave the CPU to the kernel's receive */
			continue;
		}
		ret = sdr_recv_imm_get(h[done % o->window], &imm);
		if (ret != SDR_SUCCESS || imm != done) {
			fprintf(stderr, "message %u: immediate %u (%d)\n",
				done, imm, ret);
			errors++;
		}
		for (off = 0; off < o->size; off++)
			if (buf[(uint64_t)(done % o->window) * o->size + off] !=
			    pattern(done, off)) {
				if (!errors)
					fprintf(stderr, "message %u: byte %llu "
						"wrong\n", done,
						(unsigned long long)off);
				errors++;
				break;
			}
		if (sdr_recv_complete(h[done % o->window]) != SDR_SUCCESS) {
			perror("sdr_recv_complete");
			return 1;
		}
		done++;
	}
	t1 = now_s();
	printf("sdk_bulk: %u messages of %u bytes in %.3f s: %.2f MB/s, "
	       "%u verify errors\n", o->msgs, o->size, t1 - t0,
	       (double)o->msgs * o->size / (t1 - t0) / 1e6, errors);
	free(h);
	return errors ? 1 : 0;
}

static int sender(const struct opts *o, struct sdr_qp *qp, uint8_t *buf,
		  uint32_t lkey, int sock)
{
	struct sdr_send_handle **h = calloc(o->window, sizeof(*h));
	uint32_t posted = 0, done = 0, failed = 0;
	struct sdr_send_status st;
	double t0, t1;
	uint64_t off;
	uint8_t go;
	int ret, fin;

	if (!h || full_io(sock, &go, 1, 1)) {	/* receives are posted */
		perror("tcp");
		return 1;
	}
	t0 = now_s();
	while (done < o->msgs) {
		while (posted < o->msgs && posted - done < o->window) {
			uint8_t *p = buf + (uint64_t)(posted % o->window) *
					   o->size;
			struct sdr_send_wr wr = {
				.opcode = SDR_WR_WRITE_WITH_IMM,
				.imm_value = posted, .length = o->size,
				.lkey = lkey, .local_addr = (uintptr_t)p,
				.remote_offset = 0,
			};

			for (off = 0; off < o->size; off++)
				p[off] = pattern(posted, off);
			ret = sdr_send_post(qp, &wr, &h[posted % o->window]);
			if (ret == SDR_RETRY)
				break;
			if (ret != SDR_SUCCESS) {
				perror("sdr_send_post");
				return 1;
			}
			posted++;
		}
		ret = sdr_send_poll(h[done % o->window], &fin, &st);
		if (ret == SDR_RETRY) {
			usleep(20);
			continue;
		}
		if (ret != SDR_SUCCESS)
			failed++;
		done++;
	}
	t1 = now_s();
	printf("sdk_bulk: %u messages of %u bytes in %.3f s: %.2f MB/s, "
	       "%u failed\n", o->msgs, o->size, t1 - t0,
	       (double)o->msgs * o->size / (t1 - t0) / 1e6, failed);
	free(h);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .port = 18600, .msgs = 64, .size = 1 << 20,
			  .window = 8, .chunk_log = 16 };
	struct sdr_dev_attr da = { .num_channels = 1, .log_max_qps = 2 };
	struct sdr_qp_attr qa = { 0 };
	struct sdr_context *ctx;
	struct sdr_qp *qp;
	struct sdr_mr *mr;
	void *mine, *theirs;
	size_t isz;
	uint32_t lkey;
	uint8_t *buf;
	int c, sock, rc;

	while ((c = getopt(argc, argv, "d:p:n:s:w:c:r:")) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'p': o.port = atoi(optarg); break;
		case 'n': o.msgs = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's': o.size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'w': o.window = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'c': o.chunk_log = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'r': o.rate = (uint32_t)strtoul(optarg, NULL, 0); break;
		default: return usage();
		}
	}
	if (optind < argc)
		o.host = argv[optind];
	if (!o.dev || !o.msgs || !o.size || !o.window || o.window > 64)
		return usage();

	ctx = sdr_context_create(o.dev, &da);
	if (!ctx) {
		perror("sdr_context_create");
		return 1;
	}
	qa.bitmap_chunk_size_log_bytes = o.chunk_log;
	for (qa.max_in_flight_log_bytes = 12;
	     (1ULL << qa.max_in_flight_log_bytes) < o.size;
	     qa.max_in_flight_log_bytes++)
		;
	for (qa.max_log_num_msgs = 0; (1U << qa.max_log_num_msgs) < o.window;
	     qa.max_log_num_msgs++)
		;
	qa.mtu = SDR_MTU_4096;
	qa.send_enable = 1;
	qa.recv_enable = 1;
	qa.rate_limit = o.rate;
	qp = sdr_qp_create(ctx, &qa);
	if (!qp) {
		perror("sdr_qp_create");
		return 1;
	}
	buf = aligned_alloc(4096, ((uint64_t)o.window * o.size + 4095) &
				  ~4095ULL);
	if (!buf)
		return 1;
	memset(buf, 0, (uint64_t)o.window * o.size);
	mr = sdr_mr_reg(ctx, buf, (uint64_t)o.window * o.size,
			SDR_ACCESS_REMOTE_WRITE);
	if (!mr || sdr_mr_lkey_get(mr, &lkey) != SDR_SUCCESS) {
		perror("sdr_mr_reg");
		return 1;
	}
	if (sdr_qp_info_size_get(qp, &isz) != SDR_SUCCESS)
		return 1;
	mine = malloc(isz);
	theirs = malloc(isz);
	sock = tcp_connect(&o);
	if (!mine || !theirs || sock < 0 ||
	    sdr_qp_info_get(qp, mine) != SDR_SUCCESS ||
	    full_io(sock, mine, isz, 0) || full_io(sock, theirs, isz, 1)) {
		perror("exchange");
		return 1;
	}
	if (sdr_qp_connect(qp, theirs) != SDR_SUCCESS) {
		perror("sdr_qp_connect");
		return 1;
	}
	rc = o.host ? sender(&o, qp, buf, lkey, sock) :
		      receiver(&o, qp, buf, lkey, sock);
	/* the sender waits for the receiver's end before tearing down */
	if (o.host) {
		uint8_t fin;

		full_io(sock, &fin, 1, 1);
	} else {
		uint8_t fin = 1;

		full_io(sock, &fin, 1, 0);
	}
	close(sock);
	if (sdr_mr_dereg(mr) != SDR_SUCCESS) {
		perror("sdr_mr_dereg");
		rc = 1;
	}
	if (sdr_qp_destroy(qp) != SDR_SUCCESS ||
	    sdr_context_destroy(ctx) != SDR_SUCCESS) {
		perror("destroy");
		rc = 1;
	}
	free(mine);
	free(theirs);
	free(buf);
	return rc;
}
