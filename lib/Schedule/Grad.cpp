//===- Grad.cpp - reverse-mode autodiff of a tensor graph -------------------===//
//
// tinygrad's compute_gradient (tinygrad/mixin/gradient.py): walk the nodes on
// a path from the loss to a target in reverse toposort order, and give each
// node's incoming gradient to its sources with a per-op rule (pm_gradient). A
// rule returns one gradient per src (null: none flows there); a gradient whose
// shape differs from its src's (a broadcast edge) is summed back to it. The
// AFTER rule is the reference revision's (pipeline-schedule.md §5.4 item 5).
//
//===----------------------------------------------------------------------===//
#include "Schedule/Grad.h"

#include "IR/PatternMatcher.h"
#include "IR/UOpBuilder.h"
#include "Schedule/Access.h"
#include "Schedule/Sugar.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace tgc {
namespace {

using namespace rangeify;
using Grads = std::vector<const UOp *>; ///< one per src; null = no gradient flows there
using GradRule = BasicRule<std::optional<Grads>>;
using GradMatcher = BasicPatternMatcher<std::optional<Grads>>;

/// The incoming gradient a rule reads (tinygrad's ctx).
struct GradCtx {
  UOpRef g;
};

constexpr double kLn2 = std::numbers::ln2;

template <typename Fn> GradRule grule(UPat pat, Fn fn) {
  return GradRule{std::move(pat), [fn = std::move(fn)](Match &m) -> std::optional<Grads> {
                    return fn(m, m.ctx<GradCtx>().g, m.root());
                  },
                  std::source_location::current()};
}

/// Float division (tinygrad's `/`): a * b.reciprocal().
UOpRef fdiv(UOpRef a, UOpRef b) {
  auto [x, y] = broadcasted(a, b);
  return x.alu(Op::MUL, {y.reciprocal()});
}

/// tinygrad's UOp._rop: reduce `axes` of x with `op` (size-1 axes are only
/// reshaped away; reduced axes are permuted to the front, as REDUCE reduces
/// its leading axes).
const UOp *reduceAxes(const UOp *x, Op op, std::vector<size_t> axes) {
  const IShape &s = shapeOf(x);
  std::sort(axes.begin(), axes.end());
  std::vector<int64_t> red, perm;
  for (size_t a : axes)
    if (s[a] != 1) red.push_back(int64_t(a));
  IShape kept;
  for (size_t i = 0; i < s.size(); ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) kept.push_back(s[i]);
  if (red.empty()) return reshape(x, kept);
  perm = red;
  for (size_t i = 0; i < s.size(); ++i)
    if (std::find(red.begin(), red.end(), int64_t(i)) == red.end()) perm.push_back(int64_t(i));
  const UOp *r = mk(Op::REDUCE, {permute(x, perm)},
                    Value::tuple({Value::enumMember("Ops", std::string(opName(op))), Value::integer(int64_t(red.size()))}));
  return reshape(r, kept);
}

std::vector<size_t> leadingAxes(int64_t n) {
  std::vector<size_t> a;
  for (int64_t i = 0; i < n; ++i) a.push_back(size_t(i));
  return a;
}

/// reduce_gradient: the gradient of REDUCE(x, (op, n)) with respect to x.
Grads reduceGradient(UOpRef g, UOpRef ret) {
  UOpRef x = ret->src(0);
  const Value &arg = ret->arg();
  if (!arg.isTuple() || arg.size() != 2 || !arg[0].isEnum("Ops") || !arg[1].isInt() || arg[1].getInt() < 0)
    fail(ret, "REDUCE arg must be (Ops.<op>, number of reduced axes), not " + arg.toString());
  std::string op = arg[0].str();
  std::vector<size_t> axes = leadingAxes(ret->arg()[1].getInt());
  if (op == "ADD") return {broadcastTo(g, shapeOf(x))};
  if (op == "MAX") {
    UOpRef mask = x.eq(ret).cast(g.dtype());
    return {fdiv(mask, reduceAxes(mask, Op::ADD, axes)) * g};
  }
  if (op == "MUL") {
    // d(prod x)/dx_j: ret/x_j unless x_j is 0; then the product of the others if it is the only 0, else 0
    UOpRef isZero = x.eq(0), safe = isZero.where(1, x);
    UOpRef zeros = UOpRef(reduceAxes(isZero.cast(sumAccDType(dtypes::Bool)), Op::ADD, axes));
    UOpRef others = UOpRef(reduceAxes(safe, Op::MUL, axes));
    return {g * isZero.where(zeros.eq(1).where(others, 0), fdiv(ret, safe))};
  }
  fail(ret, "no gradient for REDUCE " + op);
}

/// The node whose storage `u` denotes: through views, DETACH and AFTER.
const UOp *storageBase(const UOp *u) {
  while (u->isIn(group::Movement) || u->isIn({Op::DETACH, Op::AFTER, Op::BITCAST})) u = u->src(0);
  return u;
}

/// The buffers a dep of an AFTER writes: a STORE's target, a CALL's written args.
std::vector<const UOp *> writesOf(const UOp *dep) {
  if (dep->is(Op::STORE)) return {dep->src(0)};
  if (dep->is(Op::CALL)) {
    Result<sched::CallAccess> acc = sched::callAccess(dep);
    if (!acc) throw ScheduleError(acc.error());
    return sched::callArgs(dep, acc->outs);
  }
  fail(dep, "gradient through " + std::string(opName(dep->op())) + " ordering is unsupported");
}

/// The reference's after_gradient: where the gradient of AFTER(value, *deps) goes.
Grads afterGradient(UOpRef g, UOpRef after) {
  const UOp *value = after->src(0);
  std::span<const UOp *const> deps = after->src().subspan(1);
  Grads out(after->numSrc(), nullptr);
  // a full, ungated overwrite of the value: the gradient goes to what was stored
  if (deps.size() == 1 && deps[0]->is(Op::STORE) && deps[0]->numSrc() == 2 && deps[0]->src(0) == value) {
    out[1] = g;
    return out;
  }
  if (deps.size() == 1 && deps[0]->is(Op::CALL)) {
    const UOp *call = deps[0];
    std::vector<const UOp *> w = writesOf(call);
    if (std::find(w.begin(), w.end(), value) != w.end()) {
      if (std::count(call->src().begin() + 1, call->src().end(), value) > 1) fail(after, "ambiguous CALL output gradient");
      // the gradient of a CALL's output needs its grad_fxn, which a graph document cannot carry
      fail(after, "gradient through a CALL output needs a gradient function, which this CALL does not have");
    }
  }
  // an unrelated or ordering-only dep: the value passes through, if no write can touch its storage
  for (const UOp *dep : deps)
    for (const UOp *w : writesOf(dep)) {
      const UOp *vb = storageBase(value), *wb = storageBase(w);
      if (!vb->is(Op::BUFFER) || !wb->is(Op::BUFFER) || vb == wb) fail(after, "gradient through an aliased write is unsupported");
    }
  out[0] = g;
  return out;
}

/// ctx[i] for a STACK's gradient: slice i of axis 0, that axis removed.
const UOp *sliceAxis0(const UOp *g, int64_t i) {
  const IShape &s = shapeOf(g);
  std::vector<std::pair<Dim, Dim>> se{{i, i + 1}};
  for (size_t d = 1; d < s.size(); ++d) se.emplace_back(0, s[d]);
  return reshape(shrink(g, se), IShape(s.begin() + 1, s.end()));
}

const GradMatcher &gradientRules() {
  static const GradMatcher pm(std::vector<GradRule>{
      grule(UPat(Op::CAST), [](Match &, UOpRef g, UOpRef r) { return Grads{g.cast(r->src(0)->dtype())}; }),
      grule(UPat(Op::RECIPROCAL), [](Match &, UOpRef g, UOpRef r) { return Grads{-g * r * r}; }),
      grule(UPat(Op::SIN),
            [](Match &, UOpRef g, UOpRef r) {
              return Grads{(std::numbers::pi / 2 - UOpRef(r->src(0))).alu(Op::SIN) * g};
            }),
      grule(UPat(Op::LOG2), [](Match &, UOpRef g, UOpRef r) { return Grads{fdiv(g, UOpRef(r->src(0)) * kLn2)}; }),
      grule(UPat(Op::EXP2), [](Match &, UOpRef g, UOpRef r) { return Grads{r * g * kLn2}; }),
      grule(UPat(Op::SQRT), [](Match &, UOpRef g, UOpRef r) { return Grads{fdiv(g, r * 2)}; }),
      grule(UPat(Op::TRUNC), [](Match &, UOpRef g, UOpRef) { return Grads{g.constLike(0)}; }),
      grule(UPat(OpSet{Op::CMPLT, Op::CMPNE, Op::CMPEQ}), [](Match &, UOpRef, UOpRef) { return Grads{nullptr, nullptr}; }),
      grule(UPat(Op::ADD), [](Match &, UOpRef g, UOpRef) { return Grads{g, g}; }),
      grule(UPat(Op::POW).src({var("b"), var("e")}),
            [](Match &m, UOpRef g, UOpRef r) {
              UOpRef b = m["b"], e = m["e"];
              UOpRef db = e.eq(0).where(e, e * b.pow(e - 1));
              UOpRef de = b.eq(0).where((e < 0).where(r.constLike(-INFINITY), 0), r * b.alu(Op::LOG2) * kLn2);
              return Grads{g * db, g * de};
            }),
      grule(UPat(Op::MAX).src({var("x"), var("y")}),
            [](Match &m, UOpRef g, UOpRef) {
              UOpRef x = m["x"], y = m["y"], half = x.eq(y).where(g * 0.5, 0);
              return Grads{(x > y).where(g, half), (x < y).where(g, half)};
            }),
      grule(UPat(Op::MUL), [](Match &, UOpRef g, UOpRef r) { return Grads{UOpRef(r->src(1)) * g, UOpRef(r->src(0)) * g}; }),
      grule(UPat(Op::WHERE),
            [](Match &, UOpRef g, UOpRef r) {
              UOpRef c = r->src(0);
              return Grads{nullptr, c.where(g, g.constLike(0)), c.where(g.constLike(0), g)};
            }),
      grule(UPat(Op::REDUCE), [](Match &, UOpRef g, UOpRef r) { return reduceGradient(g, r); }),
      grule(UPat(Op::CONTIGUOUS), [](Match &, UOpRef g, UOpRef) { return Grads{g}; }),
      grule(UPat(Op::CONTIGUOUS_BACKWARD), [](Match &, UOpRef g, UOpRef) { return Grads{contiguous(g)}; }),
      grule(UPat(Op::RESHAPE), [](Match &, UOpRef g, UOpRef r) { return Grads{reshape(g, shapeOf(r->src(0))), nullptr}; }),
      // the gradient has the EXPAND's shape; accumulation sums it back over the broadcast axes
      grule(UPat(Op::EXPAND), [](Match &, UOpRef g, UOpRef) { return Grads{g, nullptr}; }),
      grule(UPat(Op::PAD),
            [](Match &, UOpRef g, UOpRef r) {
              const IShape &s = shapeOf(r->src(0));
              std::vector<std::pair<Dim, Dim>> se;
              auto pairs = mopPairs(r);
              if (pairs.size() != s.size()) fail(r, "PAD operands do not match the source's rank");
              for (size_t i = 0; i < s.size(); ++i) se.emplace_back(pairs[i].first, pairs[i].first + s[i]);
              return Grads{shrink(g, se), nullptr, nullptr};
            }),
      grule(UPat(Op::SHRINK),
            [](Match &, UOpRef g, UOpRef r) {
              // pad the gradient back into the source's shape at the shrink's offsets
              IShape s = shapeOf(r->src(0)), off;
              for (auto [o, n] : mopPairs(r)) off.push_back(o);
              if (off.size() != s.size()) fail(r, "SHRINK operands do not match the source's rank");
              const UOp *p = shapeOf(g) == s ? g.get() : mk(Op::PAD, {g, shapeArg(g.ctx(), off), shapeArg(g.ctx(), s)});
              return Grads{p, nullptr, nullptr};
            }),
      grule(UPat(Op::PERMUTE),
            [](Match &, UOpRef g, UOpRef r) {
              std::vector<int64_t> order = mopInts(r), inv(order.size(), -1);
              for (size_t i = 0; i < order.size(); ++i) {
                if (order[i] < 0 || size_t(order[i]) >= order.size() || inv[size_t(order[i])] >= 0)
                  fail(r, "PERMUTE arg is not a permutation: " + r->arg().toString());
                inv[size_t(order[i])] = int64_t(i);
              }
              return Grads{permute(g, inv)};
            }),
      grule(UPat(Op::FLIP),
            [](Match &, UOpRef g, UOpRef r) {
              std::vector<bool> axes;
              for (int64_t f : mopInts(r)) axes.push_back(f != 0);
              return Grads{flip(g, axes)};
            }),
      grule(UPat(Op::STACK),
            [](Match &, UOpRef g, UOpRef r) {
              Grads out;
              for (size_t i = 0; i < r->numSrc(); ++i) out.push_back(sliceAxis0(g, int64_t(i)));
              return out;
            }),
      grule(UPat(Op::COPY), [](Match &, UOpRef g, UOpRef r) { return Grads{mk(Op::COPY, {g}, r->src(0)->device())}; }),
      grule(UPat(Op::TUPLE),
            [](Match &, UOpRef g, UOpRef) {
              Grads out;
              for (const UOp *s : g->src()) out.push_back(s->is(Op::NOOP) ? nullptr : s);
              return out;
            }),
      grule(UPat(Op::AFTER), [](Match &, UOpRef g, UOpRef r) { return afterGradient(g, r); }),
      grule(UPat(Op::STORE).src({var(), var()}), [](Match &, UOpRef g, UOpRef) { return Grads{nullptr, g}; }),
      // no gradient flows through a reinterpretation of the bits
      grule(UPat(Op::BITCAST), [](Match &, UOpRef, UOpRef) { return Grads{nullptr}; }),
  });
  return pm;
}

/// `root` with the keys of `map` replaced, not entering FUNCTION/CALL bodies:
/// the PARAMs of an inlined function must not be replaced inside the bodies
/// of the forward FUNCTION its outputs' gradients refer to.
const UOp *substituteOutsideCalls(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map) {
  ToposortOptions o;
  o.enterCalls = false;
  std::unordered_map<const UOp *, const UOp *> done(map);
  for (const UOp *u : toposort(root, o)) {
    if (done.count(u)) continue;
    std::vector<const UOp *> src;
    for (const UOp *s : u->src()) {
      auto it = done.find(s);
      src.push_back(it == done.end() ? s : it->second);
    }
    done[u] = rebuild(u, std::move(src));
  }
  return done.at(root);
}

const UOp *noop(Context &ctx) { return ctx.get(Op::NOOP, dtypes::Void); }

using GradMap = std::unordered_map<const UOp *, const UOp *>;
GradMap gradientMap(const UOp *root, const UOp *rootGrad, const std::unordered_set<const UOp *> &targets);

/// The gradient of FUNCTION(TUPLE body, *args) with respect to its args,
/// given the TUPLE of its outputs' gradients: the body's gradients with
/// respect to its PARAMs, the PARAMs replaced by the args (the function
/// inlined, as the scheduler will inline it anyway).
Grads functionGradient(const UOp *fn, const UOp *g, const std::unordered_set<const UOp *> &needed) {
  const UOp *body = fn->src(0);
  if (!body->is(Op::TUPLE)) fail(fn, "gradient of a FUNCTION needs a TUPLE body, not " + std::string(opName(body->op())));
  ToposortOptions o;
  o.enterCalls = false;
  std::unordered_map<int64_t, const UOp *> params;
  std::unordered_set<const UOp *> paramSet;
  for (const UOp *u : toposort(body, o))
    if (u->is(Op::PARAM)) {
      params[paramFields(u).slot] = u;
      paramSet.insert(u);
    }
  GradMap inner = gradientMap(body, g, paramSet);
  std::unordered_map<const UOp *, const UOp *> inlineArgs;
  for (auto [slot, p] : params)
    if (slot >= 0 && size_t(slot) + 1 < fn->numSrc()) inlineArgs[p] = fn->src(size_t(slot) + 1);
  Grads out(fn->numSrc(), nullptr);
  for (size_t i = 1; i < fn->numSrc(); ++i) {
    auto p = params.find(int64_t(i - 1));
    if (p == params.end() || !needed.count(fn->src(i))) continue;
    if (auto it = inner.find(p->second); it != inner.end()) out[i] = substituteOutsideCalls(it->second, inlineArgs);
  }
  return out;
}

/// Sums a gradient over the axes its src was broadcast along (a shaped edge's
/// gradient always gets its src's shape).
const UOp *fitShape(const UOp *src, const UOp *v) {
  const IShape *ks = maybeShape(src), *vs = maybeShape(v);
  if (!ks || !vs || *ks == *vs) return v;
  UOpRef acc = UOpRef(v).cast(sumAccDType(v->dtype()));
  return UOpRef(reshape(reduceAxes(acc, Op::ADD, broadcastAxes(*ks, *vs)), *ks)).cast(v->dtype());
}

GradMap gradientMap(const UOp *root, const UOp *rootGrad, const std::unordered_set<const UOp *> &targets) {
  // _deepwalk: the nodes on a path to a target; nothing flows through DETACH
  ToposortOptions o;
  o.enterCalls = false;
  std::vector<const UOp *> order = toposort(root, o);
  std::unordered_map<const UOp *, bool> inPath;
  std::vector<const UOp *> walk;
  for (const UOp *u : order) {
    bool p = false;
    for (const UOp *s : u->src())
      if (targets.count(s) || (inPath.count(s) && inPath[s])) p = true;
    inPath[u] = p;
    if (p && !u->is(Op::DETACH)) walk.push_back(u);
  }
  Context &ctx = root->context();
  GradMap grads{{root, rootGrad}};
  for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
    const UOp *t0 = *it;
    auto gi = grads.find(t0);
    if (gi == grads.end() || gi->second->is(Op::NOOP)) continue;
    const UOp *g = gi->second;
    if (t0->is(Op::GETTUPLE)) {
      // collect the outputs' gradients in a TUPLE on the FUNCTION
      const UOp *fn = t0->src(0);
      if (!fn->is(Op::FUNCTION) || !fn->src(0)->is(Op::TUPLE)) fail(t0, "GETTUPLE of a FUNCTION with a TUPLE body expected");
      size_t n = fn->src(0)->numSrc();
      if (!t0->arg().isInt() || t0->arg().getInt() < 0 || size_t(t0->arg().getInt()) >= n)
        fail(t0, "GETTUPLE index out of range: " + t0->arg().toString());
      size_t idx = size_t(t0->arg().getInt());
      std::vector<const UOp *> prev(n, noop(ctx));
      if (auto f = grads.find(fn); f != grads.end()) prev.assign(f->second->src().begin(), f->second->src().end());
      prev[idx] = prev[idx]->is(Op::NOOP) ? g : (UOpRef(prev[idx]) + UOpRef(g)).get();
      grads[fn] = ctx.get(Op::TUPLE, dtypes::Void, prev);
      continue;
    }
    Grads lg;
    if (t0->is(Op::FUNCTION)) {
      std::unordered_set<const UOp *> needed;
      for (const UOp *a : t0->src().subspan(1))
        if (targets.count(a) || (inPath.count(a) && inPath[a])) needed.insert(a);
      lg = functionGradient(t0, g, needed);
    } else {
      GradCtx gctx{g};
      RewriteEnv env(gctx);
      std::optional<Grads> r = gradientRules().rewrite(t0, env);
      if (env.error) throw ScheduleError(*env.error);
      if (!r) fail(t0, "failed to compute gradient for " + std::string(opName(t0->op())));
      lg = std::move(*r);
    }
    if (lg.size() < t0->numSrc()) lg.resize(t0->numSrc(), nullptr);
    for (size_t i = 0; i < t0->numSrc(); ++i) {
      const UOp *k = t0->src(i), *v = lg[i];
      if (!v) continue;
      v = fitShape(k, v);
      auto ki = grads.find(k);
      if (ki == grads.end() || ki->second->is(Op::NOOP)) {
        grads[k] = v;
      } else if (v->is(Op::TUPLE) && ki->second->is(Op::TUPLE)) {
        std::vector<const UOp *> merged;
        for (size_t j = 0; j < v->numSrc(); ++j) {
          const UOp *p = ki->second->src(j), *n = v->src(j);
          merged.push_back(p->is(Op::NOOP) ? n : n->is(Op::NOOP) ? p : (UOpRef(p) + UOpRef(n)).get());
        }
        grads[k] = ctx.get(Op::TUPLE, dtypes::Void, merged);
      } else {
        grads[k] = UOpRef(ki->second) + UOpRef(v);
      }
    }
  }
  return grads;
}

} // namespace

