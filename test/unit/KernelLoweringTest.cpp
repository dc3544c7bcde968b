//===- KernelLoweringTest.cpp - hand-built kernels through the codegen -----===//
//
// Kernel ASTs shaped like linear.json's (RANGE/END/INDEX/STORE/REDUCE/ALU
// over PARAMs), built with Context::get, compiled with compileLinear and run
// on host buffers. Expected values come from plain C++ arithmetic or from
// Python's semantics written out by hand, never from the code under test.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Lower/MLIRToLLVM.h"
#include "Codegen/Exec/CompiledLinear.h"

#include "KernelBuild.h"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

using namespace tgc;
using namespace tgc::testing;

namespace {

std::string compileError(const UOp *linear) {
  auto r = compileLinear(linear);
  return r.ok() ? std::string() : r.error().str();
}

} // namespace

TEST_CASE("codegen: 2-D elementwise a + b*2 with a broadcast operand") {
  KB k;
  DType f = dtypes::Float32;
  const UOp *out = k.p(0, f, 512), *a = k.p(1, f, 512), *b = k.p(2, f, 32);
  const UOp *i = range(k.c, 16, 0), *j = range(k.c, 32, 1);
  const UOp *flat = k.op(Op::ADD, dtypes::WeakInt, {k.op(Op::MUL, dtypes::WeakInt, {i, k.ci(32)}), j});
  const UOp *v = k.op(Op::ADD, f, {k.idx(a, flat), k.op(Op::MUL, f, {k.idx(b, j), k.cf(2.0)})});
  const UOp *kern = k.sink({k.end(k.store(out, flat, v), {i, j})});
  Run r(k.linear({k.call(kern, {buffer(k.c, 10, f, 512), buffer(k.c, 11, f, 512), buffer(k.c, 12, f, 32)})}));
  for (int n = 0; n < 512; ++n) r.at<float>(11)[n] = 0.25f * float(n) - 7.0f;
  for (int n = 0; n < 32; ++n) r.at<float>(12)[n] = float(n % 5) - 1.5f;
  r.go();
  for (int n = 0; n < 512; ++n) CHECK(r.at<float>(10)[n] == 0.25f * float(n) - 7.0f + (float(n % 32 % 5) - 1.5f) * 2.0f);
}

TEST_CASE("codegen: REDUCE ADD/MAX over an inner range, MAX keeps tinygrad's (a<b)?b:a") {
  KB k;
  DType f = dtypes::Float32;
  const UOp *sum = k.p(0, f, 8), *mx = k.p(1, f, 8), *x = k.p(2, f, 64);
  const UOp *i = range(k.c, 8, 0), *r = range(k.c, 8, 1, "REDUCE");
  const UOp *ld = k.idx(x, k.op(Op::ADD, dtypes::WeakInt, {k.op(Op::MUL, dtypes::WeakInt, {i, k.ci(8)}), r}));
  const UOp *kern = k.sink({k.end(k.store(sum, i, k.reduce(Op::ADD, ld, {r})), {i}),
                            k.end(k.store(mx, i, k.reduce(Op::MAX, ld, {r})), {i})});
  Run run(k.linear({k.call(kern, {buffer(k.c, 1, f, 8), buffer(k.c, 2, f, 8), buffer(k.c, 3, f, 64)})}));
  float *xs = run.at<float>(3);
  for (int n = 0; n < 64; ++n) xs[n] = std::sin(float(n)) * 10.0f;
  xs[3 * 8 + 5] = std::numeric_limits<float>::quiet_NaN(); // row 3: NaN never wins a (acc < v) comparison
  for (int n = 0; n < 8; ++n) xs[5 * 8 + n] = -std::numeric_limits<float>::infinity();
  run.go();
  for (int row = 0; row < 8; ++row) {
    float s = 0.0f, m = -std::numeric_limits<float>::infinity();
    for (int c = 0; c < 8; ++c) {
      float v = xs[row * 8 + c];
      s = s + v;
      m = (m < v) ? v : m;
    }
    CAPTURE(row);
    if (std::isnan(s)) CHECK(std::isnan(run.at<float>(1)[row]));
    else if (std::isinf(s)) CHECK(run.at<float>(1)[row] == s);
    else CHECK(run.at<float>(1)[row] == doctest::Approx(s).epsilon(1e-6));
    CHECK(run.at<float>(2)[row] == m);
  }
  CHECK(run.at<float>(2)[5] == -std::numeric_limits<float>::infinity()); // the identity of MAX is -inf
}

