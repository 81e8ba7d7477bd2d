// tilekit blocked matmul: the hierarchical TeamPolicy kernel and its launch.
// Include only from the instantiation units (kernels/matmul_inst.cpp.in); users include matmul.hpp.
//
// Loop nest, outermost first:
//   league  : one team per BM x BN tile of C, in grouped order (GROUP_M tile-rows per group)
//   kt      : K in steps of BK; the team stages A (BM x BK) and B (BK x BN) into level-0 scratch
//   micro   : each thread's TM x TN micro-tile(s) of the team tile
//   k       : the BK depth of the staged tiles, rank-1 updates into TM x TN register accumulators
//
// The portable SIMT kernel runs on GPUs (CUDA, HIP): each thread owns one micro-tile and keeps its
// accumulators in registers across the whole K loop (threads per team == micro-tiles); stages are
// double-buffered in level-0 scratch (shared memory). Host backends run the packed kernel
// (matmul_host_packed.hpp), whose tiles are the host menu.
#pragma once

#include "kernels/matmul.hpp"
#include "kernels/matmul_host_packed.hpp"
#include "kernels/matmul_mma_sm80.hpp"
#include "kernels/matmul_mma_sm80_f64_tf32_i8.hpp"
#include "kernels/matmul_simt_warp.hpp"
#include "kernels/matmul_wgmma_sm90.hpp"
#include "kernels/matmul_wgmma_ws_sm90.hpp"
#include "kernels/matmul_team.hpp"
#include "kernels/matmul_thin.hpp"
#include "tuning/matmul_tiles.hpp"

#include <Kokkos_Core.hpp>

#include <fmt/format.h>

namespace tilekit {
namespace detail {

template <class ExecSpace, class Tile>
using MatmulPolicy =
    std::conditional_t<tuning::is_gpu_space<ExecSpace>(),
                       Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<Tile::micro_tiles, 1>>,
                       Kokkos::TeamPolicy<ExecSpace>>;

template <class ExecSpace, class Tile, class TIn, class TOut>
struct BlockedMatmul {
  using compute = typename TypeTraits<TIn>::compute;
  using policy_type = MatmulPolicy<ExecSpace, Tile>;
  using member_type = typename policy_type::member_type;

  static constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, TM = Tile::TM, TN = Tile::TN;
  static constexpr int kMicroTiles = Tile::micro_tiles;
  static constexpr int kMicroCols = BN / TN;  // micro-tiles along N
  // Scratch rows are padded by 4 elements: a transposing store (consecutive threads, consecutive k)
  // then hits different shared-memory banks, and rows stay 16-byte aligned for vector reads.
  static constexpr int AS_LD = BM + 4;
  static constexpr int BS_LD = BN + 4;
  static_assert(tuning::is_gpu_space<ExecSpace>(), "host backends run the packed kernel (matmul_host_packed.hpp)");
  static constexpr int kScratchLevel = 0;

  MatmulProblem<TIn, TOut> p;
  int group_m;
  int tiles_m, tiles_n;
  int vector_length;

  // One stage: an A tile and a B tile.
  static constexpr int kStageElems = BK * AS_LD + BK * BS_LD;
  // Two stages, double-buffered: compute on one while the next is stored into the other.
  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_elems() { return 2 * std::size_t(kStageElems); }
  // +16: the base is aligned up to 16 bytes for vector reads of scratch.
  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() { return scratch_elems() * sizeof(compute) + 16; }

  // GPU: each thread's share of one A tile and one B tile, held in registers between the global
  // load and the store into scratch, so the next stage's loads are in flight during the compute.
  static constexpr int kAPer = (BM * BK) / kMicroTiles > 0 ? (BM * BK) / kMicroTiles : 1;
  static constexpr int kBPer = (BK * BN) / kMicroTiles > 0 ? (BK * BN) / kMicroTiles : 1;
  static_assert((BM * BK) % kMicroTiles == 0 && (BK * BN) % kMicroTiles == 0,
                "GPU tiles: every thread stages the same number of A and B elements");

