//===- FactorSumsTest.cpp - a sum's constant factors multiplied once, after it -===//
//
// x @ (W * s).T with a per-row scale s (the int8 weights of a decoding step,
// here float): lib/Codegen/Opt/FactorSums moves s out of the sum. Compiled
// under every config (one keeps the factors) and compared with a
// double-precision loop nest; and the sums the rewrite must leave alone.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/FactorSums.h" // (Codegen/: a code-generator test for test/unit/CMakeLists.txt)
#include "Codegen/Opt/ParallelLoop.h"
#include "KernelBuild.h"

#include <vector>

using namespace tgc;
using namespace tgc::testing;

namespace {

// out[i, j] = sum_k x[i, k] * (w[j, k] * s[j]); with `moving`, s[k] instead
// (a factor the sum moves with).
const UOp *scaledLinear(KB &k, int64_t m, int64_t n, int64_t kk, bool moving = false) {
  DType f = dtypes::Float32;
  const UOp *out = k.p(0, f, m * n), *x = k.p(1, f, m * kk), *w = k.p(2, f, n * kk), *s = k.p(3, f, std::max(n, kk));
  const UOp *i = range(k.c, m, 0, "LOOP"), *j = range(k.c, n, 1, "LOOP"), *r = range(k.c, kk, 2, "REDUCE");
  const UOp *scaled = k.op(Op::MUL, f, {k.idx(w, k.lin(j, kk, r)), k.idx(s, moving ? r : j)});
  const UOp *red = k.reduce(Op::ADD, k.op(Op::MUL, f, {k.idx(x, k.lin(i, kk, r)), scaled}), {r});
  return k.sink({k.end(k.store(out, k.lin(i, n, j), red), {i, j})});
}

} // namespace

TEST_CASE("factor-sums: a per-row scale leaves the sum, which multiplies by it once") {
  KB k;
  const UOp *kern = scaledLinear(k, 4, 64, 256);
  const UOp *factored = codegen::factorSums(kern, codegen::KernelOptions{});
  REQUIRE(factored != kern);
  const UOp *red = lastReduce(factored);
  REQUIRE(red);
  // the summand reads x and w only; the REDUCE's user multiplies by s[j]
  for (const UOp *u : toposort(red->src(0)))
    if (u->is(Op::INDEX)) CHECK(u->src(0)->arg().field("slot")->getInt() != 3);
  bool scaledAfter = false;
  for (const UOp *u : toposort(factored))
    if (u->is(Op::MUL) && u->src(0) == red && u->src(1)->is(Op::INDEX)) scaledAfter = true;
  CHECK(scaledAfter);

  codegen::KernelOptions strict, off;
  strict.strictFP = true; // tinygrad's order: every step multiplies
  off.factorSums = false;
  CHECK(codegen::factorSums(kern, strict) == kern);
  CHECK(codegen::factorSums(kern, off) == kern);
  KB k2;
  const UOp *moving = scaledLinear(k2, 4, 64, 256, true);
  CHECK(codegen::factorSums(moving, codegen::KernelOptions{}) == moving);
}

TEST_CASE("factor-sums: x @ (W * s).T under every config equals the double-precision sum") {
  const int64_t m = 8, n = 96, kk = 160;
  Reference ref = sumReference(m, n, kk, [](int64_t, int64_t) { return 0.0; }, [&](int64_t i, int64_t j, int64_t r) {
    return double(testInput(i * kk + r, 1)) * (double(testInput(j * kk + r, 2)) * double(testInput(j, 3)));
  });
  for (const auto &[name, opts] : optimizationConfigs()) {
    CAPTURE(name);
    KB k;
    DType f = dtypes::Float32;
    Run run(k.linear({k.call(scaledLinear(k, m, n, kk), {buffer(k.c, 10, f, m * n), buffer(k.c, 11, f, m * kk),
                                                         buffer(k.c, 12, f, n * kk), buffer(k.c, 13, f, kk)})}),
            opts);
    float *got = run.at<float>(10), *xs = run.at<float>(11), *ws = run.at<float>(12), *ss = run.at<float>(13);
    for (int64_t x = 0; x < m * kk; ++x) xs[x] = testInput(x, 1);
    for (int64_t x = 0; x < n * kk; ++x) ws[x] = testInput(x, 2);
    for (int64_t x = 0; x < kk; ++x) ss[x] = testInput(x, 3);
    for (int64_t x = 0; x < m * n; ++x) got[x] = 1e30f;
    run.go();
    checkClose(got, ref);
  }
}
