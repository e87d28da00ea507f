#!/usr/bin/env python3
"""Per-exchange figures of one phase of bench-datapath.sh run with PERF=stat.

Usage: perf-per-exchange.py PREFIX   (PREFIX.stat: `perf stat -x,` of the router process;
PREFIX.ticks: its utime/stime ticks before and after; PREFIX.veth: `ip -s -j link` of the
router namespace before and after). An exchange is a Data frame the router sent to the
consumer (c0's transmitted packets in the window); every figure is divided by that count.
"""
import json
import os
import sys


def veth(path):
    snaps = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                snaps.append({l["ifname"]: l["stats64"] for l in json.loads(line)})
    if len(snaps) < 2:
        sys.exit(f"{path}: need two snapshots, found {len(snaps)}")
    a, b = snaps[0], snaps[-1]
    d = {}
    for ifname in ("c0", "p0"):
        if ifname not in a or ifname not in b:
            sys.exit(f"{path}: no {ifname} in the snapshots")
        for way in ("rx", "tx"):
            for k in ("packets", "bytes"):
                d[f"{ifname}.{way}.{k}"] = b[ifname][way][k] - a[ifname][way][k]
    return d


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    pre = sys.argv[1]
    v = veth(pre + ".veth")
    ex = v["c0.tx.packets"]
    if ex <= 0:
        sys.exit(f"{pre}: no exchange in the window (c0 sent nothing)")
    print(f"exchanges in the window: {ex}")
    for ifname, way, what in (("c0", "rx", "Interests in"), ("p0", "tx", "Interests out"),
                              ("p0", "rx", "Data in"), ("c0", "tx", "Data out")):
        p, b = v[f"{ifname}.{way}.packets"], v[f"{ifname}.{way}.bytes"]
        print(f"  {ifname} {way} ({what}): {p / ex:.3f} frames, {b / ex:.1f} bytes per exchange"
              f" ({b / max(p, 1):.1f} bytes per frame)")
    frames = v["c0.tx.packets"] + v["p0.tx.packets"]
    with open(pre + ".stat") as f:
        for line in f:
            parts = line.strip().split(",")
            if len(parts) < 3 or line.startswith("#"):
                continue
            val, ev = parts[0], parts[2]
            if ev == "task-clock":
                if val.replace(".", "").isdigit():
                    print(f"  task-clock: {float(val) * 1e6 / ex:.0f} ns per exchange")
                continue
            n = int(val) if val.isdigit() else 0
            if n:
                name = ev.removeprefix("syscalls:sys_enter_")
                print(f"  {name}: {n} calls, {n / ex:.4f} per exchange, {frames / n:.1f} frames sent per call")
    if os.path.exists(pre + ".ticks"):
        t = {}
        with open(pre + ".ticks") as f:
            for line in f:
                k, u, s = line.split()
                t[k] = (int(u), int(s))
        if "ticks-before" in t and "ticks-after" in t:
            hz = os.sysconf("SC_CLK_TCK")
            u = (t["ticks-after"][0] - t["ticks-before"][0]) / hz
            s = (t["ticks-after"][1] - t["ticks-before"][1]) / hz
            print(f"  process CPU (all threads): user {u:.2f} s, system {s:.2f} s "
                  f"({u * 1e9 / ex:.0f} / {s * 1e9 / ex:.0f} ns per exchange)")


if __name__ == "__main__":
    main()
