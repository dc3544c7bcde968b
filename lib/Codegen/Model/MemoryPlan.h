//===- MemoryPlan.h - place a model's intermediates in one workspace -*- C++ -*-===//
//
// The memory planner of `tgc compile` (tinygrad: memory_plan_rewrite in
// schedule/memory.py, pipeline-schedule.md §6). A compiled model gets its
// interface tensors from the caller and everything else from one workspace;
// intermediates whose lifetimes do not overlap share workspace bytes.
//
// Lifetime of a buffer: from the first to the last CALL of the LINEAR that
// passes any byte of it. A buffer bound to an interface tensor that does not
// cover it exactly (a tensor at an offset, a second tensor on one buffer)
// lives in the workspace too: the entry copies inputs in before the first
// call (lifetime starts at -1) and outputs out after the last (lifetime ends
// at calls.size()).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Model/Model.h"
#include "IR/Diagnostic.h"

#include <cstdint>
#include <vector>

namespace tgc {

struct MemoryPlan {
  static constexpr int64_t kAlignment = 64; ///< of the workspace base and of every offset in it
  int64_t workspaceBytes = 0;
  /// Per plan buffer: byte offset in the workspace; -1 = an interface tensor's
  /// buffer provided by the caller.
  std::vector<int64_t> offset;
  /// Per plan buffer: the index into Model::tensors whose pointer is this
  /// buffer (offset -1), or -1.
  std::vector<int> owner;
  /// Bytes the workspace would need without any sharing (sum of the rounded sizes).
  int64_t unsharedBytes = 0;
};

/// Plans `model`'s buffers; a diagnostic for a tensor bound outside its buffer.
Result<MemoryPlan> planMemory(const Model &model);

/// Bytes of the int8 arenas tinygrad's memory planner left in a LINEAR (the
/// BUFFERs its CALLs pass only as SHRINK/BITCAST views), 0 if there are none.
int64_t tinygradArenaBytes(const SchedulePlan &plan);

} // namespace tgc
