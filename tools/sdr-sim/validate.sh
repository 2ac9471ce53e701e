#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The validation table of Documentation/protocol.rst: sdr-sim against the
# SDR-RDMA SR model at 400 Gbit/s, 25 ms RTT, MTU 4096.
#   rto:  RTO-only recovery, no backoff (the model's assumptions)
#   nack: the engine's defaults (NACK + RTO, backoff while silent)
set -e
cd "$(dirname "$0")"
[ -x ./sdr-sim ] || make -s
get() { echo "$1" | grep -o "\"$2\":[0-9.e+-]*" | head -1 | cut -d: -f2; }
ms() { awk -v v="$1" 'BEGIN { printf "%.1f", v / 1e6 }'; }
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
