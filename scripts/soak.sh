#!/usr/bin/env bash
# Soak test of ndx (issue 34, part 6; needs root, not in CI). Usage:
#
#   sudo scripts/soak.sh [DURATION]     # 3600 s by default; e.g. 120, 90s, 10m, 1h
#
# Mixed traffic through one ndx router for DURATION, on throwaway namespaces:
#
#   ns C  eth0 10.77.1.1 ──── c0 ┐                ┌ p0 ──── eth0 10.77.2.1  ns P
#   ndx-traffic consumer         │   ns R: ndx    │         ndx-traffic producer
#   ns K  eth0 10.77.3.1 ──── c1 ┘  (1 shard, L1  └ s0 ──── eth0 10.77.5.1  ns S
#   kernel-UDP clients              + L2 file)              (nobody listens)
#
#   unique    ndx-traffic consumer (AF_XDP, C) --unique /soak/u, window SOAK_WINDOW, answered by
#             the ndx-traffic producer (P)
#   cs-hit    ndx gen --distinct SOAK_HOT /soak/hot (K): the same names again and again, answered
#             from the CS (the producer answers the first round and each name L1 evicted)
#   l2        a SOAK_OBJ_MB MiB object served by `ndx put` through ndx's app socket, fetched
#             again and again by `ndx get` (K); L1 holds SOAK_L1 slots only, so the object's
#             segments come back from the L2 file
#   malformed SOAK_MALFORMED_PPS garbage UDP payloads per second to port 6363 (python3, K)
#   flood     ndx gen /soak/flood (K), window SOAK_FLOOD_WINDOW, InterestLifetime
#             SOAK_FLOOD_LIFETIME_MS: unique names routed to ns S, where nothing answers, so every
#             one holds a PIT entry until it expires
#
# Every SOAK_INTERVAL (10) s: the router's VmRSS/VmHWM (/proc) and `ndx status --json` (every
# counter and occupancy it has, the face count, the app/host block, the XDP counters), written to
# $SOAK_OUT/soak.csv. At the end the sources stop, the flood's PIT entries expire, one last
# sample is taken and the checks run (see benches/results/soak.md for what each means):
#   rss        after the warm-up (SOAK_WARMUP s; default 10% of the run, at least 30 s) every
#              sample within ±SOAK_RSS_TOL (2) % of the post-warm-up mean
#   interests  interests_in = (cs_hits - l2_served) + l2_parked + aggregated + suppressed
#              + (interests_out - l2_fallbacks)
#              + drop_{hop_limit,scope,loop,pit_full,pit_quota,no_route}
#   nacks      nacks_out = drop_loop + drop_pit_full + drop_pit_quota + drop_no_route
#              - nacks_limited (every unicast face here: each of those Interests is Nacked
#              unless its face was past its Nack rate), and nacks_in = 0 (no source sends Nacks)
#   data       data_out - cs_hits - (data_in - drop_unsolicited - drop_scope) <= aggregated
#              (a bound only: no counter of satisfied PIT entries or expired in-records)
#   malformed  drop_malformed + drop_reassembly + rx_unparsed >= garbage packets sent
#   pit        pit_entries back to 0 once the flood's entries expired; no drop_pit_full
#   sources    every source ran to the end and answered traffic did not stall
# It writes $SOAK_OUT/soak.csv, soak.png (gnuplot; `apt-get install gnuplot-nox` if missing),
# soak.gp, the sources' outputs, and the table $SOAK_MD. Exit status 0 only when all pass.
#
# Knobs: SOAK_INTERVAL (10), SOAK_WARMUP, SOAK_RSS_TOL (2), SOAK_WINDOW (128), SOAK_HOT (256),
# SOAK_HOT_WINDOW (32), SOAK_OBJ_MB (32), SOAK_L1 (2048 slots), SOAK_L2_SIZE (512MiB),
# SOAK_MALFORMED_PPS (5), SOAK_FLOOD_WINDOW (2048), SOAK_FLOOD_LIFETIME_MS (500),
# SOAK_OUT (benches/results/soak), SOAK_MD (benches/results/soak.md), GEN_CPU (0),
# FWD_CPU (1), NO_BUILD=1, KEEP_WORK=1 (keep the router's log, config, L2 file and raw samples).
set -euo pipefail
# shellcheck source=scripts/topology.sh
. "$(dirname "$0")/topology.sh"
cd "$(dirname "$0")/.."

arg=${1:-3600}
case $arg in
  *[!0-9smh]* | "" ) echo "usage: $0 [DURATION: seconds, or Ns / Nm / Nh]" >&2; exit 2 ;;
  *h) DUR=$((${arg%h} * 3600)) ;;
  *m) DUR=$((${arg%m} * 60)) ;;
  *s) DUR=${arg%s} ;;
  *) DUR=$arg ;;
