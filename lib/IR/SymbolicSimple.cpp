//===- SymbolicSimple.cpp - pm_data_invalid and symbolic_simple ------------===//
//
// Phase 1 of tinygrad's symbolic (tinygrad/uop/symbolic.py): Invalid
// propagation, self and zero folding, constant folding, cast/bitcast folding,
// pow, and simple where folding. Rule order is tinygrad's.
//
//===----------------------------------------------------------------------===//
#include "IR/ExecAlu.h"
#include "IR/Symbolic.h"
#include "IR/SymbolicRules.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace tgc {

using namespace sym;

namespace sym {
const std::vector<DType> &intDTypes() {
  using namespace dtypes;
  static const std::vector<DType> v{UInt8, UInt16, UInt32, UInt64, Int8, Int16, Int32, Int64};
  return v;
}
const std::vector<DType> &intOrWeakDTypes() {
  static const std::vector<DType> v = [] {
    auto r = intDTypes();
    r.push_back(dtypes::WeakInt);
    return r;
  }();
  return v;
}
const std::vector<DType> &intBoolWeakDTypes() {
  static const std::vector<DType> v = [] {
    auto r = intDTypes();
    r.push_back(dtypes::Bool);
    r.push_back(dtypes::WeakInt);
    return r;
  }();
  return v;
}
const std::vector<DType> &strongDTypes() {
  using namespace dtypes;
  static const std::vector<DType> v{FP8E4M3, FP8E5M2, FP8E4M3FNUZ, FP8E5M2FNUZ, Float16, BFloat16, Float32, Float64,
                                    UInt8,   UInt16,  UInt32,      UInt64,      Int8,    Int16,    Int32,   Int64,
                                    Bool};
  return v;
}
} // namespace sym

UOpRef commitWeak(UOpRef s, DType dt) { return s.isConst() ? makeConst(s.ctx(), s->arg(), dt) : s.cast(dt); }

namespace {

// const_arg: a CONST's value, or a STACK of CONSTs as a tuple.
std::optional<Value> constArg(const UOp *u) {
  if (u->is(Op::CONST)) return u->arg();
  if (u->is(Op::STACK)) {
    std::vector<Value> vals;
    for (const UOp *s : u->src()) {
      if (!s->is(Op::CONST)) return std::nullopt;
      vals.push_back(s->arg());
    }
    return Value::tuple(std::move(vals));
  }
  return std::nullopt;
}

const UOp *foldConstAlu(Match &m) {
  UOpRef a = m["a"];
  std::vector<Value> vals;
  for (const UOp *s : a->src()) {
    auto v = constArg(s);
    if (!v) return nullptr;
    vals.push_back(*v);
  }
  auto r = execAlu(a->op(), a.dtype(), vals);
  if (!r) return nullptr;
  return a.constLike(*r);
}

// The bytes of v stored as dt (struct.pack with dt's format char).
std::optional<uint64_t> toBits(DType dt, const Value &v) {
  auto t = truncateToDType(dt, v);
  if (!t) return std::nullopt;
  if (dt.isBool()) return uint64_t(t->getBool());
  if (dt == dtypes::Float16) return uint64_t(std::bit_cast<uint16_t>(_Float16(t->getFloat())));
  if (dt == dtypes::Float32) return uint64_t(std::bit_cast<uint32_t>(float(t->getFloat())));
  if (dt == dtypes::Float64) return std::bit_cast<uint64_t>(t->getFloat());
  if (dt.isInt()) {
    uint64_t raw = t->kind() == Value::Kind::UInt ? t->getUInt() : uint64_t(t->getInt());
    return dt.bitsize() >= 64 ? raw : raw & ((uint64_t(1) << dt.bitsize()) - 1);
  }
  return std::nullopt;
}

std::optional<Value> fromBits(DType dt, uint64_t bits) {
  if (dt.isBool()) return Value::boolean(bits != 0);
  if (dt == dtypes::Float16) return Value::floating(double(std::bit_cast<_Float16>(uint16_t(bits))));
  if (dt == dtypes::Float32) return Value::floating(double(std::bit_cast<float>(uint32_t(bits))));
  if (dt == dtypes::Float64) return Value::floating(std::bit_cast<double>(bits));
  if (dt.isUnsigned()) return Value::uinteger(bits);
  if (dt.isInt()) {
    int b = dt.bitsize();
    int64_t s = b >= 64 ? int64_t(bits) : int64_t(bits << (64 - b)) >> (64 - b);
    return Value::integer(s);
  }
  return std::nullopt;
}

const UOp *foldBitcast(Match &m) {
  UOpRef root = m["root"], c = m["c"];
  DType from = c.dtype(), to = root.dtype();
  if (!from->fmt || !to->fmt || from.itemsize() != to.itemsize()) return nullptr;
  auto bits = toBits(from, c->arg());
  if (!bits) return nullptr;
  auto v = fromBits(to, *bits);
  if (!v) return nullptr;
  return root.constLike(*v);
}

double numOf(const Value &v) {
  return v.isFloat() ? v.getFloat() : v.isBool() ? double(v.getBool()) : double(v.getInt());
}

// simplify_pow: x ** c for a constant exponent, in terms of mul/reciprocal/sqrt.
const UOp *simplifyPow(Match &m) {
  UOpRef x = m["x"], c = m["c"];
  const Value &cv = c->arg();
  if (!cv.isInt() && !cv.isFloat()) return nullptr;
  double v = numOf(cv);
  bool isInt = cv.isInt();
  auto num = [&](double d) { return isInt ? Value::integer(int64_t(d)) : Value::floating(d); };
  if (v < 0) return x.reciprocal().pow(x.ufix(num(-v)));
  if (v == 0) return x.constLike(1);
  if (!isInt && std::trunc(v - 0.5) + 0.5 == v) return x.pow(x.ufix(Value::floating(v - 0.5))) * x.sqrt();
  if (std::trunc(v) == v) {
    UOpRef y = x.pow(x.ufix(num(std::floor(v / 2))));
    UOpRef rest = std::fmod(v, 2) == 1 ? x : x.ufix(Value::integer(1));
    return y * y * rest;
  }
  return nullptr;
}

// fold_const_where: a const condition picks a branch (a weak const branch of a
// strong where keeps the strong dtype).
const UOp *foldConstWhere(Match &m) {
  UOpRef gate = m["gate"], w = m["w"];
  if (gate.isInvalid()) return nullptr;
  UOpRef ret = numOf(gate->arg()) != 0 ? m["c0"] : m["c1"];
  if (ret.isConst() && ret.dtype().isWeak() && !w.dtype().isWeak()) return commitWeak(ret, w.dtype());
  return ret;
}

} // namespace

