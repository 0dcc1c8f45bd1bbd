#!/usr/bin/env bash
# Benchmark (not a test): ns and cycles per load at 16K, 256K, 8M and 1G with
# a random chain, for the asm pointer kernel, the portable (volatile-read)
# kernel and the index kernel, plus the portable/asm ratio at each size.
# Machines are noisy: compare figures within one run of this script.
#   bash bench/latency.sh            # default sizes
#   SIZES=16K,1M bash bench/latency.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
sizes=${SIZES:-16K,256K,8M,1G}
out=$(mktemp -d)
for kernel in pointer portable index; do
  echo "== kernel $kernel"
  ./target/release/memlat --sizes "$sizes" --kernel "$kernel" --repeats 5 \
    --format json -o "$out/$kernel.json" 2>/dev/null
  python3 - "$out/$kernel.json" <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["points"]:
    print(f"{p['size']:>12} B  {p['ns_per_load']['median']:8.2f} ns  {p['cycles_per_load']['median']:7.2f} cycles"
          f"  (ns min {p['ns_per_load']['min']:.2f} max {p['ns_per_load']['max']:.2f}, {p['cycle_source']}, pages {p['page_backing']['obtained']})")
PY
done
echo "== portable / pointer (median ns)"
python3 - "$out/pointer.json" "$out/portable.json" <<'PY'
import json, sys
asm, portable = (json.load(open(f))["points"] for f in sys.argv[1:3])
for a, p in zip(asm, portable):
    ratio = p["ns_per_load"]["median"] / a["ns_per_load"]["median"]
    print(f"{a['size']:>12} B  {ratio:6.3f}")
PY
