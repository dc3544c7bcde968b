//===- KernelOptPasses.cpp - the kernel optimizations as tgc opt passes ------------===//
#include "Codegen/Opt/KernelOptPasses.h"
#include "Codegen/Opt/DataInvalid.h"
#include "Codegen/Opt/DivmodSplit.h"
#include "Codegen/Opt/EpilogueSplit.h"
#include "Codegen/Opt/FactorSums.h"
#include "Codegen/Opt/GateSplit.h"
#include "Codegen/Opt/HoistInvariant.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/OptimizeKernel.h"
#include "Codegen/Opt/ParallelLoop.h"
#include "Codegen/Opt/ReduceLanes.h"

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

// Every kernel optimization in codegen's order (optimizeKernel) under the
// default options for this host; prints each kernel's decisions.
class OptimizeKernelsPass : public Pass {
public:
  Status run(Graph &g) override {
    std::unordered_map<const UOp *, const UOp *> map;
    codegen::TargetTraits host;
#if !defined(__x86_64__) && !defined(_M_X64)
    host.x86 = false;
#endif
    for (const UOp *k : kernelBodies(g)) {
      codegen::OptimizedKernel o = codegen::optimizeKernel(k, codegen::KernelOptions{}, host);
      kernels_.push_back({kernelName(k), o.decisions});
      if (o.body != k) map[k] = o.body;
    }
    if (!map.empty()) g.roots = substitute(g.roots, map);
    return Status::success();
  }
  std::string analysisText(const Graph &) const override {
    std::ostringstream os;
    for (size_t i = 0; i < kernels_.size(); ++i)
      os << "// optimize-kernels: kernel " << i << " '" << kernels_[i].first << "': " << kernels_[i].second.str() << "\n";
    return os.str();
  }
  std::string statsText() const override {
    size_t tiled = 0, dots = 0, threaded = 0, libm = 0, wide = 0;
    for (const auto &[name, d] : kernels_) {
      tiled += d.tiled;
      dots += d.tiled && d.tile.alongReduction;
      threaded += d.threadedLoop != nullptr;
      libm += d.libmTranscendentals;
      wide += d.vectorWidth == 512;
    }
    std::ostringstream os;
    os << "stats: optimize-kernels: " << kernels_.size() << " kernels, " << tiled << " tiled (" << dots
       << " of dot products), " << threaded << " threaded, " << wide << " with 512-bit vectors, " << libm
       << " with libm transcendentals\n";
    return os.str();
  }

private:
  std::vector<std::pair<std::string, codegen::KernelDecisions>> kernels_;
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
  r.add({"factor-sums", "multiply a float sum by its summand's factors that do not move with its ranges once, after it",
         [] { return kernelRewritePass(codegen::factorSums); }});
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
  r.add({"optimize-kernels", "every kernel optimization in codegen's order; prints each kernel's decisions (tile, threads, vector width, libm) with --print-after",
         [] { return std::make_unique<OptimizeKernelsPass>(); }});
  r.add({"parallel-loop", "analysis: the loop of each kernel that codegen runs on threads (print with --print-after)",
         [] { return std::make_unique<ParallelLoopPass>(); }});
}

} // namespace tgc
