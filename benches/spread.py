#!/usr/bin/env python3
"""Spread of criterion's samples: mean (criterion's headline), min, p10 and median time per
element of every benchmark under target/criterion/<group>/ (default: pipeline).

On a shared, noisy host the mean carries every disturbed sample; the min and p10 show what
the code does when the host leaves it alone. Usage: python3 benches/spread.py [group]
"""
import glob
import json
import os
import sys

group = sys.argv[1] if len(sys.argv) > 1 else "pipeline"
root = os.environ.get("CARGO_TARGET_DIR", "target")
for sample in sorted(glob.glob(f"{root}/criterion/{group}/**/new/sample.json", recursive=True)):
    here = os.path.dirname(sample)
    name = os.path.relpath(os.path.dirname(here), f"{root}/criterion/{group}")
    bench = json.load(open(os.path.join(here, "benchmark.json")))
    per_iter = list((bench.get("throughput") or {"Elements": 1}).values())[0]
    s = json.load(open(sample))
    per = sorted(t / i / per_iter for t, i in zip(s["times"], s["iters"]))
    mean = json.load(open(os.path.join(here, "estimates.json")))["mean"]["point_estimate"] / per_iter
    print(f"{group}/{name:<36} mean {mean:7.0f}  min {per[0]:7.0f}  p10 {per[len(per) // 10]:7.0f}"
          f"  median {per[len(per) // 2]:7.0f}  ns per element")
