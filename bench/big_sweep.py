#!/usr/bin/env python3
"""Writes a synthetic sweep of about MIB MiB in the layout `memlat sweep
--json` writes, for measuring what reading one costs (issue 37: no reader
may take more than 4x the bytes it reads).

The points are the first point of a measured fixture, repeated over up to
2000 sizes (a sweep's most) and as many stride series as the size asks,
with latencies on a made-up four-level curve, so detect finds levels and
compare, report and merge have every point to match. The file is written a
point at a time: the generator stays small whatever the size.

usage: python3 bench/big_sweep.py OUT.json MIB
"""
import copy
import json
import math
import os
import sys

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "../tests/fixtures/curves/amd-epyc-zen3-fc-thp-b.json")


def latency(size):
    """ns per load on a machine of 32 KiB L1, 512 KiB L2, 32 MiB L3."""
    for cap, ns in ((32 << 10, 1.3), (512 << 10, 4.2), (32 << 20, 14.0)):
        if size <= cap:
            return ns
    return 95.0


def main():
    out, mib = sys.argv[1], float(sys.argv[2])
    fix = json.load(open(FIX))
    template = fix["points"][0]
    point_bytes = len(json.dumps(template)) + 2
    points = int(mib * (1 << 20) / point_bytes)
    sizes, size = [], 1088
    while len(sizes) < min(2000, points):
        sizes.append(size)
        size = max(size + 64, int(size * 1.005) // 64 * 64)
    series = [{"pattern": "random", "stride": 0}]
    stride = 64
    while len(series) * len(sizes) < points:
        series.append({"pattern": "stride", "stride": stride})
        stride += 64
    head = {k: v for k, v in fix.items() if k not in ("points", "detection")}
    head["config"] = dict(fix["config"], sizes=sizes, series=series, to=sizes[-1],
                          refined_sizes=[], remeasured_sizes=[],
                          first_pass_levels=[], range_end_reason="to")
    head["complete"] = True
    with open(out, "w") as f:
        f.write(json.dumps(head)[:-1] + ', "points": [')
        first = True
        for size in sizes:
            for s in series:
                p = copy.deepcopy(template)
                p["size"], p["pattern"], p["stride"] = size, s["pattern"], s["stride"]
                scale = latency(size) / template["ns_per_load"]["median"]
                if s["pattern"] == "stride":
                    scale = min(scale, 2.0)
                for key in ("ns_per_load", "cycles_per_load"):
                    p[key] = {k: (v * scale if k != "cv" else v) for k, v in p[key].items()}
                for sample in p["samples"]:
                    sample["ns_per_load"] *= scale
                    sample["cycles_per_load"] *= scale
                    sample["ns_a"] = math.floor(sample["ns_a"] * scale)
                    sample["ns_2a"] = math.floor(sample["ns_2a"] * scale)
                f.write(("" if first else ", ") + json.dumps(p))
                first = False
        f.write('], "detection": null}\n')


main()
