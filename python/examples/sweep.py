"""Seed 004, section 2, with memlat from Python: latency by working-set size
for a stride-64 chain and a random chain, on a log size axis.

    pip install './python[plot]' && python3 python/examples/sweep.py sweep.png
"""

import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import memlat

points = memlat.sweep(start=1024, stop=256 << 20, ratio=1.3, strides=[64])
for series in ("stride", "random"):
    curve = [p for p in points if p["pattern"] == series]
    plt.plot([p["size"] for p in curve], [p["ns_per_load"]["median"] for p in curve],
             marker=".", label="stride 64" if series == "stride" else "random")
for level in memlat.detect(points)["levels"]:
    if level["size_bytes"]:
        plt.axvline(level["size_bytes"], color="grey", linestyle="--", linewidth=0.8)
plt.xscale("log", base=2)
plt.yscale("log")
plt.xlabel("working-set size (bytes)")
plt.ylabel("ns per load")
plt.legend()
plt.title("memlat from Python: seed 004's size sweep")
plt.savefig(sys.argv[1] if len(sys.argv) > 1 else "sweep.png", dpi=100)
