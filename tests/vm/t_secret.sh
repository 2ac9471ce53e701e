#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The job secret end to end (issue #40): every program that opens sdr
# through libsdr picks SDR_SECRET_FILE up (sdr_open() puts the file in the
# process keyring as "sdr:file"), so with one file of 32 random bytes
# given to both ends, sdr_perf (SR, --verify, also --auth aead; JSON
# "kex":"psk"), sdr-allreduce, the SDK program sdk_bulk, fi_pingpong over
# the provider and Open MPI over it connect and move verified data as
# before.  A peer with another secret, or with none, cannot connect: both
# ends of sdr_perf fail by themselves, each saying which end lacks the
# secret (EKEYREJECTED); both ends of sdk_bulk fail; the client of
# fi_pingpong fails with EKEYREJECTED (the reject carries it).
. "$(dirname "$0")/lib.sh"

plan 21
sdr_load
perf=$TOP/tools/sdr_perf
cli=$(mktemp)
srv=$(mktemp)
secret_a=$(mktemp)
secret_b=$(mktemp)
head -c 32 /dev/urandom >"$secret_a"
head -c 32 /dev/urandom >"$secret_b"
trap 'rm -f "$cli" "$srv" "$secret_a" "$secret_b"' EXIT
export FI_PROVIDER_PATH=$TOP/provider TMPDIR=/tmp
port=18540

# perf SERVER-SECRET CLIENT-SECRET ARGS...: one sdr_perf pair (server on
# rxe1, client on rxe0), each end given its file ("" for none); the
# client's output in $cli, the server's in $srv, exit statuses in
# $crc/$src.  A timeout (124) means a side hung.
perf() {
	local ss=$1 cs=$2 s
	shift 2
	port=$((port + 1))
	timeout -k 5 120 "$perf" -d rxe1 -p "$port" ${ss:+--secret-file "$ss"} \
		>"$srv" 2>&1 &
	s=$!
	wait_listen "$port"
	timeout -k 5 120 "$perf" -d rxe0 -p "$port" ${cs:+--secret-file "$cs"} \
		"$@" 198.18.0.2 >"$cli" 2>&1
	crc=$?
	wait "$s"
	src=$?
	sed 's/^/# client: /' "$cli" | tail -n 3
	sed 's/^/# server: /' "$srv" | tail -n 2
}

# 1. sdr_perf with the secret on both ends
for auth in "" aead; do
	perf "$secret_a" "$secret_a" -P sr -s 1M -n 8 --verify --json ${auth:+--auth "$auth"}
	name="sdr_perf SR${auth:+ --auth $auth}, both with the secret"
	check "$name: both exit 0 ($crc/$src)" test "$crc/$src" = 0/0
	check "$name: JSON kex psk, auth ${auth:-any}, 8 messages, verify_errors 0" python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["kex"] == "psk" and j["messages"] == 8 and j["verify_errors"] == 0, j
assert j["failed_messages"] == 0 and j["auth"] != "off", j
assert sys.argv[2] in ("", j["auth"]), j["auth"]' "$(tail -n 1 "$cli")" "$auth"
done

# 2. a peer with another secret, or none: refused on both ends, by name
# failed NAME: both ended non-zero by themselves (124/137: killed by timeout)
failed() {
	check "$1: both ends fail, neither hangs ($crc/$src)" \
		eval 'test "$crc" != 0 -a "$crc" != 124 -a "$crc" != 137 -a \
			   "$src" != 0 -a "$src" != 124 -a "$src" != 137'
}
perf "$secret_a" "$secret_b" -P sr -s 64K -n 2 --verify
failed "sdr_perf, server secret A, client secret B"
check "... each end says the peer does not hold this job's secret" \
	eval 'grep -q "Key was rejected.*does not hold this job.s secret" "$cli" &&
	      grep -q "Key was rejected.*does not hold this job.s secret" "$srv"'
