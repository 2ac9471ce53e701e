# SPDX-License-Identifier: GPL-2.0
# What the benchmarks do inside the test VM, sourced by their guest halves
# (tools/bench-auth, tools/bench-load): the link's profile, the bed's
# ceiling, waiting for a server.  The guest's pair: rxe0 on veth0
# 198.18.0.1, rxe1 on veth1 198.18.0.2 (tools/sdr-vm).

# bench_gid_index DEV IP: the GID index of DEV's RoCE v2 address IP
# (perftest's -x); 1 when none matches.
bench_gid_index() {
	local f t want
	# shellcheck disable=SC2086 # one printf argument per octet
	want="0000:0000:0000:0000:0000:ffff:$(printf '%02x%02x:%02x%02x' ${2//./ })"
	for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		[ "$(cat "$f" 2>/dev/null)" = "$want" ] || continue
		t=$(cat /sys/class/infiniband/"$1"/ports/1/gid_attrs/types/"${f##*/}" 2>/dev/null)
		case "$t" in *v2*) echo "${f##*/}"; return 0 ;; esac
	done
	echo 1
}

# bench_ud_ceiling SECS: the bed's ceiling, raw UD from rxe0 to rxe1
# (ib_send_bw -c UD, one port MTU a message) for SECS seconds on whatever
# profile the link has (set none first); prints "MiB/s MTU", perftest's
# average.  Fails, saying why on stderr, when perftest printed no result.
bench_ud_ceiling() {
	local secs=$1 mtu out bw
	mtu=$(ibv_devinfo -d rxe0 2>/dev/null | awk '$1 == "active_mtu:" { print $2; exit }')
	case "$mtu" in ''|*[!0-9]*) mtu=1024 ;; esac
	out=$(mktemp)
	timeout -k 5 $((secs + 60)) ib_send_bw -c UD -d rxe1 \
		-x "$(bench_gid_index rxe1 198.18.0.2)" -s "$mtu" -D "$secs" -F \
		-p 18515 >/dev/null 2>&1 &
	sleep 1
	timeout -k 5 $((secs + 60)) ib_send_bw -c UD -d rxe0 \
		-x "$(bench_gid_index rxe0 198.18.0.1)" -s "$mtu" -D "$secs" -F \
		-p 18515 198.18.0.2 >"$out" 2>&1
	wait $!
	# the result line: "#bytes #iterations BW peak BW average MsgRate"
	bw=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 && $2 ~ /^[0-9]+$/ { bw = $4 } END { print bw }' "$out")
	[ -n "$bw" ] || sed 's/^/# ib_send_bw: /' "$out" | tail -n 5 >&2
	rm -f "$out"
	[ -n "$bw" ] && echo "$bw $mtu"
}

# bench_set_profile PROFILE [LIMIT]: netem PROFILE on both veth ends, its
# queue LIMIT packets (default 100000, tools/vm/netem-args'); an empty
# PROFILE takes netem off.
bench_set_profile() {
	local d
	for d in veth0 veth1; do
		tc qdisc del dev "$d" root 2>/dev/null
		if [ -n "$1" ]; then
			# shellcheck disable=SC2086
			tc qdisc add dev "$d" root netem limit "${2:-100000}" $1 || return 1
		fi
	done
}

# bench_wait_listen PORT: until a TCP server listens on PORT (at most 60 s).
bench_wait_listen() {
	local i
	for i in $(seq 600); do
		[ -n "$(ss -Hltn "sport = :$1")" ] && return 0
		sleep 0.1
	done
	echo "# nothing listens on port $1 after 60 s" >&2
	return 1
}