esac
[ "$DUR" -ge 30 ] || { echo "DURATION must be at least 30 s" >&2; exit 2; }
INTERVAL=${SOAK_INTERVAL:-10}
WARMUP=${SOAK_WARMUP:-$(( DUR / 10 > 30 ? DUR / 10 : 30 ))}
RSS_TOL=${SOAK_RSS_TOL:-2}
WINDOW=${SOAK_WINDOW:-128}
HOT=${SOAK_HOT:-256}
HOT_WINDOW=${SOAK_HOT_WINDOW:-32}
OBJ_MB=${SOAK_OBJ_MB:-32}
L1=${SOAK_L1:-2048}
L2_SIZE=${SOAK_L2_SIZE:-512MiB}
MALFORMED_PPS=${SOAK_MALFORMED_PPS:-5}
FLOOD_WINDOW=${SOAK_FLOOD_WINDOW:-2048}
FLOOD_LIFETIME_MS=${SOAK_FLOOD_LIFETIME_MS:-500}
OUT=${SOAK_OUT:-benches/results/soak}
MD=${SOAK_MD:-benches/results/soak.md}
GEN_CPU=${GEN_CPU:-0}
FWD_CPU=${FWD_CPU:-1}
T=${CARGO_TARGET_DIR:-$PWD/target}
if [ -z "${NO_BUILD:-}" ]; then
  cargo build --release -p ndx -p ndx-traffic >&2
fi
NDX=$T/release/ndx
TRAFFIC=$T/release/ndx-traffic
for b in "$NDX" "$TRAFFIC"; do [ -x "$b" ] || { echo "missing $b" >&2; exit 1; }; done
command -v python3 > /dev/null || { echo "python3 is needed" >&2; exit 1; }

TAG=$$
C=ndxsoak-c-$TAG R=ndxsoak-r-$TAG P=ndxsoak-p-$TAG K=ndxsoak-k-$TAG S=ndxsoak-s-$TAG
# On disk (not tmpfs): the L2 file wants O_DIRECT.
WORK=$(mktemp -d /var/tmp/ndx-soak.XXXXXX)
mkdir -p "$OUT" "$(dirname "$MD")"
PIDS=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  set +e
  # The L2 reader's current `ndx get` (under `timeout`, which passes TERM on) first: the loop
  # then sleeps a second after the failure, and ndx_teardown kills it.
  if [ -n "${L2PID:-}" ]; then pkill -TERM -P "$L2PID" 2>/dev/null; fi
  ndx_teardown "$C" "$R" "$P" "$K" "$S"
  if [ -n "${KEEP_WORK:-}" ]; then echo "work files kept in $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { printf '== %s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

say "topology: line C-R-P plus K (kernel-UDP clients) and S (flood sink) on R"
ndx_topology "$C" "$R" "$P" "$TAG" 1
# extra_link NS IF-IN-R R-ADDR NS-ADDR: one more veth pair between R and a new namespace NS.
extra_link() {
  local ns=$1 rif=$2 raddr=$3 addr=$4 a=x$2$TAG b=y$2$TAG
  ip netns add "$ns"; ip -n "$ns" link set lo up
  ip link add "$a" type veth peer name "$b"
  ip link set "$a" netns "$R" name "$rif"
  ip link set "$b" netns "$ns" name eth0
  ip -n "$R" addr add "$raddr/24" dev "$rif"
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$R" link set "$rif" up
  ip -n "$ns" link set eth0 up
  ip netns exec "$R" ethtool -K "$rif" tx off > /dev/null 2>&1 || true
  ip netns exec "$ns" ethtool -K eth0 tx off > /dev/null 2>&1 || true
}
extra_link "$K" c1 10.77.3.2 10.77.3.1
extra_link "$S" s0 10.77.5.2 10.77.5.1
mac() { ip netns exec "$1" cat "/sys/class/net/$2/address"; }
# The AF_XDP ends take every frame (ARP too): static neighbours everywhere.
ip -n "$R" neigh replace 10.77.1.1 lladdr "$(mac "$C" eth0)" dev c0 nud permanent
ip -n "$R" neigh replace 10.77.2.1 lladdr "$(mac "$P" eth0)" dev p0 nud permanent
ip -n "$R" neigh replace 10.77.3.1 lladdr "$(mac "$K" eth0)" dev c1 nud permanent
ip -n "$R" neigh replace 10.77.5.1 lladdr "$(mac "$S" eth0)" dev s0 nud permanent
MRC=$(mac "$R" c0)
ip -n "$C" neigh replace 10.77.1.2 lladdr "$MRC" dev eth0 nud permanent
ip -n "$P" neigh replace 10.77.2.2 lladdr "$(mac "$R" p0)" dev eth0 nud permanent
ip -n "$K" neigh replace 10.77.3.2 lladdr "$(mac "$R" c1)" dev eth0 nud permanent
ip -n "$S" neigh replace 10.77.5.2 lladdr "$(mac "$R" s0)" dev eth0 nud permanent

