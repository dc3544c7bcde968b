//===- KernelCases.cpp - the kernel graphs perf_bench owns ---------------===//
//
// Tensor graphs built with the node builders of Schedule/Sugar.h and the
// arithmetic of IR/UOpBuilder.h, in the forms tinygrad's frontend produces:
// subtraction as ADD of MUL -1, division as MUL by RECIPROCAL, exp as EXP2 of
// x/ln2, reductions over an inner axis as PERMUTE then REDUCE of the first
// axes, matmul as broadcast MUL then REDUCE over the contraction axis.
//
//===----------------------------------------------------------------------===//
#include "KernelCases.h"

#include "IR/UOpBuilder.h"
#include "Schedule/Sugar.h"

#include <cmath>

namespace tgc::bench {

namespace {

using rangeify::IShape;
using rangeify::shapeOf;

/// Builds one graph: hands out buffer slots and generated inputs.
class TensorBuilder {
public:
  explicit TensorBuilder(Context &ctx) : ctx_(ctx) {}

  /// arange(n) as int32, the way tinygrad builds it (as examples/mlp.tgc
  /// spells out): a row of n ones padded by n-1 zeros in front, tiled n+1
  /// times with stride 2n-1 and cut to n rows of 2n, so row i holds ones from
  /// column n-1-i on; the column sums are 1..n, minus one.
  UOpRef arange(int64_t n) {
    const UOp *one = rangeify::reshape(rangeify::reshape(ctx_.constInt(1, dtypes::Int32), {1}), {});
    const UOp *ones = rangeify::expandMop(one, {n});
    const UOp *padded = rangeify::mk(Op::PAD, {ones, rangeify::shapeArg(ctx_, {n - 1}), rangeify::shapeArg(ctx_, {2 * n - 1})});
    const UOp *tiled = rangeify::reshape(rangeify::expandMop(padded, {n + 1}), {(n + 1) * (2 * n - 1)});
    const UOp *rows = rangeify::reshape(rangeify::shrink(tiled, {{0, 2 * n * n}}), {n, 2 * n});
    const UOp *window = rangeify::shrink(rows, {{0, n}, {0, n}});
    return UOpRef(reduce(window, "ADD", 1)) + (-1);
  }

  /// A float32 input of `shape` in its own buffer: ((i*mul + add) % p) / p - 0.5.
  UOpRef input(const IShape &shape, int64_t mul, int64_t add, int64_t p) {
    int64_t n = rangeify::prod(shape);
    UOpRef v = ((arange(n) * mul + add) % p).cast(dtypes::Float32) * (1.0 / double(p)) + (-0.5);
    const UOp *buf = rangeify::newBuffer(ctx_, Value::string("CPU"), n, dtypes::Float32, nextSlot_++);
    const UOp *view = rangeify::reshape(buf, shape);
    return rangeify::after(view, {rangeify::store(view, rangeify::reshape(v, shape))});
  }

  /// REDUCE of the first n axes (graph-format's REDUCE).
  const UOp *reduce(const UOp *x, const char *op, int64_t n) {
    return rangeify::mk(Op::REDUCE, {x}, Value::tuple({Value::enumMember("Ops", op), Value::integer(n)}));
  }

  /// x reduced over its last axis, keeping it as size 1 (tinygrad's keepdim=True).
  UOpRef reduceLast(UOpRef x, const char *op) {
    IShape s = shapeOf(x);
    std::vector<int64_t> order{int64_t(s.size()) - 1};
    for (size_t i = 0; i + 1 < s.size(); ++i) order.push_back(int64_t(i));
    IShape kept = s;
    kept.back() = 1;
    return rangeify::reshape(reduce(rangeify::permute(x, order), op, 1), kept);
  }

  /// Every element reduced to a scalar.
  UOpRef reduceAll(UOpRef x, const char *op) { return reduce(rangeify::flatten(x), op, 1); }

