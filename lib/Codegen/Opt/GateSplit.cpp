//===- GateSplit.cpp - an output loop split where its gates change --------===//
//
// See GateSplit.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/GateSplit.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/ParallelLoop.h"

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
  std::vector<const UOp *> storeNodes = toposort(store);
  // The innermost output loop compared with constants (j < c splits [0, n) at
  // c), inside at least one other: the pieces run inside the outer loops.
  size_t pos = end->numSrc() - 1;
  std::set<int64_t> cuts;
  for (; pos >= 2 && cuts.empty(); --pos) {
    const UOp *j = end->src(pos);
    std::optional<int64_t> n = tripCount(j);
    if (!n) continue;
    for (const UOp *u : storeNodes)
      if (u->is(Op::CMPLT) && u->src(0) == j && u->src(1)->is(Op::CONST) && u->src(1)->arg().isInt()) {
        int64_t c = u->src(1)->arg().getInt();
        if (c > 0 && c < *n) cuts.insert(c);
      }
    if (!cuts.empty()) {
      cuts.insert(*n);
      break;
    }
  }
  if (cuts.empty()) return sink;
  const UOp *j = end->src(pos);

  Context &ctx = sink->context();
  int64_t axis = maxAxisId(sink), lo = 0, reducesBefore = countReduces(store) * *tripCount(j), reducesAfter = 0;
  std::vector<const UOp *> pieces;
  for (int64_t hi : cuts) {
    const UOp *r = newRangeLike(j, hi - lo, ++axis);
    const UOp *at = lo ? ctx.get(Op::ADD, j->dtype(), {r, ctx.get(Op::CONST, j->dtype(), {}, tgc::Value::integer(lo))}) : r;
    // tinygrad's symbolic, as its codegen runs it over a kernel: with j in
    // [lo, hi) the comparisons are constants and their WHEREs fold.
    Result<const UOp *> piece = simplify(substitute(store, {{j, at}}));
    if (!piece || !(*piece)->is(Op::STORE)) return sink;
    reducesAfter += countReduces(*piece) * (hi - lo);
    std::vector<const UOp *> loops{*piece, r}; // the piece's loop, then the loops that were inside j
    loops.insert(loops.end(), end->src().begin() + ptrdiff_t(pos) + 1, end->src().end());
    pieces.push_back(ctx.get(Op::END, end->dtype(), loops, end->arg()));
    lo = hi;
  }
  if (reducesAfter >= reducesBefore) return sink;
  std::vector<const UOp *> outer{ctx.get(Op::GROUP, dtypes::Void, pieces)};
  outer.insert(outer.end(), end->src().begin() + 1, end->src().begin() + ptrdiff_t(pos));
  return ctx.get(Op::SINK, sink->dtype(), {ctx.get(Op::END, end->dtype(), outer, end->arg())}, sink->arg(), sink->tag());
}

} // namespace tgc::codegen
