#!/usr/bin/env python3
"""Per shape and type, over the suite runs in <dir>/run*/ (bench-gpu.sh output): median [min, max] of
tuned / cuBLAS, fused leaky_relu / (cuBLAS + pass) and bias+gelu / tuned, each ratio within one run.
Usage: ratios.py bench/results/gpu-h100-s33/suite"""
import json,glob,statistics as st,collections,sys,os
d=sys.argv[1]
rows=collections.defaultdict(dict)
for r in sorted([p for p in glob.glob(os.path.join(d,'run*')) if os.path.isdir(p)]):
    n=int(os.path.basename(r)[3:])
    for f in ('matmul_cuda_tilekit.json','matmul_cuda_cublas.json'):
        for b in json.load(open(os.path.join(r,f)))['benchmarks']:
            if 'error_message' in b: continue
            dt,ser,sh=b['name'].split('/')[1:4]
            rows[(dt,sh)][(ser,n)]=b.get('TFLOPS_events')
print("per-run ratios (runs 1-6), median [min, max]")
for (dt,sh),v in sorted(rows.items(), key=lambda x:(x[0][0], int(x[0][1].split('x')[0]), x[0][1])):
    runs=sorted({n for (_,n) in v})
    def rat(a,b):
        r=[v[(a,n)]/v[(b,n)] for n in runs if (a,n) in v and (b,n) in v]
        return f"{st.median(r):.2f} [{min(r):.2f}, {max(r):.2f}]" if r else "-"
    print(f"{dt:5s} {sh:16s} tuned/cuBLAS {rat('tilekit:tuned','cublas')}  fused leaky/(cuBLAS+pass) {rat('tilekit:tuned+leaky_relu','cublas+leaky_relu')}  bias+gelu/tuned {rat('tilekit:tuned+bias+gelu','tilekit:tuned')}")
