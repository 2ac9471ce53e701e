# SPDX-License-Identifier: GPL-2.0
# make demo's second chart: per transport (each reliable sdr policy, RC,
# TCP), the p50, p99 and maximum completion time of one message at a
# time.  tools/demo-latency
# calls it with
#   dat   rows: "name" p50_ms p99_ms max_ms
#   out   the PNG to write
#   prof  the netem profile, size the message size (for the title)

set terminal pngcairo size 1000,600 font "Sans,12" noenhanced
set output out
set style data histograms
set style histogram clustered gap 1.5
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set xtics nomirror scale 0
set key top left
set title sprintf("sdr demo: completion of one %s message at a time over netem \"%s\"\n(lower is better)", size, prof) font ",14"
set ylabel "ms"
stats dat using 4 nooutput
set yrange [0:STATS_max * 1.25]
plot dat using 2:xtic(1) title "p50" lc rgb "#9ecae1", \
     '' using 3 title "p99" lc rgb "#3182bd", \
     '' using 4 title "max" lc rgb "#08519c", \
     '' using ($0 - 0.27):2:(sprintf("%.0f", $2)) with labels offset 0, 0.7 notitle, \
     '' using ($0):3:(sprintf("%.0f", $3)) with labels offset 0, 0.7 notitle, \
     '' using ($0 + 0.27):4:(sprintf("%.0f", $4)) with labels offset 0, 0.7 notitle
