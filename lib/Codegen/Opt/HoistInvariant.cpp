//===- HoistInvariant.cpp - costly reduction terms computed once ----------===//
//
// See HoistInvariant.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/HoistInvariant.h"
#include "Codegen/Opt/GateVersioning.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/ParallelLoop.h"

#include <bitset>
#include <unordered_map>
#include <unordered_set>

namespace tgc::codegen {

namespace {

constexpr size_t kMaxRanges = 128;
using RangeSet = std::bitset<kMaxRanges>;

// What the search knows of every node of the kernel.
struct NodeFacts {
  RangeSet deps;        ///< the RANGEs its value depends on (a REDUCE's own ranges excluded)
  /// A transcendental in it. Only those are worth a table: a division or
  /// square root is one instruction, cheaper than the table's loop, store and
  /// load (measured: a hoisted reciprocal made k3's attention backward 1.2x slower).
  bool costly = false;
  bool reduce = false;  ///< a REDUCE in it
  bool movable = true;  ///< only ALU ops, casts, constants, ranges and loads in it
};

class Hoister {
public:
  explicit Hoister(const UOp *sink) : sink_(sink), ctx_(sink->context()) {}

  const UOp *run() {
    const UOp *end = sink_->src(0);
    nodes_ = toposort(sink_);
    for (const UOp *u : nodes_)
      if (u->is(Op::RANGE)) {
        if (ranges_.size() == kMaxRanges || !tripCount(u)) return sink_;
        bit_[u] = ranges_.size();
        ranges_.push_back(u);
      }
    // Loop order: the output loops outermost first, then the rest.
    for (size_t i = 1; i < end->numSrc(); ++i)
      if (auto it = bit_.find(end->src(i)); it != bit_.end()) order_.push_back(it->second);
    for (size_t b = 0; b < ranges_.size(); ++b)
      if (std::find(order_.begin(), order_.end(), b) == order_.end()) order_.push_back(b);
    stored_ = storedBuffers(nodes_);
    for (const UOp *u : nodes_) facts_[u] = factsOf(u);
    axis_ = maxAxisId(sink_);

    std::unordered_map<const UOp *, const UOp *> reduces;
    for (const UOp *u : nodes_) {
      if (!u->is(Op::REDUCE) || facts_[u->src(0)].reduce) continue; // innermost reductions only
      reduceBits_ = ownRanges(u);
      // The summand is evaluated at every point of its ranges and the reduction's.
      RangeSet around = facts_[u->src(0)].deps | reduceBits_;
      std::unordered_map<const UOp *, const UOp *> terms;
      std::unordered_set<const UOp *> seen;
      collect(u->src(0), around, terms, seen);
      if (terms.empty()) continue;
      std::vector<const UOp *> src{substitute(u->src(0), terms)};
      src.insert(src.end(), u->src().begin() + 1, u->src().end());
      reduces[u] = ctx_.get(Op::REDUCE, u->dtype(), src, u->arg(), u->tag());
    }
    if (reduces.empty()) return sink_;
    std::vector<const UOp *> effects = std::move(fills_);
    effects.push_back(substitute(end, reduces));
    const UOp *group = ctx_.get(Op::GROUP, dtypes::Void, effects);
    return ctx_.get(Op::SINK, sink_->dtype(), {group}, sink_->arg(), sink_->tag());
  }

private:
  NodeFacts factsOf(const UOp *u) {
    NodeFacts f;
    f.costly = isTranscendental(u);
    f.reduce = u->is(Op::REDUCE);
    f.movable = u->isIn(group::Elementwise) || u->is(Op::CONST) || u->is(Op::RANGE) || u->is(Op::INDEX) ||
                u->is(Op::PARAM);
    if (u->is(Op::RANGE)) f.deps.set(bit_.at(u));
    for (const UOp *s : u->src()) {
      const NodeFacts &sf = facts_.at(s);
      f.deps |= sf.deps;
      f.costly |= sf.costly;
      f.reduce |= sf.reduce;
      f.movable &= sf.movable;
    }
    if (u->is(Op::REDUCE)) f.deps &= ~ownRanges(u);
    return f;
  }

  // The ranges a REDUCE closes.
  RangeSet ownRanges(const UOp *reduce) const {
    RangeSet s;
    for (size_t i = 1; i < reduce->numSrc(); ++i)
      if (auto it = bit_.find(reduce->src(i)); it != bit_.end()) s.set(it->second);
    return s;
  }

  // The number of points of the ranges in `s` (saturating).
  int64_t points(const RangeSet &s) const {
    int64_t n = 1;
    for (size_t b = 0; b < ranges_.size(); ++b)
      if (s.test(b)) n = n > (int64_t(1) << 40) ? n : n * *tripCount(ranges_[b]);
    return n;
  }

