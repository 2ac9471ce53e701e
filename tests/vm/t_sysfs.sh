#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# /sys/class/sdr/<ibdev>/ matches what ib_core says about the device.
. "$(dirname "$0")/lib.sh"

plan 10
sdr_load
for d in rxe0 rxe1; do
	s=/sys/class/sdr/$d
	check "$d: ibdev" test "$(cat $s/ibdev)" = "$d"
	check "$d: port" test "$(cat $s/port)" = 1
	idx=$(cat $s/gid_index)
	check "$d: gid is the device's GID at gid_index" \
		test "$(cat $s/gid)" = "$(cat /sys/class/infiniband/$d/ports/1/gids/"$idx")"
	check "$d: gid is RoCE v2 with the netdev's IPv4 address" \
		test "$(cat /sys/class/infiniband/$d/ports/1/gid_attrs/types/"$idx")" = "RoCE v2"
	mtu=$(ibv_devinfo -d "$d" | awk '/active_mtu/ {print $2}')
	check "$d: mtu is the port's active MTU" test "$(cat $s/mtu)" = "$mtu"
done
done_testing
