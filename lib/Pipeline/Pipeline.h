//===- Pipeline.h - tgc's whole path, from a graph to machine code -*- C++ -*-===//
//
// The spine every tool, benchmark, test and fuzzer goes through; the order of
// the stages is written in one place, Pipeline.cpp. Each stage is named as
// `tgc opt --print-after`, `--stats` and `tgc compile --emit` know it:
//
//   load              a document: graph.json, a LINEAR, tgc's text form    (the caller: IR/JSON.h, tools/tgc/Driver.h)
//   grad              gradients appended as outputs (--grad/--wrt)         Schedule/Grad.h        opt --passes=grad
//   realize-outputs   every output into storage the caller can read        Schedule/RealizeOutputs.h
//   schedule          callify, rangeify, kernels, linearize, resolve-calls Schedule/Passes.h      opt --passes=schedule
//   interface         the model's tensors, variables and random state      BuildModel.cpp
//   fuse-rows         kernels over the same rows as one kernel             Codegen/Opt/RowFusion.h  opt --passes=fuse-rows
//   split-vector-matrix  x @ W for one row as parts of W's rows + their sum  Codegen/Opt/SplitVectorMatrix.h
//   plan              intermediates placed in one workspace                Codegen/Model/MemoryPlan.h  compile --stats
//   optimize-kernels  each kernel's rewrites and decisions                 Codegen/Opt/OptimizeKernel.h  opt --passes=optimize-kernels
//   lower             kernels to MLIR, LLVM IR, optimized for the target   Codegen/Lower/          --emit=mlir,llvm
//   emit              an object, a header, an executable — or the JIT      Codegen/Model/, Codegen/Exec/  --emit=obj,header,exe,asm
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Exec/CompiledLinear.h"
#include "Codegen/Model/MemoryPlan.h"
#include "Codegen/Model/Model.h"
#include "Codegen/Model/ModelCodegen.h"
#include "IR/Graph.h"
#include "Schedule/Grad.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace tgc {

struct ModelOptions {
  std::string name;                  ///< Model::name; default: the graph file's stem (made a C identifier)
  /// Where an output with no device is computed: tinygrad's numpy() clones a
  /// deviceless (virtual) tensor to the CPU before reading it.
  std::string defaultDevice = "CPU";
  std::optional<GradRequest> grad;   ///< append gradients as outputs first (docs/grad.md)
  bool acceptLinear = true;          ///< a LINEAR document is a model as it is (tgc run needs a tensor graph)
};

/// The front half's result: a model and what the stages learned on the way.
struct BuiltModel {
  Model model;
  /// The gradient outputs ("out<I>") by the graph node id they are taken with respect to.
  std::map<std::string, int64_t> gradOutputs;
  /// A LINEAR document's model: the bytes of tinygrad's own memory plan (its int8 arenas).
  int64_t tinygradArenaBytes = 0;
};

/// The bytes of tinygrad's own memory plan of a corpus case's graph: its
/// linear.json beside the graph.json, 0 if there is none (`tgc compile --stats`).
int64_t tinygradArenaBesideGraph(const Graph &g);

/// load → grad → realize-outputs → schedule → interface: the model of a loaded
/// document. A LINEAR (linear.json) is already scheduled and is taken as it is
/// (modelFromLinear). `g` is changed by the grad stage.
Result<BuiltModel> buildModelFromDocument(Context &ctx, Graph &g, const ModelOptions &opts = {});

/// realize-outputs → schedule → interface of the tensor graph `g` (its only
/// root, a SINK of the tensors to realize). Every SINK source becomes a dense
/// output: a source the schedule would not store densely in storage of its
/// own (a view such as a PERMUTE, EXPAND or PAD of a realized tensor, an input
/// buffer, an assign's result, a constant, a tensor without a device) is
/// copied into a fresh buffer first, as tinygrad's numpy() does (see
/// docs/codegen.md). Graphs the schedule pipeline rejects give its diagnostic.
Result<Model> buildModel(Context &ctx, const Graph &g, const ModelOptions &opts = {});

/// A model compiled ahead of time, and the workspace plan its entry uses.
struct CompiledModel {
  MemoryPlan memory;
  ModelArtifacts artifacts;
};

/// fuse-rows → split-vector-matrix → plan → optimize-kernels → lower → emit: `model` as an object file and
/// header text (`opts` says which artifacts, for which target, where weights live).
Result<CompiledModel> compileModelArtifacts(const Model &model, const ModelCodegenOptions &opts);

/// fuse-rows → split-vector-matrix → optimize-kernels → lower → emit into the JIT: `model`'s schedule, runnable
/// in this process over HostBuffers of Model::plan.
Result<std::unique_ptr<CompiledSchedule>> compileModelForRun(const Model &model, const CodegenOptions &opts = {});

} // namespace tgc
