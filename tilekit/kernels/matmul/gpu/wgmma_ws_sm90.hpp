// tilekit blocked matmul, Hopper warpgroup-MMA path with warp specialisation (sm_90a: H100, H200):
// f16 and bf16 inputs, and f32 inputs with TF32 math (the opt-in), f32 accumulation. One producer warpgroup only copies (cp.async into the
// 128-byte-swizzled stage buffers of tilekit/kernels/matmul/gpu/wgmma_sm90.hpp), BM / 64 consumer warpgroups only
// multiply (wgmma.mma_async straight from scratch) and write C; the two sides meet at shared-memory
// barriers (mbarrier) per stage instead of a team barrier per K step, so a consumer never waits for
// copies it does not need yet and the producer runs up to STAGES steps ahead. A TeamPolicy as the
// other kernels, but persistent: as many teams as fit on the GPU at once, each taking the BM x BN
// tiles of C league_size apart in grouped order, every edge masked (zero-filled 16-byte copies or
// TMA's out-of-bounds zeros), the same fused epilogue, C written through TMA stores where it can.
//
//   league    : min(tiles, teams resident at once); team r takes tiles r, r + league, ... (grouped
//               order, GROUP_M tile-rows per group); its K steps are numbered across its tiles, so the
//               producer loads the next tile while the consumers write the last one's C
//   warpgroup 0 (producer, 128 threads): with TMA, one thread; per K step it waits until the
//               consumers released the stage buffer, arms the full barrier with the step's bytes
//               and issues the boxes. With cp.async (where TMA cannot describe an operand): for each
//               K step kt of BK = 64, waits until the consumers
//               released stage buffer kt % STAGES (empty barrier), issues its copies, and publishes
//               step kt - kLag once its own copies of that step have landed (cp.async.wait_group,
//               then fence.proxy.async so that wgmma, an async-proxy reader, sees them; full barrier)
//   warpgroup 1 + c (consumer c, 128 threads): rows 64c .. 64c + 63 of the tile; per step waits for
//               the full barrier, issues BK / 16 wgmma.m64nBNk16 as one group and keeps it in flight
//               while waiting for the next step; releases a buffer once the group that read it is
//               done (wgmma.wait_group 1). With a bias and 1 <= |alpha| (BN < 256) its accumulators
//               start from bias / alpha, so the epilogue after the last MMA reads no bias
//
// TF32 (f32 inputs): wgmma reads 32-bit operands from scratch only K-major, so both operands are
// loaded by TMA as [rows][32 k] (the same 128-byte swizzled rows: BK = 32). An A stored along M
// (a_mn_major) is loaded as it is, [BM / 32][32 k][32 m], and each consumer reads its fragments into
// registers (ld.shared) for wgmma's register-A form; a B stored along N runs as the transposed
// product, whose A it then is (launch_matmul). launch_wgmma_ws copies any other operand that is not
// K-major with a 16-byte aligned pitch into a K-major buffer first (PackKMajor). Its inputs
// are read as TF32: the tensor cores ignore the low 13 bits of each significand (truncation; the
// mma.sync TF32 tile rounds to nearest instead).
//
// The drift bound (TMA producers, K of at least kWsDriftBound.min_k_steps steps): SMs of
// slightly different speed spread a persistent grid's teams apart wave after wave, until teams
// sharing an A panel read it from DRAM again (perf notes 39). Each producer counts the chunks of
// drift_chunk_steps steps it starts in drift_count[chunk] (global memory, one atomic add a chunk)
// and starts chunk g only once all drift_teams teams have started chunk g - drift_slack_chunks - 1.
// The slowest team never waits (every other team has started every chunk it has); teams that are
// not resident at once (another kernel, an MPS share) would wait forever, so each wait ends after
// drift_wait_limit_ns of the global timer, and its team then runs free. The producer keeps the
// chunk position in 32-bit counters: two 64-bit divisions a step made its one thread slower than a
// K step (~1500 against ~1070 cycles; perf notes 39).
//
// Why a lag of kLag = STAGES - 2 steps before publishing: a producer thread can only fence copies that
// have landed, and waiting for a recent step would hold the next copies behind a global-memory
// latency (a lag of one step kept the producer about one step ahead).
#pragma once

#include "tilekit/kernels/core/execution_space.hpp"
#include "tilekit/kernels/core/workspace.hpp"
#include "tilekit/kernels/matmul/gpu/pack.hpp"
#include "tilekit/kernels/matmul/gpu/split_k_sum.hpp"
#include "tilekit/kernels/matmul/gpu/tma.hpp"
#include "tilekit/kernels/matmul/gpu/wgmma_sm90.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace tilekit {
namespace detail {

#if defined(TILEKIT_SM90A_DEVICE)
/// Shared-memory barriers (mbarrier), CTA scope: arrive releases, try_wait acquires.
/// Named barrier ID (1..15; 0 is the team barrier) over THREADS threads. A constant id: with an id in
/// a register ptxas reserves all 16 barriers of the block.
template <int ID, int THREADS>
__device__ inline void named_barrier_sync() {
  static_assert(ID >= 1 && ID < 16 && THREADS % 32 == 0, "barriers 1..15, whole warps");
  asm volatile("bar.sync %0, %1;\n" ::"n"(ID), "n"(THREADS) : "memory");
}
/// The named barrier of consumer warpgroup c (ids 1, 2, ...), over its 128 threads.
template <int CONSUMERS>
__device__ inline void consumer_barrier_sync(int c) {
  static_assert(CONSUMERS <= 4, "up to 4 consumer warpgroups");
  switch (c) {
    case 0: named_barrier_sync<1, 128>(); break;
    case 1: named_barrier_sync<2, 128>(); break;
    case 2: named_barrier_sync<3, 128>(); break;
    default: named_barrier_sync<4, 128>(); break;
  }
}
__device__ inline void mbarrier_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ inline void mbarrier_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
__device__ inline void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
/// Arrives and adds `bytes` to the transaction count the phase waits for (the TMA copies' bytes).
__device__ inline void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}
/// One TMA box of a 2-D tensor map (in global memory) at (inner, outer) into scratch; its bytes
/// complete a transaction of `bar`.
__device__ inline void tma_load_2d(void* dst, const void* tensor_map, int inner, int outer, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_addr(dst)),
      "l"(tensor_map), "r"(inner), "r"(outer), "r"(smem_addr(bar))
      : "memory");
}
/// The same box written at the same scratch offset of every team of the cluster in `mask` (bit r:
/// the team of rank r), each copy completing a transaction of the barrier at `bar`'s offset there.
__device__ inline void tma_load_2d_multicast(void* dst, const void* tensor_map, int inner, int outer, uint64_t* bar,
                                             uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%2, %3}], [%4], %5;\n" ::"r"(smem_addr(dst)),
      "l"(tensor_map), "r"(inner), "r"(outer), "r"(smem_addr(bar)), "h"(mask)
      : "memory");
}
/// One TMA box of a 2-D tensor map (in global memory) at (inner, outer) from scratch, in the bulk
/// group of this thread's stores (committed by bulk_store_commit); the map clips what lies past
/// the tensor's edge.
__device__ inline void tma_store_2d(const void* tensor_map, const void* src, int inner, int outer) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(tensor_map),
               "r"(inner), "r"(outer), "r"(smem_addr(src))
               : "memory");
}
__device__ inline void bulk_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/// Waits until all but the PENDING most recent of this thread's committed bulk stores have read their
/// scratch (it may be written again).
template <int PENDING>
__device__ inline void bulk_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(PENDING) : "memory");
}
/// Waits until this thread's committed bulk stores are complete.
__device__ inline void bulk_store_wait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
/// This team's rank in its cluster.
__device__ inline uint32_t cluster_cta_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
/// Arrives on the barrier at `bar`'s offset in the scratch of cluster team `cta`. CTA-scope release
/// (the default), as CUTLASS's ClusterBarrier: with .release.cluster each arrival waited behind a
/// memory barrier for the wgmma group still in flight (perf notes 36: 2.1x slower).
__device__ inline void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\nmbarrier.arrive.shared::cluster.b64 _, "
      "[remote];\n}\n" ::"r"(smem_addr(bar)),
      "r"(cta)
      : "memory");
}
/// Every thread of every team of the cluster (not .aligned: the producer warp's threads reach it
/// apart).
__device__ inline void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
/// The GPU's global timer (ns).
__device__ inline uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
/// Waits until the phase of parity `parity` of the barrier has completed.
__device__ inline void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  const unsigned addr = smem_addr(bar);
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
  } while (!done);
}
#endif

