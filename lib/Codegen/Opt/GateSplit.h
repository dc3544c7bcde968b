//===- GateSplit.h - an output loop split where its gates change -*- C++ -*-===//
//
// A kernel that writes a concatenation computes every part for every output
// and keeps one: tinygrad's backward of attention writes dQ, dK and dV side by
// side along one axis j, as WHERE(j < 64, R_q, 0) + WHERE(64 <= j < 128, R_k, 0)
// + WHERE(128 <= j, R_v, 0), so each output runs three reductions (gated loads
// make two of them sums of zeros) and the loop over j cannot be vectorized
// past the gates. The innermost output loop is split at the constants it is
// compared with (j < c); in each piece the comparisons are constants, the
// simplifier folds the gates away, and only the live reduction is left.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "IR/UOp.h"

namespace tgc::codegen {

/// The kernel with its innermost output loop that is compared with constants
/// (inside at least one other) split into one loop per interval between those
/// constants, each piece's stored value simplified, or `sink` itself. Applies to a kernel of one loop nest
/// (one END over a STORE) of at least two output loops, and only when the
/// pieces evaluate fewer reductions than the loop did.
const UOp *splitGates(const UOp *sink, const KernelOptions &opts);

} // namespace tgc::codegen
