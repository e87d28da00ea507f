#!/usr/bin/env bash
# Fairness under Interest flooding (issue 34, part 1): two legitimate consumers keep fetching
# while a third face floods ndx with unique-name Interests (needs root). Usage:
#
#   sudo scripts/bench-fairness.sh            # builds ndx and ndx-traffic (release) first
#
#   c1 ns eth0 10.78.1.2 ──veth── c1 ┐                 ┌ p0 ──veth── eth0 10.78.4.2  p ns: producer (/bench)
#   c2 ns eth0 10.78.2.2 ──veth── c2 ┼ router ns (ndx) ┤
#   a ns  eth0 10.78.3.2 ──veth── a0 ┘  10.78.N.1      └ d0 ──veth── eth0 10.78.5.2  d ns: "dark" (/dark),
#         eth1 10.78.9.2 ──veth── eth0 10.78.9.1  s ns: sink                        XDP_DROP: never answers
#
# The attacker (a ns) runs `ndx-traffic flood` on eth0 towards the router, or on eth1 towards
# the sink, whose end drops every frame in XDP (phase S: what the flood's own CPU use costs the
# consumers, with no router involved). Phases, each measured for BENCH_SECS after BENCH_WARMUP:
#   0   baseline: consumers c1, c2 (`consumer --unique`, window BENCH_WINDOW, prefixes /bench/c1,
#       /bench/c2), no attack
#   S   + flood to the sink (not the router): the same generator, same frames as a
#   a   + flood of /dark/<n>, lifetime 4 s (routed to the dark face, never answered)
#   b   + flood of /nowhere/<n> (no route)
#   c   + flood of /dark/<n> from 100,000 sources: FLOOD_C_PORTS (50,000) ports x FLOOD_C_ADDRS
#       (2) addresses (a UDP port has 16 bits), i.e. new on-demand faces
#   I   after the rounds, interleaved: for S, a, b, c, BENCH_SLICES (6) pairs of
#       BENCH_SLICE_SECS (2) s slices, the flood frozen with SIGSTOP in one slice of each pair
#       and running in the other (ABBA order): the ratios to quote on a shared, noisy host
# After an attack phase the script waits BENCH_COOLDOWN (5) s, so the flood's PIT entries (4 s)
# expire before the next phase. The whole sequence runs BENCH_ROUNDS (3) times against one ndx
# process; ratios are taken within a round (a phase over that round's baseline) and the table
# gives their median. Pinning (2-CPU VM, as bench-datapath.sh): every generator (c1, c2, the
# attacker, the producer) on CPU GEN_CPU (0), ndx's shard on FWD_CPU (1).
# Knobs: BENCH_SECS (10), BENCH_ROUNDS (3), BENCH_WARMUP (1), BENCH_COOLDOWN (5),
# BENCH_WINDOW (256), BENCH_PHASES (0SabcI), BENCH_I_KINDS (Sabc), BENCH_SLICES (6),
# BENCH_SLICE_SECS (2), FLOOD_LIFETIME_MS (4000), FLOOD_C_PORTS (50000),
# FLOOD_C_ADDRS (2), FLOOD_SCHED (idle: the flood runs SCHED_IDLE); the router's [fairness],
# [udp] and [tables] keys as PIT_SHARES (true), PIT_RESERVE (1), PIT_MIN (64), NACK_RATE (10000),
# NACK_BURST (1000), ON_DEMAND_MAX (4096), ON_DEMAND_PER_ADDRESS (16), PIT_CAPACITY (65536);
# GEN_CPU, FWD_CPU, NO_BUILD=1 (use the binaries in $CARGO_TARGET_DIR or target/), KEEP_WORK=1,
# BENCH_OUT (benches/results/fairness.md; "-" prints the table only), BENCH_REPORT=DIR (only
# render the tables of a run kept with KEEP_WORK=1 in DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${BENCH_SECS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
WARMUP=${BENCH_WARMUP:-1}
COOL=${BENCH_COOLDOWN:-5}
WINDOW=${BENCH_WINDOW:-256}
PHASES=${BENCH_PHASES:-0SabcI}
IKINDS=${BENCH_I_KINDS:-Sabc}
SLICES=${BENCH_SLICES:-6}
SLICE_SECS=${BENCH_SLICE_SECS:-2}
LIFETIME=${FLOOD_LIFETIME_MS:-4000}
C_PORTS=${FLOOD_C_PORTS:-50000}
C_ADDRS=${FLOOD_C_ADDRS:-2}
GEN_CPU=${GEN_CPU:-0}
FWD_CPU=${FWD_CPU:-1}
OUT=${BENCH_OUT:-benches/results/fairness.md}
# report: renders the tables from $WORK into $OUT (BENCH_REPORT=DIR re-renders a run kept with
# KEEP_WORK=1; give it the same knobs).
report() {
  local CMD
CMD="BENCH_ROUNDS=$ROUNDS BENCH_SECS=$SECS BENCH_PHASES=$PHASES BENCH_SLICES=$SLICES BENCH_SLICE_SECS=$SLICE_SECS${FLOOD_SCHED:+ FLOOD_SCHED=$FLOOD_SCHED} sudo scripts/bench-fairness.sh"
GEN_CPU=$GEN_CPU FWD_CPU=$FWD_CPU python3 - "$WORK" "$ROUNDS" "$PHASES" "$OUT" "$CMD" "$SECS" "$WARMUP" "$LIFETIME" "$C_PORTS" "$C_ADDRS" \
  "$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- crates 2>/dev/null || echo '+dirty')" <<'PY'
import json, os, statistics, sys
w, rounds, phases, out, cmd, secs, warm, life, cports, caddrs, rev = sys.argv[1:]
rounds = int(rounds)
def j(n):
    try:
        with open(os.path.join(w, n)) as f:
            return json.loads(f.read().strip().splitlines()[-1])
    except Exception:
        return None
def rss(n):
    try:
        return int(open(os.path.join(w, f"rss.{n}")).read()) / 1024
    except Exception:
        return None
gen_cpu, fwd_cpu = os.environ.get("GEN_CPU", "0"), os.environ.get("FWD_CPU", "1")
def cpustat(n):
    # Share of each CPU's time in softirq (veth runs the receiver's XDP there) and not idle.
    try:
        a = {l.split()[0]: list(map(int, l.split()[1:])) for l in open(os.path.join(w, f"stat.{n}.start"))}
        b = {l.split()[0]: list(map(int, l.split()[1:])) for l in open(os.path.join(w, f"stat.{n}.end"))}
    except Exception:
        return {}
    out = {}
    for cpu in a:
        d = [y - x for x, y in zip(a[cpu], b[cpu])]
        tot = sum(d[:8]) or 1  # user nice system idle iowait irq softirq steal
        out[cpu] = {"softirq": d[6] / tot, "busy": 1 - (d[3] + d[4]) / tot}
    return out
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None
def attacker(face):
    return face["remote"].startswith("udp://10.78.3.") or face["remote"].startswith("10.78.3.")
def legit(face):
    return any(face["remote"].startswith(p) for p in ("udp://10.78.1.", "udp://10.78.2.", "10.78.1.", "10.78.2."))
def faces_sum(st, pick, key):
    return sum(f.get(key, 0) for f in st["faces"] if pick(f)) if st else 0
names = {"0": "baseline: c1 + c2, no attack",
         "S": "+ flood to a sink (not the router)",
         "a": "+ flood /dark (routed, unanswered, 4 s)",
         "b": "+ flood /nowhere (no route)",
         "c": f"+ flood /dark from {int(cports) * int(caddrs):,} sources"}
kinds = [k for k in "0Sabc" if k in phases and os.path.exists(os.path.join(w, f"c1.{k}.1.json"))]
rows = {}
per_round = []
for k in kinds:
    r_ = {x: [] for x in ("c1", "c2", "c1r", "c2r", "c1rS", "c2rS", "pps", "nacks", "adrops", "aquota",
                          "alimited", "ain", "ldrops", "refused", "odfaces", "pit", "apit", "rss0", "rssm",
                          "rss1", "rssc", "fdata", "ccpu", "fcpu", "si0", "busy0", "si1")}
    for r in range(1, rounds + 1):
        n = f"{k}.{r}"
        c1, c2 = j(f"c1.{n}.json"), j(f"c2.{n}.json")
        b1, b2 = j(f"c1.0.{r}.json"), j(f"c2.0.{r}.json")
        s1, s2 = j(f"c1.S.{r}.json"), j(f"c2.S.{r}.json")
        e = lambda x: x["exchanges_per_s"] if x else None
        r_["c1"].append(e(c1)); r_["c2"].append(e(c2))
        r_["c1r"].append(e(c1) / e(b1) if e(c1) and e(b1) else None)
        r_["c2r"].append(e(c2) / e(b2) if e(c2) and e(b2) else None)
        r_["c1rS"].append(e(c1) / e(s1) if e(c1) and e(s1) and k in "abc" else None)
        r_["c2rS"].append(e(c2) / e(s2) if e(c2) and e(s2) and k in "abc" else None)
        fl = j(f"flood.{n}.json")
        r_["ccpu"].append((c1["cpu_s"] / c1["seconds"] + c2["cpu_s"] / c2["seconds"]) if c1 and c2 and "cpu_s" in c1 else None)
        r_["fcpu"].append(fl["cpu_s"] / fl["seconds"] if fl and "cpu_s" in fl else None)
        st = cpustat(n)
        r_["si0"].append(st.get(f"cpu{gen_cpu}", {}).get("softirq"))
        r_["busy0"].append(st.get(f"cpu{gen_cpu}", {}).get("busy"))
        r_["si1"].append(st.get(f"cpu{fwd_cpu}", {}).get("softirq"))
        r_["pps"].append(fl["pps"] if fl else None)
        r_["nacks"].append((fl["nack_congestion"] + fl["nack_no_route"] + fl["nack_duplicate"] + fl["nack_other"]) / fl["seconds"] if fl else None)
        r_["fdata"].append(fl["data"] if fl else None)
        s0, sm, s1_ = j(f"status.{n}.before.json"), j(f"status.{n}.mid.json"), j(f"status.{n}.after.json")
        if s0 and s1_:
            d = lambda key: faces_sum(s1_, attacker, key) - faces_sum(s0, attacker, key)
            el = (fl["seconds"] if fl else float(secs)) + float(warm) + 0.5
            r_["ain"].append(d("interests_in"))
            r_["adrops"].append(d("drops"))
            r_["aquota"].append(d("drop_pit_quota"))
            r_["alimited"].append(d("nacks_limited"))
            r_["ldrops"].append(faces_sum(s1_, legit, "drops") - faces_sum(s0, legit, "drops"))
            r_["refused"].append(s1_["counters"].get("faces_refused", 0) - s0["counters"].get("faces_refused", 0))
        if sm:
            r_["pit"].append(sm["counters"].get("pit_entries"))
            r_["apit"].append(faces_sum(sm, attacker, "pit_entries"))
            r_["odfaces"].append(sm["on_demand"]["faces"])
        r_["rss0"].append(rss(f"{n}.before")); r_["rssm"].append(rss(f"{n}.mid"))
        r_["rss1"].append(rss(f"{n}.after")); r_["rssc"].append(rss(f"{n}.cooled"))
    rows[k] = r_
fmt = lambda x, f="{:.0f}": "–" if x is None else f.format(x)
L = []
L.append(f"Generated by `{cmd}` ({rounds} rounds, {secs} s measured per phase after {warm} s "
         f"warm-up; flood lifetime {life} ms; code {rev}).\n")
L.append("Median over rounds; a ratio is taken within each round (phase / that round's baseline), "
         "then its median. *vs S*: the phase's rate over the sink reference's (phase S) rate of "
         "the same round: what the router adds on top of the flood's own CPU use. *CPU*: CPU seconds "
         "per second the two consumers (together) and the flood used on their shared CPU in the "
         "measured period (from /proc/self/stat: process time; veth runs the receiver's XDP in "
         "softirq, not charged to the sender); *softirq*: the share of CPU 0 (generators) and "
         "CPU 1 (ndx) spent in softirq, *busy*: CPU 0's share not idle (/proc/stat, measured period "
         "less its last second).\n")
L.append("| phase | c1 exch/s | c1 vs baseline | c2 exch/s | c2 vs baseline | c1, c2 vs S | CPU c1+c2 / flood | CPU 0 busy, softirq / CPU 1 softirq | attacker sent pps | Nacks back /s | PIT entries (attacker's) | attacker face drops / drop_pit_quota / nacks_limited | legit face drops | faces_refused | on-demand faces |")
L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for k in kinds:
    r_ = rows[k]
    vs = (f"{fmt(med(r_['c1rS']), '{:.2f}')}, {fmt(med(r_['c2rS']), '{:.2f}')}" if k in "abc" else "–")
    att = k in "abc"
    L.append(f"| {k} {names[k]} | {fmt(med(r_['c1']))} | {fmt(med(r_['c1r']), '{:.2f}')} | {fmt(med(r_['c2']))} | "
             f"{fmt(med(r_['c2r']), '{:.2f}')} | {vs} | {fmt(med(r_['ccpu']), '{:.2f}')} / {fmt(med(r_['fcpu']), '{:.2f}')} | {fmt(med(r_['busy0']), '{:.0%}')}, {fmt(med(r_['si0']), '{:.0%}')} / {fmt(med(r_['si1']), '{:.0%}')} | {fmt(med(r_['pps']))} | {fmt(med(r_['nacks']))} | "
             f"{fmt(med(r_['pit']))} ({fmt(med(r_['apit']))}) | "
             + (f"{fmt(med(r_['adrops']))} / {fmt(med(r_['aquota']))} / {fmt(med(r_['alimited']))}" if att else "–")
             + f" | {fmt(med(r_['ldrops']))} | {fmt(med(r_['refused']))} | {fmt(med(r_['odfaces']))} |")
L.append("")
L.append("Per round (c1 / c2 exchanges/s, attacker pps; attacker face counters are deltas over the phase, "
         "PIT entries and on-demand faces a snapshot 1 s before the phase ends):\n")
L.append("| phase | round | c1 | c2 | c1, c2 vs baseline | attacker pps | attacker Interests in | drops | drop_pit_quota | nacks_limited | faces_refused | PIT (attacker's) | RSS MiB before → mid → after (→ 5 s later) |")
L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for k in kinds:
    r_ = rows[k]
    for i in range(rounds):
        g = lambda key: r_[key][i] if i < len(r_[key]) else None
        L.append(f"| {k} | {i + 1} | {fmt(g('c1'))} | {fmt(g('c2'))} | {fmt(g('c1r'), '{:.2f}')}, {fmt(g('c2r'), '{:.2f}')} | "
                 f"{fmt(g('pps'))} | {fmt(g('ain'))} | {fmt(g('adrops'))} | {fmt(g('aquota'))} | {fmt(g('alimited'))} | "
                 f"{fmt(g('refused'))} | {fmt(g('pit'))} ({fmt(g('apit'))}) | "
                 f"{fmt(g('rss0'), '{:.1f}')} → {fmt(g('rssm'), '{:.1f}')} → {fmt(g('rss1'), '{:.1f}')}"
                 + (f" (→ {fmt(g('rssc'), '{:.1f}')})" if g('rssc') is not None else "") + " |")
ikinds = [k for k in "Sabc" if "I" in phases and os.path.exists(os.path.join(w, f"status.I{k}.after.json"))]
if ikinds:
    L.append("")
    L.append("Interleaved (phase I, after the rounds): per attack kind, pairs of slices a few seconds "
             "apart, the flood frozen (SIGSTOP) in the baseline slice and running in the attack slice; "
             "ratio = (c1 + c2 exchanges/s, attack slice) / (same, baseline slice). *vs S*: the kind's "
             "median ratio over S's. Attacker counters are deltas over the whole kind (its slices).\n")
    L.append("| kind | pairs | c1 + c2 exch/s baseline / attack (medians) | ratio median (quartiles; range) | pooled | vs S | attacker pps while running | attacker Interests in / drops / drop_pit_quota / nacks_limited | faces_refused | RSS MiB before → after |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    imed = {}
    for k in ikinds:
        pairs = []
        i = 1
        while os.path.exists(os.path.join(w, f"c1.I{k}-base.{i}.json")):
            b = [j(f"c{c}.I{k}-base.{i}.json") for c in (1, 2)]
            a = [j(f"c{c}.I{k}-att.{i}.json") for c in (1, 2)]
            if all(b) and all(a):
                pairs.append((sum(x["exchanges_per_s"] for x in b), sum(x["exchanges_per_s"] for x in a)))
            i += 1
        pairs = [(b, a) for b, a in pairs if b > 0]
        if not pairs:
            continue
        rs = sorted(a / b for b, a in pairs)
        q = lambda f: rs[min(len(rs) - 1, int(f * len(rs)))]
        imed[k] = statistics.median(rs)
        fl = j(f"flood.I{k}.json")
        try:
            cont = float(open(os.path.join(w, f"flood.I{k}.cont")).read())
        except Exception:
            cont = None
        pps = fl["sent"] / cont if fl and cont else None
        s0, s1 = j(f"status.I{k}.before.json"), j(f"status.I{k}.after.json")
        d = lambda key: faces_sum(s1, attacker, key) - faces_sum(s0, attacker, key)
        ref = s1["counters"].get("faces_refused", 0) - s0["counters"].get("faces_refused", 0) if s0 and s1 else None
        vs = imed[k] / imed["S"] if k != "S" and imed.get("S") else None
        L.append(f"| {k} {names[k][2:]} | {len(pairs)} | {statistics.median(b for b, _ in pairs):.0f} / "
                 f"{statistics.median(a for _, a in pairs):.0f} | {imed[k]:.2f} ({q(0.25):.2f}–{q(0.75):.2f}; "
                 f"{rs[0]:.2f}–{rs[-1]:.2f}) | {sum(a for _, a in pairs) / sum(b for b, _ in pairs):.2f} | "
                 f"{fmt(vs, '{:.2f}')} | {fmt(pps)} | "
                 + (f"{d('interests_in')} / {d('drops')} / {d('drop_pit_quota')} / {d('nacks_limited')}" if k != "S" else "–")
                 + f" | {fmt(ref)} | {fmt(rss(f'I{k}.before'), '{:.1f}')} → {fmt(rss(f'I{k}.after'), '{:.1f}')} |")
end = j("status.end.json")
if end:
    c = end["counters"]
    keys = ["interests_in", "data_out", "nacks_out", "nacks_limited", "drop_pit_quota", "drop_pit_full",
            "drop_no_route", "faces_created", "faces_refused", "xsk_rx_dropped", "xsk_rx_ring_full",
            "tx_ring_full", "unresolved_face", "pit_entries"]
    L.append("")
    L.append("ndx counters at the end: " + ", ".join(f"{x}={c.get(x)}" for x in keys)
             + f"; PIT share {end.get('pit_share')}; on_demand {end.get('on_demand')}; "
             f"RSS at the end {fmt(rss('end'), '{:.1f}')} MiB.")
    att = [f for f in end["faces"] if attacker(f)]
    att.sort(key=lambda f: -f.get("interests_in", 0))
    L.append("")
    L.append(f"Attacker faces at the end ({len(att)}; the busiest 3, from `ndx status --json`):\n")
    L.append("```")
    for f in att[:3]:
        L.append(json.dumps({x: f.get(x) for x in ("id", "remote", "origin", "interests_in", "pit_entries",
                                                    "drops", "drop_pit_quota", "nacks_limited")}))
    L.append("```")
L.append("")
L.append("The machine: load average and the busiest processes over one second (`top`), at the start, "
         "between rounds and at the end (ndx, ndx-traffic are this benchmark's):\n")
L.append("```")
for m in sorted(x for x in os.listdir(w) if x.startswith("machine.")):
    L.extend(open(os.path.join(w, m)).read().rstrip().splitlines())
L.append("```")
text = "\n".join(L) + "\n"
print(text)
if out != "-":
    marker = "<!-- Everything below is generated by scripts/bench-fairness.sh and replaced on each run. -->"
    head = "# Fairness under Interest flooding (issue 34, part 1)\n\n(Explanation to be written.)\n\n"
    if os.path.exists(out):
        cur = open(out).read()
        if marker in cur:
            head = cur[:cur.index(marker)]
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        f.write(head + marker + "\n\n" + text)
    print(f"written to {out}", file=sys.stderr)
PY
}

if [ -n "${BENCH_REPORT:-}" ]; then
  WORK=$BENCH_REPORT
  report
  exit 0
fi
T=${CARGO_TARGET_DIR:-$PWD/target}
if [ -z "${NO_BUILD:-}" ]; then
  cargo build --release -p ndx -p ndx-traffic >&2
fi
NDX=$T/release/ndx
TRAFFIC=$T/release/ndx-traffic
for b in "$NDX" "$TRAFFIC"; do [ -x "$b" ] || { echo "missing $b"; exit 1; }; done
command -v clang > /dev/null || { echo "clang is needed for the XDP drop program"; exit 1; }

TAG=$$
R=fair-r-$TAG C1=fair-c1-$TAG C2=fair-c2-$TAG A=fair-a-$TAG P=fair-p-$TAG D=fair-d-$TAG S=fair-s-$TAG
ALL_NS=("$R" "$C1" "$C2" "$A" "$P" "$D" "$S")
WORK=$(mktemp -d /tmp/ndx-fairness.XXXXXX)
PIDS=()
cleanup() {
  set +e
  local p ns
  for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done
  sleep 0.3
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  for ns in "${ALL_NS[@]}"; do ip netns del "$ns" 2>/dev/null; done
  [ -n "${KEEP_WORK:-}" ] && echo "logs kept in $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { printf '== %s\n' "$*" >&2; }

# link NS1 IF1 ADDR1 NS2 IF2 ADDR2 N: a veth pair between two namespaces (/24 addresses), up,
# transmit checksum offload off on both ends (ENVIRONMENT.md).
link() {
  ip link add "fa$7x$TAG" type veth peer name "fb$7x$TAG"
  ip link set "fa$7x$TAG" netns "$1" name "$2"
  ip link set "fb$7x$TAG" netns "$4" name "$5"
  ip -n "$1" addr add "$3/24" dev "$2"
  ip -n "$4" addr add "$6/24" dev "$5"
  ip -n "$1" link set "$2" up
  ip -n "$4" link set "$5" up
  ip netns exec "$1" ethtool -K "$2" tx off > /dev/null 2>&1 || true
  ip netns exec "$4" ethtool -K "$5" tx off > /dev/null 2>&1 || true
}
mac() { ip netns exec "$1" cat "/sys/class/net/$2/address"; }
# neigh NS IF IP NS2 IF2: a permanent neighbour entry in NS for IP, the MAC of NS2's IF2 (the
# AF_XDP ends and the XDP_DROP ends answer no ARP).
neigh() { ip -n "$1" neigh replace "$3" lladdr "$(mac "$4" "$5")" dev "$2" nud permanent; }

say "topology"
for ns in "${ALL_NS[@]}"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
link "$R" c1 10.78.1.1 "$C1" eth0 10.78.1.2 1
link "$R" c2 10.78.2.1 "$C2" eth0 10.78.2.2 2
link "$R" a0 10.78.3.1 "$A" eth0 10.78.3.2 3
link "$R" p0 10.78.4.1 "$P" eth0 10.78.4.2 4
link "$R" d0 10.78.5.1 "$D" eth0 10.78.5.2 5
link "$S" eth0 10.78.9.1 "$A" eth1 10.78.9.2 9
neigh "$R" c1 10.78.1.2 "$C1" eth0
neigh "$R" c2 10.78.2.2 "$C2" eth0
neigh "$R" a0 10.78.3.2 "$A" eth0
neigh "$R" p0 10.78.4.2 "$P" eth0
neigh "$R" d0 10.78.5.2 "$D" eth0
neigh "$C1" eth0 10.78.1.1 "$R" c1
neigh "$C2" eth0 10.78.2.1 "$R" c2
neigh "$A" eth0 10.78.3.1 "$R" a0
neigh "$A" eth1 10.78.9.1 "$S" eth0
neigh "$P" eth0 10.78.4.1 "$R" p0
cat > "$WORK/drop.c" <<'C'
#include <linux/bpf.h>
__attribute__((section("xdp"), used)) int xdp_drop_all(struct xdp_md *ctx) { return XDP_DROP; }
char _license[] __attribute__((section("license"), used)) = "GPL";
C
# asm/types.h is under the multiarch include directory (x86_64-linux-gnu, aarch64-linux-gnu, ...).
MULTIARCH=$(gcc -print-multiarch 2>/dev/null || true)
MULTIARCH=${MULTIARCH:-$(uname -m)-linux-gnu}
clang -O2 -g -target bpf -I"/usr/include/$MULTIARCH" -c "$WORK/drop.c" -o "$WORK/drop.o"
# The dark upstream and the sink: every frame dropped in XDP (never answered, no ICMP, no skb).
ip -n "$D" link set dev eth0 xdpdrv obj "$WORK/drop.o" sec xdp
ip -n "$S" link set dev eth0 xdpdrv obj "$WORK/drop.o" sec xdp

cat > "$WORK/ndx.toml" <<CFG
[router]
shards = 1
cpus = [$FWD_CPU]
control_socket = "$WORK/ndx.sock"
[app]
socket = "$WORK/nfd.sock"
[tables]
pit_capacity = ${PIT_CAPACITY:-65536}
[cs]
capacity = 65536
slot_size = 1024
[fairness]
pit_shares = ${PIT_SHARES:-true}
pit_reserve = ${PIT_RESERVE:-1}
pit_min = ${PIT_MIN:-64}
nack_rate = ${NACK_RATE:-10000}
nack_burst = ${NACK_BURST:-1000}
[udp]
on_demand_max = ${ON_DEMAND_MAX:-4096}
on_demand_per_address = ${ON_DEMAND_PER_ADDRESS:-16}
[[interface]]
name = "c1"
[[interface]]
name = "c2"
[[interface]]
name = "a0"
[[interface]]
name = "p0"
[[interface]]
name = "d0"
[[face]]
name = "producer"
remote = "udp://10.78.4.2:6363"
[[face]]
name = "dark"
remote = "udp://10.78.5.2:6363"
[[route]]
prefix = "/bench"
face = "producer"
[[route]]
prefix = "/dark"
face = "dark"
CFG

# machine NAME: the load average and the busiest processes over one second (top), ours
# included (ndx-traffic, ndx), to tell what else ran.
machine() {
  { echo "$1 $(date -u +%TZ); load average $(cut -d' ' -f1-3 /proc/loadavg)"
    top -b -n 2 -d 1 -w 160 -o %CPU | awk '/^top -/ {n++} n == 2' | sed -n '7,15p' | cut -c1-160
  } > "$WORK/machine.$1"
}
machine 1-start

say "producer (CPU $GEN_CPU), ndx (CPU $FWD_CPU)"
ip netns exec "$P" taskset -c "$GEN_CPU" "$TRAFFIC" producer --iface eth0 --fixed-signature \
  > "$WORK/producer.json" 2> "$WORK/producer.err" &
PIDS+=($!)
sleep 0.5
ip netns exec "$R" taskset -c "$FWD_CPU" "$NDX" run -c "$WORK/ndx.toml" > "$WORK/ndx.log" 2>&1 &
NDXPID=$!; PIDS+=("$NDXPID")
for _ in $(seq 100); do [ -S "$WORK/ndx.sock" ] && break; sleep 0.1; done
[ -S "$WORK/ndx.sock" ] || { cat "$WORK/ndx.log"; echo "ndx did not start"; exit 1; }
status() { "$NDX" status -s "$WORK/ndx.sock" --json; }
for _ in $(seq 100); do
  status 2>/dev/null | python3 -c \
    'import json,sys; d=json.load(sys.stdin); sys.exit(0 if all(f["resolved"] for f in d["faces"] if f["name"] in ("producer","dark")) else 1)' \
    && break
  sleep 0.1
done
rss() { awk '/^VmRSS/ {print $2}' "/proc/$NDXPID/status"; }

MC1=$(mac "$R" c1) MC2=$(mac "$R" c2) MA=$(mac "$R" a0) MS=$(mac "$S" eth0)
# consumer NS MAC N NAME SECONDS WARMUP: consumer cN on its own face, pinned. Its names are
# /bench/cN/NAME/<id>: the ids restart with every run, so the run's name keeps the previous
# phases' Data in the CS from answering it.
consumer() {
  ip netns exec "$1" taskset -c "$GEN_CPU" "$TRAFFIC" consumer --iface eth0 --dst-mac "$2" \
    --src-ip "10.78.$3.2" --dst-ip "10.78.$3.1" --window "$WINDOW" --unique --prefix "/bench/c$3/$4" \
    --seconds "$5" --warmup "$6" > "$WORK/$4.json" 2> "$WORK/$4.err"
}
# flood NAME KIND: the attacker for phase KIND (S, a, b, c), measured over the consumers' period
# (run it with &: it execs);
# names /dark/NAME/<n> or /nowhere/NAME/<n>. FLOOD_SCHED=idle runs it SCHED_IDLE (a variant: it
# then takes only the CPU time the consumers leave).
flood() {
  local args sched=()
  [ "${FLOOD_SCHED:-}" = idle ] && sched=(chrt -i 0)
  case $2 in
    S) args=(--iface eth1 --dst-mac "$MS" --src-ip 10.78.9.2 --dst-ip 10.78.9.1 --prefix "/dark/$1") ;;
    a) args=(--iface eth0 --dst-mac "$MA" --src-ip 10.78.3.2 --dst-ip 10.78.3.1 --prefix "/dark/$1") ;;
    b) args=(--iface eth0 --dst-mac "$MA" --src-ip 10.78.3.2 --dst-ip 10.78.3.1 --prefix "/nowhere/$1") ;;
    c) args=(--iface eth0 --dst-mac "$MA" --src-ip 10.78.3.2 --dst-ip 10.78.3.1 --prefix "/dark/$1"
             --src-port 10000 --src-ports "$C_PORTS" --src-addrs "$C_ADDRS") ;;
  esac
  # exec: run in the background, $! is ndx-traffic itself (ip netns exec, taskset, chrt exec).
  exec ip netns exec "$A" taskset -c "$GEN_CPU" "${sched[@]}" "$TRAFFIC" flood "${args[@]}" \
    --lifetime-ms "$LIFETIME" --seconds "${FLOOD_SECS:-$SECS}" \
    --warmup "${FLOOD_WARMUP:-$(python3 -c "print($WARMUP + 0.5)")}" > "$WORK/$1.json" 2> "$WORK/$1.err"
}