/// ACT: the activation the consumers' epilogue is compiled for (an int of Activation; the launch
/// instantiates one kernel per activation, with_ws_activation), or kActivationAtRunTime (one kernel
/// with every activation's epilogue behind a switch). CLUSTER: 1, or 2 for two-team clusters that share
/// B through TMA multicast (WsMulticast; launch_wgmma_ws sets the kernel's cluster size).
/// SPLIT_K: the kernel of launch_wgmma_ws_split_k (k_splits work items per tile of C, each storing
/// its partial sums), compiled apart so that the other kernels keep their K loop and epilogue as they
/// are.
template <class ExecSpace, class Tile, class TIn, class TOut, int ACT = kActivationAtRunTime, int CLUSTER = 1,
          bool SPLIT_K = false>
struct Sm90WgmmaWsMatmul {
  using compute = float;
  using policy_type = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<Tile::threads, Tile::MIN_TEAMS>>;
  using member_type = typename policy_type::member_type;

  static constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK;
  static constexpr int STAGES = Tile::STAGES;
  static constexpr int kThreads = Tile::threads;
  static constexpr int kConsumers = BM / 64;     // consumer warpgroups
  static constexpr int kProducerThreads = 128;  // warpgroup 0
  // Two-team clusters (CLUSTER = 2): the teams of a cluster take the tiles 2i and 2i + 1 of a column
  // of tiles (a pair, in grouped order over pairs), so they need the same B: each loads its own A
  // and half of B (BN / 2 columns), and multicasts that half into both teams' stage buffer. A stage
  // then goes back to the producer only once both teams' consumers are done with it: every consumer
  // thread releases it in its own team, and one thread a consumer warp in the other team too.
  static constexpr int kCluster = CLUSTER;
  // Which tiles could run as clusters: the 128x256 f16/bf16 tile only (one kernel more per type pair
  // and activation; the smaller tiles run where K is short and the pair's lockstep costs).
  static constexpr bool kClusterCapable =
      CLUSTER == 1 && !SPLIT_K && Tile::BM == 128 && Tile::BN == 256 && !Tile::tf32 && !Tile::i8;
  static constexpr bool kSplitK = SPLIT_K;
  template <int C>
  using with_cluster = Sm90WgmmaWsMatmul<ExecSpace, Tile, TIn, TOut, ACT, C>;
  // Steps the producer keeps in flight before publishing the oldest: at most STAGES - 2, since the
  // consumers release a buffer one step late (the MMA group that reads it stays in flight).
  static constexpr int kLag = STAGES - 2;
  // Whether the consumers may start their accumulators from the bias (load_wgmma_bias) where alpha
  // allows: not at BN = 256, whose 168-register kernels spilled 152-168 bytes against 88 with the
  // bias loaded into the accumulators from global memory (ptxas, f16; perf notes 35, try 2; the
  // staged-copy form kept here was not compiled at BN = 256) and where a tile's many K steps leave
  // the epilogue's bias a small share.
  static constexpr bool kBiasInAccumulators = BN < 256 && !Tile::i8;
  static constexpr int kScratchLevel = 0;
  static constexpr bool kTf32 = Tile::tf32;
  // TF32 tiles that may read an A stored along M through registers (a_mn_major)
  static constexpr bool kTf32ARegisters = kTf32 && BN <= kTf32ARegistersMaxBN;
  static constexpr bool kI8 = Tile::i8;  // i8 inputs, i32 accumulators held in acc's registers bit for bit
  // wgmma reads 32-bit and 8-bit operands only K-major: the launch packs the others, loads are TMA.
  static constexpr bool kKMajorOnly = kTf32 || kI8;
  static constexpr bool kSupported = kTf32 ? std::is_same<TIn, float>::value
                                     : kI8 ? std::is_same<TIn, int8_t>::value && std::is_same<TOut, int32_t>::value
                                           : mma_input_supported<TIn>();
  static constexpr int kElemBytes = int(sizeof(TIn));
  static constexpr int kAElems = BM * BK, kBElems = BK * BN;
  static constexpr int kStageElems = kAElems + kBElems;
  // Scratch is addressed in 2-byte units (uint16_t*) whatever the element size.
  static constexpr int kAUnits = kAElems * kElemBytes / 2, kStageUnits = kStageElems * kElemBytes / 2;
  static constexpr std::size_t kStageBytes = std::size_t(STAGES) * kStageElems * kElemBytes;
  static_assert(kThreads == (kConsumers + 1) * 128, "one producer warpgroup and BM / 64 consumer warpgroups");
  static_assert(!kSupported || (BK * kElemBytes == 128 && BM % 64 == 0 &&
                                 (BN == 128 || BN == 256 || (BN == 64 && !kI8) || (BN == 192 && !kKMajorOnly)) &&
                                 STAGES >= 3),
                "wgmma tiles: a K step is one 128-byte swizzle row, 64-row warpgroups, N = 128 or 256 (or 64 "
                "or 192 for f16/bf16), >= 3 stages");
  static_assert(!kSupported || ((kAUnits * 2) % 1024 == 0 && (kStageUnits * 2) % 1024 == 0),
                "stage buffers on swizzle atoms");
  static_assert(CLUSTER == 1 || (CLUSTER == 2 && !kKMajorOnly && BN % 128 == 0),
                "clusters of 2 teams, f16/bf16, each team multicasting whole 64-column blocks of B");
  static_assert(!SPLIT_K || (CLUSTER == 1 && std::is_same<TOut, std::conditional_t<Tile::i8, int32_t, float>>::value &&
                             ACT == int(Activation::none)),
                "split K: one team a tile, partial sums in f32 (i32 for i8), the epilogue in the reduction");

  // C through TMA stores (tma_c; launch_wgmma_ws decides): each consumer finishes its 64 x BN
  // outputs a 128-byte-wide column chunk at a time into its own 64 x 128-byte box buffer, and one
  // thread stores the box with TMA, which writes whole lines and runs on while the warpgroup goes on
  // to the next chunk and the next tile's main loop. (Stored from registers, the four lanes of a row
  // wrote 8 bytes each and the L2 counted every sector of C twice: perf notes 54; through TMA, f16
  // 16384^2 x 256 ran 1.8x faster: perf notes 59.) 16- and 32-bit C; not the split-K partial sums
  // nor i8. Column-major 16-bit C goes as its transpose (stmatrix.trans into the box). One buffer a
  // consumer of its own (a second would not fit beside the 128x256 tile's four 48 KB stages); the
  // other box of store_tile_through_tma is the consumer's rows of A in the tile's last stage buffer.
  static constexpr bool kTmaStoreCapable = !SPLIT_K && !kI8 && (sizeof(TOut) == 2 || sizeof(TOut) == 4) &&
                                           ACT != kActivationAtRunTime;
  static constexpr std::size_t kStoreBoxBytes = 64 * 128;
  static constexpr std::size_t kStoreBytes = kTmaStoreCapable ? kConsumers * kStoreBoxBytes : 0;

  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    // +1024: the base is aligned up to a swizzle atom; then the consumers' store boxes (on atoms, as
    // kStageBytes is), a full and an empty barrier per stage, and each consumer's two copies of its
    // tiles' bias (BN floats each: a team's tiles alternate).
    return kStageBytes + kStoreBytes + 1024 + 2 * STAGES * sizeof(uint64_t) + 2 * kConsumers * BN * sizeof(float);
  }

  MatmulProblem<TIn, TOut> p;
  int group_m;
  int tiles_m, tiles_n;
  int vector_length;
  /// Tensor maps (CUtensorMap, 128 bytes each, in device global memory) of op(A) and op(B), boxes of
  /// the staged layouts; null: the producer warpgroup copies with cp.async (launch_wgmma_ws decides).
  const void* tma_a = nullptr;
  const void* tma_b = nullptr;
  /// Tensor map of C (boxes of kTmaStoreCols columns x 64 rows) where the consumers store C through
  /// TMA (kTmaStoreCapable; beta = 0, TMA loads, C row-major or column-major 16-bit, its base and
  /// pitch 16-byte aligned); null: stores from registers.
  const void* tma_c = nullptr;
  /// With tma_c: C is column-major (16-bit), its map that of C's transpose (boxes of 64 rows x 64
  /// columns, written by stmatrix.trans).
  bool tma_c_transposed = false;
  /// The drift bound (bound_ws_drift; TMA producers only): drift_count[g] counts the teams whose
  /// producer has started chunk g (drift_chunk_steps K steps, numbered across a team's tiles) for
  /// the first drift_chunks chunks, those every team runs; a producer starts chunk g once
  /// drift_teams have started chunk g - drift_slack_chunks - 1, or after drift_wait_limit_ns.
  /// Null: no bound.
  int* drift_count = nullptr;
  int drift_chunk_steps = 0, drift_slack_chunks = 0, drift_teams = 0, drift_chunks = 0;
  int64_t drift_wait_limit_ns = 0;
  /// Split K (SPLIT_K; launch_wgmma_ws_split_k: TOut = float, no epilogue): k_splits work items
  /// per tile of C, work item t the tile t % tiles over K values [s * k_per_split, (s + 1) *
  /// k_per_split) with s = t / tiles (k_per_split a multiple of BK), its sums stored as they are
  /// into C shifted by s * c_split_stride elements (one partial C per split). 1: no split.
  int k_splits = 1;
  int64_t k_per_split = 0;
  int64_t c_split_stride = 0;
  /// TF32: op(A) is loaded as stored along M (tma_a describes rows of M) and its fragments go to the
  /// MMAs from registers; false: op(A) is K-major like B.
  bool a_mn_major = false;

