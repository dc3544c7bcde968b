//===- LaneSums.h - several vector sums across lanes as one tree --*- C++ -*-===//
//
// A tile of dot products (MatmulTiling.h) leaves LLVM's loop vectorizer one
// vector accumulator per output, each summed across its lanes after the loop
// by llvm.vector.reduce.fadd: on AVX-512, 8 dependent instructions per output
// (4 shuffles, 4 adds), 128 for a 4 x 4 tile, more than its FMAs when the
// reduction is short (nn.Linear with K = 64: 64 vector FMAs per tile).
// Reassociable sums of n such vectors in one block are instead combined
// pairwise: two shuffles take the low and the high half of each vector's
// partial sums, one add combines them, halving the lanes per output and the
// vectors at each level, until one vector holds the n sums (n - 1 steps of 3
// instructions for n = 16), and each sum is read from its lane.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/IR/Analysis.h"
#include "llvm/IR/PassManager.h"

namespace llvm {
class Function;
}

namespace tgc::codegen {

/// The LLVM function pass (run at the end of the optimization pipeline).
struct CombineLaneSumsPass : llvm::PassInfoMixin<CombineLaneSumsPass> {
  llvm::PreservedAnalyses run(llvm::Function &f, llvm::FunctionAnalysisManager &);
};

/// Combines the reassociable vector sums of `f` (see above); returns whether
/// it changed anything.
bool combineLaneSums(llvm::Function &f);

} // namespace tgc::codegen
