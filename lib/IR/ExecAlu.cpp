//===- ExecAlu.cpp - tinygrad's exec_alu, python_alu and DType.const --------===//
//
// Python numbers are modelled as a small tagged scalar: bool, int (kept in
// 128 bits, so that sums and products of 64-bit values are exact) or float.
// Results that leave 64 bits are reported as unrepresentable rather than
// silently wrapped.
//
//===----------------------------------------------------------------------===//
#include "IR/ExecAlu.h"

#include <cmath>
#include <limits>

namespace tgc {

using i128 = __int128;

namespace {
struct Num {
  enum Kind { B, I, F } k = I;
  i128 i = 0;
  double f = 0;
  static Num b(bool v) { return {B, v ? 1 : 0, 0}; }
  static Num n(i128 v) { return {I, v, 0}; }
  static Num fl(double v) { return {F, 0, v}; }
  bool isF() const { return k == F; }
  double asF() const { return k == F ? f : double(i); }
  bool truthy() const { return k == F ? f != 0.0 : i != 0; }
};

std::optional<Num> toNum(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Bool: return Num::b(v.getBool());
  case Value::Kind::Int: return Num::n(v.getInt());
  case Value::Kind::UInt: return Num::n(i128(v.getUInt()));
  case Value::Kind::Float: return Num::fl(v.getFloat());
  default: return std::nullopt;
  }
}

constexpr i128 kI64Min = std::numeric_limits<int64_t>::min();
constexpr i128 kI64Max = std::numeric_limits<int64_t>::max();
constexpr i128 kU64Max = i128(std::numeric_limits<uint64_t>::max());
// Bound on intermediate ints: products of two such values still fit 128 bits.
constexpr i128 kSafe = i128(1) << 62 << 62;

std::optional<Value> fromNum(const Num &n) {
  if (n.k == Num::F) return Value::floating(n.f);
  if (n.k == Num::B) return Value::boolean(n.i != 0);
  if (n.i >= kI64Min && n.i <= kI64Max) return Value::integer(int64_t(n.i));
  if (n.i > kI64Max && n.i <= kU64Max) return Value::uinteger(uint64_t(n.i));
  return std::nullopt;
}

i128 pyFloorDiv(i128 x, i128 y) {
  i128 q = x / y;
  if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
  return q;
}

std::optional<Num> pyPow(const Num &x, const Num &y) {
  if (!x.isF() && !y.isF()) {
    if (y.i >= 0) {
      i128 r = 1, b = x.i;
      for (i128 e = y.i; e > 0; --e) {
        r *= b;
        if (r > kSafe || r < -kSafe) return std::nullopt;
      }
      return Num::n(r);
    }
    if (x.i == 0) return Num::fl(INFINITY); // ZeroDivisionError -> inf
    return Num::fl(std::pow(double(x.i), double(y.i)));
  }
  double a = x.asF(), b = y.asF();
  if (a == 0.0 && b < 0) return Num::fl(INFINITY); // ZeroDivisionError -> inf
  if (a < 0 && b != std::trunc(b)) return Num::fl(NAN); // complex result -> nan
  double r = std::pow(a, b);
  if (std::isinf(r) && std::isfinite(a) && std::isfinite(b)) return std::nullopt; // OverflowError
  return Num::fl(r);
}

std::optional<Num> evalScalar(Op op, std::span<const Num> v) {
  using enum Op;
  auto arith = [&](auto fi, auto ff) -> std::optional<Num> {
    if (v[0].isF() || v[1].isF()) return Num::fl(ff(v[0].asF(), v[1].asF()));
    i128 r = fi(v[0].i, v[1].i);
    if (r > kSafe || r < -kSafe) return std::nullopt;
    return Num::n(r);
  };
  auto bitwise = [&](auto fn) -> std::optional<Num> {
    if (v[0].isF() || v[1].isF()) return std::nullopt; // TypeError in Python
    i128 r = fn(v[0].i, v[1].i);
    return v[0].k == Num::B && v[1].k == Num::B ? Num::b(r != 0) : Num::n(r);
  };
  switch (op) {
  case LOG2: {
    double x = v[0].asF();
    return Num::fl(x > 0 ? std::log2(x) : x == 0 ? -INFINITY : NAN);
  }
  case EXP2:
    return pyPow(Num::n(2), v[0]);
  case SQRT: {
    double x = v[0].asF();
    return Num::fl(x >= 0 ? std::sqrt(x) : NAN);
  }
  case RECIPROCAL: {
    double x = v[0].asF();
    return Num::fl(x != 0 ? 1.0 / x : std::copysign(INFINITY, x));
  }
  case SIN: {
    double x = v[0].asF();
    return Num::fl(std::isinf(x) ? NAN : std::sin(x));
  }
  case TRUNC:
    if (!v[0].isF()) return v[0];
    if (!std::isfinite(v[0].f)) return v[0];
    if (std::fabs(v[0].f) >= 9.2e18) return std::nullopt;
    return Num::n(i128(std::trunc(v[0].f)));
  case NEG:
    return v[0].isF() ? Num::fl(-v[0].f) : Num::n(-v[0].i);
  case ADD: return arith([](i128 a, i128 b) { return a + b; }, [](double a, double b) { return a + b; });
  case SUB: return arith([](i128 a, i128 b) { return a - b; }, [](double a, double b) { return a - b; });
  case MUL: return arith([](i128 a, i128 b) { return a * b; }, [](double a, double b) { return a * b; });
  case CMPLT: return Num::b(v[0].isF() || v[1].isF() ? v[0].asF() < v[1].asF() : v[0].i < v[1].i);
  case CMPNE: return Num::b(v[0].isF() || v[1].isF() ? v[0].asF() != v[1].asF() : v[0].i != v[1].i);
  case CMPEQ: return Num::b(v[0].isF() || v[1].isF() ? v[0].asF() == v[1].asF() : v[0].i == v[1].i);
  case XOR: return bitwise([](i128 a, i128 b) { return a ^ b; });
  case OR: return bitwise([](i128 a, i128 b) { return a | b; });
  case AND: return bitwise([](i128 a, i128 b) { return a & b; });
  case SHR:
    if (v[0].isF() || v[1].isF() || v[1].i < 0) return std::nullopt;
    return Num::n(v[1].i >= 126 ? (v[0].i < 0 ? -1 : 0) : v[0].i >> int(v[1].i));
  case SHL: {
    if (v[0].isF() || v[1].isF() || v[1].i < 0) return std::nullopt;
    if (v[0].i == 0) return Num::n(0);
    if (v[1].i > 124) return std::nullopt;
    i128 r = v[0].i * (i128(1) << int(v[1].i));
    if (r > kSafe || r < -kSafe || r / (i128(1) << int(v[1].i)) != v[0].i) return std::nullopt;
    return Num::n(r);
  }
  case MAX: {
    bool second = v[0].isF() || v[1].isF() ? v[1].asF() > v[0].asF() : v[1].i > v[0].i;
    return second ? v[1] : v[0];
  }
  case CDIV: case CMOD: case FLOORDIV: case FLOORMOD: {
    if (v[0].isF() || v[1].isF()) {
      double x = v[0].asF(), y = v[1].asF();
      if (y == 0) return op == CMOD || op == FLOORMOD ? Num::fl(x) : Num::fl(0.0);
      double q = (op == CDIV || op == CMOD) ? std::floor(std::fabs(x) / std::fabs(y)) * ((x * y < 0) ? -1 : 1)
                                           : std::floor(x / y);
      return (op == CDIV || op == FLOORDIV) ? Num::fl(q) : Num::fl(x - q * y);
    }
    i128 x = v[0].i, y = v[1].i;
    i128 q = y == 0 ? 0 : (op == CDIV || op == CMOD) ? (x < 0 ? -x : x) / (y < 0 ? -y : y) * ((x < 0) != (y < 0) ? -1 : 1)
                                                      : pyFloorDiv(x, y);
    return (op == CDIV || op == FLOORDIV) ? Num::n(q) : Num::n(x - q * y);
  }
  case POW:
    return pyPow(v[0], v[1]);
  case MULACC: {
    Num xy[2] = {v[0], v[1]};
    auto p = evalScalar(MUL, xy);
    if (!p) return std::nullopt;
    Num pz[2] = {*p, v[2]};
    return evalScalar(ADD, pz);
  }
  case WHERE:
    return v[0].truthy() ? v[1] : v[2];
  default:
    return std::nullopt; // THREEFRY, FDIV, ...: Python has no evaluation for them
  }
}

std::optional<Value> evalValues(Op op, std::span<const Value> operands) {
  size_t n = 0;
  bool hasTuple = false;
  for (const Value &v : operands)
    if (v.isTuple()) hasTuple = true, n = std::max(n, v.size());
  if (hasTuple) {
    std::vector<Value> out;
    for (size_t i = 0; i < n; ++i) {
      std::vector<Value> lane;
      for (const Value &v : operands) {
        if (v.isTuple() && i >= v.size()) return std::nullopt;
        lane.push_back(v.isTuple() ? v[i] : v);
      }
      auto r = evalValues(op, lane);
      if (!r) return std::nullopt;
      out.push_back(*r);
    }
    return Value::tuple(std::move(out));
  }
  bool anyInvalid = false;
  for (const Value &v : operands) anyInvalid |= v.kind() == Value::Kind::Invalid;
  if (anyInvalid) {
    if (group::Binary.contains(op)) return Value::invalid();
    if (op == Op::WHERE && operands.size() == 3 && operands[0].kind() != Value::Kind::Invalid) {
      auto c = toNum(operands[0]);
      if (!c) return std::nullopt;
      return c->truthy() ? operands[1] : operands[2];
    }
    return std::nullopt;
  }
  size_t arity = group::Unary.contains(op) ? 1 : group::Ternary.contains(op) ? 3 : 2;
  if (operands.size() != arity) return std::nullopt;
  Num nums[3];
  for (size_t i = 0; i < arity; ++i) {
    auto x = toNum(operands[i]);
    if (!x) return std::nullopt;
    nums[i] = *x;
  }
  auto r = evalScalar(op, std::span<const Num>(nums, arity));
  if (!r) return std::nullopt;
  return fromNum(*r);
}

std::optional<double> roundToFloat(DType dt, double f) {
  if (dt == dtypes::Float32) return double(float(f));
  if (dt == dtypes::Float64 || dt == dtypes::WeakFloat) return f;
  if (dt == dtypes::Float16) return double(_Float16(f));
  return std::nullopt; // bfloat16 and the fp8 formats: not modelled
}
} // namespace

