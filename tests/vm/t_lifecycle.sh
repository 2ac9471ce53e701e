#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Module and device lifecycle: load/unload, rxe devices coming and going in
# any order, unload with devices present.
. "$(dirname "$0")/lib.sh"

plan 9
sdr_unload

# 20 rounds; 5 on the debug kernel (kmemleak present), where a round
# takes 8 s and KASAN and kmemleak see the same code in every round.
rounds=20
[ -e /sys/kernel/debug/kmemleak ] && rounds=5
loops_ok=1
for i in $(seq "$rounds"); do
	insmod "$KO" || { loops_ok=0; diag "insmod failed at round $i"; break; }
	[ -d /sys/class/sdr/rxe0 ] && [ -d /sys/class/sdr/rxe1 ] ||
		{ loops_ok=0; diag "devices not bound at round $i"; }
	rmmod sdr || { loops_ok=0; diag "rmmod failed at round $i"; break; }
done
[ "$loops_ok" = 1 ] && ok "load/unload $rounds times with devices bound" || not_ok "load/unload $rounds times with devices bound"

# every rxe device of the boot ("NAME NETDEV" lines; rxe2 and rxe3 too
# in a boot with two rails), to delete them all and bring them back
links=$(rdma link show | sed -nE 's|^link (rxe[0-9]+)/[0-9]+ .* netdev ([^ ]+).*|\1 \2|p')
[ -n "$links" ] || diag "no rxe device in rdma link show: the checks below fail"
export LINKS=$links

check "reload" insmod "$KO"
check "rxe1 deleted while loaded: sysfs entry goes" \
	sh -c 'rdma link delete rxe1 && ! test -e /sys/class/sdr/rxe1 && test -d /sys/class/sdr/rxe0'
check "rxe1 added while loaded: bound again" \
	sh -c 'rdma link add rxe1 type rxe netdev veth1 && test -d /sys/class/sdr/rxe1 && test "$(cat /sys/class/sdr/rxe1/ibdev)" = rxe1'
check "all devices deleted, then unload" \
	sh -c 'echo "$LINKS" | while read -r d n; do rdma link delete "$d" || exit 1; done && test -z "$(ls /sys/class/sdr)" && rmmod sdr'
check "load with no device, then devices appear" \
	sh -c 'insmod '"$KO"' && test -z "$(ls /sys/class/sdr)" && echo "$LINKS" | while read -r d n; do rdma link add "$d" type rxe netdev "$n" && test -d "/sys/class/sdr/$d" || exit 1; done'
check "add/delete churn while loaded" \
	sh -c 'for i in 1 2 3 4 5; do rdma link delete rxe1 && rdma link add rxe1 type rxe netdev veth1 || exit 1; done; test -d /sys/class/sdr/rxe1'
check "unload with devices present" rmmod sdr
check "rxe survives sdr: devices still usable" sh -c 'ibv_devices | grep -q rxe0 && ibv_devices | grep -q rxe1'
done_testing