  // Which element of the A tile the q-th load of thread `tid` takes. Consecutive threads take
  // consecutive elements along whichever dimension is contiguous in memory (coalesced loads).
  KOKKOS_INLINE_FUNCTION static void a_index(int e, bool k_contig, int& i, int& k) {
    i = k_contig ? e / BK : e % BM;
    k = k_contig ? e % BK : e / BM;
  }
  KOKKOS_INLINE_FUNCTION static void b_index(int e, bool k_contig, int& k, int& j) {
    k = k_contig ? e % BK : e / BN;
    j = k_contig ? e / BK : e % BN;
  }
  KOKKOS_INLINE_FUNCTION void load_a_regs(compute (&r)[kAPer], int64_t m0, int64_t k0, bool full, bool k_contig,
                                          int tid) const {
    TILEKIT_UNROLL
    for (int q = 0; q < kAPer; ++q) {
      int i, k;
      a_index(tid + q * kMicroTiles, k_contig, i, k);
      const int64_t gi = m0 + i, gk = k0 + k;
      r[q] = (full || (gi < p.M && gk < p.K)) ? convert<compute>(p.a(gi, gk)) : compute(0);
    }
  }
  KOKKOS_INLINE_FUNCTION static void store_a_regs(compute* As, const compute (&r)[kAPer], bool k_contig, int tid) {
    TILEKIT_UNROLL
    for (int q = 0; q < kAPer; ++q) {
      int i, k;
      a_index(tid + q * kMicroTiles, k_contig, i, k);
      As[k * AS_LD + i] = r[q];
    }
  }
  KOKKOS_INLINE_FUNCTION void load_b_regs(compute (&r)[kBPer], int64_t k0, int64_t n0, bool full, bool k_contig,
                                          int tid) const {
    TILEKIT_UNROLL
    for (int q = 0; q < kBPer; ++q) {
      int k, j;
      b_index(tid + q * kMicroTiles, k_contig, k, j);
      const int64_t gk = k0 + k, gj = n0 + j;
      r[q] = (full || (gk < p.K && gj < p.N)) ? convert<compute>(p.b(gk, gj)) : compute(0);
    }
  }
  KOKKOS_INLINE_FUNCTION static void store_b_regs(compute* Bs, const compute (&r)[kBPer], bool k_contig, int tid) {
    TILEKIT_UNROLL
    for (int q = 0; q < kBPer; ++q) {
      int k, j;
      b_index(tid + q * kMicroTiles, k_contig, k, j);
      Bs[k * BS_LD + j] = r[q];
    }
  }

  // acc += As(:, rows of micro-tile) x Bs(:, cols of micro-tile) over the staged BK depth.
  KOKKOS_INLINE_FUNCTION static void micro_kernel(const compute* As, const compute* Bs, int ty, int tx,
                                                  compute (&acc)[TM][TN]) {
    const compute* a_col = As + ty * TM;
    const compute* b_row = Bs + tx * TN;
    TILEKIT_UNROLL
    for (int k = 0; k < BK; ++k) {  // rank-1 updates along the staged K depth
      compute av[TM], bv[TN];
      read_scratch_run(a_col + k * AS_LD, av);
      read_scratch_run(b_row + k * BS_LD, bv);
      TILEKIT_UNROLL
      for (int i = 0; i < TM; ++i) {
        TILEKIT_UNROLL
        for (int j = 0; j < TN; ++j) acc[i][j] += av[i] * bv[j];
      }
    }
  }

