// Host (Serial, OpenMP) matmul in BLIS's loop structure: packed operands and a register micro-kernel
// sized to the vector register file. Compiled into the host menu only (tilekit/kernels/matmul/tiles.hpp,
// HostPackedTileShape); the choice of this kernel is made in MatmulFunctor (tilekit/kernels/matmul/dispatch.hpp).
//
// Loop nest, outermost first (BLIS names in brackets):
//   league  : one team per BM x BN tile of C [MC x NC], grouped order; a team is one OpenMP thread.
//   kt      : K panels of BK [pc loop]; running sums of the tile wait in a BM x BN compute-typed
//             tile in team scratch between panels (L2), so f16/bf16 outputs never hold partial sums.
//   pack    : op(A) and op(B) are packed once into a workspace, converted to the compute type
//             (f16/bf16 -> f32 here, so the micro-kernel is the f32 one): A as MR-row slivers
//             [kt][sliver][k][MR], B as NR-column slivers [kt][sliver][k][NR], K in panels of BK
//             [KC]; slivers past M or N are zero-padded. Each block (a tile's slivers of one panel)
//             is packed by the first teams that reach it, inside the team loop, just before its
//             first use: the teams that need a block at once split its slivers between them, and
//             later teams of its row or column of C tiles read it packed (PackedBlocks). Its first
//             use so reads it from L2, not from memory after a separate pass over the whole
//             operand, and one thread packs while the other computes; the source of the next
//             panel's unpacked blocks is prefetched into L2 during this one. Operands that fit a
//             core's L2 once packed are packed in two passes before the launch (packs_in_loop).
//             Section 53 of docs/perf-notes.md.
//   jr      : NR-column slivers of the B panel [jr loop]: one sliver (BK x NR) stays in L1 ...
//   ir      : ... while the MR-row slivers of the A panel (BM x BK, in L2) stream past it [ir loop].
//   k       : the micro-kernel: MR x NR accumulators in vector registers, one rank-1 update per k
//             (NR / W vector loads of B, MR broadcasts of A, MR x NR / W vector FMAs).
// The epilogue (alpha/beta, bias, activation) is applied to the micro-tile in registers after the
// last panel, before it is stored (tilekit/kernels/matmul/team.hpp, store_micro_tile_host).
//
// Why not the SIMT kernel's staging (tilekit/kernels/matmul/dispatch.hpp, host branch): there every team re-staged its
// A and B tiles per K step (B once per tile row of C), and its 8x16 micro-tile held 8 accumulators,
// no more than the FMA latency x throughput of this CPU: docs/perf-notes.md section 9.
#pragma once

#include "tilekit/kernels/core/cpu.hpp"
#include "tilekit/kernels/matmul/host/microkernel_generic.hpp"
#include "tilekit/kernels/matmul/host/microkernel_x86.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/team.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <new>
#include <utility>

