//===- RangeifyEarly.cpp - cleanups before rangeify -------------------------===//
//
// Mirrors tinygrad's `pm_mops + earliest_rewrites` and `pm_copy_to_store`
// (tinygrad/schedule/rangeify.py, pipeline-schedule.md §3.3 passes 2 and 3):
// inline FUNCTIONs, split very large reductions, drop DETACH, COPY and STORE
// cleanups (store hazards, double stores, reshapes on both sides), fold
// zero-size tensors; then turn every COPY into a STORE into a fresh (or the
// assigned) buffer. Both are pre-order rewrites.
//
//===----------------------------------------------------------------------===//
#include "Schedule/RangeifyPasses.h"

#include "IR/UOpBuilder.h"

#include "Schedule/Mops.h"
#include "Schedule/RangeifyMovement.h"
#include "Schedule/StoreHazard.h"

#include <algorithm>
#include <limits>

namespace tgc::rangeify {

// tinygrad's _rop: reduce `axis` (after moving the reduced axes to the front).
static const UOp *rop(const UOp *x, const Value &op, std::vector<int64_t> axis) {
  const IShape &s = shapeOf(x);
  std::sort(axis.begin(), axis.end());
  std::vector<int64_t> red;
  for (int64_t a : axis)
    if (s.at(size_t(a)) != 1) red.push_back(a);
  IShape keep;
  for (size_t i = 0; i < s.size(); ++i)
    if (std::find(axis.begin(), axis.end(), int64_t(i)) == axis.end()) keep.push_back(s[i]);
  if (red.empty()) return reshape(x, keep);
  std::vector<int64_t> perm = red;
  for (size_t i = 0; i < s.size(); ++i)
    if (std::find(red.begin(), red.end(), int64_t(i)) == red.end()) perm.push_back(int64_t(i));
  const UOp *p = permute(x, perm);
  const UOp *ret =
      x->context().get(Op::REDUCE, x->dtype(), {p}, Value::tuple({op, Value::integer(int64_t(red.size()))}));
  return axis != red ? reshape(ret, keep) : ret;
}

// split_reduceop: a reduce whose input is >= 32768x its output becomes two
// reduces with a contiguous between them, so the first one has enough outputs.
static const UOp *splitReduceop(const UOp *reduce, const UOp *x) {
  if (!reduce->staticShape() || !x->staticShape()) return nullptr; // symbolic reduces are not split
  const StaticShape &rs = *reduce->staticShape(), &xs = *x->staticShape();
  int64_t rn = 1, xn = 1;
  for (int64_t d : rs) rn *= d;
  for (int64_t d : xs) xn *= d;
  if (rn == 0 || xn / rn < 32768) return nullptr;
  // which axes of x are expanded (do not reach a range of the base)
  Context &ctx = x->context();
  std::vector<const UOp *> rngs;
  for (size_t i = 0; i < xs.size(); ++i) rngs.push_back(xs[i] > 1 ? range(ctx, xs[i], int64_t(i)) : ctx.constInt(0));
  const UOp *cur = x;
  while (cur->isIn(group::Movement)) {
    rngs = applyMovementOp(cur, rngs);
    cur = cur->src(0);
  }
  RangeCache &rc = rangeCache();
  std::vector<int64_t> live;
  for (const UOp *r : rc.rangesOf(rngs)) live.push_back(rangeAxisId(r));
  int64_t nred = reduce->arg()[1].getInt();
  int64_t maxD = std::min<int64_t>(256, (int64_t(1) << 22) / rn);
  for (int64_t i = 0; i < nred; ++i) {
    if (std::find(live.begin(), live.end(), i) == live.end()) continue;
    for (int64_t d = maxD; d > 7; --d) {
      if (xs[size_t(i)] % d != 0) continue;
      IShape split(xs.begin(), xs.begin() + i);
      split.push_back(d);
      split.push_back(xs[size_t(i)] / d);
      split.insert(split.end(), xs.begin() + i + 1, xs.end());
      std::vector<int64_t> perm;
      for (int64_t k = 0; k < int64_t(split.size()); ++k)
        if (k != i) perm.push_back(k);
      perm.push_back(i);
      const UOp *splitted = permute(reshape(x, split), perm);
      std::vector<int64_t> first;
      for (int64_t k = 0; k < nred; ++k) first.push_back(k);
      const UOp *inner = contiguous(rop(splitted, reduce->arg()[0], first));
      return reshape(rop(inner, reduce->arg()[0], {int64_t(rs.size())}), shapeOf(reduce));
    }
  }
  return nullptr;
}

// resolve_function: inline a FUNCTION by substituting its PARAMs with the args.
static const UOp *resolveFunction(const UOp *c) {
  const Value *pre = c->arg().field("precompile");
  if (pre && pre->isBool() && pre->getBool()) return nullptr;
  std::unordered_map<const UOp *, const UOp *> map;
  ToposortOptions o;
  o.enterCalls = false;
  for (const UOp *p : toposort(c->src(0), o)) {
    if (!p->is(Op::PARAM)) continue;
    ParamFields f = paramFields(p);
    if (f.slot < 0) continue;
    if (size_t(f.slot) + 1 >= c->numSrc()) fail(c, "FUNCTION has no argument for PARAM slot " + std::to_string(f.slot));
    const UOp *a = c->src(size_t(f.slot) + 1);
    if (p->dtype() != a->dtype())
      fail(c, "arg " + std::to_string(f.slot) + " dtype mismatch: expected " + std::string(p->dtype().name()) +
                  ", got " + std::string(a->dtype().name()));
    if (!sameShape(p, a)) fail(c, "arg " + std::to_string(f.slot) + " shape mismatch");
    map[p] = a;
  }
  return substitute(c->src(0), map);
}

// fix_store_hazard: the assigned value reads its destination through a
// reordering view, so it must be computed into a temporary first.
// earliestRewritesPass answers the question from a StoreHazardIndex.
static const UOp *fixStoreHazard(Match &m) {
  const UOp *target = m["target"], *src = m["src"];
  bool hazard = m.hasCtx() ? m.ctx<StoreHazardIndex>().hazard(target, src) : storeHazardWalk(target, src);
  return hazard ? store(target, contiguous(src)) : nullptr;
}

static const UOp *identityElement(const UOp *reduce) {
  DType dt = reduce->dtype();
  std::string op = reduce->arg()[0].str();
  Value v;
  if (op == "ADD") v = dt.isFloat() ? Value::floating(0.0) : dt.isBool() ? Value::boolean(false) : Value::integer(0);
  else if (op == "MUL") v = dt.isFloat() ? Value::floating(1.0) : dt.isBool() ? Value::boolean(true) : Value::integer(1);
  else if (dt.isFloat()) v = Value::floating(-std::numeric_limits<double>::infinity());
  else if (dt.isBool()) v = Value::boolean(false);
  else v = Value::integer(dt.isUnsigned() ? 0 : dt.minInt());
  return constLike(reduce, v);
}

// expand_bitcast: a BITCAST that changes the element size becomes integer
// arithmetic on the unsigned ints of the two sizes (little-endian): wider
// elements are the narrow ones of the last axis, cast up, shifted and added;
// narrower ones are the wide element shifted right, stacked on a new last axis
// and cast down. Only a same-size BITCAST is left for codegen.
static const UOp *expandBitcast(const UOp *bc) {
  const UOp *x = bc->src(0);
  int64_t ns = bc->dtype().itemsize(), os = x->dtype().itemsize();
  if (ns == os || deviceStartsWith(x, {"DISK", "TINYFS"})) return nullptr;
  auto uintOf = [&](int64_t bytes) {
    DType dt = dtypes::fromName("uint" + std::to_string(8 * bytes));
    if (!dt) fail(bc, "a BITCAST between " + std::string(x->dtype().name()) + " and " + std::string(bc->dtype().name()) +
                          " has no unsigned integer of " + std::to_string(bytes) + " bytes");
    return dt;
  };
  DType newUint = uintOf(ns);
  UOpRef tmp = UOpRef(x).bitcast(uintOf(os));
  const StaticShape &xs = staticShapeOf(x);
  if (xs.empty()) fail(bc, "a BITCAST that changes the element size needs an axis to rescale");
  IShape lead(xs.begin(), xs.end() - 1);
  if (ns > os) {
    int64_t rate = ns / os;
    IShape split = lead;
    split.push_back(xs.back() / rate);
    split.push_back(rate);
    tmp = reshape(tmp, split);
    std::vector<const UOp *> parts;
    for (int64_t i = 0; i < rate; ++i) {
      std::vector<std::pair<Dim, Dim>> se;
      for (size_t d = 0; d + 1 < split.size(); ++d) se.emplace_back(0, split[d]);
      se.emplace_back(i, i + 1);
      parts.push_back(UOpRef(shrink(tmp, se)).cast(newUint) << 8 * i * os);
    }
    UOpRef sum = UOpRef(parts[0]).usum({parts.begin() + 1, parts.end()});
    return UOpRef(reshape(sum, IShape(split.begin(), split.end() - 1))).bitcast(bc->dtype()); // squeeze(-1)
  }
  std::vector<const UOp *> parts;
  for (int64_t i = 0; i < os / ns; ++i) parts.push_back(tmp >> 8 * i * ns);
  // stack(dim=-1): a STACK on a new leading axis, moved last; then flatten(-2)
  const UOp *stacked = x->context().get(Op::STACK, tmp.dtype(), parts);
  std::vector<int64_t> order;
  for (size_t d = 1; d <= xs.size(); ++d) order.push_back(int64_t(d));
  order.push_back(0);
  IShape flat = lead;
  flat.push_back(xs.back() * (os / ns));
  return UOpRef(reshape(permute(stacked, order), flat)).cast(newUint).bitcast(bc->dtype());
}

const PatternMatcher &earliestRewrites() {
  static const PatternMatcher pm = pmMops() + mopCleanup() + PatternMatcher({
      rule(UPat(Op::FUNCTION).named("c"), [](Match &m) { return resolveFunction(m["c"]); }),
      rule(UPat(Op::GETTUPLE).src({UPat(Op::TUPLE).named("t")}).named("g"),
           [](Match &m) -> const UOp * {
             const Value &i = m["g"]->arg();
             if (!i.isInt() || i.getInt() < 0 || size_t(i.getInt()) >= m["t"]->numSrc()) return nullptr;
             return m["t"]->src(size_t(i.getInt()));
           }),
      rule(UPat(Op::ALLREDUCE).named("x"),
           [](Match &m) -> const UOp * { fail(m["x"], "multi-device ALLREDUCE is not supported by the scheduler"); }),
      rule(UPat(Op::REDUCE).src({var("x")}).named("reduce"),
           [](Match &m) { return splitReduceop(m["reduce"], m["x"]); }),
      rule(UPat(OpSet{Op::DETACH, Op::CONTIGUOUS_BACKWARD}).named("x"), [](Match &m) { return m["x"]->src(0); }),
      // SINK only ever references the base
      rule(UPat(Op::SINK).named("x"),
           [](Match &m) {
             std::vector<const UOp *> s;
             for (const UOp *y : m["x"]->src()) s.push_back(unshardedBase(y));
             return m["x"]->withSrc(s);
           }),
      // COPY of a resized or reordered view copies a contiguous version of it
      rule(UPat(Op::COPY).src({UPat(group::Movement).named("r")}).named("c"),
           [](Match &m) -> const UOp * {
             const UOp *r = m["r"];
             if (dimsEqual(prod(shapeOf(r)), prod(shapeOf(base(r)))) != true || !contiguousView(r))
               return m["c"]->withSrc({contiguous(r)});
             return nullptr;
           }),
      // copy to the same device is a no-op
      rule(UPat(Op::COPY).src({var("x")}).named("copy"),
           [](Match &m) -> const UOp * { return m["x"]->device() == m["copy"]->device() ? m["x"].get() : nullptr; }),
      // copy of a reshape is a reshape of the copy
      rule(UPat(Op::COPY).src({UPat(Op::RESHAPE).named("shp")}).named("cpy"),
           [](Match &m) {
             const UOp *shp = m["shp"], *cpy = m["cpy"];
             return reshape(cpy->withSrc({shp->src(0)}), shapeOf(shp));
           }),
      // reshapes on both sides of a STORE cancel
      rule(UPat(Op::STORE).src({UPat(Op::RESHAPE).src({var("dst")}).allowAnyLen(),
                                UPat(Op::RESHAPE).src({var("src")}).allowAnyLen()}),
           [](Match &m) -> const UOp * {
             if (!sameShape(m["dst"], m["src"])) return nullptr;
             return store(m["dst"], m["src"]);
           }),
      rule(UPat(Op::STORE).src({var("target"), var("src")}), fixStoreHazard),
      // two STOREs of the same value to the same place
      rule(UPat(Op::AFTER).src({UPat(Op::AFTER).src({var("buf"), UPat(Op::STORE).src({var("buf"), var("src")})}).named("a1"),
                                UPat(Op::STORE).src({var("a1"), var("src")})}),
           [](Match &m) { return m["a1"]; }),
      // storing a buffer's own current contents back into it
      rule(UPat(Op::AFTER).src({var("buf"),
                                UPat(Op::STORE).src({var("buf"), UPat(Op::AFTER).src({var("buf"), UPat(Op::STORE).src({var("buf"), var("src")})}).named("a1")})}),
           [](Match &m) { return m["a1"]; }),
      // a BITCAST on the destination moves to the value
      rule(UPat(Op::STORE).src({UPat(Op::BITCAST).src({var("target")}), var("src")}),
           [](Match &m) {
             const UOp *t = m["target"];
             return store(t, m["src"]->context().get(Op::BITCAST, t->dtype(), {m["src"]}, Value::dtype(t->dtype())));
           }),
      rule(UPat(Op::BITCAST).named("bc"), [](Match &m) { return expandBitcast(m["bc"]); }),
      // a reduce over nothing is the identity element
      rule(UPat(Op::REDUCE).src({var("x")}).named("reduce"),
           [](Match &m) -> const UOp * {
             const IShape &xs = shapeOf(m["x"]), &rs = shapeOf(m["reduce"]);
             if (std::find(xs.begin(), xs.end(), 0) == xs.end() || std::find(rs.begin(), rs.end(), 0) != rs.end())
               return nullptr;
             return identityElement(m["reduce"]);
           }),
      // anything of size 0 is a constant
      rule(UPat().named("x"),
           [](Match &m) -> const UOp * {
             const UOp *x = m["x"];
             if (x->is(Op::SINK)) return nullptr;
             const IShape *s = maybeShape(x);
             if (!s || std::find(s->begin(), s->end(), 0) == s->end()) return nullptr;
             const UOp *c = constLike(x, Value::integer(0));
             return c->withTag(x->tag());
           }),
  });
  return pm;
}

namespace {
struct SlotCounter {
  int64_t next = 0;
};
} // namespace

// convert_copy_to_store: a COPY becomes a STORE into the assigned or a new buffer.
static const UOp *copyToStore(SlotCounter &ctr, const UOp *copy, const UOp *existing) {
  const UOp *in = copy->src(0);
  if (!hasBufferIdentity(in, true)) in = contiguous(in);
  in = flatten(in);
  if (existing) {
    if (!hasBufferIdentity(existing, true)) return nullptr;
    return store(flatten(existing), in);
  }
  const UOp *buf = newBuffer(copy->context(), copy->arg(), staticDim(prod(shapeOf(in)), copy), copy->dtype(), ctr.next++);
  return reshape(after(buf, {store(buf, in)}), shapeOf(copy));
}

static const PatternMatcher &copyToStorePM() {
  static const PatternMatcher pm({
      rule(UPat(Op::STORE).src({var("existing_buf"), UPat(Op::COPY).named("copy")}),
           [](Match &m) { return copyToStore(m.ctx<SlotCounter>(), m["copy"], m["existing_buf"]); }),
      rule(UPat(Op::COPY).named("copy"), [](Match &m) { return copyToStore(m.ctx<SlotCounter>(), m["copy"], nullptr); }),
  });
  return pm;
}

void prepareCopyToStore() { copyToStorePM(); }

const UOp *copyToStorePass(const UOp *sink) {
  SlotCounter ctr;
  return rewrite(sink, copyToStorePM(), ctr, preOrder());
}

void prepareEarliestRewrites() {
  earliestRewrites();
  prepareContiguousView();
}

const UOp *earliestRewritesPass(const UOp *sink) {
  // tinygrad's multi_pm (sharded tensors) runs before this; tgc does not have it yet
  for (const UOp *u : toposort(sink))
    if (u->is(Op::UNSHARD) || u->is(Op::ALLREDUCE))
      fail(u, "multi-device graphs (" + std::string(opName(u->op())) + ") are not supported by the scheduler yet");
  StoreHazardIndex hazards(sink);
  return rewrite(sink, earliestRewrites(), hazards, preOrder());
}

} // namespace tgc::rangeify
