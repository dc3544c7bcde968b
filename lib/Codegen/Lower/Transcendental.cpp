//===- Transcendental.cpp - branch-free EXP2/LOG2/SIN as arith ops ---------===//
//
// Every function is straight-line code over one element: argument reduction
// with integer/bit operations, a polynomial in Horner form, and selects for
// the special values, so LLVM vectorizes a loop of them. Why this and not
// MLIR's math polynomial approximations: those cover f32 only, have no exp2,
// and reduce sin's argument with a one-constant pi/2 that loses every digit
// for large |x|; tinygrad's own CPU backends evaluate this algorithm family,
// so results also stay closest to tinygrad's (docs/codegen.md).
//
// Constants (polynomials, pi/2 splits, the bits of 2/pi) come from
// scripts/transcendental_constants.py via TranscendentalConstants.inc.
//
// Rounding to an integer uses the (x + 1.5*2^p) - 1.5*2^p trick rather than
// math.roundeven/floor, which become libm calls on CPUs without a rounding
// instruction (x86-64 before SSE4.1). Float ops carry `contract` only: a
// fused multiply-add never hurts these sequences (every product that must be
// exact already is), and there is no reassociation that could undo them.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Lower/Transcendental.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

namespace tgc::codegen {

namespace {

#include "Codegen/Lower/TranscendentalConstants.inc"

using namespace mlir;
namespace ar = mlir::arith;

constexpr ar::FastMathFlags kContract = ar::FastMathFlags::contract;
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T, size_t N> std::vector<double> asDoubles(const T (&cs)[N]) { return std::vector<double>(cs, cs + N); }

/// Arithmetic on one float type (f32 or f64) and its same-width integer type.
class Emitter {
public:
  Emitter(OpBuilder &b, Location loc, Type floatType)
      : b_(b), loc_(loc), ft_(cast<FloatType>(floatType)), is64_(floatType.isF64()),
        it_(b.getIntegerType(is64_ ? 64 : 32)), mant_(is64_ ? 52 : 23), bias_(is64_ ? 1023 : 127) {}

  Type floatType() const { return ft_; }
  Type intType() const { return it_; }
  bool is64() const { return is64_; }
  unsigned mantissaBits() const { return mant_; }

