//===- KernelOptions.h - which kernel optimizations codegen applies -*- C++ -*-===//
//
// The knobs of lib/Codegen's optimizations (docs/performance.md). Defaults are
// the optimized build; `strictFP` keeps tinygrad's serial reduction order and
// `none()` is the plain lowering of docs/codegen.md (libm transcendentals).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace tgc::codegen {

struct KernelOptions {
  /// Run the outer parallel loop of a big kernel through tgc_parallel_for.
  bool threads = true;
  /// Smallest kernel (product of its loop trip counts) that is threaded.
  int64_t threadMinWork = int64_t(1) << 17;
  /// Keep tinygrad's serial order in float reductions: no reassociation, so
  /// no vectorized or multi-accumulator reductions.
  bool strictFP = false;
  /// Register tiling of matmul-like kernels (MatmulTiling.cpp).
  bool tileMatmul = true;
  /// Kernels whose loop work (the product of their trip counts) is below this
  /// are not tiled: a tile that covers most of the output saves nothing at run
  /// time, and its unrolled body costs LLVM seconds (a 512-element cumsum).
  int64_t tileMinWork = int64_t(1) << 16;
  /// EXP2/LOG2/SIN (and POW) as branch-free polynomials that vectorize
  /// (Transcendental.h); off, they are libm calls, one per element.
  bool polyTranscendentals = true;
  /// Emit a reduction whose loads are gated (padding) also without the gates,
  /// under a condition that they all hold (GateVersioning.h).
  bool versionGates = true;
  /// Pack a matmul's column panel into a kernel-local buffer (MatmulTiling.cpp).
  bool packMatmulPanel = true;
  /// Pack several column tiles per panel and run each row tile over all of
  /// them, so its rows of the left operand are read from L1 after the first
  /// tile (MatmulTiling.cpp); needs packMatmulPanel.
  bool widePanels = true;
  /// Block a long reduction (k -> ko x ki) so that a packed panel of ki x
  /// several column tiles fits the pack budget where a full-length panel
  /// could not be wide (MatmulTiling.cpp); needs widePanels, off under strictFP.
  bool reduceBlocks = true;

  /// Let LLVM vectorize a kernel that evaluates a polynomial transcendental
  /// or a THREEFRY with the target's widest vectors (`prefer-vector-width`=512: zmm on
  /// AVX-512 CPUs, whose default is 256). Such a loop is bound by its ALU
  /// work, not by memory; streaming loops keep the default width.
  bool wideVectors = true;
  /// EXP2 scales its polynomial by 2^q with llvm.ldexp (one vscalef) instead
  /// of two multiplies by powers of two built from bits: the same correctly
  /// rounded result in 3 vector ops instead of 9. Applied only where the target
  /// has a vector ldexp (x86 with AVX-512F; elsewhere it is a libm call).
  bool vectorLdexp = true;
  /// A short float MAX reduction over a contiguous innermost range keeps one
  /// accumulator per vector lane (ReduceLanes.h), so its maxima are vector
  /// ops instead of one serial chain. Off under strictFP.
  bool maxLanes = true;
  /// Compute a reduction's costly terms that do not depend on every loop
  /// around it once per point of their own ranges, into a kernel-local table
  /// (HoistInvariant.h).
  bool hoistInvariant = true;
  /// Evaluate a reduction's transcendental epilogue in a loop of its own, from
  /// a kernel-local row of the reductions' results (EpilogueSplit.h).
  bool splitEpilogue = true;
  /// Keep a short reduction (32-63 steps) that reads memory contiguously as
  /// a loop, so LLVM vectorizes it instead of unrolling it and vectorizing
  /// the output loop around it with gathers (LowerKernels.cpp).
  bool reductionLoops = true;
  /// Split the innermost output loop where its comparisons with constants
  /// change, so that each piece keeps only its live reductions (GateSplit.h).
  bool splitGates = true;
  /// Split an innermost output loop the kernel reads as j // c and j % c into
  /// those two loops, so its loads step one element apart (DivmodSplit.h).
  bool splitDivmod = true;
  /// Tile x @ W.T over too few rows to pack its panel (nn.Linear over a few
  /// tokens) as a small tile of dot products, vectorized along the reduction
  /// (MatmulTiling.cpp, ReduceToMLIR.cpp); needs tileMatmul, off under strictFP.
  bool dotTiles = true;
  /// Reduce over k // c and k % c where a reduction reads its operands so
  /// (DivmodSplit.h), so its inner loop is contiguous; the same order of sums.
  bool splitReduceDivmod = true;
  /// Sum the lanes of several reassociable vector accumulators as one tree
  /// of shuffles and adds (LaneSums.h): a tile of dot products' outputs.
  bool combineLaneSums = true;
  /// Reduce over one long range where a reduction's innermost ranges nest as
  /// rows of one contiguous array (DivmodSplit.h).
  bool mergeReduceRanges = true;
  /// Merge the two innermost output loops into one where the store runs
  /// contiguously over both and a register tile divides only the merged loop
  /// (a convolution's image rows; DivmodSplit.h).
  bool mergeOutputRanges = true;
  /// A register tile over an axis no tile width divides (a 7 x 7 image's 49
  /// pixels) moves its last tile back to end at the axis's end, overlapping
  /// the one before, instead of leaving the kernel untiled (MatmulTiling.h).
  bool overlapTiles = true;
  /// Loop over j % c and store the j // c outputs of each step in its body
  /// where an output loop j is read only through those and the outputs share
  /// costly work of j % c (rand's two 32-bit halves of one THREEFRY;
  /// DivmodSplit.h).
  bool unrollQuotient = true;
  /// Lower a loop nest that copies a matrix into its transpose as blocks of
  /// vector registers transposed by shuffles, instead of a scatter or gather
  /// per vector (TransposedCopy.h: the pack of x @ W.T's operand).
  bool transposeCopies = true;
  /// Copy a register tile's row operand that it reads with a stride along the
  /// reduction (a convolution's weights, taps outermost) into a table in the
  /// order the tile reads it, before the tile's loops (RowPack.h).
  bool packRows = true;
  /// Run a register tile's reduction over a window's short taps inside its
  /// channel loop instead of around it (InnerTaps.h: a convolution's kx).
  /// Floats only off strictFP.
  bool innerTaps = true;
  /// Multiply a float sum by the factors of its summand that do not move with
  /// its ranges once, after it, instead of at every step (FactorSums.h: a
  /// per-row scale of int8 weights). Off under strictFP.
  bool factorSums = true;

