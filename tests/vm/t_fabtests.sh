#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libfabric's own test suite against the provider: fabtests 1.17.0's
# quick set (runfabtests.sh -t quick: unit, functional and short tests),
# run as the suite runs any provider, the server on rxe1 (198.18.0.2),
# the client on rxe0 (198.18.0.1), each program bounded by -T 30; once
# loss-free and once with netem "delay 2ms loss 0.5%" on the links
# (tools/vm/netem-set).
# One point per test and pass: Pass is ok; Notrun is a skip when
# tests/fabtests/expected lists it (with its reason), a failure when it
# does not; Fail, Excluded or a listed Notrun that now passes fail.  One
# point per pass for memory: every program of the set stays under
# 256 MiB resident (GNU time's maximum RSS, each program run through a
# wrapper that records it).
#
# Not in the default boot: fabtests is built on the host first
# (tests/fabtests/build); tests/run-fabtests builds it and boots this.
# vm-only-when-named
# vm-timeout-factor: 6
. "$(dirname "$0")/lib.sh"

expected=$TOP/tests/fabtests/expected
bin=
for d in "$TOP"/build/fabtests/*/; do
	[ -e "$d.built" ] && bin=${d}bin
done
[ -n "$bin" ] || skip_all "fabtests is not built (tests/fabtests/build)"
[ -f "$expected" ] || skip_all "no $expected"
[ -x /usr/bin/time ] || skip_all "no /usr/bin/time (tools/deps fabtests)"
sdr_load
export FI_PROVIDER_PATH=$TOP/provider
[ -f "$FI_PROVIDER_PATH/libsdr-fi.so" ] || skip_all "provider/libsdr-fi.so not built"
limit_kb=$((256 * 1024))
timeout_s=${SDR_FABTESTS_TIMEOUT:-30}

# The wrappers: runfabtests.sh runs "$BIN/<program> args"; each wrapper
# records the program's maximum resident set and its command line.
wrap=$(mktemp -d)
rsslog=$wrap/rss.log
trap 'rm -rf "$wrap"' EXIT
for p in "$bin"/*; do
	[ -x "$p" ] || continue
	case $(basename "$p") in *.sh|*.py|rft_*) continue ;; esac
	printf '#!/bin/sh\nexec /usr/bin/time -a -o %s -f "%%M %%C" %s "$@"\n' \
		"$rsslog" "$p" >"$wrap/$(basename "$p")"
	chmod +x "$wrap/$(basename "$p")"
done

# the expected Notrun tests: "Notrun<TAB>test<TAB>reason"
declare -A reason=()
while IFS=$'\t' read -r res name why; do
	case $res in ''|'#'*) continue ;; esac
	[ "$res" = Notrun ] || { not_ok "$expected: '$res' is no result this list takes"; continue; }
	reason[$name]=$why
done <"$expected"

# quick NAME: one run of the quick set, its points.
quick() {
	local pass=$1 out name res line max big
	declare -A seen=()
	out=$wrap/out.$pass
	: >"$rsslog"
	diag "$pass: runfabtests.sh -t quick -T $timeout_s -vv -s 198.18.0.2 -c 198.18.0.1 sdr"
	(cd "$wrap" && "$bin/runfabtests.sh" -p "$wrap" -t quick -T "$timeout_s" -vv \
		-s 198.18.0.2 -c 198.18.0.1 sdr) >"$out" 2>&1
	grep -E '^# Total|^# Percentage' "$out" | sed "s/^# /# $pass: /"
	name=
	while IFS= read -r line; do
		case $line in
		'- name:   '*)
			name=${line#- name:   }
			name=${name% -p \"sdr\"} ;;
		'  result: '*)
			res=${line#  result: }
			[ -n "$name" ] || continue
			seen[$name]=1
			case $res in
			Pass)
				if [ -n "${reason[$name]+set}" ]; then
					not_ok "$pass: $name: Pass, but tests/fabtests/expected lists it as Notrun"
				else
					ok "$pass: $name"
				fi ;;
			Notrun)
				if [ -n "${reason[$name]+set}" ]; then
					skip "$pass: $name" "Notrun: ${reason[$name]}"
				else
					not_ok "$pass: $name: Notrun, and tests/fabtests/expected does not list it"
					show "$out" "$name"
				fi ;;
			*)
				not_ok "$pass: $name: $res"
				show "$out" "$name" ;;
			esac
			name= ;;
		esac
	done <"$out"
	for name in "${!reason[@]}"; do
		[ -n "${seen[$name]+set}" ] ||
			not_ok "$pass: $name: listed in tests/fabtests/expected, not run"
	done
	[ "${#seen[@]}" -gt 0 ] || { not_ok "$pass: runfabtests.sh reported no test"; tail -n 20 "$out" | sed 's/^/# /'; }
	# the largest resident set of any program of the set
	max=$(sort -n "$rsslog" | tail -n 1)
	big=$(awk -v l="$limit_kb" '$1 > l' "$rsslog")
	diag "$pass: $(wc -l <"$rsslog") programs ran; the largest resident set: ${max:-none} (KiB, command)"
	if [ -n "$max" ] && [ -z "$big" ]; then
		ok "$pass: every program under 256 MiB resident"
	else
		not_ok "$pass: every program under 256 MiB resident"
		printf '%s\n' "$big" | head -n 10 | sed 's/^/# over: /'
	fi
	cp "$out" "/tmp/fabtests.$pass.log"
}

# show LOG NAME: the server's and client's output of the test NAME.
show() {
	awk -v n="- name:   $2 -p \"sdr\"" '
		$0 == n { on = 1; next }
		on && /^- name:/ { exit }
		on { print }' "$1" | grep -v '^  timestamp' | head -n 40 | sed 's/^/# /'
}

# the guest's links' profile, as tests/vm/run sets it between tests
netem() { "$TOP"/tools/vm/netem-set "$1" || not_ok "netem '$1' set on the links"; }

netem ""
quick loss-free
netem "delay 2ms loss 0.5%"
quick "delay 2ms loss 0.5%"
netem ""
done_testing
