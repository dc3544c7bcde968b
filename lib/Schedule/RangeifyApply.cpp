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

// Whether bufferizeAndIndexSrcs changes any src of x: most nodes read
// neither a buffer nor a realized node, and are kept without building a list.
static bool readsBufferOrRealized(IndexingContext &ctx, const UOp *x) {
  size_t dataCount = dataSrcs(x).size();
  bool hasRanges = ctx.rangeMap.count(x) != 0;
  for (size_t i = 0; i < x->numSrc(); ++i) {
    const UOp *s = x->src(i);
    if (isBufferSrc(s) ? hasRanges && i < dataCount : ctx.realizeMap.count(s) != 0) return true;
  }
  return false;
}

// tinygrad's create_bufferize_and_index_srcs.
static std::vector<const UOp *> bufferizeAndIndexSrcs(IndexingContext &ctx, const UOp *x) {
  std::vector<const UOp *> out;
  size_t dataCount = dataSrcs(x).size();
  auto rm = ctx.rangeMap.find(x);
  bool hasRanges = rm != ctx.rangeMap.end();
  for (size_t i = 0; i < x->numSrc(); ++i) {
    const UOp *s = x->src(i), *ns = s;
    // the ranges src i is read with (only a buffer or a realized src needs them)
    auto rangesOfSrc = [&] { return srcRngs(x, s, rm->second.first); };
    if (isBufferSrc(s)) {
      if (hasRanges && i < dataCount) ns = index(s, rangesOfSrc());
    } else if (auto rz = ctx.realizeMap.find(s); rz != ctx.realizeMap.end()) {
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
        ns = end(s, rngs);
        ctx.realizeMap.erase(rz);
      } else {
        bool removable = !alwaysContiguous(s->op()) && !ctx.nonRemovable.count(s);
        AddrSpace as = sOut.size() == realized.size() ? AddrSpace::GLOBAL : AddrSpace::LOCAL;
        std::vector<const UOp *> src{ns}, sr;
        if (hasRanges) sr = rangesOfSrc();
        src.insert(src.end(), closed.begin(), closed.end());
        ns = s->context().get(Op::STAGE, s->dtype(), std::move(src), bufferizeOpts(s->device(), as, removable));
        if (hasRanges) {
          std::vector<const UOp *> idx;
          for (size_t k = 0; k < sr.size(); ++k)
            if (contains(realized, k)) idx.push_back(sr[k]);
          ns = index(ns, idx);
        }
      }
    }
    out.push_back(ns);
  }
  return out;
}

static const UOp *applyGeneric(IndexingContext &ctx, const UOp *x) {
  if (x->is(Op::STAGE) || x->is(Op::INDEX) || !readsBufferOrRealized(ctx, x)) return nullptr;
  std::vector<const UOp *> src = bufferizeAndIndexSrcs(ctx, x);
  // unchanged srcs would intern x again, which the matcher takes as a decline
  if (std::equal(src.begin(), src.end(), x->src().begin(), x->src().end())) return nullptr;
  return x->withSrc(std::move(src));
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

const UOp *runRangeify(const UOp *sink) {
  IndexingContext ctx;
  assignRanges(sink, ctx);
  const UOp *out = rewrite(sink, applyRangeifyPM(), ctx, preOrder());
  // a deviceless value that must materialize goes on the sink's device
  static const PatternMatcher fixDeviceless({
      rule(UPat(Op::STAGE).named("b"),
           [](Match &m) -> const UOp * {
             const UOp *b = m["b"];
             StageOpts o = stageOpts(b);
             if (o.addrspace != AddrSpace::GLOBAL || !o.device.isNone()) return nullptr;
             return b->withArg(bufferizeOpts(m.ctx<SinkDevice>().device, o.addrspace, o.removable));
           }),
  });
  // a SINK's device is its first src's that has one: asking the srcs in turn
  // spares computing the properties of every output's subgraph here
  SinkDevice dev;
  if (!out->is(Op::SINK)) dev.device = out->device();
  else
    for (const UOp *s : out->src())
      if (!(dev.device = s->device()).isNone()) break;
  return rewrite(out, fixDeviceless, dev);
}

} // namespace tgc::rangeify
