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

#include <algorithm>
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
    int64_t n = rangeify::prod(shape).value; // (static shapes: a bench case has no Variables)
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
    int64_t m = sa[r - 2].value, k = sa[r - 1].value, n = sb[r - 1].value;
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

// ---- brute-force references, in double, from the generator formula ----

using Vec = std::vector<double>;

Vec genRef(int64_t n, int64_t mul, int64_t add, int64_t p) {
  Vec v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = double((i * mul + add) % p) / double(p) - 0.5;
  return v;
}

/// rows x cols, row-wise softmax.
Vec softmaxRef(const Vec &x, int64_t rows, int64_t cols) {
  Vec out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = &x[size_t(r * cols)];
    double m = *std::max_element(row, row + cols), sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(row[c] - m);
    for (int64_t c = 0; c < cols; ++c) out[size_t(r * cols + c)] = std::exp(row[c] - m) / sum;
  }
  return out;
}

/// batch x (m x k @ k x n), row-major.
Vec matmulRef(const Vec &a, const Vec &b, int64_t batch, int64_t m, int64_t k, int64_t n) {
  Vec out(size_t(batch * m * n), 0.0);
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t r = 0; r < k; ++r) acc += a[size_t((t * m + i) * k + r)] * b[size_t((t * k + r) * n + j)];
        out[size_t((t * m + i) * n + j)] = acc;
      }
  return out;
}

/// batch x (rows x cols) -> batch x (cols x rows).
Vec transposeRef(const Vec &x, int64_t batch, int64_t rows, int64_t cols) {
  Vec out(x.size());
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) out[size_t((t * cols + j) * rows + i)] = x[size_t((t * rows + i) * cols + j)];
  return out;
}

double checksumRef(const Vec &v) {
  double s = 0;
  for (size_t i = 0; i < v.size(); ++i) s += v[i] * double(1 + i % 5);
  return s;
}

using Sizes = std::vector<int64_t>;
using Build = std::function<const UOp *(TensorBuilder &, const Sizes &)>;
using Reference = std::function<Vec(const Sizes &)>;

KernelCase make(std::string name, std::string group, std::string what, bool beyondCache, Sizes full, Sizes smoke,
                Build build, Reference reference) {
  KernelCase c{std::move(name), std::move(group), std::move(what), beyondCache, std::move(full), std::move(smoke), {}, {}};
  c.build = [build = std::move(build)](Context &ctx, const Sizes &s) {
    TensorBuilder b(ctx);
    return build(b, s);
  };
  c.reference = [reference = std::move(reference)](const Sizes &s) { return checksumRef(reference(s)); };
  return c;
}

/// (x*1.5 + y).relu() * z, the perf suite's ew_chain, over n floats (4 arrays of 4n bytes).
KernelCase ewChain(const std::string &name, const std::string &where, int64_t n, bool beyondCache) {
  return make(
      name, "elementwise", "(x*1.5+y).relu()*z over " + std::to_string(n) + " float32 (" + where + ")", beyondCache, {n},
      {256},
      [](TensorBuilder &b, const Sizes &s) {
        UOpRef x = b.input({s[0]}, 1, 0, 7), y = b.input({s[0]}, 3, 1, 11), z = b.input({s[0]}, 5, 2, 13);
        UOpRef t = x * 1.5 + y;
        return b.sink({(0.0 < t).where(t, 0.0) * z});
      },
      [](const Sizes &s) {
        Vec x = genRef(s[0], 1, 0, 7), y = genRef(s[0], 3, 1, 11), z = genRef(s[0], 5, 2, 13), out(x.size());
        for (size_t i = 0; i < x.size(); ++i) out[i] = std::max(x[i] * 1.5 + y[i], 0.0) * z[i];
        return out;
      });
}