namespace tilekit {
namespace detail {

/// A host buffer of at least `bytes` bytes, 64-byte aligned, owned by the calling thread and reused
/// by its later calls (grown, never shrunk, freed at thread exit): the packed operands of host
/// matmuls (tilekit/kernels/core/memory.cpp). Throws InsufficientMemory when the allocation fails.
void* host_pack_workspace(std::size_t bytes);

/// The packed layout of one operand: `slivers` slivers of `width` (MR or NR) lanes, over K in panels
/// of `depth` (BK, a multiple of kgroup). Panel kt starts at kt * depth * slivers * width and holds
/// its slivers one after the other, each of kn = min(depth, K - kt * depth) values of k per lane,
/// rounded up to whole groups of `kgroup` consecutive k values (1, or 2 for the bf16 dot product:
/// element (k, lane) at ((k / kgroup) * width + lane) * kgroup + k % kgroup; padding k values are 0).
struct PackedLayout {
  int64_t slivers = 0;
  int width = 0, depth = 0, kgroup = 1;
  int64_t K = 0;
  int extra = 0;  ///< elements after each sliver (i8 with VNNI: the sliver's column sums, NR int32)
  int64_t panels() const { return K > 0 ? (K + depth - 1) / depth : 0; }
  int64_t elems() const { return K > 0 ? panel_offset(panels() - 1) + slivers * sliver_elems(panels() - 1) : 0; }
  KOKKOS_INLINE_FUNCTION int64_t padded(int64_t k) const { return (k + kgroup - 1) / kgroup * kgroup; }
  KOKKOS_INLINE_FUNCTION int64_t panel_offset(int64_t kt) const {
    return kt * slivers * (int64_t(depth) * width + extra);
  }
  KOKKOS_INLINE_FUNCTION int depth_of(int64_t kt) const {
    return static_cast<int>(K - kt * depth < depth ? K - kt * depth : depth);
  }
  /// Elements of one sliver in panel kt.
  KOKKOS_INLINE_FUNCTION int64_t sliver_elems(int64_t kt) const { return padded(depth_of(kt)) * width + extra; }
};

/// What the micro-kernel of path ISA reads: the compute type (f16/bf16 converted while packing, so
/// their micro-kernel is the f32 one), except on the avx512 path (which runs these types only on
/// CPUs that have the instructions: host_isa_runs)
/// - bf16 with AVX-512 BF16: the bf16 bits in pairs of consecutive k for vdpbf16ps (f32
///   accumulation of bf16 products, twice the FMA rate);
/// - i8 with AVX-512 VNNI: bytes in groups of 4 consecutive k for vpdpbusd (four 8-bit
///   products summed into i32 per lane: 4x the lanes of an i32 multiply-add). vpdpbusd multiplies
///   unsigned by signed bytes, so A is packed as a + 128 (its bits with the top bit flipped) and
///   each B sliver carries 128 x its column sums over the panel, which the micro-kernel subtracts:
///   sum (a + 128) b - 128 sum b = sum a b, exactly (i32 arithmetic wraps the same way either way);
/// and on the avx2 path i8 as int16 pairs of consecutive k for vpmaddwd (tiles.hpp, host_packing).
template <class TIn, HostIsa ISA>
struct HostPacking {
  using compute = typename TypeTraits<TIn>::compute;
  static constexpr HostPackingKind kind = host_packing(ISA, TypeTraits<TIn>::dtype);
  static constexpr bool bf16_dot = kind == HostPackingKind::bf16_pairs;
  static constexpr bool i8_dot = kind == HostPackingKind::i8_quads;
  static constexpr bool i8_pairs = kind == HostPackingKind::i8_pairs;
  using type = std::conditional_t<bf16_dot, uint16_t,
                                  std::conditional_t<i8_dot, int8_t, std::conditional_t<i8_pairs, int16_t, compute>>>;
  static constexpr int kgroup = bf16_dot || i8_pairs ? 2 : i8_dot ? 4 : 1;
  /// Elements after each B sliver: NR int32 column sums (i8 dot product).
  static constexpr int b_extra(int nr) { return i8_dot ? nr * 4 : 0; }
  template <bool IS_A>
  static type pack(const TIn& x) {
    if constexpr (bf16_dot) return x.bits;
    else if constexpr (i8_dot) return IS_A ? static_cast<int8_t>(static_cast<uint8_t>(x) ^ 0x80u) : x;
    else if constexpr (i8_pairs) return static_cast<int16_t>(x);
    else return convert<compute>(x);
  }
};

/// Packs op(A) (MR-row slivers, LANES = MR) or op(B)^T (NR-column slivers: pass the transpose
/// view, so both are "rows of a matrix along K"): work item w = (panel, sliver). Rows of the sliver
/// contiguous along the sliver (column-major A, row-major B) are copied a k at a time; rows
/// contiguous along K are transposed into the sliver; other strides take element-wise reads.
template <class ExecSpace, class TIn, HostIsa ISA, int LANES, bool IS_A>
struct PackSlivers {
  using Packing = HostPacking<TIn, ISA>;
  using pack_t = typename Packing::type;
  static constexpr int KG = Packing::kgroup;
  StridedMatrix<const TIn> src;  // rows = the sliver dimension (M or N), cols = K
  pack_t* dst = nullptr;
  PackedLayout layout;

  static int64_t at(int k, int r) { return (int64_t(k / KG) * LANES + r) * KG + k % KG; }

