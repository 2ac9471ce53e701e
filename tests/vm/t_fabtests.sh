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
# does not; Fail, Excluded or a listed Notrun that now passes fail.  The
# lossy pass leaves the listed Notrun tests out (runfabtests.sh -e; they
# end before any packet, so loss changes nothing): Excluded is their skip
# there.  A
# test the list marks Lossy must pass loss-free and may pass or report
# Notrun at the lossy profile (a datagram endpoint's lost packet is not
# resent; the test times out with -FI_ENODATA, or runfabtests.sh's -T
# bound ends it).
# Memory, one point per pass: no program's maximum resident set (GNU
# time's, each program run through a wrapper that records it) goes over
# fabtests' own message buffer by more than 64 MiB, the provider's share.
# fabtests sizes that buffer 2 x 64 (its window) x min(max_msg_size,
# 8 MiB) and writes it whole: 1 GiB for an RDM endpoint (max_msg_size
# 1 GiB), 128 MiB for a datagram one (1 MiB).  How many programs went
# over 256 MiB is said beside it (libfabric's tcp;ofi_rxm takes 1.1 to
# 1.4 GiB in the same programs; fi_sdr(7), FABTESTS).
#
# t_fabtests:GLOB runs the passes whose names match GLOB ("delay*": the
# lossy one, as make check does).
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
share_kb=$((64 * 1024))
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

# the expected Notrun tests: "Notrun<TAB>test<TAB>reason"; the tests
# that may report Notrun under loss: "Lossy<TAB>test<TAB>reason"
declare -A reason=() lossy=()
while IFS=$'\t' read -r res name why; do
	case $res in
	''|'#'*) ;;
	Notrun) reason[$name]=$why ;;
	Lossy) lossy[$name]=$why ;;
	*) not_ok "$expected: '$res' is no result this list takes" ;;
	esac
done <"$expected"

