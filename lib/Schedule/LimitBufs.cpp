//===- LimitBufs.cpp - stage srcs of kernels over the buffer limit ---------===//
//
// Mirrors tinygrad's pm_limit_bufs (tinygrad/schedule/rangeify.py): a device
// binds at most so many buffers per kernel; an elementwise op that would read
// more (counting the output) stages its elementwise srcs into buffers of
// their own, which splits the kernel.
//
//===----------------------------------------------------------------------===//
#include "Schedule/RangeifyPasses.h"

#include "IR/PtrMap.h"

#include <algorithm>
#include <string_view>

namespace tgc::rangeify {

namespace {
// The buffers a node reads without passing through another buffer, as sorted
// node ids (deterministic). Most nodes read exactly the buffers of one of
// their srcs, so each node holds an index into a pool of distinct sets and
// only a real union makes a new one.
using BufIds = std::vector<uint32_t>;
struct LimitBufsContext {
  std::vector<BufIds> pool{BufIds{}}; // pool[0]: no buffers
  PtrMap<uint32_t> setOf{1024};
  int64_t rangeIdx = 0;
};
} // namespace

static bool isBufferNode(const UOp *u) {
  return u->is(Op::STAGE) || u->is(Op::AFTER) || u->is(Op::PARAM) || u->is(Op::MSELECT) || u->is(Op::MSTACK);
}

// The pool index of u's buffers; its srcs' are known.
static uint32_t bufSetFromSrcs(LimitBufsContext &ctx, const UOp *u) {
  std::vector<BufIds> &pool = ctx.pool;
  auto added = [&](BufIds s) {
    pool.push_back(std::move(s));
    return uint32_t(pool.size() - 1);
  };
  if (isBufferNode(u)) return added({u->id()});
  uint32_t cur = 0;
  for (const UOp *x : u->src()) {
    uint32_t xs = *ctx.setOf.find(x);
    if (xs == cur || pool[xs].empty()) continue;
    if (pool[cur].empty() || std::includes(pool[xs].begin(), pool[xs].end(), pool[cur].begin(), pool[cur].end())) {
      cur = xs;
      continue;
    }
    if (std::includes(pool[cur].begin(), pool[cur].end(), pool[xs].begin(), pool[xs].end())) continue;
    BufIds merged;
    std::set_union(pool[cur].begin(), pool[cur].end(), pool[xs].begin(), pool[xs].end(), std::back_inserter(merged));
    cur = added(std::move(merged));
  }
  return cur;
}

static size_t numBufs(LimitBufsContext &ctx, const UOp *root) {
  if (const uint32_t *done = ctx.setOf.find(root)) return ctx.pool[*done].size();
  ToposortOptions o;
  o.gate = [&](const UOp *u) { return !ctx.setOf.contains(u); };
  for (const UOp *u : toposort(root, o))
    if (!ctx.setOf.contains(u)) ctx.setOf.insert(u, bufSetFromSrcs(ctx, u));
  return ctx.pool[*ctx.setOf.find(root)].size();
}

// The device's buffer limit for a kernel rooted at `root`, or 0 if none applies.
static size_t maxBufsFor(const UOp *root) {
  const Value &dev = root->device();
  std::string_view device;
  if (dev.kind() == Value::Kind::Str) device = dev.str();
  else if (dev.isTuple() && dev.size() && dev[0].kind() == Value::Kind::Str)
    device = std::string_view(dev[0].str()).substr(0, dev[0].str().find(':'));
  else return 0;
  if (device == "METAL" || device == "CPU") return 31;
  if (device == "WEBGPU") return 8;
  return 0;
}

static bool overLimit(LimitBufsContext &ctx, const UOp *root) {
  size_t maxBufs = maxBufsFor(root);
  return maxBufs && numBufs(ctx, root) > maxBufs - 1; // -1 for the output buffer
}

static const UOp *limitBufs(LimitBufsContext &ctx, const UOp *root) {
  if (!overLimit(ctx, root)) return nullptr;
  RangeCache &rc = rangeCache();
  std::vector<const UOp *> srcs;
  for (const UOp *s : root->src()) {
    if (s->isIn(group::Elementwise) && !s->device().isNone()) {
      // stage it: its REDUCE ranges become WEAK, a DEVICE range stays a launched axis
      std::vector<const UOp *> orig = rc.ranges(s), ends;
      std::unordered_map<const UOp *, const UOp *> sub;
      for (const UOp *r : orig) {
        const UOp *e = r;
        if (r->is(Op::RANGE) && rangeAxisType(r) != "DEVICE")
          e = r->withArg(rangeArg(ctx.rangeIdx++, "WEAK"));
        ends.push_back(e);
        if (e != r) sub[r] = e;
      }
      std::vector<const UOp *> stSrc{substituteUnified(s, sub)};
      stSrc.insert(stSrc.end(), ends.begin(), ends.end());
      const UOp *st = s->context().get(Op::STAGE, s->dtype(), stSrc, bufferizeOpts(s->device(), AddrSpace::GLOBAL, true));
      s = index(st, orig);
    }
    srcs.push_back(s);
  }
  return root->withSrc(srcs);
}

constexpr OpSet kernelRoots = group::Binary | group::Ternary;

static const PatternMatcher &limitBufsPM() {
  static const PatternMatcher pm({
      rule(UPat(kernelRoots).named("root"), [](Match &m) { return limitBufs(m.ctx<LimitBufsContext>(), m["root"]); }),
  });
  return pm;
}

void prepareLimitBufs() { limitBufsPM(); }

const UOp *limitBufsPass(const UOp *sink) {
  LimitBufsContext ctx;
  int64_t next = -1;
  bool anyOver = false;
  // Usually no kernel is over its device's limit, and then the rewrite would
  // change nothing: ask the rule's question of every node the rewrite would
  // offer it (the toposort holds them all, srcs first, and the sets it fills
  // are the ones the rule reads) and skip the rewrite.
  for (const UOp *x : toposort(sink)) {
    if (x->is(Op::RANGE)) next = std::max(next, rangeAxisId(x));
    ctx.setOf.insert(x, bufSetFromSrcs(ctx, x));
    if (!anyOver && x->isIn(kernelRoots)) anyOver = overLimit(ctx, x);
  }
  if (!anyOver) return sink;
  ctx.rangeIdx = next + 1;
  return rewrite(sink, limitBufsPM(), ctx);
}

} // namespace tgc::rangeify
