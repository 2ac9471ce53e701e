#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sdr_perf end to end: the perftest-style pair with --verify, as a user runs
# it (server on rxe1, client on rxe0), and its JSON summary.
. "$(dirname "$0")/lib.sh"

plan 11
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

# EC with the sender's own geometry (-k/-M): it shows in the JSON, and
# parity went out at m per k data packets (64 packets of a 256 KiB message
# at the default MTU: 16 submessages of 4, 2 parity each)
# (and --times: each message's completion time, both ends)
ctimes=$(mktemp)
stimes=$(mktemp)
"$perf" -d rxe1 -p 18516 --verify --times "$stimes" >"$srv" 2>&1 &
spid=$!
wait_listen 18516
"$perf" -d rxe0 -p 18516 -P ec -k 4 -M 2 -s 256K -n 20 --verify --json \
	--times "$ctimes" 198.18.0.2 >"$out" 2>&1
crc=$?
wait "$spid"
src=$?
json=$(tail -n 1 "$out")
sed 's/^/# ec client: /' "$out" | tail -n 3
check "EC -k 4 -M 2: both exit 0, JSON ec_k 4 ec_m 2, verify_errors 0" \
	test "$crc/$src/$(field '["ec_k"]')/$(field '["ec_m"]')/$(field '["verify_errors"]')" = 0/0/4/2/0
check "EC -k 4 -M 2: its parity, 2 per 4 data packets (the default k 32 m 8 sends half)" python3 -c "
import json, sys
j = json.loads(sys.argv[1])
npk = -(-262144 // j['payload'])
full, kg = divmod(npk, 4)
# a short last submessage of kg packets gets max(ceil(m*kg/k), min(m, kg))
want = 20 * (2 * full + (max(-(-2 * kg // 4), min(2, kg)) if kg else 0))
assert want // 2 < j['parity_packets'] <= want, (j['parity_packets'], want)" "$json"
check "--times: 20 completion times each end, the client's p50 and max its JSON's" python3 -c "
import json, sys
j = json.loads(sys.argv[1])
c = [int(x) for x in open(sys.argv[2])]
s = [int(x) for x in open(sys.argv[3])]
assert len(c) == 20 and len(s) == 20 and min(c) > 0 and min(s) > 0, (c, s)
c.sort()
assert j['completion_us']['p50'] == c[9] and j['completion_us']['max'] == c[-1], (j['completion_us'], c)" \
	"$json" "$ctimes" "$stimes"

# A fixed rate (--rate, FLOW_MODIFY's rate_mbit): SR moves verified data at
# no more than the rate (wire bytes: payload plus the 80-byte header, and
# the window's first burst before the pacer has a clock), and not far below
# it (the guest carries several times 40 Mbit/s); sysfs shows the rate.
"$perf" -d rxe1 -p 18517 --verify >"$srv" 2>&1 &
spid=$!
wait_listen 18517
"$perf" -d rxe0 -p 18517 -P sr --rate 40 -s 1M -D 6 --verify --json \
	198.18.0.2 >"$out" 2>&1 &
cpid=$!
rate_kbit=
for _ in $(seq 40); do
	for f in /sys/class/sdr/rxe0/flows/*/sr/rate_kbit; do
		[ -r "$f" ] && rate_kbit=$(cat "$f")
	done
	[ -n "$rate_kbit" ] && [ "$rate_kbit" != 0 ] && break
	sleep 0.2
done
wait "$cpid"
crc=$?
wait "$spid"
src=$?
json=$(tail -n 1 "$out")
sed 's/^/# rate client: /' "$out" | tail -n 3
check "--rate 40: both exit 0, verify_errors 0, JSON rate_mbit 40, sysfs rate_kbit 40000" \
	test "$crc/$src/$(field '["verify_errors"]')/$(field '["rate_mbit"]')/$rate_kbit" = 0/0/0/40/40000
check "--rate 40: goodput at most 1.05x of 40 Mbit/s (and not stalled: over 0.2x)" python3 -c "
import json, sys
j = json.loads(sys.argv[1])
wire = 40e6 / 8 / 1048576 * j['payload'] / (j['payload'] + 80)
assert 0.2 * wire < j['goodput_MBps'] <= 1.05 * wire, (j['goodput_MBps'], wire)" "$json"
rm -f "$out" "$srv" "$ctimes" "$stimes"
done_testing
