#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every writable module parameter (the global defaults) is range-checked:
# a value just outside its documented [lo..hi] range is refused with
# EINVAL and the old value stays; both ends of the range are accepted.
# The ranges come from the parameter descriptions (modinfo), so a knob
# added later is covered without touching this test.
. "$(dirname "$0")/lib.sh"

sdr_load
P=/sys/module/sdr/parameters
ranges=$(modinfo -F parm "$KO" |
	sed -nE 's/^([a-z_0-9]+):.*\[([0-9]+)\.\.([0-9]+), default ([0-9]+)\].*/\1 \2 \3 \4/p')
mapfile -t knobs <<<"$ranges"

# writable NAME: the file's mode has the owner's w bit (root may write
# anything, so -w cannot tell a 0444 load-time parameter from a knob)
writable() { [ "$(stat -c %A "$P/$1" | cut -c3)" = w ]; }

# write NAME VALUE: prints the errno text of a refused write, or "ok"
# (bash's own write; a python per write made this test minutes long in TCG)
write() {
	local err

	err=$({ printf '%s\n' "$2" >"$P/$1"; } 2>&1)
	if [ -z "$err" ]; then
		echo ok
	else
		echo "${err##*: }"
	fi
}

n=0
for k in "${knobs[@]}"; do
	read -r name lo hi def <<<"$k"
	writable "$name" && n=$((n + 1))
done
plan $((n * 4 + 1))
check "modinfo lists $n writable knobs with a range" test "$n" -gt 10

for k in "${knobs[@]}"; do
	read -r name lo hi def <<<"$k"
	writable "$name" || continue
	old=$(cat "$P/$name")
	check "$name: default $def" test "$old" = "$def"
	below=$((lo - 1))
	[ "$lo" -eq 0 ] && below=-1
	r1=$(write "$name" "$below")
	r2=$(write "$name" $((hi + 1)))
	check "$name: $below and $((hi + 1)) refused with EINVAL, value kept" \
		test "$r1/$r2/$(cat "$P/$name")" = "Invalid argument/Invalid argument/$old"
	r1=$(write "$name" "$lo")
	v1=$(cat "$P/$name")
	r2=$(write "$name" "$hi")
	v2=$(cat "$P/$name")
	check "$name: $lo and $hi accepted" test "$r1 $v1 $r2 $v2" = "ok $lo ok $hi"
	write "$name" "$old" >/dev/null
	check "$name: restored" test "$(cat "$P/$name")" = "$old"
done
done_testing
