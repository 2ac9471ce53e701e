#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages as a user gets them: make deb's five .debs
# (build/deb/) installed with apt-get in the guest (its root is a
# writable overlay), everything checked from the installed paths, then
# purged.  DKMS builds sdr.ko for the guest's kernel in the postinst;
# modprobe loads it from updates/dkms; a program built with pkg-config
# against libsdr-dev runs; the installed sdrctl lists the devices and the
# installed sdr_perf moves verified data from rxe0 to rxe1; libfabric
# finds the installed provider by name (fi_info -p sdr, fi_pingpong) with
# no FI_PROVIDER_PATH.  After
# `apt-get remove --purge` nothing of the packages is left: no DKMS tree
# or registration, no sdr.ko under /lib/modules, none of their files.
#
# Not in the default boot: it needs the packages built first.
# tests/run-pkg builds them and runs it (tools/sdr-vm -- tests/vm/run
# t_pkg).  DKMS compiles the module under TCG here, about 5 minutes a
# kernel; its postinst builds for the running kernel and the newest one
# with headers, and the guest sees every kernel of the host (6.1 and
# 6.12): only the running one's headers are left visible (the others'
# build links removed in the guest's overlay), so it builds once, as on a
# machine with one kernel (tests/run-kernels builds for 6.12 on the host).
# vm-only-when-named
# vm-no-preload
# vm-timeout-factor: 5
. "$(dirname "$0")/lib.sh"

debs=$TOP/build/deb
version=$(cat "$TOP/VERSION")
pkgs="sdr-dkms libsdr2 libsdr-dev sdr-tools libfabric-sdr"
files=()
for p in $pkgs; do
	f=$(ls "$debs/${p}_${version}_"*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] || skip_all "no $p $version package in build/deb (make deb)"
	files+=("$f")
