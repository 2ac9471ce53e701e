#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/sdr-allreduce: a ring all-reduce of 4 ranks (4 processes, ranks
# alternating rxe0 and rxe1 so every hop crosses the link) over SR, EC and
# ADAPTIVE flows, ADAPTIVE with each ring step a group, and over TCP (odd
# ranks in the peer namespace): every step's float32 sums equal what the
# ranks' inputs add up to, and every group completes OK with its send and
# its receive.  A ring
# whose neighbours would share a device is refused, and a rank that cannot
# set up (a device that does not exist) makes the run fail with a message,
# not hang.
. "$(dirname "$0")/lib.sh"

plan 6
sdr_load
ar=$TOP/tools/sdr-allreduce
out=$(mktemp)
# under a lossy profile (tests/vm/profiles) the groups' repairs show
lossy=clean
tc qdisc show dev veth0 | grep -q 'netem.* loss' && lossy=lossy
trap 'rm -f "$out"' EXIT

"$ar" -n 4 -d "$SDR_DEV0,$SDR_DEV1" -s 256K -i 8 -P sr,ec,adaptive,adaptive+groups \
	--tcp "${SDR_TCP_IP0:-198.19.0.1},$SDR_TCP_IP" --tcp-netns "$SDR_PEER_NS" --json >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out" | tail -n 6
json=$(tail -n 1 "$out")
check "4 ranks, SR/EC/ADAPTIVE/ADAPTIVE+groups/TCP: exit 0" test "$rc" = 0
check "every step's sums verified (JSON)" python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["ranks"] == 4 and j["steps"] == 8 and j["verified"] is True, j
runs = {r["transport"]: r for r in j["runs"]}
assert sorted(runs) == ["adaptive", "adaptive+groups", "ec", "sr", "tcp"], runs
for r in runs.values():
    assert r["wrong_floats"] == 0 and 0 < r["p50_ms"] <= r["p99_ms"] <= r["max_ms"], r
# only grouped messages are urgent; with loss, their NACKed resends go twice
assert all(runs[t]["urgent_dups"] == 0 for t in ("sr", "ec", "adaptive")), runs
if sys.argv[2] == "lossy":
    assert runs["adaptive+groups"]["urgent_dups"] > 0, runs' "$json" "$lossy"

# 3 ranks over 2 devices: ranks 2 and 0 would share rxe0, refused up front
"$ar" -n 3 -d "$SDR_DEV0,$SDR_DEV1" -s 3072 -i 3 -P sr >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out" | tail -n 2
check "neighbours on one device: refused (exit 2)" test "$rc" = 2
check "... naming the ranks and the device" grep -q "ranks 2 and 0 would share device $SDR_DEV0" "$out"

"$ar" -n 2 -d "$SDR_DEV0,nosuchdev" -s 4096 -i 1 -P sr -t 60 >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out" | tail -n 3
check "a rank on a missing device: exit 1" test "$rc" = 1
check "... and it says which rank and why" grep -q "rank 1: open nosuchdev" "$out"
done_testing
