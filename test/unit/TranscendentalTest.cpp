//===- TranscendentalTest.cpp - polynomial EXP2/LOG2/SIN vs long double libm -===//
//
// Runs one-op kernels `out[i] = OP(in[i])` through the JIT with the branch-free
// polynomials (KernelOptions::polyTranscendentals) over many inputs per range
// and every special value, and measures the results against long double libm
// (exp2l/log2l/sinl: 64-bit significands, exact argument reduction), in units
// in the last place of the result's dtype. The bounds are tinygrad's own
// accuracy on CPU (pipeline-codegen.md 1.12: exp2 1 ULP, log2 2 ULP, sin
// absolute 7e-7 on [-100, 100]) or tighter.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Exec/CompiledLinear.h"

#include "GraphBuild.h"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace tgc;
using namespace tgc::testing;

namespace {

template <typename T> DType dtypeOf() {
  if constexpr (std::is_same_v<T, float>) return dtypes::Float32;
  else if constexpr (std::is_same_v<T, double>) return dtypes::Float64;
  else return dtypes::Float16;
}

/// OP applied to every element of `xs` by a compiled kernel.
template <typename T>
std::vector<T> runUnary(Op op, const std::vector<T> &xs, bool poly = true, std::string *llvmIR = nullptr, bool vectorLdexp = true) {
  Context c;
  DType dt = dtypeOf<T>();
  int64_t n = int64_t(xs.size());
  const UOp *in = param(c, 0, dt, {n}), *out = param(c, 1, dt, {n});
  const UOp *i = range(c, n, 0);
  const UOp *v = c.get(op, dt, {c.get(Op::INDEX, dt, {in, i})});
  const UOp *st = c.get(Op::STORE, dtypes::Void, {c.get(Op::INDEX, dt, {out, i}), v});
  const UOp *sink = c.get(Op::SINK, dtypes::Void, {c.get(Op::END, dtypes::Void, {st, i})}, kernelInfo("k"));
  const UOp *call = c.get(Op::CALL, dtypes::Void, {sink, buffer(c, 0, dt, n), buffer(c, 1, dt, n)}, callInfo());
  CodegenOptions o;
  o.kernel.polyTranscendentals = poly;
  o.kernel.threads = false;
  o.kernel.vectorLdexp = vectorLdexp;
  o.keepIR = llvmIR != nullptr;
  auto cs = compileLinear(c.get(Op::LINEAR, dtypes::Void, {call}), o);
  REQUIRE_MESSAGE(cs.ok(), (cs.ok() ? "" : cs.error().str()));
  if (llvmIR) *llvmIR = (*cs)->llvmIRText();
  auto hb = HostBuffers::allocate((*cs)->plan());
  REQUIRE(hb.ok());
  std::memcpy(hb->data(size_t((*cs)->plan().indexOfSlot(0))), xs.data(), xs.size() * sizeof(T));
  Status s = (*cs)->run(hb->pointers());
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().str()));
  std::vector<T> r(xs.size());
  std::memcpy(r.data(), hb->data(size_t((*cs)->plan().indexOfSlot(1))), r.size() * sizeof(T));
  return r;
}

long double reference(Op op, long double x) {
  switch (op) {
  case Op::EXP2: return exp2l(x);
  case Op::LOG2: return log2l(x);
  default: return sinl(x);
  }
}

/// One unit in the last place of T at the magnitude of `w` (denormal spacing below the normal range).
template <typename T> long double ulpAt(long double w) {
  int emin = std::numeric_limits<T>::min_exponent - 1;
  int e = w == 0 ? emin : std::max(ilogbl(w), emin);
  return ldexpl(1.0L, e - std::numeric_limits<T>::digits + 1);
}

struct Errors {
  long double maxUlp = 0, maxAbs = 0, sumUlp = 0;
  size_t count = 0, specialMismatches = 0;
  long double worstX = 0;
};