TEST_CASE("codegen: a long float MAX REDUCE (maxnum, vectorized unless strict) equals the serial (a<b)?b:a fold") {
  // The accumulator starts at -inf and a NaN never wins (acc < v), so the fold
  // is maxnum's, which is associative: LLVM may vectorize it. Rows: NaNs at
  // scattered places, all NaN (-> -inf), all -inf, NaN first and last.
  for (bool strict : {false, true}) {
    CAPTURE(strict);
    CodegenOptions opts;
    opts.kernel.strictFP = strict;
    KB k;
    DType f = dtypes::Float32;
    const int rows = 6, cols = 1003;
    const UOp *mx = k.p(0, f, rows), *x = k.p(1, f, rows * cols);
    const UOp *i = range(k.c, rows, 0), *r = range(k.c, cols, 1, "REDUCE");
    const UOp *ld = k.idx(x, k.op(Op::ADD, dtypes::WeakInt, {k.op(Op::MUL, dtypes::WeakInt, {i, k.ci(cols)}), r}));
    Run run(k.linear({k.call(k.sink({k.end(k.store(mx, i, k.reduce(Op::MAX, ld, {r})), {i})}),
                             {buffer(k.c, 1, f, rows), buffer(k.c, 2, f, rows * cols)})}),
            opts);
    float *xs = run.at<float>(2);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (int n = 0; n < rows * cols; ++n) xs[n] = std::sin(float(n) * 0.37f) * 100.0f;
    for (int c = 0; c < cols; c += 17) xs[0 * cols + c] = nan;
    for (int c = 0; c < cols; ++c) xs[1 * cols + c] = nan, xs[2 * cols + c] = -inf;
    xs[3 * cols] = nan, xs[3 * cols + cols - 1] = nan;
    xs[4 * cols + 500] = inf;
    run.go();
    for (int row = 0; row < rows; ++row) {
      float m = -inf;
      for (int c = 0; c < cols; ++c) m = (m < xs[row * cols + c]) ? xs[row * cols + c] : m;
      CAPTURE(row);
      CHECK(run.at<float>(1)[row] == m);
    }
    CHECK(run.at<float>(1)[1] == -inf);
    CHECK(run.at<float>(1)[4] == inf);
  }
}

TEST_CASE("codegen: a REDUCE invariant in the outer loop, and a kernel without loops") {
  KB k;
  DType f = dtypes::Float32;
  const UOp *out = k.p(0, f, 4), *x = k.p(1, f, 16), *scalar = k.p(2, f, 1);
  const UOp *i = range(k.c, 4, 0), *r = range(k.c, 16, 1, "REDUCE");
  const UOp *total = k.reduce(Op::ADD, k.idx(x, r), {r});
  const UOp *iF = k.op(Op::CAST, f, {i}, Value::dtype(f));
  const UOp *kern = k.sink({k.end(k.store(out, i, k.op(Op::ADD, f, {total, iF})), {i})});
  const UOp *kern2 = k.sink({k.store(scalar, k.ci(0), k.op(Op::MUL, f, {k.idx(out, k.ci(3)), k.cf(0.5)}))});
  const UOp *bo = buffer(k.c, 1, f, 4), *bx = buffer(k.c, 2, f, 16), *bs = buffer(k.c, 3, f, 1);
  Run run(k.linear({k.call(kern, {bo, bx, bs}), k.call(kern2, {bo, bx, bs})}));
  for (int n = 0; n < 16; ++n) run.at<float>(2)[n] = float(n);
  run.go();
  for (int n = 0; n < 4; ++n) CHECK(run.at<float>(1)[n] == 120.0f + float(n));
  CHECK(run.at<float>(3)[0] == 61.5f);
}

TEST_CASE("codegen: unindexed PARAM load and store access element 0") {
  KB k;
  DType f = dtypes::Float32;
  const UOp *p0 = k.p(0, f, 1), *p1 = k.p(1, f, 1);
  const UOp *kern = k.sink({k.op(Op::STORE, dtypes::Void, {p0, k.op(Op::ADD, f, {p1, k.cf(1.0)})})});
  Run run(k.linear({k.call(kern, {buffer(k.c, 1, f, 1), buffer(k.c, 2, f, 1)})}));
  run.at<float>(2)[0] = 41.5f;
  run.go();
  CHECK(run.at<float>(1)[0] == 42.5f);
}