  // Evaluating `term` at every point of its ranges reads only memory the
  // kernel reads anyway: no buffer it writes, and every load gated or in bounds.
  bool safeToEvaluateEverywhere(const UOp *term) const {
    for (const UOp *n : toposort(term)) {
      if (!n->is(Op::INDEX)) continue;
      const UOp *buf = n->src(0);
      if (n->numSrc() != 2 || !buf->is(Op::PARAM) || isLocalBuffer(buf) || stored_.count(buf)) return false;
      const UOp *idx = n->src(1);
      if (splitGate(idx).first) continue; // gated
      if (buf->numSrc() != 1 || !buf->src(0)->is(Op::CONST) || !buf->src(0)->arg().isInt()) return false;
      if (!idx->dtype().isInt() || idx->vminInt() < 0 || idx->vmaxInt() >= buf->src(0)->arg().getInt()) return false;
    }
    return true;
  }

  // The largest terms of `u` (part of a summand evaluated at every point of
  // `around`) worth a table, each mapped to the load that replaces it.
  void collect(const UOp *u, const RangeSet &around, std::unordered_map<const UOp *, const UOp *> &terms,
               std::unordered_set<const UOp *> &seen) {
    if (!seen.insert(u).second) return;
    const NodeFacts &f = facts_.at(u);
    if (!f.costly || f.reduce || u->is(Op::INDEX)) return;
    int64_t own = points(f.deps);
    if (f.movable && f.deps.any() && u->dtype().isFloat() && points(around) / own >= kMinHoistRepeats &&
        own <= kMaxHoistElements && safeToEvaluateEverywhere(u))
      if (const UOp *load = table(u)) {
        terms[u] = load;
        return;
      }
    for (const UOp *s : u->src()) collect(s, around, terms, seen);
  }

  // A table of `term` over its ranges: the loop nest that fills it (into
  // fills_) and the load that replaces the term in the summand.
  const UOp *table(const UOp *term) {
    const UOp *like = globalBufferOf(nodes_, term->dtype());
    if (!like) return nullptr;
    const UOp *end = sink_->src(0);
    const RangeSet &deps = facts_.at(term).deps;
    const UOp *buf = localBuffer(like, points(deps), int64_t(fills_.size()) + 1);
    // The table's layout: row-major over its ranges in loop order, the
    // reduction's outermost when it is short. LLVM unrolls a short reduction
    // completely and vectorizes the output loop around it, along which the
    // table is then contiguous; a long reduction is the vectorized loop.
    std::vector<const UOp *> layout, reduction;
    for (size_t b : order_)
      if (deps.test(b)) (reduceBits_.test(b) ? reduction : layout).push_back(ranges_[b]);
    bool shortReduction = points(deps & reduceBits_) < kMinTileReduction;
    layout.insert(shortReduction ? layout.begin() : layout.end(), reduction.begin(), reduction.end());
    std::unordered_map<const UOp *, const UOp *> fresh;
    std::vector<const UOp *> loops; // the fill's: fresh copies of the layout's ranges
    for (const UOp *r : layout) loops.push_back(fresh[r] = newRangeLike(end->src(1), *tripCount(r), ++axis_));
    const UOp *flat = rowMajorIndex(layout), *flatFresh = rowMajorIndex(loops);
    // The fill loops in layout order, but the one its loads step through one
    // element at a time innermost (h[k, j] is read along j whatever the layout).
    for (const UOp *r : layout)
      if (unitStrideAccesses(term, r) == true) {
        std::erase(loops, fresh[r]);
        loops.push_back(fresh[r]);
        break;
      }
    const UOp *store = ctx_.get(Op::STORE, dtypes::Void,
                                {ctx_.get(Op::INDEX, term->dtype(), {buf, flatFresh}), substitute(term, fresh)});
    std::vector<const UOp *> endSrc{store};
    endSrc.insert(endSrc.end(), loops.begin(), loops.end());
    fills_.push_back(ctx_.get(Op::END, end->dtype(), endSrc, end->arg()));
    return ctx_.get(Op::INDEX, term->dtype(), {buf, flat});
  }

