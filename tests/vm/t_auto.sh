#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# AUTO while the path changes under it: one sdr_perf run of 1 MiB messages,
# one at a time, every byte checked (--verify), over a 10 ms round trip
# whose loss netem changes mid-run (tc qdisc change): none for 10 s, 2%
# for 10 s, then 0.1%.  At the end of each phase the flow's auto/ shows
# what AUTO chose and from what.  No message may be lost, repeated or
# wrong across the switches; with no loss measured it runs SR; under 2%
# it measured the loss, moved off SR, and runs the candidate its own
# costs call cheapest (EC where parity repairs a message in its first
# pass, unless coding costs the CPU more than the round trips it saves,
# as a software codec in TCG can); the sdr_auto tracepoint said each
# switch.
. "$(dirname "$0")/lib.sh"

plan 6
sdr_load
perf=$TOP/tools/sdr_perf
trace=/sys/kernel/tracing
[ -d $trace/events ] || trace=/sys/kernel/debug/tracing
srv_out=$(mktemp)
cli_out=$(mktemp)
# py CODE JSON: run python code with j = the parsed JSON
py() { python3 -c "import json,sys; j=json.loads(sys.argv[1]); $1" "$2"; }
netem() { tc qdisc "$1" dev veth0 root netem delay 5ms limit 100000 "${@:2}"; }
cleanup() {
	tc qdisc del dev veth0 root 2>/dev/null
	echo 0 >$trace/events/sdr/sdr_auto/enable 2>/dev/null
	rm -f "$srv_out" "$cli_out"
}
trap cleanup EXIT
netem replace
echo >$trace/trace
echo 1 >$trace/events/sdr/sdr_auto/enable

"$perf" -d rxe1 -q -p 18530 >"$srv_out" 2>&1 &
spid=$!
wait_listen 18530
# it runs until SIGINT ends it after the phases (sdr_perf then stops
# sending, waits for what is in flight and reports): the phases follow
# the flow, however slow the kernel (the debug one) is to set it up
"$perf" -d rxe0 -q -p 18530 -P auto -s 1M -m 1 -D 600 --verify --json \
	198.18.0.2 >"$cli_out" 2>&1 &
cpid=$!
flow_dir() { ls -d /sys/class/sdr/rxe0/flows/[0-9]* 2>/dev/null | head -n 1; }
have_flow() { [ -n "$(flow_dir)" ]; }
wait_for 60 have_flow
dir=$(flow_dir)
# what AUTO says at the end of a phase, read in one go (it decides every
# 10 ms or so): " name=value ..."
look() {
	(cd "$dir/auto" && grep -H . choice loss_ppm rtt_us tinj_ns msg_pkts \
		inflight cost_sr_us cost_adaptive_us cost_ec_us decisions switches) |
		sed 's/:/=/; s/ /,/g; s/^/ /' | tr -d '\n'
}
val() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

sleep 10
p1=$(look)
netem change loss 2%
sleep 10
p2=$(look)
netem change loss 0.1%
sleep 5
p3=$(look)
kill -INT "$cpid"
wait "$cpid"
crc=$?
wait "$spid"
src=$?
diag "no loss:   $p1"
diag "loss 2%:   $p2"
diag "loss 0.1%: $p3"
res=$(tail -n 1 "$cli_out")
diag "client: $(grep -E 'AUTO chose|ok [0-9]+ ' "$cli_out" | tr -s ' ' | tr '\n' ' ')"

check "the sdr_perf pair exits 0" test "$crc/$src" = 0/0
[ "$crc/$src" = 0/0 ] || { sed 's/^/# client: /' "$cli_out"; sed 's/^/# server: /' "$srv_out"; }
check "every message sent arrived whole, once, with the bytes sent (--verify)" py "
assert j['verify_errors'] == 0 and j['failed_messages'] == 0, j
assert j['partial_messages'] == 0 and j['send_failed'] == 0, j
assert j['sent_messages'] == j['send_ok'] == j['recv_ok'] > 20, j
assert j['delivered_bytes'] == j['recv_ok'] * j['msg_bytes'], j" "$res"
c1=$(val choice "$p1")
l1=$(val loss_ppm "$p1")
check "no loss: SR (or what the loss it measured calls for)" \
	test "$c1" = sr -o "${l1:-0}" -gt 0
c2=$(val choice "$p2")
l2=$(val loss_ppm "$p2")
cost() { val "cost_${1}_us" "$p2"; }
cheapest=$(printf '%s %s\n' "$(cost sr)" sr "$(cost adaptive)" adaptive "$(cost ec)" ec |
	sort -n | head -n 1 | cut -d' ' -f2)
own=$(cost "${c2%%,*}")
low=$(cost "$cheapest")
check "loss 2%: measured (0.5..6%), moved off SR, runs the cheapest by its own costs ($cheapest)" \
	test "${l2:-0}" -ge 5000 -a "${l2:-0}" -le 60000 -a "$(val switches "$p2")" -ge 1 \
	-a "$(( ${own:-0} * 64 ))" -le "$(( ${low:-0} * 65 ))"
check "the client names what AUTO chose last" grep -qE "AUTO chose +: (sr|adaptive|ec [0-9]+ [0-9]+), [0-9]+ decisions, [0-9]+ switches" "$cli_out"
sw=$(sed -n 's/.*AUTO chose .*, \([0-9]*\) switches/\1/p' "$cli_out")
ntr=$(grep -c "sdr_auto: .* switch " $trace/trace)
diag "$ntr switches traced; the first: $(grep -m 1 "sdr_auto: .* switch " $trace/trace | sed 's/.*sdr_auto: //')"
check "the sdr_auto tracepoint said each switch ($sw)" test "${sw:-0}" -ge 1 -a "$ntr" = "${sw:-x}"
done_testing
