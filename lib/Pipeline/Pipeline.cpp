//===- Pipeline.cpp - tgc's whole path, from a graph to machine code -------===//
//
// The stages of Pipeline.h, in order. Nothing else chains them.
//
//===----------------------------------------------------------------------===//
#include "Pipeline/Pipeline.h"

#include "Codegen/Model/LinearModel.h"
#include "Codegen/Opt/PlanRewrite.h"
#include "IR/JSON.h"

#include <filesystem>

namespace tgc {

int64_t tinygradArenaBesideGraph(const Graph &g) {
  if (g.path.empty()) return 0;
  std::filesystem::path beside = std::filesystem::path(g.path).parent_path() / "linear.json";
  std::error_code ec;
  if (!std::filesystem::exists(beside, ec)) return 0;
  Context other;
  Result<Graph> doc = readGraphJSONFile(other, beside.string());
  if (!doc || !doc->root("linear")) return 0;
  Result<SchedulePlan> plan = planLinear(doc->root("linear"));
  return plan ? tinygradArenaBytes(*plan) : 0;
}

namespace {

const UOp *linearRoot(const Graph &g) {
  if (const UOp *linear = g.root("linear")) return linear;
  return g.roots.size() == 1 && g.roots[0]->is(Op::LINEAR) ? g.roots[0] : nullptr;
}

} // namespace

Result<BuiltModel> buildModelFromDocument(Context &ctx, Graph &g, const ModelOptions &opts) {
  BuiltModel out;
  // grad
  if (opts.grad) {
    Result<std::vector<size_t>> outs = addGradients(g, *opts.grad);
    if (!outs) return outs.error();
    for (size_t i = 0; i < outs->size(); ++i) out.gradOutputs["out" + std::to_string((*outs)[i])] = opts.grad->wrt[i];
  }
  // A LINEAR is tinygrad's final schedule: the model as it is.
  if (const UOp *linear = opts.acceptLinear ? linearRoot(g) : nullptr) {
    Result<Model> m = modelFromLinear(linear, cIdentifier(opts.name), &out.tinygradArenaBytes);
    if (!m) return m.error();
    out.model = std::move(*m);
    return out;
  }
  // realize-outputs → schedule → interface
  Result<Model> m = buildModel(ctx, g, opts);
  if (!m) return m.error();
  out.model = std::move(*m);
  return out;
}

Result<CompiledModel> compileModelArtifacts(const Model &scheduled, const ModelCodegenOptions &opts) {
  CompiledModel out;
  // fuse-rows, split-vector-matrix: the plan's calls (and a buffer of partial sums) change
  Model model = scheduled;
  model.plan = codegen::rewriteSchedulePlan(scheduled.plan, opts.kernel);
  // plan
  Result<MemoryPlan> memory = planMemory(model);
  if (!memory) return memory.error();
  out.memory = std::move(*memory);
  // optimize-kernels → lower → emit (ModelCodegen.cpp: optimizeKernels, lowerSchedule, then the object)
  Result<ModelArtifacts> art = compileModel(model, out.memory, opts);
  if (!art) return art.error();
  out.artifacts = std::move(*art);
  return out;
}

Result<std::unique_ptr<CompiledSchedule>> compileModelForRun(const Model &model, const CodegenOptions &opts) {
  // fuse-rows → optimize-kernels → lower → JIT (CompiledLinear.cpp); a run's buffers are
  // HostBuffers of the plan, so there is no workspace to plan.
  return compileLinear(model.linear, opts);
}

} // namespace tgc