mkdir -p "$WORK/l2"
cat > "$WORK/ndx.toml" <<CFG
[router]
shards = 1
cpus = [$FWD_CPU]
control_socket = "$WORK/ndx.sock"
[app]
socket = "$WORK/nfd.sock"
[cs]
capacity = $L1
[cs.l2]
enabled = true
backend = "files"
dirs = ["$WORK/l2"]
size = "$L2_SIZE"
on_start = "clear"
[[interface]]
name = "c0"
[[interface]]
name = "p0"
[[interface]]
name = "c1"
[[interface]]
name = "s0"
[[face]]
name = "producer"
remote = "udp://10.77.2.1:6363"
[[face]]
name = "void"
remote = "udp://10.77.5.1:6363"
[[route]]
prefix = "/soak/u"
face = "producer"
[[route]]
prefix = "/soak/hot"
face = "producer"
[[route]]
prefix = "/soak/flood"
face = "void"
CFG

say "starting the producer and ndx (shard on CPU $FWD_CPU, sources on CPU $GEN_CPU)"
ip netns exec "$P" taskset -c "$GEN_CPU" "$TRAFFIC" producer --iface eth0 --fixed-signature \
  > "$WORK/producer.json" 2> "$WORK/producer.err" &
PRODUCER=$!; PIDS+=("$PRODUCER")
ip netns exec "$R" taskset -c "$FWD_CPU" "$NDX" run -c "$WORK/ndx.toml" > "$WORK/ndx.log" 2>&1 &
NDXPID=$!; PIDS+=("$NDXPID")
for _ in $(seq 200); do [ -S "$WORK/ndx.sock" ] && break; sleep 0.1; done
[ -S "$WORK/ndx.sock" ] || { cat "$WORK/ndx.log" >&2; echo "ndx did not start" >&2; exit 1; }
[ "$(cat "/proc/$NDXPID/comm")" = ndx ] || { echo "pid $NDXPID is not ndx" >&2; exit 1; }
status() { "$NDX" status -s "$WORK/ndx.sock" --json; }
for _ in $(seq 100); do
  status 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin)
sys.exit(0 if all(f["resolved"] for f in d["faces"] if f["name"] in ("producer", "void")) else 1)' && break
  sleep 0.1
done

say "l2 object: $OBJ_MB MiB through ndx put on the app socket"
head -c "$((OBJ_MB * 1048576))" /dev/urandom > "$WORK/obj.bin"
ip netns exec "$R" "$NDX" put /soak/obj --forwarder "unix://$WORK/nfd.sock" -i "$WORK/obj.bin" \
  --version 1 --freshness-ms 86400000 > "$WORK/put.log" 2>&1 &
PIDS+=($!)
# Until its registration is in the FIB (on a loaded machine 1 s was not always enough: the
# first get of the 2026-11-27 hour met Nack NoRoute).
for _ in $(seq 300); do
  ip netns exec "$R" "$NDX" route list --json -s "$WORK/ndx.sock" 2>/dev/null \
    | grep -q '"/soak/obj"' && break
  sleep 0.1
done

# Every source runs until $END (epoch seconds); the generators take a duration.
START=$(date +%s)
END=$((START + DUR))
# Not a function: `f &` would fork a subshell, and $! (what the cleanup kills) would be it.
KX=(ip netns exec "$K" taskset -c "$GEN_CPU")

say "sources on for $DUR s (warm-up $WARMUP s, a sample every $INTERVAL s)"
ip netns exec "$C" taskset -c "$GEN_CPU" "$TRAFFIC" consumer --iface eth0 --dst-mac "$MRC" \
  --src-ip 10.77.1.1 --dst-ip 10.77.1.2 --window "$WINDOW" --unique --prefix /soak/u \
  --seconds "$DUR" --warmup 0 > "$OUT/unique.json" 2> "$WORK/unique.err" &
