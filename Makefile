# SPDX-License-Identifier: GPL-2.0
#
# sdr: top-level build.  `make` builds the module, library, tools and tests
# and installs nothing: a missing Debian package stops it with its name.
# `make deps` (tools/deps) is the one thing that installs packages, and
# every target that needs more than a plain build calls it first (a no-op
# when everything is present): `make check` runs the static checks, the
# host tests and fuzzers, then the VM suite; `make check-debug` runs the VM
# suite on a debug kernel; `make demo` runs the long-haul demo.  Every
# target is listed in Documentation/building.rst.

TOP := $(abspath .)
KVER ?= $(shell $(TOP)/tools/vm/kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
MAKEFLAGS += --no-print-directory

# A target's prerequisites are made one after another, in the order listed,
# so that deps has installed what the build needs before it starts (the
# sub-makes still run their own jobs in parallel).
.NOTPARALLEL:

.PHONY: all deps have-deps module userlib tools provider tests clean check host-check \
	vm-check fuzz-check sdk-check demo sparse checkpatch debug-kernel debug-module \
	check-debug check-fabtests check-pkg soak soak-debug kernel-module check-kernels install install-files dkms-src uninstall deb

all: module userlib tools provider tests

deps:
	@$(TOP)/tools/deps

# What a plain build needs, checked, never installed: the compiler,
# libibverbs-dev and, unless KDIR is given, the kernel image and headers
# tools/vm/kver picks.
have-deps:
	@$(TOP)/tools/deps --check build $(if $(filter file,$(origin KDIR)),kernel)
ifeq ($(origin KDIR)$(origin KVER),filefile)
	@$(TOP)/tools/vm/kver >/dev/null
endif

module: have-deps
	$(MAKE) -C $(KDIR) M=$(TOP) modules

userlib: have-deps
	@if [ -f userlib/Makefile ]; then $(MAKE) -C userlib; fi

tools: userlib
	@if [ -f tools/Makefile ]; then $(MAKE) -C tools; fi

# the libfabric provider libsdr-fi.so (fi_sdr(7))
provider: userlib
	@if [ -f provider/Makefile ]; then $(MAKE) -C provider; fi

tests: userlib provider
	@if [ -f tests/vm/Makefile ]; then $(MAKE) -C tests/vm; fi
	@if [ -f tools/sdr-sim/Makefile ]; then $(MAKE) -C tools/sdr-sim; fi

host-check: deps
	$(MAKE) -C tests/host check

fuzz-check: deps
	$(MAKE) -C tests/fuzz check

sdk-check: userlib
	$(MAKE) -C tests/sdk check

vm-check: deps all
	$(TOP)/tests/run-vm-tests

# The static checks first (checkpatch, sparse: a minute), then the host
# tests, the fuzzers, sdr.ko built for 6.1 and 6.12, the packages built
# and checked on the host, the VM suite (on the pinned 6.1), fabtests'
# quick set against the provider at the lossy profile
# (SDR_CHECK_FABTESTS=all adds the loss-free pass, =0 leaves it out) and
# a named subset on the debug kernel (SDR_CHECK_DEBUG=0 leaves that out;
# its first build takes 8 to 25 minutes, then it is cached); the 6.12
# boots with SDR_CHECK_KERNELS=1.  One summary line at the end.
SDR_CHECK_DEBUG ?= 1
check: deps all
	@KDIR=$(KDIR) SDR_CHECK_DEBUG=$(SDR_CHECK_DEBUG) $(TOP)/tests/run-all

# The debug test kernel (KASAN, KFENCE, lockdep, kmemleak, debug objects),
# built from linux-source-6.1 on first use and cached under build/debug/, and
# sdr.ko built against it from a copy of the sources in build/debug/mod, so
# that kernel/sdr.ko stays the one for Debian's kernel.  That sdr.ko has
# debug info (the kernel has none), for scripts/faddr2line on its reports.
DEBUG_MOD := $(TOP)/build/debug/mod

debug-kernel: deps
	@$(TOP)/tools/vm/debug-kernel >/dev/null

# copy-mod-src DIR: what kbuild needs to build sdr.ko, copied to DIR
copy-mod-src = rsync -a --delete --exclude='*.mod.c' --include='*/' --include='*.[ch]' \
	--include=Kbuild --include='*.mk' --exclude='*' $(TOP)/Kbuild $(TOP)/kernel \
	$(TOP)/uapi $(1)/

debug-module: deps
	@kdir=$$($(TOP)/tools/vm/debug-kernel) && mkdir -p $(DEBUG_MOD) && \
	$(call copy-mod-src,$(DEBUG_MOD)) && \
	$(MAKE) -C $$kdir M=$(DEBUG_MOD) KCFLAGS=-g modules

# sdr.ko for the newest installed kernel of series KSERIES (6.1, 6.12),
# from a copy of the sources in build/kernels/RELEASE/, so that
# kernel/sdr.ko stays the one for the pinned kernel (make KVER=RELEASE
# builds that one for another).
KSERIES ?= 6.12
kernel-module: deps
	@kv=$$($(TOP)/tools/vm/kver $(KSERIES)) && d=$(TOP)/build/kernels/$$kv && \
	mkdir -p $$d && $(call copy-mod-src,$$d) && \
	$(MAKE) -C /lib/modules/$$kv/build M=$$d modules

# The module built for each kernel of SDR_KERNELS, and the core subset of
# the VM suite (tests/run-kernels) booted on each but the pinned one.
check-kernels: deps all
	@$(TOP)/tests/run-kernels all

# The Debian packages end to end: make deb, lintian, their contents, make
# install staged, and in a guest installed with apt-get (DKMS builds
# sdr.ko there), used and purged (make check runs all but the guest).
check-pkg: deps all
	@$(TOP)/tests/run-pkg

# libfabric's own suite against the provider: fabtests 1.17.0's quick set
# in a guest, loss-free and lossy (tests/run-fabtests; make check runs the
# lossy pass).
check-fabtests: deps all
	@$(TOP)/tests/run-fabtests

# DEBUG_TESTS="t_a t_b": only these, in one boot (default: the whole suite).
check-debug: deps all debug-module
	@$(TOP)/tests/run-vm-tests-debug $(DEBUG_TESTS)

# Not in make check: 10 minutes (SDR_SOAK_SECONDS) of netem changes, every
# policy, rogue senders and the ioctl fuzzer at once in one VM boot;
# soak-debug does it on the debug kernel.
soak: deps all
	@$(TOP)/tests/run-soak

soak-debug: deps all debug-module
	@SDR_SOAK_DEBUG=1 $(TOP)/tests/run-soak

demo: deps all
	@$(TOP)/tools/demo

# Static checks of the kernel code, the first suite of make check
# (tests/run-static): sparse on every file of the module (make C=2) fails
# on any warning; checkpatch.pl --strict (unpacked from linux-source-6.1,
# or CHECKPATCH=...) fails on ERRORs and WARNINGs and prints its CHECKs.
sparse: deps
	@KDIR=$(KDIR) $(TOP)/tests/run-static sparse

checkpatch: deps
	@$(TOP)/tests/run-static checkpatch

# make install, as root: sdr.ko through DKMS (its sources copied to
# /usr/src/sdr-VERSION, then dkms add, build and install for KVER; DKMS
# builds it again for every kernel installed later), libsdr with its
# headers, .pc and man pages (userlib's install), sdrctl and sdr_perf with
# theirs (tools' install), all under PREFIX; the libfabric provider
# libsdr-fi.so in libfabric's provider directory (FI_PROVDIR) and its
# fi_sdr(7) (provider's install); the udev rule that gives
# /dev/sdr group sdr and the system group sdr (created if missing); sdr
# loaded at boot (modules-load.d) and a commented modprobe.d file for its
# options.  make uninstall removes all of it but the group (dkms remove
# sdr/VERSION --all first).  DESTDIR stages the files (the DKMS tree under
# DESTDIR/usr/src; no dkms, no group, no udev reload then).  make deb
# builds the Debian packages in build/deb/ from a clean copy of the
# tracked files (tools/mkdeb) and runs lintian on them.
VERSION := $(shell cat $(TOP)/VERSION)
PREFIX ?= /usr/local
UDEVDIR ?= /etc/udev/rules.d
MODLOADDIR ?= /etc/modules-load.d
MODPROBEDIR ?= /etc/modprobe.d
DKMS_SRC := /usr/src/sdr-$(VERSION)
# What kbuild needs to build sdr.ko, as debug-module copies it
DKMS_FILES = Kbuild dkms.conf $(shell cd $(TOP) && find kernel uapi -type f \
	\( -name '*.[ch]' ! -name '*.mod.c' -o -name Kbuild -o -name '*.mk' \) | sort)

install: userlib tools provider install-files
	@if [ -z "$(DESTDIR)" ]; then \
		command -v dkms >/dev/null || { echo "install: dkms missing (make deps, or apt-get install dkms)" >&2; exit 1; }; \
		if [ -n "$$(dkms status -m sdr -v $(VERSION))" ]; then dkms remove sdr/$(VERSION) --all; fi; \
		set -e; \
		dkms add sdr/$(VERSION); \
		dkms build sdr/$(VERSION) -k $(KVER); \
		dkms install sdr/$(VERSION) -k $(KVER); \
		getent group sdr >/dev/null || groupadd --system sdr; \
		if command -v udevadm >/dev/null; then udevadm control --reload 2>/dev/null || true; \
			udevadm trigger --sysname-match=sdr --subsystem-match=misc || true; fi; \
	fi

# The files of make install and of the Debian packages (debian/rules),
# nothing built, no dkms: PREFIX, LIBDIR, UDEVDIR, MODLOADDIR, MODPROBEDIR
# and DESTDIR say where (given here, the sub-makes get them too).
install-files: dkms-src
	$(MAKE) -C userlib install PREFIX=$(PREFIX)
	$(MAKE) -C tools install PREFIX=$(PREFIX)
	$(MAKE) -C provider install PREFIX=$(PREFIX)
	install -D -m 644 tools/udev/90-sdr.rules $(DESTDIR)$(UDEVDIR)/90-sdr.rules
	install -D -m 644 tools/modules/modules-load.conf $(DESTDIR)$(MODLOADDIR)/sdr.conf
	install -D -m 644 tools/modules/modprobe.conf $(DESTDIR)$(MODPROBEDIR)/sdr.conf

# The DKMS tree: only what the module's build reads.
dkms-src:
	rm -rf $(DESTDIR)$(DKMS_SRC)
	@cd $(TOP) && for f in $(DKMS_FILES); do \
		install -D -m 644 $$f $(DESTDIR)$(DKMS_SRC)/$$f || exit 1; done

uninstall:
	@if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null && \
		[ -n "$$(dkms status -m sdr -v $(VERSION))" ]; then \
		echo "dkms remove sdr/$(VERSION) --all"; dkms remove sdr/$(VERSION) --all; fi
	rm -rf $(DESTDIR)$(DKMS_SRC)
	rm -f $(DESTDIR)$(UDEVDIR)/90-sdr.rules $(DESTDIR)$(MODLOADDIR)/sdr.conf \
		$(DESTDIR)$(MODPROBEDIR)/sdr.conf
	$(MAKE) -C userlib uninstall PREFIX=$(PREFIX)
	$(MAKE) -C tools uninstall PREFIX=$(PREFIX)
	$(MAKE) -C provider uninstall PREFIX=$(PREFIX)
	@# what make install put there before DKMS
	@if [ -z "$(DESTDIR)" ] && [ -f /lib/modules/$(KVER)/updates/kernel/sdr.ko ]; then \
		rm -f /lib/modules/$(KVER)/updates/kernel/sdr.ko; depmod -a $(KVER); fi

deb: deps
	@$(TOP)/tools/mkdeb

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean
	-$(MAKE) -C kernel/engine clean
	@for d in userlib tools provider tools/sdr-sim tools/sdr-codec tools/sdr-rxcopy tests/host tests/sdk tests/fuzz tests/vm; do \
		if [ -f $$d/Makefile ]; then $(MAKE) -C $$d clean; fi; done
	rm -rf build