  /// Run consecutive kernels that step over the same rows (softmax's,
  /// layernorm's) as one kernel, row by row, so a row is read from memory
  /// once (RowFusion.h).
  bool fuseRows = true;
  /// In a fused kernel, store a costly value that a reduction sums and a
  /// later nest computes again once, into the later nest's output row, and
  /// read it back in both (softmax's exp; RowFusion.h).
  bool shareReducedValues = true;
  /// Split a vector times a row-major matrix (x @ W for one row) into parts
  /// of W's rows, each streaming whole rows into its row of partial sums,
  /// then their sum (SplitVectorMatrix.h). Off under strictFP.
  bool splitVectorMatrix = true;
  /// Kernels are fused only where the buffers two of them touch hold at
  /// least this many bytes: less stays in a core's L2 (1-2 MiB) from one
  /// kernel to the next anyway, and a fused kernel's loop nests lose
  /// decisions made for one nest (prefer-no-gather, scalar outer loops).
  int64_t fuseRowsMinBytes = int64_t(1) << 20;
  /// Every optimization off, tinygrad's serial float order, libm transcendentals.
  static KernelOptions none() {
    return {.threads = false, .strictFP = true, .tileMatmul = false, .polyTranscendentals = false,
            .versionGates = false, .packMatmulPanel = false, .widePanels = false, .reduceBlocks = false,
            .wideVectors = false,
            .vectorLdexp = false, .maxLanes = false, .hoistInvariant = false, .splitEpilogue = false,
            .reductionLoops = false, .splitGates = false, .splitDivmod = false, .dotTiles = false,
            .splitReduceDivmod = false, .combineLaneSums = false, .mergeReduceRanges = false,
            .mergeOutputRanges = false, .overlapTiles = false, .unrollQuotient = false,
            .transposeCopies = false, .packRows = false, .innerTaps = false, .factorSums = false, .fuseRows = false,
            .shareReducedValues = false, .splitVectorMatrix = false};
  }

  /// Every field's value, in order: part of a cached kernel's key (KernelCache.h).
  std::string fingerprint() const {
    std::string s;
    for (bool b : {threads, strictFP, tileMatmul, polyTranscendentals, versionGates, packMatmulPanel, widePanels,
                   reduceBlocks, wideVectors, vectorLdexp, maxLanes, hoistInvariant, splitEpilogue, reductionLoops, splitGates,
                   splitDivmod, dotTiles, splitReduceDivmod, combineLaneSums, mergeReduceRanges, mergeOutputRanges,
                   overlapTiles, unrollQuotient, transposeCopies, packRows, innerTaps, factorSums, fuseRows,
                   shareReducedValues, splitVectorMatrix})
      s += b ? '1' : '0';
    return s + " " + std::to_string(threadMinWork) + " " + std::to_string(tileMinWork) + " " +
           std::to_string(fuseRowsMinBytes);
  }
};
// A new field must join fingerprint(), or cached kernels compiled without it would be reused with it.
static_assert(sizeof(KernelOptions) == 72, "add the new KernelOptions field to fingerprint(), then update this size");

} // namespace tgc::codegen
