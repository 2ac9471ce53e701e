#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# /dev/sdr: opens, answers an unknown ioctl with ENOTTY, and keeps the module
# loaded while a file is open.
. "$(dirname "$0")/lib.sh"

plan 5
sdr_load
check "/dev/sdr is a character device" test -c /dev/sdr
check "unknown ioctl fails with ENOTTY" perl -e '
	use Errno;
	open(my $f, "+<", "/dev/sdr") or die "open: $!";
	my $buf = "\0" x 64;
	ioctl($f, 0xc040d5ff, $buf) and die "ioctl succeeded";
	$!{ENOTTY} or die "errno $! instead of ENOTTY";'
exec 7<>/dev/sdr
check "rmmod refused while /dev/sdr is open" sh -c '! rmmod sdr 2>/dev/null && test -d /sys/module/sdr'
exec 7>&-
check "rmmod succeeds after close" rmmod sdr
check "reload" insmod "$KO"
done_testing
