//===- MatmulTiling.cpp - register tiles for matmul-like kernels ----------===//
//
// See MatmulTiling.h. Mirrors the upcast choices of tinygrad's
// hand_coded_optimizations (codegen/opt/heuristic.py) without its search:
// the tile size is fixed by the vector width of the target (16 floats for
// AVX-512, two vectors per tile row, eight rows).
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/FactorSums.h"
#include "Codegen/Opt/ParallelLoop.h"

#include <algorithm>
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

namespace {

// One register tiling of a kernel, decided a step at a time: each choose*
// method takes one decision from the ones before it (false: the kernel stays
// untiled), then the build* methods rewrite the kernel as decided.
class MatmulTiler {
public:
  MatmulTiler(const UOp *sink, const KernelOptions &opts, MatmulTile tile)
      : sink(sink), opts(opts), tile(tile), ctx(sink->context()) {}
  /// The tiled kernel, or null when it is left untiled.
  const UOp *run();
  /// The tile applied (valid after run() returned a kernel).
  const MatmulTile &applied() const { return tile; }

private:
  bool matchStore();
  bool chooseColumns();
  const UOp *contiguousLoad(const UOp *reduce) const;
  const UOp *transposedLoad(const UOp *reduce) const;
  template <typename FindLoad> const UOp *firstReduce(FindLoad findLoad);
  bool chooseReduction();
  const UOp *rowAxis(int64_t rows) const;
  void chooseRows();
  void widenVectorColumns();
  bool outputIsRead() const;
  bool columnsAllowDoubling(int64_t subPanels) const;
  void chooseReduceBlock();
  void blockReduction();
  void choosePacking();
  bool chooseDotTile();
  void chooseSubPanels();
  void buildOuterRanges();
  const UOp *constLike(const UOp *like, int64_t v) const { return ctx.get(Op::CONST, like->dtype(), {}, tgc::Value::integer(v)); }
  /// outer * innerN + inner: a row-major index of two levels.
  const UOp *flatIndex(const UOp *outer, const UOp *inner, int64_t innerN) const {
    return ctx.get(Op::ADD, inner->dtype(), {ctx.get(Op::MUL, inner->dtype(), {outer, constLike(inner, innerN)}), inner});
  }
  const UOp *newRange(const UOp *like, int64_t n) { return newRangeLike(like, n, ++axis); }
  const UOp *tileStart(const UOp *s) const;
  void buildPack();
  std::vector<const UOp *> buildStores(const UOp *store) const;
  const UOp *tileStore(const UOp *store, int64_t i, const UOp *j) const;
  std::vector<const UOp *> buildEpilogueTile() const;
  const UOp *blockNest(const UOp *store, bool withPanel) const;
  const UOp *buildNest() const;

