//===- RangeifyIndexing.cpp - ranges and realize decisions -----------------===//
//
// Mirrors tinygrad's run_rangeify up to pm_apply_rangeify
// (tinygrad/schedule/indexing.py): pm_generate_realize_map, the consumer map
// and the reverse-toposort walk that hands every node its consumers' index
// expressions, realizing where consumers disagree or a range ends.
//
//===----------------------------------------------------------------------===//
#include "Schedule/RangeifyIndexing.h"

#include "IR/GraphRewrite.h"
#include "IR/PtrMap.h"
#include "IR/Symbolic.h"
#include "Schedule/RangeifyMovement.h"

#include <algorithm>
#include <unordered_set>

namespace tgc::rangeify {

const UOp *IndexingContext::newRange(Context &ctx, const Dim &size, std::string_view axisType) {
  if (dimsEqual(size, 1) == true) return ctx.constInt(0); // resolve(s != 1): a symbolic size gets a range
  return range(ctx, size, rangeIdx++, axisType);
}

bool alwaysContiguous(Op op) {
  switch (op) {
  case Op::CONTIGUOUS: case Op::AFTER: case Op::BUFFER: case Op::CONST: case Op::MSELECT: case Op::MSTACK:
  case Op::PARAM: case Op::LOAD: case Op::CALL: case Op::FUNCTION:
    return true;
  default:
    return false;
  }
}

std::span<const UOp *const> dataSrcs(const UOp *u) {
  std::span<const UOp *const> all = u->src();
  switch (u->op()) {
  case Op::PARAM: case Op::BUFFER: case Op::RANGE: case Op::SPECIAL: return {};
  case Op::STORE:
    if (isVariable(u->src(0))) return {};
    return all;
  case Op::INDEX: case Op::STAGE: case Op::REDUCE: case Op::AFTER: case Op::END: return all.first(1);
  default:
    if (u->isIn(group::Movement)) return all.first(1);
    return all;
  }
}

// pm_generate_realize_map: every rule records and declines, so all that match run.
static void generateRealizeMap(const UOp *sink, IndexingContext &ctx) {
  ToposortOptions o;
  o.enterCalls = false;
  for (const UOp *x : toposort(sink, o)) {
    if (x->is(Op::CALL) && x->numSrc() && (x->src(0)->is(Op::SINK) || x->src(0)->is(Op::PROGRAM))) {
      // realize the inputs of custom kernel calls
      for (size_t i = 1; i < x->numSrc(); ++i) {
        const UOp *s = x->src(i);
        while (s->is(Op::RESHAPE)) s = s->src(0);
        if (!alwaysContiguous(s->op())) {
          ctx.realizeMap[s] = std::nullopt;
          ctx.nonRemovable[s] = true;
        }
      }
    }
    if (x->is(Op::CONTIGUOUS) || x->is(Op::STORE)) ctx.realizeMap[x] = std::nullopt;
    if (x->is(Op::MSELECT) || x->is(Op::MSTACK))
      for (const UOp *s : x->src())
        if (!alwaysContiguous(base(s)->op())) ctx.realizeMap[s] = std::nullopt;
    // a STORE whose value reads its own destination (a WAR hazard inside one assign)
    if (x->is(Op::STORE) && x->numSrc() == 2 && inBackwardSlice(base(x->src(0)), x->src(1)))
      ctx.realizeMap[x->src(1)] = std::nullopt;
  }
}

// tinygrad's broadcast_rngs: a Broadcastable consumer reads its size-1 (or
// missing leading) axes at 0.
static std::vector<const UOp *> broadcastRngs(const UOp *c, const UOp *src, const std::vector<const UOp *> &rngs) {
  if (!c->isIn(group::Broadcastable)) return rngs;
  const IShape &ss = shapeOf(src), &cs = shapeOf(c);
  std::vector<size_t> baxes = broadcastAxes(ss, cs);
  size_t nleft = cs.size() - ss.size();
  std::vector<const UOp *> out;
  for (size_t j = nleft; j < rngs.size(); ++j)
    out.push_back(std::find(baxes.begin(), baxes.end(), j) != baxes.end() ? rngs[j]->context().constInt(0) : rngs[j]);
  return out;
}

static bool contains(const std::vector<size_t> &v, size_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

namespace {

// Each node's consumers in toposort order, as one flat array: the consumers
// of topo[i] are list[first[i] .. first[i + 1]).
struct ConsumerMap {
  std::vector<uint32_t> first;
  std::vector<const UOp *> list;
  std::span<const UOp *const> of(size_t i) const { return {list.data() + first[i], first[i + 1] - first[i]}; }
};

ConsumerMap consumerMap(const std::vector<const UOp *> &topo) {
  PtrMap<uint32_t> position(topo.size());
  for (size_t i = 0; i < topo.size(); ++i) position.insert(topo[i], uint32_t(i));
  auto forEachEdge = [&](auto f) {
    for (const UOp *u : topo) {
      std::span<const UOp *const> d = dataSrcs(u);
      for (size_t k = 0; k < d.size(); ++k)
        if (std::find(d.begin(), d.begin() + ptrdiff_t(k), d[k]) == d.begin() + ptrdiff_t(k)) // once per consumer
          if (const uint32_t *p = position.find(d[k])) f(*p, u);
    }
  };
  ConsumerMap m;
  m.first.assign(topo.size() + 1, 0);
  forEachEdge([&](uint32_t p, const UOp *) { ++m.first[p + 1]; });
  for (size_t i = 0; i < topo.size(); ++i) m.first[i + 1] += m.first[i];
  m.list.resize(m.first.back());
  std::vector<uint32_t> filled(m.first.begin(), m.first.end() - 1);
  forEachEdge([&](uint32_t p, const UOp *u) { m.list[filled[p]++] = u; });
  return m;
}

// The ranges the consumers iterate that x broadcasts over.
std::vector<const UOp *> broadcastEndingRanges(const UOp *x, std::span<const UOp *const> cons, IndexingContext &ctx) {
  std::vector<const UOp *> ended;
  for (const UOp *u : cons) {
    auto rm = ctx.rangeMap.find(u);
    if (rm == ctx.rangeMap.end() || !u->isIn(group::Broadcastable)) continue;
    for (size_t i : broadcastAxes(shapeOf(x), shapeOf(u))) ended.push_back(rm->second.first.at(i));
  }
  return rangeCache().rangesOf(ended);
}

// Several consumers: keep the common index if they all agree, else realize
// x with fresh ranges.
std::vector<const UOp *> mergeConsumerRanges(const UOp *x, const std::vector<std::vector<const UOp *>> &consumerRngs,
                                             IndexingContext &ctx, Context &c) {
  size_t n = consumerRngs[0].size();
  for (const auto &r : consumerRngs) n = std::min(n, r.size());
  std::vector<std::vector<const UOp *>> idxs(n), valids(n);
  bool allSame = true;
  for (size_t i = 0; i < n; ++i) {
    for (const auto &r : consumerRngs) {
      idxs[i].push_back(getIdx(r[i]));
      valids[i].push_back(getValid(r[i]));
    }
    for (const UOp *u : idxs[i]) allSame &= u == idxs[i][0];
  }
  const IShape &s = shapeOf(x);
  std::vector<const UOp *> out;
  std::vector<size_t> realizeAxes;
  for (size_t i = 0; i < n; ++i) {
    if (allSame) {
      // the new valid is the OR of all the consumers' valids
      const UOp *minValid = UOpRef(c.constBool(false)).usum(valids[i]);
      out.push_back(symSimplify(valid(idxs[i][0], minValid)));
    } else {
      out.push_back(ctx.newRange(c, s.at(i)));
      realizeAxes.push_back(i);
    }
  }
  if (!realizeAxes.empty()) ctx.realizeMap[x] = realizeAxes;
  return out;
}

// An elementwise op or REDUCE under an ended range materializes (else it
// would be recomputed along the broadcast): every axis of `out` gets a fresh range.
void realizeAllAxes(const UOp *x, std::vector<const UOp *> &out, IndexingContext &ctx, Context &c) {
  std::vector<size_t> axes;
  if (auto it = ctx.realizeMap.find(x); it != ctx.realizeMap.end() && it->second) axes = *it->second;
  for (size_t i = 0; i < out.size(); ++i)
    if (!contains(axes, i)) axes.push_back(i);
  if (axes.empty()) return;
  ctx.realizeMap[x] = axes;
  const IShape &s = shapeOf(x);
  for (size_t i = 0; i < out.size(); ++i)
    if (contains(axes, i)) out[i] = ctx.newRange(c, s.at(i));
}

// The ranges x's srcs see, given x's output ranges `out`; `end` also when an
// EXPAND ends the ranges of its new axes.
std::vector<const UOp *> srcRanges(const UOp *x, const std::vector<const UOp *> &out, bool &end, IndexingContext &ctx,
                                   Context &c) {
  std::vector<const UOp *> in = out;
  if (x->isIn(group::Movement)) in = applyMovementOp(x, out);
  if (x->is(Op::STACK)) in.assign(out.begin() + std::min<size_t>(1, out.size()), out.end());
  // an EXPAND that does not inject a range ends the ranges of its new axes (this is why convs realize)
  if (x->is(Op::EXPAND)) {
    size_t nNew = std::min(mopShape(x).size(), out.size());
    std::vector<const UOp *> newAxes(out.begin(), out.begin() + nNew);
    end |= !rangeCache().rangesOf(newAxes).empty();
  }
  if (x->is(Op::REDUCE) && x->arg().isSequence() && x->arg().size() == 2 && x->arg()[1].isInt() &&
      x->arg()[1].getInt() > 0) {
    const IShape &ss = shapeOf(x->src(0));
    size_t nred = size_t(x->arg()[1].getInt());
    in.clear();
    for (size_t i = 0; i < nred && i < ss.size(); ++i) in.push_back(ctx.newRange(c, ss[i], "REDUCE"));
    in.insert(in.end(), out.begin(), out.end());
  }
  return in;
}

} // namespace

void assignRanges(const UOp *tsink, IndexingContext &ctx) {
  Context &c = tsink->context();
  generateRealizeMap(tsink, ctx);
  // the consumer map, over the graph with kernel bodies gated off
  std::vector<const UOp *> topo = toposortGated(tsink, [](const UOp *x) {
    return !(x->is(Op::LINEAR) || (x->is(Op::SINK) && x->arg().isObj("KernelInfo")));
  });
  ConsumerMap consumers = consumerMap(topo);
  // tinygrad keeps the list of ranges that end below each node; with the
  // default PCONTIG only whether that list is empty matters, so that is all
  // that is kept (the lists would repeat every consumer's ranges).
  PtrMap<bool> ending(topo.size());
  for (size_t xi = topo.size(); xi-- > 0;) {
    const UOp *x = topo[xi];
    // no ranges on kernels (internal), AFTER, or MSTACK/MSELECT (treated like SINK)
    if (x->is(Op::CALL) || x->is(Op::FUNCTION) || x->is(Op::LINEAR) || x->is(Op::AFTER) || x->is(Op::MSTACK) ||
        x->is(Op::MSELECT))
      continue;
    std::span<const UOp *const> cons = consumers.of(xi);
    bool end = false;
    for (const UOp *u : cons)
      if (const bool *e = ending.find(u)) end |= *e;
    std::vector<const UOp *> broadcastEnding = broadcastEndingRanges(x, cons, ctx);
    // fusion decision: REDUCE before the broadcast
    if (x->is(Op::REDUCE)) end |= !broadcastEnding.empty();

    std::vector<std::vector<const UOp *>> consumerRngs;
    for (const UOp *u : cons)
      if (auto rm = ctx.rangeMap.find(u); rm != ctx.rangeMap.end())
        consumerRngs.push_back(broadcastRngs(u, x, rm->second.first));
    std::vector<const UOp *> out;
    if (auto realized = ctx.realizeMap.find(x); realized != ctx.realizeMap.end()) {
      // realized: fresh ranges for every output axis; all ranges end here
      const IShape &s = shapeOf(x);
      std::vector<size_t> axes;
      for (size_t i = 0; i < s.size(); ++i) {
        out.push_back(ctx.newRange(c, s[i]));
        axes.push_back(i);
      }
      end = false;
      realized->second = axes;
    } else if (consumerRngs.empty()) {
      ending[x] = end;
      continue; // no consumer has ranges, so neither does x
    } else {
      out = consumerRngs.size() == 1 ? consumerRngs[0] : mergeConsumerRanges(x, consumerRngs, ctx, c);
    }
    if (end && (x->isIn(group::Elementwise) || x->is(Op::REDUCE))) {
      realizeAllAxes(x, out, ctx, c);
      end = false;
    }
    end |= !broadcastEnding.empty();
    std::vector<const UOp *> in = srcRanges(x, out, end, ctx, c);
    ending[x] = end;
    ctx.rangeMap[x] = {std::move(in), std::move(out)};
  }
}

} // namespace tgc::rangeify
