//===- HoistInvariantTest.cpp - reduction terms computed once into a table -===//
//
// Kernels whose reduction summand holds a transcendental that skips a loop
// around it (a weight gradient through an activation's backward), compiled
// with and without lib/Codegen/HoistInvariant and under the other configs,
// and compared with a double-precision loop nest; and the kernels the
// rewrite must leave alone.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/HoistInvariant.h" // (Codegen/: a code-generator test for test/unit/CMakeLists.txt)
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/ParallelLoop.h"
#include "KernelBuild.h"

#include <cmath>
#include <vector>

using namespace tgc;
using namespace tgc::testing;

namespace {

// out[i, j] = sum_k exp2(h[k, j] * 0.5) * g[k, i] over i < m, j < n, k < kk;
// with `gate`, h is read only for j < gate (a padded operand: 0 beyond, so exp2 gives 1).
struct WeightGrad {
  int64_t m, n, kk, gate = 0;
};

const UOp *weightGradKernel(KB &k, const WeightGrad &s) {
  DType f = dtypes::Float32;
  auto lin = [&](const UOp *x, int64_t stride, const UOp *y) {
    return k.op(Op::ADD, dtypes::WeakInt, {k.op(Op::MUL, dtypes::WeakInt, {x, k.ci(stride)}), y});
  };
  const UOp *out = k.p(0, f, s.m * s.n), *h = k.p(1, f, s.kk * s.n), *g = k.p(2, f, s.kk * s.m);
  const UOp *i = range(k.c, s.m, 0, "LOOP"), *j = range(k.c, s.n, 1, "LOOP"), *r = range(k.c, s.kk, 2, "REDUCE");
  const UOp *hv = k.idx(h, lin(r, s.n, j));
  if (s.gate) {
    const UOp *valid = k.op(Op::CMPLT, dtypes::Bool, {j, k.ci(s.gate)});
    const UOp *gated = k.idx(h, k.op(Op::WHERE, dtypes::WeakInt, {valid, lin(r, s.n, j), k.invalid()}));
    hv = k.op(Op::WHERE, f, {valid, gated, k.cf(0.0)});
  }
  const UOp *act = k.op(Op::EXP2, f, {k.op(Op::MUL, f, {hv, k.cf(0.5)})});
  const UOp *red = k.reduce(Op::ADD, k.op(Op::MUL, f, {act, k.idx(g, lin(r, s.m, i))}), {r});
  return k.sink({k.end(k.store(out, lin(i, s.n, j), red), {i, j})});
}

void checkWeightGrad(const WeightGrad &s) {
  INFO("weight gradient " << s.m << "x" << s.n << " over " << s.kk << (s.gate ? " (gated)" : ""));
  Reference ref = sumReference(s.m, s.n, s.kk, [](int64_t, int64_t) { return 0.0; }, [&](int64_t i, int64_t j, int64_t r) {
    double hv = !s.gate || j < s.gate ? double(testInput(r * s.n + j, 1)) : 0.0;
    return std::exp2(hv * 0.5) * double(testInput(r * s.m + i, 2));
  });
  for (const auto &[name, opts] : optimizationConfigs()) {
    CAPTURE(name);
    KB k;
    DType f = dtypes::Float32;
    const UOp *kern = weightGradKernel(k, s);
    Run run(k.linear({k.call(kern, {buffer(k.c, 10, f, s.m * s.n), buffer(k.c, 11, f, s.kk * s.n),
                                     buffer(k.c, 12, f, s.kk * s.m)})}),
            opts);
    float *got = run.at<float>(10), *hs = run.at<float>(11), *gs = run.at<float>(12);
    for (int64_t x = 0; x < s.kk * s.n; ++x) hs[x] = testInput(x, 1);
    for (int64_t x = 0; x < s.kk * s.m; ++x) gs[x] = testInput(x, 2);
    for (int64_t x = 0; x < s.m * s.n; ++x) got[x] = 1e30f; // every element must be written
    run.go();
    checkClose(got, ref);
  }
}

} // namespace

