//===- RowPack.h - a tile's row operand copied in the order it is read -*- C++ -*-===//
//
// A register tile broadcasts one element of its row operand per tile row and
// reduction step. A matmul's A[i, k] is read along k, one element after the
// other; a convolution's weights w[co, ci, ky, kx] are read with the window's
// taps as the outer reduction loops (DivmodSplit.h: mergeOutputRanges), so
// each step moves 9 elements (36 bytes) along every row: a tap's 64 steps
// touch every cache line of the tile rows' weights for one float of each
// 9, and the lines come back from L2 for each of the 9 taps. On
// conv2d 8 x 64 x 56 x 56 that made the tile wait on L1 refills (the same tile
// over cache-resident data ran at the FMA peak). Such loads are copied once,
// before the tile's loops, into a kernel-local table laid out in the order the
// tile reads them: the loops they depend on, then the reduction's ranges, the
// tile's rows innermost, so a step reads its rows' elements side by side and
// the next step the ones after them. BLAS libraries pack both operands of a
// matmul; tinygrad packs neither.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "IR/UOp.h"

namespace tgc::codegen {

/// The largest table (elements) of packed rows: a stack array of each thread
/// running the kernel, beside a packed panel (MatmulTiling.h: kMaxPanelBytes).
constexpr int64_t kMaxRowPackElements = 64 * 1024;

/// The tiled kernel `tiled` (tileMatmul's SINK(END(GROUP(STOREs), loops)))
/// with its strided row loads read from a packed table, or `tiled` itself.
/// A load is packed when it reads a global buffer the kernel does not write,
/// without a gate, does not move with the tile's outermost loop (the table is
/// filled once before it, per chunk on threads), and steps by neither 0 nor
/// +-1 element along the innermost range of the tile's reductions, which must
/// all share their ranges; at most `tile.rows` loads (one per tile row), and a
/// table small enough to fill (kMaxRowPackElements; ParallelLoop.h:
/// tableFillsPay). Sets `tile.packedRows` when it applies.
const UOp *packTileRows(const UOp *tiled, const KernelOptions &opts, MatmulTile &tile);

} // namespace tgc::codegen
