# SPDX-License-Identifier: GPL-2.0
#
# The protocol engine: plain C that builds into sdr.ko (kernel/Kbuild) and
# on the host (kernel/engine/Makefile: libsdr-engine.a, which the host
# tests, fuzzers, sdr-sim and the VM test tools link).  This is the one
# list of its sources; a new engine file goes here and nowhere else.
SDR_ENGINE_SRCS := sdr_wire.c sdr_bitmap.c sdr_rtt.c sdr_path.c sdr_sr.c sdr_ec.c \
		   sdr_credit.c sdr_auto.c sdr_replay.c sdr_cc.c