UNIQUE=$!; PIDS+=("$UNIQUE")
"${KX[@]}" "$NDX" gen /soak/hot --distinct "$HOT" -w "$HOT_WINDOW" -d "$DUR" \
  -t udp://10.77.3.2:6363 --bind 10.77.3.1:7001 > "$OUT/cs-hit.txt" 2>&1 &
HOTPID=$!; PIDS+=("$HOTPID")
"${KX[@]}" "$NDX" gen /soak/flood -w "$FLOOD_WINDOW" --lifetime-ms "$FLOOD_LIFETIME_MS" -d "$DUR" \
  -t udp://10.77.3.2:6363 --bind 10.77.3.1:7002 > "$OUT/flood.txt" 2>&1 &
FLOODPID=$!; PIDS+=("$FLOODPID")
# shellcheck disable=SC2016 # expanded by the inner bash
# The L2 reader: the whole object again and again, from one port (one face); one line per get.
# It stops at $END, or as soon as this script is gone (a kill of the loop's shell alone would
# leave it running).
"${KX[@]}" bash -c '
  end=$1; ndx=$2; parent=$3; n=0
  while [ "$(date +%s)" -lt "$end" ] && kill -0 "$parent" 2> /dev/null; do
    s=$(date +%s.%N)
    if timeout $((end - $(date +%s) + 30)) "$ndx" get /soak/obj/v=1 -t udp://10.77.3.2:6363 \
         --bind 10.77.3.1:7003 -o /dev/null --no-progress > /dev/null 2>&1; then r=ok; else r=fail; fi
    n=$((n + 1)); echo "$n $s $(date +%s.%N) $r"
    if [ $r = fail ]; then sleep 1; fi
  done' l2reader "$END" "$NDX" "$$" > "$OUT/l2-gets.txt" 2>&1 &
L2PID=$!; PIDS+=("$L2PID")
# Garbage: several kinds of bytes that are not NDN packets, from one port.
"${KX[@]}" python3 - "$END" "$MALFORMED_PPS" "$OUT/malformed.txt" <<'PY' &
import os, random, socket, sys, time
end, pps, out = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.77.3.1", 7004))
rnd = random.Random(34)
kinds = [
    lambda: bytes([0x05, 0xFD, 0xFF, 0xFF]) + os.urandom(20),           # Interest, length past the end
    lambda: bytes([0x06, 0x10]) + os.urandom(4),                         # Data, truncated
    lambda: bytes([0x05, 0x04, 0x07, 0x02, 0x08, 0x05]),                 # Name component overruns
    lambda: bytes([0x64, 0x08, 0x50, 0x06]) + b"\x00" * 2,               # LpPacket, Fragment overruns
    lambda: bytes([0x64, 0x06, 0x52, 0x01, 0x07, 0x51, 0x01, 0x09]),     # LpPacket, FragIndex >= FragCount
    lambda: bytes([0x05, 0x02, 0x0A, 0x00]),                             # Interest without a Name
    lambda: b"\xff" * 9,                                                  # unknown type, bad length
    lambda: bytes([0x80 | rnd.randrange(0x40)]) + os.urandom(rnd.randrange(0, 200)),  # noise
]
n = 0
next_t = time.time()
parent = os.getppid()
while time.time() < end and os.getppid() == parent:
    s.sendto(kinds[n % len(kinds)](), ("10.77.3.2", 6363))
    n += 1
    next_t += 1 / pps
    time.sleep(max(0.0, next_t - time.time()))
    if n % 16 == 0:
        open(out, "w").write(f"{n}\n")
open(out, "w").write(f"{n}\n")
PY
PIDS+=($!)

# The sampler: one JSON line per sample (t, VmRSS and VmHWM in kB, the status answer).
sample() { # PHASE
  local now rss hwm st
  now=$(date +%s.%N)
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$NDXPID/status")
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$NDXPID/status")
  st=$(status | tr -d '\n') || st='{}'
  printf '{"t":%s,"phase":"%s","rss_kb":%s,"hwm_kb":%s,"status":%s}\n' \
    "$(awk -v a="$now" -v b="$START" 'BEGIN { printf "%.2f", a - b }')" "$1" "$rss" "$hwm" "$st" \
    >> "$WORK/samples.jsonl"
}
sample start
next=$((START + INTERVAL))
while [ "$(date +%s)" -lt "$END" ]; do
  sleep "$(awk -v a="$next" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", (a > b ? a - b : 0) }')"
  kill -0 "$NDXPID" 2>/dev/null || { echo "ndx exited" >&2; tail -20 "$WORK/ndx.log" >&2; exit 1; }
  sample run
  n=$(wc -l < "$WORK/samples.jsonl")
  if (( n % 6 == 0 )); then say "$((n * INTERVAL)) s of $DUR"; fi
  next=$((next + INTERVAL))