perf "" "$secret_a" -P sr -s 64K -n 2 --verify
failed "sdr_perf, client secret A, server none"
check "... each end names the job secret it lacks or the peer lacks" \
	eval 'grep -q "Key was rejected.*does not hold this job.s secret" "$cli" &&
	      grep -q "Key was rejected.*peer holds a job secret and this side none" "$srv"'

# 3. sdr-allreduce: every rank opens with SDR_SECRET_FILE
SDR_SECRET_FILE=$secret_a timeout -k 5 120 "$TOP/tools/sdr-allreduce" -n 2 \
	-d "$SDR_DEV0,$SDR_DEV1" -s 64K -i 4 -P sr --json >"$cli" 2>&1
rc=$?
sed 's/^/# /' "$cli" | tail -n 3
check "sdr-allreduce, 2 ranks, SR, with the secret: exit 0 ($rc)" test "$rc" = 0
check "sdr-allreduce: every step's sums verified (JSON)" python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["ranks"] == 2 and j["verified"] is True, j
assert all(r["wrong_floats"] == 0 for r in j["runs"]), j' "$(tail -n 1 "$cli")"

# ... and it reads the file: one too short for a secret fails every rank
head -c 8 /dev/urandom >"$secret_b.short"
SDR_SECRET_FILE=$secret_b.short timeout -k 5 60 "$TOP/tools/sdr-allreduce" -n 2 \
	-d "$SDR_DEV0,$SDR_DEV1" -s 4096 -i 1 -P sr -t 30 >"$cli" 2>&1
rc=$?
rm -f "$secret_b.short"
sed 's/^/# /' "$cli" | tail -n 2
check "sdr-allreduce, an 8-byte SDR_SECRET_FILE: exit 1, the open says why ($rc)" \
	eval 'test "$rc" = 1 && grep -q "Invalid argument" "$cli"'

# 4. the SDK program: receiver on rxe1, sender on rxe0, one geometry
port=$((port + 1))
bulk=(-n 16 -s 1048576 -w 4 -c 16)
SDR_SECRET_FILE=$secret_a timeout -k 5 120 "$TOP/tools/sdk_bulk" -d rxe1 -p "$port" \
	"${bulk[@]}" >"$srv" 2>&1 &
s=$!
wait_listen "$port"
SDR_SECRET_FILE=$secret_a timeout -k 5 120 "$TOP/tools/sdk_bulk" -d rxe0 -p "$port" \
	"${bulk[@]}" 198.18.0.2 >"$cli" 2>&1
crc=$?
wait "$s"
src=$?
sed 's/^/# sender: /' "$cli"
sed 's/^/# receiver: /' "$srv"
check "sdk_bulk, 16 messages of 1 MiB, with the secret: both exit 0 ($crc/$src)" \
	test "$crc/$src" = 0/0
check "sdk_bulk: every byte checked, 0 verify errors" grep -q ', 0 verify errors$' "$srv"
port=$((port + 1))
SDR_SECRET_FILE=$secret_a timeout -k 5 60 "$TOP/tools/sdk_bulk" -d rxe1 -p "$port" \
	"${bulk[@]}" >"$srv" 2>&1 &
s=$!
wait_listen "$port"
SDR_SECRET_FILE=$secret_b timeout -k 5 60 "$TOP/tools/sdk_bulk" -d rxe0 -p "$port" \
	"${bulk[@]}" 198.18.0.2 >"$cli" 2>&1
crc=$?
wait "$s"
src=$?
sed 's/^/# sender: /' "$cli"
sed 's/^/# receiver: /' "$srv"
failed "sdk_bulk, secrets A and B"