/// Compares got[i] with the reference; results whose correctly rounded value
/// is 0, inf or NaN must match it exactly (NaN: any NaN; 0: the sign too).
template <typename T> Errors measure(Op op, const std::vector<T> &xs, const std::vector<T> &got) {
  Errors e;
  for (size_t k = 0; k < xs.size(); ++k) {
    long double want = reference(op, xs[k]);
    T rounded = T(want);
    long double g = got[k];
    if (std::isnan(rounded) || std::isinf(rounded) || rounded == 0) {
      bool ok = std::isnan(rounded) ? std::isnan(g) : (g == rounded && std::signbit(g) == std::signbit(rounded));
      // A result within an ULP of the zero/inf boundary may round either way.
      if (!ok && !std::isnan(rounded) && std::isfinite(g) && fabsl(g - want) <= ulpAt<T>(want)) ok = true;
      if (!ok) {
        ++e.specialMismatches;
        MESSAGE("x=" << double(xs[k]) << " got " << double(g) << " want " << double(rounded));
      }
      continue;
    }
    if (!std::isfinite(g)) {
      ++e.specialMismatches;
      MESSAGE("x=" << double(xs[k]) << " got " << double(g) << " want " << double(rounded));
      continue;
    }
    long double ulps = fabsl(g - want) / ulpAt<T>(want);
    e.maxAbs = std::max(e.maxAbs, fabsl(g - want));
    if (ulps > e.maxUlp) e.maxUlp = ulps, e.worstX = xs[k];
    e.sumUlp += ulps;
    ++e.count;
  }
  return e;
}

template <typename T> Errors check(Op op, const std::vector<T> &xs) { return measure(op, xs, runUnary(op, xs)); }

template <typename T> std::vector<T> uniform(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(n);
  for (T &x : v) x = T(d(g));
  return v;
}

/// Positive finite values with uniformly random bits: every binade (denormals included) equally often.
template <typename T> std::vector<T> randomBits(size_t n, uint32_t seed) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  std::mt19937_64 g(seed);
  U inf = std::bit_cast<U>(std::numeric_limits<T>::infinity());
  std::uniform_int_distribution<U> d(1, inf - 1);
  std::vector<T> v(n);
  for (T &x : v) x = std::bit_cast<T>(d(g));
  return v;
}

template <typename T> std::vector<T> specials() {
  using L = std::numeric_limits<T>;
  return {T(0), -T(0), T(1), -T(1), T(2), T(0.5), L::infinity(), -L::infinity(), L::quiet_NaN(), -L::quiet_NaN(),
          L::min(), L::denorm_min(), -L::denorm_min(), L::max(), -L::max(), L::epsilon(), std::nextafter(T(1), T(2)),
          std::nextafter(T(1), T(0))};
}

template <typename T> std::vector<T> concat(std::vector<T> a, const std::vector<T> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void report(const std::string &what, const Errors &e) {
  MESSAGE(what << ": max " << double(e.maxUlp) << " ULP (at x=" << double(e.worstX) << "), mean "
               << double(e.count ? e.sumUlp / e.count : 0) << " ULP, max abs " << double(e.maxAbs) << " over " << e.count);
}

} // namespace

TEST_CASE("transcendental: exp2 polynomial, f32 and f64, <= 1 ULP and exact special values") {
  // f32: the whole finite-result range, small arguments, and the edges of
  // overflow (x >= 128 -> inf) and underflow (denormal results, x < -150 -> 0).
  std::vector<float> xs = concat(uniform<float>(1 << 17, -155, 130, 1), uniform<float>(1 << 14, -1, 1, 2));
  xs = concat(xs, specials<float>());
  for (float x : {127.99999f, 128.0f, 128.5f, 1000.0f, -126.0f, -126.5f, -149.0f, -149.5f, -149.99f, -150.0f, -150.01f,
                  -151.0f, -1000.0f, 1e-30f, -1e-30f, 0.5f, -0.5f, 1e30f, -1e30f})
    xs.push_back(x);
  for (int k = -149; k <= 127; ++k) xs.push_back(float(k)); // exact powers of two
  Errors e = check(Op::EXP2, xs);
  report("exp2 f32", e);
  CHECK(e.specialMismatches == 0);
  CHECK(e.maxUlp <= 1.0);
  std::vector<float> ints(xs.end() - 277, xs.end()), got = runUnary(Op::EXP2, ints);
  for (size_t k = 0; k < ints.size(); ++k) CHECK(got[k] == std::ldexp(1.0f, int(ints[k])));

  std::vector<double> xd = concat(uniform<double>(1 << 15, -1080, 1030, 3), uniform<double>(1 << 12, -1, 1, 4));
  xd = concat(xd, specials<double>());
  for (double x : {1023.9999999, 1024.0, -1022.5, -1074.0, -1074.5, -1075.0, -1076.0, 1e-300, -1e300})
    xd.push_back(x);
  Errors d = check(Op::EXP2, xd);
  report("exp2 f64", d);
  CHECK(d.specialMismatches == 0);
  CHECK(d.maxUlp <= 1.0);
}

