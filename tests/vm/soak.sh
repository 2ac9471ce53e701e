#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make soak (not in make check): SDR_SOAK_SECONDS (600) of everything at
# once.  sdr_perf pairs under NONE, SR, EC, ADAPTIVE and AUTO move
# verified messages from rxe0 to rxe1 back to back; the link's netem profile changes every
# SDR_SOAK_STEP (30) seconds; rogues spray forged and replayed packets at
# both ends; the ioctl/mmap/close fuzzer runs from several threads.
# Passes with zero verify errors, every reliable run complete, every
# fuzzer run clean, and slab usage at the end (every flow gone, caches
# dropped) within 5% of the start.  tests/vm/run adds the kernel log check
# and the unload.
. "$(dirname "$0")/lib.sh"

secs=${SDR_SOAK_SECONDS:-600}
step=${SDR_SOAK_STEP:-30}
profiles=(
	"delay 5ms"
	"delay 10ms loss 1%"
	"delay 5ms loss 5%"
	"loss gemodel 1% 10%"
	"delay 10ms loss 1% reorder 10% duplicate 1% corrupt 0.1%"
	"delay 2ms loss 0.1%"
)
plan 6
sdr_load
perf=$TOP/tools/sdr_perf
rogue=$TOP/tests/vm/bin/rogue
fuzz=$TOP/tests/vm/bin/t_fuzz_ioctl
tmp=$(mktemp -d)
stop=$tmp/stop

# slab: kB of slab objects in use (active objects times their size, from
# /proc/slabinfo) once reclaimable caches are dropped and the number has
# settled (freed objects go back after an RCU grace period).  Objects, not
# the pages slab holds: after heavy churn a cache keeps partly used pages
# that a leak check must not count.  SLUB counts a free object as active
# while it sits in a CPU's slab or partial list, so every cache is shrunk
# first (/sys/kernel/slab/*/shrink flushes those to the node's lists,
# where slabinfo counts them free): else the churn of the last seconds on
# each CPU would read as growth.
slab_kb() {
	local f
	for f in /sys/kernel/slab/*/shrink; do
		echo 1 >"$f" 2>/dev/null
	done
	awk 'FNR > 2 { kb += $2 * $4 } END { printf "%d\n", kb / 1024 }' /proc/slabinfo
}
slab() {
	local a b i
	sync
	echo 3 >/proc/sys/vm/drop_caches
	b=$(slab_kb)
	for i in $(seq 30); do
		a=$b
		sleep 1
		echo 3 >/proc/sys/vm/drop_caches
		b=$(slab_kb)
		[ $(( (a > b ? a - b : b - a) * 1000 )) -le $((b * 5)) ] && break
	done
	echo "$b"
}

# one warm-up transfer per policy, so caches the first flows create count
# in the start
for p in none sr ec adaptive auto; do
	"$perf" -d rxe1 -P "$p" -p 18790 -q >/dev/null 2>&1 &
	wait_listen 18790
	"$perf" -d rxe0 -P "$p" -p 18790 -q -n 20 -s 256K 198.18.0.2 >/dev/null 2>&1
	wait
done
slab0=$(slab)
# threads alive: a kworker the load made lingers up to 5 minutes idle, and
# its task_struct, stack and sighand count in slab
kworkers() { grep -l '^kworker' /proc/[0-9]*/comm 2>/dev/null | wc -l; }
tasks() { echo "$(ls -d /proc/[0-9]* | wc -l) tasks, $(kworkers) kworkers"; }
tasks0=$(tasks)
kw0=$(kworkers)
info0=$(mktemp)
cp /proc/slabinfo "$info0"
diag "slab at the start: $slab0 kB"

# perf_loop POLICY PORT: back-to-back verified runs until the stop file
perf_loop() {
	local p=$1 port=$2 i=0 rc
	until [ -e "$stop" ]; do
		i=$((i + 1))
		"$perf" -d rxe1 -P "$p" -p "$port" --verify -q >"$tmp/$p.$i.srv" 2>&1 &
		local spid=$!
		wait_listen "$port"
		"$perf" -d rxe0 -P "$p" -p "$port" --verify --json -q -D 20 \
			-s $(( (RANDOM % 2048 + 1) * 1024 )) 198.18.0.2 >"$tmp/$p.$i.cli" 2>&1
		rc=$?
		wait "$spid"
		echo "$p $i $rc $?" >>"$tmp/perf.rc"
	done
}

rogue_loop() {	# rogue_loop DEV PEER SEED
	local s=$3
	until [ -e "$stop" ]; do
		"$rogue" -d "$1" -p "$2" -r 300 -s "$s" -t "$step" --wait "$step" -q \
			>>"$tmp/rogue.$1" 2>&1
		echo "$1 $?" >>"$tmp/rogue.rc"
		s=$((s + 2))
	done
}

fuzz_loop() {
	local i=0
	until [ -e "$stop" ]; do
		i=$((i + 1))
		# only the fuzzing: its other tests want the module to themselves
		SDR_FUZZ_SECONDS=$step "$fuzz" fuzz >"$tmp/fuzz.$i" 2>&1
		echo "$i $?" >>"$tmp/fuzz.rc"
	done
}

