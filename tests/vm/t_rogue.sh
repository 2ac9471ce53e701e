#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Hostile and stale input.  While an sdr_perf pair (authenticated, its
# default) moves verified messages from rxe0 to rxe1 under each policy, two
# rogues (tests/vm/bin/rogue) spray forged packets at both ends' sdr QPs for
# the whole transfer, each posing as the other end with the target's Q_Key
# (read from sysfs): raw RoCEv2 frames with the peer's address and QPN, and
# sends from a UD QP of their own; blind forgeries of every type aimed at
# the real flow ids (read from sysfs: a guess that hit) and at unknown ids,
# truncated and malformed headers; and, from genuine frames captured from
# the veth, replays as they were and copies altered under their tag (payload
# bytes, ts or imm, or a fresh packet number).  The transfer must not
# notice: exit 0, no verify error, under SR and EC every message sent
# delivered and acknowledged (send_ok == recv_ok == sent_messages), no flow
# failed or closed by anyone but its peer; and every forgery is dropped
# under the reason the rogue predicts from the receiver's own parser and
# the order of its checks: bad_token for a blind packet, bad_tag for a copy,
# replay for a replay, at a live flow; no_flow at an id that has none.
# Each policy's run must have made both devices drop copies as bad_tag and
# replays as replay.  Under NONE nothing is retransmitted, so only verify
# and the drops are checked.
. "$(dirname "$0")/lib.sh"

