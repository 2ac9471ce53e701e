#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# /dev/sdr: opens, answers an unknown ioctl with ENOTTY, and keeps the module
# loaded while a file is open; its mode is 0660 unless the module parameter
# dev_mode says otherwise (t_isolation checks who may open it).
. "$(dirname "$0")/lib.sh"

plan 9
sdr_load
check "/dev/sdr is a character device" test -c /dev/sdr
check "/dev/sdr is 0660 root:root, dev_mode says 0660" \
	test "$(stat -c %a:%u:%g /dev/sdr)/$(cat /sys/module/sdr/parameters/dev_mode)" = 660:0:0/0660
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
check "dev_mode 0 and 01000 refused at load" \
	sh -c '! insmod "$1" dev_mode=0 2>/dev/null && ! insmod "$1" dev_mode=01000 2>/dev/null && ! test -d /sys/module/sdr' _ "$KO"
check "dev_mode=0604 at load: /dev/sdr is 0604" \
	sh -c 'insmod "$1" dev_mode=0604 && test "$(stat -c %a /dev/sdr)" = 604 && rmmod sdr' _ "$KO"
check "reload" insmod "$KO"
check "after a reload /dev/sdr is 0660 again" test "$(stat -c %a /dev/sdr)" = 660
done_testing
