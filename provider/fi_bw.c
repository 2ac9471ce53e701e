// SPDX-License-Identifier: GPL-2.0
/*
 * fi_bw: point-to-point bandwidth through libfabric, for any provider (the
 * sdr provider first: tools/bench-fabric sets it beside sdr_perf).  Reliable
 * datagram endpoints; the client sends N messages of S bytes, W in flight;
 * the server keeps W receives posted and checks every byte it gets.  The
 * two exchange their endpoint names over a TCP control connection.
 *
 *   fi_bw [-p PROV] [-d DOMAIN] [-P PORT] [-n N] [-s SIZE] [-w W]   server
 *   fi_bw [-p PROV] [-d DOMAIN] [-P PORT] [-n N] [-s SIZE] [-w W] HOST
 *
 * The server prints "fi_bw: N x S B in T s: X MB/s, E verify errors" (its
 * time from the first receive posted to the last message checked) and
 * exits 0 when every message arrived intact; the client exits 0 when
 * every send completed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Message @m's contents: 64-bit words from its number and their index. */
static uint64_t pat(uint32_t m, size_t word)
{
	return (m + 1) * 0x9e3779b97f4a7c15ULL ^ word * 0xbf58476d1ce4e5b9ULL;
}

static void fill(uint8_t *p, uint32_t m, size_t size)
{
	size_t i;

	for (i = 0; i + 8 <= size; i += 8) {
		uint64_t v = pat(m, i / 8);

		memcpy(p + i, &v, 8);
	}
	for (; i < size; i++)
		p[i] = (uint8_t)(pat(m, i / 8) >> (8 * (i % 8)));
}

/* 0 when @p holds message @m's contents. */
static int check(const uint8_t *p, uint32_t m, size_t size)
{
	size_t i;

	for (i = 0; i + 8 <= size; i += 8) {
		uint64_t v = pat(m, i / 8);

		if (memcmp(p + i, &v, 8))
			return -1;
	}
	for (; i < size; i++)
		if (p[i] != (uint8_t)(pat(m, i / 8) >> (8 * (i % 8))))
			return -1;
	return 0;
}

static void die(const char *what, int ret)
{
	fprintf(stderr, "fi_bw: %s: %s\n", what, fi_strerror(ret < 0 ? -ret : ret));
	exit(1);
}

/* TCP control connection: the server accepts one client on @port. */
static int ctrl(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
				  .ai_flags = host ? 0 : AI_PASSIVE }, *ai;
	int fd, c, one = 1, i;

	if (getaddrinfo(host, port, &hints, &ai))
		die("getaddrinfo", EINVAL);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket", errno);
	if (!host) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1))
			die("bind", errno);
		c = accept(fd, NULL, NULL);
		close(fd);
		fd = c;
	} else {
		for (i = 0; i < 100; i++) {
			if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
				break;
			usleep(100000);
		}
		if (i == 100)
			die("connect", errno);
	}
	freeaddrinfo(ai);
	if (fd < 0)
		die("accept", errno);
	return fd;
}

static void xfer(int fd, void *buf, size_t len, int out)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = out ? write(fd, (char *)buf + done, len - done) :
				  read(fd, (char *)buf + done, len - done);

		if (n <= 0)
			die("control connection", n ? errno : EPIPE);
		done += (size_t)n;
	}
}

/*
 * Wait for one completion, sleeping on the CQ's wait object (spinning
 * only where the provider has none); returns its context.
 */
static void *comp(struct fid_cq *cq)
{
	static int spin;
	struct fi_cq_entry e;
	struct fi_cq_err_entry err;
	ssize_t r;

	for (;;) {
		r = spin ? fi_cq_read(cq, &e, 1) :
			   fi_cq_sread(cq, &e, 1, NULL, 1000);
		if (r == -FI_ENOSYS) {
			spin = 1;
			continue;
		}
		if (r == 1)
			return e.op_context;
		if (r == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_cq_readerr(cq, &err, 0);
			die("completion", err.err);
		}
		if (r != -FI_EAGAIN)
			die("fi_cq_read", (int)r);
	}
}

