//===- Inspect.h - what `tgc opt --stats` and `--emit=dot` show -*- C++ -*-===//
//
// Views of a graph for people: counts and cost estimates (--stats), and
// Graphviz drawings of the tensor graph, the kernel graph and the schedule
// (--emit=dot). The kernels of a graph are the CALLs of its LINEAR when it has
// been scheduled, else the CALLs of kernel bodies (SINK with KernelInfo).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Graph.h"

#include <string>
#include <vector>

namespace tgc::driver {

/// The kernel CALLs of g: a LINEAR root's sources in order (also the LINEAR
/// of a CALL(LINEAR, ...) root), else every CALL whose body is a kernel SINK.
/// `scheduled` tells which case it was.
std::vector<const UOp *> graphKernels(const Graph &g, bool *scheduled = nullptr);

/// The number of distinct nodes reachable from g's roots (entering call bodies).
size_t graphNodeCount(const Graph &g);

/// "stats: ..." lines: node, kernel and buffer counts, total estimated flops
/// and bytes, then one line per kernel. `inputNodes` is the node count of the
/// graph as read (before any pass).
std::string formatStats(const Graph &g, size_t inputNodes);

/// A Graphviz digraph of g: the schedule (kernels in LINEAR order, edges
/// labelled RAW / WAR / WAW with the buffer), the kernel graph (kernels,
/// buffer states, AFTER ordering edges) or the tensor graph (every node).
std::string emitDot(const Graph &g);

} // namespace tgc::driver
