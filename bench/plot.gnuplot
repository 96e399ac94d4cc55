# Speed of every candidate relative to the baseline (cuDNN on a GPU, the direct schedule on the
# emulated device), one group of bars per problem, one bar per candidate. Input: the tab-separated
# plot.dat that convnd-bench writes (header: "problem", then one column per candidate; '-' where a
# candidate did not run). Run by convnd-bench; by hand:
#   gnuplot -e "datafile='out/plot.dat'; outfile='out/plot.png'; baseline='cuDNN'" bench/plot.gnuplot
if (!exists("datafile")) datafile = 'plot.dat'
if (!exists("outfile")) outfile = 'plot.png'
if (!exists("baseline")) baseline = 'cuDNN'
if (!exists("ptitle")) ptitle = 'convnd-bench'

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1800,820 font "Sans,10" noenhanced
} else {
    set terminal png size 1800,820 noenhanced
}
set output outfile
set datafile separator "\t"
set datafile missing "-"

set title ptitle
# sixteen distinct colours, so no two candidates share one
colors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #393b79 #e7ba52 #843c39 #31a354 #636363 #f781bf"
do for [i=1:16] { set linetype i lc rgb word(colors, i) }
set linetype cycle 16
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border rgb "gray30"
set boxwidth 0.9
# speeds span orders of magnitude (the direct fallback vs tensor-core schedules): log scale
set logscale y 10
set yrange [*:*]
set format y "%gx"
set ylabel sprintf("speed relative to %s (log scale, higher is faster)", baseline)
set grid ytics lc rgb "gray80"
set xtics rotate by 30 right scale 0 font ",9"
set key outside right top vertical Left reverse noenhanced
set bmargin 8
# the baseline itself
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lw 1.5 dt 2 lc rgb "black" front

# one column per candidate after the problem name: count the header's fields
if (!exists("ncols")) ncols = int(system(sprintf("head -1 '%s' | awk -F'\t' '{print NF}'", datafile)))
plot for [i=2:ncols] datafile using i:xtic(1) title columnheader(i)