int main(int argc, char **argv)
{
	const char *prov = "sdr", *dom = NULL, *port = "47700", *host = NULL;
	uint32_t n = 100, w = 8, i, posted = 0, got = 0, bad = 0;
	size_t size = 1 << 20, namelen;
	struct fi_info *hints, *info;
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_CONTEXT,
				  .wait_obj = FI_WAIT_UNSPEC };
	struct fi_av_attr ava = { .type = FI_AV_TABLE };
	struct fid_fabric *fab;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t peer;
	char name[256], pname[256];
	uint8_t *buf;
	double t0;
	int c, fd, ret;

	while ((c = getopt(argc, argv, "p:d:P:n:s:w:")) != -1) {
		switch (c) {
		case 'p': prov = optarg; break;
		case 'd': dom = optarg; break;
		case 'P': port = optarg; break;
		case 'n': n = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 'w': w = (uint32_t)strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: fi_bw [-p PROV] [-d DOMAIN] [-P PORT] [-n N] [-s SIZE] [-w W] [HOST]\n");
			return 2;
		}
	}
	if (optind < argc)
		host = argv[optind];
	if (!n || !w || w > 64 || !size) {
		fprintf(stderr, "fi_bw: -n, -s > 0, -w 1..64\n");
		return 2;
	}
	hints = fi_allocinfo();
	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup(prov);
	if (dom)
		hints->domain_attr->name = strdup(dom);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	if (ret)
		die("fi_getinfo", ret);
	if (size > info->ep_attr->max_msg_size) {
		fprintf(stderr, "fi_bw: -s %zu is above the provider's %zu\n", size,
			info->ep_attr->max_msg_size);
		return 2;
	}
	cqa.size = 4 * w;
	if ((ret = fi_fabric(info->fabric_attr, &fab, NULL)) ||
	    (ret = fi_domain(fab, info, &domain, NULL)) ||
	    (ret = fi_endpoint(domain, info, &ep, NULL)) ||
	    (ret = fi_cq_open(domain, &cqa, &cq, NULL)) ||
	    (ret = fi_av_open(domain, &ava, &av, NULL)) ||
	    (ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_ep_bind(ep, &av->fid, 0)) || (ret = fi_enable(ep)))
		die("setup", ret);
	buf = malloc(size * w);
	if (!buf)
		die("malloc", ENOMEM);
	namelen = sizeof(name);
	if ((ret = fi_getname(&ep->fid, name, &namelen)))
		die("fi_getname", ret);
	fd = ctrl(host, port);
	xfer(fd, &namelen, sizeof(namelen), 1);
	xfer(fd, name, namelen, 1);
	xfer(fd, &namelen, sizeof(namelen), 0);
	if (namelen > sizeof(pname))
		die("peer name", EINVAL);
	xfer(fd, pname, namelen, 0);
	if (fi_av_insert(av, pname, 1, &peer, 0, NULL) != 1)
		die("fi_av_insert", EINVAL);

	if (!host) {
		t0 = now_s();
		for (posted = 0; posted < w && posted < n; posted++)
			if ((ret = fi_recv(ep, buf + posted * size, size, NULL,
					   FI_ADDR_UNSPEC,
					   (void *)(uintptr_t)posted)))
				die("fi_recv", ret);
		xfer(fd, &posted, sizeof(posted), 1);	/* receives are up */
		while (got < n) {
			uint32_t s = (uint32_t)(uintptr_t)comp(cq);
			uint8_t *m = buf + s * size;

			bad += !!check(m, got, size);
			got++;
			if (posted < n) {
				if ((ret = fi_recv(ep, m, size, NULL,
						   FI_ADDR_UNSPEC,
						   (void *)(uintptr_t)s)))
					die("fi_recv", ret);
				posted++;
			}
		}
		t0 = now_s() - t0;
		printf("fi_bw: %u x %zu B in %.2f s: %.2f MB/s, %u verify errors\n",
		       n, size, t0, n * (double)size / t0 / 1e6, bad);
		xfer(fd, &got, sizeof(got), 1);
	} else {
		uint32_t inflight = 0, ready;

		xfer(fd, &ready, sizeof(ready), 0);
		for (i = 0; i < n; i++) {
			uint8_t *m;

			if (inflight == w) {
				comp(cq);
				inflight--;
			}
			m = buf + (i % w) * size;
			fill(m, i, size);
			while ((ret = fi_send(ep, m, size, NULL, peer,
					      (void *)(uintptr_t)i)) == -FI_EAGAIN) {
				if (inflight) {
					comp(cq);
					inflight--;
				} else {
					usleep(100);
				}
			}
			if (ret)
				die("fi_send", ret);
			inflight++;
		}
		while (inflight--)
			comp(cq);
		xfer(fd, &got, sizeof(got), 0);	/* the server is done */
		printf("fi_bw: %u x %zu B sent\n", n, size);
	}
	close(fd);
	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
	fi_close(&domain->fid);
	fi_close(&fab->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	free(buf);
	return bad ? 1 : 0;
}
