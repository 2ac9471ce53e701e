// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the sdr protocol engine, and of the fixed numbers of
 * the uapi (test_uapi.c): TAP on stdout.
 *
 *   sdr-host-tests [NAME...]    only the tests whose names match a NAME
 *                               (fnmatch globs); a NAME that matches no
 *                               test is a failure
 *
 * SDR_HOST_JOBS=N runs N tests at once, each in a child process, with the
 * same TAP (tap.c).
 */
#include "tap.h"
#include "tests.h"
#include "sdr_ec.h"

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	sdr_ec_init();
	tap_select(argc, argv);
	test_wire();
	test_bitmap();
	test_rtt();
	test_path();
	test_credit();
	test_replay();
	test_cc();
	test_sr();
	test_adaptive();
	test_auto();
	test_ec();
	test_sim();
	test_uapi();
	return tap_done();
}
