//===- StoreHazard.h - fix_store_hazard's question, answered once per graph -*- C++ -*-===//
//
// tinygrad's fix_store_hazard (earliest_rewrites) asks, for every
// STORE(target, src), whether src reads target's base through a reordering
// view (PERMUTE, FLIP, or SHRINK when the target is shrunk itself), walking
// the whole upstream of src each time. On a training graph every optimizer
// update is such a STORE over nearly the whole graph. StoreHazardIndex
// answers the same question from per-node bitsets over the bases of the
// graph's STORE targets, computed once per node and shared by all STOREs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/PtrMap.h"
#include "IR/UOp.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tgc::rangeify {

/// fix_store_hazard's condition by tinygrad's walks: target.base is in
/// src.toposort(enter_calls=False), and some node of src.toposort(gate: not
/// CONTIGUOUS) that reaches the base inside that toposort is unsafe.
bool storeHazardWalk(const UOp *target, const UOp *src);

/// The same answers, from bitsets of "reaches base i" per node. Nodes are
/// immutable, so an entry stays valid; STOREs made during the rewrite whose
/// base was not under the root at construction fall back to the walk.
class StoreHazardIndex {
public:
  /// Collects the bases of the STORE targets under root.
  explicit StoreHazardIndex(const UOp *root);
  bool hazard(const UOp *target, const UOp *src);

private:
  /// Bitsets of one node, each `words_` long, at offset `at` in bits_.
  enum Kind : unsigned {
    ReachNoCalls, ///< bases in toposort(enter_calls=False)
    ReachOpen,    ///< bases reached without passing a CONTIGUOUS
    UnsafeOrder,  ///< bases reached through a PERMUTE or FLIP (no CONTIGUOUS on the way)
    UnsafeShrink, ///< bases reached through a SHRINK (no CONTIGUOUS on the way)
    NumKinds
  };
  size_t entry(const UOp *u);
  void fill(const UOp *u, size_t at);
  bool test(size_t at, Kind k, size_t base) const {
    return (bits_[at + k * words_ + base / 64] >> (base % 64)) & 1;
  }

  PtrMap<uint32_t> baseIndex_;
  size_t words_ = 0;
  PtrMap<size_t> at_{1024};
  std::vector<uint64_t> bits_;
};

} // namespace tgc::rangeify
