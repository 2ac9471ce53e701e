// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include "tap.h"

int tap_cur_fail;
static int tap_n, tap_pass, tap_fail;

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

void tap_run(const char *name, void (*fn)(void))
{
	struct timespec t0, t1;

	tap_cur_fail = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fn();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	tap_n++;
	if (tap_cur_fail) {
		tap_fail++;
		printf("not ok %d - %s\n", tap_n, name);
	} else {
		tap_pass++;
		printf("ok %d - %s # %.2fs\n", tap_n, name,
		       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
	fflush(stdout);
}

void tap_skip(const char *name, const char *why)
{
	tap_n++;
	tap_pass++;
	printf("ok %d - %s # SKIP %s\n", tap_n, name, why);
}

int tap_done(void)
{
	printf("1..%d\n", tap_n);
	printf("%d passed, %d failed\n", tap_pass, tap_fail);
	return tap_fail ? 1 : 0;
}
