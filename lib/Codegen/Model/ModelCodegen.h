//===- ModelCodegen.h - a model as an object file and a C header -*- C++ -*-===//
//
// What `tgc compile` emits (docs/codegen.md, "The compiled model"): one
// object file with a function per kernel (internal) and, per model NAME,
//
//   int NAME_run(const T0 *in0, ..., T9 *out0, ..., void *workspace);
//   int NAME_run_tensors(void *const *tensors, void *workspace);
//   void NAME_set_observer(tgc_call_observer fn, void *ctx);
//   int NAME_bind_weights(const void *blob, size_t size);   (external weights only)
//   const tgc_tensor_info NAME_tensors[];   const tgc_model_info NAME_model;
//
// (plain C ABI, caller-owned memory, status codes of Runtime/ModelABI.h),
// plus the C header that declares them with compile-time constants. Inputs
// may instead be embedded as read-only data, or read from an external
// weights file bound at run time (ModelWeights).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Lower/KernelCache.h"
#include "Codegen/Lower/MLIRToLLVM.h"
#include "Codegen/Model/MemoryPlan.h"
#include "Codegen/Model/Model.h"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

/// Where a model's weights live (`--weights`). Tensors in either set are
/// inputs that leave the entry's argument list, the metadata table and the
/// header's per-tensor constants.
struct ModelWeights {
  /// Tensors (index into Model::tensors) whose data becomes read-only data
  /// in the object (`embed`); each string holds the bytes.
  std::map<size_t, std::string> embedded;
  /// Tensors read from the external weights file (`external`), in file
  /// order, with their payload offsets and the file's model identity
  /// (Runtime/Weights.h); bound at run time by NAME_bind_weights.
  std::vector<size_t> external;
  std::vector<int64_t> externalOffsets;
  uint64_t externalId = 0;
  /// Every tensor that is not an argument.
  std::set<size_t> placed() const;
};

struct ModelCodegenOptions {
  codegen::TargetOptions target;
  codegen::KernelOptions kernel; ///< kernel optimizations (threads, reassociation, tiling)
  ModelWeights weights;
  bool emitObject = true;
  bool keepMLIR = false;     ///< ModelArtifacts::mlir: kernels + entries before lowering
  bool keepLLVMIR = false;   ///< ModelArtifacts::llvmIR: the optimized module
  bool emitAssembly = false; ///< ModelArtifacts::assembly
  /// An ld.lld for `-r`: a big model's kernel groups then emit their objects
  /// on threads of their own, joined into ModelArtifacts::object. Empty (or
  /// with keepLLVMIR / emitAssembly, which print the one linked module): one
  /// module, emitted on one thread.
  std::string relocatableLinker;
  /// Reuse and store the kernels' machine code here (KernelCache.h): only
  /// when the kernels are objects of their own (an object emitted with a
  /// relocatableLinker, no IR kept).
  codegen::KernelCache *cache = nullptr;
};

struct ModelArtifacts {
  std::string object, mlir, llvmIR, assembly;
};

/// Compiles `model` with its memory plan for `opts.target`.
Result<ModelArtifacts> compileModel(const Model &model, const MemoryPlan &memory, const ModelCodegenOptions &opts);

/// The C header of a compiled model (C99 and C++); `weights` as in ModelCodegenOptions.
std::string modelHeader(const Model &model, const MemoryPlan &memory, const ModelWeights &weights = {});

/// A C99 smoke test (`--emit=test`) and benchmark (`--emit=benchmark`) of
/// model `name`, written against its header file `header` alone (and, for a
/// model with external weights, the runtime that maps `weightsFile`, their
/// default weights file: they then need tgc::runtime).
std::string modelTestProgram(const std::string &name, const std::string &header, const std::string &weightsFile = "");
std::string modelBenchmarkProgram(const std::string &name, const std::string &header,
                                  const std::string &weightsFile = "");

/// The tensors the caller provides, in argument order: all but the placed ones.
std::vector<size_t> exposedTensors(const Model &model, const std::set<size_t> &placed);
/// The argument position (in `exposed`) of the model's random key or counter, -1 if none.
int exposedRandomTensor(const Model &model, const std::vector<size_t> &exposed, ModelTensor::Random kind);

/// The names the metadata gives the plan's kernels: the KernelInfo name, or,
/// for tinygrad's pre-codegen placeholder "test", the name tinygrad's
/// codegen would give the unoptimized kernel (E_/r_ and the loop sizes), else
/// "kernel<k>"; repeats get tinygrad's n1, n2, ... suffixes.
std::vector<std::string> modelKernelNames(const SchedulePlan &plan);

/// TGC_DTYPE_* of Runtime/ModelABI.h, 0 for a dtype a model cannot expose.
int modelDTypeCode(DType dt);

} // namespace tgc
