#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sdr between two kernels: tools/sdr-vm --pair boots two guests with one
# end of the link in each (rxe0 on guest a's virtio NIC, rxe1 on b's), as
# two hosts have it; tests/vm/profiles gives the pair a lossy link.  Guest a
# sends under each policy with --verify; guest b receives with --verify,
# which checks every byte it delivers.  These points are a's; b prints its
# own (its output follows a's in the log) and a failure there fails the
# boot (tools/sdr-vm returns b's status when a's is 0).
. "$(dirname "$0")/lib.sh"

[ -n "${SDR_PAIR_ROLE:-}" ] || skip_all "needs a pair of guests (tools/sdr-vm --pair)"
policies="sr ec adaptive"
perf=$TOP/tools/sdr_perf
sdr_load
out=$(mktemp)

if [ "$SDR_PAIR_ROLE" = b ]; then
	plan 4
	check "this guest holds rxe1 and not rxe0" \
		test -e /sys/class/infiniband/rxe1 -a ! -e /sys/class/infiniband/rxe0
	port=18600
	for pol in $policies; do
		port=$((port + 1))
		timeout -k 5 300 "$perf" -d rxe1 -p "$port" --verify >"$out" 2>&1
		rc=$?
		sed 's/^/# server: /' "$out" | tail -n 3
		check "$pol: the receiver exits 0, every byte it delivered verified" test "$rc" = 0
	done
	done_testing
fi

plan 6
check "this guest holds rxe0 and not rxe1" \
	test -e /sys/class/infiniband/rxe0 -a ! -e /sys/class/infiniband/rxe1
tx0=$(cat /sys/class/net/eth0/statistics/tx_packets)
port=18600
repaired=0
for pol in $policies; do
	port=$((port + 1))
	# the client retries its connection until b's server listens
	timeout -k 5 300 "$perf" -d rxe0 -p "$port" -P "$pol" -s 1M -n 40 \
		--verify --json 198.18.0.2 >"$out" 2>&1
	rc=$?
	sed 's/^/# client: /' "$out" | tail -n 3
	json=$(tail -n 1 "$out")
	check "$pol: 40 x 1 MiB sent, exit 0, no verify error, none failed or missing" \
		python3 -c "
import json, sys
rc, j = int(sys.argv[1]), json.loads(sys.argv[2])
assert rc == 0, rc
got = (j['messages'], j['msg_bytes'], j['verify_errors'], j['failed_messages'], j['chunks_missing'])
assert got == (40, 1048576, 0, 0, 0), got" "$rc" "$json"
	n=$(printf '%s' "$json" | python3 -c "import json, sys; j = json.load(sys.stdin); print(j['retransmitted_packets'] + j['recovered_packets'])" 2>/dev/null)
	repaired=$((repaired + ${n:-0}))
done
# 120 MiB crossed the NIC: about 30,000 packets at IB MTU 4096
check "the data crossed eth0 (at least 30,000 packets out)" \
	test $(($(cat /sys/class/net/eth0/statistics/tx_packets) - tx0)) -ge 30000
grep -H . /sys/class/sdr/rxe0/drops/* 2>/dev/null | grep -v ':0$' | sed 's/^/# drops: /'
check "the lossy link cost packets, and they were resent or rebuilt ($repaired)" \
	test "$repaired" -gt 0
rm -f "$out"
done_testing
