#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A sniffer of the connect cannot forge.  tests/vm/bin/sniff captures on
# veth0 (both directions) from before the connect: a fi_pingpong pair
# over the sdr provider, which connects through rdma_cm (libsdr's
# sdr_cm_*: each side's CM blob, version 3, in the SIDR REQ and REP) and
# checks every byte of every message it receives (-c).  From the capture
# alone it decodes both endpoints, paths and key-exchange shares, learns
# addresses, QPNs, Q_Keys, tokens and packet numbers, then forges into
# the live flows, both ways: DATA and control packets (ACK COMPLETE, ACK
# with every bit, NACK, RNR, CLOSE, captured ones re-tagged) tagged with
# every candidate key it can make of what it saw (public keys, their
# hashes, HMACs and XOR, share and transcript hashes, tokens, signatures,
# the protocol's HKDF over each of those), as the flow's auth says
# (VMAC-64 or ChaCha20-Poly1305); captured frames altered under their
# genuine tag; captured frames replayed.  Each device's and each flow's
# bad_tag must rise by exactly what it sent for a tag, replay by exactly
# its replays, rxe must have handed sdr every frame, the flows must stay
# connected and fi_pingpong must finish with its data checks on both
# ends.  For vmac64 and aead (the module parameter auth), each without a
# job secret (kex "ephemeral") and with one (SDR_SECRET_FILE on both
# ends: kex "psk", each share's signature checked with the secret, which
# also proves the sniffer decoded every endpoint byte as the kernel made
# it).
#
# Up to ABI 8 the blob carried the flow's receive key in the clear and
# this sniffer would have tagged with it.  That scheme is not kept, not
# even behind an option: since ABI 9 the endpoint's key field must be all
# zero and a connect that gives a key fails with EPROTO (t_ioctl checks
# it), so there is no cleartext mode to run this against; the all-zero
# key the field now holds is one of the candidates.
. "$(dirname "$0")/lib.sh"

