//===- TransposedCopy.cpp - copies that transpose, as blocks of vector registers ===//
//
// See TransposedCopy.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/TransposedCopy.h"
#include "Codegen/Opt/GateVersioning.h"
#include "Codegen/Opt/ParallelLoop.h"

namespace tgc::codegen {

namespace {

// INDEX(buf, idx) without a gate.
bool plainIndex(const UOp *u) { return u->is(Op::INDEX) && u->numSrc() == 2 && !u->src(1)->is(Op::WHERE); }

// The copy of `end` transposed along its two innermost loops, or an empty one
// (end null) when `end` is no such copy.
TransposedCopy transposedCopy(const UOp *end, int64_t vectorBits, const UOp *threaded, AffineCoefficients &coef) {
  if (end->numSrc() < 3 || !end->src(0)->is(Op::STORE) || end->src(0)->numSrc() != 2) return {};
  const UOp *to = end->src(0)->src(0), *from = end->src(0)->src(1);
  if (!plainIndex(to) || !plainIndex(from) || to->dtype() != from->dtype() || to->src(0) == from->src(0)) return {};
  int64_t bits = int64_t(to->dtype().itemsize()) * 8;
  int64_t lanes = bits > 0 ? vectorBits / bits : 0;
  if (lanes < 4 || lanes > 16 || (lanes & (lanes - 1)) != 0) return {};
  const UOp *a = end->src(end->numSrc() - 2), *b = end->src(end->numSrc() - 1);
  for (const UOp *r : {a, b}) {
    std::optional<int64_t> n = tripCount(r);
    if (r == threaded || !n || *n % lanes != 0) return {};
  }
  // along: the load steps by one element, the store by at least a vector's
  // worth (so a block's vector stores do not overlap); across the other way.
  auto steps = [&](const UOp *along, const UOp *across) -> TransposedCopy {
    std::optional<int64_t> loadAlong = coef(from->src(1), along), loadAcross = coef(from->src(1), across);
    std::optional<int64_t> storeAlong = coef(to->src(1), along), storeAcross = coef(to->src(1), across);
    if (loadAlong != 1 || storeAcross != 1 || !loadAcross || !storeAlong || *loadAcross < lanes || *storeAlong < lanes)
      return {};
    return {end, along, across, lanes, *loadAcross, *storeAlong};
  };
  TransposedCopy t = steps(a, b);
  return t.end ? t : steps(b, a);
}

} // namespace

std::vector<TransposedCopy> transposedCopies(const UOp *sink, int64_t vectorBits, const UOp *threaded,
                                             const KernelOptions &opts) {
  std::vector<TransposedCopy> out;
  if (!opts.transposeCopies || vectorBits <= 0) return out;
  AffineCoefficients coef;
  for (const UOp *u : toposort(sink))
    if (u->is(Op::END))
      if (TransposedCopy t = transposedCopy(u, vectorBits, threaded, coef); t.end) out.push_back(t);
  return out;
}

} // namespace tgc::codegen
