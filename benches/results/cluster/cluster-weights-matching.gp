# gnuplot cluster-weights.gp  (run in this directory) -> cluster-weights-matching.svg
set terminal svg size 800,500 dynamic
set output 'cluster-weights-matching.svg'
set datafile separator ','
set key autotitle columnhead
set grid
set xlabel 'downloads'
set ylabel 'Mbit/s (payload)'
plot for [m in 'uniform weighted'] 'cluster-weights-matching.csv' using (strcol(1) eq m ? $3 : 1/0):4 with linespoints title m