  const UOp *sink;
  const KernelOptions &opts;
  MatmulTile tile;
  Context &ctx;
  // The kernel's one store: END(STORE(INDEX(buf, idx), value), ranges...).
  const UOp *end = nullptr, *st = nullptr, *idx = nullptr, *value = nullptr;
  std::vector<const UOp *> ranges;
  // The unit-stride column axis and its tiles.
  const UOp *col = nullptr;
  int64_t colN = 0, requestedColumns = 0, accumulators = 0;
  ColumnTiles colTiles;
  bool overlaps = false;
  // The reduction tiled, its load that moves with the columns, the row axis.
  const UOp *red = nullptr, *colLoad = nullptr, *row = nullptr;
  bool transposed = false;
  int64_t axis = 0; // the last axis id given to a new range
  // A blocked reduction: the loop over the blocks after the first (ko, the
  // block's index in the kernel as built, ko + 1 in the loop over them) and
  // the store of the first block, which does not read the output.
  const UOp *ko = nullptr, *firstSt = nullptr;
  bool panelOuter = false, packs = false;
  bool epilogueTile = false; // the tile's sums go to a kernel-local tile, its epilogue runs after (choosePacking)
  std::optional<int64_t> kN; // the trips of a single-range reduction
  std::vector<const UOp *> panelRanges; // output loops around a pack
  int64_t subPanels = 1, panelColumns = 0;
  const UOp *colOuter = nullptr, *rowOuter = nullptr, *sub = nullptr; // sub: the column tile within a wide panel
  const UOp *pack = nullptr, *column = nullptr; // the pack loop nest; the placeholder of the tile column
  const UOp *packedRed = nullptr; // red as the tile computes it, reading the packed panel
  const UOp *rowIn = nullptr, *columnIn = nullptr; // the loops of an epilogue tile's nest
};

const UOp *MatmulTiler::run() {
  if (!matchStore() || !chooseColumns() || !chooseReduction()) return nullptr;
  chooseRows();
  if (!row && !transposed && !overlaps) widenVectorColumns();
  if (outputIsRead()) return nullptr;
  axis = maxAxisId(sink);
  // The column panel loop is outermost when it has enough iterations to be
  // split evenly over threads; otherwise (conv2d: 7 tiles of 8 columns) it
  // stays where the column axis was.
  panelOuter = colTiles.tiles >= kMinColumnTiles;
  chooseReduceBlock();
  blockReduction();
  choosePacking();
  if (transposed && !packs && !chooseDotTile()) return nullptr;
  chooseSubPanels();
  tile.epilogueTile = epilogueTile;
  buildOuterRanges();
  if (packs) buildPack();
  return ctx.get(Op::SINK, sink->dtype(), {buildNest()}, sink->arg(), sink->tag());
}

// A kernel of one ungated store in a loop nest, with enough work to tile.
bool MatmulTiler::matchStore() {
  if (!opts.tileMatmul || !sink->is(Op::SINK) || sink->numSrc() != 1) return false;
  if (int64_t work = kernelLoopWork(sink); work >= 0 && work < opts.tileMinWork) return false;
  end = sink->src(0);
  if (!end->is(Op::END) || end->numSrc() < 2 || !end->src(0)->is(Op::STORE)) return false;
  st = end->src(0);
  if (st->numSrc() != 2 || !st->src(0)->is(Op::INDEX) || st->src(0)->numSrc() != 2) return false;
  idx = st->src(0)->src(1), value = st->src(1);
  if (idx->is(Op::WHERE)) return false; // gated store
  ranges.assign(end->src().begin() + 1, end->src().end());
  return true;
}

// The column axis: the range the store's index steps by one along. Its tile
// is the widest that divides the axis, or else one whose last tile overlaps
// the one before (ColumnTiles).
bool MatmulTiler::chooseColumns() {
  col = unitStrideRange(idx, ranges);
  if (!col) return false;
  auto n = tripCount(col);
  if (!n) return false;
  colN = *n;
  requestedColumns = tile.columns, accumulators = tile.rows * tile.columns;
  colTiles = columnTiles(colN, tile.columns, opts.overlapTiles);
  tile.columns = colTiles.columns;
  overlaps = colTiles.overlaps;
  return tile.columns != 0;
}

// A tile pays when the columns make a reduction's loads contiguous (a load
// with unit stride in the column axis); a row-wise reduction (sum over the
// last axis) would instead read one strided row per accumulator.
// The load must also move with the reduction (not a per-row value such as
// a mean read inside a variance).
const UOp *MatmulTiler::contiguousLoad(const UOp *reduce) const {
  for (const UOp *n : toposort(reduce->src(0))) {
    if (!n->is(Op::INDEX) || n->numSrc() != 2) continue;
    const UOp *i = n->src(1)->is(Op::WHERE) && n->src(1)->numSrc() == 3 ? n->src(1)->src(1) : n->src(1);
    bool streams = false;
    for (size_t k = 1; k < reduce->numSrc(); ++k) streams |= dependsOn(i, reduce->src(k));
    if (streams && unitStrideRange(i, {col}) == col) return n;
  }
  return nullptr;
}

// Otherwise the operand may be transposed (x @ W.T, nn.Linear: W[j, k] is
// contiguous along the reduction k, one row of W per column j): a
// reduction's load that moves with the columns and steps by one element
// along its innermost range k. Read in place, every column of the tile
// would be a separate row of W; the tile reads it from the packed panel
// instead, which the pack loop transposes (buildPack), or, over a few rows,
// is a tile of dot products. A load that also moves with other output loops
// (attention's q @ k.T: k's rows per head) is packed per panel of each of
// them, or is a tile of dot products; not when the summand has a
// transcendental (softmax(S) @ V), which the untiled kernel evaluates into
// a table once (HoistInvariant.h).
const UOp *MatmulTiler::transposedLoad(const UOp *reduce) const {
  if (reduce->numSrc() < 2) return nullptr;
  auto reduceRanges = reduce->src().subspan(1);
  const UOp *k = reduceRanges.back();
  bool costlySummand = false;
  for (const UOp *n : toposort(reduce->src(0))) costlySummand |= isTranscendental(n);
  for (const UOp *n : toposort(reduce->src(0))) {
    if (!n->is(Op::INDEX) || n->numSrc() != 2 || n->src(1)->is(Op::WHERE)) continue;
    bool onlyReduceAndCol = true;
    for (const UOp *x : toposort(n->src(1)))
      if (x->is(Op::RANGE) && x != col && std::find(reduceRanges.begin(), reduceRanges.end(), x) == reduceRanges.end())
        onlyReduceAndCol = false;
    if ((onlyReduceAndCol || !costlySummand) && dependsOn(n->src(1), col) && unitStrideRange(n->src(1), {k}) == k)
      return n;
  }
  return nullptr;
}

// The first float REDUCE that depends on the columns and has a load that
// findLoad accepts (left in colLoad).
template <typename FindLoad> const UOp *MatmulTiler::firstReduce(FindLoad findLoad) {
  for (const UOp *u : toposort(value))
    if (u->is(Op::REDUCE) && u->dtype().isFloat() && dependsOn(u->src(0), col) && (colLoad = findLoad(u))) return u;
  return nullptr;
}

bool MatmulTiler::chooseReduction() {
  red = firstReduce([&](const UOp *r) { return contiguousLoad(r); });
  if (!red && opts.packMatmulPanel && (red = firstReduce([&](const UOp *r) { return transposedLoad(r); })))
    transposed = true;
  if (!red) return false;
  // A short reduction is left untiled: LLVM unrolls the tile's reduction loop
  // completely and SLP turns the unrolled FMAs into shuffles and spills (k3's
  // weight updates over 16 tokens: a 17 KiB stack frame, 1.25x slower tiled).
  int64_t reduceTrips = 1;
  for (size_t i = 1; i < red->numSrc(); ++i) reduceTrips *= tripCount(red->src(i)).value_or(kMinTileReduction);
  return reduceTrips >= kMinTileReduction;
}

// The row axis for a tile of `rows` rows: one the reduction depends on whose
// tile divides, preferably one the contiguous load does not move with, so
// every row of the tile reuses the loaded columns (matmul: A's rows; conv2d:
// the output channels, not the image rows, whose windows overlap). Otherwise
// the innermost such axis.
const UOp *MatmulTiler::rowAxis(int64_t rows) const {
  for (bool reuse : {true, false}) {
    const UOp *found = nullptr;
    for (const UOp *r : ranges) {
      auto n = tripCount(r);
      if (r != col && n && *n % rows == 0 && dependsOn(red->src(0), r) && (!reuse || !dependsOn(colLoad, r))) found = r;
    }
    if (found) return found;
  }
  return nullptr;
}

// Narrower columns get more rows (as many accumulators, so as many
// independent FMA chains), at most 16: with two 512-bit vectors per row
// (8 rows) or one 256-bit vector (16 rows) that is 16 of the 32 vector
// registers, the rest hold the loaded columns and broadcasts. Halved down
// to 4 rows (or the requested rows, if fewer) when none divide; a
// vector-times-matrix kernel has no row axis (one row).
void MatmulTiler::chooseRows() {
  const int64_t fewest = std::min<int64_t>(tile.rows, 4);
  for (int64_t rows = std::min<int64_t>(16, tile.rows * requestedColumns / tile.columns); rows >= fewest; rows /= 2)
    if ((row = rowAxis(rows))) {
      tile.rows = rows;
      return;
    }
  tile.rows = 1;
}

// A vector-times-matrix kernel (x[k] @ W[k, j], a column sum) has no rows
// to hold the tile's accumulators: its columns take them all (the 8 x 32
// of a matrix tile are 256 columns), while 16 column tiles remain for the
// threads. Each step of the reduction then reads a whole 1 KiB of a row of
// W instead of two cache lines a matrix row apart, which the hardware
// prefetchers follow: matvec_4096's kernel 4.4 -> 1.3 ms.
void MatmulTiler::widenVectorColumns() {
  while (tile.columns * 2 <= accumulators && colN % (tile.columns * 2) == 0 && colN / (tile.columns * 2) >= kMinColumnTiles)
    tile.columns *= 2;
}

// Whether the kernel also reads the buffer it stores to (the tile would
// reorder those reads and writes).
bool MatmulTiler::outputIsRead() const {
  std::set<const UOp *> loaded;
  for (const UOp *u : toposort(sink))
    if (u->is(Op::INDEX) && u != st->src(0)) loaded.insert(u->src(0));
  return loaded.count(st->src(0)->src(0)) != 0;
}

// Whether the columns allow a wide panel of twice `subPanels` column tiles:
// within kMaxSubPanels, dividing the columns, with kMinWidePanels panels left
// for the threads (the pack budget aside).
bool MatmulTiler::columnsAllowDoubling(int64_t subPanels) const {
  int64_t columns = tile.columns * subPanels * 2;
  return subPanels < kMaxSubPanels && colN % columns == 0 && colN / columns >= kMinWidePanels;
}

// The reduction's block, unless one was requested: blocked only where the
// full reduction's panel cannot be wide (K x 2 column tiles exceed
// kMaxPanelBytes: matmul_2048's K of 2048) but the columns allow wide
// panels; then into the fewest blocks (K/2, K/4, ... of at least
// kMinReduceBlock steps) whose panel holds two column tiles. Unblocked,
// every 32-column panel streams all of A again (1 GiB of A per 2048^3
// product); in blocks, a row tile's block of A is read again from cache by
// the panel's other column tiles. Each block after the first reads the
// output's partial sums back from beyond L2 after the tile's loop: 2
// blocks of 1024 spent ~3% of matmul_2048's kernel there, 4 blocks of 512
// (a panel of 4 column tiles) ~10% and ran slower than unblocked.
void MatmulTiler::chooseReduceBlock() {
  if (tile.reduceBlock > 0 || !opts.reduceBlocks || !opts.packMatmulPanel || !opts.widePanels || !panelOuter ||
      overlaps || !row || red != value || red->numSrc() != 2 || colLoad->dtype().itemsize() != 4)
    return;
  auto k = tripCount(red->src(1));
  int64_t wideBytes = tile.columns * 2 * colLoad->dtype().itemsize(); // per step of a panel of two column tiles
  if (!k || !columnsAllowDoubling(1) || *k * wideBytes <= kMaxPanelBytes) return;
  for (int64_t blocks = 2; *k % blocks == 0 && *k / blocks >= kMinReduceBlock; blocks *= 2)
    if (*k / blocks * wideBytes <= kMaxPanelBytes) {
      tile.reduceBlock = *k / blocks;
      return;
    }
}

// Cache blocking of the reduction (not under strict fp: the partial sums
// of each block are added to the output, a different order): the reduce
// range k becomes ko (an output loop inside the column panel, around its
// pack and row tiles) and ki (the REDUCE). The first block's nest, peeled
// off the loop, stores its sums; the later ones add theirs to the output
// (buildNest). (A select of the two on ko == 0, or a read of the output
// gated by ko > 0, kept SLP from vectorizing the tile's stores: its sums
// were shuffled lane by lane.)
void MatmulTiler::blockReduction() {
  if (tile.reduceBlock <= 0) return;
  const UOp *k = value->src(1);
  std::optional<int64_t> n = value->numSrc() == 2 ? tripCount(k) : std::nullopt;
  // (an overlapped column would add its partial sums twice)
  if (!isFloatSum(value) || red != value || opts.strictFP || !panelOuter || !n || overlaps || *n < 2 * tile.reduceBlock ||
      *n % tile.reduceBlock != 0) {
    tile.reduceBlock = 0;
    return;
  }
  ko = newRange(col, *n / tile.reduceBlock - 1);
  const UOp *ki = newRange(k, tile.reduceBlock);
  const UOp *kAt = ctx.get(Op::ADD, k->dtype(), {ctx.get(Op::MUL, k->dtype(), {ko, constLike(k, tile.reduceBlock)}), ki});
  const UOp *part = ctx.get(Op::REDUCE, value->dtype(), {substitute(value->src(0), {{k, kAt}}), ki}, value->arg());
  colLoad = substitute(colLoad, {{k, kAt}});
  red = part;
  firstSt = ctx.get(Op::STORE, st->dtype(), {st->src(0), part}, st->arg(), st->tag());
  st = ctx.get(Op::STORE, st->dtype(), {st->src(0), ctx.get(Op::ADD, value->dtype(), {st->src(0), part})}, st->arg(), st->tag());
}

// Packing the panel: with the panel loop outermost, the contiguous operand
// of a single-range reduction (matmul's B[k, j]) is copied once per panel
// into a kernel-local buffer P[k][jj] that the row tiles then read
// sequentially. Read in place, the panel's rows are one matrix row apart
// (4 KiB for 1024 columns): they share a few cache sets and a page each, so
// the panel does not stay in L1/L2 however it is blocked.
// A transposed operand that also moves with other output loops (attention's
// k[h, j, d] in q @ k.T, per head h) is packed per panel of each of them:
// those loops go outside the panel loop, around the pack.
void MatmulTiler::choosePacking() {
  kN = red->numSrc() == 2 ? tripCount(red->src(1)) : std::nullopt;
  int64_t rowTiles = row ? *tripCount(row) / tile.rows : 0;
  if (!opts.packMatmulPanel || !kN || *kN * tile.columns * 4 > kMaxPanelBytes || rowTiles < 4 ||
      colLoad->dtype().itemsize() != 4 || colLoad->src(1)->is(Op::WHERE))
    return;
  packs = true;
  int64_t panels = colTiles.tiles;
  for (const UOp *n : toposort(colLoad->src(1))) {
    if (!n->is(Op::RANGE) || n == red->src(1) || n == col || n == ko) continue;
    bool outputLoop = std::find(ranges.begin(), ranges.end(), n) != ranges.end() && n != row;
    if (transposed && outputLoop) panelRanges.push_back(n), panels *= tripCount(n).value_or(1);
    else packs = false;
  }
  // The panels (with those of the loops around the pack: attention's heads)
  // must be enough to split over threads.
  packs = packs && (panelOuter || (!panelRanges.empty() && panels >= kMinColumnTiles));
  // A transposed tile whose stored value also compares along the columns
  // (attention's causal mask: score + (j <= i ? 0 : -inf)) stores its sums
  // into a kernel-local tile and evaluates the stored value in a loop nest
  // after it: kept with the sums, LLVM's SLP vectorizer left that value
  // scalar, extracting every sum from its accumulator (the tile's epilogue
  // then took as long as its 64-step reduction), or kept the reduction
  // itself scalar with the tile spilled (8 x 512 x 512 x 64 q @ k.T:
  // 22-25 ms packed, 2.3-2.5 as dot products, 0.75-0.79 packed unmasked).
  if (packs && transposed)
    for (const UOp *u : toposort(value))
      if (u->isIn(group::Comparison) && dependsOn(u, col) && !dependsOn(red->src(0), u)) epilogueTile = true;
  // (its sums are kept in a buffer typed like the panel's)
  if (epilogueTile && colLoad->dtype() != red->dtype()) packs = false;
  if (!packs) panelRanges.clear(), epilogueTile = false;
  else panelOuter = true;
}

// Too few row tiles to pack a transposed operand (nn.Linear over a few
// tokens): a small tile of dot products instead. Every load of it steps
// along the reduction k, so the lowering lets the loop vectorizer take k
// (ReduceToMLIR.cpp): one vector accumulator per output of the tile, summed
// across lanes once after the loop, each loaded vector of x shared by the
// tile's columns and each of W by its rows. The sums are reassociated: not
// under strict fp. A summand none of whose loads the tile's columns share
// gains nothing from it: with a transcendental (a softmax's sum of
// exp2(x[i, k] - m[i]) over each row) it spills its registers, a polynomial
// per output and step (4096 x 1024: 0.39-0.42 ms tiled, 0.33-0.35 untiled);
// a plain sum (sum_16m's rows of 256) reads its outputs' rows as several
// interleaved streams where the loop vectorizer reads one row after another
// (sum_16m's first stage 3.4-3.6 / 2.3-2.4 ms untiled on one / two threads,
// 5.5-5.9 / 3.1-3.6 ms as a 4 x 4 tile).
bool MatmulTiler::chooseDotTile() {
  if (!opts.dotTiles || opts.strictFP) return false;
  bool shared = false;
  for (const UOp *n : toposort(red->src(0))) shared |= n->is(Op::INDEX) && !dependsOn(n, col);
  if (!shared) return false;
  tile.columns = colN % 4 == 0 ? 4 : colN % 2 == 0 ? 2 : 1;
  if (row && *tripCount(row) % 4 == 0) tile.rows = 4;
  else row = nullptr, tile.rows = 1;
  if (!row && colN % 8 == 0) tile.columns = 8;
  if (tile.rows * tile.columns < 4) return false;
  overlaps = false;
  panelOuter = colN / tile.columns >= kMinColumnTiles;
  tile.alongReduction = true;
  return true;
}

// Wide panels: a packed panel of up to kMaxSubPanels column tiles, and each
// row tile runs over all of them (an output loop inside the row tiles), so
// the row tile's rows of the other operand (matmul's A, one matrix row
// apart, streamed from beyond L2 once per panel) are read from L1 by the
// later column tiles. Only while the panel fits kMaxPanelBytes and enough
// panels remain to split over threads.
void MatmulTiler::chooseSubPanels() {
  while (packs && opts.widePanels && columnsAllowDoubling(subPanels) && *kN * tile.columns * subPanels * 2 * 4 <= kMaxPanelBytes)
    subPanels *= 2;
  panelColumns = tile.columns * subPanels;
}

// The loops over panels, row tiles and the column tiles of a wide panel.
void MatmulTiler::buildOuterRanges() {
  colOuter = overlaps ? newRange(col, colTiles.tiles) : newRange(col, colN / panelColumns);
  rowOuter = row ? newRange(row, *tripCount(row) / tile.rows) : nullptr;
  sub = subPanels > 1 ? newRange(col, subPanels) : nullptr;
  if (epilogueTile) rowIn = newRange(row, tile.rows), columnIn = newRange(col, tile.columns);
}

// The first column of a tile: colOuter * panelColumns (+ s * columns), or
// with overlapping tiles min(colOuter * columns, n - columns) (they take no
// wide panels: n is no multiple of the width).
const UOp *MatmulTiler::tileStart(const UOp *s) const {
  const UOp *start = ctx.get(Op::MUL, col->dtype(), {colOuter, constLike(col, panelColumns)});
  if (overlaps) {
    const UOp *last = constLike(col, colN - tile.columns);
    return ctx.get(Op::WHERE, col->dtype(), {ctx.get(Op::CMPLT, dtypes::Bool, {start, last}), start, last});
  }
  return s ? ctx.get(Op::ADD, col->dtype(), {start, ctx.get(Op::MUL, col->dtype(), {s, constLike(col, tile.columns)})}) : start;
}

// The pack loop nest, and the store reading the packed panel instead of colLoad.
void MatmulTiler::buildPack() {
  const UOp *k = red->src(1);
  const UOp *buf = localBuffer(colLoad->src(0), *kN * panelColumns);
  const UOp *kp = newRange(col, *kN), *jp = newRange(col, tile.columns), *sp = sub ? newRange(col, subPanels) : nullptr;
  column = newRange(col, tile.columns);
  // P[(s * K + k) * columns + jj]: each column tile's K x columns block is contiguous.
  auto packedAt = [&](const UOp *s, const UOp *kk, const UOp *jj) {
    const UOp *flat = flatIndex(kk, jj, tile.columns);
    return ctx.get(Op::INDEX, colLoad->dtype(), {buf, s ? flatIndex(s, flat, *kN * tile.columns) : flat});
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
  const UOp *packed = packedAt(sub, k, column);
  st = substitute(st, {{colLoad, packed}});
  if (firstSt) firstSt = substitute(firstSt, {{colLoad, packed}});
  packedRed = substitute(red, {{colLoad, packed}});
}

// `store` at output (i, j) of the tile: row i (a constant, or with `rowIn`
// a range of the epilogue nest) and column j.
const UOp *MatmulTiler::tileStore(const UOp *store, int64_t i, const UOp *j) const {
  std::unordered_map<const UOp *, const UOp *> at{{col, ctx.get(Op::ADD, col->dtype(), {tileStart(sub), j})}};
  if (row) {
    const UOp *scaled = ctx.get(Op::MUL, rowOuter->dtype(), {rowOuter, constLike(rowOuter, tile.rows)});
    at[row] = ctx.get(Op::ADD, rowOuter->dtype(), {scaled, i >= 0 ? constLike(rowOuter, i) : rowIn});
  }
  if (column) at[column] = j;
  return substitute(store, at);
}

// `store` once per output of the tile, rows x columns of them.
std::vector<const UOp *> MatmulTiler::buildStores(const UOp *store) const {
  if (epilogueTile) return buildEpilogueTile();
  std::vector<const UOp *> stores;
  for (int64_t i = 0; i < tile.rows; ++i)
    for (int64_t j = 0; j < tile.columns; ++j) stores.push_back(tileStore(store, i, constLike(col, j)));
  return stores;
}

// The tile's sums into a kernel-local tile T[i][j] (the register tile), then
// the stored value over T in a loop nest of its own (rows x columns), which
// vectorizes along the columns (an epilogue tile is always packed: buildPack
// ran first).
std::vector<const UOp *> MatmulTiler::buildEpilogueTile() const {
  const UOp *sums = localBuffer(colLoad->src(0), tile.rows * tile.columns, 1);
  auto sumAt = [&](const UOp *i, const UOp *j) {
    return ctx.get(Op::INDEX, packedRed->dtype(), {sums, flatIndex(i, j, tile.columns)});
  };
  std::vector<const UOp *> effects;
  for (int64_t i = 0; i < tile.rows; ++i)
    for (int64_t j = 0; j < tile.columns; ++j) {
      const UOp *fill = ctx.get(Op::STORE, st->dtype(), {sumAt(constLike(col, i), constLike(col, j)), packedRed});
      effects.push_back(tileStore(fill, i, constLike(col, j)));
    }
  const UOp *epilogue = substitute(st, {{packedRed, sumAt(rowIn, columnIn)}});
  effects.push_back(ctx.get(Op::END, end->dtype(), {tileStore(epilogue, -1, columnIn), rowIn, columnIn}, end->arg()));
  return effects;
}

// The loops around `store`'s tile: the other output loops with the row
// axis as its row tiles, and a wide panel's column tiles innermost; a pack
// nest goes first. `withPanel`: the panel loop too (outermost, or where the
// column axis was).
const UOp *MatmulTiler::blockNest(const UOp *store, bool withPanel) const {
  std::vector<const UOp *> endSrc{ctx.get(Op::GROUP, st->dtype(), buildStores(store))};
  if (withPanel && panelOuter) endSrc.push_back(colOuter);
  for (const UOp *r : ranges) {
    if (std::find(panelRanges.begin(), panelRanges.end(), r) != panelRanges.end()) continue; // around the pack
    if (r != col) endSrc.push_back(r == row ? rowOuter : r);
    else if (withPanel && !panelOuter) endSrc.push_back(colOuter);
  }
  if (sub) endSrc.push_back(sub); // innermost output loop: a row tile runs over the panel's column tiles
  const UOp *nest = ctx.get(Op::END, end->dtype(), endSrc, end->arg());
  return pack ? ctx.get(Op::GROUP, st->dtype(), {pack, nest}) : nest;
}

// The kernel's loop nest. Packed or blocked, the panel loop is outermost
// (blockReduction and choosePacking see to it), around the loops over panel
// ranges and the blocks of the reduction: END(block nests, the panel ranges,
// panel), the first block's nest peeled off the loop over the others.
const UOp *MatmulTiler::buildNest() const {
  if (!pack && !ko) return blockNest(st, true);
  const UOp *body = blockNest(st, false);
  if (ko) {
    const UOp *next = ctx.get(Op::ADD, ko->dtype(), {ko, constLike(ko, 1)});
    const UOp *later = ctx.get(Op::END, end->dtype(), {substitute(body, {{ko, next}}), ko}, end->arg());
    body = ctx.get(Op::GROUP, st->dtype(), {substitute(blockNest(firstSt, false), {{ko, constLike(ko, 0)}}), later});
  }
  std::vector<const UOp *> outer{body};
  outer.insert(outer.end(), panelRanges.begin(), panelRanges.end());
  outer.push_back(colOuter);
  return ctx.get(Op::END, end->dtype(), outer, end->arg());
}

} // namespace

const UOp *tileMatmul(const UOp *sink, const KernelOptions &opts, MatmulTile tile, MatmulTile *chosen) {
  if (chosen) *chosen = MatmulTile{0, 0, 0, false, false};
  MatmulTiler tiler(sink, opts, tile);
  const UOp *tiled = tiler.run();
  if (!tiled) return sink;
  if (chosen) *chosen = tiler.applied();
  return tiled;
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
