//===- RangeifyApply.cpp - apply the range map to the graph ----------------===//
//
// Mirrors tinygrad's pm_apply_rangeify and pm_fix_deviceless
// (tinygrad/schedule/indexing.py, pipeline-schedule.md §3.6): a pre-order
// rewrite that INDEXes buffers with their consumers' ranges, turns REDUCE(op,
// n) into a REDUCE over RANGEs, PAD into a WHERE on its valids, data STACKs
// into WHERE selects, ENDs realized STOREs, wraps other realized nodes in
// STAGE(value, *closed ranges) read back through an INDEX, and drops the
// movement ops.
//
//===----------------------------------------------------------------------===//
#include "Schedule/RangeifyIndexing.h"
#include "Schedule/RangeifyMovement.h"

#include <algorithm>

namespace tgc::rangeify {

static bool contains(const std::vector<size_t> &v, size_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// broadcast_rngs for the srcs of a Broadcastable op (see RangeifyIndexing.cpp).
static std::vector<const UOp *> srcRngs(const UOp *x, const UOp *s, const std::vector<const UOp *> &rngs) {
  if (!x->isIn(group::Broadcastable)) return rngs;
  const IShape &ss = shapeOf(s), &xs = shapeOf(x);
  std::vector<size_t> baxes = broadcastAxes(ss, xs);
  size_t nleft = xs.size() - ss.size();
  std::vector<const UOp *> out;
  for (size_t j = nleft; j < rngs.size(); ++j)
    out.push_back(contains(baxes, j) ? rngs[j]->context().constInt(0) : rngs[j]);
  return out;
}

static bool isBufferSrc(const UOp *s) {
  return s->is(Op::PARAM) || s->is(Op::BUFFER) || s->is(Op::MSTACK) || s->is(Op::MSELECT) || s->is(Op::AFTER);
}

namespace {
// What tinygrad's create_bufferize_and_index_srcs does to each src of one node.
struct SrcIndexer {
  IndexingContext &ctx;
  const UOp *x;
  size_t dataCount;
  const std::vector<const UOp *> *ranges; // x's input ranges, or nullptr

  SrcIndexer(IndexingContext &c, const UOp *n) : ctx(c), x(n), dataCount(dataSrcs(n).size()), ranges(nullptr) {
    if (auto rm = ctx.rangeMap.find(n); rm != ctx.rangeMap.end()) ranges = &rm->second.first;
  }
  /// Src i as x reads it: a buffer INDEXed with x's ranges, a realized node
  /// STAGEd (and read back through an INDEX) or ENDed, or src i itself.
  const UOp *operator()(size_t i) {
    const UOp *s = x->src(i);
    // the ranges src i is read with (only a buffer or a realized src needs them)
    auto rangesOfSrc = [&] { return srcRngs(x, s, *ranges); };
    if (isBufferSrc(s)) return ranges && i < dataCount ? index(s, rangesOfSrc()) : s;
    auto rz = ctx.realizeMap.find(s);
    if (rz == ctx.realizeMap.end()) return s;
    if (!rz->second) fail(s, "realize map must contain range list");
    const std::vector<size_t> &realized = *rz->second;
    const std::vector<const UOp *> &sOut = ctx.rangeMap.at(s).second;
    std::vector<const UOp *> closed;
    for (size_t k = 0; k < sOut.size(); ++k)
      if (contains(realized, k)) closed.push_back(sOut[k]);
    if (s->is(Op::STORE)) {
      std::vector<const UOp *> rngs;
      for (const UOp *r : closed)
        if (r->is(Op::RANGE)) rngs.push_back(r);
      ctx.realizeMap.erase(rz);
      return end(s, rngs);
    }
    bool removable = !alwaysContiguous(s->op()) && !ctx.nonRemovable.count(s);
    AddrSpace as = sOut.size() == realized.size() ? AddrSpace::GLOBAL : AddrSpace::LOCAL;
    std::vector<const UOp *> src{s}, sr;
    if (ranges) sr = rangesOfSrc();
    src.insert(src.end(), closed.begin(), closed.end());
    const UOp *ns = s->context().get(Op::STAGE, s->dtype(), std::move(src), bufferizeOpts(s->device(), as, removable));
    if (!ranges) return ns;
    std::vector<const UOp *> idx;
    for (size_t k = 0; k < sr.size(); ++k)
      if (contains(realized, k)) idx.push_back(sr[k]);
    return index(ns, idx);
  }
};
} // namespace

// tinygrad's create_bufferize_and_index_srcs.
static std::vector<const UOp *> bufferizeAndIndexSrcs(IndexingContext &ctx, const UOp *x) {
  SrcIndexer srcAt(ctx, x);
  std::vector<const UOp *> out;
  for (size_t i = 0; i < x->numSrc(); ++i) out.push_back(srcAt(i));
  return out;
}

// Most nodes read neither a buffer nor a realized node: the src list is built
// only from the first src that changes (unchanged srcs would intern x again,
// which the matcher takes as a decline).
static const UOp *applyGeneric(IndexingContext &ctx, const UOp *x) {
  if (x->is(Op::STAGE) || x->is(Op::INDEX)) return nullptr;
  SrcIndexer srcAt(ctx, x);
  for (size_t i = 0; i < x->numSrc(); ++i) {
    const UOp *first = srcAt(i);
    if (first == x->src(i)) continue;
    std::vector<const UOp *> src(x->src().begin(), x->src().begin() + i);
    src.push_back(first);
    for (size_t j = i + 1; j < x->numSrc(); ++j) src.push_back(srcAt(j));
    return x->withSrc(std::move(src));
  }
  return nullptr;
}

static const PatternMatcher &applyRangeifyPM() {
  static const PatternMatcher pm({
      // REDUCE(op, n) -> REDUCE(op, 0) over the n new REDUCE ranges
      rule(UPat(Op::REDUCE).named("x"),
           [](Match &m) -> const UOp * {
             IndexingContext &ctx = m.ctx<IndexingContext>();
             const UOp *x = m["x"];
             if (!x->arg().isSequence() || x->arg().size() != 2 || !x->arg()[1].isInt())
               fail(x, "REDUCE arg must be (op, axes), got " + x->arg().toString());
             int64_t n = x->arg()[1].getInt();
             if (n == 0) return nullptr;
             auto rm = ctx.rangeMap.find(x);
             if (rm == ctx.rangeMap.end()) fail(x, "REDUCE has no ranges in rangeify");
             std::vector<const UOp *> src{bufferizeAndIndexSrcs(ctx, x)[0]};
             const std::vector<const UOp *> &in = rm->second.first;
             src.insert(src.end(), in.begin(), in.begin() + std::min<size_t>(size_t(n), in.size()));
             return x->context().get(Op::REDUCE, x->dtype(), std::move(src),
                                     Value::tuple({x->arg()[0], Value::integer(0)}));
           }),
      // PAD -> WHERE on the valids of its input ranges
      rule(UPat(Op::PAD).named("x"),
           [](Match &m) -> const UOp * {
             IndexingContext &ctx = m.ctx<IndexingContext>();
             const UOp *x = m["x"];
             auto rm = ctx.rangeMap.find(x);
             if (rm == ctx.rangeMap.end()) return nullptr;
             std::vector<const UOp *> srcs = bufferizeAndIndexSrcs(ctx, x);
             std::vector<const UOp *> valids;
             for (const UOp *r : rm->second.first) valids.push_back(getValid(r));
             UOpRef v = UOpRef(x->context().constBool(true)).uprod(valids);
             Value zero = x->dtype().isFloat() ? Value::floating(0.0)
                          : x->dtype().isBool() ? Value::boolean(false)
                                                : Value::integer(0);
             return v.where(srcs[0], makeConst(x->context(), zero));
           }),
      // data STACK -> WHERE select on the leading range
      rule(UPat(Op::STACK).named("x"),
           [](Match &m) -> const UOp * {
             IndexingContext &ctx = m.ctx<IndexingContext>();
             const UOp *x = m["x"];
             auto rm = ctx.rangeMap.find(x);
             if (rm == ctx.rangeMap.end() || x->dtype().isVoid() || rm->second.second.empty()) return nullptr;
             std::vector<const UOp *> srcs = bufferizeAndIndexSrcs(ctx, x);
             UOpRef r0 = rm->second.second[0];
             UOpRef ret = srcs.back();
             for (size_t k = srcs.size() - 1; k-- > 0;) ret = r0.eq(int64_t(k)).where(srcs[k], ret);
             return ret;
           }),
      // finally, index the buffers and stage the realized srcs
      rule(UPat().named("x"), [](Match &m) { return applyGeneric(m.ctx<IndexingContext>(), m["x"]); }),
      // movement ops are gone: their srcs are indexed now
      rule(UPat(group::Movement).named("x"),
           [](Match &m) -> const UOp * {
             IndexingContext &ctx = m.ctx<IndexingContext>();
             const UOp *x = m["x"];
             if (ctx.rangeMap.count(x) || x->src(0)->is(Op::INDEX)) return x->src(0);
             return nullptr;
           }),
  });
  return pm;
}

namespace {
struct SinkDevice {
  Value device;
};
} // namespace

// a deviceless value that must materialize goes on the sink's device
static const PatternMatcher &fixDevicelessPM() {
  static const PatternMatcher pm({
      rule(UPat(Op::STAGE).named("b"),
           [](Match &m) -> const UOp * {
             const UOp *b = m["b"];
             StageOpts o = stageOpts(b);
             if (o.addrspace != AddrSpace::GLOBAL || !o.device.isNone()) return nullptr;
             return b->withArg(bufferizeOpts(m.ctx<SinkDevice>().device, o.addrspace, o.removable));
           }),
  });
  return pm;
}

void prepareRangeify() {
  applyRangeifyPM();
  fixDevicelessPM();
  prepareMovementRules();
}

const UOp *runRangeify(const UOp *sink) {
  IndexingContext ctx;
  assignRanges(sink, ctx);
  const UOp *out = rewrite(sink, applyRangeifyPM(), ctx, preOrder());
  // a SINK's device is its first src's that has one: asking the srcs in turn
  // spares computing the properties of every output's subgraph here
  SinkDevice dev;
  if (!out->is(Op::SINK)) dev.device = out->device();
  else
    for (const UOp *s : out->src())
      if (!(dev.device = s->device()).isNone()) break;
  return rewrite(out, fixDevicelessPM(), dev);
}

} // namespace tgc::rangeify
