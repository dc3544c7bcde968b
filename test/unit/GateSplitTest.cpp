//===- GateSplitTest.cpp - an output loop split where its gates change -----===//
//
// A concatenation of three products along j, as tinygrad writes attention's
// dQ, dK, dV side by side: out[i, j] = (j < 32 ? a.wq[j] : 0) +
// (32 <= j < 64 ? a.wk[j - 32] : 0) + (64 <= j ? a.wv[j - 64] : 0), each
// product a reduction over gated loads. Compiled with and without
// lib/Codegen/GateSplit and under the other configs, compared with a
// double-precision loop nest; and the kernels the split must leave alone.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/GateSplit.h" // (Codegen/: a code-generator test for test/unit/CMakeLists.txt)
#include "Codegen/Opt/ParallelLoop.h"
#include "KernelBuild.h"

#include <cmath>
#include <vector>

using namespace tgc;
using namespace tgc::testing;

namespace {

constexpr int64_t kPart = 32;

// m rows, 3 parts of 32 columns, reductions over kk.
const UOp *concatKernel(KB &k, int64_t m, int64_t kk) {
  DType f = dtypes::Float32;
  auto add = [&](const UOp *a, const UOp *b) { return k.op(Op::ADD, dtypes::WeakInt, {a, b}); };
  auto mul = [&](const UOp *a, int64_t c) { return k.op(Op::MUL, dtypes::WeakInt, {a, k.ci(c)}); };
  const UOp *yes = k.c.constBool(true);
  const UOp *out = k.p(0, f, m * 3 * kPart), *a = k.p(1, f, m * kk);
  const UOp *w[3] = {k.p(2, f, kPart * kk), k.p(3, f, kPart * kk), k.p(4, f, kPart * kk)};
  const UOp *i = range(k.c, m, 0, "LOOP"), *j = range(k.c, 3 * kPart, 1, "LOOP");
  auto below = [&](int64_t c) { return k.op(Op::CMPLT, dtypes::Bool, {j, k.ci(c)}); };
  auto notBelow = [&](int64_t c) { return k.op(Op::CMPNE, dtypes::Bool, {below(c), yes}); };
  const UOp *gates[3] = {below(kPart), k.op(Op::AND, dtypes::Bool, {notBelow(kPart), below(2 * kPart)}), notBelow(2 * kPart)};
  const UOp *value = nullptr;
  for (int p = 0; p < 3; ++p) {
    const UOp *r = range(k.c, kk, 2 + p, "REDUCE");
    const UOp *wi = add(mul(add(j, k.ci(-p * kPart)), kk), r);
    const UOp *wl = k.idx(w[p], k.op(Op::WHERE, dtypes::WeakInt, {gates[p], wi, k.invalid()}));
    const UOp *wv = k.op(Op::WHERE, f, {gates[p], wl, k.cf(0.0)});
    const UOp *red = k.reduce(Op::ADD, k.op(Op::MUL, f, {k.idx(a, add(mul(i, kk), r)), wv}), {r});
    const UOp *part = k.op(Op::WHERE, f, {gates[p], red, k.cf(0.0)});
    value = value ? k.op(Op::ADD, f, {value, part}) : part;
  }
  return k.sink({k.end(k.store(out, add(mul(i, 3 * kPart), j), value), {i, j})});
}

} // namespace

TEST_CASE("split gates: a concatenation of three products gets one loop per part, each with its own reduction") {
  KB k;
  const UOp *kern = concatKernel(k, 16, 24);
  const UOp *split = codegen::splitGates(kern, codegen::KernelOptions{});
  REQUIRE(split != kern);
  // SINK(END(GROUP(END(part 0, j0), END(part 1, j1), END(part 2, j2)), i))
  const UOp *outer = split->src(0);
  REQUIRE(outer->is(Op::END));
  REQUIRE(outer->src(0)->is(Op::GROUP));
  REQUIRE(outer->src(0)->numSrc() == 3);
  for (const UOp *piece : outer->src(0)->src()) {
    REQUIRE(piece->is(Op::END));
    CHECK(codegen::tripCount(piece->src(1)) == kPart);
    CHECK(countOps(piece, Op::REDUCE) == 1);
    CHECK(countOps(piece, Op::CMPLT) == 0); // the gates folded to constants
  }
  codegen::KernelOptions threaded;
  threaded.threadMinWork = 0;
  CHECK(codegen::parallelRange(split, threaded) == outer->src(1));
  CHECK(codegen::splitGates(kern, codegen::KernelOptions::none()) == kern);
}