  Value f(double v) {
    llvm::APFloat a(v);
    bool lost = false;
    a.convert(ft_.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
    return ar::ConstantOp::create(b_, loc_, b_.getFloatAttr(ft_, a));
  }
  Value i(int64_t v) { return ar::ConstantOp::create(b_, loc_, b_.getIntegerAttr(it_, llvm::APInt(64, uint64_t(v)).trunc(it_.getWidth()))); }

  Value add(Value a, Value c) { return ar::AddFOp::create(b_, loc_, a, c, kContract); }
  Value sub(Value a, Value c) { return ar::SubFOp::create(b_, loc_, a, c, kContract); }
  Value mul(Value a, Value c) { return ar::MulFOp::create(b_, loc_, a, c, kContract); }
  Value div(Value a, Value c) { return ar::DivFOp::create(b_, loc_, a, c, kContract); }
  Value neg(Value a) { return ar::NegFOp::create(b_, loc_, a); }
  Value cmp(ar::CmpFPredicate p, Value a, Value c) { return ar::CmpFOp::create(b_, loc_, p, a, c); }
  Value sel(Value c, Value a, Value d) { return ar::SelectOp::create(b_, loc_, c, a, d); }

  Value addi(Value a, Value c) { return ar::AddIOp::create(b_, loc_, a, c); }
  Value subi(Value a, Value c) { return ar::SubIOp::create(b_, loc_, a, c); }
  Value andi(Value a, Value c) { return ar::AndIOp::create(b_, loc_, a, c); }
  Value shl(Value a, int64_t k) { return ar::ShLIOp::create(b_, loc_, a, i(k)); }
  Value shrs(Value a, int64_t k) { return ar::ShRSIOp::create(b_, loc_, a, i(k)); }
  Value cmpi(ar::CmpIPredicate p, Value a, Value c) { return ar::CmpIOp::create(b_, loc_, p, a, c); }
  Value toInt(Value v) { return ar::FPToSIOp::create(b_, loc_, it_, v); }
  Value toFloat(Value v) { return ar::SIToFPOp::create(b_, loc_, ft_, v); }
  Value bitsOf(Value v) { return ar::BitcastOp::create(b_, loc_, it_, v); }
  Value fromBits(Value v) { return ar::BitcastOp::create(b_, loc_, ft_, v); }

  /// c[0]*x^(n-1) + ... + c[n-1], Horner's rule.
  Value horner(Value x, const std::vector<double> &cs) {
    Value acc = f(cs[0]);
    for (size_t k = 1; k < cs.size(); ++k) acc = add(mul(acc, x), f(cs[k]));
    return acc;
  }
  /// x rounded to the nearest integer (ties to even), for |x| < 2^(p-1).
  Value roundNearest(Value x) {
    Value magic = f(1.5 * std::ldexp(1.0, int(mant_)));
    return sub(add(x, magic), magic);
  }
  /// 2^q for an integer q in the normal exponent range, built from its bits.
  Value pow2(Value q) { return fromBits(shl(addi(q, i(bias_)), mant_)); }
  /// t reduced modulo 4 into [-4, 4], exactly (t - 4k with an integer k).
  Value mod4(Value t) {
    Value r = sub(t, mul(roundNearest(mul(t, f(0.25))), f(4.0)));
    // Past 2^(p+1) every value is a multiple of 4 (and roundNearest's range ends).
    Value huge = cmp(ar::CmpFPredicate::OGE, math::AbsFOp::create(b_, loc_, t), f(std::ldexp(1.0, int(mant_) + 2)));
    return sel(huge, f(0.0), r);
  }

  OpBuilder &builder() { return b_; }
  Location loc() const { return loc_; }

private:
  OpBuilder &b_;
  Location loc_;
  FloatType ft_;
  bool is64_;
  IntegerType it_;
  unsigned mant_;
  int64_t bias_;
};

using P = ar::CmpFPredicate;
using IP = ar::CmpIPredicate;

/// The address of kTwoOverPiChunks as an internal constant global of the module
/// the builder is inserting into (created on first use).
Value twoOverPiTable(OpBuilder &b, Location loc) {
  constexpr llvm::StringLiteral name = "__tgc_two_over_pi_chunks";
  auto module = b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  Type f64 = b.getF64Type();
  int64_t n = int64_t(std::size(kTwoOverPiChunks));
  if (!module.lookupSymbol(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto data = DenseElementsAttr::get(RankedTensorType::get({n}, f64), llvm::ArrayRef<double>(kTwoOverPiChunks));
    LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(f64, unsigned(n)), /*isConstant=*/true,
                           LLVM::Linkage::Internal, name, data);
  }
  return LLVM::AddressOfOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()), name);
}

/// Payne-Hanek reduction of a finite |x| >= 0 (any magnitude), in f64:
/// x*2/pi = n + f with |f| <= 1/2, returned as (f*pi/2, n mod 4 in some
/// representative). With x = X*2^e, x is scaled by 2^(-24*j0) for the j0 that
/// makes every chunk of 2/pi before chunk j0 contribute a multiple of 4
/// (dropped); the next chunks (f64: 6 = 144 bits, f32: 4 = 96 bits) leave an
/// absolute error below 2^-47. x is split into halves of at most 27 bits (f32
/// arguments need one) so each half times a 24-bit chunk is exact in f64; each
/// product is reduced mod 4 exactly, and the terms are summed (f64: with
/// error compensation). f32 arguments have j0 <= 4, so their chunks are picked
/// by selects; f64 arguments index a constant table (gathers when vectorized,
/// which are slow on CPUs with the gather-data-sampling mitigation).
std::pair<Value, Value> payneHanek(Emitter &e64, Value xd, bool argIs64) {
  OpBuilder &b = e64.builder();
  Location loc = e64.loc();
  const int argBits = argIs64 ? 53 : 24, numChunks = argIs64 ? 6 : 4;
  Value bits = e64.bitsOf(xd);
  Value expo = e64.subi(ar::ShRUIOp::create(b, loc, bits, e64.i(52)), e64.i(1023));
  // Chunk j contributes x*I_j*2^(-24(j+1)), a multiple of 2^(e-argBits+1-24(j+1)):
  // a multiple of 4 for every j < j0 when 24*j0 <= e - argBits - 1.
  Value d = e64.subi(expo, e64.i(argBits + 1));
  d = e64.sel(e64.cmpi(IP::sgt, d, e64.i(0)), d, e64.i(0));
  Value j0 = ar::DivUIOp::create(b, loc, d, e64.i(24));
  Value xs = e64.mul(xd, e64.pow2(e64.subi(e64.i(0), ar::MulIOp::create(b, loc, j0, e64.i(24)))));
  std::vector<Value> halves{xs};
  if (argIs64) {
    Value hi = e64.fromBits(e64.andi(e64.bitsOf(xs), e64.i(~((int64_t(1) << 27) - 1))));
    halves = {hi, e64.sub(xs, hi)};
  }
  // f32: e <= 127, so j0 <= (127 - 25) / 24 = 4.
  constexpr int kMaxJ0F32 = 4;
  Value table;
  std::vector<Value> isJ0;
  if (argIs64) table = twoOverPiTable(b, loc);
  else
    for (int j = 0; j < kMaxJ0F32; ++j) isJ0.push_back(e64.cmpi(IP::eq, j0, e64.i(j)));
  auto chunkAt = [&](int m) -> Value {
    if (argIs64) {
      Type ptr = LLVM::LLVMPointerType::get(b.getContext());
      Value at = LLVM::GEPOp::create(b, loc, ptr, e64.floatType(), table, ValueRange{e64.addi(j0, e64.i(m))},
                                     LLVM::GEPNoWrapFlags::inbounds);
      return LLVM::LoadOp::create(b, loc, e64.floatType(), at);
    }
    Value c = e64.f(kTwoOverPiChunks[kMaxJ0F32 + m]);
    for (int j = kMaxJ0F32 - 1; j >= 0; --j) c = e64.sel(isJ0[size_t(j)], e64.f(kTwoOverPiChunks[j + m]), c);
    return c;
  };
  Value hi = e64.f(0.0), lo = e64.f(0.0);
  for (int m = 0; m < numChunks; ++m) {
    Value chunk = chunkAt(m);
    for (Value h : halves) {
      Value t = e64.mod4(e64.mul(e64.mul(h, chunk), e64.f(std::ldexp(1.0, -24 * (m + 1)))));
      if (!argIs64) {
        hi = e64.add(hi, t);
        continue;
      }
      // Knuth's two-sum: hi + lo == the exact running sum up to lo's rounding.
      Value s = e64.add(hi, t);
      Value bb = e64.sub(s, hi);
      Value err = e64.add(e64.sub(hi, e64.sub(s, bb)), e64.sub(t, bb));
      hi = e64.mod4(s);
      lo = e64.add(lo, err);
    }
  }
  hi = e64.mod4(hi);
  Value n = e64.roundNearest(hi);
  Value f = e64.add(e64.sub(hi, n), lo);
  return {e64.mul(f, e64.f(std::numbers::pi / 2)), e64.toInt(n)};
}

} // namespace