read -ra policies <<<"${SDR_ROGUE_POLICIES:-none sr ec adaptive}"
plan $((2 + 9 * ${#policies[@]}))
sdr_load
rogue=$TOP/tests/vm/bin/rogue
perf=$TOP/tools/sdr_perf
# make builds both: a missing one fails the points below, it is no skip.
[ -x "$rogue" ] || diag "tests/vm/bin/rogue not built"
[ -x "$perf" ] || diag "tools/sdr_perf not built"
tmp=$(mktemp -d)
port=18700
rate=${SDR_ROGUE_RATE:-300}	# packets per second, per rogue
seed=${SDR_ROGUE_SEED:-1}
npkts=${SDR_ROGUE_PACKETS:-800}	# per rogue before the transfer may end
T=/sys/kernel/tracing

pair_connected() {
	grep -qx connected /sys/class/sdr/rxe0/flows/*/state 2>/dev/null &&
		grep -qx connected /sys/class/sdr/rxe1/flows/*/state 2>/dev/null
}

# snap DEV FILE: the device's drop counters, and rxe's and sdr's packets in.
snap() {
	local d=$1 f
	{
		for f in /sys/class/sdr/"$d"/drops/*; do
			echo "${f##*/} $(cat "$f")"
		done
		echo "rxe_rcvd $(cat /sys/class/infiniband/"$d"/ports/1/hw_counters/rcvd_pkts)"
		echo "sdr_rx $(cat /sys/class/sdr/"$d"/counters/rx_packets)"
		echo "msgs_failed $(cat /sys/class/sdr/"$d"/counters/msgs_failed)"
	} >"$2"
}

# show STATUS NAME OUTPUT: one point from STATUS, OUTPUT as diagnostics.
show() {
	printf '%s\n' "$3" | sed 's/^#* *//; s/^/# /'
	if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi
}

# ---- rxe takes the rogue's raw frames, and only with a right ICRC ----
port=$((port + 1))
t0=$SECONDS
"$perf" -d rxe1 -p "$port" -q >"$tmp/probe.srv" 2>&1 &
spid=$!
wait_listen "$port"
"$perf" -d rxe0 -p "$port" -q -P none -s 64K -D 600 198.18.0.2 >"$tmp/probe.cli" 2>&1 &
cpid=$!
wait_for 60 pair_connected || diag "probe pair not connected after 60 s"
for d in rxe1:rxe0 rxe0:rxe1; do
	out=$("$rogue" -d "${d%:*}" -p "${d#*:}" --probe 20 2>&1)
	show "$?" "${d%:*}: raw frames posing as ${d#*:} pass rxe (no_flow +20), a wrong ICRC does not" "$out"
done
kill -INT "$cpid"
wait "$cpid"
wait "$spid"
diag "the probes took $((SECONDS - t0)) s"

# check_drops NAME ROGUE-JSON BEFORE AFTER: the forgeries at one device
# landed in the drop counters the rogue predicted.
check_drops() {
	python3 - "$@" <<'EOF'
import json, sys
name, rj, before, after = sys.argv[1:5]
r = json.loads(open(rj).read().splitlines()[-1])
rd = lambda f: {l.split()[0]: int(l.split()[1]) for l in open(f)}
b, a = rd(before), rd(after)
d = {k: a[k] - b[k] for k in a}
# frames rxe took but sdr never received (no receive posted): the only
# way a forgery can miss its counter, or a replay's original the window
lost = max(0, d.pop("rxe_rcvd") - d.pop("sdr_rx"))
exp, late, unsure = r["expect"], r["late_by"], r["unsure"]
# what was aimed at a known flow: if confirmed (the flow was there a
# second later) in its own counter; if late, there or in no_flow
flow_reasons = ("bad_token", "bad_tag", "replay")
print("# %s: sent %d (blind %d, replayed %d, copied %d), expected %s, "
      "late %s, unsure %s; drops %s; rxe lost %d"
      % (name, r["sent"], r["blind"], r["shapes"]["replay"][0],
         r["shapes"]["copied"][0], exp, late, unsure,
         {k: v for k, v in d.items() if v and k != "msgs_failed"}, lost))
bad = []
for k, v in exp.items():
    if k not in flow_reasons + ("no_flow",) and not v - lost <= d[k]:
        bad.append("%s: %d < %d" % (k, d[k], v - lost))
for k in flow_reasons:
    lo = exp.get(k, 0) - lost
    hi = exp.get(k, 0) + late.get(k, 0) + unsure.get(k, 0)
    if not lo <= d[k] <= hi:
        bad.append("%s %d not in [%d, %d]" % (k, d[k], lo, hi))
want = sum(exp.get(k, 0) + late.get(k, 0) for k in flow_reasons) + \
    exp.get("no_flow", 0) - lost
got = sum(d[k] for k in flow_reasons) + d["no_flow"]
if got < want:
    bad.append("%s + no_flow %d < %d" % (" + ".join(flow_reasons), got, want))
if r["blind"] == 0 or exp.get("bad_token", 0) == 0:
    bad.append("nothing blind aimed at a live flow")
for b_ in bad:
    print("# " + b_)
sys.exit(1 if bad else 0)
EOF
}

# rose BEFORE AFTER COUNTER: how much COUNTER rose between two snaps.
rose() {
	echo $(($(awk -v k="$3" '$1 == k { print $2 }' "$2") -
		$(awk -v k="$3" '$1 == k { print $2 }' "$1")))
}

# marked FILE PID: the rogue sent its --mark packets, or is gone.
marked() { grep -q '^rogue: mark' "$1" || ! kill -0 "$2" 2>/dev/null; }

# jf FILE EXPR: evaluate EXPR with j = the JSON on FILE's last line.
jf() {
	python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print($2)" "$1" 2>/dev/null
}

for pol in "${policies[@]}"; do
	port=$((port + 1))
	seed=$((seed + 2))
	snap rxe0 "$tmp/$pol.b0"
	snap rxe1 "$tmp/$pol.b1"
	echo >"$T/trace"
	echo 1 >"$T/events/sdr/sdr_flow_state/enable"
	"$perf" -d rxe1 -p "$port" -q --verify --json >"$tmp/$pol.srv" 2>&1 &
	spid=$!
	wait_listen "$port"
	# The rogues wait for the flows and spray until they are gone (or
	# for 600 s, a hang bound): they cover the whole transfer, which
	# ends (SIGINT: the client stops posting, drains, exits 0) once both
	# sent their $npkts packets, however long that takes.
	"$rogue" -d rxe1 -p rxe0 -r "$rate" -s "$seed" -t 600 --wait 60 \
		--mark "$npkts" --until-gone -q --json >"$tmp/$pol.r1" 2>&1 &
	r1=$!
	"$rogue" -d rxe0 -p rxe1 -r "$rate" -s "$((seed + 1))" -t 600 --wait 60 \
		--mark "$npkts" --until-gone -q --json >"$tmp/$pol.r0" 2>&1 &
	r0=$!
	t0=$SECONDS
	"$perf" -d rxe0 -p "$port" -q -P "$pol" -s 256K -D 600 --verify \
		--json 198.18.0.2 >"$tmp/$pol.cli" 2>&1 &
	cpid=$!
	wait_for 600 marked "$tmp/$pol.r1" "$r1" ||
		diag "$pol: the rogue at rxe1 never sent $npkts packets"
	wait_for 600 marked "$tmp/$pol.r0" "$r0" ||
		diag "$pol: the rogue at rxe0 never sent $npkts packets"
	kill -INT "$cpid"
	wait "$cpid"
	crc=$?
	diag "$pol: the client ran $((SECONDS - t0)) s"
	wait "$spid"
	src=$?
	wait "$r1"
	rr1=$?
	wait "$r0"
	rr0=$?
	diag "$pol: server and rogues done $((SECONDS - t0)) s after the client started"
	echo 0 >"$T/events/sdr/sdr_flow_state/enable"
	snap rxe0 "$tmp/$pol.a0"
	snap rxe1 "$tmp/$pol.a1"
	tail -n 1 "$tmp/$pol.cli" | sed "s/^/# $pol client: /"
	grep -v '^{' "$tmp/$pol.srv" | tail -n 3 | sed "s/^/# $pol server: /"
	for f in r1 r0; do
		grep -v '^{\|^rogue: mark' "$tmp/$pol.$f" | sed "s/^/# $pol rogue $f: /"
		tail -n 1 "$tmp/$pol.$f" | sed "s/^/# $pol rogue $f: /"
	done

	check "$pol: sdr_perf exits 0 on both ends, both rogues too" \
		test "$crc/$src/$rr1/$rr0" = 0/0/0/0
	check "$pol: verify_errors 0 (client's and server's view)" \
		test "$(jf "$tmp/$pol.cli" 'j["verify_errors"]')/$(jf "$tmp/$pol.srv" 'j["verify_errors"]')" = 0/0
	if [ "$pol" = none ]; then
		skip "$pol: every message delivered and acknowledged" "NONE does not retransmit"
		skip "$pol: no flow failed or closed but by its peer" "NONE ends messages partial instead"
	else
		c=$(jf "$tmp/$pol.cli" '"%d/%d/%d/%d/%d/%d/%d" % (j["sent_messages"], j["send_ok"], j["recv_ok"], j["send_failed"], j["failed_messages"], j["partial_messages"], j["chunks_missing"])')
		diag "$pol: sent/send_ok/recv_ok/send_failed/failed/partial/chunks_missing = ${c:-(no JSON report from the client)}"
		check "$pol: every message sent delivered and acknowledged (send_ok == recv_ok == sent, nothing failed or partial)" \
			python3 -c 'import sys; v = [int(x) for x in sys.argv[1].split("/")]; assert v[0] > 0 and v[0] == v[1] == v[2] and v[3:] == [0, 0, 0, 0]' "${c:-0/0/0/0/0/0/0}"
		# A forged CLOSE or a dead-peer verdict shows as a state change;
		# the only legitimate one is the close of the flow whose peer was
		# destroyed first, at the end.
		states=$(grep -o 'sdr_flow_state: .*' "$T/trace")
		printf '%s\n' "$states" | sed "s/^/# $pol: /"
		nfail=$(grep -c -- '-> failed' <<<"$states")
		nclosed=$(grep -c -- 'connected -> closed' <<<"$states")
		f0=$(($(grep msgs_failed "$tmp/$pol.a0" | cut -d' ' -f2) - $(grep msgs_failed "$tmp/$pol.b0" | cut -d' ' -f2)))
		f1=$(($(grep msgs_failed "$tmp/$pol.a1" | cut -d' ' -f2) - $(grep msgs_failed "$tmp/$pol.b1" | cut -d' ' -f2)))
		check "$pol: no flow failed or closed but by its peer (failed $nfail, closed $nclosed <= 1, msgs_failed +$f0 +$f1)" \
			test "$nfail/$((nclosed <= 1))/$f0/$f1" = 0/1/0/0
	fi
	check "$pol: rogue at rxe1 sent raw, verbs, replayed and copied frames, all taken" \
		python3 -c 'import json,sys; j=json.loads(open(sys.argv[1]).read().splitlines()[-1]); s=j["shapes"]; raw=sum(v[0] for v in s.values()); vb=sum(v[1] for v in s.values()); assert raw and vb and s["replay"][0] and s["copied"][0] and j["sent"] >= int(sys.argv[2]) and not j["send_errors"] and not j["verbs_errors"], (raw, vb, s["replay"], s["copied"])' "$tmp/$pol.r1" "$npkts"
	check "$pol: rogue's ICRC equals rxe's on every captured genuine frame" \
		python3 -c 'import json,sys; js=[json.loads(open(f).read().splitlines()[-1]) for f in sys.argv[1:]]; ok=sum(j["icrc_ok"] for j in js); bad=sum(j["icrc_bad"] for j in js); assert ok and not bad, (ok, bad)' "$tmp/$pol.r1" "$tmp/$pol.r0"
	out=$(check_drops "$pol rxe1" "$tmp/$pol.r1" "$tmp/$pol.b1" "$tmp/$pol.a1" 2>&1)
	show "$?" "$pol: forgeries at rxe1 (receiver) dropped as predicted" "$out"
	out=$(check_drops "$pol rxe0" "$tmp/$pol.r0" "$tmp/$pol.b0" "$tmp/$pol.a0" 2>&1)
	show "$?" "$pol: forgeries at rxe0 (sender) dropped as predicted" "$out"
	# The points above bound these from both sides; this one says the
	# run tested authentication at all: copies met the tag check and
	# replays the window, at both ends.
	tag0=$(rose "$tmp/$pol.b0" "$tmp/$pol.a0" bad_tag)
	rp0=$(rose "$tmp/$pol.b0" "$tmp/$pol.a0" replay)
	tag1=$(rose "$tmp/$pol.b1" "$tmp/$pol.a1" bad_tag)
	rp1=$(rose "$tmp/$pol.b1" "$tmp/$pol.a1" replay)
	check "$pol: copies dropped as bad_tag, replays as replay, at both ends (rxe0 +$tag0 +$rp0, rxe1 +$tag1 +$rp1)" \
		test "$((tag0 > 0 && rp0 > 0 && tag1 > 0 && rp1 > 0))" = 1
done
echo >"$T/trace"
rm -rf "$tmp"
done_testing
