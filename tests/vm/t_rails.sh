#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The two-rail test VM (tools/sdr-vm --rails 2 --netem2 "loss 5%", a
# profile boot of its own): rxe2 and rxe3 on a second veth pair, bound by
# sdr, each rail its own link.  sdr_perf --verify over each rail alone:
# the first loses nothing on the wire, the second's netem drops packets
# and SR resends them, every byte verified on both.
. "$(dirname "$0")/lib.sh"

[ "${SDR_RAILS:-1}" = 2 ] || skip_all "needs tools/sdr-vm --rails 2"
plan 8
sdr_load
echo 60000 >/sys/module/sdr/parameters/none_idle_ms
perf=$TOP/tools/sdr_perf
out=$(mktemp)
srv=$(mktemp)
trap 'rm -f "$out" "$srv"' EXIT

check "sdr bound rxe2 and rxe3" test -d /sys/class/sdr/rxe2 -a -d /sys/class/sdr/rxe3
check "rxe2's GID is the second rail's address (198.18.1.1: ::ffff:c612:101)" \
	grep -qi "ffff:c612:0101" /sys/class/sdr/rxe2/gid

# perf NAME SERVER_DEV CLIENT_DEV SERVER_IP PORT: one verified SR transfer.
perf() {
	"$perf" -d "$2" -p "$5" -q >"$srv" 2>&1 &
	local spid=$!
	wait_listen "$5"
	"$perf" -d "$3" -p "$5" -q --json -P sr -s 256K -n 40 --verify "$4" >"$out" 2>&1
	crc=$?
	wait "$spid"
	rcs="$crc/$?"
	json=$(tail -n 1 "$out")
	diag "$1: $rcs $(printf '%s' "$json" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("%.1f MB/s, retransmitted %d, verify errors %d" % (j["goodput_MBps"], j["retransmitted_packets"], j["verify_errors"]))' 2>&1)"
}
verified() {
	python3 -c '
import json, sys
j = json.loads(sys.argv[2])
assert sys.argv[1] == "0/0", sys.argv[1]
assert j["messages"] == 40 and j["verify_errors"] == 0 and j["failed_messages"] == 0, j' "$rcs" "$json"
}
dropped() {
	tc -s qdisc show dev "$1" | awk '/dropped/ { sub(",", "", $7); print $7; exit }'
}

d2=$(dropped veth2)
perf "rail 2 (rxe2 -> rxe3, loss 5%)" rxe3 rxe2 198.18.1.2 18620
check "rail 2: every message verified" verified
d2=$(( $(dropped veth2) - d2 ))
check "rail 2: netem dropped packets of the transfer ($d2)" test "$d2" -gt 0
retx=$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["retransmitted_packets"])')
check "rail 2: SR resent them ($retx)" test "$retx" -gt 0

perf "rail 1 (rxe0 -> rxe1, no netem)" rxe1 rxe0 198.18.0.2 18621
check "rail 1: every message verified" verified
check "rail 1 has no netem: its link is its own" \
	sh -c '! tc qdisc show dev veth0 | grep -q netem'
check "rail 2's netem is on veth2 and veth3 only" \
	sh -c 'tc qdisc show dev veth2 | grep -q "netem.*loss 5%" && tc qdisc show dev veth3 | grep -q "netem.*loss 5%"'
done_testing