# 5. the provider: fi_pingpong over RDM endpoints (SR), server on rxe1
# and client on rxe0, each with its SDR_SECRET_FILE ("" for none)
pp() {	# pp SERVER-SECRET CLIENT-SECRET ARGS...: starts the server ($spid)
	local ss=$1 cs=$2
	shift 2
	port=$((port + 1))
	SDR_SECRET_FILE=$ss timeout -k 5 240 fi_pingpong -p sdr -e rdm -B "$port" \
		-d rxe1 "$@" >"$srv" 2>&1 &
	spid=$!
	wait_listen "$port"
	SDR_SECRET_FILE=$cs timeout -k 5 240 fi_pingpong -p sdr -e rdm -P "$port" \
		-d rxe0 "$@" 198.18.0.2 >"$cli" 2>&1
	crc=$?
}
t0=$SECONDS
pp "$secret_a" "$secret_a" -I 4 -S 1048576 -c
wait "$spid"
src=$?
diag "fi_pingpong with the secret: $((SECONDS - t0)) s"
sed 's/^/# client: /' "$cli" | tail -n 2
[ "$src" = 0 ] || sed 's/^/# server: /' "$srv" | tail -n 4
check "fi_pingpong -p sdr, both with the secret: both exit 0 ($crc/$src)" test "$crc/$src" = 0/0
check "fi_pingpong: 4 exchanges of 1m, data checked" grep -qE '^1m +' "$cli"
# Another secret: the server's provider refuses the client's connect and
# says why in the reject, so the client's first send fails with
# EKEYREJECTED.  The server's fi_pingpong, which on an RDM endpoint
# learns of no peer until a message comes, is stopped once the client
# gave up; it must not have run a test.
pp "$secret_a" "$secret_b" -I 1 -S 1024 -c
wait_for 5 eval '! kill -0 "$spid" 2>/dev/null'
kill "$spid" 2>/dev/null
wait "$spid"
src=$?
sed 's/^/# client: /' "$cli" | tail -n 2
sed 's/^/# server: /' "$srv" | tail -n 2
check "fi_pingpong -p sdr, secrets A and B: the client fails by itself, the server ran nothing ($crc/$src)" \
	eval 'test "$crc" != 0 -a "$crc" != 124 -a "$crc" != 137 -a "$src" != 0 &&
	      ! grep -qE "^1k +" "$srv"'
check "... the client says its key was rejected" grep -q 'Key was rejected' "$cli"

# MPI over the provider: every rank gets the file (mpirun -x), ranks
# alternating rxe0 and rxe1
if ! command -v mpirun >/dev/null || [ ! -x "$TOP/tests/vm/bin/mpi_check" ]; then
	skip "mpi_check, 2 ranks, with the secret: exit 0" "needs Open MPI and tests/vm/bin/mpi_check"
	skip "mpi_check: all 20 checks passed" "needs Open MPI and tests/vm/bin/mpi_check"
else
	wrap=$(mktemp)
	cat >"$wrap" <<'EOF'
#!/bin/bash
export FI_SDR_DEVICE=rxe$((OMPI_COMM_WORLD_RANK % 2))
exec "$@"
EOF
	chmod +x "$wrap"
	t0=$SECONDS
	res=$(SDR_SECRET_FILE=$secret_a timeout 300 mpirun --allow-run-as-root \
		--oversubscribe -np 2 --mca pml cm --mca mtl ofi \
		--mca mtl_ofi_provider_include sdr --mca btl self \
		-x FI_PROVIDER_PATH -x TMPDIR -x SDR_SECRET_FILE \
		"$wrap" "$TOP/tests/vm/bin/mpi_check" 1048576 2>&1)
	rc=$?
	rm -f "$wrap"
	diag "mpi_check, 2 ranks: $((SECONDS - t0)) s"
	printf '%s\n' "$res" | grep -E '^not ok|rank [0-9]+:' | head -n 10 | sed 's/^/# /'
	check "mpi_check, 2 ranks, with the secret: exit 0 ($rc)" test "$rc" = 0
	# messages up to 1 MiB: 20 checks (mpi_check.c's main)
	check "mpi_check: all 20 checks passed" \
		test "$(printf '%s\n' "$res" | grep -c '^ok ')/$(printf '%s\n' "$res" | grep -c '^not ok')" = 20/0
fi
check "no flow left behind" test "$(cat /sys/class/sdr/rxe0/nr_flows)/$(cat /sys/class/sdr/rxe1/nr_flows)" = 0/0
done_testing
