# gnuplot cluster-scaling.gp  (run in this directory) -> cluster-scaling-ndnd-shaped.svg
set terminal svg size 800,500 dynamic
set output 'cluster-scaling-ndnd-shaped.svg'
set datafile separator ','
set key autotitle columnhead
set grid
set xlabel 'time (s)'
set ylabel 'Mbit/s (IP, to the consumers)'
set y2label 'routers'
set y2tics 1
set y2range [0:4]
plot 'cluster-scaling-ndnd-shaped.csv' using 1:3 with linespoints title 'throughput', \
'' using 1:2 axes x1y2 with steps title 'routers in the hash space'
