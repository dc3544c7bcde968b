//===- SymbolicRules.h - internal: pieces of the simplifier -----*- C++ -*-===//
//
// Shared between the rule files of the simplifier; not a public interface.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/PatternMatcher.h"
#include "IR/SymbolicUtil.h"

namespace tgc::sym {

/// dtype groups of tinygrad's dtypes module.
const std::vector<DType> &intDTypes();            ///< dtypes.ints
const std::vector<DType> &intOrWeakDTypes();      ///< dtypes.ints + (weakint,)
const std::vector<DType> &intBoolWeakDTypes();    ///< dtypes.ints + (bool, weakint)
const std::vector<DType> &strongDTypes();         ///< dtypes.all: floats + ints + bool

/// tinygrad's true division pattern `a / b` (a * b.reciprocal()).
inline UPat fdiv(UPat a, UPat b) { return a * b.reciprocal(); }

/// fold_add_divmod_recombine: (x%c)*m + (x//c)*(c*m) -> x*m and its variants.
const UOp *foldAddDivmodRecombine(const UOp *x);
/// The phase-2 rules of `symbolic` (after symbolic_simple and commutative).
std::vector<Rule> symbolicPhase2Rules();

} // namespace tgc::sym
