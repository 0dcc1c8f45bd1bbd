#!/usr/bin/env bash
# Makes every picture in docs/images from real runs on this machine, and
# docs/images/README.md saying which machine made them and when:
#
#   bash docs/images/make.sh
#
# Needs: cargo, python3 with memlat's module and matplotlib
# (pip install './python[plot,pandas]'), and chromium for the two report
# screenshots. Measures for about 3-4 minutes; a picture it cannot make is an
# error, not an old picture left in place.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=$root/docs/images

cargo build --release --quiet
# Every picture is made again: none is left over from an earlier run.
rm -f "$out"/*.png
memlat=$root/target/release/memlat
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

step() { printf '== %s\n' "$*" >&2; }

# A page as headless Chromium draws it, 1200 px wide, as tall as TALL.
screenshot() {
  local page=$1 png=$2 tall=$3
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size="1200,$tall" --screenshot="$png" "file://$page" 2>/dev/null
  test -s "$png"
}

step "sweep (stride 64 and random, 1 KiB to flat DRAM)"
"$memlat" sweep --csv sweep.csv --json sweep.json --plot "$out/sweep.png" --no-progress --force >/dev/null
step "levels and detect, then the report of all three"
"$memlat" levels --format json -o levels.json >/dev/null
"$memlat" detect sweep.json --format json -o detect.json
"$memlat" report sweep.json levels.json detect.json -o report.html
screenshot "$work/report.html" "$out/report-screenshot.png" 1600

step "bandwidth: per level, and by size"
"$memlat" bandwidth --plot "$out/bandwidth.png" --no-progress >/dev/null
"$memlat" bandwidth --sweep --plot "$out/bandwidth-sweep.png" --no-progress >/dev/null
step "c2c, tlb, mlp, loaded"
"$memlat" c2c --method cas --plot "$out/c2c.png" --no-progress >/dev/null
"$memlat" tlb --plot "$out/tlb.png" --no-progress >/dev/null
"$memlat" mlp --plot "$out/mlp.png" --no-progress >/dev/null
"$memlat" loaded --plot "$out/loaded.png" --no-progress >/dev/null
step "the latency distribution at 1 GiB and at 16 KiB"
"$memlat" run -n 1G --pattern random --distribution --plot "$out/distribution-1g.png" >/dev/null
"$memlat" run -n 16K --pattern random --distribution --plot "$out/distribution-16k.png" >/dev/null

step "characterize --quick and its report"
"$memlat" characterize --quick -o char/ >/dev/null
screenshot "$work/char/report.html" "$out/characterize-report.png" 2400

step "Python: the README's example"
python3 "$root/python/examples/sweep.py" "$out/python-sweep.png"

step "seed 004's notebook, verbatim, on memlat run"
notebook=$root/../shared/clients/seed004-notebook.py
PATH="$root/target/release:$PATH" python3 "$notebook" "memlat run" "$work/notebook" >/dev/null || true
# The notebook saves its plots in order: cycles first, bytes per cycle last
# (an events plot between them only where the PMU counts L1 misses).
plots=("$work"/notebook/plot*.png)
((${#plots[@]} >= 2)) || { echo "the notebook drew ${#plots[@]} plots" >&2; exit 1; }
cp "$work/notebook/plot0.png" "$out/notebook-cycles-per-access.png"
cp "$(ls "$work"/notebook/plot*.png | sort -V | tail -1)" "$out/notebook-bytes-per-cycle.png"

step "docs/images/README.md"
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
hypervisor=$(grep -q '^flags.* hypervisor' /proc/cpuinfo && echo "a virtual machine" || echo "bare metal")
cat > "$out/README.md" <<EOF
# The pictures in docs/

Every PNG here is made by one command from real runs, on one machine:

    bash docs/images/make.sh

Made $(date -u +%Y-%m-%dT%H:%MZ) on ${model:-an unnamed CPU} ($(nproc) CPUs
memlat may use, ${hypervisor}, Linux $(uname -r)), memlat $("$memlat" --version | cut -d' ' -f2)
at commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- src || echo ' with uncommitted changes to src/').

| picture | made by |
| --- | --- |
| sweep.png | \`memlat sweep --plot\` |
| report-screenshot.png | \`memlat report\` of a sweep, \`memlat levels\` and \`memlat detect\`, in headless Chromium |
| bandwidth.png, bandwidth-sweep.png | \`memlat bandwidth --plot\`, and with \`--sweep\` |
| c2c.png | \`memlat c2c --method cas --plot\` |
| tlb.png, mlp.png, loaded.png | \`memlat tlb\`, \`mlp\` and \`loaded\` with \`--plot\` |
| distribution-1g.png, distribution-16k.png | \`memlat run -n 1G\` and \`-n 16K --pattern random --distribution --plot\` |
| characterize-report.png | \`memlat characterize --quick\`'s report, in headless Chromium |
| python-sweep.png | \`python3 python/examples/sweep.py\` |
| notebook-*.png | seed 004's notebook code, verbatim, on \`memlat run\` (../shared/clients/seed004-notebook.py) |

Figures quoted in the docs' text may come from other machines; each page says which.
EOF
step "done: $(ls "$out"/*.png | wc -l) pictures in docs/images"
