//===- Numerics.cpp - tinygrad's scalar semantics on MLIR arith/math -------===//
//
// Literals follow dtype.const, ALU ops follow python_alu (ops.py) and the CPU
// renderers' decompositions: MAX is `(a<b) ? b : a` (decomp/op.py), POW is
// xpow (decomp/transcendental.py), FLOORDIV/FLOORMOD round toward -inf while
// CDIV/CMOD truncate, casts to bool are `!= 0`. The 16-bit floats follow the
// clang renderer of tinygrad's CPU device: half is `__fp16`, a storage-only
// type whose arithmetic clang promotes to float, so it is held in f32 and
// rounded only at casts and stores; bfloat16 ALU ops are computed in float
// and cast back (create_non_native_float_pats), so every op rounds.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Lower/Numerics.h"
#include "Codegen/Lower/Transcendental.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

namespace tgc::codegen {

using namespace mlir;
using mlir::Location; // not tgc::Location
using mlir::Value;    // not tgc::Value
namespace ar = mlir::arith;

// Float ops may fuse into FMAs (tinygrad's clang contracts within an
// expression); no reassoc/nnan/ninf, so reduction order and the inf/NaN
// semantics stay tinygrad's.
static constexpr ar::FastMathFlags kFMF = ar::FastMathFlags::contract;

Type regType(MLIRContext *ctx, DType dt) {
  if (!dt) return {};
  switch (dt->kind) {
  case DTypeKind::Bool: return IntegerType::get(ctx, 1);
  case DTypeKind::SInt:
  case DTypeKind::UInt: return IntegerType::get(ctx, dt.bitsize());
  case DTypeKind::WeakInt: return IntegerType::get(ctx, 64);
  case DTypeKind::WeakFloat: return Float64Type::get(ctx);
  case DTypeKind::Float:
    if (dt == dtypes::Float16 || dt == dtypes::BFloat16 || dt == dtypes::Float32) return Float32Type::get(ctx);
    if (dt == dtypes::Float64) return Float64Type::get(ctx);
    return {}; // fp8
  case DTypeKind::Void: return {};
  }
  return {};
}

Type memType(MLIRContext *ctx, DType dt) {
  if (!dt || dt.isWeak()) return {};
  if (dt.isBool()) return IntegerType::get(ctx, 8);
  if (dt == dtypes::BFloat16) return IntegerType::get(ctx, 16);
  if (dt == dtypes::Float16) return Float16Type::get(ctx);
  return regType(ctx, dt);
}

Value Numerics::fail(std::string msg) {
  if (error.empty()) error = std::move(msg);
  return {};
}

Value Numerics::fconst(Type t, double v) {
  llvm::APFloat f(v);
  bool lost = false;
  f.convert(cast<FloatType>(t).getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return ar::ConstantOp::create(b_, loc_, b_.getFloatAttr(t, f));
}

Value Numerics::iconst(Type t, int64_t v) {
  unsigned w = t.getIntOrFloatBitWidth();
  return ar::ConstantOp::create(b_, loc_, b_.getIntegerAttr(t, llvm::APInt(64, uint64_t(v)).trunc(w)));
}

Value Numerics::constant(const tgc::Value &v, DType dt) {
  Type t = regType(b_.getContext(), dt);
  if (!t) return fail("unsupported dtype " + std::string(dt ? dt.name() : "?"));
  double f;
  int64_t i;
  switch (v.kind()) {
  case tgc::Value::Kind::Bool: f = i = v.getBool(); break;
  case tgc::Value::Kind::Int: i = v.getInt(), f = double(v.getInt()); break;
  case tgc::Value::Kind::UInt: i = int64_t(v.getUInt()), f = double(v.getUInt()); break;
  case tgc::Value::Kind::Float:
    f = v.getFloat();
    // Python's int() truncates toward zero; out-of-range floats (the -inf
    // identity of a float MAX, say) have no int value and need none unless
    // the constant is an integer.
    if (dt.isInt() && !(std::fabs(f) < 9.2e18)) return fail("float literal " + v.toString() + " does not fit " + std::string(dt.name()));
    i = dt.isInt() ? int64_t(f) : 0;
    break;
  default: return fail("literal " + v.toString() + " has no value of dtype " + std::string(dt.name()));
  }
  if (dt.isBool()) return iconst(t, v.isFloat() ? f != 0.0 : i != 0);
  if (dt.isInt()) return iconst(t, i);
  if (dt == dtypes::BFloat16 || dt == dtypes::Float16) {
    // The literal is a 16-bit float value, held in f32.
    llvm::APFloat h(f);
    bool lost = false;
    h.convert(dt == dtypes::BFloat16 ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf(),
              llvm::APFloat::rmNearestTiesToEven, &lost);
    h.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &lost);
    return ar::ConstantOp::create(b_, loc_, b_.getFloatAttr(t, h));
  }
  return fconst(t, f);
}

Value Numerics::identity(Op op, DType dt) {
  switch (op) {
  case Op::ADD: return constant(tgc::Value::integer(0), dt);
  case Op::MUL: return constant(tgc::Value::integer(1), dt);
  case Op::MAX:
    if (dt.isFloat()) return constant(tgc::Value::floating(-std::numeric_limits<double>::infinity()), dt);
    if (dt.isBool()) return constant(tgc::Value::boolean(false), dt);
    return constant(tgc::Value::integer(dt.minInt()), dt);
  default: return fail("REDUCE with op " + std::string(opName(op)) + " has no identity element");
  }
}

// Round-to-nearest-even of an f32 to bfloat16, as the 16 stored bits (i16).
// Integer ops, so no target bf16 support or libcall is needed. NaN stays a
// quiet NaN.
static Value bf16Bits(OpBuilder &b, Location loc, Value f32) {
  Type i32 = b.getI32Type();
  auto c = [&](uint32_t v) { return ar::ConstantOp::create(b, loc, b.getIntegerAttr(i32, v)); };
  Value bits = ar::BitcastOp::create(b, loc, i32, f32);
  Value lsb = ar::AndIOp::create(b, loc, ar::ShRUIOp::create(b, loc, bits, c(16)), c(1));
  Value rounded = ar::AddIOp::create(b, loc, ar::AddIOp::create(b, loc, bits, c(0x7fff)), lsb);
  Value quietNan = ar::OrIOp::create(b, loc, bits, c(0x400000));
  Value isNan = ar::CmpFOp::create(b, loc, ar::CmpFPredicate::UNO, f32, f32);
  Value sel = ar::SelectOp::create(b, loc, isNan, quietNan, rounded);
  return ar::TruncIOp::create(b, loc, b.getI16Type(), ar::ShRUIOp::create(b, loc, sel, c(16)));
}

static Value bf16ToF32(OpBuilder &b, Location loc, Value i16) {
  Type i32 = b.getI32Type();
  Value w = ar::ExtUIOp::create(b, loc, i32, i16);
  Value s = ar::ShLIOp::create(b, loc, w, ar::ConstantOp::create(b, loc, b.getIntegerAttr(i32, 16)));
  return ar::BitcastOp::create(b, loc, b.getF32Type(), s);
}

Value Numerics::roundToBF16(Value f32) { return bf16ToF32(b_, loc_, bf16Bits(b_, loc_, f32)); }

Value Numerics::roundToF16(Value f32) {
  Value half = ar::TruncFOp::create(b_, loc_, b_.getF16Type(), f32);
  return ar::ExtFOp::create(b_, loc_, b_.getF32Type(), half);
}

Value Numerics::round16(Value f32, DType dt) {
  if (dt == dtypes::BFloat16) return roundToBF16(f32);
  if (dt == dtypes::Float16) return roundToF16(f32);
  return f32;
}

Value Numerics::toMem(Value v, DType dt) {
  if (dt.isBool()) return ar::ExtUIOp::create(b_, loc_, b_.getI8Type(), v);
  if (dt == dtypes::BFloat16) return bf16Bits(b_, loc_, v);
  if (dt == dtypes::Float16) return ar::TruncFOp::create(b_, loc_, b_.getF16Type(), v);
  return v;
}

Value Numerics::fromMem(Value v, DType dt) {
  if (dt.isBool()) return ar::CmpIOp::create(b_, loc_, ar::CmpIPredicate::ne, v, iconst(v.getType(), 0));
  if (dt == dtypes::BFloat16) return bf16ToF32(b_, loc_, v);
  if (dt == dtypes::Float16) return ar::ExtFOp::create(b_, loc_, b_.getF32Type(), v);
  return v;
}

Value Numerics::cast(Value v, DType from, DType to) {
  MLIRContext *ctx = b_.getContext();
  Type ft = regType(ctx, from), tt = regType(ctx, to);
  if (!ft || !tt) return fail("unsupported CAST " + std::string(from.name()) + " -> " + std::string(to.name()));
  if (from == to) return v;
  if (to.isBool()) {
    if (from.isFloat()) return ar::CmpFOp::create(b_, loc_, ar::CmpFPredicate::UNE, v, fconst(ft, 0.0));
    return ar::CmpIOp::create(b_, loc_, ar::CmpIPredicate::ne, v, iconst(ft, 0));
  }
  unsigned fw = ft.getIntOrFloatBitWidth(), tw = tt.getIntOrFloatBitWidth();
  if (!from.isFloat() && !to.isFloat()) { // int/bool -> int
    if (tw > fw) {
      if (from.isUnsigned() || from.isBool()) return ar::ExtUIOp::create(b_, loc_, tt, v);
      return ar::ExtSIOp::create(b_, loc_, tt, v);
    }
    if (tw < fw) return ar::TruncIOp::create(b_, loc_, tt, v);
    return v;
  }
  if (!from.isFloat()) { // int/bool -> float
    Value r = (from.isUnsigned() || from.isBool()) ? Value(ar::UIToFPOp::create(b_, loc_, tt, v))
                                                   : Value(ar::SIToFPOp::create(b_, loc_, tt, v));
    return round16(r, to);
  }
  if (!to.isFloat()) { // float -> int
    if (to.isUnsigned()) return ar::FPToUIOp::create(b_, loc_, tt, v);
    return ar::FPToSIOp::create(b_, loc_, tt, v);
  }
  // float -> float (both 16-bit floats are held in f32). Like tinygrad's clang
  // renderer, f64 -> f16/bf16 goes through f32.
  if (fw == 64 && tw == 32) {
    v = ar::TruncFOp::create(b_, loc_, tt, v);
    fw = 32;
  }
  if (to == dtypes::BFloat16 || to == dtypes::Float16) return round16(v, to);
  if (tw > fw) return ar::ExtFOp::create(b_, loc_, tt, v);
  if (tw < fw) return ar::TruncFOp::create(b_, loc_, tt, v);
  return v;
}

Value Numerics::bitcast(Value v, DType from, DType to) {
  MLIRContext *ctx = b_.getContext();
  Type fm = memType(ctx, from), tm = memType(ctx, to);
  if (!fm || !tm || from.isBool() || to.isBool() || fm.getIntOrFloatBitWidth() != tm.getIntOrFloatBitWidth())
    return fail("unsupported BITCAST " + std::string(from.name()) + " -> " + std::string(to.name()));
  Value m = toMem(v, from);
  if (fm != tm) m = ar::BitcastOp::create(b_, loc_, tm, m);
  return fromMem(m, to);
}

Value Numerics::compare(Op op, DType opDt, Value a, Value c) {
  if (opDt.isFloat()) {
    ar::CmpFPredicate p = op == Op::CMPLT ? ar::CmpFPredicate::OLT
                          : op == Op::CMPNE ? ar::CmpFPredicate::UNE // NaN != NaN is true
                                            : ar::CmpFPredicate::OEQ;
    return ar::CmpFOp::create(b_, loc_, p, a, c);
  }
  bool uns = opDt.isUnsigned() || opDt.isBool(); // False < True
  ar::CmpIPredicate p = op == Op::CMPLT ? (uns ? ar::CmpIPredicate::ult : ar::CmpIPredicate::slt)
                        : op == Op::CMPNE ? ar::CmpIPredicate::ne
                                          : ar::CmpIPredicate::eq;
  return ar::CmpIOp::create(b_, loc_, p, a, c);
}

// Python's // and % on ints: the truncating quotient, minus one when the
// remainder is nonzero and its sign differs from the divisor's.
Value Numerics::intDivMod(Op op, DType dt, Value a, Value c) {
  bool isDiv = op == Op::FLOORDIV || op == Op::CDIV;
  if (dt.isUnsigned() || op == Op::CDIV || op == Op::CMOD) {
    if (dt.isUnsigned()) return isDiv ? Value(ar::DivUIOp::create(b_, loc_, a, c)) : Value(ar::RemUIOp::create(b_, loc_, a, c));
    return isDiv ? Value(ar::DivSIOp::create(b_, loc_, a, c)) : Value(ar::RemSIOp::create(b_, loc_, a, c));
  }
  Type t = a.getType();
  Value q = ar::DivSIOp::create(b_, loc_, a, c);
  Value r = ar::RemSIOp::create(b_, loc_, a, c);
  Value zero = iconst(t, 0);
  Value nonzero = ar::CmpIOp::create(b_, loc_, ar::CmpIPredicate::ne, r, zero);
  Value signDiffers = ar::CmpIOp::create(b_, loc_, ar::CmpIPredicate::slt, ar::XOrIOp::create(b_, loc_, r, c), zero);
  Value fix = ar::AndIOp::create(b_, loc_, nonzero, signDiffers);
  if (isDiv) return ar::SubIOp::create(b_, loc_, q, ar::ExtUIOp::create(b_, loc_, t, fix));
  return ar::SelectOp::create(b_, loc_, fix, ar::AddIOp::create(b_, loc_, r, c), r);
}

Value Numerics::exp2(Value x) {
  return polyTranscendentals ? polyExp2(b_, loc_, x, ldexpScale) : Value(math::Exp2Op::create(b_, loc_, x));
}
Value Numerics::log2(Value x) {
  return polyTranscendentals ? polyLog2(b_, loc_, x) : Value(math::Log2Op::create(b_, loc_, x));
}

// EXP2/LOG2/SIN/SQRT/TRUNC in the register type (f32 for the 16-bit floats).
// EXP2, LOG2 and SIN are the branch-free polynomials of Transcendental.h, or
// with polyTranscendentals off llvm intrinsics, i.e. one libm call per element.
Value Numerics::floatUnary(Op op, Value x) {
  Value r;
  switch (op) {
  case Op::EXP2: r = exp2(x); break;
  case Op::LOG2: r = log2(x); break;
  case Op::SIN: r = polyTranscendentals ? polySin(b_, loc_, x) : Value(math::SinOp::create(b_, loc_, x)); break;
  case Op::SQRT: r = math::SqrtOp::create(b_, loc_, x); break;
  case Op::TRUNC: r = math::TruncOp::create(b_, loc_, x); break;
  default: return fail("not a float unary op: " + std::string(opName(op)));
  }
  return r;
}

// tinygrad's xpow: exp2(log2|b| * e), NaN for a negative base with a
// non-integer exponent (except -inf), negated for odd integer exponents, and
// x ** 0 == 1.
Value Numerics::pow(Value base, Value e) {
  Type ct = base.getType();
  Value zero = fconst(ct, 0.0);
  Value baseNeg = ar::CmpFOp::create(b_, loc_, ar::CmpFPredicate::OLT, base, zero);
  Value absBase = ar::SelectOp::create(b_, loc_, baseNeg, ar::NegFOp::create(b_, loc_, base), base);
  Value ret = exp2(ar::MulFOp::create(b_, loc_, log2(absBase), e, kFMF));
  Value truncE = math::TruncOp::create(b_, loc_, e);
  Value nonInt = ar::CmpFOp::create(b_, loc_, ar::CmpFPredicate::UNE, e, truncE);
  Value absE = math::AbsFOp::create(b_, loc_, truncE);
  // |e| - 2*trunc(|e|/2), exact for an integer |e| (frem would be an fmod call per element).
  Value halfE = math::TruncOp::create(b_, loc_, ar::MulFOp::create(b_, loc_, absE, fconst(ct, 0.5)));
  Value parity = ar::SubFOp::create(b_, loc_, absE, ar::MulFOp::create(b_, loc_, halfE, fconst(ct, 2.0)));
  Value isOdd = ar::CmpFOp::create(b_, loc_, ar::CmpFPredicate::OEQ, parity, fconst(ct, 1.0));
  Value notNegInf = ar::CmpFOp::create(b_, loc_, ar::CmpFPredicate::UNE, base,
                                       fconst(ct, -std::numeric_limits<double>::infinity()));
  Value nan = fconst(ct, std::numeric_limits<double>::quiet_NaN());
  Value negBase = ar::SelectOp::create(
      b_, loc_, nonInt, ar::SelectOp::create(b_, loc_, notNegInf, nan, ret),
      ar::SelectOp::create(b_, loc_, isOdd, ar::NegFOp::create(b_, loc_, ret), ret));
  Value eIsZero = ar::CmpFOp::create(b_, loc_, ar::CmpFPredicate::OEQ, e, zero);
  return ar::SelectOp::create(b_, loc_, eIsZero, fconst(ct, 1.0), ar::SelectOp::create(b_, loc_, baseNeg, negBase, ret));
}

// THREEFRY(x, key): the threefry2x32 block cipher, 20 rounds, on the counter x
// and the key each packed as two 32-bit words (low word first) in a uint64, as
// tinygrad decomposes it for every backend (decomp/op.py): key schedule
// {k1, k0 ^ k1 ^ 0x1BD11BDA, k0}, rotations {13,15,26,6} / {17,29,16,24}
// alternating per 4 rounds, the key injected after each 4 with the injection
// count added to the second word. Plain 32-bit adds, xors and rotates, so a
// loop of them vectorizes.
Value Numerics::threefry(Value x, Value key) {
  Type i32 = b_.getI32Type(), i64 = x.getType();
  Value c32 = iconst(i64, 32);
  auto lo = [&](Value v) -> Value { return ar::TruncIOp::create(b_, loc_, i32, v); };
  auto hi = [&](Value v) -> Value { return lo(ar::ShRUIOp::create(b_, loc_, v, c32)); };
  auto add = [&](Value a, Value c) -> Value { return ar::AddIOp::create(b_, loc_, a, c); };
  auto rotl = [&](Value v, int r) -> Value {
    Value l = ar::ShLIOp::create(b_, loc_, v, iconst(i32, r));
    return ar::OrIOp::create(b_, loc_, l, ar::ShRUIOp::create(b_, loc_, v, iconst(i32, 32 - r)));
  };
  Value k0 = lo(key), k1 = hi(key);
  Value ks[3] = {k1, ar::XOrIOp::create(b_, loc_, ar::XOrIOp::create(b_, loc_, k0, k1), iconst(i32, 0x1BD11BDA)), k0};
  static constexpr int kRot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  Value w0 = add(lo(x), ks[2]), w1 = add(hi(x), ks[0]);
  for (int i = 0; i < 5; ++i) {
    for (int r : kRot[i % 2]) {
      w0 = add(w0, w1);
      w1 = ar::XOrIOp::create(b_, loc_, w0, rotl(w1, r));
    }
    w0 = add(w0, ks[i % 3]);
    w1 = add(add(w1, ks[(i + 1) % 3]), iconst(i32, i + 1));
  }
  Value h = ar::ShLIOp::create(b_, loc_, ar::ExtUIOp::create(b_, loc_, i64, w1), c32);
  return ar::OrIOp::create(b_, loc_, h, ar::ExtUIOp::create(b_, loc_, i64, w0));
}

// Where tinygrad's CPU kernels round a 16-bit float result: every bfloat16 op
// (computed in float and cast back); for half (`__fp16`, arithmetic in float)
// only the transcendentals, which tinygrad evaluates as half polynomials.
static bool roundsResult(Op op, DType dt) {
  if (dt == dtypes::BFloat16) return op != Op::WHERE && op != Op::MAX && !group::Comparison.contains(op);
  return dt == dtypes::Float16 && (op == Op::EXP2 || op == Op::LOG2 || op == Op::SIN || op == Op::POW);
}

Value Numerics::alu(Op op, DType dt, DType opDt, llvm::ArrayRef<Value> xs) {
  Value r = aluInRegisters(op, opDt, xs);
  return r && roundsResult(op, dt) ? round16(r, dt) : r;
}

Value Numerics::aluInRegisters(Op op, DType opDt, llvm::ArrayRef<Value> xs) {
  auto unsupported = [&]() {
    return fail("unsupported " + std::string(opName(op)) + " on " + std::string(opDt.name()));
  };
  bool isF = opDt.isFloat(), isB = opDt.isBool();
  switch (op) {
  case Op::ADD:
    if (isF) return ar::AddFOp::create(b_, loc_, xs[0], xs[1], kFMF);
    if (isB) return ar::OrIOp::create(b_, loc_, xs[0], xs[1]);
    return ar::AddIOp::create(b_, loc_, xs[0], xs[1]);
  case Op::SUB:
    if (isF) return ar::SubFOp::create(b_, loc_, xs[0], xs[1], kFMF);
    if (isB) return ar::XOrIOp::create(b_, loc_, xs[0], xs[1]);
    return ar::SubIOp::create(b_, loc_, xs[0], xs[1]);
  case Op::MUL:
    if (isF) return ar::MulFOp::create(b_, loc_, xs[0], xs[1], kFMF);
    if (isB) return ar::AndIOp::create(b_, loc_, xs[0], xs[1]);
    return ar::MulIOp::create(b_, loc_, xs[0], xs[1]);
  case Op::MULACC:
    if (isF) return ar::AddFOp::create(b_, loc_, ar::MulFOp::create(b_, loc_, xs[0], xs[1], kFMF), xs[2], kFMF);
    if (isB) return unsupported();
    return ar::AddIOp::create(b_, loc_, ar::MulIOp::create(b_, loc_, xs[0], xs[1]), xs[2]);
  case Op::FDIV:
    if (!isF) return unsupported();
    return ar::DivFOp::create(b_, loc_, xs[0], xs[1], kFMF);
  case Op::RECIPROCAL:
    if (!isF) return unsupported();
    return ar::DivFOp::create(b_, loc_, fconst(xs[0].getType(), 1.0), xs[0], kFMF);
  case Op::NEG:
    if (isF) return ar::NegFOp::create(b_, loc_, xs[0], kFMF);
    if (isB) return ar::XOrIOp::create(b_, loc_, xs[0], iconst(xs[0].getType(), 1));
    return ar::SubIOp::create(b_, loc_, iconst(xs[0].getType(), 0), xs[0]);
  case Op::CDIV:
  case Op::CMOD:
  case Op::FLOORDIV:
  case Op::FLOORMOD:
    if (isB) return unsupported();
    if (isF) {
      if (op != Op::FLOORDIV && op != Op::FLOORMOD) return unsupported();
      Value q = math::FloorOp::create(b_, loc_, ar::DivFOp::create(b_, loc_, xs[0], xs[1]));
      if (op == Op::FLOORDIV) return q;
      return ar::SubFOp::create(b_, loc_, xs[0], ar::MulFOp::create(b_, loc_, xs[1], q));
    }
    return intDivMod(op, opDt, xs[0], xs[1]);
  case Op::MAX: return ar::SelectOp::create(b_, loc_, compare(Op::CMPLT, opDt, xs[0], xs[1]), xs[1], xs[0]);
  case Op::CMPLT:
  case Op::CMPNE:
  case Op::CMPEQ: return compare(op, opDt, xs[0], xs[1]);
  case Op::AND:
  case Op::OR:
  case Op::XOR:
    if (isF) return unsupported();
    if (op == Op::AND) return ar::AndIOp::create(b_, loc_, xs[0], xs[1]);
    if (op == Op::OR) return ar::OrIOp::create(b_, loc_, xs[0], xs[1]);
    return ar::XOrIOp::create(b_, loc_, xs[0], xs[1]);
  case Op::SHL:
  case Op::SHR:
    if (isF || isB) return unsupported();
    if (op == Op::SHL) return ar::ShLIOp::create(b_, loc_, xs[0], xs[1]);
    if (opDt.isUnsigned()) return ar::ShRUIOp::create(b_, loc_, xs[0], xs[1]);
    return ar::ShRSIOp::create(b_, loc_, xs[0], xs[1]);
  case Op::WHERE: return ar::SelectOp::create(b_, loc_, xs[0], xs[1], xs[2]);
  case Op::THREEFRY:
    if (opDt != dtypes::UInt64) return unsupported();
    return threefry(xs[0], xs[1]);
  case Op::POW:
    if (!isF) return unsupported();
    return pow(xs[0], xs[1]);
  case Op::EXP2:
  case Op::LOG2:
  case Op::SIN:
  case Op::SQRT:
  case Op::TRUNC:
    if (!isF) return op == Op::TRUNC ? xs[0] : unsupported();
    if (op == Op::SQRT) return math::SqrtOp::create(b_, loc_, xs[0]); // correctly rounded in every width
    return floatUnary(op, xs[0]);
  default: return unsupported();
  }
}

} // namespace tgc::codegen