const PatternMatcher &pmDataInvalid() {
  static const PatternMatcher pm = [] {
    UPat inv = UPat(Op::CONST).arg(Value::invalid()).named("i");
    UPat gate = var("cond").where(var("x"), inv);
    OpSet unaryCast = group::Unary | OpSet{Op::CAST, Op::BITCAST};
    OpSet binaryNoCmp;
    group::Binary.forEach([&](Op o) {
      if (!group::Comparison.contains(o)) binaryNoCmp.insert(o);
    });
    UPat invIndex = UPat(Op::INDEX).src({UPat(), inv}).allowAnyLen().orCasted();
    return PatternMatcher({
        rule(inv.broadcast(), [](Match &m) { return m["i"]; }),
        rule(UPat(unaryCast).src({inv}), [](Match &m) { return m["i"]; }),
        rule(UPat(unaryCast).src({gate}).named("op"),
             [](Match &m) { return m["cond"].where(m["op"].withSrc({m["x"]}), m["i"]); }),
        // binary ops move inside the gate, with Invalid in the false branch
        rule(UPat(group::Binary).src({gate, var("y")}).named("alu"),
             [](Match &m) { return m["cond"].where(m["x"].alu(m["alu"]->op(), {m["y"]}), m["i"]); }),
        rule(UPat(group::Binary).src({var("y"), gate}).named("alu"),
             [](Match &m) { return m["cond"].where(m["y"].alu(m["alu"]->op(), {m["x"]}), m["i"]); }),
        rule(UPat(binaryNoCmp).srcAnyOrder({inv, UPat()}), [](Match &m) { return m["i"]; }),
        // an Invalid condition poisons the whole where; a gated Invalid condition lifts the gate out
        rule(inv.where(UPat(), UPat()), [](Match &m) { return m["i"]; }),
        rule(gate.where(var("a"), var("b")),
             [](Match &m) { return m["cond"].where(m["x"].where(m["a"], m["b"]), m["i"]); }),
        // where(cond, Invalid, val) -> where(!cond, val, Invalid)
        rule(var("cond").where(inv, var("val")),
             [](Match &m) -> const UOp * {
               if (m["val"].isInvalid()) return m["i"];
               return m["cond"].logicalNot().where(m["val"], m["i"]);
             }),
        // lift Invalid out of a branch
        rule(var("a").where(gate, var("c")),
             [](Match &m) -> const UOp * {
               if (m["c"].isInvalid()) return nullptr;
               return (m["a"].logicalNot() | m["cond"]).where(m["a"].where(m["x"], m["c"]), m["i"]);
             }),
        rule(var("a").where(var("b"), gate),
             [](Match &m) -> const UOp * {
               if (m["b"].isInvalid()) return nullptr;
               return (m["a"] | m["cond"]).where(m["a"].where(m["b"], m["x"]), m["i"]);
             }),
        // a STORE to / LOAD from an Invalid index does nothing / gives the alt value
        rule(UPat(Op::STORE).src({invIndex, UPat()}),
             [](Match &m) { return m.root().ctx().get(Op::NOOP, dtypes::Void); }),
        rule(UPat(Op::LOAD).src({invIndex}).allowAnyLen().named("x"),
             [](Match &m) -> const UOp * {
               UOpRef x = m["x"];
               return x->numSrc() > 1 ? UOpRef(x->src(1)) : x.constLike(0);
             }),
    });
  }();
  return pm;
}

