// tilekit blocked matmul: the one place that chooses among the kernel paths, and the launch (the
// entry checks, which use the same choice, are in checks.hpp). Include only from the instantiation
// units (tilekit/kernels/matmul/instantiate.cpp.in); users include tilekit/kernels/matmul/matmul.hpp.
//
// A config names a tile of the menu (tiles.hpp) or the thin kernel; each menu tile names its kernel
// (Tile::kernel), and MatmulFunctor below maps it to the header that implements it: gpu/simt.hpp,
// gpu/simt_warp.hpp, gpu/mma_sm80.hpp, gpu/mma_sm80_f64_tf32_i8.hpp, gpu/wgmma_sm90.hpp,
// gpu/wgmma_ws_sm90.hpp, host/packed.hpp; thin configs run thin.hpp. docs/architecture.md draws it.
#pragma once

#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/host/packed.hpp"
#include "tilekit/kernels/matmul/gpu/mma_sm80.hpp"
#include "tilekit/kernels/matmul/gpu/mma_sm80_f64_tf32_i8.hpp"
#include "tilekit/kernels/matmul/gpu/pack.hpp"
#include "tilekit/kernels/matmul/gpu/simt.hpp"
#include "tilekit/kernels/matmul/gpu/simt_warp.hpp"
#include "tilekit/kernels/matmul/gpu/wgmma_sm90.hpp"
#include "tilekit/kernels/matmul/gpu/wgmma_ws_sm90.hpp"
#include "tilekit/kernels/matmul/team.hpp"
#include "tilekit/kernels/matmul/thin.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"

#include <Kokkos_Core.hpp>

#include <fmt/format.h>

