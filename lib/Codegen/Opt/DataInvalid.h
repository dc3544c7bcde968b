//===- DataInvalid.h - Invalid in a kernel's values, resolved -*- C++ -*-===//
//
// tinygrad's kernel ASTs carry Invalid in two places. In an index, as
// INDEX(buf, WHERE(valid, idx, Invalid)): a gated load or store, which the
// lowering handles. And in values, as WHERE(cond, x, Invalid): a value that is
// poison where cond is false. Rangeify makes the second wherever a padded view
// of an unrealized value is indexed again through a gate and symbolic's
// pm_data_invalid moves the ops between them inside that gate: two padded,
// strided pooling or conv stages in a row give
//   REDUCE(WHERE(valid, WHERE(inner_valid, INDEX(buf, WHERE(...)), 0), Invalid), r...)
// under a STORE of WHERE(valid, REDUCE, 0). tinygrad's own codegen resolves the
// poison late (codegen/__init__.py): its symbolic moves the accumulator update
// of reduce_ranges_to_acc inside the gate, acc = WHERE(cond, acc OP x, Invalid),
// and `sym` turns a STORE of WHERE(cond, v, Invalid) into a store gated by cond,
// so a poisoned element leaves the accumulator as it was; whatever Invalid is
// left in a value at the end is 0 (pm_remove_invalid).
//
// resolveDataInvalid gives a kernel the same meaning in the forms the kernel
// optimizations and the lowering handle, before either sees it:
//   - pm_data_invalid over the kernel (ops move inside their gates);
//   - REDUCE(WHERE(cond, x, Invalid), r..., op) -> REDUCE(WHERE(cond, x, identity of op), r...)
//     (acc OP identity == acc: the skipped update), REDUCE(Invalid) -> REDUCE(identity);
//   - STORE(INDEX(buf, i), WHERE(cond, v, Invalid)) -> STORE(INDEX(buf, WHERE(cond & valid(i), idx(i), Invalid)), v),
//     STORE(target, Invalid) -> NOOP;
//   - any other WHERE(cond, x, Invalid) used as a value -> WHERE(cond, x, 0).
// A kernel without Invalid outside its index gates is returned unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

namespace tgc::codegen {

/// Whether a kernel SINK has an Invalid anywhere but as WHERE(valid, idx, Invalid) in an INDEX's index.
bool hasDataInvalid(const UOp *sink);

/// `sink` with its value-level Invalids resolved as above (the same node when it has none).
const UOp *resolveDataInvalid(const UOp *sink);

} // namespace tgc::codegen