std::optional<Value> dtypeConst(DType dt, const Value &v) {
  if (v.kind() == Value::Kind::Invalid) return v;
  if (v.isTuple()) {
    std::vector<Value> out;
    for (const Value &x : v.items()) {
      auto c = dtypeConst(dt, x);
      if (!c) return std::nullopt;
      out.push_back(*c);
    }
    return Value::tuple(std::move(out));
  }
  auto n = toNum(v);
  if (!n) return std::nullopt;
  if (dt.isFloat()) {
    double f = n->asF();
    if (std::isnan(f)) f = NAN; // canonical NaN
    auto r = roundToFloat(dt, f);
    if (!r) return std::nullopt;
    return Value::floating(*r);
  }
  if (dt.isBool()) return Value::boolean(n->truthy());
  if (n->isF()) {
    if (!std::isfinite(n->f) || std::fabs(n->f) >= 1.8e19) return std::nullopt;
    return fromNum(Num::n(i128(std::trunc(n->f))));
  }
  return fromNum(Num::n(n->i));
}

std::optional<Value> truncateToDType(DType dt, const Value &v) {
  if (v.kind() == Value::Kind::Invalid || dt.isWeak()) return v;
  auto n = toNum(v);
  if (!n) return std::nullopt;
  if (dt.isBool()) return Value::boolean(n->truthy());
  if (dt.isFloat()) {
    auto r = roundToFloat(dt, n->asF());
    if (!r) return std::nullopt;
    return Value::floating(*r);
  }
  if (!dt.isInt()) return std::nullopt;
  i128 x;
  if (n->isF()) {
    // ctypes converts through C's float-to-int conversion; only in-range values are defined
    if (!std::isfinite(n->f) || std::fabs(n->f) >= 1.8e19) return std::nullopt;
    x = i128(std::trunc(n->f));
  } else {
    x = n->i;
  }
  int bits = dt.bitsize();
  unsigned __int128 mask = (unsigned __int128)(1) << bits;
  unsigned __int128 u = (unsigned __int128)x & (mask - 1);
  i128 r = i128(u);
  if (!dt.isUnsigned() && (u >> (bits - 1)) & 1) r -= i128(mask);
  return fromNum(Num::n(r));
}

std::optional<Value> execAlu(Op op, DType dt, std::span<const Value> operands) {
  auto r = evalValues(op, operands);
  if (!r) return std::nullopt;
  return dtypeConst(dt, *r);
}

int64_t floorDiv(int64_t x, int64_t y) {
  if (y == 0) return 0;
  i128 q = pyFloorDiv(x, y);
  return q > kI64Max ? int64_t(kI64Max) : int64_t(q);
}
int64_t floorMod(int64_t x, int64_t y) { return y == 0 ? x : int64_t(i128(x) - i128(floorDiv(x, y)) * y); }
int64_t truncDiv(int64_t x, int64_t y) {
  if (y == 0) return 0;
  if (x == std::numeric_limits<int64_t>::min() && y == -1) return std::numeric_limits<int64_t>::max();
  return x / y;
}
int64_t truncMod(int64_t x, int64_t y) { return y == 0 ? x : int64_t(i128(x) - i128(truncDiv(x, y)) * y); }

} // namespace tgc
