#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Receive errors never shrink a device's receive ring (issue #40, finding
# 5).  A rogue (tests/vm/bin/rogue --oversize) sends raw RoCEv2 frames to
# rxe1's sdr QP, with its Q_Key and a right ICRC, each longer than an sdr
# receive buffer takes (4097..8948 bytes of payload; the veths' MTU is
# 9000).  rxe of 6.1 completes the receive each one meets with
# IB_WC_LOC_QP_OP_ERR and puts the QP in ERR; sdr must post the buffer
# again, recover the QP and keep every flow on the device moving.
#
# While an SR pair (rxe0 -> rxe1, --verify) runs: SDR_RXERR_PACED (500)
# frames one at a time, each once the QP is back, so each meets a ready
# QP: rx_errors and its reason (rx_err_local) rise by exactly that many,
# as does qp_recoveries; then 10,000 at full speed: rxe drops those that
# come while the QP is in ERR, so the errors are at least one and at most
# what rxe took (hw_counters/rcvd_pkts), one recovery each.  After each,
# the ring is full again (recv_ring: made == posted, as many as before),
# on the same QPN.  The pair then moves more messages, and all it sent is
# delivered whole and verified; a fresh pair moves 4 x 4 MiB over SR,
# every byte verified, with no receive error.  The log line is ratelimited.
. "$(dirname "$0")/lib.sh"

plan 15
sdr_unload
check "loads" insmod "$KO"
perf=$TOP/tools/sdr_perf
rogue=$TOP/tests/vm/bin/rogue
[ -x "$rogue" ] || diag "tests/vm/bin/rogue not built"
tmp=$(mktemp -d)
paced=${SDR_RXERR_PACED:-500}
burst=10000
t0=$SECONDS
klog0=$(dmesg | wc -l)

