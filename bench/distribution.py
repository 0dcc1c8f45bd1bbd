#!/usr/bin/env python3
"""`memlat run --distribution` against an independent rdtscp chase (a
benchmark for issue 20's goals, not a test; x86_64 only).

Builds bench/independent/rdtscp_chase.c with gcc in a temporary directory,
then runs ROUNDS interleaved rounds of:
  - the chase at 16 KiB (its timer's cost: its p50, an L1 load included),
  - the chase at 1 GiB (its p50, and its slow loads' spectrum peak),
  - memlat run -n 1G --pattern random --distribution (wall time, peak RSS),
  - memlat run -n 16K --pattern random --distribution,
and prints each round's figures and how they compare with the goals:
memlat's 1 GiB p50 within 15% of the chase's p50 less its timer cost; its
period within 3% of the chase's peak wherever that peak is 40x the band's
mean; no period at 16 KiB; 10 s or less and the buffer + 64 MiB or less.

    python3 bench/distribution.py [ROUNDS]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MEMLAT = os.environ.get("MEMLAT", os.path.join(HERE, "..", "target", "release", "memlat"))
GIB = 1 << 30


def build_chase(tmp):
    exe = os.path.join(tmp, "rdtscp_chase")
    subprocess.run(["gcc", "-O2", "-o", exe, os.path.join(HERE, "independent", "rdtscp_chase.c"), "-lm"], check=True)
    return exe


def chase(exe, size, loads, group=1):
    out = subprocess.run([exe, str(size), str(loads), str(group)], check=True, capture_output=True, text=True).stdout
    return {k: float(v) for k, v in (kv.split("=") for kv in out.split() if not kv.startswith("end="))}


def memlat(size):
    """Runs memlat --distribution at `size`; (distribution, wall s, peak RSS MiB)."""
    start = time.monotonic()
    proc = subprocess.Popen([MEMLAT, "run", "-n", str(size), "--pattern", "random", "--distribution", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "memlat failed"
    return json.loads(out)["distribution"], time.monotonic() - start, usage.ru_maxrss / 1024.0


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_chase(tmp)
        met = {"p50": 0, "period": 0, "period_cases": 0, "null16k": 0, "time": 0, "memory": 0}
        for r in range(rounds):
            timer_ns = chase(exe, 16 << 10, 2_000_000)["p50_ns"]
            big = chase(exe, GIB, 2_000_000)
            reference = big["p50_ns"] - timer_ns
            d, wall, rss = memlat(GIB)
            d16, _, _ = memlat(16 << 10)
            p50 = d["percentiles_ns"]["p50"]
            stalls = d["periodic_stalls"]
            print(f"round {r}: chase timer {timer_ns:.2f} ns, 1 GiB p50 {big['p50_ns']:.1f} - timer = {reference:.1f} ns; "
                  f"memlat p50 {p50:.1f} ns ({(p50 / reference - 1) * 100:+.1f}%), timer {d['timer_overhead_ns']:.2f} ns")
            print(f"         chase peak {big['period_ns']:.1f} ns at {big['peak_over_mean']:.0f}x the mean; memlat period "
                  f"{stalls['period_ns'] if stalls else None} (strength {stalls['strength'] if stalls else 0:.0f}); "
                  f"16 KiB stalls {d16['periodic_stalls']}; {wall:.2f} s, {rss:.0f} MiB RSS (buffer 1024)")
            met["p50"] += abs(p50 / reference - 1) <= 0.15
            if big["peak_over_mean"] >= 40:
                met["period_cases"] += 1
                met["period"] += bool(stalls) and abs(stalls["period_ns"] / big["period_ns"] - 1) <= 0.03
            met["null16k"] += d16["periodic_stalls"] is None
            met["time"] += wall <= 10
            met["memory"] += rss <= 1024 + 64
        print(f"goals met over {rounds} rounds: p50 within 15%: {met['p50']}; period within 3%: {met['period']} of "
              f"{met['period_cases']} with a clear peak; no period at 16 KiB: {met['null16k']}; "
              f"10 s or less: {met['time']}; buffer + 64 MiB or less: {met['memory']}")


if __name__ == "__main__":
    main()
