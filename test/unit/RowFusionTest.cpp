//===- RowFusionTest.cpp - kernels over the same rows run as one (RowFusion.h) ---===//
#include "Codegen/Opt/RowFusion.h"

#include "KernelBuild.h"

#include <cmath>
#include <cstring>

using namespace tgc;
using namespace tgc::testing;
using codegen::KernelOptions;

namespace {

constexpr int64_t kRows = 64, kCols = 128;
const DType f = dtypes::Float32;

// softmax over the rows of x (slot 1), as tinygrad schedules it: m (slot 2) =
// max of the row; s (slot 3) = sum of exp2((x - m) * log2 e); out (slot 0) =
// exp2((x - m) * log2 e) * (1 / s). Each kernel's buffers are its own PARAMs.
struct Softmax {
  KB k;
  const UOp *x = buffer(k.c, 1, f, kRows * kCols), *m = buffer(k.c, 2, f, kRows), *s = buffer(k.c, 3, f, kRows);
  const UOp *out = buffer(k.c, 4, f, kRows * kCols);
  const UOp *exps(const UOp *px, const UOp *pm, const UOp *r, const UOp *c) {
    const UOp *d = k.op(Op::ADD, f, {k.idx(px, k.lin(r, kCols, c)), k.op(Op::MUL, f, {k.idx(pm, r), k.cf(-1.0)})});
    return k.op(Op::EXP2, f, {k.op(Op::MUL, f, {d, k.cf(1.4426950408889634)})});
  }
  const UOp *maxKernel(const UOp *mIndex = nullptr) {
    const UOp *pm = k.p(0, f, kRows), *px = k.p(1, f, kRows * kCols);
    const UOp *r = range(k.c, kRows, 0), *c = range(k.c, kCols, 1, "REDUCE");
    return k.sink({k.end(k.store(pm, mIndex ? mIndex : r, k.reduce(Op::MAX, k.idx(px, k.lin(r, kCols, c)), {c})), {r})});
  }
  const UOp *sumKernel() {
    const UOp *ps = k.p(0, f, kRows), *px = k.p(1, f, kRows * kCols), *pm = k.p(2, f, kRows);
    const UOp *r = range(k.c, kRows, 1), *c = range(k.c, kCols, 0, "REDUCE");
    return k.sink({k.end(k.store(ps, r, k.reduce(Op::ADD, exps(px, pm, r, c), {c})), {r})});
  }
  const UOp *normalizeKernel() {
    const UOp *po = k.p(0, f, kRows * kCols), *px = k.p(1, f, kRows * kCols), *pm = k.p(2, f, kRows),
              *ps = k.p(3, f, kRows);
    const UOp *r = range(k.c, kRows, 0), *c = range(k.c, kCols, 1);
    const UOp *v = k.op(Op::MUL, f, {exps(px, pm, r, c), k.op(Op::RECIPROCAL, f, {k.idx(ps, r)})});
    return k.sink({k.end(k.store(po, k.lin(r, kCols, c), v), {r, c})});
  }
  const UOp *linear(const UOp *maxK) {
    return k.linear({k.call(maxK, {m, x}), k.call(sumKernel(), {s, x, m}), k.call(normalizeKernel(), {out, x, m, s})});
  }
};

void fillRows(float *x) {
  for (int64_t i = 0; i < kRows * kCols; ++i) x[i] = float((i * 37) % 101) / 17.0f - 3.0f;
}

// Runs `linear` under `opts` and returns out (slot 4).
std::vector<float> runSoftmax(const UOp *linear, const CodegenOptions &opts) {
  Run run(linear, opts);
  fillRows(run.at<float>(1));
  run.go();
  const float *o = run.at<float>(4);
  return std::vector<float>(o, o + kRows * kCols);
}

// The tests' buffers are small: every size of shared buffers is fused.
KernelOptions anySize() {
  KernelOptions o;
  o.fuseRowsMinBytes = 0;
  return o;
}
CodegenOptions anySize(CodegenOptions o) {
  o.kernel.fuseRowsMinBytes = 0;
  return o;
}

std::vector<codegen::RowFusionGroup> fusedGroups(const UOp *linear, const KernelOptions &opts = anySize()) {
  auto plan = planLinear(linear);
  REQUIRE(plan.ok());
  std::vector<codegen::RowFusionGroup> groups;
  (void)codegen::fuseRowKernels(*plan, opts, &groups);
  return groups;
}

} // namespace

TEST_CASE("row fusion: softmax's three kernels run as one, the exp stored once, with the same bits") {
  Softmax sm;
  const UOp *lin = sm.linear(sm.maxKernel());
  std::vector<codegen::RowFusionGroup> groups = fusedGroups(lin);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].firstCall == 0);
  CHECK(groups[0].calls == 3);
  CHECK(groups[0].rows == kRows);
  CHECK(groups[0].sharedValues == 1);

  auto plan = planLinear(lin);
  SchedulePlan fused = codegen::fuseRowKernels(*plan, anySize());
  REQUIRE(fused.calls.size() == 1);
  CHECK(fused.kernels.size() == 1);
  CHECK(fused.buffers.size() == plan->buffers.size());
  CHECK(fused.calls[0].args.size() == 4); // out, x, m, s: each buffer once, the last kernel's first
  CHECK(fused.calls[0].args[0].buffer == plan->calls[2].args[0].buffer);
  // Below the bytes they must share (1 MiB by default), they stay three kernels.
  CHECK(fusedGroups(lin, KernelOptions{}).empty());

  // Under strict fp every kernel sums in tinygrad's order, fused or not: the same bits.
  CodegenOptions strict, strictUnfused;
  strict.kernel.strictFP = strictUnfused.kernel.strictFP = true;
  strictUnfused.kernel.fuseRows = false;
  std::vector<float> a = runSoftmax(lin, anySize(strict)), b = runSoftmax(lin, strictUnfused);
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);

  // The default build (threads, reassociated sums) against a double reference.
  std::vector<float> fast = runSoftmax(lin, anySize(CodegenOptions{}));
  std::vector<float> x(size_t(kRows * kCols));
  fillRows(x.data());
  double worst = 0;
  for (int64_t r = 0; r < kRows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < kCols; ++c) mx = std::max(mx, double(x[size_t(r * kCols + c)]));
    for (int64_t c = 0; c < kCols; ++c) sum += std::exp(double(x[size_t(r * kCols + c)]) - mx);
    for (int64_t c = 0; c < kCols; ++c) {
      double want = std::exp(double(x[size_t(r * kCols + c)]) - mx) / sum;
      worst = std::max(worst, std::abs(double(fast[size_t(r * kCols + c)]) - want) / want);
    }
  }
  CHECK(worst < 1e-5);
}

