//===- GateSplit.cpp - an output loop split where its gates change --------===//
//
// See GateSplit.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/GateSplit.h"
#include "Codegen/MatmulTiling.h"
#include "Codegen/ParallelLoop.h"

#include "IR/Symbolic.h"

#include <set>

namespace tgc::codegen {

namespace {

int64_t countReduces(const UOp *u) {
  int64_t n = 0;
  for (const UOp *x : toposort(u)) n += x->is(Op::REDUCE);
  return n;
}

} // namespace

const UOp *splitGates(const UOp *sink, const KernelOptions &opts) {
  if (!opts.splitGates || !isPlainLoopNest(sink)) return sink;
  const UOp *end = sink->src(0), *store = end->src(0);
  if (end->numSrc() < 3) return sink; // the pieces run inside the outer loops
  const UOp *j = end->src(end->numSrc() - 1);
  std::optional<int64_t> n = tripCount(j);
  if (!n) return sink;
  // The constants j is compared with: j < c splits [0, n) at c.
  std::set<int64_t> cuts;
  for (const UOp *u : toposort(store))
    if (u->is(Op::CMPLT) && u->src(0) == j && u->src(1)->is(Op::CONST) && u->src(1)->arg().isInt()) {
      int64_t c = u->src(1)->arg().getInt();
      if (c > 0 && c < *n) cuts.insert(c);
    }
  if (cuts.empty()) return sink;
  cuts.insert(*n);

  Context &ctx = sink->context();
  int64_t axis = maxAxisId(sink), lo = 0, reducesBefore = countReduces(store) * *n, reducesAfter = 0;
  std::vector<const UOp *> pieces;
  for (int64_t hi : cuts) {
    const UOp *r = newRangeLike(j, hi - lo, ++axis);
    const UOp *at = lo ? ctx.get(Op::ADD, j->dtype(), {r, ctx.get(Op::CONST, j->dtype(), {}, tgc::Value::integer(lo))}) : r;
    // tinygrad's symbolic, as its codegen runs it over a kernel: with j in
    // [lo, hi) the comparisons are constants and their WHEREs fold.
    Result<const UOp *> piece = simplify(substitute(store, {{j, at}}));
    if (!piece || !(*piece)->is(Op::STORE)) return sink;
    reducesAfter += countReduces(*piece) * (hi - lo);
    pieces.push_back(ctx.get(Op::END, end->dtype(), {*piece, r}, end->arg()));
    lo = hi;
  }
  if (reducesAfter >= reducesBefore) return sink;
  std::vector<const UOp *> outer{ctx.get(Op::GROUP, dtypes::Void, pieces)};
  outer.insert(outer.end(), end->src().begin() + 1, end->src().end() - 1);
  return ctx.get(Op::SINK, sink->dtype(), {ctx.get(Op::END, end->dtype(), outer, end->arg())}, sink->arg(), sink->tag());
}

} // namespace tgc::codegen
