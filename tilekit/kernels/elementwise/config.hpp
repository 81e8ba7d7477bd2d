// The configuration of one elementwise launch (variant and its fields) and its name syntax.
// Plain data and text only (no Kokkos), so the parser can be fuzzed on its own (fuzz/).
#pragma once

#include <cstddef>
#include <string>

namespace tilekit {

/// Bytes per vector access: 16 (128-bit) is the widest load/store CUDA and HIP have per thread,
/// and an SSE register on x86. Compiled in (it sizes the vector type); the only value configs may
/// name, so that each op and type is compiled once per variant.
constexpr int kElementwiseVectorBytes = 16;

/// tiled: rows whose vectors a thread loads before it stores any (bytes in flight per thread =
/// operands x this x 16). Compiled in: the loads go to registers, so the count must be a constant.
constexpr int kElementwiseRowsInFlight = 4;

enum class ElementwiseVariant { naive, vectorized, tiled, automatic };

/// "naive", "vectorized", "tiled", "auto".
const char* variant_name(ElementwiseVariant v);
/// Parses a variant name ("auto" for automatic); returns false for an unknown name.
bool parse_variant(const std::string& s, ElementwiseVariant& out);

/// The plain configuration of one elementwise launch. Values come from tilekit/tuning/, never from literals
/// in the kernels. Fields after vector_bytes apply to the tiled variant only.
struct ElementwiseConfig {
  ElementwiseVariant variant = ElementwiseVariant::automatic;
  int vector_bytes = 16;        ///< bytes each thread moves per access (vectorized, tiled); 16 everywhere
  int rows_per_thread = 1;      ///< tiled: consecutive rows each thread covers
  int vectors_per_thread = 1;   ///< tiled: vectors each thread covers along a row, threads_n vectors apart
  int team_size = 1;            ///< tiled: threads per team (Kokkos team size, vector length 1)
  int threads_n = 1;            ///< tiled: threads of a team side by side along the contiguous dimension
  bool remap_teams = true;      ///< tiled: consecutive teams take consecutive tiles along a row of tiles

  /// Rows and columns of the tile a team owns, in elements of T (tiled).
  int tile_rows() const { return (threads_n > 0 ? team_size / threads_n : 0) * rows_per_thread; }
  int tile_cols(std::size_t elem_bytes) const {
    return threads_n * vectors_per_thread * vector_bytes / static_cast<int>(elem_bytes);
  }

  /// "naive", "vectorized_vb16", "tiled_vb16_r16_c1_t256_n64_remap", "auto".
  std::string name() const;
  /// Parses a name of the form name() writes; fields left out keep the values in `out`
  /// (e.g. "tiled_r4" changes only rows_per_thread). On failure returns false and says why.
  static bool parse(const std::string& s, ElementwiseConfig& out, std::string& why);

  bool operator==(const ElementwiseConfig& o) const {
    return variant == o.variant && vector_bytes == o.vector_bytes && rows_per_thread == o.rows_per_thread &&
           vectors_per_thread == o.vectors_per_thread && team_size == o.team_size &&
           threads_n == o.threads_n && remap_teams == o.remap_teams;
  }
};

}  // namespace tilekit
