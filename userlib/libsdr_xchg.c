// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_xchg: exchanging endpoint blobs over TCP (sdr_exchange_tcp), a
 * convenience with no kernel counterpart.  Calls only libsdr_sys.c (the
 * clock for its deadline).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libsdr.h"
#include "libsdr_sys.h"

#define XCHG_MAGIC	0x58524453u	/* "SDRX" */

static int wait_fd(int fd, short ev, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int ret;

	do {
		ret = poll(&p, 1, sdr__left_ms(deadline));
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	return ret ? 0 : -ETIMEDOUT;
}

static int io_all(int fd, void *buf, size_t len, bool wr, int64_t deadline)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n;
		int ret = wait_fd(fd, wr ? POLLOUT : POLLIN, deadline);

		if (ret)
			return ret;
		n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int tcp_listen_accept(uint16_t port, int64_t deadline)
{
	struct sockaddr_in6 a;
	int one = 1, zero = 0, ls, fd, ret;

	ls = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0)
		return -errno;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* Dual stack: accept IPv4 peers too. */
	setsockopt(ls, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	memset(&a, 0, sizeof(a));
	a.sin6_family = AF_INET6;
	a.sin6_addr = in6addr_any;
	a.sin6_port = htons(port);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1)) {
		ret = -errno;
		close(ls);
		return ret;
	}
	ret = wait_fd(ls, POLLIN, deadline);
	if (ret) {
		close(ls);
		return ret;
	}
	fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	ret = fd < 0 ? -errno : fd;
	close(ls);
	return ret;
}

static int tcp_connect(const char *host, uint16_t port, int64_t deadline)
{
	struct addrinfo hints, *res, *ai;
	char ports[8];
	int ret;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ports, sizeof(ports), "%u", port);
	ret = getaddrinfo(host, ports, &hints, &res);
	if (ret)
		return ret == EAI_SYSTEM ? -errno : -EHOSTUNREACH;

	/* The server may not listen yet: retry refused connects. */
	for (;;) {
		ret = -EHOSTUNREACH;
		for (ai = res; ai; ai = ai->ai_next) {
			int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
					ai->ai_protocol);

			if (fd < 0) {
				ret = -errno;
				continue;
			}
			if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
				freeaddrinfo(res);
				return fd;
			}
			ret = -errno;
			close(fd);
		}
		if (ret != -ECONNREFUSED && ret != -ENETUNREACH &&
		    ret != -EHOSTUNREACH && ret != -ETIMEDOUT)
			break;
		if (deadline >= 0 && sdr__now_ms() >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		usleep(100 * 1000);
	}
	freeaddrinfo(res);
	return ret;
}

int sdr_exchange_tcp(const char *host, uint16_t port, const void *local,
		     void *remote, size_t len, int timeout_ms, int *sock)
{
	int64_t deadline = sdr__deadline(timeout_ms);
	uint32_t hdr[2], peer[2];
	int fd, one = 1, ret;

	if ((!local || !remote) && len)
		return -EINVAL;
	if (len > UINT32_MAX)
		return -EINVAL;
	fd = host ? tcp_connect(host, port, deadline) :
		    tcp_listen_accept(port, deadline);
	if (fd < 0)
		return fd;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	hdr[0] = htonl(XCHG_MAGIC);
	hdr[1] = htonl((uint32_t)len);
	ret = io_all(fd, hdr, sizeof(hdr), true, deadline);
	if (!ret)
		ret = io_all(fd, (void *)local, len, true, deadline);
	if (!ret)
		ret = io_all(fd, peer, sizeof(peer), false, deadline);
	if (!ret && (ntohl(peer[0]) != XCHG_MAGIC || ntohl(peer[1]) != len))
		ret = -EPROTO;
	if (!ret)
		ret = io_all(fd, remote, len, false, deadline);
	if (ret || !sock)
		close(fd);
	else
		*sock = fd;
	return ret;
}
