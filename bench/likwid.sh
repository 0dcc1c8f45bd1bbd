#!/usr/bin/env bash
# memlat's bandwidth kernels beside likwid-bench's, and the timings issue 38
# asks for (a benchmark, not a test: machines are noisy, so it interleaves
# rounds and keeps the best of each).
#
#   bash bench/likwid.sh [ROUNDS]        # default 3 rounds
#   MEMLAT=/path/to/memlat bash bench/likwid.sh
#
# Per round: `memlat bandwidth --sizes 16K,128K,1G --threads 1` with the
# default (widest) vectors and with `--vectors avx2`, then likwid-bench's
# load/store kernels of the same widths (`-w S0:SIZE:1`), when likwid-bench
# is installed. Then `run -n 1G` (stride and random) and the default sweep,
# timed by /usr/bin/time (wall seconds, peak RSS). The load average is
# printed beside every round: compare figures within one run only.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
memlat=${MEMLAT:-$here/target/release/memlat}
rounds=${1:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

wide=avx2
grep -qw avx512f /proc/cpuinfo && wide=avx512
have_likwid=0
if command -v likwid-bench >/dev/null; then
    # A likwid-bench that cannot start says why once, rather than leaving
    # every ratio blank. One unpacked from a .deb elsewhere looks for its
    # access daemon with `which likwid-accessD` (Debian puts it in
    # /usr/sbin), even for likwid-bench: with it on PATH it runs.
    if probe=$(likwid-bench -t load -w S0:16kB:1 2>&1); then
        have_likwid=1
    else
        echo "likwid-bench does not run here: $(echo "$probe" | grep -m1 -i error || echo "$probe" | head -1)" >&2
        echo "$probe" | grep -q accessD && echo "  (put the directory holding likwid-accessD on PATH)" >&2
    fi
fi

for r in $(seq "$rounds"); do
    echo "round $r: $(uptime | sed 's/.*load/load/')" >&2
    "$memlat" bandwidth --sizes 16K,128K,1G --threads 1 --format json -o "$out/m-default-$r.json" >/dev/null 2>&1
    "$memlat" bandwidth --sizes 16K,128K,1G --threads 1 --vectors avx2 --format json -o "$out/m-avx2-$r.json" >/dev/null 2>&1
    if [ "$have_likwid" = 1 ]; then
        for w in $wide avx2; do
            suffix=_$w; [ "$w" = avx2 ] && suffix=_avx
            for op in load store; do
                for s in 16kB 128kB 1GB; do
                    # Bounded, and shown as it comes: on the 16-vCPU Emerald
                    # Rapids guest each run took about 5 s (a round a minute).
                    mbs=$({ timeout 60 likwid-bench -t "$op$suffix" -w "S0:$s:1" 2>/dev/null || true; } | awk '/^MByte\/s:/ {print $2}')
                    echo "$w $op $s ${mbs:-nan}" >>"$out/l-$r.txt"
                    echo "  likwid-bench $op$suffix $s: ${mbs:-nan} MB/s" >&2
                done
            done
        done
    fi
done

python3 - "$out" "$rounds" "$wide" "$have_likwid" <<'PY'
import json, math, sys
out, rounds, wide, have = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
sizes = {16 << 10: "16kB", 128 << 10: "128kB", 1 << 30: "1GB"}
def memlat(kind):
    best, ghz, kernel = {}, [], "?"
    for r in range(1, rounds + 1):
        try:
            d = json.load(open(f"{out}/m-{kind}-{r}.json"))
        except (OSError, ValueError):
            continue
        kernel = d.get("isa_kernel", kernel)
        if d.get("clock_ghz"):
            ghz.append(d["clock_ghz"])
        for p in d["points"]:
            for op, key in (("load", "read_gb_per_s"), ("store", "write_gb_per_s")):
                k = (op, sizes.get(p["size_bytes"], p["size_bytes"]))
                best[k] = max(best.get(k, 0.0), p[key])
    return best, (max(ghz) if ghz else None), kernel
def likwid(width):
    best = {}
    for r in range(1, rounds + 1):
        try:
            lines = open(f"{out}/l-{r}.txt").read().split("\n")
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) == 4 and f[0] == width and f[3] != "nan":
                best[(f[1], f[2])] = max(best.get((f[1], f[2]), 0.0), float(f[3]) / 1000)
    return best
print(f"best of {rounds} interleaved rounds, 1 thread, GB/s (10^9 B/s); B/cycle at memlat's clock estimate")
print(f"{'vectors':8} {'op':6} {'size':6} {'memlat':>8} {'B/cycle':>8} {'likwid':>8} {'ratio':>6}")
for kind, width in (("default", wide), ("avx2", "avx2")):
    m, ghz, kernel = memlat(kind)
    l = likwid(width) if have else {}
    for op in ("load", "store"):
        for s in ("16kB", "128kB", "1GB"):
            mv = m.get((op, s))
            lv = l.get((op, s))
            bpc = f"{mv / ghz:8.1f}" if mv and ghz else f"{'-':>8}"
            ratio = f"{mv / lv:6.2f}" if mv and lv else f"{'-':>6}"
            lvs = f"{lv:8.1f}" if lv else f"{'-':>8}"
            mvs = f"{mv:8.1f}" if mv else f"{'-':>8}"
            print(f"{kernel:8} {op:6} {s:6} {mvs} {bpc} {lvs} {ratio}")
    if ghz:
        print(f"  ({kernel}: core clock {ghz:.3f} GHz, memlat's estimate, fastest of the rounds)")
if not have:
    print("likwid-bench is not installed or does not run here: no ratios (apt-get install likwid)")
PY

echo
echo "timings (wall s, max RSS MiB), $(uptime | sed 's/.*load/load/')"
timed() {
    # Wall seconds and the child's peak RSS in KiB; Python's rusage where
    # GNU time is not installed (container images often lack it).
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "%e %M" -o "$out/time" "$memlat" "$@" >/dev/null 2>&1 || true
    else
        python3 -c 'import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"{time.monotonic() - t:.2f}", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$out/time" "$memlat" "$@" >"$out/time" || true
    fi
    read -r wall rss <"$out/time" || { wall=nan; rss=0; }
    printf '%-44s %6.2f s %7.0f MiB\n' "memlat $*" "$wall" "$((rss / 1024))"
}
for r in $(seq "$rounds"); do
    timed run -n 1G
    timed run -n 1G --pattern random
    timed sweep --no-progress
done
