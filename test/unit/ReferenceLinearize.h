//===- ReferenceLinearize.h - the schedule contract, literally --*- C++ -*-===//
//
// pipeline-schedule.md §5.3 transcribed as directly as possible: a bitset of
// kernels per node for `anc`, a bitset per kernel for `deps`, Kahn's algorithm
// over those sets. Quadratic in memory (nodes x kernels bits), so only for
// graphs up to ~10^4 kernels; the differential test and the benchmark check
// sched::linearize against it, output and diagnostics alike.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Schedule/Access.h"
#include "Schedule/Linearize.h"
#include "Schedule/Storage.h"

#include <algorithm>
#include <bit>
#include <deque>
#include <unordered_map>
#include <unordered_set>

namespace tgc::testing::reference {

using namespace tgc::sched;

/// A set of kernels by index.
class KernelSet {
public:
  explicit KernelSet(size_t n = 0) : words_((n + 63) / 64, 0) {}
  void insert(size_t i) { words_[i / 64] |= uint64_t(1) << (i % 64); }
  void erase(size_t i) { words_[i / 64] &= ~(uint64_t(1) << (i % 64)); }
  bool contains(size_t i) const { return words_[i / 64] >> (i % 64) & 1; }
  void merge(const KernelSet &o) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= o.words_[w];
  }
  size_t count() const {
    size_t n = 0;
    for (uint64_t w : words_) n += size_t(std::popcount(w));
    return n;
  }
  template <typename Fn> void forEach(Fn fn) const {
    for (size_t w = 0; w < words_.size(); ++w)
      for (uint64_t bits = words_[w]; bits; bits &= bits - 1) fn(w * 64 + size_t(std::countr_zero(bits)));
  }

private:
  std::vector<uint64_t> words_;
};

inline bool gateKernelSink(const UOp *u) {
  return !u->is(Op::LINEAR) && !(u->is(Op::SINK) && u->arg().isObj("KernelInfo"));
}

class ReferenceScheduler {
public:
  explicit ReferenceScheduler(const UOp *root) : root_(root) {}
  Result<const UOp *> run();

private:
  /// The kernels reachable from u without entering call bodies (memoized).
  const KernelSet &ancestry(const UOp *u);
  const UOp *callOf(size_t k) const { return kernels_[k]->is(Op::END) ? kernels_[k]->src(0) : kernels_[k]; }
  Diagnostic cycleError(const std::vector<size_t> &inDegree);
  const UOp *emitCall(size_t k) const;

  const UOp *root_;
  std::vector<const UOp *> afters_, kernels_;
  std::unordered_map<const UOp *, size_t> kernelIndex_;
  std::unordered_map<const UOp *, KernelSet> ancestry_;
  std::vector<KernelSet> deps_;
  std::vector<std::vector<std::pair<size_t, const UOp *>>> argStates_; // per kernel: (argument, state)
  std::vector<CallAccess> access_;
};

inline const KernelSet &ReferenceScheduler::ancestry(const UOp *u) {
  if (auto it = ancestry_.find(u); it != ancestry_.end()) return it->second;
  ToposortOptions opts;
  opts.enterCalls = false;
  opts.gate = [&](const UOp *x) { return !ancestry_.count(x); };
  for (const UOp *x : toposort(u, opts)) {
    if (ancestry_.count(x)) continue;
    KernelSet set(kernels_.size());
    bool skipBody = x->is(Op::CALL) || x->is(Op::FUNCTION);
    for (size_t i = skipBody ? 1 : 0; i < x->numSrc(); ++i) set.merge(ancestry_.at(x->src(i)));
    if (auto it = kernelIndex_.find(x); it != kernelIndex_.end()) set.insert(it->second);
    ancestry_.emplace(x, std::move(set));
  }
  return ancestry_.at(u);
}

inline Diagnostic ReferenceScheduler::cycleError(const std::vector<size_t> &inDegree) {
  // Only the verdict and how many kernels are blocked: the cycle's explanation
  // is the library's (its wording is checked by the lit tests).
  size_t blocked = size_t(std::count_if(inDegree.begin(), inDegree.end(), [](size_t n) { return n > 0; }));
  Diagnostic d;
  d.message = "cycle detected in assign graph";
  d.notes.push_back(std::to_string(blocked) + " kernels cannot be ordered");
  return d;
}

inline const UOp *ReferenceScheduler::emitCall(size_t k) const {
  const UOp *call = callOf(k);
  std::vector<const UOp *> bufs;
  for (size_t i = 1; i < call->numSrc(); ++i)
    if (!isBoundVar(call->src(i))) bufs.push_back(bufUop(unwrapSrc(call->src(i))));
  // The argument rewrite is shared: the oracle checks the order, not this step.
  return scheduledCall(call, std::move(bufs));
}

