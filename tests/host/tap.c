// SPDX-License-Identifier: GPL-2.0
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tap.h"

int tap_cur_fail;
unsigned long tap_cur_checks;
static int tap_n, tap_pass, tap_fail, tap_skipped;

/* The names (globs) given on the command line; none: every test. */
static char **tap_filter;
static int tap_nfilter;
static int *tap_filter_hits;

void tap_select(int argc, char **argv)
{
	tap_filter = argv + 1;
	tap_nfilter = argc > 1 ? argc - 1 : 0;
	tap_filter_hits = calloc(tap_nfilter + 1, sizeof(int));
	if (!tap_filter_hits)
		abort();
}

static int tap_selected(const char *name)
{
	int i, hit = 0;

	if (!tap_nfilter)
		return 1;
	for (i = 0; i < tap_nfilter; i++)
		if (!fnmatch(tap_filter[i], name, 0)) {
			tap_filter_hits[i]++;
			hit = 1;
		}
	return hit;
}

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

	if (!tap_selected(name))
		return;
	tap_cur_fail = 0;
	tap_cur_checks = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fn();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	tap_n++;
	if (!tap_cur_fail && !tap_cur_checks) {
		tap_diag("%s ran no CHECK", name);
		tap_cur_fail = 1;
	}
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
	if (!tap_selected(name))
		return;
	tap_n++;
	tap_skipped++;
	printf("ok %d - %s # SKIP %s\n", tap_n, name, why);
}

int tap_done(void)
{
	int i;

	/* A name that selects nothing is a mistake, not an empty pass. */
	for (i = 0; i < tap_nfilter; i++)
		if (!tap_filter_hits[i]) {
			tap_n++;
			tap_fail++;
			printf("not ok %d - '%s' matches no test\n", tap_n,
			       tap_filter[i]);
		}
	if (!tap_n) {
		tap_n++;
		tap_fail++;
		printf("not ok %d - no test ran\n", tap_n);
	}
	printf("1..%d\n", tap_n);
	printf("# %d passed, %d failed, %d skipped\n", tap_pass, tap_fail,
	       tap_skipped);
	free(tap_filter_hits);
	return tap_fail ? 1 : 0;
}
