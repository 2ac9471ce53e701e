#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Multipath on one rail: sdr_perf --paths 4 spreads a flow over four QPs of
# rxe0 (each its own UDP source port), --verify checks every byte.  Loss
# free first: every path carries packets.  Then one path loses 10% (a tc
# filter on its UDP source port sends it through netem): SR, EC and
# ADAPTIVE deliver everything, the loss shows on that path only.  Then it
# loses 40%: it is drained (and tested again later), the rest carry on.
. "$(dirname "$0")/lib.sh"

plan 13
sdr_load
echo 60000 >/sys/module/sdr/parameters/none_idle_ms
perf=$TOP/tools/sdr_perf
out=$(mktemp)
srv=$(mktemp)
port=18540

cleanup() {
	tc qdisc del dev veth0 root 2>/dev/null
	rm -f "$out" "$srv"
}
trap cleanup EXIT

read -r -a qpns </sys/class/sdr/rxe0/path_qpns
diag "rxe0 path QPNs: ${qpns[*]}"

# run NAME ARGS...: one sdr_perf pair (server rxe1, client rxe0 with ARGS);
# its client JSON in $json, both exit statuses in $rcs.
run() {
	local name=$1
	shift
	port=$((port + 1))
	"$perf" -d rxe1 -p "$port" -q >"$srv" 2>&1 &
	local spid=$!
	wait_listen "$port"
	"$perf" -d rxe0 -p "$port" -q --json "$@" 198.18.0.2 >"$out" 2>&1
	local crc=$?
	wait "$spid"
	rcs="$crc/$?"
	json=$(tail -n 1 "$out")
	diag "$name: $(printf '%s' "$json" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print("%.1f MB/s, verify errors %d, failed %d;" % (j["goodput_MBps"], j["verify_errors"], j["failed_messages"]),
      "; ".join("path %d: %s tx %s lost %s loss %s%% drains %s" % (p["path"], p["state"], p["tx_packets"], p["lost"], p["loss_pct"], p["drains"]) for p in j["paths"]))' 2>&1)"
	if [ "$rcs" != 0/0 ]; then
		sed 's/^/# client: /' "$out" | tail -n 12
		sed 's/^/# server: /' "$srv" | tail -n 6
	fi
}

# clean NAME: both exited 0, JSON of 4 paths, every message verified.
clean() {
	python3 -c '
import json, sys
j = json.loads(sys.argv[2])
assert sys.argv[1] == "0/0", "exit statuses " + sys.argv[1]
assert j["paths_n"] == 4 and len(j["paths"]) == 4, j["paths"]
assert j["verify_errors"] == 0 and j["failed_messages"] == 0 and j["chunks_missing"] == 0, j
assert j["messages"] == int(sys.argv[3]), j["messages"]' "$rcs" "$json" "$1"
}

# lossy_path QPN PCT: path QPN's packets (rxe's UDP source port for a QP:
# 0xc000 + hash_32(qpn, 14)) go through netem loss PCT; the rest do not.
lossy_path() {
	local sport=$(( 0xc000 + ((($1 * 0x61c88647) & 0xffffffff) >> 18) ))
	tc qdisc del dev veth0 root 2>/dev/null
	tc qdisc add dev veth0 root handle 1: prio bands 2 \
		priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 &&
	tc qdisc add dev veth0 parent 1:1 handle 10: netem limit 100000 loss "$2%" &&
	tc filter add dev veth0 parent 1: protocol ip prio 1 u32 \
		match ip protocol 17 0xff match ip sport "$sport" 0xffff flowid 1:1
}

# figure I NAME: path I's figure NAME from $json.
figure() {
	printf '%s' "$json" | python3 -c "import json,sys; print(json.load(sys.stdin)['paths'][$1]['$2'])"
}

check "the device has 4 paths" test "${#qpns[@]}" -ge 4

run "SR, 4 paths, loss free" -P sr --paths 4 -s 1M -n 50 --verify
check "SR, 4 paths, loss free: all verified" clean 50
# (a loaded host may time a packet out before its answer: 2% at most)
check "SR, 4 paths, loss free: every path carried packets, (almost) none lost" python3 -c '
import json, sys
for p in json.loads(sys.argv[1])["paths"]:
    assert int(p["tx_packets"]) > 1000 and int(p["lost"]) * 50 <= int(p["tx_packets"]), p' "$json"

modprobe -q sch_prio; modprobe -q cls_u32
if ! lossy_path "${qpns[3]}" 10; then
	for i in $(seq 10); do skip "one lossy path" "tc prio/u32 unavailable"; done
	done_testing
fi
diag "$(tc -s qdisc show dev veth0 | tr '\n' ' ')"
for pol in sr ec adaptive; do
	run "$pol, 4 paths, path 3 at 10% loss" -P "$pol" --paths 4 -s 1M -n 50 --verify
	check "$pol, path 3 at 10%: all verified" clean 50
	# EC repairs from parity: the loss shows as packets rebuilt, not as a
	# path's loss (EC answers give a path no evidence)
	if [ "$pol" = ec ]; then
		check "$pol, path 3 at 10%: parity rebuilt its losses" python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["recovered_packets"] > 0, j' "$json"
	else
		# SR's default timers time packets out needlessly in TCG (one
		# path too); what reaches a clean path's figure is at most
		# half of the lossy one's, ADAPTIVE's at most a quarter
		check "$pol, path 3 at 10%: the loss is path 3's" python3 -c '
import json, sys
p = json.loads(sys.argv[2])["paths"]
k = 2 if sys.argv[1] == "sr" else 4
assert int(p[3]["lost"]) > 0 and all(int(x["lost"]) * k <= int(p[3]["lost"]) for x in p[:3]), p' "$pol" "$json"
	fi
done
netem_drops=$(tc -s qdisc show dev veth0 | awk '/netem/ {f=1} f && /dropped/ {gsub(",", ""); print $7; exit}')
check "netem dropped packets of path 3 ($netem_drops)" test "${netem_drops:-0}" -gt 0

lossy_path "${qpns[3]}" 40
run "SR, 4 paths, path 3 at 40% loss" -P sr --paths 4 -s 1M -n 100 --verify
check "SR, path 3 at 40%: all verified" clean 100
check "SR, path 3 at 40%: drained, and carried far less than the others" python3 -c '
import json, sys
p = json.loads(sys.argv[1])["paths"]
assert int(p[3]["drains"]) >= 1, p
assert all(int(p[3]["tx_packets"]) * 3 < int(x["tx_packets"]) for x in p[:3]), p' "$json"
check "SR, path 3 at 40%: its loss figure says so" test "$(figure 3 loss_pct)" -ge 15
done_testing
