#!/usr/bin/env bash
# Runs ON THE GPU MACHINE after scripts/dev/gpu-build.sh: the GPU shape zoo (bench/shapes/gpu-zoo.txt)
# for every type in row-major and column-major storage, and i8 with K-major operands as well
# (torch._int_mm's layout), the tilekit:auto and tilekit:default series beside cuBLAS in the same run
# (cuBLAS int8 always with its K-major operands). JSON and logs into $OUT/zoo-<layout>/; back here,
# copy them to bench/results/gpu-<card>-zoo-<layout>/ and run `python3 scripts/bench-report.py`.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/tilekit-zoo}
budget=${TILEKIT_ZOO_BUDGET_S:-150}  # per layout; the whole zoo took under 30 s per layout on an H200
run() {  # layout, types
  OUT="$out/zoo-$1" TILEKIT_BENCH_ZOO=1 TILEKIT_BENCH_LAYOUTS="$1" TILEKIT_BENCH_DTYPES="$2" \
    TILEKIT_BENCH_FILTER='tilekit:(auto|default)/' TILEKIT_BENCH_BUDGET_S="$budget" scripts/bench-gpu.sh \
    > "$out/zoo-$1.log" 2>&1
  echo "zoo $1 ($2): exit status $?"
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
