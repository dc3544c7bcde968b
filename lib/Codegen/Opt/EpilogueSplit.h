//===- EpilogueSplit.h - a reduction's costly epilogue in a loop of its own -*- C++ -*-===//
//
// An untiled kernel whose innermost output loop holds its reduction loop
// (out[i, j] = gelu(dot(x[i, :], W[j, :]) + b[j]), nn.Linear with few rows)
// is vectorized along the reduction: each output's dot product is a vector
// sum, and the epilogue around it, a transcendental per output, stays scalar.
// The innermost output loop is split in two: the first fills a kernel-local
// row with the reductions' results, the second evaluates the epilogue from
// that row, a loop with no reduction in it that vectorizes along the outputs.
// tinygrad's heuristic has no counterpart (its C kernels keep the epilogue in
// the loop, scalar).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "IR/UOp.h"

namespace tgc::codegen {

/// The longest innermost output loop whose reductions get a row buffer.
constexpr int64_t kMaxEpilogueRow = 4096;

/// The kernel with its innermost output loop split into a loop that stores
/// its reductions into a kernel-local row and a loop that evaluates the rest
/// of the stored value, or `sink` itself. Applies to a kernel of one loop nest
/// of at least two output loops (one END over a STORE, the form tileMatmul
/// leaves untiled) whose stored value has a transcendental (EXP2, LOG2, SIN,
/// POW) outside its reductions, and reductions that move with the innermost
/// output loop and read no buffer the kernel writes.
const UOp *splitEpilogue(const UOp *sink, const KernelOptions &opts);

/// The most outputs whose reductions a tile of dot products stores into a
/// kernel-local buffer for their epilogue (64 KiB of floats).
constexpr int64_t kMaxEpilogueTile = 16384;

/// The same for a kernel that tileMatmul makes a tile of dot products (x @ W.T
/// over a few rows, MatmulTiling.h): each output's epilogue is scalar code
/// after its lanes are summed, often the tile's slowest part. The kernel
/// becomes two loop nests: the tile, storing its dot products into a
/// kernel-local buffer of all the outputs, then the epilogue over the
/// outputs, a loop without reductions that vectorizes. Null unless the
/// kernel has exactly one such reduction, at most kMaxEpilogueTile outputs,
/// and tileMatmul(sink, opts, want) tiles it along the reduction; `chosen`
/// gets the tile.
const UOp *splitTileEpilogue(const UOp *sink, const KernelOptions &opts, MatmulTile want = {},
                             MatmulTile *chosen = nullptr);

/// What codegen does to a kernel's loops (and the tile-matmul pass prints):
/// tileMatmul (with the widest column tile, 4 x 64, when a reduction's summand
/// has a transcendental: work per tile row that every column tile of the row
/// would repeat), and for a tile of dot products too small for threads (two
/// nests run serially), its epilogue in a nest of its own (splitTileEpilogue);
/// for another register tile, its transcendental terms in a table
/// (hoistTileTerms, HoistInvariant.h).
const UOp *tileKernel(const UOp *sink, const KernelOptions &opts, MatmulTile *chosen = nullptr);

} // namespace tgc::codegen
