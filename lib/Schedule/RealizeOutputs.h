//===- RealizeOutputs.h - every SINK source as dense storage ----*- C++ -*-===//
//
// What tinygrad's numpy() adds to realize(): tinygrad realizes the base of a
// tensor and leaves the tensor a view of it, and skips tensors with no device
// (virtual: computed from constants only) altogether; numpy() reads one
// through Tensor._buffer, which makes it contiguous and clones a deviceless
// tensor to the CPU. realizeOutputs rewrites a tensor graph's SINK so that the
// schedule stores every source whole, densely, in storage of its own.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/UOp.h"

#include <set>
#include <string>
#include <vector>

namespace tgc {

struct RealizedOutputs {
  const UOp *sink = nullptr;
  /// Per SINK source: the fresh BUFFER it is cloned into, or null when the
  /// source is kept (callify already stores it whole into fresh storage).
  std::vector<const UOp *> clones;
  /// Per SINK source: {BUFFER, byte offset} when the source is a contiguous
  /// view of a BUFFER of the graph (movement ops and BITCASTs that read one
  /// dense run of it, e.g. `x.bitcast(int32)`, `x[1:3]`, x itself), which is
  /// kept: tinygrad's numpy() reads such a tensor as a view of the buffer
  /// (contiguous_mops_to_view), running no kernel. {null, 0} otherwise.
  std::vector<std::pair<const UOp *, int64_t>> views;
};

/// Whether callify stores SINK source `s` whole into fresh storage of its own
/// (the buffer map then maps the source, up to RESHAPEs, to RESHAPE(BUFFER)):
/// `s` is, up to RESHAPEs, a base tinygrad's transform_to_call realizes or a
/// CONTIGUOUS of a computed value (not of a view, an assign or a buffer, which
/// callify folds into the existing storage).
bool storedDensely(const UOp *s);

/// Clones every source of `sink` that is neither storedDensely nor a view of
/// a BUFFER (RealizedOutputs::views), and those listed in `force`, into a fresh BUFFER: AFTER(B, STORE(B, src)) as tinygrad's
/// UOp.clone builds it, on the source's device or `defaultDevice` when it has
/// none, in the source's dtype made strong. Fresh BUFFERs take slots from
/// `firstFreeSlot` on. Empty sources are left alone; sources on several devices
/// and with symbolic shapes are left for the schedule pipeline to diagnose.
Result<RealizedOutputs> realizeOutputs(const UOp *sink, const std::string &defaultDevice, int64_t firstFreeSlot,
                                       const std::set<size_t> &force = {});

/// Registers the `realize-outputs` pass (realizeOutputs on every tensor-graph
/// root, default device CPU).
void registerRealizeOutputsPass();

} // namespace tgc