# quick NAME: one run of the quick set, its points.
quick() {	# quick NAME LOSSY(0|1)
	local pass=$1 lossy_pass=$2 out name res line max big t
	local -a excl=()
	declare -A seen=()
	out=$wrap/out.$pass
	: >"$rsslog"
	# The lossy pass leaves out the tests listed Notrun: they stop at
	# fi_getinfo or endpoint setup, before any packet, so the loss-free
	# pass says all there is (about 3 s each under TCG).
	# runfabtests.sh -e takes comma-separated regexes, matched against
	# the test's name; each here is anchored, metacharacters escaped.
	if [ "$lossy_pass" = 1 ] && [ "${#reason[@]}" -gt 0 ]; then
		excl=(-e "$(printf '%s\n' "${!reason[@]}" |
			sed 's/[][\.*^$+?(){}|/]/\\&/g; s/.*/^&$/' | paste -sd,)")
	fi
	diag "$pass: runfabtests.sh -t quick -T $timeout_s -vv -s 198.18.0.2 -c 198.18.0.1${excl[0]+ -e <the ${#reason[@]} tests listed Notrun>} sdr"
	(cd "$wrap" && "$bin/runfabtests.sh" -p "$wrap" -t quick -T "$timeout_s" -vv \
		"${excl[@]}" -s 198.18.0.2 -c 198.18.0.1 sdr) >"$out" 2>&1
	grep -E '^# Total|^# Percentage' "$out" | sed "s/^# /# $pass: /"
	name=
	res=
	while IFS= read -r line; do
		case $line in
		'- name:   '*)
			name=${line#- name:   }
			name=${name% -p \"sdr\"}
			res= ;;
		'  result: '*)
			res=${line#  result: } ;;
		'  time:   '*)
			t=${line#  time:   }
			[ -n "$name" ] && [ -n "$res" ] || continue
			seen[$name]=1
			diag "$pass: $name: $res, ${t} s"
			verdict "$pass" "$lossy_pass" "$name" "$res" "$t" "$out"
			name= ;;
		esac
	done <"$out"
	for name in "${!reason[@]}"; do
		[ -n "${seen[$name]+set}" ] ||
			not_ok "$pass: $name: listed in tests/fabtests/expected, not run"
	done
	[ "${#seen[@]}" -gt 0 ] || { not_ok "$pass: runfabtests.sh reported no test"; tail -n 20 "$out" | sed 's/^/# /'; }
	# the largest resident set of any program of the set
	# GNU time writes "Command exited with non-zero status N" before
	# the "%M %C" line of a program that failed: numbers only
	max=$(grep -E '^[0-9]+ ' "$rsslog" | sort -n | tail -n 1)
	big=$(awk -v s="$share_kb" '$1 ~ /^[0-9]+$/ {
		buf = ($0 ~ /-e dgram|\/fi_dgram/) ? 131072 : 1048576
		if ($1 + 0 > buf + s) print }' "$rsslog")
	diag "$pass: $(grep -cE '^[0-9]+ ' "$rsslog") programs ran; the largest resident set: ${max:-none} (KiB, command)"
	diag "$pass: $(awk '$1 ~ /^[0-9]+$/ && $1 + 0 > 262144' "$rsslog" | wc -l) of them over 256 MiB (fabtests' 1 GiB buffer for RDM endpoints)"
	if [ -n "$max" ] && [ -z "$big" ]; then
		ok "$pass: every program within fabtests' message buffer + 64 MiB resident"
	else
		not_ok "$pass: every program within fabtests' message buffer + 64 MiB resident"
		printf '%s\n' "$big" | head -n 10 | sed 's/^/# over: /'
	fi
	cp "$out" "/tmp/fabtests.$pass.log"
}

# verdict PASS LOSSY NAME RESULT SECONDS LOG: the point of one test.
verdict() {
	local pass=$1 lossy_pass=$2 name=$3 res=$4 t=$5 log=$6
	if [ "$res" = Pass ] && [ -z "${reason[$name]+set}" ]; then
		ok "$pass: $name"
	elif [ "$res" = Pass ]; then
		not_ok "$pass: $name: Pass, but tests/fabtests/expected lists it as Notrun"
	elif [ "$res" = Notrun ] && [ -n "${reason[$name]+set}" ]; then
		skip "$pass: $name" "Notrun: ${reason[$name]}"
	elif [ "$res" = Excluded ] && [ "$lossy_pass" = 1 ] &&
	     [ -n "${reason[$name]+set}" ]; then
		skip "$pass: $name" "left to the loss-free pass (Notrun: ${reason[$name]})"
	elif [ "$lossy_pass" = 1 ] && [ -n "${lossy[$name]+set}" ] &&
	     { { [ "$res" = Notrun ] && show "$log" "$name" | grep -q 'timeout expired'; } ||
	       { [ "$res" = Fail ] && [ "$t" -ge $((timeout_s - 1)) ] 2>/dev/null; }; }; then
		# fabtests' own wait for a completion expired (-FI_ENODATA),
		# or the program waited until runfabtests.sh's bound ended it
		skip "$pass: $name" "$res after a wait for a lost datagram (${t} s): ${lossy[$name]}"
	else
		not_ok "$pass: $name: $res${reason[$name]+ (expected Notrun)}"
		show "$log" "$name"
	fi
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

# the passes whose names match $1 (tests/vm/run t_fabtests:GLOB), else both
want=${1:-*}
ran=0
# shellcheck disable=SC2254
case loss-free in $want)
	netem ""
	quick loss-free 0
	ran=1 ;;
esac
# shellcheck disable=SC2254
case "delay 2ms loss 0.5%" in $want)
	netem "delay 2ms loss 0.5%"
	quick "delay 2ms loss 0.5%" 1
	netem ""
	ran=1 ;;
esac
[ "$ran" = 1 ] || not_ok "no pass is named '$want' (loss-free, \"delay 2ms loss 0.5%\")"
done_testing
