//===- EpilogueSplit.cpp - a reduction's costly epilogue in a loop of its own ===//
//
// See EpilogueSplit.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/EpilogueSplit.h"
#include "Codegen/Opt/HoistInvariant.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/ParallelLoop.h"
#include "Codegen/Opt/RowPack.h"

#include <unordered_map>
#include <unordered_set>

namespace tgc::codegen {

namespace {

// The reductions of `store`'s value that move with the output loop `inner`
// (not those inside another one's summand), when the value has a
// transcendental outside its reductions and they read nothing the kernel
// (`nodes`, its toposort) writes (their results are stored before any of the
// kernel's stores); otherwise none.
std::vector<const UOp *> epilogueReductions(std::span<const UOp *const> nodes, const UOp *store, const UOp *inner) {
  std::vector<const UOp *> reductions;
  std::unordered_set<const UOp *> inReduction;
  std::vector<const UOp *> value = toposort(store->src(1));
  for (auto it = value.rbegin(); it != value.rend(); ++it) {
    const UOp *u = *it;
    if (!u->is(Op::REDUCE) || inReduction.count(u)) continue;
    reductions.push_back(u);
    for (const UOp *n : toposort(u)) inReduction.insert(n);
  }
  bool costlyEpilogue = false;
  for (const UOp *u : value) costlyEpilogue |= !inReduction.count(u) && isTranscendental(u);
  if (!costlyEpilogue) return {};
  // A reduction that does not move with the inner loop stays (LLVM moves it out of the loop).
  std::erase_if(reductions, [&](const UOp *r) { return !dependsOn(r->src(0), inner); });
  std::unordered_set<const UOp *> stored = storedBuffers(nodes);
  for (const UOp *r : reductions) {
    for (const UOp *n : toposort(r))
      if (n->is(Op::INDEX) && stored.count(n->src(0))) return {};
    if (!globalBufferOf(nodes, r->dtype())) return {}; // a row copies the ParamArg of a buffer of its dtype
  }
  return reductions;
}

} // namespace

const UOp *splitEpilogue(const UOp *sink, const KernelOptions &opts) {
  if (!opts.splitEpilogue || !isPlainLoopNest(sink)) return sink;
  const UOp *end = sink->src(0), *store = end->src(0);
  if (end->numSrc() < 3 || store->numSrc() != 2) return sink;
  const UOp *inner = end->src(end->numSrc() - 1); // the innermost output loop
  std::optional<int64_t> trip = tripCount(inner);
  if (!trip || *trip < 2 || *trip > kMaxEpilogueRow) return sink;
  std::vector<const UOp *> nodes = toposort(sink);
  std::vector<const UOp *> reductions = epilogueReductions(nodes, store, inner);
  if (reductions.empty()) return sink;

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

const UOp *splitTileEpilogue(const UOp *sink, const KernelOptions &opts, MatmulTile want, MatmulTile *chosen) {
  if (!opts.splitEpilogue || !isPlainLoopNest(sink)) return nullptr;
  const UOp *end = sink->src(0), *store = end->src(0);
  if (store->numSrc() != 2) return nullptr;
  std::span<const UOp *const> loops = end->src().subspan(1);
  std::vector<const UOp *> nodes = toposort(sink);
  std::vector<const UOp *> reductions = epilogueReductions(nodes, store, loops.back());
  if (reductions.size() != 1) return nullptr;
  const UOp *r = reductions[0];

  // out[...] = E(R) becomes out'[dense] = R, tiled, then out[...] = E(out'[dense]),
  // out' a kernel-local buffer indexed row-major by the output loops.
  Context &ctx = sink->context();
  int64_t elements = 1;
  for (const UOp *loop : loops) {
    std::optional<int64_t> trip = tripCount(loop);
    if (!trip) return nullptr;
    elements *= *trip;
  }
  if (elements > kMaxEpilogueTile) return nullptr;
  const UOp *results = localBuffer(globalBufferOf(nodes, r->dtype()), elements, 1);
  const UOp *at = ctx.get(Op::INDEX, r->dtype(), {results, rowMajorIndex(loops)});
  std::vector<const UOp *> fillSrc{ctx.get(Op::STORE, dtypes::Void, {at, r})};
  fillSrc.insert(fillSrc.end(), loops.begin(), loops.end());
  const UOp *fill = ctx.get(Op::SINK, sink->dtype(), {ctx.get(Op::END, end->dtype(), fillSrc, end->arg())}, sink->arg(), sink->tag());
  MatmulTile tile;
  const UOp *tiled = tileMatmul(fill, opts, want, &tile);
  if (!tile.alongReduction) return nullptr;

  std::vector<const UOp *> epilogueSrc{ctx.get(Op::STORE, store->dtype(), {store->src(0), substitute(store->src(1), {{r, at}})},
                                               store->arg(), store->tag())};
  epilogueSrc.insert(epilogueSrc.end(), loops.begin(), loops.end());
  const UOp *epilogue = ctx.get(Op::END, end->dtype(), epilogueSrc, end->arg());
  if (chosen) *chosen = tile;
  return ctx.get(Op::SINK, sink->dtype(), {ctx.get(Op::GROUP, dtypes::Void, {tiled->src(0), epilogue})}, sink->arg(), sink->tag());
}

const UOp *tileKernel(const UOp *sink, const KernelOptions &opts, MatmulTile *chosen) {
  MatmulTile tile, want;
  if (transcendentalInReduce(sink)) want.rows = 4, want.columns = 64;
  const UOp *tiled = tileMatmul(sink, opts, want, &tile);
  if (tile.alongReduction && !(opts.threads && threadsWork(tiled, tile) >= opts.threadMinWork))
    if (const UOp *split = splitTileEpilogue(sink, opts, want, &tile)) tiled = split;
  if (tile.columns > 0) tiled = packTileRows(hoistTileTerms(tiled, opts), opts, tile);
  if (chosen) *chosen = tile;
  return tiled;
}

} // namespace tgc::codegen