done

say "sources stopping; waiting for the flood's PIT entries to expire"
for p in "$UNIQUE" "$HOTPID" "$FLOODPID" "$L2PID"; do wait "$p" || true; done
sleep "$(( FLOOD_LIFETIME_MS / 1000 + 3 ))"
sample end
kill -INT "$PRODUCER" 2>/dev/null || true; wait "$PRODUCER" 2>/dev/null || true
cp "$WORK/producer.json" "$OUT/producer.json" 2>/dev/null || true
kill -INT "$NDXPID" 2>/dev/null || true; wait "$NDXPID" 2>/dev/null || true
cp "$WORK/ndx.log" "$OUT/ndx.log"

say "analysis"
set +e
python3 - "$WORK/samples.jsonl" "$OUT" "$MD" "$DUR" "$WARMUP" "$RSS_TOL" "$INTERVAL" \
  "$WINDOW $HOT $HOT_WINDOW $OBJ_MB $L1 $L2_SIZE $MALFORMED_PPS $FLOOD_WINDOW $FLOOD_LIFETIME_MS" <<'PY'
import csv, json, os, re, statistics, subprocess, sys, time
src, out, md, dur, warm, tol, interval, knobs = sys.argv[1:9]
dur, warm, tol, interval = int(dur), float(warm), float(tol), int(interval)
(window, hot, hot_window, obj_mb, l1, l2_size, mal_pps, flood_window, flood_life) = knobs.split()
samples = [json.loads(l) for l in open(src) if l.strip()]
C = lambda s: s["status"].get("counters", {})
host = lambda s: s["status"].get("host", {}) or {}
xdp = lambda s: s["status"].get("xdp", {}) or {}