  /// a [..., M, K] @ b [..., K, N] with the same leading (batch) axes.
  UOpRef matmul(UOpRef a, UOpRef b) {
    IShape sa = shapeOf(a), sb = shapeOf(b);
    size_t r = sa.size();
    int64_t m = sa[r - 2], k = sa[r - 1], n = sb[r - 1];
    IShape batch(sa.begin(), sa.end() - 2);
    auto with = [&](IShape tail) {
      IShape s = batch;
      s.insert(s.end(), tail.begin(), tail.end());
      return s;
    };
    std::vector<int64_t> swapLast, kFirst{int64_t(r)};
    for (size_t i = 0; i < r - 1; ++i) swapLast.push_back(int64_t(i));
    swapLast.push_back(int64_t(r));
    swapLast.push_back(int64_t(r - 1));
    for (size_t i = 0; i < r; ++i) kFirst.push_back(int64_t(i));
    UOpRef a4 = rangeify::reshape(a, with({m, 1, k}));
    UOpRef b4 = rangeify::permute(rangeify::reshape(b, with({1, k, n})), swapLast); // [..., 1, N, K]
    return reduce(rangeify::permute(a4 * b4, kFirst), "ADD", 1);
  }

  /// x with its last two axes swapped.
  UOpRef transposeLast(UOpRef x) {
    size_t r = shapeOf(x).size();
    std::vector<int64_t> order;
    for (size_t i = 0; i + 2 < r; ++i) order.push_back(int64_t(i));
    order.push_back(int64_t(r - 1));
    order.push_back(int64_t(r - 2));
    return rangeify::permute(x, order);
  }

  UOpRef exp(UOpRef x) { return (x * (1.0 / std::log(2.0))).exp2(); }

  UOpRef softmaxLast(UOpRef x) {
    UOpRef e = exp(x - reduceLast(x, "MAX"));
    return e * reduceLast(e, "ADD").reciprocal();
  }

