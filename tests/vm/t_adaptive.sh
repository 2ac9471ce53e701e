#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Policy ADAPTIVE under the boot's netem profile (tests/vm/profiles): 300
# messages of random sizes, 1 B to 8 MiB, each checked against its hash
# (t_data); then what it cost in needless resends.  A retransmission that
# arrives where the receiver already has the packet is dropped there as a
# duplicate (drops/dup): under reordering ADAPTIVE learns how late packets
# come and must not resend them, where SR's fixed window resends 8-10% of
# what it sends under "reorder 25% 50%".  The bound is checked on the
# reordering profiles without netem's own duplicates.
. "$(dirname "$0")/lib.sh"

tc qdisc show dev veth0 | grep -q netem || skip_all "needs a netem profile (tests/vm/profiles)"
profile=$(tc qdisc show dev veth0 | sed 's/.*netem //')
plan 2
diag "profile: $profile"
sdr_load

# t_data's own TAP stays diagnostics here: its result is point 1.
SDR_TEST_POLICY=adaptive "$TOP/tests/vm/bin/t_data" pair.random_300_region 2>&1 | sed 's/^/# t_data: /'
rc=${PIPESTATUS[0]}
check "t_data pair.random_300_region under ADAPTIVE: every message whole and intact" test "$rc" = 0

sent=$(cat /sys/class/sdr/rxe0/counters/tx_packets)
dups=$(cat /sys/class/sdr/rxe1/drops/dup)
retx=$(cat /sys/class/sdr/rxe0/counters/retransmits)
diag "rxe0 sent $sent packets ($retx retransmitted); rxe1 dropped $dups duplicates"
if grep -q duplicate <<<"$profile"; then
	skip "needless resends under 5% of packets sent" "netem duplicates packets itself"
elif ! grep -q reorder <<<"$profile"; then
	skip "needless resends under 5% of packets sent" "no reordering to learn (bursts of ACK loss make RTOs resend)"
else
	check "needless resends (duplicates at the receiver) under 5% of packets sent" \
		test "$sent" -gt 0 -a $((dups * 100)) -lt $((sent * 5))
fi
done_testing
