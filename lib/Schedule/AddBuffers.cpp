//===- AddBuffers.cpp - STAGE becomes a BUFFER and a STORE ------------------===//
//
// Mirrors tinygrad's pm_add_buffers + pm_add_param_range_tags
// (tinygrad/schedule/rangeify.py, pipeline-schedule.md §3.8), a pre-order
// rewrite: a multi-range STAGE is flattened to one index, then
// STAGE(value, idx) becomes
//   AFTER(buf, END(STORE(INDEX(buf, idx), value), *ranges))
// over a fresh GLOBAL BUFFER (slots after the largest existing one); a STAGE
// of an AFTER reuses that buffer. Every PARAM and RANGE is tagged () so the
// kernel split can renumber exactly these.
//
//===----------------------------------------------------------------------===//
#include "Schedule/RangeifyPasses.h"

#include "Schedule/Mops.h"
#include "Schedule/RangeifyMovement.h"

#include <algorithm>

namespace tgc::rangeify {

namespace {
struct SlotCounter {
  int64_t next = 0;
};
} // namespace

static std::vector<const UOp *> sortedRanges(std::vector<const UOp *> rs) {
  std::sort(rs.begin(), rs.end(), [](const UOp *a, const UOp *b) { return rangeAxisId(a) < rangeAxisId(b); });
  return rs;
}

// flatten_bufferize: collapse a STAGE's ranges into one flat index.
static const UOp *flattenBufferize(const UOp *x) {
  if (x->numSrc() == 2) return nullptr;
  const IShape &s = shapeOf(x);
  std::vector<const UOp *> rngs(x->src().begin() + 1, x->src().end());
  std::vector<const UOp *> flat = applyMovement(x->context(), Op::RESHAPE, {prod(s)}, s, rngs);
  if (flat.size() != 1) fail(x, "flattening a STAGE did not give one index");
  const UOp *ret = reshape(x->withSrc({x->src(0), flat[0]}), s);
  // a symbolic range leaves the stored region a symbolic part of the buffer
  if (std::none_of(rngs.begin(), rngs.end(), [](const UOp *r) { return r->is(Op::RANGE) && !r->src(0)->is(Op::CONST); }))
    return ret;
  std::vector<std::pair<Dim, Dim>> region;
  for (const UOp *r : rngs) region.emplace_back(0, r->is(Op::CONST) ? Dim(1) : dimOf(r->src(0)));
  return shrink(ret, region);
}

// bufferize_to_store: STAGE(value, idx) -> AFTER(buf, END(STORE(buf[idx], value), *ranges)).
static const UOp *bufferizeToStore(SlotCounter &ctr, const UOp *x, const UOp *idx) {
  Context &ctx = x->context();
  Dim sizeDim = prod(shapeOf(x));
  if (!sizeDim.isStatic()) fail(x, "no symbolic sized buffers (" + dimStr(sizeDim) + ")");
  int64_t size = sizeDim.value;
  DType dt = strongDType(x->dtype());
  RangeCache &rc = rangeCache();
  std::vector<const UOp *> rngs = sortedRanges(rc.ranges(idx));
  if (size <= 0) fail(x, "no zero sized buffers");

  if (const UOp *aft = x->src(0); aft->is(Op::AFTER)) {
    // an existing buffer version: END its stores over the STAGE's ranges, no new storage
    const UOp *buf = base(bufUop(aft->src(0)));
    std::vector<const UOp *> ended;
    bool any = false;
    for (size_t i = 1; i < aft->numSrc(); ++i) {
      const UOp *st = aft->src(i);
      if (!st->is(Op::STORE) || !st->src(0)->is(Op::INDEX)) continue;
      any = true;
      const UOp *target = st->src(0);
      if (target->src(0)->is(Op::STAGE) && target->src(0)->src(0)->is(Op::INDEX)) target = target->src(0)->src(0);
      if (st->src(1) == target) continue; // self-assign
      std::vector<const UOp *> er = rc.ranges(target);
      for (const UOp *r : rngs)
        if (std::find(er.begin(), er.end(), r) == er.end()) er.push_back(r);
      ended.push_back(end(store(target, st->src(1)), sortedRanges(er)));
    }
    if (!any) return buf;
    return after(buf, ended);
  }
  StageOpts o = stageOpts(x);
  if (o.addrspace != AddrSpace::GLOBAL) return nullptr; // LOCAL stages are left to codegen
  ParamFields f;
  f.slot = ctr.next++;
  f.dtype = dt;
  f.device = o.device;
  const UOp *buf = ctx.get(Op::BUFFER, dt, {shapeArg(ctx, {size})}, f.toValue());
  const UOp *doStore = end(store(index(buf, {idx}), cast(x->src(0), dt)), rngs);
  return cast(after(buf, {doStore}), x->dtype());
}

static bool isNoopAfterDep(const UOp *x) {
  return (x->is(Op::NOOP) && x->numSrc() == 0) || (x->is(Op::END) && isNoopAfterDep(x->src(0)));
}

static const PatternMatcher &addBuffersPM() {
  static const PatternMatcher pm = pmMops() + PatternMatcher({
      rule(UPat(Op::STAGE).named("x"), [](Match &m) { return flattenBufferize(m["x"]); }),
      rule(UPat(Op::STAGE).src({UPat(), var("idx")}).named("x"),
           [](Match &m) { return bufferizeToStore(m.ctx<SlotCounter>(), m["x"], m["idx"]); }),
      // INDEX of a buffer through the weak cast: index the buffer, cast the loaded value
      rule(UPat(Op::INDEX).src({UPat(Op::CAST).dtype({dtypes::WeakInt, dtypes::WeakFloat}).src({var("buf")})})
               .allowAnyLen().named("u"),
           [](Match &m) {
             const UOp *u = m["u"];
             std::vector<const UOp *> idx(u->src().begin() + 1, u->src().end());
             return cast(index(m["buf"], idx, u->arg()), u->dtype());
           }),
      // move RESHAPEs through MSELECT/MSTACK
      rule(UPat(OpSet{Op::MSELECT, Op::MSTACK}).srcAll(UPat(Op::RESHAPE)).named("m"),
           [](Match &m) {
             const UOp *x = m["m"];
             std::vector<const UOp *> s;
             for (const UOp *r : x->src()) s.push_back(base(r->src(0)));
             return reshape(rebuild(x, s), shapeOf(x));
           }),
      // no RESHAPEs on CALL args
      rule(UPat(Op::CALL).named("k"),
           [](Match &m) {
             const UOp *k = m["k"];
             std::vector<const UOp *> s;
             for (const UOp *x : k->src()) s.push_back(x->is(Op::RESHAPE) ? x->src(0) : x);
             return k->withSrc(s);
           }),
      // stores of Invalid are nothing
      rule(UPat(Op::STORE).src({UPat(), UPat(Op::CONTIGUOUS).src({UPat(Op::CONST).arg(Value::invalid())})}),
           [](Match &m) { return m.root()->context().get(Op::NOOP, dtypes::Void); }),
      rule(UPat(Op::STORE).src({UPat(), UPat(Op::CONST).arg(Value::invalid())}),
           [](Match &m) { return m.root()->context().get(Op::NOOP, dtypes::Void); }),
      rule(UPat(Op::AFTER).named("x"),
           [](Match &m) -> const UOp * {
             const UOp *x = m["x"];
             std::vector<const UOp *> s{x->src(0)};
             for (size_t i = 1; i < x->numSrc(); ++i)
               if (!isNoopAfterDep(x->src(i))) s.push_back(x->src(i));
             if (s.size() == x->numSrc()) return nullptr;
             return s.size() == 1 ? s[0] : x->withSrc(s);
           }),
      // pm_add_param_range_tags
      rule(UPat(OpSet{Op::PARAM, Op::RANGE}).named("x"), [](Match &m) { return m["x"]->withTag(Value::tuple({})); }),
  });
  return pm;
}

void prepareAddBuffers() { addBuffersPM(); }

const UOp *addBuffersPass(const UOp *sink) {
  SlotCounter ctr;
  int64_t maxSlot = -1;
  for (const UOp *x : toposort(sink)) {
    if (!x->is(Op::BUFFER)) continue;
    std::optional<ParamFields> f = ParamFields::from(x->arg());
    if (f && f->addrspace.isEnum("AddrSpace") && f->addrspace.str() == "GLOBAL") maxSlot = std::max(maxSlot, f->slot);
  }
  ctr.next = maxSlot + 1;
  return rewrite(sink, addBuffersPM(), ctr, preOrder());
}

} // namespace tgc::rangeify
