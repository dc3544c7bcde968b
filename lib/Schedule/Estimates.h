//===- Estimates.h - work and traffic of one kernel -------------*- C++ -*-===//
//
// A static cost estimate per kernel, in the spirit of tinygrad's
// Estimates.from_uops (tinygrad/renderer/__init__.py), computed here on the
// kernel body as a graph rather than on its linearized uops:
//  - flops: every ALU op outside index arithmetic counts once per iteration
//    of the RANGEs it sits in (MULACC twice); a REDUCE counts one op per
//    element it folds, i.e. per iteration of its source's ranges;
//  - bytes: per GLOBAL buffer argument and direction, the elements an INDEX
//    into it can reach (the product of its ranges' trip counts) times the
//    item size, capped at the buffer's size: tinygrad's `mem`, which counts
//    re-read bytes once. A buffer the access analysis says is read or written
//    without an INDEX counts whole.
// A RANGE whose trip count is not a constant counts its upper bound, and the
// estimate says it is an upper bound (`exact` = false).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <cstdint>
#include <vector>

namespace tgc::sched {

struct KernelEstimate {
  int64_t flops = 0;
  int64_t bytesRead = 0, bytesWritten = 0;
  bool exact = true; ///< false when a trip count was only bounded
  std::vector<int64_t> ins, outs; ///< argument slots read / written (access analysis)
};

/// The estimate for a kernel body: a SINK with KernelInfo whose PARAMs are the
/// call's arguments. Bodies the access analysis cannot analyse give zero
/// bytes. `argBytes[i]` is the size of argument i, used for buffers read or
/// written whole (pass {} when unknown).
KernelEstimate estimateKernel(const UOp *sinkBody, const std::vector<int64_t> &argBytes = {});

/// The byte size of a BUFFER or PARAM: its element count (a constant src[0])
/// times its item size; -1 if the count is not a constant.
int64_t storageBytes(const UOp *buf);

} // namespace tgc::sched
