/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP harness for the host unit tests.  A test is a function; any
 * CHECK that fails inside it prints a diagnostic and marks the test
 * "not ok".  A test that ran no CHECK at all is "not ok" too: a test that
 * cannot fail proves nothing.  tap_select() takes the command line's
 * names (globs); tap_done() prints the plan, reports names that matched
 * no test as failures, and returns the exit code.
 */
#ifndef SDR_TAP_H
#define SDR_TAP_H

#include <stdio.h>
#include <stdint.h>
#include <inttypes.h>

extern int tap_cur_fail;
extern unsigned long tap_cur_checks;

void tap_select(int argc, char **argv);
void tap_run(const char *name, void (*fn)(void));
void tap_skip(const char *name, const char *why);
int tap_done(void);
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define CHECK(cond) do {						\
	tap_cur_checks++;						\
	if (!(cond)) {							\
		tap_diag("%s:%d: CHECK(%s) failed", __FILE__, __LINE__,	\
			 #cond);					\
		tap_cur_fail++;						\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	tap_cur_checks++;						\
	if (_a != _b) {							\
		tap_diag("%s:%d: %s == %s failed: %lld != %lld",	\
			 __FILE__, __LINE__, #a, #b, _a, _b);		\
		tap_cur_fail++;						\
	}								\
} while (0)

#define TAP_RUN(fn)	tap_run(#fn, fn)

#endif /* SDR_TAP_H */
