// SPDX-License-Identifier: GPL-2.0
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
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

/* Runs one test here and now: its CHECKs' verdict and its seconds. */
static double tap_call(void (*fn)(void))
{
	struct timespec t0, t1;

	tap_cur_fail = 0;
	tap_cur_checks = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fn();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
}

static void tap_result(const char *name, int fail, unsigned long checks,
		       double secs)
{
	tap_n++;
	if (!fail && !checks) {
		tap_diag("%s ran no CHECK", name);
		fail = 1;
	}
	if (fail) {
		tap_fail++;
		printf("not ok %d - %s\n", tap_n, name);
	} else {
		tap_pass++;
		printf("ok %d - %s # %.2fs\n", tap_n, name, secs);
	}
	fflush(stdout);
}

/*
 * SDR_HOST_JOBS=N (N > 1): up to N tests run at once, each in a child
 * whose output goes to a file; the parent prints each test's output and
 * its TAP line in the order the tests were started, so the TAP is the
 * same as one at a time.  A child that dies (a sanitizer's report, a
 * crash) fails its test and the rest go on.
 */
#define TAP_RESULT	"\001tap-result "

struct tap_job {
	pid_t		pid;
	char		*name;		/* a copy: callers build names on the stack */
	FILE		*out;
};

static struct tap_job *tap_jobs;
static int tap_njobs, tap_max_jobs = -1;

static void tap_reap_first(void)
{
	struct tap_job j = tap_jobs[0];
	char line[4096];
	unsigned long checks = 0;
	double secs = 0;
	int status = 0, fail = -1, got = 0;

	memmove(tap_jobs, tap_jobs + 1, --tap_njobs * sizeof(*tap_jobs));
	while (waitpid(j.pid, &status, 0) < 0)
		;
	rewind(j.out);
	while (fgets(line, sizeof(line), j.out)) {
		if (!strncmp(line, TAP_RESULT, strlen(TAP_RESULT))) {
			got = sscanf(line + strlen(TAP_RESULT), "%d %lu %lf",
				     &fail, &checks, &secs) == 3;
			continue;
		}
		fputs(line, stdout);
	}
	fclose(j.out);
	if (!got || !WIFEXITED(status) || WEXITSTATUS(status)) {
		if (WIFSIGNALED(status))
			tap_diag("%s: the test's process died of signal %d",
				 j.name, WTERMSIG(status));
		else
			tap_diag("%s: the test's process exited with status %d%s",
				 j.name, WEXITSTATUS(status),
				 got ? "" : " before its verdict");
		fail = 1;
	}
	tap_result(j.name, fail, checks, secs);
	free(j.name);
}

static int tap_jobs_wanted(void)
{
	const char *e;

	if (tap_max_jobs < 0) {
		e = getenv("SDR_HOST_JOBS");
		tap_max_jobs = e ? atoi(e) : 1;
		if (tap_max_jobs > 1) {
			tap_jobs = calloc(tap_max_jobs, sizeof(*tap_jobs));
			if (!tap_jobs)
				abort();
		}
	}
	return tap_max_jobs;
}

void tap_run(const char *name, void (*fn)(void))
{
	FILE *out;
	double secs;
	pid_t pid;

	if (!tap_selected(name))
		return;
	if (tap_jobs_wanted() <= 1) {
		secs = tap_call(fn);
		tap_result(name, tap_cur_fail, tap_cur_checks, secs);
		return;
	}
	if (tap_njobs == tap_max_jobs)
		tap_reap_first();
	out = tmpfile();
	if (!out)
		abort();
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		abort();
	if (!pid) {
		if (dup2(fileno(out), STDOUT_FILENO) < 0)
			abort();
		secs = tap_call(fn);
		printf(TAP_RESULT "%d %lu %f\n", tap_cur_fail, tap_cur_checks,
		       secs);
		exit(0);	/* exit(): the leak checker runs */
	}
	tap_jobs[tap_njobs].pid = pid;
	tap_jobs[tap_njobs].name = strdup(name);
	if (!tap_jobs[tap_njobs].name)
		abort();
	tap_jobs[tap_njobs].out = out;
	tap_njobs++;
}

void tap_skip(const char *name, const char *why)
{
	if (!tap_selected(name))
		return;
	while (tap_njobs)	/* in order after the tests started before it */
		tap_reap_first();
	tap_n++;
	tap_skipped++;
	printf("ok %d - %s # SKIP %s\n", tap_n, name, why);
}

int tap_done(void)
{
	int i;

	while (tap_njobs)
		tap_reap_first();
	free(tap_jobs);

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
