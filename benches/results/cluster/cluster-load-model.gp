# gnuplot cluster-load-model.gp  (run in this directory) -> cluster-load-model.svg
set terminal svg size 800,500 dynamic
set output 'cluster-load-model.svg'
set datafile separator ','
set key autotitle columnhead
set grid
set xlabel 'internal routers (one core each)'
set ylabel 'Mbit/s (payload)'
plot 'cluster-load-model.csv' using 1:2 with lines title 'N x router', \
'' using 1:3 with lines title 'front end (one core)', \
'' using 1:4 with linespoints title 'predicted'
