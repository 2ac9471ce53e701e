#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Policy SR under the boot's netem profile (tests/vm/profiles): messages of
# random sizes, 1 B to 8 MiB, each checked against its hash: 1000 on the
# light profile (delay 10ms loss 0.1%), 300 on the others, whose loss,
# reordering and corruption make each message cost several round trips
# (1000 there cost make check about two more minutes; make soak runs
# longer under all of them).
. "$(dirname "$0")/lib.sh"

tc qdisc show dev veth0 | grep -q netem || skip_all "needs a netem profile (tests/vm/profiles)"
profile=$(tc qdisc show dev veth0 | sed 's/.*netem //')
diag "profile: $profile"
case=pair.random_300_region
grep -q 'loss 0.1%' <<<"$profile" && case=pair.random_1000_region
sdr_load
SDR_TEST_POLICY=sr exec "$TOP/tests/vm/bin/t_data" "$case"