  /// The source of slivers s0 .. s0 + count - 1 in panel kt as `units` runs of `bytes` contiguous
  /// bytes, `stride` bytes apart (columns of K when the sliver dimension is contiguous, else rows
  /// along K); none for other strides.
  struct Runs {
    const char* base = nullptr;
    int64_t stride = 0, units = 0;
    int64_t bytes = 0;
  };
  Runs source_runs(int64_t kt, int64_t s0, int count) const {
    const int64_t r0 = s0 * LANES, r1 = std::min<int64_t>(src.rows, (s0 + count) * LANES);
    const int64_t k0 = kt * layout.depth, k1 = k0 + layout.depth_of(kt);
    if (r1 <= r0 || k1 <= k0) return {};
    const char* at = reinterpret_cast<const char*>(src.data + r0 * src.rs + k0 * src.cs);
    const int64_t size = int64_t(sizeof(TIn));
    if (src.rs == 1) return {at, src.cs * size, k1 - k0, (r1 - r0) * size};
    if (src.cs == 1) return {at, src.rs * size, r1 - r0, (k1 - k0) * size};
    return {};
  }
  /// Prefetches share `part` of `parts` of the runs into L2 (software prefetch: runs a leading
  /// dimension apart cross pages, where the hardware prefetchers stop).
  static void prefetch(const Runs& s, int part, int parts) {
    const int64_t u0 = s.units * part / parts, u1 = s.units * (part + 1) / parts;
    for (int64_t u = u0; u < u1; ++u) {
      const uintptr_t begin = reinterpret_cast<uintptr_t>(s.base + u * s.stride);
      for (uintptr_t line = begin & ~uintptr_t(63); line < begin + s.bytes; line += 64)
        __builtin_prefetch(reinterpret_cast<const void*>(line), 0, 2);
    }
  }

  /// A sliver that the paths of operator() do not take: rows contiguous along K (transposed into the
  /// sliver a value at a time) or other strides (element-wise reads); rows past the operand are zeros.
  void pack_other(pack_t* out, int kn, int rows, int64_t r0, int64_t k0) const {
    if (src.cs == 1) {
      for (int r = 0; r < rows; ++r) {
        const TIn* in = src.data + (r0 + r) * src.rs + k0;
        for (int k = 0; k < kn; ++k) out[at(k, r)] = Packing::template pack<IS_A>(in[k]);
      }
      for (int k = 0; k < kn; ++k)
        for (int r = rows; r < LANES; ++r) out[at(k, r)] = pack_t(0);
    } else {
      for (int k = 0; k < kn; ++k)
        for (int r = 0; r < LANES; ++r) out[at(k, r)] = r < rows ? Packing::template pack<IS_A>(src(r0 + r, k0 + k)) : pack_t(0);
    }
  }

  void operator()(int64_t w) const {
    const int64_t kt = w / layout.slivers, s = w % layout.slivers;
    const int kn = layout.depth_of(kt);
    const int kpad = static_cast<int>(layout.padded(kn));
    const int64_t r0 = s * LANES, k0 = kt * layout.depth;
    pack_t* out = dst + layout.panel_offset(kt) + s * layout.sliver_elems(kt);
    const int rows = static_cast<int>(std::min<int64_t>(LANES, src.rows - r0));
    if (rows == LANES && src.rs == 1) {  // the sliver's LANES values of one k are contiguous
      for (int k = 0; k < kn; ++k) {
        const TIn* in = src.data + r0 + (k0 + k) * src.cs;
        for (int r = 0; r < LANES; ++r) out[at(k, r)] = Packing::template pack<IS_A>(in[r]);
      }
#if defined(TILEKIT_HOST_X86)
    } else if constexpr (ISA != HostIsa::portable && std::is_same<TIn, pack_t>::value &&
                         (std::is_same<TIn, float>::value || std::is_same<TIn, double>::value)) {
      if (rows == LANES && src.cs == 1) {  // f32 / f64 rows contiguous along K: register transposes
        const TIn* in[LANES];
        for (int r = 0; r < LANES; ++r) in[r] = src.data + (r0 + r) * src.rs + k0;
        pack_sliver_transposed_avx2<LANES>(in, kn, out);
      } else {
        pack_other(out, kn, rows, r0, k0);
      }
#endif
    } else {
      pack_other(out, kn, rows, r0, k0);
    }
    // The rest of the last k group: zeros (A's zero is 128 in the i8 dot product's offset form;
    // B's zeros make those products 0 either way).
    pack_t pad = pack_t(0);
    if constexpr (Packing::i8_dot && IS_A) pad = Packing::template pack<true>(int8_t(0));
    for (int k = kn; k < kpad; ++k)
      for (int r = 0; r < LANES; ++r) out[at(k, r)] = pad;
    if constexpr (Packing::i8_dot && !IS_A) {  // 128 x the column sums of this sliver over the panel
      int32_t sums[LANES];
      for (int r = 0; r < LANES; ++r) sums[r] = 0;
      for (int k = 0; k < kpad; ++k)
        for (int r = 0; r < LANES; ++r) sums[r] += out[at(k, r)];
      for (int r = 0; r < LANES; ++r) sums[r] *= 128;
      __builtin_memcpy(out + int64_t(kpad) * LANES, sums, sizeof(sums));
    }
  }
};

/// The packing state of an operand's blocks (one block: the slivers of one C tile row or column in
/// one K panel), for packing inside the team loop: per block a claim counter and a count of packed
/// slivers, on a cache line of their own. A team that needs a block claims its unpacked slivers one
/// at a time and packs them, then waits until the slivers others claimed are packed too; a team
/// only ever waits on slivers being packed (packing waits on nothing), so every wait ends.
struct PackedBlocks {
  struct alignas(64) Block {
    std::atomic<int> claimed;
    std::atomic<int> packed;
  };
  Block* blocks = nullptr;
  int64_t tiles = 0;  ///< blocks per panel