#if defined(TILEKIT_SM90A_DEVICE)
  /// The tiles (CLUSTER = 1) or pairs of tiles (CLUSTER = 2) of C.
  __device__ int tiles_of_c() const { return CLUSTER == 2 ? tiles_m / 2 * tiles_n : tiles_m * tiles_n; }
  /// The work items the teams share out: every tile (pair) once per K split.
  __device__ int work_items() const { return SPLIT_K ? tiles_of_c() * k_splits : tiles_of_c(); }

  /// Work item t's K range (first K value and K steps) and its split (0 without split K); its tile
  /// is tile_origin(t % tiles_of_c()).
  __device__ void work_k_range(int t, int& split, int64_t& k_begin, int64_t& ktiles) const {
    if constexpr (SPLIT_K) {
      split = t / tiles_of_c();
      k_begin = int64_t(split) * k_per_split;
      const int64_t k_len = p.K - k_begin < k_per_split ? p.K - k_begin : k_per_split;
      ktiles = (k_len + BK - 1) / BK;
    } else {
      split = 0;
      k_begin = 0;
      ktiles = (p.K + BK - 1) / BK;
    }
  }

  /// The first row and column of this team's tile of work item t: tile t in grouped order, or with
  /// clusters this team's tile of pair t, the pairs in grouped order (group_m / 2 pair rows a group,
  /// the same rows of C as group_m tile rows).
  __device__ void tile_origin(int t, int64_t& m0, int64_t& n0) const {
    int tile_m, tile_n;
    if constexpr (CLUSTER == 2) {
      int pair_m;
      grouped_tile(t, group_m / 2 > 0 ? group_m / 2 : 1, tiles_m / 2, tiles_n, pair_m, tile_n);
      tile_m = 2 * pair_m + int(cluster_cta_rank());
    } else {
      grouped_tile(t, group_m, tiles_m, tiles_n, tile_m, tile_n);
    }
    m0 = int64_t(tile_m) * BM;
    n0 = int64_t(tile_n) * BN;
  }

  /// Waits until every team's producer has started chunk `chunk` (drift_count), or for at most
  /// drift_wait_limit_ns; false once the limit has passed (the caller stops waiting from then on).
  __device__ bool wait_for_drift(int chunk) const {
    const volatile int* count = drift_count + chunk;
    if (*count >= drift_teams) return true;
    const uint64_t t0 = global_timer_ns();
    while (*count < drift_teams) {
      if (global_timer_ns() - t0 > uint64_t(drift_wait_limit_ns)) return false;
      __nanosleep(128);
    }
    return true;
  }

  /// The producer warpgroup, for one storage order of A and B: every K step of every tile of this
  /// team, numbered across its tiles (step = i * ktiles + kt for its i-th tile), so that stage
  /// buffers and barrier phases run on without a break and the next tile loads while the consumers
  /// write the last one's C.
  template <bool A_K, bool B_N>
  __device__ void produce(uint16_t* smem, uint64_t* full, uint64_t* empty, int first, int stride, int tid) const {
    const int tiles = work_items();
    const bool tma = kKMajorOnly || tma_a != nullptr;  // TF32, i8: always TMA (the launch packs what it cannot load)
    if (tma && tid != 0) return;  // TMA: one thread issues each stage's boxes
    bool a_chunked = false, b_chunked = false;
    if constexpr (!kKMajorOnly)
      if (!tma) operands_chunked<A_K, B_N>(p, a_chunked, b_chunked);
    int64_t step = 0;
    // The drift bound: chunk = step / drift_chunk_steps, chunk_pos = step % drift_chunk_steps.
    const bool drift = tma && drift_count != nullptr;
    bool bounded = drift;  // false once a wait has reached its limit
    int chunk = 0, chunk_pos = 0;
    const int rank = CLUSTER == 2 ? int(cluster_cta_rank()) : 0;
    for (int t = first; t < tiles; t += stride) {
      int64_t m0, n0, k_begin, ktiles;
      int split;
      work_k_range(t, split, k_begin, ktiles);
      tile_origin(SPLIT_K ? t % tiles_of_c() : t, m0, n0);
      for (int64_t kt = 0; kt < ktiles; ++kt, ++step) {
        if (drift) {
          if (chunk_pos == 0) {
            const int behind = chunk - drift_slack_chunks - 1;  // the chunk every team must have started
            if (bounded && behind >= 0 && behind < drift_chunks) bounded = wait_for_drift(behind);
            if (chunk < drift_chunks) atomicAdd(drift_count + chunk, 1);
          }
          if (++chunk_pos == drift_chunk_steps) chunk_pos = 0, ++chunk;
        }
        const int s = int(step % STAGES);
        // The buffer's previous step (step - STAGES) is released by every consumer thread.
        if (step >= STAGES) mbarrier_wait(&empty[s], uint32_t((step / STAGES - 1) & 1));
        uint16_t* As = smem + s * kStageUnits;
        uint16_t* Bs = As + kAUnits;
        if (tma) {
          mbarrier_arrive_expect_tx(&full[s], uint32_t(kStageElems * kElemBytes));  // boxes past the edge count too
          const int k0 = int(k_begin + kt * BK);
          if constexpr (A_K)  // [BM][64 k]: one box of 64 k x BM rows
            tma_load_2d(As, tma_a, k0, int(m0), &full[s]);
          else  // [BM / W][BK k][W m], W = 128 bytes of elements: BM / W boxes of W m x BK k
            for (int blk = 0; blk < BM * kElemBytes / 128; ++blk)
              tma_load_2d(As + blk * BK * 64, tma_a, int(m0) + blk * 128 / kElemBytes, k0, &full[s]);
          if constexpr (CLUSTER == 2) {  // this team's half of B, into both teams (mask 0b11)
            if constexpr (B_N)  // blocks rank * BN / 128 .. of [BN / 64][64 k][64 n]
              for (int blk = rank * BN / 128; blk < (rank + 1) * BN / 128; ++blk)
                tma_load_2d_multicast(Bs + blk * 64 * BK, tma_b, int(n0) + 64 * blk, k0, &full[s], 0x3);
            else  // rows rank * BN / 2 .. of [BN][64 k]: one box of 64 k x BN / 2 rows
              tma_load_2d_multicast(Bs + rank * (BN / 2) * BK, tma_b, k0, int(n0) + rank * (BN / 2), &full[s], 0x3);
          } else {
            if constexpr (B_N)  // [BN / 64][64 k][64 n]
              for (int blk = 0; blk < BN / 64; ++blk)
                tma_load_2d(Bs + blk * 64 * BK, tma_b, int(n0) + 64 * blk, k0, &full[s]);
            else  // [BN][64 k]: one box of 64 k x BN rows
              tma_load_2d(Bs, tma_b, k0, int(n0), &full[s]);
          }
          continue;
        }
        if constexpr (!kKMajorOnly && CLUSTER == 1) {  // (clusters are launched with TMA loads only)
          // cp.async: every producer thread copies its chunks of the step
          stage_wgmma_step<BM, BN, BK, kProducerThreads, A_K, B_N>(As, Bs, p, m0, n0, k_begin + kt * BK, a_chunked,
                                                                    b_chunked, tid);
          cp_async_commit();
          if (step >= kLag) {  // this thread's copies of step - kLag have landed: publish them
            cp_async_wait<kLag>();
            fence_proxy_async_shared();
            mbarrier_arrive(&full[(step - kLag) % STAGES]);
          }
        }
      }
    }
    if constexpr (!kKMajorOnly) {
      if (tma) return;
      cp_async_wait<0>();
      fence_proxy_async_shared();
      for (int64_t st = step > kLag ? step - kLag : 0; st < step; ++st) mbarrier_arrive(&full[st % STAGES]);
    }
  }

  /// Consumer c's K steps of one tile, for one storage order of A and B, into acc (zeroed, or set
  /// to bias / alpha, by the caller); `step` is this team's running step number. Every buffer read
  /// is released once the MMAs that read it are done, the tile's last one included.
  /// Gives stage buffer s back to the producer(s): this thread's arrival, and with clusters one a warp
  /// in the other team (whose producer multicasts into this team's buffer too).
  /// (The warp's first thread and the other team's rank are read here, at each release, rather than
  /// held in registers across the K loop, whose accumulators leave few free.)
  __device__ static void release_stage(uint64_t* empty, int s) {
    mbarrier_arrive(&empty[s]);
    if constexpr (CLUSTER == 2)
      if ((threadIdx.x + threadIdx.y * blockDim.x) % 32 == 0) mbarrier_arrive_cluster(&empty[s], cluster_cta_rank() ^ 1u);
  }

  /// Fences every accumulator register (as the type the MMAs bind it: i32 bits for i8).
  __device__ static void fence_accumulators(float (&acc)[BN / 2]) {
#pragma unroll
    for (int v = 0; v < BN / 2; ++v) {
      if constexpr (kI8)
        fence_operand_bits(acc[v]);
      else
        fence_operand(acc[v]);
    }
  }

  /// Consumer c's K steps of one tile. With keep_last, the tile's last stage buffer stays the
  /// consumer's: the epilogue stores C through its rows of A there (store_tile_through_tma) and gives
  /// it back itself.
  template <bool A_K, bool B_N>
  __device__ void consume(const uint16_t* smem, uint64_t* full, uint64_t* empty, int c, int64_t ktiles,
                          int64_t& step, float (&acc)[BN / 2], bool keep_last) const {
    for (int64_t kt = 0; kt < ktiles; ++kt, ++step) {
      const int s = int(step % STAGES);
      mbarrier_wait(&full[s], uint32_t((step / STAGES) & 1));
      // Consumer c's 64 rows of A: rows 64c.. of [BM][64] (K-major), or block c of [BM / 64][64][64]
      // (M-major): the same offset.
      const uint16_t* As = smem + s * kStageUnits + c * 64 * BK * kElemBytes / 2;
      const uint16_t* Bs = smem + s * kStageUnits + kAUnits;
      if constexpr (kI8)
        wgmma_step_s8<BN>(acc, As, Bs);
      else if constexpr (kTf32)
        wgmma_step_tf32<BN>(acc, As, Bs);
      else
        wgmma_step<BN, BK, std::is_same<TIn, bf16>::value, A_K, B_N>(acc, As, Bs);
      // Step kt's group stays in flight; step kt - 1's is done, so its buffer goes back.
      wgmma_wait<1>();
      fence_accumulators(acc);
      if (kt >= 1) release_stage(empty, int((step - 1) % STAGES));
    }
    wgmma_wait<0>();
    fence_accumulators(acc);
    if (ktiles > 0 && !keep_last) release_stage(empty, int((step - 1) % STAGES));  // the tile's last buffer too
  }

  /// consume() for TF32 with A stored along M: the warpgroup loads its A fragments from the stage
  /// buffer into registers (4 a thread per k8 slice, 16 a step) and issues each slice's MMA with A
  /// from there, as its own group. One step's four groups stay in flight: before slice ks of step kt
  /// overwrites its 4 registers, it waits for the group of slice ks of step kt - 1 that read them
  /// (wgmma.wait_group 3), and the fence there keeps the compiler from reusing them earlier. Two
  /// full sets of 16 (a step in flight while the next loads) left the 64x128 tile too few registers
  /// and ptxas serialised the MMAs (C7512); one set waited for each step's MMAs before the next
  /// (wait_group 0) ran the tile at about 190 TFLOP/s where its K-major form runs 290 (perf notes 67).
  __device__ void consume_tf32_a_in_registers(const uint16_t* smem, uint64_t* full, uint64_t* empty, int c,
                                              int64_t ktiles, int64_t& step, float (&acc)[BN / 2],
                                              int tid_in_wg, bool keep_last) const {
    constexpr int kSBO = 1024;
    uint32_t a[16] = {};
    for (int64_t kt = 0; kt < ktiles; ++kt, ++step) {
      const int s = int(step % STAGES);
      mbarrier_wait(&full[s], uint32_t((step / STAGES) & 1));
      const uint16_t* As = smem + s * kStageUnits + c * 64 * BK * kElemBytes / 2;  // blocks 2c, 2c + 1
      const uint16_t* Bs = smem + s * kStageUnits + kAUnits;
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) {
        wgmma_wait<3>();  // slice ks of step kt - 1 is done with its registers
#pragma unroll
        for (int v = 0; v < 4; ++v) fence_operand_u32(a[4 * ks + v]);
        if (ks == 3) {  // every group of step kt - 1 is done: its buffer goes back
          fence_accumulators(acc);
          if (kt >= 1) release_stage(empty, int((step - 1) % STAGES));
        }
        uint32_t slice[4];
        load_tf32_a_fragment_slice(slice, As, ks, tid_in_wg);
#pragma unroll
        for (int v = 0; v < 4; ++v) a[4 * ks + v] = slice[v], fence_operand_u32(a[4 * ks + v]);
#pragma unroll
        for (int v = 0; v < BN / 2; ++v) fence_operand(acc[v]);
        wgmma_fence();
        const uint32_t regs[4] = {a[4 * ks], a[4 * ks + 1], a[4 * ks + 2], a[4 * ks + 3]};
        wgmma_m64k8_tf32_rs<BN>(acc, regs, wgmma_descriptor(Bs + ks * 16, 16, kSBO));
        wgmma_commit();
      }
    }
    wgmma_wait<0>();
    fence_accumulators(acc);