TEST_CASE("codegen: Invalid-gated index -> guarded load (pad with 0) and guarded store") {
  KB k;
  DType f = dtypes::Float32;
  // out[i] = x[i-1] for 1 <= i <= 8 else 0 (a pad of 1 on each side); odd[i/2] = out[i] only for odd i.
  const UOp *out = k.p(0, f, 10), *x = k.p(1, f, 8);
  const UOp *i = range(k.c, 10, 0);
  const UOp *valid = k.op(Op::AND, dtypes::Bool, {k.op(Op::CMPLT, dtypes::Bool, {k.ci(0), i}),
                                                  k.op(Op::CMPLT, dtypes::Bool, {i, k.ci(9)})});
  const UOp *gidx = k.op(Op::WHERE, dtypes::WeakInt, {valid, k.op(Op::ADD, dtypes::WeakInt, {i, k.ci(-1)}), k.invalid()});
  const UOp *padded = k.op(Op::ADD, f, {k.idx(x, gidx), k.cf(0.0)});
  const UOp *odd = k.p(2, f, 5);
  const UOp *isOdd = k.op(Op::CMPNE, dtypes::Bool, {k.op(Op::FLOORMOD, dtypes::WeakInt, {i, k.ci(2)}), k.ci(0)});
  const UOp *oidx = k.op(Op::WHERE, dtypes::WeakInt, {isOdd, k.op(Op::FLOORDIV, dtypes::WeakInt, {i, k.ci(2)}), k.invalid()});
  // The same gated load through a PARAM whose size is not a single literal (shape (2, 4)) takes the scf.if path.
  const UOp *x2 = param(k.c, 3, f, {2, 4}), *out2 = k.p(4, f, 10);
  const UOp *padded2 = k.op(Op::ADD, f, {k.idx(x2, gidx), k.cf(0.0)});
  const UOp *kern = k.sink({k.end(k.op(Op::GROUP, dtypes::Void, {k.store(out, i, padded), k.store(odd, oidx, padded),
                                                                 k.store(out2, i, padded2)}), {i})});
  const UOp *bx = buffer(k.c, 2, f, 8);
  Run run(k.linear({k.call(kern, {buffer(k.c, 1, f, 10), bx, buffer(k.c, 3, f, 5), bx, buffer(k.c, 4, f, 10)})}));
  for (int n = 0; n < 8; ++n) run.at<float>(2)[n] = float(n + 1) * 1.5f;
  for (int n = 0; n < 5; ++n) run.at<float>(3)[n] = -1.0f;
  run.go();
  const float want[10] = {0, 1.5f, 3, 4.5f, 6, 7.5f, 9, 10.5f, 12, 0};
  for (int n = 0; n < 10; ++n) CHECK(run.at<float>(1)[n] == want[n]);
  for (int n = 0; n < 10; ++n) CHECK(run.at<float>(4)[n] == want[n]);
  for (int n = 0; n < 5; ++n) CHECK(run.at<float>(3)[n] == want[2 * n + 1]);
}

