#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Open MPI over sdr: mpirun with the cm PML and the ofi MTL restricted to
# the libfabric provider sdr (provider/libsdr-fi.so), ranks alternating
# between rxe0 and rxe1 (FI_SDR_DEVICE), under the boot's netem profile
# (tests/vm/profiles: delay 5ms loss 1%).  tests/vm/mpi/mpi_check
# (point-to-point of 0 B .. 16 MiB with every byte checked, tag matching,
# Ssend, MPI_Probe and MPI_Mprobe, MPI_Allreduce of floats checked
# element by element) with 2 and 4 ranks, and an mpi4py all-reduce
# (tests/vm/mpi/allreduce.py) with 2.  Each run must pass every check,
# and its bytes must have gone through sdr (the devices' tx_bytes).  And
# the provider's datagram endpoints (policy NONE) on the same lossy link:
# t_fabric's dgram_datagrams, where what arrives is whole and in order.
. "$(dirname "$0")/lib.sh"

command -v mpirun >/dev/null || skip_all "needs Open MPI (openmpi-bin)"
[ -x "$TOP/tests/vm/bin/mpi_check" ] ||
	skip_all "tests/vm/bin/mpi_check not built (needs mpicc, libopenmpi-dev)"
tc qdisc show dev veth0 | grep -q netem ||
	skip_all "needs a netem profile (tests/vm/profiles)"
plan 10
sdr_load
diag "netem: $(tc qdisc show dev veth0 | sed 's/.*netem //')"
export FI_PROVIDER_PATH=$TOP/provider TMPDIR=/tmp
[ -f "$FI_PROVIDER_PATH/libsdr-fi.so" ] || diag "provider/libsdr-fi.so not built"
# one rank's device: ranks alternate between the two
wrap=$(mktemp)
cat >"$wrap" <<'EOF'
#!/bin/bash
export FI_SDR_DEVICE=rxe$((OMPI_COMM_WORLD_RANK % 2))
exec "$@"
EOF
chmod +x "$wrap"
trap 'rm -f "$wrap"' EXIT

tx_bytes() {
	echo $(($(cat /sys/class/sdr/rxe0/counters/tx_bytes) +
		$(cat /sys/class/sdr/rxe1/counters/tx_bytes)))
}

# mpi NP TIMEOUT PROGRAM...: run it over sdr; its output in $out, exit
# status in $rc, the bytes sdr sent meanwhile in $sent.
mpi() {
	local np=$1 tmo=$2 before
	shift 2
	before=$(tx_bytes)
	out=$(timeout "$tmo" mpirun --allow-run-as-root --oversubscribe \
		-np "$np" --mca pml cm --mca mtl ofi \
		--mca mtl_ofi_provider_include sdr \
		--mca btl self -x FI_PROVIDER_PATH -x TMPDIR \
		"$wrap" "$@" 2>&1)
	rc=$?
	sent=$(($(tx_bytes) - before))
	printf '%s\n' "$out" | grep -E '^(not ok|# )|rank [0-9]+:' | head -n 20 |
		sed 's/^/# /'
}

for np in 2 4; do
	mpi "$np" 600 "$TOP/tests/vm/bin/mpi_check"
	diag "mpi_check, $np ranks: exit $rc, $(printf '%s\n' "$out" | grep -c '^ok ') checks passed, sdr sent $sent bytes"
	check "mpi_check, $np ranks: exit 0" test "$rc" = 0
	# 22 checks (mpi_check.c's main), none failed
	check "mpi_check, $np ranks: all 22 checks passed" \
		test "$(printf '%s\n' "$out" | grep -c '^ok ')/$(printf '%s\n' "$out" | grep -c '^not ok')" = 22/0
	# the ring alone moves over 40 MiB a rank through the devices
	check "mpi_check, $np ranks: the data went through sdr ($sent bytes)" \
		test "$sent" -gt $((40 << 20))
done

if python3 -c 'import mpi4py' 2>/dev/null; then
	mpi 2 300 python3 "$TOP/tests/vm/mpi/allreduce.py"
	diag "mpi4py, 2 ranks: exit $rc"
	check "mpi4py all-reduce, 2 ranks: exit 0" test "$rc" = 0
	check "mpi4py all-reduce, 2 ranks: all 4 checks passed" \
		test "$(printf '%s\n' "$out" | grep -c '^ok ')/$(printf '%s\n' "$out" | grep -c '^not ok')" = 4/0
else
	skip "mpi4py all-reduce: exit 0" "needs python3-mpi4py"
	skip "mpi4py all-reduce: all checks passed" "needs python3-mpi4py"
fi
out=$(T_FABRIC_LOSSY=1 timeout 300 "$TOP/tests/vm/bin/t_fabric" dgram_datagrams 2>&1)
rc=$?
printf '%s\n' "$out" | grep -E 'arrived|expected|not ok' | sed 's/^/# /'
check "datagrams under loss: those that arrive are whole and in order, the rest dropped whole (exit $rc)" \
	test "$rc" = 0
check "no flow left behind" test "$(cat /sys/class/sdr/rxe0/nr_flows)/$(cat /sys/class/sdr/rxe1/nr_flows)" = 0/0
done_testing
