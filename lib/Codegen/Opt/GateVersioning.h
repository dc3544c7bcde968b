//===- GateVersioning.h - versions of a reduction without its load gates -*- C++ -*-===//
//
// A padded window (conv2d, pooling) reads its input through gated loads,
// INDEX(buf, WHERE(valid, idx, Invalid)) under WHERE(valid, load, 0): the gate
// keeps the border from reading out of bounds. Lowered per element, the gate
// selects each address, so the tile's loads are no longer consecutive and
// LLVM's SLP vectorizer leaves them scalar. Most of the window is in bounds,
// though: for an output tile away from the border, every gate is true in
// every iteration of the reduction. This analysis builds, from a reduction's
// values and ranges, the conditions (in the loops outside the reduction)
// under which the lowering may emit the reduction loop nest without the
// gates (KernelToMLIR.cpp runs it under scf.if, the gated nest in the else):
//
//  - allValid: every comparison (atom) of every gate holds for every value of
//    the reduction's ranges. The atoms are affine comparisons x < y or their
//    negation (x < y) != True; "for all" is checked at the extremes of the
//    ranges (x at its maximum, y at its minimum: the coefficient's sign picks
//    0 or N-1), which is sufficient and cheap.
//  - inBounds: every gated load's index stays inside its buffer for every
//    value of the ranges, so it may load unconditionally and only select the
//    value (border tiles: vector loads and vector selects).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <optional>
#include <unordered_map>
#include <vector>

namespace tgc::codegen {

struct GateVersions {
  /// Atoms of the gates that are true throughout the reduction when
  /// `allValid` holds; each depends on one of the reduction's ranges.
  std::vector<const UOp *> atoms;
  const UOp *allValid = nullptr; ///< bool, in the outer ranges; null: no such version
  /// Gated INDEX nodes whose index is within the buffer when `inBounds` holds.
  std::vector<const UOp *> loads;
  const UOp *inBounds = nullptr; ///< bool, in the outer ranges; null: no such version
};

/// Whether `u` is the Invalid constant of a gated index.
bool isInvalidConst(const UOp *u);
/// INDEX(buf, WHERE(valid, idx, Invalid)) -> (valid, idx); plain index -> (nullptr, idx).
std::pair<const UOp *, const UOp *> splitGate(const UOp *index);

/// The coefficient of a range `r` in an integer expression `e` (0 when `e`
/// does not vary with it), or nullopt when `e` is not affine in `r`; memoized
/// per (e, r), since index expressions share their subtrees.
class AffineCoefficients {
public:
  std::optional<int64_t> operator()(const UOp *e, const UOp *r);

private:
  struct PairHash {
    size_t operator()(const std::pair<const UOp *, const UOp *> &p) const {
      return std::hash<const void *>()(p.first) * 31 + std::hash<const void *>()(p.second);
    }
  };
  std::unordered_map<std::pair<const UOp *, const UOp *>, std::optional<int64_t>, PairHash> memo_;
};

/// Whether the loads and stores under `root` step by 0 or 1 element per
/// iteration of the range `r`: nullopt when some access steps otherwise (or
/// is not affine in r) or `root` holds a REDUCE (unless `throughReduces`: then
/// the accesses inside reductions count too); else whether one steps by 1.
std::optional<bool> unitStrideAccesses(const UOp *root, const UOp *r, bool throughReduces = false);

/// The versions of a reduction over `ranges` (literal trip counts) whose
/// values are `values` (REDUCE-free). Empty when no gate depends on the ranges.
GateVersions gateVersions(const std::vector<const UOp *> &values, const std::vector<const UOp *> &ranges);

} // namespace tgc::codegen
