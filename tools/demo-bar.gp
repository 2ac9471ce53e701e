# SPDX-License-Identifier: GPL-2.0
# make demo's chart: one bar per transport, goodput on the left, p99
# message completion time on the right.  tools/sdr-bench --demo calls it with
#   dat   rows: "name" goodput_MiBps p99_ms pct_of_link missing_chunks "status"
#         (p99_ms and pct_of_link -1 when unknown: a NaN column would make
#         gnuplot drop the row's label)
#   out   the PNG to write
#   prof  the netem profile (for the title)
#   link  the link rate in MiB/s, or ""

set terminal pngcairo size 1500,650 font "Sans,12" noenhanced
set output out
set style fill solid 0.85 border -1
set boxwidth 0.8
set grid ytics
set xtics nomirror scale 0
set key off
L = (link eq "") ? 0 : link + 0

# Bar colours: sdr green, RC blue, TCP orange.
colour(n) = strstrt(n, "sdr") == 1 ? 0x2ca02c : (strstrt(n, "rc") == 1 ? 0x1f77b4 : 0xff7f0e)
glabel(gp, pct, miss, st) = st ne "ok" ? st : \
	sprintf("%.1f MiB/s", gp) . (pct >= 0 ? sprintf("\n%.0f%% of link", pct) : "") . \
	(miss > 0 ? sprintf("\n%d chunks\nlost", miss) : "")
# A goodput label goes inside its bar (white) when the bar is tall enough,
# else above it, so labels never cross the link-rate line.
inside(gp) = gp >= gmax * 0.3
plabel(p, st) = st ne "ok" ? st : (p >= 0 ? sprintf("%.0f ms", p) : "n/a")

stats dat using 2 nooutput
gmax = STATS_max > L ? STATS_max : L
stats dat using 3 nooutput
pmax = STATS_max > 0 ? STATS_max : 1

set multiplot layout 1, 2 title sprintf("sdr demo: 1 MiB messages over netem \"%s\"", prof) font ",15"

set title "Goodput (higher is better)"
set ylabel "MiB/s"
ytop = gmax * 1.25 + 0.1
set yrange [0:ytop]
if (L > 0) {
	set arrow 1 from graph 0, first L to graph 1, first L nohead dt 2 lw 2 lc rgb "gray30"
	set label 1 sprintf("link rate %.1f MiB/s", L) at graph 0.99, first L right offset 0, 0.7 tc rgb "gray20"
}
plot dat using 0:2:(colour(strcol(1))):xtic(1) with boxes lc rgb variable, \
     '' using 0:(inside($2) ? $2 / 2 : NaN):(glabel($2, $4, $5, strcol(6))) with labels tc rgb "white" font ",11", \
     '' using 0:(inside($2) ? NaN : $2 + ytop * 0.06):(glabel($2, $4, $5, strcol(6))) with labels

unset arrow 1
unset label 1
set title "p99 message completion (lower is better; n/a: no per-message timing)"
set ylabel "ms"
set yrange [0:pmax * 1.25]
plot dat using 0:($3 >= 0 ? $3 : 0):(colour(strcol(1))):xtic(1) with boxes lc rgb variable, \
     '' using 0:($3 >= 0 ? $3 : 0):(plabel($3, strcol(6))) with labels offset 0, 0.8

unset multiplot
