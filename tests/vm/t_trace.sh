#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Tracepoints: under loss, sdr:sdr_retransmit fires once per retransmitted
# packet (the event count equals the flow's retransmit counter), and
# sdr:sdr_msg_done once per completed message on each side.  Then the same
# from bpftrace (a dependency, tools/deps): under EC, its counts of
# sdr_retransmit and of the packets sdr_pkt_recovered reports equal the
# sender's retransmit and the receiver's recovered counters.
# bpftrace compiles its program with LLVM when it starts, which under TCG
# on a busy host (a second guest beside this one) has taken minutes: the
# program gets three times the usual bound (tests/vm/run).
# vm-timeout-factor: 3
. "$(dirname "$0")/lib.sh"

plan 9
sdr_load
T=/sys/kernel/tracing
[ -d "$T/events/sdr" ] || { not_ok "events/sdr exists in tracefs"; done_testing; }
ok "events/sdr exists in tracefs"

echo 16384 >"$T/buffer_size_kb"
echo >"$T/trace"
echo 1 >"$T/events/sdr/sdr_retransmit/enable"
echo 1 >"$T/events/sdr/sdr_msg_done/enable"
echo 1 >"$T/events/sdr/sdr_flow_state/enable"

out=$(mktemp)
# lossy_run POLICY PORT: 40 messages of 256 KiB rxe0 -> rxe1 under 3% loss,
# the client's JSON in $out, both ends' exit status in $pair_rc
lossy_run() {
	local crc
	tc qdisc add dev veth0 root netem loss 3% limit 100000
	"$TOP/tools/sdr_perf" -d rxe1 -P "$1" -p "$2" >/dev/null 2>&1 &
	spid=$!
	wait_listen "$2"
	"$TOP/tools/sdr_perf" -d rxe0 -P "$1" -p "$2" -s 256K -n 40 --json \
		198.18.0.2 >"$out" 2>&1
	crc=$?
	wait "$spid"
	pair_rc=$crc/$?
	tc qdisc del dev veth0 root
}
# field KEY: a top-level field of the client's JSON
field() { tail -n 1 "$out" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

lossy_run sr 18650
echo 0 >"$T/events/sdr/enable"

retx=$(field retransmitted_packets)
events=$(grep -c 'sdr_retransmit:' "$T/trace")
done_send=$(grep 'sdr_msg_done:' "$T/trace" | grep -c ' send .*status=ok')
done_recv=$(grep 'sdr_msg_done:' "$T/trace" | grep -c ' recv .*status=ok')
diag "retransmit counter $retx, sdr_retransmit events $events; msg_done send $done_send recv $done_recv"
grep -m 2 'sdr_retransmit:' "$T/trace" | sed 's/^/# /'
check "SR: the sdr_perf pair exits 0" test "$pair_rc" = 0/0
check "loss caused retransmissions" test "${retx:-0}" -gt 0
check "one sdr_retransmit event per retransmission" test "$events" = "$retx"
check "sdr_msg_done: 40 sends and 40 receives completed ok" test "$done_send/$done_recv" = 40/40
check "sdr_flow_state: flows went connected" grep -q 'sdr_flow_state:.*idle -> connected' "$T/trace"
echo >"$T/trace"

if ! command -v bpftrace >/dev/null; then
	not_ok "bpftrace is installed (make deps)"
	not_ok "EC: the sdr_perf pair exits 0"
	not_ok "bpftrace: counts match the counters"
	done_testing
fi
ok "bpftrace is installed"
bt=$(mktemp)
# bpftrace attaches its probes in program order after printing
# "Attaching": the interval probe, last, ticks once the tracepoints are
# attached.  Its stdout, line-buffered (-B line), goes to the file: with
# -o FILE it writes only at exit.  Attaching took 9 s in an idle guest and
# longer on a loaded CI host, so the transfer waits for the first tick;
# the bound only catches a hang.
bpftrace -B line -e 'tracepoint:sdr:sdr_retransmit { @retx = count(); }
	tracepoint:sdr:sdr_pkt_recovered { @rec = sum(args->count); }
	interval:s:1 { printf("tick\n"); }' >"$bt" &
bpid=$!
wait_for 900 grep -q '^tick' "$bt" || diag "bpftrace not attached after 900 s"
lossy_run ec 18651
# Both ends have exited: every event has fired, and bpftrace counts in
# the kernel as they fire.  It prints its maps on SIGINT and exits.
kill -INT "$bpid"
wait_for 300 sh -c "! kill -0 $bpid 2>/dev/null" ||
	{ diag "bpftrace still running 300 s after SIGINT: killed"; kill -KILL "$bpid"; }
wait "$bpid"
retx=$(field retransmitted_packets)
rec=$(field recovered_packets)
bretx=$(sed -n 's/^@retx: //p' "$bt")
brec=$(sed -n 's/^@rec: //p' "$bt")
diag "EC: retransmitted $retx (bpftrace ${bretx:-none}), recovered $rec (bpftrace ${brec:-none})"
check "EC: the sdr_perf pair exits 0" test "$pair_rc" = 0/0
check "bpftrace: sdr_retransmit and sdr_pkt_recovered counts equal the counters, and parity repaired loss" \
	test "${bretx:-0}/${brec:-x}" = "$retx/$rec" -a "${rec:-0}" -gt 0
rm -f "$out" "$bt"
done_testing
