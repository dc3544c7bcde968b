//===- TransposeToMLIR.cpp - a transposing copy as blocks of vector registers ===//
//
// The lowering of a copy nest the kernel's decisions name (TransposedCopy.h):
// its two innermost loops step a vector's worth of lanes L at a time; each
// step loads L vectors along the read loop (one per element of the write
// loop), transposes them in registers and stores L vectors along the write
// loop. The transpose swaps the off-diagonal h x h blocks of every 2h x 2h
// block, for h = L/2 down to 1: one two-input shuffle per row and stage.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Lower/KernelLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace tgc::codegen::detail {

using namespace mlir;
using mlir::Value; // not tgc::Value

namespace {

// The shuffle mask of one stage's output row: the lower row (i % 2h < h)
// takes the first h of every 2h columns of rows i and i + h, the upper row
// the second h of each ([0, L): the first operand's lanes, [L, 2L): the second's).
std::vector<int32_t> blockSwapMask(int64_t lanes, int64_t h, bool upper) {
  std::vector<int32_t> mask;
  for (int64_t c = 0; c < lanes; ++c) {
    int64_t base = c - c % (2 * h), off = c % (2 * h);
    int64_t lane = off < h ? base + off + (upper ? h : 0) : lanes + base + off - h + (upper ? h : 0);
    mask.push_back(int32_t(lane));
  }
  return mask;
}

// rows[r][c] -> rows[c][r] for L vectors of L lanes.
void transposeRegisters(OpBuilder &b, mlir::Location loc, std::vector<Value> &rows) {
  const int64_t lanes = int64_t(rows.size());
  for (int64_t h = lanes / 2; h >= 1; h /= 2) {
    std::vector<int32_t> lower = blockSwapMask(lanes, h, false), upper = blockSwapMask(lanes, h, true);
    std::vector<Value> next(rows.size());
    for (int64_t i = 0; i < lanes; ++i) {
      if (i % (2 * h) >= h) continue;
      next[size_t(i)] = LLVM::ShuffleVectorOp::create(b, loc, rows[size_t(i)], rows[size_t(i + h)], lower);
      next[size_t(i + h)] = LLVM::ShuffleVectorOp::create(b, loc, rows[size_t(i)], rows[size_t(i + h)], upper);
    }
    rows = std::move(next);
  }
}

} // namespace

void KernelLowering::transposedCopy(const TransposedCopy &t) {
  const UOp *end = t.end, *to = end->src(0)->src(0), *from = end->src(0)->src(1);
  // The innermost two loops (along and across) step by L: each iteration is one block.
  size_t opened = scopes_.size();
  for (size_t i = 1; i < end->numSrc(); ++i) {
    const UOp *r = end->src(i);
    openLoop(r, {}, r == t.along || r == t.across ? t.lanes : 1);
  }
  mlir::Value first = indexValue(from->src(1)), firstOut = indexValue(to->src(1));
  mlir::Value src = param(from->src(0)), dst = param(to->src(0));
  if (!failed()) {
    setInsertion(unsigned(scopes_.size() - 1));
    DType dt = to->dtype();
    auto vec = VectorType::get({t.lanes}, memType(b_.getContext(), dt));
    unsigned align = unsigned(dt.itemsize());
    auto at = [&](mlir::Value base, mlir::Value start, int64_t offset) {
      mlir::Value idx = offset ? mlir::Value(arith::AddIOp::create(b_, loc_, start, i64(offset))) : start;
      return address(base, idx, dt);
    };
    std::vector<mlir::Value> rows;
    for (int64_t r = 0; r < t.lanes; ++r) // element r of the across loop: L elements along
      rows.push_back(LLVM::LoadOp::create(b_, loc_, vec, at(src, first, r * t.loadStride), align));
    transposeRegisters(b_, loc_, rows);
    for (int64_t c = 0; c < t.lanes; ++c) // element c of the along loop: L elements across
      LLVM::StoreOp::create(b_, loc_, rows[size_t(c)], at(dst, firstOut, c * t.storeStride), align);
  }
  while (scopes_.size() > opened) closeLoop();
}

} // namespace tgc::codegen::detail
