//===- Passes.cpp - the kernel optimizations as tgc opt passes ------------===//
#include "Codegen/Passes.h"
#include "Codegen/DataInvalid.h"
#include "Codegen/DivmodSplit.h"
#include "Codegen/EpilogueSplit.h"
#include "Codegen/GateSplit.h"
#include "Codegen/HoistInvariant.h"
#include "Codegen/MatmulTiling.h"
#include "Codegen/ParallelLoop.h"
#include "Codegen/ReduceLanes.h"

#include "IR/Pass.h"

#include <sstream>
#include <unordered_map>

namespace tgc {

namespace {

std::vector<const UOp *> kernelBodies(const Graph &g) {
  std::vector<const UOp *> out;
  for (const UOp *u : toposort(g.roots))
    if (u->is(Op::CALL) && u->numSrc() > 0 && u->src(0)->is(Op::SINK)) out.push_back(u->src(0));
  return out;
}

std::string kernelName(const UOp *sink) {
  const tgc::Value *n = sink->arg().field("name");
  return n && n->kind() == tgc::Value::Kind::Str ? n->str() : "?";
}

class ParallelLoopPass : public Pass {
public:
  Status run(Graph &) override { return Status::success(); }
  std::string analysisText(const Graph &g) const override {
    std::ostringstream os;
    codegen::KernelOptions opts;
    for (const UOp *k : kernelBodies(g)) {
      const UOp *r = codegen::parallelRange(k, opts);
      os << "// parallel-loop: " << kernelName(k) << " work " << codegen::kernelLoopWork(k);
      if (r)
        os << " threads over " << r->src(0)->arg().toString() << " iterations of " << r->arg().toString() << "\n";
      else
        os << " serial\n";
    }
    return os.str();
  }
};

// A pass that rewrites every kernel body with `rewrite` under the default options.
std::unique_ptr<Pass> kernelRewritePass(const UOp *(*rewrite)(const UOp *, const codegen::KernelOptions &)) {
  return std::make_unique<FunctionPass>([rewrite](Graph &g) {
    std::unordered_map<const UOp *, const UOp *> map;
    codegen::KernelOptions opts;
    for (const UOp *k : kernelBodies(g))
      if (const UOp *t = rewrite(k, opts); t != k) map[k] = t;
    if (!map.empty()) g.roots = substitute(g.roots, map);
    return Status::success();
  });
}

} // namespace

void registerCodegenPasses() {
  PassRegistry &r = PassRegistry::instance();
  r.add({"resolve-invalid", "resolve Invalid in kernel values (gated REDUCE elements, gated STOREs, leftover WHERE(c, x, Invalid) -> 0), as tinygrad's codegen does",
         [] { return kernelRewritePass([](const UOp *k, const codegen::KernelOptions &) { return codegen::resolveDataInvalid(k); }); }});
  r.add({"tile-matmul", "register-tile matmul-like kernel bodies (codegen's UPCAST of the output axes; a small tile of dot products stores its sums for an epilogue nest)",
         [] { return kernelRewritePass([](const UOp *k, const codegen::KernelOptions &o) { return codegen::tileKernel(k, o); }); }});
  r.add({"hoist-invariant", "compute a reduction's costly terms that skip loops around it once, into a kernel-local table",
         [] { return kernelRewritePass(codegen::hoistInvariant); }});
  r.add({"split-divmod", "split an innermost output loop read as j // c and j % c into those two loops",
         [] { return kernelRewritePass(codegen::splitDivmod); }});
  r.add({"unroll-quotient", "loop over j % c and store the few outputs j // c in its body where they share costly work of j % c (rand's THREEFRY halves)",
         [] { return kernelRewritePass(codegen::unrollQuotient); }});
  r.add({"merge-reduce-ranges", "reduce over one long range where a reduction's innermost ranges nest as rows of one contiguous array",
         [] { return kernelRewritePass(codegen::mergeReduceRanges); }});
  r.add({"merge-output-ranges", "merge a kernel's two innermost output loops where its store runs contiguously over both and a register tile divides only the merged loop",
         [] { return kernelRewritePass(codegen::mergeOutputRanges); }});
  r.add({"split-reduce-divmod", "reduce over k // c and k % c where a reduction reads its operands so (a contiguous inner loop)",
         [] { return kernelRewritePass(codegen::splitReduceDivmod); }});
  r.add({"split-gates", "split the innermost output loop compared with constants where the comparisons change (one loop per live reduction)",
         [] { return kernelRewritePass(codegen::splitGates); }});
  r.add({"split-epilogue", "evaluate a reduction's transcendental epilogue in a loop of its own, from a row of the results",
         [] { return kernelRewritePass(codegen::splitEpilogue); }});
  r.add({"max-lanes", "split short contiguous float MAX reductions into one accumulator per vector lane",
         [] { return kernelRewritePass(codegen::splitMaxLanes); }});
  r.add({"parallel-loop", "analysis: the loop of each kernel that codegen runs on threads (print with --print-after)",
         [] { return std::make_unique<ParallelLoopPass>(); }});
}

} // namespace tgc
