// A diagnostic LD_PRELOAD shim (not part of the library): counts and times the CUDA runtime calls a
// program makes (the ones listed below, through libcudart.so), and at exit prints to stderr, per
// function, the calls, total and mean microseconds; with CT_SEQ=n also n calls of the sequence (from
// call number CT_START, default the last n) with start offsets and durations, where the gaps are host
// code and the time inside kernel launches (between __cudaPopCallConfiguration and the next call).
// Used for docs/perf-notes.md section 27. On the GPU machine:
//   gcc -shared -fPIC -O2 -I/usr/local/cuda/include -o /tmp/cudatrace.so scripts/dev/cudatrace.c -ldl
//   CT_START=1200 CT_SEQ=36 LD_PRELOAD=/tmp/cudatrace.so build/cuda/tilekit matmul 1024 1024 1024 --dtype f16 --reps 300
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime_api.h>

static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }
#define NF 64
static const char* names[NF]; static long calls[NF]; static double total[NF]; static int nf;
#define SEQ 65536
static int seq_f[SEQ]; static double seq_t0[SEQ], seq_d[SEQ]; static long seq_n;
static int fid(const char* n) { for (int i = 0; i < nf; ++i) if (names[i] == n) return i; names[nf] = n; return nf++; }
static void rec(const char* n, double t0, double t1) {
  int f = fid(n); calls[f]++; total[f] += t1 - t0;
  long k = seq_n++ % SEQ; seq_f[k] = f; seq_t0[k] = t0; seq_d[k] = t1 - t0;
}
__attribute__((destructor)) static void dump(void) {
  fprintf(stderr, "== cudatrace: calls, total us, mean us\n");
  for (int i = 0; i < nf; ++i) fprintf(stderr, "  %-44s %8ld %12.1f %8.2f\n", names[i], calls[i], total[i], total[i] / calls[i]);
  int want = getenv("CT_SEQ") ? atoi(getenv("CT_SEQ")) : 0;
  long first = getenv("CT_START") ? atol(getenv("CT_START")) : seq_n - want;
  if (first < 0) first = 0;
  if (first < seq_n - SEQ) first = seq_n - SEQ;
  if (first + want > seq_n) want = (int)(seq_n - first);
  double base = want ? seq_t0[first % SEQ] : 0;
  for (long j = first; j < first + want; ++j) { long k = j % SEQ; fprintf(stderr, "  seq %10.1f +%7.1f %s\n", seq_t0[k] - base, seq_d[k], names[seq_f[k]]); }
}
#define WRAP(ret, name, params, args) \
  ret name params { \
    static ret (*real) params; if (!real) real = (ret (*) params)dlsym(RTLD_NEXT, #name); \
    double t0 = now_us(); ret r = real args; rec(#name, t0, now_us()); return r; }
WRAP(cudaError_t, cudaEventRecord, (cudaEvent_t e, cudaStream_t s), (e, s))
WRAP(cudaError_t, cudaEventRecordWithFlags, (cudaEvent_t e, cudaStream_t s, unsigned f), (e, s, f))
WRAP(cudaError_t, cudaEventQuery, (cudaEvent_t e), (e))
WRAP(cudaError_t, cudaEventSynchronize, (cudaEvent_t e), (e))
WRAP(cudaError_t, cudaEventCreate, (cudaEvent_t* e), (e))
WRAP(cudaError_t, cudaEventCreateWithFlags, (cudaEvent_t* e, unsigned f), (e, f))
WRAP(cudaError_t, cudaEventDestroy, (cudaEvent_t e), (e))
WRAP(cudaError_t, cudaEventElapsedTime, (float* ms, cudaEvent_t a, cudaEvent_t b), (ms, a, b))
WRAP(cudaError_t, cudaStreamWaitEvent, (cudaStream_t s, cudaEvent_t e, unsigned f), (s, e, f))
WRAP(cudaError_t, cudaStreamSynchronize, (cudaStream_t s), (s))
WRAP(cudaError_t, cudaStreamQuery, (cudaStream_t s), (s))
WRAP(cudaError_t, cudaDeviceSynchronize, (void), ())
WRAP(cudaError_t, cudaMemcpyAsync, (void* d, const void* s, size_t n, enum cudaMemcpyKind k, cudaStream_t st), (d, s, n, k, st))
WRAP(cudaError_t, cudaMemcpy, (void* d, const void* s, size_t n, enum cudaMemcpyKind k), (d, s, n, k))
WRAP(cudaError_t, cudaMemsetAsync, (void* d, int v, size_t n, cudaStream_t st), (d, v, n, st))
WRAP(cudaError_t, cudaLaunchKernel, (const void* f, dim3 g, dim3 b, void** a, size_t sm, cudaStream_t st), (f, g, b, a, sm, st))
WRAP(cudaError_t, cudaGetDevice, (int* d), (d))
WRAP(cudaError_t, cudaSetDevice, (int d), (d))
WRAP(cudaError_t, cudaDeviceGetAttribute, (int* v, enum cudaDeviceAttr a, int d), (v, a, d))
WRAP(cudaError_t, cudaFuncGetAttributes, (struct cudaFuncAttributes* a, const void* f), (a, f))
WRAP(cudaError_t, cudaFuncSetAttribute, (const void* f, enum cudaFuncAttribute a, int v), (f, a, v))
WRAP(cudaError_t, cudaFuncSetCacheConfig, (const void* f, enum cudaFuncCache c), (f, c))
WRAP(cudaError_t, cudaMalloc, (void** p, size_t n), (p, n))
WRAP(cudaError_t, cudaFree, (void* p), (p))
WRAP(cudaError_t, cudaMallocHost, (void** p, size_t n), (p, n))
WRAP(cudaError_t, cudaFreeHost, (void* p), (p))
WRAP(cudaError_t, cudaGetLastError, (void), ())
WRAP(cudaError_t, cudaPeekAtLastError, (void), ())
WRAP(cudaError_t, cudaPointerGetAttributes, (struct cudaPointerAttributes* a, const void* p), (a, p))
WRAP(cudaError_t, cudaMemcpyToSymbolAsync, (const void* s, const void* src, size_t n, size_t o, enum cudaMemcpyKind k, cudaStream_t st), (s, src, n, o, k, st))
WRAP(cudaError_t, cudaOccupancyMaxActiveBlocksPerMultiprocessor, (int* n, const void* f, int b, size_t sm), (n, f, b, sm))
WRAP(cudaError_t, cudaGetDriverEntryPointByVersion, (const char* s, void** f, unsigned v, unsigned long long fl, enum cudaDriverEntryPointQueryResult* q), (s, f, v, fl, q))
WRAP(cudaError_t, cudaLaunchKernelExC, (const cudaLaunchConfig_t* c, const void* f, void** a), (c, f, a))
WRAP(unsigned, __cudaPushCallConfiguration, (dim3 g, dim3 b, size_t sm, struct CUstream_st* st), (g, b, sm, st))
WRAP(cudaError_t, __cudaPopCallConfiguration, (dim3* g, dim3* b, size_t* sm, void* st), (g, b, sm, st))
WRAP(cudaError_t, cudaLaunchKernel_ptsz, (const void* f, dim3 g, dim3 b, void** a, size_t sm, cudaStream_t st), (f, g, b, a, sm, st))
