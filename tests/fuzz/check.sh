#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check's fuzzing: each target for TIME seconds from a copy of its
# committed seed corpus, JOBS of them at once (one core each), then TAP in
# target order.  A target that finds a crash, or runs no input at all, is
# "not ok" (its log's tail follows as "# " lines).
#
# usage: check.sh TIME JOBS TARGET...
set -u
time=$1 jobs=$2
shift 2
cd "$(dirname "$0")" || exit 1

run_one() {
	local t=$1

	rm -rf "run/$t"
	mkdir -p "run/$t"
	cp corpus/"$t"/* "run/$t/"
	"./$t" -max_total_time="$time" -print_final_stats=1 -max_len=4096 \
		"run/$t" > "run/$t.log" 2>&1
	echo $? > "run/$t.rc"
}

for t in "$@"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
	rm -f "run/$t.rc"
	run_one "$t" &
done
wait

echo "1..$#"
n=0 fail=0
for t in "$@"; do
	n=$((n + 1))
	if [ "$(cat "run/$t.rc" 2>/dev/null)" = 0 ]; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "run/$t.log")
		if [ "${runs:-0}" -gt 0 ]; then
			echo "ok $n - $t: $runs inputs in $time s"
			continue
		fi
		echo "# $t ran no input"
	fi
	tail -50 "run/$t.log" | sed 's/^/# /'
	echo "not ok $n - $t"
	fail=1
done
exit $fail