#pragma unroll
    for (int v = 0; v < 16; ++v) fence_operand_u32(a[v]);
    if (ktiles > 0 && !keep_last) release_stage(empty, int((step - 1) % STAGES));  // the tile's last buffer too
  }

  /// Consumer c's 64 x BN outputs (rows from row0) through two store boxes, one column chunk after
  /// the other, the even chunks through `stage_box` and the odd ones through `box`: the chunk's
  /// outputs into its box once that box's last store has read it, a proxy fence (the TMA store reads
  /// through the async proxy), and one thread's store. `stage_box` is the consumer's 64 rows of A in
  /// the tile's last stage buffer (consume with keep_last), free once the last MMAs are done; it goes
  /// back to the producer (stage `stage`) once its last store has read it. With two boxes the wait
  /// before a chunk is for the store issued two chunks before, not the one just issued (with one box,
  /// the barrier waits around them took about a sixth of f16 16384^2 x 256's stall samples: perf notes 71). Null `stage_box` (a
  /// tile without K steps): every chunk through `box`. The barriers are the warpgroup's own, so the
  /// other consumer and the producer run on.
  template <int CH = 0>
  __device__ void store_tile_through_tma(char* box, char* stage_box, uint64_t* empty, int stage,
                                         const float (&acc)[BN / 2], int64_t row0, int64_t n0,
                                         const float* lane_bias, int c, int tid_in_wg) const {
    constexpr int kChunks = BN / kTmaStoreCols<TOut>;
    if constexpr (CH < kChunks) {
      constexpr bool kTransposable = sizeof(TOut) == 2;
      const bool transposed = kTransposable && tma_c_transposed;
      // Chunk 0 writes the stage box, which no store has used since the producer filled it.
      if (tid_in_wg == 0 && (CH > 0 || !stage_box)) {
        if (stage_box)
          bulk_store_wait_read<1>();  // the store two chunks back has read this chunk's box
        else
          bulk_store_wait_read<0>();
      }
      consumer_barrier_sync<kConsumers>(c);
      char* const chunk_box = stage_box && CH % 2 == 0 ? stage_box : box;
      if (transposed) {
        if constexpr (kTransposable)
          stage_wgmma_store_chunk_transposed<BN, CH, Activation(ACT), TOut>(chunk_box, acc, p.alpha, lane_bias,
                                                                             tid_in_wg);
      } else {
        stage_wgmma_store_chunk<BN, CH, Activation(ACT), TOut>(chunk_box, acc, p.alpha, lane_bias, tid_in_wg);
      }
      fence_proxy_async_shared();
      consumer_barrier_sync<kConsumers>(c);
      if (tid_in_wg == 0) {
        const int col = int(n0 + CH * kTmaStoreCols<TOut>);
        tma_store_2d(tma_c, chunk_box, transposed ? int(row0) : col, transposed ? col : int(row0));
        bulk_store_commit();
      }
      store_tile_through_tma<CH + 1>(box, stage_box, empty, stage, acc, row0, n0, lane_bias, c, tid_in_wg);
    } else if (stage_box) {
      // The stage buffer goes back once the last store from it has read it: the last store if the
      // last chunk (kChunks - 1) was even, else the one before. The other threads wrote their part
      // before the last barrier.
      if (tid_in_wg == 0) {
        if constexpr ((kChunks - 1) % 2 == 0)
          bulk_store_wait_read<0>();
        else
          bulk_store_wait_read<1>();
      }
      release_stage(empty, stage);
    }
  }
