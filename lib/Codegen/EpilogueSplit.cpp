//===- EpilogueSplit.cpp - a reduction's costly epilogue in a loop of its own ===//
//
// See EpilogueSplit.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/EpilogueSplit.h"
#include "Codegen/MatmulTiling.h"
#include "Codegen/ParallelLoop.h"

#include <unordered_map>
#include <unordered_set>

namespace tgc::codegen {

const UOp *splitEpilogue(const UOp *sink, const KernelOptions &opts) {
  if (!opts.splitEpilogue || !isPlainLoopNest(sink)) return sink;
  const UOp *end = sink->src(0), *store = end->src(0);
  if (end->numSrc() < 3 || store->numSrc() != 2) return sink;
  const UOp *inner = end->src(end->numSrc() - 1); // the innermost output loop
  std::optional<int64_t> trip = tripCount(inner);
  if (!trip || *trip < 2 || *trip > kMaxEpilogueRow) return sink;

  // The reductions of the stored value (not those inside another one's
  // summand), and the nodes that only the epilogue evaluates.
  std::vector<const UOp *> reductions;
  std::unordered_set<const UOp *> inReduction;
  std::vector<const UOp *> value = toposort(store->src(1));
  for (auto it = value.rbegin(); it != value.rend(); ++it) {
    const UOp *u = *it;
    if (!u->is(Op::REDUCE) || inReduction.count(u)) continue;
    reductions.push_back(u);
    for (const UOp *n : toposort(u)) inReduction.insert(n);
  }
  if (reductions.empty()) return sink;
  bool costlyEpilogue = false;
  for (const UOp *u : value) costlyEpilogue |= !inReduction.count(u) && isTranscendental(u);
  if (!costlyEpilogue) return sink;

  // A reduction that does not move with the inner loop stays (LLVM moves it out
  // of the loop); the others must read nothing the kernel writes (the row is
  // filled before any of the loop's stores).
  std::vector<const UOp *> nodes = toposort(sink);
  std::unordered_set<const UOp *> stored = storedBuffers(nodes);
  std::erase_if(reductions, [&](const UOp *r) { return !dependsOn(r->src(0), inner); });
  if (reductions.empty()) return sink;
  for (const UOp *r : reductions) {
    for (const UOp *n : toposort(r))
      if (n->is(Op::INDEX) && stored.count(n->src(0))) return sink;
    if (!globalBufferOf(nodes, r->dtype())) return sink; // a row copies the ParamArg of a buffer of its dtype
  }

  // END(GROUP(END(STORE(row[j'], R[j -> j']), j'), END(STORE(out, E(row[j])), j)), outer loops)
  Context &ctx = sink->context();
  int64_t axis = maxAxisId(sink);
  const UOp *fresh = newRangeLike(inner, *trip, ++axis);
  std::vector<const UOp *> effects;
  std::unordered_map<const UOp *, const UOp *> fromRow;
  for (const UOp *r : reductions) {
    const UOp *row = localBuffer(globalBufferOf(nodes, r->dtype()), *trip, int64_t(effects.size()) + 1);
    const UOp *fill = ctx.get(Op::STORE, dtypes::Void,
                              {ctx.get(Op::INDEX, r->dtype(), {row, fresh}), substitute(r, {{inner, fresh}})});
    effects.push_back(ctx.get(Op::END, end->dtype(), {fill, fresh}, end->arg()));
    fromRow[r] = ctx.get(Op::INDEX, r->dtype(), {row, inner});
  }
  const UOp *epilogue = ctx.get(Op::STORE, store->dtype(), {store->src(0), substitute(store->src(1), fromRow)},
                                store->arg(), store->tag());
  effects.push_back(ctx.get(Op::END, end->dtype(), {epilogue, inner}, end->arg()));
  std::vector<const UOp *> outer{ctx.get(Op::GROUP, dtypes::Void, effects)};
  outer.insert(outer.end(), end->src().begin() + 1, end->src().end() - 1);
  return ctx.get(Op::SINK, sink->dtype(), {ctx.get(Op::END, end->dtype(), outer, end->arg())}, sink->arg(), sink->tag());
}

} // namespace tgc::codegen