TEST_CASE("codegen: Invalid in values (gated REDUCE elements and STOREs), as tinygrad's codegen resolves it") {
  // Two padded, strided pools in a row (x.pad(1).max_pool2d(3, 2).pad(1).max_pool2d(3, 2), in 1-D): the first
  // stage's kernel stores the padded pool, out[o] for o in [0, 6), o = 0 and 5 being the second pad. Rangeify
  // indexes the first pad's REDUCE through the second pad's gate, so the REDUCE's elements are poisoned
  // (WHERE(validO, ..., Invalid)) where validO is false, and the STORE selects 0 there:
  //   out[o] = WHERE(validO, REDUCE_MAX(WHERE(validO, WHERE(validIn, x[WHERE(validO & validIn, s - 3, Invalid)], 0), Invalid), r), 0)
  // with s = 2o + r, validO = 1 <= o < 5, validIn = 3 <= s < 11 (tinygrad's kernel for the 2-D program has this form).
  for (bool plain : {false, true}) {
    CAPTURE(plain);
    CodegenOptions opts;
    if (plain) opts.kernel = codegen::KernelOptions::none();
    KB k;
    DType f = dtypes::Float32;
    const UOp *x = k.p(4, f, 8);
    const UOp *o = range(k.c, 6, 0), *r = range(k.c, 3, 1, "REDUCE");
    auto lt = [&](const UOp *a, const UOp *b) { return k.op(Op::CMPLT, dtypes::Bool, {a, b}); };
    auto notLt = [&](const UOp *a, const UOp *b) { return k.op(Op::CMPNE, dtypes::Bool, {lt(a, b), k.c.get(Op::CONST, dtypes::Bool, {}, Value::boolean(true))}); };
    auto both = [&](const UOp *a, const UOp *b) { return k.op(Op::AND, dtypes::Bool, {a, b}); };
    auto where = [&](const UOp *c, const UOp *a, const UOp *b, DType dt) { return k.op(Op::WHERE, dt, {c, a, b}); };
    const UOp *validO = both(notLt(o, k.ci(1)), lt(o, k.ci(5)));
    const UOp *s = k.lin(o, 2, r);
    const UOp *validIn = both(notLt(s, k.ci(3)), lt(s, k.ci(11)));
    const UOp *ld = k.idx(x, where(both(validO, validIn), k.op(Op::ADD, dtypes::WeakInt, {s, k.ci(-3)}), k.invalid(), dtypes::WeakInt));
    const UOp *elem = where(validO, where(validIn, ld, k.cf(0.0), f), k.invalid(), f);
    const UOp *mx = where(validO, k.reduce(Op::MAX, elem, {r}), k.cf(0.0), f);
    const UOp *sum = where(validO, k.reduce(Op::ADD, elem, {r}), k.cf(0.0), f);
    // A gate that changes within the reduction skips those elements: max over r in {0, 2} of x[o + r].
    const UOp *skip = k.reduce(Op::MAX, where(k.op(Op::CMPNE, dtypes::Bool, {r, k.ci(1)}), k.idx(x, k.op(Op::ADD, dtypes::WeakInt, {o, r})), k.invalid(), f), {r});
    // A poisoned stored value (ops over it move inside the gate) is a gated store: out3 keeps its contents at o = 0, 5.
    const UOp *poisoned = k.op(Op::ADD, f, {where(validO, k.idx(x, o), k.invalid(), f), k.cf(1.0)});
    const UOp *kern = k.sink({k.end(k.op(Op::GROUP, dtypes::Void, {k.store(k.p(0, f, 6), o, mx), k.store(k.p(1, f, 6), o, sum),
                                                                     k.store(k.p(2, f, 6), o, skip), k.store(k.p(3, f, 6), o, poisoned)}),
                                    {o})});
    Run run(k.linear({k.call(kern, {buffer(k.c, 1, f, 6), buffer(k.c, 2, f, 6), buffer(k.c, 3, f, 6), buffer(k.c, 4, f, 6), buffer(k.c, 5, f, 8)})}), opts);
    const float xs[8] = {-3.5f, -1.25f, 2.0f, -0.5f, -4.0f, -6.0f, 1.5f, -2.0f};
    std::memcpy(run.at<float>(5), xs, sizeof xs);
    for (int n = 0; n < 6; ++n) run.at<float>(4)[n] = -7.0f;
    run.go();
    for (int n = 0; n < 6; ++n) {
      CAPTURE(n);
      bool vo = 1 <= n && n < 5;
      float m = -std::numeric_limits<float>::infinity(), t = 0.0f;
      for (int rr = 0; rr < 3; ++rr) {
        int sv = 2 * n + rr;
        float e = (3 <= sv && sv < 11) ? xs[sv - 3] : 0.0f;
        m = (m < e) ? e : m;
        t += e;
      }
      CHECK(run.at<float>(1)[n] == (vo ? m : 0.0f));
      CHECK(run.at<float>(2)[n] == doctest::Approx(vo ? t : 0.0f));
      CHECK(run.at<float>(3)[n] == std::max(xs[n], xs[n + 2]));
      CHECK(run.at<float>(4)[n] == (vo ? xs[n] + 1.0f : -7.0f));
    }
  }
}

TEST_CASE("codegen: integer division and modulo: FLOOR* round toward -inf, C* truncate") {
  KB k;
  DType i32 = dtypes::Int32;
  const UOp *a = k.p(0, i32, 16), *b = k.p(1, i32, 16);
  const UOp *o[4] = {k.p(2, i32, 16), k.p(3, i32, 16), k.p(4, i32, 16), k.p(5, i32, 16)};
  const UOp *i = range(k.c, 16, 0);
  const UOp *x = k.idx(a, i), *y = k.idx(b, i);
  Op ops[4] = {Op::FLOORDIV, Op::FLOORMOD, Op::CDIV, Op::CMOD};
  std::vector<const UOp *> stores;
  for (int n = 0; n < 4; ++n) stores.push_back(k.store(o[n], i, k.op(ops[n], i32, {x, y})));
  const UOp *kern = k.sink({k.end(k.op(Op::GROUP, dtypes::Void, stores), {i})});
  std::vector<const UOp *> bufs;
  for (int n = 0; n < 6; ++n) bufs.push_back(buffer(k.c, n, i32, 16));
  Run run(k.linear({k.call(kern, bufs)}));
  const int32_t as[16] = {7, -7, 7, -7, 6, -6, 0, 1, -1, 100, -100, 13, -13, 5, -5, 2147483647};
  const int32_t bs[16] = {2, 2, -2, -2, 3, 3, 5, -3, 3, 7, 7, -4, -4, 5, 5, 2};
  // Python: 7//2=3 -7//2=-4 7//-2=-4 -7//-2=3; 7%2=1 -7%2=1 7%-2=-1 -7%-2=-1 ...
  const int32_t fdiv[16] = {3, -4, -4, 3, 2, -2, 0, -1, -1, 14, -15, -4, 3, 1, -1, 1073741823};
  const int32_t fmod[16] = {1, 1, -1, -1, 0, 0, 0, -2, 2, 2, 5, -3, -1, 0, 0, 1};
  const int32_t cdiv[16] = {3, -3, -3, 3, 2, -2, 0, 0, 0, 14, -14, -3, 3, 1, -1, 1073741823};
  const int32_t cmod[16] = {1, -1, 1, -1, 0, 0, 0, 1, -1, 2, -2, 1, -1, 0, 0, 1};
  std::memcpy(run.at<int32_t>(0), as, sizeof as);
  std::memcpy(run.at<int32_t>(1), bs, sizeof bs);
  run.go();
  for (int n = 0; n < 16; ++n) {
    CAPTURE(n);
    CHECK(run.at<int32_t>(2)[n] == fdiv[n]);
    CHECK(run.at<int32_t>(3)[n] == fmod[n]);
    CHECK(run.at<int32_t>(4)[n] == cdiv[n]);
    CHECK(run.at<int32_t>(5)[n] == cmod[n]);
  }
}

