//===- Estimates.cpp - work and traffic of one kernel ----------------------===//
//
// tinygrad's Estimates.from_uops, reformulated for a kernel body in graph form
// (see Estimates.h): the loop nest a node runs in is its `ranges`, so the
// multiplier tinygrad keeps on a stack while walking the linear uops is here
// the product of those ranges' trip counts.
//
//===----------------------------------------------------------------------===//
#include "Schedule/Estimates.h"

#include "Schedule/Access.h"
#include "Schedule/Ranges.h"
#include "Schedule/Storage.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_set>

namespace tgc::sched {

namespace {

int64_t satMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > std::numeric_limits<int64_t>::max() / b) return std::numeric_limits<int64_t>::max();
  return a * b;
}

int64_t satAdd(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max() : a + b;
}

} // namespace

int64_t storageBytes(const UOp *buf) {
  if (!buf->numSrc() || !buf->src(0)->is(Op::CONST) || !buf->src(0)->constValue().isInt()) return -1;
  return satMul(buf->src(0)->constValue().getInt(), buf->dtype().itemsize());
}

KernelEstimate estimateKernel(const UOp *sinkBody, const std::vector<int64_t> &argBytes) {
  KernelEstimate est;
  rangeify::RangeCache &rc = rangeify::rangeCache();
  ToposortOptions opts;
  opts.enterCalls = false;
  std::vector<const UOp *> nodes = toposort(sinkBody, opts);

  auto iterations = [&](const std::vector<const UOp *> &ranges) {
    int64_t n = 1;
    for (const UOp *r : ranges) {
      const UOp *end = r->src(0);
      int64_t trips;
      if (end->is(Op::CONST) && end->constValue().isInt()) {
        trips = end->constValue().getInt();
      } else {
        trips = end->vmaxInt();
        est.exact = false;
      }
      n = satMul(n, std::max<int64_t>(trips, 0));
    }
    return n;
  };

  // Index arithmetic is addressing, not work (tinygrad's ignore_indexing).
  std::unordered_set<const UOp *> indexing;
  for (const UOp *u : nodes) {
    if (!u->is(Op::INDEX)) continue;
    for (size_t i = 1; i < u->numSrc(); ++i)
      for (const UOp *x : toposort(u->src(i), opts)) indexing.insert(x);
  }

  // (slot, written) -> bytes reached through INDEXes, and the buffer's size.
  std::map<std::pair<int64_t, bool>, int64_t> reached;
  std::map<int64_t, int64_t> size;
  std::unordered_set<const UOp *> storeTargets;
  for (const UOp *u : nodes)
    if (u->is(Op::STORE) && u->numSrc()) storeTargets.insert(u->src(0));
  for (const UOp *u : nodes) {
    if (u->isIn(group::ALU) && !indexing.count(u)) {
      est.flops = satAdd(est.flops, satMul(u->is(Op::MULACC) ? 2 : 1, iterations(rc.ranges(u))));
    } else if (u->is(Op::REDUCE) && u->numSrc()) {
      est.flops = satAdd(est.flops, iterations(rc.ranges(u->src(0))));
    } else if (u->is(Op::INDEX) && u->numSrc() && isGlobalParam(u->src(0))) {
      std::optional<int64_t> slot = paramSlot(u->src(0));
      if (!slot) continue;
      int64_t bytes = satMul(iterations(rc.ranges(u)), u->src(0)->dtype().itemsize());
      int64_t &acc = reached[{*slot, storeTargets.count(u) > 0}];
      acc = satAdd(acc, bytes);
      size[*slot] = storageBytes(u->src(0));
    }
  }

  SinkAccess access = computeSinkAccess(sinkBody);
  est.ins = access.ins;
  est.outs = access.outs;
  auto bytesOf = [&](int64_t slot, bool written) -> int64_t {
    auto it = reached.find({slot, written});
    int64_t whole = size.count(slot) ? size[slot] : -1;
    if (whole < 0 && slot >= 0 && size_t(slot) < argBytes.size()) whole = argBytes[size_t(slot)];
    if (it == reached.end()) return std::max<int64_t>(whole, 0);
    return whole >= 0 ? std::min(it->second, whole) : it->second;
  };
  for (int64_t s : est.ins) est.bytesRead = satAdd(est.bytesRead, bytesOf(s, false));
  for (int64_t s : est.outs) est.bytesWritten = satAdd(est.bytesWritten, bytesOf(s, true));
  return est;
}

} // namespace tgc::sched
