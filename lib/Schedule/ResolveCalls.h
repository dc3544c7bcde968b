//===- ResolveCalls.h - a scheduled function becomes a LINEAR ---*- C++ -*-===//
//
// tinygrad's pm_resolve_linear_call + pm_copy_from_store: the CALL(LINEAR,
// *BUFFERs) of a scheduled function becomes the LINEAR of kernel CALLs over
// BUFFERs that tinygrad's linear.json holds (before memory planning).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/Graph.h"

namespace tgc {

/// Replaces every root CALL(LINEAR, *args) by its resolved LINEAR.
Status resolveCalls(Graph &g);
/// Builds resolveCalls' rule table (PassInfo::prepare).
void prepareResolveCalls();

} // namespace tgc
