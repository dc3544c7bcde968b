//===- Symbolic.cpp - tinygrad's symbolic (phase 2) and UOp.simplify -------===//
//
// The `commutative` canonicalization and the phase-2 rules of tinygrad's
// symbolic (tinygrad/uop/symbolic.py): boolean algebra, combining like terms,
// where folding, range-based constant folding, max folding, two-stage
// constant folding, comparison folding (lt_folding, canonicalize_simplex),
// range identities, cast narrowing and AFTER/END cleanup.
//
//===----------------------------------------------------------------------===//
#include "IR/Symbolic.h"

#include "IR/ExecAlu.h"
#include "IR/GraphRewrite.h"
#include "IR/SymbolicRules.h"

#include <algorithm>
#include <limits>

namespace tgc {

using namespace sym;

namespace {

double lo(const ValueRange &r) { return r.isFloat ? r.fmin : double(r.imin); }
double hi(const ValueRange &r) { return r.isFloat ? r.fmax : double(r.imax); }

// A range bound that hit the int64 saturation is not a real value.
bool saturated(int64_t v) {
  return v == std::numeric_limits<int64_t>::min() || v == std::numeric_limits<int64_t>::max();
}

// x.const_like(x.vmin) when vmin == vmax
const UOp *constIfFixed(UOpRef x) {
  const ValueRange &r = x->vrange();
  if (r.isFloat) return r.fmin == r.fmax ? x.constLike(Value::floating(r.fmin)).get() : nullptr;
  if (r.imin != r.imax || saturated(r.imin)) return nullptr;
  return x.constLike(x.dtype().isBool() ? Value::boolean(r.imin != 0) : Value::integer(r.imin));
}

// fold_where_closure: in cond.where(t, f), cond is True within t and False within f.
const UOp *foldWhereClosure(Match &m) {
  UOpRef cond = m["cond"], t = m["t"], f = m["f"];
  if (!inBoolSlice(cond, t) && !inBoolSlice(cond, f)) return nullptr;
  // INDEX gates belong to the valid/store-coalescing machinery
  for (UOpRef u : {cond, t, f})
    if (opInBackwardSliceWithSelf(u, OpSet{Op::INDEX})) return nullptr;
  UOpRef tt = substitute(t, {{cond.get(), cond.constLike(true).get()}});
  UOpRef ff = substitute(f, {{cond.get(), cond.constLike(false).get()}});
  return cond.where(tt, ff);
}

// lt_folding: factor the gcd of the terms out of `sum < c` when the other terms stay in [0, gcd).
const UOp *ltFolding(UOpRef x, int64_t c) {
  std::vector<UOpRef> p, np;
  for (UOpRef u : splitUOp(x, Op::ADD)) (constFactor(u) == 1 ? p : np).push_back(u);
  if (np.empty()) return nullptr;
  std::vector<int64_t> fs;
  for (UOpRef u : np) fs.push_back(constFactor(u));
  fs.push_back(c);
  int64_t d = pyGcd(fs);
  if (d <= 1) return nullptr;
  __int128 sumMin = 0, sumMax = 0;
  for (UOpRef u : p) sumMin += u.vmin(), sumMax += u.vmax();
  if (!(0 <= sumMin && sumMax < d)) return nullptr;
  UOpRef q = divides(usum(np), d);
  if (!q) return nullptr;
  return q < floorDiv(c, d);
}

// canonicalize_simplex: sum(a_i*x_i) with a_i > 0 and x_i >= 0 is > 0 iff sum(x_i) > 0.
UOpRef canonicalizeSimplex(UOpRef X) {
  bool changed = false;
  std::vector<UOpRef> ret;
  for (UOpRef u : splitUOp(X, Op::ADD)) {
    if (u->is(Op::MUL) && u->numSrc() == 2 && isIntConst(u->src(1)) && UOpRef(u->src(1)).val() > 0) {
      changed = true;
      u = u->src(0);
    }
    if (!(u->isIn(group::Irreducible) && u.vmin() >= 0)) return nullptr;
    ret.push_back(u);
  }
  return changed ? usum(ret) : nullptr;
}

// tinygrad's true division a / b on UOps.
UOpRef trueDiv(UOpRef a, UOpRef b) {
  auto [x, y] = broadcasted(a, b);
  if (x.dtype().isInt() || x.dtype().isBool()) x = x.cast(dtypes::defaultFloat());
  return x.alu(Op::MUL, {y.reciprocal()});
}

bool overflows(UOpRef u, DType dt) {
  const ValueRange &r = u->vrange();
  if (r.isFloat) return r.fmin < double(dt.minInt()) || double(dt.maxInt()) < r.fmax;
  return r.imin < dt.minInt() || (r.imax > 0 && uint64_t(r.imax) > dt.maxInt());
}

} // namespace

const PatternMatcher &pmCommutative() {
  static const PatternMatcher pm({
      // ** commutative flipping (index math only) **
      rule(UPat(group::Commutative).dtype(dtypes::WeakInt).named("x"),
           [](Match &m) -> const UOp * {
             UOpRef x = m["x"];
             if (x->numSrc() != 2 || tuplizeCompare(x->src(1), x->src(0)) >= 0) return nullptr;
             return x.withSrc({x->src(1), x->src(0)});
           }),
  });
  return pm;
}

std::vector<Rule> sym::symbolicPhase2Rules() {
  using namespace dtypes;
  auto xcc = [](Match &m) { return m["x"] * (m["c0"] + m["c1"]); };
  auto whereConstBranches = [](Match &m) {
    UOpRef t = m["t"], tt = m["tt"], f = m["f"], ff = m["ff"];
    return (t.isConst() && tt.isConst()) || (f.isConst() && ff.isConst());
  };
  std::vector<Rule> rules = {
      // ** boolean algebra **
      rule(var("x", Bool) | var("x", Bool).logicalNot(), [](Match &m) { return m["x"].constLike(true); }),
      // ** combine terms **
      rule(var("x") * cvar("c0") + var("x") * cvar("c1"), xcc),
      rule((var("y") + var("x") * cvar("c0")) + var("x") * cvar("c1"), [](Match &m) { return m["y"] + m["x"] * (m["c0"] + m["c1"]); }),
      rule(var("x") + var("x") * cvar("c"), [](Match &m) { return m["x"] * (m["c"] + 1); }),
      rule((var("y") + var("x")) + var("x") * cvar("c"), [](Match &m) { return m["y"] + m["x"] * (m["c"] + 1); }),
      rule((var("y") + var("x") * cvar("c")) + var("x"), [](Match &m) { return m["y"] + m["x"] * (m["c"] + 1); }),
      rule(var("x") + var("x"), [](Match &m) { return m["x"] * 2; }),
      rule((var("y") + var("x")) + var("x"), [](Match &m) { return m["y"] + m["x"] * 2; }),
      rule(fdiv(fdiv(var("x"), var("x2")), var("x3")),
           [](Match &m) -> const UOp * {
             if (m["x2"].get() == m["x3"].get()) return nullptr;
             return trueDiv(m["x"], m["x2"] * m["x3"]);
           }),
      rule(-1 * (var("x") + cvar("c")), [](Match &m) { return (-m["x"]) + (-m["c"]); }),
      rule(cvar("y") * (var("x", WeakInt) + cvar("c")), [](Match &m) { return (m["y"] * m["x"]) + (m["y"] * m["c"]); }),
      // ** where folding **
      rule(var("cond", Bool).logicalNot().where(var("t"), var("f")),
           [](Match &m) -> const UOp * {
             if (m["f"].isInvalid()) return nullptr;
             return m["cond"].where(m["f"], m["t"]);
           }),
      rule(var("cond", Bool).where(var("t"), var("f")), foldWhereClosure),
      // an alu of two wheres on the same condition combines when a branch pair is const
      rule(UPat(group::Binary).named("alu").src({var("c").where(var("t"), var("f")), var("c").where(var("tt"), var("ff"))}),
           [whereConstBranches](Match &m) -> const UOp * {
             if (!whereConstBranches(m)) return nullptr;
             Op op = m["alu"]->op();
             return m["c"].where(m["t"].alu(op, {m["tt"]}), m["f"].alu(op, {m["ff"]}));
           }),
      rule((var("y") + var("c").where(var("t"), var("f"))) + var("c").where(var("tt"), var("ff")),
           [whereConstBranches](Match &m) -> const UOp * {
             if (!whereConstBranches(m)) return nullptr;
             return m["y"] + m["c"].where(m["t"] + m["tt"], m["f"] + m["ff"]);
           }),
      // complementary zero branches under the same condition select directly
      rule(var("c").where(var("t"), 0) + var("c").where(0, var("f")), [](Match &m) { return m["c"].where(m["t"], m["f"]); }),
      // ALU/variable with vmin == vmax -> CONST
      rule(UPat(OpSet{Op::CMPLT, Op::CMPNE, Op::FLOORDIV, Op::FLOORMOD, Op::PARAM, Op::AFTER, Op::SPECIAL}).named("x"),
           [](Match &m) { return constIfFixed(m["x"]); }),
      rule(UPat(Op::RANGE).src({UPat(Op::CONST)}).named("x"), [](Match &m) { return constIfFixed(m["x"]); }),
      // ** max folding **
      rule((cvar("a") < var("b")).where(var("b"), cvar("c")),
           [](Match &m) -> const UOp * {
             return m["a"]->arg() == m["c"]->arg() || pyCompare(m["a"]->arg(), m["c"]->arg()) == 0 ? m["a"].maximum(m["b"]).get() : nullptr;
           }),
      rule((var("a") < cvar("b")).where(cvar("c"), var("a")),
           [](Match &m) -> const UOp * {
             return pyCompare(m["b"]->arg(), m["c"]->arg()) == 0 ? m["a"].maximum(m["b"]).get() : nullptr;
           }),
      rule(var("x").maximum(var("y")),
           [](Match &m) -> const UOp * {
             const ValueRange &x = m["x"]->vrange(), &y = m["y"]->vrange();
             if (lo(x) >= hi(y)) return m["x"];
             if (hi(x) <= lo(y)) return m["y"];
             return nullptr;
           }),
  };
  // ** two stage ALU folding **
  group::Associative.forEach([&](Op op) {
    rules.push_back(rule(var("x").alu(op, {cvar("c1")}).alu(op, {cvar("c2")}).named("f"), [](Match &m) {
      Op fop = m["f"]->op();
      return m["x"].alu(fop, {m["c1"].alu(fop, {m["c2"]})});
    }));
  });
  std::vector<Rule> more = {
      // (x//c1)//c2 -> x//(c1*c2) for c2>0
      rule((var("x") / cvar("c1")) / cvar("c2"),
           [](Match &m) -> const UOp * { return m["c2"].vmin() > 0 ? m["x"] / (m["c1"] * m["c2"]) : nullptr; }),
      // ** lt **
      // c0+x<c1 -> x<c1-c0
      rule((cvar("c0") + var("x", intOrWeakDTypes())) < cvar("c1"), [](Match &m) { return m["x"] < (m["c1"] - m["c0"]); }),
      // c0*x<c1 -> sign(c0)*x < ceil(c1/abs(c0))
      rule((cvar("c0") * var("x", WeakInt)) < cvar("c1"),
           [](Match &m) -> const UOp * {
             if (!isIntConst(m["c0"]) || !isIntConst(m["c1"])) return nullptr;
             int64_t c0 = m["c0"].val(), c1 = m["c1"].val();
             if (std::llabs(c0) <= 1) return nullptr;
             UOpRef x = c0 > 0 ? m["x"] : -m["x"];
             return x < -floorDiv(-c1, std::llabs(c0));
           }),
      // x//d<c -> x<c*d for d>0, and c*d<x for d<0
      rule((var("x", WeakInt) / cvar("d")) < cvar("c"),
           [](Match &m) -> const UOp * {
             if (!isIntConst(m["d"]) || !isIntConst(m["c"])) return nullptr;
             int64_t d = m["d"].val();
             auto cd = checkedMul(m["c"].val(), d);
             if (!cd || d == 0) return nullptr;
             return d > 0 ? m["x"] < *cd : m["x"] > *cd;
           }),
      // ** move add/mul consts to the end **
      rule((var("x") + cvar("c1")) + var("y"),
           [](Match &m) -> const UOp * { return m["y"].isConst() ? nullptr : (m["x"] + m["y"]) + m["c1"]; }),
      rule((var("x") * cvar("c1")) * var("y"),
           [](Match &m) -> const UOp * { return m["y"].isConst() ? nullptr : (m["x"] * m["y"]) * m["c1"]; }),
      // generic lt folding
      rule(var("x", WeakInt) < cvar("c"),
           [](Match &m) -> const UOp * {
             if (!isIntConst(m["c"]) || m["c"].val() <= 0) return nullptr;
             return ltFolding(m["x"], m["c"].val());
           }),
      rule(var("x", WeakInt) * -1 < var("y") * -1, [](Match &m) { return m["y"] < m["x"]; }),
      // a simplex with positive coefficients is > 0 iff the plain sum is (not x<1 means x>0)
      rule((var("x", WeakInt) < 1).ne(true),
           [](Match &m) -> const UOp * {
             UOpRef nx = canonicalizeSimplex(m["x"]);
             return nx ? (nx < 1).ne(true).get() : nullptr;
           }),
      // a range mod / div its own bound
      rule(UPat(Op::RANGE).srcAll(var("end")).named("r") % var("end"), [](Match &m) { return m["r"]; }),
      rule(UPat(Op::RANGE).srcAll(var("end")).named("r") / var("end"), [](Match &m) { return m["r"].constLike(0); }),
      // ** cast folding **
      // an intermediate cast that does not narrow can be skipped
      rule(var("x").cast().named("a").cast().named("b"),
           [](Match &m) -> const UOp * {
             return canLosslessCast(m["x"].dtype(), m["a"].dtype()) ? m["x"].cast(m["b"].dtype()).get() : nullptr;
           }),
      rule(var("x", intOrWeakDTypes()).cast(intOrWeakDTypes()).named("a").cast().named("b"),
           [](Match &m) -> const UOp * {
             DType a = m["a"].dtype();
             UOpRef x = m["x"];
             if (a.minInt() <= x.vmin() && (x.vmax() < 0 || uint64_t(x.vmax()) <= a.maxInt())) return x.cast(m["b"].dtype());
             return nullptr;
           }),
      // do math in int instead of long when nothing overflows int32; weak consts stay weak
      rule(UPat(group::Binary).src({var("x", {Int64, WeakInt}), var("y", {Int64, WeakInt})}).named("u"),
           [](Match &m) -> const UOp * {
             UOpRef u = m["u"], x = m["x"], y = m["y"];
             if (!(x.dtype() == Int64 || y.dtype() == Int64)) return nullptr;
             for (UOpRef v : {u, x, y})
               if (overflows(v, Int32)) return nullptr;
             auto narrow = [](UOpRef v) { return v.isConst() ? makeConst(v.ctx(), v->arg()) : v.cast(Int32); };
             return narrow(x).alu(u->op(), {narrow(y)}).cast(u.dtype());
           }),
      rule((var("x", WeakInt) + cvar("c")).cast({Int8, Int16, Int32, Int64}).named("cast"),
           [](Match &m) { return m["x"].cast(m["cast"].dtype()) + m["cast"].constLike(m["c"]->arg()); }),
      // only RANGE/STORE/CALL/... are effects: other AFTER deps are replaced by their srcs
      rule(UPat(Op::AFTER).named("x"),
           [](Match &m) -> const UOp * {
             UOpRef x = m["x"];
             if (x->numSrc() == 0) return nullptr;
             const OpSet effects{Op::RANGE, Op::STORE, Op::CALL, Op::FUNCTION, Op::BARRIER, Op::END, Op::LINEAR, Op::STAGE};
             std::vector<const UOp *> src{x->src(0)};
             auto add = [&](const UOp *y) {
               if (std::find(src.begin() + 1, src.end(), y) == src.end()) src.push_back(y);
             };
             for (size_t i = 1; i < x->numSrc(); ++i) {
               const UOp *y = x->src(i);
               if (y->isIn(effects)) add(y);
               else
                 for (const UOp *s : y->src()) add(s);
             }
             return x.withSrc(std::move(src));
           }),
      // AFTER/END with one src is that src
      rule(UPat(OpSet{Op::AFTER, Op::END}).src({var("s")}), [](Match &m) { return m["s"]; }),
  };
  for (auto &r : more) rules.push_back(std::move(r));
  return rules;
}

const PatternMatcher &symbolic() {
  static const PatternMatcher pm =
      symbolicSimple() + pmCommutative() + PatternMatcher(symbolicPhase2Rules()) + divAndModSymbolic();
  return pm;
}

Result<const UOp *> simplify(const UOp *u) {
  if (u->is(Op::CONST)) return u;
  return graphRewritePure(u, symbolic());
}

} // namespace tgc
