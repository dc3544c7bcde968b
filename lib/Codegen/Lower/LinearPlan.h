//===- LinearPlan.h - a LINEAR's buffers, views, kernels and calls -*- C++ -*-===//
//
// The static part of tinygrad's final schedule (linear.json: LINEAR of
// CALL(kernel SINK | COPY, *buffer args)), resolved before anything is
// compiled: every storage the calls pass, each argument as a byte range of
// one of them (tinygrad's memory planner passes BITCAST(SHRINK(BUFFER, offset,
// size)) views of an int8 arena), the distinct kernel bodies (tinygrad's
// method cache: identical bodies compile once), the calls in order and the
// Variables bound at run time. Lowering (LowerKernels.h), execution
// (Exec/CompiledLinear.h) and models (Model/Model.h) all read it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/UOp.h"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

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
  /// The SHA-256 of what it compiles from (signature, decisions, optimized
  /// UOps), set with its symbol by nameKernelsByContent: the kernel cache's
  /// key holds it, so the content is printed and hashed once.
  std::string contentDigest;
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

/// A kernel's function name: k<tag>_<its name, made a C identifier>. planLinear
/// tags kernels by their index, the kernel cache by their content.
std::string kernelSymbol(const std::string &tag, const std::string &name);

} // namespace tgc