namespace tilekit {
namespace detail {

/// The kernel of a menu entry, chosen here and nowhere else (Tile::kernel): warpgroup-MMA tiles run
/// the sm_90a kernel (tilekit/kernels/matmul/gpu/wgmma_sm90.hpp), warp-specialised ones its producer/consumer variant
/// (tilekit/kernels/matmul/gpu/wgmma_ws_sm90.hpp); f16/bf16 tensor-core tiles the sm_80+ mma.sync kernel
/// with ldmatrix (tilekit/kernels/matmul/gpu/mma_sm80.hpp); f64, TF32 and i8 tensor-core tiles the sm_80+ mma.sync
/// kernel with padded-scratch fragment loads (tilekit/kernels/matmul/gpu/mma_sm80_f64_tf32_i8.hpp), all in the CUDA
/// menu only; host packed tiles the BLIS-style host kernel (tilekit/kernels/matmul/host/packed.hpp), in the host
/// menu only; warp-tiled SIMT tiles the portable warp-tiled kernel (tilekit/kernels/matmul/gpu/simt_warp.hpp), in the
/// GPU menus; every other tile the portable SIMT kernel (tilekit/kernels/matmul/gpu/simt.hpp). dispatch_tile instantiates a tile
/// only for the input types it runs (Tile::runs). (Thin configs are not tiles: launch_matmul sends
/// them to the thin kernel, tilekit/kernels/matmul/thin.hpp.)
template <class ExecSpace, class Tile, class TIn, class TOut>
using MatmulFunctor = std::conditional_t<
    Tile::kernel == TileKernel::wgmma_sm90, Sm90WgmmaMatmul<ExecSpace, Tile, TIn, TOut>,
    std::conditional_t<
    Tile::kernel == TileKernel::wgmma_ws_sm90, Sm90WgmmaWsMatmul<ExecSpace, Tile, TIn, TOut>,
    std::conditional_t<
        Tile::kernel == TileKernel::mma_sm80, Sm80MmaMatmul<ExecSpace, Tile, TIn, TOut>,
        std::conditional_t<
            Tile::kernel == TileKernel::mma_sm80_f64_tf32_i8,
            Sm80MmaF64Tf32I8Matmul<ExecSpace, Tile, TIn, TOut>,
            std::conditional_t<
                Tile::kernel == TileKernel::host_packed, HostPackedMatmul<ExecSpace, Tile, TIn, TOut>,
                std::conditional_t<Tile::kernel == TileKernel::simt_warp,
                                   SimtWarpMatmul<ExecSpace, Tile, TIn, TOut>,
                                   BlockedMatmul<ExecSpace, Tile, TIn, TOut>>>>>>>;

/// Calls f(Tile{}) for the menu entry matching cfg's tile that runs TIn inputs (tiles of different
/// input types may share a name); returns false when none matches. Tiles that do not run TIn are
/// not instantiated for it.
template <class TIn, class F, class... Tiles>
bool dispatch_tile(TileList<Tiles...>, const MatmulConfig& cfg, F&& f) {
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
std::string split_k_tile_names(TileList<Tiles...>) {
  std::string s;
  auto one = [&](auto tile) {
    using T = decltype(tile);
    if (TileSplitsK<T>::value) s += (s.empty() ? "" : ", ") + T::config().tile_name();
  };
  (one(Tiles{}), ...);
  return s.empty() ? "none in this build" : s;
}

/// True when some tile of the menu (of any input type) has cfg's tile part.
template <class... Tiles>
bool tile_in_menu(TileList<Tiles...>, const MatmulConfig& cfg) {
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

/// Whether a TF32 warp-specialised tile runs p as its transpose, C^T = op(B)^T op(A)^T: where
/// op(B) is stored along N and op(A) along K, so that the transposed product's A is stored along M
/// (its fragments go through registers: the tiles up to kTf32ARegistersMaxBN wide, products of up
/// to kTf32ARegistersMaxN rows) and its B along K, and nothing is copied first. Not with a bias
/// (the epilogue adds it along C's columns, which the transposed product's rows would be), nor
/// where the options ask for packed copies.
template <class Tile, class TIn, class TOut>
bool tf32_runs_transposed(const MatmulProblem<TIn, TOut>& p, const MatmulLaunchOptions& options) {
  const bool b_along_n = p.b.cs == 1 && p.b.rs != 1, a_along_k = p.a.cs == 1 && p.a.rs != 1;
  return Tile::tf32 && Tile::BN <= kTf32ARegistersMaxBN && p.M <= kTf32ARegistersMaxN && !options.ws_pack_mn_major &&
         p.bias == nullptr && b_along_n && a_along_k;
}

/// The transposed product of p: C^T = op(B)^T op(A)^T (strides swapped, no copies).
template <class TIn, class TOut>
MatmulProblem<TIn, TOut> transposed_product(const MatmulProblem<TIn, TOut>& p) {
  MatmulProblem<TIn, TOut> t = p;
  t.M = p.N, t.N = p.M;
  t.a = p.b.transposed();
  t.b = p.a.transposed();
  t.c = p.c.transposed();
  return t;
}

/// Calls g(TypeTag<F>{}) with F the functor that runs problem p on Tile: MatmulFunctor, but for the
/// warp-specialised tiles the kernel compiled for p's activation (with_ws_activation). The checks
/// (its team size limit) and the launch both take it from here.
template <class Tile, class TIn, class TOut, class G>
void with_functor(const MatmulProblem<TIn, TOut>& p, G&& g) {
  using ES = Kokkos::DefaultExecutionSpace;
  if constexpr (Tile::kernel == TileKernel::wgmma_ws_sm90 && std::is_integral<TIn>::value)
    g(TypeTag<Sm90WgmmaWsMatmul<ES, Tile, TIn, TOut, kActivationAtRunTime>>{});  // i8: relu or none, in its epilogue
  else if constexpr (Tile::kernel == TileKernel::wgmma_ws_sm90)
    with_ws_activation(p.act, [&](auto act) {
      g(TypeTag<Sm90WgmmaWsMatmul<ES, Tile, TIn, TOut, decltype(act)::value>>{});
    });
  else
    g(TypeTag<MatmulFunctor<ES, Tile, TIn, TOut>>{});
}

}  // namespace detail

template <class TIn, class TOut>
MatmulLaunchReport launch_matmul(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg,
                                 const Kokkos::DefaultExecutionSpace& space, const MatmulLaunchOptions& options) {
  using ES = Kokkos::DefaultExecutionSpace;
  MatmulLaunchReport report;
  if (p.M == 0 || p.N == 0) return report;  // nothing to write
  if (cfg.thin) {
    report.kernel = "thin";
    detail::launch_thin(p, cfg, space);
    return report;
  }
  detail::dispatch_tile<TIn>(MatmulTiles<ES>{}, cfg, [&](auto tile) {
    using Tile = decltype(tile);
    report.kernel = tile_kernel_name(Tile::kernel);
    // Operands this tile's kernel would load element by element are packed first (gpu/pack.hpp);
    // q is the problem the kernel runs.
    MatmulProblem<TIn, TOut> q = p;
    bool transposed = false;  // TF32 ws tiles: q is p's transposed product
    if constexpr (Tile::kernel == TileKernel::wgmma_ws_sm90 && Tile::tf32) {
      transposed = detail::tf32_runs_transposed<Tile>(q, options);
      if (transposed) q = detail::transposed_product(q);
    }
    detail::PackWorkspaceHold hold;
    if constexpr (detail::packs_for_vector_loads(Tile::kernel)) {
      report.packed = detail::pack_for_vector_loads<Tile::kernel>(q, space);
      hold.stream = stream_handle(space);
      hold.held = !report.packed.empty();
    }
    detail::with_functor<Tile>(q, [&](auto functor) {
      using F = typename decltype(functor)::type;
      const F f = detail::make_functor<TIn, TOut, Tile, F>(q, cfg);
      const std::string label = fmt::format("tilekit::matmul_{}_{}_{}", dtype_name(TypeTraits<TIn>::dtype),
                                            dtype_name(TypeTraits<TOut>::dtype), cfg.tile_name());
      if constexpr (Tile::kernel == TileKernel::host_packed) {
        detail::launch_host_packed(f, cfg.team_size, space, label);  // packs the operands as teams reach them
      } else {
        if constexpr (Tile::kernel == TileKernel::wgmma_ws_sm90) {
          if constexpr (TileSplitsK<Tile>::value) {  // partial sums per split, then their sum and the epilogue
            const detail::SplitKPlan plan = detail::split_k_plan(q.K, Tile::BK, cfg.k_splits);
            if (plan.splits > 1) {
              report.kernel += ", split K x" + std::to_string(plan.splits);
              detail::launch_wgmma_ws_split_k<Tile>(q, cfg, plan.splits, plan.k_per_split, label, space, options,
                                                    report);
              if (transposed) report.ws_loads += ", transposed product";
              return;
            }
          }
          detail::launch_wgmma_ws(f, cfg, label, space, options, report);  // a persistent grid; TMA descriptors first
          if (transposed) report.ws_loads += ", transposed product";
        } else {
          if constexpr (TileSplitsK<Tile>::value) {
            const detail::SplitKPlan plan = detail::split_k_plan(q.K, Tile::BK, cfg.k_splits);
            if (plan.splits > 1) {
              report.kernel += ", split K x" + std::to_string(plan.splits);
              if constexpr (Tile::kernel == TileKernel::mma_sm80_f64_tf32_i8)
                detail::launch_mma_frag_split_k<Tile>(q, cfg, plan.splits, plan.k_per_split, space, label);
              else
                detail::launch_simt_split_k<Tile>(q, cfg, plan, space, label);
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
  return report;
}

}  // namespace tilekit