#endif

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    if constexpr (kSupported) {
      char* raw = static_cast<char*>(team.team_scratch(0).get_shmem(scratch_bytes()));
      uint16_t* smem = reinterpret_cast<uint16_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
      const int tid = team.team_rank() * vector_length + vector_lane();
#if defined(TILEKIT_SM90A_DEVICE)
      char* const store_box = reinterpret_cast<char*>(smem) + kStageBytes;  // kConsumers x kStoreBoxBytes
      uint64_t* full = reinterpret_cast<uint64_t*>(store_box + kStoreBytes);
      uint64_t* empty = full + STAGES;
      float* bias_stage = reinterpret_cast<float*>(empty + STAGES);  // kConsumers x 2 x BN (16-byte aligned)
      if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
          // TMA: one arrival (with the stage's bytes); cp.async: every producer thread publishes.
          mbarrier_init(&full[s], kKMajorOnly || tma_a != nullptr ? 1 : kProducerThreads);
          // every consumer thread releases; with clusters one thread a consumer warp of the other team too
          mbarrier_init(&empty[s], kConsumers * 128 + (CLUSTER == 2 ? kConsumers * 4 : 0));
        }
        mbarrier_init_fence();
      }
      team.team_barrier();  // the barriers are initialised before anyone uses them
      // ... in both teams of a cluster before either multicasts into the other or arrives there
      if constexpr (CLUSTER == 2) cluster_sync_all();

      const int wg = tid / 128;
      const int first = team.league_rank() / CLUSTER, stride = team.league_size() / CLUSTER;
      if (wg == 0) {  // ---- producer
        if constexpr (kTf32ARegisters)  // B K-major; A K-major or (a_mn_major) as stored along M
          a_mn_major ? produce<false, false>(smem, full, empty, first, stride, tid)
                     : produce<true, false>(smem, full, empty, first, stride, tid);
        else if constexpr (kKMajorOnly)  // both operands K-major (launch_wgmma_ws packs them so)
          produce<true, false>(smem, full, empty, first, stride, tid);
        else
          with_operand_orders(p, [&](auto a_k, auto b_n) {
            produce<a_k.value, b_n.value>(smem, full, empty, first, stride, tid);
          });
        // Neither team of a cluster leaves while the other may still write its scratch or barriers.
        if constexpr (CLUSTER == 2) cluster_sync_all();
        return;
      }
      // ---- consumer c: rows 64c .. 64c + 63 of each tile; the epilogue once, outside the
      // storage-order dispatch
      const int c = wg - 1;
      const bool bias_in_acc = kBiasInAccumulators && p.bias && bias_folds_into_accumulators(p.alpha);
      const float inv_alpha = bias_in_acc ? 1.0f / p.alpha : 0.0f;
      int64_t step = 0;
      int parity = 0;  // which of the consumer's two bias copies this tile takes
      for (int t = first; t < work_items(); t += stride, parity ^= 1) {
        int64_t m0, n0, k_begin, ktiles;
        int split;
        work_k_range(t, split, k_begin, ktiles);
        tile_origin(SPLIT_K ? t % tiles_of_c() : t, m0, n0);
        // The tile's bias, staged once per consumer warpgroup in shared memory: read from global
        // memory in the epilogue itself, its loads (an L2 latency each, in a row per thread) cost
        // microseconds a tile. Copied before the main loop, whose first wait for the producer
        // covers the load's latency (registers across the loop spilled: perf notes 32). Two
        // copies, alternating between tiles: a thread writes
        // the copy of tile i after passing the barrier of tile i - 1, which every thread reaches
        // only once it has read tile i - 2's, the other copy's, so one barrier a tile orders both
        // ways.
        // Where alpha allows (bias_folds_into_accumulators) the warpgroup reads the staged copy back
        // at once, after its barrier, into its accumulators as bias / alpha (load_wgmma_bias): the
        // epilogue then has no bias to read and no barrier to pass. The barrier and the reads
        // come before the first wait for the producer, which covers them on a team's first tile.
        float* const tile_bias = bias_stage + (2 * c + parity) * BN;
        if constexpr (!kI8)  // (i8: the i32 bias is read in its epilogue, store_wgmma_s32)
          if (p.bias)
            stage_wgmma_bias<BN, 128, TOut>(tile_bias, p.bias, n0, p.N, bias_in_acc ? Activation::none : p.act,
                                            tid % 128);
        if (bias_in_acc) consumer_barrier_sync<kConsumers>(c);  // the bias visible to the warpgroup
        float acc[BN / 2];
        load_wgmma_bias<BN>(acc, bias_in_acc ? tile_bias : nullptr, inv_alpha, tid % 128);
        // C through TMA stores keeps the tile's last stage buffer as a second store box.
        bool keep_last = false;
        if constexpr (kTmaStoreCapable) keep_last = tma_c != nullptr && ktiles > 0;
        if constexpr (kTf32ARegisters)
          a_mn_major ? consume_tf32_a_in_registers(smem, full, empty, c, ktiles, step, acc, tid % 128, keep_last)
                     : consume<true, false>(smem, full, empty, c, ktiles, step, acc, keep_last);
        else if constexpr (kKMajorOnly)
          consume<true, false>(smem, full, empty, c, ktiles, step, acc, keep_last);
        else
          with_operand_orders(p, [&](auto a_k, auto b_n) {
            consume<a_k.value, b_n.value>(smem, full, empty, c, ktiles, step, acc, keep_last);
          });
        const bool staged_bias = !kI8 && p.bias && !bias_in_acc;
        if (staged_bias) consumer_barrier_sync<kConsumers>(c);  // the bias visible to the warpgroup
        if constexpr (SPLIT_K) {  // this split's partial C: the problem's C shifted by whole partial matrices
          MatmulProblem<TIn, TOut> pc = p;
          pc.c.data += int64_t(split) * c_split_stride;
          if constexpr (kI8)
            store_wgmma_s32<BN>(pc, acc, m0 + c * 64, n0, tid % 128);
          else
            store_wgmma_accumulators<BN, ACT>(pc, acc, m0 + c * 64, n0, tid % 128, nullptr, false);
        } else if constexpr (kI8) {
          store_wgmma_s32<BN>(p, acc, m0 + c * 64, n0, tid % 128);
        } else {
          if constexpr (kTmaStoreCapable) {
            if (tma_c) {
              // Consumer c's rows of A in the last stage buffer (as consume reads them): 64 rows of
              // one 128-byte K step, on swizzle atoms as the store box is.
              const int last = int((step - 1) % STAGES);
              char* const stage_box =
                  keep_last ? reinterpret_cast<char*>(smem + last * kStageUnits + c * 64 * BK * kElemBytes / 2)
                            : nullptr;
              store_tile_through_tma(store_box + c * kStoreBoxBytes, stage_box, empty, last, acc, m0 + c * 64, n0,
                                     staged_bias ? in_shared_window(tile_bias) + (tid % 4) * (BN / 4) : nullptr, c,
                                     tid % 128);
              continue;
            }
          }
          store_wgmma_accumulators<BN, ACT>(p, acc, m0 + c * 64, n0, tid % 128, staged_bias ? tile_bias : nullptr,
                                            bias_in_acc);
        }
      }
      if constexpr (kTmaStoreCapable) {
        // The scratch a store reads must outlive it: the last stores complete before the team leaves.
        if (tma_c && tid % 128 == 0) bulk_store_wait();
      }
      if constexpr (CLUSTER == 2) cluster_sync_all();  // as the producer's
