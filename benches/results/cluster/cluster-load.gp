# gnuplot cluster-load.gp  (run in this directory) -> cluster-load.svg
set terminal svg size 800,500 dynamic
set output 'cluster-load.svg'
set datafile separator ','
set key autotitle columnhead
set grid
set multiplot layout 1,2
set xlabel 'downloads'
set ylabel 'Mbit/s (payload)'
plot for [n=1:8] 'cluster-load.csv' using ($1 == n ? $2 : 1/0):3 with linespoints title sprintf('%d IR', n)
set ylabel 'CPU (1 = one core)'
plot 'cluster-load.csv' using ($1 == 3 ? $2 : 1/0):8 with linespoints title 'IR1', \
'' using ($1 == 3 ? $2 : 1/0):11 with linespoints title 'IR2', \
'' using ($1 == 3 ? $2 : 1/0):14 with linespoints title 'IR3', \
'' using ($1 == 3 ? $2 : 1/0):(column('lb_cpu')) with linespoints title 'front end (XDP)'
unset multiplot