TEST_CASE("codegen: CAST and BITCAST between bool, ints, float16, bfloat16, float32") {
  KB k;
  DType f = dtypes::Float32;
  const UOp *x = k.p(0, f, 8);
  const UOp *toI32 = k.p(1, dtypes::Int32, 8), *toBool = k.p(2, dtypes::Bool, 8), *viaHalf = k.p(3, f, 8);
  const UOp *viaBF = k.p(4, f, 8), *bits = k.p(5, dtypes::Int32, 8), *toI8 = k.p(6, dtypes::Int8, 8), *bf = k.p(7, dtypes::BFloat16, 8);
  const UOp *i = range(k.c, 8, 0);
  const UOp *v = k.idx(x, i);
  auto cast = [&](const UOp *u, DType dt) { return k.op(Op::CAST, dt, {u}, Value::dtype(dt)); };
  const UOp *i32 = cast(v, dtypes::Int32);
  std::vector<const UOp *> st = {
      k.store(toI32, i, i32),
      k.store(toBool, i, cast(v, dtypes::Bool)),
      k.store(viaHalf, i, cast(cast(v, dtypes::Float16), f)),
      k.store(viaBF, i, cast(cast(v, dtypes::BFloat16), f)),
      k.store(bits, i, k.op(Op::BITCAST, dtypes::Int32, {v}, Value::dtype(dtypes::Int32))),
      k.store(toI8, i, cast(k.op(Op::ADD, dtypes::Int32, {i32, k.ci(200)}), dtypes::Int8)),
      k.store(bf, i, cast(v, dtypes::BFloat16)),
  };
  const UOp *kern = k.sink({k.end(k.op(Op::GROUP, dtypes::Void, st), {i})});
  DType dts[8] = {f, dtypes::Int32, dtypes::Bool, f, f, dtypes::Int32, dtypes::Int8, dtypes::BFloat16};
  std::vector<const UOp *> bufs;
  for (int n = 0; n < 8; ++n) bufs.push_back(buffer(k.c, n, dts[n], 8));
  Run run(k.linear({k.call(kern, bufs)}));
  const float one = 1.0f;
  const float xs[8] = {-2.75f, 0.0f, 3.9f, one + 0x1p-8f, one + 3 * 0x1p-8f, one + 0x1p-8f + 0x1p-20f, 65519.0f, -0.0f};
  std::memcpy(run.at<float>(0), xs, sizeof xs);
  run.go();
  const int32_t wantI[8] = {-2, 0, 3, 1, 1, 1, 65519, 0};
  const bool wantB[8] = {true, false, true, true, true, true, true, false};
  // bfloat16 keeps 8 significant bits, ties to even: 1+2^-8 -> 1, 1+3*2^-8 -> 1+2^-6, 1+2^-8+2^-20 -> 1+2^-7.
  const float wantBF[8] = {-2.75f, 0.0f, 3.90625f, 1.0f, 1.015625f, 1.0078125f, 65536.0f, -0.0f};
  for (int n = 0; n < 8; ++n) {
    CAPTURE(n);
    CHECK(run.at<int32_t>(1)[n] == wantI[n]);
    CHECK(run.at<uint8_t>(2)[n] == uint8_t(wantB[n]));
    CHECK(run.at<float>(3)[n] == xs[n]); // tinygrad's codegen folds float -> half -> float to the float
    CHECK(run.at<float>(4)[n] == wantBF[n]);
    CHECK(run.at<int32_t>(5)[n] == std::bit_cast<int32_t>(xs[n]));
    CHECK(run.at<int8_t>(6)[n] == int8_t(uint8_t(uint32_t(wantI[n] + 200))));
    CHECK(run.at<uint16_t>(7)[n] == uint16_t(std::bit_cast<uint32_t>(wantBF[n]) >> 16));
  }
}

