//===- MatmulTiling.cpp - register tiles for matmul-like kernels ----------===//
//
// See MatmulTiling.h. Mirrors the upcast choices of tinygrad's
// hand_coded_optimizations (codegen/opt/heuristic.py) without its search:
// the tile size is fixed by the vector width of the target (16 floats for
// AVX-512, two vectors per tile row, eight rows).
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/ParallelLoop.h"

#include <set>
#include <unordered_map>

namespace tgc::codegen {

namespace {

// The range an index adds with coefficient 1: a direct addend of its tree of
// ADDs (idx = (... + r) + ...).
const UOp *unitStrideRange(const UOp *idx, const std::vector<const UOp *> &candidates) {
  if (std::find(candidates.begin(), candidates.end(), idx) != candidates.end()) return idx;
  if (!idx->is(Op::ADD) || idx->numSrc() != 2) return nullptr;
  for (const UOp *s : idx->src())
    if (const UOp *r = unitStrideRange(s, candidates)) return r;
  return nullptr;
}

} // namespace

bool isPlainLoopNest(const UOp *sink) {
  if (!sink->is(Op::SINK) || sink->numSrc() != 1) return false;
  const UOp *end = sink->src(0);
  return end->is(Op::END) && end->numSrc() >= 2 && end->src(0)->is(Op::STORE) && end->src(1)->is(Op::RANGE);
}

bool isTranscendental(const UOp *u) { return u->is(Op::EXP2) || u->is(Op::LOG2) || u->is(Op::SIN) || u->is(Op::POW); }

bool transcendentalInReduce(const UOp *sink) {
  for (const UOp *n : toposort(sink))
    if (n->is(Op::REDUCE))
      for (const UOp *x : toposort(n->src(0)))
        if (isTranscendental(x) && x->dtype().isFloat()) return true;
  return false;
}

int64_t maxAxisId(const UOp *sink) {
  int64_t m = 0;
  for (const UOp *u : toposort(sink))
    if (u->is(Op::RANGE) && u->arg().isTuple() && u->arg().size() > 0 && u->arg()[0].isInt()) m = std::max(m, u->arg()[0].getInt());
  return m;
}

const UOp *newRangeLike(const UOp *like, int64_t n, int64_t axis) {
  const tgc::Value &arg = like->arg();
  std::vector<tgc::Value> items;
  for (size_t i = 0; arg.isTuple() && i < arg.size(); ++i) items.push_back(i == 0 ? tgc::Value::integer(axis) : arg[i]);
  Context &ctx = like->context();
  return ctx.get(Op::RANGE, like->dtype(), {ctx.get(Op::CONST, like->src(0)->dtype(), {}, tgc::Value::integer(n))},
                 tgc::Value::tuple(items));
}

bool isLocalBuffer(const UOp *buf) {
  if (!buf->is(Op::PARAM)) return false;
  const tgc::Value *as = buf->arg().field("addrspace");
  return as && as->kind() == tgc::Value::Kind::Enum && as->str() == "LOCAL";
}

std::unordered_set<const UOp *> storedBuffers(std::span<const UOp *const> nodes) {
  std::unordered_set<const UOp *> out;
  for (const UOp *u : nodes)
    if (u->is(Op::STORE) && u->numSrc() == 2 && u->src(0)->is(Op::INDEX)) out.insert(u->src(0)->src(0));
  return out;
}

const UOp *globalBufferOf(std::span<const UOp *const> nodes, DType dt) {
  for (const UOp *u : nodes)
    if (u->is(Op::PARAM) && u->dtype() == dt && !isLocalBuffer(u)) return u;
  return nullptr;
}

const UOp *localBuffer(const UOp *like, int64_t elements, int64_t slot) {
  const tgc::Value &arg = like->arg();
  std::vector<tgc::Value> items = arg.items();
  const std::vector<std::string> &names = arg.fieldNames();
  for (size_t i = 0; i < names.size() && i < items.size(); ++i) {
    if (names[i] == "addrspace") items[i] = tgc::Value::enumMember("AddrSpace", "LOCAL");
    if (names[i] == "slot") items[i] = tgc::Value::integer(slot);
  }
  Context &ctx = like->context();
  return ctx.get(Op::PARAM, like->dtype(), {ctx.get(Op::CONST, dtypes::WeakInt, {}, tgc::Value::integer(elements))},
                 tgc::Value::object(arg.cls(), names, items));
}

const UOp *rowMajorIndex(std::span<const UOp *const> ranges, const UOp *start) {
  const UOp *flat = start;
  for (const UOp *r : ranges) {
    if (!flat) {
      flat = r;
      continue;
    }
    Context &ctx = r->context();
    const UOp *n = ctx.get(Op::CONST, r->dtype(), {}, tgc::Value::integer(*tripCount(r)));
    flat = ctx.get(Op::ADD, r->dtype(), {ctx.get(Op::MUL, r->dtype(), {flat, n}), r});
  }
  return flat;
}

ColumnTiles columnTiles(int64_t n, int64_t requested, bool overlap) {
  ColumnTiles t{n, 0, 0, false};
  for (int64_t c = requested; c >= kMinExactColumns; c /= 2)
    if (n % c == 0) return t.columns = c, t.tiles = n / c, t;
  for (int64_t c = requested; c >= kMinTileColumns; c /= 2) {
    int64_t tiles = (n + c - 1) / c;
    if (n % c == 0) return t.columns = c, t.tiles = tiles, t;
    if (overlap && tiles >= 2 && (c <= kMinExactColumns || tiles >= kMinColumnTiles) &&
        double(tiles * c - n) <= kMaxOverlapWaste * double(tiles * c))
      return t.columns = c, t.tiles = tiles, t.overlaps = true, t;
  }
  return t;
}

const UOp *tileMatmul(const UOp *sink, const KernelOptions &opts, MatmulTile tile, MatmulTile *chosen) {
  if (chosen) *chosen = MatmulTile{0, 0, 0, false};
  if (!opts.tileMatmul || !sink->is(Op::SINK) || sink->numSrc() != 1) return sink;
  if (int64_t work = kernelLoopWork(sink); work >= 0 && work < opts.tileMinWork) return sink;
  const UOp *end = sink->src(0);
  if (!end->is(Op::END) || end->numSrc() < 2 || !end->src(0)->is(Op::STORE)) return sink;
  const UOp *st = end->src(0);
  if (st->numSrc() != 2 || !st->src(0)->is(Op::INDEX) || st->src(0)->numSrc() != 2) return sink;
  const UOp *idx = st->src(0)->src(1), *value = st->src(1);
  if (idx->is(Op::WHERE)) return sink; // gated store
  std::vector<const UOp *> ranges(end->src().begin() + 1, end->src().end());

  const UOp *col = unitStrideRange(idx, ranges);
  if (!col) return sink;
  auto colN = tripCount(col);
  if (!colN) return sink;
  // The widest column tile that divides the axis, or else one whose last
  // tile overlaps the one before (ColumnTiles).
  const int64_t requestedColumns = tile.columns, accumulators = tile.rows * tile.columns;
  ColumnTiles colTiles = columnTiles(*colN, tile.columns, opts.overlapTiles);
  tile.columns = colTiles.columns;
  if (!tile.columns) return sink;
  bool overlaps = colTiles.overlaps;

  // A tile pays when the columns make a reduction's loads contiguous (a load
  // with unit stride in the column axis); a row-wise reduction (sum over the
  // last axis) would instead read one strided row per accumulator.
  // The load must also move with the reduction (not a per-row value such as
  // a mean read inside a variance).
  auto contiguousLoad = [&](const UOp *red) -> const UOp * {
    for (const UOp *n : toposort(red->src(0))) {
      if (!n->is(Op::INDEX) || n->numSrc() != 2) continue;
      const UOp *i = n->src(1)->is(Op::WHERE) && n->src(1)->numSrc() == 3 ? n->src(1)->src(1) : n->src(1);
      bool streams = false;
      for (size_t k = 1; k < red->numSrc(); ++k) streams |= dependsOn(i, red->src(k));
      if (streams && unitStrideRange(i, {col}) == col) return n;
    }
    return nullptr;
  };
  // Otherwise the operand may be transposed (x @ W.T, nn.Linear: W[j, k] is
  // contiguous along the reduction k, one row of W per column j): a
  // reduction's load that moves with the columns and steps by one element
  // along its innermost range k. Read in place, every column of the tile
  // would be a separate row of W; the tile reads it from the packed panel
  // instead, which the pack loop transposes (below), or, over a few rows, is
  // a tile of dot products. A load that also moves with other output loops
  // (attention's q @ k.T: k's rows per head) is packed per panel of each of
  // them, or is a tile of dot products; not when the summand has a
  // transcendental (softmax(S) @ V), which the untiled kernel evaluates into
  // a table once (HoistInvariant.h).
  auto transposedLoad = [&](const UOp *red) -> const UOp * {
    if (red->numSrc() < 2) return nullptr;
    auto reduceRanges = red->src().subspan(1);
    const UOp *k = reduceRanges.back();
    bool costlySummand = false;
    for (const UOp *n : toposort(red->src(0))) costlySummand |= isTranscendental(n);
    for (const UOp *n : toposort(red->src(0))) {
      if (!n->is(Op::INDEX) || n->numSrc() != 2 || n->src(1)->is(Op::WHERE)) continue;
      bool onlyReduceAndCol = true;
      for (const UOp *x : toposort(n->src(1)))
        if (x->is(Op::RANGE) && x != col && std::find(reduceRanges.begin(), reduceRanges.end(), x) == reduceRanges.end())
          onlyReduceAndCol = false;
      if ((onlyReduceAndCol || !costlySummand) && dependsOn(n->src(1), col) && unitStrideRange(n->src(1), {k}) == k)
        return n;
    }
    return nullptr;
  };
  // The first float REDUCE that depends on the columns and has such a load.
  const UOp *colLoad = nullptr;
  auto firstReduce = [&](auto findLoad) -> const UOp * {
    for (const UOp *u : toposort(value))
      if (u->is(Op::REDUCE) && u->dtype().isFloat() && dependsOn(u->src(0), col) && (colLoad = findLoad(u))) return u;
    return nullptr;
  };
  const UOp *red = firstReduce(contiguousLoad);
  bool transposed = false;
  if (!red && opts.packMatmulPanel && (red = firstReduce(transposedLoad))) transposed = true;
  if (!red) return sink;
  // A short reduction is left untiled: LLVM unrolls the tile's reduction loop
  // completely and SLP turns the unrolled FMAs into shuffles and spills (k3's
  // weight updates over 16 tokens: a 17 KiB stack frame, 1.25x slower tiled).
  int64_t reduceTrips = 1;
  for (size_t i = 1; i < red->numSrc(); ++i) reduceTrips *= tripCount(red->src(i)).value_or(kMinTileReduction);
  if (reduceTrips < kMinTileReduction) return sink;
  // The row axis: one the reduction depends on whose tile divides, preferably
  // one the contiguous load does not move with, so every row of the tile
  // reuses the loaded columns (matmul: A's rows; conv2d: the output channels,
  // not the image rows, whose windows overlap). Otherwise the innermost such
  // axis; a vector-times-matrix kernel has none.
  // Narrower columns get more rows (as many accumulators, so as many
  // independent FMA chains), at most 16: with two 512-bit vectors per row
  // (8 rows) or one 256-bit vector (16 rows) that is 16 of the 32 vector
  // registers, the rest hold the loaded columns and broadcasts. Halved down
  // to 4 rows (or the requested rows, if fewer) when none divide.
  const UOp *row = nullptr;
  int64_t rows = std::min<int64_t>(16, tile.rows * requestedColumns / tile.columns);
  for (; !row && rows >= std::min<int64_t>(tile.rows, 4); rows /= 2)
    for (bool reuse : {true, false}) {
      for (const UOp *r : ranges) {
        auto n = tripCount(r);
        if (r != col && n && *n % rows == 0 && dependsOn(red->src(0), r) && (!reuse || !dependsOn(colLoad, r))) row = r;
      }
      if (row) {
        tile.rows = rows;
        break;
      }
    }
  if (!row) tile.rows = 1;
  // A vector-times-matrix kernel (x[k] @ W[k, j], a column sum) has no rows
  // to hold the tile's accumulators: its columns take them all (the 8 x 32
  // of a matrix tile are 256 columns), while 16 column tiles remain for the
  // threads. Each step of the reduction then reads a whole 1 KiB of a row of
  // W instead of two cache lines a matrix row apart, which the hardware
  // prefetchers follow: matvec_4096's kernel 4.4 -> 1.3 ms.
  if (!row && !transposed && !overlaps)
    while (tile.columns * 2 <= accumulators && *colN % (tile.columns * 2) == 0 &&
           *colN / (tile.columns * 2) >= kMinColumnTiles)
      tile.columns *= 2;
  std::vector<const UOp *> nodes = toposort(sink);
  std::set<const UOp *> loaded;
  for (const UOp *u : nodes)
    if (u->is(Op::INDEX) && u != st->src(0)) loaded.insert(u->src(0));
  if (loaded.count(st->src(0)->src(0))) return sink;

  Context &ctx = sink->context();
  int64_t axis = maxAxisId(sink);
  auto constLike = [&](const UOp *like, int64_t v) { return ctx.get(Op::CONST, like->dtype(), {}, tgc::Value::integer(v)); };
  auto newRange = [&](const UOp *like, int64_t n) { return newRangeLike(like, n, ++axis); };
  auto split = [&](const UOp *r, int64_t factor) { return newRange(r, *tripCount(r) / factor); };
  auto at = [&](const UOp *outer, int64_t factor, int64_t i) {
    const UOp *scaled = ctx.get(Op::MUL, outer->dtype(), {outer, constLike(outer, factor)});
    return ctx.get(Op::ADD, outer->dtype(), {scaled, constLike(outer, i)});
  };

  // Cache blocking of the reduction (not under strict fp: the partial sums
  // of each block are added to the output, a different order): the reduce
  // range k becomes ko (an output loop between the column panel and the row
  // tiles) and ki (the REDUCE), and the STORE adds to what earlier blocks
  // left in the output, so each block of the column panel is reused by every
  // row tile while it is in cache.
  const UOp *ko = nullptr;
  if (value->is(Op::REDUCE) && value->numSrc() == 2 && value->dtype().isFloat() && value->arg().isTuple() &&
      value->arg().size() == 2 && value->arg()[0].isEnum("Ops") && value->arg()[0].str() == "ADD" && !opts.strictFP) {
    const UOp *k = value->src(1);
    auto kN = tripCount(k);
    // (an overlapped column would add its partial sums twice)
    if (kN && !overlaps && tile.reduceBlock > 0 && *kN >= 2 * tile.reduceBlock && *kN % tile.reduceBlock == 0) {
      ko = newRange(col, *kN / tile.reduceBlock);
      const UOp *ki = newRange(k, tile.reduceBlock);
      const UOp *kAt = ctx.get(Op::ADD, k->dtype(), {ctx.get(Op::MUL, k->dtype(), {ko, constLike(k, tile.reduceBlock)}), ki});
      const UOp *part = ctx.get(Op::REDUCE, value->dtype(), {substitute(value->src(0), {{k, kAt}}), ki}, value->arg());
      const UOp *later = ctx.get(Op::CMPLT, dtypes::Bool, {constLike(ko, 0), ko});
      const UOp *gated = ctx.get(Op::WHERE, idx->dtype(), {later, idx, ctx.get(Op::CONST, dtypes::Bool, {}, tgc::Value::invalid())});
      const UOp *earlier = ctx.get(Op::INDEX, st->src(0)->dtype(), {st->src(0)->src(0), gated});
      st = ctx.get(Op::STORE, st->dtype(), {st->src(0), ctx.get(Op::ADD, value->dtype(), {earlier, part})}, st->arg(), st->tag());
    }
  }
  // The column panel loop is outermost when it has enough iterations to be
  // split evenly over threads; otherwise (conv2d: 7 tiles of 8 columns) it
  // stays where the column axis was.
  bool panelOuter = colTiles.tiles >= kMinColumnTiles;

  // Packing the panel: with the panel loop outermost, the contiguous operand
  // of a single-range reduction (matmul's B[k, j]) is copied once per panel
  // into a kernel-local buffer P[k][jj] that the row tiles then read
  // sequentially. Read in place, the panel's rows are one matrix row apart
  // (4 KiB for 1024 columns): they share a few cache sets and a page each, so
  // the panel does not stay in L1/L2 however it is blocked.
  auto kN = red->numSrc() == 2 ? tripCount(red->src(1)) : std::nullopt;
  int64_t rowTiles = row ? *tripCount(row) / tile.rows : 0;
  // A transposed operand that also moves with other output loops (attention's
  // k[h, j, d] in q @ k.T, per head h) is packed per panel of each of them:
  // those loops go outside the panel loop, around the pack.
  bool packs = false;
  std::vector<const UOp *> panelRanges;
  if (opts.packMatmulPanel && panelOuter && !ko && kN && *kN * tile.columns * 4 <= kMaxPanelBytes && rowTiles >= 4 &&
      colLoad->dtype().itemsize() == 4 && !colLoad->src(1)->is(Op::WHERE)) {
    packs = true;
    for (const UOp *n : toposort(colLoad->src(1))) {
      if (!n->is(Op::RANGE) || n == red->src(1) || n == col) continue;
      bool outputLoop = std::find(ranges.begin(), ranges.end(), n) != ranges.end() && n != row;
      if (transposed && outputLoop) panelRanges.push_back(n);
      else packs = false;
    }
    // (Only over kMinColumnTiles panels or more, panelOuter: the perf
    // transformer block's q @ k.T, 8 panels of 32 keys per head, ran 13x
    // slower packed, 0.45 -> 5.7 ms.)
    // A transposed tile whose stored value also compares along the columns
    // (attention's causal mask: WHERE(i < j, -inf, score)) is left to the
    // dot-product tile: packed, LLVM kept its reduction scalar with the tile
    // spilled (8 x 512 x 512 x 64 q @ k.T, masked: 22-25 ms packed, 2.3-2.5
    // as dot products, 0.75-0.79 packed unmasked).
    if (packs && transposed)
      for (const UOp *u : toposort(value))
        if (u->isIn(group::Comparison) && dependsOn(u, col) && !dependsOn(red->src(0), u)) packs = false;
    if (!packs) panelRanges.clear();
  }
  if (transposed && !packs) {
    // Too few row tiles to pack (nn.Linear over a few tokens): a small tile
    // of dot products instead. Every load of it steps along the reduction k,
    // so the lowering lets the loop vectorizer take k (ReduceToMLIR.cpp): one
    // vector accumulator per output of the tile, summed across lanes once
    // after the loop, each loaded vector of x shared by the tile's columns
    // and each of W by its rows. The sums are reassociated: not under strict fp.
    if (!opts.dotTiles || opts.strictFP) return sink;
    tile.columns = *colN % 4 == 0 ? 4 : *colN % 2 == 0 ? 2 : 1;
    if (row && *tripCount(row) % 4 == 0) tile.rows = 4;
    else row = nullptr, tile.rows = 1;
    if (!row && *colN % 8 == 0) tile.columns = 8;
    if (tile.rows * tile.columns < 4) return sink;
    overlaps = false;
    panelOuter = *colN / tile.columns >= kMinColumnTiles;
    tile.alongReduction = true;
  }
  // Wide panels: a packed panel of up to kMaxSubPanels column tiles, and each
  // row tile runs over all of them (an output loop inside the row tiles), so
  // the row tile's rows of the other operand (matmul's A, one matrix row
  // apart, streamed from beyond L2 once per panel) are read from L1 by the
  // later column tiles. Only while the panel fits kMaxPanelBytes and enough
  // panels remain to split over threads.
  int64_t subPanels = 1;
  while (packs && opts.widePanels && subPanels < kMaxSubPanels && *colN % (tile.columns * subPanels * 2) == 0 &&
         *colN / (tile.columns * subPanels * 2) >= kMinWidePanels && *kN * tile.columns * subPanels * 2 * 4 <= kMaxPanelBytes)
    subPanels *= 2;
  const int64_t panelColumns = tile.columns * subPanels;
  const UOp *colOuter = overlaps ? newRange(col, colTiles.tiles) : split(col, panelColumns), *rowOuter = row ? split(row, tile.rows) : nullptr;
  const UOp *sub = subPanels > 1 ? newRange(col, subPanels) : nullptr; // the column tile within a wide panel
  // The first column of a tile: colOuter * panelColumns (+ sub * columns),
  // or with overlapping tiles min(colOuter * columns, n - columns) (they
  // take no wide panels: n is no multiple of the width).
  auto tileStart = [&](const UOp *s) {
    const UOp *start = ctx.get(Op::MUL, col->dtype(), {colOuter, constLike(col, panelColumns)});
    if (overlaps) {
      const UOp *last = constLike(col, *colN - tile.columns);
      return ctx.get(Op::WHERE, col->dtype(), {ctx.get(Op::CMPLT, dtypes::Bool, {start, last}), start, last});
    }
    return s ? ctx.get(Op::ADD, col->dtype(), {start, ctx.get(Op::MUL, col->dtype(), {s, constLike(col, tile.columns)})}) : start;
  };

  const UOp *pack = nullptr, *column = nullptr; // the pack loop nest; the placeholder of the tile column
  if (packs) {
    const UOp *k = red->src(1);
    const UOp *buf = localBuffer(colLoad->src(0), *kN * panelColumns);
    const UOp *kp = newRange(col, *kN), *jp = newRange(col, tile.columns), *sp = sub ? newRange(col, subPanels) : nullptr;
    column = newRange(col, tile.columns);
    // P[(s * K + k) * columns + jj]: each column tile's K x columns block is contiguous.
    auto packedAt = [&](const UOp *s, const UOp *kk, const UOp *jj) {
      const UOp *flat = ctx.get(Op::ADD, kk->dtype(), {ctx.get(Op::MUL, kk->dtype(), {kk, constLike(kk, tile.columns)}), jj});
      if (s) flat = ctx.get(Op::ADD, kk->dtype(), {ctx.get(Op::MUL, kk->dtype(), {s, constLike(kk, *kN * tile.columns)}), flat});
      return ctx.get(Op::INDEX, colLoad->dtype(), {buf, flat});
    };
    const UOp *copy = substitute(colLoad, {{k, kp}, {col, ctx.get(Op::ADD, col->dtype(), {tileStart(sp), jp})}});
    std::vector<const UOp *> packSrc{ctx.get(Op::STORE, st->dtype(), {packedAt(sp, kp, jp), copy})};
    if (sp) packSrc.push_back(sp);
    // The pack loop runs along the operand's contiguous axis: the columns
    // (jj innermost), or for a transposed operand k, each column j one row
    // of W read sequentially.
    if (transposed) packSrc.push_back(jp), packSrc.push_back(kp);
    else packSrc.push_back(kp), packSrc.push_back(jp);
    pack = ctx.get(Op::END, end->dtype(), packSrc, end->arg());
    st = substitute(st, {{colLoad, packedAt(sub, k, column)}});
  }
  std::vector<const UOp *> stores;
  const UOp *firstColumn = tileStart(sub);
  for (int64_t i = 0; i < tile.rows; ++i)
    for (int64_t j = 0; j < tile.columns; ++j) {
      std::unordered_map<const UOp *, const UOp *> at_{{col, ctx.get(Op::ADD, col->dtype(), {firstColumn, constLike(col, j)})}};
      if (row) at_[row] = at(rowOuter, tile.rows, i);
      if (column) at_[column] = constLike(column, j);
      stores.push_back(substitute(st, at_));
    }
  std::vector<const UOp *> endSrc{ctx.get(Op::GROUP, st->dtype(), stores)};
  if (panelOuter && !pack) endSrc.push_back(colOuter);
  if (ko) endSrc.push_back(ko);
  for (const UOp *r : ranges) {
    if (std::find(panelRanges.begin(), panelRanges.end(), r) != panelRanges.end()) continue; // around the pack
    if (r != col) endSrc.push_back(r == row ? rowOuter : r);
    else if (!panelOuter) endSrc.push_back(colOuter);
  }
  if (sub) endSrc.push_back(sub); // innermost output loop: a row tile runs over the panel's column tiles
  const UOp *newEnd = ctx.get(Op::END, end->dtype(), endSrc, end->arg());
  if (pack) { // END(GROUP(pack nest, row tiles), the panel ranges, panel)
    std::vector<const UOp *> outer{ctx.get(Op::GROUP, st->dtype(), {pack, newEnd})};
    outer.insert(outer.end(), panelRanges.begin(), panelRanges.end());
    outer.push_back(colOuter);
    newEnd = ctx.get(Op::END, end->dtype(), outer, end->arg());
  }
  if (chosen) *chosen = tile;
  return ctx.get(Op::SINK, sink->dtype(), {newEnd}, sink->arg(), sink->tag());
}

// The loop work of the kernel as tiled: the fills that hoistInvariant and
// splitEpilogue add repeat loops it has. An iteration of a register tile is
// rows x columns FMAs, 16 to a vector, where an untiled iteration is about one
// vector op: counted as its vector FMAs (before, a tile counted as one, and matmuls up to 256^3 ran on one core:
// matmul_128 19.7 -> 12.4 us and matmul_256 158 -> 81 us on two; matmul_64 stays
// on one, 2.5 us, where waking the pool costs more than it saves).
int64_t threadsWork(const UOp *tiled, const MatmulTile &tile) {
  int64_t work = kernelLoopWork(tiled);
  int64_t perIteration = tile.columns > 0 ? std::max<int64_t>(1, tile.rows * tile.columns / 16) : 1;
  if (work <= 0) return work;
  return work > (int64_t(1) << 62) / perIteration ? int64_t(1) << 62 : work * perIteration;
}

} // namespace tgc::codegen
