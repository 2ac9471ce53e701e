#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Policy EC under the boot's netem profile (tests/vm/profiles): 1000
# messages of random sizes, 1 B to 8 MiB, each checked against its hash
# (t_data), then the device totals in sysfs: parity went out, and under
# loss packets were rebuilt from it, each one reported by the
# sdr:sdr_pkt_recovered tracepoint.
. "$(dirname "$0")/lib.sh"

tc qdisc show dev veth0 | grep -q netem || skip_all "needs a netem profile (tests/vm/profiles)"
profile=$(tc qdisc show dev veth0 | sed 's/.*netem //')
plan 3
diag "profile: $profile"
sdr_load
T=/sys/kernel/tracing
echo 16384 >"$T/buffer_size_kb"
echo >"$T/trace"
echo 1 >"$T/events/sdr/sdr_pkt_recovered/enable"

# t_data's own TAP stays diagnostics here: its result is point 1.
SDR_TEST_POLICY=ec "$TOP/tests/vm/bin/t_data" pair.random_1000_region 2>&1 | sed 's/^/# t_data: /'
rc=${PIPESTATUS[0]}
echo 0 >"$T/events/sdr/enable"

# sum FILE: the counter over both devices
sum() { echo $(($(cat /sys/class/sdr/rxe0/counters/"$1") + $(cat /sys/class/sdr/rxe1/counters/"$1"))); }
parity=$(sum parity_sent)
prx=$(sum parity_received)
rec=$(sum pkts_recovered)
dec=$(sum decodes)
retx=$(sum retransmits)
ev=$(grep -o 'sdr_pkt_recovered:.* count=[0-9]*' "$T/trace" | awk -F'count=' '{ s += $2; n++ } END { printf "%d %d", n, s }')
diag "parity sent $parity received $prx; $rec packets rebuilt in $dec decodes; $retx retransmitted; trace: ${ev% *} events for ${ev#* } packets"
# 0 is a pass; 4 (every test skipped) is not one here.
check "pair.random_1000_region under EC (t_data exit $rc)" test "$rc" = 0
check "parity sent ($parity) and received ($prx)" \
	test "$parity" -gt 0 -a "$prx" -gt 0 -a "$prx" -le "$parity"
lossy=0
grep -qE 'loss|corrupt' <<<"$profile" && lossy=1
if [ $lossy = 1 ] && { [ "$rec" -eq 0 ] || [ "$dec" -eq 0 ]; }; then
	not_ok "lossy profile: packets rebuilt from parity ($rec in $dec decodes)"
elif [ "${ev% *}" != "$dec" ] || [ "${ev#* }" != "$rec" ]; then
	not_ok "one sdr_pkt_recovered per decode ($dec), counts summing to pkts_recovered ($rec): got $ev"
else
	ok "$rec packets rebuilt in $dec decodes, each seen by sdr_pkt_recovered"
fi
echo >"$T/trace"
done_testing