TEST_CASE("codegen: POW follows tinygrad's xpow; EXP2/LOG2/SIN/SQRT/RECIPROCAL match libm") {
  // POW under both lowerings of EXP2/LOG2; the unary ops must equal libm's
  // results exactly when they are libm calls (TranscendentalTest.cpp measures
  // the polynomials).
  for (bool poly : {true, false}) {
    CAPTURE(poly);
    CodegenOptions opts;
    opts.kernel.polyTranscendentals = poly;
    KB k;
    DType f = dtypes::Float32;
    const UOp *base = k.p(0, f, 8), *ex = k.p(1, f, 8), *pw = k.p(2, f, 8);
    const UOp *t[5] = {k.p(3, f, 8), k.p(4, f, 8), k.p(5, f, 8), k.p(6, f, 8), k.p(7, f, 8)};
    const UOp *i = range(k.c, 8, 0);
    const UOp *b = k.idx(base, i);
    Op un[5] = {Op::EXP2, Op::LOG2, Op::SIN, Op::SQRT, Op::RECIPROCAL};
    std::vector<const UOp *> st = {k.store(pw, i, k.op(Op::POW, f, {b, k.idx(ex, i)}))};
    for (int n = 0; n < 5; ++n) st.push_back(k.store(t[n], i, k.op(un[n], f, {b})));
    std::vector<const UOp *> bufs;
    for (int n = 0; n < 8; ++n) bufs.push_back(buffer(k.c, n, f, 8));
    Run run(k.linear({k.call(k.sink({k.end(k.op(Op::GROUP, dtypes::Void, st), {i})}), bufs)}), opts);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const float bs[8] = {-2.0f, -2.0f, 0.0f, 2.0f, -8.0f, 3.0f, -inf, 10.0f};
    const float es[8] = {3.0f, 0.5f, 0.0f, 0.5f, 2.0f, -1.0f, 0.5f, 1.5f};
    std::memcpy(run.at<float>(0), bs, sizeof bs);
    std::memcpy(run.at<float>(1), es, sizeof es);
    run.go();
    const float *p = run.at<float>(2);
    CHECK(p[0] == doctest::Approx(-8.0));
    CHECK(std::isnan(p[1]));         // negative base, non-integer exponent
    CHECK(p[2] == 1.0f);             // 0 ** 0
    CHECK(p[3] == doctest::Approx(std::sqrt(2.0)));
    CHECK(p[4] == doctest::Approx(64.0));
    CHECK(p[5] == doctest::Approx(1.0 / 3.0));
    CHECK(p[6] == inf);              // -inf ** 0.5 stays |base| ** e
    CHECK(p[7] == doctest::Approx(std::pow(10.0, 1.5)).epsilon(1e-6));
    for (int n = 0; n < 8; ++n) {
      CAPTURE(n);
      float v = bs[n];
      auto same = [](float got, float want) { return (std::isnan(got) && std::isnan(want)) || got == want; };
      if (!poly) {
        CHECK(same(run.at<float>(3)[n], std::exp2(v)));
        CHECK(same(run.at<float>(4)[n], std::log2(v)));
        CHECK(same(run.at<float>(5)[n], std::sin(v)));
      }
      CHECK(same(run.at<float>(6)[n], std::sqrt(v)));
      CHECK(same(run.at<float>(7)[n], 1.0f / v));
    }
    (void)nan;
  }
}

TEST_CASE("codegen: THREEFRY is threefry2x32-20 on (counter, key) packed low word first") {
  // The known-answer vectors of Random123's threefry2x32_20 (kat_vectors), the
  // cipher tinygrad's THREEFRY computes: {ctr0, ctr1, key0, key1} -> {out0, out1}.
  const uint32_t kat[3][6] = {{0, 0, 0, 0, 0x6b200159, 0x99ba4efe},
                              {~0u, ~0u, ~0u, ~0u, 0x1cb996fc, 0xbb002be7},
                              {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xc4923a9c, 0x483df7a0}};
  KB k;
  DType u = dtypes::UInt64;
  const UOp *out = k.p(0, u, 3), *x = k.p(1, u, 3), *key = k.p(2, u, 3), *i = range(k.c, 3, 0);
  const UOp *kern = k.sink({k.end(k.store(out, i, k.op(Op::THREEFRY, u, {k.idx(x, i), k.idx(key, i)})), {i})});
  Run r(k.linear({k.call(kern, {buffer(k.c, 1, u, 3), buffer(k.c, 2, u, 3), buffer(k.c, 3, u, 3)})}));
  auto pack = [](uint32_t lo, uint32_t hi) { return uint64_t(hi) << 32 | lo; };
  for (int n = 0; n < 3; ++n) {
    r.at<uint64_t>(2)[n] = pack(kat[n][0], kat[n][1]);
    r.at<uint64_t>(3)[n] = pack(kat[n][2], kat[n][3]);
  }
  r.go();
  for (int n = 0; n < 3; ++n) CHECK(r.at<uint64_t>(1)[n] == pack(kat[n][4], kat[n][5]));
}