static std::vector<Rule> symbolicSimpleRules() {
  using namespace dtypes;
  auto I = [](Match &m) { return m["i"]; };
  (void)I;
  UPat constFolding = UPat(OpSet{Op::CONST, Op::STACK});
  OpSet binaryNoThreefry;
  group::Binary.forEach([&](Op o) {
    if (o != Op::THREEFRY) binaryNoThreefry.insert(o);
  });
  auto returnX = [](Match &m) { return m["x"]; };
  return {
      // ** self folding **
      rule(UPat(OpSet{Op::ADD, Op::XOR, Op::OR}).srcAnyOrder({var("x"), cnst(0)}), returnX),
      rule(UPat(OpSet{Op::SHL, Op::SHR}).src({var("x"), cnst(0)}), returnX),
      rule(var("x") * 1, returnX),
      rule(var("x") / var("x"), [](Match &m) { return m["x"].constLike(1); }),
      rule(var("x") / 1, returnX),
      rule(var("x") / -1, [](Match &m) { return -m["x"]; }),
      rule((var("x") ^ var("y")) ^ var("y"), returnX),
      rule((var() % var("y")).named("base") % var("y"), [](Match &m) { return m["base"]; }),
      // variations of (x%c)+(x//c)*c = x
      rule(UPat(Op::ADD).dtype(WeakInt).named("x"), [](Match &m) { return foldAddDivmodRecombine(m["x"]); }),
      rule(var("x", Bool) & cvar("c"), [](Match &m) { return m["c"]->arg() == Value::boolean(false) || numOf(m["c"]->arg()) == 0 ? m["c"] : m["x"]; }),
      rule(var("x", Bool) | cvar("c"), [](Match &m) { return numOf(m["c"]->arg()) != 0 ? m["c"] : m["x"]; }),
      rule(var("x", Bool) != cnst(false, Bool), returnX),
      rule(UPat(group::Idempotent).src({var("x"), var("x")}), returnX),
      rule(var("x", Bool).logicalNot().logicalNot(), returnX),
      rule(var("x", Bool).where(cnst(true, Bool), cnst(false, Bool)), returnX),
      rule(var("x", Bool).where(cnst(false, Bool), cnst(true, Bool)), [](Match &m) { return m["x"].logicalNot(); }),
      // CAST(bool -> int) != c: CAST(True) is 1 and CAST(False) is 0
      rule(var("x", Bool).cast(intOrWeakDTypes()) != cvar("c"),
           [](Match &m) -> const UOp * {
             double c = numOf(m["c"]->arg());
             if (c == 0) return m["x"];
             if (c == 1) return m["x"].logicalNot();
             return m["x"].constLike(true);
           }),
      rule(var("x", intBoolWeakDTypes()).trunc(), returnX),
      // ** zero folding **
      rule(var("x") < var("x"), [](Match &m) { return m["x"].constLike(false, Bool); }),
      rule(var("x") % var("x"), [](Match &m) { return m["x"].constLike(0); }),
      rule(var("x") ^ var("x"), [](Match &m) { return m["x"].constLike(0); }),
      rule(var("x") & 0, [](Match &m) { return m["x"].constLike(0); }),
      // (x&mask)>>k -> x>>k when the mask only clears bits below k
      rule((var("x") & cvar("mask")) >> cvar("k"),
           [](Match &m) -> const UOp * {
             if (!isIntConst(m["mask"]) || !isIntConst(m["k"])) return nullptr;
             int64_t mask = m["mask"].val(), k = m["k"].val();
             if (k < 0) return nullptr;
             bool clearsBelow = k >= 63 ? mask < 0 : (mask | ((int64_t(1) << k) - 1)) == -1;
             return clearsBelow ? m["x"] >> k : nullptr;
           }),
      rule((var("x") & cvar("mask")) / cvar("c"),
           [](Match &m) -> const UOp * {
             if (!isIntConst(m["mask"]) || !isIntConst(m["c"])) return nullptr;
             int64_t mask = m["mask"].val(), c = m["c"].val();
             if (c > 0 && (c & (c - 1)) == 0 && (mask | (c - 1)) == -1) return m["x"] / c;
             return nullptr;
           }),
      rule(var("x", intBoolWeakDTypes()) != var("x"), [](Match &m) { return m["x"].constLike(false, Bool); }),
      // ** constant folding **
      // a CAST to a concrete dtype of a CONST is a value conversion
      rule(UPat(Op::CAST).dtype(strongDTypes()).named("root").src({cvar("c")}),
           [](Match &m) { return m["root"].constLike(m["c"]->arg()); }),
      rule(UPat(group::Unary).src({constFolding}).named("a"), foldConstAlu),
      rule(UPat(binaryNoThreefry).src({constFolding, constFolding}).named("a"), foldConstAlu),
      rule(UPat(group::Ternary).src({constFolding, constFolding, constFolding}).named("a"), foldConstAlu),
      // bool MUL is AND, ADD/MAX is OR
      rule(var("x", Bool) * var("y", Bool), [](Match &m) { return m["x"] & m["y"]; }),
      rule(var("x", Bool) + var("y", Bool), [](Match &m) { return m["x"] | m["y"]; }),
      rule(var("x", Bool).maximum(var("y", Bool)), [](Match &m) { return m["x"] | m["y"]; }),
      // ** float div rules **
      rule(fdiv(cvar("x").arg(0), cnst(0)), [](Match &m) { return m["x"].constLike(NAN); }),
      rule(fdiv(var("x") * 0, cnst(0)), [](Match &m) { return m["x"].constLike(NAN); }),
      rule(fdiv(var("x"), var("x")), [](Match &m) { return m["x"].constLike(1); }),
      rule(fdiv(var("x") * var("x2"), var("x2")), returnX),
      // x*0 -> 0 (a NaN or inf constant gives NaN)
      rule(var("x") * 0,
           [](Match &m) {
             UOpRef x = m["x"];
             bool nanOrInf = x.isConst() && x->arg().isFloat() && !std::isfinite(x->arg().getFloat());
             return nanOrInf ? x.constLike(NAN) : x.constLike(0);
           }),
      // ** cast/bitcast **
      rule(UPat(OpSet{Op::CAST, Op::BITCAST}).named("root"),
           [](Match &m) -> const UOp * {
             UOpRef r = m["root"];
             return r->numSrc() == 1 && r.dtype() == r->src(0)->dtype() ? r->src(0) : nullptr;
           }),
      rule(UPat(Op::BITCAST).named("root").src({cvar("c")}), foldBitcast),
      // b.cast(a).cast(b) -> b if a preserves all values of b
      rule(var("x").cast().named("a").cast().named("b"),
           [](Match &m) -> const UOp * {
             DType b = m["b"].dtype();
             return m["x"].dtype() == b && canLosslessCast(b, m["a"].dtype()) ? m["x"] : nullptr;
           }),
      rule(UPat(Op::BITCAST).named("b").src({var("x").bitcast()}), [](Match &m) { return m["x"].bitcast(m["b"].dtype()); }),
      rule(var("x").cast(Bool), [](Match &m) { return m["x"].ne(0); }),
      // ** pow **
      rule(var("x").alu(Op::POW, {cvar("c")}), simplifyPow),
      rule(cvar("c").alu(Op::POW, {var("x")}),
           [](Match &m) -> const UOp * {
             double c = numOf(m["c"]->arg());
             if (c == 1) return m["c"];
             if (c > 0) return (m["x"] * std::log2(c)).exp2();
             return nullptr;
           }),
      // unpack a uint64 packed from two uint32 (threefry)
      rule(((var("", UInt64) << 32) | var("y", UInt32).cast(UInt64)).cast(UInt32), [](Match &m) { return m["y"]; }),
      rule(((var("x", UInt32).cast(UInt64) << 32) | var("", UInt32).cast(UInt64)) >> 32,
           [](Match &m) { return m["x"].cast(UInt64); }),
      // ** simple where folding **
      rule(var().where(var("val"), var("val")), [](Match &m) { return m["val"]; }),
      rule(cvar("gate").where(var("c0"), var("c1")).named("w"), foldConstWhere),
      // a.where(b.where(c, d), d) -> (a & b).where(c, d)
      rule(var("a").where(var("b").where(var("c"), var("d")), var("d")),
           [](Match &m) { return (m["a"] & m["b"]).where(m["c"], m["d"]); }),
      // a.where(c, b.where(c, d)) -> (a | b).where(c, d)
      rule(var("a").where(var("c"), var("b").where(var("c"), var("d"))),
           [](Match &m) { return (m["a"] | m["b"]).where(m["c"], m["d"]); }),
  };
}

const PatternMatcher &symbolicSimple() {
  static const PatternMatcher pm = pmDataInvalid() + PatternMatcher(symbolicSimpleRules());
  return pm;
}

} // namespace tgc
