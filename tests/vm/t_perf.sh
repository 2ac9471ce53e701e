#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sdr_perf end to end: the perftest-style pair with --verify, as a user runs
# it (server on rxe1, client on rxe0), and its JSON summary.
. "$(dirname "$0")/lib.sh"

plan 6
sdr_load
# A loss-free link: no NONE message may end with holes, however starved the
# guest is (a packet gap past none_idle_ms would complete one early).
echo 60000 >/sys/module/sdr/parameters/none_idle_ms
perf=$TOP/tools/sdr_perf
out=$(mktemp)
srv=$(mktemp)

"$perf" -d rxe1 --verify >"$srv" 2>&1 &
spid=$!
wait_listen 18515	# sdr_perf's default port
"$perf" -d rxe0 -s 1M -n 200 --verify --json 198.18.0.2 >"$out" 2>&1
crc=$?
wait "$spid"
src=$?
sed 's/^/# client: /' "$out" | tail -n 8
sed 's/^/# server: /' "$srv" | tail -n 4
grep -H . /sys/class/sdr/rxe1/drops/* 2>/dev/null | grep -v ':0$' | sed 's/^/# drops: /'

json=$(tail -n 1 "$out")
field() { printf '%s' "$json" | python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
check "client exits 0" test "$crc" = 0
check "server exits 0" test "$src" = 0
check "JSON: 200 messages of 1 MiB" test "$(field '["messages"]')/$(field '["msg_bytes"]')" = "200/1048576"
check "JSON: verify_errors 0" test "$(field '["verify_errors"]')" = 0
check "JSON: failed_messages 0, chunks_missing 0" \
	test "$(field '["failed_messages"]')/$(field '["chunks_missing"]')" = "0/0"
check "JSON: goodput and completion percentiles present" \
	python3 -c "import json,sys; j=json.loads(sys.argv[1]); assert j['goodput_MBps'] > 0; c=j['completion_us']; assert 0 < c['p50'] <= c['p99'] <= c['p999'] <= c['max']" "$json"
rm -f "$out" "$srv"
done_testing
