//===- Callify.cpp - the tensor graph as one stateless function ------------===//
//
// Mirrors tinygrad's transform_to_call (tinygrad/tensor.py) with the
// reference revision's change (a creation copy keeps its own storage):
//  1. add_tags (pre-order): number every node that must be materialized
//     (CONTIGUOUS, AFTER, creation COPYs, the realized bases);
//  2. pm_early_transform_tensor_graph (post-order): tagged values become
//     CONTIGUOUS, CONTIGUOUS becomes a STORE into a fresh buffer behind an
//     AFTER, contiguous views of buffers become SHRINK views;
//  3. pm_finalize_call (post-order): untagged AFTERs are the function's
//     effects, tagged ones give the buffer map;
//  4. pm_replace_buf (pre-order): every buffer becomes PARAM(slot), in
//     visiting order, and the original is the slot's argument.
//
//===----------------------------------------------------------------------===//
#include "Schedule/Callify.h"

#include "Schedule/Mops.h"
#include "Schedule/Sugar.h"

#include <algorithm>
#include <unordered_set>

namespace tgc {
using namespace rangeify;

namespace {
struct AllocCtx {
  std::vector<const UOp *> uopList;
  std::vector<std::pair<const UOp *, const UOp *>> bufferMap;
  std::unordered_set<const UOp *> bases;
  std::vector<const UOp *> assigns;
  std::vector<const UOp *> replacements;
  std::unordered_set<const UOp *> views;
  int64_t nextSlot = 0;
};
} // namespace

static bool isTagged(const UOp *x) { return !x->tag().isNone(); }
static bool hasNumberedTag(const UOp *x) { return x->tag().isTuple() && x->tag().size() > 0; }

static Value concatTags(const Value &a, const Value &b) {
  std::vector<Value> out;
  if (a.isTuple()) out = a.items();
  if (b.isTuple()) out.insert(out.end(), b.items().begin(), b.items().end());
  return Value::tuple(std::move(out));
}

static bool diskLike(const UOp *u) { return deviceStartsWith(u, {"DISK", "TINYFS"}); }

static const UOp *tagUop(AllocCtx &ctx, const UOp *x) {
  if (isTagged(x)) return nullptr;
  ctx.uopList.push_back(x);
  return x->withTag(Value::tuple({Value::integer(int64_t(ctx.uopList.size() - 1))}));
}

static const PatternMatcher &addTagsPM() {
  static const PatternMatcher pm({
      rule(UPat(Op::COPY).named("u"),
           [](Match &m) -> const UOp * {
             AllocCtx &ctx = m.ctx<AllocCtx>();
             const UOp *u = m["u"];
             // copies to disk are replaced with the disk buffer
             if (diskLike(u) && !isTagged(u)) {
               ctx.bufferMap.emplace_back(u, emptyLike(u, ctx.nextSlot++));
               return u->withTag(Value::tuple({}));
             }
             // every copy from a creation device is realized into its own buffer
             if (deviceStartsWith(u->src(0), {"NPY", "DISK", "PYTHON", "TINYFS"})) return tagUop(ctx, u);
             return nullptr;
           }),
      rule(UPat(OpSet{Op::CONTIGUOUS, Op::AFTER}).named("x"), [](Match &m) { return tagUop(m.ctx<AllocCtx>(), m["x"]); }),
      rule(UPat().named("x"),
           [](Match &m) -> const UOp * {
             AllocCtx &ctx = m.ctx<AllocCtx>();
             return ctx.bases.count(m["x"]) ? tagUop(ctx, m["x"]) : nullptr;
           }),
  });
  return pm;
}

// _make_buffer_view: the contiguous run of a BUFFER that `src` reads, as a SHRINK view.
static const UOp *makeBufferView(const UOp *src) {
  std::optional<std::pair<const UOp *, int64_t>> cv = contiguousView(src);
  if (!cv) return nullptr;
  auto [buf, offset] = *cv;
  if (!buf->is(Op::BUFFER)) return nullptr;
  int64_t size = maxNumel(shapeOf(src)) * src->dtype().itemsize() / buf->dtype().itemsize();
  return UOpRef(shrink(buf, {{offset, offset + size}})).bitcast(src->dtype());
}

// contiguous_mops_to_view: movement ops of a BUFFER that read a contiguous range become a view of it.
static const UOp *contiguousMopsToView(AllocCtx &ctx, const UOp *c, const UOp *src) {
  const UOp *buf = base(src);
  while (buf->is(Op::BITCAST)) buf = base(buf->src(0));
  if (!buf->is(Op::BUFFER)) return nullptr; // UNSHARD (multi-device) views are not handled
  if (!c->staticShape()) return nullptr;      // a symbolic part of a buffer stays a movement op
  const UOp *view = makeBufferView(src);
  if (!view) return nullptr;
  ctx.views.insert(view);
  view = reshape(view, shapeOf(c));
  if (c->is(Op::COPY) || c->is(Op::STORE)) {
    std::vector<const UOp *> s(c->src().begin(), c->src().end());
    s[0] = view;
    return c->withSrc(s);
  }
  return view;
}

static const PatternMatcher &earlyTransformPM() {
  static const PatternMatcher pm({
      rule(UPat(Op::FUNCTION).named("c"),
           [](Match &m) -> const UOp * {
             const Value *pre = m["c"]->arg().field("precompile");
             if (pre && pre->isBool() && pre->getBool()) fail(m["c"], "precompiled FUNCTIONs are not supported yet");
             return nullptr;
           }),
      rule(UPat(Op::GETTUPLE).src({UPat(Op::TUPLE).named("t")}).named("g"),
           [](Match &m) -> const UOp * {
             const Value &i = m["g"]->arg();
             if (!i.isInt() || i.getInt() < 0 || size_t(i.getInt()) >= m["t"]->numSrc()) return nullptr;
             return m["t"]->src(size_t(i.getInt()));
           }),
      rule(UPat(OpSet{Op::COPY, Op::CONTIGUOUS}).src({UPat(group::Movement | OpSet{Op::BITCAST}).named("src")}).named("c"),
           [](Match &m) { return contiguousMopsToView(m.ctx<AllocCtx>(), m["c"], m["src"]); }),
      rule(UPat(Op::STORE).src({UPat(Op::BITCAST).named("src"), UPat()}).allowAnyLen().named("c"),
           [](Match &m) { return contiguousMopsToView(m.ctx<AllocCtx>(), m["c"], m["src"]); }),
      // a tagged value is materialized through a CONTIGUOUS carrying the tag
      rule(UPat().named("x"),
           [](Match &m) -> const UOp * {
             const UOp *x = m["x"];
             if (x->is(Op::CONTIGUOUS) || x->is(Op::AFTER) || x->is(Op::STORE) || !isTagged(x)) return nullptr;
             if (!hasNumberedTag(x)) return x->withTag(Value());
             return contiguous(x->withTag(Value()), x->tag());
           }),
      // an extra CONTIGUOUS on an AFTER of a real buffer merges into the AFTER
      rule(UPat(Op::CONTIGUOUS).src({UPat(Op::AFTER).named("a")}).named("c"),
           [](Match &m) -> const UOp * {
             const UOp *a = m["a"];
             if (!hasBufferIdentity(a->src(0))) return nullptr;
             return a->withTag(concatTags(a->tag(), m["c"]->tag()));
           }),
      // an assign whose target is not a buffer is a CONTIGUOUS of the value
      rule(UPat(Op::AFTER).src({UPat(), UPat(Op::STORE).src({UPat(), var("src")})}).named("u"),
           [](Match &m) -> const UOp * {
             const UOp *u = m["u"], *to = u;
             while (to->is(Op::BITCAST) || to->is(Op::AFTER) || to->is(Op::UNSHARD)) to = base(to->src(0));
             if (to->is(Op::BUFFER)) return nullptr;
             return contiguous(m["src"], u->tag());
           }),
      // CONTIGUOUS is a STORE into a fresh buffer
      rule(UPat(Op::CONTIGUOUS).named("u"),
           [](Match &m) -> const UOp * {
             const UOp *u = m["u"];
             if (isVirtual(u)) return nullptr;
             const IShape &s = shapeOf(u);
             if (std::find(s.begin(), s.end(), 0) != s.end()) return u->src(0);
             if (diskLike(u)) return u->withTag(Value());
             const UOp *buf = emptyLike(u, m.ctx<AllocCtx>().nextSlot++);
             return after(buf, {store(buf, u->src(0))}, u->tag());
           }),
      rule(UPat(OpSet{Op::DETACH, Op::CONTIGUOUS_BACKWARD}).named("x"), [](Match &m) { return m["x"]->src(0); }),
  });
  return pm;
}

static const UOp *finalizeAfter(AllocCtx &ctx, const UOp *x) {
  if (isBoundVar(x)) return nullptr; // call inputs, not assigns
  if (!isTagged(x)) {
    ctx.assigns.push_back(x);
    return nullptr;
  }
  const UOp *ret = x->withTag(Value());
  // the storage: the buffer under the AFTER chain, with the views re-applied
  const UOp *r = ret;
  std::vector<const UOp *> views;
  while (r->isIn(group::Movement) || r->is(Op::UNSHARD) || r->is(Op::BITCAST) || r->is(Op::AFTER)) {
    if (!r->is(Op::AFTER)) views.push_back(r);
    r = r->src(0);
  }
  for (auto it = views.rbegin(); it != views.rend(); ++it) r = replaceMopSrc(*it, r);
  if (x->tag().isTuple())
    for (const Value &t : x->tag().items()) {
      const UOp *orig = ctx.uopList.at(size_t(t.getInt()));
      ctx.bufferMap.emplace_back(orig, shrinkTo(r, shapeOf(orig)));
    }
  return ret;
}

static const PatternMatcher &finalizeCallPM() {
  static const PatternMatcher pm({
      rule(UPat(Op::AFTER).named("x"), [](Match &m) { return finalizeAfter(m.ctx<AllocCtx>(), m["x"]); }),
      rule(UPat(Op::COPY).named("x"),
           [](Match &m) -> const UOp * {
             if (diskLike(m["x"])) m.ctx<AllocCtx>().assigns.push_back(m["x"]);
             return nullptr;
           }),
  });
  return pm;
}

static const UOp *replaceInputBuffer(AllocCtx &ctx, const UOp *b) {
  ctx.replacements.push_back(b);
  int64_t slot = int64_t(ctx.replacements.size() - 1);
  if (isBoundVar(b) || isVariable(b)) {
    const UOp *v = b->is(Op::AFTER) ? b->src(0) : b;
    ParamFields f = paramFields(v);
    f.slot = slot;
    f.name = Value::string("p" + std::to_string(slot));
    return v->context().get(Op::PARAM, v->dtype(), {v->src().begin(), v->src().end()}, f.toValue());
  }
  std::optional<AddrSpace> as = b->addrspace();
  return param(b->context(), slot, b->dtype(), shapeOf(b), b->device(), addrSpaceValue(as.value_or(AddrSpace::GLOBAL)));
}

static const PatternMatcher &replaceBufPM() {
  static const PatternMatcher pm({
      rule(UPat(Op::BUFFER).src({UPat()}).named("b"),
           [](Match &m) -> const UOp * {
             const UOp *b = m["b"];
             std::optional<ParamFields> f = ParamFields::from(b->arg());
             std::optional<AddrSpace> as = b->addrspace();
             if (!f || !as || *as != AddrSpace::GLOBAL) return nullptr;
             return replaceInputBuffer(m.ctx<AllocCtx>(), b);
           }),
      rule(UPat(Op::SHRINK).src({UPat(Op::BUFFER)}).allowAnyLen().named("b"),
           [](Match &m) -> const UOp * {
             AllocCtx &ctx = m.ctx<AllocCtx>();
             return ctx.views.count(m["b"]) ? replaceInputBuffer(ctx, m["b"]) : nullptr;
           }),
      rule(UPat(Op::BITCAST).src({UPat::any({UPat(Op::SHRINK).src({UPat(Op::BUFFER)}).allowAnyLen(), UPat(Op::BUFFER)})}).named("b"),
           [](Match &m) -> const UOp * {
             AllocCtx &ctx = m.ctx<AllocCtx>();
             return ctx.views.count(m["b"]) ? replaceInputBuffer(ctx, m["b"]) : nullptr;
           }),
      rule(UPat(Op::AFTER).named("b"),
           [](Match &m) -> const UOp * { return isBoundVar(m["b"]) ? replaceInputBuffer(m.ctx<AllocCtx>(), m["b"]) : nullptr; }),
  });
  return pm;
}

void prepareCallify() {
  addTagsPM();
  earlyTransformPM();
  finalizeCallPM();
  replaceBufPM();
  rangeify::prepareContiguousView();
}

int64_t firstFreeBufferSlot(std::span<const UOp *const> roots) {
  int64_t next = 0;
  ToposortOptions o;
  o.argRefs = true;
  for (const UOp *u : toposort(roots, o)) {
    if (!u->is(Op::BUFFER)) continue;
    if (std::optional<int64_t> slot = ParamFields::slotOf(u->arg())) next = std::max(next, *slot + 1);
  }
  return next;
}

Result<CallifyResult> callify(const UOp *bigSink, int64_t firstFreeSlot) {
  try {
    AllocCtx ctx;
    ctx.nextSlot = firstFreeSlot;
    for (const UOp *x : bigSink->src()) {
      const UOp *b = base(x);
      std::optional<AddrSpace> as = b->addrspace();
      if (!isVirtual(b) && !hasBufferIdentity(b) && !b->is(Op::AFTER) && !(as && *as == AddrSpace::ALU))
        ctx.bases.insert(b);
    }
    const UOp *s = rewrite(bigSink, addTagsPM(), ctx, preOrder());
    s = rewrite(s, earlyTransformPM(), ctx);
    rewrite(s, finalizeCallPM(), ctx);
    const UOp *body = rewrite(sink(bigSink->context(), ctx.assigns), replaceBufPM(), ctx, preOrder());
    CallifyResult out;
    out.call = call(body, ctx.replacements);
    out.bufferMap = std::move(ctx.bufferMap);
    for (auto &[k, v] : out.bufferMap)
      for (auto &[k2, v2] : out.bufferMap)
        if (v == k2) fail(v, "callify: a buffer map value is also a key");
    return out;
  } catch (const ScheduleError &e) {
    return e.diag;
  }
}

} // namespace tgc
