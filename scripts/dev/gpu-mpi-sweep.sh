#!/usr/bin/env bash
# ON THE 2-GPU MACHINE, from the repository root, after `scripts/dev/gpu-build.sh build --mpi` (the
# cuda-mpi preset, build/cuda-mpi): the same matmul tuning sweep run twice in one call, with 1 MPI
# rank (one GPU) and with 2 ranks (one GPU each), timed from mpirun to mpirun; then the two caches'
# winners compared shape by shape. Everything lands in $OUT:
#   summary.txt / summary.json   wall-clock seconds of each, the ratio, per-rank GPU, pairs and busy
#                                time, the winners side by side (and whether a difference is a tie)
#   cache-1rank/, cache-2ranks/  the two tuning caches; report-<ranks>-<type>/ the sweep reports
#   log-*.txt                    each mpirun's output
# Environment: SWEEP_TYPES (default "f32 f16"), SWEEP_SIZES (default 1024,2048,4096), SWEEP_BUDGET
# (candidates per shape in the seeded random order; default 0 = all: the CUDA space has 96 f32 and
# 116 f16 candidates per shape), SWEEP_REPS (timed runs per candidate, default 15), SWEEP_LIMIT_S
# (seconds allowed to each of the two sweeps, all types together, default 250, so both fit one
# 600-s device call), TILEKIT_BIN (default build/cuda-mpi/tilekit).
# Expected (from the H100 f16 sweep's per-candidate medians, tilekit/tuning/results/reports): about 60-120 s
# for 1 rank; a simulation of dealing those costs round-robin to 2 ranks gives 1.94x from the
# dealing alone (5th percentile 1.83x), before the start-up and per-shape set-up that do not divide.
set -u
cd "$(dirname "$0")/../.."
source scripts/dev/gpu-mpi-env.sh
bin=${TILEKIT_BIN:-build/cuda-mpi/tilekit}
out=${OUT:-/tmp/tilekit-mpi-sweep}
types=${SWEEP_TYPES:-f32 f16}
sizes=${SWEEP_SIZES:-1024,2048,4096}
budget=${SWEEP_BUDGET:-0}
reps=${SWEEP_REPS:-15}
limit=${SWEEP_LIMIT_S:-250}
mkdir -p "$out"
[ -x "$bin" ] || { echo "gpu-mpi-sweep: no $bin (run scripts/dev/gpu-build.sh build --mpi first)" >&2; exit 1; }
nvidia-smi -L | tee "$out/gpus.txt"
mpirun --version | head -1 | tee -a "$out/gpus.txt"
# --bind-to none: each rank's host thread and the CUDA runtime's helper threads are not confined to
# one core; vader's single-copy mechanism needs ptrace rights containers often lack.
mpi=(mpirun --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism none)

sweep() {  # sweep <ranks> <tag>: every type, one mpirun each, into cache-<tag>; prints seconds
  local ranks=$1 tag=$2 t0 t1 status=0 start=$SECONDS left
  t0=$(date +%s.%N)
  for t in $types; do
    left=$((limit - (SECONDS - start)))
    [ "$left" -gt 0 ] || { echo "gpu-mpi-sweep: $tag: no time left for $t (SWEEP_LIMIT_S=$limit)" >&2; status=124; break; }
    timeout "$left" "${mpi[@]}" -np "$ranks" "$bin" tune matmul --sizes "$sizes" --dtype "$t" --strategy random \
      --budget "$budget" --reps "$reps" --seed 11 --cache "$out/cache-$tag" --out "$out/report-$tag-$t" -q \
      >"$out/log-$tag-$t.txt" 2>&1 || { status=$?; echo "gpu-mpi-sweep: $tag $t exited $status (log-$tag-$t.txt)" >&2; }
  done
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.1f}')"
  return $status
}

