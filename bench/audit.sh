#!/usr/bin/env bash
# Replays the hostile-input audit of issue 22 against a memlat build and
# prints, per class, how many cases behaved: exit 2 with one clear line (or
# 130 where interrupted), no result lost, no panic, no hang past the time
# allowed, no more than 300 MiB. Register-state cases need the debug build
# (only it reads the test-only MSR_ROOT/STATE_DIR overrides).
#
# usage: bash bench/audit.sh [RELEASE_BINARY] [DEBUG_BINARY]
set -u
M=$(realpath "${1:-target/release/memlat}")
D=$(realpath "${2:-target/debug/memlat}")
FIX=$(realpath "$(dirname "$0")/../tests/fixtures/curves/amd-epyc-zen3-fc-thp-b.json")
W=$(mktemp -d)
cd "$W" || exit 1
declare -A pass fail
# check CLASS WANT_RC SECONDS -- command...: the exit code, time and RSS.
check() {
  local class=$1 want=$2 limit=$3; shift 4
  local start rc rss
  start=$(date +%s.%N)
  /usr/bin/time -f "%M" -o rss.txt timeout "$((limit + 5))" "$@" >out.txt 2>err.txt </dev/null
  rc=$?
  rss=$(tail -1 rss.txt 2>/dev/null || echo 0)
  local took
  took=$(echo "$(date +%s.%N) - $start" | bc)
  if [ "$rc" = "$want" ] && ! grep -q "panicked" err.txt && [ "${rss:-0}" -lt 307200 ] \
    && (($(echo "$took < $limit" | bc))); then
    pass[$class]=$((${pass[$class]:-0} + 1))
  else
    fail[$class]=$((${fail[$class]:-0} + 1))
    echo "  FAIL [$class] rc=$rc (want $want) ${took}s ${rss}KiB: $* :: $(head -c 200 err.txt)"
  fi
}
same() { # CLASS FILE HASH: the file is byte-identical
  if [ "$(md5sum <"$2")" = "$3" ]; then pass[$1]=$((${pass[$1]:-0} + 1)); else
    fail[$1]=$((${fail[$1]:-0} + 1)); echo "  FAIL [$1] $2 changed"; fi
}

cp "$FIX" r.json
h=$(md5sum <r.json)
echo "== results destroyed or measured work thrown away"
check results 2 2 -- "$M" sweep --resume r.json -o r.json; same results r.json "$h"
check results 2 2 -- "$M" sweep --json X -o X
check results 2 2 -- "$M" sweep --json X --csv X
check results 2 2 -- "$M" sweep --csv X.svg --plot X.svg
for c in mlp loaded c2c numa tlb; do check results 2 2 -- "$M" $c --plot /nonexistent/x.svg; done
check results 2 2 -- "$M" plot r.json -o /nonexistent/x.svg
check results 2 2 -- "$M" detect --from 2G --to 64G --ratio 12
check results 2 2 -- "$M" detect r.json -o r.json; same results r.json "$h"
check results 2 2 -- "$M" report r.json -o r.json; same results r.json "$h"

echo "== register state"
mkdir -p fake/cpu/0 state
python3 -c "
import os; f=open('fake/cpu/0/msr','wb'); f.truncate(0xC0011022+64)
for m in (0x1A0,0x1A4,0xC0000108,0xC0011022): f.seek(m); f.write((0x40).to_bytes(8,'little'))"
printf 'root %s\n0 0x0 0x4141414141414141\n' "$W/victim" >state/prefetchers.state
echo precious >victim
check registers 1 2 -- env MEMLAT_MSR_ROOT="$W/fake/cpu" MEMLAT_STATE_DIR="$W/state" "$D" prefetchers --restore
[ "$(cat victim)" = precious ] && pass[registers]=$((${pass[registers]:-0} + 1)) || { fail[registers]=$((${fail[registers]:-0} + 1)); echo "  FAIL victim written"; }
printf 'garbage $$$\n' >state/prefetchers.state
check registers 2 2 -- env MEMLAT_MSR_ROOT="$W/fake/cpu" MEMLAT_STATE_DIR="$W/state" "$D" run -n 16K --prefetchers off
grep -q garbage state/prefetchers.state && pass[registers]=$((${pass[registers]:-0} + 1)) || { fail[registers]=$((${fail[registers]:-0} + 1)); echo "  FAIL corrupt state overwritten"; }
# A release build ignores the overrides: its state lives in /run/memlat (root) or a private runtime dir.
MEMLAT_STATE_DIR=/tmp "$M" prefetchers >out.txt 2>&1
grep -q "/tmp/prefetchers.state" out.txt && { fail[registers]=$((${fail[registers]:-0} + 1)); echo "  FAIL release read MEMLAT_STATE_DIR"; } || pass[registers]=$((${pass[registers]:-0} + 1))

