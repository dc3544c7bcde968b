//===- SplitVectorMatrixTest.cpp - x @ W for one row in parts of W's rows (SplitVectorMatrix.h) ===//
#include "Codegen/Opt/SplitVectorMatrix.h"

#include "KernelBuild.h"

#include <cmath>
#include <thread>

using namespace tgc;
using namespace tgc::testing;
using codegen::KernelOptions;

namespace {

constexpr int64_t kK = 1024, kN = 512; // W: 2 MiB
const DType f = dtypes::Float32;

// y[j] = sum_k x[k] * w[index(k, j)]: slots y 0, x 1, w 2.
const UOp *productLinear(KB &k, bool transposed) {
  const UOp *y = buffer(k.c, 1, f, kN), *x = buffer(k.c, 2, f, kK), *w = buffer(k.c, 3, f, kK * kN);
  const UOp *j = range(k.c, kN, 0), *r = range(k.c, kK, 1, "REDUCE");
  const UOp *wAt = transposed ? k.lin(j, kK, r) : k.lin(r, kN, j);
  const UOp *summand = k.op(Op::MUL, f, {k.idx(k.p(1, f, kK), r), k.idx(k.p(2, f, kK * kN), wAt)});
  const UOp *body = k.sink({k.end(k.store(k.p(0, f, kN), j, k.reduce(Op::ADD, summand, {r})), {j})});
  return k.linear({k.call(body, {y, x, w})});
}

std::vector<size_t> splitCalls(const UOp *linear, const KernelOptions &opts) {
  auto plan = planLinear(linear);
  REQUIRE(plan.ok());
  std::vector<size_t> split;
  (void)codegen::splitVectorMatrix(*plan, opts, &split);
  return split;
}

// The largest error of y = x @ w against a double reference, relative to 1 + |y|.
double worstError(const float *x, const float *w, const float *y) {
  double worst = 0;
  for (int64_t j = 0; j < kN; ++j) {
    double want = 0;
    for (int64_t r = 0; r < kK; ++r) want += double(x[r]) * double(w[r * kN + j]);
    worst = std::max(worst, std::abs(double(y[j]) - want) / (1 + std::abs(want)));
  }
  return worst;
}

} // namespace

TEST_CASE("split vector-matrix: x @ W for one row runs as parts of W's rows, then their sum") {
  KB k;
  const UOp *lin = productLinear(k, false);
  CHECK(splitCalls(lin, KernelOptions{}) == std::vector<size_t>{0});
  auto plan = planLinear(lin);
  SchedulePlan split = codegen::splitVectorMatrix(*plan, KernelOptions{});
  REQUIRE(split.calls.size() == 2);
  CHECK(split.kernels.size() == 2);
  REQUIRE(split.buffers.size() == plan->buffers.size() + 1); // the partial sums
  CHECK(split.buffers.back().bytes() == size_t(8 * kN * 4));
  CHECK(split.calls[1].args[0].buffer == plan->calls[0].args[0].buffer); // the sum writes y

  // Values: the default build against a double reference; a run given only
  // the LINEAR's buffers allocates the partial sums itself.
  Run run(lin);
  float *x = run.at<float>(2);
  for (int64_t i = 0; i < kK; ++i) x[i] = float(i % 7) - 3.0f;
  float *w = run.at<float>(3);
  for (int64_t i = 0; i < kK * kN; ++i) w[i] = float((i * 13) % 11) / 8.0f - 0.5f;
  std::vector<void *> own;
  for (size_t i = 0; i < run.cs->linearBuffers(); ++i) own.push_back(run.bufs->data(i));
  REQUIRE(run.cs->linearBuffers() + 1 == run.cs->buffers().size());
  REQUIRE(run.cs->run(own).ok());
  CHECK(worstError(run.at<float>(2), run.at<float>(3), run.at<float>(1)) <= 1e-5);
}

TEST_CASE("split vector-matrix: runs given the LINEAR's buffers reuse the partial sums; concurrent runs each have some") {
  KB k;
  Run run(productLinear(k, false));
  float *w = run.at<float>(3);
  for (int64_t i = 0; i < kK * kN; ++i) w[i] = float((i * 13) % 11) / 8.0f - 0.5f;
  // Two sets of the LINEAR's buffers sharing W: x and y of their own.
  std::vector<float> x2(kK), y2(kN);
  float *x = run.at<float>(2);
  for (int64_t i = 0; i < kK; ++i) x[i] = float(i % 7) - 3.0f, x2[size_t(i)] = float(i % 5) * 0.25f;
  std::vector<void *> first, second;
  for (size_t i = 0; i < run.cs->linearBuffers(); ++i) first.push_back(run.bufs->data(i)), second.push_back(run.bufs->data(i));
  second[size_t(run.cs->plan().indexOfSlot(1))] = y2.data();
  second[size_t(run.cs->plan().indexOfSlot(2))] = x2.data();
  // One after the other: the second run reads partial sums the first left behind.
  REQUIRE(run.cs->run(first).ok());
  REQUIRE(run.cs->run(second).ok());
  CHECK(worstError(run.at<float>(2), run.at<float>(3), run.at<float>(1)) <= 1e-5);
  CHECK(worstError(x2.data(), run.at<float>(3), y2.data()) <= 1e-5);
  // Side by side: one run holds the kept partial sums, the other makes its own.
  std::fill(y2.begin(), y2.end(), 0.0f);
  std::fill(run.at<float>(1), run.at<float>(1) + kN, 0.0f);
  for (int round = 0; round < 8; ++round) {
    bool ok2 = false;
    std::thread other([&] { ok2 = run.cs->run(second).ok(); });
    bool ok1 = run.cs->run(first).ok();
    other.join();
    REQUIRE((ok1 && ok2));
    CHECK(worstError(run.at<float>(2), run.at<float>(3), run.at<float>(1)) <= 1e-5);
    CHECK(worstError(x2.data(), run.at<float>(3), y2.data()) <= 1e-5);
  }
}

TEST_CASE("split vector-matrix: not under strict fp, nor for x @ W.T (W's rows along the reduction)") {
  KB k;
  KernelOptions strict;
  strict.strictFP = true;
  CHECK(splitCalls(productLinear(k, false), strict).empty());
  KernelOptions off;
  off.splitVectorMatrix = false;
  CHECK(splitCalls(productLinear(k, false), off).empty());
  CHECK(splitCalls(productLinear(k, true), KernelOptions{}).empty());
}