TEST_CASE("row fusion: a kernel that reads another row of what an earlier one wrote is not fused") {
  Softmax sm;
  // m stored in reverse row order: row r of the later kernels reads what row kRows-1-r writes.
  const UOp *r = range(sm.k.c, kRows, 0);
  const UOp *reversed = sm.k.op(Op::ADD, dtypes::WeakInt, {sm.k.op(Op::MUL, dtypes::WeakInt, {r, sm.k.ci(-1)}), sm.k.ci(kRows - 1)});
  const UOp *maxK = sm.k.sink({sm.k.end(sm.k.store(sm.k.p(0, f, kRows), reversed,
                                                   sm.k.reduce(Op::MAX, sm.k.idx(sm.k.p(1, f, kRows * kCols),
                                                                                 sm.k.lin(r, kCols, range(sm.k.c, kCols, 1, "REDUCE"))),
                                                               {range(sm.k.c, kCols, 1, "REDUCE")})),
                                      {r})});
  std::vector<codegen::RowFusionGroup> groups = fusedGroups(sm.linear(maxK));
  // The sum and the normalization still read and write only their own rows.
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].firstCall == 1);
  CHECK(groups[0].calls == 2);
}

TEST_CASE("row fusion: a matmul's rows are not fused with the kernel that writes its operand") {
  KB k;
  constexpr int64_t n = 32;
  const UOp *x = buffer(k.c, 1, f, kRows * kCols), *y = buffer(k.c, 2, f, kRows * kCols);
  const UOp *w = buffer(k.c, 3, f, kCols * n), *out = buffer(k.c, 4, f, kRows * n);
  const UOp *r = range(k.c, kRows, 0), *c = range(k.c, kCols, 1);
  const UOp *scale = k.sink({k.end(k.store(k.p(0, f, kRows * kCols), k.lin(r, kCols, c),
                                           k.op(Op::MUL, f, {k.idx(k.p(1, f, kRows * kCols), k.lin(r, kCols, c)), k.cf(2.0)})),
                                   {r, c})});
  const UOp *j = range(k.c, n, 1), *red = range(k.c, kCols, 2, "REDUCE");
  const UOp *dot = k.op(Op::MUL, f, {k.idx(k.p(1, f, kRows * kCols), k.lin(r, kCols, red)), k.idx(k.p(2, f, kCols * n), k.lin(red, n, j))});
  const UOp *mm = k.sink({k.end(k.store(k.p(0, f, kRows * n), k.lin(r, n, j), k.reduce(Op::ADD, dot, {red})), {r, j})});
  CHECK(fusedGroups(k.linear({k.call(scale, {y, x}), k.call(mm, {out, y, w})})).empty());
}

TEST_CASE("row fusion: a buffer read before a later kernel writes it is not fused; --disable-opt=fuse-rows keeps every call") {
  KB k;
  const UOp *a = buffer(k.c, 1, f, kRows * kCols), *b = buffer(k.c, 2, f, kRows * kCols), *c3 = buffer(k.c, 3, f, kRows * kCols);
  const UOp *r = range(k.c, kRows, 0), *c = range(k.c, kCols, 1);
  const UOp *pa = k.p(0, f, kRows * kCols), *pb = k.p(1, f, kRows * kCols);
  const UOp *twice = k.sink({k.end(k.store(pa, k.lin(r, kCols, c), k.op(Op::MUL, f, {k.idx(pb, k.lin(r, kCols, c)), k.cf(2.0)})), {r, c})});
  // b = 2a, then c = 2b: b's rows are read after they are written.
  const UOp *chain = k.linear({k.call(twice, {b, a}), k.call(twice, {c3, b})});
  CHECK(fusedGroups(chain).size() == 1);
  // b = 2a, then a = 2b: the first kernel reads a before the second writes it.
  const UOp *war = k.linear({k.call(twice, {b, a}), k.call(twice, {a, b})});
  CHECK(fusedGroups(war).empty());
  auto plan = planLinear(chain);
  KernelOptions off = anySize();
  off.fuseRows = false;
  CHECK(codegen::fuseRowKernels(*plan, off).calls.size() == 2);
  // The fused chain computes what the two kernels do.
  Run run(chain, anySize(CodegenOptions{}));
  for (int64_t i = 0; i < kRows * kCols; ++i) run.at<float>(1)[i] = float(i % 13) - 6.0f;
  run.go();
  for (int64_t i = 0; i < kRows * kCols; ++i) CHECK(run.at<float>(3)[i] == 4.0f * (float(i % 13) - 6.0f));
}
