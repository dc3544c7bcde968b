//===- MemoryPlan.cpp - place a model's intermediates in one workspace ----===//
//
// tinygrad (schedule/memory.py) replays the buffers' open/close events in
// LINEAR order through a TLSF allocator. This planner places whole lifetime
// intervals instead: two greedy orders (largest buffer first; earliest first
// use first), each putting a buffer at the lowest offset that overlaps no
// placed buffer live at the same time, and keeps the smaller workspace. With
// every interval known up front, largest-first packs at least as tightly as
// an online allocator in practice; the earliest-first order is exactly an
// in-order first-fit replay of the open/close events, the fallback.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Model/MemoryPlan.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace tgc {

namespace {

struct Interval {
  int buffer;
  int64_t first, last; ///< call indices, inclusive
  int64_t bytes;       ///< rounded to the alignment
};

bool overlaps(const Interval &a, const Interval &b) { return a.first <= b.last && b.first <= a.last; }

/// Places `items` in the given order; returns the workspace size, fills `offsets`.
int64_t place(const std::vector<Interval> &items, const std::vector<size_t> &order, std::vector<int64_t> &offsets) {
  std::vector<size_t> placed;
  int64_t top = 0;
  offsets.assign(items.size(), 0);
  for (size_t i : order) {
    // Byte ranges taken by placed buffers live at the same time, by offset.
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (size_t j : placed)
      if (overlaps(items[i], items[j])) taken.push_back({offsets[j], offsets[j] + items[j].bytes});
    std::sort(taken.begin(), taken.end());
    int64_t at = 0;
    for (auto [lo, hi] : taken) {
      if (lo - at >= items[i].bytes) break;
      at = std::max(at, hi);
    }
    offsets[i] = at;
    top = std::max(top, at + items[i].bytes);
    placed.push_back(i);
  }
  return top;
}

int64_t roundUp(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

} // namespace

Result<MemoryPlan> planMemory(const Model &model) {
  const SchedulePlan &plan = model.plan;
  size_t n = plan.buffers.size();
  MemoryPlan mp;
  mp.offset.assign(n, 0);
  mp.owner.assign(n, -1);
  std::vector<int64_t> first(n, INT64_MAX), last(n, INT64_MIN);
  auto use = [&](int b, int64_t at) {
    first[b] = std::min(first[b], at);
    last[b] = std::max(last[b], at);
  };
  for (size_t c = 0; c < plan.calls.size(); ++c)
    for (const ScheduleArg &a : plan.calls[c].args) use(a.buffer, int64_t(c));
  for (size_t t = 0; t < model.tensors.size(); ++t) {
    const ModelTensor &mt = model.tensors[t];
    if (mt.bytes == 0 && mt.buffer < 0) continue; // an empty tensor needs no storage
    if (mt.buffer < 0 || size_t(mt.buffer) >= n)
      return Diagnostic(Location(), "model tensor " + mt.name + " is bound to no buffer of the schedule");
    const ScheduleBuffer &b = plan.buffers[mt.buffer];
    if (mt.byteOffset < 0 || mt.bytes < 0 || mt.byteOffset + mt.bytes > int64_t(b.bytes()))
      return Diagnostic(Location(), "model tensor " + mt.name + " lies outside its buffer");
    if (mp.owner[mt.buffer] < 0 && mt.byteOffset == 0 && mt.bytes == int64_t(b.bytes())) {
      mp.owner[mt.buffer] = int(t);
      continue;
    }
    // Copied in before the first call and/or out after the last.
    if (mt.role != ModelTensor::Role::Output) use(mt.buffer, -1);
    if (mt.role != ModelTensor::Role::Input) use(mt.buffer, int64_t(plan.calls.size()));
  }
  std::vector<Interval> items;
  for (size_t b = 0; b < n; ++b) {
    if (mp.owner[b] >= 0) {
      mp.offset[b] = -1;
      continue;
    }
    // Kernels may read element 0 under a false gate: every buffer gets a byte at least.
    int64_t bytes = roundUp(std::max<int64_t>(int64_t(plan.buffers[b].bytes()), 1), MemoryPlan::kAlignment);
    if (first[b] == INT64_MAX) first[b] = last[b] = -2; // touched by nothing: shares with anything
    items.push_back({int(b), first[b], last[b], bytes});
    mp.unsharedBytes += bytes;
  }
  std::vector<size_t> bySize(items.size()), byFirst(items.size());
  std::iota(bySize.begin(), bySize.end(), 0);
  std::iota(byFirst.begin(), byFirst.end(), 0);
  // Ties broken by position: the plan does not depend on the sort algorithm.
  std::sort(bySize.begin(), bySize.end(), [&](size_t a, size_t b) {
    return std::tuple(-items[a].bytes, items[a].first, a) < std::tuple(-items[b].bytes, items[b].first, b);
  });
  std::sort(byFirst.begin(), byFirst.end(),
            [&](size_t a, size_t b) { return std::pair(items[a].first, a) < std::pair(items[b].first, b); });
  std::vector<int64_t> offA, offB;
  int64_t sizeA = place(items, bySize, offA), sizeB = place(items, byFirst, offB);
  const std::vector<int64_t> &best = sizeA <= sizeB ? offA : offB;
  mp.workspaceBytes = std::min(sizeA, sizeB);
  for (size_t i = 0; i < items.size(); ++i) mp.offset[items[i].buffer] = best[i];
  return mp;
}

int64_t tinygradArenaBytes(const SchedulePlan &plan) {
  std::vector<char> viewed(plan.buffers.size(), 0), whole(plan.buffers.size(), 0);
  for (const ScheduleCall &c : plan.calls)
    for (size_t i = 0; i < c.args.size(); ++i) (c.call->src(i + 1)->is(Op::BUFFER) ? whole : viewed)[c.args[i].buffer] = 1;
  int64_t total = 0;
  for (size_t b = 0; b < plan.buffers.size(); ++b)
    if (viewed[b] && !whole[b]) total += int64_t(plan.buffers[b].bytes());
  return total;
}

} // namespace tgc
