//===- DivmodSplit.cpp - an output loop split into quotient and remainder --===//
//
// See DivmodSplit.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/DivmodSplit.h"
#include "Codegen/GateVersioning.h"
#include "Codegen/MatmulTiling.h"
#include "Codegen/ParallelLoop.h"

#include "IR/Symbolic.h"

#include <set>
#include <unordered_map>

namespace tgc::codegen {

namespace {

// STORE `store` with j = outer * c + inner, its integer and boolean
// expressions (indices, gates) simplified where they meet the rest: the float
// arithmetic keeps tinygrad's exact form. Null when the simplifier fails.
const UOp *splitStore(const UOp *store, const UOp *j, const UOp *outer, const UOp *inner, int64_t c) {
  Context &ctx = store->context();
  const UOp *at = ctx.get(Op::ADD, j->dtype(),
                          {ctx.get(Op::MUL, j->dtype(), {outer, ctx.get(Op::CONST, j->dtype(), {}, tgc::Value::integer(c))}), inner});
  const UOp *split = substitute(store, {{j, at}});
  std::unordered_map<const UOp *, const UOp *> simplified;
  auto intLike = [](const UOp *u) { return u->dtype().isInt() || u->dtype().isBool(); };
  for (const UOp *u : toposort(split)) {
    if (intLike(u) && !u->is(Op::INDEX)) continue;
    for (const UOp *s : u->src()) {
      if (!intLike(s) || s->is(Op::RANGE) || s->is(Op::CONST) || simplified.count(s)) continue;
      Result<const UOp *> x = simplify(s);
      if (!x) return nullptr;
      simplified[s] = *x;
    }
  }
  return substitute(split, simplified);
}

} // namespace

const UOp *splitDivmod(const UOp *sink, const KernelOptions &opts) {
  if (!opts.splitDivmod || !isPlainLoopNest(sink)) return sink;
  const UOp *end = sink->src(0), *store = end->src(0);
  const UOp *j = end->src(end->numSrc() - 1);
  std::optional<int64_t> n = tripCount(j);
  if (!n || unitStrideAccesses(store, j, /*throughReduces=*/true).has_value()) return sink; // already affine along j
  std::set<int64_t> divisors;
  for (const UOp *u : toposort(store))
    if ((u->is(Op::FLOORDIV) || u->is(Op::FLOORMOD)) && u->src(0) == j && u->src(1)->is(Op::CONST) && u->src(1)->arg().isInt()) {
      int64_t c = u->src(1)->arg().getInt();
      if (c > 1 && c < *n && *n % c == 0) divisors.insert(c);
    }
  // The widest inner loop first: more elements one step apart.
  for (auto it = divisors.rbegin(); it != divisors.rend(); ++it) {
    int64_t c = *it, axis = maxAxisId(sink);
    const UOp *outer = newRangeLike(j, *n / c, ++axis), *inner = newRangeLike(j, c, ++axis);
    const UOp *split = splitStore(store, j, outer, inner, c);
    if (!split || unitStrideAccesses(split, inner, /*throughReduces=*/true) != true) continue;
    std::vector<const UOp *> src{split};
    src.insert(src.end(), end->src().begin() + 1, end->src().end() - 1);
    src.push_back(outer);
    src.push_back(inner);
    Context &ctx = sink->context();
    return ctx.get(Op::SINK, sink->dtype(), {ctx.get(Op::END, end->dtype(), src, end->arg())}, sink->arg(), sink->tag());
  }
  return sink;
}

} // namespace tgc::codegen
