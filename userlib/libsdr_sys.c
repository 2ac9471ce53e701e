// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_sys: the system calls every other part of libsdr shares - the
 * ioctl on /dev/sdr and the monotonic clock for deadlines.  It calls
 * nothing else in libsdr.
 *
 * Every caller zeroes an ioctl argument and gives it size = sizeof(struct)
 * before filling the fields, so a newer header never sends garbage past
 * what an older kernel knows (it would answer E2BIG).
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <time.h>

#include "libsdr_sys.h"

/* Restarts after a signal; returns 0 or -errno, the library's convention. */
int sdr__ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

int64_t sdr__now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t sdr__deadline(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : sdr__now_ms() + timeout_ms;
}

int sdr__left_ms(int64_t deadline)
{
	int64_t l;

	if (deadline < 0)
		return -1;
	l = deadline - sdr__now_ms();
	if (l < 0)
		return 0;
	return l > 1000000000 ? 1000000000 : (int)l;
}
