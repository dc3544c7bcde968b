//===- RangeifyIndexing.h - ranges and realize decisions --------*- C++ -*-===//
//
// tinygrad's run_rangeify (tinygrad/schedule/indexing.py, pipeline-schedule.md
// §3.4-3.6): decide which tensor nodes are materialized (the realize map) and
// give every node the index expressions its consumers read it with (the range
// map), then rewrite the graph so that buffers are INDEXed, REDUCEs carry
// their RANGEs, STOREs are ENDed and materializations are STAGEs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Schedule/Sugar.h"

#include <map>
#include <optional>

namespace tgc::rangeify {

struct IndexingContext {
  /// Nodes to materialize: nullopt until ranges are assigned, then the realized axes.
  std::unordered_map<const UOp *, std::optional<std::vector<size_t>>> realizeMap;
  std::unordered_map<const UOp *, bool> nonRemovable;
  /// node -> (input ranges, output ranges)
  std::unordered_map<const UOp *, std::pair<std::vector<const UOp *>, std::vector<const UOp *>>> rangeMap;
  int64_t rangeIdx = 0;

  /// A fresh RANGE of `size` (CONST 0 for size 1).
  const UOp *newRange(Context &ctx, const Dim &size, std::string_view axisType = "WEAK");
};

/// The ops that already denote storage or need none (tinygrad's ALWAYS_CONTIGUOUS).
bool alwaysContiguous(Op op);

/// tinygrad's data_srcs: the srcs that carry data into `u` (not shapes, bounds
/// or ranges). Always a prefix of u's srcs (none, the first, or all).
std::span<const UOp *const> dataSrcs(const UOp *u);

/// Fill ctx.realizeMap and ctx.rangeMap for the function body `sink`.
void assignRanges(const UOp *sink, IndexingContext &ctx);
/// run_rangeify: assignRanges, then pm_apply_rangeify and pm_fix_deviceless.
const UOp *runRangeify(const UOp *sink);

} // namespace tgc::rangeify
