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
  std::string kernelName(size_t k) const;
  Diagnostic cycleError(const std::vector<size_t> &inDegree);
  std::string explainEdge(size_t before, size_t after);
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

inline std::string ReferenceScheduler::kernelName(size_t k) const {
  std::string s = "kernel " + std::to_string(k);
  const UOp *body = callOf(k)->numSrc() ? callOf(k)->src(0) : nullptr;
  if (body && body->arg().field("name") && body->arg().field("name")->kind() == Value::Kind::Str)
    s += " '" + body->arg().field("name")->str() + "'";
  else if (body)
    s += " (" + std::string(opName(body->op())) + ")";
  if (const Location *loc = kernels_[k]->context().location(kernels_[k])) s += " at " + loc->str();
  return s;
}

/// Why kernel `after` must run after kernel `before` (one edge of deps_).
inline std::string ReferenceScheduler::explainEdge(size_t before, size_t after) {
  std::string b = kernelName(before), a = kernelName(after);
  for (const auto &[i, st] : argStates_[after]) {
    if (ancestry(st).contains(before))
      return a + " runs after " + b + ": its argument " + std::to_string(i) + ", " + storageName(st) + ", depends on " +
             b;
  }
  for (const UOp *u : afters_) {
    bool orders = false;
    for (size_t i = 1; i < u->numSrc(); ++i) orders |= u->src(i) == kernels_[after];
    if (!orders) continue;
    for (size_t i = 1; i < u->numSrc(); ++i)
      if (u->src(i)->is(Op::AFTER) && ancestry(u->src(i)).contains(before))
        return a + " runs after " + b + ": an AFTER orders it after " + storageName(u->src(i)) + ", which depends on " +
               b;
  }
  // Otherwise a write-after-read edge: `after` writes storage that `before` reads.
  const UOp *call = callOf(before);
  for (int64_t slot : access_[before].ins) {
    Result<std::vector<const UOp *>> states = bufferStates(call->src(size_t(slot) + 1));
    if (!states) continue;
    for (const UOp *st : *states) {
      const UOp *buf = bufUop(st);
      for (int64_t w : access_[after].outs) {
        Result<std::vector<const UOp *>> ws = bufferStates(callOf(after)->src(size_t(w) + 1));
        if (!ws) continue;
        for (const UOp *wst : *ws)
          if (bufUop(wst) == buf && !ancestry(st).contains(after))
            return a + " runs after " + b + ": it writes " + storageName(buf) + ", which " + b + " reads as " +
                   storageName(st) + " (argument " + std::to_string(slot) + ") from before that write";
      }
    }
  }
  return a + " runs after " + b;
}

inline Diagnostic ReferenceScheduler::cycleError(const std::vector<size_t> &inDegree) {
  // Walk from a blocked kernel to one of its blocked deps until a kernel repeats.
  size_t start = 0;
  while (inDegree[start] == 0) ++start;
  std::vector<size_t> path;
  std::unordered_map<size_t, size_t> pos;
  size_t k = start;
  while (!pos.count(k)) {
    pos[k] = path.size();
    path.push_back(k);
    size_t next = k;
    deps_[k].forEach([&](size_t d) {
      if (next == k && inDegree[d] > 0) next = d;
    });
    k = next;
  }
  // path[pos[k]..] is a cycle in which each kernel depends on the next one.
  std::vector<size_t> cycle(path.begin() + std::ptrdiff_t(pos[k]), path.end());
  std::reverse(cycle.begin(), cycle.end()); // now each kernel must run before the next
  Diagnostic d = Diagnostic::at(kernels_[cycle[0]], "cycle detected in assign graph");
  size_t blocked = size_t(std::count_if(inDegree.begin(), inDegree.end(), [](size_t n) { return n > 0; }));
  std::string names;
  for (size_t c : cycle) names += kernelName(c) + " -> ";
  d.notes.push_back(std::to_string(blocked) +
                    " kernels cannot be ordered; in this cycle each must run before the next: " + names +
                    kernelName(cycle[0]));
  for (size_t i = 0; i < cycle.size(); ++i) d.notes.push_back(explainEdge(cycle[i], cycle[(i + 1) % cycle.size()]));
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
