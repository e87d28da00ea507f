#!/usr/bin/env bash
# Data-path benchmark of ndx on veth (issues 4, 37), with the references it is held to measured
# in the same run on the same topology: a raw AF_XDP reflector, an AF_XDP L3 forwarder, the
# kernel's own IP forwarding, and ndnd (needs root). Usage:
#
#   sudo scripts/bench-datapath.sh            # builds the release binaries first
#
#   consumer ns ──veth── router ns ──veth── producer ns
#   10.77.1.1        10.77.1.2 | 10.77.2.2      10.77.2.1
#   ndx-traffic      reflector / l3fwd /        ndx-traffic
#   consumer         kernel / ndx / ndnd        producer
#
# Phases (BENCH_SECS measured seconds each, after a 1 s unmeasured warm-up):
#   R   raw AF_XDP reflector (ndx-afxdp's example) on c0 reflecting the consumer's Interests
#       (ndx-traffic consumer --echo, the same generator and window as below), and
#       ndx-afxdp's flood example as a second, window-less source
#   L   ndx-afxdp's l3fwd example on c0 and p0 (same sockets, rings, bursts and kicks as ndx's
#       worker; it rewrites MACs, addresses and ports as ndx does and reads nothing past UDP):
#       unique names, consumer to the router's address, Data back from the same producer.
#       The ceiling of ndx's unique-name path (target: a >= 0.9x L)
#   K   the kernel's IP forwarding in the router namespace (ip_forward=1; the consumer
#       addresses the producer, 10.77.2.1, through the router's MAC; static neighbours): unique
#       names, same generator, window and producer. veth hands a frame to the receiving
#       side's softirq on the sending CPU, so RPS steers c0's and p0's receive to $FWD_CPU:
#       the forwarding runs on the router's CPU as ndx's shard does (BENCH_K_RPS=0 leaves it
#       on the senders' CPU). The softirq share of each CPU is reported per phase
#   a   ndx forwarding unique names to the AF_XDP producer
#   b   ndx answering from its CS (K names fetched once, producer stopped)
#   c   ndnd fw: unique names, then CS hits, same generator
#   I   interleaved: the reflector (on a second, identical topology) and ndx's CS hits in
#       BENCH_SLICES (8) alternating pairs of BENCH_SLICE_SECS (2) s slices, ABBA order; the
#       one not measured is frozen with SIGSTOP. Each ratio compares two slices a few seconds
#       apart instead of phases 15 s apart, so the host's load swings cancel better: this is
#       the CS-hit ratio to quote (BENCH_PHASES=I runs it alone). BENCH_I_CONTROL=1 puts a
#       second reflector in ndx's place: the method's own bias (its ratio should be ~1)
#   J   interleaved the same way for unique names: the L3 forwarder (on a second, identical
#       topology with its own producer) and ndx, BENCH_SLICES pairs of slices, ABBA; the side
#       not measured (forwarder or ndx, and its producer) frozen with SIGSTOP. The a/L ratio
#       to quote, as I is for b/R
# The whole sequence runs BENCH_ROUNDS times (3); the table gives each row's median and the
# median of the per-round ratios (other load on the machine moves all rows of a round together).
# Pinning (2-CPU VM): consumer and producer on CPU $GEN_CPU, the router under test (reflector,
# ndx's shard, ndnd) on CPU $FWD_CPU. Environment knobs: BENCH_SECS (10), BENCH_WINDOW (256),
# BENCH_DISTINCT (1024), NDND_SMALL_WINDOW (32), NDX_SHARDS (1), NDND (/opt/ndx-interop/go/ndnd), GEN_CPU (0),
# FWD_CPU (1), NO_BUILD=1 (use existing binaries in $CARGO_TARGET_DIR or target/),
# BENCH_PHASES (RLKabcIJ: the phases to run, by letter; e.g. BENCH_PHASES=Rb runs the reflector
# and the CS hits only; phase b fills the CS through the producer either way).
# Besides the table, the ratios issue 37 targets: a/L (ndx unique names to the L3 forwarder,
# target >= 0.9), b/R (ndx CS hits to the reflector, >= 0.9), a/K (ndx to kernel forwarding)
# and L/K (whether copy-mode AF_XDP on veth can beat the kernel at all).
set -euo pipefail
. "$(dirname "$0")/topology.sh"
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
cd "$(dirname "$0")/.."
SECS=${BENCH_SECS:-10}
WINDOW=${BENCH_WINDOW:-256}
K=${BENCH_DISTINCT:-1024}
ROUNDS=${BENCH_ROUNDS:-3}
NDND_SMALL_WINDOW=${NDND_SMALL_WINDOW:-32}
SHARDS=${NDX_SHARDS:-1}
PHASES=${BENCH_PHASES:-RLKabcIJ}
SLICES=${BENCH_SLICES:-8}
SLICE_SECS=${BENCH_SLICE_SECS:-2}
has() { [[ $PHASES == *"$1"* ]]; }
NDND=${NDND:-/opt/ndx-interop/go/ndnd}
GEN_CPU=${GEN_CPU:-0}
FWD_CPU=${FWD_CPU:-1}
T=${CARGO_TARGET_DIR:-$PWD/target}
if [ -z "${NO_BUILD:-}" ]; then
  cargo build --release -p ndx -p ndx-traffic >&2
  cargo build --release -p ndx-afxdp --examples >&2
