//===- DivAndMod.cpp - tinygrad's div_and_mod_symbolic and recombination ---===//
//
// The FLOORDIV/FLOORMOD folding of tinygrad/uop/divandmod.py
// (fold_divmod_general and the two fast rules), and symbolic.py's
// fold_add_divmod_recombine, which puts (x%c)*m + (x//c)*(c*m) back together.
// Arithmetic on Python ints is done in int64 with overflow checks: a rule
// whose constants would leave int64 declines instead of wrapping.
//
//===----------------------------------------------------------------------===//
#include "IR/ExecAlu.h"
#include "IR/Symbolic.h"
#include "IR/SymbolicRules.h"

#include <algorithm>
#include <set>

namespace tgc {

using namespace sym;

namespace {

using Err = std::optional<Diagnostic>;

// u is a well-formed binary `op` node (hostile input may have other src counts).
bool isBinary(const UOp *u, Op op) { return u->is(op) && u->numSrc() == 2; }

// _quotient_base: the B with q == B//div and B%div == base%div, or null.
UOpRef quotientBase(const UOp *q0, const UOp *base, int64_t div) {
  auto [q, s] = popConst(q0);
  auto [num, a] = popConst(base);
  if (!isBinary(q, Op::FLOORDIV) || !isIntConst(q->src(1))) return nullptr;
  int64_t qd = UOpRef(q->src(1)).val(), D;
  if (div > 0 && isBinary(num, Op::FLOORDIV) && isIntConst(num->src(1)) && checkedMul(UOpRef(num->src(1)).val(), div) == qd) {
    int64_t c = UOpRef(num->src(1)).val();
    auto ac = checkedMul(a, c);
    if (!ac) return nullptr;
    num = num->src(0), a = *ac, D = qd;
  } else if (qd == div) {
    D = div;
  } else {
    return nullptr;
  }
  auto [x, xa] = popConst(num);
  auto [p, pa] = popConst(q->src(0));
  if (p.get() != x.get() || D == 0) return nullptr;
  auto t0 = checkedAdd(xa, a);
  if (!t0) return nullptr;
  auto t = checkedAdd(*t0, -pa);
  if (!t || floorMod(*t, D) != 0) return nullptr;
  int64_t k = floorDiv(*t, D) - s;
  if (k == 0) return base;
  auto kd = checkedMul(k, div);
  if (!kd) return nullptr;
  return UOpRef(base) - *kd;
}

} // namespace

const UOp *sym::foldAddDivmodRecombine(const UOp *x) {
  std::vector<UOpRef> terms = splitUOp(x, Op::ADD);
  for (size_t i = 0; i < terms.size(); ++i) {
    auto [mod, mul] = popConst(terms[i], Op::MUL);
    if (!isBinary(mod, Op::FLOORMOD) || !isIntConst(mod->src(1))) continue;
    UOpRef base = mod->src(0);
    int64_t div = UOpRef(mod->src(1)).val();
    auto scaleWanted = checkedMul(div, mul);
    if (!scaleWanted) continue;
    for (size_t j = 0; j < terms.size(); ++j) {
      auto [q, scale] = popConst(terms[j], Op::MUL);
      if (i == j || scale != *scaleWanted) continue;
      std::vector<const UOp *> rest;
      for (size_t k = 0; k < terms.size(); ++k)
        if (k != i && k != j) rest.push_back(terms[k]);
      if (UOpRef b = quotientBase(q, base, div)) return (b * mul).usum(rest);
      if (isBinary(q, Op::FLOORMOD) && isIntConst(q->src(1)) && UOpRef(q->src(1)).val() > 0) {
        int64_t d = UOpRef(q->src(1)).val();
        auto dd = checkedMul(div, d);
        if (!dd) continue;
        if (UOpRef b = quotientBase(q->src(0), base, div)) return ((b % *dd) * mul).usum(rest);
      }
    }
  }
  return nullptr;
}

namespace {

// The iteration order of a CPython set of small non-negative ints built by
// inserting `xs` in order (open addressing on hash(n) == n). fold_divmod_general
// iterates such a set, and ties between its candidates go to the first one.
std::vector<int64_t> pySetOrder(const std::vector<int64_t> &xs) {
  std::vector<int64_t> table(8, -1);
  size_t used = 0;
  auto insertClean = [](std::vector<int64_t> &t, int64_t v) {
    size_t mask = t.size() - 1, i = size_t(v) & mask;
    uint64_t perturb = uint64_t(v);
    while (true) {
      size_t probes = (i + 9 <= mask) ? 9 : 0;
      for (size_t p = 0; p <= probes; ++p)
        if (t[i + p] == -1) {
          t[i + p] = v;
          return;
        }
      perturb >>= 5;
      i = (i * 5 + 1 + perturb) & mask;
    }
  };
  for (int64_t v : xs) {
    if (std::find(table.begin(), table.end(), v) != table.end()) continue;
    insertClean(table, v);
    ++used;
    size_t mask = table.size() - 1;
    if (used * 5 >= mask * 3) {
      size_t minused = used * 4, size = 8;
      while (size <= minused) size <<= 1;
      std::vector<int64_t> bigger(size, -1);
      for (int64_t e : table)
        if (e != -1) insertClean(bigger, e);
      table = std::move(bigger);
    }
  }
  std::vector<int64_t> out;
  for (int64_t e : table)
    if (e != -1) out.push_back(e);
  return out;
}

// bool(k > 0) for a UOp k: decided by simplification (tinygrad's resolve);
// an undecided comparison counts as false.
bool provablyPositive(UOpRef k, Err &err) {
  auto s = simplify(0 < k);
  if (!s) {
    err = s.error();
    return false;
  }
  return (*s)->is(Op::CONST) && (*s)->arg() == Value::boolean(true);
}

// fold_divmod_general reads nothing but its node, and the rewrites ask it
// again for the same node (a rebuilt parent re-offers its unchanged srcs, the
// divisor search re-asks for x//div): the verdict is kept per node.
struct DivmodVerdict {
  UOpRef result;
  Err err;
};
struct DivmodMemo {
  PtrMap<DivmodVerdict> verdicts{256};
};

UOpRef computeFoldDivmod(const UOp *dNode, Err &err);

UOpRef foldDivmodGeneral(const UOp *dNode, Err &err) {
  PtrMap<DivmodVerdict> &memo = dNode->context().analysis<DivmodMemo>().verdicts;
  if (const DivmodVerdict *done = memo.find(dNode)) {
    err = done->err;
    return done->result;
  }
  Err mine;
  UOpRef r = computeFoldDivmod(dNode, mine);
  memo.insert(dNode, DivmodVerdict{r, mine});
  err = std::move(mine);
  return r;
}

// One fold_divmod_general question, x // y or x % y, put to tinygrad's rules
// in its order. A rule answers with a verdict (the rewrite, or null: none,
// and no later rule is tried) or with nullopt: not its case, the next rule
// is tried. A rule that fails sets err and answers null.
class DivmodFold {
public:
  DivmodFold(const UOp *dNode, Err &err)
      : d(dNode), x(dNode->src(0)), y(dNode->src(1)), isMod(dNode->is(Op::FLOORMOD)), ctx(d.ctx()), err(err) {}
  UOpRef run();

private:
  using Verdict = std::optional<UOpRef>;
  static Verdict none() { return UOpRef(); }
  Verdict failed(Err e) {
    err = std::move(e);
    return none();
  }
  Verdict constantDivisor();
  Verdict nestedDiv();
  Verdict removeNestedMod();
  bool splitTerms();
  Verdict congruence();
  Verdict gcdWithRemainder();
  Verdict nestByFactor();
  std::optional<std::pair<size_t, UOpRef>> nestedBy(int64_t div);
  Verdict commonGcd();
  UOpRef factorRemainder();