TEST_CASE("codegen: COPY calls, int8-arena views (BITCAST of SHRINK) and an argument passed twice") {
  KB k;
  DType f = dtypes::Float32;
  // arena: 64 bytes = two float views of 8 elements; kernel 1 writes view A = src*3, COPY moves A to out,
  // kernel 2 adds x and x (same buffer twice) into view B.
  const UOp *arena = buffer(k.c, 50, dtypes::Int8, 64);
  auto view = [&](int64_t off) {
    const UOp *s = k.op(Op::SHRINK, dtypes::Int8, {arena, k.ci(off), k.ci(32)});
    return k.op(Op::BITCAST, f, {s}, Value::dtype(f));
  };
  const UOp *src = buffer(k.c, 1, f, 8), *out = buffer(k.c, 2, f, 8), *py = buffer(k.c, 3, f, 8, "PYTHON");
  const UOp *i = range(k.c, 8, 0);
  const UOp *p0 = k.p(0, f, 8), *p1 = k.p(1, f, 8), *p2 = k.p(2, f, 8);
  const UOp *k1 = k.sink({k.end(k.store(p0, i, k.op(Op::MUL, f, {k.idx(p1, i), k.cf(3.0)})), {i})});
  const UOp *k2 = k.sink({k.end(k.store(p0, i, k.op(Op::ADD, f, {k.idx(p1, i), k.idx(p2, i)})), {i})});
  const UOp *copyBody = k.op(Op::COPY, f, {p1}, Value::string("CPU"));
  // Last, an overlapping copy inside the arena: floats [4, 12) <- floats [0, 8) (memmove semantics).
  Run run(k.linear({k.call(copyBody, {src, py}), k.call(k1, {view(0), src}), k.call(copyBody, {out, view(0)}),
                    k.call(k2, {view(32), out, out}), k.call(copyBody, {view(16), view(0)})}));
  CHECK(run.cs->plan().kernels.size() == 2);
  CHECK(run.cs->plan().kernels[0].noalias);
  CHECK_FALSE(run.cs->plan().kernels[1].noalias);
  for (int n = 0; n < 8; ++n) run.at<float>(3)[n] = float(n) - 2.0f;
  run.go();
  const float *a = run.at<float>(50);
  for (int n = 0; n < 8; ++n) {
    float tripled = (float(n) - 2.0f) * 3.0f;
    CHECK(run.at<float>(1)[n] == float(n) - 2.0f);
    CHECK(run.at<float>(2)[n] == tripled);
    CHECK(a[4 + n] == tripled);
    if (n < 4) CHECK(a[n] == tripled);
    if (n >= 4) CHECK(a[8 + n] == 2.0f * tripled);
  }
}

#if defined(__x86_64__)
TEST_CASE("codegen: loops are vectorized for the requested CPU, and schedules emit as objects") {
  KB k;
  DType f = dtypes::Float32;
  const UOp *out = k.p(0, f, 1024), *a = k.p(1, f, 1024), *i = range(k.c, 1024, 0);
  const UOp *kern = k.sink({k.end(k.store(out, i, k.op(Op::MUL, f, {k.idx(a, i), k.idx(a, i)})), {i})});
  const UOp *lin = k.linear({k.call(kern, {buffer(k.c, 1, f, 1024), buffer(k.c, 2, f, 1024)})});
  CodegenOptions opts;
  opts.keepIR = true;
  opts.target.cpu = "x86-64-v3"; // AVX2: 256-bit vectors, no AVX-512
  auto cs = compileLinear(lin, opts);
  REQUIRE_MESSAGE(cs.ok(), (cs.ok() ? "" : cs.error().str()));
  const std::string &ir = (*cs)->llvmIRText();
  CHECK(ir.find("fmul contract <8 x float>") != std::string::npos);
  CHECK(ir.find("<16 x float>") == std::string::npos);
  CHECK((*cs)->mlirText().find("scf.for") != std::string::npos);

  auto obj = compileLinearToObject(lin, opts);
  REQUIRE_MESSAGE(obj.ok(), (obj.ok() ? "" : obj.error().str()));
  CHECK(obj->rfind("\x7f" "ELF", 0) == 0);
  CHECK(obj->find("tgc_run") != std::string::npos);
  CHECK(obj->find("k0_k_entry") != std::string::npos);
}
#endif

