#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make install's udev rule (tools/udev/90-sdr.rules) gives /dev/sdr the
# group the module parameter dev_group names and the mode dev_mode says.
# A profile boot of its own (tests/vm/profiles): it starts systemd-udevd,
# which the guest does not run otherwise, with only that rule, and stops
# it before the end.  Then a user of the group opens /dev/sdr and one
# outside it cannot.
. "$(dirname "$0")/lib.sh"

plan 7
rules=$TOP/tools/udev/90-sdr.rules
udevd=/lib/systemd/systemd-udevd
# unload: a few tries, the runner's load may still be settling
unload() {
	local i
	for i in $(seq 20); do
		sdr_unload 2>/dev/null && return 0
		sleep 0.5
	done
	diag "rmmod sdr: $(rmmod sdr 2>&1)"
	return 1
}
unload
check "the module refuses a dev_group that is no group name" \
	sh -c '! insmod "$1" dev_group=a/b 2>/dev/null && ! insmod "$1" dev_group=-x 2>/dev/null && ! test -d /sys/module/sdr' _ "$KO"
getent group sdrtest >/dev/null || groupadd -g 4300 sdrtest
insmod "$KO" dev_group=sdrtest dev_mode=0640
diag "before udev: $(stat -c '%a %U:%G' /dev/sdr)"
check "devtmpfs alone: 0640 root:root" test "$(stat -c %a:%U:%G /dev/sdr)" = 640:root:root

# udev with this rule alone: runtime rules directory, events for sdr only
mkdir -p /run/udev/rules.d
cp "$rules" /run/udev/rules.d/
if "$udevd" --daemon 2>/dev/null; then
	udevadm trigger --action=add --subsystem-match=misc --sysname-match=sdr
	udevadm settle -t 20
fi
diag "after udev: $(stat -c '%a %U:%G' /dev/sdr)"
check "the rule gives it group sdrtest, mode 0640 (dev_group, dev_mode)" \
	test "$(stat -c %a:%U:%G /dev/sdr)" = 640:root:sdrtest
# a member of the group reads (0640: no write, so O_RDONLY) and one
# outside cannot; then the default mode 0660 opens for read and write
check "a member of sdrtest opens /dev/sdr" \
	setpriv --reuid 4301 --regid 4301 --groups 4300 -- sh -c 'exec 3</dev/sdr'
check "a user outside sdrtest cannot" \
	setpriv --reuid 4302 --regid 4302 --clear-groups -- sh -c '! (exec 3</dev/sdr) 2>/dev/null'
unload
insmod "$KO" dev_group=sdrtest
udevadm trigger --action=add --subsystem-match=misc --sysname-match=sdr
udevadm settle -t 20
check "reloaded with the defaults: 0660 root:sdrtest" \
	test "$(stat -c %a:%U:%G /dev/sdr)" = 660:root:sdrtest
check "a member opens it for reading and writing" \
	setpriv --reuid 4301 --regid 4301 --groups 4300 -- sh -c 'exec 3<>/dev/sdr'
udevadm control --exit 2>/dev/null
rm -f /run/udev/rules.d/90-sdr.rules
done_testing
