#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sdrctl against the live module: devices match sysfs, caps matches the
# kernel's SDR_IOC_QUERY, a running sdr_perf pair shows up as flows with
# its pids and policy and moving counters, a policy the module does not run
# is refused naming those it runs (sdrctl and sdr_perf), defaults are
# range-checked by the kernel and restored, usage errors exit 2.
. "$(dirname "$0")/lib.sh"

plan 24
sdr_load
ctl=$TOP/tools/sdrctl
perf=$TOP/tools/sdr_perf
# make builds both, and the module has flows/: neither is a reason to skip.
[ -x "$ctl" ] || diag "tools/sdrctl not built"
[ -d /sys/class/sdr/rxe0/flows ] || diag "module has no flows/ in sysfs"

# py CODE JSON [ARG]: run python code with j = the parsed JSON (ARG: sys.argv[2]).
py() {
	local expr=$1
	shift
	python3 -c "import json,sys; j=json.loads(sys.argv[1]); $expr" "$@"
}

# ---- sdrctl dev ----
devs=$("$ctl" -j dev)
diag "dev: $devs"
check "dev -j: rxe0 and rxe1" py 'assert sorted(d["dev"] for d in j) == ["rxe0", "rxe1"]' "$devs"
for d in rxe0 rxe1; do
	check "dev -j: $d gid, gid_index, port, mtu match sysfs" py "
d = [x for x in j if x['dev'] == '$d'][0]
assert d['gid'] == '$(cat /sys/class/sdr/$d/gid)', d
assert d['gid_index'] == $(cat /sys/class/sdr/$d/gid_index)
assert d['port'] == 1 and d['mtu'] == $(cat /sys/class/sdr/$d/mtu)
assert isinstance(d['nr_flows'], int)" "$devs"
done
check "dev -j -p: the same data, indented" \
	py 'assert j == json.loads(sys.argv[2]) and "\n    " in sys.argv[2]' "$devs" "$("$ctl" -j -p dev)"

