//===- Symbolic.h - tinygrad's symbolic simplifier --------------*- C++ -*-===//
//
// The rule sets of tinygrad/uop/symbolic.py and divandmod.py, as
// PatternMatchers, and UOp.simplify(). The rule sets nest as tinygrad's do:
//   symbolic = symbolicSimple + commutative + (phase-2 rules) + divAndMod
//   symbolicSimple = dataInvalid + (phase-1 rules)
// tinygrad's mop_cleanup (movement-op rules that need shapes) is not part of
// these sets: they simplify scalar (index) expressions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/Pass.h"
#include "IR/PatternMatcher.h"

#include <memory>

namespace tgc {

/// pm_data_invalid: ops move inside a `where(cond, x, Invalid)` gate so the
/// Invalid reaches the LOAD/STORE that folds it.
const PatternMatcher &pmDataInvalid();
/// symbolic_simple: identities, zero folding, constant folding, cast/bitcast,
/// pow and simple where folding.
const PatternMatcher &symbolicSimple();
/// commutative: weakint commutative ops put their srcs in tuplize order.
const PatternMatcher &pmCommutative();
/// div_and_mod_symbolic: the FLOORDIV/FLOORMOD folding of divandmod.py.
const PatternMatcher &divAndModSymbolic();
/// symbolic: the complete simplifier tinygrad's UOp.simplify() runs.
const PatternMatcher &symbolic();

/// pm_simplify_valid: a valid's clauses simplified given the earlier ones, and
/// a gated index `cond.where(x, Invalid)` simplified given its gate.
const PatternMatcher &pmSimplifyValid();
/// pm_drop_and_clauses: gate clauses over none of the gated value's ranges are dropped.
const PatternMatcher &pmDropAndClauses();
/// uop_given_valid: `uop` simplified under the assumption that `valid` holds.
Result<const UOp *> uopGivenValid(const UOp *valid, const UOp *uop, bool trySimplex = true);

/// UOp.simplify(): u rewritten with `symbolic` to a fixed point.
Result<const UOp *> simplify(const UOp *u);

/// The `simplify` pass: every root of the graph rewritten with `symbolic`.
std::unique_ptr<Pass> createSimplifyPass();

/// tinygrad's commit_weak: a CONST re-made at dt, anything else CAST to dt.
UOpRef commitWeak(UOpRef s, DType dt);

} // namespace tgc
