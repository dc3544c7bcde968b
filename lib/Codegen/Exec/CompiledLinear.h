//===- CompiledLinear.h - compile and run a LINEAR of kernel CALLs -*- C++ -*-===//
//
// tinygrad's final schedule (linear.json: LINEAR of CALL(kernel SINK | COPY,
// *buffer args)) compiled into one native module and run over host buffers,
// the counterpart of tinygrad's compile_linear + run_linear on the CPU device.
//
// Compilation: every distinct kernel body becomes a function (KernelToMLIR.h),
// and one more function executes the whole LINEAR in order:
//
//   void tgc_run(void **buffers, const int64_t *vars)
//     // buffers[i] = storage of buffers()[i], vars[j] = the value of vars[j]
//
// which calls the kernels with their argument pointers (views resolved to
// base + byte offset) and variables, and performs COPY calls with memcpy.
// Variables (tinygrad's Variable: a symbolic batch, offset or reduction
// length) are kernel PARAMs in the ALU address space; buffers are sized for
// their maximum, and one compiled schedule runs at every value in range. The module goes
// through MLIRToLLVM.h (O3 for the target CPU), then to the ORC JIT (run()) or to
// an object file (compileLinearToObject) that exports `tgc_run` and one
// `void <kernel>_entry(void **args)` per kernel.
//
// CALL arguments may be BUFFERs or views of them: BITCAST(SHRINK(BUFFER,
// offset, size)) as left by tinygrad's memory planner (an int8 arena sliced
// into typed intermediates).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Lower/KernelCache.h"
#include "Codegen/Lower/LinearPlan.h"
#include "Codegen/Lower/MLIRToLLVM.h"
#include "Codegen/Opt/KernelOptions.h"
#include "IR/Diagnostic.h"
#include "IR/Graph.h"
#include "IR/UOp.h"
#include "Runtime/Memory.h"

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

struct CodegenOptions {
  codegen::TargetOptions target; ///< default: the host CPU at O3
  std::string runSymbol = "tgc_run";
  bool keepIR = false;           ///< keep the kernel MLIR and optimized LLVM IR text
  codegen::KernelOptions kernel; ///< kernel optimizations (threads, reassociation, tiling)
  /// Reuse and store the kernels' machine code here (not with keepIR); the
  /// plan's kernels are then named by content (nameKernelsByContent).
  codegen::KernelCache *cache = nullptr;
};

class CompiledSchedule {
public:
  ~CompiledSchedule();
  const SchedulePlan &plan() const { return plan_; }
  const std::vector<ScheduleBuffer> &buffers() const { return plan_.buffers; }
  /// How many of buffers() are the LINEAR's own (the rest are the plan
  /// rewrites' scratch, which run() provides when they are not given).
  size_t linearBuffers() const { return linearBuffers_; }
  /// Runs every CALL in order; data[i] points at >= buffers()[i].bytes() bytes,
  /// vars[j] is the value of plan().vars[j] (checked against its range). The
  /// buffers the plan rewrites added after the LINEAR's own (scratch: partial
  /// sums, SplitVectorMatrix.h) may be left out: the first such run
  /// allocates them and later ones reuse them (a run while another thread's
  /// holds them allocates its own).
  Status run(std::span<void *const> data, std::span<const int64_t> vars = {}) const;
  /// Runs one kernel (by index into plan().kernels) on explicit argument
  /// pointers and the values of its variables (ScheduleKernel::vars order).
  Status runKernel(size_t kernel, std::span<void *const> args, std::span<const int64_t> vars = {}) const;
  /// Filled when CodegenOptions::keepIR.
  const std::string &mlirText() const { return mlir_; }
  const std::string &llvmIRText() const { return llvmIR_; }
  double compileSeconds() const { return compileSeconds_; }

private:
  friend Result<std::unique_ptr<CompiledSchedule>> compileLinear(const UOp *, const CodegenOptions &);
  CompiledSchedule() = default;
  struct Native;
  SchedulePlan plan_;
  size_t linearBuffers_ = 0; ///< the LINEAR's own buffers, before the plan rewrites added scratch
  std::unique_ptr<Native> native_;
  std::string mlir_, llvmIR_;
  double compileSeconds_ = 0;
};

/// Compiles every kernel of `linear` (a LINEAR node) for the JIT.
Result<std::unique_ptr<CompiledSchedule>> compileLinear(const UOp *linear, const CodegenOptions &opts = {});
/// The same for a linear.json document (its root named "linear", or its only root).
Result<std::unique_ptr<CompiledSchedule>> compileLinear(const Graph &linearDoc, const CodegenOptions &opts = {});

/// The schedule as a relocatable object file (see the file comment).
Result<std::string> compileLinearToObject(const UOp *linear, const CodegenOptions &opts = {});

/// Host storage for every buffer of a plan: tgc_alloc_tensor's (64-byte
/// aligned, zero-filled, huge pages for big buffers).
class HostBuffers {
public:
  /// Allocates the buffers of `plan`; a diagnostic if memory runs out.
  static Result<HostBuffers> allocate(const SchedulePlan &plan);
  size_t size() const { return ptrs_.size(); }
  void *data(size_t i) const { return ptrs_[i]; }
  std::span<std::byte> bytes(size_t i) const { return {static_cast<std::byte *>(ptrs_[i]), sizes_[i]}; }
  std::span<void *const> pointers() const { return ptrs_; }

private:
  HostBuffers() = default;
  std::vector<rt::TensorMemory> storage_;
  std::vector<void *> ptrs_;
  std::vector<size_t> sizes_;
};

} // namespace tgc