done
kver=$(uname -r)
# DKMS's postinst builds for the running kernel and the newest one
# installed with its headers: the other kernels' headers are hidden here
# (the guest's root is an overlay; its lower layer, the host, keeps them)
for d in /lib/modules/*/build; do
	k=${d#/lib/modules/}
	k=${k%/build}
	[ "$k" = "$kver" ] || rm -f "$d"
done
newest=$kver
for d in /lib/modules/*/build; do
	k=${d#/lib/modules/}
	k=${k%/build}
	[ -e "$d/Makefile" ] || continue
	dpkg --compare-versions "$k" gt "$newest" && newest=$k
done
kernels=$kver
[ "$newest" = "$kver" ] || kernels="$kver $newest"
export DEBIAN_FRONTEND=noninteractive
# What the guest lacks and a booted system has: dkms reads <(...)
# (/dev/fd), apt's log wants a pty (/dev/pts).  The guest's /dev is its own.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
if ! mountpoint -q /dev/pts; then
	mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
fi

plan 26
# the test is the package's module (vm-no-preload: tests/vm/run loaded
# none); one loaded by hand before goes
unload() {
	for _ in $(seq 20); do
		sdr_unload 2>/dev/null && return 0
		sleep 0.5
	done
	diag "rmmod sdr: $(rmmod sdr 2>&1)"
	return 1
}
unload
# every path the packages hold, and which of them (directories the system
# shares) were there before
listed=$(mktemp)
before=$(mktemp)
for f in "${files[@]}"; do
	dpkg-deb -c "$f" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||'
done | grep -v '^$' | sort -u >"$listed"
while IFS= read -r f; do
	if [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi
done <"$listed" >"$before"
# nothing of sdr installed before: what is there after comes from the packages
check "before: no sdr in dkms status, no /usr/src/sdr-*, no sdr.ko under /lib/modules" \
	sh -c '[ -z "$(dkms status -m sdr 2>&1)" ] && ! ls -d /usr/src/sdr-* 2>/dev/null &&
		[ -z "$(find /lib/modules -name "sdr.ko*" 2>/dev/null)" ]'

# ---- install ----
# man-db's trigger re-indexes every manual page over 9p under TCG, minutes
# of each install and purge that test nothing of the packages (their pages
# are checked as files): off in this guest's overlay, as in build chroots
# (the trigger looks for this file; debconf's man-db/auto-update makes it)
rm -f /var/lib/man-db/auto-update
log=$(mktemp)
t0=$SECONDS
start_s=$(date +%s)
apt-get install -y "${files[@]}" >"$log" 2>&1
rc=$?
t_install=$((SECONDS - t0))
diag "apt-get install took $t_install s (DKMS builds sdr.ko for $kernels in it)"
for k in $kernels; do
	f=$(ls /lib/modules/"$k"/updates/dkms/sdr.ko* 2>/dev/null | head -n 1)
	[ -z "$f" ] || diag "sdr.ko for $k installed $(($(stat -c %Y "$f") - start_s)) s after apt-get started"
done
grep -E '^(Building for|Building initial|Setting up|Running module|depmod|Error|E:)' "$log" | sed 's/^/#   /'
if [ "$rc" = 0 ]; then
	ok "apt-get install of the five packages"
else
	not_ok "apt-get install of the five packages (exit $rc)"
	tail -n 40 "$log" | sed 's/^/#   /'
	make_log=$(ls /var/lib/dkms/sdr/"$version"/build/make.log 2>/dev/null)
	[ -z "$make_log" ] || tail -n 20 "$make_log" | sed 's/^/#   make.log: /'
fi
check "dpkg: all five installed" sh -c "for p in $pkgs; do
	[ \"\$(dpkg-query -W -f='\${db:Status-Abbrev}' \$p)\" = 'ii ' ] || exit 1; done"
diag "dkms status: $(dkms status -m sdr 2>&1 | tr '\n' ' ')"
check "dkms status: sdr/$version installed for $kver" \
	sh -c "dkms status -m sdr -v '$version' -k '$kver' | grep -q ': installed'"
check "dkms status: installed for every kernel the postinst picks too ($kernels)" \
	sh -c "for k in $kernels; do dkms status -m sdr -v '$version' -k \$k | grep -q ': installed' || exit 1
		ls /lib/modules/\$k/updates/dkms/sdr.ko* >/dev/null || exit 1; done"
ko=$(modinfo -k "$kver" -n sdr 2>/dev/null)
diag "modinfo -n sdr: $ko"
check "modinfo finds it in /lib/modules/$kver/updates/dkms" \
	sh -c "case '$ko' in /lib/modules/$kver/updates/dkms/sdr.ko*) [ -f '$ko' ] ;; *) false ;; esac"
modprobe sdr 2>&1 | sed 's/^/# modprobe: /'
# the loaded module is that file: its GNU build ID, as the kernel shows it
build_id() {	# build_id KO: the hex build ID of a module file (.ko or .ko.xz)
	local t
	t=$(mktemp)
	case $1 in *.xz) xz -dc "$1" >"$t" ;; *) cat "$1" >"$t" ;; esac
	readelf -n "$t" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p'
	rm -f "$t"
}
file_id=$(build_id "$ko" 2>/dev/null)
loaded_id=$(od -An -tx1 -v /sys/module/sdr/notes/.note.gnu.build-id 2>/dev/null | tr -d ' \n')
diag "build ID: $ko ${file_id:-none}, loaded sdr ${loaded_id:-none}"
check "modprobe sdr loads that module (its build ID)" \
	sh -c "[ -d /sys/module/sdr ] && [ -n '$file_id' ] && case '$loaded_id' in *'$file_id') ;; *) exit 1 ;; esac"
check "system group sdr exists" sh -c 'gid=$(getent group sdr | cut -d: -f3) && [ "$gid" -lt 1000 ]'
check "the udev rule is /lib/udev/rules.d/90-sdr.rules, the tree's" \
	cmp /lib/udev/rules.d/90-sdr.rules "$TOP/tools/udev/90-sdr.rules"
check "modules-load.d loads sdr; modprobe.d sets no option (examples only)" \
	sh -c 'grep -qx sdr /usr/lib/modules-load.d/sdr.conf && [ -f /etc/modprobe.d/sdr.conf ] &&
		! grep -q "^[^#]" /etc/modprobe.d/sdr.conf'

# ---- libsdr-dev: a program built with pkg-config, linked to libsdr2 ----
dir=$(mktemp -d)
cat >"$dir/p.c" <<'EOF'
#include <stdio.h>
#include <libsdr.h>

int main(void)
{
	struct sdr_ctx_info info;
	struct sdr_caps caps;
	struct sdr_ctx *ctx;
	int ret;

	ret = sdr_query(NULL, &caps);
	if (ret) {
		fprintf(stderr, "sdr_query: %d\n", ret);
		return 1;
	}
	ctx = sdr_open("rxe0", NULL);
	if (!ctx) {
		perror("sdr_open rxe0");
		return 1;
	}
	ret = sdr_ctx_query(ctx, &info);
	if (ret) {
		fprintf(stderr, "sdr_ctx_query: %d\n", ret);
		return 1;
	}
	printf("abi_version %u ibdev %s mtu %u\n", caps.abi_version, info.ibdev, info.mtu);
	return sdr_close(ctx) ? 1 : 0;
}
EOF
check "cc \$(pkg-config --cflags --libs libsdr) builds a program against it" \
	sh -c "cc -o '$dir/p' '$dir/p.c' \$(pkg-config --cflags --libs libsdr)"
diag "pkg-config --cflags --libs libsdr: $(pkg-config --cflags --libs libsdr 2>&1)"
out=$("$dir/p" 2>&1)
diag "the program: $out"
abi=$(/usr/bin/sdrctl caps 2>/dev/null | sed -n 's/.*abi_version \([0-9]*\).*/\1/p')
# the library it loads is libsdr2's file (/lib is /usr/lib's link here)
lib=$(ldd "$dir/p" 2>/dev/null | awk '$1 == "libsdr.so.2" { print $3 }')
owner=$(dpkg -S "$(readlink -f "${lib:-/nonexistent}")" 2>/dev/null)
diag "libsdr.so.2: $lib, $owner"
check "it runs on libsdr2's libsdr.so.2: sdr_query's ABI $abi (sdrctl caps), rxe0 bound" \
	sh -c "case '$owner' in libsdr2:*) ;; *) exit 1 ;; esac &&
		[ -n '$abi' ] && [ \"\$('$dir/p')\" = 'abi_version $abi ibdev rxe0 mtu $(cat /sys/class/sdr/rxe0/mtu 2>/dev/null)' ]"

# ---- an SDR SDK program, unchanged: tools/sdk_bulk.c on <sdr.h> ----
check "the SDK program tools/sdk_bulk.c builds against the installed sdr.h and sdr_mr.h" \
	sh -c "cc -o '$dir/bulk' '$TOP/tools/sdk_bulk.c' \$(pkg-config --cflags --libs libsdr)"
"$dir/bulk" -d "$SDR_DEV1" -p 18620 -n 8 -s 1048576 -w 4 >"$dir/bulk.srv" 2>&1 &
bpid=$!
wait_listen 18620
"$dir/bulk" -d "$SDR_DEV0" -p 18620 -n 8 -s 1048576 -w 4 "$SDR_IP1" >"$dir/bulk.cli" 2>&1
bcrc=$?
wait "$bpid"
bsrc=$?
sed 's/^/# sdk_bulk: /' "$dir/bulk.cli" "$dir/bulk.srv"
check "... and moves 8 checked messages on libsdr2 (both ends exit 0, 0 verify errors)" \
	sh -c "[ $bcrc/$bsrc = 0/0 ] && grep -q ', 0 verify errors' '$dir/bulk.srv'"

# ---- sdr-tools ----
devs=$(/usr/bin/sdrctl dev 2>&1)
printf '%s\n' "$devs" | sed 's/^/# sdrctl dev: /'
check "sdrctl dev lists rxe0 and rxe1" \
	sh -c 'printf "%s\n" "$1" | grep -q "^rxe0:" && printf "%s\n" "$1" | grep -q "^rxe1:"' _ "$devs"
srv=$(mktemp)
cli=$(mktemp)
/usr/bin/sdr_perf -d "$SDR_DEV1" --verify >"$srv" 2>&1 &
spid=$!
wait_listen 18515
/usr/bin/sdr_perf -d "$SDR_DEV0" -P sr -s 1M -n 50 --verify --json "$SDR_IP1" >"$cli" 2>&1
crc=$?
wait "$spid"
src=$?
tail -n 4 "$cli" | sed 's/^/# sdr_perf client: /'
check "sdr_perf: SR, 50 verified 1 MiB messages rxe0 -> rxe1, both exit 0" python3 -c "
import json, sys
j = json.loads(sys.argv[1])
assert sys.argv[2:] == ['0', '0'], sys.argv[2:]
assert (j['messages'], j['msg_bytes'], j['verify_errors'], j['failed_messages']) == (50, 1048576, 0, 0), j
" "$(tail -n 1 "$cli")" "$crc" "$src"
rm -f "$srv" "$cli"

# ---- libfabric-sdr: libfabric finds the provider in its own directory ----
unset FI_PROVIDER_PATH
fi=$(fi_info -p sdr 2>&1)
printf '%s\n' "$fi" | grep -E 'provider:|domain:|type:' | sed 's/^/# fi_info: /'
check "fi_info -p sdr, no FI_PROVIDER_PATH: the installed provider on rxe0 and rxe1" \
	sh -c 'printf "%s\n" "$1" | grep -q "domain: rxe0" && printf "%s\n" "$1" | grep -q "domain: rxe1"' _ "$fi"
srv=$(mktemp)
cli=$(mktemp)
timeout 120 fi_pingpong -p sdr -e rdm -B 47700 -d "$SDR_DEV1" -I 5 -S 65536 -c >"$srv" 2>&1 &
spid=$!
wait_listen 47700
timeout 120 fi_pingpong -p sdr -e rdm -P 47700 -d "$SDR_DEV0" -I 5 -S 65536 -c "$SDR_IP1" >"$cli" 2>&1
crc=$?
wait "$spid"
src=$?
tail -n 2 "$cli" | sed 's/^/# fi_pingpong: /'
check "fi_pingpong -p sdr over the installed provider, 64 KiB checked: both exit 0 ($crc/$src)" \
	test "$crc/$src" = 0/0
rm -f "$srv" "$cli"

# ---- purge ----
diag "the packages hold $(wc -l <"$listed") paths, $(wc -l <"$before") of them there before"
check "rmmod sdr" sdr_unload
t0=$SECONDS
# shellcheck disable=SC2086
apt-get remove --purge -y $pkgs >"$log" 2>&1
rc=$?
diag "apt-get remove --purge took $((SECONDS - t0)) s"
if [ "$rc" = 0 ]; then
	ok "apt-get remove --purge of the five packages"
else
	not_ok "apt-get remove --purge of the five packages (exit $rc)"
	tail -n 30 "$log" | sed 's/^/#   /'
fi
check "dpkg: none of them installed or left configured" sh -c "for p in $pkgs; do
	case \"\$(dpkg-query -W -f='\${db:Status-Abbrev}' \$p 2>/dev/null)\" in ''|'un '|'pn ') ;; *) exit 1 ;; esac; done"
check "dkms status: no sdr; /var/lib/dkms/sdr gone" \
	sh -c '[ -z "$(dkms status -m sdr 2>&1)" ] && [ ! -e /var/lib/dkms/sdr ]'
check "no /usr/src/sdr-*" sh -c '! ls -d /usr/src/sdr-* 2>/dev/null'
check "no sdr.ko under /lib/modules" sh -c '[ -z "$(find /lib/modules -name "sdr.ko*")" ]'
check "fi_info -p sdr finds no provider any more" sh -c '! fi_info -p sdr >/dev/null 2>&1'
left=$(while IFS= read -r f; do
	if [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi
done <"$listed" | comm -23 - "$before")
check "none of the packages' files or directories is left" test -z "$left"
[ -z "$left" ] || printf '%s\n' "$left" | head -n 20 | sed 's/^/#   left: /'
rm -rf "$dir" "$log" "$listed" "$before"
done_testing