# phase KIND ROUND: one measured phase; leaves N.json files and status/RSS snapshots in $WORK.
phase() {
  local k=$1 r=$2 n="$1.$2" fpid=
  say "[$r] phase $k"
  status > "$WORK/status.$n.before.json"; rss > "$WORK/rss.$n.before"
  if [ "$k" != 0 ]; then
    flood "flood.$n" "$k" &
    fpid=$!; PIDS+=($fpid)
    sleep 0.5
  fi
  consumer "$C1" "$MC1" 1 "c1.$n" "$SECS" "$WARMUP" &
  local p1=$!
  consumer "$C2" "$MC2" 2 "c2.$n" "$SECS" "$WARMUP" &
  local p2=$!
  PIDS+=($p1 $p2)
  # Both CPUs' time by kind (/proc/stat) over the measured period, less its last second;
  # mid-attack snapshot (PIT entries, faces, RSS) at its end.
  sleep "$WARMUP"
  grep '^cpu[0-9]' /proc/stat > "$WORK/stat.$n.start"
  sleep "$(python3 -c "print(max(0.5, $SECS - 1))")"
  grep '^cpu[0-9]' /proc/stat > "$WORK/stat.$n.end"
  status > "$WORK/status.$n.mid.json"; rss > "$WORK/rss.$n.mid"
  wait "$p1" "$p2" || say "a consumer failed: $(cat "$WORK/c1.$n.err" "$WORK/c2.$n.err")"
  if [ -n "$fpid" ]; then wait "$fpid" || say "the flood failed: $(cat "$WORK/flood.$n.err")"; fi
  status > "$WORK/status.$n.after.json"; rss > "$WORK/rss.$n.after"
  for f in c1 c2 flood; do [ -s "$WORK/$f.$n.json" ] && sed 's/"kernel_stats".*//' "$WORK/$f.$n.json" >&2; done
  if [ "$k" != 0 ] && [ "$k" != S ]; then
    sleep "$COOL"
    rss > "$WORK/rss.$n.cooled"; status > "$WORK/status.$n.cooled.json"
  fi
}