TEST_CASE("split gates: the concatenation computes the same under every config") {
  for (auto [m, kk] : {std::pair<int64_t, int64_t>{16, 24}, {5, 7}}) {
    INFO("rows " << m << ", reductions of " << kk);
    Reference ref = sumReference(m, 3 * kPart, kk, [](int64_t, int64_t) { return 0.0; }, [&](int64_t i, int64_t j, int64_t r) {
      return double(testInput(i * kk + r, 1)) * double(testInput((j % kPart) * kk + r, 2 + j / kPart));
    });
    for (const auto &[name, opts] : optimizationConfigs()) {
      CAPTURE(name);
      KB k;
      DType f = dtypes::Float32;
      const UOp *kern = concatKernel(k, m, kk);
      std::vector<const UOp *> args{buffer(k.c, 10, f, m * 3 * kPart), buffer(k.c, 11, f, m * kk)};
      for (int p = 0; p < 3; ++p) args.push_back(buffer(k.c, 12 + p, f, kPart * kk));
      Run run(k.linear({k.call(kern, args)}), opts);
      float *got = run.at<float>(10), *as = run.at<float>(11);
      for (int64_t x = 0; x < m * kk; ++x) as[x] = testInput(x, 1);
      for (int p = 0; p < 3; ++p) {
        float *ws = run.at<float>(12 + p);
        for (int64_t x = 0; x < kPart * kk; ++x) ws[x] = testInput(x, 2 + p);
      }
      for (int64_t x = 0; x < m * 3 * kPart; ++x) got[x] = 1e30f; // every element must be written
      run.go();
      checkClose(got, ref);
    }
  }
}

TEST_CASE("split gates: kernels it must leave alone") {
  DType f = dtypes::Float32;
  KB k;
  const UOp *out = k.p(0, f, 8 * 64), *a = k.p(1, f, 8 * 64);
  const UOp *i = range(k.c, 8, 0, "LOOP"), *j = range(k.c, 64, 1, "LOOP"), *r = range(k.c, 4, 2, "REDUCE");
  const UOp *at = k.op(Op::ADD, dtypes::WeakInt, {k.op(Op::MUL, dtypes::WeakInt, {i, k.ci(64)}), j});
  const UOp *red = k.reduce(Op::ADD, k.op(Op::MUL, f, {k.idx(a, at), k.c.constFloat(double(1), f)}), {r});
  SUBCASE("a gate that keeps the one reduction on both sides: nothing to drop") {
    const UOp *v = k.op(Op::WHERE, f, {k.op(Op::CMPLT, dtypes::Bool, {j, k.ci(16)}), red, k.op(Op::MUL, f, {red, k.cf(2.0)})});
    const UOp *kern = k.sink({k.end(k.store(out, at, v), {i, j})});
    CHECK(codegen::splitGates(kern, codegen::KernelOptions{}) == kern);
  }
  SUBCASE("no comparison with the loop index") {
    const UOp *kern = k.sink({k.end(k.store(out, at, red), {i, j})});
    CHECK(codegen::splitGates(kern, codegen::KernelOptions{}) == kern);
  }
  SUBCASE("one output loop: no outer loop to run the pieces in") {
    const UOp *v = k.op(Op::WHERE, f, {k.op(Op::CMPLT, dtypes::Bool, {j, k.ci(16)}), red, k.cf(0.0)});
    const UOp *kern = k.sink({k.end(k.store(out, j, v), {j})});
    CHECK(codegen::splitGates(kern, codegen::KernelOptions{}) == kern);
  }
}
