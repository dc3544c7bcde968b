//===- VerifierRules.h - the named rules of the spec verifier ---*- C++ -*-===//
//
// Internal to the verifier: the table of rules that Verifier.cpp applies to
// every node. A rule has a name (printed in diagnostics as "rule: name"), the
// ops it applies to, the regions it applies in, and a check that returns what
// is wrong ("" when the rule holds).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tgc::verifier {

/// Where a node sits: outside kernel bodies (the tensor graph, the graph of
/// CALLs, LINEAR schedules) or inside a kernel (under a SINK whose arg is a
/// KernelInfo, or a PROGRAM's LINEAR listing). A node shared by both gets the
/// rules of both.
enum Region : uint8_t { Outer = 1, Kernel = 2, AnyRegion = Outer | Kernel };

struct Rule {
  std::string_view name;
  OpSet ops; ///< empty: every op
  uint8_t regions;
  std::string (*check)(const UOp *u);
};

/// Every rule, in the order they are tried; a node reports only its first violation.
std::span<const Rule> rules();

/// The dtype tinygrad derives for the node from (op, src, arg)
/// (tinygrad's dtype_from_uop), or nullopt where it derives none.
std::optional<DType> derivedDType(const UOp *u);

} // namespace tgc::verifier