  /// True while no team has claimed a sliver of block (kt, tile).
  bool untouched(int64_t kt, int64_t tile) const {
    return blocks[kt * tiles + tile].claimed.load(std::memory_order_relaxed) == 0;
  }

  /// Packs (or waits for) the `count` slivers of block (kt, tile) that start at sliver s0 of the
  /// operand: work items kt * slivers + s0 + i of `pack` (PackSlivers::operator()).
  template <class Pack>
  void ensure(const Pack& pack, int64_t kt, int64_t tile, int64_t s0, int count) const {
    Block& b = blocks[kt * tiles + tile];
    if (b.packed.load(std::memory_order_acquire) == count) return;
    const int64_t w0 = kt * pack.layout.slivers + s0;
    for (int i; (i = b.claimed.fetch_add(1, std::memory_order_relaxed)) < count;) {
      pack(w0 + i);
      b.packed.fetch_add(1, std::memory_order_release);
    }
    while (b.packed.load(std::memory_order_acquire) < count) {
#if defined(TILEKIT_HOST_X86)
      _mm_pause();
#endif
    }
  }
};

template <class ExecSpace, class Tile, class TIn, class TOut>
struct HostPackedMatmul {
  using compute = typename TypeTraits<TIn>::compute;
  using Packing = HostPacking<TIn, Tile::isa>;
  using pack_t = typename Packing::type;
  // Dynamic schedule: teams of a C row's last column (or row) have less work, and with the static
  // default one thread took the full tiles and the other the partial ones (640^3: 4:1 imbalance).
  using policy_type = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using member_type = typename policy_type::member_type;

  static constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK;
  static_assert(BK % Packing::kgroup == 0, "panels of whole k groups");
  static constexpr int MR = Tile::TM, NR = Tile::TN;
  static constexpr int kSliversM = BM / MR, kSliversN = BN / NR;
  static constexpr int kScratchLevel = 1;  // host: level 1 (level 0 is capped at 32 KB)
  /// Whether a team prefetches the next panel's A block into L2 once it is packed: on the avx512
  /// path, for tiles whose A block serves at least 16 B slivers a panel (the large tiles; on the
  /// small ones, 4 slivers, the prefetch is as large as the panel's own reads and cost 3%;
  /// docs/perf-notes.md section 56).
  static constexpr bool kPrefetchPackedA = Tile::isa == HostIsa::avx512 && kSliversN >= 16;

  /// Slivers s0 .. s0 + count - 1 of panel kt of a packed operand as runs of one cache line each
  /// (PackSlivers::prefetch): the block is contiguous in the workspace.
  template <class Runs>
  static Runs packed_runs_of(const PackedLayout& layout, const pack_t* dst, int64_t kt, int64_t s0, int count) {
    const pack_t* at = dst + layout.panel_offset(kt) + s0 * layout.sliver_elems(kt);
    const int64_t lines = (int64_t(count) * layout.sliver_elems(kt) * int64_t(sizeof(pack_t)) + 63) / 64;
    return {reinterpret_cast<const char*>(at), 64, lines, 64};
  }

