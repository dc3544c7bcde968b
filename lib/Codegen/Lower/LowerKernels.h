//===- LowerKernels.h - one module for a whole schedule (internal) -*- C++ -*-===//
//
// The shared middle of CompiledLinear.cpp (JIT, tgc_run objects) and
// ModelCodegen.cpp (model objects for `tgc compile`): every kernel of a plan
// lowered into one MLIR module, the caller's own functions added to it, then
// LLVM IR optimized for a target. Includes MLIR/LLVM headers' forward
// declarations only; drivers use Schedule.h / ModelCodegen.h instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "Codegen/Opt/OptimizeKernel.h"
#include "Codegen/Exec/CompiledLinear.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm
namespace mlir {
class ModuleOp;
class OpBuilder;
class Value;
} // namespace mlir

namespace tgc::codegen {

class KernelCache;

struct ScheduleModuleHooks {
  /// Export the per-kernel `_entry` wrappers (otherwise internal, and dropped when unused).
  bool exportEntries = true;
  /// Functions the caller adds to the MLIR module after the kernels.
  std::function<Status(mlir::ModuleOp)> addMLIR;
  /// Globals the caller adds to the LLVM module before it is optimized.
  std::function<Status(llvm::Module &)> addLLVM;
  /// When not empty and the kernels are compiled in several groups, each group
  /// is also emitted as an object file on its own thread (LoweredSchedule::objects,
  /// to be joined by a relocatable link) instead of being linked into one
  /// module: code generation runs in parallel too. The kernels one group calls
  /// in another are then global symbols, renamed to this prefix + their name
  /// (hidden), so that two models' objects can be linked together.
  std::string objectSymbolPrefix;
  /// What the caller's functions weigh per call of the schedule, in kernel
  /// UOps, when the kernels are split into groups (the main group, which holds
  /// them, gets fewer kernels).
  size_t uopsPerCall = 0;
  /// Kernels reused from and stored into this cache (KernelCache.h), when the
  /// emission is split (objectSymbolPrefix) and no MLIR is kept: each kernel
  /// is then an object of its own, looked up before it is lowered. The plan's
  /// kernels should be named by content (nameKernelsByContent), so that equal
  /// kernels of other schedules hit and equal kernels of this one are lowered once.
  KernelCache *cache = nullptr;
};

struct LoweredSchedule {
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> module;
  std::string mlirText; ///< the MLIR before lowering, when asked for
  /// One object per group, the first holding the caller's functions, when
  /// hooks.objectSymbolPrefix split the emission (ctx and module are then null).
  std::vector<std::string> objects;
  /// With a cache (ScheduleModuleHooks::cache): a key naming all of `objects`
  /// (for a cached join of them); else empty.
  std::string cacheKey;
};

/// What the kernel optimizations need to know of `tm`.
TargetTraits targetTraits(const llvm::TargetMachine &tm);
/// The kernel-optimization stage: every kernel of `plan` through optimizeKernel.
std::vector<OptimizedKernel> optimizeKernels(const SchedulePlan &plan, const KernelOptions &opts, const TargetTraits &target);

/// Renames `plan`'s kernels by what they compile to (their optimized UOps,
/// decisions and signature, `kernels` as optimizeKernels made them):
/// k<hash>_<name>. Equal kernels get equal symbols, within a schedule and
/// across schedules, so that the kernel cache can share their machine code.
void nameKernelsByContent(SchedulePlan &plan, const std::vector<OptimizedKernel> &kernels);

/// The lowering stage: the optimized kernels of `plan` (optimizeKernels, one
/// per plan kernel) to MLIR as their decisions say, `hooks` applied, then to
/// LLVM IR optimized for `tm`. `opts` are the options they were optimized with.
Result<LoweredSchedule> lowerSchedule(const SchedulePlan &plan, const std::vector<OptimizedKernel> &kernels,
                                      const ScheduleModuleHooks &hooks, const KernelOptions &opts, unsigned optLevel,
                                      bool keepMLIR, llvm::TargetMachine &tm);

/// Emits the calls of `plan` in order at `b`'s insertion point: kernel calls
/// with argument pointers base(buffer) + byte offset and the values
/// var(index into plan.vars) of their variables (i64), COPY as memcpy/memmove.
/// `around`, when given, emits code before (end = false) and after each call.
void emitScheduleCalls(mlir::OpBuilder &b, const SchedulePlan &plan,
                       const std::function<mlir::Value(int buffer)> &base,
                       const std::function<mlir::Value(int var)> &var,
                       const std::function<void(size_t call, bool end)> &around = nullptr);

} // namespace tgc::codegen