rm -rf "$out"/cache-* "$out"/report-*
echo "== 1 rank: $types at $sizes, budget $budget per shape (0: all), $reps reps"
s1=$(sweep 1 1rank); ok1=$?
echo "   $s1 s"
echo "== 2 ranks"
s2=$(sweep 2 2ranks); ok2=$?
echo "   $s2 s"
rm -f "$out"/cache-*/*.lock

python3 - "$out" "$s1" "$s2" "$ok1" "$ok2" "$types" <<'PY' | tee "$out/summary.txt"
import glob, json, sys
out, s1, s2, ok1, ok2, types = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6].split()
def cache(tag):
    files = glob.glob(f"{out}/cache-{tag}/*.json")
    return {(e["types"], tuple(e["shape"])): e for e in json.load(open(files[0]))["entries"]} if files else {}
c1, c2 = cache("1rank"), cache("2ranks")
summary = {"seconds_1rank": s1, "seconds_2ranks": s2, "speedup": s1 / s2 if s2 > 0 else None,
           "exit_status": {"1rank": int(ok1), "2ranks": int(ok2)}, "sweeps": {}, "winners": []}
print(f"1 rank: {s1:.1f} s, 2 ranks: {s2:.1f} s, speedup {s1 / s2 if s2 > 0 else float('nan'):.2f}x "
      f"(exit status {ok1} / {ok2})")
medians = {"1rank": {}, "2ranks": {}}  # (types, shape, config) -> median seconds
tolerance = 0.02
for t in types:
    for tag in ("1rank", "2ranks"):
        try:
            r = json.load(open(f"{out}/report-{tag}-{t}/candidates.json"))
        except OSError:
            print(f"{tag} {t}: no report"); continue
        tolerance = r["context"].get("tie_tolerance", tolerance)
        pair = f"{r['context']['dtype']}->{r['context']['out_dtype']}"
        for c in r["candidates"]:
            if c["status"] == "ok": medians[tag][(pair, tuple(c["shape"]), c["config"])] = c["median_s"]
        s = r["sweep"]
        summary["sweeps"][f"{tag}-{t}"] = s
        ranks = ", ".join(f"rank {i['rank']} GPU {i['gpu']}: {i['measured']} pairs in {i['busy_s']:.1f} s" for i in s["rank_info"])
        print(f"{tag} {t}: {s['pairs']} pairs, {s['measured_now']} measured, {len(s['missing'])} missing, "
              f"{s['duplicates']} duplicates; {ranks}")
# Winners side by side; a different winner within the tie tolerance of the other's time is a tie.
same = 0
for key in sorted(set(c1) | set(c2)):
    a, b = c1.get(key), c2.get(key)
    row = {"types": key[0], "shape": key[1], "winner_1rank": a and a["config"], "winner_2ranks": b and b["config"],
           "median_s_1rank": a and a["median_s"], "median_s_2ranks": b and b["median_s"]}
    row["same"] = bool(a and b and a["config"] == b["config"])
    same += row["same"]
    note = ""
    if a and b and not row["same"]:
        # Each run's time of the other's winner: within the tie tolerance = the timings disagreed by noise.
        x1 = medians["1rank"].get((key[0], key[1], b["config"]))
        x2 = medians["2ranks"].get((key[0], key[1], a["config"]))
        row["2rank_winner_in_1rank_run"] = x1 / a["median_s"] if x1 else None
        row["1rank_winner_in_2rank_run"] = x2 / b["median_s"] if x2 else None
        note = (f"  (the 2-rank winner took {x1 / a['median_s']:.3f}x the 1-rank winner's time in the 1-rank run; "
                f"the 1-rank winner {x2 / b['median_s']:.3f}x in the 2-rank run; tie tolerance {1 + tolerance:.2f}x)"
                if x1 and x2 else "")
    summary["winners"].append(row)
    print(f"{key[0]:>9} {'x'.join(map(str, key[1])):>16}  1 rank {row['winner_1rank']} "
          f"({(a or {}).get('median_s', 0) * 1e3:.3f} ms)  2 ranks {row['winner_2ranks']} "
          f"({(b or {}).get('median_s', 0) * 1e3:.3f} ms)  {'same' if row['same'] else 'DIFFERENT'}{note}")
print(f"winners: {same} of {len(summary['winners'])} shapes agree")
json.dump(summary, open(f"{out}/summary.json", "w"), indent=1)
PY