TEST_CASE("codegen: joinObjects links objects with ld.lld -r, and says why it could not") {
  std::string linker = codegen::findRelocatableLinker();
  if (linker.empty()) return; // no ld.lld here: models are emitted from one module
  KB k;
  DType f = dtypes::Float32;
  const UOp *out = k.p(0, f, 16), *a = k.p(1, f, 16), *i = range(k.c, 16, 0);
  const UOp *kern = k.sink({k.end(k.store(out, i, k.op(Op::ADD, f, {k.idx(a, i), k.idx(a, i)})), {i})});
  const UOp *lin = k.linear({k.call(kern, {buffer(k.c, 1, f, 16), buffer(k.c, 2, f, 16)})});
  auto obj = compileLinearToObject(lin);
  REQUIRE_MESSAGE(obj.ok(), (obj.ok() ? "" : obj.error().str()));
  auto joined = codegen::joinObjects({*obj}, linker);
  REQUIRE_MESSAGE(joined.ok(), (joined.ok() ? "" : joined.error().str()));
  CHECK(joined->rfind("\x7f" "ELF", 0) == 0);
  CHECK(joined->find("tgc_run") != std::string::npos);
  // the same object twice defines tgc_run twice: the link fails, and the message shows the command
  auto twice = codegen::joinObjects({*obj, *obj}, linker);
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.error().message.find("joining the kernel objects failed") != std::string::npos);
  CHECK(twice.error().message.find(" -r ") != std::string::npos);
  CHECK(twice.error().message.find("duplicate symbol") != std::string::npos); // the linker's own words
  auto garbage = codegen::joinObjects({"not an object"}, linker);
  CHECK_FALSE(garbage.ok());
  auto missing = codegen::joinObjects({*obj}, "/nonexistent/ld.lld");
  CHECK_FALSE(missing.ok());
}

TEST_CASE("codegen: malformed or unsupported kernels are diagnosed, not miscompiled") {
  KB k;
  DType f = dtypes::Float32;
  const UOp *p0 = k.p(0, f, 4), *i = range(k.c, 4, 0), *j = range(k.c, 4, 1);
  const UOp *b = buffer(k.c, 1, f, 4);
  // A RANGE that no END or REDUCE opens.
  CHECK(compileError(k.linear({k.call(k.sink({k.end(k.store(p0, j, k.cf(1.0)), {i})}), {b})})).find("RANGE used outside its loop") != std::string::npos);
  // A PARAM slot without a CALL argument.
  CHECK(compileError(k.linear({k.call(k.sink({k.end(k.store(k.p(3, f, 4), i, k.cf(1.0)), {i})}), {b})})).find("PARAM slot 3") != std::string::npos);
  // An op on a dtype the lowering does not take.
  const UOp *tf = k.op(Op::THREEFRY, dtypes::UInt32, {k.ci(1, dtypes::UInt32), k.ci(2, dtypes::UInt32)});
  const UOp *pu = k.p(0, dtypes::UInt32, 4);
  CHECK(compileError(k.linear({k.call(k.sink({k.end(k.store(pu, i, tf), {i})}), {buffer(k.c, 2, dtypes::UInt32, 4)})})).find("unsupported THREEFRY on uint32") != std::string::npos);
  // Invalid left in a value: compared (a STORE of Invalid itself, CAST or not, is a no-op, as in tinygrad).
  const UOp *t = k.c.get(Op::CONST, dtypes::Bool, {}, Value::boolean(true));
  const UOp *cmp = k.op(Op::CMPNE, dtypes::Bool, {k.invalid(), t});
  CHECK(compileError(k.linear({k.call(k.sink({k.end(k.store(p0, i, k.op(Op::WHERE, f, {cmp, k.cf(1.0), k.cf(2.0)})), {i})}), {b})})).find("Invalid") != std::string::npos);
  CHECK(compileError(k.linear({k.call(k.sink({k.end(k.store(p0, i, k.op(Op::CAST, f, {k.invalid()}, Value::dtype(f))), {i})}), {b})})).empty());
  // Views must stay inside their buffer, and CALL bodies must be kernels or copies.
  const UOp *bad = k.op(Op::SHRINK, f, {b, k.ci(2), k.ci(4)});
  CHECK(compileError(k.linear({k.call(k.sink({k.end(k.store(p0, i, k.cf(1.0)), {i})}), {bad})})).find("outside its buffer") != std::string::npos);
  CHECK(compileError(k.linear({k.call(k.op(Op::ADD, f, {k.cf(1.0), k.cf(2.0)}), {b})})).find("unsupported CALL body") != std::string::npos);
  CHECK(compileError(k.sink({})).find("expected a LINEAR") != std::string::npos);
  // A pathologically deep expression is refused instead of overflowing the stack.
  const UOp *deep = k.idx(p0, i);
  for (int n = 0; n < 5000; ++n) deep = k.op(Op::ADD, f, {deep, k.cf(double(n))});
  CHECK(compileError(k.linear({k.call(k.sink({k.end(k.store(p0, i, deep), {i})}), {b})})).find("nests deeper") != std::string::npos);
}