Result<std::vector<const UOp *>> computeGradients(const UOp *loss, std::span<const UOp *const> targets) {
  try {
    const IShape *ls = maybeShape(loss);
    if (!ls || !ls->empty()) return Diagnostic::at(loss, "the loss must be a scalar tensor, not " + loss->str());
    if (!loss->dtype().isFloat()) return Diagnostic::at(loss, "only float tensors have gradients (the loss is " + loss->str() + ")");
    for (const UOp *t : targets) {
      if (!t->dtype().isFloat()) return Diagnostic::at(t, "only float tensors have gradients (" + t->str() + ")");
      if (t->dtype().isWeak()) return Diagnostic::at(t, "cannot take a gradient with respect to a weak tensor (" + t->str() + ")");
      if (!maybeShape(t)) return Diagnostic::at(t, "cannot take a gradient with respect to an unshaped node (" + t->str() + ")");
    }
    std::unordered_set<const UOp *> set(targets.begin(), targets.end());
    GradMap grads = gradientMap(loss, constLike(loss, Value::floating(1.0)), set);
    std::vector<const UOp *> out;
    for (const UOp *t : targets) {
      auto it = grads.find(t);
      out.push_back(it != grads.end() && !it->second->is(Op::NOOP) ? it->second : constLike(t, Value::floating(0.0)));
    }
    return out;
  } catch (const ScheduleError &e) {
    return e.diag;
  }
}

} // namespace tgc