read -ra runs <<<"${SDR_SNIFF_RUNS:-vmac64:ephemeral vmac64:psk aead:ephemeral aead:psk}"
plan $((7 * ${#runs[@]}))
sdr_load
sniff=$TOP/tests/vm/bin/sniff
[ -x "$sniff" ] || diag "tests/vm/bin/sniff not built"
export FI_PROVIDER_PATH=$TOP/provider
[ -f "$FI_PROVIDER_PATH/libsdr-fi.so" ] || diag "provider/libsdr-fi.so not built"
tmp=$(mktemp -d)
port=47800
iters=${SDR_SNIFF_ITERS:-800}
auth0=$(cat /sys/module/sdr/parameters/auth)
head -c 32 /dev/urandom >"$tmp/secret"

# snap FILE: every drop counter of both devices and of each of their
# flows, each flow's state, auth and kex, rxe's frames in and sdr's
# packets in: "rxeN[.FLOW].NAME VALUE" lines (one grep: cheap under TCG).
snap() {
	{
		grep -H . /sys/class/sdr/rxe[01]/drops/* \
			/sys/class/sdr/rxe[01]/flows/*/drops/* \
			/sys/class/sdr/rxe[01]/flows/*/{state,auth,kex} \
			/sys/class/sdr/rxe[01]/counters/rx_packets 2>/dev/null |
			sed -E 's|^/sys/class/sdr/(rxe[01])/(flows/([0-9]+)/)?(drops/\|counters/)?([a-z_]+):|\1.\3.\5 |; s|\.\.|.|'
		grep -H . /sys/class/infiniband/rxe[01]/ports/1/hw_counters/rcvd_pkts |
			sed -E 's|^/sys/class/infiniband/(rxe[01])/.*:|\1.rxe_rcvd |'
	} >"$1"
}

# judge RUN AUTH KEX SNIFF-OUT BEFORE AFTER: the points on the counters.
judge() {
	python3 - "$@" <<'EOF'
import json, sys
run, auth, kex, out, before, after = sys.argv[1:7]
lines = open(out).read().splitlines()
j = json.loads(lines[-1])
rd = lambda f: dict(l.split(" ", 1) for l in open(f).read().splitlines()
                    if " " in l)
b, a = rd(before), rd(after)
dev = {"198.18.0.1": "rxe0", "198.18.0.2": "rxe1"}
num = lambda d, k: int(d.get(k, "0") or 0)
rise = lambda k: num(a, k) - num(b, k)
points = []

# 1: the connect decoded, both blobs naming flows the devices have
bad = []
if j["req"] < 1 or j["rep"] < 1 or len(j["dirs"]) < 2 or len(j["dirs"]) % 2:
    bad.append("REQ %d, REP %d, flows %d" % (j["req"], j["rep"], len(j["dirs"])))
for d in j["dirs"]:
    dv = dev.get(d["ip"], "?")
    pre = "%s.%d." % (dv, d["flow"])
    if a.get(pre + "auth") != auth:
        bad.append("%s flow %d: auth %r in sysfs" % (dv, d["flow"], a.get(pre + "auth")))
    if a.get(pre + "kex") != kex:
        bad.append("%s flow %d: kex %r in sysfs" % (dv, d["flow"], a.get(pre + "kex")))
    want_alg = {"vmac64": 2, "aead": 3}[auth]
    if d["auth"] != want_alg or d["kex_flags"] != (1 if kex == "psk" else 0) or \
            d["mac_zero"] != (kex != "psk"):
        bad.append("blob of %s flow %d: auth %d, flags %d, signature zero %s"
                   % (dv, d["flow"], d["auth"], d["kex_flags"], d["mac_zero"]))
    if d["captured"] < 4:
        bad.append("to %s: captured %d packets" % (dv, d["captured"]))
if kex == "psk" and (j["signed_ok"] < 2 or j["signed_bad"]):
    bad.append("signatures: %d right, %d wrong" % (j["signed_ok"], j["signed_bad"]))
points.append(("blobs of the SIDR REQ and REP decoded: flow ids, auth %s, kex %s "
               "as sysfs says%s" % (auth, kex, ", signatures verify with the job secret"
                                    if kex == "psk" else ", no signature"), bad))

# 2, 3: each device's counters, and each of its flows'
for dv in ("rxe0", "rxe1"):
    ds = [d for d in j["dirs"] if dev.get(d["ip"]) == dv]
    sent_tag = sum(d["bad_tag"] for d in ds)
    sent_rp = sum(d["replay"] for d in ds)
    tag, rp = rise(dv + ".bad_tag"), rise(dv + ".replay")
    # what rxe took but sdr never saw, if a forgery were lost that way
    # (the two counters are read while genuine traffic flows: approximate)
    lost = rise(dv + ".rxe_rcvd") - rise(dv + ".rx_packets")
    others = {k.split(".", 1)[1]: rise(k) for k in a
              if k.startswith(dv + ".") and k.count(".") == 1 and
              k.split(".")[1] not in ("bad_tag", "replay", "rxe_rcvd", "rx_packets")
              and rise(k)}
    bad = []
    if not ds:
        bad.append("no flow of %s captured" % dv)
    for d in ds:
        pre = "%s.%d." % (dv, d["flow"])
        ftag, frp = rise(pre + "bad_tag"), rise(pre + "replay")
        print("# %s: to %s flow %d (from %d): sent %d for bad_tag (%s), %d replays; "
              "flow bad_tag +%d replay +%d, state %s"
              % (run, dv, d["flow"], d["peer_flow"], d["bad_tag"], ", ".join(
                  "%s %d" % kv for kv in d["shapes"].items()), d["replay"],
                 ftag, frp, a.get(pre + "state")))
        if d["send_errors"] or d["not_decoded"]:
            bad.append("flow %d: send errors %d, not decoded %d"
                       % (d["flow"], d["send_errors"], d["not_decoded"]))
        if d["bad_tag"] < j["candidates"] * 6 or d["replay"] < 1:
            bad.append("flow %d: too little sent" % d["flow"])
        if (ftag, frp) != (d["bad_tag"], d["replay"]):
            bad.append("flow %d: bad_tag +%d replay +%d, sent %d and %d"
                       % (d["flow"], ftag, frp, d["bad_tag"], d["replay"]))
        if a.get(pre + "state") != "connected":
            bad.append("flow %d: state %r after" % (d["flow"], a.get(pre + "state")))
    print("# %s: %s: sent %d for bad_tag, %d replays; device bad_tag +%d replay +%d; "
          "rxe frames not in sdr about %d; other drops %s"
          % (run, dv, sent_tag, sent_rp, tag, rp, lost, others or "none"))
    if (tag, rp) != (sent_tag, sent_rp):
        bad.append("device: bad_tag +%d replay +%d, sent %d and %d"
                   % (tag, rp, sent_tag, sent_rp))
    points.append(("%s: each forgery with a candidate key or altered under its tag "
                   "dropped as bad_tag (+%d), each replay as replay (+%d), device "
                   "and %d flows, which stay connected" % (dv, sent_tag, sent_rp,
                                                           len(ds)), bad))
for name, bad in points:
    for x in bad:
        print("# " + x)
    print("%s - %s: %s" % ("not ok" if bad else "ok", run, name))
EOF
}

# emit the points judge printed (its "ok"/"not ok" lines), diag the rest
emit_points() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		*) echo "$line" ;;
		esac
	done
}

ready() { grep -q '^sniff: ready' "$1" || ! kill -0 "$2" 2>/dev/null; }

for run in "${runs[@]}"; do
	auth=${run%%:*} kex=${run#*:}
	port=$((port + 1))
	go=$tmp/go.$port
	out=$tmp/sniff.$port
	echo "$auth" >/sys/module/sdr/parameters/auth
	env=()
	sargs=()
	if [ "$kex" = psk ]; then
		env=(SDR_SECRET_FILE="$tmp/secret")
		sargs=(--secret-file "$tmp/secret")
	fi
	t0=$SECONDS
	"$sniff" -i veth0 --go "$go" -r 800 --json "${sargs[@]}" >"$out" 2>&1 &
	spid=$!
	wait_for 20 grep -q '^sniff: capturing' "$out" || diag "$run: sniff not capturing"
	env "${env[@]}" timeout 300 fi_pingpong -p sdr -e rdm -B "$port" -d rxe1 \
		-S 65536 -I "$iters" -c >"$tmp/srv.$port" 2>&1 &
	ppid=$!
	wait_listen "$port"
	env "${env[@]}" timeout 300 fi_pingpong -p sdr -e rdm -P "$port" -d rxe0 \
		-S 65536 -I "$iters" -c 198.18.0.2 >"$tmp/cli.$port" 2>&1 &
	cpid=$!
	wait_for 120 ready "$out" "$spid" || diag "$run: sniff not ready after 120 s"
	snap "$tmp/before.$port"
	touch "$go"
	wait "$spid"
	src=$?
	snap "$tmp/after.$port"
	t1=$SECONDS
	kill -0 "$cpid" 2>/dev/null ||
		diag "$run: fi_pingpong ended before the forgery was counted: raise SDR_SNIFF_ITERS"
	wait "$cpid"
	crc=$?
	wait "$ppid"
	prc=$?
	diag "$run: sniff ready and done in $((t1 - t0)) s, fi_pingpong ended $((SECONDS - t1)) s later"
	grep -v '^{' "$out" | sed "s/^/# $run: /"
	tail -n 2 "$tmp/cli.$port" | sed "s/^/# $run client: /"
	[ "$prc" = 0 ] || tail -n 4 "$tmp/srv.$port" | sed "s/^/# $run server: /"
	check "$run: sniff captured the connect and the flows' traffic, forged, exit 0" \
		test "$src" = 0
	if [ "$src" = 0 ]; then
		judge "$run" "$auth" "$kex" "$out" "$tmp/before.$port" \
			"$tmp/after.$port" >"$tmp/judge.$port" 2>&1
		emit_points <"$tmp/judge.$port"
	else
		not_ok "$run: blobs decoded (no report)"
		not_ok "$run: rxe0 counters (no report)"
		not_ok "$run: rxe1 counters (no report)"
	fi
	check "$run: fi_pingpong client and server exit 0 ($crc/$prc), every message's bytes checked (-c)" \
		test "$crc/$prc" = 0/0
	# its table's one row: 64 KiB, every iteration done
	check "$run: fi_pingpong's 64 KiB row reported" \
		grep -qE "^64k +" "$tmp/cli.$port"
	# the only drops besides: what sdr's own recovery explains (dup, stale)
	check "$run: no flow failed (msgs_failed, states)" \
		bash -c "! grep -qE '\\.state (failed|closed)' '$tmp/after.$port'"
done
echo "$auth0" >/sys/module/sdr/parameters/auth
rm -rf "$tmp"
done_testing
