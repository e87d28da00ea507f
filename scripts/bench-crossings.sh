#!/usr/bin/env bash
# Kernel crossings per forwarded frame (issue 37 part 2): ndx forwarding unique names on the
# three-namespace veth line of bench-datapath.sh, with its AF_XDP socket settings varied
# between variants run in alternation (ABAB...) on one topology, so their ratios compare
# phases seconds apart. Needs root. Usage:
#
#   sudo scripts/bench-crossings.sh                       # default variants, below
#   sudo VARIANTS="b32:xsk_tx_budget=32 ring:" scripts/bench-crossings.sh
#
# A variant is NAME:KEY=VALUE[,KEY=VALUE...] (or NAME: for none): `[router]` keys of ndx's
# configuration (xsk_tx_budget: frames per sendto, 32 = the kernel's default, 0 = the whole
# TX ring; xsk_busy_poll: socket busy polling with that budget). For each phase: the
# consumer's exchanges per second, system calls of the ndx process by kind per forwarded
# frame (perf's syscall tracepoints), and the sockets' own counters (xsk_tx_kicks,
# xsk_tx_kick_rounds). Knobs: BENCH_ROUNDS (3), BENCH_SECS (5), BENCH_WINDOW (256),
# GEN_CPU (0), FWD_CPU (1), NO_BUILD=1.
set -euo pipefail
. "$(dirname "$0")/topology.sh"
cd "$(dirname "$0")/.."
SECS=${BENCH_SECS:-5}
ROUNDS=${BENCH_ROUNDS:-3}
WINDOW=${BENCH_WINDOW:-256}
GEN_CPU=${GEN_CPU:-0}
FWD_CPU=${FWD_CPU:-1}
VARIANTS=${VARIANTS:-"b32:xsk_tx_budget=32 ring: busy:xsk_busy_poll=64"}
T=${CARGO_TARGET_DIR:-$PWD/target}
[ -n "${NO_BUILD:-}" ] || cargo build --release -p ndx -p ndx-traffic >&2
NDX=$T/release/ndx
TRAFFIC=$T/release/ndx-traffic
command -v perf > /dev/null || { echo "perf is needed"; exit 1; }

