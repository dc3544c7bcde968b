//===- SimplifyValid.cpp - simplification under a valid condition ---------===//
//
// tinygrad's "simplify_valid" aside of symbolic.py: parse_valid,
// uop_given_valid, simplify_valid and gated_given_valid (pm_simplify_valid),
// and drop_and_clauses (pm_drop_and_clauses). Given that a gate like
// `(r >= 1) & (r < 5)` holds, the gated index (and the later clauses of the
// gate) are simplified with each constrained expression replaced by a fresh
// variable of the tightened range; this is what folds the masks of PAD and
// SHRINK away in rangeify.
//
//===----------------------------------------------------------------------===//
#include "IR/Symbolic.h"
#include "IR/SymbolicRules.h"

#include <algorithm>

namespace tgc {

using namespace sym;

namespace {

struct ParsedValid {
  UOpRef expr;
  bool isUpper; ///< expr <= c (else expr >= c)
  int64_t c;
};

// parse_valid: X <= c or X >= c from one clause of a valid.
std::optional<ParsedValid> parseValid(UOpRef v) {
  if (v->numSrc() != 2) return std::nullopt;
  if (v->is(Op::CMPNE) && isIntConst(v->src(1)) && UOpRef(v->src(1)).val() == 1 && v->src(0)->is(Op::CMPLT) &&
      v->src(0)->numSrc() == 2 && v->src(0)->src(0)->dtype().isInt())
    return ParsedValid{v->src(0)->src(0), false, UOpRef(v->src(0)->src(1)).vmin()}; // (X < c) != True: X >= c
  if (v->is(Op::CMPLT) && v->src(0)->dtype().isInt()) {
    if (isIntConst(v->src(0))) return ParsedValid{v->src(1), false, UOpRef(v->src(0)).val() + 1}; // c < X: X >= c+1
    return ParsedValid{v->src(0), true, UOpRef(v->src(1)).vmax() - 1};                             // X < c: X <= c-1
  }
  return std::nullopt;
}

// UOp.variable(name, lo, hi, dtype, param=True): the stand-in for a constrained expression.
UOpRef fakeVariable(Context &c, int i, int64_t lo, int64_t hi, DType dt) {
  Value arg = Value::object(
      "ParamArg", {"slot", "dtype", "vmin_vmax", "multiple_of", "name", "addrspace", "axis", "device", "volatile"},
      {Value::integer(-1), Value::dtype(dt), Value::tuple({Value::integer(lo), Value::integer(hi)}), Value::integer(1),
       Value::string("fake" + std::to_string(i)), Value::enumMember("AddrSpace", "ALU"), Value(), Value(),
       Value::boolean(false)});
  return c.get(Op::PARAM, dt, {c.get(Op::STACK, dtypes::Void, {})}, std::move(arg));
}

using Err = std::optional<Diagnostic>;
using Subst = std::unordered_map<const UOp *, const UOp *>;

UOpRef simplified(UOpRef u, Err &err) {
  if (err) return u;
  auto r = simplify(u);
  if (!r) {
    err = r.error();
    return u;
  }
  return *r;
}

// uop.substitute({X: newX}).simplify().substitute({newX: X}).simplify()
UOpRef throughFake(UOpRef uop, const Subst &to, Err &err) {
  Subst back;
  for (auto [k, v] : to) back[v] = k;
  return simplified(substitute(simplified(substitute(uop, to), err), back), err);
}

bool allSame(const std::vector<UOpRef> &v) {
  return std::all_of(v.begin(), v.end(), [&](UOpRef x) { return x.get() == v[0].get(); });
}

} // namespace

static Result<const UOp *> computeUopGivenValid(const UOp *valid, const UOp *uopIn, bool trySimplex) {
  UOpRef uop = uopIn;
  Context &ctx = uop.ctx();
  Err err;
  // expr -> (lower, upper) bounds, in first-seen order
  std::vector<std::pair<UOpRef, std::pair<std::optional<int64_t>, std::optional<int64_t>>>> bounds;
  for (UOpRef stmt : splitUOp(valid, Op::AND)) {
    auto res = parseValid(stmt);
    if (!res) continue;
    auto it = std::find_if(bounds.begin(), bounds.end(), [&](auto &b) { return b.first.get() == res->expr.get(); });
    if (it == bounds.end()) it = bounds.insert(bounds.end(), {res->expr, {}});
    (res->isUpper ? it->second.second : it->second.first) = res->c;
  }
  std::vector<std::pair<UOpRef, UOpRef>> allCandidates;
  for (size_t i = 0; i < bounds.size(); ++i) {
    UOpRef expr = bounds[i].first;
    int64_t v0 = bounds[i].second.first.value_or(expr.vmin()), v1 = bounds[i].second.second.value_or(expr.vmax());
    allCandidates.push_back({expr, fakeVariable(ctx, int(i), v0, v1, expr.dtype())});
    if (!trySimplex) continue;
    // each candidate is a set of constrained nodes; if every one simplifies the uop to the same result, take it
    std::vector<std::vector<std::pair<UOpRef, UOpRef>>> candidates{{allCandidates.back()}};
    std::vector<UOpRef> terms = splitUOp(expr, Op::ADD);
    if (expr->is(Op::ADD) && v0 == 1 && std::all_of(terms.begin(), terms.end(), [](UOpRef u) { return u->isIn(group::Irreducible); })) {
      // a simplex X0 + X1 + ... >= 1: check each Xi >= 1
      std::vector<std::pair<UOpRef, UOpRef>> simplex;
      for (UOpRef x : terms) simplex.push_back({x, fakeVariable(ctx, int(i), 1, x.vmax(), x.dtype())});
      candidates.push_back(std::move(simplex));
    }
    for (const auto &candidate : candidates) {
      if (std::any_of(candidate.begin(), candidate.end(), [&](auto &c) { return !inBackwardSliceWithSelf(c.first, uop); }))
        continue;
      std::vector<UOpRef> newuops;
      for (auto &[X, newX] : candidate) newuops.push_back(throughFake(uop, {{X.get(), newX.get()}}, err));
      if (err) return *err;
      if (allSame(newuops)) {
        uop = newuops[0];
      } else if (uop->is(Op::STACK) && uop->numSrc() == 2 &&
                 std::all_of(newuops.begin(), newuops.end(), [](UOpRef n) { return n->numSrc() == 2; })) {
        auto same = [&](size_t k) {
          return std::all_of(newuops.begin(), newuops.end(), [&](UOpRef n) { return n->src(k) == newuops[0]->src(k); });
        };
        if (same(0)) uop = uop.withSrc({newuops[0]->src(0), uop->src(1)});
        if (same(1)) uop = uop.withSrc({uop->src(0), newuops[0]->src(1)});
      }
    }
  }
  // all the valids together (the whole expressions only)
  Subst sub;
  for (auto &[X, newX] : allCandidates) sub[X] = newX;
  if (UOpRef s = substitute(uop, sub); s.get() != uop.get()) {
    Subst back;
    for (auto &[X, newX] : allCandidates) back[newX] = X;
    uop = simplified(substitute(simplified(s, err), back), err);
  }
  if (err) return *err;
  return uop.get();
}

namespace {
// uop_given_valid reads nothing but its nodes, and the valid rules ask it again
// for the same (valid, uop) pair when a rebuilt gate re-offers them: the answers
// are kept per uop node.
struct GivenValidAnswer {
  const UOp *valid;
  bool trySimplex;
  Result<const UOp *> result;
};
struct GivenValidMemo {
  PtrMap<std::vector<GivenValidAnswer>> answers{64};
};
} // namespace

Result<const UOp *> uopGivenValid(const UOp *valid, const UOp *uop, bool trySimplex) {
  std::vector<GivenValidAnswer> &known = uop->context().analysis<GivenValidMemo>().answers[uop];
  for (const GivenValidAnswer &a : known)
    if (a.valid == valid && a.trySimplex == trySimplex) return a.result;
  Result<const UOp *> r = computeUopGivenValid(valid, uop, trySimplex);
  // computing may have added answers for other pairs: look the entry up again
  uop->context().analysis<GivenValidMemo>().answers[uop].push_back({valid, trySimplex, r});
  return r;
}

namespace {

// _valid_priority: a valid that appears inside other valids goes first.
int validPriority(UOpRef v, const std::vector<UOpRef> &valids) {
  auto res = parseValid(v);
  if (!res) return 0;
  int p = 0;
  for (UOpRef other : valids) p -= inBackwardSliceWithSelf(res->expr, other);
  return p;
}

const UOp *simplifyValid(Match &m) {
  UOpRef valid = m["valid"];
  if (opInBackwardSliceWithSelf(valid, OpSet{Op::INDEX})) return nullptr; // only for index math
  std::vector<UOpRef> valids = splitUOp(valid, Op::AND);
  // Python's sorted() is stable: ties keep their order
  std::vector<std::pair<int, size_t>> keyed;
  for (size_t i = 0; i < valids.size(); ++i) keyed.push_back({validPriority(valids[i], valids), i});
  std::sort(keyed.begin(), keyed.end());
  std::vector<UOpRef> sorted;
  for (auto &[_, i] : keyed) sorted.push_back(valids[i]);
  valids = std::move(sorted);
  std::vector<UOpRef> ret, seen;
  for (UOpRef stmt : valids) {
    if (std::find_if(seen.begin(), seen.end(), [&](UOpRef s) { return s.get() == stmt.get(); }) != seen.end()) continue;
    seen.push_back(stmt);
    if (!ret.empty()) {
      auto r = uopGivenValid(ret[0].uprod({ret.begin() + 1, ret.end()}), stmt);
      if (!r) return m.fail(r.error());
      stmt = *r;
    }
    ret.push_back(stmt);
  }
  bool same = ret.size() == valids.size();
  for (size_t i = 0; same && i < ret.size(); ++i) same = ret[i].get() == valids[i].get();
  if (same) return nullptr;
  return ret[0].uprod({ret.begin() + 1, ret.end()});
}

const UOp *gatedGivenValid(Match &m) {
  UOpRef cond = m["cond"], x = m["x"];
  // pure index math only: a LOAD in x runs even where cond is false
  if (x.dtype() != dtypes::WeakInt || opInBackwardSliceWithSelf(x, OpSet{Op::INDEX})) return nullptr;
  auto r = uopGivenValid(cond, x, /*trySimplex=*/false);
  if (!r) return m.fail(r.error());
  return cond.where(*r, m["i"]);
}

const UOp *dropAndClauses(Match &m) {
  UOpRef cond = m["cond"], x = m["x"];
  std::vector<const UOp *> xr = rangesOf(x);
  std::vector<const UOp *> keep;
  bool dropped = false;
  for (UOpRef c : splitUOp(cond, Op::AND)) {
    std::vector<const UOp *> cr = rangesOf(c);
    bool shares = std::any_of(cr.begin(), cr.end(), [&](const UOp *r) { return std::find(xr.begin(), xr.end(), r) != xr.end(); });
    if (shares) keep.push_back(c);
    else dropped = true;
  }
  if (!dropped) return nullptr;
  return UOpRef(cond.ctx().constBool(true)).uprod(keep).where(x, m["i"]);
}

UPat invalidGate() {
  return var("cond").where(var("x"), UPat(Op::CONST).arg(Value::invalid()).named("i"));
}

} // namespace

const PatternMatcher &pmSimplifyValid() {
  static const PatternMatcher pm({
      rule(UPat(Op::AND).named("valid"), simplifyValid),
      rule(invalidGate(), gatedGivenValid),
  });
  return pm;
}

const PatternMatcher &pmDropAndClauses() {
  static const PatternMatcher pm({rule(invalidGate(), dropAndClauses)});
  return pm;
}

} // namespace tgc
