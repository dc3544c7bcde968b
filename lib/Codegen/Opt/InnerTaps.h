//===- InnerTaps.h - a window's taps inside its channel loop -*- C++ -*-===//
//
// A convolution's register tile sums over the window's taps and the input
// channels, REDUCE(summand, ky, kx, ci): the channel loop innermost, once per
// tap. Each tap's sweep reads, per channel, the same input row's cache lines
// as its neighbour taps (one element apart), but the tile's other work since
// the row was last read (all channels of the previous tile, its packed
// weights) is more than L1 holds: the first tap of every row misses L1 at every
// step (conv2d_3x3: its loop ran 1.25x as long as the other two taps').
// Swapping the innermost range with a short one just outside it,
// REDUCE(summand, ky, ci, kx), puts the taps inside the channel loop, where
// LLVM unrolls them: one step reads a row's lines once for all of its taps,
// and the gates of the taps' loads (padding) still depend only on loops
// outside the channel loop. The order of the sums changes, so floats are
// reordered only off strict fp.
//
// Only a tile whose strided row loads are packed (RowPack.h) is reordered:
// such a tile is big enough to be threaded, and its input rows are more than
// L1 holds. On a small image the input fits L1 whole and there is nothing to
// gain: resnet18's 8 x 8 layers (64 channels, no pack), whose 32-pixel tiles
// span four image rows, ran 1.5x slower with the taps unrolled, LLVM building
// their vectors from shuffles.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "IR/UOp.h"

namespace tgc::codegen {

/// The longest range that counts as a window's taps.
constexpr int64_t kMaxInnerTaps = 4;
/// The shortest innermost range worth putting them inside.
constexpr int64_t kMinTapChannels = 8;

/// `sink` (a kernel tiled as `tile`) with each REDUCE over ranges (..., t, c)
/// rebuilt over (..., c, t), where t has at most kMaxInnerTaps steps and c at
/// least kMinTapChannels (and `tile.innerTaps` set); the same node when the
/// tile has no packed rows or none applies.
const UOp *innerTaps(const UOp *sink, MatmulTile &tile, const KernelOptions &opts);

} // namespace tgc::codegen