perf_loop none 18791 & perf_loop sr 18792 & perf_loop ec 18793 &
perf_loop adaptive 18794 & perf_loop auto 18795 &
rogue_loop rxe1 rxe0 1 & rogue_loop rxe0 rxe1 2 &
fuzz_loop &

start=$SECONDS
k=0
while [ $((SECONDS - start)) -lt "$secs" ]; do
	prof=${profiles[$((k % ${#profiles[@]}))]}
	for d in veth0 veth1; do
		# shellcheck disable=SC2086
		tc qdisc replace dev "$d" root netem limit 100000 $prof
	done
	diag "$((SECONDS - start)) s: netem '$prof'"
	k=$((k + 1))
	# the next change is due at k * step seconds
	while [ $((SECONDS - start)) -lt $((k * step)) ]; do
		sleep 1
	done
done
touch "$stop"
wait
for d in veth0 veth1; do tc qdisc del dev "$d" root 2>/dev/null; done

runs=$(wc -l <"$tmp/perf.rc")
bad=$(awk '$3 != 0 || $4 != 0' "$tmp/perf.rc" | wc -l)
awk '$3 != 0 || $4 != 0 { print $1 "." $2 }' "$tmp/perf.rc" | head -n 5 |
while read -r f; do
	diag "run $f failed:"
	tail -n 3 "$tmp/$f.cli" "$tmp/$f.srv" | sed 's/^/#   /'
done
verr=$(cat "$tmp"/*.cli | python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    if line.startswith("{"):
        n += json.loads(line).get("verify_errors", 0)
print(n)')
srfail=$(cat "$tmp"/sr.*.cli "$tmp"/ec.*.cli "$tmp"/adaptive.*.cli \
	"$tmp"/auto.*.cli 2>/dev/null | python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    if line.startswith("{"):
        j = json.loads(line)
        n += j.get("failed_messages", 0) + (j["sent_messages"] - j["recv_ok"])
print(n)')
check "sdr_perf: $runs runs under netem changes and rogues, every one exit 0" test "$runs" -gt 0 -a "$bad" = 0
check "sdr_perf: zero verify errors" test "$verr" = 0
check "SR, EC, ADAPTIVE and AUTO: every message sent was received whole" test "$srfail" = 0
fruns=$(wc -l <"$tmp/fuzz.rc")
fbad=$(awk '$2 != 0' "$tmp/fuzz.rc" | wc -l)
awk '$2 != 0 { print $1 }' "$tmp/fuzz.rc" | head -n 2 | while read -r f; do
	diag "fuzzer run $f failed:"
	grep -E '^not ok|#' "$tmp/fuzz.$f" | tail -n 8 | sed 's/^/#   /'
done
check "ioctl fuzzer: $fruns runs, every one clean" test "$fruns" -gt 0 -a "$fbad" = 0
rruns=$(wc -l <"$tmp/rogue.rc")
diag "rogue: $rruns runs, $(awk '$2 != 0' "$tmp/rogue.rc" | wc -l) ended with an error"
diag "rxe1 drops: $(cd /sys/class/sdr/rxe1/drops && grep -H . bad_token bad_claim no_flow stale dup | tr '\n' ' ')"
check "sdr still has both devices, and no flow is left" \
	sh -c "test -d /sys/class/sdr/rxe0/flows -a -d /sys/class/sdr/rxe1/flows && ! ls /sys/class/sdr/*/flows/* >/dev/null 2>&1"
# the logs live in tmpfs: their inodes are no kernel growth
rm -rf "$tmp"
slab1=$(slab)
diag "slab at the end: $slab1 kB (start $slab0 kB)"
# The workqueue pools reap a kworker once it idled 5 minutes: while more
# are alive than at the start and slab is over, wait for them (up to 6
# minutes) and measure again, so threads the load woke are not a "leak".
over() { [ $(( (slab1 > slab0 ? slab1 - slab0 : slab0 - slab1) * 100 )) -gt $((slab0 * 5)) ]; }
waited=0
while over && [ "$(kworkers)" -gt "$kw0" ] && [ $waited -lt 360 ]; do
	sleep 30
	waited=$((waited + 30))
	slab1=$(slab)
done
[ $waited = 0 ] || diag "slab after $waited s for idle kworkers to exit: $slab1 kB"
diag "threads at the end: $(tasks) (start $tasks0)"
# the caches that grew most, in kB (name, start, end)
if [ -s "$info0" ]; then
	awk 'FNR > 2 { kb = $2 * $4 / 1024; if (FILENAME != "/proc/slabinfo") a[$1] = kb; else b[$1] = kb }
	     END { for (n in b) if (b[n] - a[n] > 64) printf "%s %d %d\n", n, a[n], b[n] }' \
		"$info0" /proc/slabinfo | sort -k3,3nr | head -n 8 |
		while read -r n x y; do diag "  slab $n: $x kB -> $y kB"; done
fi
check "slab at the end within 5% of the start" \
	test $(( (slab1 > slab0 ? slab1 - slab0 : slab0 - slab1) * 100 )) -le $((slab0 * 5))
rm -f "$info0"
done_testing
