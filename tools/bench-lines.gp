# SPDX-License-Identifier: GPL-2.0
# sdr-bench's plots: goodput and p99 completion time against the loss rate,
# one line per transport.  tools/sdr-bench calls it with
#   dir  a directory with g/<series>.dat ("loss goodput") and
#        p/<series>.dat ("loss p99_ms"), one file per series
#   out  the output base: writes out-goodput.png and out-p99.png
#   link the link rate in MiB/s ("" if the profiles set none)

set terminal pngcairo size 1100,650 font "Sans,12" noenhanced
set grid
set key outside right top
set xlabel "netem loss (%, each direction)"
set style data linespoints
name(f, d) = substr(f, strlen(d) + 2, strlen(f) - 4)

gfiles = system("ls " . dir . "/g/*.dat 2>/dev/null")
pfiles = system("ls " . dir . "/p/*.dat 2>/dev/null")
gd = dir . "/g"
pd = dir . "/p"

set output out . "-goodput.png"
set title "Goodput of 1 MiB messages against loss (higher is better)"
set ylabel "goodput (MiB/s)"
set yrange [0:*]
if (link ne "") {
	set arrow 1 from graph 0, first link to graph 1, first link nohead dt 2 lw 2 lc rgb "gray40"
	set label 1 sprintf("link %.2f MiB/s", link + 0) at graph 0.01, first link offset 0, 0.8 tc rgb "gray30"
}
plot for [f in gfiles] f using 1:2 lw 2 pt 7 title name(f, gd)

set output out . "-p99.png"
unset arrow 1
unset label 1
set title "p99 message completion time against loss (lower is better)"
set ylabel "p99 completion (ms, log scale)"
set logscale y
set yrange [*:*]
if (strlen(pfiles) > 0) {
	plot for [f in pfiles] f using 1:2 lw 2 pt 7 title name(f, pd)
} else {
	set label 2 "no transport reported completion times" at graph 0.3, graph 0.5
	unset logscale y
	set yrange [0:1]
	plot NaN notitle
}
