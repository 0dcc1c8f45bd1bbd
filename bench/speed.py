#!/usr/bin/env python3
"""Speed and memory of memlat's main commands (a benchmark, not a test).

Times, as whole processes, the default sweep, the quick table (no flags) and
`memlat run --pattern random` at 16K, 256K, 64M and 1G; reports each one's
wall time and peak RSS (from wait4's rusage, per child), and the ns per load
it measured. With a baseline directory (an earlier run of this script, e.g.
with MEMLAT pointing at the previous release), prints the ratios beside:
wall time, RSS, and the median latency at every size both measured.

    python3 bench/speed.py OUT_DIR [BASELINE_DIR]
    MEMLAT=/path/to/old/memlat python3 bench/speed.py base/

Machines are shared and noisy: compare figures within one run of the
script (run old and new one right after the other), never across days.
"""
import json
import os
import subprocess
import sys
import time

MEMLAT = os.environ.get("MEMLAT", os.path.join(os.path.dirname(__file__), "..", "target", "release", "memlat"))

CASES = [
    ("sweep", ["sweep", "--no-progress", "--json", "{out}/sweep.json", "--csv", "{out}/sweep.csv"]),
    ("quick", ["--format", "json", "-o", "{out}/quick.json"]),
] + [
    (f"run {size}", ["run", "-n", size, "--pattern", "random", "--format", "json", "-o", f"{{out}}/run-{size}.json"])
    for size in ["16K", "256K", "8M", "64M", "256M", "1G"]
]


def timed(args):
    """Runs memlat with `args`; returns (wall seconds, peak RSS MiB, exit code)."""
    start = time.monotonic()
    proc = subprocess.Popen([MEMLAT] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    return wall, usage.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status)


def latencies(out, name):
    """Median ns per load by (series, size) in the JSON a case wrote."""
    path = {"sweep": "sweep.json", "quick": "quick.json"}.get(name) or f"run-{name.split()[-1]}.json"
    try:
        doc = json.load(open(os.path.join(out, path)))
    except (OSError, ValueError):
        return {}
    points = doc.get("points", [doc]) if isinstance(doc, dict) else []
    series = lambda p: p["pattern"] if p["pattern"] != "stride" else f"stride {p['stride']}"
    return {f"{series(p)} {p['size']}": p["ns_per_load"]["median"] for p in points}


def main():
    out = sys.argv[1]
    base = sys.argv[2] if len(sys.argv) > 2 else None
    os.makedirs(out, exist_ok=True)
    results = {}
    for name, args in CASES:
        args = [a.format(out=out) for a in args]
        for a in args:
            if a.startswith(out) and os.path.exists(a):
                os.remove(a)
        wall, rss, code = timed(args)
        results[name] = {"wall_s": wall, "peak_rss_mib": rss, "exit": code, "ns": latencies(out, name)}
    json.dump(results, open(os.path.join(out, "bench.json"), "w"), indent=1)
    before = json.load(open(os.path.join(base, "bench.json"))) if base else {}
    print(f"memlat: {MEMLAT}")
    print(f"{'case':<10} {'wall s':>8} {'peak RSS MiB':>13}" + ("  wall / base  RSS / base  ns / base (median over points, min..max)" if base else ""))
    for name, r in results.items():
        line = f"{name:<10} {r['wall_s']:>8.2f} {r['peak_rss_mib']:>13.1f}"
        b = before.get(name)
        if b:
            common = [k for k in r["ns"] if k in b["ns"] and b["ns"][k] > 0]
            ratios = sorted(r["ns"][k] / b["ns"][k] for k in common)
            ns = f"{ratios[len(ratios) // 2]:.3f} ({ratios[0]:.3f}..{ratios[-1]:.3f}, {len(ratios)} points)" if ratios else "-"
            line += f"  {r['wall_s'] / b['wall_s']:>11.2f}  {r['peak_rss_mib'] / b['peak_rss_mib']:>10.2f}  {ns}"
        if r["exit"]:
            line += f"  (exit {r['exit']})"
        print(line)


if __name__ == "__main__":
    main()
