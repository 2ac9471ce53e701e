# SPDX-License-Identifier: GPL-2.0
# TAP helpers for the shell tests in tests/vm (kselftest style: exit 4 skips).
# plan N first, then one point per ok/not_ok/check/skip, then done_testing,
# which fails the test when the points disagree with the plan (or there is
# no plan and no point): a test that stopped halfway must not look green.
# skip_all before any point skips the whole test.
# shellcheck shell=bash

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# SDR_KO: the module under test (tests/vm/run), relative to the checkout.
KO=${SDR_KO:-kernel/sdr.ko}
case $KO in /*) ;; *) KO=$TOP/$KO ;; esac
_n=0
_fail=0
_plan=

plan() {
	_plan=$1
	echo "1..$1"
}

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

# skip NAME REASON: a point that did not run (counted as skipped).
skip() {
	_n=$((_n + 1))
	echo "ok $_n - $1 # SKIP $2"
}

# skip_all REASON: the whole test skipped; only before a plan or any point.
skip_all() {
	if [ -n "$_plan" ] || [ "$_n" -gt 0 ]; then
		not_ok "skip_all after the plan or a point: $*"
		done_testing
	fi
	echo "1..0 # SKIP $*"
	exit 4
}

done_testing() {
	if [ -z "$_plan" ]; then
		[ "$_n" -gt 0 ] || not_ok "no test point"
		echo "1..$_n"
	elif [ "$_n" -ne "$_plan" ]; then
		diag "planned $_plan points, ran $_n"
		_fail=$((_fail + 1))
	fi
	[ "$_fail" -eq 0 ]
	exit $?
}

# wait_for SECONDS CMD...: poll CMD (every 0.1 s) until it succeeds; false
# if it never did within SECONDS.  Wait for the event, never a fixed sleep.
_now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
wait_for() {
	local end=$(($(_now_ms) + $1 * 1000))
	shift
	until "$@"; do
		[ "$(_now_ms)" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# slow SECS: SECS times SDR_TEST_SLOW (1..10, else 1), the factor
# tests/run-vm-tests-debug gives every time limit on the debug kernel, as
# harness.h applies it to the C tests'.
slow() {
	local f=${SDR_TEST_SLOW:-1}
	case "$f" in [1-9]|10) ;; *) f=1 ;; esac
	echo $(($1 * f))
}

# wait_listen PORT: a TCP server (sdr_perf) listens on PORT, within 60 s.
_listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }
wait_listen() {
	wait_for 60 _listening "$1" || diag "nothing listens on port $1 after 60 s"
}

sdr_loaded() { [ -d /sys/module/sdr ]; }
sdr_load() { sdr_loaded || insmod "$KO"; }
sdr_unload() { ! sdr_loaded || rmmod sdr; }
