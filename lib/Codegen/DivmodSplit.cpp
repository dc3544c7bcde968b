//===- DivmodSplit.cpp - an output loop split into quotient and remainder --===//
//
// See DivmodSplit.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/DivmodSplit.h"
#include "Codegen/GateVersioning.h"
#include "Codegen/MatmulTiling.h"
#include "Codegen/ParallelLoop.h"

#include "IR/Symbolic.h"

#include <set>
#include <unordered_map>

namespace tgc::codegen {

namespace {

// `root` with `map` substituted, its integer and boolean expressions
// (indices, gates) simplified where they meet the rest: the float arithmetic
// keeps tinygrad's exact form. Null when the simplifier fails.
const UOp *substituteSimplified(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map) {
  const UOp *split = substitute(root, map);
  std::unordered_map<const UOp *, const UOp *> simplified;
  auto intLike = [](const UOp *u) { return u->dtype().isInt() || u->dtype().isBool(); };
  for (const UOp *u : toposort(split)) {
    if (intLike(u) && !u->is(Op::INDEX)) continue;
    for (const UOp *s : u->src()) {
      if (!intLike(s) || s->is(Op::RANGE) || s->is(Op::CONST) || simplified.count(s)) continue;
      Result<const UOp *> x = simplify(s);
      if (!x) return nullptr;
      simplified[s] = *x;
    }
  }
  return substitute(split, simplified);
}

// `root` (a STORE, a REDUCE's summand) with j = outer * c + inner, simplified.
const UOp *splitRange(const UOp *root, const UOp *j, const UOp *outer, const UOp *inner, int64_t c) {
  Context &ctx = root->context();
  const UOp *at = ctx.get(Op::ADD, j->dtype(),
                          {ctx.get(Op::MUL, j->dtype(), {outer, ctx.get(Op::CONST, j->dtype(), {}, tgc::Value::integer(c))}), inner});
  return substituteSimplified(root, {{j, at}});
}

// The divisors c of j's trip count n (1 < c < n) that `root` divides j by
// (j // c or j % c), the widest first: more elements one step apart.
std::vector<int64_t> divmodDivisors(const UOp *root, const UOp *j, int64_t n) {
  std::set<int64_t> divisors;
  for (const UOp *u : toposort(root))
    if ((u->is(Op::FLOORDIV) || u->is(Op::FLOORMOD)) && u->src(0) == j && u->src(1)->is(Op::CONST) && u->src(1)->arg().isInt()) {
      int64_t c = u->src(1)->arg().getInt();
      if (c > 1 && c < n && n % c == 0) divisors.insert(c);
    }
  return {divisors.rbegin(), divisors.rend()};
}

} // namespace

const UOp *splitDivmod(const UOp *sink, const KernelOptions &opts) {
  if (!opts.splitDivmod || !isPlainLoopNest(sink)) return sink;
  const UOp *end = sink->src(0), *store = end->src(0);
  const UOp *j = end->src(end->numSrc() - 1);
  std::optional<int64_t> n = tripCount(j);
  if (!n || unitStrideAccesses(store, j, /*throughReduces=*/true).has_value()) return sink; // already affine along j
  for (int64_t c : divmodDivisors(store, j, *n)) {
    int64_t axis = maxAxisId(sink);
    const UOp *outer = newRangeLike(j, *n / c, ++axis), *inner = newRangeLike(j, c, ++axis);
    const UOp *split = splitRange(store, j, outer, inner, c);
    if (!split || unitStrideAccesses(split, inner, /*throughReduces=*/true) != true) continue;
    std::vector<const UOp *> src{split};
    src.insert(src.end(), end->src().begin() + 1, end->src().end() - 1);
    src.push_back(outer);
    src.push_back(inner);
    Context &ctx = sink->context();
    return ctx.get(Op::SINK, sink->dtype(), {ctx.get(Op::END, end->dtype(), src, end->arg())}, sink->arg(), sink->tag());
  }
  return sink;
}

const UOp *splitReduceDivmod(const UOp *sink, const KernelOptions &opts) {
  if (!opts.splitReduceDivmod) return sink;
  std::unordered_map<const UOp *, const UOp *> split;
  int64_t axis = maxAxisId(sink);
  for (const UOp *u : toposort(sink)) {
    if (!u->is(Op::REDUCE) || u->numSrc() != 2) continue;
    const UOp *k = u->src(1), *x = u->src(0);
    std::optional<int64_t> n = tripCount(k);
    if (!n || unitStrideAccesses(x, k).has_value()) continue; // affine along k (or another REDUCE inside)
    for (int64_t c : divmodDivisors(x, k, *n)) {
      const UOp *outer = newRangeLike(k, *n / c, axis + 1), *inner = newRangeLike(k, c, axis + 2);
      const UOp *summand = splitRange(x, k, outer, inner, c);
      if (!summand || unitStrideAccesses(summand, inner) != true) continue;
      axis += 2;
      // REDUCE(x, k // c, k % c) runs k in its order: the same sums, even under strict fp.
      split[u] = sink->context().get(Op::REDUCE, u->dtype(), {summand, outer, inner}, u->arg(), u->tag());
      break;
    }
  }
  return split.empty() ? sink : substitute(sink, split);
}

const UOp *mergeReduceRanges(const UOp *sink, const KernelOptions &opts) {
  if (!opts.mergeReduceRanges) return sink;
  std::unordered_map<const UOp *, const UOp *> merged;
  int64_t axis = maxAxisId(sink);
  for (const UOp *u : toposort(sink)) {
    if (!u->is(Op::REDUCE) || u->numSrc() < 3) continue;
    // The innermost two ranges a (outer) and b become f = a * |b| + b while the
    // summand then reads memory along f with no division by |b| left.
    std::vector<const UOp *> ranges(u->src().begin() + 1, u->src().end());
    const UOp *x = u->src(0);
    while (ranges.size() >= 2) {
      const UOp *a = ranges[ranges.size() - 2], *b = ranges.back();
      std::optional<int64_t> na = tripCount(a), nb = tripCount(b);
      if (!na || !nb || unitStrideAccesses(x, b) != true) break;
      const UOp *f = newRangeLike(b, *na * *nb, ++axis);
      Context &ctx = u->context();
      const UOp *c = ctx.get(Op::CONST, f->dtype(), {}, tgc::Value::integer(*nb));
      const UOp *summand = substituteSimplified(
          x, {{a, ctx.get(Op::FLOORDIV, f->dtype(), {f, c})}, {b, ctx.get(Op::FLOORMOD, f->dtype(), {f, c})}});
      if (!summand) break;
      std::vector<const UOp *> nodes = toposort(summand);
      bool divides = std::any_of(nodes.begin(), nodes.end(), [&](const UOp *n) {
        return (n->is(Op::FLOORDIV) || n->is(Op::FLOORMOD)) && dependsOn(n, f);
      });
      if (divides || unitStrideAccesses(summand, f) != true) break;
      x = summand;
      ranges.pop_back();
      ranges.back() = f;
    }
    if (x == u->src(0)) continue;
    // f runs (a, b) in their order: the same sums, even under strict fp.
    std::vector<const UOp *> src{x};
    src.insert(src.end(), ranges.begin(), ranges.end());
    merged[u] = u->context().get(Op::REDUCE, u->dtype(), src, u->arg(), u->tag());
  }
  return merged.empty() ? sink : substitute(sink, merged);
}

} // namespace tgc::codegen
