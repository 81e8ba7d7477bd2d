// tilekit blocked matmul: the checks of the public entry (check_matmul: shapes, strides, types, the
// config against the menu and this backend's limits) and the scratch a config needs. They ask the
// same dispatch the launch uses (dispatch.hpp), so a config that passes is one the launch runs.
// Include only from the instantiation units (tilekit/kernels/matmul/instantiate.cpp.in).
#pragma once

#include "tilekit/kernels/matmul/dispatch.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace tilekit {

template <class TIn, class TOut>
std::size_t matmul_scratch_bytes(const MatmulConfig& cfg) {
  using ES = Kokkos::DefaultExecutionSpace;
  std::size_t bytes = 0;
  if (cfg.thin) {  // the largest row class
    using F = detail::ThinMatmul<ES, kThinMaxRows, TIn, TOut>;
    return F::scratch_bytes(cfg.thin_cols, cfg.thin_kgroups);
  }
  detail::dispatch_tile<TIn>(MatmulTiles<ES>{}, cfg, [&](auto tile) {
    bytes = detail::MatmulFunctor<ES, decltype(tile), TIn, TOut>::scratch_bytes();
  });
  return bytes;
}

template <class TIn, class TOut>
std::string check_matmul(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg) {
  using ES = Kokkos::DefaultExecutionSpace;
  using compute = typename TypeTraits<TIn>::compute;
  constexpr bool gpu = is_gpu_space<ES>();
  const std::string backend = backend_name();

  // --- shapes and strides
  if (p.M < 0 || p.N < 0 || p.K < 0)
    return fmt::format("matrix sizes must be >= 0 (got M={}, N={}, K={})", p.M, p.N, p.K);
  // C gives M and N: when op(A) and op(B) agree with each other but not with C, name C (e.g. an
  // empty or default-constructed C view), not op(A).
  if (p.a.cols == p.b.rows && p.K == p.a.cols && (p.c.rows != p.a.rows || p.c.cols != p.b.cols))
    return fmt::format("C is {}x{}{}, expected rows of op(A) x columns of op(B) = {}x{}", p.c.rows, p.c.cols,
                       p.c.data ? "" : " (no data: an empty or default-constructed view)", p.a.rows, p.b.cols);
  // An empty A or B against the other two: name it, with the shape the others imply.
  if (p.a.cols != p.b.rows && p.K == p.a.cols && !p.a.data && p.b.data && p.c.cols == p.b.cols)
    return fmt::format("op(A) is {}x{} (no data: an empty or default-constructed view), expected rows of C x "
                       "rows of op(B) = {}x{}", p.a.rows, p.a.cols, p.c.rows, p.b.rows);
  if (p.a.cols != p.b.rows && p.K == p.a.cols && !p.b.data && p.a.data && p.c.rows == p.a.rows)
    return fmt::format("op(B) is {}x{} (no data: an empty or default-constructed view), expected columns of "
                       "op(A) x columns of C = {}x{}", p.b.rows, p.b.cols, p.a.cols, p.c.cols);
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
  if (p.K > 0 && p.M > 0 && !p.a.data) return "A has no data (an empty or default-constructed view)";
  if (p.K > 0 && p.N > 0 && !p.b.data) return "B has no data (an empty or default-constructed view)";
  if (p.a.rs < 0 || p.a.cs < 0 || p.b.rs < 0 || p.b.cs < 0)
    return "A and B strides must be >= 0 (0 repeats a row or column)";
  // --- aliasing: C is written while A and B are read, by other threads and in other tiles: C may
  // not share memory with either (unlike elementwise ops, where an input may be the output).
  if (p.M > 0 && p.N > 0 && p.K > 0) {
    auto span = [](const auto& m, std::uintptr_t& lo, std::uintptr_t& hi) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(m.data)>>;
      lo = reinterpret_cast<std::uintptr_t>(m.data);
      hi = lo + static_cast<std::uintptr_t>(((m.rows - 1) * m.rs + (m.cols - 1) * m.cs + 1) * int64_t(sizeof(T)));
    };
    std::uintptr_t clo, chi, lo, hi;
    span(p.c, clo, chi);
    span(p.a, lo, hi);
    if (lo < chi && clo < hi)
      return "C overlaps A in memory (allowed: C in memory of its own; copy A first to compute in place)";
    span(p.b, lo, hi);
    if (lo < chi && clo < hi)
      return "C overlaps B in memory (allowed: C in memory of its own; copy B first to compute in place)";
  }
  if (std::max({p.M, p.N, p.K}) > int64_t(1) << 40)
    return fmt::format("sizes above 2^40 are not supported (got M={}, N={}, K={})", p.M, p.N, p.K);

  // --- types and epilogue
  if (int(p.act) < int(Activation::none) || int(p.act) > int(Activation::gelu))
    return fmt::format("activation {} (as an int) is not an Activation; allowed: none, relu, leaky_relu, silu, gelu",
                       int(p.act));
  if (std::is_integral<compute>::value && p.act != Activation::none && p.act != Activation::relu)
    return fmt::format("activation '{}' needs a floating-point accumulator; for {} inputs allowed activations: "
                       "none, relu, each with or without a bias (epilogues none, bias, relu, bias+relu)",
                       activation_name(p.act), dtype_name(TypeTraits<TIn>::dtype));

  // --- math
  constexpr DType in_type = TypeTraits<TIn>::dtype;
  if (p.math == Math::tf32 && in_type != DType::f32)
    return fmt::format("math tf32 applies to f32 inputs only (got {} inputs); use math ieee",
                       dtype_name(in_type));

  // --- config
  if (cfg.thin) return detail::check_thin(p, cfg);
  bool in_menu = false;
  bool needs_tf32 = false;
  int micro_tiles = 0;
  int host_threads = 0;  // host backends: the most threads a team of this tile can keep busy
  std::size_t scratch = 0;
  int team_max = 0;
  bool splits_k = false;
  std::string host_path;  // host tiles this CPU cannot run: their path
  detail::dispatch_tile<TIn>(MatmulTiles<ES>{}, cfg, [&](auto tile) {
    using Tile = decltype(tile);
    in_menu = true;
    if constexpr (Tile::kernel == TileKernel::host_packed) {
      if (!detail::HostPackedMatmul<ES, Tile, TIn, TOut>::runs_here()) host_path = host_isa_name(Tile::isa);
    }
    splits_k = TileSplitsK<Tile>::value;
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
  if (!in_menu && !detail::tile_in_menu(MatmulTiles<ES>{}, cfg))
    return fmt::format("config '{}': tile {} is not in the {} menu (allowed tiles: {})", cfg.name(),
                       cfg.tile_name(), backend, menu_names());
  if (!in_menu)
    return fmt::format("config '{}': tile {} {} for other input types than {}; allowed for {} inputs with math "
                       "{}: {}",
                       cfg.name(), cfg.tile_name(),
                       cfg.mma ? "uses tensor cores" : "is compiled", dtype_name(in_type),
                       dtype_name(in_type), math_name(p.math), menu_names(in_type, p.math));
  if (!host_path.empty())
    return fmt::format("config '{}': tile {} runs the {} micro-kernel, which this CPU (or TILEKIT_HOST_ISA) does "
                       "not allow for {} inputs; this CPU runs {} (allowed tiles: {})",
                       cfg.name(), cfg.tile_name(), host_path, dtype_name(in_type), host_isa_reason(),
                       menu_names(in_type, p.math));
  if (needs_tf32 && p.math != Math::tf32)
    return fmt::format("config '{}': tile {} runs f32 inputs on TF32 tensor cores (11-bit significands), an "
                       "opt-in: pass math tf32 (app: --math tf32) to allow it; allowed with IEEE f32: {}",
                       cfg.name(), cfg.tile_name(), menu_names(in_type, Math::ieee));
  if (cfg.wgmma && !warpgroup_mma_available())
    return fmt::format("config '{}': tile {} uses Hopper warpgroup-MMA instructions, which need a compute "
                       "capability 9.0 GPU and a build with sm_90a code (the cuda preset; not cuda11); "
                       "this GPU has {}.{}; use a _tc tile",
                       cfg.name(), cfg.tile_name(), detail::device_compute_capability() / 10,
                       detail::device_compute_capability() % 10);
  if (cfg.ws && (needs_tf32 || in_type == DType::i8) && std::max({p.M, p.N, p.K}) > int64_t(INT32_MAX))
    return fmt::format("config '{}': tile {} loads through TMA, whose tensor maps take sizes up to 2^31-1 "
                       "(got M={}, N={}, K={}); use a _tc tile (allowed: {})",
                       cfg.name(), cfg.tile_name(), p.M, p.N, p.K, menu_names(in_type, p.math));
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
                       "the wide warp-specialised tiles and the f64, TF32 and i8 mma.sync tiles ({}); {}",
                       cfg.name(), cfg.k_splits, detail::split_k_tile_names(MatmulTiles<ES>{}),
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

}  // namespace tilekit

/// Explicit instantiation of the matmul entry points for one (input, output) type pair.
#define TILEKIT_INSTANTIATE_MATMUL(TIN, TOUT)                                                      \
  template std::string tilekit::check_matmul<TIN, TOUT>(const tilekit::MatmulProblem<TIN, TOUT>&,  \
                                                         const tilekit::MatmulConfig&);            \
  template tilekit::MatmulLaunchReport tilekit::launch_matmul<TIN, TOUT>(                         \
      const tilekit::MatmulProblem<TIN, TOUT>&, const tilekit::MatmulConfig&,                     \
      const Kokkos::DefaultExecutionSpace&, const tilekit::MatmulLaunchOptions&);                 \
  template std::size_t tilekit::matmul_scratch_bytes<TIN, TOUT>(const tilekit::MatmulConfig&);
