//===- Ancestry.h - reachability in a kernel graph --------------*- C++ -*-===//
//
// The linearizer's `anc(x)` (pipeline-schedule.md §5.3): the nodes reachable
// from x without entering call bodies. Materialized as a set of kernels per
// node, as the contract states it, it costs nodes x kernels bits, which is
// quadratic in the graph size; this index answers "is t in anc(x)" per query
// instead, in near-constant time for the queries the linearizer makes:
//  - a node precedes its users in every topological order, so t comes before
//    x in both of two orders (sources visited left to right and right to
//    left) or is no ancestor; this settles unrelated nodes;
//  - AFTER states form chains (an AFTER's src[0] leads to the previous state
//    of its buffer); an interval labelling of those chains settles "t is a
//    dep of an AFTER earlier in x's chain", the common case of a buffer's
//    earlier writers;
//  - the rest is a depth-first search from x pruned by both orders.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <cstdint>
#include <span>
#include <vector>

namespace tgc::sched {

class Ancestry {
public:
  static constexpr uint32_t kNone = UINT32_MAX;

  /// Indexes every node reachable from `roots` without entering call bodies.
  explicit Ancestry(std::span<const UOp *const> roots);

  /// The indexed nodes in topological order (sources first).
  const std::vector<const UOp *> &nodes() const { return nodes_; }
  /// u's index in nodes(), or kNone if u is not indexed.
  uint32_t position(const UOp *u) const { return u->id() < posOf_.size() ? posOf_[u->id()] : kNone; }
  /// The sources `anc` follows: all of them but a CALL's or FUNCTION's body.
  static std::span<const UOp *const> deps(const UOp *u) {
    return (u->is(Op::CALL) || u->is(Op::FUNCTION)) && u->numSrc() ? u->src().subspan(1) : u->src();
  }

  /// Whether t is in anc(x) (x itself included). Both must be indexed.
  bool reaches(const UOp *x, const UOp *t) const;

private:
  /// True if t is a dep of an AFTER on x's chain (x's own AFTER included).
  bool onChain(uint32_t x, uint32_t t) const;

  std::vector<const UOp *> nodes_;
  std::vector<uint32_t> posOf_;     // by UOp id
  std::vector<uint32_t> pos2_;      // by position: index in the right-to-left topological order
  std::vector<uint32_t> chainNode_; // by position: the AFTER reached by following src[0], or kNone
  std::vector<uint32_t> tin_, tout_; // by position, for AFTERs: interval of the chain forest
  std::vector<uint32_t> usesBegin_, uses_; // CSR by position: the AFTERs a node is a dep (src[1:]) of
  mutable std::vector<uint32_t> mark_;     // by position: search epoch
  mutable uint32_t epoch_ = 0;
  mutable std::vector<uint32_t> stack_;
};

} // namespace tgc::sched
