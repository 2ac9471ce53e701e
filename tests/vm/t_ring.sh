#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The receive ring grows with the flows on a device, and receivers state
# their flows' share of it to the senders: sdr loaded with a 64-buffer ring
# (recv_depth=64, the least) that may grow to 1024 (recv_max), 512 buffers
# per flow (flow_rx_window).  An SR transfer whose first window (win_init,
# 256 packets) is four times the bare ring: the receiving device's ring
# grows to 512 for its flow (counters/rx_grown, recv_ring), the sender's
# window stays within the receiver's share (7/8 of 512), every message
# arrives whole and verified, and once idle every buffer is posted again.
. "$(dirname "$0")/lib.sh"

plan 7
sdr_unload
if ! insmod "$KO" recv_depth=64 recv_max=1024 flow_rx_window=512; then
	not_ok "insmod $KO recv_depth=64 recv_max=1024 flow_rx_window=512"
	done_testing
fi
ring() { cat /sys/class/sdr/"$1"/recv_ring; }
cnt() { cat /sys/class/sdr/"$1"/counters/"$2"; }

check "at bind: 64 made, 64 posted, at most 1024; rx_grown 0" \
	test "$(ring rxe1)/$(cnt rxe1 rx_grown)" = "64 64 1024/0"

perf=$TOP/tools/sdr_perf
out=$(mktemp)
srv=$(mktemp)
"$perf" -d rxe1 -p 18530 --verify >"$srv" 2>&1 &
spid=$!
wait_listen 18530
"$perf" -d rxe0 -p 18530 -P sr -s 4M -n 30 -m 4 --verify --json 198.18.0.2 >"$out" 2>&1 &
cpid=$!
# the sender's window while it runs (its flow is the one on rxe0)
maxwin=0
while kill -0 "$cpid" 2>/dev/null; do
	for f in /sys/class/sdr/rxe0/flows/*/sr/window; do
		[ -r "$f" ] || continue
		w=$(cat "$f" 2>/dev/null) || continue
		[ "${w:-0}" -gt "$maxwin" ] && maxwin=$w
	done
	sleep 0.05
done
wait "$cpid"
crc=$?
wait "$spid"
src=$?
json=$(tail -n 1 "$out")
sed 's/^/# client: /' "$out" | tail -n 4
diag "rxe1 recv_ring $(ring rxe1), rx_grown $(cnt rxe1 rx_grown); the sender's largest window $maxwin"
field() { printf '%s' "$json" | python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
check "SR 30 x 4 MiB: both exit 0, verify_errors 0, failed 0" \
	test "$crc/$src/$(field '["verify_errors"]')/$(field '["failed_messages"]')" = 0/0/0/0
check "the receiving ring grew to 512 for its flow: 512 made, rx_grown 448" \
	test "$(ring rxe1 | cut -d' ' -f1,3)/$(cnt rxe1 rx_grown)" = "512 1024/448"
check "the sender's window stayed within the receiver's share (448)" \
	test "$maxwin" -le 448 -a "$maxwin" -ge 16
# shellcheck disable=SC2317
all_posted() { read -r m p _ <<<"$(ring rxe1)"; [ "$m" = "$p" ]; }
check "idle: every buffer made is posted again" wait_for 30 all_posted
check "a second device's ring grew too (its flow sent): rxe0 512 made" \
	test "$(ring rxe0 | cut -d' ' -f1)" = 512
rm -f "$out" "$srv"
sdr_unload
check "unloads" test ! -d /sys/module/sdr
done_testing
