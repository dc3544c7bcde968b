//===- Mops.cpp - movement-op rewrite rules shared by the passes -----------===//
//
// Mirrors tinygrad's pm_mops / _mop_index (schedule/rangeify.py), mop_cleanup
// (uop/movement.py) and UOp.contiguous_view with pm_contiguous_view_offset
// (uop/ops.py), BITCASTs included (a view may change the dtype).
//
//===----------------------------------------------------------------------===//
#include "Schedule/Mops.h"

#include "IR/Symbolic.h"
#include "IR/UOpBuilder.h"
#include "Schedule/RangeifyMovement.h"

namespace tgc::rangeify {

// _mop_index: INDEX(mop(x), *idxs) -> INDEX(x, *idxs') with the movement op applied.
static const UOp *mopIndex(const UOp *r, const UOp *idx) {
  std::vector<const UOp *> idxs(idx->src().begin() + 1, idx->src().end());
  const IShape &rs = shapeOf(r);
  if (idxs.size() == rs.size()) return index(r->src(0), applyMovementOp(r, idxs), idx->arg());
  if (!r->is(Op::RESHAPE) || idxs.size() > rs.size()) return nullptr;
  const IShape &ss = shapeOf(r->src(0));
  IShape restOut(rs.begin() + idxs.size(), rs.end());
  int64_t srcPrefix = int64_t(ss.size()) - int64_t(restOut.size());
  if (srcPrefix < 0 || IShape(ss.begin() + srcPrefix, ss.end()) != restOut) return nullptr;
  if (srcPrefix == 0) return r->src(0)->dtype() == idx->dtype() ? r->src(0) : nullptr;
  IShape inPrefix(ss.begin(), ss.begin() + srcPrefix), outPrefix(rs.begin(), rs.begin() + idxs.size());
  const UOp *ret =
      index(r->src(0), applyMovement(r->context(), Op::RESHAPE, inPrefix, outPrefix, idxs), idx->arg());
  return sameShape(ret, idx) ? ret : nullptr;
}

const PatternMatcher &pmMops() {
  static const PatternMatcher pm({
      // handle movement ops on INDEX
      rule(UPat(Op::INDEX).src({UPat(group::Movement).named("r")}).allowAnyLen().named("idx"),
           [](Match &m) { return mopIndex(m["r"], m["idx"]); }),
      // move movement ops and INDEX after AFTER
      rule(UPat(Op::AFTER).src({UPat(group::Movement | OpSet{Op::INDEX}).named("r")}).allowAnyLen().named("a"),
           [](Match &m) -> const UOp * {
             const UOp *r = m["r"], *a = m["a"];
             std::vector<const UOp *> asrc(a->src().begin(), a->src().end());
             asrc[0] = r->src(0);
             std::vector<const UOp *> rsrc(r->src().begin(), r->src().end());
             rsrc[0] = rebuild(a, asrc);
             return mk(r->op(), rsrc, r->arg());
           }),
      rule(UPat(Op::END).src({UPat(group::Movement).named("r")}).allowAnyLen().named("a"),
           [](Match &m) -> const UOp * {
             const UOp *a = m["a"];
             std::vector<const UOp *> asrc(a->src().begin(), a->src().end());
             asrc[0] = m["r"]->src(0);
             return a->withSrc(asrc);
           }),
  });
  return pm;
}

const PatternMatcher &mopCleanup() {
  static const PatternMatcher pm({
      // merge adjacent RESHAPEs
      rule(UPat(Op::RESHAPE).src({UPat(Op::RESHAPE).named("x2"), UPat()}).named("x"),
           [](Match &m) { return m["x"]->withSrc({m["x2"]->src(0), m["x"]->src(1)}); }),
      // remove noop RESHAPEs
      rule(UPat(Op::RESHAPE).src({UPat().named("x2"), UPat()}).named("x"),
           [](Match &m) -> const UOp * {
             const UOp *x2 = m["x2"];
             if (!x2->shape()) return nullptr;
             return sameShape(x2, m["x"]) ? x2 : nullptr;
           }),
      // merge PERMUTEs
      rule(UPat(Op::PERMUTE).src({UPat(Op::PERMUTE).named("x2")}).named("x"),
           [](Match &m) {
             std::vector<int64_t> inner = mopInts(m["x2"]);
             std::vector<Value> arg;
             for (int64_t i : mopInts(m["x"])) arg.push_back(Value::integer(inner.at(size_t(i))));
             return m["x2"]->withArg(Value::tuple(std::move(arg)));
           }),
      // remove noop PERMUTEs
      rule(UPat(Op::PERMUTE).named("x"),
           [](Match &m) -> const UOp * {
             std::vector<int64_t> a = mopInts(m["x"]);
             for (size_t i = 0; i < a.size(); ++i)
               if (a[i] != int64_t(i)) return nullptr;
             return m["x"]->src(0);
           }),
      // STACK of INDEX(src, i) for i = 0..n-1 is src
      rule(UPat(Op::STACK).srcAll(UPat(Op::INDEX).src({var("src"), UPat(Op::CONST)})).named("stk"),
           [](Match &m) -> const UOp * {
             const UOp *stk = m["stk"], *src = m["src"];
             if (!sameShape(stk, src)) return nullptr;
             for (size_t i = 0; i < stk->numSrc(); ++i) {
               const Value &v = stk->src(i)->src(1)->arg();
               if (!v.isInt() || v.getInt() != int64_t(i)) return nullptr;
             }
             return src;
           }),
      // const INDEX into STACK is the element
      rule(UPat(Op::INDEX).src({UPat(Op::STACK).named("a"), cvar("i")}).allowAnyLen().named("idx"),
           [](Match &m) -> const UOp * {
             const UOp *a = m["a"], *idx = m["idx"];
             const Value &v = m["i"]->arg();
             if (!v.isInt() || v.getInt() < 0 || size_t(v.getInt()) >= a->numSrc()) return nullptr;
             const UOp *e = a->src(size_t(v.getInt()));
             if (idx->numSrc() <= 2) return e;
             return index(e, {idx->src().begin() + 2, idx->src().end()});
           }),
      // INDEX on INDEX is INDEX (scalar indices)
      rule(UPat(Op::INDEX).src({UPat(Op::INDEX).allowAnyLen().named("idx1")}).allowAnyLen().named("idx2"),
           [](Match &m) -> const UOp * {
             const UOp *i1 = m["idx1"], *i2 = m["idx2"];
             std::vector<const UOp *> all;
             for (size_t k = 1; k < i1->numSrc(); ++k) all.push_back(i1->src(k));
             for (size_t k = 1; k < i2->numSrc(); ++k) all.push_back(i2->src(k));
             for (const UOp *x : all) {
               const IShape *s = maybeShape(x);
               if (!s || !s->empty()) return nullptr;
             }
             return index(i1->src(0), all);
           }),
      // INDEX on a shaped INDEX
      rule(UPat(Op::INDEX).src({UPat(Op::INDEX).src({var("buf"), var("idx1_arg")})}).allowAnyLen().named("idx2"),
           [](Match &m) -> const UOp * {
             const UOp *i2 = m["idx2"], *a = m["idx1_arg"];
             const IShape *s = maybeShape(a);
             if (!s || s->size() != i2->numSrc() - 1) return nullptr;
             return index(m["buf"], {index(a, {i2->src().begin() + 1, i2->src().end()})});
           }),
  });
  return pm;
}

// pm_contiguous_view_offset: once the index reached the storage, is it `range + c`?
static const PatternMatcher &contiguousViewOffsetPM() {
  static const PatternMatcher pm({
      // a BITCAST is normalized to a flat one; an index reaching a tagged BITCAST continues into its source, in
      // the source's elements (a BITCAST may change the element size)
      rule(UPat(Op::BITCAST).named("b"),
           [](Match &m) -> const UOp * {
             const UOp *b = m["b"];
             if (shapeOf(b).size() == 1) return nullptr;
             return reshape(UOpRef(flatten(b->src(0))).bitcast(b->dtype()), shapeOf(b));
           }),
      rule(UPat(Op::INDEX).src({UPat(Op::BITCAST).named("b"), cvar("c")}),
           [](Match &m) -> const UOp * {
             const UOp *b = m["b"], *self = m.ctx<const UOp *>();
             if (!b->tag().isBool() || !b->tag().getBool()) return nullptr;
             int64_t osz = b->dtype().itemsize(), isz = b->src(0)->dtype().itemsize();
             const UOp *r = range(b->context(), floorDiv(prod(shapeOf(self)) * osz, isz), 0);
             return index(flatten(b->src(0)), {UOpRef(r) + UOpRef(m["c"]) * osz / isz});
           }),
      rule(UPat(Op::INDEX).src({var("b")}), [](Match &m) { return index(m["b"]->withTag(Value::boolean(true)), {m.root()->context().constInt(0)}); }),
      rule(UPat(Op::INDEX).src({var("b"), UPat(Op::RANGE)}),
           [](Match &m) { return index(m["b"]->withTag(Value::boolean(true)), {m.root()->context().constInt(0)}); }),
      rule(UPat(Op::INDEX).src({var("b"), UPat(Op::RANGE) + cvar("c")}),
           [](Match &m) { return index(m["b"]->withTag(Value::boolean(true)), {m["c"]}); }),
      rule(UPat(Op::INDEX).src({var("b"), cvar("c")}),
           [](Match &m) -> const UOp * {
             const UOp *self = m.ctx<const UOp *>();
             if (prod(shapeOf(self)) != 1) return nullptr;
             return index(m["b"]->withTag(Value::boolean(true)), {m["c"]});
           }),
  });
  return pm;
}

static const PatternMatcher &contiguousViewPM() {
  static const PatternMatcher pm = pmMops() + symbolic() + contiguousViewOffsetPM();
  return pm;
}

void prepareContiguousView() { contiguousViewPM(); }

std::optional<std::pair<const UOp *, int64_t>> contiguousView(const UOp *u) {
  Context &ctx = u->context();
  const UOp *idx = index(flatten(u), {range(ctx, prod(shapeOf(u)), 0)});
  const UOp *self = u;
  const UOp *out = rewrite(idx, contiguousViewPM(), self);
  if (!out->is(Op::INDEX) || out->numSrc() != 2) return std::nullopt;
  const UOp *b = out->src(0), *c = out->src(1);
  if (!b->tag().isBool() || !b->tag().getBool() || !c->is(Op::CONST) || !c->arg().isInt()) return std::nullopt;
  return std::make_pair(b->withTag(Value()), c->arg().getInt());
}

} // namespace tgc::rangeify
