//===- CodegenFuzzer.cpp - libFuzzer target: scheduling + code generation --===//
//
// The rest of the pipeline past the passes: a document that parses, is within
// the driver's resource limits and verifies is compiled to machine code the
// way `tgc compile` would, without running it. A tensor graph goes through
// the pipeline's model path (Pipeline.h: buildModelFromDocument, then
// compileModelArtifacts); a LINEAR root (linear.json) is compiled directly. Every stage may refuse the input
// with a Diagnostic; a crash, a sanitizer report, an LLVM assertion or a hang
// is a finding. Code is generated at -O0 to keep executions cheap: the
// optimizer is LLVM's, the lowering in front of it is ours.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "Codegen/Model/MemoryPlan.h"
#include "Pipeline/Pipeline.h"
#include "Codegen/Exec/CompiledLinear.h"
#include "IR/Limits.h"
#include "RegisterPasses.h"

namespace {

/// Graphs beyond this many nodes are left to the pipeline fuzzer: code
/// generation is linear in their size, and small inputs keep exec/s useful.
constexpr size_t kMaxNodes = 4000;

tgc::CodegenOptions cheapCodegen() {
  tgc::CodegenOptions o;
  o.target.optLevel = 0;
  return o;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  tgc::driver::registerAllPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace tgc;
  Context ctx;
  ResourceLimits limits;
  limits.maxNodes = kMaxNodes;
  limits.maxBufferBytes = uint64_t(1) << 30;
  std::optional<Graph> g = fuzz::acceptedGraph(ctx, data, size, limits);
  if (!g || g->roots.empty()) return 0;

  for (const UOp *root : g->roots)
    if (root->is(Op::LINEAR)) (void)compileLinearToObject(root, cheapCodegen());
  if (!g->roots[0]->is(Op::SINK)) return 0;

  Result<BuiltModel> built = buildModelFromDocument(ctx, *g);
  if (!built) return 0;
  ModelCodegenOptions copts;
  copts.target.optLevel = 0;
  (void)compileModelArtifacts(built->model, copts);
  return 0;
}
