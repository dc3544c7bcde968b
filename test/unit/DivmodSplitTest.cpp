//===- DivmodSplitTest.cpp - an output loop split into quotient and remainder ===//
//
// A weight gradient against a head-major operand, out[i, j] = w[i, j] +
// sum_k a[k, i] * h[j // 16][k][j % 16] (4 heads of 16 columns, as k3's
// attention projections read their input), compiled with and without
// lib/Codegen/Opt/DivmodSplit and under the other configs, compared with a
// double-precision loop nest; and the kernels the split must leave alone.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/DivmodSplit.h" // (Codegen/: a code-generator test for test/unit/CMakeLists.txt)
#include "Codegen/Opt/GateVersioning.h"
#include "Codegen/Opt/ParallelLoop.h"
#include "KernelBuild.h"

#include <cmath>
#include <cstring>
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

// The attention output projection over a head-major operand: out[t, j] =
// res[t, j] + sum_k a[(k // 16) * tokens * 16 + t * 16 + k % 16] * w[j, k]
// (heads of 16, k over heads * 16; with `stride`, a's columns are that many
// elements apart).
const UOp *projectionKernel(KB &k, int64_t tokens, int64_t heads, int64_t n, int64_t stride = 1) {
  DType f = dtypes::Float32;
  auto add = [&](const UOp *a, const UOp *b) { return k.op(Op::ADD, dtypes::WeakInt, {a, b}); };
  auto mul = [&](const UOp *a, int64_t c) { return k.op(Op::MUL, dtypes::WeakInt, {a, k.ci(c)}); };
  int64_t kk = heads * kHead;
  const UOp *out = k.p(0, f, tokens * n), *res = k.p(1, f, tokens * n), *a = k.p(2, f, heads * tokens * kHead * stride),
            *w = k.p(3, f, n * kk);
  const UOp *t = range(k.c, tokens, 0, "LOOP"), *j = range(k.c, n, 1, "LOOP"), *r = range(k.c, kk, 2, "REDUCE");
  const UOp *head = k.op(Op::FLOORDIV, dtypes::WeakInt, {r, k.ci(kHead)});
  const UOp *col = k.op(Op::FLOORMOD, dtypes::WeakInt, {r, k.ci(kHead)});
  const UOp *ai = add(add(mul(head, tokens * kHead * stride), mul(t, kHead * stride)), mul(col, stride));
  const UOp *red = k.reduce(Op::ADD, k.op(Op::MUL, f, {k.idx(a, ai), k.idx(w, add(mul(j, kk), r))}), {r});
  const UOp *at = add(mul(t, n), j);
  return k.sink({k.end(k.store(out, at, k.op(Op::ADD, f, {k.idx(res, at), red})), {t, j})});
}

float projectionA(int64_t x) { return testInput(x, 2); }

