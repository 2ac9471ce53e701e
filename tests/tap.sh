# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The TAP consumer's rules, in one place (sourced by tests/run-all and
# tests/vm/run; Documentation/testing.rst, "Counting"):
#
#   - a point is a line "ok ..." or "not ok ..."; "ok ... # SKIP reason"
#     (any case) is skipped, every other "ok" passed, every "not ok" failed
#     (there is no TODO: a known failure is a failure); "Bail out!" failed;
#   - one stream has exactly one plan "1..N" and N points; a plan
#     "1..0 # SKIP reason" with no points is one skipped point.
#
# tap_classify LINE: prints plan, pass, fail, skip, skipall or other.
tap_classify() {
	local l=$1
	case $l in
	"not ok"|"not ok "*|"Bail out!"*) echo fail ;;
	ok|"ok "*)
		# The directive follows the first '#'.
		if [[ $l =~ ^ok[^#]*#[[:space:]]*[Ss][Kk][Ii][Pp] ]]; then
			echo skip
		else
			echo pass
		fi
		;;
	1..*)
		if [[ $l =~ ^1\.\.0[[:space:]]*#[[:space:]]*[Ss][Kk][Ii][Pp] ]]; then
			echo skipall
		elif [[ $l =~ ^1\.\.[0-9]+([[:space:]]*#.*)?[[:space:]]*$ ]]; then
			echo plan
		else
			echo other
		fi
		;;
	*) echo other ;;
	esac
}

# tap_awk: the same rules for whole files (awk is faster than a shell loop).
_tap_awk='
function kind(l) {
	if (l ~ /^not ok( |$)/ || l ~ /^Bail out!/) return "fail"
	if (l ~ /^ok( |$)/) {
		d = l; sub(/^ok[^#]*/, "", d)
		return tolower(d) ~ /^#[ \t]*skip/ ? "skip" : "pass"
	}
	if (tolower(l) ~ /^1\.\.0[ \t]*#[ \t]*skip/) return "skipall"
	if (l ~ /^1\.\.[0-9]+([ \t]*#.*)?[ \t]*$/) return "plan"
	return "other"
}
'

# tap_check NAME FILE: FILE holds one TAP stream; prints one "not ok"
# point per way it breaks the rules above (nothing when it keeps them).
tap_check() {
	awk -v name="$1" "$_tap_awk"'
	{
		k = kind($0)
		if (k == "pass" || k == "skip" || k == "fail") points++
		if (k == "plan" || k == "skipall") {
			plans++
			planned = $0; sub(/^1\.\./, "", planned); planned += 0
		}
		if (k == "skipall") skipall = 1
	}
	END {
		if (plans == 0)
			print "not ok - " name ": no plan (1..N): it died or never started"
		else if (plans > 1)
			print "not ok - " name ": " plans " plans in one stream"
		else if (points != planned)
			print "not ok - " name ": planned " planned " points, got " points
		else if (points == 0 && !skipall)
			print "not ok - " name ": no test points"
	}' "$2"
}

# tap_count FILE...: prints "PASSED FAILED SKIPPED" over all the files.
tap_count() {
	awk "$_tap_awk"'
	{
		k = kind($0)
		if (k == "pass") p++
		else if (k == "fail") f++
		else if (k == "skip" || k == "skipall") s++
	}
	END { printf "%d %d %d\n", p, f, s }' "$@"
}

# tap_summary FILE...: the final line, "N passed, N failed, N skipped";
# true only when nothing failed and something passed.
tap_summary() {
	local p f s
	read -r p f s < <(tap_count "$@")
	echo "$p passed, $f failed, $s skipped"
	[ "$f" -eq 0 ] && [ "$p" -gt 0 ]
}

# point "ok"|"not ok" TEXT: the next point of a runner's stream, counted in
# the runner's n (all points) and fail (the failed ones).
point() {
	n=$((n + 1))
	[ "$1" = ok ] || fail=$((fail + 1))
	echo "$1 $n - $2"
}

# tap_boot DESC TMO: the points of one guest boot (tools/sdr-vm running
# tests/vm/run, bounded by --timeout TMO), read from stdin, whose last line
# is "rc=N", the boot's exit status.  Each point is renumbered through the
# caller's point (above), any other line becomes a "# " line,
# and a stream that breaks the rules above, or a boot that failed without
# a failed point of its own (a timeout, a guest that died, trouble in its
# kernel log), adds a failed point.
tap_boot() {
	local desc=$1 tmo=$2 rc=125 line kind bad t
	t=$(mktemp)
	while IFS= read -r line; do
		case $line in rc=*) rc=${line#rc=}; continue ;; esac
		printf '%s\n' "$line" >>"$t"
		kind=$(tap_classify "$line")
		case $kind in
		pass|skip|fail)
			line=$(printf '%s' "$line" | sed -E 's/^(not )?ok *[0-9]* *-? *//')
			if [ "$kind" = fail ]; then
				point "not ok" "$line"
			else
				point ok "$line"
			fi
			;;
		plan|skipall) ;;
		*) case $line in '#'*) printf '%s\n' "$line" ;; *) printf '# %s\n' "$line" ;; esac ;;
		esac
	done
	bad=$(tap_check "boot $desc" "$t")
	[ -z "$bad" ] || while IFS= read -r line; do
		point "not ok" "${line#not ok - }"
	done <<<"$bad"
	case $rc in
	0) ;;
	124) point "not ok" "boot $desc: the guest outlived --timeout $tmo" ;;
	125) point "not ok" "boot $desc: the guest could not be set up or died" ;;
	126) point "not ok" "boot $desc: trouble in the guest's kernel log" ;;
	*) grep -q '^not ok' "$t" ||
		point "not ok" "boot $desc: exit status $rc without a failed point" ;;
	esac
	rm -f "$t"
}
