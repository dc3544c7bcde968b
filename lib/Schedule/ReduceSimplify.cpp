//===- ReduceSimplify.cpp - remove ranges a REDUCE does not need -----------===//
//
// Mirrors tinygrad's pm_reduce_simplify (tinygrad/codegen/simplify.py):
// pm_reduce_unparented drops REDUCE ranges the reduced value does not use
// (an ADD over an unused range of size n is a multiply by n, a MUL a power),
// and reduce_collapse rewrites a sum over a range into a closed form when the
// summand's dependence on the range is arange-like (a masked constant), as
// in cumsum, argmax and one-hot indexing.
//
//===----------------------------------------------------------------------===//
#include "Schedule/RangeifyPasses.h"

#include "IR/Symbolic.h"

#include <algorithm>
#include <bit>
#include <unordered_map>
#include <unordered_set>

namespace tgc::rangeify {

static const UOp *reduceUnparented(const UOp *red) {
  std::string op = red->arg()[0].str();
  if (op != "ADD" && op != "MAX" && op != "MUL") return nullptr;
  RangeCache &rc = rangeCache();
  const std::vector<const UOp *> &used = rc.ranges(red->src(0));
  std::vector<const UOp *> parented{red->src(0)}, unparented;
  for (size_t i = 1; i < red->numSrc(); ++i) {
    const UOp *r = red->src(i);
    if (!r->is(Op::RANGE)) fail(red, "some reduce srcs aren't ranges");
    (std::find(used.begin(), used.end(), r) != used.end() ? parented : unparented).push_back(r);
  }
  if (unparented.empty()) return nullptr;
  UOpRef ret = parented.size() > 1 || red->dtype() != red->src(0)->dtype() ? UOpRef(red->withSrc(parented))
                                                                            : UOpRef(red->src(0));
  for (const UOp *r : unparented) {
    if (op == "ADD") ret = ret * UOpRef(r->src(0));
    if (op == "MUL") ret = ret.pow(r->src(0));
  }
  return ret;
}

// no RANGE in u's backward slice: every node knows the id span of the RANGEs below it
static bool noRange(const UOp *u) { return !u->hasRangeBelow(); }

const PatternMatcher &reduceUnparentedPM() {
  static const PatternMatcher pm({
      rule(UPat(Op::REDUCE).named("red"), [](Match &m) { return reduceUnparented(m["red"]); }),
  });
  return pm;
}

// ---- reduce_collapse ---------------------------------------------------------

namespace {
// The variable is a function of the dtype, the value range and the number
// alone, and the collapse asks for the same few again and again (every REDUCE
// over a buffer abstracts its loads to in0, in1, ... of the same range), while
// building its ParamArg is most of its cost: made once per key per Context.
struct VariableKey {
  DType dtype;
  bool isFloat;
  int64_t imin, imax;
  uint64_t fmin, fmax; // the bits: -0.0 and 0.0 print differently, NaN must equal itself
  size_t n;
  bool operator==(const VariableKey &) const = default;
  VariableKey(const UOp *s, size_t n) : dtype(s->dtype()), n(n) {
    const ValueRange &vr = s->vrange();
    isFloat = vr.isFloat, imin = vr.imin, imax = vr.imax;
    fmin = std::bit_cast<uint64_t>(vr.fmin), fmax = std::bit_cast<uint64_t>(vr.fmax);
  }
};
struct VariableKeyHash {
  size_t operator()(const VariableKey &k) const {
    size_t h = k.dtype.hash() ^ (k.n * 0x9e3779b97f4a7c15ULL);
    for (uint64_t w : {uint64_t(k.isFloat), uint64_t(k.imin), uint64_t(k.imax), k.fmin, k.fmax})
      h = (h ^ w) * 0x100000001b3ULL;
    return h;
  }
};
struct VariableMemo {
  std::unordered_map<VariableKey, const UOp *, VariableKeyHash> made;
};
} // namespace

static const UOp *makeVariable(const UOp *s, size_t n);

// A scalar variable standing for a subexpression the collapse must not look into.
static const UOp *variableLike(const UOp *s, size_t n) {
  VariableKey key(s, n);
  auto &made = s->context().analysis<VariableMemo>().made;
  if (auto it = made.find(key); it != made.end()) return it->second;
  const UOp *v = makeVariable(s, n);
  made.emplace(key, v);
  return v;
}

static const UOp *makeVariable(const UOp *s, size_t n) {
  ParamFields f;
  f.slot = -1;
  f.dtype = s->dtype();
  const ValueRange &vr = s->vrange();
  f.vminVmax = vr.isFloat ? Value::tuple({Value::floating(vr.fmin), Value::floating(vr.fmax)})
                          : s->dtype().isBool() ? Value::tuple({Value::boolean(vr.imin != 0), Value::boolean(vr.imax != 0)})
                                                : Value::tuple({Value::integer(vr.imin), Value::integer(vr.imax)});
  f.multipleOf = Value::integer(1);
  f.name = Value::string("in" + std::to_string(n));
  f.addrspace = Value::enumMember("AddrSpace", "ALU");
  Context &ctx = s->context();
  return ctx.get(Op::PARAM, s->dtype(), {shapeArg(ctx, {})}, f.toValue());
}

static UOpRef minimum(UOpRef a, UOpRef b) {
  auto [t, x] = broadcasted(a, b);
  DType dt = t.dtype() == x.dtype() ? t.dtype() : leastUpperDType({t.dtype(), x.dtype()});
  if (dt.isFloat()) return -((-t).alu(Op::MAX, {-x}));
  // the int inverse through XOR with (min+max), as tinygrad does
  int64_t k = dt.minInt() + int64_t(dt.maxInt());
  return (t ^ k).alu(Op::MAX, {x ^ k}) ^ k;
}

static const PatternMatcher &reduceCollapsePM() {
  auto reduceAdd = [](UPat body) {
    return UPat(Op::REDUCE).src({body, var("r")}).arg(Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(0)}));
  };
  auto reduceAddAny = [](UPat body) {
    return UPat(Op::REDUCE).src({body}).allowAnyLen().arg(Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(0)})).named("r");
  };
  static const PatternMatcher pm = reduceUnparentedPM() + PatternMatcher({
      // lift x+y out of reduce on lt
      rule((var("x") + var("y")).orCasted() < var("c"),
           [](Match &m) -> const UOp * {
             if (!noRange(m["y"]) || !noRange(m["c"])) return nullptr;
             return m["x"] < (m["c"] - m["y"]);
           }),
      // lift x*y out of reduce
      rule((var("x") * var("y")) < var("c"),
           [](Match &m) -> const UOp * {
             UOpRef y = m["y"];
             if (!noRange(y) || !noRange(m["c"]) || !y.dtype().isInt() || y.vmin() <= 0) return nullptr;
             return m["x"] < ((m["c"] + y - 1) / y);
           }),
      // sum over r in [0,N) of [lower<=r<upper]*val -> clamp(min(upper,N) - max(lower,0), 0, N) * val
      rule(reduceAdd(UPat::any({(UPat(Op::RANGE).named("r") < var("upper")).where(var("val"), 0),
                                (UPat(Op::RANGE).named("r") < var("lower")).where(0, var("val")),
                                ((var("r") < var("lower")).logicalNot() & (UPat(Op::RANGE).named("r") < var("upper")))
                                    .where(var("val"), 0)})),
           [](Match &m) -> const UOp * {
             UOpRef r = m["r"], val = m["val"], lower = m.get("lower"), upper = m.get("upper");
             if (!noRange(val)) return nullptr;
             UOpRef n = r->src(0);
             UOpRef hi = upper ? minimum(upper, n) : n;
             UOpRef lo = lower ? lower.maximum(0) : r.constLike(0);
             return minimum((hi - lo).maximum(0), n) * val;
           }),
      rule(reduceAddAny(var("cond").where(var("x"), UPat(Op::CONST).arg(Value::invalid()).named("i"))),
           [](Match &m) -> const UOp * {
             if (!noRange(m["cond"])) return nullptr;
             const UOp *r = m["r"];
             std::vector<const UOp *> src{m["x"]};
             src.insert(src.end(), r->src().begin() + 1, r->src().end());
             return m["cond"].where(r->withSrc(src), m["i"]);
           }),
      rule(reduceAddAny(var("x") + var("y")),
           [](Match &m) -> const UOp * {
             const UOp *r = m["r"];
             std::vector<const UOp *> sx{m["x"]}, sy{m["y"]};
             sx.insert(sx.end(), r->src().begin() + 1, r->src().end());
             sy.insert(sy.end(), r->src().begin() + 1, r->src().end());
             return UOpRef(mk(Op::REDUCE, sx, r->arg())) + UOpRef(mk(Op::REDUCE, sy, r->arg()));
           }),
      // AND on WHERE
      rule(reduceAddAny((UPat(Op::PARAM).named("x") & var("y")).where(var("c"), 0)),
           [](Match &m) -> const UOp * {
             const UOp *r = m["r"];
             std::vector<const UOp *> s{m["y"].where(m["c"], 0)};
             s.insert(s.end(), r->src().begin() + 1, r->src().end());
             return UOpRef(mk(Op::REDUCE, s, r->arg())) * m["x"];
           }),
      // MUL casted bool
      rule(var("x") * var("gate", dtypes::Bool).cast(),
           [](Match &m) { return m["gate"].where(m["x"], 0); }),
  }) + symbolic();
  return pm;
}