Value polyExp2(OpBuilder &b, Location loc, Value x, bool ldexpScale) {
  Emitter e(b, loc, x.getType());
  // Past these bounds 2^x is inf or 0 anyway; clamping keeps the exponent
  // arithmetic in range. The compares are written so a NaN passes both
  // unchanged (x86: one max and one min), and a NaN argument then makes p NaN
  // and so the result: no select for it at the end.
  double lim = e.is64() ? 1100 : 160;
  Value xc = e.sel(e.cmp(P::OLT, x, e.f(-lim)), e.f(-lim), x);
  xc = e.sel(e.cmp(P::OGT, xc, e.f(lim)), e.f(lim), xc);
  // q = round(xc) by the magic-number add; q's integer is read off the sum's
  // low mantissa bits (exact for |q| < 2^(p-2)), an integer subtract instead
  // of a float-to-int conversion, and defined for a NaN too.
  double magic = 1.5 * std::ldexp(1.0, int(e.mantissaBits()));
  Value t = e.add(xc, e.f(magic));
  Value q = e.sub(t, e.f(magic));
  Value s = e.sub(xc, q); // exact, |s| <= 1/2
  Value p = e.horner(s, e.is64() ? asDoubles(kExp2F64) : asDoubles(kExp2F32));
  Value qi = e.subi(e.bitsOf(t), e.bitsOf(e.f(magic)));
  // p * 2^q in two steps: each half of q is a normal exponent, and a denormal
  // result is rounded once, by the second multiply. ldexp rounds p * 2^q once
  // too, so it gives the same bits in one instruction where the target has it.
  if (ldexpScale) {
    Value q32 = e.is64() ? Value(ar::TruncIOp::create(b, loc, b.getI32Type(), qi)) : qi; // |q| <= 1100
    return LLVM::LoadExpOp::create(b, loc, x.getType(), p, q32);
  }
  Value q1 = e.shrs(qi, 1);
  return e.mul(e.mul(p, e.pow2(q1)), e.pow2(e.subi(qi, q1)));
}

