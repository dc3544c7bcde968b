//===- Verifier.h - tinygrad's spec rules -----------------------*- C++ -*-===//
//
// Checks a graph against the rules of tinygrad's uop/spec.py: the shared
// rules, the tensor-level rules (spec_tensor), the kernel-graph rules
// (spec_kernel_graph) and the kernel-body rules. Each violation names the node
// (its id, op, and where it came from in the input) and the rule it breaks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/Graph.h"

#include <span>
#include <vector>

namespace tgc {

struct VerifyOptions {
  size_t maxErrors = 20; ///< stop collecting after this many violations
};

/// Every violation found under the roots (empty = valid).
std::vector<Diagnostic> verify(std::span<const UOp *const> roots, const VerifyOptions &opts = {});
/// The first violation as an error (with a note counting the others), or success.
Status verifyGraph(const Graph &g, const VerifyOptions &opts = {});

} // namespace tgc
