# SPDX-License-Identifier: GPL-2.0
# TAP helpers for the shell tests in tests/vm (kselftest style: exit 4 skips).
# shellcheck shell=bash

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# SDR_KO: the module under test (tests/vm/run), relative to the checkout.
KO=${SDR_KO:-kernel/sdr.ko}
case $KO in /*) ;; *) KO=$TOP/$KO ;; esac
_n=0
_fail=0

plan() { echo "1..$1"; }

ok() {
	_n=$((_n + 1))
	echo "ok $_n - $*"
}

not_ok() {
	_n=$((_n + 1))
	_fail=$((_fail + 1))
	echo "not ok $_n - $*"
}

# check NAME CMD...: one test point from a command's exit status.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$name"
	else
		not_ok "$name"
		printf '%s\n' "$out" | sed 's/^/# /' | head -n 20
	fi
}

diag() { echo "# $*"; }

skip_all() {
	echo "1..0 # SKIP $*"
	exit 4
}

done_testing() { [ "$_fail" -eq 0 ]; exit $?; }

sdr_loaded() { [ -d /sys/module/sdr ]; }
sdr_load() { sdr_loaded || insmod "$KO"; }
sdr_unload() { ! sdr_loaded || rmmod sdr; }
