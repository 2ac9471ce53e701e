#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The libfabric provider sdr (provider/libsdr-fi.so) as libfabric's own
# tools see it: fi_info lists it on both devices, RDM and DGRAM endpoints
# (and no utility provider layered over it), and fi_pingpong over reliable
# datagram endpoints, FI_MSG and FI_TAGGED, every size up to 1 MiB with
# its data check (-c), passes between rxe1 (server) and rxe0 (client),
# under SR (the default) and EC, and with both ends on rxe0; over datagram
# endpoints (policy NONE) too; an RDM endpoint asked for NONE is refused
# with a message.
. "$(dirname "$0")/lib.sh"

plan 13
sdr_load
export FI_PROVIDER_PATH=$TOP/provider
[ -f "$FI_PROVIDER_PATH/libsdr-fi.so" ] || diag "provider/libsdr-fi.so not built"
port=47600

out=$(fi_info -p sdr 2>&1)
printf '%s\n' "$out" | sed 's/^/# /'
check "fi_info -p sdr lists rxe0 and rxe1, each FI_EP_RDM and FI_EP_DGRAM" \
	test "$(printf '%s\n' "$out" | grep -cE 'domain: rxe[01]$')/$(printf '%s\n' "$out" | grep -c 'type: FI_EP_RDM')/$(printf '%s\n' "$out" | grep -c 'type: FI_EP_DGRAM')" = 4/2/2
check "fi_info -p sdr: only the provider's own entries (no sdr;ofi_rxd)" \
	test "$(printf '%s\n' "$out" | grep -c 'provider: sdr$')" = 4

# pingpong NAME SERVER-ENV -- ARGS...: one fi_pingpong pair, both ends 0
# (the server on $srv_dev at $srv_ip: rxe1, unless set otherwise), each
# end bounded by 300 s (times SDR_TEST_SLOW: the debug kernel beside a
# second guest moved 1 to 1.5 MB/s, its 4 MiB round trips 8 s each).
srv_dev=rxe1 srv_ip=198.18.0.2
pingpong() {
	local name=$1 env=$2 srv cli s c
	shift 3
	local ep=${EP:-rdm} last=${LAST:-1m}
	port=$((port + 1))
	srv=$(mktemp)
	cli=$(mktemp)
	env $env timeout "$(slow 300)" fi_pingpong -p sdr -e "$ep" -B "$port" -d "$srv_dev" "$@" >"$srv" 2>&1 &
	s=$!
	wait_listen "$port"
	env $env timeout "$(slow 300)" fi_pingpong -p sdr -e "$ep" -P "$port" -d rxe0 "$@" "$srv_ip" >"$cli" 2>&1
	c=$?
	wait "$s"
	s=$?
	sed 's/^/# client: /' "$cli" | tail -n 4
	[ "$s" = 0 ] || sed 's/^/# server: /' "$srv" | tail -n 6
	check "$name: client and server exit 0 ($c/$s)" test "$c/$s" = 0/0
	# every size ran: the largest is the last line of fi_pingpong's table
	check "$name: every size up to $last checked" grep -qE "^$last +" "$cli"
	rm -f "$srv" "$cli"
}

pingpong "msg, SR" "" -- -I 10 -S all -c
pingpong "tagged, SR" "" -- -m tagged -I 10 -S all -c
pingpong "msg, EC" "FI_SDR_POLICY=ec" -- -I 5 -S all -c
# both ends on rxe0: the device loops the flows' packets back to itself
srv_dev=rxe0 srv_ip=198.18.0.1
pingpong "tagged, SR, both on rxe0" "" -- -m tagged -I 5 -S all -c
srv_dev=rxe1 srv_ip=198.18.0.2
# datagrams (policy NONE), on the loss-free link: fi_pingpong's sizes go
# up to the endpoint's max_msg_size less its own prefix room
EP=dgram LAST=${DGRAM_LAST:-1m} pingpong "dgram, NONE" "" -- -I 10 -S all -c

# NONE: the server's endpoint is refused, saying why (it creates it once
# the client reached its control port), and the client, its peer gone,
# fails instead of waiting
port=$((port + 1))
srv=$(mktemp)
FI_SDR_POLICY=none timeout 60 fi_pingpong -p sdr -e rdm -B "$port" -d rxe1 -I 1 >"$srv" 2>&1 &
s=$!
wait_listen "$port"
out=$(FI_SDR_POLICY=none timeout 60 fi_pingpong -p sdr -e rdm -P "$port" -d rxe0 -I 1 198.18.0.2 2>&1)
c=$?
wait "$s"
s=$?
printf '%s\n' "$out" | sed 's/^/# client: /' | head -n 3
sed 's/^/# server: /' "$srv" | head -n 3
check "FI_SDR_POLICY=none: the endpoint refused with a message, both ends fail (exit $c/$s)" \
	eval 'test "$c" != 0 -a "$c" != 124 -a "$s" != 0 -a "$s" != 124 &&
	      grep -q "not a reliable sdr policy" "$srv"'
rm -f "$srv"
done_testing
