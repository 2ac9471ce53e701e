#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Policy SR against faults a long-haul link has: ACKs lost (netem on the
# receiver's egress only), the link down for 2 s mid-transfer, and the peer
# device removed mid-transfer (both ends must report an error within the
# dead-peer time, nothing hangs, the module unloads; the failed messages
# show up as sdr:sdr_msg_failed events).
. "$(dirname "$0")/lib.sh"

plan 12
sdr_load
perf=$TOP/tools/sdr_perf
tmp=$(mktemp -d)
port=18600

jfield() {	# jfield FILE KEY: a top-level field of the last line's JSON
	tail -n 1 "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])" 2>/dev/null
}

# run_pair NAME CLIENT-ARGS...: server on rxe1, client on rxe0, both --verify.
run_pair() {
	local name=$1
	shift
	port=$((port + 1))
	"$perf" -d rxe1 -P sr -p "$port" --verify >"$tmp/$name.srv" 2>&1 &
	spid=$!
	wait_listen "$port"
	"$perf" -d rxe0 -P sr -p "$port" --verify --json "$@" 198.18.0.2 >"$tmp/$name.cli" 2>&1 &
	cpid=$!
}

# sent N: the client's flow (the only one on rxe0) has sent N messages.
sent() {
	local v
	v=$(cat /sys/class/sdr/rxe0/flows/*/counters/msgs_sent 2>/dev/null | head -n 1)
	[ "${v:-0}" -ge "$1" ]
}
# mid_transfer NAME COUNT: wait until the pair moves data, then say how far
# it got; the fault must hit a transfer under way, not one done or not begun.
mid_transfer() {
	wait_for 120 sent 1 || diag "$1: no message sent after 120 s"
	at=$(cat /sys/class/sdr/rxe0/flows/*/counters/msgs_sent 2>/dev/null | head -n 1)
	diag "$1: fault after ${at:-?} of $2 messages"
	[ "${at:-0}" -ge 1 ] && [ "${at:-0}" -lt "$2" ]
}

# 1. ACK loss: 20% of what rxe1 sends (ACKs, NACKs) is dropped.
tc qdisc add dev veth1 root netem loss 20% limit 100000
run_pair ackloss -s 1M -n 50
wait "$cpid"; crc=$?
wait "$spid"; src=$?
tc qdisc del dev veth1 root
tail -n 3 "$tmp/ackloss.cli" | sed 's/^/# /'
check "ACK loss: both ends exit 0" test "$crc/$src" = 0/0
check "ACK loss: 50 messages, verify_errors 0, failed 0" \
	test "$(jfield "$tmp/ackloss.cli" messages)/$(jfield "$tmp/ackloss.cli" verify_errors)/$(jfield "$tmp/ackloss.cli" failed_messages)" = 50/0/0
retx=$(jfield "$tmp/ackloss.cli" retransmitted_packets)
check "ACK loss: the sender had to retransmit" test "${retx:-0}" -gt 0

# 2. The link goes down for 2 s in the middle of a transfer.
rec0=$(cat /sys/class/sdr/rxe0/counters/qp_recoveries)
run_pair linkdown -s 1M -n 150
mid_transfer linkdown 150; mid=$?
ip link set veth0 down
sleep 2		# the outage itself
ip link set veth0 up
wait "$cpid"; crc=$?
wait "$spid"; src=$?
tail -n 3 "$tmp/linkdown.cli" | sed 's/^/# /'
check "link down 2 s mid-transfer: both ends exit 0" test "$mid/$crc/$src" = 0/0/0
check "link down 2 s: 150 messages, verify_errors 0, failed 0" \
	test "$(jfield "$tmp/linkdown.cli" messages)/$(jfield "$tmp/linkdown.cli" verify_errors)/$(jfield "$tmp/linkdown.cli" failed_messages)" = 150/0/0
# Sends fail while the route is gone: the QP went to ERR and came back,
# each time with every receive buffer posted again (the transfer above
# could not have finished otherwise).
rec=$(( $(cat /sys/class/sdr/rxe0/counters/qp_recoveries) - rec0 ))
check "link down 2 s: rxe0's QP recovered ($rec times)" test "$rec" -gt 0

# 3. The receiver's device disappears mid-transfer.
T=/sys/kernel/tracing
echo >"$T/trace"
echo 1 >"$T/events/sdr/sdr_msg_failed/enable"
echo 3000 >/sys/module/sdr/parameters/dead_ms
run_pair devgone -s 1M -n 100000
mid_transfer devgone 100000; mid=$?
start=$SECONDS
rdma link delete rxe1
# dead_ms (3 s) plus the tools' own give-up time; the bound only catches a
# hang (it does not measure how fast the ends give up).
gone() { ! kill -0 "$cpid" 2>/dev/null && ! kill -0 "$spid" 2>/dev/null; }
wait_for 120 gone; hung=$?
took=$((SECONDS - start))
kill -0 "$cpid" 2>/dev/null && { kill -9 "$cpid"; diag "client hung"; }
kill -0 "$spid" 2>/dev/null && { kill -9 "$spid"; diag "server hung"; }
wait "$cpid"; crc=$?
wait "$spid"; src=$?
diag "both ends gone ${took}s after the delete (client $crc, server $src)"
tail -n 3 "$tmp/devgone.cli" | sed 's/^/# client: /'
tail -n 3 "$tmp/devgone.srv" | sed 's/^/# server: /'
check "device gone mid-transfer: both ends exit, no hang (120 s bound)" \
	test "$mid/$hung" = 0/0
# sdr_perf's error exit is 1; a signal, a usage or a verify error is not it.
check "device gone: the client reports an error (exit 1)" test "$crc" = 1
check "device gone: the server reports an error (exit 1)" test "$src" = 1
echo 0 >"$T/events/sdr/sdr_msg_failed/enable"
nfail=$(grep -c 'sdr_msg_failed:' "$T/trace")
nbad=$(grep 'sdr_msg_failed:' "$T/trace" | grep -vcE 'status=(failed|flushed)$')
grep -m 2 'sdr_msg_failed:' "$T/trace" | sed 's/^/# /'
check "device gone: sdr_msg_failed fired ($nfail events), each failed or flushed" \
	test "$nfail" -gt 0 -a "$nbad" = 0
echo >"$T/trace"
check "device gone: sdr unloads" rmmod sdr
check "rxe1 comes back and sdr binds it again" \
	sh -c "rdma link add rxe1 type rxe netdev veth1 && insmod $KO && test -d /sys/class/sdr/rxe1"
rm -rf "$tmp"
done_testing
