//===- Ranges.cpp - the RANGEs a node is inside -----------------------------===//
#include "Schedule/Ranges.h"

#include "Schedule/Sugar.h"

#include "IR/NodeTable.h"
#include "IR/PtrMap.h"

#include <algorithm>
#include <deque>

namespace tgc::rangeify {

std::vector<const UOp *> toposortGated(const UOp *root, const std::function<bool(const UOp *)> &gate,
                                       bool enterCalls) {
  std::vector<const UOp *> out;
  PtrSet done;
  std::vector<std::pair<const UOp *, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [node, visited] = stack.back();
    stack.pop_back();
    if (done.contains(node)) continue;
    if (visited) {
      done.insert(node);
      out.push_back(node);
      continue;
    }
    if (!gate(node)) continue;
    stack.emplace_back(node, true);
    bool skipBody = !enterCalls && (node->is(Op::CALL) || node->is(Op::FUNCTION));
    for (size_t i = node->numSrc(); i-- > (skipBody ? 1 : 0);) stack.emplace_back(node->src(i), false);
  }
  return out;
}

// ---- ranges ----

namespace {
using RangeList = std::vector<const UOp *>;
/// Per Context: every node's `ranges` (for a RANGE, itself first). Most nodes
/// have the ranges of one of their srcs (an ALU over indexed loads, a chain
/// of casts), so a node points at that src's list instead of a copy: one
/// allocation per distinct list, and small table slots.
struct RangeTables {
  NodeMap<const RangeList *> ranges;
  std::deque<RangeList> lists; ///< the distinct lists (stable addresses)
};
} // namespace

RangeCache &rangeCache() {
  static RangeCache facade; // stateless: the tables are in each node's Context
  return facade;
}

// The ops endedRanges can answer non-empty for.
static bool closesRanges(Op op) {
  switch (op) {
  case Op::STAGE: case Op::REDUCE: case Op::END: case Op::CALL: case Op::FUNCTION: case Op::WMMA: case Op::LINEAR:
  case Op::UNSHARD: case Op::AFTER:
    return true;
  default:
    return false;
  }
}

std::vector<const UOp *> RangeCache::endedRanges(const UOp *u) {
  size_t start;
  switch (u->op()) {
  case Op::STAGE: case Op::REDUCE: case Op::END: case Op::CALL: case Op::FUNCTION: start = 1; break;
  case Op::WMMA: start = 3; break;
  case Op::LINEAR: start = 0; break;
  case Op::UNSHARD: start = 1; break;
  case Op::AFTER: {
    std::vector<const UOp *> out;
    for (size_t i = 1; i < u->numSrc(); ++i) {
      std::vector<const UOp *> e = endedRanges(u->src(i));
      out.insert(out.end(), e.begin(), e.end());
    }
    return out;
  }
  default: return {};
  }
  if (start >= u->numSrc()) return {};
  return {u->src().begin() + start, u->src().end()};
}

// Appends r to out unless it is there (range lists are short).
static void addUnique(std::vector<const UOp *> &out, const UOp *r) {
  if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
}

// A node with no RANGE in its backward slice (its RANGE id span is empty) has
// no ranges: those nodes (constants, buffers, shapes) get no table entry and
// are not walked.
static const std::vector<const UOp *> kNoRanges;

// tinygrad's UOp.ranges for u, whose srcs' entries are all in `t`.
static RangeList computeRanges(NodeMap<const RangeList *> &t, const UOp *u) {
  RangeList ret;
  if (u->is(Op::RANGE)) ret.push_back(u);
  for (const UOp *s : u->src())
    if (s->hasRangeBelow())
      for (const UOp *r : **t.find(s)) addUnique(ret, r);
  std::vector<const UOp *> ended = RangeCache::endedRanges(u);
  if (ended.empty() || ret.empty()) return ret;
  std::vector<const UOp *> drop;
  for (const UOp *er : ended) {
    if (er->is(Op::RANGE)) addUnique(drop, er);
    else if (er->hasRangeBelow())
      for (const UOp *r : **t.find(er)) addUnique(drop, r);
  }
  std::erase_if(ret, [&](const UOp *r) { return std::find(drop.begin(), drop.end(), r) != drop.end(); });
  return ret;
}

// The stored list for u's ranges: a src's list if it is the same, else a new one.
static const RangeList *storedRanges(RangeTables &t, const UOp *u, RangeList r) {
  if (r.empty()) return &kNoRanges;
  for (const UOp *s : u->src())
    if (s->hasRangeBelow())
      if (const RangeList *l = *t.ranges.find(s); *l == r) return l;
  t.lists.push_back(std::move(r));
  return &t.lists.back();
}

const std::vector<const UOp *> &RangeCache::ranges(const UOp *root) {
  if (!root->hasRangeBelow()) return kNoRanges;
  RangeTables &t = root->context().analysis<RangeTables>();
  if (const RangeList *const *done = t.ranges.find(root)) return **done;
  visitUnknownSourcesFirst(
      root, [&](const UOp *s) { return !s->hasRangeBelow() || t.ranges.contains(s); },
      [&](const UOp *u) {
        // the common case without building a list: not a RANGE, closes
        // nothing, and every src with ranges has the same list
        const RangeList *shared = nullptr;
        bool same = !u->is(Op::RANGE) && !closesRanges(u->op());
        for (const UOp *s : u->src()) {
          if (!same) break;
          if (!s->hasRangeBelow()) continue;
          const RangeList *l = *t.ranges.find(s);
          same = !shared || l == shared;
          shared = l;
        }
        t.ranges[u] = same && shared ? shared : storedRanges(t, u, computeRanges(t.ranges, u));
      });
  return **t.ranges.find(root);
}

std::vector<const UOp *> RangeCache::rangesOf(const std::vector<const UOp *> &us) {
  std::vector<const UOp *> out; // range lists are short: a linear search dedups
  for (const UOp *u : us)
    for (const UOp *r : ranges(u)) addUnique(out, r);
  return out;
}

} // namespace tgc::rangeify
