#!/usr/bin/env bash
# Jumbo-frame benchmark (issue 37 part 6): the same transfer through ndx on two lines built
# side by side, one with every veth at MTU 9000 and one at MTU 1500, measured alternately in
# the same run. Needs root.
#
#   sudo scripts/bench-jumbo.sh            # builds the release binary first
#
#   consumer ns ──veth── router ns ──veth── producer ns      (twice: MTU 9000 and MTU 1500)
#   10.77.1.1        10.77.1.2 | 10.77.2.2      10.77.2.1
#   ndx get          ndx run (AF_XDP)           ndx put -s 8800
#
# `ndx put` serves a BENCH_MIB (256) MiB file of random bytes in 8800-byte Data; `ndx get`
# fetches it through `ndx run` with the tools told the link's MTU. At MTU 9000 each Data is one
# Ethernet frame on both hops (the router's XDP program is the `xdp.frags` one, its sockets
# multi-buffer); at MTU 1500 the producer splits each Data into NDNLPv2 fragments, the router
# reassembles them and fragments again towards the consumer, which reassembles. Each run starts
# a fresh router (empty CS) and producer; the number is `ndx get`'s goodput (content bytes over
# the transfer's time). Rounds run A (9000) then B (1500), BENCH_ROUNDS (3) times; the table
# gives each run, the medians and the median of the per-round ratios (load from elsewhere
# moves both runs of a round together: only the ratio means anything). Every fetched file is
# compared with the served one; the frames the producer's veth sent per Data and the router's
# NDNLPv2 counters are reported per run.
# Pinning (2-CPU VM): ndx's shard on FWD_CPU (1), `ndx get` and `ndx put` on GEN_CPU (0).
# Knobs: BENCH_MIB (256), BENCH_ROUNDS (3), BENCH_SEGMENT (8800), BENCH_WINDOW (32: ndx get's
# --max-cwnd), GEN_CPU, FWD_CPU, NO_BUILD=1 (use target/release/ndx as it is).
set -euo pipefail
. "$(dirname "$0")/topology.sh"
cd "$(dirname "$0")/.."
MIB=${BENCH_MIB:-256}
ROUNDS=${BENCH_ROUNDS:-3}
SEGMENT=${BENCH_SEGMENT:-8800}
WINDOW=${BENCH_WINDOW:-32}
GEN_CPU=${GEN_CPU:-0}
FWD_CPU=${FWD_CPU:-1}
T=${CARGO_TARGET_DIR:-$PWD/target}
if [ -z "${NO_BUILD:-}" ]; then
  cargo build --release -p ndx >&2
fi
NDX=$T/release/ndx
[ -x "$NDX" ] || { echo "missing $NDX" >&2; exit 1; }

TAG=$$
WORK=$(mktemp -d /tmp/ndx-jumbo.XXXXXX)
PIDS=()
NSS=()
cleanup() {
  set +e
  ndx_teardown "${NSS[@]}"
  [ -n "${KEEP_WORK:-}" ] && echo "logs kept in $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { printf '== %s\n' "$*" >&2; }
# Background jobs of a script ignore SIGINT: stop them with SIGTERM.
stop() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# One line per MTU: namespaces ndxj-{c,r,p}-MTU-TAG, every veth end at that MTU.
for mtu in 9000 1500; do
  c=ndxj-c-$mtu-$TAG r=ndxj-r-$mtu-$TAG p=ndxj-p-$mtu-$TAG
  NSS+=("$c" "$r" "$p")
  say "line at MTU $mtu"
  ndx_topology "$c" "$r" "$p" "${mtu:0:1}$TAG" 1
  for end in "$c eth0" "$r c0" "$r p0" "$p eth0"; do
    set -- $end
    ip -n "$1" link set "$2" mtu "$mtu"
  done
  # Resolve the neighbours once (ndx learns next hops from the kernel's table).
  ip netns exec "$r" ping -c 1 -W 2 10.77.2.1 > /dev/null
  ip netns exec "$c" ping -c 1 -W 2 10.77.1.2 > /dev/null
  cat > "$WORK/ndx-$mtu.toml" <<CFG
[router]
shards = 1
cpus = [$FWD_CPU]
control_socket = "$WORK/ndx-$mtu.sock"
[app]
socket = "$WORK/nfd-$mtu.sock"
$(ndx_line_config "/jumbo")
CFG
done

say "content: $MIB MiB of random bytes"
head -c $((MIB * 1024 * 1024)) /dev/urandom > "$WORK/file"

# wire NS IF FIELD: a veth counter (statistics/FIELD) inside NS.
wire() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
# counter SOCK NAME: a total counter from ndx status --json.
counter() {
  "$NDX" status -s "$1" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['counters']['$2'])"
}