  const UOp *sink_;
  Context &ctx_;
  std::vector<const UOp *> nodes_, ranges_; ///< the kernel's toposort; its RANGEs
  std::unordered_map<const UOp *, size_t> bit_;
  std::vector<size_t> order_;
  std::unordered_map<const UOp *, NodeFacts> facts_;
  std::unordered_set<const UOp *> stored_;
  std::vector<const UOp *> fills_;
  RangeSet reduceBits_; ///< the ranges of the REDUCE whose summand is searched
  int64_t axis_ = 0;
};

} // namespace

const UOp *hoistInvariant(const UOp *sink, const KernelOptions &opts) {
  if (!opts.hoistInvariant || !isPlainLoopNest(sink)) return sink;
  return Hoister(sink).run();
}

namespace {

// Of a node of a tile: a transcendental in it; a float cast that rounds to a
// narrower float in it (a vector round trip through the narrow type, x.half()
// of a half-precision product: two conversions where a table load of the
// narrow value widens in one); only ALU ops, casts, constants, ranges and
// loads in it (no REDUCE).
struct TermFacts {
  bool costly = false, rounds = false, movable = true;
};
using TermFactsMap = std::unordered_map<const UOp *, TermFacts>;

bool roundsToNarrowerFloat(const UOp *u) {
  return u->is(Op::CAST) && u->dtype().isFloat() && u->src(0)->dtype().isFloat() &&
         !u->src(0)->dtype().isWeak() && u->dtype().itemsize() < u->src(0)->dtype().itemsize();
}

TermFactsMap termFacts(const UOp *root) {
  TermFactsMap facts;
  for (const UOp *u : toposort(root)) { // sources first
    TermFacts f{isTranscendental(u), roundsToNarrowerFloat(u),
                u->isIn(group::Elementwise) || u->is(Op::CONST) || u->is(Op::RANGE) || u->is(Op::INDEX) ||
                    u->is(Op::PARAM)};
    for (const UOp *s : u->src()) {
      f.costly |= facts[s].costly;
      f.rounds |= facts[s].rounds;
      f.movable &= facts[s].movable;
    }
    facts[u] = f;
  }
  return facts;
}

// The largest parts of `u` with a transcendental or a narrowing cast that a
// table can hold (movable), not moving with any of the `inner` loops.
void tileTerms(const UOp *u, const TermFactsMap &facts, std::span<const UOp *const> inner, std::vector<const UOp *> &terms,
               std::unordered_set<const UOp *> &seen) {
  if (!seen.insert(u).second) return;
  const TermFacts &f = facts.at(u);
  if (!(f.costly || f.rounds) || u->is(Op::INDEX)) return;
  bool invariant = std::none_of(inner.begin(), inner.end(), [&](const UOp *l) { return dependsOn(u, l); });
  if (f.movable && invariant && u->dtype().isFloat()) {
    terms.push_back(u);
    return;
  }
  for (const UOp *s : u->src()) tileTerms(s, facts, inner, terms, seen);
}

/// One table holds one element type: terms of another type than the first
/// transcendental's (or the first term's) are left in the tile.
void keepOneTableType(std::vector<const UOp *> &terms, const TermFactsMap &facts) {
  if (terms.empty()) return;
  auto lead = std::find_if(terms.begin(), terms.end(), [&](const UOp *t) { return facts.at(t).costly; });
  DType type = (lead == terms.end() ? terms.front() : *lead)->dtype();
  std::erase_if(terms, [&](const UOp *t) { return t->dtype() != type; });
}

} // namespace

const UOp *hoistTileTerms(const UOp *tiled, const KernelOptions &opts) {
  if (!opts.hoistInvariant || !tiled->is(Op::SINK) || tiled->numSrc() != 1) return tiled;
  const UOp *end = tiled->src(0);
  if (!end->is(Op::END) || end->numSrc() < 2 || !end->src(0)->is(Op::GROUP)) return tiled;
  std::span<const UOp *const> loops = end->src().subspan(1);

  // The tile's REDUCEs, all over one range k, and the transcendental terms of
  // their summands that do not move with some of the tile's loops.
  const UOp *k = nullptr;
  std::vector<const UOp *> reduces;
  for (const UOp *u : toposort(end->src(0)))
    if (u->is(Op::REDUCE)) {
      if (u->numSrc() != 2 || (k && u->src(1) != k)) return tiled;
      k = u->src(1);
      reduces.push_back(u);
    }
  std::optional<int64_t> kN = k ? tripCount(k) : std::nullopt;
  if (!kN) return tiled;
  TermFactsMap facts = termFacts(end->src(0));
  auto termsInvariantIn = [&](std::span<const UOp *const> inner) {
    std::vector<const UOp *> terms;
    std::unordered_set<const UOp *> seen;
    for (const UOp *r : reduces) tileTerms(r->src(0), facts, inner, terms, seen);
    keepOneTableType(terms, facts);
    return terms;
  };
  // A table per iteration of the outer loops the terms depend on, ahead of
  // the innermost loops that reuse it (as many as leave some terms):
  // softmax(S) @ V's exp2 per tile row, reused by the column tiles.
  size_t outer = 0;
  std::vector<const UOp *> terms, indexLoops;
  for (; outer < loops.size() && terms.empty(); ++outer) terms = termsInvariantIn(loops.subspan(outer));
  if (!terms.empty()) {
    --outer;
  } else {
    // Otherwise one table over the loops the terms depend on, filled before
    // the tile's loops, when the terms do not move with a loop of several
    // iterations: a tile of dot products whose row tiles' terms (an
    // activation recomputed in a backward pass) every column tile repeats.
    outer = 0;
    for (const UOp *l : loops)
      if (tripCount(l).value_or(1) >= 2 && !(terms = termsInvariantIn({&l, 1})).empty()) break;
    if (terms.empty()) return tiled;
    for (const UOp *l : loops)
      if (std::any_of(terms.begin(), terms.end(), [&](const UOp *t) { return dependsOn(t, l); })) indexLoops.push_back(l);
  }
  int64_t rows = int64_t(terms.size());
  for (const UOp *l : indexLoops) rows *= *tripCount(l);
  // The fill runs inside loops[0, outer) over copies of the index loops and
  // k: a term that uses another range (one closed inside the tile) has no
  // value there.
  std::unordered_set<const UOp *> fillSees(loops.begin(), loops.begin() + std::ptrdiff_t(outer));
  fillSees.insert(indexLoops.begin(), indexLoops.end());
  fillSees.insert(k);
  for (const UOp *t : terms) {
    if (!dependsOn(t, k)) return tiled;
    for (const UOp *u : toposort(t))
      if (u->is(Op::RANGE) && !fillSees.count(u)) return tiled;
  }
  if (rows * *kN > kMaxHoistElements) return tiled;
  const UOp *like = globalBufferOf(toposort(tiled), terms[0]->dtype());
  if (!like) return tiled;

  // table[((t * loops...) * K + k] = term_t, filled over fresh copies of the
  // index loops and k (k innermost: the loop that vectorizes).
  Context &ctx = tiled->context();
  const UOp *table = localBuffer(like, rows * *kN, 1);
  int64_t axis = maxAxisId(tiled);
  std::unordered_map<const UOp *, const UOp *> fresh;
  std::vector<const UOp *> fillLoops;
  for (const UOp *l : indexLoops) fillLoops.push_back(fresh[l] = newRangeLike(loops[0], *tripCount(l), ++axis));
  fillLoops.push_back(fresh[k] = newRangeLike(loops[0], *kN, ++axis));
  std::vector<const UOp *> tableRanges(indexLoops);
  tableRanges.push_back(k);
  auto at = [&](size_t t, std::span<const UOp *const> ranges) {
    const UOp *row = ctx.get(Op::CONST, k->dtype(), {}, tgc::Value::integer(int64_t(t)));
    return ctx.get(Op::INDEX, terms[t]->dtype(), {table, rowMajorIndex(ranges, row)});
  };
  std::vector<const UOp *> fills;
  std::unordered_map<const UOp *, const UOp *> fromTable;
  for (size_t t = 0; t < terms.size(); ++t) {
    fills.push_back(ctx.get(Op::STORE, dtypes::Void, {at(t, fillLoops), substitute(terms[t], fresh)}));
    fromTable[terms[t]] = at(t, tableRanges);
  }
  std::vector<const UOp *> fillSrc{ctx.get(Op::GROUP, dtypes::Void, fills)};
  fillSrc.insert(fillSrc.end(), fillLoops.begin(), fillLoops.end());
  const UOp *fill = ctx.get(Op::END, end->dtype(), fillSrc, end->arg());

  // END(GROUP(fill, END(tile reading the table, inner loops)), outer loops)
  std::vector<const UOp *> tileSrc{substitute(end->src(0), fromTable)};
  tileSrc.insert(tileSrc.end(), loops.begin() + std::ptrdiff_t(outer), loops.end());
  const UOp *tile = ctx.get(Op::END, end->dtype(), tileSrc, end->arg());
  std::vector<const UOp *> outerSrc{ctx.get(Op::GROUP, dtypes::Void, {fill, tile})};
  outerSrc.insert(outerSrc.end(), loops.begin(), loops.begin() + std::ptrdiff_t(outer));
  const UOp *body = outer ? ctx.get(Op::END, end->dtype(), outerSrc, end->arg()) : outerSrc[0];
  return ctx.get(Op::SINK, tiled->dtype(), {body}, tiled->arg(), tiled->tag());
}

} // namespace tgc::codegen
