//===- InnerTaps.cpp - a window's taps inside its channel loop ------------===//
//
// See InnerTaps.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/InnerTaps.h"
#include "Codegen/Opt/ParallelLoop.h"

#include <unordered_map>

namespace tgc::codegen {

namespace {

bool stepsBetween(const UOp *range, int64_t lo, int64_t hi) {
  std::optional<int64_t> n = tripCount(range);
  return n && *n >= lo && *n <= hi;
}

} // namespace

const UOp *innerTaps(const UOp *sink, MatmulTile &tile, const KernelOptions &opts) {
  // Packed rows (strided along the reduction) imply a column tile, never one of dot products.
  if (!opts.innerTaps || !tile.packedRows) return sink;
  Context &ctx = sink->context();
  std::unordered_map<const UOp *, const UOp *> replaced;
  for (const UOp *u : toposort(sink)) {
    size_t n = u->numSrc();
    if (!u->is(Op::REDUCE) || n < 3 || (opts.strictFP && u->dtype().isFloat())) continue;
    const UOp *taps = u->src(n - 2), *channels = u->src(n - 1);
    if (!stepsBetween(taps, 2, kMaxInnerTaps) || !stepsBetween(channels, kMinTapChannels, INT64_MAX)) continue;
    std::vector<const UOp *> src(u->src().begin(), u->src().end());
    std::swap(src[n - 2], src[n - 1]);
    replaced[u] = ctx.get(Op::REDUCE, u->dtype(), src, u->arg());
  }
  if (replaced.empty()) return sink;
  tile.innerTaps = true;
  return substitute(sink, replaced);
}

} // namespace tgc::codegen
