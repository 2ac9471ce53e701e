#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Receive errors never shrink a device's receive ring (issue #40, finding
# 5).  A rogue (tests/vm/bin/rogue --oversize) sends raw RoCEv2 frames to
# rxe1's sdr QP, with its Q_Key and a right ICRC, each longer than an sdr
# receive buffer takes (4097..8948 bytes of payload; the veths' MTU is
# 9000).  rxe of 6.1 would fail such a receive with IB_WC_LOC_QP_OP_ERR
# and put the QP in ERR; sdr's spill area behind every buffer takes the
# rest of the message, so each must end as one rx_err_length, the buffer
# posted again, the QP untouched.
#
# 1. 10,000 frames at the idle device: rx_errors and rx_err_length rise
#    by what rxe took (hw_counters/rcvd_pkts), all that was sent, no QP
#    recovery; the ring full again (recv_ring: made == posted, as many as
#    before), on the same QPN.
# 2. 10,000 more (2000/s) while an SR pair (rxe0 -> rxe1, --verify, 20
#    Mbit/s) runs: the same counts; the pair moves on after the flood and
#    everything it sent is delivered whole and verified.
# 3. a fresh SR pair moves 4 x 4 MiB, every byte verified, no receive
#    error.  The log line is ratelimited.
. "$(dirname "$0")/lib.sh"

plan 13
sdr_unload
check "loads" insmod "$KO"
perf=$TOP/tools/sdr_perf
rogue=$TOP/tests/vm/bin/rogue
[ -x "$rogue" ] || diag "tests/vm/bin/rogue not built"
tmp=$(mktemp -d)
n=10000
t0=$SECONDS
klog0=$(dmesg | wc -l)

cnt() { cat /sys/class/sdr/rxe1/counters/"$1"; }
qpn() { cut -d' ' -f1 /sys/class/sdr/"$1"/path_qpns; }
made() { cut -d' ' -f1 /sys/class/sdr/rxe1/recv_ring; }
jfield() {	# jfield FILE KEY: a field of the file's last line (JSON)
	tail -n 1 "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])" 2>/dev/null
}
msgs_sent() { cat /sys/class/sdr/rxe0/flows/*/counters/msgs_sent 2>/dev/null | head -n 1; }
sent_at_least() { [ "$(msgs_sent)" -ge "$1" ] 2>/dev/null; }
ring_full() { read -r m p _ </sys/class/sdr/rxe1/recv_ring; [ "$m" = "$p" ]; }

qpn1=$(qpn rxe1)
R=("$rogue" -d rxe1 -p rxe0 --qpn "$qpn1" --peer-qpn "$(qpn rxe0)" --json -s 40)

# 1. at the idle device
ring0=$(made)
"${R[@]}" --oversize "$n" -r 0 >"$tmp/idle" 2>&1
rc=$?
sed 's/^/# /' "$tmp/idle" | head -n 3
f() { jfield "$tmp/idle" "$1"; }
check "idle: rogue exit 0, $n frames, rxe took them all" \
	test "$rc/$(f oversize)/$(f rcvd_pkts)" = "0/$n/$n"
check "idle: rx_errors and rx_err_length +$n, nothing else, no QP recovery" \
	test "$(f rx_errors)/$(f rx_err_length)/$(f rx_err_local)/$(f rx_err_other)/$(f qp_recoveries)" = "$n/$n/0/0/0"
check "idle: the ring full again, $ring0 buffers, the same QPN" \
	test "$(f made)/$(f posted)/$(f ring_full)/$(qpn rxe1)" = "$ring0/$ring0/True/$qpn1"

# 2. under an SR pair, 20 Mbit/s: unpaced it would take both guest CPUs
"$perf" -d rxe1 -p 18940 --verify -q >"$tmp/run.srv" 2>&1 &
spid=$!
wait_listen 18940
"$perf" -d rxe0 -p 18940 -P sr -s 256K -n 1000000 --rate 20 -q --verify \
	--json 198.18.0.2 >"$tmp/run.cli" 2>&1 &
cpid=$!
wait_for 60 sent_at_least 1 || diag "the pair sent nothing in 60 s"
# the ring grew for the pair's flow (t_ring): the size to come back to
wait_for 30 ring_full || diag "rxe1's ring not full: $(cat /sys/class/sdr/rxe1/recv_ring)"
ring1=$(made)
"${R[@]}" --oversize "$n" -r 2000 >"$tmp/busy" 2>&1
rc=$?
sed 's/^/# /' "$tmp/busy" | head -n 3
g() { jfield "$tmp/busy" "$1"; }
check "busy: rogue exit 0, rx_errors and rx_err_length +$n, no QP recovery" \
	test "$rc/$(g rx_errors)/$(g rx_err_length)/$(g qp_recoveries)" = "0/$n/$n/0"
check "busy: the ring full again, $ring1 buffers, the same QPN" \
	test "$(g made)/$(g ring_full)/$(qpn rxe1)" = "$ring1/True/$qpn1"
at=$(msgs_sent)
wait_for 120 sent_at_least $((at + 8)) || diag "the pair stalled at $(msgs_sent) messages"
kill -INT "$cpid"
wait "$cpid"
crc=$?
wait "$spid"
src=$?
h() { jfield "$tmp/run.cli" "$1"; }
diag "the pair: $(h sent_messages) messages, $at of them by the flood's end"
check "busy: the pair exits 0 and sent 8 more messages after the flood" \
	test "$crc/$src/$(($(h sent_messages) >= at + 8))" = 0/0/1
check "busy: all it sent delivered, verified (verify_errors 0, failed 0)" \
	test "$(h sent_messages)/$(h verify_errors)/$(h failed_messages)" = "$(h send_ok)/0/0" -a \
	"$(h send_ok)" = "$(h recv_ok)"

# 3. a fresh pair after the floods, every byte verified, no receive error.
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
check "rxe1's totals: rx_errors = length + local + other = $((2 * n))" \
	test "$(cnt rx_errors)/$(($(cnt rx_err_length) + $(cnt rx_err_local) + $(cnt rx_err_other)))" = "$((2 * n))/$((2 * n))"

# 4. the log: ratelimited (printk's default, 10 lines per 5 s a call site).
secs=$((SECONDS - t0 + 1))
lines=$(dmesg | tail -n +$((klog0 + 1)) | grep -c "longer than a receive buffer\|receive completion error")
diag "$lines lines of receive errors in $secs s for $((2 * n)) errors"
check "the error log is ratelimited" test "$lines" -le $((10 * (secs / 5 + 2)))

rm -rf "$tmp"
sdr_unload
check "unloads" test ! -d /sys/module/sdr
done_testing
