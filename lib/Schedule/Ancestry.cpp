//===- Ancestry.cpp - reachability in a kernel graph ----------------------===//
//
// Answers the membership queries of create_schedule's memoized ancestry sets
// (tinygrad/schedule/__init__.py; pipeline-schedule.md §5.3) without building
// the sets. See Ancestry.h for the three ways a query is settled.
//
//===----------------------------------------------------------------------===//
#include "Schedule/Ancestry.h"

#include <algorithm>

namespace tgc::sched {

Ancestry::Ancestry(std::span<const UOp *const> roots) {
  ToposortOptions opts;
  opts.enterCalls = false;
  nodes_ = toposort(roots, opts);
  const uint32_t m = uint32_t(nodes_.size());
  uint32_t maxId = 0;
  for (const UOp *u : nodes_) maxId = std::max(maxId, u->id());
  posOf_.assign(size_t(maxId) + 1, kNone);
  for (uint32_t p = 0; p < m; ++p) posOf_[nodes_[p]->id()] = p;

  // The second order: roots and sources visited right to left, post-order.
  pos2_.assign(m, kNone);
  std::vector<uint8_t> seen(m, 0);
  std::vector<std::pair<uint32_t, size_t>> frames; // (node, sources not yet visited, taken from the back)
  uint32_t next = 0;
  auto push = [&](uint32_t p) {
    if (seen[p]) return;
    seen[p] = 1;
    frames.emplace_back(p, deps(nodes_[p]).size());
  };
  for (size_t r = roots.size(); r-- > 0;) {
    push(position(roots[r]));
    while (!frames.empty()) {
      size_t top = frames.size() - 1;
      if (frames[top].second) {
        size_t i = --frames[top].second;
        push(position(deps(nodes_[frames[top].first])[i]));
      } else {
        pos2_[frames[top].first] = next++;
        frames.pop_back();
      }
    }
  }

  // AFTER chains: each node's nearest AFTER along src[0] (a dependency edge
  // unless it would be a call body), and each AFTER's parent, the nearest
  // AFTER below its src[0].
  chainNode_.assign(m, kNone);
  std::vector<uint32_t> parent(m, kNone), childBegin(size_t(m) + 1, 0);
  for (uint32_t p = 0; p < m; ++p) {
    const UOp *u = nodes_[p];
    bool followsSrc0 = u->numSrc() && !u->is(Op::CALL) && !u->is(Op::FUNCTION);
    uint32_t below = followsSrc0 ? chainNode_[position(u->src(0))] : kNone;
    if (u->is(Op::AFTER)) {
      chainNode_[p] = p;
      parent[p] = below;
      if (below != kNone) ++childBegin[below + 1];
    } else {
      chainNode_[p] = below;
    }
  }
  for (uint32_t p = 0; p < m; ++p) childBegin[p + 1] += childBegin[p];
  std::vector<uint32_t> children(childBegin[m]), fill(childBegin.begin(), childBegin.end() - 1);
  for (uint32_t p = 0; p < m; ++p)
    if (parent[p] != kNone) children[fill[parent[p]]++] = p;
  // Interval labels: a is on c's chain iff tin[a] <= tin[c] <= tout[a].
  tin_.assign(m, kNone);
  tout_.assign(m, kNone);
  uint32_t clock = 0;
  std::vector<std::pair<uint32_t, uint32_t>> walk; // (AFTER, next child)
  for (uint32_t p = 0; p < m; ++p) {
    if (!nodes_[p]->is(Op::AFTER) || parent[p] != kNone) continue;
    tin_[p] = clock++;
    walk.emplace_back(p, childBegin[p]);
    while (!walk.empty()) {
      auto &[a, c] = walk.back();
      if (c < childBegin[a + 1]) {
        uint32_t child = children[c++];
        tin_[child] = clock++;
        walk.emplace_back(child, childBegin[child]);
      } else {
        tout_[a] = clock - 1;
        walk.pop_back();
      }
    }
  }

  // For each node, the AFTERs it is an ordering dep of.
  usesBegin_.assign(size_t(m) + 1, 0);
  for (uint32_t p = 0; p < m; ++p)
    if (nodes_[p]->is(Op::AFTER))
      for (const UOp *d : nodes_[p]->src().subspan(1)) ++usesBegin_[position(d) + 1];
  for (uint32_t p = 0; p < m; ++p) usesBegin_[p + 1] += usesBegin_[p];
  uses_.resize(usesBegin_[m]);
  fill.assign(usesBegin_.begin(), usesBegin_.end() - 1);
  for (uint32_t p = 0; p < m; ++p)
    if (nodes_[p]->is(Op::AFTER))
      for (const UOp *d : nodes_[p]->src().subspan(1)) uses_[fill[position(d)]++] = p;

  mark_.assign(m, 0);
}

bool Ancestry::onChain(uint32_t x, uint32_t t) const {
  uint32_t c = chainNode_[x];
  if (c == kNone) return false;
  for (uint32_t i = usesBegin_[t]; i < usesBegin_[t + 1]; ++i) {
    uint32_t a = uses_[i];
    if (tin_[a] <= tin_[c] && tin_[c] <= tout_[a]) return true;
  }
  return false;
}

bool Ancestry::reaches(const UOp *x, const UOp *t) const {
  uint32_t px = position(x), pt = position(t);
  if (px == pt) return true;
  // An ancestor precedes x in both orders.
  auto mayReach = [&](uint32_t p) { return p > pt && pos2_[p] > pos2_[pt]; };
  if (!mayReach(px)) return false;
  if (onChain(px, pt)) return true;
  if (++epoch_ == 0) {
    std::fill(mark_.begin(), mark_.end(), 0);
    epoch_ = 1;
  }
  stack_.assign(1, px);
  mark_[px] = epoch_;
  while (!stack_.empty()) {
    uint32_t p = stack_.back();
    stack_.pop_back();
    for (const UOp *s : deps(nodes_[p])) {
      uint32_t q = position(s);
      if (q == pt) return true;
      if (mark_[q] == epoch_ || !mayReach(q)) continue;
      if (onChain(q, pt)) return true;
      mark_[q] = epoch_;
      stack_.push_back(q);
    }
  }
  return false;
}

} // namespace tgc::sched
