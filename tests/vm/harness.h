/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small kselftest-style TAP harness for the sdr VM tests.
 *
 *   TEST(name) { ... }                   a test
 *   TEST_T(name, seconds) { ... }        with its own timeout (default 120 s)
 *   FIXTURE(f) { fields; };              per-test state, set up/torn down
 *   FIXTURE_SETUP(f) { self->... }         around every TEST_F(f, ...)
 *   FIXTURE_TEARDOWN(f) { ... }
 *   TEST_F(f, name) { self->... }
 *   TEST_F_T(f, name, seconds) { ... }
 *   ASSERT_*(...) stop the test on failure, EXPECT_*(...) record and go on;
 *   SKIP(fmt, ...) ends the test as skipped; TH_LOG(fmt, ...) prints "# ...".
 *
 * Every test runs in a forked child (a crash or hang fails that test only;
 * the child is killed at its timeout, times SDR_TEST_SLOW (1..10, default
 * 1) on a slow kernel: make check-debug's sets 3).  Output is TAP: "1..N", then
 * "ok N - name", "not ok N - name" or "ok N - name # SKIP reason".  A test
 * that passes without having evaluated a single ASSERT_* or EXPECT_* is
 * "not ok" (it could not have failed); a SKIP after a failed EXPECT is a
 * failure.
 *
 *   t_prog [NAME...]   only the tests matching a NAME (fnmatch globs, e.g.
 *                      'env.*'); a NAME that matches no test is a failing
 *                      point, and so is a program with nothing to run
 *
 * Exit status: 0 all passed, 1 a test failed, 4 every test was skipped.
 */
#ifndef SDR_HARNESS_H
#define SDR_HARNESS_H

#include <errno.h>
#include <fnmatch.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define TH_EXIT_PASS	0
#define TH_EXIT_FAIL	1
#define TH_EXIT_SKIP	4
#define TH_EXIT_NOCHECK	5	/* passed without evaluating any check */
#define TH_MAX_TESTS	256

struct th_test {
	const char *name;
	void (*run)(void);	/* setup, body, teardown */
	unsigned int timeout_s;
};

static struct th_test *th_tests[TH_MAX_TESTS];
static int th_ntests;
/* In the child: failure flag and where a failed ASSERT jumps to. */
static int th_failed;
static unsigned long th_checks;	/* checks evaluated by this test */
static sigjmp_buf th_jmp;
static int th_in_body;
/* Skip reason, shared with the parent (MAP_SHARED page). */
static char *th_skip_msg;

static inline void th_register(struct th_test *t)
{
	if (th_ntests < TH_MAX_TESTS)
		th_tests[th_ntests++] = t;
}

#define TH_LOG(fmt, ...) \
	do { printf("# " fmt "\n", ##__VA_ARGS__); fflush(stdout); } while (0)

/* Stop the current test: run teardown if we are in its body. */
static inline void th_abort(void)
{
	th_failed = 1;
	if (th_in_body)
		siglongjmp(th_jmp, 1);
	fflush(stdout);
	_exit(TH_EXIT_FAIL);
}

#define SKIP(fmt, ...) do { \
	snprintf(th_skip_msg, 256, fmt, ##__VA_ARGS__); \
	fflush(stdout); \
	_exit(th_failed ? TH_EXIT_FAIL : TH_EXIT_SKIP); \
} while (0)

#define TH_CMP(is_assert, a, op, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	th_checks++; \
	if (!(_a op _b)) { \
		TH_LOG("%s:%d: expected %s %s %s (%lld %s %lld)", __FILE__, \
		       __LINE__, #a, #op, #b, _a, #op, _b); \
		if (is_assert) \
			th_abort(); \
		th_failed = 1; \
	} \
} while (0)

#define ASSERT_EQ(a, b)	TH_CMP(1, a, ==, b)
#define ASSERT_NE(a, b)	TH_CMP(1, a, !=, b)
#define ASSERT_LT(a, b)	TH_CMP(1, a, <, b)
#define ASSERT_LE(a, b)	TH_CMP(1, a, <=, b)
#define ASSERT_GT(a, b)	TH_CMP(1, a, >, b)
#define ASSERT_GE(a, b)	TH_CMP(1, a, >=, b)
#define ASSERT_TRUE(x)	TH_CMP(1, !!(x), ==, 1)
#define ASSERT_FALSE(x)	TH_CMP(1, !!(x), ==, 0)
#define EXPECT_EQ(a, b)	TH_CMP(0, a, ==, b)
#define EXPECT_NE(a, b)	TH_CMP(0, a, !=, b)
#define EXPECT_LT(a, b)	TH_CMP(0, a, <, b)
#define EXPECT_LE(a, b)	TH_CMP(0, a, <=, b)
#define EXPECT_GT(a, b)	TH_CMP(0, a, >, b)
#define EXPECT_GE(a, b)	TH_CMP(0, a, >=, b)
#define EXPECT_TRUE(x)	TH_CMP(0, !!(x), ==, 1)
#define EXPECT_FALSE(x)	TH_CMP(0, !!(x), ==, 0)

/* A call returning -1/errno: expect that errno (0: expect success). */
#define TH_ERRNO(is_assert, expr, err) do { \
	int _e = (err); \
	errno = 0; \
	long _r = (long)(expr); \
	int _got = _r < 0 ? errno : 0; \
	th_checks++; \
	if (_got != _e) { \
		TH_LOG("%s:%d: %s: expected %s (%d), got %s (%d)", __FILE__, \
		       __LINE__, #expr, _e ? strerror(_e) : "success", _e, \
		       _got ? strerror(_got) : "success", _got); \
		if (is_assert) \
			th_abort(); \
		th_failed = 1; \
	} \
} while (0)
#define ASSERT_ERRNO(expr, err)	TH_ERRNO(1, expr, err)
#define EXPECT_ERRNO(expr, err)	TH_ERRNO(0, expr, err)

#define TH_REGISTER(id, str, fn, tmo) \
	static struct th_test th_t_##id = { str, fn, tmo }; \
	__attribute__((constructor)) static void th_reg_##id(void) \
	{ th_register(&th_t_##id); }

#define TEST_T(name, tmo) \
	static void name(void); \
	static void th_run_##name(void) \
	{ \
		th_in_body = 1; \
		if (!sigsetjmp(th_jmp, 1)) \
			name(); \
		th_in_body = 0; \
	} \
	TH_REGISTER(name, #name, th_run_##name, tmo) \
	static void name(void)
#define TEST(name) TEST_T(name, 120)

#define FIXTURE(f) \
	struct f##_fixture; \
	static void f##_setup(struct f##_fixture *self); \
	static void f##_teardown(struct f##_fixture *self); \
	struct f##_fixture
#define FIXTURE_SETUP(f)	static void f##_setup(struct f##_fixture *self)
#define FIXTURE_TEARDOWN(f)	static void f##_teardown(struct f##_fixture *self)

#define TEST_F_T(f, name, tmo) \
	static void f##_##name(struct f##_fixture *self); \
	static void th_run_##f##_##name(void) \
	{ \
		static struct f##_fixture self; \
		memset(&self, 0, sizeof(self)); \
		f##_setup(&self); \
		th_in_body = 1; \
		if (!sigsetjmp(th_jmp, 1)) \
			f##_##name(&self); \
		th_in_body = 0; \
		f##_teardown(&self); \
	} \
	TH_REGISTER(f##_##name, #f "." #name, th_run_##f##_##name, tmo) \
	static void f##_##name(struct f##_fixture *self)
#define TEST_F(f, name) TEST_F_T(f, name, 120)

/* SDR_TEST_SLOW: how much longer every test may take (1..10; else 1). */
static inline unsigned int th_slow(void)
{
	const char *s = getenv("SDR_TEST_SLOW");
	char *end;
	unsigned long v;

	if (!s || !*s)
		return 1;
	v = strtoul(s, &end, 10);
	return *end || v < 1 || v > 10 ? 1 : (unsigned int)v;
}

/* Run one test in a child; returns TH_EXIT_*. */
static inline int th_run_one(struct th_test *t)
{
	int status;
	pid_t pid, w;

	th_skip_msg[0] = 0;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		TH_LOG("fork: %s", strerror(errno));
		return TH_EXIT_FAIL;
	}
	if (pid == 0) {
		setpgid(0, 0);	/* the test's own children die with it */
		alarm(t->timeout_s * th_slow());
		th_failed = 0;
		th_checks = 0;
		t->run();
		fflush(stdout);
		_exit(th_failed ? TH_EXIT_FAIL :
		      th_checks ? TH_EXIT_PASS : TH_EXIT_NOCHECK);
	}
	do {
		w = waitpid(pid, &status, 0);
	} while (w < 0 && errno == EINTR);
	kill(-pid, SIGKILL);	/* leftovers of the test's process group */
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	TH_LOG("%s: killed by signal %d%s", t->name, WTERMSIG(status),
	       WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
	return TH_EXIT_FAIL;
}

/* Only the tests matching a name (glob) on the command line, if any. */
static inline int th_selected(struct th_test *t, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return 1;
	for (i = 1; i < argc; i++)
		if (!fnmatch(argv[i], t->name, 0))
			return 1;
	return 0;
}

/* Does command line argument i select any test? */
static inline int th_arg_matches(const char *arg)
{
	int i;

	for (i = 0; i < th_ntests; i++)
		if (!fnmatch(arg, th_tests[i]->name, 0))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int i, n = 0, pass = 0, fail = 0, skip = 0, unmatched = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	th_skip_msg = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (th_skip_msg == MAP_FAILED)
		return TH_EXIT_FAIL;
	for (i = 0; i < th_ntests; i++)
		n += th_selected(th_tests[i], argc, argv);
	for (i = 1; i < argc; i++)
		unmatched += !th_arg_matches(argv[i]);
	/* An empty selection fails loudly: one point per name, or one. */
	printf("1..%d\n", n + unmatched + (n + unmatched == 0));
	for (i = 1; i < argc; i++)
		if (!th_arg_matches(argv[i]))
			printf("not ok %d - '%s' matches no test\n", ++fail,
			       argv[i]);
	if (!n && !unmatched)
		printf("not ok %d - no test to run\n", ++fail);
	n = fail;
	for (i = 0; i < th_ntests; i++) {
		struct th_test *t = th_tests[i];
		int rc;

		if (!th_selected(t, argc, argv))
			continue;
		n++;
		rc = th_run_one(t);
		if (rc == TH_EXIT_PASS) {
			printf("ok %d - %s\n", n, t->name);
			pass++;
		} else if (rc == TH_EXIT_SKIP) {
			printf("ok %d - %s # SKIP %s\n", n, t->name, th_skip_msg);
			skip++;
		} else {
			if (rc == TH_EXIT_NOCHECK)
				TH_LOG("%s evaluated no ASSERT or EXPECT", t->name);
			printf("not ok %d - %s\n", n, t->name);
			fail++;
		}
	}
	printf("# totals: pass:%d fail:%d skip:%d\n", pass, fail, skip);
	if (fail)
		return TH_EXIT_FAIL;
	if (skip && !pass)
		return TH_EXIT_SKIP;
	return TH_EXIT_PASS;
}

#endif /* SDR_HARNESS_H */