  // Epilogue of one micro-tile from its registers (matmul_team.hpp), edges masked.
  KOKKOS_INLINE_FUNCTION void store_c(int64_t m0, int64_t n0, int ty, int tx,
                                      const compute (&acc)[TM][TN]) const {
    store_micro_tile_masked(p, m0 + ty * TM, n0 + tx * TN, acc);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    int64_t m0, n0;
    team_tile_origin<BM, BN>(team.league_rank(), group_m, tiles_m, tiles_n, m0, n0);
    compute* As = team_scratch_aligned<compute>(team, scratch_bytes(), kScratchLevel);
    compute* Bs = As + BK * AS_LD;
    const int tid = team.team_rank() * vector_length + vector_lane();

    const bool full_mn = m0 + BM <= p.M && n0 + BN <= p.N;
    const int64_t ktiles = p.K > 0 ? (p.K + BK - 1) / BK : 1;  // K == 0 still runs the epilogue

    {
      // Consecutive threads take consecutive micro-tiles along C's contiguous dimension, so that
      // the epilogue's stores coalesce (with a thin K they are most of the work); the scratch reads
      // of the micro-kernel are as conflict-free either way (one operand broadcast, the other in
      // consecutive 16-byte runs).
      constexpr int kMicroRows = BM / TM;
      const bool c_col = p.c.rs == 1 && p.c.cs != 1;
      const int ty = c_col ? tid % kMicroRows : tid / kMicroCols;
      const int tx = c_col ? tid / kMicroRows : tid % kMicroCols;
      compute acc[TM][TN];
      TILEKIT_UNROLL
      for (int i = 0; i < TM; ++i) {
        TILEKIT_UNROLL
        for (int j = 0; j < TN; ++j) acc[i][j] = compute(0);
      }
      const bool a_kc = p.a.cs == 1;                  // op(A) contiguous along K
      const bool b_kc = p.b.rs == 1 && p.b.cs != 1;   // op(B) contiguous along K
      compute ra[kAPer], rb[kBPer];
      // Prologue: stage 0 into buffer 0.
      load_a_regs(ra, m0, 0, full_mn && BK <= p.K, a_kc, tid);
      load_b_regs(rb, 0, n0, full_mn && BK <= p.K, b_kc, tid);
      store_a_regs(As, ra, a_kc, tid);
      store_b_regs(Bs, rb, b_kc, tid);
      team.team_barrier();
      int cur = 0;
      for (int64_t kt = 0; kt < ktiles; ++kt) {  // K steps: load next, compute current, store next
        const bool has_next = kt + 1 < ktiles;
        if (has_next) {  // global loads of stage kt+1 in flight during the compute of stage kt
          const int64_t k0 = (kt + 1) * BK;
          const bool full = full_mn && k0 + BK <= p.K;  // unmasked loads when the tile is interior
          load_a_regs(ra, m0, k0, full, a_kc, tid);
          load_b_regs(rb, k0, n0, full, b_kc, tid);
        }
        const compute* stage = As + cur * kStageElems;
        micro_kernel(stage, stage + BK * AS_LD, ty, tx, acc);
        if (has_next) {
          compute* next = As + (cur ^ 1) * kStageElems;
          store_a_regs(next, ra, a_kc, tid);
          store_b_regs(next + BK * AS_LD, rb, b_kc, tid);
        }
        // One barrier per K step: the next stage is complete, and nobody still reads the buffer
        // that the following step overwrites.
        team.team_barrier();
        cur ^= 1;
      }
      store_c(m0, n0, ty, tx, acc);
    }
  }
};

/// The kernel of a menu entry, chosen here and nowhere else (Tile::kernel): warpgroup-MMA tiles run
/// the sm_90a kernel (matmul_wgmma_sm90.hpp), warp-specialised ones its producer/consumer variant
/// (matmul_wgmma_ws_sm90.hpp); f16/bf16 tensor-core tiles the sm_80+ mma.sync kernel
/// with ldmatrix (matmul_mma_sm80.hpp); f64, TF32 and i8 tensor-core tiles the sm_80+ mma.sync
/// kernel with padded-scratch fragment loads (matmul_mma_sm80_f64_tf32_i8.hpp), all in the CUDA
/// menu only; host packed tiles the BLIS-style host kernel (matmul_host_packed.hpp), in the host
/// menu only; warp-tiled SIMT tiles the portable warp-tiled kernel (matmul_simt_warp.hpp), in the
/// GPU menus; every other tile the portable SIMT kernel above. dispatch_tile instantiates a tile
/// only for the input types it runs (Tile::runs). (Thin configs are not tiles: launch_matmul sends
/// them to the thin kernel, matmul_thin.hpp.)
template <class ExecSpace, class Tile, class TIn, class TOut>
using MatmulFunctor = std::conditional_t<
    Tile::kernel == tuning::TileKernel::wgmma_sm90, Sm90WgmmaMatmul<ExecSpace, Tile, TIn, TOut>,
    std::conditional_t<
    Tile::kernel == tuning::TileKernel::wgmma_ws_sm90, Sm90WgmmaWsMatmul<ExecSpace, Tile, TIn, TOut>,
    std::conditional_t<
        Tile::kernel == tuning::TileKernel::mma_sm80, Sm80MmaMatmul<ExecSpace, Tile, TIn, TOut>,
        std::conditional_t<
            Tile::kernel == tuning::TileKernel::mma_sm80_f64_tf32_i8,
            Sm80MmaF64Tf32I8Matmul<ExecSpace, Tile, TIn, TOut>,
            std::conditional_t<
                Tile::kernel == tuning::TileKernel::host_packed, HostPackedMatmul<ExecSpace, Tile, TIn, TOut>,
                std::conditional_t<Tile::kernel == tuning::TileKernel::simt_warp,
                                   SimtWarpMatmul<ExecSpace, Tile, TIn, TOut>,
                                   BlockedMatmul<ExecSpace, Tile, TIn, TOut>>>>>>>;

template <class TIn, class TOut, class F>
F make_thin_functor(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg) {
  F f;
  f.t = ThinOperands<TIn, TOut>::of(p);
  f.alpha = p.alpha;
  f.beta = p.beta;
  f.bias = p.bias;
  f.act = p.act;
  f.cols = cfg.thin_cols;
  f.kgroups = cfg.thin_kgroups;
  f.lanes_along_k = f.t.w.rs == 1 && f.t.w.cs != 1;
  f.vector_length = thin_team_shape(cfg, F::kGpu).vector_length;
  return f;
}

/// Calls f(ThinMatmul<...>{} type tag) for the thin kernel that runs problem p (its row class).
template <class TIn, class TOut, class G>
void with_thin_kernel(const MatmulProblem<TIn, TOut>& p, G&& g) {
  using ES = Kokkos::DefaultExecutionSpace;
  const int64_t rows = std::min(p.M, p.N);
  dispatch_thin_rows(tuning::ThinRowClasses{}, static_cast<int>(std::min<int64_t>(rows, tuning::kThinMaxRows)),
                     [&](auto rr) { g(TypeTag<ThinMatmul<ES, decltype(rr)::value, TIn, TOut>>{}); });
}

/// The checks of a thin config (check_matmul has checked shapes, strides and types).
template <class TIn, class TOut>
std::string check_thin(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg) {
  using ES = Kokkos::DefaultExecutionSpace;
  constexpr bool gpu = tuning::is_gpu_space<ES>();
  const std::string backend = backend_name();
  if (std::min(p.M, p.N) > tuning::kThinMaxRows)
    return fmt::format("config '{}': thin configs run products with M or N at most {} (got M={}, N={}); use "
                       "a tile config (allowed tiles: {})",
                       cfg.name(), tuning::kThinMaxRows, p.M, p.N, tuning::menu_names(TypeTraits<TIn>::dtype));
  if (cfg.thin_cols < 1 || cfg.thin_cols > 4096 || cfg.thin_kgroups < 1)
    return fmt::format("config '{}': thin_l<cols>_k<kgroups> needs cols in 1..4096 and kgroups >= 1 (got {}, {})",
                       cfg.name(), cfg.thin_cols, cfg.thin_kgroups);
  const int64_t threads = int64_t(cfg.thin_cols) * cfg.thin_kgroups;
  if (gpu && (threads % 32 != 0 || threads > 1024))
    return fmt::format("config '{}': on {} a thin team runs cols x kgroups threads, which must be a multiple "
                       "of 32 and at most 1024 (got {} x {} = {})",
                       cfg.name(), backend, cfg.thin_cols, cfg.thin_kgroups, threads);
  if (!gpu && cfg.thin_kgroups != 1)
    return fmt::format("config '{}': on {} a thin team is one thread, so kgroups must be 1 (got {})", cfg.name(),
                       backend, cfg.thin_kgroups);
  const int64_t L = std::max(p.M, p.N);
  if ((L + cfg.thin_cols - 1) / cfg.thin_cols > int64_t(INT32_MAX))
    return fmt::format("config '{}': {} columns in blocks of {} need more than 2^31-1 teams", cfg.name(), L,
                       cfg.thin_cols);
  std::string why;
  with_thin_kernel(p, [&](auto tag) {
    using F = typename decltype(tag)::type;
    const std::size_t scratch = F::scratch_bytes(cfg.thin_cols, cfg.thin_kgroups);
    why = check_team_scratch(scratch, F::kScratchLevel);
    if (!why.empty()) {
      why = fmt::format("config '{}' with {} inputs on {}: {}", cfg.name(), dtype_name(TypeTraits<TIn>::dtype),
                        backend, why);
      return;
    }
    const ThinTeamShape shape = thin_team_shape(cfg, gpu);
    const F f = make_thin_functor<TIn, TOut, F>(p, cfg);
    typename F::policy_type policy(1, 1, shape.vector_length);
    policy.set_scratch_size(F::kScratchLevel, Kokkos::PerTeam(scratch));
    const int team_max = policy.team_size_max(f, Kokkos::ParallelForTag());
    if (shape.team_size > team_max)
      why = fmt::format("config '{}': {} threads per team exceed the {} maximum of {} for this kernel", cfg.name(),
                        threads, backend, team_max * shape.vector_length);
  });
  return why;
}

template <class TIn, class TOut>
void launch_thin(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg, const Kokkos::DefaultExecutionSpace& space) {
  with_thin_kernel(p, [&](auto tag) {
    using F = typename decltype(tag)::type;
    const F f = make_thin_functor<TIn, TOut, F>(p, cfg);
    const ThinTeamShape shape = thin_team_shape(cfg, F::kGpu);
    const int64_t block = int64_t(cfg.thin_cols) * F::CPT;  // columns of Y per team
    const int league = static_cast<int>((f.t.L + block - 1) / block);
    typename F::policy_type policy(space, league, shape.team_size, shape.vector_length);
    policy.set_scratch_size(F::kScratchLevel, Kokkos::PerTeam(F::scratch_bytes(cfg.thin_cols, cfg.thin_kgroups)));
    Kokkos::parallel_for(fmt::format("tilekit::matmul_{}_{}_{}", dtype_name(TypeTraits<TIn>::dtype),
                                     dtype_name(TypeTraits<TOut>::dtype), cfg.tile_name()),
                         policy, f);
  });
}

/// Calls f(Tile{}) for the menu entry matching cfg's tile that runs TIn inputs (tiles of different
/// input types may share a name); returns false when none matches. Tiles that do not run TIn are
/// not instantiated for it.
template <class TIn, class F, class... Tiles>
bool dispatch_tile(tuning::TileList<Tiles...>, const MatmulConfig& cfg, F&& f) {
  bool found = false;
  auto try_one = [&](auto tile) {
    using T = decltype(tile);
    if constexpr (T::runs(TypeTraits<TIn>::dtype)) {
      if (!found && cfg.same_tile(T::config())) {
        found = true;
        f(tile);
      }
    }
  };
  (try_one(Tiles{}), ...);
  return found;
}

/// The menu's tiles that may split K, comma-separated ("none" if none).
template <class... Tiles>
std::string split_k_tile_names(tuning::TileList<Tiles...>) {
  std::string s;
  auto one = [&](auto tile) {
    using T = decltype(tile);
    if (tuning::TileSplitsK<T>::value) s += (s.empty() ? "" : ", ") + T::config().tile_name();
  };
  (one(Tiles{}), ...);
  return s.empty() ? "none in this build" : s;
}

/// True when some tile of the menu (of any input type) has cfg's tile part.
template <class... Tiles>
bool tile_in_menu(tuning::TileList<Tiles...>, const MatmulConfig& cfg) {
  return (cfg.same_tile(Tiles::config()) || ...);
}

template <class TIn, class TOut, class Tile,
          class F = MatmulFunctor<Kokkos::DefaultExecutionSpace, Tile, TIn, TOut>>
F make_functor(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg) {
  F f;
  f.p = p;
  f.group_m = cfg.group_m;
  f.tiles_m = static_cast<int>((p.M + Tile::BM - 1) / Tile::BM);
  f.tiles_n = static_cast<int>((p.N + Tile::BN - 1) / Tile::BN);
  f.vector_length = cfg.vector_length;
  return f;
}

/// Calls g(TypeTag<F>{}) with F the functor that runs problem p on Tile: MatmulFunctor, but for the
/// warp-specialised tiles the kernel compiled for p's activation (with_ws_activation). The checks
/// (its team size limit) and the launch both take it from here.
template <class Tile, class TIn, class TOut, class G>
void with_functor(const MatmulProblem<TIn, TOut>& p, G&& g) {
  using ES = Kokkos::DefaultExecutionSpace;
  if constexpr (Tile::kernel == tuning::TileKernel::wgmma_ws_sm90)
    with_ws_activation(p.act, [&](auto act) {
      g(TypeTag<Sm90WgmmaWsMatmul<ES, Tile, TIn, TOut, decltype(act)::value>>{});
    });
  else
    g(TypeTag<MatmulFunctor<ES, Tile, TIn, TOut>>{});
}

}  // namespace detail

template <class TIn, class TOut>
std::size_t matmul_scratch_bytes(const MatmulConfig& cfg) {
  using ES = Kokkos::DefaultExecutionSpace;
  std::size_t bytes = 0;
  if (cfg.thin) {  // the largest row class
    using F = detail::ThinMatmul<ES, tuning::kThinMaxRows, TIn, TOut>;
    return F::scratch_bytes(cfg.thin_cols, cfg.thin_kgroups);
  }
  detail::dispatch_tile<TIn>(tuning::MatmulTiles<ES>{}, cfg, [&](auto tile) {
    bytes = detail::MatmulFunctor<ES, decltype(tile), TIn, TOut>::scratch_bytes();
  });
  return bytes;
}

template <class TIn, class TOut>
std::string check_matmul(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg) {
  using ES = Kokkos::DefaultExecutionSpace;
  using compute = typename TypeTraits<TIn>::compute;
  constexpr bool gpu = tuning::is_gpu_space<ES>();
  const std::string backend = backend_name();

  // --- shapes and strides
  if (p.M < 0 || p.N < 0 || p.K < 0)
    return fmt::format("matrix sizes must be >= 0 (got M={}, N={}, K={})", p.M, p.N, p.K);
  if (p.a.rows != p.M || p.a.cols != p.K)
    return fmt::format("op(A) is {}x{}, expected MxK = {}x{}", p.a.rows, p.a.cols, p.M, p.K);
  if (p.b.rows != p.K || p.b.cols != p.N)
    return fmt::format("op(B) is {}x{}, expected KxN = {}x{}", p.b.rows, p.b.cols, p.K, p.N);
  if (p.c.rows != p.M || p.c.cols != p.N)
    return fmt::format("C is {}x{}, expected MxN = {}x{}", p.c.rows, p.c.cols, p.M, p.N);
  if (p.M > 0 && p.N > 0) {
    if (!p.c.data) return "C has no data";
    if (p.c.rs < 1 || p.c.cs < 1)
      return fmt::format("C strides must be >= 1 (got row stride {}, column stride {})", p.c.rs, p.c.cs);
    // Distinct elements of C must not share memory, or threads would race on them.
    const bool row_major_ok = p.c.rs >= p.N * p.c.cs || p.M == 1;
    const bool col_major_ok = p.c.cs >= p.M * p.c.rs || p.N == 1;
    if (!row_major_ok && !col_major_ok)
      return fmt::format("C strides (row {}, column {}) make distinct elements of a {}x{} matrix overlap",
                         p.c.rs, p.c.cs, p.M, p.N);
  }
  if (p.K > 0 && ((p.M > 0 && !p.a.data) || (p.N > 0 && !p.b.data))) return "A or B has no data";
  if (p.a.rs < 0 || p.a.cs < 0 || p.b.rs < 0 || p.b.cs < 0)
    return "A and B strides must be >= 0 (0 repeats a row or column)";
  if (std::max({p.M, p.N, p.K}) > int64_t(1) << 40)
    return fmt::format("sizes above 2^40 are not supported (got M={}, N={}, K={})", p.M, p.N, p.K);

  // --- types and epilogue
  if (int(p.act) < int(Activation::none) || int(p.act) > int(Activation::gelu))
    return fmt::format("activation {} (as an int) is not an Activation; allowed: none, relu, leaky_relu, silu, gelu",
                       int(p.act));
  if (std::is_integral<compute>::value && p.act != Activation::none && p.act != Activation::relu)
    return fmt::format("activation '{}' needs a floating-point accumulator; for {} inputs allowed: none, relu",
                       activation_name(p.act), dtype_name(TypeTraits<TIn>::dtype));

  // --- math
  constexpr DType in_type = TypeTraits<TIn>::dtype;
  if (p.math == Math::tf32 && in_type != DType::f32)
    return fmt::format("math tf32 applies to f32 inputs only (got {} inputs); use math ieee",
                       dtype_name(in_type));

  // --- config
  if (cfg.thin) return detail::check_thin(p, cfg);
  const std::string allowed_tiles = tuning::menu_names();
  bool in_menu = false;
  bool needs_tf32 = false;
  int micro_tiles = 0;
  int host_threads = 0;  // host backends: the most threads a team of this tile can keep busy
  std::size_t scratch = 0;
  int team_max = 0;
  bool splits_k = false;
  detail::dispatch_tile<TIn>(tuning::MatmulTiles<ES>{}, cfg, [&](auto tile) {
    using Tile = decltype(tile);
    in_menu = true;
    splits_k = tuning::TileSplitsK<Tile>::value;
    needs_tf32 = Tile::tf32;
    micro_tiles = Tile::micro_tiles;
    host_threads = Tile::threads;
    detail::with_functor<Tile>(p, [&](auto functor) {
      using F = typename decltype(functor)::type;
      scratch = F::scratch_bytes();
      if (cfg.vector_length >= 1) {
        const F f = detail::make_functor<TIn, TOut, Tile, F>(p, cfg);
        typename F::policy_type policy(1, 1, cfg.vector_length);
        policy.set_scratch_size(F::kScratchLevel, Kokkos::PerTeam(scratch));
        team_max = policy.team_size_max(f, Kokkos::ParallelForTag());
      }
    });
  });
  if (!in_menu && !detail::tile_in_menu(tuning::MatmulTiles<ES>{}, cfg))
    return fmt::format("config '{}': tile {} is not in the {} menu (allowed tiles: {})", cfg.name(),
                       cfg.tile_name(), backend, allowed_tiles);
  if (!in_menu)
    return fmt::format("config '{}': tile {} {} for other input types than {}; allowed for {} inputs with math "
                       "{}: {}",
                       cfg.name(), cfg.tile_name(),
                       cfg.mma ? "uses tensor cores" : "is compiled", dtype_name(in_type),
                       dtype_name(in_type), math_name(p.math), tuning::menu_names(in_type, p.math));
  if (needs_tf32 && p.math != Math::tf32)
    return fmt::format("config '{}': tile {} runs f32 inputs on TF32 tensor cores (11-bit significands), an "
                       "opt-in: pass math tf32 (app: --math tf32) to allow it; allowed with IEEE f32: {}",
                       cfg.name(), cfg.tile_name(), tuning::menu_names(in_type, Math::ieee));
  if (cfg.wgmma && !warpgroup_mma_available())
    return fmt::format("config '{}': tile {} uses Hopper warpgroup-MMA instructions, which need a compute "
                       "capability 9.0 GPU and a build with sm_90a code (the cuda preset; not cuda11); "
                       "this GPU has {}.{}; use a _tc tile",
                       cfg.name(), cfg.tile_name(), detail::device_compute_capability() / 10,
                       detail::device_compute_capability() % 10);
  if (cfg.ws && needs_tf32 && std::max({p.M, p.N, p.K}) > int64_t(INT32_MAX))
    return fmt::format("config '{}': tile {} loads through TMA, whose tensor maps take sizes up to 2^31-1 "
                       "(got M={}, N={}, K={}); use a _tc TF32 tile (allowed: {})",
                       cfg.name(), cfg.tile_name(), p.M, p.N, p.K, tuning::menu_names(in_type, Math::tf32));
  if (cfg.mma && detail::device_compute_capability() < 80)
    return fmt::format("config '{}': tile {} uses tensor-core instructions of compute capability 8.0 or "
                       "newer; this GPU has {}.{}",
                       cfg.name(), cfg.tile_name(), detail::device_compute_capability() / 10,
                       detail::device_compute_capability() % 10);
  const int64_t teams = ((p.M + cfg.bm - 1) / cfg.bm) * ((p.N + cfg.bn - 1) / cfg.bn);
  if (teams > int64_t(INT32_MAX))
    return fmt::format("config '{}': {}x{} needs {} tiles of {}x{}, over the 2^31-1 teams a launch can have",
                       cfg.name(), p.M, p.N, teams, cfg.bm, cfg.bn);
  if (cfg.group_m < 1 || cfg.group_m > 4096)
    return fmt::format("config '{}': group_m must be in 1..4096 (got {})", cfg.name(), cfg.group_m);
  if (cfg.k_splits < 1 || cfg.k_splits > kMaxKSplits)
    return fmt::format("config '{}': k_splits (_s) must be in 1..{} (got {})", cfg.name(), kMaxKSplits, cfg.k_splits);
  if (cfg.k_splits > 1 && (backend != "cuda" || !splits_k))
    return fmt::format("config '{}': split K (_s{}) runs on CUDA with the SIMT tiles that run several teams per SM "
                       "({}); {}",
                       cfg.name(), cfg.k_splits, detail::split_k_tile_names(tuning::MatmulTiles<ES>{}),
                       backend != "cuda" ? "this build's backend is " + backend
                                         : "tile " + cfg.tile_name() + " does not split K");
  if (teams * cfg.k_splits > int64_t(INT32_MAX))
    return fmt::format("config '{}': {} tiles x {} K splits are over the 2^31-1 teams a launch can have", cfg.name(),
                       teams, cfg.k_splits);
  if (gpu) {
    const int vmax = backend == "hip" ? 64 : 32;
    if (cfg.vector_length < 1 || cfg.vector_length > vmax || (cfg.vector_length & (cfg.vector_length - 1)))
      return fmt::format("config '{}': vector_length must be a power of two in 1..{} on {} (got {})",
                         cfg.name(), vmax, backend, cfg.vector_length);
    if (cfg.mma && cfg.team_size * cfg.vector_length != micro_tiles)
      return fmt::format(
          "config '{}': on {} each warp owns one {}x{} block of tensor-core fragments, so team_size x "
          "vector_length must be {} ({} warps; got {} x {})",
          cfg.name(), backend, cfg.tm, cfg.tn, micro_tiles, micro_tiles / 32, cfg.team_size, cfg.vector_length);
    if (cfg.team_size * cfg.vector_length != micro_tiles)
      return fmt::format(
          "config '{}': on {} each thread owns one {}x{} micro-tile, so team_size x vector_length must be "
          "{} (got {} x {})",
          cfg.name(), backend, cfg.tm, cfg.tn, micro_tiles, cfg.team_size, cfg.vector_length);
  } else {
    if (cfg.vector_length != 1)
      return fmt::format("config '{}': vector_length must be 1 on {} (host backends run vector lanes "
                         "sequentially in one thread; got {})",
                         cfg.name(), backend, cfg.vector_length);
    if (cfg.team_size < 1 || cfg.team_size > host_threads)
      return fmt::format("config '{}': team_size must be in 1..{} (the threads one team tile can keep busy; got {})",
                         cfg.name(), host_threads, cfg.team_size);
  }
  const int level = gpu ? 0 : 1;
  const std::string scratch_error = check_team_scratch(scratch, level);
  if (!scratch_error.empty())
    return fmt::format("config '{}' with {} inputs on {}: {}", cfg.name(), dtype_name(TypeTraits<TIn>::dtype),
                       backend, scratch_error);
  if (cfg.team_size > team_max)
    return fmt::format("config '{}': team_size {} exceeds the {} maximum of {} for this kernel "
                       "(with vector_length {})",
                       cfg.name(), cfg.team_size, backend, team_max, cfg.vector_length);
  return "";
}

template <class TIn, class TOut>
void launch_matmul(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg,
                   const Kokkos::DefaultExecutionSpace& space) {
  using ES = Kokkos::DefaultExecutionSpace;
  if (p.M == 0 || p.N == 0) return;  // nothing to write
  if (cfg.thin) {
    detail::launch_thin(p, cfg, space);
    return;
  }
  detail::dispatch_tile<TIn>(tuning::MatmulTiles<ES>{}, cfg, [&](auto tile) {
    using Tile = decltype(tile);
    detail::with_functor<Tile>(p, [&](auto functor) {
      using F = typename decltype(functor)::type;
      const F f = detail::make_functor<TIn, TOut, Tile, F>(p, cfg);
      const std::string label = fmt::format("tilekit::matmul_{}_{}_{}", dtype_name(TypeTraits<TIn>::dtype),
                                            dtype_name(TypeTraits<TOut>::dtype), cfg.tile_name());
      if constexpr (Tile::kernel == tuning::TileKernel::host_packed) {
        detail::launch_host_packed(f, cfg.team_size, space, label);  // packs the operands first
      } else {
        if constexpr (Tile::kernel == tuning::TileKernel::wgmma_ws_sm90) {
          detail::launch_wgmma_ws(f, cfg, label, space);  // a persistent grid; TMA descriptors first
        } else {
          if constexpr (tuning::TileSplitsK<Tile>::value) {
            const detail::SplitKPlan plan = detail::split_k_plan(p.K, Tile::BK, cfg.k_splits);
            if (plan.splits > 1) {
              detail::launch_simt_split_k<Tile>(p, cfg, plan, space, label);
              return;
            }
          }
          const int league = f.tiles_m * f.tiles_n;
          typename F::policy_type policy(space, league, cfg.team_size, cfg.vector_length);
          policy.set_scratch_size(F::kScratchLevel, Kokkos::PerTeam(F::scratch_bytes()));
          Kokkos::parallel_for(label, policy, f);
        }
      }
    });
  });
}

}  // namespace tilekit

/// Explicit instantiation of the matmul entry points for one (input, output) type pair.
#define TILEKIT_INSTANTIATE_MATMUL(TIN, TOUT)                                                      \
  template std::string tilekit::check_matmul<TIN, TOUT>(const tilekit::MatmulProblem<TIN, TOUT>&,  \
                                                         const tilekit::MatmulConfig&);            \
  template void tilekit::launch_matmul<TIN, TOUT>(const tilekit::MatmulProblem<TIN, TOUT>&,        \
                                                  const tilekit::MatmulConfig&,                    \
                                                  const Kokkos::DefaultExecutionSpace&);           \
  template std::size_t tilekit::matmul_scratch_bytes<TIN, TOUT>(const tilekit::MatmulConfig&);
