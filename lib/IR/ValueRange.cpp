//===- ValueRange.cpp - vmin/vmax by interval arithmetic -------------------===//
//
// UOp::vrange(): tinygrad's UOp._min_max. Each node's interval is computed
// from its srcs' intervals and cached on the node; the computation walks the
// not-yet-cached part of the graph with an explicit stack, so deep graphs do
// not recurse. tinygrad's ints are unbounded; here they saturate at the int64
// limits (a saturated bound only ever widens an interval).
//
//===----------------------------------------------------------------------===//
#include "IR/ExecAlu.h"
#include "IR/NodeTable.h"
#include "IR/UOp.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tgc {

namespace {
using i128 = __int128;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t sat(i128 v) { return v < kMin ? kMin : v > kMax ? kMax : int64_t(v); }
int64_t satD(double d) {
  if (std::isnan(d)) return 0;
  if (d <= -9.223372036854775808e18) return kMin;
  if (d >= 9.223372036854775807e18) return kMax;
  return int64_t(d);
}

ValueRange ints(int64_t lo, int64_t hi) {
  ValueRange r;
  r.imin = lo, r.imax = hi;
  return r;
}
ValueRange floats(double lo, double hi) {
  ValueRange r;
  r.isFloat = true;
  r.fmin = lo, r.fmax = hi;
  return r;
}
double lo(const ValueRange &r) { return r.isFloat ? r.fmin : double(r.imin); }
double hi(const ValueRange &r) { return r.isFloat ? r.fmax : double(r.imax); }

// The interval of an arbitrary value of dt (tinygrad's dt.min, dt.max).
ValueRange dtypeRange(DType dt) {
  if (dt.isFloat()) return floats(-INFINITY, INFINITY);
  if (dt.isInt()) return ints(dt.minInt(), dt.maxInt() > uint64_t(kMax) ? kMax : int64_t(dt.maxInt()));
  return ints(0, 1); // bool (and void, whose min/max tinygrad also gives as False/True)
}

// A range of the node's kind built from Python-valued bounds.
ValueRange fromValues(DType dt, const Value &a, const Value &b) {
  auto num = [](const Value &v) -> double {
    switch (v.kind()) {
    case Value::Kind::Bool: return v.getBool();
    case Value::Kind::Int: return double(v.getInt());
    case Value::Kind::UInt: return double(v.getUInt());
    case Value::Kind::Float: return v.getFloat();
    default: return NAN;
    }
  };
  if (dt.isFloat() || a.isFloat() || b.isFloat()) return floats(num(a), num(b));
  auto in = [](const Value &v) -> int64_t {
    if (v.isBool()) return v.getBool();
    if (v.kind() == Value::Kind::UInt) return kMax;
    return v.getInt();
  };
  return ints(in(a), in(b));
}

bool isIntValue(const Value &v) { return v.isInt() || v.isBool() || v.kind() == Value::Kind::UInt; }

ValueRange minmax4(i128 a, i128 b, i128 c, i128 d) {
  return ints(sat(std::min({a, b, c, d})), sat(std::max({a, b, c, d})));
}

// tinygrad's `if self.op in GroupOp.Binary and not dtypes.is_float(self.dtype)` block.
std::optional<ValueRange> binaryRange(const UOp *u, const ValueRange &s0, const ValueRange &s1) {
  using enum Op;
  Op op = u->op();
  if (s0.isFloat || s1.isFloat) {
    // only the comparisons are meaningful on float operands
    if (op == CMPLT) return ints(hi(s0) < lo(s1), lo(s0) < hi(s1));
    if (op == CMPNE)
      return ints((hi(s0) < lo(s1)) || (hi(s1) < lo(s0)), !(lo(s0) == hi(s0) && hi(s0) == lo(s1) && lo(s1) == hi(s1)));
    return std::nullopt;
  }
  i128 a0 = s0.imin, a1 = s0.imax, b0 = s1.imin, b1 = s1.imax;
  switch (op) {
  case ADD: return ints(sat(a0 + b0), sat(a1 + b1));
  case SUB: return ints(sat(a0 - b1), sat(a1 - b0));
  case AND:
    if (u->dtype().isInt() && b0 == b1 && b0 >= 0) return ints(0, int64_t(a0 < 0 ? b1 : std::min(a1, b1)));
    if (u->dtype().isBool()) return ints(a0 && b0, a1 && b1);
    return std::nullopt;
  case MUL: return minmax4(a0 * b0, a0 * b1, a1 * b0, a1 * b1);
  case SHL:
  case SHR: {
    if (b0 != b1 || b0 < 0) return std::nullopt; // Python raises on a negative shift count
    if (op == SHR) {
      int k = int(std::min<i128>(b0, 127));
      return ints(sat(a0 >> k), sat(a1 >> k));
    }
    auto shl = [&](i128 x) -> int64_t {
      if (x == 0) return 0;
      if (b0 >= 63) return x < 0 ? kMin : kMax;
      return sat(x * (i128(1) << int(b0)));
    };
    return ints(shl(a0), shl(a1));
  }
  case CMOD: {
    if (b0 == b1 && b0 > 0) {
      i128 c = b0;
      i128 l = a0 > 0 ? 0 : (0 >= a0 && a0 > -c) ? a0 : -(b1 - 1);
      i128 h = a1 < 0 ? 0 : (0 <= a1 && a1 < c) ? a1 : c - 1;
      return ints(sat(l), sat(h));
    }
    if (b0 > 0) {
      if (a0 >= 0) return ints(0, sat(b1 - 1));
      if (a1 <= 0) return ints(sat(-(b1 - 1)), 0);
      return ints(sat(-(b1 - 1)), sat(b1 - 1));
    }
    if (b1 < 0) {
      if (a0 >= 0) return ints(0, sat(-b0 - 1));
      if (a1 <= 0) return ints(sat(-(-b0 - 1)), 0);
      return ints(sat(-(-b0 - 1)), sat(-b0 - 1));
    }
    return std::nullopt;
  }
  case CDIV:
    if ((b0 > 0 && b1 > 0) || (b0 < 0 && b1 < 0)) {
      auto cd = [](i128 x, i128 y) { return i128(truncDiv(int64_t(x), int64_t(y))); };
      return minmax4(cd(a0, b0), cd(a0, b1), cd(a1, b0), cd(a1, b1));
    }
    return std::nullopt;
  case FLOORDIV:
    if (a0 > a1) return ints(0, 0); // empty numerator (a RANGE of 0 iterations)
    if ((b0 > 0 && b1 > 0) || (b0 < 0 && b1 < 0)) {
      auto fd = [](i128 x, i128 y) { return i128(floorDiv(int64_t(x), int64_t(y))); };
      return minmax4(fd(a0, b0), fd(a0, b1), fd(a1, b0), fd(a1, b1));
    }
    return std::nullopt;
  case FLOORMOD: {
    if (a0 > a1) return ints(0, 0);
    int64_t c = s1.imin;
    if (b0 == b1 && c > 0) {
      if (floorDiv(s0.imin, c) == floorDiv(s0.imax, c)) return ints(floorMod(s0.imin, c), floorMod(s0.imax, c));
      return ints(0, c - 1);
    }
    if (b0 == b1 && c < 0) {
      if (floorDiv(s0.imin, c) == floorDiv(s0.imax, c)) return ints(floorMod(s0.imin, c), floorMod(s0.imax, c));
      return ints(c + 1, 0);
    }
    if (b0 > 0) return ints(0, sat(b1 - 1));
    if (b1 < 0) return ints(sat(b0 + 1), 0);
    return std::nullopt;
  }
  case XOR:
    if (b0 == -1 && b1 == -1) return ints(~s0.imax, ~s0.imin);
    return std::nullopt;
  case MAX: return ints(std::max(s0.imin, s1.imin), std::max(s0.imax, s1.imax));
  case CMPLT: return ints(a1 < b0, a0 < b1);
  case CMPNE: return ints((a1 < b0) || (b1 < a0), !(a0 == a1 && a1 == b0 && b0 == b1));
  case OR:
    if (u->dtype().isBool()) return ints(a0 || b0, a1 || b1);
    return std::nullopt;
  default: return std::nullopt;
  }
}

// Rounds a bound to the value grid of a float dtype (tinygrad's truncate[dt]).
double roundTo(DType dt, double v) {
  if (dt == dtypes::Float32) return double(float(v));
  if (dt == dtypes::Float16) return double(_Float16(v));
  return v;
}

ValueRange castRange(const UOp *u, const ValueRange &s) {
  DType dt = u->dtype();
  double a = lo(s), b = hi(s);
  bool finite = std::isfinite(a) && std::isfinite(b);
  if (dt.isFloat()) {
    if (finite && !dt.isWeak()) a = roundTo(dt, a), b = roundTo(dt, b);
    if (dt.isWeak()) return dtypeRange(dt); // weakfloat is not among dtypes.floats
    return floats(a, b);                    // max(-inf, a), min(b, inf)
  }
  if (!dt.isInt()) return dtypeRange(dt);
  // to an int: truncation toward zero (exact on int bounds)
  int64_t l = s.isFloat ? (finite ? satD(std::trunc(a)) : satD(a)) : s.imin;
  int64_t h = s.isFloat ? (finite ? satD(std::trunc(b)) : satD(b)) : s.imax;
  ValueRange full = dtypeRange(dt);
  if (dt.isUnsigned()) {
    if (l >= 0 && h <= full.imax) return ints(l, h);
    return full;
  }
  return ints(std::max(full.imin, l), std::min(h, full.imax));
}

ValueRange computeRange(const UOp *u) {
  using enum Op;
  Op op = u->op();
  DType dt = u->dtype();
  auto srcRange = [&](size_t i) -> const ValueRange & { return u->src(i)->vrange(); };
  if (group::Binary.contains(op) && !dt.isFloat() && u->numSrc() == 2)
    if (auto r = binaryRange(u, srcRange(0), srcRange(1))) return *r;
  if (op == WHERE && dt.isInt() && u->numSrc() == 3) {
    const ValueRange &t = srcRange(1), &f = srcRange(2);
    if (!t.isFloat && !f.isFloat) return ints(std::min(t.imin, f.imin), std::max(t.imax, f.imax));
    return floats(std::min(lo(t), lo(f)), std::max(hi(t), hi(f)));
  }
  if (op == PARAM || op == BUFFER)
    if (const Value *mm = u->arg().field("vmin_vmax"); mm && mm->isSequence() && mm->size() == 2)
      return fromValues(dt, (*mm)[0], (*mm)[1]);
  if ((op == RANGE || op == SPECIAL) && !dt.isVoid() && u->numSrc() >= 1) {
    const ValueRange &end = srcRange(0);
    if (end.isFloat) return floats(0, end.fmax - 1);
    return ints(0, end.imax == kMin ? kMin : end.imax - 1);
  }
  if ((op == AFTER || op == INDEX) && u->numSrc() >= 1) return srcRange(0);
  if (op == STACK && u->numSrc() >= 1) {
    ValueRange r = srcRange(0);
    for (size_t i = 1; i < u->numSrc(); ++i) {
      const ValueRange &s = srcRange(i);
      if (r.isFloat || s.isFloat) r = floats(std::min(lo(r), lo(s)), std::max(hi(r), hi(s)));
      else r = ints(std::min(r.imin, s.imin), std::max(r.imax, s.imax));
    }
    return r;
  }
  if (op == CONST && u->arg().kind() != Value::Kind::Invalid) {
    const Value &v = u->arg();
    if (v.isFloat()) return floats(v.getFloat(), v.getFloat());
    if (isIntValue(v)) return fromValues(dt, v, v);
  }
  if (op == CAST && u->numSrc() == 1) return castRange(u, srcRange(0));
  return dtypeRange(dt);
}
} // namespace

// u's range, computed once and kept in its Context (srcs' ranges known)
static const ValueRange *newRange(const UOp *u) {
  ValueRange *r = u->context().analysis<NodeArena<ValueRange>>().make();
  *r = computeRange(u);
  return r;
}

const ValueRange &UOp::vrange() const {
  if (vrange_) return *vrange_;
  auto src = this->src();
  if (std::all_of(src.begin(), src.end(), [](const UOp *s) { return s->vrange_ != nullptr; })) {
    vrange_ = newRange(this); // the usual case: a new node over known srcs
    return *vrange_;
  }
  // Post-order over the nodes without a cached range: srcs before users.
  std::vector<std::pair<const UOp *, size_t>> stack{{this, 0}};
  while (!stack.empty()) {
    const UOp *u = stack.back().first;
    if (u->vrange_) {
      stack.pop_back();
      continue;
    }
    size_t i = stack.back().second;
    if (i < u->numSrc()) {
      ++stack.back().second;
      if (!u->src(i)->vrange_) stack.push_back({u->src(i), 0});
      continue;
    }
    u->vrange_ = newRange(u);
    stack.pop_back();
  }
  return *vrange_;
}

} // namespace tgc
