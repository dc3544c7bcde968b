//===- ParallelLoop.h - which kernel loop runs on threads -------*- C++ -*-===//
//
// The analysis behind the threads optimization: tinygrad's CPU backend puts
// one global axis on host threads (the THREAD opt of its heuristic,
// pipeline-codegen.md §5); tgc picks the outermost loop of a kernel when its
// iterations are independent and the kernel is big enough to pay for waking
// the pool. The lowering (KernelToMLIR.cpp) then outlines that loop into a
// body over [begin, end) called through tgc_parallel_for (Runtime/Parallel.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#include "IR/UOp.h"

#include <optional>

namespace tgc::codegen {

/// Whether `x` is `u` or below it through srcs (a value depends on a range, a
/// loop nest contains a node).
bool dependsOn(const UOp *u, const UOp *x);

/// The elements one iteration of `range` reaches through the index `idx`:
/// E when idx = range * E + rest with every value of rest in [0, E), so that
/// iteration i touches only elements [i*E, i*E + E) (a row of E elements);
/// nullopt otherwise. A gated index (WHERE(valid, i, Invalid)) is read as i.
std::optional<int64_t> rowStride(const UOp *idx, const UOp *range);
/// c when idx = range * c + terms without range (sums and products by
/// constants of the ranges); nullopt when range enters it otherwise.
std::optional<int64_t> rangeStride(const UOp *idx, const UOp *range);

/// A RANGE's literal trip count (nullopt: not a RANGE, or a symbolic bound).
std::optional<int64_t> tripCount(const UOp *range);
/// The most iterations a RANGE runs: its literal trip count, or the largest
/// value of a symbolic bound (a variable's maximum); nullopt if unbounded.
std::optional<int64_t> maxTripCount(const UOp *range);

/// Product of the trip counts of the distinct RANGEs of a kernel's loop nest
/// (a proxy for its work), summed over the nests of a kernel that runs
/// several one after another; a symbolic trip count counts at its maximum
/// (the work the kernel is compiled for); -1 when one is unbounded.
int64_t kernelLoopWork(const UOp *sink);

/// Whether kernel-local tables filled with `fillWork` iterations before a loop
/// nest of `work` (as parallelRange weighs it) leave it worth threading: every
/// chunk of a threaded kernel fills them again.
bool tableFillsPay(int64_t work, int64_t fillWork);

/// The RANGE to run on threads, or nullptr. It must be the outermost range of
/// the kernel's only top-level END (or of its last one, after ENDs that fill
/// kernel-local tables without it, which every chunk then runs first), with a
/// literal trip count >= 2 or a variable one (RANGE(PARAM n), n up to >= 2: its
/// value is the pool's count), not a REDUCE axis; every STORE must depend on it (iterations write disjoint elements),
/// and a buffer that is stored may only be loaded at exactly the stored index
/// (in-place updates) or where every access to it is a row of the same
/// rowStride (an earlier loop nest of the iteration wrote it: RowFusion.h),
/// so no iteration reads what another writes. With tables,
/// `work` must also outweigh their refills (every chunk fills them again).
/// `work`: the kernel's loop work if not kernelLoopWork(sink) (-2), for a body
/// rewritten from a kernel whose work it was.
const UOp *parallelRange(const UOp *sink, const KernelOptions &opts, int64_t work = -2);

} // namespace tgc::codegen
