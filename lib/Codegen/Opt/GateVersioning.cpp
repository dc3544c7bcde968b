//===- GateVersioning.cpp - versions of a reduction without its load gates ===//
//
// See GateVersioning.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/GateVersioning.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace tgc::codegen {

bool isInvalidConst(const UOp *u) { return u->is(Op::CONST) && u->arg().kind() == tgc::Value::Kind::Invalid; }

std::pair<const UOp *, const UOp *> splitGate(const UOp *index) {
  if (index->is(Op::WHERE) && index->numSrc() == 3 && isInvalidConst(index->src(2))) return {index->src(0), index->src(1)};
  return {nullptr, index};
}

namespace {

std::optional<int64_t> literalInt(const UOp *u) {
  if (u->is(Op::CONST) && u->arg().isInt()) return u->arg().getInt();
  return std::nullopt;
}

} // namespace

std::optional<int64_t> AffineCoefficients::operator()(const UOp *e, const UOp *r) {
  auto key = std::make_pair(e, r);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  std::optional<int64_t> c;
  if (e == r) {
    c = 1;
  } else if (e->is(Op::CONST) || e->is(Op::RANGE) || e->is(Op::PARAM)) {
    c = 0;
  } else if (e->is(Op::ADD) && e->numSrc() == 2) {
    auto a = (*this)(e->src(0), r), b = (*this)(e->src(1), r);
    if (a && b) c = *a + *b;
  } else if (e->is(Op::MUL) && e->numSrc() == 2 && (literalInt(e->src(0)) || literalInt(e->src(1)))) {
    bool left = literalInt(e->src(0)).has_value();
    auto a = (*this)(e->src(left ? 1 : 0), r);
    if (a) c = *a * *literalInt(e->src(left ? 0 : 1));
  } else if (e->is(Op::CAST) && e->numSrc() == 1 && e->dtype().isInt()) {
    c = (*this)(e->src(0), r);
  } else {
    c = 0; // not affine: only allowed when no source varies with r
    for (const UOp *s : e->src())
      if ((*this)(s, r) != std::optional<int64_t>(0)) c.reset();
  }
  memo_[key] = c;
  return c;
}

std::optional<bool> unitStrideAccesses(const UOp *root, const UOp *r, bool throughReduces) {
  AffineCoefficients coefficient;
  bool moves = false;
  for (const UOp *n : toposort(root)) {
    if (n->is(Op::REDUCE) && !throughReduces) return std::nullopt;
    if (!n->is(Op::INDEX) || n->numSrc() != 2) continue;
    std::optional<int64_t> c = coefficient(splitGate(n->src(1)).second, r);
    if (!c || (*c != 0 && *c != 1)) return std::nullopt;
    moves |= *c == 1;
  }
  return moves;
}

namespace {

// Extremes of integer expressions over the reduction's ranges.
class RangeExtremes {
public:
  RangeExtremes(const std::vector<const UOp *> &ranges) : ranges_(ranges) {}

  /// `e` at its maximum (or minimum) over the ranges, as an expression in the
  /// other ranges; null when `e` is not affine in them.
  const UOp *extreme(const UOp *e, bool maximum) {
    std::unordered_map<const UOp *, const UOp *> at;
    for (const UOp *r : ranges_) {
      std::optional<int64_t> c = coefficient(e, r), n = literalInt(r->src(0));
      if (!c || !n) return nullptr;
      bool high = (*c > 0) == maximum && *c != 0;
      at[r] = r->context().get(Op::CONST, r->dtype(), {}, tgc::Value::integer(high ? *n - 1 : 0));
    }
    return substitute(e, at);
  }

