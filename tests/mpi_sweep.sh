#!/usr/bin/env bash
# A matmul tuning sweep divided among 2 MPI ranks on the CPU against the same sweep in 1 rank, and
# a sweep whose rank 1 dies (SIGKILL) part way:
#   - the 2-rank sweep measures exactly the candidates of the 1-rank sweep, each exactly once, with
#     both ranks measuring; its cache is valid, has every shape, and no journal is left;
#   - after the kill, what finished is in the journal, `tilekit tune merge` stores the complete
#     shapes and lists every missing candidate, and a re-run measures exactly the missing ones;
#   - a rank whose device stops working (the process lives): the run names it, stores the others'
#     results, lists its lost candidates, exits 1; a re-run completes the sweep;
#   - ranks of two device models each sweep for their own device, into their own cache file.
# Each rank runs 1 thread (2 ranks on 2 cores), so the 1-rank sweep runs 1 thread too: the device
# identity, and the host search space, name the thread count.
#   tests/mpi_sweep.sh <tilekit binary> <mpiexec>
set -u
app=$1
mpiexec=${2:-mpirun}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMP_PROC_BIND=false
# --oversubscribe: CI machines may have fewer cores than ranks; vader's single-copy mechanism
# needs ptrace rights that containers often lack.
mpi=("$mpiexec" --oversubscribe --mca btl_vader_single_copy_mechanism none)
# One thread per rank, given: ranks that would split a node's cores by themselves are refused (below).
sweep=(tune matmul --sizes 40,72x56x48,8x64x48 --dtype f32 --strategy random --budget 6 --seed 3 --reps 7 --warmup 1 -q
       --kokkos-threads=1)
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=$((fail+1)); else echo "ok: $1"; fi; }

t0=$SECONDS
"${mpi[@]}" -np 1 "$app" "${sweep[@]}" --cache "$tmp/c1" --out "$tmp/r1" >"$tmp/log1" 2>&1
check "1-rank sweep exits 0" "[ $? -eq 0 ] || { cat $tmp/log1; false; }"
# Two ranks splitting one node's cores would each sweep a 1-thread device: refused unless the
# thread count is given (the same as the 1-rank sweep's), so that both measure the same candidates.
"${mpi[@]}" -np 2 "$app" "${sweep[@]:0:${#sweep[@]}-1}" --cache "$tmp/c2" --out "$tmp/r2" >"$tmp/log2" 2>&1
check "2-rank sweep without a thread count is refused" "[ $? -eq 2 ] && grep -q 'share this node' $tmp/log2 || { cat $tmp/log2; false; }"
"${mpi[@]}" -np 2 "$app" "${sweep[@]}" --cache "$tmp/c2" --out "$tmp/r2" >"$tmp/log2" 2>&1
check "2-rank sweep exits 0" "[ $? -eq 0 ] || { cat $tmp/log2; false; }"
echo "1-rank + 2-rank sweeps: $((SECONDS - t0)) s"

python3 - "$tmp" <<'PY' || fail=$((fail+1))
import json, glob, os, sys
tmp = sys.argv[1]
def load(r): return json.load(open(f"{tmp}/{r}/candidates.json"))
r1, r2 = load("r1"), load("r2")
pairs = lambda r: [(tuple(c["shape"]), c["config"]) for c in r["candidates"]]
p1, p2 = pairs(r1), pairs(r2)
errors = []
if len(p1) != len(set(p1)): errors.append("1-rank sweep lists a candidate twice")
if len(p2) != len(set(p2)): errors.append("2-rank sweep lists a candidate twice")
if set(p1) != set(p2): errors.append(f"candidate sets differ: only 1-rank {set(p1)-set(p2)}, only 2-rank {set(p2)-set(p1)}")
s1, s2 = r1["sweep"], r2["sweep"]
for name, s, n in (("1-rank", s1, 1), ("2-rank", s2, 2)):
    if s["ranks"] != n: errors.append(f"{name}: ranks {s['ranks']}")
    if s["missing"] or s["duplicates"] or s["stopped"]: errors.append(f"{name}: missing/duplicates/stopped: {s}")
    if s["measured_now"] != s["pairs"] or s["pairs"] != len(p1): errors.append(f"{name}: measured {s['measured_now']} of {s['pairs']} (plan), {len(p1)} listed")
