//===- Ranges.cpp - the RANGEs a node is inside -----------------------------===//
#include "Schedule/Ranges.h"

#include "Schedule/Sugar.h"

#include "IR/PtrMap.h"

#include <algorithm>
#include <unordered_set>

namespace tgc::rangeify {

std::vector<const UOp *> toposortGated(const UOp *root, const std::function<bool(const UOp *)> &gate,
                                       bool enterCalls) {
  std::vector<const UOp *> out;
  std::unordered_set<const UOp *> done;
  std::vector<std::pair<const UOp *, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [node, visited] = stack.back();
    stack.pop_back();
    if (done.count(node)) continue;
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
/// Per Context: every node's `ranges` (for a RANGE, itself first).
struct RangeTables {
  PtrMap<std::vector<const UOp *>> ranges{1024};
};
} // namespace

RangeCache &rangeCache() {
  static RangeCache facade; // stateless: the tables are in each node's Context
  return facade;
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
static std::vector<const UOp *> computeRanges(PtrMap<std::vector<const UOp *>> &t, const UOp *u) {
  std::vector<const UOp *> ret;
  if (u->is(Op::RANGE)) ret.push_back(u);
  for (const UOp *s : u->src())
    if (s->hasRangeBelow())
      for (const UOp *r : *t.find(s)) addUnique(ret, r);
  std::vector<const UOp *> ended = RangeCache::endedRanges(u);
  if (ended.empty() || ret.empty()) return ret;
  std::vector<const UOp *> drop;
  for (const UOp *er : ended) {
    if (er->is(Op::RANGE)) addUnique(drop, er);
    else if (er->hasRangeBelow())
      for (const UOp *r : *t.find(er)) addUnique(drop, r);
  }
  std::erase_if(ret, [&](const UOp *r) { return std::find(drop.begin(), drop.end(), r) != drop.end(); });
  return ret;
}

const std::vector<const UOp *> &RangeCache::ranges(const UOp *root) {
  if (!root->hasRangeBelow()) return kNoRanges;
  PtrMap<std::vector<const UOp *>> &t = root->context().analysis<RangeTables>().ranges;
  if (const auto *done = t.find(root)) return *done;
  visitUnknownSourcesFirst(
      root, [&](const UOp *s) { return !s->hasRangeBelow() || t.contains(s); },
      [&](const UOp *u) {
        std::vector<const UOp *> r = computeRanges(t, u);
        t[u] = std::move(r);
      });
  return *t.find(root);
}

std::vector<const UOp *> RangeCache::rangesOf(const std::vector<const UOp *> &us) {
  std::vector<const UOp *> out;
  std::unordered_set<const UOp *> seen;
  for (const UOp *u : us)
    for (const UOp *r : ranges(u))
      if (seen.insert(r).second) out.push_back(r);
  return out;
}

} // namespace tgc::rangeify
