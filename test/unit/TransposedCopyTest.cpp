// Which copy nests the lowering takes as transposed blocks of vector
// registers (Codegen/Opt/TransposedCopy.h). The values such copies produce
// are checked end to end by the tiled kernels that pack x @ W.T's operand
// (TiledKernelTest.cpp) and by the live tinygrad programs linear_packed and
// causal_attention.
#include "Codegen/Opt/TransposedCopy.h"
#include "KernelBuild.h"

using namespace tgc;
using namespace tgc::testing;

namespace {

// dst[(i * cols + j)] = src[j * rows + i] over END(..., outer, inner): with
// `transposing` false the copy keeps the layout (dst and src both along j).
struct Copy {
  KB k;
  const UOp *i = nullptr, *j = nullptr, *end = nullptr, *sink = nullptr;
  Copy(int64_t rows, int64_t cols, bool transposing = true, DType dt = dtypes::Float32) {
    const UOp *dst = k.p(0, dt, rows * cols), *src = k.p(1, dt, rows * cols);
    i = range(k.c, rows, 0, "LOOP"), j = range(k.c, cols, 1, "LOOP");
    const UOp *from = transposing ? k.lin(j, rows, i) : k.lin(i, cols, j);
    end = k.end(k.store(dst, k.lin(i, cols, j), k.idx(src, from)), {i, j});
    sink = k.sink({end});
  }
};

} // namespace

TEST_CASE("transposed copies: a copy reading along one loop and writing along the other, in 16-float blocks") {
  Copy c(64, 32);
  std::vector<codegen::TransposedCopy> found = codegen::transposedCopies(c.sink, 512, nullptr, {});
  REQUIRE(found.size() == 1);
  CHECK(found[0].end == c.end);
  CHECK(found[0].along == c.i);     // src steps by 1 along i
  CHECK(found[0].across == c.j);    // dst steps by 1 along j
  CHECK(found[0].lanes == 16);
  CHECK(found[0].loadStride == 64); // src between consecutive j
  CHECK(found[0].storeStride == 32); // dst between consecutive i
  // 256-bit vectors: blocks of 8; 16-bit elements at 512 bits: blocks of 32, more lanes than a block takes
  CHECK(codegen::transposedCopies(c.sink, 256, nullptr, {}).at(0).lanes == 8);
  CHECK(codegen::transposedCopies(Copy(64, 32, true, dtypes::Float16).sink, 512, nullptr, {}).empty());
}

TEST_CASE("transposed copies: none where the loops are no multiple of the lanes, the layout is kept, or it is off") {
  CHECK(codegen::transposedCopies(Copy(40, 32).sink, 512, nullptr, {}).empty()); // 40 % 16
  CHECK(codegen::transposedCopies(Copy(64, 32, false).sink, 512, nullptr, {}).empty());
  CHECK(codegen::transposedCopies(Copy(64, 32).sink, 0, nullptr, {}).empty()); // no vector width decided
  codegen::KernelOptions off;
  off.transposeCopies = false;
  CHECK(codegen::transposedCopies(Copy(64, 32).sink, 512, nullptr, off).empty());
  Copy threaded(64, 32);
  CHECK(codegen::transposedCopies(threaded.sink, 512, threaded.i, {}).empty()); // the thread pool's loop stays
}