ranks = {c["rank"] for c in r2["candidates"]}
if ranks != {0, 1}: errors.append(f"2-rank sweep: candidates measured by ranks {ranks}, want both 0 and 1")
for c in ("c1", "c2"):
    files = glob.glob(f"{tmp}/{c}/*.json")
    if len(files) != 1: errors.append(f"{c}: cache files {files}"); continue
    cache = json.load(open(files[0]))
    shapes = sorted(tuple(e["shape"]) for e in cache["entries"])
    if shapes != sorted({tuple(s["shape"]) for s in r1["shapes"]}): errors.append(f"{c}: cache shapes {shapes}")
    if cache["device"]["backend"] in ("openmp", "serial") and cache["device"]["compute_units"] != 1:
        errors.append(f"{c}: device {cache['device']} (want 1 thread per rank)")
    if glob.glob(f"{tmp}/{c}/*.sweeps/*"): errors.append(f"{c}: a journal was left: {glob.glob(tmp + '/' + c + '/*.sweeps/*')}")
w1 = {tuple(s["shape"]): s["best"] for s in r1["shapes"]}
w2 = {tuple(s["shape"]): s["best"] for s in r2["shapes"]}
print("winners 1 rank:", w1, "\nwinners 2 ranks:", w2, "(CPU timings on a shared machine: not required to agree)")
print("\n".join("FAIL: " + e for e in errors) or f"ok: {len(p1)} candidates, each measured once, same set in both, caches complete")
sys.exit(1 if errors else 0)
PY

# --- rank 1 dies after 3 candidates (app/tune_sweep.cpp: TILEKIT_TEST_KILL_RANK/AFTER)
TILEKIT_TEST_KILL_RANK=1 TILEKIT_TEST_KILL_AFTER=3 \
  "${mpi[@]}" -np 2 "$app" "${sweep[@]}" --cache "$tmp/c3" --out "$tmp/r3" >"$tmp/log3" 2>&1
check "the sweep with a killed rank fails" "[ $? -ne 0 ]"
rank1_lines=$(cat "$tmp"/c3/*.sweeps/*/rank1-*.jsonl 2>/dev/null | grep -c '"kind":"candidate"')
check "rank 1's 3 finished candidates are in the journal" "[ '$rank1_lines' = 3 ]"
"${mpi[@]}" -np 1 "$app" tune merge --cache "$tmp/c3" --kokkos-threads=1 >"$tmp/log4" 2>&1
status=$?
cat "$tmp/log4"
missing=$(grep -c '^  missing ' "$tmp/log4")
check "tune merge reports the unfinished sweep (exit 1) and lists missing candidates" "[ $status -eq 1 ] && [ $missing -gt 0 ]"
check "the lost candidates dealt to rank 1 are listed" "grep -q 'dealt to rank 1' $tmp/log4"
"${mpi[@]}" -np 2 "$app" "${sweep[@]}" --cache "$tmp/c3" --out "$tmp/r5" >"$tmp/log5" 2>&1
check "the re-run exits 0" "[ $? -eq 0 ] || { cat $tmp/log5; false; }"
python3 - "$tmp" "$missing" <<'PY' || fail=$((fail+1))
import json, glob, sys
tmp, missing = sys.argv[1], int(sys.argv[2])
r1, r5 = (json.load(open(f"{tmp}/{r}/candidates.json")) for r in ("r1", "r5"))
s = r5["sweep"]
errors = []
if s["measured_now"] != missing: errors.append(f"re-run measured {s['measured_now']}, the merge listed {missing} missing")
if s["from_earlier_runs"] + s["measured_now"] != s["pairs"]: errors.append(f"re-run: {s}")
if s["missing"] or s["duplicates"]: errors.append(f"re-run left missing/duplicates: {s}")
p1 = sorted((tuple(c["shape"]), c["config"]) for c in r1["candidates"])
p5 = sorted((tuple(c["shape"]), c["config"]) for c in r5["candidates"])
if p1 != p5: errors.append("the resumed sweep's candidates are not the 1-rank sweep's")
if glob.glob(f"{tmp}/c3/*.sweeps/*"): errors.append("the journal was left after the sweep completed")
cache = json.load(open(glob.glob(f"{tmp}/c3/*.json")[0]))
if len(cache["entries"]) != len(r1["shapes"]): errors.append(f"cache has {len(cache['entries'])} entries")
print("\n".join("FAIL: " + e for e in errors) or f"ok: the re-run measured exactly the {missing} missing candidates; cache complete")
sys.exit(1 if errors else 0)
PY
# --- rank 1's device stops working after 2 candidates (the process lives): the run itself stores
# what rank 0 finished, names the stopped rank and lists its lost candidates (exit 1)
TILEKIT_TEST_FAIL_RANK=1 TILEKIT_TEST_FAIL_AFTER=2 \
  "${mpi[@]}" -np 2 "$app" "${sweep[@]}" --cache "$tmp/c6" --out "$tmp/r6" >"$tmp/log6" 2>&1
