# SPDX-License-Identifier: GPL-2.0
"""What the benchmarks say about repeated runs: medians with their spread,
whether two contenders' ranges overlap, percentiles of raw samples.

A claim "X beats Y" holds only when the ranges are apart
(Documentation/benchmarks.rst, "Numbers under TCG")."""
import math
import statistics


def spread(v):
    """(median, min, max) of a non-empty sequence."""
    v = list(v)
    return statistics.median(v), min(v), max(v)


def apart(a, b):
    """Whether the min-max ranges of samples a and b do not overlap."""
    return max(a) < min(b) or max(b) < min(a)


def pct(sorted_v, p):
    """Nearest-rank percentile p (0-100] of an ascending sequence."""
    if not sorted_v:
        return float("nan")
    k = max(1, min(len(sorted_v), math.ceil(p / 100.0 * len(sorted_v))))
    return sorted_v[k - 1]


def verdict(a, b):
    """'apart' or 'overlaps' for two sample lists."""
    return "apart" if apart(a, b) else "overlaps"
