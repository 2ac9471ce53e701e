#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The validation tables of Documentation/protocol.rst and
# Documentation/simulator.rst, at 400 Gbit/s, 25 ms RTT, MTU 4096.
#
#   validate.sh [sr|ec|ecmodel|all]    (default all)
#
# sr: sdr-sim against the SDR-RDMA SR model
#   rto:  RTO-only recovery, no backoff (the model's assumptions)
#   nack: the engine's defaults (NACK + RTO, backoff while silent)
# ec: policy EC (32,8), beta 100%, against SR, both with the engine's
#   defaults, and against the EC model; drop rates 0, 1e-6..1e-2
# ecmodel: EC against its model where submessages do fall back
# "model's" messages resent: count * (P_fallback + P_ack), P_ack the
# model's lost COMPLETE ACKs of messages that did not fall back
set -e
cd "$(dirname "$0")"
[ -x ./sdr-sim ] || make -s
what=${1:-all}
get() { echo "$1" | grep -o "\"$2\":[0-9.e+-]*" | head -1 | cut -d: -f2; }
ms() { awk -v v="$1" 'BEGIN { printf "%.1f", v / 1e6 }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

sr_table() {
	printf '%-5s %-6s %5s | %-13s | %-19s | %-13s\n' size loss count \
		"model mean/p99.9" "rto-sim mean/p99.9 ratio" "nack-sim mean/p99.9"
	for size in 1M 16M 128M 1G; do
		case $size in 1M) n=400 ;; 16M) n=200 ;; 128M) n=50 ;; 1G) n=20 ;; esac
		for loss in 1e-5 1e-4 1e-3 1e-2; do
			a=$(./sdr-sim --size $size --loss $loss --count $n --recovery rto \
				--backoff 0 --model --json)
			b=$(./sdr-sim --size $size --loss $loss --count $n --json)
			mm=$(echo "$a" | sed 's/.*"model"://')
			printf '%-5s %-6s %5s | %6s %6s | %6s %6s %5s | %6s %6s\n' \
				$size $loss $n \
				$(ms $(get "$mm" mean_ns)) $(ms $(get "$mm" p999_ns)) \
				$(ms $(get "$a" mean_ns)) $(ms $(get "$a" p999_ns)) \
				$(awk -v a=$(get "$a" mean_ns) -v m=$(get "$mm" mean_ns) \
					'BEGIN { printf "%.3f", a / m }') \
				$(ms $(get "$b" mean_ns)) $(ms $(get "$b" p999_ns))
		done
	done
}

# EC (32,8) against SR; p99.9 needs about 1000 messages to mean anything
# (1 GiB: 100, whose p99.9 is their maximum); times in ms
ec_table() {
	printf '%-5s %-6s %5s | %-13s | %-13s | %-13s %-6s | %-11s | %s\n' \
		size loss count "SR mean/p99.9" "EC mean/p99.9" \
		"EC model" "sim/mdl" "SR/EC mn p99.9" \
		"EC msgs resent, model's; P_fallback"
	for size in 1M 16M 128M 1G; do
		case $size in
		1G) n=100; losses="0 1e-7 1e-6 1e-5 1e-4 1e-3 1e-2" ;;
		*) n=1000; losses="0 1e-6 1e-5 1e-4 1e-3 1e-2" ;;
		esac
		for loss in $losses; do
			c=$n
			[ $loss = 0 ] && c=10	# deterministic
			s=$(./sdr-sim --size $size --loss $loss --count $c --json)
			e=$(./sdr-sim -P ec --size $size --loss $loss --count $c \
				--model --json)
			mm=$(echo "$e" | sed 's/.*"model"://')
			printf '%-5s %-6s %5s | %6s %6s | %6s %6s | %6s %6s %6s | %5s %5s | %s, %.2g; %.2g\n' \
				$size $loss $c \
				$(ms $(get "$s" mean_ns)) $(ms $(get "$s" p999_ns)) \
				$(ms $(get "$e" mean_ns)) $(ms $(get "$e" p999_ns)) \
				$(ms $(get "$mm" mean_ns)) $(ms $(get "$mm" p999_ns)) \
				$(awk -v a=$(get "$e" mean_ns) -v m=$(get "$mm" mean_ns) \
					'BEGIN { printf "%.3f", a / m }') \
				$(div $(get "$s" mean_ns) $(get "$e" mean_ns)) \
				$(div $(get "$s" p999_ns) $(get "$e" p999_ns)) \
				$(get "$e" retx_msgs) \
				$(awk -v f=$(get "$mm" p_fallback) -v a=$(get "$mm" p_ack) \
					-v n=$c 'BEGIN { printf "%.3g", (f + a) * n }') \
				$(get "$mm" p_fallback)
		done
	done
}

# The EC model where submessages do fall back: fewer parity rows or more
# loss than the paper's point, RTO-only (backoff 0) and NACK recovery.
ecmodel_table() {
	printf '%-6s %-5s %-5s %5s %-4s | %-13s | %-13s | %-6s %-5s | %s\n' \
		"(k,m)" size loss count rec "sim mean/p99.9" "model" "sim/mdl" \
		"se%" "msgs resent, model's"
	for pt in "32 2 16M 1e-2 3000" "32 8 1M 5e-2 10000" "32 4 64M 3e-2 1000" \
		  "32 8 4M 1e-1 3000" "32 2 1G 1e-2 50"; do
		set -- $pt
		for rec in rto nack; do
			a=$(./sdr-sim -P ec --k $1 --m $2 --size $3 --loss $4 --count $5 \
				--recovery $rec --backoff 0 --model --json)
			mm=$(echo "$a" | sed 's/.*"model"://')
			printf '%-6s %-5s %-5s %5s %-4s | %6s %6s | %6s %6s | %6s %5s | %s of %s, %.1f\n' \
				"($1,$2)" $3 $4 $5 $rec \
				$(ms $(get "$a" mean_ns)) $(ms $(get "$a" p999_ns)) \
				$(ms $(get "$mm" mean_ns)) $(ms $(get "$mm" p999_ns)) \
				$(awk -v a=$(get "$a" mean_ns) -v m=$(get "$mm" mean_ns) \
					'BEGIN { printf "%.3f", a / m }') \
				$(awk -v a=$(get "$a" se_ns) -v m=$(get "$a" mean_ns) \
					'BEGIN { printf "%.1f", 100 * a / m }') \
				$(get "$a" retx_msgs) $5 \
				$(awk -v f=$(get "$mm" p_fallback) -v a=$(get "$mm" p_ack) \
					-v n=$5 'BEGIN { printf "%.1f", (f + a) * n }')
		done
	done
}

case $what in
sr) sr_table ;;
ec) ec_table ;;
ecmodel) ecmodel_table ;;
all) sr_table; echo; ec_table; echo; ecmodel_table ;;
*) echo "usage: $0 [sr|ec|ecmodel|all]" >&2; exit 2 ;;
esac
