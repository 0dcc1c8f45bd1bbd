#!/usr/bin/env python3
"""Does memlat give the same answer twice on this machine?

Runs N default `memlat sweep`s, N `memlat linesize` and N `memlat assoc
--levels 1` (interleaved, so a noisy minute touches each), then prints:
- how many cache levels each sweep found, against the count sysfs lists;
- each level's capacity and latency over the sweeps: median, min..max and
  the spread (max/min);
- each level's capacity bounds per sweep (what every repeat read) and issue
  27's checks: every level has bounds, each level's at_least varies by no
  more than 20%, and no sweep's capacity lies outside another's bounds;
- each sweep's noise figures;
- the line sizes and L1 ways read, and whether they agree.

It is a benchmark, not a test: its figures belong in notes and docs.

Then (readings_main) linesize x10, tlb x5 and mlp x3, each run's answer
with its passes; --readings-only runs just those.

usage: python3 bench/stability.py [--runs N] [--memlat PATH] [--out DIR] [--readings-only | --sweeps-only]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run_json(cmd):
    """Runs cmd (a list), returns its stdout parsed as JSON, or None."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"  ! {' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
        return None
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        print(f"  ! {' '.join(cmd)}: output is not JSON")
        return None


def human(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def sysfs_levels():
    """Cache levels sysfs lists data or unified caches at, for CPU 0."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    levels = set()
    try:
        for entry in os.listdir(base):
            if not entry.startswith("index"):
                continue
            with open(f"{base}/{entry}/type") as f:
                kind = f.read().strip()
            with open(f"{base}/{entry}/level") as f:
                level = int(f.read().strip())
            if kind in ("Data", "Unified"):
                levels.add(level)
    except OSError:
        pass
    return len(levels)


def reading(result, key):
    """A linesize/assoc reading: the agreed value (None when the passes
    disagree or the field is missing), and the per-pass readings if listed."""
    if result is None:
        return None, []
    if key == "ways":
        levels = result.get("levels") or [{}]
        result = levels[0]
    return result.get(key), result.get("readings", [])


def spread(values):
    lo, hi = min(values), max(values)
    return f"{statistics.median(values):>10.4g}  {lo:.4g}..{hi:.4g}  x{hi / lo:.2f}"


# A shared cache's edge moves with the other tenants; what every repeat
# read should not move by more than this across sweeps (issue 27).
AT_LEAST_SPREAD = 1.2


def bounds_text(level):
    b = level.get("capacity_bounds")
    if not b:
        return "no bounds"
    side = lambda v: human(v) if v is not None else "?"
    return f"{side(b.get('at_least_bytes'))}..{side(b.get('at_most_bytes'))}"


def check_bounds(detections):
    """Issue 27's checks on the cache levels of several sweeps' detections;
    prints each and returns whether all hold."""
    by_level = {}
    for k, d in enumerate(detections):
        for l in (d or {}).get("levels", []):
            if l["name"] != "memory":
                by_level.setdefault(l["name"], []).append((k, l))
    ok = True
    for name, found in sorted(by_level.items()):
        missing = [k for k, l in found
                   if not l.get("capacity_bounds")
                   or None in (l["capacity_bounds"].get("at_least_bytes"),
                               l["capacity_bounds"].get("at_most_bytes"))]
        lows = [l["capacity_bounds"]["at_least_bytes"] for _, l in found
                if l.get("capacity_bounds") and l["capacity_bounds"].get("at_least_bytes")]
        spread_ok = bool(lows) and max(lows) <= AT_LEAST_SPREAD * min(lows)
        outside = []
        for k, l in found:
            size = l.get("size_bytes")
            for j, other in found:
                b = other.get("capacity_bounds") or {}
                low = b.get("at_least_bytes") or 0
                high = b.get("at_most_bytes")
                if j != k and size and (size < low or (high is not None and size > high)):
                    outside.append(f"sweep {k}'s {human(size)} outside sweep {j}'s {bounds_text(other)}")
        spread_text = f"x{max(lows) / min(lows):.2f}" if lows else "none"
        print(f"  {name}: bounds {', '.join(bounds_text(l) for _, l in found)}")
        print(f"    both bounds in every sweep: {'yes' if not missing else f'no (sweeps {missing})'}; "
              f"at_least spread {spread_text} ({'<=' if spread_ok else '>'} {AT_LEAST_SPREAD}); "
              f"capacities outside another's bounds: {len(outside)}")
        for line in outside:
            print(f"      {line}")
        ok = ok and not missing and spread_ok and not outside
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--memlat", default="target/release/memlat")
    parser.add_argument("--out", default=None, help="keep the sweeps' JSON here")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="memlat-stability-")
    os.makedirs(out, exist_ok=True)
    memlat = args.memlat
    sweeps, lines, ways = [], [], []
    started = time.time()
    for k in range(args.runs):
        path = os.path.join(out, f"sweep-{k}.json")
        t0 = time.time()
        subprocess.run(
            [memlat, "sweep", "--no-progress", "--force", "--json", path, "-o", path[:-5] + ".txt"],
            capture_output=True,
        )
        try:
            with open(path) as f:
                sweeps.append((json.load(f), time.time() - t0))
        except (OSError, json.JSONDecodeError):
            print(f"  ! sweep {k} left no readable {path}")
        lines.append(reading(run_json([memlat, "linesize", "--format", "json"]), "line_bytes"))
        ways.append(reading(run_json([memlat, "assoc", "--levels", "1", "--format", "json"]), "ways"))
        print(f"run {k + 1} of {args.runs} done ({time.time() - started:.0f} s)", file=sys.stderr)

    expected = sysfs_levels()
    print(f"memlat stability: {args.runs} runs, {time.time() - started:.0f} s; sweeps in {out}")
    print(f"\nsweeps: cache levels found (sysfs lists {expected} data/unified levels)")
    counts = []
    by_level = {}
    for k, (result, seconds) in enumerate(sweeps):
        levels = [l for l in (result.get("detection") or {}).get("levels", []) if l["name"] != "memory"]
        counts.append(len(levels))
        noise = result.get("noise") or {}
        unresolved = (result.get("detection") or {}).get("unresolved", [])
        summary = ", ".join(
            f"{l['name']} {human(l['size_bytes'] or 0)} {l['latency_ns']:.2f} ns" for l in levels
        )
        print(
            f"  sweep {k}: {len(levels)} levels in {seconds:.1f} s: {summary}; "
            f"unresolved {len(unresolved)}; noise steal {noise.get('steal_fraction')}, "
            f"cv {noise.get('repeat_cv', float('nan')):.3f}, canary {noise.get('canary_ratio')}"
        )
        for l in levels:
            by_level.setdefault(l["name"], []).append(l)
    agree = sum(1 for c in counts if c == expected)
    print(f"  level count as sysfs's: {agree} of {len(counts)}")
    print("\nper level over the sweeps:   median  min..max  spread")
    for name, found in sorted(by_level.items()):
        sizes = [l["size_bytes"] for l in found if l.get("size_bytes")]
        ns = [l["latency_ns"] for l in found]
        print(f"  {name} ({len(found)} of {len(sweeps)} sweeps)")
        if sizes:
            print(f"    capacity bytes {spread(sizes)}")
        print(f"    latency ns     {spread(ns)}")
    print("\ncapacity bounds (what every repeat read: at_least..at_most) per sweep:")
    held = check_bounds([result.get("detection") for result, _ in sweeps])
    print(f"  issue 27's sweep criteria: level count {agree} of {len(counts)} as sysfs's; "
          f"bounds checks {'hold' if held else 'fail'}")
    for label, values in (("linesize line_bytes", lines), ("assoc L1 ways", ways)):
        got = [v for v, _ in values]
        passes = [r for _, r in values]
        mode = statistics.mode(got) if got else None
        same = sum(1 for v in got if v is not None and v == mode)
        print(f"\n{label}: {got} -> {same} of {len(got)} agree on {mode}")
        if any(passes):
            print(f"  per-pass readings: {passes}")


def body(v):
    """A command's JSON result, inside an envelope or not."""
    if isinstance(v, dict) and isinstance(v.get("result"), dict):
        return v["result"]
    return v


def readings_main():
    """Readings from independent evidence (issue 27): linesize x10, tlb x5,
    mlp x3, run back to back. Prints each run's answer and the per-pass
    readings, and checks what they must never say: a line other than the
    one most runs read "agreed", an L1 dTLB away from CPUID's count by more
    than 10%, parallelism above the chain count, or a level with no single
    verdict."""
    parser = argparse.ArgumentParser(description="memlat readings stability")
    parser.add_argument("--memlat", default="target/release/memlat")
    parser.add_argument("--linesize-runs", type=int, default=10)
    parser.add_argument("--tlb-runs", type=int, default=5)
    parser.add_argument("--mlp-runs", type=int, default=3)
    args, _ = parser.parse_known_args()
    memlat = args.memlat

    print(f"\nlinesize x{args.linesize_runs}:")
    agreed = []
    for k in range(args.linesize_runs):
        r = body(run_json([memlat, "linesize", "--format", "json"]))
        if r is None:
            continue
        passes = [p.get("line_bytes") for p in r.get("readings", [])]
        agreed.append(r.get("line_bytes"))
        print(f"  run {k + 1}: line {r.get('line_bytes')} fetch {r.get('fetch_bytes')} "
              f"(passes {passes}, agree {r.get('agree')}, claimed {r.get('claimed_line_bytes')})")
    said = [v for v in agreed if v is not None]
    print(f"  agreed lines: {agreed} -> {said.count(64)} of {len(agreed)} say 64; "
          f"other agreed answers: {[v for v in said if v != 64]}")

    print(f"\ntlb x{args.tlb_runs} (4 KiB pages):")
    within = 0
    for k in range(args.tlb_runs):
        r = body(run_json([memlat, "tlb", "--format", "json"]))
        if r is None:
            continue
        page = next((p for p in r.get("page_bytes", []) if p.get("page_bytes") == 4096), None)
        if page is None:
            print(f"  run {k + 1}: no 4 KiB result")
            continue
        levels = page.get("levels", [])
        l1 = next((l for l in levels if l["name"] == "L1 dTLB"), None)
        claim = next((c["entries"] for c in page.get("cpuid", [])
                      if c.get("level") == 1 and c.get("kind") in ("data", "load", "unified")), None)
        off = None
        if l1 and claim:
            off = l1["entries"] / claim - 1
            within += abs(off) <= 0.10
        print(f"  run {k + 1}: levels {[(l['name'], l['entries']) for l in levels]}, "
              f"CPUID L1 {claim}, off {off if off is None else f'{off:+.1%}'}; "
              f"passes {page.get('readings')}")
    print(f"  L1 dTLB within 10% of CPUID: {within} of {args.tlb_runs}")

    print(f"\nmlp x{args.mlp_runs}:")
    for k in range(args.mlp_runs):
        r = body(run_json([memlat, "mlp", "--no-progress", "--format", "json"]))
        if r is None:
            continue
        for l in r.get("levels", []):
            over = [(p["chains"], round(p["parallelism"], 2)) for p in l["points"]
                    if p["parallelism"] > p["chains"] * 1.05]
            verdict = l.get("verdict")
            single = (verdict == "levels_off") == (l.get("saturation_chains") is not None)
            print(f"  run {k + 1} {l['name']}: {verdict} at {l.get('saturation_chains')} "
                  f"({l.get('saturation_parallelism', float('nan')):.1f} in flight), "
                  f"baseline measured again {l.get('baseline_remeasured', 0)}x; "
                  f"above the chain count: {over or 'none'}; one verdict: {single}")


if __name__ == "__main__":
    if "--readings-only" in sys.argv:
        sys.argv.remove("--readings-only")
        readings_main()
    elif "--sweeps-only" in sys.argv:
        sys.argv.remove("--sweeps-only")
        main()
    else:
        main()
        readings_main()
