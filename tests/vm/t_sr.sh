#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Policy SR under the boot's netem profile (tests/vm/profiles): 1000
# messages of random sizes, 1 B to 8 MiB, each checked against its hash.
. "$(dirname "$0")/lib.sh"

tc qdisc show dev veth0 | grep -q netem || skip_all "needs a netem profile (tests/vm/profiles)"
diag "profile: $(tc qdisc show dev veth0 | sed 's/.*netem //')"
sdr_load
SDR_TEST_POLICY=sr exec "$TOP/tests/vm/bin/t_data" pair.random_1000_region
