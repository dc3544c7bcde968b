//===- DivmodSplitTest.cpp - an output loop split into quotient and remainder ===//
//
// A weight gradient against a head-major operand, out[i, j] = w[i, j] +
// sum_k a[k, i] * h[j // 16][k][j % 16] (4 heads of 16 columns, as k3's
// attention projections read their input), compiled with and without
// lib/Codegen/DivmodSplit and under the other configs, compared with a
// double-precision loop nest; and the kernels the split must leave alone.
//
//===----------------------------------------------------------------------===//
#include "Codegen/DivmodSplit.h" // (Codegen/: a code-generator test for test/unit/CMakeLists.txt)
#include "Codegen/GateVersioning.h"
#include "Codegen/ParallelLoop.h"
#include "KernelBuild.h"

#include <cmath>
#include <vector>

using namespace tgc;
using namespace tgc::testing;

namespace {

constexpr int64_t kHead = 16;

// `heads` heads of 16 columns, m rows, reductions over kk; with `stride` the
// head-major operand's columns are `stride` elements apart instead of 1.
const UOp *headMajorKernel(KB &k, int64_t m, int64_t heads, int64_t kk, int64_t stride = 1) {
  DType f = dtypes::Float32;
  auto add = [&](const UOp *a, const UOp *b) { return k.op(Op::ADD, dtypes::WeakInt, {a, b}); };
  auto mul = [&](const UOp *a, int64_t c) { return k.op(Op::MUL, dtypes::WeakInt, {a, k.ci(c)}); };
  int64_t n = heads * kHead;
  const UOp *out = k.p(0, f, m * n), *w = k.p(1, f, m * n), *a = k.p(2, f, kk * m), *h = k.p(3, f, heads * kk * kHead * stride);
  const UOp *i = range(k.c, m, 0, "LOOP"), *j = range(k.c, n, 1, "LOOP"), *r = range(k.c, kk, 2, "REDUCE");
  const UOp *head = k.op(Op::FLOORDIV, dtypes::WeakInt, {j, k.ci(kHead)});
  const UOp *col = k.op(Op::FLOORMOD, dtypes::WeakInt, {j, k.ci(kHead)});
  const UOp *hi = add(add(mul(r, kHead * stride), mul(col, stride)), mul(head, kk * kHead * stride));
  const UOp *red = k.reduce(Op::ADD, k.op(Op::MUL, f, {k.idx(a, add(mul(r, m), i)), k.idx(h, hi)}), {r});
  const UOp *at = add(mul(i, n), j);
  return k.sink({k.end(k.store(out, at, k.op(Op::ADD, f, {k.idx(w, at), red})), {i, j})});
}

} // namespace

TEST_CASE("split divmod: a head-major operand's loop over j becomes heads x columns, one element apart") {
  KB k;
  const UOp *kern = headMajorKernel(k, 8, 4, 16);
  const UOp *split = codegen::splitDivmod(kern, codegen::KernelOptions{});
  REQUIRE(split != kern);
  const UOp *end = split->src(0);
  REQUIRE(end->is(Op::END));
  REQUIRE(end->numSrc() == 4); // STORE, i, j // 16, j % 16
  CHECK(codegen::tripCount(end->src(2)) == 4);
  CHECK(codegen::tripCount(end->src(3)) == kHead);
  CHECK(countOps(split, Op::FLOORDIV) == 0);
  CHECK(countOps(split, Op::FLOORMOD) == 0);
  CHECK(codegen::unitStrideAccesses(end->src(0), end->src(3), /*throughReduces=*/true) == true);
  CHECK(codegen::splitDivmod(kern, codegen::KernelOptions::none()) == kern);
}

TEST_CASE("split divmod: the weight gradient computes the same under every config") {
  for (auto [m, heads, kk] : {std::tuple<int64_t, int64_t, int64_t>{8, 4, 16}, {3, 2, 5}}) {
    INFO(m << " rows, " << heads << " heads, reductions of " << kk);
    int64_t n = heads * kHead;
    Reference ref = sumReference(m, n, kk, [&](int64_t i, int64_t j) { return double(testInput(i * n + j, 1)); },
                                 [&](int64_t i, int64_t j, int64_t r) {
                                   return double(testInput(r * m + i, 2)) *
                                          double(testInput((j / kHead) * kk * kHead + r * kHead + j % kHead, 3));
                                 });
    for (const auto &[name, opts] : optimizationConfigs()) {
      CAPTURE(name);
      KB k;
      DType f = dtypes::Float32;
      const UOp *kern = headMajorKernel(k, m, heads, kk);
      Run run(k.linear({k.call(kern, {buffer(k.c, 10, f, m * n), buffer(k.c, 11, f, m * n), buffer(k.c, 12, f, kk * m),
                                       buffer(k.c, 13, f, heads * kk * kHead)})}),
              opts);
      float *got = run.at<float>(10), *ws = run.at<float>(11), *as = run.at<float>(12), *hs = run.at<float>(13);
      for (int64_t x = 0; x < m * n; ++x) ws[x] = testInput(x, 1), got[x] = 1e30f;
      for (int64_t x = 0; x < kk * m; ++x) as[x] = testInput(x, 2);
      for (int64_t x = 0; x < heads * kk * kHead; ++x) hs[x] = testInput(x, 3);
      run.go();
      checkClose(got, ref);
    }
  }
}

TEST_CASE("split divmod: kernels it must leave alone") {
  SUBCASE("the columns are 2 elements apart: no contiguous loop to make") {
    KB k;
    const UOp *kern = headMajorKernel(k, 8, 4, 16, /*stride=*/2);
    CHECK(codegen::splitDivmod(kern, codegen::KernelOptions{}) == kern);
  }
  SUBCASE("already affine along j") {
    KB k;
    DType f = dtypes::Float32;
    const UOp *out = k.p(0, f, 64), *a = k.p(1, f, 64);
    const UOp *j = range(k.c, 64, 0, "LOOP");
    const UOp *kern = k.sink({k.end(k.store(out, j, k.idx(a, j)), {j})});
    CHECK(codegen::splitDivmod(kern, codegen::KernelOptions{}) == kern);
  }
}