cnt() { cat /sys/class/sdr/rxe1/counters/"$1"; }
qpn() { cut -d' ' -f1 /sys/class/sdr/"$1"/path_qpns; }
jfield() {	# jfield FILE KEY: a field of the file's last line (JSON)
	tail -n 1 "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])" 2>/dev/null
}
# sent DEV N: the device's flow has sent at least N messages.
msgs_sent() { cat /sys/class/sdr/rxe0/flows/*/counters/msgs_sent 2>/dev/null | head -n 1; }
sent_at_least() { [ "$(msgs_sent)" -ge "$1" ] 2>/dev/null; }

qpn1=$(qpn rxe1)
R=("$rogue" -d rxe1 -p rxe0 --qpn "$qpn1" --peer-qpn "$(qpn rxe0)" --json -s 40)

# An SR pair that runs through the flood (stopped by SIGINT after it).
"$perf" -d rxe1 -p 18940 --verify -q >"$tmp/run.srv" 2>&1 &
spid=$!
wait_listen 18940
"$perf" -d rxe0 -p 18940 -P sr -s 1M -n 1000000 -q --verify --json \
	198.18.0.2 >"$tmp/run.cli" 2>&1 &
cpid=$!
wait_for 60 sent_at_least 1 || diag "the pair sent nothing in 60 s"
# the ring grew for the pair's flow (t_ring): the size to come back to
ring_full() { read -r m p _ </sys/class/sdr/rxe1/recv_ring; [ "$m" = "$p" ]; }
wait_for 30 ring_full || diag "rxe1's ring not full: $(cat /sys/class/sdr/rxe1/recv_ring)"
ring0=$(cut -d' ' -f1 /sys/class/sdr/rxe1/recv_ring)

# 1. paced: every frame meets a ready QP and makes one receive error.
"${R[@]}" --oversize "$paced" --paced >"$tmp/paced" 2>&1
rc=$?
sed 's/^/# /' "$tmp/paced" | head -n 5
f() { jfield "$tmp/paced" "$1"; }
check "paced: rogue exit 0 (each frame made an error, the QP came back)" test "$rc" = 0
check "paced: rx_errors +$paced, all rx_err_local (rxe's IB_WC_LOC_QP_OP_ERR)" \
	test "$(f rx_errors)/$(f rx_err_local)/$(f rx_err_length)/$(f rx_err_other)" = "$paced/$paced/0/0"
check "paced: qp_recoveries +$paced (rxe puts the QP in ERR each time)" \
	test "$(f qp_recoveries)" = "$paced"
check "paced: the ring full again, $ring0 buffers as before" \
	test "$(f made_before)/$(f made)/$(f posted)/$(f ring_full)" = "$ring0/$ring0/$ring0/True"

# 2. a burst: the QP is in ERR most of it; rxe drops what comes then.
"${R[@]}" --oversize "$burst" >"$tmp/burst" 2>&1
rc=$?
sed 's/^/# /' "$tmp/burst" | head -n 5
g() { jfield "$tmp/burst" "$1"; }
check "burst: rogue exit 0, $burst frames sent" test "$rc/$(g oversize)" = "0/$burst"
e=$(g rx_errors)
check "burst: 1 <= rx_errors ($e) <= what rxe took ($(g rcvd_pkts)), = length + local + other" \
	test "${e:-0}" -ge 1 -a "${e:-0}" -le "$(g rcvd_pkts)" -a \
	"${e:-0}" = "$(($(g rx_err_length) + $(g rx_err_local) + $(g rx_err_other)))"
check "burst: one QP recovery per error" test "$(g qp_recoveries)" = "$e"
check "burst: the ring full again, $ring0 buffers, the same QPN" \
	test "$(g made)/$(g posted)/$(g ring_full)/$(qpn rxe1)" = "$ring0/$ring0/True/$qpn1"

# 3. the pair still moves: more messages after the flood, then stop it.
at=$(msgs_sent)
diag "the flood took $((SECONDS - t0)) s"
wait_for 120 sent_at_least $((at + 8)) || diag "the pair stalled at $(msgs_sent) messages"
kill -INT "$cpid"
wait "$cpid"
crc=$?
wait "$spid"
src=$?
tail -n 1 "$tmp/run.cli" | cut -c1-300 | sed 's/^/# /'
h() { jfield "$tmp/run.cli" "$1"; }
diag "the pair: $(h sent_messages) messages, $at of them by the flood's end; at $((SECONDS - t0)) s"
check "through the flood: both exit 0, 8 more messages after it" \
	test "$crc/$src/$(($(h sent_messages) >= at + 8))" = 0/0/1
check "through the flood: all sent delivered, verified (verify_errors 0, failed 0)" \
	test "$(h sent_messages)/$(h verify_errors)/$(h failed_messages)" = "$(h send_ok)/0/0" -a \
	"$(h send_ok)" = "$(h recv_ok)"

# 4. a fresh pair after the flood, every byte verified, no receive error.
err0=$(cnt rx_errors)
"$perf" -d rxe1 -p 18941 --verify -q >"$tmp/after.srv" 2>&1 &
spid=$!
wait_listen 18941
"$perf" -d rxe0 -p 18941 -P sr -s 4M -n 4 -q --verify --json 198.18.0.2 >"$tmp/after.cli" 2>&1
crc=$?
wait "$spid"
src=$?
k() { jfield "$tmp/after.cli" "$1"; }
check "after: SR 4 x 4 MiB, both exit 0, delivered whole and verified" \
	test "$crc/$src/$(k recv_ok)/$(k delivered_bytes)/$(k verify_errors)/$(k failed_messages)" = "0/0/4/16777216/0/0"
check "after: no receive error without the rogue" test "$(cnt rx_errors)" = "$err0"

# 5. the log: ratelimited (printk's default, 10 lines per 5 s and call site).
secs=$((SECONDS - t0 + 1))
lines=$(dmesg | tail -n +$((klog0 + 1)) | grep -c "receive completion error")
diag "$lines lines of receive errors in $secs s for $((paced + e)) errors"
check "the error log is ratelimited" test "$lines" -le $((10 * (secs / 5 + 2)))

rm -rf "$tmp"
sdr_unload
check "unloads" test ! -d /sys/module/sdr
done_testing