// KernelOptions::vectorLdexp scales exp2's polynomial by llvm.ldexp where the
// host has a vector ldexp (AVX-512's vscalef): it must round exactly as the two
// multiplies do, denormal results and overflow included (on other hosts both
// runs take the multiplies).
template <typename T> void checkLdexpScaleIsExact(const std::vector<T> &xs) {
  std::string withIR, withoutIR;
  std::vector<T> with = runUnary(Op::EXP2, xs, true, &withIR, true), without = runUnary(Op::EXP2, xs, true, &withoutIR, false);
  CHECK(withoutIR.find("llvm.ldexp") == std::string::npos);
  if (withIR.find("llvm.ldexp") == std::string::npos) MESSAGE("the host has no vector ldexp: both runs multiply");
  size_t differ = 0;
  for (size_t k = 0; k < xs.size(); ++k) differ += std::memcmp(&with[k], &without[k], sizeof(T)) != 0;
  CHECK_MESSAGE(differ == 0, differ << " of " << xs.size() << " results differ");
}

TEST_CASE("transcendental: exp2 scaled by ldexp gives the bits of the two multiplies") {
  std::vector<float> xs = concat(uniform<float>(1 << 16, -160, 140, 5), specials<float>());
  for (float x = -151.0f; x <= -125.0f; x += 1.0f / 64) xs.push_back(x); // every denormal binade, finely
  checkLdexpScaleIsExact(xs);
  std::vector<double> xd = concat(uniform<double>(1 << 14, -1100, 1100, 6), specials<double>());
  for (double x = -1076.0; x <= -1021.0; x += 1.0 / 64) xd.push_back(x);
  checkLdexpScaleIsExact(xd);
}

TEST_CASE("transcendental: log2 polynomial, f32 and f64, <= 1 ULP, denormals, zeros, negatives, inf, NaN") {
  std::vector<float> xs = concat(randomBits<float>(1 << 17, 5), uniform<float>(1 << 14, 0.5, 2.0, 6));
  xs = concat(xs, specials<float>());
  for (float x : {-1e-30f, -5.0f, 3.0f, 1e-40f, 1e-45f, 0.75f, 1.5f, 0.70710677f, 1.4142135f})
    xs.push_back(x);
  Errors e = check(Op::LOG2, xs);
  report("log2 f32", e);
  CHECK(e.specialMismatches == 0);
  CHECK(e.maxUlp <= 1.0);
  std::vector<float> sp = {0.0f, -0.0f, -1.0f, -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::denorm_min(), 1.0f, 1024.0f};
  std::vector<float> got = runUnary(Op::LOG2, sp);
  CHECK(got[0] == -std::numeric_limits<float>::infinity());
  CHECK(got[1] == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(got[2]));
  CHECK(std::isnan(got[3]));
  CHECK(got[4] == std::numeric_limits<float>::infinity());
  CHECK(got[5] == -149.0f);
  CHECK(got[6] == 0.0f);
  CHECK(got[7] == 10.0f);

  std::vector<double> xd = concat(randomBits<double>(1 << 15, 7), uniform<double>(1 << 12, 0.5, 2.0, 8));
  xd = concat(xd, specials<double>());
  Errors d = check(Op::LOG2, xd);
  report("log2 f64", d);
  CHECK(d.specialMismatches == 0);
  CHECK(d.maxUlp <= 1.0);
}