// Runs projectionKernel on the test inputs; the output.
std::vector<float> runProjection(int64_t tokens, int64_t heads, int64_t n, const CodegenOptions &opts) {
  KB k;
  DType f = dtypes::Float32;
  int64_t kk = heads * kHead;
  Run run(k.linear({k.call(projectionKernel(k, tokens, heads, n), {buffer(k.c, 10, f, tokens * n), buffer(k.c, 11, f, tokens * n),
                                                                   buffer(k.c, 12, f, heads * tokens * kHead), buffer(k.c, 13, f, n * kk)})}),
          opts);
  float *got = run.at<float>(10), *rs = run.at<float>(11), *as = run.at<float>(12), *ws = run.at<float>(13);
  for (int64_t x = 0; x < tokens * n; ++x) rs[x] = testInput(x, 1), got[x] = 1e30f;
  for (int64_t x = 0; x < heads * tokens * kHead; ++x) as[x] = projectionA(x);
  for (int64_t x = 0; x < n * kk; ++x) ws[x] = testInput(x, 3);
  run.go();
  return {got, got + tokens * n};
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

TEST_CASE("split reduce divmod: a reduction over a head-major operand runs over heads x columns, one element apart") {
  KB k;
  const UOp *kern = projectionKernel(k, 16, 4, 64);
  const UOp *split = codegen::splitReduceDivmod(kern, codegen::KernelOptions{});
  REQUIRE(split != kern);
  const UOp *red = lastReduce(split);
  REQUIRE(red);
  REQUIRE(red->numSrc() == 3); // the summand, k // 16, k % 16
  CHECK(codegen::tripCount(red->src(1)) == 4);
  CHECK(codegen::tripCount(red->src(2)) == kHead);
  CHECK(countOps(split, Op::FLOORDIV) == 0);
  CHECK(countOps(split, Op::FLOORMOD) == 0);
  CHECK(codegen::unitStrideAccesses(red->src(0), red->src(2)) == true);
  CHECK(codegen::splitReduceDivmod(kern, codegen::KernelOptions::none()) == kern);
}

TEST_CASE("split reduce divmod: the projection computes the same under every config") {
  // 16 tokens x 64 columns: a tile of dot products (its 4 head steps summed
  // before the lanes); 3 x 10 (2 heads): too small to tile.
  for (auto [tokens, heads, n] : {std::tuple<int64_t, int64_t, int64_t>{16, 4, 64}, {3, 2, 10}}) {
    INFO(tokens << " tokens, " << heads << " heads, " << n << " columns");
    int64_t kk = heads * kHead;
    Reference ref = sumReference(tokens, n, kk, [&](int64_t t, int64_t j) { return double(testInput(t * n + j, 1)); },
                                 [&](int64_t t, int64_t j, int64_t r) {
                                   return double(projectionA((r / kHead) * tokens * kHead + t * kHead + r % kHead)) *
                                          double(testInput(j * kk + r, 3));
                                 });
    for (const auto &[name, opts] : optimizationConfigs()) {
      CAPTURE(name);
      std::vector<float> got = runProjection(tokens, heads, n, opts);
      checkClose(got.data(), ref);
    }
  }
}

TEST_CASE("split reduce divmod: under strict fp the sums are tinygrad's, bit for bit") {
  CodegenOptions strict, unsplit;
  strict.kernel.strictFP = true;
  unsplit.kernel = strict.kernel;
  unsplit.kernel.splitReduceDivmod = false;
  std::vector<float> split = runProjection(16, 4, 64, strict), plain = runProjection(16, 4, 64, unsplit);
  REQUIRE(split.size() == plain.size());
  for (size_t i = 0; i < split.size(); ++i) {
    CAPTURE(i);
    CHECK(std::memcmp(&split[i], &plain[i], sizeof(float)) == 0);
  }
}

TEST_CASE("split reduce divmod: reductions it must leave alone") {
  SUBCASE("the columns are 2 elements apart: no contiguous inner loop to make") {
    KB k;
    const UOp *kern = projectionKernel(k, 16, 4, 64, /*stride=*/2);
    CHECK(codegen::splitReduceDivmod(kern, codegen::KernelOptions{}) == kern);
  }
  SUBCASE("a reduction already affine along k") {
    KB k;
    const UOp *kern = headMajorKernel(k, 8, 4, 16);
    CHECK(codegen::splitReduceDivmod(kern, codegen::KernelOptions{}) == kern);
  }
}

namespace {
// The sum of a whole [8][16][32] tensor (or, `transposed`, of its [32][16][8]
// transpose read through strides), as tinygrad writes it: one REDUCE over
// the three ranges.
const UOp *fullSumKernel(KB &k, bool transposed = false) {
  DType f = dtypes::Float32;
  const UOp *out = k.p(0, f, 1), *x = k.p(1, f, 8 * 16 * 32);
  const UOp *a = range(k.c, 8, 0, "REDUCE"), *b = range(k.c, 16, 1, "REDUCE"), *c = range(k.c, 32, 2, "REDUCE");
  auto mul = [&](const UOp *r, int64_t n) { return k.op(Op::MUL, dtypes::WeakInt, {r, k.ci(n)}); };
  auto add = [&](const UOp *x, const UOp *y) { return k.op(Op::ADD, dtypes::WeakInt, {x, y}); };
  // tinygrad's flat index: a * 512 + b * 32 + c (transposed: c * 128 + b * 8 + a)
  const UOp *at = transposed ? add(add(mul(c, 128), mul(b, 8)), a) : add(add(mul(a, 512), mul(b, 32)), c);
  return k.sink({k.store(out, k.ci(0), k.reduce(Op::ADD, k.idx(x, at), {a, b, c}))});
}

std::vector<float> runFullSum(const CodegenOptions &opts) {
  KB k;
  DType f = dtypes::Float32;
  Run run(k.linear({k.call(fullSumKernel(k), {buffer(k.c, 10, f, 1), buffer(k.c, 11, f, 8 * 16 * 32)})}), opts);
  float *got = run.at<float>(10), *xs = run.at<float>(11);
  for (int64_t i = 0; i < 8 * 16 * 32; ++i) xs[i] = testInput(i, 1);
  got[0] = 1e30f;
  run.go();
  return {got, got + 1};
}
} // namespace

TEST_CASE("merge reduce ranges: the sum of a contiguous tensor runs over one range of all its elements") {
  KB k;
  const UOp *kern = fullSumKernel(k);
  const UOp *merged = codegen::mergeReduceRanges(kern, codegen::KernelOptions{});
  REQUIRE(merged != kern);
  const UOp *red = lastReduce(merged);
  REQUIRE(red);
  REQUIRE(red->numSrc() == 2);
  CHECK(codegen::tripCount(red->src(1)) == 8 * 16 * 32);
  CHECK(countOps(merged, Op::FLOORDIV) == 0);
  CHECK(countOps(merged, Op::FLOORMOD) == 0);
  CHECK(codegen::mergeReduceRanges(kern, codegen::KernelOptions::none()) == kern);
  KB k2;
  const UOp *strided = fullSumKernel(k2, /*transposed=*/true);
  CHECK(codegen::mergeReduceRanges(strided, codegen::KernelOptions{}) == strided); // not one element apart
}

TEST_CASE("merge reduce ranges: the sum is the same under every config, and tinygrad's bit for bit under strict fp") {
  double want = 0, mag = 0;
  for (int64_t i = 0; i < 8 * 16 * 32; ++i) want += testInput(i, 1), mag += std::fabs(testInput(i, 1));
  for (const auto &[name, opts] : optimizationConfigs()) {
    CAPTURE(name);
    CHECK(std::fabs(runFullSum(opts)[0] - want) <= 1e-5 * mag);
  }
  CodegenOptions strict, unmerged;
  strict.kernel.strictFP = true;
  unmerged.kernel = strict.kernel;
  unmerged.kernel.mergeReduceRanges = false;
  float a = runFullSum(strict)[0], b = runFullSum(unmerged)[0];
  CHECK(std::memcmp(&a, &b, sizeof a) == 0);
}

namespace {

// threefry2x32-20 (Random123), written out here as the reference: the
// counter and the key packed low word first, as tinygrad's THREEFRY takes them.
uint64_t threefryReference(uint64_t ctr, uint64_t key) {
  auto rotl = [](uint32_t v, int r) { return uint32_t(v << r | v >> (32 - r)); };
  const uint32_t k[3] = {uint32_t(key), uint32_t(key >> 32), uint32_t(key) ^ uint32_t(key >> 32) ^ 0x1BD11BDAu};
  const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t x0 = uint32_t(ctr) + k[0], x1 = uint32_t(ctr >> 32) + k[1];
  for (int r = 0; r < 20; ++r) {
    x0 += x1;
    x1 = rotl(x1, rot[r % 8]) ^ x0;
    if (r % 4 == 3) x0 += k[(r / 4 + 1) % 3], x1 += k[(r / 4 + 2) % 3] + uint32_t(r / 4 + 1);
  }
  return uint64_t(x1) << 32 | x0;
}

// tinygrad's rand bits: out[j] for j < 2c, the low 32 bits of THREEFRY(j % c,
// key[0]) in the first half and the high 32 bits in the second (a cat of the
// two halves, read as j // c and j % c).
const UOp *randBitsKernel(KB &k, int64_t c) {
  DType u32 = dtypes::UInt32, u64 = dtypes::UInt64;
  const UOp *out = k.p(0, u32, 2 * c), *key = k.p(1, u64, 1), *j = range(k.c, 2 * c, 0, "LOOP");
  const UOp *m = k.op(Op::FLOORMOD, dtypes::WeakInt, {j, k.ci(c)});
  const UOp *t = k.op(Op::THREEFRY, u64, {k.op(Op::CAST, u64, {m}, Value::dtype(u64)), k.idx(key, k.ci(0))});
  const UOp *lo = k.op(Op::CAST, u32, {t}, Value::dtype(u32));
  const UOp *hi = k.op(Op::CAST, u32, {k.op(Op::SHR, u64, {t, k.ci(32, u64)})}, Value::dtype(u32));
  const UOp *upper = k.op(Op::CMPNE, dtypes::Bool, {k.op(Op::FLOORDIV, dtypes::WeakInt, {j, k.ci(c)}), k.ci(0)});
  return k.sink({k.end(k.store(out, j, k.op(Op::WHERE, u32, {upper, hi, lo})), {j})});
}

} // namespace

TEST_CASE("unroll quotient: rand's two halves of one THREEFRY are stored from one loop over the counter") {
  KB k;
  const UOp *kern = randBitsKernel(k, 64);
  const UOp *unrolled = codegen::unrollQuotient(kern, codegen::KernelOptions{});
  REQUIRE(unrolled != kern);
  const UOp *end = unrolled->src(0);
  REQUIRE(end->is(Op::END));
  REQUIRE(end->numSrc() == 2); // GROUP(two STOREs), m
  CHECK(codegen::tripCount(end->src(1)) == 64);
  REQUIRE(end->src(0)->is(Op::GROUP));
  CHECK(end->src(0)->numSrc() == 2);
  CHECK(countOps(unrolled, Op::THREEFRY) == 1); // shared by both stores
  CHECK(countOps(unrolled, Op::FLOORDIV) == 0);
  CHECK(countOps(unrolled, Op::WHERE) == 0);
  CHECK(codegen::unrollQuotient(kern, codegen::KernelOptions::none()) == kern);
}

TEST_CASE("unroll quotient: the rand bits are threefry2x32's under every config") {
  constexpr int64_t c = 1000; // not a multiple of the vector width: a remainder loop too
  const uint64_t key = 0x0123456789abcdefull;
  for (const auto &[name, opts] : optimizationConfigs()) {
    CAPTURE(name);
    KB k;
    Run run(k.linear({k.call(randBitsKernel(k, c), {buffer(k.c, 10, dtypes::UInt32, 2 * c), buffer(k.c, 11, dtypes::UInt64, 1)})}),
            opts);
    *run.at<uint64_t>(11) = key;
    run.go();
    const uint32_t *got = run.at<uint32_t>(10);
    for (int64_t m = 0; m < c; ++m) {
      CAPTURE(m);
      uint64_t want = threefryReference(uint64_t(m), key);
      CHECK(got[m] == uint32_t(want));
      CHECK(got[m + c] == uint32_t(want >> 32));
    }
  }
}

TEST_CASE("unroll quotient: kernels it must leave alone") {
  DType f = dtypes::Float32;
  SUBCASE("the halves share no costly work: a cat of two tensors") {
    KB k;
    const UOp *out = k.p(0, f, 128), *a = k.p(1, f, 64), *b = k.p(2, f, 64), *j = range(k.c, 128, 0, "LOOP");
    const UOp *m = k.op(Op::FLOORMOD, dtypes::WeakInt, {j, k.ci(64)});
    const UOp *upper = k.op(Op::CMPNE, dtypes::Bool, {k.op(Op::FLOORDIV, dtypes::WeakInt, {j, k.ci(64)}), k.ci(0)});
    const UOp *kern = k.sink({k.end(k.store(out, j, k.op(Op::WHERE, f, {upper, k.idx(b, m), k.idx(a, m)})), {j})});
    CHECK(codegen::unrollQuotient(kern, codegen::KernelOptions{}) == kern);
  }
  SUBCASE("too many quotients: j // 8 of 128") {
    KB k;
    const UOp *out = k.p(0, f, 128), *a = k.p(1, f, 16), *j = range(k.c, 128, 0, "LOOP");
    const UOp *m = k.op(Op::FLOORMOD, dtypes::WeakInt, {j, k.ci(16)});
    const UOp *q = k.op(Op::CAST, f, {k.op(Op::FLOORDIV, dtypes::WeakInt, {j, k.ci(16)})}, Value::dtype(f));
    const UOp *kern = k.sink({k.end(k.store(out, j, k.op(Op::MUL, f, {k.op(Op::EXP2, f, {k.idx(a, m)}), q})), {j})});
    CHECK(codegen::unrollQuotient(kern, codegen::KernelOptions{}) == kern);
  }
}