#else
      (void)smem, (void)tid;
#endif
    }
  }
};

#ifndef TILEKIT_WS_FIXED_ACTIVATION
#define TILEKIT_WS_FIXED_ACTIVATION 1
#endif

/// Calls g(std::integral_constant<int, A>{}) with A the activation template argument of the
/// warp-specialised kernel that runs activation `act`: act itself, so that each kernel has one
/// epilogue and it follows the main loop in the code. With the five epilogues behind a switch in
/// one kernel (TILEKIT_WS_FIXED_ACTIVATION=0, kActivationAtRunTime) their straight-line copies
/// (600-1200 instructions each) lay at different distances from the main loop, and Nsight Compute
/// showed the far ones stalling on instruction fetch ('no instruction': f16 1024^3 64x128 bias+gelu
/// 138 of its epilogue's 334 stall samples, the copy right after the loop none; docs/perf-notes.md
/// section 30). Costs compile time: five ws kernels a tile instead of one.
template <class G>
void with_ws_activation(Activation act, G&& g) {
#if TILEKIT_WS_FIXED_ACTIVATION
  switch (act) {
    case Activation::none: g(std::integral_constant<int, int(Activation::none)>{}); return;
    case Activation::relu: g(std::integral_constant<int, int(Activation::relu)>{}); return;
    case Activation::leaky_relu: g(std::integral_constant<int, int(Activation::leaky_relu)>{}); return;
    case Activation::silu: g(std::integral_constant<int, int(Activation::silu)>{}); return;
    case Activation::gelu: g(std::integral_constant<int, int(Activation::gelu)>{}); return;
  }
  throw std::invalid_argument("tilekit: activation " + std::to_string(int(act)) +
                              " is none of none, relu, leaky_relu, silu, gelu");
#else
  (void)act;
  g(std::integral_constant<int, kActivationAtRunTime>{});
#endif
}

/// Sets the drift-bound fields of f (a launch of `league` teams over `tiles` tiles, TMA loads) and
/// takes its counters from the split-K workspace (zero on entry). Returns their bytes, which the
/// caller zeroes again in `stream` behind the kernel before releasing the workspace; 0: no bound
/// (too few K steps, no chunk that would ever wait, turned off in `options`, no workspace). What it
/// applied goes to report.ws_drift_bound.
template <class F>
std::size_t bound_ws_drift(F& f, int league, int tiles, void* stream, const MatmulLaunchOptions& options,
                           MatmulLaunchReport& report) {
  WsDriftBound b = kWsDriftBound;
  if (options.ws_drift_forced)
    b = {options.ws_drift_chunk_steps, options.ws_drift_slack_steps, 0, options.ws_drift_wait_limit_ns};
  const int64_t ktiles = (f.p.K + F::BK - 1) / F::BK;
  if (options.ws_drift_off || b.chunk_steps < 1 || ktiles < std::max<int64_t>(1, b.min_k_steps)) return 0;
  // Chunks every team starts: those within the tiles every team has (tiles / league of them).
  // Counted up to 2^24 (64 MB of counters); later chunks run free.
  const int64_t chunks = std::min<int64_t>(int64_t(tiles / league) * ktiles / b.chunk_steps, int64_t(1) << 24);
  const int slack_chunks = (std::max(0, b.slack_steps) + b.chunk_steps - 1) / b.chunk_steps;
  if (chunks <= slack_chunks + 1) return 0;  // no chunk would ever wait
  const std::size_t bytes = std::size_t(chunks) * sizeof(int);
  int* counters = nullptr;
  void* partials = nullptr;
  if (!acquire_split_k_workspace(bytes, 0, stream, counters, partials).empty()) return 0;  // runs free
  f.drift_count = counters;
  f.drift_chunk_steps = b.chunk_steps;
  f.drift_slack_chunks = slack_chunks;
  f.drift_teams = league;
  f.drift_chunks = int(chunks);
  f.drift_wait_limit_ns = b.wait_limit_ns;
  report.ws_drift_bound = "chunks of " + std::to_string(b.chunk_steps) + " K steps, slack " +
                          std::to_string(slack_chunks * b.chunk_steps) + " steps, " + std::to_string(chunks) +
                          " chunks counted, " + std::to_string(league) + " teams, waits up to " +
                          std::to_string(b.wait_limit_ns) + " ns";
  return bytes;
}

/// Launches a warp-specialised wgmma functor as a persistent grid: as many teams as fit on the GPU at
/// once (one per SM for the 128x256 tile's ~193 KB of scratch), each looping over tiles league_size
/// apart, so that a team's next tile is loading while it writes the last one's C. Loads go through
/// TMA where tensor maps can describe both operands (16-byte aligned bases and pitches, unit stride
/// along the staged rows, sizes under 2^31), else through the cp.async producer (f16/bf16); the
/// TF32 tile instead first packs each operand that is not K-major with such a pitch into a K-major
/// copy (pack_k_major, into the session's packing workspace), so that it always loads through TMA.
/// The tensor maps are copied in stream order into a slot of device memory kept for them
/// (acquire_tensor_map_slot): Kokkos passes kernel arguments by value, not as __grid_constant__, so
/// a map inside the functor would have no global address.
#if defined(KOKKOS_ENABLE_CUDA)
/// The kernel Kokkos launches for a TeamPolicy parallel_for of functor F:
/// Kokkos::Impl::CudaParallelLaunch names it (the same template in Kokkos 3.4 and 4.x).
template <class F>
const void* kokkos_kernel_of() {
  using Policy = typename F::policy_type;
  using Driver = Kokkos::Impl::ParallelFor<F, Policy, Kokkos::Cuda>;
  using Launch = Kokkos::Impl::CudaParallelLaunch<Driver, typename Policy::launch_bounds>;
  return reinterpret_cast<const void*>(Launch::get_kernel_func());
}

/// Makes the kernel that Kokkos launches for functor FC run in clusters of 2 teams: a Kokkos launch
/// sets no cluster dimensions, but a kernel's required cluster size is a function attribute.
/// Once per type; "" or why not.
template <class FC>
std::string require_cluster_of_two() {
  static const std::string why = [] {
    const void* kernel = kokkos_kernel_of<FC>();
    const std::pair<cudaFuncAttribute, int> dims[] = {{cudaFuncAttributeRequiredClusterWidth, 2},
                                                      {cudaFuncAttributeRequiredClusterHeight, 1},
                                                      {cudaFuncAttributeRequiredClusterDepth, 1}};
    for (const auto& d : dims) {
      const cudaError_t e = cudaFuncSetAttribute(kernel, d.first, d.second);
      if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return std::string("the kernel's cluster size could not be set: ") + cudaGetErrorString(e);
      }
    }
    return std::string();
  }();
  return why;
}
#endif

/// How many teams of kernel F one SM holds at once by its registers and scratch (the CUDA occupancy
/// calculator on the kernel Kokkos launches for F), so that a persistent grid is no larger than what
/// runs at once: a team that started only when others had finished all their tiles would make a
/// tail (the TF32 64x64 tile's scratch allows 3 teams an SM, its 128 registers a thread 2). Once per
/// kernel; a large number where the query fails (scratch then bounds the grid alone).
template <class F>
int resident_teams_per_sm() {
#if defined(KOKKOS_ENABLE_CUDA)
  static int teams = 0;  // (a failed query is asked again at the next launch)
  if (teams > 0) return teams;
  const void* kernel = kokkos_kernel_of<F>();
  const int dynamic = int(F::scratch_bytes() + 1024);
  int n = 0;
  // Above 48 KB of dynamic shared memory the calculator counts only kernels allowed that much.
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, F::kThreads, dynamic) != cudaSuccess || n < 1) {
    (void)cudaGetLastError();
    return 1 << 20;
  }
  teams = n;
  return teams;
