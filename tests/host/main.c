// SPDX-License-Identifier: GPL-2.0
/* Host unit tests of the sdr protocol engine: TAP on stdout. */
#include "tap.h"
#include "tests.h"

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_wire();
	test_bitmap();
	test_rtt();
	test_sr();
	test_ec();
	test_sim();
	return tap_done();
}