fi
NDX=$T/release/ndx
TRAFFIC=$T/release/ndx-traffic
REFLECTOR=$T/release/examples/reflector
FLOOD=$T/release/examples/flood
L3FWD=$T/release/examples/l3fwd
for b in "$NDX" "$TRAFFIC" "$REFLECTOR" "$FLOOD" "$L3FWD"; do [ -x "$b" ] || { echo "missing $b"; exit 1; }; done

TAG=$$
C=ndxbench-c-$TAG R=ndxbench-r-$TAG P=ndxbench-p-$TAG
WORK=$(mktemp -d /tmp/ndx-bench.XXXXXX)
PIDS=()
NS2=()
cleanup() {
  local rc=$?
  set +e
  # The slices' consumers (phases I, J) write their JSON and any error there: say why a run
  # stopped early.
  if [ "$rc" != 0 ] && [ -s "$WORK/slices.err" ]; then
    echo "exit $rc; the last slice consumers' output:" >&2; tail -n 4 "$WORK/slices.err" >&2
  fi
  for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null; done
  ndx_teardown $C $R $P "${NS2[@]}"
  [ -n "${KEEP_WORK:-}" ] && echo "logs kept in $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { printf '== %s\n' "$*" >&2; }

# Stops a background process by pid (SIGINT, then waits).
stop() { kill -INT "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

say "topology ($SHARDS queue(s) per veth)"
ndx_topology $C $R $P $TAG "$SHARDS"
mac() { ip netns exec "$1" cat "/sys/class/net/$2/address"; }
# static_neighbours C R P: the AF_XDP ends take every frame (ARP too), so every neighbour of
# a line topology is static.
static_neighbours() {
  ip -n "$2" neigh replace 10.77.1.1 lladdr "$(mac "$1" eth0)" dev c0 nud permanent
  ip -n "$2" neigh replace 10.77.2.1 lladdr "$(mac "$3" eth0)" dev p0 nud permanent
  ip -n "$1" neigh replace 10.77.1.2 lladdr "$(mac "$2" c0)" dev eth0 nud permanent
  ip -n "$3" neigh replace 10.77.2.2 lladdr "$(mac "$2" p0)" dev eth0 nud permanent
}
MRC=$(mac $R c0)
static_neighbours $C $R $P

# perf_start NAME [PID]: with PERF=1, samples every CPU (call graphs) while a phase runs; with
# PERF=stat, counts PID's system calls by kind (every thread), its user/system CPU ticks and
# the router's veth counters over the same window, and prints them per exchange (the Data
# frames the router sent on c0) in perf.NAME.txt: figures that do not depend on the host's
# load (no hardware counters in this VM); with PERF=graph, samples PID only, with DWARF call
# graphs (perf report -g -i perf.NAME.data).
STAT_SYSCALLS="sendto recvfrom poll ppoll epoll_wait getsockopt setsockopt sched_yield futex read
  write openat close statx newfstatat accept4 nanosleep clock_nanosleep sendmsg recvmsg ioctl
  io_uring_enter bpf madvise mmap munmap"
# veth_counts FILE: the router namespace's c0 and p0 counters (JSON) appended to FILE.
veth_counts() { ip -n "$R" -s -j link show >> "$1"; echo >> "$1"; }
perf_start() {
  PERFPID=
  [ -n "${PERF:-}" ] || return 0
  if [ "$PERF" = stat ]; then
    [ -n "${2:-}" ] || return 0
    STATPID=$2
    local ev=task-clock s
    for s in $STAT_SYSCALLS; do ev+=",syscalls:sys_enter_$s"; done
    : > "$WORK/perf.$1.veth"
    veth_counts "$WORK/perf.$1.veth"
    awk '{print "ticks-before", $14, $15}' "/proc/$2/stat" > "$WORK/perf.$1.ticks"
    perf stat -x, -e "$ev" -p "$2" -o "$WORK/perf.$1.stat" -- sleep "$((SECS + 1))" > /dev/null 2>&1 &
    PERFPID=$!
    return 0
  fi
  if [ "$PERF" = graph ]; then
    [ -n "${2:-}" ] || return 0
    perf record -p "$2" -F 499 --call-graph dwarf,16384 -o "$WORK/perf.$1.data" -- sleep "$((SECS + 1))" > /dev/null 2>&1 &
  else
    perf record -C "$FWD_CPU,$GEN_CPU" -F 999 -o "$WORK/perf.$1.data" -- sleep "$((SECS + 1))" > /dev/null 2>&1 &
  fi
  PERFPID=$!
}
perf_end() {
  [ -n "${PERFPID:-}" ] || return 0
  wait "$PERFPID" || true
  if [ "$PERF" = stat ]; then
    awk '{print "ticks-after", $14, $15}' "/proc/$STATPID/stat" >> "$WORK/perf.$1.ticks" 2>/dev/null || true
    veth_counts "$WORK/perf.$1.veth"
    python3 "$SCRIPTS/perf-per-exchange.py" "$WORK/perf.$1" > "$WORK/perf.$1.txt" || true
    { echo "perf counts of phase $1 ($WORK/perf.$1.txt):"; cat "$WORK/perf.$1.txt"; } >&2
    return 0; fi
  perf report -i "$WORK/perf.$1.data" --no-children --sort cpu,pid,dso,sym --stdio 2>/dev/null \
    | grep -v "^#" | grep "%" | head -60 > "$WORK/perf.$1.txt" || true
  echo "perf profile of phase $1: $WORK/perf.$1.txt" >&2
}

# consumer NAME ARGS...: runs the generator in the consumer ns, pinned; JSON to $WORK/NAME.json
# (NAME carries the round number). CNS and CMAC select another consumer ns and next-hop MAC.
# CDST selects another destination address (phase K addresses the producer). The CPUs'
# /proc/stat lines before and after go to $WORK/NAME.stat (which CPU did the work).
consumer() {
  local name=$1; shift
  grep '^cpu[0-9]' /proc/stat > "$WORK/$name.stat"
  ip netns exec "${CNS:-$C}" taskset -c "$GEN_CPU" "$TRAFFIC" consumer --iface eth0 \
    --dst-mac "${CMAC:-$MRC}" \
    --src-ip 10.77.1.1 --dst-ip "${CDST:-10.77.1.2}" --window "${CWIN:-$WINDOW}" "$@" | tee "$WORK/$name.json" >&2
  grep '^cpu[0-9]' /proc/stat >> "$WORK/$name.stat"
}
producer_start() {
  ip netns exec $P taskset -c "$GEN_CPU" "$TRAFFIC" producer --iface eth0 > "$WORK/producer.$1.json" 2>"$WORK/producer.$1.err" &
  PRODUCER=$!
  PIDS+=($PRODUCER)
  sleep 0.5
}

cat > "$WORK/ndx.toml" <<CFG
[router]
shards = $SHARDS
cpus = [$FWD_CPU]
control_socket = "$WORK/ndx.sock"
[app]
# Its own app socket: NFD's path may belong to a forwarder already running here.
socket = "$WORK/nfd.sock"
[cs]
capacity = 65536
$(ndx_line_config "/bench")
CFG
cat > "$WORK/fw.yml" <<YML
core:
  log_level: WARN
faces:
  udp:
    enabled_unicast: true
    enabled_multicast: false
    port_unicast: 6363
  tcp:
    enabled: false
  unix:
    enabled: true
    socket_path: $WORK/fw.sock
  websocket:
    enabled: false
tables:
  content_store:
    capacity: $((K * 4))
YML

phase_reflector() { # ROUND
  say "[$1] R: raw AF_XDP reflector on c0 (CPU $FWD_CPU), consumer --echo (CPU $GEN_CPU)"
  ip netns exec $R taskset -c "$FWD_CPU" "$REFLECTOR" c0 0 "$((SECS + 4))" > "$WORK/reflector.$1.txt" 2>&1 &
  REFL=$!; PIDS+=($REFL); sleep 1
  perf_start "R.$1" "$REFL"
  consumer "R.$1" --echo --seconds "$SECS"
  perf_end "R.$1"
  wait "$REFL" || true; cat "$WORK/reflector.$1.txt" >&2
  IFRAME=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["interest_frame_bytes"])' "$WORK/R.$1.json")
  say "[$1] R': reflector with ndx-afxdp's flood ($IFRAME-byte frames, no window)"
  ip netns exec $R taskset -c "$FWD_CPU" "$REFLECTOR" c0 0 "$((SECS + 3))" > "$WORK/reflector2.$1.txt" 2>&1 &
  REFL=$!; PIDS+=($REFL); sleep 1
  ip netns exec $C taskset -c "$GEN_CPU" "$FLOOD" eth0 0 "$SECS" "$MRC" 10.77.1.1:6363 10.77.1.2:6363 "$IFRAME" | tee "$WORK/flood.$1.txt" >&2
  wait "$REFL" || true; cat "$WORK/reflector2.$1.txt" >&2
}

# l3fwd_start NS NAME SECONDS: the L3 forwarder between c0 and p0 of router namespace NS, for
# SECONDS, pinned; its pid in L3 once both interfaces are open and the programs attached (it
# prints its headers then).
l3fwd_start() {
  ip netns exec "$1" taskset -c "$FWD_CPU" "$L3FWD" c0 10.77.1.1:6363 p0 10.77.2.1:6363 "$3" \
    > "$WORK/l3fwd.$2.txt" 2> "$WORK/l3fwd.$2.err" &
  L3=$!; PIDS+=($L3)
  for _ in $(seq 100); do grep -qs ' -> ' "$WORK/l3fwd.$2.err" && break; sleep 0.1; done
  grep -qs ' -> ' "$WORK/l3fwd.$2.err" || { cat "$WORK/l3fwd.$2.err"; echo "l3fwd did not start"; exit 1; }
}

phase_l3fwd() { # ROUND
  say "[$1] L: AF_XDP L3 forwarder c0 <-> p0 (CPU $FWD_CPU), unique names"
  producer_start "L.$1"
  l3fwd_start $R "$1" "$((SECS + 30))"
  perf_start "L.$1" "$L3"
  consumer "L.$1" --unique --prefix "/bench/l$1" --seconds "$SECS"
  perf_end "L.$1"
  stop "$L3"; stop "$PRODUCER"
  cat "$WORK/l3fwd.$1.err" "$WORK/l3fwd.$1.txt" "$WORK/producer.L.$1.json" >&2
}

# rps IFACE MASK: steers every receive queue of IFACE (router namespace) to the CPUs in MASK
# (hexadecimal; 0 turns RPS off).
rps() {
  # The namespace's own /sys: `ip netns exec` mounts it.
  ip netns exec $R sh -c 'for q in /sys/class/net/"$1"/queues/rx-*; do echo "$2" > "$q/rps_cpus"; done' \
    rps "$1" "$2"
}

phase_kernel() { # ROUND
  local mask
  mask=$(printf '%x' $((1 << FWD_CPU)))
  say "[$1] K: kernel IP forwarding in the router namespace (RPS to CPU $FWD_CPU: ${BENCH_K_RPS:-1}), unique names"
  ip netns exec $R sysctl -qw net.ipv4.ip_forward=1
  if [ "${BENCH_K_RPS:-1}" != 0 ]; then rps c0 "$mask"; rps p0 "$mask"; fi
  producer_start "K.$1"
  perf_start "K.$1"
  CDST=10.77.2.1 consumer "K.$1" --unique --prefix "/bench/k$1" --seconds "$SECS"
  perf_end "K.$1"
  stop "$PRODUCER"; cat "$WORK/producer.K.$1.json" >&2
  rps c0 0; rps p0 0
  ip netns exec $R sysctl -qw net.ipv4.ip_forward=0
}

# start_ndx NAME: starts the AF_XDP producer and ndx (pinned), and waits until ndx's producer
# face is resolved (Interests forwarded before that are dropped as unresolved_face).
start_ndx() {
  rm -f "$WORK/ndx.sock"
  producer_start "ndx.$1"
  ip netns exec $R taskset -c "$FWD_CPU" "$NDX" run -c "$WORK/ndx.toml" > "$WORK/ndx.$1.log" 2>&1 &
  NDXPID=$!; PIDS+=($NDXPID)
  for _ in $(seq 100); do [ -S "$WORK/ndx.sock" ] && break; sleep 0.1; done
  [ -S "$WORK/ndx.sock" ] || { cat "$WORK/ndx.$1.log"; echo "ndx did not start"; exit 1; }
  for _ in $(seq 100); do
    "$NDX" status -s "$WORK/ndx.sock" --json 2>/dev/null | python3 -c \
      'import json,sys; d=json.load(sys.stdin); sys.exit(0 if all(f["resolved"] for f in d["faces"] if f["name"]=="producer") else 1)' \
      && break
    sleep 0.1
  done
}

phase_ndx() { # ROUND
  say "[$1] a, b: ndx ($SHARDS shard(s) on CPU $FWD_CPU)"
  start_ndx "$1"
  if has a; then
    perf_start "a.$1" "$NDXPID"
    consumer "a.$1" --unique --prefix "/bench/u$1" --seconds "$SECS"
    perf_end "a.$1"
    "$NDX" status -s "$WORK/ndx.sock" --json > "$WORK/status.a.$1.json"
  fi
  if ! has b; then stop "$PRODUCER"; stop "$NDXPID"; return 0; fi
  say "[$1] b: fill the CS with $K names, stop the producer"
  consumer "b-fill.$1" --distinct "$K" --prefix "/bench/cs$1" --seconds 1 --warmup 1 > /dev/null
  stop "$PRODUCER"; cat "$WORK/producer.ndx.$1.json" >&2
  "$NDX" status -s "$WORK/ndx.sock" --json > "$WORK/status.b0.$1.json"
  perf_start "b.$1" "$NDXPID"
  consumer "b.$1" --distinct "$K" --prefix "/bench/cs$1" --seconds "$SECS"
  perf_end "b.$1"
  "$NDX" status -s "$WORK/ndx.sock" --json > "$WORK/status.b.$1.json"
  stop "$NDXPID"
}

phase_ndnd() { # ROUND
  [ -x "$NDND" ] || { say "ndnd not found at $NDND: skipping"; return 0; }
  say "[$1] c: ndnd fw (CPU $FWD_CPU)"
  rm -f "$WORK/fw.sock"
  producer_start "ndnd.$1"
  ip netns exec $R taskset -c "$FWD_CPU" "$NDND" fw run "$WORK/fw.yml" > "$WORK/ndnd.$1.log" 2>&1 &
  NDNDPID=$!; PIDS+=($NDNDPID)
  for _ in $(seq 200); do [ -S "$WORK/fw.sock" ] && break; sleep 0.1; done
  ip netns exec $R env NDN_CLIENT_TRANSPORT="unix://$WORK/fw.sock" "$NDND" fw route-add \
    prefix=/bench face=udp://10.77.2.1:6363 persistency=permanent > "$WORK/ndnd-route.$1.txt" 2>&1
  # ndnd drops the first burst of a new UDP peer while it creates the face: longer warm-up.
  consumer "c-u.$1" --unique --prefix "/bench/u$1" --seconds "$SECS" --warmup 2
  # ndnd loses Interests at its UDP socket when the window is large (net.core.rmem_* is
  # read-only in a namespace), and every loss holds a window slot until the timeout: give it
  # its best chance with a smaller window too, and keep the better of the two.
  CWIN=$NDND_SMALL_WINDOW consumer "c-u-small.$1" --unique --prefix "/bench/v$1" --seconds "$SECS" --warmup 1
  consumer "c-fill.$1" --distinct "$K" --prefix "/bench/cs$1" --seconds 2 --warmup 1 > /dev/null
  stop "$PRODUCER"; cat "$WORK/producer.ndnd.$1.json" >&2
  consumer "c-cs.$1" --distinct "$K" --prefix "/bench/cs$1" --seconds "$SECS"
  stop "$NDNDPID"
}

# second_line C R P TAG: a second consumer — router — producer line, identical to the first,
# for the interleaved phases (I, J); MRC2 is its router's MAC on c0.
second_line() {
  NS2+=($1 $2 $3)
  ndx_topology $1 $2 $3 "$4" "$SHARDS"
  static_neighbours $1 $2 $3
  MRC2=$(mac $2 c0)
}

# abba REF MINE: BENCH_SLICES pairs of slices, each function called with the pair's number,
# REF first in odd pairs and second in even ones (ABBA).
abba() {
  local i
  for i in $(seq "$SLICES"); do
    if (( i % 2 )); then "$1" "$i"; "$2" "$i"; else "$2" "$i"; "$1" "$i"; fi
  done
}

# Phase I: the reflector and ndx's CS hits measured in alternating short slices (ABBA order), so
# both sides of each ratio see the same moment of the shared host. The reflector runs on a
# second, identical line topology; ndx (its CS filled once) and the reflector both stay up,
# and the one not being measured is frozen with SIGSTOP, so it takes no CPU.
phase_interleaved() {
  local c2=ndxbench-c2-$TAG r2=ndxbench-r2-$TAG p2=ndxbench-p2-$TAG
  second_line $c2 $r2 $p2 "i$TAG"
  say "I: ndx and the reflector in $SLICES alternating pairs of ${SLICE_SECS} s slices"
  local echo=()
  if [ -n "${BENCH_I_CONTROL:-}" ]; then
    # The control: a second reflector in ndx's place; its ratio to the first should be 1.
    say "I: control run, a reflector in ndx's place"
    ip netns exec $R taskset -c "$FWD_CPU" "$REFLECTOR" c0 0 100000 > /dev/null 2>&1 &
    NDXPID=$!; PIDS+=($NDXPID); sleep 1
    echo=(--echo)
  else
    start_ndx I
    consumer "I-fill" --distinct "$K" --prefix /bench/csI --seconds 1 --warmup 1 > /dev/null
    stop "$PRODUCER"
  fi
  ip netns exec $r2 taskset -c "$FWD_CPU" "$REFLECTOR" c0 0 100000 > "$WORK/reflector.I.txt" 2>&1 &
  REFL=$!; PIDS+=($REFL); sleep 1
  kill -STOP "$REFL"
  slice_R() {
    kill -STOP "$NDXPID"; kill -CONT "$REFL"
    CNS=$c2 CMAC=$MRC2 consumer "I-R.$1" --echo --seconds "$SLICE_SECS" --warmup 0.5 2>>"$WORK/slices.err"
    kill -STOP "$REFL"; kill -CONT "$NDXPID"
  }
  slice_b() {
    consumer "I-b.$1" --distinct "$K" --prefix /bench/csI --seconds "$SLICE_SECS" --warmup 0.5 "${echo[@]}" 2>>"$WORK/slices.err"
  }
  abba slice_R slice_b
  kill -CONT "$REFL"; kill -TERM "$REFL"; wait "$REFL" 2>/dev/null || true
  if [ -n "${BENCH_I_CONTROL:-}" ]; then
    kill -CONT "$NDXPID"; kill -TERM "$NDXPID"; wait "$NDXPID" 2>/dev/null || true
    return 0
  fi
  "$NDX" status -s "$WORK/ndx.sock" --json > "$WORK/status.I.json"
  stop "$NDXPID"
}

phase_interleaved_fwd() {
  local c2=ndxbench-c3-$TAG r2=ndxbench-r3-$TAG p2=ndxbench-p3-$TAG
  second_line $c2 $r2 $p2 "j$TAG"
  say "J: ndx and the L3 forwarder, unique names, in $SLICES alternating pairs of ${SLICE_SECS} s slices"
  start_ndx J
  local p1=$PRODUCER
  ip netns exec $p2 taskset -c "$GEN_CPU" "$TRAFFIC" producer --iface eth0 > "$WORK/producer.J2.json" 2>"$WORK/producer.J2.err" &
  local p2pid=$!; PIDS+=($p2pid); sleep 0.5
  l3fwd_start $r2 J 3600
  local l3=$L3
  kill -STOP "$l3" "$p2pid"
  slice_L() {
    kill -STOP "$NDXPID" "$p1"; kill -CONT "$l3" "$p2pid"
    CNS=$c2 CMAC=$MRC2 consumer "J-L.$1" --unique --prefix "/bench/jl$1" --seconds "$SLICE_SECS" --warmup 0.5 2>>"$WORK/slices.err"
    kill -STOP "$l3" "$p2pid"; kill -CONT "$NDXPID" "$p1"
  }
  slice_a() {
    consumer "J-a.$1" --unique --prefix "/bench/ja$1" --seconds "$SLICE_SECS" --warmup 0.5 2>>"$WORK/slices.err"
  }
  abba slice_L slice_a
  kill -CONT "$l3" "$p2pid"; stop "$l3"; stop "$p2pid"
  "$NDX" status -s "$WORK/ndx.sock" --json > "$WORK/status.J.json"
  stop "$NDXPID"; stop "$p1"
}

for r in $(seq "$ROUNDS"); do
  if has R; then phase_reflector "$r"; fi
  if has L; then phase_l3fwd "$r"; fi
  if has K; then phase_kernel "$r"; fi
  if has a || has b; then phase_ndx "$r"; fi
  if has c; then phase_ndnd "$r"; fi
done
if has I; then phase_interleaved; fi
if has J; then phase_interleaved_fwd; fi

python3 - "$WORK" "$ROUNDS" <<'PY'
import json, os, statistics, sys
w, rounds = sys.argv[1], int(sys.argv[2])
def load(n):
    p = os.path.join(w, n + ".json")
    try:
        return json.load(open(p))["exchanges_per_s"]
    except Exception:
        return None
def flood(r):
    try:
        t = open(os.path.join(w, f"flood.{r}.txt")).read()
        return float(t.split("received back")[1].split("(")[1].split(" pps")[0])
    except Exception:
        return None
rows = [("R", "raw AF_XDP reflector (echo, same generator)"),
        ("L", "AF_XDP L3 forwarder, unique names"),
        ("K", "kernel IP forwarding, unique names"),
        ("a", "ndx, unique names (forwarding)"),
        ("b", "ndx, CS hits"),
        ("c-u", "ndnd fw, unique names (best window)"),
        ("c-cs", "ndnd fw, CS hits")]
vals = {k: [load(f"{k}.{r}") for r in range(1, rounds + 1)] for k, _ in rows}
# ndnd, unique names: the better of its two windows in each round.
small = [load(f"c-u-small.{r}") for r in range(1, rounds + 1)]
vals["c-u"] = [max(filter(None, (x, y)), default=None) for x, y in zip(vals["c-u"], small)]
vals["F"] = [flood(r) for r in range(1, rounds + 1)]
nd = {"a": "c-u", "b": "c-cs"}
def med(xs):
    xs = [x for x in xs if x]
    return statistics.median(xs) if xs else None
def ratios(k, ref):
    return [x / y for x, y in zip(vals[k], vals[ref]) if x and y]
if any(x for v in vals.values() for x in v):
  print()
  print(f"per round (exchanges/s): " + ", ".join(f"{k}={['%.0f' % x if x else '-' for x in v]}" for k, v in vals.items()))
  print()
  print(f"{'':6}{'run':48} {'exch/s (median)':>15} {'vs reflector':>13} {'vs ndnd':>8}")
  for k, name in rows + [("F", "reflector fed by flood (no window; sender's rx)")]:
      m = med(vals[k])
      if m is None:
          print(f"{k:6}{name:48} {'-':>15}")
          continue
      vr = med(ratios(k, "R"))
      vn = med(ratios(k, nd[k])) if k in nd else None
      print(f"{k:6}{name:48} {m:15.0f} {('%.2fx' % vr) if vr else '-':>13} {('%.1fx' % vn) if vn else '-':>8}")
  print("\n(ratios: median over rounds of the ratio within each round)")
  print()
  for num, den, what, target in (("a", "L", "ndx unique names / AF_XDP L3 forwarder", 0.9),
                                 ("b", "R", "ndx CS hits / raw reflector", 0.9),
                                 ("a", "K", "ndx unique names / kernel IP forwarding", None),
                                 ("L", "K", "AF_XDP L3 forwarder / kernel IP forwarding", None)):
      r = med(ratios(num, den))
      if r is None:
          continue
      t = f"  (target >= {target})" if target else ""
      print(f"{num}/{den:4}{what:48} {r:15.2f}x{t}")
def interleaved(ph, ref, num, ref_name, who):
    pairs = []
    i = 1
    while os.path.exists(os.path.join(w, f"{ph}-{ref}.{i}.json")):
        pairs.append((load(f"{ph}-{ref}.{i}"), load(f"{ph}-{num}.{i}")))
        i += 1
    pairs = [(r, b) for r, b in pairs if r and b]
    if not pairs:
        return
    rs = sorted(b / r for r, b in pairs)
    q = lambda f: rs[min(len(rs) - 1, int(f * len(rs)))]
    print(f"\n{ph}     interleaved slices, {len(pairs)} pairs ({ref_name} / {who}, exchanges/s): " +
          ", ".join(f"{r:.0f}/{b:.0f}" for r, b in pairs))
    print(f"{ph}     {who} vs {ref_name}: median {statistics.median(rs):.2f}x "
          f"(quartiles {q(0.25):.2f}-{q(0.75):.2f}, range {rs[0]:.2f}-{rs[-1]:.2f}); "
          f"pooled {sum(b for _, b in pairs) / sum(r for r, _ in pairs):.2f}x")
interleaved("I", "R", "b", "reflector",
            "control reflector" if os.environ.get("BENCH_I_CONTROL") else "ndx CS hits")
interleaved("J", "L", "a", "L3 forwarder", "ndx unique names")
last = rounds
# Which CPU did the work: each CPU's busy and softirq share of its time while the phase's
# consumer ran (/proc/stat is the whole machine's: other load shows up too).
cpu_lines = []
for ph in ("R", "L", "K", "a", "b"):
    p = os.path.join(w, f"{ph}.{last}.stat")
    try:
        lines = [l.split() for l in open(p)]
    except OSError:
        continue
    n = len(lines) // 2
    if n == 0:
        continue
    parts = []
    for before, after in zip(lines[:n], lines[n:2 * n]):
        d = [int(y) - int(x) for x, y in zip(before[1:], after[1:])]
        total = sum(d[:8]) or 1
        busy = total - d[3] - d[4]
        parts.append(f"{before[0]} busy {100 * busy / total:.0f}% softirq {100 * d[6] / total:.0f}%")
    cpu_lines.append(f"  {ph}: " + ", ".join(parts))
if cpu_lines:
    print(f"\nCPU time while the consumer ran (round {last}; whole machine):")
    print("\n".join(cpu_lines))
p = os.path.join(w, f"l3fwd.{last}.txt")
if os.path.exists(p):
    print(f"l3fwd counters (round {last}): " + "; ".join(
        l.strip() for l in open(p) if l.startswith(("l3fwd:", "a_to_b", "b_to_a"))))
for ph in ("a", "b"):
    p = os.path.join(w, f"status.{ph}.{last}.json")
    if os.path.exists(p):
        d = json.load(open(p))
        c = d["counters"]
        keys = [k for k in c if (k.startswith("drop_") or k.startswith("xsk_") or k in
                ("tx_ring_full", "unresolved_face", "exchange_full", "cs_hits", "interests_in",
                 "data_out", "loops")) and c[k]]
        print(f"ndx counters after phase {ph} (round {last}, non-zero): " +
              ", ".join(f"{k}={c[k]}" for k in keys) +
              f"; xdp: redirected={d['xdp'].get('redirected')} redirect-failed={d['xdp'].get('redirect-failed')}")
PY
