//===- Linearize.h - kernel graph to a LINEAR of CALLs ----------*- C++ -*-===//
//
// Schedule linearization (pipeline-schedule.md §5.3, the reference revision's
// create_schedule): orders the kernels of a kernel graph so that every kernel
// runs after the kernels its argument states descend from and after its AFTER
// ordering deps, and every read runs before any other write that would destroy
// the contents it needs. When no such order exists it reports a cycle instead
// of letting a kernel read overwritten data.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/Graph.h"
#include "IR/Pass.h"
#include "IR/UOp.h"

#include <string>
#include <vector>

namespace tgc::sched {

/// The LINEAR of CALLs that runs the kernels of `kernelGraph` (usually its
/// SINK) in a valid order. The CALLs take their arguments' storage (BUFFER or
/// PARAM), bound-variable arguments dropped; SINK bodies that received the same
/// storage twice use one PARAM for it where an identical one exists. Fails
/// with "cycle detected in assign graph" (naming the kernels and buffers in a
/// cycle) or with an access-analysis error.
Result<const UOp *> linearize(const UOp *kernelGraph);

/// The CALL a LINEAR holds for kernel call `call` given its arguments'
/// storage `bufs` (bound variables already dropped): when a SINK body receives
/// the same storage twice, a PARAM takes the first slot holding that storage
/// where an otherwise identical PARAM sits there already.
const UOp *scheduledCall(const UOp *call, std::vector<const UOp *> bufs);

/// Why linearize placed a kernel where it did (for `tgc explain-schedule`).
struct ScheduleStep {
  enum class Reason {
    Ready,          ///< no kernel had to run first
    Data,           ///< an argument state it takes depends on the kernel it waited for (read after write)
    After,          ///< an AFTER orders it after that kernel
    WriteAfterRead, ///< it overwrites storage that kernel reads
  };
  size_t kernel = 0;           ///< its index among the kernel graph's kernels
  std::string name;            ///< "kernel 3 'name'"
  int64_t waitedFor = -1;      ///< LINEAR position of the kernel whose completion made it ready (-1: none)
  Reason reason = Reason::Ready;
  std::string why;             ///< the dependency in words
  size_t queuedBehind = 0;     ///< kernels ready before it that ran first (ties go by kernel order)
};
struct LinearizeTrace {
  const UOp *linear = nullptr;
  std::vector<ScheduleStep> steps; ///< one per CALL of `linear`, in order
  /// The orderings AFTERs imposed, each from a kernel to a later one that
  /// takes an AFTER state it produced, or that an AFTER-on-AFTER orders after
  /// it: (LINEAR positions, the AFTER's storage). Only the nearest producers
  /// are listed; data hazards may explain some of them too.
  std::vector<AfterOrdering> afterOrderings;
};
/// linearize, also saying for each kernel which dependency set its position.
Result<LinearizeTrace> linearizeTraced(const UOp *kernelGraph);

/// The `linearize` pass: replaces every root that is not already a LINEAR by
/// its schedule, and records its AFTER orderings in Graph::afterOrderings.
class LinearizePass : public Pass {
public:
  Status run(Graph &g) override;
};

} // namespace tgc::sched
