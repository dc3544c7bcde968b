//===- LaneSumsTest.cpp - several vector sums across lanes as one tree ----===//
//
// lib/Codegen/LaneSums on LLVM IR: n reassociable llvm.vector.reduce.fadd of
// constant vectors of w lanes (small integers, so every order of the sums is
// exact), each result stored to out[i]; after the rewrite, constant folding
// must leave out[i] = the i-th sum, whatever n and w and the start values.
// Sums that are not reassociable, or whose result is used before the last
// of the run, are left alone.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Lower/LaneSums.h" // (Codegen/: a code-generator test for test/unit/CMakeLists.txt)

#include "llvm/Analysis/ConstantFolding.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace llvm;

namespace {

// Lane l of vector i holds i * w + l + 1; sum i starts from start(i).
double lane(int i, int l, int w) { return double(i * w + l + 1); }
double start(int i) { return i % 3 == 0 ? -0.0 : double(i); }

std::string sumsIR(int n, int w, const char *flags) {
  std::string ir = "define void @f(ptr %out) {\n";
  for (int i = 0; i < n; ++i) {
    ir += "  %s" + std::to_string(i) + " = call " + flags + " float @llvm.vector.reduce.fadd.v" + std::to_string(w) +
          "f32(float " + (start(i) == 0 ? std::string("-0.0") : std::to_string(start(i))) + ", <" + std::to_string(w) +
          " x float> <";
    for (int l = 0; l < w; ++l) ir += std::string(l ? ", " : "") + "float " + std::to_string(lane(i, l, w));
    ir += ">)\n";
  }
  for (int i = 0; i < n; ++i)
    ir += "  %p" + std::to_string(i) + " = getelementptr float, ptr %out, i64 " + std::to_string(i) + "\n  store float %s" +
          std::to_string(i) + ", ptr %p" + std::to_string(i) + "\n";
  return ir + "  ret void\n}\n";
}

// Folds every instruction with constant operands, to a fixed point.
void foldConstants(Function &f) {
  const DataLayout &dl = f.getParent()->getDataLayout();
  for (bool changed = true; changed;) {
    changed = false;
    for (BasicBlock &bb : f)
      for (Instruction &i : make_early_inc_range(bb))
        if (Constant *c = ConstantFoldInstruction(&i, dl)) {
          i.replaceAllUsesWith(c);
          i.eraseFromParent();
          changed = true;
        }
  }
}

size_t countLaneSums(Function &f) {
  size_t n = 0;
  for (BasicBlock &bb : f)
    for (Instruction &i : bb)
      if (auto *c = dyn_cast<IntrinsicInst>(&i); c && c->getIntrinsicID() == Intrinsic::vector_reduce_fadd) ++n;
  return n;
}

struct Parsed {
  LLVMContext ctx;
  std::unique_ptr<Module> m;
  explicit Parsed(const std::string &ir) {
    SMDiagnostic err;
    m = parseAssemblyString(ir, err, ctx);
    std::string msg;
    raw_string_ostream os(msg);
    err.print("test", os);
    REQUIRE_MESSAGE(m, msg);
  }
  Function &f() { return *m->getFunction("f"); }
};

} // namespace

TEST_CASE("lane sums: n sums of w lanes become one tree, each sum read from its lane") {
  for (int w : {4, 8, 16})
    for (int n : {2, 3, 4, 8, 12, 16, 20}) {
      if (n > 2 * w && n != 20) continue;
      CAPTURE(w);
      CAPTURE(n);
      Parsed p(sumsIR(n, w, "reassoc"));
      CHECK(tgc::codegen::combineLaneSums(p.f()));
      CHECK_FALSE(verifyFunction(p.f(), &errs()));
      // Runs of 2^k, at most w each: only a lone leftover sum stays.
      int left = n;
      for (int chunk = w; left >= 2;) {
        while (chunk > left) chunk /= 2;
        left -= chunk;
      }
      CHECK(countLaneSums(p.f()) == size_t(left));
      foldConstants(p.f());
      std::vector<double> stored(size_t(n), -1);
      for (Instruction &i : p.f().getEntryBlock())
        if (auto *s = dyn_cast<StoreInst>(&i)) {
          auto *gep = cast<GetElementPtrInst>(s->getPointerOperand());
          auto *idx = cast<ConstantInt>(gep->getOperand(1));
          if (isa<IntrinsicInst>(s->getValueOperand())) continue; // a lone sum, left as it was
          auto *v = dyn_cast<ConstantFP>(s->getValueOperand());
          REQUIRE(v);
          stored[idx->getZExtValue()] = v->getValueAPF().convertToFloat();
        }
      for (int i = 0; i < n - left; ++i) { // the lone sum is the last
        double want = start(i);
        for (int l = 0; l < w; ++l) want += lane(i, l, w);
        CHECK(stored[size_t(i)] == want);
      }
    }
}

TEST_CASE("lane sums: sums it must leave alone") {
  SUBCASE("not reassociable: the order of the sum is fixed") {
    Parsed p(sumsIR(16, 16, ""));
    CHECK_FALSE(tgc::codegen::combineLaneSums(p.f()));
    CHECK(countLaneSums(p.f()) == 16);
  }
  SUBCASE("a result used before the next sum: no common place for the tree") {
    Parsed p("define float @f(<8 x float> %a, <8 x float> %b) {\n"
             "  %x = call reassoc float @llvm.vector.reduce.fadd.v8f32(float -0.0, <8 x float> %a)\n"
             "  %y = fmul float %x, %x\n"
             "  %c = insertelement <8 x float> %b, float %y, i64 0\n"
             "  %z = call reassoc float @llvm.vector.reduce.fadd.v8f32(float -0.0, <8 x float> %c)\n"
             "  ret float %z\n}\n");
    CHECK_FALSE(tgc::codegen::combineLaneSums(p.f()));
    CHECK(countLaneSums(p.f()) == 2);
  }
  SUBCASE("vectors of different widths are not combined") {
    Parsed p("define float @f(<8 x float> %a, <16 x float> %b) {\n"
             "  %x = call reassoc float @llvm.vector.reduce.fadd.v8f32(float -0.0, <8 x float> %a)\n"
             "  %z = call reassoc float @llvm.vector.reduce.fadd.v16f32(float -0.0, <16 x float> %b)\n"
             "  %s = fadd float %x, %z\n"
             "  ret float %s\n}\n");
    CHECK_FALSE(tgc::codegen::combineLaneSums(p.f()));
  }
}
