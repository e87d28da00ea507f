set terminal pngcairo size 1100,900 noenhanced
set output 'benches/results/soak/soak.png'
set datafile separator ','
set key autotitle columnhead outside right
set multiplot layout 3,1 title 'ndx soak, 3600 s'
set xlabel 'time (s)'
set grid
set arrow from 360.0,graph 0 to 360.0,graph 1 nohead dt 2
set ylabel 'MiB'
plot 'benches/results/soak/soak.csv' using 1:($3/1024) with linespoints title 'VmRSS', \
     '' using 1:($4/1024) with lines dt 3 title 'VmHWM'
set ylabel 'entries'
plot 'benches/results/soak/soak.csv' using 1:72 with lines title 'pit_entries', \
     '' using 1:8 with lines title 'cs_entries', \
     '' using 1:10 with lines title 'cs_frames_held', \
     '' using 1:47 with lines title 'l2_indexed'
set ylabel 'count'
plot 'benches/results/soak/soak.csv' using 1:5 with lines title 'faces', \
     '' using 1:61 with lines title 'l2_write_backlog'
unset multiplot
