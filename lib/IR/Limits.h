//===- Limits.h - resource bounds a graph must stay within ------*- C++ -*-===//
//
// A graph too large to handle is refused with a message before any pass
// attempts it: one with too many nodes, or whose BUFFERs would need more
// memory than allowed. tinygrad has no counterpart (it would try and fail in
// the allocator); the driver's --max-nodes / --max-memory set these.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/Graph.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace tgc {

struct ResourceLimits {
  uint64_t maxNodes = 10'000'000;       ///< nodes in the graph's context
  uint64_t maxBufferBytes = 64ull << 30; ///< sum of numel * itemsize over all BUFFERs
};

/// Success, or an error saying the graph has more than `maxNodes` nodes.
Status checkNodeLimit(const Graph &g, uint64_t maxNodes);
/// Success, or an error (located at the largest BUFFER) saying the graph's
/// BUFFERs need more than `maxBytes` bytes together.
Status checkBufferLimit(const Graph &g, uint64_t maxBytes);
/// Both checks.
Status checkResourceLimits(const Graph &g, const ResourceLimits &limits);

/// The bytes of a BUFFER node (numel * itemsize), nullopt when its size is
/// symbolic or ill-formed, UINT64_MAX when the product overflows.
std::optional<uint64_t> bufferBytes(const UOp *buffer);

/// A byte count such as "4096" or "64GiB": an integer with an optional binary
/// suffix K/KiB, M/MiB, G/GiB, T/TiB (powers of 1024). nullopt if malformed or
/// beyond 64 bits.
std::optional<uint64_t> parseByteSize(std::string_view text);

} // namespace tgc
