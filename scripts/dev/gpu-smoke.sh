#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with the CUDA binaries in $TILEKIT_BIN (default
# build/cuda, built there by scripts/dev/gpu-build.sh, else .carry/cuda from scripts/dev/bench-gpu-prepare.sh).
# Writes logs to $OUT when set.
set -u
bin=${TILEKIT_BIN:-$( [ -x build/cuda/tilekit ] && echo build/cuda || echo .carry/cuda )}
out=${OUT:-/tmp}
nvidia-smi -L
$bin/tilekit info
$bin/tilekit_tests --gtest_brief=1 2>&1 | tee $out/tests.log | tail -15
bash tests/cli_bad_input.sh $bin/tilekit 2>&1 | tail -3
for s in 1024 2048 4096; do
  for cfg in auto bm64_bn64_bk16_tm4_tn4_g8_t256_v1 bm128_bn64_bk16_tm8_tn4_g8_t256_v1 bm32_bn32_bk32_tm2_tn2_g8_t256_v1; do
    $bin/tilekit matmul $s $s $s --config $cfg --reps 10 --json > $out/f32_${s}_${cfg}.json && \
      python3 -c "import json,sys; j=json.load(open('$out/f32_${s}_${cfg}.json')); print('f32', $s, j['config'], round(j['tflops'],2))"
  done
done
for t in f64 f16 bf16 i8; do $bin/tilekit matmul 4096 4096 4096 --dtype $t --check | grep -E "matmul|rate|check"; done
$bin/tilekit matmul 4096 4096 4096 --dtype f16 --out-dtype f32 --epilogue bias+gelu --beta 1 --check | grep -E "rate|check"
python3 - <<'PY'
import torch, time
torch.backends.cuda.matmul.allow_tf32 = False
for n in (1024, 2048, 4096):
    a = torch.randn(n, n, device='cuda'); b = torch.randn(n, n, device='cuda')
    for _ in range(3): a @ b
    torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(10):
        s.record(); a @ b; e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); print('torch f32 (cuBLAS, no TF32)', n, round(2*n**3/ts[5]*1e-9, 2), 'TFLOP/s')
PY
