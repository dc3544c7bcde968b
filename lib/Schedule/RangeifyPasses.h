//===- RangeifyPasses.h - the steps of get_kernel_graph ---------*- C++ -*-===//
//
// Each function is one graph_rewrite of tinygrad's get_kernel_graph
// (tinygrad/schedule/rangeify.py, pipeline-schedule.md §3.3) applied to a
// function body (a SINK without KernelInfo). They raise ScheduleError on
// input they cannot handle; the registered passes (Passes.cpp) turn that
// into a Diagnostic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Schedule/Sugar.h"

namespace tgc::rangeify {

/// pm_mops + earliest_rewrites (pre-order).
const UOp *earliestRewritesPass(const UOp *sink);
/// pm_copy_to_store (pre-order, BUFFER slots from 0).
const UOp *copyToStorePass(const UOp *sink);
/// run_rangeify (RangeifyIndexing.h).
const UOp *runRangeify(const UOp *sink);
/// symbolic + pm_reduce_simplify + pm_const_buffer_folding + pm_remove_bufferize (post-order).
const UOp *cleanupPass(const UOp *sink);
/// pm_limit_bufs (post-order).
const UOp *limitBufsPass(const UOp *sink);
/// pm_add_buffers + pm_add_param_range_tags (pre-order, BUFFER slots after the largest GLOBAL one).
const UOp *addBuffersPass(const UOp *sink);
/// split_kernels (pre-order) then pm_no_indexing_calls (post-order).
const UOp *splitKernelsPass(const UOp *sink);
/// The whole of get_kernel_graph.
const UOp *kernelGraph(const UOp *sink);

/// Each builds the rule tables of the pass above of that name (PassInfo::prepare).
void prepareEarliestRewrites();
void prepareCopyToStore();
void prepareRangeify();
void prepareCleanup();
void prepareLimitBufs();
void prepareAddBuffers();
void prepareSplitKernels();
/// The tables of reduceSimplify, including the one its rules use.
void prepareReduceRules();

/// The matchers, for tests and for other passes that reuse them.
const PatternMatcher &earliestRewrites();
const PatternMatcher &reduceSimplify();
const PatternMatcher &constBufferFolding();
const PatternMatcher &removeBufferizePM();

} // namespace tgc::rangeify