status=$?
check "a stopped rank makes the sweep exit 1" "[ $status -eq 1 ] || { cat $tmp/log6; false; }"
check "the stopped rank is named with its reason" "grep -q 'stopped early: rank 1 .*simulated' $tmp/log6"
check "its lost candidates are listed" "grep -q 'dealt to rank 1' $tmp/log6"
python3 - "$tmp" <<'PY' || fail=$((fail+1))
import json, glob, sys
tmp = sys.argv[1]
r6 = json.load(open(f"{tmp}/r6/candidates.json"))
s = r6["sweep"]
errors = []
if not s["missing"] or any(m["rank"] != 1 for m in s["missing"]): errors.append(f"missing: {s['missing']}")
if s["measured_now"] + len(s["missing"]) != s["pairs"]: errors.append(f"measured {s['measured_now']} + missing {len(s['missing'])} != {s['pairs']}")
if not glob.glob(f"{tmp}/c6/*.sweeps/*/plan.json"): errors.append("no journal kept for the unfinished sweep")
print("\n".join("FAIL: " + e for e in errors) or f"ok: {s['measured_now']} stored, {len(s['missing'])} listed missing")
sys.exit(1 if errors else 0)
PY
"${mpi[@]}" -np 2 "$app" "${sweep[@]}" --cache "$tmp/c6" --out "$tmp/r7" >"$tmp/log7" 2>&1
check "after a stopped rank, the re-run completes the sweep" "[ $? -eq 0 ] && python3 -c \"import json,sys; s=json.load(open('$tmp/r7/candidates.json'))['sweep']; sys.exit(0 if not s['missing'] and s['from_earlier_runs'] + s['measured_now'] == s['pairs'] else 1)\""

# --- two device models: rank 1 claims another model (TILEKIT_TEST_OTHER_DEVICE_RANK=1); each rank
# is then a group of one that sweeps every candidate for its own device, into its own cache file
TILEKIT_TEST_OTHER_DEVICE_RANK=1 "${mpi[@]}" -np 2 "$app" "${sweep[@]}" --cache "$tmp/c8" --out "$tmp/r8" >"$tmp/log8" 2>&1
check "two device models: exit 0" "[ $? -eq 0 ] || { cat $tmp/log8; false; }"
python3 - "$tmp" <<'PY' || fail=$((fail+1))
import json, glob, sys
tmp = sys.argv[1]
r1 = json.load(open(f"{tmp}/r1/candidates.json"))
caches = sorted(glob.glob(f"{tmp}/c8/*.json"))
reports = sorted(glob.glob(f"{tmp}/r8-*/candidates.json"))
errors = []
if len(caches) != 2 or not any("test-another-model" in c for c in caches): errors.append(f"cache files {caches}")
if len(reports) != 2: errors.append(f"reports {reports}")
for c in caches:
    d = json.load(open(c))
    if len(d["entries"]) != len(r1["shapes"]): errors.append(f"{c}: {len(d['entries'])} entries")
for r in reports:
    s = json.load(open(r))["sweep"]
    if s["ranks"] != 1 or s["measured_now"] != len(r1["candidates"]) or s["missing"]: errors.append(f"{r}: {s}")
print("\n".join("FAIL: " + e for e in errors) or "ok: two device models, two complete caches, never mixed")
sys.exit(1 if errors else 0)
PY

echo "mpi_sweep: $fail failed ($((SECONDS - t0)) s)"
[ "$fail" -eq 0 ]
