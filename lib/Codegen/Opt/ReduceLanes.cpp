//===- ReduceLanes.cpp - lane accumulators for short MAX reductions -------===//
//
// See ReduceLanes.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/ReduceLanes.h"
#include "Codegen/Opt/GateVersioning.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/ParallelLoop.h"

#include <unordered_map>

namespace tgc::codegen {

namespace {

// Past this trip count LLVM keeps the loop and its loop vectorizer already
// keeps vector partial maxima.
constexpr int64_t kMaxUnrolledTrip = 128;

bool isMaxReduce(const UOp *u) {
  const tgc::Value &a = u->arg();
  return u->is(Op::REDUCE) && u->numSrc() >= 2 && a.isTuple() && a.size() == 2 && a[0].isEnum("Ops") &&
         a[0].str() == "MAX" && a[1].isInt() && a[1].getInt() == 0 && u->dtype().isFloat();
}

} // namespace

int64_t maxLaneCount(DType dt) { return std::max<int64_t>(1, 32 / std::max<int64_t>(1, dt.itemsize())); }

const UOp *splitMaxLanes(const UOp *sink, const KernelOptions &opts) {
  if (!opts.maxLanes || opts.strictFP) return sink;
  Context &ctx = sink->context();
  int64_t axis = maxAxisId(sink);
  std::unordered_map<const UOp *, const UOp *> replaced;
  for (const UOp *u : toposort(sink)) {
    if (!isMaxReduce(u)) continue;
    const UOp *r = u->src(u->numSrc() - 1);
    std::optional<int64_t> trip = tripCount(r);
    int64_t lanes = maxLaneCount(u->dtype());
    if (!trip || *trip < lanes || *trip > kMaxUnrolledTrip || *trip % lanes || unitStrideAccesses(u->src(0), r) != true) continue;
    // r = ro * lanes + l: ro is a new REDUCE range of trip / lanes iterations.
    const UOp *ro = newRangeLike(r, *trip / lanes, ++axis);
    auto literal = [&](int64_t v) { return ctx.get(Op::CONST, r->dtype(), {}, tgc::Value::integer(v)); };
    const UOp *base = ctx.get(Op::MUL, r->dtype(), {ro, literal(lanes)});
    std::vector<const UOp *> partial;
    for (int64_t l = 0; l < lanes; ++l) {
      std::vector<const UOp *> src{substitute(u->src(0), {{r, ctx.get(Op::ADD, r->dtype(), {base, literal(l)})}})};
      src.insert(src.end(), u->src().begin() + 1, u->src().end() - 1);
      src.push_back(ro);
      partial.push_back(ctx.get(Op::REDUCE, u->dtype(), src, u->arg()));
    }
    // A balanced tree over the lanes: log2(lanes) dependent maxima.
    while (partial.size() > 1) {
      std::vector<const UOp *> next;
      for (size_t i = 0; i + 1 < partial.size(); i += 2) next.push_back(ctx.get(Op::MAX, u->dtype(), {partial[i], partial[i + 1]}));
      if (partial.size() % 2) next.push_back(partial.back());
      partial = std::move(next);
    }
    replaced[u] = partial[0];
  }
  return replaced.empty() ? sink : substitute(sink, replaced);
}

} // namespace tgc::codegen
