//===- RangeifyCleanup.cpp - fold cheap materializations back ---------------===//
//
// Mirrors tinygrad's post-rangeify cleanup (tinygrad/schedule/rangeify.py,
// pipeline-schedule.md §3.7): one post-order rewrite with
// symbolic + pm_reduce_simplify + pm_const_buffer_folding + pm_remove_bufferize.
// pm_remove_bufferize is the fusion cost model: a STAGE read back through an
// INDEX is inlined (its ranges substituted by the index) unless it reads more
// than three buffers or a REDUCE in it reads a buffer.
//
//===----------------------------------------------------------------------===//
#include "Schedule/RangeifyPasses.h"

#include "IR/PtrMap.h"
#include "IR/Symbolic.h"
#include "Schedule/Mops.h"

#include <algorithm>
#include <unordered_set>

namespace tgc::rangeify {

static bool isAlwaysRun(const UOp *u) { return u->is(Op::CONTIGUOUS) || u->is(Op::NOOP); }

// cleanup_dead_axes: STAGE axes the value does not depend on become size 1 and are re-expanded.
static const UOp *cleanupDeadAxes(const UOp *b) {
  if (!stageOpts(b).removable) return nullptr;
  const UOp *src = b->src(0);
  if (isAlwaysRun(src) || src->is(Op::AFTER)) return nullptr;
  RangeCache &rc = rangeCache();
  const std::vector<const UOp *> &live = rc.ranges(src);
  auto dead = [&](const UOp *rng) {
    return rng->is(Op::CONST) || (rng->is(Op::RANGE) && std::find(live.begin(), live.end(), rng) == live.end());
  };
  // Most STAGEs use all their axes: decide that before deriving the shape
  // (which fills the shapes of the whole value below the STAGE).
  bool hit = false;
  for (size_t i = 1; i < b->numSrc(); ++i) {
    const UOp *rng = b->src(i);
    if (rng->is(Op::RANGE) && !rng->src(0)->is(Op::CONST)) return nullptr;
    hit |= dead(rng);
  }
  if (!hit) return nullptr;
  // A STAGE's shape starts with one axis per range.
  IShape bs = shapeOf(b), re;
  std::vector<const UOp *> newRng{src};
  for (size_t i = 1; i < b->numSrc() && i - 1 < bs.size(); ++i) {
    const UOp *rng = b->src(i);
    if (dead(rng)) {
      re.push_back(1);
    } else {
      re.push_back(bs[i - 1]);
      newRng.push_back(rng);
    }
  }
  return broadcastTo(reshape(b->withSrc(newRng), re), bs);
}

// remove_noop_bufferize: STAGE(INDEX(buf, *r), *r) is buf itself.
static const UOp *removeNoopBufferize(const UOp *idx, const UOp *b2) {
  if (idx->numSrc() != b2->numSrc() || !std::equal(idx->src().begin() + 1, idx->src().end(), b2->src().begin() + 1))
    return nullptr;
  const IShape &s = shapeOf(b2);
  if (s.empty()) return idx->src(0);
  return shrinkTo(idx->src(0), s);
}

// after_all_invalid: every STORE behind the AFTER writes Invalid over the whole buffer.
static bool afterAllInvalid(const UOp *after) {
  const UOp *buf = bufUop(after->src(0));
  RangeCache &rc = rangeCache();
  for (size_t i = 1; i < after->numSrc(); ++i) {
    const UOp *s = after->src(i);
    if (!s->is(Op::END)) return false;
    const UOp *st = s->src(0);
    if (!st->is(Op::STORE) || !isInvalid(base(st->src(1))) || bufUop(st->src(0)) != buf) return false;
    const std::vector<const UOp *> &used = rc.ranges(st->src(0));
    int64_t n = 1;
    for (const UOp *r : RangeCache::endedRanges(s)) {
      if (std::find(used.begin(), used.end(), r) == used.end()) return false;
      if (!r->is(Op::RANGE) || !r->src(0)->is(Op::CONST)) return false;
      n *= r->src(0)->arg().getInt();
    }
    if (n != prod(shapeOf(buf))) return false;
  }
  return true;
}

const PatternMatcher &constBufferFolding() {
  static const PatternMatcher pm = pmMops() + PatternMatcher({
      rule(UPat(Op::STAGE).named("b"), [](Match &m) { return cleanupDeadAxes(m["b"]); }),
      // remove noop buffers
      rule(UPat(Op::STAGE).src({UPat(Op::INDEX).named("idx")}).allowAnyLen().named("b2"),
           [](Match &m) { return removeNoopBufferize(m["idx"], m["b2"]); }),
      rule(UPat(Op::STAGE).src({UPat(Op::NOOP).src({UPat(Op::INDEX).src({UPat(Op::STAGE)}).allowAnyLen().named("idx")})})
               .allowAnyLen().named("b2"),
           [](Match &m) { return removeNoopBufferize(m["idx"], m["b2"]); }),
      // no buffers for consts: the value is the same everywhere
      rule(UPat(Op::STAGE).src({cvar("c")}).allowAnyLen().named("b"),
           [](Match &m) { return constLike(m["b"], m["c"]->arg()); }),
      // indexing a const is the const
      rule(UPat(Op::INDEX).src({cvar("c")}), [](Match &m) { return m["c"]; }),
      // indexing an AFTER whose stores all write Invalid is Invalid
      rule(UPat(Op::INDEX).src({UPat(Op::AFTER).named("after")}).allowAnyLen().named("idx"),
           [](Match &m) -> const UOp * {
             if (!afterAllInvalid(m["after"])) return nullptr;
             return constLike(m["idx"], Value::invalid());
           }),
      rule(UPat(Op::NOOP).src({cvar("c")}), [](Match &m) { return m["c"]; }),
  });
  return pm;
}

// remove_bufferize's cost model: whether the STAGE of `src` must stay a
// buffer. It reads src alone, and a STAGE read through several INDEXes asks
// it once per reader, so the verdict is memoized per node in its Context.
namespace {
struct KeepBufferMemo {
  PtrMap<bool> keep{256};
};
} // namespace

static bool computeKeepBuffer(const UOp *src) {
  std::vector<const UOp *> accessed, reduces;
  std::unordered_set<const UOp *> seenAccessed;
  auto access = [&](const UOp *b) {
    if (seenAccessed.insert(b).second) accessed.push_back(b);
  };
  ToposortOptions o;
  o.gate = [&](const UOp *x) {
    if (x->is(Op::AFTER)) {
      access(bufUop(x));
      return false;
    }
    if ((x->is(Op::STAGE) && stageOpts(x).addrspace == AddrSpace::GLOBAL) || x->is(Op::MSTACK)) {
      access(x);
      return false;
    }
    if (x->is(Op::STORE)) return false; // stores do not count toward buffer accesses
    if (x->is(Op::PARAM)) access(x);
    if (x->is(Op::REDUCE)) reduces.push_back(x);
    return true;
  };
  toposort(src, o);
  // generated from many buffers: keep it
  if (accessed.size() > 3) return true;
  // a reduce that reads a buffer: keep it
  bool bufferInReduce = false;
  ToposortOptions ro;
  ro.gate = [&](const UOp *x) {
    if (x->is(Op::PARAM) || x->is(Op::STAGE) || x->is(Op::AFTER)) bufferInReduce = true;
    return !bufferInReduce;
  };
  std::vector<const UOp *> rsrc;
  for (const UOp *r : reduces) rsrc.push_back(r->src(0));
  if (!rsrc.empty()) toposort(std::span<const UOp *const>(rsrc), ro);
  return bufferInReduce;
}

static bool keepBuffer(const UOp *src) {
  PtrMap<bool> &memo = src->context().analysis<KeepBufferMemo>().keep;
  if (const bool *done = memo.find(src)) return *done;
  bool keep = computeKeepBuffer(src);
  memo.insert(src, keep);
  return keep;
}

// remove_bufferize: a STAGE read back through an INDEX is recomputed per use unless the cost model keeps it.
static const UOp *removeBufferize(const UOp *src, const UOp *buf, const UOp *idx) {
  if (buf->numSrc() != idx->numSrc()) fail(idx, "index on wrong bufferize");
  if (isAlwaysRun(src) || !stageOpts(buf).removable || keepBuffer(src)) return nullptr;

  // inline: the STAGE's ranges become the INDEX's expressions
  std::unordered_map<const UOp *, const UOp *> replaced;
  for (size_t i = 1; i < buf->numSrc(); ++i) {
    const UOp *k = buf->src(i), *v = idx->src(i);
    if (k->is(Op::CONST) || isInvalid(v) || k == v) continue;
    replaced[k] = v;
  }
  return substituteUnified(src, replaced);
}

const PatternMatcher &removeBufferizePM() {
  static const PatternMatcher pm({
      rule(UPat(Op::INDEX).src({UPat(Op::STAGE).src({var("src")}).allowAnyLen().named("buf")}).allowAnyLen().named("idx"),
           [](Match &m) { return removeBufferize(m["src"], m["buf"], m["idx"]); }),
      // a STORE of a value to itself is nothing
      rule(UPat(Op::STORE).src({var("x"), var("x")}),
           [](Match &m) { return m.root()->context().get(Op::NOOP, dtypes::Void); }),
      rule(UPat(Op::END).src({UPat(Op::NOOP).named("x")}).allowAnyLen(), [](Match &m) { return m["x"]; }),
  });
  return pm;
}

static const PatternMatcher &cleanupPM() {
  static const PatternMatcher pm = symbolic() + reduceSimplify() + constBufferFolding() + removeBufferizePM();
  return pm;
}

void prepareCleanup() {
  cleanupPM();
  prepareReduceRules();
}

const UOp *cleanupPass(const UOp *sink) { return rewrite(sink, cleanupPM()); }

} // namespace tgc::rangeify