// The ops through which reduce_collapse can take a range out of a sum.
static constexpr OpSet kCollapsibleOps =
    group::Comparison | OpSet{Op::WHERE, Op::AND, Op::OR, Op::XOR, Op::MAX, Op::CAST};

// reduce_collapse: abstract everything not depending on the range into
// variables, collapse the sum symbolically, and substitute back.
static const UOp *reduceCollapse(const UOp *red, const UOp *u) {
  RangeCache &rc = rangeCache();
  for (size_t i = 1; i < red->numSrc(); ++i) {
    const UOp *r = red->src(i);
    std::vector<const UOp *> included = toposortGated(u, [&](const UOp *x) {
      const std::vector<const UOp *> &rs = rc.ranges(x);
      return std::find(rs.begin(), rs.end(), r) != rs.end();
    });
    for (const UOp *x : included)
      if (x->is(Op::STORE) || x->is(Op::REDUCE)) return nullptr;
    // What removes r below is a rule on a comparison, a gate or a masked
    // cast of r, or r falling out of the summand. The summand is already at
    // symbolic's fixed point (a post-order rewrite), and abstracting its
    // r-free parts into variables of the same range only hides structure, so
    // without such a node r stays: most sums (matmuls, means) stop here.
    if (std::none_of(included.begin(), included.end(), [](const UOp *x) { return x->isIn(kCollapsibleOps); }))
      return nullptr;
    std::unordered_set<const UOp *> inc(included.begin(), included.end());
    std::unordered_map<const UOp *, const UOp *> replaces, back;
    for (const UOp *x : included)
      for (const UOp *s : x->src()) {
        if (inc.count(s) || replaces.count(s) || s->is(Op::CONST) || s->is(Op::PARAM) || s->is(Op::BUFFER)) continue;
        const UOp *v = variableLike(s, replaces.size());
        replaces[s] = v;
        back[v] = s;
      }
    static const Value sumArg = Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(0)});
    const UOp *fx = mk(Op::REDUCE, {substituteUnified(u, replaces), r}, sumArg);
    const UOp *s = rewrite(fx, reduceCollapsePM());
    if (!noRange(s)) return nullptr;
    u = substituteUnified(s, back);
  }
  return u;
}

const PatternMatcher &reduceSimplify() {
  static const PatternMatcher pm = reduceUnparentedPM() + PatternMatcher({
      rule(UPat(Op::REDUCE).src({var("u")}).allowAnyLen()
               .arg(Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(0)})).named("red"),
           [](Match &m) { return reduceCollapse(m["red"], m["u"]); }),
  });
  return pm;
}

void prepareReduceRules() {
  reduceSimplify();
  reduceCollapsePM();
}

} // namespace tgc::rangeify
