//===- RowPack.cpp - a tile's row operand copied in the order it is read --===//
//
// See RowPack.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/RowPack.h"
#include "Codegen/Opt/GateVersioning.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/ParallelLoop.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace tgc::codegen {

namespace {

// The ranges every REDUCE of the tile runs over (one list, shared), or empty.
std::vector<const UOp *> sharedReduceRanges(std::span<const UOp *const> nodes) {
  std::vector<const UOp *> ranges;
  bool seen = false;
  for (const UOp *u : nodes) {
    if (!u->is(Op::REDUCE)) continue;
    std::vector<const UOp *> own(u->src().begin() + 1, u->src().end());
    if (seen && own != ranges) return {};
    ranges = std::move(own), seen = true;
  }
  for (const UOp *r : ranges)
    if (!tripCount(r)) return {};
  return ranges;
}

// A slot no kernel-local buffer of the kernel uses yet.
int64_t freeLocalSlot(std::span<const UOp *const> nodes) {
  int64_t slot = 0;
  for (const UOp *u : nodes)
    if (isLocalBuffer(u))
      if (const tgc::Value *s = u->arg().field("slot"); s && s->isInt()) slot = std::max(slot, s->getInt() + 1);
  return slot;
}

// The row loads to pack: strided along `inner`, the tile's innermost
// reduction range, and not moving with `outer`, its outermost loop; every
// range they depend on is one of `known` (the tile's loops and reduction
// ranges), so the table's loops cover them.
std::vector<const UOp *> stridedRowLoads(std::span<const UOp *const> nodes, const UOp *inner, const UOp *outer,
                                         const std::unordered_set<const UOp *> &known) {
  std::unordered_set<const UOp *> stored = storedBuffers(nodes);
  AffineCoefficients coefficient;
  std::vector<const UOp *> loads;
  for (const UOp *u : nodes) {
    if (!u->is(Op::INDEX) || u->numSrc() != 2) continue;
    const UOp *buf = u->src(0);
    if (!buf->is(Op::PARAM) || isLocalBuffer(buf) || stored.count(buf) || splitGate(u->src(1)).first) continue;
    std::optional<int64_t> c = coefficient(u->src(1), inner);
    if (!c || (*c >= -1 && *c <= 1) || dependsOn(u, outer)) continue;
    std::vector<const UOp *> sub = toposort(u);
    if (std::any_of(sub.begin(), sub.end(), [&](const UOp *n) { return n->is(Op::RANGE) && !known.count(n); })) continue;
    loads.push_back(u);
  }
  return loads;
}

} // namespace

const UOp *packTileRows(const UOp *tiled, const KernelOptions &opts, MatmulTile &tile) {
  if (!opts.packRows || tile.columns == 0 || !tiled->is(Op::SINK) || tiled->numSrc() != 1) return tiled;
  const UOp *end = tiled->src(0);
  if (!end->is(Op::END) || end->numSrc() < 2 || !end->src(0)->is(Op::GROUP)) return tiled;
  std::vector<const UOp *> loops(end->src().begin() + 1, end->src().end());
  std::vector<const UOp *> nodes = toposort(end->src(0));
  std::vector<const UOp *> ranges = sharedReduceRanges(nodes);
  if (ranges.empty() || std::any_of(loops.begin(), loops.end(), [](const UOp *l) { return !tripCount(l); }))
    return tiled;
  std::unordered_set<const UOp *> known(loops.begin(), loops.end());
  known.insert(ranges.begin(), ranges.end());
  std::vector<const UOp *> loads = stridedRowLoads(nodes, ranges.back(), loops.front(), known);
  if (loads.empty() || int64_t(loads.size()) > tile.rows ||
      std::any_of(loads.begin(), loads.end(), [&](const UOp *l) { return l->dtype() != loads[0]->dtype(); }))
    return tiled;

  // table[(loops the loads depend on..., reduction ranges...) * rows + row]
  std::vector<const UOp *> layout;
  for (const UOp *l : loops)
    if (std::any_of(loads.begin(), loads.end(), [&](const UOp *x) { return dependsOn(x, l); })) layout.push_back(l);
  layout.insert(layout.end(), ranges.begin(), ranges.end());
  int64_t rows = int64_t(loads.size()), elements = rows;
  for (const UOp *r : layout) elements *= *tripCount(r);
  if (elements > kMaxRowPackElements || !tableFillsPay(threadsWork(tiled, tile), elements)) return tiled;

  Context &ctx = tiled->context();
  const UOp *table = localBuffer(loads[0]->src(0), elements, freeLocalSlot(toposort(tiled)));
  int64_t axis = maxAxisId(tiled);
  std::unordered_map<const UOp *, const UOp *> fresh;
  std::vector<const UOp *> fillLoops;
  for (const UOp *r : layout) fillLoops.push_back(fresh[r] = newRangeLike(loops.front(), *tripCount(r), ++axis));
  auto at = [&](std::span<const UOp *const> over, int64_t row) {
    const UOp *flat = rowMajorIndex(over);
    const UOp *n = ctx.get(Op::CONST, flat->dtype(), {}, tgc::Value::integer(rows));
    const UOp *i = ctx.get(Op::CONST, flat->dtype(), {}, tgc::Value::integer(row));
    return ctx.get(Op::INDEX, loads[0]->dtype(), {table, ctx.get(Op::ADD, flat->dtype(), {ctx.get(Op::MUL, flat->dtype(), {flat, n}), i})});
  };
  std::vector<const UOp *> fills;
  std::unordered_map<const UOp *, const UOp *> fromTable;
  for (int64_t row = 0; row < rows; ++row) {
    fills.push_back(ctx.get(Op::STORE, dtypes::Void, {at(fillLoops, row), substitute(loads[size_t(row)], fresh)}));
    fromTable[loads[size_t(row)]] = at(layout, row);
  }
  std::vector<const UOp *> fillSrc{ctx.get(Op::GROUP, dtypes::Void, fills)};
  fillSrc.insert(fillSrc.end(), fillLoops.begin(), fillLoops.end());
  const UOp *fill = ctx.get(Op::END, end->dtype(), fillSrc, end->arg());

  std::vector<const UOp *> tileSrc{substitute(end->src(0), fromTable)};
  tileSrc.insert(tileSrc.end(), loops.begin(), loops.end());
  const UOp *body = ctx.get(Op::GROUP, dtypes::Void, {fill, ctx.get(Op::END, end->dtype(), tileSrc, end->arg())});
  tile.packedRows = true;
  return ctx.get(Op::SINK, tiled->dtype(), {body}, tiled->arg(), tiled->tag());
}

} // namespace tgc::codegen
