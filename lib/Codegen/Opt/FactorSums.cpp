//===- FactorSums.cpp - a sum's constant factors multiplied once, after it ===//
//
// See FactorSums.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/FactorSums.h"
#include "Codegen/Opt/ParallelLoop.h"

#include <algorithm>
#include <unordered_map>

namespace tgc::codegen {

namespace {

// The factors of a product tree of MULs of dtype `dt`, left to right.
void factorsOf(const UOp *u, DType dt, std::vector<const UOp *> &out) {
  if (u->is(Op::MUL) && u->numSrc() == 2 && u->dtype() == dt) {
    factorsOf(u->src(0), dt, out);
    factorsOf(u->src(1), dt, out);
  } else {
    out.push_back(u);
  }
}

const UOp *product(std::span<const UOp *const> factors, DType dt) {
  const UOp *p = factors.front();
  for (const UOp *f : factors.subspan(1)) p = p->context().get(Op::MUL, dt, {p, f});
  return p;
}

// MUL(REDUCE(variant factors), invariant factors), or null.
const UOp *factored(const UOp *sum) {
  std::vector<const UOp *> factors, inner, outer;
  factorsOf(sum->src(0), sum->dtype(), factors);
  for (const UOp *f : factors) {
    bool moves = false;
    for (const UOp *r : sum->src().subspan(1)) moves = moves || dependsOn(f, r);
    (moves ? inner : outer).push_back(f);
  }
  if (inner.empty() || outer.empty()) return nullptr;
  // (a sum of sums is left as it is: its inner REDUCE may be factored too)
  std::vector<const UOp *> summand = toposort(sum->src(0));
  if (std::any_of(summand.begin(), summand.end(), [](const UOp *n) { return n->is(Op::REDUCE); })) return nullptr;
  std::vector<const UOp *> src{product(inner, sum->dtype())};
  src.insert(src.end(), sum->src().begin() + 1, sum->src().end());
  Context &ctx = sum->context();
  const UOp *reduced = ctx.get(Op::REDUCE, sum->dtype(), src, sum->arg(), sum->tag());
  return ctx.get(Op::MUL, sum->dtype(), {reduced, product(outer, sum->dtype())});
}

} // namespace

bool isFloatSum(const UOp *u) {
  const tgc::Value &a = u->arg();
  return u->is(Op::REDUCE) && u->numSrc() >= 2 && u->dtype().isFloat() && a.isTuple() && a.size() == 2 &&
         a[0].isEnum("Ops") && a[0].str() == "ADD";
}

const UOp *factorSums(const UOp *sink, const KernelOptions &opts) {
  if (!opts.factorSums || opts.strictFP) return sink;
  std::unordered_map<const UOp *, const UOp *> replaced;
  for (const UOp *u : toposort(sink))
    if (isFloatSum(u))
      if (const UOp *f = factored(u)) replaced[u] = f;
  return replaced.empty() ? sink : substitute(sink, replaced);
}

} // namespace tgc::codegen
