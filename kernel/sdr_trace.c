// SPDX-License-Identifier: GPL-2.0
/* sdr: the tracepoints (kernel/sdr_trace.h) are defined here. */
#define CREATE_TRACE_POINTS
#include "sdr_trace.h"