# The CSV: t, rss, hwm, faces, every counter, the host block, the XDP counters.
cnames = list(C(samples[-1]).keys())
hnames = [k for k, v in host(samples[-1]).items() if isinstance(v, (int, float))]
xnames = list(xdp(samples[-1]).keys())
with open(os.path.join(out, "soak.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["t_s", "phase", "rss_kb", "hwm_kb", "faces"] + cnames +
               ["host_" + k for k in hnames] + ["xdp_" + k for k in xnames])
    for s in samples:
        w.writerow([f"{s['t']:.1f}", s["phase"], s["rss_kb"], s["hwm_kb"],
                    len(s["status"].get("faces", []))] +
                   [C(s).get(k, "") for k in cnames] + [host(s).get(k, "") for k in hnames] +
                   [xdp(s).get(k, "") for k in xnames])

checks = []  # (name, pass, detail)
def check(name, ok, detail):
    checks.append((name, bool(ok), detail))

# RSS: flat within ±tol % of the post-warm-up mean.
run = [s for s in samples if s["phase"] != "end"]
post = [s for s in run if s["t"] >= warm]
rss = [s["rss_kb"] for s in post]
if len(rss) >= 2:
    mean = statistics.mean(rss)
    dev = max(abs(r - mean) / mean * 100 for r in rss)
    ts = [s["t"] for s in post]
    tm = statistics.mean(ts)
    slope = sum((t - tm) * (r - mean) for t, r in zip(ts, rss)) / max(1e-9, sum((t - tm) ** 2 for t in ts))
    check("rss", dev <= tol,
          f"{len(rss)} samples after {warm:.0f} s: mean {mean/1024:.1f} MiB, max deviation {dev:.2f} % "
          f"(limit {tol} %), trend {slope*3600/1024:+.1f} MiB/h")
else:
    check("rss", False, f"only {len(rss)} samples after the warm-up")

def identities(c):
    g = lambda k: c.get(k, 0)
    i_rhs = ((g("cs_hits") - g("l2_served")) + g("l2_parked") + g("aggregated") + g("suppressed")
             + (g("interests_out") - g("l2_fallbacks")) + g("drop_hop_limit") + g("drop_scope")
             + g("drop_loop") + g("drop_pit_full") + g("drop_pit_quota") + g("drop_no_route"))
    # Every one of those Interests is Nacked, unless its face was past its Nack rate.
    n_rhs = (g("drop_loop") + g("drop_pit_full") + g("drop_pit_quota") + g("drop_no_route")
             - g("nacks_limited"))
    # data_late: Data that satisfied entries whose downstreams had all stopped waiting.
    r = ((g("data_out") - g("cs_hits"))
         - (g("data_in") - g("drop_unsolicited") - g("drop_scope") - g("data_late")))
    return g("interests_in") - i_rhs, g("nacks_out") - n_rhs, r
end = samples[-1]
ce = C(end)
di, dn, dr = identities(ce)
check("interests", di == 0,
      f"interests_in {ce.get('interests_in')} - sum of its outcomes = {di} (final, quiescent); "
      f"largest |residual| while running {max(abs(identities(C(s))[0]) for s in run)}")
check("nacks", dn == 0 and ce.get("nacks_in", 0) == 0,
      f"nacks_out {ce.get('nacks_out')} - (drop_loop + drop_pit_full + drop_pit_quota + drop_no_route - nacks_limited) = {dn}; "
      f"nacks_in {ce.get('nacks_in')}")
# Exact both ways with `data_late` (a router that counts it): 0 <= residual <= aggregated.
has_late = "data_late" in ce
check("data", dr <= ce.get("aggregated", 0) and (dr >= 0 or not has_late),
      f"(data_out - cs_hits) - (data_in - drop_unsolicited - drop_scope - data_late) = {dr}, "
      f"between 0 and aggregated = {ce.get('aggregated')}"
      + ("" if has_late else " (this router has no data_late: upper bound only)")
      + (f" ({-dr} or more Data found only expired in-records)" if dr < 0 else ""))
try:
    sent = int(open(os.path.join(out, "malformed.txt")).read().split()[0])
except Exception:
    sent = 0
bad = ce.get("drop_malformed", 0) + ce.get("drop_reassembly", 0) + ce.get("rx_unparsed", 0)
# Exact when no frame was lost at the AF_XDP sockets; otherwise the garbage lost there is not
# counted anywhere (the kernel's ring-full counter covers every kind of frame).
lost = ce.get("xsk_rx_ring_full", 0) + ce.get("xsk_rx_dropped", 0)
check("malformed", sent > 0 and (bad == sent if lost == 0 else sent - lost <= bad <= sent),
      f"{sent} garbage packets sent; drop_malformed {ce.get('drop_malformed')} + drop_reassembly "
      f"{ce.get('drop_reassembly')} + rx_unparsed {ce.get('rx_unparsed')} = {bad}"
      + (f" (exact: no frame lost at the sockets)" if lost == 0 else
         f" ({lost} frames of all kinds lost at the AF_XDP sockets: bounded only)"))
pit_max = max(C(s).get("pit_entries", 0) for s in samples)
check("pit", ce.get("pit_entries", 0) == 0 and ce.get("drop_pit_full", 0) == 0,
      f"pit_entries at the end {ce.get('pit_entries')} (max {pit_max} while flooding); "
      f"drop_pit_full {ce.get('drop_pit_full')}")

# Rates per traffic class.
def jload(p):
    try:
        return json.loads(open(os.path.join(out, p)).read().strip().splitlines()[-1])
    except Exception:
        return {}
def gen(p):
    try:
        t = open(os.path.join(out, p)).read()
        m = re.search(r"Sent (\d+) Interests in ([\d.]+) s: (\d+) Data \((\d+) Interests satisfied\), (\d+) Nacks, (\d+) timeouts", t)
        return dict(zip(["sent", "secs", "data", "satisfied", "nacks", "timeouts"],
                        [float(x) for x in m.groups()])) if m else {}
    except Exception:
        return {}
u, h, fl = jload("unique.json"), gen("cs-hit.txt"), gen("flood.txt")
gets = []
try:
    for line in open(os.path.join(out, "l2-gets.txt")):
        p = line.split()
        if len(p) == 4:
            gets.append((float(p[1]), float(p[2]), p[3]))
except Exception:
    pass
ok_gets = [g for g in gets if g[2] == "ok"]
rd = lambda k: ce.get(k, 0) / dur
check("sources", u.get("satisfied", 0) > 0 and h.get("satisfied", 0) > 0 and fl.get("sent", 0) > 0
      and len(ok_gets) >= 1 and len(ok_gets) == len(gets),
      f"unique {u.get('satisfied', 0):.0f} satisfied, cs-hit {h.get('satisfied', 0):.0f}, flood "
      f"{fl.get('sent', 0):.0f} sent, l2 gets {len(ok_gets)}/{len(gets)} complete")
# Answered traffic did not stall: data_out grew in every interval after the warm-up.
stalls = [s["t"] for a, s in zip(run, run[1:]) if s["t"] >= warm and C(s).get("data_out", 0) <= C(a).get("data_out", 0)]
check("progress", not stalls, f"intervals without new Data out after the warm-up: {len(stalls)}"
      + (" (ending at t = " + ", ".join(f"{t:.0f}" for t in stalls) + " s; see rx_frames in the CSV)" if stalls else ""))

first, last = run[0], run[-1]
def fmt(x): return f"{x:,.0f}"
rows = [
    ("unique names (ndx-traffic, window %s)" % window,
     f"{fmt(u.get('exchanges_per_s', 0))} Data/s; {fmt(u.get('lost', 0))} lost, {fmt(u.get('nacks', 0))} Nacks"),
    (f"CS hits (ndx gen, {hot} names, window {hot_window})",
     f"{fmt(h.get('satisfied', 0) / max(1, h.get('secs', 1)))} Data/s; {fmt(h.get('timeouts', 0))} timeouts"),
    (f"L2 reads (ndx get of a {obj_mb} MiB object, L1 {l1} slots)",
     f"{len(ok_gets)} gets ({(len(ok_gets) * int(obj_mb) * 8 / max(1, dur)):.1f} Mbit/s); router: "
     f"{fmt(rd('l2_served'))} parked Interests served/s, {fmt(rd('l2_reads_ok'))} batch reads/s, "
     f"{rd('l2_read_bytes') * 8 / 1e6:.1f} Mbit/s read"),
    (f"malformed (python3, {mal_pps}/s)", f"{sent} sent ({sent / max(1, dur):.1f}/s)"),
    (f"flood (ndx gen, window {flood_window}, lifetime {flood_life} ms, no answer)",
     f"{fmt(fl.get('sent', 0) / max(1, fl.get('secs', 1)))} Interests/s; PIT up to {fmt(pit_max)} entries"),
    ("router, all classes", f"{fmt(rd('interests_in'))} Interests in/s, {fmt(rd('data_out'))} Data out/s, "
     f"{fmt(rd('cs_hits'))} CS hits/s, {fmt(rd('rx_frames'))} frames in/s"),
]
allrss = [s["rss_kb"] for s in run]
occ = ["pit_entries", "cs_entries", "cs_frames_held", "l2_indexed", "l2_write_backlog"]
with open(md, "w") as f:
    f.write(f"# Soak run ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n\n")
    f.write(f"`scripts/soak.sh {dur}`: {dur} s of mixed traffic, a sample every {interval} s, "
            f"warm-up {warm:.0f} s; one ndx shard (2-CPU VM; the sources share the other CPU).\n\n")
    f.write("| traffic class | rate |\n|---|---|\n")
    for a, b in rows:
        f.write(f"| {a} | {b} |\n")
    f.write(f"\n| memory | value |\n|---|---|\n")
    f.write(f"| RSS at start | {first['rss_kb']/1024:.1f} MiB |\n")
    f.write(f"| RSS after the warm-up (first sample) | {(post[0]['rss_kb'] if post else 0)/1024:.1f} MiB |\n")
    f.write(f"| RSS at end | {last['rss_kb']/1024:.1f} MiB |\n")
    f.write(f"| RSS max | {max(allrss)/1024:.1f} MiB (VmHWM {end['hwm_kb']/1024:.1f} MiB) |\n")
    for k in occ:
        vals = [C(s).get(k, 0) for s in post] or [0]
        f.write(f"| {k} after the warm-up (min / max) | {fmt(min(vals))} / {fmt(max(vals))} |\n")
    f.write(f"| faces (min / max) | {min(len(s['status'].get('faces', [])) for s in run)} / "
            f"{max(len(s['status'].get('faces', [])) for s in run)} |\n")
    f.write(f"\n| check | result | detail |\n|---|---|---|\n")
    for n, ok, d in checks:
        f.write(f"| {n} | {'**pass**' if ok else '**FAIL**'} | {d} |\n")
    nz = {k: v for k, v in ce.items() if v and (k.startswith("drop_") or k in (
        "tx_ring_full", "exchange_full", "unresolved_face", "xsk_rx_dropped", "xsk_rx_ring_full",
        "xsk_fill_starved", "host_queue_full", "l2_read_failures", "l2_busy", "l2_fallbacks",
        "l2_writes_dropped", "l2_corrupt", "l2_io_errors", "reassembly_timeouts", "reassembly_errors"))}
    f.write(f"\nNon-zero drop and trouble counters at the end: "
            + (", ".join(f"`{k}` {v:,}" for k, v in nz.items()) or "none") + ".\n")
    f.write(f"\nSamples: [`soak/soak.csv`](soak/soak.csv); plot: ![soak](soak/soak.png)\n")
    f.write("""
## What the checks are

- **rss**: VmRSS of `ndx run` after the warm-up, every sample within the limit of the
  post-warm-up mean. Its tables are allocated at start-up, so growth means a leak.
- **interests** (exact): `interests_in = (cs_hits - l2_served) + l2_parked + aggregated +
  suppressed + (interests_out - l2_fallbacks) + drop_hop_limit + drop_scope + drop_loop +
  drop_pit_full + drop_pit_quota + drop_no_route`. `cs_hits` also counts parked Interests answered after an L2
  read (once each, with `l2_served`), and a parked Interest that falls back upstream counts
  in `interests_out` too (with `l2_fallbacks`). Holds while each Interest goes to one next hop
  (best-route, one face per route, as here); checked on the final, quiescent sample, and its
  largest residual over the running samples is shown (a sample may catch a publication half
  way).
- **nacks** (exact here): every Interest dropped for a loop, a full PIT, its face's PIT share
  or no route is Nacked on these point-to-point faces, unless the face was past its Nack rate
  (`nacks_limited`); no source sends Nacks.
- **data**: `data_out - cs_hits - (data_in - drop_unsolicited - drop_scope - data_late)` is
  the extra downstreams of aggregated Interests, so it lies between 0 and `aggregated`.
  `data_late` counts the Data that satisfied a PIT entry whose in-records had all expired
  (cached, sent nowhere); a router without that counter gets the upper bound only, and a
  negative value there is those Data.
- **malformed**: garbage reaches the shard (one shard: the XDP program redirects every UDP
  datagram to port 6363) and is counted in `drop_malformed`, `drop_reassembly` or
  `rx_unparsed`; exact when no frame was lost at the AF_XDP rings, otherwise bounded by
  `xsk_rx_ring_full` (a shard-wide count of every kind of frame).

## What the counters cannot tell

- Data: no count of PIT entries satisfied or of in-records that expired, so the Data identity
  is a bound; `cs_insertions` also counts L2 batches loaded back into L1, and nothing counts a
  Data not cached (too big, refused by admission), so "in = out + dropped + cached" cannot be
  closed for Data. The PIT lacks an expiry counter (inserted = satisfied + expired + Nacked +
  occupancy would need it).
- Frames: no count of NDNLPv2 fragments received or packets reassembled, so `rx_frames`
  cannot be reconciled with the packet counters.
- Losses: `xsk_rx_ring_full` is per shard, not per interface or face, so which source overran
  the ring is unknown; there are no per-face counters at all.
- Occupancies not exposed: the dead-nonce list, the reassemblers' pending sets, the Interests
  parked on L2 reads right now and the reads in flight (only cumulative `l2_parked`,
  `l2_served`, `l2_fallbacks`), the exchange rings, free UMEM frames (only `cs_frames_held`).
""")

# The plot (gnuplot): RSS, then the occupancies, over time.
cols = ["t_s", "rss_kb", "faces"] + cnames
idx = {n: i + 1 for i, n in enumerate(["t_s", "phase", "rss_kb", "hwm_kb", "faces"] + cnames)}
gp = os.path.join(out, "soak.gp")
with open(gp, "w") as f:
    f.write(f"""set terminal pngcairo size 1100,900 noenhanced
set output '{os.path.join(out, "soak.png")}'
set datafile separator ','
set key autotitle columnhead outside right
set multiplot layout 3,1 title 'ndx soak, {dur} s'
set xlabel 'time (s)'
set grid
set arrow from {warm},graph 0 to {warm},graph 1 nohead dt 2
set ylabel 'MiB'
plot '{os.path.join(out, "soak.csv")}' using {idx['t_s']}:(${idx['rss_kb']}/1024) with linespoints title 'VmRSS', \\
     '' using {idx['t_s']}:(${idx['hwm_kb']}/1024) with lines dt 3 title 'VmHWM'
set ylabel 'entries'
plot """ + ", \\\n     ".join(
        f"'{os.path.join(out, 'soak.csv') if i == 0 else ''}' using {idx['t_s']}:{idx[k]} with lines title '{k}'"
        for i, k in enumerate(["pit_entries", "cs_entries", "cs_frames_held", "l2_indexed"]) if k in idx) + f"""
set ylabel 'count'
plot '{os.path.join(out, "soak.csv")}' using {idx['t_s']}:{idx['faces']} with lines title 'faces', \\
     '' using {idx['t_s']}:{idx['l2_write_backlog']} with lines title 'l2_write_backlog'
unset multiplot
""")
try:
    subprocess.run(["gnuplot", gp], check=True)
except Exception as e:
    print(f"no plot ({e}); apt-get install gnuplot-nox, then gnuplot {gp}", file=sys.stderr)
print(open(md).read())
sys.exit(0 if all(ok for _, ok, _ in checks) else 1)
PY
rc=$?
say "table: $MD; samples, plot and logs: $OUT"
exit $rc