#else
  return 1 << 20;
#endif
}

/// Launches f as a persistent grid of `league` teams, with the tensor maps in `maps` where
/// `why_not_tma` is empty (else the cp.async producer; C's map, maps + 256, where also
/// `why_not_tma_store` is), the drift bound where it applies, and what it did recorded in `report`.
/// Releases the packing workspace where `packed`.
template <class F>
void run_wgmma_ws(F f, int league, const MatmulConfig& cfg, const std::string& label,
                  const Kokkos::DefaultExecutionSpace& space, const unsigned char* maps, const std::string& why_not_tma,
                  const std::string& why_not_tma_store, bool packed, const MatmulLaunchOptions& options,
                  MatmulLaunchReport& report) {
  typename F::policy_type policy(space, league, cfg.team_size, cfg.vector_length);
  policy.set_scratch_size(F::kScratchLevel, Kokkos::PerTeam(F::scratch_bytes()));
#if defined(KOKKOS_ENABLE_CUDA)
  cudaStream_t stream = space.cuda_stream();
  std::string why = why_not_tma;
  TensorMapSlot slot;
  if (why.empty()) why = acquire_tensor_map_slot(maps, stream, slot);
  if (why.empty()) {
    f.tma_a = slot.device;
    f.tma_b = static_cast<unsigned char*>(slot.device) + 128;
    if (why_not_tma_store.empty()) {
      f.tma_c = static_cast<unsigned char*>(slot.device) + 256;
      f.tma_c_transposed = f.p.c.cs != 1;
    }
  } else if (F::kKMajorOnly) {  // no cp.async producer for TF32 and i8
    if (packed) release_pack_workspace(stream);
    throw std::runtime_error("tilekit: " + label + ": TMA cannot load the operands: " + why);
  }
  report.ws_loads = why.empty() ? (packed ? "tma (packed)" : "tma") : "cp.async: " + why;
  if (f.a_mn_major) report.ws_loads += ", A along M in registers";
  report.ws_stores = f.tma_c ? std::string("tma") : "registers: " + (why.empty() ? why_not_tma_store : "cp.async loads");
  // (not with split K: its partial sums hold the workspace the counters come from, and its work
  // items are few and deep)
  const std::size_t drift_bytes =
      why.empty() && !F::kSplitK ? bound_ws_drift(f, league, f.tiles_m * f.tiles_n, stream, options, report) : 0;
  Kokkos::parallel_for(label, policy, f);
  release_tensor_map_slot(slot, stream);
  if (drift_bytes > 0) {  // the counters back to zero for the workspace's next user
    if (cudaMemsetAsync(f.drift_count, 0, drift_bytes, stream) != cudaSuccess) {
      (void)cudaGetLastError();
      release_split_k_workspace(stream);
      if (packed) release_pack_workspace(stream);
      throw std::runtime_error("tilekit: " + label + ": zeroing the drift-bound counters failed");
    }
    release_split_k_workspace(stream);
  }
  if (packed) release_pack_workspace(stream);
#else
  (void)maps, (void)why_not_tma, (void)why_not_tma_store, (void)packed, (void)options, (void)report;
  Kokkos::parallel_for(label, policy, f);
#endif
}

