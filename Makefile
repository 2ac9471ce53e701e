# SPDX-License-Identifier: GPL-2.0
#
# sdr: top-level build.  `make` builds the module, library, tools and tests;
# `make check` runs the host tests and then the VM suite; `make check-debug`
# runs the VM suite on a debug kernel; `make demo` runs the long-haul demo.
# Missing Debian packages are installed by `make deps`, which the other
# targets call first (it is a no-op when everything is present).

TOP := $(abspath .)
KVER ?= $(shell $(TOP)/tools/vm/kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
MAKEFLAGS += --no-print-directory

.PHONY: all deps module userlib tools tests clean check host-check vm-check \
	fuzz-check demo sparse checkpatch docs debug-kernel debug-module \
	check-debug soak soak-debug

all: deps module userlib tools tests

deps:
	@$(TOP)/tools/deps

module: deps
	$(MAKE) -C $(KDIR) M=$(TOP) modules

userlib:
	@if [ -f userlib/Makefile ]; then $(MAKE) -C userlib; fi

tools: userlib
	@if [ -f tools/Makefile ]; then $(MAKE) -C tools; fi

tests: userlib
	@if [ -f tests/vm/Makefile ]; then $(MAKE) -C tests/vm; fi
	@if [ -f tools/sdr-sim/Makefile ]; then $(MAKE) -C tools/sdr-sim; fi

host-check: deps
	$(MAKE) -C tests/host check

fuzz-check: deps
	$(MAKE) -C tests/fuzz check

vm-check: all
	$(TOP)/tests/run-vm-tests

# Host tests first (seconds), then the VM suite; one summary line at the end.
check: all
	@$(TOP)/tests/run-all

# The debug test kernel (KASAN, KFENCE, lockdep, kmemleak, debug objects),
# built from linux-source-6.1 on first use and cached under build/debug/, and
# sdr.ko built against it from a copy of the sources in build/debug/mod, so
# that kernel/sdr.ko stays the one for Debian's kernel.  That sdr.ko has
# debug info (the kernel has none), for scripts/faddr2line on its reports.
DEBUG_MOD := $(TOP)/build/debug/mod

debug-kernel:
	@$(TOP)/tools/vm/debug-kernel >/dev/null

debug-module: deps
	@kdir=$$($(TOP)/tools/vm/debug-kernel) && mkdir -p $(DEBUG_MOD) && \
	rsync -a --delete --exclude='*.mod.c' --include='*/' --include='*.[ch]' \
		--include=Kbuild --include='*.mk' --exclude='*' $(TOP)/Kbuild $(TOP)/kernel \
		$(TOP)/uapi $(DEBUG_MOD)/ && \
	$(MAKE) -C $$kdir M=$(DEBUG_MOD) KCFLAGS=-g modules

# DEBUG_TESTS="t_a t_b": only these, in one boot (default: the whole suite).
check-debug: all debug-module
	@$(TOP)/tests/run-vm-tests-debug $(DEBUG_TESTS)

# Not in make check: 10 minutes (SDR_SOAK_SECONDS) of netem changes, every
# policy, rogue senders and the ioctl fuzzer at once in one VM boot;
# soak-debug does it on the debug kernel.
soak: all
	@$(TOP)/tests/run-soak

soak-debug: all debug-module
	@SDR_SOAK_DEBUG=1 $(TOP)/tests/run-soak

demo: all
	@$(TOP)/tools/demo

sparse: deps
	$(MAKE) -C $(KDIR) M=$(TOP) C=2 modules

# The headers package has no checkpatch.pl; linux-source-6.1 (unpacked
# under /usr/src) does.
CHECKPATCH ?= $(firstword $(wildcard $(KDIR)/scripts/checkpatch.pl \
	/usr/src/linux-source-*/scripts/checkpatch.pl) checkpatch.pl)

checkpatch:
	$(CHECKPATCH) --no-tree --terse -f kernel/*.c kernel/*.h kernel/engine/*.c kernel/engine/*.h uapi/*.h || true

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean
	-$(MAKE) -C kernel/engine clean
	@for d in userlib tools tests/host tests/fuzz tests/vm; do \
		if [ -f $$d/Makefile ]; then $(MAKE) -C $$d clean; fi; done
	rm -rf build