# Phase I, interleaved: per attack kind, the flood runs throughout and is frozen (SIGSTOP, no
# CPU) in the baseline slices: BENCH_SLICES pairs of BENCH_SLICE_SECS-second slices (0.5 s
# warm-up each; the flood resumes 0.3 s before an attack slice), ABBA order. Each ratio compares
# two slices seconds apart, so the shared host's load swings cancel far better than between
# phases a minute apart.
islice() { # NAME
  consumer "$C1" "$MC1" 1 "c1.$1" "$SLICE_SECS" 0.5 &
  local p1=$!
  consumer "$C2" "$MC2" 2 "c2.$1" "$SLICE_SECS" 0.5 &
  local p2=$!
  wait "$p1" "$p2" || true
}
phase_interleaved() {
  local k i fpid t0 cont=0
  for k in S a b c; do
    [[ $IKINDS == *"$k"* ]] || continue
    say "I: $k, $SLICES pairs of $SLICE_SECS s slices, the flood frozen in the baseline slices"
    status > "$WORK/status.I$k.before.json"; rss > "$WORK/rss.I$k.before"
    FLOOD_SECS=100000 FLOOD_WARMUP=0 flood "flood.I$k" "$k" &
    fpid=$!; PIDS+=($fpid)
    sleep 0.5; kill -STOP "$fpid"; cont=0
    attack_slice() {
      kill -CONT "$fpid"; t0=$(date +%s.%N); sleep 0.3
      islice "I$k-att.$1"
      kill -STOP "$fpid"; cont=$(python3 -c "print($cont + $(date +%s.%N) - $t0)")
    }
    for i in $(seq "$SLICES"); do
      if (( i % 2 )); then islice "I$k-base.$i"; attack_slice "$i"; else attack_slice "$i"; islice "I$k-base.$i"; fi
    done
    kill -CONT "$fpid"; kill -INT "$fpid"; wait "$fpid" 2>/dev/null || true
    echo "$cont" > "$WORK/flood.I$k.cont"
    status > "$WORK/status.I$k.after.json"; rss > "$WORK/rss.I$k.after"
    if [ "$k" != S ]; then sleep "$COOL"; fi
  done
}

say "warm-up: both consumers for 3 s (the CS fills, tables get touched)"
consumer "$C1" "$MC1" 1 warm1 3 0 & w1=$!
consumer "$C2" "$MC2" 2 warm2 3 0 & w2=$!
wait $w1 $w2
for r in $(seq "$ROUNDS"); do
  for k in 0 S a b c; do
    if [[ $PHASES == *"$k"* ]]; then phase "$k" "$r"; fi
  done
  if [ "$r" -lt "$ROUNDS" ]; then machine "5-after-round-$r"; fi
done
if [[ $PHASES == *I* ]]; then phase_interleaved; fi
status > "$WORK/status.end.json"; rss > "$WORK/rss.end"
machine 9-end
if ! kill -0 "$NDXPID" 2>/dev/null; then say "ndx exited during the run:"; tail -20 "$WORK/ndx.log" >&2; fi
grep -i -e warn -e error "$WORK/ndx.log" | tail -5 >&2 || true

report