  bool dependsOnRanges(const UOp *e) {
    for (const UOp *r : ranges_)
      if (coefficient(e, r) != std::optional<int64_t>(0)) return true;
    return false;
  }

private:
  AffineCoefficients coefficient;
  const std::vector<const UOp *> &ranges_;
};

void collectAtoms(const UOp *gate, std::vector<const UOp *> &out) {
  if (gate->is(Op::AND) && gate->dtype().isBool() && gate->numSrc() == 2) {
    collectAtoms(gate->src(0), out);
    collectAtoms(gate->src(1), out);
  } else if (std::find(out.begin(), out.end(), gate) == out.end()) {
    out.push_back(gate);
  }
}

bool isTrue(const UOp *u) { return u->is(Op::CONST) && u->arg().isBool() && u->arg().getBool(); }

const UOp *conjoin(const UOp *a, const UOp *b) {
  if (!a) return b;
  return a->context().get(Op::AND, dtypes::Bool, {a, b});
}

// A condition in the outer ranges under which `atom` holds for every value of
// the ranges: x < y holds throughout when max x < min y; (x < y) != True when
// max y <= min x, i.e. (min x < max y) != True. Null for any other atom.
const UOp *forAll(const UOp *atom, RangeExtremes &ext) {
  Context &ctx = atom->context();
  bool negated = atom->is(Op::CMPNE) && atom->numSrc() == 2 && isTrue(atom->src(1)) && atom->src(0)->is(Op::CMPLT);
  const UOp *lt = negated ? atom->src(0) : atom;
  if (!lt->is(Op::CMPLT) || lt->numSrc() != 2 || !lt->src(0)->dtype().isInt()) return nullptr;
  const UOp *x = ext.extreme(lt->src(0), !negated), *y = ext.extreme(lt->src(1), negated);
  if (!x || !y) return nullptr;
  const UOp *cmp = ctx.get(Op::CMPLT, dtypes::Bool, {x, y});
  return negated ? ctx.get(Op::CMPNE, dtypes::Bool, {cmp, atom->src(1)}) : cmp;
}

} // namespace

GateVersions gateVersions(const std::vector<const UOp *> &values, const std::vector<const UOp *> &ranges) {
  GateVersions out;
  for (const UOp *r : ranges)
    if (!r->is(Op::RANGE) || r->numSrc() < 1 || !literalInt(r->src(0))) return out;
  RangeExtremes ext(ranges);
  std::vector<const UOp *> gated;
  for (const UOp *n : toposort(std::span<const UOp *const>(values)))
    if (n->is(Op::INDEX) && n->numSrc() == 2 && splitGate(n->src(1)).first) gated.push_back(n);
  std::vector<const UOp *> atoms;
  for (const UOp *load : gated) collectAtoms(splitGate(load->src(1)).first, atoms);
  for (const UOp *a : atoms) {
    if (!ext.dependsOnRanges(a)) continue; // invariant: no version needed (and none would be safe to share)
    if (const UOp *c = forAll(a, ext)) {
      out.atoms.push_back(a);
      out.allValid = conjoin(out.allValid, c);
    }
  }
  // In bounds: 0 <= min idx and max idx < the buffer's size.
  for (const UOp *load : gated) {
    const UOp *buf = load->src(0), *idx = splitGate(load->src(1)).second;
    std::optional<int64_t> size = buf->is(Op::PARAM) && buf->numSrc() == 1 ? literalInt(buf->src(0)) : std::nullopt;
    if (!size || !idx->dtype().isInt() || !ext.dependsOnRanges(idx)) continue;
    const UOp *lo = ext.extreme(idx, false), *hi = ext.extreme(idx, true);
    if (!lo || !hi) continue;
    Context &ctx = load->context();
    auto lit = [&](int64_t v) { return ctx.get(Op::CONST, idx->dtype(), {}, tgc::Value::integer(v)); };
    const UOp *t = ctx.get(Op::CONST, dtypes::Bool, {}, tgc::Value::boolean(true));
    const UOp *nonNegative = ctx.get(Op::CMPNE, dtypes::Bool, {ctx.get(Op::CMPLT, dtypes::Bool, {lo, lit(0)}), t});
    out.loads.push_back(load);
    out.inBounds = conjoin(out.inBounds, conjoin(nonNegative, ctx.get(Op::CMPLT, dtypes::Bool, {hi, lit(*size)})));
  }
  return out;
}

} // namespace tgc::codegen
