//===- Ranges.h - the RANGEs a node is inside -------------------*- C++ -*-===//
//
// tinygrad's `ranges` and `ended_ranges` properties (tinygrad/uop/ops.py):
// the open RANGEs under a node, minus those an END/REDUCE/STAGE/CALL/AFTER
// closes, memoized per node in its Context; and tinygrad's gated toposort, which the
// scheduling passes walk graphs with.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <functional>
#include <vector>

namespace tgc::rangeify {

/// tinygrad's UOp.toposort(gate): a node for which gate() is false is neither
/// descended into nor listed (unlike tgc::toposort, which lists it).
std::vector<const UOp *> toposortGated(const UOp *root, const std::function<bool(const UOp *)> &gate,
                                       bool enterCalls = true);

/// Calls visit(u) once for every node under root (root included) that
/// known(u) does not hold, sources before users, iteratively (chains of any
/// length). known(u) must hold once visit(u) has run; a known node is not
/// entered, which is how a memo table fills only what it lacks.
template <typename Known, typename Visit> void visitUnknownSourcesFirst(const UOp *root, Known known, Visit visit) {
  if (known(root)) return;
  std::vector<std::pair<const UOp *, uint32_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto &[u, next] = stack.back();
    if (next < u->numSrc()) {
      const UOp *s = u->src(next++);
      if (!known(s)) stack.push_back({s, 0});
      continue;
    }
    const UOp *done = u;
    stack.pop_back();
    if (!known(done)) visit(done);
  }
}

/// tinygrad's `ranges` / `ended_ranges`, memoized per node in the node's
/// Context (tinygrad caches them on the UOp: nodes are immutable, so the
/// answers never go stale). The lists keep tinygrad's dict order (sources
/// left to right).
class RangeCache {
public:
  const std::vector<const UOp *> &ranges(const UOp *u);
  static std::vector<const UOp *> endedRanges(const UOp *u);
  /// `UOp.sink(*us).ranges`: the ranges of several nodes, deduplicated in order.
  std::vector<const UOp *> rangesOf(const std::vector<const UOp *> &us);
};

/// The range queries.
RangeCache &rangeCache();

} // namespace tgc::rangeify
