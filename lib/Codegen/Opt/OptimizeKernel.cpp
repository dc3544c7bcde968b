//===- OptimizeKernel.cpp - every kernel optimization, in order, and its decisions ===//
#include "Codegen/Opt/OptimizeKernel.h"
#include "Codegen/Opt/DataInvalid.h"
#include "Codegen/Opt/DivmodSplit.h"
#include "Codegen/Opt/EpilogueSplit.h"
#include "Codegen/Opt/FactorSums.h"
#include "Codegen/Opt/GateSplit.h"
#include "Codegen/Opt/GateVersioning.h"
#include "Codegen/Opt/HoistInvariant.h"
#include "Codegen/Opt/InnerTaps.h"
#include "Codegen/Opt/ParallelLoop.h"
#include "Codegen/Opt/ReduceLanes.h"
#include "Codegen/Opt/TransposedCopy.h"

#include <algorithm>
#include <sstream>

namespace tgc::codegen {

namespace {

// Whether a kernel's loop is bound by the ALU work of each element: it
// evaluates a polynomial transcendental (a float EXP2, LOG2, SIN or POW, with
// `polynomials`) or THREEFRY's 20 rounds.
bool aluBound(const UOp *sink, bool polynomials) {
  for (const UOp *n : toposort(sink))
    if ((polynomials && isTranscendental(n) && n->dtype().isFloat()) || n->is(Op::THREEFRY)) return true;
  return false;
}

// The innermost loop of an elementwise kernel (no REDUCE, one loop nest) in
// which every buffer access steps by 0 or 1 element per iteration, so vectors
// along that loop are plain loads and stores; null for any other kernel. LLVM
// fully unrolls a short innermost loop before it vectorizes, and may then
// vectorize the loop around it with gathers and scatters (a 32x16
// where/compare: 2x slower than the contiguous vectors SLP makes of the
// unrolled body); for such a kernel no gather is ever the better choice.
const UOp *contiguousInnermostLoop(const UOp *sink) {
  const UOp *end = nullptr;
  for (const UOp *n : toposort(sink)) {
    if (n->is(Op::END) && end) return nullptr;
    if (n->is(Op::END)) end = n;
  }
  if (!end || end->numSrc() < 2) return nullptr;
  const UOp *inner = end->src(end->numSrc() - 1);
  return unitStrideAccesses(sink, inner) ? inner : nullptr;
}

// The reduction loop of a kernel of one loop nest whose summand reads memory
// contiguously along it but with a stride along the innermost output loop
// (nn.Linear against W[j, k], K = 32: g1's logits). LLVM unrolls such a short
// reduction completely, then vectorizes the output loop with a gather per
// load and step; kept as a loop it vectorizes along the reduction with plain
// loads. From 32 steps: at 16 (one vector, attention's q.k over a head) the
// horizontal sum per output costs more than the gathers. Null for any other kernel.
const UOp *contiguousShortReduction(const UOp *sink) {
  if (!isPlainLoopNest(sink)) return nullptr;
  const UOp *end = sink->src(0), *inner = end->src(end->numSrc() - 1), *found = nullptr;
  for (const UOp *u : toposort(end->src(0))) {
    if (!u->is(Op::REDUCE)) continue;
    if (found || u->numSrc() != 2) return nullptr; // one reduction over one range
    std::optional<int64_t> n = tripCount(u->src(1));
    if (!n || *n < 32 || *n >= 64 || unitStrideAccesses(u->src(0), u->src(1)) != true ||
        unitStrideAccesses(u->src(0), inner).has_value())
      return nullptr;
    found = u->src(1);
  }
  return found;
}

// The vectorizer-facing decisions of a kernel, from its scheduled body `sink`
// and its tile. `polyInReduce`: the tiled body evaluates a transcendental in a
// reduction's summand.
void decideVectors(KernelDecisions &d, const UOp *sink, bool polyInReduce, const KernelOptions &opts,
                   const TargetTraits &target) {
  // The vectors of a register tile are as wide as its rows, up to 512 bits
  // (x86's prefer-vector-width; ignored elsewhere, and clamped to what the CPU
  // has): LLVM's default for many AVX-512 CPUs is 256 bits, half the FMA rate
  // of a 512-bit tile row; and a row narrower than the widest vector (8
  // floats: conv2d's 56 columns) is vectorized one row per vector only when
  // the vectorizers are told that width. A dot-product tile's vectors run
  // along the reduction: the widest. A loop evaluating a polynomial
  // transcendental per element (some 25 vector ops per EXP2) or THREEFRY (some
  // 100 per pair of outputs) is bound by its ALU work, not by memory: the
  // widest vectors halve that work (KernelOptions::wideVectors).
  if (d.tiled) d.vectorWidth = d.tile.alongReduction ? 512 : std::min<int64_t>(d.tile.columns * 32, 512);
  else if (opts.wideVectors && aluBound(sink, opts.polyTranscendentals)) d.vectorWidth = 512;
  // In a register tile a transcendental of the reduction's summand is one
  // scalar per tile row and step: SLP vectorizes the tile's columns and leaves
  // each row's polynomial as scalar code mixed with partial vectors and mask
  // shuffles, 10x slower than a libm call per row. (A dot-product tile's
  // vectors run along the reduction: its polynomials vectorize.)
  d.libmTranscendentals = d.tiled && !d.tile.alongReduction && opts.polyTranscendentals && polyInReduce;
  if (!target.x86) return;
  if (d.tiled) {
    d.preferNoGather = true;
    // An epilogue tile's nest (MatmulTiling.cpp) stores along the columns:
    // fully unrolled along them, LLVM vectorized its rows instead, with a
    // scatter per vector of 8 outputs (causal q @ k.T, 8 x 256 x 256 x 64:
    // 0.74 ms on one thread, 0.38 without scatters). A pack that is not a
    // transposed copy keeps them: element by element it was 1.1x slower.
    d.preferNoScatter = d.tile.epilogueTile;
  } else if (const UOp *inner = contiguousInnermostLoop(sink)) {
    d.preferNoGather = d.preferNoScatter = true;
    // An unrolled row of at least one vector (8 floats) is SLP's to vectorize.
    std::optional<int64_t> n = tripCount(inner);
    d.scalarOuterLoops = n && *n >= 8;
  } else {
    d.keepReductionLoop = opts.reductionLoops && contiguousShortReduction(sink) != nullptr;
  }
}

} // namespace

std::string KernelDecisions::str() const {
  std::ostringstream os;
  if (tiled)
    os << "tile=" << tile.rows << "x" << tile.columns << (tile.alongReduction ? " dot-products" : "")
       << (tile.reduceBlock ? " reduce-block=" + std::to_string(tile.reduceBlock) : "")
       << (tile.epilogueTile ? " epilogue-tile" : "") << (tile.packedRows ? " packed-rows" : "") << (tile.innerTaps ? " inner-taps" : "") << " ";
  os << "work=" << threadWork << " threads="
     << (threadedLoop ? threadedLoop->arg().toString() : std::string("serial"));
  if (vectorWidth) os << " vector-width=" << vectorWidth;
  if (preferNoGather) os << " no-gather";
  if (preferNoScatter) os << " no-scatter";
  if (scalarOuterLoops) os << " scalar-outer-loops";
  if (keepReductionLoop) os << " rolled-reduction";
  if (libmTranscendentals) os << " libm";
  if (!transposedCopies.empty()) os << " transposed-copies=" << transposedCopies.size();
  return os.str();
}

OptimizedKernel optimizeKernel(const UOp *sink, const KernelOptions &opts, const TargetTraits &target) {
  OptimizedKernel out;
  KernelDecisions &d = out.decisions;
  // Index shapes first, so that the tile sees the loops it can divide.
  const UOp *body = factorSums(resolveDataInvalid(sink), opts);
  body = mergeOutputRanges(body, opts);
  body = mergeReduceRanges(body, opts);
  body = splitReduceDivmod(body, opts);
  MatmulTile tile;
  body = tileKernel(body, opts, &tile);
  body = innerTaps(body, tile, opts);
  d.tiled = tile.columns > 0;
  d.tile = tile;
  // Threads are decided on the tiled kernel's work: the rewrites below repeat
  // loops (table fills, an epilogue nest) without adding work of that size.
  d.threadWork = threadsWork(body, tile);
  decideVectors(d, sink, transcendentalInReduce(body), opts, target);
  body = splitDivmod(body, opts);
  body = unrollQuotient(body, opts);
  body = splitGates(body, opts);
  body = hoistInvariant(body, opts);
  body = splitEpilogue(body, opts);
  body = splitMaxLanes(body, opts);
  d.threadedLoop = parallelRange(body, opts, d.threadWork);
  d.transposedCopies = transposedCopies(body, d.vectorWidth, d.threadedLoop, opts);
  out.body = body;
  return out;
}

} // namespace tgc::codegen
