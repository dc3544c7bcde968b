//===- VariableKernelTest.cpp - kernels over tinygrad Variables, every optimization -===//
//
// Loops whose trip counts or offsets are variables (tinygrad's Variable: a
// symbolic batch, a reduction over x[:n], a KV-cache row at a moving
// position), each compiled once per kernel optimization config
// (KernelBuild.h) and run at several values of its variable, the minimum and
// maximum among them. Every run must compute the double-precision reference
// and leave every element outside the live region as it was: buffers are
// sized for the maximum, so a loop that ran past its variable would write
// there. Also: the plan's variables and the kernels' arguments, values out of
// range refused, a variable's trip count on threads.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Exec/CompiledLinear.h" // (also marks the file as a code-generator test for test/unit/CMakeLists.txt)
#include "Codegen/Lower/KernelToMLIR.h"
#include "KernelBuild.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

using namespace tgc;
using namespace tgc::testing;

namespace {

constexpr float kUntouched = 1234.5f; // the output's elements before a run

/// One element of the expected output: the value and the magnitude bound of
/// its terms (checkClose), or untouched (NaN value).
struct Expect {
  double value = NAN, bound = 0;
};

struct VarCase {
  const char *name;
  const UOp *linear;
  std::vector<std::pair<int64_t, int64_t>> inputs; ///< (slot, elements), filled with testInput(i, slot)
  int64_t outSlot = 0, outElements = 0;
  std::vector<int64_t> values;                     ///< the variable's values to run at
  std::function<Expect(int64_t v, int64_t e)> expect;
};

double in(int64_t slot, int64_t i) { return double(testInput(i, slot)); }

/// out[i, j] = sum_k x[i, k] * w[k, j] over i < bs: a matmul over a symbolic batch; with
/// `transposed`, w[j, k] (nn.Linear: x @ W.T).
VarCase batchMatmul(KB &k, bool transposed = false) {
  DType f = dtypes::Float32;
  const int64_t N = transposed ? 48 : 64, K = 64, M = 64;
  const UOp *bs = k.var("bs", 1, M);
  const UOp *out = k.p(0, f, M * N), *x = k.p(1, f, M * K), *w = k.p(2, f, K * N);
  const UOp *i = k.rangeTo(bs, 0), *j = k.rangeTo(k.ci(N), 1), *r = k.rangeTo(k.ci(K), 2, "REDUCE");
  const UOp *wi = transposed ? k.lin(j, K, r) : k.lin(r, N, j);
  const UOp *red = k.reduce(Op::ADD, k.op(Op::MUL, f, {k.idx(x, k.lin(i, K, r)), k.idx(w, wi)}), {r});
  const UOp *body = k.sink({k.end(k.store(out, k.lin(i, N, j), red), {i, j})});
  auto wAt = [=](int64_t q, int64_t jj) { return transposed ? jj * K + q : q * N + jj; };
  return {transposed ? "batch linear (x @ W.T)" : "batch matmul",
          k.linear({k.call(body, {buffer(k.c, 10, f, M * N), buffer(k.c, 11, f, M * K), buffer(k.c, 12, f, K * N)})}),
          {{11, M * K}, {12, K * N}}, 10, M * N,
          transposed ? std::vector<int64_t>{1, 2, 5, 33, 64} : std::vector<int64_t>{1, 3, 8, 17, 64},
          [=](int64_t v, int64_t e) {
            Expect x;
            int64_t ii = e / N, jj = e % N;
            if (ii >= v) return x;
            x.value = 0;
            for (int64_t q = 0; q < K; ++q) {
              double t = in(11, ii * K + q) * in(12, wAt(q, jj));
              x.value += t, x.bound += std::fabs(t);
            }
            return x;
          }};
}

/// ADD: out[j] = sum_{r < n} x[r, j], a column sum over x[:n] (strided along r); MAX: out[j] =
/// max_{r < n} x[j, r], a row maximum over x[:, :n] (contiguous and short: lane maxima).
VarCase prefixReduce(KB &k, Op op) {
  DType f = dtypes::Float32;
  const bool sum = op == Op::ADD;
  const int64_t J = sum ? 32 : 16, R = sum ? 128 : 64;
  const UOp *n = k.var("n", 1, R);
  const UOp *out = k.p(0, f, J), *x = k.p(1, f, R * J);
  const UOp *j = k.rangeTo(k.ci(J), 0), *r = k.rangeTo(n, 1, "REDUCE");
  const UOp *body = k.sink({k.end(k.store(out, j, k.reduce(op, k.idx(x, sum ? k.lin(r, J, j) : k.lin(j, R, r)), {r})), {j})});
  return {sum ? "sum over x[:n]" : "max over x[:, :n]",
          k.linear({k.call(body, {buffer(k.c, 10, f, J), buffer(k.c, 11, f, R * J)})}), {{11, R * J}}, 10, J,
          sum ? std::vector<int64_t>{1, 2, 7, 64, 100, 128} : std::vector<int64_t>{1, 3, 8, 16, 63, 64},
          [=](int64_t v, int64_t e) {
            Expect x{sum ? 0.0 : -INFINITY, 0};
            for (int64_t q = 0; q < v; ++q) {
              double t = in(11, sum ? q * J + e : e * R + q);
              x.value = sum ? x.value + t : std::max(x.value, t);
              x.bound += sum ? std::fabs(t) : 0;
            }
            if (!sum) x.bound = std::fabs(x.value);
            return x;
          }};
}

/// out[h] = sum_{t < sp + 1} exp2(x[h, t]): a softmax denominator over the positions so far (a
/// trip count that is an expression of the variable; a transcendental summand).
VarCase positionsSoFar(KB &k) {
  DType f = dtypes::Float32;
  const int64_t H = 16, T = 128;
  const UOp *sp = k.var("start_pos", 0, T - 1);
  const UOp *out = k.p(0, f, H), *x = k.p(1, f, H * T);
  const UOp *h = k.rangeTo(k.ci(H), 0), *t = k.rangeTo(k.op(Op::ADD, dtypes::WeakInt, {sp, k.ci(1)}), 1, "REDUCE");
  const UOp *term = k.op(Op::EXP2, f, {k.idx(x, k.lin(h, T, t))});
  const UOp *body = k.sink({k.end(k.store(out, h, k.reduce(Op::ADD, term, {t})), {h})});
  return {"exp2 sum over positions 0..start_pos", k.linear({k.call(body, {buffer(k.c, 10, f, H), buffer(k.c, 11, f, H * T)})}),
          {{11, H * T}}, 10, H, {0, 1, 8, 56, 127},
          [=](int64_t v, int64_t e) {
            Expect x{0, 0};
            for (int64_t q = 0; q <= v; ++q) x.value += std::exp2(in(11, e * T + q));
            x.bound = x.value;
            return x;
          }};
}

/// out[i, j] = exp2(x[i, j]) * 0.5 + 1 over i < bs: an elementwise kernel over a symbolic batch.
VarCase batchElementwise(KB &k) {
  DType f = dtypes::Float32;
  const int64_t J = 16, M = 64;
  const UOp *bs = k.var("bs", 1, M);
  const UOp *out = k.p(0, f, M * J), *x = k.p(1, f, M * J);
  const UOp *i = k.rangeTo(bs, 0), *j = k.rangeTo(k.ci(J), 1);
  const UOp *v = k.op(Op::ADD, f, {k.op(Op::MUL, f, {k.op(Op::EXP2, f, {k.idx(x, k.lin(i, J, j))}), k.cf(0.5)}), k.cf(1.0)});
  const UOp *body = k.sink({k.end(k.store(out, k.lin(i, J, j), v), {i, j})});
  return {"elementwise over a batch", k.linear({k.call(body, {buffer(k.c, 10, f, M * J), buffer(k.c, 11, f, M * J)})}),
          {{11, M * J}}, 10, M * J, {1, 5, 64},
          [=](int64_t v, int64_t e) {
            Expect x;
            if (e / J >= v) return x;
            x.value = std::exp2(in(11, e)) * 0.5 + 1;
            x.bound = x.value;
            return x;
          }};
}

/// cache[sp, i] = x[i]: a KV-cache write at a moving position (a symbolic offset, static shapes).
VarCase cacheWrite(KB &k) {
  DType f = dtypes::Float32;
  const int64_t D = 64, T = 64;
  const UOp *sp = k.var("start_pos", 0, T - 1);
  const UOp *cache = k.p(0, f, T * D), *x = k.p(1, f, D);
  const UOp *i = k.rangeTo(k.ci(D), 0);
  const UOp *at = k.op(Op::ADD, dtypes::WeakInt, {i, k.op(Op::MUL, dtypes::WeakInt, {sp, k.ci(D)})});
  const UOp *body = k.sink({k.end(k.store(cache, at, k.idx(x, i)), {i})});
  return {"cache row at start_pos", k.linear({k.call(body, {buffer(k.c, 10, f, T * D), buffer(k.c, 11, f, D)})}), {{11, D}}, 10,
          T * D, {0, 1, 40, 63},
          [=](int64_t v, int64_t e) {
            Expect x;
            if (e / D != v) return x;
            x.value = in(11, e % D);
            x.bound = std::fabs(x.value);
            return x;
          }};
}

/// Runs `c` under config `opts` at each of its values, from one compilation.
void checkCase(const VarCase &c, const char *config, const CodegenOptions &opts) {
  INFO(c.name << " (" << config << ")");
  Run run(c.linear, opts);
  REQUIRE(run.cs->plan().vars.size() == 1);
  for (int64_t v : c.values) {
    INFO("at " << run.cs->plan().vars[0].name << " = " << v);
    for (auto [slot, n] : c.inputs)
      for (int64_t e = 0; e < n; ++e) run.at<float>(slot)[e] = testInput(e, slot);
    float *out = run.at<float>(c.outSlot);
    for (int64_t e = 0; e < c.outElements; ++e) out[e] = kUntouched;
    int64_t value[] = {v};
    run.go(value);
    int bad = 0;
    for (int64_t e = 0; e < c.outElements && bad < 4; ++e) {
      Expect x = c.expect(v, e);
      bool ok = std::isnan(x.value) ? out[e] == kUntouched : std::fabs(double(out[e]) - x.value) <= 1e-5 * x.bound + 1e-6;
      if (!ok) ++bad;
      CHECK_MESSAGE(ok, "element " << e << ": " << out[e] << ", expected " << (std::isnan(x.value) ? "untouched" : "")
                                   << (std::isnan(x.value) ? double(kUntouched) : x.value));
    }
  }
}

std::vector<VarCase> allCases(KB &k) {
  return {batchMatmul(k), batchMatmul(k, /*transposed=*/true), prefixReduce(k, Op::ADD), prefixReduce(k, Op::MAX), positionsSoFar(k), batchElementwise(k), cacheWrite(k)};
}

} // namespace

