//===- Mops.h - movement-op rewrite rules shared by the passes --*- C++ -*-===//
//
// tinygrad's pm_mops (schedule/rangeify.py: a movement op under an INDEX is
// folded into the index, AFTER/END move below movement ops), mop_cleanup
// (uop/movement.py: merge and cancel RESHAPEs/PERMUTEs, INDEX/STACK folds)
// and UOp.contiguous_view (is a movement view a contiguous byte range of its
// buffer, and at which offset).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Schedule/Sugar.h"

namespace tgc::rangeify {

const PatternMatcher &pmMops();
const PatternMatcher &mopCleanup();

/// tinygrad's UOp.contiguous_view: (storage node, element offset) when the
/// view `u` reads one contiguous run of its storage, else nullopt.
std::optional<std::pair<const UOp *, int64_t>> contiguousView(const UOp *u);
/// Builds contiguousView's rule table (PassInfo::prepare).
void prepareContiguousView();

} // namespace tgc::rangeify
