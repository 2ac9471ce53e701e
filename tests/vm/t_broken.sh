#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A device whose QP cannot be recovered after a transport error is broken:
# every flow on it fails at once (not at dead-peer time), new work gets
# EIO, and removing the device and adding it again brings sdr back.  The
# failure is injected with the module parameter fail_qp_recovery; the
# transport error is real (rxe fails sends while the link is down).
. "$(dirname "$0")/lib.sh"

plan 7
sdr_load
P=/sys/module/sdr/parameters
perf=$TOP/tools/sdr_perf
tmp=$(mktemp -d)
port=18700
old_dead=$(cat "$P/dead_ms")

# The client's peer (rxe1) learns of nothing: its own dead-peer time ends it.
echo 3000 >"$P/dead_ms"
echo 1 >"$P/fail_qp_recovery"
"$perf" -d rxe1 -P sr -p "$port" --verify >"$tmp/srv" 2>&1 &
spid=$!
wait_listen "$port"
"$perf" -d rxe0 -P sr -p "$port" --verify -s 1M -n 100000 198.18.0.2 >"$tmp/cli" 2>&1 &
cpid=$!
sent() {
	local v
	v=$(cat /sys/class/sdr/rxe0/flows/*/counters/msgs_sent 2>/dev/null | head -n 1)
	[ "${v:-0}" -ge 1 ]
}
wait_for 120 sent || diag "no message sent after 120 s"
ip link set veth0 down
broke() { dmesg | grep -q 'rxe0: cannot recover the QP'; }
wait_for 120 broke; rc_broke=$?
ip link set veth0 up
check "the link down breaks rxe0: its QP recovery fails" test "$rc_broke" = 0
gone() { ! kill -0 "$cpid" 2>/dev/null && ! kill -0 "$spid" 2>/dev/null; }
wait_for 120 gone || { kill -9 "$cpid" "$spid" 2>/dev/null; diag "a side hung"; }
wait "$cpid"; crc=$?
wait "$spid"; src=$?
tail -n 2 "$tmp/cli" | sed 's/^/# client: /'
tail -n 2 "$tmp/srv" | sed 's/^/# server: /'
check "the client on the broken device reports an error (exit 1)" test "$crc" = 1
check "the server reports its silent peer (exit 1)" test "$src" = 1

# New work on the broken device: EIO.
"$perf" -d rxe1 -P sr -p $((port + 1)) >"$tmp/srv1" 2>&1 &
spid=$!
wait_listen $((port + 1))
"$perf" -d rxe0 -P sr -p $((port + 1)) -n 1 198.18.0.2 >"$tmp/again" 2>&1
kill "$spid" 2>/dev/null
wait "$spid"
grep -m 1 -i 'error' "$tmp/again" | sed 's/^/# /'
check "a new flow on the broken device fails with EIO" \
	grep -qi 'input/output error' "$tmp/again"

echo 0 >"$P/fail_qp_recovery"
echo "$old_dead" >"$P/dead_ms"
check "removing the broken device releases it" rdma link delete rxe0
check "added again, sdr binds it" \
	sh -c "rdma link add rxe0 type rxe netdev veth0 && wait_ok() { for i in \$(seq 100); do test -d /sys/class/sdr/rxe0 && return 0; sleep 0.1; done; return 1; }; wait_ok"

# And it moves data again, every byte checked.
"$perf" -d rxe1 -P sr -p $((port + 2)) --verify >"$tmp/srv2" 2>&1 &
spid=$!
wait_listen $((port + 2))
"$perf" -d rxe0 -P sr -p $((port + 2)) --verify -s 256K -n 20 198.18.0.2 >"$tmp/cli2" 2>&1
crc=$?
wait "$spid"; src=$?
tail -n 1 "$tmp/cli2" | sed 's/^/# /'
check "the device moves verified data again" test "$crc/$src" = 0/0
rm -rf "$tmp"
done_testing