inline Result<const UOp *> ReferenceScheduler::run() {
  ToposortOptions gated;
  gated.gate = gateKernelSink;
  for (const UOp *u : toposort(root_, gated)) {
    if (!u->is(Op::AFTER)) continue;
    afters_.push_back(u);
    for (size_t i = 1; i < u->numSrc(); ++i) {
      const UOp *s = u->src(i);
      if ((s->is(Op::CALL) || s->is(Op::END)) && kernelIndex_.emplace(s, kernels_.size()).second) kernels_.push_back(s);
    }
  }
  const size_t n = kernels_.size();
  deps_.assign(n, KernelSet(n));
  argStates_.resize(n);
  std::vector<std::pair<size_t, const UOp *>> reads;  // (reader kernel, state read)
  std::unordered_map<const UOp *, KernelSet> writers; // storage -> kernels writing it

  // Data and ordering dependencies, and the accesses.
  for (size_t k = 0; k < n; ++k) {
    if (kernels_[k]->is(Op::END) && (!kernels_[k]->numSrc() || !kernels_[k]->src(0)->is(Op::CALL)))
      return Diagnostic::at(kernels_[k],
                            "END in a kernel graph must wrap a CALL, not Ops." +
                                std::string(opName(kernels_[k]->numSrc() ? kernels_[k]->src(0)->op() : Op::NOOP)));
    const UOp *call = callOf(k);
    std::vector<std::vector<const UOp *>> statesPerArg;
    for (size_t i = 1; i < call->numSrc(); ++i) {
      Result<std::vector<const UOp *>> states = bufferStates(call->src(i));
      if (!states) return states.error();
      for (const UOp *st : *states) {
        deps_[k].merge(ancestry(st));
        argStates_[k].emplace_back(i - 1, st);
      }
      statesPerArg.push_back(std::move(*states));
    }
    Result<CallAccess> acc = callAccess(call);
    if (!acc) return acc.error();
    for (int64_t slot : acc->ins)
      for (const UOp *st : statesPerArg[size_t(slot)]) reads.emplace_back(k, st);
    for (int64_t slot : acc->outs)
      for (const UOp *st : statesPerArg[size_t(slot)]) writers.try_emplace(bufUop(st), n).first->second.insert(k);
    access_.push_back(std::move(*acc));
  }
  // Explicit AFTER-on-AFTER ordering.
  for (const UOp *u : afters_)
    for (size_t i = 1; i < u->numSrc(); ++i) {
      if (!u->src(i)->is(Op::AFTER)) continue;
      for (size_t j = 1; j < u->numSrc(); ++j) {
        auto it = kernelIndex_.find(u->src(j));
        if (it == kernelIndex_.end()) continue;
        KernelSet before = ancestry(u->src(i));
        before.erase(it->second);
        deps_[it->second].merge(before);
      }
    }
  // Write-after-read: a writer outside the read state's ancestry would destroy
  // the contents the reader needs, so it runs after the reader.
  for (const auto &[k, st] : reads) {
    auto it = writers.find(bufUop(st));
    if (it == writers.end()) continue;
    const KernelSet &anc = ancestry(st);
    it->second.forEach([&](size_t w) {
      if (w != k && !anc.contains(w)) deps_[w].insert(k);
    });
  }

  // Kahn's algorithm; children are listed in kernel order, so ties resolve by it.
  std::vector<size_t> inDegree(n);
  std::vector<std::vector<size_t>> children(n);
  for (size_t k = 0; k < n; ++k) {
    inDegree[k] = deps_[k].count();
    deps_[k].forEach([&](size_t d) { children[d].push_back(k); });
  }
  std::deque<size_t> queue;
  for (size_t k = 0; k < n; ++k)
    if (inDegree[k] == 0) queue.push_back(k);
  std::vector<const UOp *> calls;
  while (!queue.empty()) {
    size_t k = queue.front();
    queue.pop_front();
    calls.push_back(emitCall(k));
    for (size_t c : children[k])
      if (--inDegree[c] == 0) queue.push_back(c);
  }
  if (calls.size() != n) return cycleError(inDegree);
  return root_->context().get(Op::LINEAR, dtypes::Void, std::move(calls));
}

/// The LINEAR (or the diagnostic) the contract gives for `kernelGraph`.
inline Result<const UOp *> linearize(const UOp *kernelGraph) { return ReferenceScheduler(kernelGraph).run(); }

} // namespace tgc::testing::reference
