#!/usr/bin/env bash
# Runs ON THE GPU MACHINE after scripts/dev/gpu-build.sh: the GPU shape zoo (bench/shapes/gpu-zoo.txt)
# for every type in row-major and column-major storage, and i8 with K-major operands as well
# (torch._int_mm's layout), the tilekit:auto and tilekit:default series beside cuBLAS in the same run
# (cuBLAS int8 always with its K-major operands). JSON and logs into $OUT/zoo-<layout>/; back here,
# copy them to bench/results/gpu-<card>-zoo-<layout>/ and run `python3 scripts/bench-report.py`.
# Each layout runs TILEKIT_ZOO_PASSES times (default 2), one pass after the other, and every
# benchmark, tilekit's and cuBLAS's alike, keeps its faster pass (scripts/bench-rerun.py best, noted
# in the JSON's context as "reruns"): the small shapes' figures of either side move by 5-15% from
# one run to the next on one H200 (docs/perf-notes.md section 71).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/tilekit-zoo}
budget=${TILEKIT_ZOO_BUDGET_S:-150}  # per layout and pass; the whole zoo took under 30 s per layout on an H200
passes=${TILEKIT_ZOO_PASSES:-2}
run() {  # layout, types
  local pass dir
  for pass in $(seq 1 "$passes"); do
    dir="$out/zoo-$1"
    [ "$pass" -gt 1 ] && dir="$out/zoo-$1-pass$pass"
    OUT="$dir" TILEKIT_BENCH_ZOO=1 TILEKIT_BENCH_LAYOUTS="$1" TILEKIT_BENCH_DTYPES="$2" \
      TILEKIT_BENCH_FILTER='tilekit:(auto|default)/' TILEKIT_BENCH_BUDGET_S="$budget" scripts/bench-gpu.sh \
      > "$dir.log" 2>&1
    echo "zoo $1 ($2), pass $pass: exit status $?"
    [ "$pass" -gt 1 ] || continue
    for f in "$out/zoo-$1"/matmul_cuda_*.json; do
      [ -f "$dir/${f##*/}" ] && python3 scripts/bench-rerun.py best "$f" "$dir/${f##*/}"
    done
  done
}
# Every tile of the model's candidates for a type as its own series at every zoo shape (row-major):
# how far `auto` is from the best tile of the menu, shape by shape.
menu() {  # type, configs
  OUT="$out/zoo-menu-$1" TILEKIT_BENCH_ZOO=1 TILEKIT_BENCH_LAYOUTS=row TILEKIT_BENCH_DTYPES="$1" \
    TILEKIT_BENCH_CONFIGS="$2" TILEKIT_BENCH_FILTER='tilekit:(auto|bm[^+/]*)/' TILEKIT_BENCH_BUDGET_S="$budget" \
    scripts/bench-gpu.sh > "$out/zoo-menu-$1.log" 2>&1
  echo "zoo menu $1: exit status $?"
}
mkdir -p "$out"
run row f16,bf16,f32,tf32,f64,i8
run col f16,bf16,f32,tf32,f64,i8
run kmajor i8
[ "${TILEKIT_ZOO_MENU:-1}" = 1 ] && {
  menu f16 bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32,bm128_bn192_bk64_tm64_tn192_ws_g8_t12_v32,bm64_bn128_bk64_tm64_tn128_ws_g8_t8_v32,bm128_bn128_bk64_tm64_tn128_wg_g8_t8_v32,bm64_bn64_bk64_tm64_tn64_ws_g8_t8_v32,bm128_bn128_bk32_tm64_tn64_tc_g8_t4_v32,bm128_bn128_bk16_tm64_tn32_tc_g8_t8_v32,bm64_bn64_bk32_tm32_tn32_tc_g8_t4_v32
  menu f32 bm256_bn128_bk16_tm16_tn8_g16_t256_v1,bm128_bn128_bk16_tm8_tn16_g16_t128_v1,bm128_bn128_bk16_tm8_tn8_g16_t256_v1,bm128_bn64_bk16_tm8_tn8_g8_t128_v1,bm64_bn64_bk16_tm8_tn4_g16_t128_v1,bm64_bn64_bk16_tm8_tn4_s2_g8_t128_v1,bm64_bn64_bk16_tm8_tn4_s4_g8_t128_v1,bm64_bn64_bk16_tm8_tn4_s8_g8_t128_v1,bm128_bn128_bk16_tm8_tn16_s2_g16_t128_v1,bm128_bn128_bk16_tm8_tn16_s4_g16_t128_v1,bm128_bn128_bk16_tm8_tn16_s8_g16_t128_v1,bm32_bn128_bk16_tm4_tn8_g8_t128_v1,bm32_bn128_bk16_tm4_tn8_s8_g8_t128_v1,bm32_bn128_bk16_tm4_tn8_s16_g8_t128_v1
}
for layout in row col kmajor; do python3 scripts/dev/zoo-ratios.py "$out/zoo-$layout" tilekit:auto tilekit:default; done
for t in f16 f32; do [ -d "$out/zoo-menu-$t" ] && python3 scripts/dev/zoo-ratios.py --menu "$out/zoo-menu-$t"; done