TEST_CASE("variables: symbolic loops and offsets compute the reference at every value, under every optimization") {
  KB k;
  std::vector<VarCase> cases = allCases(k);
  for (const auto &[config, opts] : optimizationConfigs())
    for (const VarCase &c : cases) checkCase(c, config, opts);
}

TEST_CASE("variables: the plan's variables are the kernels' scalar arguments, by name") {
  KB k;
  VarCase a = batchMatmul(k), b = positionsSoFar(k);
  const UOp *linear = k.linear({a.linear->src(0), b.linear->src(0), a.linear->src(0)});
  auto plan = planLinear(linear);
  REQUIRE(plan);
  REQUIRE(plan->vars.size() == 2);
  CHECK(plan->vars[0].name == "bs");
  CHECK(plan->vars[0].min == 1);
  CHECK(plan->vars[0].max == 64);
  CHECK(plan->vars[1].name == "start_pos");
  CHECK(plan->vars[1].max == 127);
  REQUIRE(plan->kernels.size() == 2);
  CHECK(plan->kernels[0].vars == std::vector<int>{0});
  CHECK(plan->kernels[1].vars == std::vector<int>{1});
  CHECK(codegen::kernelVariables(a.linear->src(0)->src(0)) == std::vector<std::string>{"bs"});

  auto values = plan->bindVars({{"bs", 4}, {"start_pos", 0}});
  REQUIRE(values);
  CHECK(*values == std::vector<int64_t>{4, 0});
  auto low = plan->bindVars({{"bs", 0}, {"start_pos", 0}});
  REQUIRE_FALSE(low);
  CHECK(low.error().message.find("outside its range [1, 64]") != std::string::npos);
  auto unknown = plan->bindVars({{"bs", 4}, {"start_pos", 0}, {"batch", 2}});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("unknown variable 'batch'") != std::string::npos);
  auto missing = plan->bindVars({{"bs", 4}});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("no value for variable 'start_pos'") != std::string::npos);
}

