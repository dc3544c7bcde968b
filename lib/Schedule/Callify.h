//===- Callify.h - the tensor graph as one stateless function ---*- C++ -*-===//
//
// tinygrad's transform_to_call (tinygrad/tensor.py, pipeline-schedule.md
// §3.2): SINK(tensors to realize) becomes CALL(SINK(effects over PARAMs),
// *BUFFERs), plus the map from each realized tensor node to its final
// storage view.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/UOp.h"

#include <utility>
#include <vector>

namespace tgc {

struct CallifyResult {
  const UOp *call = nullptr;
  /// (original tensor node, its storage view), in the order they were found.
  std::vector<std::pair<const UOp *, const UOp *>> bufferMap;
};

/// Callify the tensor graph `bigSink`. Fresh buffers take slots from
/// `firstFreeSlot` on (tinygrad's global buffer counter).
Result<CallifyResult> callify(const UOp *bigSink, int64_t firstFreeSlot);

/// One past the largest BUFFER slot reachable from `roots` (0 if none).
int64_t firstFreeBufferSlot(std::span<const UOp *const> roots);
/// Builds callify's rule tables (PassInfo::prepare).
void prepareCallify();

} // namespace tgc
