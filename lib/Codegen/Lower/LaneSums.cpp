//===- LaneSums.cpp - several vector sums across lanes as one tree --------===//
//
// See LaneSums.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Lower/LaneSums.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Support/MathExtras.h"

#include <bit>
#include <vector>

namespace tgc::codegen {

using namespace llvm;

namespace {

// A reassociable llvm.vector.reduce.fadd of a vector of 2^k lanes.
IntrinsicInst *laneSum(Instruction &i) {
  auto *c = dyn_cast<IntrinsicInst>(&i);
  if (!c || c->getIntrinsicID() != Intrinsic::vector_reduce_fadd || !c->hasAllowReassoc()) return nullptr;
  auto *t = dyn_cast<FixedVectorType>(c->getArgOperand(1)->getType());
  return t && t->getNumElements() >= 2 && isPowerOf2_32(t->getNumElements()) ? c : nullptr;
}

// Whether a result of `sums` is used in their block before `at`: the combined
// sums are made in front of the last of them.
bool usedBefore(ArrayRef<IntrinsicInst *> sums, Instruction *at) {
  for (IntrinsicInst *c : sums)
    for (User *u : c->users())
      if (auto *ui = dyn_cast<Instruction>(u); ui && ui->getParent() == at->getParent() && !at->comesBefore(ui))
        return true;
  return false;
}

// Replaces `sums` (2^k of them, k >= 1, at most as many as their lanes, of one
// vector type, in block order) by one tree made in front of the last.
void combine(ArrayRef<IntrinsicInst *> sums) {
  IRBuilder<> b(sums.back());
  b.setFastMathFlags(sums.front()->getFastMathFlags());
  const unsigned width = cast<FixedVectorType>(sums.front()->getArgOperand(1)->getType())->getNumElements();
  // Each vector holds the partial sums of some outputs, `lanes` lanes each.
  struct Part {
    Value *v;
    std::vector<unsigned> outputs;
  };
  std::vector<Part> parts;
  for (unsigned i = 0; i < sums.size(); ++i) parts.push_back({sums[i]->getArgOperand(1), {i}});
  // The low and the high half of every output's lanes, from one vector or from two (`second`).
  auto halves = [](unsigned outputs, unsigned lanes, unsigned width, bool second, SmallVector<int> &lo, SmallVector<int> &hi) {
    for (unsigned src = 0; src < (second ? 2u : 1u); ++src)
      for (unsigned g = 0; g < outputs; ++g)
        for (unsigned l = 0; l < lanes / 2; ++l) {
          lo.push_back(int(src * width + g * lanes + l));
          hi.push_back(int(src * width + g * lanes + lanes / 2 + l));
        }
  };
  unsigned lanes = width;
  while (parts.size() > 1) {
    std::vector<Part> next;
    for (size_t p = 0; p < parts.size(); p += 2) {
      Part &x = parts[p], &y = parts[p + 1];
      SmallVector<int> lo, hi;
      halves(unsigned(x.outputs.size()), lanes, width, /*second=*/true, lo, hi);
      Part sum{b.CreateFAdd(b.CreateShuffleVector(x.v, y.v, lo), b.CreateShuffleVector(x.v, y.v, hi)), x.outputs};
      sum.outputs.insert(sum.outputs.end(), y.outputs.begin(), y.outputs.end());
      next.push_back(std::move(sum));
    }
    parts = std::move(next);
    lanes /= 2;
  }
  // One vector of every output's `lanes` partial sums: halved onto itself.
  Value *v = parts[0].v;
  for (unsigned w = width; lanes > 1; w /= 2, lanes /= 2) {
    SmallVector<int> lo, hi;
    halves(unsigned(sums.size()), lanes, w, /*second=*/false, lo, hi);
    v = b.CreateFAdd(b.CreateShuffleVector(v, lo), b.CreateShuffleVector(v, hi));
  }
  for (unsigned k = 0; k < parts[0].outputs.size(); ++k) {
    IntrinsicInst *c = sums[parts[0].outputs[k]];
    Value *r = b.CreateExtractElement(v, uint64_t(k));
    Value *start = c->getArgOperand(0);
    if (auto *cf = dyn_cast<ConstantFP>(start); !cf || !cf->isNegativeZeroValue()) r = b.CreateFAdd(start, r);
    c->replaceAllUsesWith(r);
  }
  for (IntrinsicInst *c : sums) c->eraseFromParent();
}

} // namespace

bool combineLaneSums(Function &f) {
  bool changed = false;
  for (BasicBlock &bb : f) {
    // Runs of sums of one vector type whose results are used only after the run.
    std::vector<std::vector<IntrinsicInst *>> runs;
    std::vector<IntrinsicInst *> run;
    for (Instruction &i : bb) {
      IntrinsicInst *c = laneSum(i);
      if (!c) continue;
      if (!run.empty() && (run.front()->getArgOperand(1)->getType() != c->getArgOperand(1)->getType() || usedBefore(run, c)))
        runs.push_back(std::move(run)), run.clear();
      run.push_back(c);
    }
    runs.push_back(std::move(run));
    for (std::vector<IntrinsicInst *> &r : runs) {
      if (r.size() < 2) continue;
      unsigned width = cast<FixedVectorType>(r.front()->getArgOperand(1)->getType())->getNumElements();
      // In chunks of 2^k sums, at most one per lane.
      for (size_t at = 0; r.size() - at >= 2;) {
        size_t n = std::min<size_t>(std::bit_floor(r.size() - at), width);
        combine(ArrayRef<IntrinsicInst *>(r).slice(at, n));
        at += n;
        changed = true;
      }
    }
  }
  return changed;
}

PreservedAnalyses CombineLaneSumsPass::run(Function &f, FunctionAnalysisManager &) {
  if (!combineLaneSums(f)) return PreservedAnalyses::all();
  PreservedAnalyses pa;
  pa.preserveSet<CFGAnalyses>();
  return pa;
}

} // namespace tgc::codegen
