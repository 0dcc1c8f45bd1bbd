#!/usr/bin/env bash
# Replays the hostile-input audits of issues 22, 28 and 37 against a memlat
# build and prints, per class, how many cases behaved: exit 2 with one clear
# line (or 130 where interrupted), no result lost, no panic, no hang past the
# time allowed, no more than 300 MiB. Register-state cases need the debug
# build (only it reads the test-only MSR_ROOT/STATE_DIR overrides). The
# full-disk cases mount a small tmpfs and need root (skipped, said, without).
#
# usage: bash bench/audit.sh [RELEASE_BINARY] [DEBUG_BINARY]
set -u
M=$(realpath "${1:-target/release/memlat}")
D=$(realpath "${2:-target/debug/memlat}")
FIX=$(realpath "$(dirname "$0")/../tests/fixtures/curves/amd-epyc-zen3-fc-thp-b.json")
BENCH=$(realpath "$(dirname "$0")")
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

echo "== issue 28"
ok() { pass[$1]=$((${pass[$1]:-0} + 1)); }
ko() { fail[$1]=$((${fail[$1]:-0} + 1)); echo "  FAIL [$1] $2"; }
# refuse NAME -- command...: exit 2 within 2 s, no panic, under 300 MiB, and
# exactly one error line, which names NAME (a flag or a file).
refuse() {
  local name=$1; shift 2
  check "${RCLASS:-refusals}" 2 2 -- "$@"
  if [ "$(grep -c '^error:' err.txt)" = 1 ] && grep '^error:' err.txt | grep -qF -- "$name"; then ok refusals; else
    ko refusals "one line naming $name: $* :: $(head -c 200 err.txt)"; fi
}
SIZES="--repeats 1 --sample-ms 1"
ID=$("$M" run -n 16K $SIZES --format json 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)['host']['machine_id'])")
this_machine() { # FILE EDIT: the fixture as a complete sweep of this machine of today, then EDIT (python)
  "$M" run -n 16K $SIZES --format json 2>/dev/null >host.json
  python3 - "$FIX" "$1" "$2" <<'PY'
import json, sys, time
d = json.load(open(sys.argv[1]))
d["host"] = json.load(open("host.json"))["host"]
d["complete"] = True
d["started"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}

echo "-- 1: --plateaus and --machine files in the same-path check (no data loss)"
cp "$FIX" v.json; hv=$(md5sum <v.json)
cp "$(dirname "$FIX")/../../../examples/machine-zen4-vm.txt" p.txt; hp=$(md5sum <p.txt)
refuse v.json -- "$M" bandwidth --plateaus v.json -o v.json; same loss v.json "$hv"
refuse v.json -- "$M" mlp --plateaus v.json -o v.json; same loss v.json "$hv"
refuse v.json -- "$M" --plateaus v.json -o v.json; same loss v.json "$hv"
refuse p.txt -- "$M" levels --machine p.txt --csv p.txt; same loss p.txt "$hp"
refuse p.txt -- "$M" assoc --machine p.txt -o p.txt; same loss p.txt "$hp"
refuse p.txt -- "$M" linesize --machine p.txt -o p.txt; same loss p.txt "$hp"

echo "-- 2, 3: links planted in a 1777 directory, FIFOs (nothing created through a link, no hang)"
mkdir -p pub && chmod 1777 pub && mkfifo pub/fifo
planted() { # FILE: a dangling link at pub/FILE to $W/created-FILE
  rm -f "pub/$1"; ln -s "$W/created-$1" "pub/$1"
}
gone() { [ ! -e "$W/created-$1" ] && ok links || ko links "created-$1 exists"; }
planted o.json; refuse pub/o.json -- "$M" sweep --to 64K --no-progress --json pub/o.json; gone o.json
planted o.csv; refuse pub/o.csv -- "$M" sweep --to 64K --no-progress --csv pub/o.csv; gone o.csv
mkdir -p pub/ch && planted ch/sweep.json
refuse sweep.json -- "$M" characterize --tiny --stages sweep -o pub/ch; gone ch/sweep.json
planted ch2; refuse pub/ch2 -- "$M" characterize --tiny --stages doctor -o pub/ch2; gone ch2
for c in "run -n 16K $SIZES" "bandwidth --sizes 16K --threads 1 $SIZES" "plot r.json" "report r.json" "merge r.json" "compare r.json r.json" "detect r.json"; do
  planted out.x; refuse pub/out.x -- "$M" $c -o pub/out.x; gone out.x
done
planted d.svg; refuse pub/d.svg -- "$M" run -n 16K $SIZES --distribution --plot pub/d.svg; gone d.svg
rm -f pub/d.txt && ln -s "$W/pub/fifo" pub/d.txt
# FIFOs: timed under "hangs" (2 s at most), their one line under "refusals".
RCLASS=hangs refuse pub/d.txt -- "$M" detect r.json -o pub/d.txt
for i in 1 2 3 4 5 6 7; do RCLASS=hangs refuse fifo -- "$M" detect r.json -o pub/fifo; done
for c in "sweep --to 16K --no-progress --json" "run -n 16K $SIZES -o" "bandwidth --sizes 16K --threads 1 $SIZES -o" "report r.json -o" "merge r.json -o" "compare r.json r.json -o"; do
  RCLASS=hangs refuse fifo -- "$M" $c pub/fifo
done
# The remembered cache is written only after a sweep that ends flat at DRAM,
# which a noisy guest may not reach in bounded time: its replace() over a
# planted link and FIFO is the unit test outputs_are_never_written_through_a_link_or_into_a_fifo.

echo "-- 4: a dead end after a full disk, Ctrl-C or SIGKILL before the first point"
if [ "$(id -u)" = 0 ] && mkdir -p full && mount -t tmpfs -o size=1M tmpfs full; then
  dd if=/dev/zero of=full/filler bs=4k 2>/dev/null
  check deadends 1 10 -- "$M" sweep --to 64K --no-progress --json full/s.json
  rm -f full/filler
  check deadends 0 30 -- "$M" sweep --to 64K --no-progress --json full/s.json
  # Full mid-sweep: leave about 40 KiB; the error says the file keeps its points and --resume continues.
  rm -f full/s.json; dd if=/dev/zero of=full/filler bs=4k count=$((1024 / 4 - 10)) 2>/dev/null
  check deadends 1 60 -- "$M" sweep --to 256K --no-progress --json full/m.json
  grep -q -- "--resume full/m.json" err.txt && ok deadends || ko deadends "mid-sweep: no --resume advice: $(tail -c 300 err.txt)"
  rm -f full/filler
  check deadends 0 60 -- "$M" sweep --resume full/m.json --no-progress
  umount full
else
  echo "  skipped: the full-disk cases mount a tmpfs and need root"
fi
# Killed at once, or a little later: either the file holds no point and the
# same command works, or it holds points and --resume continues them. SIGINT
# is set back to its default (a script's background job ignores it).
for sig in INT KILL; do
  for delay in 0 0.02 0.05 0.1; do
    rm -f k.json k.csv
    env --default-signal=INT "$M" sweep --to 64K --no-progress --json k.json --csv k.csv >/dev/null 2>&1 &
    p=$!; sleep $delay; kill -$sig $p; wait $p 2>/dev/null
    n=$(python3 -c "import json; print(len(json.load(open('k.json'))['points']))" 2>/dev/null || echo 0)
    if [ "$n" = 0 ]; then
      check deadends 0 30 -- "$M" sweep --to 64K --no-progress --json k.json --csv k.csv
    else
      check deadends 0 30 -- "$M" sweep --resume k.json --no-progress
    fi
  done
done
# A temporary a kill -9 left behind is removed by the next run.
touch .k.json.4194304.00000000000000aa.tmp
check deadends 0 30 -- "$M" sweep --to 16K --no-progress --force --json k.json
[ ! -e .k.json.4194304.00000000000000aa.tmp ] && ok deadends || ko deadends "stale temporary kept"

echo "-- 5: files the user never named, or named without --force"
"$M" sweep --to 16K --no-progress --json pc.json >/dev/null 2>&1; hc=$(md5sum <pc.json)
refuse pc.json -- "$M" sweep --to 16K --no-progress --force --plot pc.svg; same loss pc.json "$hc"
refuse pc.json -- "$M" sweep --to 16K --no-progress --plot pc.svg; same loss pc.json "$hc"

echo "-- 6: a failing stderr"
check panics 0 30 -- sh -c "'$M' sweep --to 16K --no-progress --json x6.json 2>/dev/full"
sh -c "'$M' sweep --to 64K --no-progress --json y6.json 2>&1 | head -1" >/dev/null
python3 -c "import json; assert json.load(open('y6.json'))['complete']" 2>/dev/null && ok panics || ko panics "y6.json incomplete"
sh -c "'$M' sweep --to 64K --no-progress --json y7.json 2>&1; echo \$? >rc7" | head -1 >/dev/null
[ "$(cat rc7)" != 101 ] && ok panics || ko panics "exit 101 with stderr into head"

echo "-- 7: Ctrl-C during refinement is not complete"
"$M" sweep --to 8M --no-progress --json ref.json >/dev/null 2>&1 &
p=$!; cut=0
for _ in $(seq 600); do
  if python3 -c "import json,sys; d=json.load(open('ref.json')); sys.exit(0 if d['config'].get('refined_sizes') else 1)" 2>/dev/null; then
    kill -INT $p; cut=1; break; fi
  sleep 0.1
done
wait $p; rc=$?
if [ $cut = 1 ]; then
  [ $rc = 130 ] && python3 -c "import json; assert not json.load(open('ref.json'))['complete']" && ok wrong || ko wrong "cut refinement rc=$rc complete=$(grep -o '"complete": [a-z]*' ref.json)"
else echo "  skipped: this sweep refined no size before it ended"; fi

echo "-- 8: the remembered cache and --plateaus FILE are checked"
this_machine good.json ""
this_machine foreign.json 'd["host"]["machine_id"] = "0000000000000000"; d["host"]["cpu_model"] = "Other CPU"'
this_machine old.json 'd["complete"] = False; d["started"] = "1999-01-01T00:00:00Z"'
this_machine scaled.json 'd["points"] = [dict(m, size=m["size"] * 1024) for m in d["points"]]; d["config"]["sizes"] = [s * 1024 for s in d["config"]["sizes"]]'
for f in foreign old scaled; do refuse "--plateaus $f.json" -- "$M" bandwidth --threads 1 --plateaus $f.json $SIZES; done
if [ -n "$ID" ]; then
  mkdir -p c8/memlat && cp scaled.json "c8/memlat/sweep-$ID.json"
  check wrong 0 60 -- env XDG_CACHE_HOME="$W/c8" "$M" mlp --chains 1,2 $SIZES
  grep -q "probing" err.txt && ! grep -q "GiB\.\." err.txt && ok wrong || ko wrong "the scaled cache was used"
fi

echo "-- 9, 10: no flag silently dropped"
check wrong 0 20 -- "$M" run -n 16K --repeats 1 --distribution --distribution-ms 5000
grep -q -- "--distribution-ms 5000: timed" err.txt && ok wrong || ko wrong "the cap said nothing"
refuse --percentiles -- "$M" sweep --resume r.json --percentiles --no-progress

echo "-- 11: inputs bounded together; --max-input checked"
for i in 1 2 3; do python3 -c "import sys; sys.stdout.write('{\"k\":\"' + 'x' * (250 << 20) + '\"}')" >big$i.json; done
refuse "inputs together" -- "$M" merge big1.json big2.json big3.json -o big.json
refuse "inputs together" -- "$M" report big1.json big2.json big3.json
rm -f big*.json
refuse --max-input -- "$M" --max-input 17592186044416 detect r.json
check memory 2 2 -- sh -c "'$M' --max-input 1024 detect - </dev/zero"
check memory 0 5 -- "$M" --max-input 300 detect r.json

echo "-- 12: characterize after SIGKILL and SIGTERM"
"$M" characterize --tiny -o ck >/dev/null 2>&1 &
p=$!; sleep 2.5; kill -KILL $p; wait $p 2>/dev/null; sleep 1.5
check deadends 0 120 -- "$M" characterize --tiny -o ck
grep -q "done by the earlier run, kept" err.txt && [ -f ck/report.html ] && ok deadends || ko deadends "characterize rerun measured everything again"
"$M" characterize --tiny -o ct >/dev/null 2>&1 &
p=$!; sleep 2.5; kill -KILL $p; wait $p 2>/dev/null; sleep 1.5
check deadends 0 120 -- "$M" characterize --tiny --resume ct
[ -f ct/report.html ] && ok deadends || ko deadends "--resume wrote no report"
"$M" characterize --tiny -o cs >/dev/null 2>cs.err &
p=$!; sleep 2.5; kill -TERM $p; wait $p; rc=$?
[ $rc = 143 ] && [ -f cs/report.html ] && ok deadends || ko deadends "SIGTERM rc=$rc, report $(ls cs/report.html 2>&1)"

echo "-- 13: wording"
check wording 0 20 -- "$M" bandwidth --sizes 1 --threads 1 $SIZES
grep -q "256 B" out.txt && ! grep -q "8 B" out.txt && ok wording || ko wording "--sizes 1 label"
check wording 0 20 -- "$M" bandwidth --sizes 64K,64K --threads 1 $SIZES --format json
python3 -c "import json; p=json.load(open('out.txt'))['points']; assert len(p) == 1, p" 2>/dev/null && ok wording || ko wording "--sizes 64K,64K measured twice"
refuse "--max-input 0" -- "$M" detect --max-input 0 r.json
check wording 0 60 -- env -u HOME -u XDG_CACHE_HOME "$M" mlp --chains 1,2 $SIZES
grep -q "nothing is remembered without HOME" err.txt && ok wording || ko wording "HOME unset wording"
"$M" sweep --to 16K --no-progress --json pb.json >/dev/null 2>&1
refuse "--plot pb.svg" -- "$M" sweep --to 16K --no-progress --plot pb.svg
check wording 0 5 -- env -u XDG_RUNTIME_DIR setpriv --reuid=65534 --regid=65534 --clear-groups "$M" prefetchers
refuse --percentiles -- "$M" sweep --to 16K --percentiles --kernel index
mkdir -p ro && chmod 555 ro && chmod o+x "$W"
refuse memlat-results -- setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "cd '$W/ro' && exec '$M' sweep --to 16K --no-progress"
cp r.json 'a<b>.json'
"$M" compare 'a<b>.json' r.json --format markdown >cmp.md 2>/dev/null
# Markdown escapes `<` (which could open a tag) and keeps `>` (so `->` reads as written).
grep -q "a&lt;b>.json" cmp.md && ! grep -q "a<b>" cmp.md && ok wording || ko wording "compare cut a<b>.json"
echo "== issue 37"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
as_nobody() { "${NOBODY[@]}" "$@"; }
chmod o+x "$W"
if [ "$(id -u)" = 0 ]; then
  echo "-- 1: a heatmap's temporary, planted by another user while it measures"
  echo precious >secret
  for c in numa c2c; do
    "$M" $c --plot pub/h-$c.svg >/dev/null 2>&1 &
    p=$!; as_nobody ln -s "$W/secret" "pub/.$p.h-$c.svg"; wait $p
    [ "$(cat secret)" = precious ] && ok links || ko links "$c --plot wrote through pub/.$p.h-$c.svg"
    ls -a pub | grep -q '^\.memlat-' && ko links "$c left its private directory" || ok links
  done
  echo "-- 4: memlat-results (and any ancestor) planted in a shared working directory"
  mkdir -p victim4/sub
  as_nobody ln -s "$W/victim4" pub/memlat-results
  as_nobody ln -s "$W/victim4" pub/up
  RCLASS=links refuse --json -- sh -c "cd '$W/pub' && exec '$M' sweep --to 16K --no-progress $SIZES"
  RCLASS=links refuse --csv -- sh -c "cd '$W/pub' && exec '$M' levels --iterations 1 --plateaus probe"
  RCLASS=links refuse -o/--output -- "$M" run -n 16K $SIZES -o pub/up/sub/r.json
  RCLASS=links refuse -o/--output -- "$M" report r.json -o pub/up/r.html
  [ "$(find victim4 -mindepth 1 | wc -l)" = 1 ] && ok links || ko links "files created in victim4: $(find victim4 -mindepth 1)"
  echo "-- 5: the remembered store behind a link in a HOME root does not own"
  mkdir -p home/.cache/memlat victim5 && chown -R 65534 home && touch -d '30 days ago' victim5/sweep-20200101000000.json
  as_nobody ln -s "$W/victim5" "home/.cache/memlat/sweeps-$ID"
  check links 0 20 -- env -u XDG_CACHE_HOME HOME="$W/home" "$M" sweep --to 64K --no-progress $SIZES --json s5.json
  [ -f victim5/sweep-20200101000000.json ] && [ "$(ls victim5 | wc -l)" = 1 ] && ok links || ko links "victim5 changed: $(ls victim5)"
  # (Writing the store needs a sweep that ends flat at DRAM: the planted link at
  # any component is the unit test a_store_reached_through_another_users_link_is_left_alone.)
else
  echo "  (not root: the links another user plants are skipped)"
fi
echo "-- 6: a 234 MiB sweep through every reader: at most 4 times what it reads, under 1 GB"
python3 "$BENCH/big_sweep.py" big.json 235
BIG=$(stat -c %s big.json)
while read -r n cmd; do
  start=$(date +%s.%N)
  # shellcheck disable=SC2086 # the command's words
  /usr/bin/time -f "%M" -o rss.txt timeout 300 "$M" --max-input $((n * 256)) $cmd </dev/null >/dev/null 2>err.txt
  rc=$?
  took=$(echo "$(date +%s.%N) - $start" | bc)
  kib=$(tail -1 rss.txt)
  echo "  ${cmd%% *}: $((kib >> 10)) MiB peak, $(echo "scale=2; $kib * 1024 / ($n * $BIG)" | bc)x the $(((n * BIG) >> 20)) MiB read, $(printf %.1f "$took") s"
  if [ "$rc" = 0 ] && [ "$((kib * 1024))" -le "$((4 * n * BIG))" ] && [ "$kib" -lt 976562 ]; then ok memory; else
    ko memory "${cmd%% *} rc=$rc ${kib} KiB :: $(head -c 200 err.txt)"; fi
done <<EOF2
1 detect big.json
1 plot big.json -o big.svg
1 report big.json -o big.html
1 merge big.json -o bigm.json
2 compare big.json big.json -o big.txt
EOF2
rm -f big.json big.svg big.html bigm.json big.txt
echo "-- 2, 3: watch's -o: one run at a time, an earlier result kept without --force"
cp "$FIX" x.json; hx=$(md5sum <x.json)
refuse x.json -- "$M" watch --plateaus x.json -o x.json; same loss x.json "$hx"
refuse --force -- "$M" run -n 16K $SIZES -o x.json; same loss x.json "$hx"
refuse --force -- "$M" watch --duration 1s -o x.json; same loss x.json "$hx"
"$M" watch --plain --duration 4s --interval 200ms --plateaus probe -o w.jsonl >/dev/null 2>w1.err &
p=$!; sleep 1
refuse w.jsonl -- "$M" watch --duration 1s --force -o w.jsonl
grep -q "another memlat run" err.txt && ok loss || ko loss "second watch: $(cat err.txt)"
wait $p && grep -q '"summary"' w.jsonl && ok loss || ko loss "first watch lost its file: $(tail -1 w1.err)"
echo "-- 11: characterize --resume with a summary naming a file outside its directory"
mkdir -p c11 && python3 - "$(dirname "$FIX")/../hostile/bad_characterize_file_outside.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["complete"] = False; d["report"] = None
json.dump(d, open("c11/characterize.json", "w"))
PY
refuse "stages[0].file" -- "$M" characterize --quick --stages doctor --resume c11
[ ! -f c11/report.html ] && ok files || ko files "c11/report.html written"
echo "-- 14: the store: same second, junk sorting last, 10^5 entries"
mkdir -p c14/memlat/sweeps-$ID
python3 - "c14/memlat/sweeps-$ID" <<'PY'
import os, sys
d = sys.argv[1]
for k in range(100000):
    open(os.path.join(d, "junk-%06d" % k), "w").close()
for k in range(30):
    p = os.path.join(d, "sweep-999999999999%02d.json" % k); open(p, "w").write("{}")
    os.utime(p, (4102444800, 4102444800))
PY
check store 0 5 -- env XDG_CACHE_HOME="$W/c14" "$M" sweep --to 16K --no-progress $SIZES --json s14.json
echo "-- 15: stale temporaries, SIGTERM's name"
touch .w2.jsonl.4194304.00000000000000aa.tmp
"$M" watch --plain --duration 1s --interval 200ms --plateaus probe -o w2.jsonl >/dev/null 2>&1
[ ! -e .w2.jsonl.4194304.00000000000000aa.tmp ] && ok files || ko files "watch left a stale temporary"
grep -q SIGTERM cs/characterize.json cs.err && ok wording || ko wording "characterize's SIGTERM said Ctrl-C"

ls -l /dev/null /dev/full | awk '{print "  " $1, $NF}'
[ -c /dev/null ] && [ -c /dev/full ] && ok links || ko links "/dev/null or /dev/full is no longer a device"

echo
echo "class       passed  failed"
for c in results registers files wrong loss links hangs refusals deadends panics memory wording store; do printf '%-10s %7d %7d\n' "$c" "${pass[$c]:-0}" "${fail[$c]:-0}"; done
rm -rf "$W"
