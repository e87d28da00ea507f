#!/usr/bin/env bash
# App-face benchmark (issue 32): `ndx serve` and `ndx gen` both attached to a local forwarder
# through its Unix socket, the forwarder being ndx (its app socket) or ndnd (its Unix face),
# measured alternately in the same run. Needs root (ndx attaches XDP to a throwaway veth).
#
#   sudo scripts/bench-appface.sh          # builds the release binary first
#
# Each round runs ndnd then ndx (BENCH_SECS measured seconds each, unique names: every
# Interest crosses the forwarder to the producer and back, no CS hit); the table gives each
# forwarder's exchanges/s per round, their medians and the median of the per-round ratios
# (load from elsewhere on the machine moves both rows of a round together).
# Knobs: BENCH_SECS (10), BENCH_ROUNDS (3), BENCH_WINDOW (64), BENCH_PAYLOAD (1000),
# NDX_IDLE (park: the shard sleeps when idle and ndx's host thread wakes it, as ndnd's
# threads block; "yield", or "spin", the busy-polling default), NDND
# (/opt/ndx-interop/go/ndnd), NO_BUILD=1.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${BENCH_SECS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
WINDOW=${BENCH_WINDOW:-64}
PAYLOAD=${BENCH_PAYLOAD:-1000}
IDLE=${NDX_IDLE:-park}
NDND=${NDND:-/opt/ndx-interop/go/ndnd}
T=${CARGO_TARGET_DIR:-$PWD/target}
if [ -z "${NO_BUILD:-}" ]; then
  cargo build --release -p ndx >&2
fi
NDX=$T/release/ndx
for b in "$NDX" "$NDND"; do [ -x "$b" ] || { echo "missing $b" >&2; exit 1; }; done

TAG=$$
NS=ndxapp-$TAG
WORK=$(mktemp -d /tmp/ndx-appbench.XXXXXX)
PIDS=()
cleanup() {
  set +e
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  sleep 0.3
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  ip netns del "$NS" 2>/dev/null
  [ -n "${KEEP_WORK:-}" ] && echo "logs kept in $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { printf '== %s\n' "$*" >&2; }
# Background jobs of a script ignore SIGINT: stop them with SIGTERM.
stop() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
wait_file() { for _ in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.1; done; echo "no $1" >&2; exit 1; }

# ndx needs an interface to attach to: a veth pair inside one namespace (no traffic on it).
ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" link add v0 type veth peer name v1
ip -n "$NS" link set v0 up
ip -n "$NS" link set v1 up

cat > "$WORK/ndx.toml" <<EOF
[router]
shards = 1
control_socket = "$WORK/ndx.ctl"
idle = "$IDLE"
[app]
socket = "$WORK/ndx.sock"
[[interface]]
name = "v0"
EOF
cat > "$WORK/fw.yml" <<EOF
core:
  log_level: WARN
faces:
  udp:
    enabled_unicast: false
    enabled_multicast: false
    port_unicast: 6363
    port_multicast: 56363
  tcp:
    enabled: false
  unix:
    enabled: true
    socket_path: $WORK/ndnd.sock
  websocket:
    enabled: false
  http3:
    enabled: false
fw:
  threads: 2
tables:
  content_store:
    capacity: 1024
EOF

# One measurement: serve + gen on socket $1 (prefix $2); prints exchanges/s.
measure() {
  local sock=$1 prefix=$2 out
  ip netns exec "$NS" "$NDX" serve "$prefix" -n "$PAYLOAD" --forwarder "unix://$sock" > "$WORK/serve.log" 2>&1 &
  local serve=$!
  PIDS+=("$serve")
  for _ in $(seq 100); do grep -q answering "$WORK/serve.log" 2>/dev/null && break; sleep 0.1; done
  out=$(ip netns exec "$NS" "$NDX" gen "$prefix" -t "unix://$sock" -w "$WINDOW" -d "$SECS" 2>&1)
  stop "$serve"
  echo "$out" >> "$WORK/gen.log"
  # The generator prints "Data/s: <n> average, per second [...]".
  echo "$out" | sed -n 's/^Data\/s: \([0-9.]*\) average.*/\1/p' | head -1
}

declare -a R_NDND R_NDX RATIO
for r in $(seq "$ROUNDS"); do
  say "round $r: ndnd"
  ip netns exec "$NS" "$NDND" fw run "$WORK/fw.yml" > "$WORK/ndnd.log" 2>&1 &
  FW=$!
  PIDS+=("$FW")
  wait_file "$WORK/ndnd.sock"
  a=$(measure "$WORK/ndnd.sock" "/bench/ndnd$r")
  stop "$FW"
  rm -f "$WORK/ndnd.sock"
  say "round $r: ndx"
  ip netns exec "$NS" "$NDX" run -c "$WORK/ndx.toml" > "$WORK/ndx.log" 2>&1 &
  RT=$!
  PIDS+=("$RT")
  wait_file "$WORK/ndx.sock"
  sleep 0.5
  b=$(measure "$WORK/ndx.sock" "/bench/ndx$r")
  stop "$RT"
  R_NDND+=("${a:-0}")
  R_NDX+=("${b:-0}")
  RATIO+=("$(awk -v a="${a:-0}" -v b="${b:-0}" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')")
  say "round $r: ndnd ${a:-?} /s, ndx ${b:-?} /s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo
echo "| forwarder | exchanges/s per round | median |"
echo "|---|---|---|"
echo "| ndnd fw (Unix face) | ${R_NDND[*]} | $(median "${R_NDND[@]}") |"
echo "| ndx (app socket, idle=$IDLE) | ${R_NDX[*]} | $(median "${R_NDX[@]}") |"
echo "| ratio ndx / ndnd | ${RATIO[*]} | $(median "${RATIO[@]}") |"
echo
echo "window $WINDOW, $PAYLOAD-byte Data, unique names, ${SECS} s per measurement, $(nproc) CPUs"