  const UOp *sink(std::vector<const UOp *> outs) { return rangeify::sink(ctx_, outs); }

private:
  Context &ctx_;
  int64_t nextSlot_ = 1;
};

using Build = std::function<const UOp *(TensorBuilder &, bool smoke)>;

KernelCase make(std::string name, std::string group, std::string what, bool beyondCache, Build build) {
  return {std::move(name), std::move(group), std::move(what), beyondCache,
          [build = std::move(build)](Context &ctx, bool smoke) {
            TensorBuilder b(ctx);
            return build(b, smoke);
          }};
}

/// (x*1.5 + y).relu() * z, the perf suite's ew_chain, over n floats (4 arrays of 4n bytes).
KernelCase ewChain(const std::string &name, const std::string &where, int64_t n, bool beyondCache) {
  return make(name, "elementwise", "(x*1.5+y).relu()*z over " + std::to_string(n) + " float32 (" + where + ")",
              beyondCache, [n](TensorBuilder &b, bool smoke) {
                int64_t len = smoke ? 256 : n;
                UOpRef x = b.input({len}, 1, 0, 7), y = b.input({len}, 3, 1, 11), z = b.input({len}, 5, 2, 13);
                UOpRef t = x * 1.5 + y;
                return b.sink({(0.0 < t).where(t, 0.0) * z});
              });
}

std::vector<KernelCase> buildCases() {
  std::vector<KernelCase> cases;
  // 4 arrays of 4n bytes: 32 KiB (L1d 48 KiB/core), 1 MiB (L2 2 MiB/core),
  // 32 MiB (L3 105 MiB shared), 512 MiB (5x the L3).
  cases.push_back(ewChain("ew_chain_2k", "L1", 2048, false));
  cases.push_back(ewChain("ew_chain_64k", "L2", 65536, false));
  cases.push_back(ewChain("ew_chain_2m", "LLC", 2 << 20, false));
  cases.push_back(ewChain("ew_chain_32m", "far beyond the LLC", 32 << 20, true));

  cases.push_back(make("sum_64m", "reduce", "sum of 64M float32 to a scalar (256 MiB)", true, [](TensorBuilder &b, bool smoke) {
    return b.sink({b.reduceAll(b.input({smoke ? 4096 : 64 << 20}, 1, 0, 7), "ADD")});
  }));
  cases.push_back(make("max_64m", "reduce", "max of 64M float32 to a scalar (256 MiB)", true, [](TensorBuilder &b, bool smoke) {
    return b.sink({b.reduceAll(b.input({smoke ? 4096 : 64 << 20}, 3, 1, 1009), "MAX")});
  }));
  cases.push_back(make("softmax_8192x4096", "reduce", "softmax over the last axis of 8192x4096 float32 (128 MiB in, 128 out)",
                       true, [](TensorBuilder &b, bool smoke) {
                         return b.sink({b.softmaxLast(b.input(smoke ? IShape{16, 64} : IShape{8192, 4096}, 1, 0, 7))});
                       }));
  cases.push_back(make("layernorm_8192x4096", "reduce",
                       "layernorm over the last axis of 8192x4096 float32, affine weight and bias (128 MiB in, 128 out)",
                       true, [](TensorBuilder &b, bool smoke) {
                         IShape s = smoke ? IShape{16, 64} : IShape{8192, 4096};
                         UOpRef x = b.input(s, 1, 0, 7), w = b.input({s[1]}, 3, 1, 11), bias = b.input({s[1]}, 5, 2, 13);
                         double invC = 1.0 / double(s[1]);
                         UOpRef xc = x - b.reduceLast(x, "ADD") * invC;
                         UOpRef var = b.reduceLast(xc * xc, "ADD") * invC;
                         return b.sink({xc * (var + 1e-5).sqrt().reciprocal() * w + bias});
                       }));

  for (int64_t n : {64, 128, 256})
    cases.push_back(make("matmul_" + std::to_string(n), "matmul",
                         "float32 matmul " + std::to_string(n) + "^3", false, [n](TensorBuilder &b, bool smoke) {
                           int64_t s = smoke ? 16 : n;
                           return b.sink({b.matmul(b.input({s, s}, 1, 0, 7), b.input({s, s}, 3, 1, 11))});
                         }));
  cases.push_back(make("matmul_4096x64x4096", "matmul", "skinny float32 matmul 4096x64 @ 64x4096 (64 MiB out)", true,
                       [](TensorBuilder &b, bool smoke) {
                         int64_t m = smoke ? 64 : 4096, k = smoke ? 8 : 64;
                         return b.sink({b.matmul(b.input({m, k}, 1, 0, 7), b.input({k, m}, 3, 1, 11))});
                       }));
  cases.push_back(make("bmm_16x256", "matmul", "batched float32 matmul 16 x (256x256 @ 256x256)", false,
                       [](TensorBuilder &b, bool smoke) {
                         int64_t bt = smoke ? 2 : 16, s = smoke ? 16 : 256;
                         return b.sink({b.matmul(b.input({bt, s, s}, 1, 0, 7), b.input({bt, s, s}, 3, 1, 11))});
                       }));
  cases.push_back(make("attention_8x512x64", "attention",
                       "softmax(Q K^T / sqrt(64)) V, 8 heads, 512 tokens, head dim 64, float32", false,
                       [](TensorBuilder &b, bool smoke) {
                         int64_t h = smoke ? 2 : 8, s = smoke ? 16 : 512, d = smoke ? 8 : 64;
                         UOpRef q = b.input({h, s, d}, 1, 0, 7), k = b.input({h, s, d}, 3, 1, 11), v = b.input({h, s, d}, 5, 2, 13);
                         UOpRef scores = b.matmul(q, b.transposeLast(k)) * (1.0 / std::sqrt(double(d)));
                         return b.sink({b.matmul(b.softmaxLast(scores), v)});
                       }));
  return cases;
}

} // namespace

const std::vector<KernelCase> &kernelCases() {
  static const std::vector<KernelCase> cases = buildCases();
  return cases;
}

Graph kernelCaseGraph(Context &ctx, const KernelCase &c, bool smoke) {
  Graph g;
  g.roots = {c.build(ctx, smoke)};
  g.rootNames = {"sink"};
  return g;
}

} // namespace tgc::bench
