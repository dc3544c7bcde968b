//===- Schedule.h - compile and run a LINEAR of kernel CALLs ----*- C++ -*-===//
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
// through Lower.h (O3 for the target CPU), then to the ORC JIT (run()) or to
// an object file (compileLinearToObject) that exports `tgc_run` and one
// `void <kernel>_entry(void **args)` per kernel.
//
// CALL arguments may be BUFFERs or views of them: BITCAST(SHRINK(BUFFER,
// offset, size)) as left by tinygrad's memory planner (an int8 arena sliced
// into typed intermediates).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/KernelOptions.h"
#include "Codegen/Lower.h"
#include "IR/Diagnostic.h"
#include "IR/Graph.h"
#include "IR/UOp.h"

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
};

/// A storage the schedule reads or writes: one BUFFER node of the LINEAR.
struct ScheduleBuffer {
  const UOp *node = nullptr;
  DType dtype;
  int64_t numel = 0;
  int64_t slot = -1; ///< ParamArg.slot: tinygrad's buffer id, shared with graph.json/call.json of a case
  std::string device;
  size_t bytes() const { return size_t(numel) * size_t(dtype.itemsize()); }
};

/// A CALL argument: a byte range of one buffer.
struct ScheduleArg {
  int buffer = -1;
  int64_t byteOffset = 0;
  int64_t bytes = 0;
};

struct ScheduleCall {
  enum class Kind { Kernel, Copy } kind = Kind::Kernel;
  const UOp *call = nullptr;
  int kernel = -1; ///< index into kernels() for Kind::Kernel
  std::vector<ScheduleArg> args; ///< Copy: {dst, src}
};

struct ScheduleKernel {
  const UOp *sink = nullptr;
  std::string name;   ///< KernelInfo.name
  std::string symbol; ///< its function; the uniform entry is symbol + "_entry"
  unsigned numArgs = 0;
  bool noalias = true; ///< no CALL passes overlapping byte ranges to it
  /// Its variables, the arguments after the buffers (kernelVariables order):
  /// indices into SchedulePlan::vars.
  std::vector<int> vars;
};

/// A variable of the schedule: a value bound at run time, in [min, max].
struct ScheduleVar {
  std::string name;
  DType dtype;
  int64_t min = 0, max = 0;
};

/// The static part of a schedule: buffers, kernels and calls in order.
struct SchedulePlan {
  std::vector<ScheduleBuffer> buffers; ///< in order of first use
  std::vector<ScheduleKernel> kernels;
  std::vector<ScheduleCall> calls;
  std::vector<ScheduleVar> vars; ///< every kernel's variables (one per name), in order of first use
  /// Index of the variable named `name`; -1 if absent.
  int indexOfVar(std::string_view name) const;
  /// A diagnostic unless `name` is a variable and `value` in its range.
  Status checkVar(std::string_view name, int64_t value) const;
  /// The value of every variable, in vars order, from `values` (by name): a
  /// diagnostic for an unknown name, a missing variable or a value out of range.
  Result<std::vector<int64_t>> bindVars(const std::map<std::string, int64_t> &values) const;
  /// Index of BUFFER `node`, or of the buffer with tinygrad buffer id `slot`; -1 if absent.
  int indexOf(const UOp *node) const;
  int indexOfSlot(int64_t slot) const;
  /// Index of BUFFER `buf`, appended (no CALL uses it yet) when absent; a
  /// diagnostic for a BUFFER without a constant element count or storable dtype.
  Result<int> addBuffer(const UOp *buf);
};

/// Checks a LINEAR and resolves its buffers, views, kernels and calls.
Result<SchedulePlan> planLinear(const UOp *linear);

class CompiledSchedule {
public:
  ~CompiledSchedule();
  const SchedulePlan &plan() const { return plan_; }
  const std::vector<ScheduleBuffer> &buffers() const { return plan_.buffers; }
  /// Runs every CALL in order; data[i] points at >= buffers()[i].bytes() bytes,
  /// vars[j] is the value of plan().vars[j] (checked against its range).
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

/// Host storage for every buffer of a plan: 64-byte aligned, zero-filled.
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
  struct Free {
    void operator()(void *p) const;
  };
  std::vector<std::unique_ptr<void, Free>> storage_;
  std::vector<void *> ptrs_;
  std::vector<size_t> sizes_;
};

} // namespace tgc
