/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP harness for the host unit tests.  A test is a function; any
 * CHECK that fails inside it prints a diagnostic and marks the test
 * "not ok".  tap_done() prints the plan and the "N passed, N failed" line
 * the top-level Makefile looks for, and returns the exit code.
 */
#ifndef SDR_TAP_H
#define SDR_TAP_H

#include <stdio.h>
#include <stdint.h>
#include <inttypes.h>

extern int tap_cur_fail;

void tap_run(const char *name, void (*fn)(void));
void tap_skip(const char *name, const char *why);
int tap_done(void);
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		tap_diag("%s:%d: CHECK(%s) failed", __FILE__, __LINE__,	\
			 #cond);					\
		tap_cur_fail++;						\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a != _b) {							\
		tap_diag("%s:%d: %s == %s failed: %lld != %lld",	\
			 __FILE__, __LINE__, #a, #b, _a, _b);		\
		tap_cur_fail++;						\
	}								\
} while (0)

#define TAP_RUN(fn)	tap_run(#fn, fn)

#endif /* SDR_TAP_H */