echo "== files as an attack surface"
mkfifo fifo
check files 2 2 -- "$M" detect /dev/zero
check files 2 2 -- "$M" report /dev/zero
check files 2 2 -- "$M" merge /dev/zero
check files 2 2 -- "$M" detect fifo
check files 2 2 -- "$M" plot fifo -o x.svg
check files 2 2 -- "$M" sweep --resume fifo
check files 2 2 -- "$M" levels --machine /dev/zero
mkdir -p loop/a && cp "$FIX" loop/a/s.json && ln -s .. loop/a/up
check files 0 3 -- "$M" merge loop -o m.json
python3 -c "import json; d=json.load(open('m.json')); assert len(d['results'])==1" 2>/dev/null \
  && pass[files]=$((${pass[files]:-0} + 1)) || { fail[files]=$((${fail[files]:-0} + 1)); echo "  FAIL merge followed the loop"; }
python3 - "$FIX" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["host"]["hostname"] = "=cmd|' /C calc'!A0"
d["host"]["cpu_model"] = "<script>alert(1)</script>\n# heading"
json.dump(d, open("evil.json", "w"))
PY
"$M" merge evil.json -o evil.csv 2>/dev/null
! grep -qE '(^|,)"?[=+@]' evil.csv && pass[files]=$((${pass[files]:-0} + 1)) || { fail[files]=$((${fail[files]:-0} + 1)); echo "  FAIL formula in CSV"; }
"$M" report evil.json --format markdown >evil.md 2>/dev/null
! grep -q "<script" evil.md && pass[files]=$((${pass[files]:-0} + 1)) || { fail[files]=$((${fail[files]:-0} + 1)); echo "  FAIL <script> in Markdown"; }
"$M" compare evil.json r.json --format markdown >evil2.md 2>/dev/null
! grep -q "<script" evil2.md && pass[files]=$((${pass[files]:-0} + 1)) || { fail[files]=$((${fail[files]:-0} + 1)); echo "  FAIL <script> in compare Markdown"; }
mkdir -p ww && chmod 1777 ww && ln -s "$W/victim" "ww/.r.html.$$.tmp"
"$M" report r.json -o ww/r.html 2>/dev/null
[ "$(cat victim)" = precious ] && pass[files]=$((${pass[files]:-0} + 1)) || { fail[files]=$((${fail[files]:-0} + 1)); echo "  FAIL planted link followed"; }

echo "== accepted but wrong"
python3 - "$FIX" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for name, edit in {
    "bogus": lambda d: d.update(kind="bogus"),
    "s999": lambda d: d.update(schema_version=999),
    "nosizes": lambda d: d["config"].update(sizes=[]),
    "noseries": lambda d: d["config"].update(series=[]),
    "huge": lambda d: d["config"].update(sizes=d["config"]["sizes"] + [16 << 40]),
}.items():
    e = json.loads(json.dumps(d)); edit(e); json.dump(e, open(name + ".json", "w"))
PY
check wrong 2 2 -- "$M" detect bogus.json
check wrong 2 2 -- "$M" compare bogus.json r.json
check wrong 2 2 -- "$M" detect s999.json
check wrong 2 2 -- "$M" sweep --resume nosizes.json
check wrong 2 2 -- "$M" sweep --resume noseries.json
check wrong 2 2 -- "$M" sweep --resume huge.json
grep -q -- "--to" err.txt && { fail[wrong]=$((${fail[wrong]:-0} + 1)); echo "  FAIL blamed --to"; } || pass[wrong]=$((${pass[wrong]:-0} + 1))
check wrong 2 2 -- "$M" run -n 16K --ghz 20
check wrong 2 2 -- "$M" run -n 16K --ghz 0.01
check wrong 2 2 -- "$M" c2c --cpus 0,0
for j in null '[]' 42; do echo "$j" >x.json; check wrong 2 2 -- "$M" report x.json; done
check wrong 2 2 -- sh -c "'$M' events > /dev/full"
check wrong 2 2 -- sh -c "'$M' prefetchers > /dev/full"
check wrong 0 30 -- "$M" tlb --page-sizes 4k,4k --max-pages 16
"$M" run -n 16K --repeats 1 --format json -o one.json 2>/dev/null
"$M" compare one.json one.json --format json >cmp.json 2>/dev/null
python3 -c "import json; r=json.load(open('cmp.json'))['rows']; assert all(x['too_few_repeats'] and not x['significant'] for x in r)" \
  && pass[wrong]=$((${pass[wrong]:-0} + 1)) || { fail[wrong]=$((${fail[wrong]:-0} + 1)); echo "  FAIL compare with one repeat"; }
( "$M" detect --format json >d.json 2>/dev/null; echo $? >d.rc ) &
sleep 2; pkill -INT -f "memlat detect --format json"; wait
[ "$(cat d.rc)" = 130 ] && pass[wrong]=$((${pass[wrong]:-0} + 1)) || { fail[wrong]=$((${fail[wrong]:-0} + 1)); echo "  FAIL detect Ctrl-C rc=$(cat d.rc)"; }

echo
echo "class       passed  failed"
for c in results registers files wrong; do printf '%-10s %7d %7d\n' "$c" "${pass[$c]:-0}" "${fail[$c]:-0}"; done
rm -rf "$W"