TEST_CASE("transcendental: sin polynomial with Cody-Waite and Payne-Hanek reduction, f32 and f64") {
  // Near 0 (no cancellation possible): ULPs. Elsewhere sin's relative error
  // near its zeros is unbounded for any float implementation, so the measure
  // is the absolute error, as for tinygrad's (7.0e-7 on [-100, 100]).
  std::vector<float> nearZero = concat(uniform<float>(1 << 14, -0.785, 0.785, 9), uniform<float>(1 << 12, -1e-3, 1e-3, 10));
  nearZero = concat(nearZero, {1e-30f, -1e-30f, 1e-40f, -1e-45f});
  Errors z = check(Op::SIN, nearZero);
  report("sin f32 |x| < pi/4", z);
  CHECK(z.specialMismatches == 0);
  CHECK(z.maxUlp <= 1.0);

  std::vector<float> xs = concat(uniform<float>(1 << 16, -100, 100, 11), uniform<float>(1 << 14, -1e6, 1e6, 12));
  xs = concat(xs, uniform<float>(1 << 12, -5000, 5000, 13)); // both sides of the Cody-Waite threshold (4096)
  std::vector<float> big = randomBits<float>(1 << 15, 14);   // every binade up to 3.4e38
  for (float &x : big) x = (std::bit_cast<uint32_t>(x) & 1) ? -x : x;
  xs = concat(concat(xs, big), specials<float>());
  // Floats closest to multiples of pi/2 (the results are tiny) and around the threshold.
  for (float x : {3.14159274f, 1.57079637f, 6.28318548f, 4096.0f, 4095.9998f, 4096.0005f, 1e30f, -1e30f, 16777216.0f,
                  105414350.0f, 1.0e38f})
    xs.push_back(x);
  Errors e = check(Op::SIN, xs);
  report("sin f32", e);
  CHECK(e.specialMismatches == 0);
  CHECK(e.maxAbs <= 1.5e-7);

  std::vector<float> sp = {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN()};
  std::vector<float> got = runUnary(Op::SIN, sp);
  CHECK((got[0] == 0.0f && !std::signbit(got[0])));
  CHECK((got[1] == 0.0f && std::signbit(got[1])));
  CHECK(std::isnan(got[2]));
  CHECK(std::isnan(got[3]));
  CHECK(std::isnan(got[4]));

  std::vector<double> zd = uniform<double>(1 << 13, -0.785, 0.785, 15);
  Errors zdE = check(Op::SIN, zd);
  report("sin f64 |x| < pi/4", zdE);
  CHECK(zdE.maxUlp <= 1.0);
  std::vector<double> xd = concat(uniform<double>(1 << 14, -100, 100, 16), uniform<double>(1 << 12, -1e7, 1e7, 17));
  std::vector<double> bigd = randomBits<double>(1 << 14, 18);
  xd = concat(concat(xd, bigd), specials<double>());
  Errors d = check(Op::SIN, xd);
  report("sin f64", d);
  CHECK(d.specialMismatches == 0);
  CHECK(d.maxAbs <= 1e-15);
}

TEST_CASE("transcendental: float16 EXP2/LOG2/SIN are computed in f32, within 1 half ULP, over every half value") {
  std::vector<_Float16> xs;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) xs.push_back(std::bit_cast<_Float16>(uint16_t(bits))); // NaNs, infs too
  for (Op op : {Op::EXP2, Op::LOG2, Op::SIN}) {
    CAPTURE(opName(op));
    std::vector<_Float16> got = runUnary(op, xs);
    size_t bad = 0;
    for (size_t k = 0; k < xs.size(); ++k) {
      long double want = reference(op, float(xs[k]));
      float g = float(got[k]), w = float(_Float16(float(want)));
      bool ok = std::isnan(w) ? std::isnan(g) : (g == w || (std::isfinite(g) && fabsl(g - want) <= ulpAt<_Float16>(want)));
      if (!ok && bad++ < 5) MESSAGE("x=" << float(xs[k]) << " got " << g << " want " << w);
    }
    CHECK(bad == 0);
  }
}
