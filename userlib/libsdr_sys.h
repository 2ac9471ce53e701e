/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libsdr_sys: the system calls every other part of libsdr shares.  The
 * bottom layer: it knows no libsdr object.
 */
#ifndef LIBSDR_SYS_H
#define LIBSDR_SYS_H

#include <stdint.h>

int sdr__ioctl(int fd, unsigned long cmd, void *arg);
int64_t sdr__now_ms(void);
/* A deadline timeout_ms from now (timeout_ms < 0: none, -1). */
int64_t sdr__deadline(int timeout_ms);
/* What is left of @deadline for poll(): ms, 0 once past, -1 for none. */
int sdr__left_ms(int64_t deadline);

#endif /* LIBSDR_SYS_H */
