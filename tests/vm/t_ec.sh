#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Policy EC under the boot's netem profile (tests/vm/profiles): 300
# messages of random sizes, 1 B to 8 MiB, each checked against its hash
# (t_data), then the device totals in sysfs: parity went out, and under
# loss packets were rebuilt from it, each one reported by the
# sdr:sdr_pkt_recovered tracepoint.  Then the codec: the module runs the
# fastest the CPU has (ec_codec says gfni where /proc/cpuinfo has gfni
# and avx2, avx2 where it has avx2),
# 100 more messages go with ec_codec switched live to scalar and arrive
# intact, rebuilt by it under loss, and a name it does not have is refused.
. "$(dirname "$0")/lib.sh"

tc qdisc show dev veth0 | grep -q netem || skip_all "needs a netem profile (tests/vm/profiles)"
profile=$(tc qdisc show dev veth0 | sed 's/.*netem //')
plan 6
diag "profile: $profile"
sdr_load
T=/sys/kernel/tracing
echo 16384 >"$T/buffer_size_kb"
echo >"$T/trace"
echo 1 >"$T/events/sdr/sdr_pkt_recovered/enable"

# t_data's own TAP stays diagnostics here: its result is point 1.
SDR_TEST_POLICY=ec "$TOP/tests/vm/bin/t_data" pair.random_300_region 2>&1 | sed 's/^/# t_data: /'
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
check "pair.random_300_region under EC (t_data exit $rc)" test "$rc" = 0
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

P=/sys/module/sdr/parameters/ec_codec
want=scalar
grep -qw avx2 /proc/cpuinfo && want=avx2
grep -qw avx2 /proc/cpuinfo && grep -qw gfni /proc/cpuinfo && want=gfni
check "ec_codec is $want, the fastest this CPU has (says $(cat $P))" \
	test "$(cat $P)" = "$want"
dec0=$(sum decodes)
echo scalar >"$P"
SDR_TEST_POLICY=ec "$TOP/tests/vm/bin/t_data" pair.stream_region_100 2>&1 | sed 's/^/# t_data: /'
rc=${PIPESTATUS[0]}
codec=$(cat $P)
echo auto >"$P"
dec1=$(($(sum decodes) - dec0))
diag "ec_codec scalar: $dec1 decodes"
if [ "$rc" != 0 ] || [ "$codec" != scalar ]; then
	not_ok "ec_codec scalar, written live: 100 messages (t_data exit $rc, ec_codec $codec)"
elif [ $lossy = 1 ] && [ "$dec1" -eq 0 ]; then
	not_ok "ec_codec scalar under loss: nothing decoded"
else
	ok "ec_codec scalar, written live: 100 messages intact, $dec1 decodes"
fi
err=$( { echo bogus >"$P"; } 2>&1 )
check "ec_codec refuses a codec it does not have ($err) and keeps $want" \
	test -n "$err" -a "$(cat $P)" = "$want"
done_testing