/// Launches a warp-specialised wgmma functor as a persistent grid: as many teams as fit on the GPU at
/// once (one per SM for the 128x256 tile's ~193 KB of scratch), each looping over tiles league_size
/// apart, so that a team's next tile is loading while it writes the last one's C. Loads go through
/// TMA where tensor maps can describe both operands (16-byte aligned bases and pitches, unit stride
/// along the staged rows, sizes under 2^31); an f16/bf16 operand they cannot describe is first packed
/// into a K-major copy with such a pitch (pack_k_major, into the session's packing workspace), and
/// the cp.async producer loads only where MatmulLaunchOptions asks for it or no workspace is left.
/// The TF32 tile packs each operand that is not K-major, since wgmma reads 32-bit operands only so.
/// The tensor maps are copied in stream order into a slot of device memory kept for them
/// (acquire_tensor_map_slot): Kokkos passes kernel arguments by value, not as __grid_constant__, so
/// a map inside the functor would have no global address. The 128x256 tile runs as two-team clusters
/// that share B (kWsMulticast) where its loads go through TMA, its tiles have enough K steps or
/// the rows of B are not sector-aligned, and its tile rows pair up. `options` may override these
/// rules; `report` says what ran.
template <class F>
void launch_wgmma_ws(F f, const MatmulConfig& cfg, const std::string& label,
                     const Kokkos::DefaultExecutionSpace& space, const MatmulLaunchOptions& options,
                     MatmulLaunchReport& report) {
  const int tiles = f.tiles_m * f.tiles_n * (F::kSplitK ? f.k_splits : 1);  // work items
  int league = tiles;
  if (!options.ws_one_team_per_tile) {
    const int per_sm = std::max(1, std::min(cuda_shared_memory_per_sm() / int(F::scratch_bytes() + 1024),
                                            resident_teams_per_sm<F>()));
    league = std::min(tiles, std::max(1, cuda_sm_count()) * std::min(per_sm, 2048 / F::kThreads));
  }
  if (options.ws_team_cap > 0) league = std::max(1, std::min(league, options.ws_team_cap));
  alignas(64) unsigned char maps[kTensorMapSlotBytes] = {};  // A, B, C
  std::string why;
  bool packed = false;  // the packing workspace is held until the kernel is launched
#if defined(KOKKOS_ENABLE_CUDA)
  auto& p = f.p;
  cudaStream_t stream = space.cuda_stream();
  constexpr int E = F::kElemBytes;
  if constexpr (F::kKMajorOnly) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(p.a.data)>>;
    constexpr int64_t kVec = 16 / int64_t(sizeof(T));
    const int64_t pitch = (p.K + kVec - 1) / kVec * kVec;  // K rounded up to 16 bytes
    // TF32: an op(A) stored along M that TMA can describe goes in as it is (its fragments through
    // registers, a_mn_major) where C has few columns (kTf32ARegistersMaxN), unless asked otherwise.
    if constexpr (F::kTf32ARegisters) {
      alignas(64) unsigned char a_map[128] = {};
      f.a_mn_major = !options.ws_pack_mn_major && p.K > 0 && p.N <= kTf32ARegistersMaxN && p.a.rs == 1 && p.a.cs != 1 &&
                     encode_tma_2d(a_map, p.a.data, p.M, p.K, p.a.cs, F::BK, E).empty();
    }
    const bool a_ok = f.a_mn_major || k_major_for_tma(p.a.data, p.a.cs, p.a.rs, p.K) || p.K == 0;
    const bool b_ok = k_major_for_tma(p.b.data, p.b.rs, p.b.cs, p.K) || p.K == 0;
    const std::size_t a_elems = a_ok ? 0 : std::size_t(p.M * pitch), b_elems = b_ok ? 0 : std::size_t(p.N * pitch);
    const std::size_t a_bytes = (a_elems * sizeof(T) + 255) / 256 * 256;
    if (a_elems + b_elems > 0) {
      void* ws = nullptr;
      why = acquire_pack_workspace(a_bytes + b_elems * sizeof(T), stream, ws);
      if (!why.empty()) throw std::runtime_error("tilekit: " + label + ": " + why);
      packed = true;
      if (!a_ok) {
        T* dst = static_cast<T*>(ws);
        pack_k_major(p.a.data, p.M, p.K, p.a.rs, p.a.cs, dst, pitch, space);
        p.a = {dst, p.M, p.K, pitch, 1};
      }
      if (!b_ok) {  // op(B) is K x N: its rows along K are columns n
        T* dst = reinterpret_cast<T*>(static_cast<char*>(ws) + a_bytes);
        pack_k_major(p.b.data, p.N, p.K, p.b.cs, p.b.rs, dst, pitch, space);
        p.b = {dst, p.K, p.N, 1, pitch};
      }
    }
    if (p.K > 0) {
      why = f.a_mn_major ? encode_tma_2d(maps, p.a.data, p.M, p.K, p.a.cs, F::BK, E)  // boxes of 32 m x BK k
                         : encode_tma_2d(maps, p.a.data, p.K, p.M, p.a.rs, F::BM, E);
      if (why.empty()) why = encode_tma_2d(maps + 128, p.b.data, p.K, p.N, p.b.cs, F::BN, E);
    }
  } else {
    // op(A): rows of K (K-major, boxes of BM rows) or of M (boxes of 64 rows); "" or why TMA cannot.
    const auto encode_a = [&]() -> std::string {
      if (p.a.cs == 1) return encode_tma_2d(maps, p.a.data, p.K, p.M, p.a.rs, F::BM, E);
      if (p.a.rs == 1) return encode_tma_2d(maps, p.a.data, p.M, p.K, p.a.cs, 64, E);
      return "op(A) has no unit stride";
    };
    // op(B): rows of N (N-major, boxes of 64 rows) or of K (boxes of BN rows).
    const auto encode_b = [&]() -> std::string {
      if (p.b.cs == 1) return encode_tma_2d(maps + 128, p.b.data, p.N, p.K, p.b.rs, 64, E);
      if (p.b.rs == 1) return encode_tma_2d(maps + 128, p.b.data, p.K, p.N, p.b.cs, F::BN, E);
      return "op(B) has no unit stride";
    };
    if (options.ws_cp_async_loads) {
      why = "cp.async loads asked for";
    } else {
      std::string why_a = encode_a(), why_b = encode_b();
      // An operand TMA cannot describe (a pitch that is not a whole number of 16-byte vectors, as
      // row-major A with K = 4095 has; no unit stride; a repeated row) is packed K-major with such
      // a pitch first, as the TF32 tile does: the cp.async producer's 4-byte loads of such operands
      // ran at 8 TFLOP/s where TMA from the packed copy runs near full speed (perf notes 44).
      if ((!why_a.empty() || !why_b.empty()) && p.K > 0) {
        using T = std::remove_const_t<std::remove_pointer_t<decltype(p.a.data)>>;
        const int64_t pitch = (p.K + 16 / E - 1) / (16 / E) * (16 / E);  // K rounded up to 16 bytes
        const std::size_t a_elems = why_a.empty() ? 0 : std::size_t(p.M * pitch);
        const std::size_t b_elems = why_b.empty() ? 0 : std::size_t(p.N * pitch);
        const std::size_t a_bytes = (a_elems * sizeof(T) + 255) / 256 * 256;
        void* ws = nullptr;
        const std::string no_ws = acquire_pack_workspace(a_bytes + b_elems * sizeof(T), stream, ws);
        if (no_ws.empty()) {
          packed = true;
          if (a_elems > 0) {
            T* dst = static_cast<T*>(ws);
            pack_k_major(p.a.data, p.M, p.K, p.a.rs, p.a.cs, dst, pitch, space);
            p.a = {dst, p.M, p.K, pitch, 1};
            why_a = encode_a();
          }
          if (b_elems > 0) {  // op(B) is K x N: its rows along K are columns n
            T* dst = reinterpret_cast<T*>(static_cast<char*>(ws) + a_bytes);
            pack_k_major(p.b.data, p.N, p.K, p.b.cs, p.b.rs, dst, pitch, space);
            p.b = {dst, p.K, p.N, 1, pitch};
            why_b = encode_b();
          }
        } else {
          why_a = why_a.empty() ? why_b : why_a;
          why_a += "; packing: " + no_ws;
        }
      }
      why = !why_a.empty() ? why_a : why_b;
    }
  }
  // C through TMA stores: row-major C, or column-major 16-bit C (stored as its transpose), with a
  // 16-byte aligned base and pitch, no C read (beta = 0), and the stores' tile epilogue compiled in
  // (kTmaStoreCapable); else the stores from registers.
  std::string why_not_store;
  if constexpr (!F::kTmaStoreCapable) {
    why_not_store = F::kSplitK ? "split-K partial sums"
                    : F::kI8   ? "i32 C (i8 inputs)"
                               : "no TMA store epilogue in this kernel (activation at run time, or 8-byte C)";
  } else {
    constexpr int kCBytes = int(sizeof(*p.c.data));
    why_not_store = options.ws_register_stores ? std::string("asked for")
                    : p.beta != 0 ? std::string("beta != 0 (C is read)")
                    : p.c.cs == 1 ? encode_tma_2d(maps + 256, p.c.data, p.N, p.M, p.c.rs, 64, kCBytes)
                    : p.c.rs == 1 && kCBytes == 2
                        ? encode_tma_2d(maps + 256, p.c.data, p.M, p.N, p.c.cs, 64, kCBytes)
                        : std::string(kCBytes == 2 ? "C has no unit stride" : "32-bit C is not row-major");
  }
  if constexpr (F::kClusterCapable) {
    // Two-team clusters: each team multicasts half of B, so B's K-major boxes are BN / 2 rows.
    const int64_t ktiles = (p.K + F::BK - 1) / F::BK;
    const int64_t min_k =
        options.ws_multicast_min_k_steps >= 0 ? options.ws_multicast_min_k_steps : kWsMulticast.min_k_steps;
    // The distance in bytes between the rows of op(B) that TMA loads (after any packing).
    const int64_t pitch_b = (p.b.cs == 1 ? p.b.rs : p.b.cs) * E;
    const bool aligned = pitch_b % kWsMulticast.aligned_pitch_bytes == 0;
    std::string off = options.ws_multicast_off ? std::string("clusters turned off")
                      : !why.empty()                 ? "cp.async loads"
                      : ktiles < std::max<int64_t>(1, min_k) && aligned
                          ? std::to_string(ktiles) + " K steps a tile, under " + std::to_string(min_k) +
                                ", and the rows of B " + std::to_string(kWsMulticast.aligned_pitch_bytes) +
                                "-byte aligned"
                      : f.tiles_m % 2 != 0 ? "an odd number of tile rows (" + std::to_string(f.tiles_m) + ")"
                      : league < 2         ? std::string("a grid of one team")
                                           : std::string();
    using FC = typename F::template with_cluster<2>;
    if (off.empty()) off = require_cluster_of_two<FC>();
    alignas(64) unsigned char half_b[128] = {};
    if (off.empty() && p.b.cs != 1) {
      off = encode_tma_2d(half_b, p.b.data, p.K, p.N, p.b.cs, F::BN / 2, E);
      if (off.empty()) std::memcpy(maps + 128, half_b, sizeof(half_b));
    }
    if (off.empty()) {
      FC fc;
      fc.p = f.p, fc.group_m = f.group_m, fc.tiles_m = f.tiles_m, fc.tiles_n = f.tiles_n;
      fc.vector_length = f.vector_length;
      const int clustered = 2 * std::min(tiles / 2, league / 2);
      report.ws_multicast = "clusters of 2 teams, B multicast";
      run_wgmma_ws(fc, clustered, cfg, label, space, maps, why, why_not_store, packed, options, report);
      return;
    }
    report.ws_multicast = "off: " + off;
  }
#else
  const std::string why_not_store = "TMA exists only on CUDA";
#endif
  run_wgmma_ws(f, league, cfg, label, space, maps, why, why_not_store, packed, options, report);
}

/// Split K on a warp-specialised tile (MatmulConfig::k_splits; perf notes 48): where the tiles of C
/// are too few to fill the GPU and K is deep, `splits` work items per tile, each over k_per_split
/// values of K (whole K steps), store their sums in f32 (i8: i32, exact) into one partial C per split
/// (the partial-sum workspace), and a second kernel adds them in split order and applies the epilogue.
/// The partial kernel is the same persistent kernel (SPLIT_K: no bias, no activation), so its loads
/// (TMA, packing where TMA cannot describe an operand) are those of launch_wgmma_ws. Deterministic:
/// the same inputs and config give the same bits.
template <class Tile, class TIn, class TOut>
void launch_wgmma_ws_split_k(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg, int splits,
                             int64_t k_per_split, const std::string& label, const Kokkos::DefaultExecutionSpace& space,
                             const MatmulLaunchOptions& options, MatmulLaunchReport& report) {
  using ES = Kokkos::DefaultExecutionSpace;
  using TPartial = std::conditional_t<Tile::i8, int32_t, float>;
  using F = Sm90WgmmaWsMatmul<ES, Tile, TIn, TPartial, int(Activation::none), 1, true>;
  PartialSums<TPartial> partials(p, splits, PartialSumBuffer::kPartialSumBuffer, stream_handle(space), label);
  const F f = partials.template first_pass<F, Tile>(p, cfg, splits, k_per_split);
  launch_wgmma_ws(f, cfg, label, space, options, report);
  partials.sum_into(p, splits, label, space);
}

}  // namespace detail
}  // namespace tilekit
