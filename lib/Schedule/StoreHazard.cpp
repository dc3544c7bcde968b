//===- StoreHazard.cpp - fix_store_hazard's question, answered once per graph ===//
#include "Schedule/StoreHazard.h"

#include "Schedule/Ranges.h"
#include "Schedule/Sugar.h"

#include <unordered_set>

namespace tgc::rangeify {

static bool targetShrinks(const UOp *target) {
  for (const UOp *u : toposort(target))
    if (u->is(Op::SHRINK)) return true;
  return false;
}

bool storeHazardWalk(const UOp *target, const UOp *src) {
  const UOp *b = base(target);
  if (!inBackwardSlice(b, src)) return false;
  bool shrinks = targetShrinks(target);
  std::unordered_set<const UOp *> reaches;
  for (const UOp *s : toposortGated(src, [](const UOp *x) { return !x->is(Op::CONTIGUOUS); })) {
    bool r = s == b;
    for (const UOp *c : s->src()) r = r || reaches.count(c) > 0;
    if (!r) continue;
    reaches.insert(s);
    bool unsafe = s->is(Op::PERMUTE) || s->is(Op::FLIP) || (shrinks && s->is(Op::SHRINK));
    if (unsafe && !(s == target && s->is(Op::SHRINK))) return true;
  }
  return false;
}

StoreHazardIndex::StoreHazardIndex(const UOp *root) {
  std::vector<const UOp *> nodes = toposort(root);
  for (const UOp *u : nodes)
    if (u->is(Op::STORE) && u->numSrc() == 2) baseIndex_.insert(base(u->src(0)), uint32_t(baseIndex_.size()));
  words_ = (baseIndex_.size() + 63) / 64;
  // the questions reach most of the graph: room for every node up front
  // instead of growing the rows and the table as the rewrite asks
  at_.reserve(nodes.size());
  bits_.reserve(nodes.size() * NumKinds * words_);
}

size_t StoreHazardIndex::entry(const UOp *root) {
  visitUnknownSourcesFirst(
      root, [&](const UOp *s) { return at_.contains(s); },
      [&](const UOp *u) {
        size_t at = bits_.size();
        bits_.resize(at + NumKinds * words_, 0);
        fill(u, at);
        at_.insert(u, at);
      });
  return *at_.find(root);
}

void StoreHazardIndex::fill(const UOp *u, size_t at) {
  auto row = [&](size_t node, Kind k) { return bits_.data() + node + k * words_; };
  if (const uint32_t *i = baseIndex_.find(u)) {
    row(at, ReachNoCalls)[*i / 64] |= uint64_t(1) << (*i % 64);
    row(at, ReachOpen)[*i / 64] |= uint64_t(1) << (*i % 64);
  }
  bool isCall = u->is(Op::CALL) || u->is(Op::FUNCTION);
  for (size_t j = 0; j < u->numSrc(); ++j) {
    const UOp *c = u->src(j);
    size_t cat = *at_.find(c);
    auto orRow = [&](Kind k) {
      for (size_t w = 0; w < words_; ++w) row(at, k)[w] |= row(cat, k)[w];
    };
    if (!(isCall && j == 0)) orRow(ReachNoCalls); // toposort(enter_calls=False) skips the body
    if (c->is(Op::CONTIGUOUS)) continue;          // the gated toposort neither lists nor enters it
    orRow(ReachOpen);
    orRow(UnsafeOrder);
    orRow(UnsafeShrink);
  }
  Kind own = u->is(Op::PERMUTE) || u->is(Op::FLIP) ? UnsafeOrder : u->is(Op::SHRINK) ? UnsafeShrink : NumKinds;
  if (own != NumKinds)
    for (size_t w = 0; w < words_; ++w) row(at, own)[w] |= row(at, ReachOpen)[w];
}

bool StoreHazardIndex::hazard(const UOp *target, const UOp *src) {
  const uint32_t *i = baseIndex_.find(base(target));
  if (!i) return storeHazardWalk(target, src);
  size_t at = entry(src);
  if (!test(at, ReachNoCalls, *i) || src->is(Op::CONTIGUOUS)) return false;
  if (test(at, UnsafeOrder, *i)) return true;
  if (!test(at, UnsafeShrink, *i) || !targetShrinks(target)) return false;
  // a SHRINK target is exempt from its own hazard: only the walk can tell whether another SHRINK is on the way
  return target->is(Op::SHRINK) ? storeHazardWalk(target, src) : true;
}

} // namespace tgc::rangeify
