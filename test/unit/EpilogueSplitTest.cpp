//===- EpilogueSplitTest.cpp - a reduction's epilogue in a loop of its own -===//
//
// nn.Linear with few rows and a transcendental activation,
// out[i, j] = exp2(dot(x[i, :], W[j, :]) * 0.125 + b[j]), compiled with and
// without lib/Codegen/EpilogueSplit and under the other configs, compared with
// a double-precision loop nest; and the kernels the rewrite must leave alone.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/EpilogueSplit.h" // (Codegen/: a code-generator test for test/unit/CMakeLists.txt)
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/ParallelLoop.h"
#include "KernelBuild.h"

#include <cmath>
#include <vector>

using namespace tgc;
using namespace tgc::testing;

namespace {

struct Linear {
  int64_t m, n, kk;
  bool twoReductions = false; ///< exp2 of (x . W[j]) * 0.125 - (x . W[j]) * (x . W[j]) / 1024 instead
};

const UOp *linearKernel(KB &k, const Linear &s) {
  DType f = dtypes::Float32;
  auto lin = [&](const UOp *x, int64_t stride, const UOp *y) {
    return k.op(Op::ADD, dtypes::WeakInt, {k.op(Op::MUL, dtypes::WeakInt, {x, k.ci(stride)}), y});
  };
  const UOp *out = k.p(0, f, s.m * s.n), *x = k.p(1, f, s.m * s.kk), *w = k.p(2, f, s.n * s.kk), *b = k.p(3, f, s.n);
  const UOp *i = range(k.c, s.m, 0, "LOOP"), *j = range(k.c, s.n, 1, "LOOP"), *r = range(k.c, s.kk, 2, "REDUCE");
  const UOp *prod = k.op(Op::MUL, f, {k.idx(x, lin(i, s.kk, r)), k.idx(w, lin(j, s.kk, r))});
  const UOp *dot = k.reduce(Op::ADD, prod, {r});
  const UOp *pre = k.op(Op::ADD, f, {k.op(Op::MUL, f, {dot, k.cf(0.125)}), k.idx(b, j)});
  if (s.twoReductions) {
    const UOp *r2 = range(k.c, s.kk, 3, "REDUCE");
    const UOp *sq = k.reduce(Op::ADD, k.op(Op::MUL, f, {k.idx(x, lin(i, s.kk, r2)), k.idx(w, lin(j, s.kk, r2))}), {r2});
    pre = k.op(Op::ADD, f, {pre, k.op(Op::MUL, f, {k.op(Op::MUL, f, {sq, sq}), k.cf(-1.0 / 1024)})});
  }
  return k.sink({k.end(k.store(out, lin(i, s.n, j), k.op(Op::EXP2, f, {pre})), {i, j})});
}

void checkLinear(const Linear &s) {
  INFO("linear " << s.m << "x" << s.kk << " by (" << s.n << "x" << s.kk << ")^T" << (s.twoReductions ? ", two reductions" : ""));
  std::vector<double> ref(size_t(s.m * s.n)), bound(size_t(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double dot = 0, mag = 0;
      for (int64_t r = 0; r < s.kk; ++r) {
        double v = double(testInput(i * s.kk + r, 1)) * double(testInput(j * s.kk + r, 2));
        dot += v, mag += std::fabs(v);
      }
      double pre = dot * 0.125 + double(testInput(j, 3)) - (s.twoReductions ? dot * dot / 1024 : 0.0);
      // exp2's derivative bounds the error the dot product's rounding passes on
      ref[size_t(i * s.n + j)] = std::exp2(pre), bound[size_t(i * s.n + j)] = std::exp2(pre) * (1 + mag);
    }
  for (const auto &[name, opts] : optimizationConfigs()) {
    CAPTURE(name);
    KB k;
    DType f = dtypes::Float32;
    const UOp *kern = linearKernel(k, s);
    Run run(k.linear({k.call(kern, {buffer(k.c, 10, f, s.m * s.n), buffer(k.c, 11, f, s.m * s.kk),
                                     buffer(k.c, 12, f, s.n * s.kk), buffer(k.c, 13, f, s.n)})}),
            opts);
    float *got = run.at<float>(10), *xs = run.at<float>(11), *ws = run.at<float>(12), *bs = run.at<float>(13);
    for (int64_t x = 0; x < s.m * s.kk; ++x) xs[x] = testInput(x, 1);
    for (int64_t x = 0; x < s.n * s.kk; ++x) ws[x] = testInput(x, 2);
    for (int64_t x = 0; x < s.n; ++x) bs[x] = testInput(x, 3);
    for (int64_t x = 0; x < s.m * s.n; ++x) got[x] = 1e30f; // every element must be written
    run.go();
    checkClose(got, ref, bound);
  }
}

} // namespace

TEST_CASE("split epilogue: nn.Linear with an exp2 activation gets a row of dot products, then the epilogue loop") {
  KB k;
  const UOp *kern = linearKernel(k, {16, 128, 64});
  const UOp *split = codegen::splitEpilogue(kern, codegen::KernelOptions{});
  REQUIRE(split != kern);
  // SINK(END(GROUP(END(row fill, j'), END(epilogue, j)), i))
  const UOp *outer = split->src(0);
  REQUIRE(outer->is(Op::END));
  REQUIRE(outer->numSrc() == 2);
  CHECK(codegen::tripCount(outer->src(1)) == 16);
  const UOp *group = outer->src(0);
  REQUIRE(group->is(Op::GROUP));
  REQUIRE(group->numSrc() == 2);
  CHECK(localBufferSizes(group->src(0)) == std::vector<int64_t>{128});
  CHECK(countOps(group->src(0), Op::EXP2) == 0);
  CHECK(countOps(group->src(1), Op::REDUCE) == 0);
  CHECK(countOps(group->src(1), Op::EXP2) == 1);
  // The outer loop still runs on threads.
  codegen::KernelOptions threaded;
  threaded.threadMinWork = 0;
  CHECK(codegen::parallelRange(split, threaded) == outer->src(1));
  CHECK(codegen::splitEpilogue(kern, codegen::KernelOptions::none()) == kern);
}

TEST_CASE("split epilogue: linear layers compute the same under every config") {
  checkLinear({16, 128, 64});
  checkLinear({5, 37, 19});           // widths no vector divides
  checkLinear({8, 96, 48, true});     // two reductions, each in a row of its own
}

TEST_CASE("split epilogue: kernels it must leave alone") {
  DType f = dtypes::Float32;
  auto lin = [](KB &k, const UOp *x, int64_t stride, const UOp *y) {
    return k.op(Op::ADD, dtypes::WeakInt, {k.op(Op::MUL, dtypes::WeakInt, {x, k.ci(stride)}), y});
  };
  KB k;
  const UOp *out = k.p(0, f, 16 * 32), *x = k.p(1, f, 16 * 8), *w = k.p(2, f, 32 * 8);
  const UOp *i = range(k.c, 16, 0, "LOOP"), *j = range(k.c, 32, 1, "LOOP"), *r = range(k.c, 8, 2, "REDUCE");
  const UOp *dot = k.reduce(Op::ADD, k.op(Op::MUL, f, {k.idx(x, lin(k, i, 8, r)), k.idx(w, lin(k, j, 8, r))}), {r});
  auto unchanged = [](const UOp *kern) { return codegen::splitEpilogue(kern, codegen::KernelOptions{}) == kern; };
  SUBCASE("no transcendental after the reduction") {
    CHECK(unchanged(k.sink({k.end(k.store(out, lin(k, i, 32, j), k.op(Op::MUL, f, {dot, k.cf(2.0)})), {i, j})})));
  }
  SUBCASE("the transcendental is inside the reduction") {
    const UOp *inside = k.reduce(Op::ADD, k.op(Op::EXP2, f, {k.idx(w, lin(k, j, 8, r))}), {r});
    CHECK(unchanged(k.sink({k.end(k.store(out, lin(k, i, 32, j), inside), {i, j})})));
  }
  SUBCASE("one output loop: no outer loop to fill the row in") {
    const UOp *dot1 = k.reduce(Op::ADD, k.op(Op::MUL, f, {k.idx(x, r), k.idx(w, lin(k, j, 8, r))}), {r});
    CHECK(unchanged(k.sink({k.end(k.store(out, j, k.op(Op::EXP2, f, {dot1})), {j})})));
  }
  SUBCASE("the reduction reads the buffer the kernel writes") {
    const UOp *self = k.reduce(Op::ADD, k.op(Op::MUL, f, {k.idx(out, lin(k, i, 32, r)), k.idx(w, lin(k, j, 8, r))}), {r});
    CHECK(unchanged(k.sink({k.end(k.store(out, lin(k, i, 32, j), k.op(Op::EXP2, f, {self})), {i, j})})));
  }
}

TEST_CASE("split epilogue: a tile of dot products stores its sums, then the epilogue nest evaluates exp2") {
  KB k;
  const UOp *kern = linearKernel(k, {16, 128, 64});
  codegen::MatmulTile tile;
  const UOp *split = codegen::splitTileEpilogue(kern, codegen::KernelOptions{}, {}, &tile);
  REQUIRE(split);
  CHECK(tile.alongReduction);
  CHECK(tile.rows * tile.columns == 16);
  // SINK(GROUP(END(the tile's stores into the sums, tile loops), END(epilogue, i, j)))
  REQUIRE(split->src(0)->is(Op::GROUP));
  const UOp *tiles = split->src(0)->src(0), *epilogue = split->src(0)->src(1);
  CHECK(localBufferSizes(tiles) == std::vector<int64_t>{16 * 128});
  CHECK(countOps(tiles, Op::REDUCE) == 16);
  CHECK(countOps(tiles, Op::EXP2) == 0);
  CHECK(countOps(epilogue, Op::REDUCE) == 0);
  CHECK(countOps(epilogue, Op::EXP2) == 1);
  // What codegen runs: the same, unless the kernel is big enough for threads.
  CHECK(codegen::tileKernel(kern, codegen::KernelOptions{}) == split);
  codegen::KernelOptions threaded;
  threaded.threadMinWork = 0;
  CHECK(codegen::tileKernel(kern, threaded) == codegen::tileMatmul(kern, threaded));
  CHECK(codegen::splitTileEpilogue(kern, codegen::KernelOptions::none()) == nullptr);
}

TEST_CASE("split epilogue: tiles it must leave alone") {
  auto untouched = [](const Linear &s) {
    KB k;
    return codegen::splitTileEpilogue(linearKernel(k, s), codegen::KernelOptions{}) == nullptr;
  };
  CHECK(untouched({5, 37, 19}));         // no tile of dot products
  CHECK(untouched({16, 128, 64, true})); // two reductions
  CHECK(untouched({256, 128, 64}));      // 256 rows: the panel is packed, a matmul tile
}
