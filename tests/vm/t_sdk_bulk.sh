#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An SDR SDK program under the boot's netem profile (tests/vm/profiles):
# tools/sdk_bulk, written against the SDK's header alone, sends windows of
# large messages from registered memory into registered memory, each done
# when every chunk bit of its receive is set and then checked byte for
# byte (64 KiB chunks of 1 MiB messages; then 4 KiB chunks of messages no
# multiple of anything).  Both ends must exit 0 with no verify error, and
# under loss SR must have resent packets to get there.
. "$(dirname "$0")/lib.sh"

tc qdisc show dev veth0 | grep -q netem || skip_all "needs a netem profile (tests/vm/profiles)"
profile=$(tc qdisc show dev veth0 | sed 's/.*netem //')
plan 5
diag "profile: $profile"
sdr_load
bulk=$TOP/tools/sdk_bulk
srv=$(mktemp)
cli=$(mktemp)

# pair PORT ARGS...: receiver on rxe1, sender on rxe0; "crc/src"
pair() {
	local port=$1 c s
	shift
	timeout -k 5 300 "$bulk" -d rxe1 -p "$port" "$@" >"$srv" 2>&1 &
	wait_listen "$port"
	timeout -k 5 300 "$bulk" -d rxe0 -p "$port" "$@" 198.18.0.2 >"$cli" 2>&1
	c=$?
	wait $!
	s=$?
	sed 's/^/# sender: /' "$cli"
	sed 's/^/# receiver: /' "$srv"
	echo "$c/$s"
}
retx0=$(cat /sys/class/sdr/rxe0/counters/retransmits)
r=$(pair 18610 -n 64 -s 1048576 -w 8 -c 16)
echo "$r" | grep '^#'
check "64 messages of 1 MiB, 64 KiB chunks: both ends exit 0" test "$(echo "$r" | tail -n 1)" = 0/0
check "... every byte checked: 0 verify errors" grep -q ', 0 verify errors$' "$srv"
r=$(pair 18611 -n 40 -s 300007 -w 5 -c 12)
echo "$r" | grep '^#'
check "40 messages of 300007 bytes, 4 KiB chunks: both ends exit 0" test "$(echo "$r" | tail -n 1)" = 0/0
check "... every byte checked: 0 verify errors" grep -q ', 0 verify errors$' "$srv"
retx=$(( $(cat /sys/class/sdr/rxe0/counters/retransmits) - retx0 ))
diag "retransmitted $retx packets"
check "SR recovered the losses ($retx packets resent)" test "$retx" -gt 0
rm -f "$srv" "$cli"
