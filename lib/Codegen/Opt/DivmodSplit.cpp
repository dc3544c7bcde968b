//===- DivmodSplit.cpp - an output loop split into quotient and remainder --===//
//
// See DivmodSplit.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/DivmodSplit.h"
#include "Codegen/Opt/GateVersioning.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/ParallelLoop.h"

#include "IR/Symbolic.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace tgc::codegen {

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

namespace {

// `root` (a STORE, a REDUCE's summand) with j = outer * c + inner, simplified.
const UOp *splitRange(const UOp *root, const UOp *j, const UOp *outer, const UOp *inner, int64_t c) {
  Context &ctx = root->context();
  const UOp *at = ctx.get(Op::ADD, j->dtype(),
                          {ctx.get(Op::MUL, j->dtype(), {outer, ctx.get(Op::CONST, j->dtype(), {}, tgc::Value::integer(c))}), inner});
  return substituteSimplified(root, {{j, at}});
}

// (a, b) as the quotient and remainder of one range f by n: a = f // n, b = f % n.
std::unordered_map<const UOp *, const UOp *> quotientRemainder(const UOp *a, const UOp *b, const UOp *f, int64_t n) {
  Context &ctx = f->context();
  const UOp *c = ctx.constInt(n, f->dtype());
  return {{a, ctx.get(Op::FLOORDIV, f->dtype(), {f, c})}, {b, ctx.get(Op::FLOORMOD, f->dtype(), {f, c})}};
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

// Outputs unrolled by unrollQuotient: a few, so the loop's body stays small.
constexpr int64_t kMaxUnrolledQuotient = 4;
// Shared work (in ALU ops) below which unrolling is not worth its extra
// store streams and code.
constexpr int64_t kMinSharedOps = 16;

// The ALU ops a node stands for: THREEFRY is 20 rounds of add, rotate (two
// shifts and an or) and xor plus 5 key injections of 3 ops; a polynomial
// transcendental (Transcendental.cpp) some 25.
int64_t aluOps(const UOp *u) {
  if (u->is(Op::THREEFRY)) return 20 * 5 + 5 * 3;
  if (isTranscendental(u)) return 25;
  return u->isIn(group::ALU) ? 1 : 0;
}

// The nodes under `root` that depend on the range `r`.
std::unordered_set<const UOp *> dependents(const UOp *root, const UOp *r) {
  std::unordered_set<const UOp *> deps{r};
  for (const UOp *u : toposort(root))
    if (std::any_of(u->src().begin(), u->src().end(), [&](const UOp *s) { return deps.count(s) > 0; })) deps.insert(u);
  return deps;
}

// The ALU ops of the stored values that depend on `m` and that every piece
// computes.
int64_t sharedOps(const std::vector<const UOp *> &pieces, const UOp *m) {
  std::unordered_set<const UOp *> shared = dependents(pieces[0]->src(1), m);
  for (size_t k = 1; k < pieces.size(); ++k) {
    std::unordered_set<const UOp *> deps = dependents(pieces[k]->src(1), m);
    std::erase_if(shared, [&](const UOp *u) { return !deps.count(u); });
  }
  int64_t ops = 0;
  for (const UOp *u : shared) ops += aluOps(u);
  return ops;
}

} // namespace

const UOp *unrollQuotient(const UOp *sink, const KernelOptions &opts) {
  if (!opts.unrollQuotient || !isPlainLoopNest(sink)) return sink;
  const UOp *end = sink->src(0), *store = end->src(0);
  const UOp *j = end->src(end->numSrc() - 1);
  std::optional<int64_t> n = tripCount(j);
  if (!n) return sink;
  Context &ctx = sink->context();
  for (int64_t c : divmodDivisors(store, j, *n)) {
    if (*n / c > kMaxUnrolledQuotient) continue;
    const UOp *m = newRangeLike(j, c, maxAxisId(sink) + 1);
    std::vector<const UOp *> pieces;
    for (int64_t k = 0; k < *n / c; ++k) {
      const UOp *piece = splitRange(store, j, ctx.constInt(k, j->dtype()), m, c);
      if (!piece || !piece->is(Op::STORE)) return sink;
      pieces.push_back(piece);
    }
    if (sharedOps(pieces, m) < kMinSharedOps) continue;
    std::vector<const UOp *> src{ctx.get(Op::GROUP, dtypes::Void, pieces)};
    src.insert(src.end(), end->src().begin() + 1, end->src().end() - 1);
    src.push_back(m);
    return ctx.get(Op::SINK, sink->dtype(), {ctx.get(Op::END, end->dtype(), src, end->arg())}, sink->arg(), sink->tag());
  }
  return sink;
}

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
      const UOp *summand = substituteSimplified(x, quotientRemainder(a, b, f, *nb));
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

// Each REDUCE under `root` with the ranges its gates compare (with `f`)
// outermost: the gates, per lane of the tile divisions of f, are then
// invariant in the inner loops, which LLVM hoists them out of. Reorders the
// sum: not under strict fp.
static const UOp *gatesOutward(const UOp *root, const UOp *f) {
  std::unordered_map<const UOp *, const UOp *> reordered;
  for (const UOp *u : toposort(root)) {
    if (!u->is(Op::REDUCE) || u->numSrc() < 3) continue;
    std::vector<const UOp *> gates = toposort(u->src(0)), gateRanges, rest;
    std::erase_if(gates, [&](const UOp *n) { return !n->dtype().isBool() || !dependsOn(n, f); });
    for (const UOp *r : u->src().subspan(1)) {
      bool compared = std::any_of(gates.begin(), gates.end(), [&](const UOp *g) { return dependsOn(g, r); });
      (compared ? gateRanges : rest).push_back(r);
    }
    gateRanges.insert(gateRanges.end(), rest.begin(), rest.end());
    if (std::equal(gateRanges.begin(), gateRanges.end(), u->src().begin() + 1)) continue;
    std::vector<const UOp *> src{u->src(0)};
    src.insert(src.end(), gateRanges.begin(), gateRanges.end());
    reordered[u] = u->context().get(Op::REDUCE, u->dtype(), src, u->arg(), u->tag());
  }
  return reordered.empty() ? root : substitute(root, reordered);
}

const UOp *mergeOutputRanges(const UOp *sink, const KernelOptions &opts) {
  if (!opts.mergeOutputRanges || !opts.tileMatmul || !isPlainLoopNest(sink) || sink->src(0)->numSrc() < 3) return sink;
  if (int64_t work = kernelLoopWork(sink); work >= 0 && work < opts.tileMinWork) return sink;
  const UOp *end = sink->src(0), *store = end->src(0);
  const UOp *a = end->src(end->numSrc() - 2), *b = end->src(end->numSrc() - 1);
  std::optional<int64_t> na = tripCount(a), nb = tripCount(b);
  if (!na || !nb) return sink;
  // only where a tile of the merged loop holds more outputs than one of b's
  const ColumnTiles mergedTiles = columnTiles(*na * *nb, MatmulTile{}.columns, opts.overlapTiles);
  if (mergedTiles.outputsPerTile() <= columnTiles(*nb, MatmulTile{}.columns, opts.overlapTiles).outputsPerTile())
    return sink;
  // only where a tile would read along the merged loop: a float reduction
  std::vector<const UOp *> nodes = toposort(store);
  if (std::none_of(nodes.begin(), nodes.end(), [](const UOp *u) { return u->is(Op::REDUCE) && u->dtype().isFloat(); }))
    return sink;
  // the output is one contiguous run over (a, b)
  const UOp *target = store->src(0);
  if (!target->is(Op::INDEX) || target->numSrc() != 2 || splitGate(target->src(1)).first) return sink;
  AffineCoefficients coefficient;
  if (coefficient(target->src(1), b) != 1 || coefficient(target->src(1), a) != *nb) return sink;
  int64_t axis = maxAxisId(sink);
  const UOp *f = newRangeLike(b, *na * *nb, ++axis);
  Context &ctx = sink->context();
  // a = f // |b| and b = f % |b| everywhere, but an access affine in both
  // with a's stride |b| times b's (a window's row and column) reads
  // stride_b * f + (its index at a = b = 0): symbolic does not fold
  // (f // |b| + y) * |b| + f % |b| back into f + y * |b|.
  std::unordered_map<const UOp *, const UOp *> map = quotientRemainder(a, b, f, *nb);
  for (const UOp *n : nodes) {
    if (!n->is(Op::INDEX) || n->numSrc() != 2 || dependsOn(n->src(0), a) || dependsOn(n->src(0), b)) continue;
    auto [gate, e] = splitGate(n->src(1));
    std::optional<int64_t> ca = coefficient(e, a), cb = coefficient(e, b);
    if (!ca || !cb || *ca != *cb * *nb || *cb == 0) continue;
    const UOp *at0 = substitute(e, {{a, ctx.constInt(0, f->dtype())}, {b, ctx.constInt(0, f->dtype())}});
    const UOp *flat = ctx.get(Op::ADD, e->dtype(), {ctx.get(Op::MUL, e->dtype(), {f, ctx.constInt(*cb, f->dtype())}), at0});
    if (gate) flat = ctx.get(Op::WHERE, n->src(1)->dtype(), {substitute(gate, map), flat, n->src(1)->src(2)});
    map[n] = ctx.get(Op::INDEX, n->dtype(), {n->src(0), flat}, n->arg(), n->tag());
  }
  const UOp *merged = substituteSimplified(store, map);
  // every access (the reductions' included) steps by 0 or 1 element along f:
  // only the gates (a window's bounds) still divide it
  if (!merged || unitStrideAccesses(merged, f, /*throughReduces=*/true) != true) return sink;
  // The window's ranges go outermost only under full-width tiles (56 x 56:
  // 32 columns, 1.5x faster so): each step of the channel loop then reads
  // one weight per tile row from a different cache line (the weights are
  // [co][ci][ky][kx]), 36 bytes past the last one. Narrower tiles (16
  // columns of 28 x 28, 8 of 7 x 7) do that for twice and four times fewer
  // FMAs per line and keep tinygrad's (ci, ky, kx), which reads each row's
  // weights in order: 1.8-1.9x faster at 28 x 28 and 7 x 7.
  if (!opts.strictFP && mergedTiles.columns >= MatmulTile{}.columns) merged = gatesOutward(merged, f);
  std::vector<const UOp *> src{merged};
  src.insert(src.end(), end->src().begin() + 1, end->src().end() - 2);
  src.push_back(f);
  return ctx.get(Op::SINK, sink->dtype(), {ctx.get(Op::END, end->dtype(), src, end->arg())}, sink->arg(), sink->tag());
}

} // namespace tgc::codegen