  MatmulProblem<TIn, TOut> p;
  int group_m = 1;
  int tiles_m = 0, tiles_n = 0;
  int vector_length = 1;
  PackedLayout a_layout, b_layout;
  /// op(A) and op(B)^T packed into the workspace inside the team loop, block by block.
  PackSlivers<ExecSpace, TIn, Tile::isa, MR, true> a_pack;
  PackSlivers<ExecSpace, TIn, Tile::isa, NR, false> b_pack;
  PackedBlocks a_blocks, b_blocks;
  /// False where the operands were packed in two passes before the launch (packs_in_loop).
  bool pack_in_loop = true;
  /// p is the transposed product C^T = op(B)^T op(A)^T of the caller's column-major C (so that
  /// the micro-tile's vectors run along C's contiguous dimension); the bias is then per row of p.c.
  bool transposed = false;

  /// Team scratch: the BM x BN running sums, 64-byte aligned.
  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    return std::size_t(BM) * BN * sizeof(compute) + 64;
  }

  /// True if this CPU runs this tile's micro-kernel for TIn inputs (its path, and for the avx512
  /// path's bf16 and i8 kernels AVX-512 BF16 and VNNI).
  static bool runs_here() { return Tile::runs_here(TypeTraits<TIn>::dtype); }

  // The micro-kernel of the tile's path (microkernel_generic.hpp, microkernel_x86.hpp).
  static void micro_kernel(int kn, const pack_t* a, const pack_t* b, const compute* acc_in, compute* acc_out) {
#if defined(TILEKIT_HOST_X86)
    if constexpr (Packing::bf16_dot)
      micro_kernel_avx512_bf16<MR, NR>(kn, a, b, acc_in, acc_out);
    else if constexpr (Packing::i8_dot)
      micro_kernel_avx512_i8<MR, NR>(kn, a, b, acc_in, acc_out);
    else if constexpr (Packing::i8_pairs)
      micro_kernel_avx2_i8<MR, NR>(kn, a, b, acc_in, acc_out);
    else if constexpr (Tile::isa == HostIsa::avx512)
      micro_kernel_avx512<MR, NR>(kn, a, b, acc_in, acc_out);
    else if constexpr (Tile::isa == HostIsa::avx2)
      micro_kernel_avx2<MR, NR>(kn, a, b, acc_in, acc_out);
    else
#endif
      micro_kernel_portable<MR, NR>(kn, a, b, acc_in, acc_out);
  }

