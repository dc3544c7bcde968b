//===- KernelSplit.cpp - every closed STORE becomes a kernel CALL -----------===//
//
// Mirrors tinygrad's split_kernels / split_store and pm_no_indexing_calls
// (tinygrad/schedule/rangeify.py, pipeline-schedule.md §3.9), with the
// reference revision's to_define_global: an AFTER met inside a kernel body
// becomes its own PARAM with the AFTER as the call argument. The outermost
// closed STORE/END is split first (pre-order); its body is rewritten with
// to_define_global + pm_flatten_range + rangeify_codegen, which numbers the
// kernel's PARAMs and RANGEs from 0 in visiting order, so structurally equal
// kernels intern to the same SINK.
//
//===----------------------------------------------------------------------===//
#include "Schedule/RangeifyPasses.h"

#include <algorithm>
#include <unordered_map>

namespace tgc::rangeify {

namespace {
struct LocalAddBufferContext {
  int64_t dg = 0;
  std::vector<const UOp *> args; ///< tinygrad's ctx.map values, in insertion order
  std::unordered_map<const UOp *, bool> inMap;
  int64_t range = 0;
  Value opts;
};

/// What debuf's PARAM view depends on: the kernel slot and the buffer's
/// dtype, address space, device and shape.
struct ParamViewKey {
  int64_t slot;
  DType dtype;
  std::optional<AddrSpace> addrspace;
  Value device;
  IShape shape;
  bool operator==(const ParamViewKey &) const = default;
};
struct ParamViewKeyHash {
  size_t operator()(const ParamViewKey &k) const {
    size_t h = std::hash<int64_t>()(k.slot) ^ (k.dtype.hash() * 31) ^ (k.device.hash() * 131) ^
               (k.addrspace ? size_t(*k.addrspace) + 1 : 0) * 1031;
    for (const Dim &d : k.shape) h = h * 1000003 ^ (std::hash<int64_t>()(d.value) + std::hash<const UOp *>()(d.sym));
    return h;
  }
};
/// Per Context: the RESHAPE(PARAM) views made so far. The 666 kernels of a
/// training graph ask for a few dozen distinct ones, and building the
/// ParamArg Value and interning it is most of debuf's cost.
struct ParamViews {
  std::unordered_map<ParamViewKey, const UOp *, ParamViewKeyHash> views;
};
} // namespace

// debuf: a buffer (or buffer version) used in the kernel becomes PARAM(dg++).
static const UOp *debuf(LocalAddBufferContext &ctx, const UOp *buf) {
  if (isVariable(buf)) return buf->context().get(Op::PARAM, buf->dtype(), {buf->src().begin(), buf->src().end()}, buf->arg());
  Context &c = buf->context();
  ParamViewKey key{ctx.dg, buf->dtype(), buf->addrspace(), buf->device(), shapeOf(buf)};
  const UOp *&ret = c.analysis<ParamViews>().views[key];
  if (!ret) {
    ParamFields f;
    f.slot = key.slot;
    f.dtype = key.dtype;
    f.addrspace = key.addrspace ? addrSpaceValue(*key.addrspace) : Value();
    f.device = key.device;
    // storage for the Variables' maxima, shrunk to the symbolic shape (tinygrad's max_shape)
    const UOp *p = c.get(Op::PARAM, key.dtype, {c.constInt(maxNumel(key.shape))}, f.toValue());
    ret = shrinkTo(reshape(p, maxShape(key.shape)), key.shape);
  }
  if (!ctx.inMap.count(buf)) {
    ctx.inMap[buf] = true;
    ctx.args.push_back(buf);
  }
  ctx.dg += 1;
  return ret;
}

static bool isAluParam(const UOp *v) {
  std::optional<AddrSpace> as = v->addrspace();
  return as && *as == AddrSpace::ALU;
}

static const PatternMatcher &kernelBodyPM() {
  static const PatternMatcher pm({
      // to_define_global
      rule(UPat(OpSet{Op::BUFFER, Op::MSTACK, Op::MSELECT}).named("buf"),
           [](Match &m) { return debuf(m.ctx<LocalAddBufferContext>(), m["buf"]); }),
      rule(UPat(Op::PARAM).named("v"),
           [](Match &m) -> const UOp * {
             // most PARAMs have no name: look at that field before decoding the rest
             const Value *name = m["v"]->arg().field("name");
             if (!name || name->isNone()) return nullptr;
             std::optional<ParamFields> f = ParamFields::from(m["v"]->arg());
             if (!f || f->name.isNone() || f->vminVmax.isNone() || f->slot == -1) return nullptr;
             f->slot = -1;
             return m["v"]->withArg(f->toValue());
           }),
      // renumber the outer (tagged) params
      rule(UPat(Op::PARAM).named("buf"),
           [](Match &m) -> const UOp * {
             const UOp *b = m["buf"];
             if (!(b->tag().isTuple() && b->tag().size() == 0) || !b->shape()) return nullptr;
             std::optional<ParamFields> f = ParamFields::from(b->arg());
             if (!f || !f->name.isNone()) return nullptr;
             return debuf(m.ctx<LocalAddBufferContext>(), b);
           }),
      // ALU params are scalar symbolic values, not buffers
      rule(UPat(Op::INDEX).src({UPat(Op::PARAM).named("v")}),
           [](Match &m) -> const UOp * { return isAluParam(m["v"]) ? m["v"].get() : nullptr; }),
      // bound Variables: strip the store, the buffer becomes an ALU param
      rule(UPat(Op::AFTER).named("b"), [](Match &m) -> const UOp * { return isBoundVar(m["b"]) ? m["b"]->src(0) : nullptr; }),
      // reference revision: a buffer version read in a kernel is its own PARAM, the AFTER its argument
      rule(UPat(Op::AFTER).named("after"),
           [](Match &m) -> const UOp * {
             const UOp *a = m["after"];
             std::optional<AddrSpace> as = a->addrspace();
             if (as && *as == AddrSpace::LOCAL) return nullptr;
             return debuf(m.ctx<LocalAddBufferContext>(), a);
           }),
      // STAGEs left in a kernel are local
      rule(UPat(Op::STAGE).named("b"),
           [](Match &m) {
             StageOpts o = stageOpts(m["b"]);
             return m["b"]->withArg(bufferizeOpts(Value(), o.addrspace, o.removable));
           }),
      // renumber the ranges from 0 so that equal kernels dedup
      rule(UPat(Op::RANGE).named("r"),
           [](Match &m) -> const UOp * {
             const UOp *r = m["r"];
             if (!(r->tag().isTuple() && r->tag().size() == 0)) return nullptr;
             LocalAddBufferContext &ctx = m.ctx<LocalAddBufferContext>();
             std::vector<Value> arg{Value::integer(ctx.range++)};
             for (size_t i = 1; i < r->arg().size(); ++i) arg.push_back(r->arg()[i]);
             return r->context().get(Op::RANGE, r->dtype(), {r->src().begin(), r->src().end()}, Value::tuple(arg));
           }),
      // pm_flatten_range: REDUCE/END close exactly the real ranges of their range srcs
      rule(UPat(OpSet{Op::REDUCE, Op::END}).named("r"),
           [](Match &m) -> const UOp * {
             const UOp *r = m["r"];
             if (r->numSrc() < 2) return nullptr;
             std::vector<const UOp *> rngs(r->src().begin() + 1, r->src().end()), backedge, real;
             for (const UOp *x : rngs)
               if (x->dtype().isVoid() || x->dtype().isBool()) backedge.push_back(x);
             std::vector<const UOp *> keep;
             for (const UOp *x : rngs)
               if (std::find(backedge.begin(), backedge.end(), x) == backedge.end()) keep.push_back(x);
             RangeCache &rc = rangeCache();
             std::vector<const UOp *> src{r->src(0)};
             for (const UOp *x : rc.rangesOf(keep)) src.push_back(x);
             src.insert(src.end(), backedge.begin(), backedge.end());
             // the same srcs would intern r again (a decline)
             if (std::equal(src.begin(), src.end(), r->src().begin(), r->src().end())) return nullptr;
             return r->withSrc(src);
           }),
      // rangeify_codegen
      rule(UPat(Op::CONTIGUOUS).named("x"),
           [](Match &m) {
             const UOp *x = m["x"];
             if (x->arg().isSequence() && x->arg().size()) m.ctx<LocalAddBufferContext>().opts = x->arg();
             return x->src(0);
           }),
      rule(UPat(Op::NOOP).named("x"), [](Match &m) -> const UOp * { return m["x"]->numSrc() ? m["x"]->src(0) : nullptr; }),
  });
  return pm;
}

static const UOp *splitStore(const UOp *x) {
  RangeCache &rc = rangeCache();
  for (const UOp *r : rc.ranges(x))
    if (rangeAxisType(r) != "DEVICE") return nullptr; // open ranges: not closed yet
  const UOp *st = x->is(Op::END) ? x->src(0) : x;
  if (st->is(Op::STORE) && isVariable(st->src(0))) return nullptr; // a bound Variable is an input, not a kernel
  LocalAddBufferContext lctx;
  const UOp *body = rewrite(x, kernelBodyPM(), lctx, preOrder());
  const UOp *k = sink(x->context(), {body}, kernelInfo(lctx.opts));
  return call(k, lctx.args);
}

static const UOp *stripZeroOffsetShrink(const UOp *x) {
  if (!x->is(Op::SHRINK)) return x;
  for (const auto &[o, s] : mopPairs(x))
    if (o != 0) return x;
  return x->src(0);
}

static const PatternMatcher &splitPM() {
  static const PatternMatcher pm({
      rule(UPat(OpSet{Op::STORE, Op::END}).named("x"), [](Match &m) { return splitStore(m["x"]); }),
  });
  return pm;
}

static const PatternMatcher &noIndexingCallsPM() {
  static const PatternMatcher pm({
      rule(UPat(Op::CALL).named("u"),
           [](Match &m) {
             const UOp *u = m["u"];
             std::vector<const UOp *> s;
             for (const UOp *x : u->src()) {
               if (x->is(Op::INDEX)) s.push_back(x->src(0));
               else if (x->is(Op::SHRINK)) s.push_back(stripZeroOffsetShrink(x));
               else if (x->is(Op::MSTACK)) {
                 std::vector<const UOp *> ms;
                 for (const UOp *y : x->src()) ms.push_back(stripZeroOffsetShrink(y));
                 s.push_back(x->withSrc(ms));
               } else s.push_back(x);
             }
             return u->withSrc(s);
           }),
  });
  return pm;
}

void prepareSplitKernels() {
  kernelBodyPM();
  splitPM();
  noIndexingCallsPM();
}

const UOp *splitKernelsPass(const UOp *sink) {
  const UOp *out = rewrite(sink, splitPM(), preOrder());
  return rewrite(out, noIndexingCallsPM());
}

const UOp *kernelGraph(const UOp *sink) {
  const UOp *t = earliestRewritesPass(sink);
  t = copyToStorePass(t);
  t = runRangeify(t);
  t = cleanupPass(t);
  t = limitBufsPass(t);
  t = addBuffersPass(t);
  return splitKernelsPass(t);
}

} // namespace tgc::rangeify
