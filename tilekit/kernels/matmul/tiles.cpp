// The tile menu's queries: which menu tiles run a type, which may split K, and their names.
#include "tilekit/kernels/matmul/tiles.hpp"

namespace tilekit {

namespace {

/// Host tiles: whether this CPU runs the tile's micro-kernel path; every other tile: true.
template <class T>
bool runs_here(DType input) {
  if constexpr (T::kernel == TileKernel::host_packed) return T::runs_here(input);
  else return (void)input, true;
}

template <class... Tiles>
bool supports(TileList<Tiles...>, const MatmulConfig& c, DType input, Math math) {
  bool yes = false;
  auto one = [&](auto tile) {
    using T = decltype(tile);
    yes = yes || (c.same_tile(T::config()) && T::runs(input) && (!T::tf32 || math == Math::tf32) &&
                  runs_here<T>(input));
  };
  (one(Tiles{}), ...);
  return yes;
}

template <class... Tiles>
std::string names(TileList<Tiles...>, const DType* input = nullptr, Math math = Math::ieee) {
  std::string s;
  auto add = [&](const MatmulConfig& c) {
    const std::string n = c.tile_name();
    if ((", " + s + ", ").find(", " + n + ", ") != std::string::npos) return;  // tiles of other types, same name
    if (!input || tile_supports(c, *input, math)) s += (s.empty() ? "" : ", ") + n;
  };
  (add(Tiles::config()), ...);
  return s;
}

}  // namespace

const char* tile_kernel_name(TileKernel k) {
  switch (k) {
    case TileKernel::simt: return "simt";
    case TileKernel::simt_warp: return "simt warp";
    case TileKernel::host_packed: return "host packed";
    case TileKernel::mma_sm80: return "mma.sync sm80";
    case TileKernel::mma_sm80_f64_tf32_i8: return "mma.sync sm80 f64/tf32/i8";
    case TileKernel::wgmma_sm90: return "wgmma sm90";
    case TileKernel::wgmma_ws_sm90: return "wgmma sm90 warp-specialised";
  }
  return "?";
}

bool tile_supports(const MatmulConfig& c, DType input, Math math) {
  return supports(MatmulTiles<Kokkos::DefaultExecutionSpace>{}, c, input, math);
}

template <class... Tiles>
bool splits_k(TileList<Tiles...>, const MatmulConfig& c) {
  return ((c.same_tile(Tiles::config()) && TileSplitsK<Tiles>::value) || ...);
}
bool tile_splits_k(const MatmulConfig& c) { return splits_k(MatmulTiles<Kokkos::DefaultExecutionSpace>{}, c); }

std::string menu_names() { return names(MatmulTiles<Kokkos::DefaultExecutionSpace>{}); }
std::string menu_names(DType input, Math math) {
  return names(MatmulTiles<Kokkos::DefaultExecutionSpace>{}, &input, math);
}

}  // namespace tilekit
