// FP64 tensor-core (DMMA) throughput from registers: mma.sync m16n8k8 against m16n8k16 on sm_90,
// NACC independent accumulators a warp, one block of 4 or 8 warps an SM. It bounds what a DMMA tile
// can reach when nothing but the MMAs runs (docs/perf-notes.md section 70).
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/dmma-throughput scripts/dev/dmma-throughput.cu && /tmp/dmma-throughput
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e = (x);                                                           \
    if (e != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

template <int K, int NACC>
__global__ void dmma_loop(double* out, const double* in, int iters) {
  double d[NACC][4], a[K / 2], b[K / 4];
  for (int i = 0; i < K / 2; ++i) a[i] = in[(threadIdx.x + i) & 63];
  for (int i = 0; i < K / 4; ++i) b[i] = in[(threadIdx.x * 3 + i) & 63];
  for (int j = 0; j < NACC; ++j)
    for (int v = 0; v < 4; ++v) d[j][v] = 0;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int j = 0; j < NACC; ++j) {
      if constexpr (K == 8)
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+d"(d[j][0]), "+d"(d[j][1]), "+d"(d[j][2]), "+d"(d[j][3])
            : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
      else
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
            "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
            : "+d"(d[j][0]), "+d"(d[j][1]), "+d"(d[j][2]), "+d"(d[j][3])
            : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
              "d"(b[1]), "d"(b[2]), "d"(b[3]));
    }
  }
  double s = 0;
  for (int j = 0; j < NACC; ++j)
    for (int v = 0; v < 4; ++v) s += d[j][v];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;  // keeps the MMAs live
}

template <int K, int NACC>
void run(int warps, int sms) {
  double *out, *in;
  CHECK(cudaMalloc(&out, sizeof(double) * sms * warps * 32));
  CHECK(cudaMalloc(&in, sizeof(double) * 64));
  CHECK(cudaMemset(in, 0, sizeof(double) * 64));
  const int iters = 20000 * 8 / K;
  dmma_loop<K, NACC><<<sms, 32 * warps>>>(out, in, 10);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    CHECK(cudaEventRecord(e0));
    dmma_loop<K, NACC><<<sms, 32 * warps>>>(out, in, iters);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    best = ms < best ? ms : best;
  }
  const double flops = 2.0 * 16 * 8 * K * double(NACC) * iters * double(sms) * warps;
  std::printf("m16n8k%-2d %2d accumulators, %d warps an SM: %.1f TFLOP/s\n", K, NACC, warps, flops / best / 1e9);
  CHECK(cudaFree(out));
  CHECK(cudaFree(in));
}

int main() {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int warps : {4, 8}) {
    run<8, 8>(warps, sms);
    run<16, 8>(warps, sms);
    run<8, 16>(warps, sms);
    run<16, 16>(warps, sms);
  }
  run<8, 2>(8, sms);
  run<16, 2>(8, sms);
  return 0;
}