TEST_CASE("variables: a value outside the range is refused before anything runs") {
  KB k;
  VarCase c = cacheWrite(k);
  Run run(c.linear);
  float *out = run.at<float>(c.outSlot);
  for (int64_t e = 0; e < c.outElements; ++e) out[e] = kUntouched;
  for (int64_t bad : {int64_t(-1), int64_t(64), int64_t(1) << 40}) {
    int64_t value[] = {bad};
    Status s = run.cs->run(run.bufs->pointers(), value);
    REQUIRE_FALSE(s);
    CHECK(s.error().message.find("outside its range [0, 63]") != std::string::npos);
  }
  Status none = run.cs->run(run.bufs->pointers());
  REQUIRE_FALSE(none);
  CHECK(none.error().message.find("1 expected") != std::string::npos);
  for (int64_t e = 0; e < c.outElements; ++e) REQUIRE(out[e] == kUntouched);
  // one kernel on its own: its arguments, then its variables' values
  for (int64_t e = 0; e < 64; ++e) run.at<float>(11)[e] = testInput(e, 11);
  int64_t at[] = {2};
  std::vector<void *> args{run.at<float>(10), run.at<float>(11)};
  REQUIRE(run.cs->runKernel(0, args, at).ok());
  CHECK(out[2 * 64 + 5] == testInput(5, 11));
  CHECK(out[3 * 64 + 5] == kUntouched);
  int64_t past[] = {64};
  CHECK_FALSE(run.cs->runKernel(0, args, past).ok());
}

TEST_CASE("variables: a loop to a variable runs on threads, its trip count passed to the pool") {
  KB k;
  VarCase c = batchMatmul(k);
  CodegenOptions o;
  o.kernel.threadMinWork = 0;
  o.kernel.tileMatmul = false;
  o.keepIR = true;
  Run run(c.linear, o);
  // the threaded kernel hands tgc_parallel_for its variable, not a literal
  CHECK(run.cs->mlirText().find("tgc_parallel_for") != std::string::npos);
  checkCase(c, "threads, untiled", o);
}
