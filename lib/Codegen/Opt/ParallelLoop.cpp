//===- ParallelLoop.cpp - which kernel loop runs on threads ---------------===//
//
// See ParallelLoop.h. tinygrad decides this in its heuristic optimizer
// (hand_coded_optimizations' THREAD axis); here it is an analysis of the
// unoptimized kernel AST, conservative about races.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/ParallelLoop.h"
#include "Codegen/Lower/KernelToMLIR.h"
#include "Codegen/Opt/MatmulTiling.h"

#include <map>
#include <set>

namespace tgc::codegen {

bool dependsOn(const UOp *u, const UOp *x) {
  for (const UOp *n : toposort(u))
    if (n == x) return true;
  return false;
}

std::optional<int64_t> tripCount(const UOp *range) {
  if (!range->is(Op::RANGE) || range->numSrc() < 1 || !range->src(0)->is(Op::CONST) || !range->src(0)->arg().isInt())
    return std::nullopt;
  return range->src(0)->arg().getInt();
}

std::optional<int64_t> maxTripCount(const UOp *range) {
  if (std::optional<int64_t> n = tripCount(range)) return n;
  if (!range->is(Op::RANGE) || range->numSrc() < 1 || !range->src(0)->dtype().isInt()) return std::nullopt;
  const ValueRange &b = range->src(0)->vrange();
  if (b.isFloat || b.imax > (int64_t(1) << 40)) return std::nullopt;
  return std::max<int64_t>(b.imax, 0);
}

namespace {

// idx as coef * range + rest, rest in [lo, hi]; nullopt when it is not of
// that form (a term nonlinear in range) or a bound overflows.
struct RowTerm {
  int64_t coef = 0, lo = 0, hi = 0;
};

std::optional<RowTerm> splitRow(const UOp *idx, const UOp *range) {
  if (idx == range) return RowTerm{1, 0, 0};
  if (!idx->dtype().isInt()) return std::nullopt;
  if (!dependsOn(idx, range)) return RowTerm{0, idx->vminInt(), idx->vmaxInt()};
  if (idx->numSrc() != 2) return std::nullopt;
  if (idx->is(Op::ADD)) {
    std::optional<RowTerm> a = splitRow(idx->src(0), range), b = splitRow(idx->src(1), range);
    RowTerm t;
    if (!a || !b || __builtin_add_overflow(a->coef, b->coef, &t.coef) || __builtin_add_overflow(a->lo, b->lo, &t.lo) ||
        __builtin_add_overflow(a->hi, b->hi, &t.hi))
      return std::nullopt;
    return t;
  }
  if (idx->is(Op::MUL)) {
    bool constFirst = idx->src(0)->is(Op::CONST);
    const UOp *c = idx->src(constFirst ? 0 : 1), *x = idx->src(constFirst ? 1 : 0);
    std::optional<RowTerm> a = c->is(Op::CONST) && c->arg().isInt() ? splitRow(x, range) : std::nullopt;
    if (!a) return std::nullopt;
    int64_t k = c->arg().getInt();
    RowTerm t;
    if (__builtin_mul_overflow(a->coef, k, &t.coef) || __builtin_mul_overflow(a->lo, k, &t.lo) ||
        __builtin_mul_overflow(a->hi, k, &t.hi))
      return std::nullopt;
    if (k < 0) std::swap(t.lo, t.hi);
    return t;
  }
  return std::nullopt;
}

} // namespace

std::optional<int64_t> rangeStride(const UOp *idx, const UOp *range) {
  std::optional<RowTerm> t = splitRow(idx, range);
  return t ? std::optional<int64_t>(t->coef) : std::nullopt;
}

std::optional<int64_t> rowStride(const UOp *idx, const UOp *range) {
  if (idx->is(Op::WHERE) && idx->numSrc() == 3) idx = idx->src(1);
  std::optional<RowTerm> t = splitRow(idx, range);
  if (!t || t->coef <= 0 || t->lo < 0 || t->hi >= t->coef) return std::nullopt;
  return t->coef;
}

namespace {

bool isReduceAxis(const UOp *range) {
  const tgc::Value &a = range->arg();
  for (size_t i = 0; a.isTuple() && i < a.size(); ++i)
    if (a[i].kind() == tgc::Value::Kind::Enum && a[i].str() == "REDUCE") return true;
  return false;
}

// INDEX `u` is one of the stored INDEX nodes, or a gated read of a stored
// index (INDEX(buf, WHERE(valid, idx, Invalid)), MatmulTiling's blocked sums).
bool readsOwnElement(const UOp *u, const std::set<const UOp *> &stored) {
  if (stored.count(u)) return true;
  const UOp *i = u->src(1);
  if (!i->is(Op::WHERE) || i->numSrc() != 3) return false;
  for (const UOp *s : stored)
    if (s->src(1) == i->src(1)) return true;
  return false;
}

// INDEX `u` reads a row of rowStride E of `r` that every stored INDEX also
// writes with that stride: what it reads, only this iteration writes.
bool readsOwnRow(const UOp *u, const std::set<const UOp *> &stored, const UOp *r) {
  std::optional<int64_t> e = rowStride(u->src(1), r);
  if (!e) return false;
  for (const UOp *s : stored)
    if (rowStride(s->src(1), r) != e) return false;
  return true;
}

// An END whose stores all go to kernel-local buffers.
bool fillsLocalTable(const UOp *e) {
  if (!e->is(Op::END)) return false;
  for (const UOp *u : toposort(e))
    if (u->is(Op::STORE) && !(u->numSrc() == 2 && u->src(0)->is(Op::INDEX) && isLocalBuffer(u->src(0)->src(0))))
      return false;
  return true;
}

// The top-level effects of a kernel, through SINK/GROUP.
std::vector<const UOp *> topLevelEffects(const UOp *sink) {
  std::vector<const UOp *> effects, todo{sink};
  while (!todo.empty()) {
    const UOp *u = todo.back();
    todo.pop_back();
    if (u->is(Op::SINK) || u->is(Op::GROUP))
      for (size_t i = u->numSrc(); i-- > 0;) todo.push_back(u->src(i));
    else if (!u->is(Op::NOOP))
      effects.push_back(u);
  }
  return effects;
}

} // namespace

int64_t kernelLoopWork(const UOp *sink) {
  constexpr int64_t kMax = int64_t(1) << 62;
  int64_t total = 0;
  for (const UOp *effect : topLevelEffects(sink)) { // loop nests one after another add up
    int64_t work = 1;
    for (const UOp *u : toposort(effect)) {
      if (!u->is(Op::RANGE)) continue;
      std::optional<int64_t> n = maxTripCount(u);
      if (!n || *n < 0) return -1;
      work = *n > 0 && work > kMax / *n ? kMax : work * *n;
    }
    total = work > kMax - total ? kMax : total + work;
  }
  return total;
}

namespace {
// A job runs in about 6 chunks per thread (Runtime/Parallel.cpp), each of
// which fills the kernel's tables again: 12 on a machine of 2 cores.
constexpr int64_t kTableRefills = 12;
// A fill iteration evaluates a transcendental polynomial, some 25-30 ops where
// an iteration of the loop nest is about one.
constexpr int64_t kFillIterationCost = 32;
} // namespace

bool tableFillsPay(int64_t work, int64_t fillWork) {
  return fillWork <= 0 || work / kTableRefills / kFillIterationCost >= fillWork;
}

const UOp *parallelRange(const UOp *sink, const KernelOptions &opts, int64_t work) {
  if (!opts.threads || !sink->is(Op::SINK)) return nullptr;
  std::vector<const UOp *> effects = topLevelEffects(sink);
  // One loop nest, after any that fill kernel-local tables (HoistInvariant.h).
  if (effects.empty() || !effects.back()->is(Op::END) || effects.back()->numSrc() < 2) return nullptr;
  const UOp *r = effects.back()->src(1);
  std::optional<int64_t> n = r->is(Op::RANGE) ? tripCount(r) : std::nullopt;
  if (!n && r->is(Op::RANGE) && isVariable(r->src(0))) n = maxTripCount(r);
  if (!n || *n < 2 || isReduceAxis(r)) return nullptr;
  // A table is filled by every chunk before its part of the loop (the body
  // runs it first): it may depend on no iteration of the loop.
  int64_t fillWork = 0;
  for (size_t i = 0; i + 1 < effects.size(); ++i) {
    if (!fillsLocalTable(effects[i]) || dependsOn(effects[i], r)) return nullptr;
    int64_t w = kernelLoopWork(effects[i]);
    fillWork = w < 0 || fillWork > (int64_t(1) << 40) ? int64_t(1) << 40 : fillWork + w;
  }
  if (work == -2) work = kernelLoopWork(sink);
  if (work < 0 || work < opts.threadMinWork) return nullptr;
  // Threads pay only when the tables' refills cost less than the loop they
  // split: k3's weight update (2048 gelu' into a table, then 131072 FMAs) was
  // 2.4x slower on two threads, its 8 chunks each evaluating all 2048.
  if (!tableFillsPay(work, fillWork)) return nullptr;

  // Race freedom: stores are per-iteration, and stored buffers are only read
  // back at the index the same iteration writes.
  std::map<const UOp *, std::set<const UOp *>> storedAt; // PARAM -> stored INDEX nodes
  std::vector<const UOp *> nodes = toposort(sink);
  for (const UOp *u : nodes) {
    if (!u->is(Op::STORE)) continue;
    const UOp *target = u->numSrc() == 2 ? u->src(0) : nullptr;
    if (target && target->is(Op::INDEX) && isLocalBuffer(target->src(0))) continue; // per invocation, so per thread
    if (!target || !target->is(Op::INDEX) || !dependsOn(target, r)) return nullptr;
    storedAt[target->src(0)].insert(target);
  }
  for (const UOp *u : nodes) {
    if (u->is(Op::INDEX)) {
      auto it = storedAt.find(u->src(0));
      if (it != storedAt.end() && !readsOwnElement(u, it->second) && !readsOwnRow(u, it->second, r))
        return nullptr; // read where this iteration does not write
      continue;
    }
    // A stored PARAM used bare (element 0, corpus j11) is shared by all iterations.
    for (const UOp *s : u->src())
      if (s->is(Op::PARAM) && storedAt.count(s)) return nullptr;
  }
  return r;
}

} // namespace tgc::codegen