# ---- caps: SDR_IOC_QUERY ----
abi=$(sed -n 's/^#define SDR_ABI_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$TOP/uapi/sdr_uapi.h")
caps=$("$ctl" -j caps)
diag "caps: $caps"
paths=$(cat /sys/module/sdr/parameters/dev_paths)
check "caps -j: ABI $abi, policies none sr ec adaptive auto, features auth multipath rails groups mr kex aead, the path, EC and flow limits" py "
assert len(j) == 1, j
c = j[0]
assert c['abi_version'] == $abi and c['policy_nr'] == 5, c
assert c['policies'] == ['none', 'sr', 'ec', 'adaptive', 'auto'] and c['features'] == ['auth', 'multipath', 'rails', 'groups', 'mr', 'kex', 'aead'], c
assert c['paths_max'] == $paths, c
assert (c['ec_max_k'], c['ec_max_m']) == (64, 32), c
assert (c['max_msg_size'], c['max_msgs']) == (1 << 30, 1024), c" "$caps"
check "caps: the same on one line" test "$("$ctl" caps show)" = \
	"sdr: abi_version $abi policies none,sr,ec,adaptive,auto policy_nr 5 features auth,multipath,rails,groups,mr,kex,aead paths_max $paths ec_max_k 64 ec_max_m 32 max_msg_size 1073741824 max_msgs 1024"
runs=$(py 'print(", ".join(j[0]["policies"]))' "$caps")
check "help: set flow offers the policies the module runs" \
	grep -qF "sdrctl set flow DEV/ID policy ${runs//, /|}" <<<"$("$ctl" help)"

# ---- flows during an sdr_perf run ----
srv_out=$(mktemp)
cli_out=$(mktemp)
"$perf" -d rxe1 -q >"$srv_out" 2>&1 &
spid=$!
wait_listen 18515	# sdr_perf's default port
# A run far longer than the readings take, however slow the machine; it
# ends with SIGINT below (sdr_perf stops as at the end of -D, exit 0).
"$perf" -d rxe0 -q -P none -s 64K -D 600 198.18.0.2 >"$cli_out" 2>&1 &
cpid=$!
# Wait for both flows to be connected, then take every reading while the
# run lasts; python only afterwards (it takes a second to start under TCG).
connected() {
	flows=$("$ctl" -j flow)
	[ "$(grep -o '"state":"connected"' <<<"$flows" | wc -l)" -ge 2 ]
}
wait_for 60 connected || diag "the pair's flows not both connected after 60 s"
# The client's msgs_sent (its flow is the only one on rxe0) moves on.
msgs_sent() { grep -o '"msgs_sent": *[0-9]*' <<<"$1" | head -n 1 | sed 's/.*: *//'; }
sent0=$(msgs_sent "$("$ctl" -j flow dev rxe0)")
moved() {
	later=$("$ctl" -j flow dev rxe0)
	[ "$(msgs_sent "$later")" -gt "${sent0:-0}" ] 2>/dev/null
}
wait_for 60 moved || diag "msgs_sent still ${sent0:-?} after 60 s"
text=$("$ctl" flow show dev rxe0)
stats=$("$ctl" -j stats -s dev rxe0)
pstats=$("$ctl" -j -s flow dev rxe0)
fid=$(sed -n "s|^rxe0/\([0-9]*\): pid $cpid .*|\1|p" <<<"$text")
perr=$("$ctl" set flow "rxe0/$fid" policy bogus 2>&1)
prc=$?
# auto: taken live, and flow show says what it chose and why;
# adaptive runs, and shows what it learned
uerr=$("$ctl" set flow "rxe0/$fid" policy auto 2>&1)
urc=$?
upol=$(cat "/sys/class/sdr/rxe0/flows/$fid/policy" 2>&1)
sleep 2
utext=$("$ctl" flow show dev rxe0 id "$fid" 2>&1)
ujson=$("$ctl" -j flow show dev rxe0 id "$fid" 2>&1)
"$ctl" set flow "rxe0/$fid" policy adaptive
arc=$?
apol=$(cat "/sys/class/sdr/rxe0/flows/$fid/policy" 2>&1)
areo=$(cat "/sys/class/sdr/rxe0/flows/$fid/adaptive/reorder_us" 2>&1)
atext=$("$ctl" -s flow show dev rxe0 id "$fid" 2>&1)
"$ctl" set flow "rxe0/$fid" policy none
nrc=$?
pol=$(cat "/sys/class/sdr/rxe0/flows/$fid/policy" 2>&1)
# EC geometry, live: taken, shown back; out of range refused, kept
"$ctl" set flow "rxe0/$fid" ec 16 4
erc=$?
geo=$(cat "/sys/class/sdr/rxe0/flows/$fid/ec_geometry" 2>&1)
eerr=$("$ctl" set flow "rxe0/$fid" ec 65 4 2>&1)
eerc=$?
geo2=$(cat "/sys/class/sdr/rxe0/flows/$fid/ec_geometry" 2>&1)
etext=$("$ctl" flow show dev rxe0)
kill -INT "$cpid"
diag "flows: $flows"
check "flow -j: the client's flow on rxe0 with its pid, policy none, connected" py "
f = [x for x in j if x['dev'] == 'rxe0' and x['owner_pid'] == $cpid]
assert len(f) == 1, f
assert f[0]['policy'] == 'none' and f[0]['state'] == 'connected', f
assert f[0]['owner_uid'] == $(id -u)
assert f[0]['peer']['gid'] == '$(cat /sys/class/sdr/rxe1/gid)', f[0]['peer']" "$flows"
check "flow -j: the server's flow on rxe1 with its pid, peer = the client's flow" py "
c = [x for x in j if x['owner_pid'] == $cpid][0]
s = [x for x in j if x['dev'] == 'rxe1' and x['owner_pid'] == $spid]
assert len(s) == 1, s
s = s[0]
assert s['policy'] == 'none' and s['state'] == 'connected'
assert s['peer']['flow_id'] == c['id'] and c['peer']['flow_id'] == s['id']" "$flows"
check "flow -s -j: the client's flow made only NONE's state, and NONE shows its credit window" py "
f = [x for x in j if x['owner_pid'] == $cpid][0]
assert f['policies'] == 'none', f
p = f['policy_stats']
assert list(p) == ['none'], p
assert p['none']['window'] == int('$(cat /sys/module/sdr/parameters/none_window)'), p
assert p['none']['probes_tx'] >= 1, p" "$pstats"
cid=$(py 'print([x for x in j if x["owner_pid"] == '"$cpid"'][0]["id"])' "$flows")
check "flow -j: the client's tx_bytes and msgs_sent move between two reads" py "
a = [x for x in json.loads(sys.argv[2]) if x['id'] == $cid][0]['counters']
b = [x for x in j if x['id'] == $cid][0]['counters']
assert b['tx_bytes'] > a['tx_bytes'] and b['msgs_sent'] > a['msgs_sent'], (a, b)" \
	"$later" "$flows"
check "flow text: rxe0/$cid with pid and policy" \
	grep -E "^rxe0/$cid: pid $cpid .*policy none policies none ec_k [0-9]+ ec_m [0-9]+ state connected" <<<"$text"
check "stats -j -s: device counters and totals, drops, the client's flow with its drops" py "
d = j[0]
assert d['dev'] == 'rxe0' and d['counters']['tx_packets'] > 0
assert 'retransmits' in d['counters'] and 'pkts_recovered' in d['counters']
assert all(isinstance(v, int) for v in d['drops'].values()) and d['drops']
f = [f for f in d['flows'] if f['id'] == $cid]
assert f and 'bad_ec' in f[0]['drops'] and 'bad_magic' not in f[0]['drops'], f" "$stats"
good=0
[ "$prc" = 1 ] && [ "$pol" = none ] &&
	grep -qF "set flow rxe0/$fid policy bogus: Invalid argument" <<<"$perr" && good=1
check "set flow rxe0/$fid policy bogus: exit 1, Invalid argument, policy kept" test $good = 1
diag "set flow: rc $prc: $perr"
good=0
[ "$urc/$arc/$nrc" = 0/0/0 ] && [ "$upol" = auto ] && [ "$apol" = adaptive ] &&
	[ "$areo" -gt 0 ] 2>/dev/null &&
	grep -qE "^    auto: choice (sr|adaptive|ec [0-9]+ [0-9]+) loss_ppm [0-9]+ rtt_us [0-9]+ tinj_ns [0-9]+ msg_pkts [0-9]+ inflight [0-9]+" <<<"$utext" &&
	grep -qE "cost_sr_us [0-9]+ cost_adaptive_us [0-9]+ cost_ec_us [0-9]+ decisions [1-9][0-9]* switches [0-9]+" <<<"$utext" &&
	grep -qE "reorder_us [0-9]+" <<<"$atext" &&
	good=1
check "set flow policy auto: exit 0, flow show says what it chose and why; adaptive: exit 0, learned values shown; none: exit 0" test $good = 1
check "flow -j: an AUTO flow's choice and costs under auto" py "
a = j[0]['auto']
assert a['choice'] in ('sr', 'adaptive') or a['choice'].startswith('ec '), a
assert a['decisions'] >= 1 and a['rtt_us'] > 0 and a['tinj_ns'] > 0, a
assert a['cost_sr_us'] > 0 and a['cost_adaptive_us'] > 0, a" "$ujson"
diag "auto: $(grep auto: <<<"$utext")"
good=0
[ "$erc/$eerc" = 0/1 ] && [ "$geo" = "16 4" ] && [ "$geo2" = "16 4" ] &&
	grep -qF "set flow rxe0/$fid ec 65 4: Invalid argument (k is 1..64, m 1..32)" <<<"$eerr" &&
	grep -qE "^rxe0/$fid: .* ec_k 16 ec_m 4 state" <<<"$etext" && good=1
check "set flow ec 16 4: taken and shown; ec 65 4: exit 1, names the ranges, kept" test $good = 1
diag "set flow ec: rc $erc/$eerc, ec_geometry '$geo' then '$geo2': $eerr"
diag "set flow auto: rc $urc: $uerr; adaptive: rc $arc, policy '$apol', reorder_us '$areo'"
wait "$cpid"
crc=$?
wait "$spid"
src=$?
check "the sdr_perf pair exits 0" test "$crc/$src" = 0/0
[ "$crc/$src" = 0/0 ] || { sed 's/^/# client: /' "$cli_out"; sed 's/^/# server: /' "$srv_out"; }
check "flow -j: no flows left after the run" py 'assert j == [], j' "$("$ctl" -j flow)"

# sdr_perf -P auto: every byte checked, and it says what AUTO chose
"$perf" -d rxe1 -q -p 18516 >"$srv_out" 2>&1 &
spid=$!
wait_listen 18516
"$perf" -d rxe0 -q -p 18516 -P auto -s 256K -n 40 --verify 198.18.0.2 >"$cli_out" 2>&1
crc=$?
wait "$spid"
src=$?
diag "sdr_perf -P auto: client rc $crc: $(grep -i auto "$cli_out"); server rc $src"
good=0
[ "$crc/$src" = 0/0 ] &&
	grep -qE "AUTO chose +: (sr|adaptive|ec [0-9]+ [0-9]+), [0-9]+ decisions?, [0-9]+ switch" "$cli_out" &&
	grep -qE "verify errors 0" "$srv_out" && good=1
check "sdr_perf -P auto --verify: both exit 0, no verify error, the client says what AUTO chose" test $good = 1
[ $good = 1 ] || { sed 's/^/# client: /' "$cli_out"; sed 's/^/# server: /' "$srv_out"; }
rm -f "$srv_out" "$cli_out"

# ---- defaults ----
p=/sys/module/sdr/parameters/none_idle_ms
old=$(cat $p)
err=$("$ctl" set default none_idle_ms 0 2>&1)
rc=$?
diag "set default none_idle_ms 0: rc $rc: $err"
good=0
[ $rc = 1 ] && [ "$(cat $p)" = "$old" ] &&
	grep -qF 'sdrctl: set default none_idle_ms 0: Invalid argument (out of range)' <<<"$err" &&
	good=1
check "set default none_idle_ms 0: exit 1, 'Invalid argument (out of range)', value kept" \
	test $good = 1
new=$((old + 7))
"$ctl" set default none_idle_ms "$new"
rc=$?
good=0
[ $rc = 0 ] && [ "$(cat $p)" = $new ] &&
	py "assert j == [{'name': 'none_idle_ms', 'value': $new, 'writable': True}], j" \
		"$("$ctl" -j default none_idle_ms)" && good=1
check "set default none_idle_ms $new: exit 0, sysfs and sdrctl default agree" test $good = 1
"$ctl" set default none_idle_ms "$old"
check "set default: restored to $old" test "$(cat $p)" = "$old"

# ---- usage ----
"$ctl" frobnicate >/dev/null 2>&1
rc1=$?
"$ctl" set default none_idle_ms >/dev/null 2>&1
rc2=$?
"$ctl" caps bogus >/dev/null 2>&1
rc3=$?
check "unknown object, a missing VALUE and an extra word exit 2" test "$rc1/$rc2/$rc3" = 2/2/2
done_testing