/// a [batch..., m, k] @ b [batch..., k, n]; sizes {batch, m, k, n}, batch 0 = no batch axis.
KernelCase matmulCase(std::string name, std::string what, bool beyondCache, Sizes full, Sizes smoke) {
  auto shape = [](const Sizes &s, int64_t rows, int64_t cols) { return s[0] ? IShape{s[0], rows, cols} : IShape{rows, cols}; };
  return make(
      std::move(name), "matmul", std::move(what), beyondCache, std::move(full), std::move(smoke),
      [shape](TensorBuilder &b, const Sizes &s) {
        return b.sink({b.matmul(b.input(shape(s, s[1], s[2]), 1, 0, 7), b.input(shape(s, s[2], s[3]), 3, 1, 11))});
      },
      [](const Sizes &s) {
        int64_t batch = std::max<int64_t>(s[0], 1);
        return matmulRef(genRef(batch * s[1] * s[2], 1, 0, 7), genRef(batch * s[2] * s[3], 3, 1, 11), batch, s[1], s[2], s[3]);
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

  cases.push_back(make(
      "sum_64m", "reduce", "sum of 64M float32 to a scalar (256 MiB)", true, {64 << 20}, {4096},
      [](TensorBuilder &b, const Sizes &s) { return b.sink({b.reduceAll(b.input({s[0]}, 1, 0, 7), "ADD")}); },
      [](const Sizes &s) {
        Vec x = genRef(s[0], 1, 0, 7);
        double sum = 0;
        for (double v : x) sum += v;
        return Vec{sum};
      }));
  cases.push_back(make(
      "max_64m", "reduce", "max of 64M float32 to a scalar (256 MiB)", true, {64 << 20}, {4096},
      [](TensorBuilder &b, const Sizes &s) { return b.sink({b.reduceAll(b.input({s[0]}, 3, 1, 1009), "MAX")}); },
      [](const Sizes &s) {
        Vec x = genRef(s[0], 3, 1, 1009);
        return Vec{*std::max_element(x.begin(), x.end())};
      }));
  cases.push_back(make(
      "softmax_8192x4096", "reduce", "softmax over the last axis of 8192x4096 float32 (128 MiB in, 128 out)", true,
      {8192, 4096}, {16, 64},
      [](TensorBuilder &b, const Sizes &s) { return b.sink({b.softmaxLast(b.input({s[0], s[1]}, 1, 0, 7))}); },
      [](const Sizes &s) { return softmaxRef(genRef(s[0] * s[1], 1, 0, 7), s[0], s[1]); }));
  cases.push_back(make(
      "layernorm_8192x4096", "reduce",
      "layernorm over the last axis of 8192x4096 float32, affine weight and bias (128 MiB in, 128 out)", true,
      {8192, 4096}, {16, 64},
      [](TensorBuilder &b, const Sizes &s) {
        UOpRef x = b.input({s[0], s[1]}, 1, 0, 7), w = b.input({s[1]}, 3, 1, 11), bias = b.input({s[1]}, 5, 2, 13);
        double invC = 1.0 / double(s[1]);
        UOpRef xc = x - b.reduceLast(x, "ADD") * invC;
        UOpRef var = b.reduceLast(xc * xc, "ADD") * invC;
        return b.sink({xc * (var + 1e-5).sqrt().reciprocal() * w + bias});
      },
      [](const Sizes &s) {
        int64_t rows = s[0], cols = s[1];
        Vec x = genRef(rows * cols, 1, 0, 7), w = genRef(cols, 3, 1, 11), bias = genRef(cols, 5, 2, 13), out(x.size());
        for (int64_t r = 0; r < rows; ++r) {
          double mean = 0, var = 0;
          for (int64_t c = 0; c < cols; ++c) mean += x[size_t(r * cols + c)] / double(cols);
          for (int64_t c = 0; c < cols; ++c) var += std::pow(x[size_t(r * cols + c)] - mean, 2) / double(cols);
          for (int64_t c = 0; c < cols; ++c)
            out[size_t(r * cols + c)] = (x[size_t(r * cols + c)] - mean) / std::sqrt(var + 1e-5) * w[size_t(c)] + bias[size_t(c)];
        }
        return out;
      }));

  for (int64_t n : {64, 128, 256})
    cases.push_back(matmulCase("matmul_" + std::to_string(n), "float32 matmul " + std::to_string(n) + "^3", false,
                               {0, n, n, n}, {0, 16, 16, 16}));
  cases.push_back(matmulCase("matmul_4096x64x4096", "skinny float32 matmul 4096x64 @ 64x4096 (64 MiB out)", true,
                             {0, 4096, 64, 4096}, {0, 64, 8, 64}));
  cases.push_back(matmulCase("bmm_16x256", "batched float32 matmul 16 x (256x256 @ 256x256)", false, {16, 256, 256, 256},
                             {2, 16, 16, 16}));
  cases.push_back(make(
      "attention_8x512x64", "attention", "softmax(Q K^T / sqrt(64)) V, 8 heads, 512 tokens, head dim 64, float32",
      false, {8, 512, 64}, {2, 16, 8},
      [](TensorBuilder &b, const Sizes &s) {
        int64_t h = s[0], t = s[1], d = s[2];
        UOpRef q = b.input({h, t, d}, 1, 0, 7), k = b.input({h, t, d}, 3, 1, 11), v = b.input({h, t, d}, 5, 2, 13);
        UOpRef scores = b.matmul(q, b.transposeLast(k)) * (1.0 / std::sqrt(double(d)));
        return b.sink({b.matmul(b.softmaxLast(scores), v)});
      },
      [](const Sizes &s) {
        int64_t h = s[0], t = s[1], d = s[2];
        Vec q = genRef(h * t * d, 1, 0, 7), k = genRef(h * t * d, 3, 1, 11), v = genRef(h * t * d, 5, 2, 13);
        Vec scores = matmulRef(q, transposeRef(k, h, t, d), h, t, d, t);
        for (double &x : scores) x /= std::sqrt(double(d));
        return matmulRef(softmaxRef(scores, h * t, t), v, h, t, t, d);
      }));
  return cases;
}

} // namespace

const std::vector<KernelCase> &kernelCases() {
  static const std::vector<KernelCase> cases = buildCases();
  return cases;
}

double outputChecksum(const float *out, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += double(out[i]) * double(1 + i % 5);
  return s;
}

Graph kernelCaseGraph(Context &ctx, const KernelCase &c, bool smoke) {
  Graph g;
  g.roots = {c.build(ctx, smoke ? c.smokeSizes : c.sizes)};
  g.rootNames = {"sink"};
  return g;
}

} // namespace tgc::bench