TAG=$$
C=ndxcross-c-$TAG R=ndxcross-r-$TAG P=ndxcross-p-$TAG
WORK=$(mktemp -d /tmp/ndx-cross.XXXXXX)
PIDS=()
cleanup() {
  set +e
  for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done
  ndx_teardown $C $R $P
  [ -n "${KEEP_WORK:-}" ] && echo "logs kept in $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
stop() { kill -INT "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

ndx_topology $C $R $P $TAG 1
mac() { ip netns exec "$1" cat "/sys/class/net/$2/address"; }
MC=$(mac $C eth0) MRC=$(mac $R c0) MRP=$(mac $R p0) MP=$(mac $P eth0)
ip -n $R neigh replace 10.77.1.1 lladdr "$MC" dev c0 nud permanent
ip -n $R neigh replace 10.77.2.1 lladdr "$MP" dev p0 nud permanent
ip -n $C neigh replace 10.77.1.2 lladdr "$MRC" dev eth0 nud permanent
ip -n $P neigh replace 10.77.2.2 lladdr "$MRP" dev eth0 nud permanent
config() { # KEY=VALUE,... : the router's configuration with these [router] keys
  cat <<CFG
[router]
$(tr ',' '\n' <<< "$1")
shards = 1
cpus = [$FWD_CPU]
control_socket = "$WORK/ndx.sock"
[app]
socket = "$WORK/nfd.sock"
$(ndx_line_config "/bench")
CFG
}

ip netns exec $P taskset -c "$GEN_CPU" "$TRAFFIC" producer --iface eth0 > /dev/null 2>&1 &
PIDS+=($!)
sleep 0.5
EV=syscalls:sys_enter_sendto,syscalls:sys_enter_recvfrom,syscalls:sys_enter_poll,syscalls:sys_enter_ppoll,syscalls:sys_enter_sched_yield,raw_syscalls:sys_enter
for r in $(seq "$ROUNDS"); do
  for v in $VARIANTS; do
    name=${v%%:*} envs=${v#*:}
    rm -f "$WORK/ndx.sock"
    config "$envs" > "$WORK/ndx.$name.toml"
    ip netns exec $R taskset -c "$FWD_CPU" "$NDX" run -c "$WORK/ndx.$name.toml" \
      > "$WORK/ndx.$name.$r.log" 2>&1 &
    N=$!
    for _ in $(seq 100); do [ -S "$WORK/ndx.sock" ] && break; sleep 0.1; done
    [ -S "$WORK/ndx.sock" ] || { cat "$WORK/ndx.$name.$r.log"; echo "ndx did not start"; exit 1; }
    for _ in $(seq 100); do
      "$NDX" status -s "$WORK/ndx.sock" --json 2>/dev/null | python3 -c \
        'import json,sys; d=json.load(sys.stdin); sys.exit(0 if all(f["resolved"] for f in d["faces"] if f["name"]=="producer") else 1)' \
        && break
      sleep 0.1
    done
    # Warm-up second unmeasured by perf; the counters are read before and after.
    "$NDX" status -s "$WORK/ndx.sock" --json > "$WORK/s0.$name.$r.json"
    # utime and stime (clock ticks) of the whole process, before and after.
    awk '{print $14, $15}' "/proc/$N/stat" > "$WORK/t.$name.$r"
    perf stat -x, -e "$EV" -p "$N" -o "$WORK/perf.$name.$r.txt" -- sleep "$((SECS + 1))" > /dev/null 2>&1 &
    PF=$!
    ip netns exec $C taskset -c "$GEN_CPU" "$TRAFFIC" consumer --iface eth0 --dst-mac "$MRC" \
      --src-ip 10.77.1.1 --dst-ip 10.77.1.2 --window "$WINDOW" --unique \
      --prefix "/bench/$name$r" --seconds "$SECS" > "$WORK/c.$name.$r.json"
    wait "$PF" || true
    awk '{print $14, $15}' "/proc/$N/stat" >> "$WORK/t.$name.$r"
    "$NDX" status -s "$WORK/ndx.sock" --json > "$WORK/s1.$name.$r.json"
    stop "$N"
    printf '%s round %s: %s\n' "$name" "$r" "$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["exchanges_per_s"]))' "$WORK/c.$name.$r.json")" >&2
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$WORK" "$ROUNDS" $VARIANTS <<'PY'
import json, os, statistics, sys
w, rounds, variants = sys.argv[1], int(sys.argv[2]), [v.split(":")[0] for v in sys.argv[3:]]
def perf(p):
    out = {}
    for l in open(p):
        f = l.strip().split(",")
        if len(f) > 2 and f[0].replace(".", "").isdigit():
            out[f[2].split(":")[-1].replace("sys_enter_", "")] = float(f[0])
    return out
rows = {}
for v in variants:
    rs = []
    for r in range(1, rounds + 1):
        c = json.load(open(f"{w}/c.{v}.{r}.json"))
        s0 = json.load(open(f"{w}/s0.{v}.{r}.json"))["counters"]
        s1 = json.load(open(f"{w}/s1.{v}.{r}.json"))["counters"]
        d = {k: s1.get(k, 0) - s0.get(k, 0) for k in ("tx_frames", "rx_frames", "xsk_tx_kicks", "xsk_tx_kick_rounds", "loops")}
        p = perf(f"{w}/perf.{v}.{r}.txt")
        t0, t1 = [list(map(int, l.split())) for l in open(f"{w}/t.{v}.{r}")]
        d["stime_ns"] = (t1[1] - t0[1]) * 1e9 / os.sysconf("SC_CLK_TCK")
        rs.append((c["exchanges_per_s"], d, p))
    rows[v] = rs
base = variants[0]
print(f"{'variant':10} {'exch/s':>9} {'ratio':>6} {'sendto/fr':>9} {'poll/fr':>8} {'recv/fr':>8} {'yield/fr':>8} {'all/fr':>7} {'kicks/round':>11} {'frames/round':>12} {'sys ns/fr':>9}")
for v in variants:
    rs = rows[v]
    med = statistics.median(x[0] for x in rs)
    ratio = statistics.median(x[0] / b[0] for x, b in zip(rs, rows[base]))
    def per(key):
        return statistics.median(x[2].get(key, 0) / max(1, x[1]["tx_frames"]) for x in rs)
    kr = statistics.median(x[1]["xsk_tx_kicks"] / max(1, x[1]["xsk_tx_kick_rounds"]) for x in rs)
    fr = statistics.median(x[1]["tx_frames"] / max(1, x[1]["xsk_tx_kick_rounds"]) for x in rs)
    sy = statistics.median(x[1]["stime_ns"] / max(1, x[1]["tx_frames"]) for x in rs)
    print(f"{v:10} {med:9.0f} {ratio:6.2f} {per('sendto'):9.3f} {per('poll') + per('ppoll'):8.3f} "
          f"{per('recvfrom'):8.3f} {per('sched_yield'):8.3f} {per('sys_enter'):7.3f} {kr:11.2f} {fr:12.1f} {sy:9.0f}")
print("(per frame: per frame the router transmitted in the measured window, tx_frames; "
      "ratio: median over rounds of the variant's rate over the first variant's in the same round; "
      "sys ns/fr: the ndx process's kernel time per frame, i.e. inside sendto: the copy into an "
      "skb, veth and the next hop's receive path, which runs in the sender's context)")
PY