  UOpRef d, x, y;
  bool isMod;
  Context &ctx;
  Err &err;
  // x without its constant (xPeeled + cst), and its addends.
  UOpRef xPeeled;
  int64_t cst = 0;
  std::vector<UOpRef> uopsNoConst;
  // A constant divisor c > 0: each addend is factors[i] * terms[i].
  int64_t c = 0;
  std::vector<UOpRef> terms;
  std::vector<int64_t> factors;
};

UOpRef DivmodFold::run() {
  if (y.vmin() == 0 && y.vmax() == 0) {
    err = Diagnostic::at(d, std::string(isMod ? "Mod" : "Division") + " by zero trying to rewrite " + d->str());
    return nullptr;
  }
  // x//y is a constant
  UOpRef xdiv = x / y;
  if (xdiv.vmin() == xdiv.vmax()) return isMod ? x - xdiv.vmin() * y : xdiv.constLike(xdiv.vmin());
  // a PARAM that is a multiple of the divisor
  if (x->is(Op::PARAM) && isIntConst(y)) {
    const Value *mo = x->arg().field("multiple_of");
    if (mo && mo->isInt() && y.val() != 0 && floorMod(mo->getInt(), y.val()) == 0) return isMod ? d.constLike(0) : nullptr;
  }
  std::tie(xPeeled, cst) = popConst(x);
  uopsNoConst = splitUOp(xPeeled, Op::ADD);
  if (isIntConst(y) && y.val() > 0)
    if (Verdict v = constantDivisor()) return *v;
  // ** variable denominator / fallback rules **
  if (Verdict v = commonGcd()) return *v;
  return factorRemainder();
}

// The rules for a constant divisor c > 0.
DivmodFold::Verdict DivmodFold::constantDivisor() {
  c = y.val();
  if (Verdict v = nestedDiv()) return v;
  if (Verdict v = removeNestedMod()) return v;
  if (!splitTerms()) return none();
  if (Verdict v = congruence()) return v;
  if (Verdict v = gcdWithRemainder()) return v;
  return nestByFactor();
}

// nested_div: (x%(k*c))//c -> (x//c)%k
DivmodFold::Verdict DivmodFold::nestedDiv() {
  if (isMod || !isBinary(x, Op::FLOORMOD)) return std::nullopt;
  UOpRef k = divides(x->src(1), c);
  if (!k) return std::nullopt;
  if (provablyPositive(k, err)) return (UOpRef(x->src(0)) / y) % k;
  return err ? none() : std::nullopt;
}

// remove_nested_mod in a sum: (a%4 + b)%2 -> (a+b)%2
DivmodFold::Verdict DivmodFold::removeNestedMod() {
  if (!isMod) return std::nullopt;
  std::vector<UOpRef> newXs;
  bool changed = false;
  for (UOpRef u : uopsNoConst) {
    if (isBinary(u, Op::FLOORMOD) && divides(u->src(1), c)) u = u->src(0), changed = true;
    newXs.push_back(u);
  }
  if (!changed) return std::nullopt;
  return (usum(newXs) + cst) % y;
}

// Each addend as a constant factor times a term; false when one is not.
bool DivmodFold::splitTerms() {
  for (UOpRef u : uopsNoConst) {
    int64_t f = constFactor(u);
    UOpRef t = divides(u, f);
    if (!t) return false;
    terms.push_back(t);
    factors.push_back(f);
  }
  return true;
}

// fold_divmod_congruence: x is congruent to an expression within one period of c
DivmodFold::Verdict DivmodFold::congruence() {
  std::vector<std::vector<int64_t>> remChoices;
  for (int64_t f : factors) {
    int64_t r = floorMod(f, c);
    if (r * 2 == c || terms.size() == 1) remChoices.push_back({r, r - c});
    else remChoices.push_back({std::llabs(r - c) < std::llabs(r) ? r - c : r});
  }
  // tinygrad enumerates every combination; with many tied terms that is
  // exponential (tinygrad would not finish), so stop after kMaxChoices.
  constexpr size_t kMaxChoices = 256;
  std::vector<size_t> pick(terms.size(), 0);
  for (size_t tried = 0; tried < kMaxChoices; ++tried) {
    std::vector<UOpRef> parts;
    for (size_t i = 0; i < terms.size(); ++i) parts.push_back(remChoices[i][pick[i]] * terms[i]);
    UOpRef rem = pySum(ctx, parts) + floorMod(cst, c);
    if (floorDiv(rem.vmin(), c) == floorDiv(rem.vmax(), c)) {
      int64_t m = floorDiv(rem.vmin(), c);
      if (isMod) {
        auto mc = checkedMul(m, c);
        return mc ? rem - *mc : UOpRef();
      }
      std::vector<UOpRef> quo;
      for (size_t i = 0; i < terms.size(); ++i) quo.push_back(floorDiv(factors[i] - remChoices[i][pick[i]], c) * terms[i]);
      return pySum(ctx, quo) + floorDiv(cst, c) + m;
    }
    // itertools.product order: the last term's choice varies fastest
    size_t i = pick.size();
    while (i > 0 && ++pick[i - 1] == remChoices[i - 1].size()) pick[--i] = 0;
    if (i == 0) break;
  }
  return std::nullopt;
}

// gcd_with_remainder: factor the common gcd out of the numerator
DivmodFold::Verdict DivmodFold::gcdWithRemainder() {
  std::vector<int64_t> fc = factors;
  fc.push_back(c);
  int64_t g = pyGcd(fc);
  if (g <= 1) return std::nullopt;
  UOpRef divided = divides(xPeeled, g);
  if (!divided) return none();
  auto s = simplify(divided);
  if (!s) return failed(s.error());
  UOpRef newX = UOpRef(*s) + floorMod(floorDiv(cst, g), c / g);
  if (newX.vmin() < 0) return std::nullopt;
  if (isMod) return newX % (c / g) * g + floorMod(cst, g);
  return newX / (c / g) + floorDiv(cst, c);
}

// nest_by_factor: x//c -> (x//f)//(c//f), x%c -> (x//f%(c//f))*f + x%f,
// over the factors f of c among the addends': the smallest result.
DivmodFold::Verdict DivmodFold::nestByFactor() {
  std::vector<int64_t> divsIn;
  for (size_t i = 0; i < uopsNoConst.size(); ++i) {
    int64_t f = factors[i], af = std::llabs(f);
    if (!uopsNoConst[i]->is(Op::CONST) && 1 < af && af < c && floorMod(c, f) == 0) divsIn.push_back(af);
  }
  std::optional<std::pair<size_t, UOpRef>> best;
  for (int64_t div : pySetOrder(divsIn)) {
    auto r = nestedBy(div);
    if (err) return none();
    if (r && (!best || r->first < best->first)) best = r;
  }
  if (best) return best->second;
  return std::nullopt;
}

// The rewrite nested by factor `div` and its rank (tinygrad ranks the
// division candidates by the inner result), or nullopt.
std::optional<std::pair<size_t, UOpRef>> DivmodFold::nestedBy(int64_t div) {
  UOpRef newxs = foldDivmodGeneral(x / div, err);
  if (err || !newxs) return std::nullopt;
  if (!isMod) {
    UOpRef r = newxs / (c / div);
    return std::pair{backwardSliceSize(newxs), r};
  }
  if (x.vmin() < 0 || newxs.vmin() < 0) return std::nullopt;
  std::vector<UOpRef> bParts;
  for (size_t i = 0; i < terms.size(); ++i)
    if (int64_t fm = floorMod(factors[i], div)) bParts.push_back(fm * terms[i]);
  if (floorMod(cst, div)) bParts.push_back(x.constLike(floorMod(cst, div)));
  UOpRef b = bParts.empty() ? x.constLike(0) : usum(bParts);
  if (b.vmin() < 0 || b.vmax() >= div) return std::nullopt;
  UOpRef r = (newxs % x.ufix(Value::integer(c / div))) * div + b;
  return std::pair{backwardSliceSize(r), r};
}

// x and y over their common gcd, when it is not 1.
DivmodFold::Verdict DivmodFold::commonGcd() {
  std::vector<UOpRef> withY = splitUOp(x, Op::ADD);
  withY.push_back(y);
  auto g = simplify(gcd(withY));
  if (!g) return failed(g.error());
  UOpRef gc = *g;
  if (isIntConst(gc) && gc.val() == 1) return std::nullopt;
  UOpRef xq = divideExact(x, gc), yq = divideExact(y, gc);
  if (!xq || !yq) return none();
  UOpRef ret = xq.alu(d->op(), {yq});
  return isMod ? ret * gc : ret;
}

// factor_remainder: (d*x+y)//d -> x+y//d
UOpRef DivmodFold::factorRemainder() {
  if (y.vmin() < 0 || x.vmin() < 0) return nullptr;
  std::vector<UOpRef> quo, rem;
  for (UOpRef u : splitUOp(x, Op::ADD)) {
    if (UOpRef q = divideExact(u, y)) {
      quo.push_back(q);
      continue;
    }
    if (isIntConst(y) && y.val() != 0) {
      int64_t f = constFactor(u);
      if (floorMod(f, y.val()) != f) {
        UOpRef t = divides(u, f);
        if (!t) return nullptr;
        rem.push_back(t * floorMod(f, y.val()));
        quo.push_back(isMod ? u.constLike(0) : t * floorDiv(f, y.val()));
        continue;
      }
    }
    rem.push_back(u);
  }
  if (quo.empty()) return nullptr;
  UOpRef newX = pySum(ctx, rem) + x.constLike(0);
  if (newX.vmin() < 0) return nullptr;
  return isMod ? newX % y : newX / y + pySum(ctx, quo);
}

UOpRef computeFoldDivmod(const UOp *dNode, Err &err) {
  if (dNode->numSrc() != 2) return nullptr; // malformed: the verifier reports it
  return DivmodFold(dNode, err).run();
}

} // namespace

const PatternMatcher &divAndModSymbolic() {
  static const PatternMatcher pm({
      // (x//c+a)//d -> (x+a*c)//(c*d) for d>0
      rule((var("x") / cvar("c") + cvar("a")) / cvar("d"),
           [](Match &m) -> const UOp * {
             if (m["d"].vmin() <= 0) return nullptr;
             return (m["x"] + m["a"] * m["c"]) / (m["c"] * m["d"]);
           }),
      // (x+c)//d -> (x+c%d)//d + c//d ; (x+c)%d -> (x+c%d)%d
      rule(UPat(OpSet{Op::FLOORDIV, Op::FLOORMOD}).src({var("x", dtypes::WeakInt) + cvar("c"), cvar("d")}).named("n"),
           [](Match &m) -> const UOp * {
             UOpRef c = m["c"], d = m["d"];
             if (!isIntConst(c) || !isIntConst(d) || d.val() == 0) return nullptr;
             int64_t cm = floorMod(c.val(), d.val());
             if (cm == c.val()) return nullptr;
             if (m["n"]->is(Op::FLOORDIV)) return (m["x"] + cm) / d + floorDiv(c.val(), d.val());
             return (m["x"] + cm) % d;
           }),
      rule(UPat(OpSet{Op::FLOORDIV, Op::FLOORMOD}).dtype(dtypes::WeakInt).named("d"),
           [](Match &m) -> const UOp * {
             Err err;
             UOpRef r = foldDivmodGeneral(m["d"], err);
             if (err) return m.fail(*err);
             return r;
           }),
  });
  return pm;
}

} // namespace tgc
