//===- MatmulTiling.h - register tiles for matmul-like kernels --*- C++ -*-===//
//
// The UPCAST part of tinygrad's hand-coded heuristic (pipeline-codegen.md §5,
// hand_coded_optimizations: upcast the output axes a reduction is not
// contiguous in), as a rewrite of an unoptimized kernel AST: the output's
// unit-stride axis is split by a vector-sized factor and a second output axis
// by a small one, and the STORE is replicated for every (row, column) of the
// tile. The replicated REDUCEs share their ranges, so the lowering fuses them
// into one loop with a tile of accumulators (KernelToMLIR.cpp), and LLVM's SLP
// vectorizer turns each tile row into vector loads and FMAs. When there are
// enough column tiles to split over threads, the tile loop of the column axis
// becomes the outermost (threaded) loop, and the right-hand operand's column
// panel is packed into a kernel-local buffer at its top, so every row block
// reads it sequentially from cache; a wide panel packs several column tiles
// and each row tile runs over all of them. A reduction too long for a wide
// panel is cut into blocks, each packed and run in turn, the later blocks
// adding their sums to the output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "IR/UOp.h"

#include <span>
#include <unordered_set>

namespace tgc::codegen {

struct MatmulTile {
  int64_t rows = 8;     ///< upcast of the row axis (16 vector accumulators at 32 columns)
  int64_t columns = 32; ///< upcast of the unit-stride column axis
  /// Steps of a blocked reduction (not under strict fp; KernelOptions::
  /// reduceBlocks): each block adds its sums to the output's. 0 = the tiler
  /// decides (a reduction too long for a wide panel), and unblocked.
  int64_t reduceBlock = 0;
  /// A tile of dot products vectorized along the reduction (x @ W.T over a
  /// few rows), not along its columns.
  bool alongReduction = false;
  /// The tile's sums are stored into a kernel-local tile and the stored value
  /// is evaluated from it in a loop nest after the tile (a causal mask).
  bool epilogueTile = false;
  /// The tile's strided row loads read a table packed before its loops
  /// (RowPack.h: a convolution's weights).
  bool packedRows = false;
  /// The tile's reduction runs a window's taps inside its channel loop
  /// (InnerTaps.h).
  bool innerTaps = false;
};

/// The column tile loop is the outermost (threaded) one when it has at least
/// this many iterations.
constexpr int64_t kMinColumnTiles = 16;
/// The narrowest column tile (a quarter of a 512-bit vector: a 12-pixel row
/// takes three tiles of 4).
constexpr int64_t kMinTileColumns = 4;
/// How a register tile's columns cover an axis of `n`: `columns` per tile,
/// `tiles` of them. When no width divides n the last tile starts at
/// n - columns, overlapping the one before (it computes some outputs again,
/// the same values): `overlaps`. columns 0: no tile.
struct ColumnTiles {
  int64_t n = 0, columns = 0, tiles = 0;
  bool overlaps = false;
  /// The outputs of the axis per tile: the measure by which a tiling of one
  /// axis is judged against another's (a merged loop's, DivmodSplit.h).
  double outputsPerTile() const { return tiles ? double(n) / double(tiles) : 0; }
};
/// At most this fraction of an overlapping tiling's columns repeat others
/// (a 7 x 7 image's 49 pixels: 7 tiles of 8 columns, the last over pixels 41..48).
constexpr double kMaxOverlapWaste = 0.125;
/// An exact tiling at least this wide is taken before any overlapping one; a
/// narrower exact one loses to overlapping tiles of this width (a 14 x 14
/// image's 196 pixels: 25 tiles of 8, not 49 of 4).
constexpr int64_t kMinExactColumns = 8;
/// The columns of a register tile over an axis of `n`: the widest power of two
/// from `requested` down to kMinExactColumns that divides n; else, if
/// `overlap`, the widest from `requested` down to kMinTileColumns that divides
/// n or whose tiles overlap by at most kMaxOverlapWaste of their columns, over
/// at least two tiles, and wider than kMinExactColumns only over at least
/// kMinColumnTiles tiles (a short axis in wide overlapping tiles was measured
/// slower: 13 x 13's 169 pixels in 6 tiles of 32, 2.5x); else 4 if it divides.
ColumnTiles columnTiles(int64_t n, int64_t requested = MatmulTile{}.columns, bool overlap = true);
/// A reduction of fewer iterations is not tiled.
constexpr int64_t kMinTileReduction = 32;
/// The largest panel tileMatmul packs into a kernel-local buffer (it lives
/// on the stack of the thread running the kernel).
constexpr int64_t kMaxPanelBytes = 256 * 1024;
/// A wide packed panel (KernelOptions::widePanels) holds at most this many
/// column tiles, and is made wide only while at least kMinWidePanels panels
/// remain for the threads to split.
constexpr int64_t kMaxSubPanels = 4;
constexpr int64_t kMinWidePanels = 8;
/// The shortest block of a blocked reduction (MatmulTile::reduceBlock).
constexpr int64_t kMinReduceBlock = 128;

/// A PARAM in the LOCAL address space: scratch memory of one kernel
/// invocation (per thread), not a CALL argument.
bool isLocalBuffer(const UOp *buf);
/// The buffers a kernel (`nodes`, its toposort) stores to through an INDEX.
std::unordered_set<const UOp *> storedBuffers(std::span<const UOp *const> nodes);
/// A GLOBAL PARAM of dtype `dt` among `nodes`, whose ParamArg a kernel-local
/// buffer of that dtype copies (localBuffer), or nullptr.
const UOp *globalBufferOf(std::span<const UOp *const> nodes, DType dt);
/// A LOCAL PARAM of `elements` elements typed like the PARAM `like`; buffers
/// of one kernel with the same size and type are told apart by `slot`.
const UOp *localBuffer(const UOp *like, int64_t elements, int64_t slot = 0);
/// The row-major index over `ranges` (each with a literal trip count), the
/// outermost first: ((start * |r0| + r0) * |r1| + r1) ...; without `start`,
/// r0 leads.
const UOp *rowMajorIndex(std::span<const UOp *const> ranges, const UOp *start = nullptr);

/// The tiled kernel, or `sink` itself when the kernel is not matmul-like: one
/// END over an ungated STORE of a value with a float REDUCE that depends on
/// the upcast axes; the column tiles are columnTiles' (with
/// KernelOptions::overlapTiles the last may overlap the one before: two
/// threads may then store the same values to its outputs, and there are no
/// wide panels or cache blocking), and the row axis is upcast only when it
/// divides (a vector-matrix kernel has none); no buffer may be both read and
/// written (the loop order changes, and an overlapped output is computed
/// twice). An operand contiguous along the reduction instead of the columns
/// (x @ W.T) is tiled through its packed panel (the pack transposes it), or,
/// over too few row tiles to pack, as a small tile of dot products vectorized
/// along the reduction (KernelOptions::dotTiles; MatmulTile::alongReduction).
/// `chosen`, when given, receives the tile applied (columns 0: not tiled).
const UOp *tileMatmul(const UOp *sink, const KernelOptions &opts, MatmulTile tile = {}, MatmulTile *chosen = nullptr);

/// The loop work the threads decision weighs (ParallelLoop.h) for a kernel
/// tiled as `tile` (an iteration of a register tile is counted as its vector
/// FMAs, 16 to a vector).
int64_t threadsWork(const UOp *tiled, const MatmulTile &tile);

/// A kernel of one loop nest: SINK(END(STORE, RANGE, ...)), the form the
/// rewrites of untiled kernels (HoistInvariant.h, EpilogueSplit.h) start from.
bool isPlainLoopNest(const UOp *sink);
/// EXP2, LOG2, SIN or POW: some 25 vector ops each as polynomials
/// (Transcendental.h), worth moving where they vectorize or run fewer times.
bool isTranscendental(const UOp *u);
/// A float transcendental inside a reduction's summand (attention's
/// softmax(S) @ V: exp2 of a score per row and step of the reduction).
bool transcendentalInReduce(const UOp *sink);

/// The largest axis id among a kernel's RANGEs (new ranges take the next ones).
int64_t maxAxisId(const UOp *sink);
/// A new RANGE of `n` iterations with axis id `axis`, otherwise like `like`.
const UOp *newRangeLike(const UOp *like, int64_t n, int64_t axis);

} // namespace tgc::codegen
