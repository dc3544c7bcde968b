//===- DTypeRules.h - the dtype a node's op derives from its srcs -*- C++ -*-===//
//
// tinygrad's dtype_from_uop: the production rules that give a node its dtype
// from (op, src, arg), and _rebuild_dtype, which graph_rewrite uses when it
// rebuilds a node over rewritten srcs. Only rules that need no shape are
// implemented (INDEX of an image-shaped PARAM is out of scope here).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <optional>
#include <span>

namespace tgc {

/// The dtype tinygrad derives for (op, src, arg), or nullopt where tinygrad
/// has no rule (CUSTOM, NOOP, INS, a valued CALL) or the srcs break one (a
/// WHERE whose condition is not bool, a shift of a non-int).
std::optional<DType> dtypeFromUOp(Op op, std::span<const UOp *const> src, const Value &arg);

/// The dtype of `n` rebuilt over `newSrc` (tinygrad's _rebuild_dtype): n's own
/// dtype while every src keeps its dtype, else the derived one, else n's.
DType rebuildDType(const UOp *n, std::span<const UOp *const> newSrc);

/// tinygrad's promo_dtype: the common dtype if all agree, else their least upper dtype.
DType promoDType(std::span<const UOp *const> src);

} // namespace tgc
