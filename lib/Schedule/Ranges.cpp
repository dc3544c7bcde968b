//===- Ranges.cpp - the RANGEs a node is inside -----------------------------===//
#include "Schedule/Ranges.h"

#include "Schedule/Sugar.h"

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

static thread_local RangeCache *currentRangeCache = nullptr;

RangeScope::RangeScope() {
  if (!currentRangeCache) {
    own_ = std::make_unique<RangeCache>();
    currentRangeCache = own_.get();
  }
}
RangeScope::~RangeScope() {
  if (own_) currentRangeCache = nullptr;
}
RangeCache &rangeCache() {
  if (!currentRangeCache) fail(nullptr, "internal error: ranges queried outside of a RangeScope");
  return *currentRangeCache;
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

const std::vector<const UOp *> &RangeCache::innerRanges(const UOp *root) {
  if (auto it = inner_.find(root); it != inner_.end()) return it->second;
  ToposortOptions o;
  o.gate = [&](const UOp *u) { return !inner_.count(u); };
  for (const UOp *u : toposort(root, o)) {
    if (inner_.count(u)) continue;
    std::vector<const UOp *> ret;
    std::unordered_set<const UOp *> seen;
    for (const UOp *s : u->src())
      for (const UOp *r : ranges(s))
        if (seen.insert(r).second) ret.push_back(r);
    std::unordered_set<const UOp *> drop;
    for (const UOp *er : endedRanges(u)) {
      if (er->is(Op::RANGE)) drop.insert(er);
      else
        for (const UOp *r : ranges(er)) drop.insert(r);
    }
    if (!drop.empty()) std::erase_if(ret, [&](const UOp *r) { return drop.count(r); });
    inner_.emplace(u, std::move(ret));
  }
  return inner_.at(root);
}

const std::vector<const UOp *> &RangeCache::ranges(const UOp *u) {
  if (!u->is(Op::RANGE)) return innerRanges(u);
  if (auto it = full_.find(u); it != full_.end()) return it->second;
  std::vector<const UOp *> out{u};
  for (const UOp *r : innerRanges(u))
    if (r != u) out.push_back(r);
  return full_.emplace(u, std::move(out)).first->second;
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