# ticks PID: user + system clock ticks PID has used.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run MTU ROUND: one transfer on the MTU line; appends "MTU ROUND Mbit/s frames/Data
# fragments_out reassembled retransmissions app-CPUs" to $WORK/runs (app-CPUs: the CPU time
# ndx get and ndx put used over the transfer, in CPUs; near 1 means their shared CPU bound it).
run() {
  local mtu=$1 round=$2 c=ndxj-c-$1-$TAG r=ndxj-r-$1-$TAG p=ndxj-p-$1-$TAG
  local sock=$WORK/ndx-$mtu.sock log=$WORK/$mtu-$round
  rm -f "$sock" "$WORK/got"
  ip netns exec "$r" "$NDX" run -c "$WORK/ndx-$mtu.toml" > "$log.ndx.log" 2>&1 &
  local router=$!
  PIDS+=("$router")
  for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.1; done
  [ -S "$sock" ] || { cat "$log.ndx.log" >&2; echo "ndx did not start" >&2; exit 1; }
  ip netns exec "$p" taskset -c "$GEN_CPU" "$NDX" put /jumbo/file -i "$WORK/file" \
    -b 0.0.0.0:6363 -s "$SEGMENT" --mtu "$mtu" > "$log.put.log" 2>&1 &
  local producer=$!
  PIDS+=("$producer")
  for _ in $(seq 300); do grep -q serving "$log.put.log" 2>/dev/null && break; sleep 0.1; done
  grep -q serving "$log.put.log" || { cat "$log.put.log" >&2; echo "ndx put did not start" >&2; exit 1; }
  local tx0
  tx0=$(wire "$p" eth0 tx_packets)
  local put0
  put0=$(ticks "$producer")
  { TIMEFORMAT='%U %S'; time ip netns exec "$c" taskset -c "$GEN_CPU" "$NDX" get /jumbo/file \
      -t 10.77.1.2:6363 -o "$WORK/got" --no-progress --mtu "$mtu" --max-cwnd "$WINDOW" \
      > "$log.get.log" 2>&1; } 2> "$log.time"
  local put_cpu get_cpu
  put_cpu=$(python3 -c "print(($(ticks "$producer") - $put0) / $(getconf CLK_TCK))")
  get_cpu=$(awk '{print $1 + $2}' "$log.time")
  local frames=$(( $(wire "$p" eth0 tx_packets) - tx0 ))
  cmp -s "$WORK/file" "$WORK/got" || { echo "MTU $mtu round $round: fetched file differs" >&2; exit 1; }
  local mbit segs retx frags reass secs
  mbit=$(sed -n 's/^Goodput: \([0-9.]*\) Mbit.*/\1/p' "$log.get.log")
  segs=$(sed -n 's/^Fetched .*(\([0-9]*\) segments.*/\1/p' "$log.get.log")
  retx=$(sed -n 's/^Retransmissions: \([0-9]*\).*/\1/p' "$log.get.log")
  secs=$(sed -n 's/^Time elapsed: \([0-9.]*\) s/\1/p' "$log.get.log")
  frags=$(counter "$sock" fragments_out)
  reass=$(counter "$sock" reassembled)
  stop "$producer"
  stop "$router"
  local gen
  gen=$(python3 -c "print(f'{($get_cpu + $put_cpu) / $secs:.2f}')")
  echo "$mtu $round $mbit $(python3 -c "print(f'{$frames/$segs:.2f}')") $frags $reass $retx $gen" >> "$WORK/runs"
  say "MTU $mtu round $round: $mbit Mbit/s, $frames producer frames for $segs Data, fragments_out $frags, reassembled $reass, retransmissions $retx; ndx get + ndx put used $gen CPU(s)"
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$ROUNDS"); do
  run 9000 "$round"
  run 1500 "$round"
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK/runs" "$MIB" "$SEGMENT" "$WINDOW" "$LOAD0" "$LOAD1" <<'PY'
import statistics, sys
path, mib, seg, window, load0, load1 = sys.argv[1:]
runs = [l.split() for l in open(path)]
by = {}
for mtu, rnd, mbit, fpd, frags, reass, retx, gen in runs:
    by.setdefault(rnd, {})[mtu] = (float(mbit), fpd, frags, gen)
print(f"{mib} MiB in {seg}-byte Data, ndx get --max-cwnd {window}; load average {load0} before, {load1} after")
print()
print("| round | MTU 9000 Gbit/s | frames/Data | fragments_out | app CPUs | MTU 1500 Gbit/s | frames/Data | fragments_out | app CPUs | ratio 9000/1500 |")
print("|---|---|---|---|---|---|---|---|---|---|")
ratios = []
for rnd in sorted(by, key=int):
    a, b = by[rnd]["9000"], by[rnd]["1500"]
    r = a[0] / b[0] if b[0] else float("nan")
    ratios.append(r)
    print(f"| {rnd} | {a[0]/1000:.3f} | {a[1]} | {a[2]} | {a[3]} | {b[0]/1000:.3f} | {b[1]} | {b[2]} | {b[3]} | {r:.2f}x |")
ma = statistics.median(v["9000"][0] for v in by.values()) / 1000
mb = statistics.median(v["1500"][0] for v in by.values()) / 1000
print(f"| median | {ma:.3f} | | | | {mb:.3f} | | | | {statistics.median(ratios):.2f}x |")
PY
