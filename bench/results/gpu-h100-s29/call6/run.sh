#!/usr/bin/env bash
# Session 29, call F (warm, same build as call E): Nsight Compute at base clock of both kernels of a
# split launch against the unsplit one (TILEKIT_WS_WAVE_SPLIT=0), 9728x8192x65536.
set -uo pipefail
mkdir -p $OUT/r
T2=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum,launch__grid_size
nt() { echo "$1: $(env $4 timeout 60 ncu --clock-control base --kernel-name-base mangled -k regex:Sm90WgmmaWs -c 2 --metrics $M --csv --print-units base \
    build/cuda/tilekit matmul 9728 8192 65536 --layout-a col --layout-b col --layout-c col --config $T2 --epilogue $3 --reps 1 --warmup 0 --dtype $2 2>/dev/null | grep -E '__' | awk -F'","' '{gsub(/"/,"",$NF); gsub(/"/,"",$(NF-2)); printf "%s=%s ", $(NF-2), $NF}')"; }
ls build/cuda/tilekit > /dev/null || exit 1
{ for rep in 1 2; do for dt in bf16 f16; do
    nt $dt-split-$rep $dt none X=1; nt $dt-nosplit-$rep $dt none TILEKIT_WS_WAVE_SPLIT=0
  done; done
  nt bf16-split-leaky bf16 leaky_relu X=1; nt bf16-nosplit-leaky bf16 leaky_relu TILEKIT_WS_WAVE_SPLIT=0; } > $OUT/r/ncu-ab.txt 2>&1
sed 's/gpu__time_duration.sum/t/g; s/sm__cycles_elapsed.max/cyc/g; s/sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed/tensor/g; s/dram__bytes.sum/dram/g; s/launch__grid_size/grid/g' $OUT/r/ncu-ab.txt | cut -c1-400
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
