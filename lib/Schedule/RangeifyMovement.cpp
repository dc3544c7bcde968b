//===- RangeifyMovement.cpp - movement ops as index arithmetic -------------===//
//
// Mirrors tinygrad's apply_movement_op and _apply_reshape
// (tinygrad/schedule/indexing.py). Every expression is built with the same
// UOp sugar tinygrad uses (so `a - b` is `a + b*-1` and `c - a` is
// `c + a*-1`), because later passes compare and simplify these exact trees.
//
//===----------------------------------------------------------------------===//
#include "Schedule/RangeifyMovement.h"

#include "IR/GraphRewrite.h"
#include "IR/PtrMap.h"
#include "IR/Symbolic.h"

#include <deque>
#include <numeric>

namespace tgc::rangeify {

const UOp *symSimplify(const UOp *u) {
  if (u->is(Op::CONST)) return u;
  if (u->is(Op::SINK)) {
    bool allConst = true;
    for (const UOp *s : u->src()) allConst &= s->is(Op::CONST) || (s->is(Op::STACK) && s->numSrc() == 0);
    if (allConst) return u;
  }
  Result<const UOp *> r = simplify(u);
  if (!r) throw ScheduleError(r.error());
  return *r;
}

static const PatternMatcher &simplifyValidPM(bool dropAndClauses) {
  static const PatternMatcher withValid = symbolic() + pmSimplifyValid();
  static const PatternMatcher withDrop = symbolic() + pmSimplifyValid() + pmDropAndClauses();
  return dropAndClauses ? withDrop : withValid;
}

void prepareMovementRules() {
  simplifyValidPM(false);
  simplifyValidPM(true);
}

const UOp *simplifyValid(const UOp *u, bool dropAndClauses) {
  Result<const UOp *> r = graphRewritePure(u, simplifyValidPM(dropAndClauses));
  if (!r) throw ScheduleError(r.error());
  return *r;
}

namespace {
/// tinygrad caches _apply_reshape and apply_movement_op (functools.cache):
/// both are pure functions of interned nodes and shapes, so per Context the
/// result for a node key and a pair of shapes never changes. `Result` is the
/// node (_apply_reshape) or the index list (apply_movement_op).
template <typename Result> class ReshapeMemo {
public:
  const Result *find(const UOp *key, const IShape &in, const IShape &out) const {
    if (const auto *entries = table_.find(key))
      for (const Entry &e : *entries)
        if (e.in == in && e.out == out) return &e.result;
    return nullptr;
  }
  const Result &add(const UOp *key, IShape in, IShape out, Result r) {
    std::vector<Entry> &entries = table_[key];
    entries.push_back({std::move(in), std::move(out), std::move(r)});
    return entries.back().result;
  }

private:
  struct Entry {
    IShape in, out;
    Result result;
  };
  PtrMap<std::vector<Entry>> table_{256};
};

struct ReshapeMemos {
  ReshapeMemo<const UOp *> placeholders;        ///< _apply_reshape(in, out, placeholder sink)
  ReshapeMemo<std::vector<const UOp *>> ranges; ///< apply_movement_op(RESHAPE, in, out, ranges sink)
  PtrMap<const UOp *> simplified{256};          ///< UOp.simplify() of one index
};
} // namespace

// The PLACEHOLDER index list of a RESHAPE that only inserts or removes size-1
// axes, or nullptr if `urngs` (the output axes' PLACEHOLDERs) or the shapes
// are not of that form. Symbolic folds the div/mod chain of such a reshape
// to the PLACEHOLDER of the matching output axis (`(a*n + b) % n` is b for b
// in [0, n)), and a size-1 input axis to the index dtype's 0; this builds
// that directly.
static const UOp *unitAxesReshape(Context &ctx, const IShape &inShape, const IShape &outShape, const UOp *urngs) {
  std::vector<const UOp *> kept; // the PLACEHOLDERs of the output axes of size > 1
  for (size_t k = 0; k < outShape.size(); ++k) {
    const UOp *u = urngs->src(k);
    if (outShape[k] == 1) {
      if (!u->is(Op::CONST) || u->dtype() != dtypes::WeakInt || !u->arg().isInt() || u->arg().getInt() != 0)
        return nullptr;
      continue;
    }
    if (!u->is(Op::RANGE) || u->dtype() != dtypes::WeakInt || u->numSrc() != 1 || dimOf(u->src(0)) != outShape[k])
      return nullptr;
    kept.push_back(u);
  }
  std::vector<const UOp *> axesOut;
  size_t next = 0;
  for (const Dim &d : inShape) {
    if (d == 1) {
      axesOut.push_back(ctx.constInt(0));
      continue;
    }
    if (next == kept.size() || dimOf(kept[next]->src(0)) != d) return nullptr;
    axesOut.push_back(kept[next++]);
  }
  if (next != kept.size()) return nullptr;
  return sink(ctx, axesOut);
}

// tinygrad's _apply_reshape: linearize the output index row-major, then peel
// the input coordinates off from the back, and let symbolic fold the div/mods.
static const UOp *applyReshape(Context &ctx, const IShape &inShape, const IShape &outShape, const UOp *urngs) {
  ReshapeMemo<const UOp *> &memo = ctx.analysis<ReshapeMemos>().placeholders;
  if (const UOp *const *done = memo.find(urngs, inShape, outShape)) return *done;
  if (const UOp *unit = unitAxesReshape(ctx, inShape, outShape, urngs)) return memo.add(urngs, inShape, outShape, unit);
  Dim acc = 1;
  std::vector<const UOp *> axesIn;
  for (size_t k = outShape.size(); k-- > 0;) {
    axesIn.push_back(acc * UOpRef(urngs->src(k)));
    acc = acc * outShape[k];
  }
  UOpRef combined = makeConst(ctx, Value::integer(0)).usum(axesIn);
  std::vector<const UOp *> axesOut;
  for (size_t k = inShape.size(); k-- > 0;) {
    axesOut.push_back(combined % inShape[k]);
    combined = combined / inShape[k];
  }
  std::reverse(axesOut.begin(), axesOut.end());
  return memo.add(urngs, inShape, outShape, simplifyValid(sink(ctx, axesOut), /*dropAndClauses=*/true));
}

// substitute() for a map whose keys are RANGEs: a subgraph whose RANGE id
// span misses the keys' holds no key and is kept as it is, so only the
// paths to the replaced ranges are rebuilt.
static const UOp *substituteRanges(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map) {
  return substitute(root, map, holdsNoRangeKey(map));
}

// The arg of the i-th PLACEHOLDER range (made once per i: every RESHAPE asks).
// A deque, so a reference handed out stays valid when later ones are added.
static const Value &placeholderArg(size_t i) {
  static std::deque<Value> args;
  while (args.size() <= i) args.push_back(rangeArg(int64_t(args.size()), "PLACEHOLDER"));
  return args[i];
}

// True if every index is a CONST or a RANGE over a CONST bound of at least 2:
// symbolic has no rule for such a SINK or such leaves (a RANGE is folded only
// when its value is fixed, i.e. its bound is 1), so UOp.simplify() returns
// the list unchanged.
static bool isSimplifiedLeafList(const std::vector<const UOp *> &rngs) {
  for (const UOp *r : rngs) {
    if (r->is(Op::CONST)) continue;
    if (!r->is(Op::RANGE) || r->numSrc() != 1 || !r->src(0)->is(Op::CONST)) return false;
    const Value &bound = r->src(0)->arg();
    if (!bound.isInt() || bound.getInt() < 2) return false;
  }
  return true;
}

static std::vector<const UOp *> reshapeIndex(Context &ctx, const IShape &inShape, const IShape &outShape,
                                             const std::vector<const UOp *> &rngs) {
  const UOp *key = sink(ctx, rngs);
  ReshapeMemo<std::vector<const UOp *>> &memo = ctx.analysis<ReshapeMemos>().ranges;
  if (const std::vector<const UOp *> *done = memo.find(key, inShape, outShape)) return *done;
  // swap the ranges for PLACEHOLDER copies so that the simplification only
  // sees their bounds (tinygrad caches the result on the placeholders)
  std::unordered_map<const UOp *, const UOp *> toPlaceholder, back;
  auto placeholderFor = [&](const UOp *r) {
    auto [it, fresh] = toPlaceholder.try_emplace(r, nullptr);
    if (fresh) {
      it->second = ctx.get(Op::RANGE, r->dtype(), {r->src(0)}, placeholderArg(toPlaceholder.size() - 1), r->tag());
      back[it->second] = r;
    }
    return it->second;
  };
  const UOp *placeholders;
  if (isSimplifiedLeafList(rngs)) {
    // what the general path below computes for such a list: symbolic leaves
    // it alone, and its ranges are its RANGEs in order of first appearance
    std::vector<const UOp *> ps;
    for (const UOp *r : rngs) ps.push_back(r->is(Op::RANGE) ? placeholderFor(r) : r);
    placeholders = sink(ctx, ps);
  } else {
    // applies any commutative flips to the rngs early, as tinygrad does.
    // Symbolic has no rule for a SINK, so that is each index simplified on
    // its own; the indices recur across RESHAPEs, so each is simplified once.
    PtrMap<const UOp *> &simplified = ctx.analysis<ReshapeMemos>().simplified;
    std::vector<const UOp *> idx;
    for (const UOp *r : rngs) {
      const UOp *const *done = simplified.find(r);
      idx.push_back(done ? *done : (simplified[r] = symSimplify(r)));
    }
    const UOp *s = sink(ctx, idx);
    for (const UOp *r : rangeCache().ranges(s)) placeholderFor(r);
    placeholders = substituteRanges(s, toPlaceholder);
  }
  const UOp *out = applyReshape(ctx, inShape, outShape, placeholders);
  // an index that is a PLACEHOLDER or holds no range maps back on its own
  std::vector<const UOp *> idx;
  for (const UOp *e : out->src()) {
    auto it = back.find(e);
    if (it != back.end()) idx.push_back(it->second);
    else if (!e->hasRangeBelow()) idx.push_back(e);
    else break;
  }
  if (idx.size() == out->numSrc()) return memo.add(key, inShape, outShape, std::move(idx));
  out = substituteRanges(out, back);
  return memo.add(key, inShape, outShape, {out->src().begin(), out->src().end()});
}

std::vector<const UOp *> applyMovement(Context &ctx, Op op, const IShape &inShape, const IShape &marg,
                                       const std::vector<const UOp *> &rngs) {
  std::vector<const UOp *> out;
  switch (op) {
  case Op::SHRINK:
    for (size_t k = 0; k < rngs.size(); ++k) {
      const Dim &off = marg.at(2 * k);
      out.push_back(off == 0 ? rngs[k] : (UOpRef(rngs[k]) + off).get());
    }
    return out;
  case Op::PERMUTE: {
    // in = [rngs[j] for j in argsort(arg)]
    std::vector<size_t> order(marg.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return marg[a].value < marg[b].value; });
    for (size_t j : order) out.push_back(rngs.at(j));
    return out;
  }
  case Op::FLIP:
    for (size_t k = 0; k < rngs.size(); ++k)
      out.push_back(marg.at(k) != 0 ? ((inShape.at(k) - 1) - UOpRef(rngs[k])).get() : rngs[k]);
    return out;
  case Op::EXPAND:
    return {rngs.begin() + std::min(marg.size(), rngs.size()), rngs.end()};
  case Op::PAD:
    for (size_t k = 0; k < rngs.size(); ++k) {
      const Dim &off = marg.at(2 * k), &sz = marg.at(2 * k + 1), &sh = inShape.at(k);
      if (sz == sh && off == 0) {
        out.push_back(rngs[k]);
        continue;
      }
      UOpRef r = rngs[k];
      // the mask is simplified on its own so that PAD's WHERE wraps only the new valid
      const UOp *mask = simplifyValid((r >= off) & (r < (sh + off)), /*dropAndClauses=*/false);
      out.push_back(valid(r - off, mask));
    }
    return out;
  case Op::RESHAPE:
    return reshapeIndex(ctx, inShape, marg, rngs);
  default:
    fail(nullptr, std::string(opName(op)) + " is not a movement op");
  }
}

std::vector<const UOp *> applyMovementOp(const UOp *mop, const std::vector<const UOp *> &rngs) {
  const IShape &inShape = shapeOf(mop->src(0));
  IShape marg;
  switch (mop->op()) {
  case Op::RESHAPE: case Op::EXPAND: marg = mopShape(mop); break;
  case Op::PAD: case Op::SHRINK:
    for (const auto &[o, s] : mopPairs(mop)) {
      marg.push_back(o);
      marg.push_back(s);
    }
    break;
  case Op::PERMUTE: case Op::FLIP:
    for (int64_t v : mopInts(mop)) marg.push_back(v);
    break;
  default: fail(mop, std::string(opName(mop->op())) + " is not a movement op");
  }
  return applyMovement(mop->context(), mop->op(), inShape, marg, rngs);
}

} // namespace tgc::rangeify
