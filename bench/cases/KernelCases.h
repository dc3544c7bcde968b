//===- KernelCases.h - the kernel graphs perf_bench owns ---------*- C++ -*-===//
//
// The kernel cases that /work/shared/perf lacks (issue #9's benchmark list):
// elementwise chains from L1- to far beyond last-level-cache size, max and sum
// reductions, softmax and layernorm beyond the cache, small square matmuls,
// a skinny matmul, a batched matmul and attention. Each is a tensor graph as
// tinygrad's frontend would build it (graph-format.md §6): its inputs are
// generated inside the graph from arange, ((i*mul + add) % p) / p - 0.5, and
// stored in their own buffers, as the perf cases' inputs are, so the
// schedule's first kernels write them and the kernels under test read them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Graph.h"

#include <functional>
#include <string>
#include <vector>

namespace tgc::bench {

struct KernelCase {
  std::string name;  ///< row name, sizes included (full-size names are kept in smoke runs)
  std::string group; ///< "elementwise", "reduce", "matmul", "attention"
  std::string what;  ///< one line: the computation and its sizes
  /// Its working set is far beyond the last-level cache: counts for the
  /// "elementwise and reductions >= 80% of streaming bandwidth" target.
  bool beyondCache = false;
  /// The case's size parameters (their meaning is the case's), full and for smoke runs.
  std::vector<int64_t> sizes, smokeSizes;
  /// Builds the graph's root SINK at the given sizes.
  std::function<const UOp *(Context &, const std::vector<int64_t> &)> build;
  /// outputChecksum of the output at the given sizes, computed by brute force
  /// in double from the generator formula (no tgc code involved).
  std::function<double(const std::vector<int64_t> &)> reference;
};

/// The weighted sum the references compute: sum of out[i] * (1 + i % 5)
/// (weighted, so that a softmax whose rows sum to 1 in the wrong order fails).
double outputChecksum(const float *out, int64_t n);

/// Every kernel case, in table order.
const std::vector<KernelCase> &kernelCases();

/// The case's graph at full or smoke sizes as a document (root "sink"), ready for the schedule pipeline.
Graph kernelCaseGraph(Context &ctx, const KernelCase &c, bool smoke);

} // namespace tgc::bench