Value polyLog2(OpBuilder &b, Location loc, Value x) {
  Emitter e(b, loc, x.getType());
  // Denormals are scaled into the normal range first.
  Value tiny = e.cmp(P::OLT, x, e.f(std::ldexp(1.0, e.is64() ? -1022 : -126)));
  Value a = e.sel(tiny, e.mul(x, e.f(std::ldexp(1.0, 64))), x);
  // a = m * 2^k with m in [sqrt(1/2), sqrt(2)): k from the bits of a / sqrt(1/2).
  Value ia = e.bitsOf(a);
  Value sqrtHalfBits = e.bitsOf(e.f(1 / std::numbers::sqrt2));
  Value k = e.shrs(e.subi(ia, sqrtHalfBits), e.mantissaBits());
  Value m = e.fromBits(e.subi(ia, e.shl(k, e.mantissaBits())));
  k = e.subi(k, e.sel(tiny, e.i(64), e.i(0)));
  // log2(m) = 2/ln2 * atanh(t) = 2/ln2 * t + t^3 * G(t^2), t = (m-1)/(m+1),
  // |t| <= 0.172. The division rounds t, so the leading term is rewritten with
  // the exact f = m - 1: 2t = f - t*f, and t's error only reaches the terms
  // t*f and t^3*G, which are < 0.2 of the result: <= 1 ULP instead of 2.
  Value f = e.sub(m, e.f(1.0));
  Value t = e.div(f, e.add(m, e.f(1.0)));
  Value z = e.mul(t, t);
  Value g = e.horner(z, e.is64() ? asDoubles(kLog2F64) : asDoubles(kLog2F32));
  const auto &invLn2 = e.is64() ? asDoubles(kInvLn2F64) : asDoubles(kInvLn2F32);
  Value low = e.sub(e.mul(f, e.f(invLn2[1])), e.mul(e.mul(t, f), e.f(invLn2[0])));
  low = e.add(low, e.mul(e.mul(t, z), g));
  Value r = e.add(e.add(e.mul(f, e.f(invLn2[0])), low), e.toFloat(k));
  r = e.sel(e.cmp(P::OEQ, x, e.f(kInf)), e.f(kInf), r);
  r = e.sel(e.cmp(P::OEQ, x, e.f(0.0)), e.f(-kInf), r); // +0 and -0
  return e.sel(e.cmp(P::ULT, x, e.f(0.0)), e.f(std::nan("")), r); // negative or NaN
}

Value polySin(OpBuilder &b, Location loc, Value x) {
  Emitter e(b, loc, x.getType());
  Value ax = math::AbsFOp::create(b, loc, x);
  Value finite = e.cmp(P::OLT, ax, e.f(kInf));
  Value axm = e.sel(finite, ax, e.f(0.0));

  // Cody-Waite: |x| - n*pi/2 with pi/2 in parts short enough that n*part is
  // exact for every n below the threshold.
  Value small = e.cmp(P::OLT, axm, e.f(e.is64() ? std::ldexp(1.0, 22) : 4096.0));
  Value xs = e.sel(small, axm, e.f(0.0));
  Value n = e.roundNearest(e.mul(xs, e.f(2 / std::numbers::pi)));
  Value r = xs;
  for (double part : e.is64() ? asDoubles(kHalfPiF64) : asDoubles(kHalfPiF32)) r = e.sub(r, e.mul(n, e.f(part)));
  Value ni = e.toInt(n);

  // Payne-Hanek for the rest (computed for every element: no branches).
  Emitter e64(b, loc, b.getF64Type());
  auto [rl, nl] = payneHanek(e64, e.is64() ? axm : Value(ar::ExtFOp::create(b, loc, b.getF64Type(), axm)), e.is64());
  if (!e.is64()) {
    rl = ar::TruncFOp::create(b, loc, e.floatType(), rl);
    nl = ar::TruncIOp::create(b, loc, e.intType(), nl);
  }
  r = e.sel(small, r, rl);
  n = e.sel(small, ni, nl);

  // sin|x| = sin r, cos r, -sin r, -cos r by n mod 4; |r| <= pi/4.
  Value z = e.mul(r, r);
  Value s = e.add(r, e.mul(e.mul(r, z), e.horner(z, e.is64() ? asDoubles(kSinF64) : asDoubles(kSinF32))));
  Value c = e.add(e.sub(e.f(1.0), e.mul(z, e.f(0.5))),
                  e.mul(e.mul(z, z), e.horner(z, e.is64() ? asDoubles(kCosF64) : asDoubles(kCosF32))));
  Value odd = e.cmpi(IP::ne, e.andi(n, e.i(1)), e.i(0));
  Value v = e.sel(odd, c, s);
  // Negate for the quadrant and for a negative x (sign bit: sin(-0) = -0).
  Value negQuadrant = e.cmpi(IP::ne, e.andi(n, e.i(2)), e.i(0));
  Value negX = e.cmpi(IP::slt, e.bitsOf(x), e.i(0));
  Value negate = ar::XOrIOp::create(b, loc, negQuadrant, negX);
  Value res = e.sel(negate, e.neg(v), v);
  return e.sel(finite, res, e.f(std::nan("")));
}

} // namespace tgc::codegen