TEST_CASE("hoist invariant: a weight gradient's exp2(h[k, j]) gets a table over (k, j), the loop over i reads it") {
  KB k;
  const UOp *kern = weightGradKernel(k, {64, 128, 16});
  const UOp *hoisted = codegen::hoistInvariant(kern, codegen::KernelOptions{});
  REQUIRE(hoisted != kern);
  CHECK(localBufferSizes(hoisted) == std::vector<int64_t>{16 * 128});
  // The fill loop nest comes first and the main loop can still run on
  // threads (each chunk fills its own table), when it is long enough that
  // the refills cost less than it: not this one (2048 exp2 per chunk against
  // 131072 FMAs in all).
  REQUIRE(hoisted->src(0)->is(Op::GROUP));
  CHECK(hoisted->src(0)->numSrc() == 2);
  codegen::KernelOptions threaded;
  threaded.threadMinWork = 0;
  CHECK(codegen::parallelRange(hoisted, threaded) == nullptr);
  const UOp *r = codegen::parallelRange(hoisted, threaded, /*work=*/int64_t(1) << 30);
  REQUIRE(r != nullptr);
  CHECK(codegen::tripCount(r) == 64);
  // The main loop nest computes no exp2 any more.
  CHECK(countOps(hoisted->src(0)->src(1), Op::EXP2) == 0);
  CHECK(codegen::hoistInvariant(kern, codegen::KernelOptions::none()) == kern);
}

TEST_CASE("hoist invariant: weight gradients compute the same under every config") {
  checkWeightGrad({64, 128, 16});
  checkWeightGrad({8, 50, 7});     // short everything, widths no vector divides
  checkWeightGrad({40, 96, 48});   // a long reduction: the table keeps it innermost
  checkWeightGrad({33, 72, 16, 60}); // a gated (padded) operand inside the term
}

TEST_CASE("hoist invariant: terms it must leave alone") {
  // w[i, j] = sum_r term * g[r, i] over i < 64, j < 32, r < 16, h of `hSize` floats.
  DType f = dtypes::Float32;
  auto kernelWith = [&](KB &k, int64_t hSize, auto term) {
    auto lin = [&](const UOp *x, int64_t stride, const UOp *y) {
      return k.op(Op::ADD, dtypes::WeakInt, {k.op(Op::MUL, dtypes::WeakInt, {x, k.ci(stride)}), y});
    };
    const UOp *w = k.p(0, f, 64 * 32), *h = k.p(1, f, hSize), *g = k.p(2, f, 16 * 64);
    const UOp *i = range(k.c, 64, 0, "LOOP"), *j = range(k.c, 32, 1, "LOOP"), *r = range(k.c, 16, 2, "REDUCE");
    const UOp *gv = k.idx(g, lin(r, 64, i));
    const UOp *red = k.reduce(Op::ADD, k.op(Op::MUL, f, {term(h, w, gv, lin(r, 32, j)), gv}), {r});
    return k.sink({k.end(k.store(w, lin(i, 32, j), red), {i, j})});
  };
  auto unchanged = [](const UOp *kern) { return codegen::hoistInvariant(kern, codegen::KernelOptions{}) == kern; };
  KB k;
  // The same kernel with exp2(h[r, j]) is rewritten: the cases below differ from it in one thing.
  CHECK_FALSE(unchanged(kernelWith(k, 16 * 32, [&](auto h, auto, auto, auto hi) {
    return k.op(Op::EXP2, f, {k.idx(h, hi)});
  })));
  SUBCASE("the term depends on every loop: exp2(h[r, j] * g[r, i])") {
    CHECK(unchanged(kernelWith(k, 16 * 32, [&](auto h, auto, auto gv, auto hi) {
      return k.op(Op::EXP2, f, {k.op(Op::MUL, f, {k.idx(h, hi), gv})});
    })));
  }
  SUBCASE("a reciprocal is cheaper than its table") {
    CHECK(unchanged(kernelWith(k, 16 * 32, [&](auto h, auto, auto, auto hi) {
      return k.op(Op::RECIPROCAL, f, {k.idx(h, hi)});
    })));
  }
  SUBCASE("the term reads the buffer the kernel writes") {
    CHECK(unchanged(kernelWith(k, 16 * 32, [&](auto, auto w, auto, auto hi) {
      return k.op(Op::EXP2, f, {k.idx(w, hi)});
    })));
  }
  SUBCASE("an ungated load that may fall outside its buffer") {
    CHECK(unchanged(kernelWith(k, 16 * 32 - 1, [&](auto h, auto, auto, auto hi) {
      return k.op(Op::EXP2, f, {k.idx(h, hi)});
    })));
  }
}