  void operator()(const member_type& team) const {
    int tile_m, tile_n;  // grouped order: consecutive teams read the same B panels
    grouped_tile(team.league_rank(), group_m, tiles_m, tiles_n, tile_m, tile_n);
    const int64_t m0 = int64_t(tile_m) * BM, n0 = int64_t(tile_n) * BN;
    const int level = kScratchLevel;
    char* raw = static_cast<char*>(team.team_scratch(level).get_shmem(scratch_bytes()));
    compute* sums = reinterpret_cast<compute*>((reinterpret_cast<uintptr_t>(raw) + 63) & ~uintptr_t(63));
    // Slivers of this tile inside the packed operands (the last tile of a row or column has fewer).
    const int sm = static_cast<int>(std::min<int64_t>(kSliversM, a_layout.slivers - int64_t(tile_m) * kSliversM));
    const int sn = static_cast<int>(std::min<int64_t>(kSliversN, b_layout.slivers - int64_t(tile_n) * kSliversN));
    const int64_t panels = std::max<int64_t>(a_layout.panels(), 1);  // K == 0: one empty panel, the epilogue
    const int tid = team.team_rank(), nthr = team.team_size();
    alignas(64) compute acc[MR][NR];
    for (int64_t kt = 0; kt < panels; ++kt) {
      const int kn = p.K > 0 ? a_layout.depth_of(kt) : 0;
      const bool first = kt == 0, last = kt + 1 == panels;
      const int64_t a_sliver = p.K > 0 ? a_layout.sliver_elems(kt) : 0, b_sliver = p.K > 0 ? b_layout.sliver_elems(kt) : 0;
      const pack_t* a_panel = p.K > 0 ? a_pack.dst + a_layout.panel_offset(kt) + int64_t(tile_m) * kSliversM * a_sliver : nullptr;
      const pack_t* b_panel = p.K > 0 ? b_pack.dst + b_layout.panel_offset(kt) + int64_t(tile_n) * kSliversN * b_sliver : nullptr;
      if (p.K > 0 && pack_in_loop) {  // this panel's blocks, packed by the first teams that reach them
        b_blocks.ensure(b_pack, kt, tile_n, int64_t(tile_n) * kSliversN, sn);
        a_blocks.ensure(a_pack, kt, tile_m, int64_t(tile_m) * kSliversM, sm);
      }
      // The next panel's blocks that no team has begun to pack: their source, a share per
      // micro-kernel call of this panel, prefetched into L2 so that packing them reads from cache
      // (docs/perf-notes.md section 53). On the avx512 path, whose micro-kernel reads A twice as
      // fast, the next panel's A block once packed is prefetched too (it comes back from L3 or
      // memory for every column tile; the avx2 path gained nothing from it: section 56).
      typename decltype(a_pack)::Runs a_next;
      typename decltype(b_pack)::Runs b_next;
      if (p.K > 0 && pack_in_loop && kt + 1 < panels) {
        if (a_blocks.untouched(kt + 1, tile_m)) a_next = a_pack.source_runs(kt + 1, int64_t(tile_m) * kSliversM, sm);
        else if (kPrefetchPackedA) a_next = packed_runs_of<typename decltype(a_pack)::Runs>(a_layout, a_pack.dst, kt + 1, int64_t(tile_m) * kSliversM, sm);
        if (b_blocks.untouched(kt + 1, tile_n)) b_next = b_pack.source_runs(kt + 1, int64_t(tile_n) * kSliversN, sn);
      }
      const int calls = std::max(1, (sn - tid + nthr - 1) / nthr * sm);
      int call = 0;
      for (int jr = tid; jr < sn; jr += nthr) {  // B sliver in L1 ...
        for (int ir = 0; ir < sm; ++ir, ++call) {  // ... A slivers stream past it
          if (a_next.units > 0) a_pack.prefetch(a_next, call, calls);
          if (b_next.units > 0) b_pack.prefetch(b_next, call, calls);
          compute* tile_sums = sums + (ir * kSliversN + jr) * (MR * NR);
          micro_kernel(kn, a_panel + ir * a_sliver, b_panel + jr * b_sliver, first ? nullptr : tile_sums,
                       last ? &acc[0][0] : tile_sums);
          if (last) store_micro_tile_host(p, m0 + ir * MR, n0 + jr * NR, acc, transposed);
        }
      }
    }
  }
};

/// Where the host packed kernel packs its operands: chosen by their size (packs_in_loop), or forced
/// (tests run both): inside the team loop, or in two passes before it.
enum class HostPackMode : int { by_size = 0, in_loop = 1, passes = 2 };
/// The mode of this process's host matmuls: initially the environment variable TILEKIT_HOST_PACK
/// (in_loop, passes; unset or by_size: by size), read once; set by tests (tilekit/kernels/matmul/matmul.cpp).
std::atomic<int>& host_pack_mode();

/// True where packed operands of `bytes` bytes are packed inside the team loop (PackedBlocks): where
/// they exceed kHostPackInLoopMinL2 times a core's L2 (tiles.hpp). Smaller ones are packed in two
/// passes before the launch: they stay in cache either way, and the passes split the packing evenly
/// between the threads where the first teams of the loop would wait for each other's blocks.
inline bool packs_in_loop(std::size_t bytes) {
  switch (HostPackMode(host_pack_mode().load(std::memory_order_relaxed))) {
    case HostPackMode::in_loop: return true;
    case HostPackMode::passes: return false;
    default: return double(bytes) > kHostPackInLoopMinL2 * double(cpu_info().l2_bytes);
  }
}

/// Runs the team kernel, which packs op(A) and op(B) into the calling thread's workspace as its
/// teams reach them: the launch of every HostPackedTileShape tile (launch_matmul).
template <class ExecSpace, class Tile, class TIn, class TOut>
void launch_host_packed(const HostPackedMatmul<ExecSpace, Tile, TIn, TOut>& f0, int team_size,
                        const ExecSpace& space, const std::string& label) {
  using F = HostPackedMatmul<ExecSpace, Tile, TIn, TOut>;
  using pack_t = typename F::pack_t;
  using Packing = typename F::Packing;
  constexpr int kg = Packing::kgroup;
  F f = f0;
  if (f.p.c.rs == 1 && f.p.c.cs != 1) {
    // Column-major C: compute C^T = op(B)^T op(A)^T into the row-major C^T. The micro-tile's rows
    // are NR-wide vectors, so its stores are then contiguous; stored column by column they were
    // strided scalar stores, half the time of a 256^3 product (docs/perf-notes.md section 9).
    auto& q = f.p;
    std::swap(q.M, q.N);
    const auto a = q.a;
    q.a = q.b.transposed();
    q.b = a.transposed();
    q.c = q.c.transposed();
    f.transposed = true;
    f.tiles_m = static_cast<int>((q.M + F::BM - 1) / F::BM);
    f.tiles_n = static_cast<int>((q.N + F::BN - 1) / F::BN);
  }
  const auto& p = f.p;
  f.a_layout = PackedLayout{(p.M + F::MR - 1) / F::MR, F::MR, F::BK, kg, p.K};
  f.b_layout = PackedLayout{(p.N + F::NR - 1) / F::NR, F::NR, F::BK, kg, p.K, Packing::b_extra(F::NR)};
  if (p.K > 0) {
    const std::size_t a_elems = std::size_t(f.a_layout.elems()), b_elems = std::size_t(f.b_layout.elems());
    const std::size_t a_bytes = (a_elems * sizeof(pack_t) + 63) / 64 * 64;
    const std::size_t b_bytes = (b_elems * sizeof(pack_t) + 63) / 64 * 64;
    const int64_t panels = f.a_layout.panels();
    const int64_t a_blocks = panels * f.tiles_m, b_blocks = panels * f.tiles_n;
    char* ws = static_cast<char*>(
        host_pack_workspace(a_bytes + b_bytes + std::size_t(a_blocks + b_blocks) * sizeof(PackedBlocks::Block)));
    // The blocks' counters start at zero (the workspace is reused: construct them anew).
    auto* blocks = reinterpret_cast<PackedBlocks::Block*>(ws + a_bytes + b_bytes);
    for (int64_t i = 0; i < a_blocks + b_blocks; ++i) {
      new (&blocks[i].claimed) std::atomic<int>(0);
      new (&blocks[i].packed) std::atomic<int>(0);
    }
    // op(B)^T: N x K, so its N-slivers pack like A's M-slivers.
    f.a_pack = {p.a, reinterpret_cast<pack_t*>(ws), f.a_layout};
    f.b_pack = {p.b.transposed(), reinterpret_cast<pack_t*>(ws + a_bytes), f.b_layout};
    f.a_blocks = {blocks, f.tiles_m};
    f.b_blocks = {blocks + a_blocks, f.tiles_n};
    f.pack_in_loop = packs_in_loop(a_bytes + b_bytes);
    if (!f.pack_in_loop) {  // operands that stay in cache: two passes, split evenly between the threads
      using RP = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int64_t>>;
      const std::string in = dtype_name(TypeTraits<TIn>::dtype);
      Kokkos::parallel_for("tilekit::matmul_pack_a_" + in, RP(space, 0, panels * f.a_layout.slivers), f.a_pack);
      Kokkos::parallel_for("tilekit::matmul_pack_b_" + in, RP(space, 0, panels * f.b_layout.slivers), f.b_pack);
    }
  }
  typename F::policy_type policy(space, f.tiles_m * f.tiles_n, team_size, 1);
  // One team per dynamic grab: Kokkos' automatic chunk (4 teams at 2048^3 on 2 threads) left one
  // thread idle for up to a chunk at the end (docs/perf-notes.md section 47).
  policy.set_chunk_size(1);
  policy.set_scratch_size(F::kScratchLevel, Kokkos::PerTeam(F::scratch_bytes()));
  Kokkos::parallel_for(label, policy, f);
  // The workspace is reused by this thread's next call: the kernel must be done with it. (A fence
  // on host backends costs nothing measurable next to a matmul; async callers get host-synchronous
  // behaviour here, as Kokkos' host backends already are.)
  space.fence();
}

}  // namespace detail
}  // namespace tilekit
