//===- Linearize.cpp - order the kernels of a kernel graph -----------------===//
//
// Mirrors the reference revision's create_schedule
// (tinygrad/schedule/__init__.py; pipeline-schedule.md §5.3):
//  1. kernels: the CALL/END sources of every AFTER, in toposort order;
//  2. a kernel depends on every kernel in the ancestry of every state it takes
//     as an argument (used or not), and AFTER-on-AFTER deps add the ancestry
//     of the AFTER deps to the AFTER's kernels;
//  3. write-after-read: a kernel that writes buffer B and is not in the
//     ancestry of the state of B some other kernel reads must run after it;
//  4. Kahn's algorithm, ties broken by kernel order, so the result is
//     deterministic; kernels left over form a cycle, which is reported.
// Writes come only from access analysis: an AFTER returned by a kernel is
// ordering, not evidence that the kernel wrote it.
//
// The contract's sets (the ancestry of every node, the deps of every kernel)
// take nodes x kernels bits, so this runs Kahn's algorithm on a graph with
// one extra "ancestry node" per graph node instead, whose inputs are its
// sources' ancestry nodes and, for a kernel, the kernel itself; a kernel's
// deps are edges from the ancestry nodes of its states. An ancestry node
// completes the moment its last input does, so a kernel is released at the
// step the last kernel in its deps runs, exactly as with the sets: edges
// whose transitive closure is a set release at the same step as the set.
// For the same reason write-after-read needs only enough edges for the
// closure: when a buffer's writers are chained by data (repeated assigns),
// one edge to the first writer past the read state. "Is w in anc(x)" is
// answered per query by Ancestry.h, and BufUopCache keeps long assign chains
// from being walked once per state. Near-linear in the graph size (see
// bench/linearize_bench.cpp), except that a buffer whose writers are not
// chained costs its reads x writers queries, as in the contract.
// LinearizeDifferentialTest compares the result with the literal sets.
//
//===----------------------------------------------------------------------===//
#include "Schedule/Linearize.h"

#include "Schedule/Access.h"
#include "Schedule/Ancestry.h"
#include "Schedule/Storage.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace tgc::sched {

namespace {

bool gateKernelSink(const UOp *u) { return !u->is(Op::LINEAR) && !(u->is(Op::SINK) && u->arg().isObj("KernelInfo")); }

class Scheduler {
public:
  explicit Scheduler(const UOp *root) : root_(root) {}
  Result<const UOp *> run();
  /// After run(): why each kernel of the LINEAR sits where it does.
  std::vector<ScheduleStep> trace();
  /// After run(): the AFTER orderings (LinearizeTrace::afterOrderings).
  std::vector<AfterOrdering> afterOrderings() const;

private:
  using Id = uint32_t; // a node of the ordering graph: kernel k is k, the ancestry node of graph node p is n + p

  uint32_t kernelIndex(const UOp *u) const { return u->id() < kernelOf_.size() ? kernelOf_[u->id()] : kNotKernel; }
  Id ancestryNode(const UOp *u) const { return Id(kernels_.size()) + anc_->position(u); }
  bool inAncestry(const UOp *u, size_t k) const { return anc_->reaches(u, kernels_[k]); }
  void addEdge(Id from, Id to) { edges_.emplace_back(from, to); }
  void addAncestryExcept(const UOp *dep, size_t k);
  /// The kernels writing one storage; `chained` when, in topological order,
  /// each takes an argument state whose ancestry has the previous one.
  struct Writers {
    std::vector<size_t> kernels;
    bool chained = false;
  };
  bool takesStateAfter(size_t later, size_t earlier) const;
  using Reads = std::vector<std::pair<size_t, const UOp *>>; // (reader kernel, state read)
  void addWriteAfterRead(const Reads &reads, std::unordered_map<const UOp *, Writers> &writers);
  void findKernels();
  Status readArguments(Reads &reads, std::unordered_map<const UOp *, Writers> &writers);
  void addOrderingEdges();
  struct EdgeLists {
    std::vector<uint32_t> inDegree, childBegin; // the children of x: children[childBegin[x] .. childBegin[x + 1])
    std::vector<Id> children;
  };
  EdgeLists edgeLists(size_t total) const;
  Result<const UOp *> order();
  const UOp *callOf(size_t k) const { return kernels_[k]->is(Op::END) ? kernels_[k]->src(0) : kernels_[k]; }
  std::string kernelName(size_t k) const;
  /// The kernels that produced `state`: the nearest ones among its AFTER deps.
  std::vector<size_t> nearestKernels(const UOp *state) const;
  std::optional<size_t> firstBlockedDep(size_t k, const std::vector<std::vector<Id>> &parents,
                                        const std::vector<bool> &done) const;
  Diagnostic cycleError(const std::vector<bool> &done);
  std::pair<ScheduleStep::Reason, std::string> explainEdge(size_t before, size_t after);
  const UOp *emitCall(size_t k);

  const UOp *root_;
  std::vector<const UOp *> afters_, kernels_;
  static constexpr uint32_t kNotKernel = UINT32_MAX;
  std::vector<uint32_t> kernelOf_; // by UOp id: kernel index, or kNotKernel
  std::optional<Ancestry> anc_;
  std::vector<std::pair<Id, Id>> edges_;
  std::vector<size_t> argStateBegin_;                     // per kernel, into argStates_
  std::vector<std::pair<size_t, const UOp *>> argStates_; // (argument, state)
  std::vector<CallAccess> access_;
  CallAccessCache accessCache_;
  BufUopCache storage_;
  std::vector<size_t> order_;                       // kernels in LINEAR order
  std::vector<int64_t> releasedBy_;                 // per kernel: the kernel whose completion released it, or -1
  std::vector<size_t> releasedAt_, ranAt_;          // per kernel: the step it became ready / ran at
};

/// deps[k] |= anc(dep) - {k} where k is in anc(dep): everything dep's ancestry
/// reaches except through k itself. Nodes whose ancestry lacks k contribute
/// their ancestry node; the others contribute themselves if they are kernels
/// and their sources.
void Scheduler::addAncestryExcept(const UOp *dep, size_t k) {
  const UOp *target = kernels_[k];
  std::vector<const UOp *> region, work{dep};
  std::unordered_set<const UOp *> seen{dep};
  while (!work.empty()) {
    const UOp *u = work.back();
    work.pop_back();
    region.push_back(u);
    for (const UOp *s : Ancestry::deps(u))
      if (anc_->position(s) >= anc_->position(target) && seen.insert(s).second) work.push_back(s);
  }
  std::sort(region.begin(), region.end(),
            [&](const UOp *a, const UOp *b) { return anc_->position(a) < anc_->position(b); });
  std::unordered_set<const UOp *> hasK; // region nodes with k in their ancestry
  for (const UOp *u : region) {
    bool has = u == target;
    for (const UOp *s : Ancestry::deps(u)) has = has || hasK.count(s);
    if (has) hasK.insert(u);
  }
  work.assign(1, dep);
  seen = {dep};
  while (!work.empty()) {
    const UOp *u = work.back();
    work.pop_back();
    if (!hasK.count(u)) {
      addEdge(ancestryNode(u), Id(k));
      continue;
    }
    if (uint32_t j = kernelIndex(u); j != kNotKernel && j != k) addEdge(Id(j), Id(k));
    for (const UOp *s : Ancestry::deps(u))
      if (seen.insert(s).second) work.push_back(s);
  }
}

/// Whether kernel `earlier` is in deps[later] through an argument state of
/// `later` that `later` itself reaches, so anything whose ancestry has
/// `later` has `earlier` too.
bool Scheduler::takesStateAfter(size_t later, size_t earlier) const {
  for (size_t i = argStateBegin_[later]; i < argStateBegin_[later + 1]; ++i) {
    const UOp *st = argStates_[i].second;
    if (inAncestry(st, earlier) && anc_->reaches(kernels_[later], st)) return true;
  }
  return false;
}

/// Write-after-read: for a read (k, st) of storage B, every writer of B other
/// than k that is not in anc(st) would destroy the contents k needs, so it
/// runs after k. When B's writers are chained (repeated assigns), the ones in
/// anc(st) are a prefix of the chain, and an edge to the first writer past it
/// implies the rest (or, if that writer is k, the chain itself orders them
/// after k); a binary search finds it. Otherwise every writer is checked.
void Scheduler::addWriteAfterRead(const Reads &reads,
                                  std::unordered_map<const UOp *, Writers> &writers) {
  for (auto &[buf, w] : writers) {
    std::sort(w.kernels.begin(), w.kernels.end(),
              [&](size_t a, size_t b) { return anc_->position(kernels_[a]) < anc_->position(kernels_[b]); });
    w.chained = true;
    for (size_t j = 1; j < w.kernels.size() && w.chained; ++j)
      w.chained = takesStateAfter(w.kernels[j], w.kernels[j - 1]);
  }
  for (const auto &[k, st] : reads) {
    auto it = writers.find(storage_(st));
    if (it == writers.end()) continue;
    const std::vector<size_t> &ws = it->second.kernels;
    if (!it->second.chained) {
      for (size_t w : ws)
        if (w != k && !inAncestry(st, w)) addEdge(Id(k), Id(w));
      continue;
    }
    size_t lo = 0, hi = ws.size(); // the first writer not in anc(st)
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (inAncestry(st, ws[mid]))
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < ws.size() && ws[lo] != k) addEdge(Id(k), Id(ws[lo]));
  }
}

std::string Scheduler::kernelName(size_t k) const {
  std::string s = "kernel " + std::to_string(k);
  const UOp *body = callOf(k)->numSrc() ? callOf(k)->src(0) : nullptr;
  if (body && body->arg().field("name") && body->arg().field("name")->kind() == Value::Kind::Str)
    s += " '" + body->arg().field("name")->str() + "'";
  else if (body)
    s += " (" + std::string(opName(body->op())) + ")";
  if (const Location *loc = kernels_[k]->context().location(kernels_[k])) s += " at " + loc->str();
  return s;
}

/// Why kernel `after` must run after kernel `before` (one edge of deps).
std::pair<ScheduleStep::Reason, std::string> Scheduler::explainEdge(size_t before, size_t after) {
  using R = ScheduleStep::Reason;
  std::string b = kernelName(before), a = kernelName(after);
  for (size_t i = argStateBegin_[after]; i < argStateBegin_[after + 1]; ++i) {
    const auto &[arg, st] = argStates_[i];
    if (inAncestry(st, before))
      return {R::Data, a + " runs after " + b + ": its argument " + std::to_string(arg) + ", " + storageName(st) +
                           ", depends on " + b};
  }
  for (const UOp *u : afters_) {
    bool orders = false;
    for (size_t i = 1; i < u->numSrc(); ++i) orders |= u->src(i) == kernels_[after];
    if (!orders) continue;
    for (size_t i = 1; i < u->numSrc(); ++i)
      if (u->src(i)->is(Op::AFTER) && inAncestry(u->src(i), before))
        return {R::After, a + " runs after " + b + ": an AFTER orders it after " + storageName(u->src(i)) +
                              ", which depends on " + b};
  }
  // Otherwise a write-after-read edge: `after` writes storage that `before` reads.
  const UOp *call = callOf(before);
  for (int64_t slot : access_[before].ins) {
    Result<std::vector<const UOp *>> states = bufferStates(call->src(size_t(slot) + 1));
    if (!states) continue;
    for (const UOp *st : *states) {
      const UOp *buf = storage_(st);
      for (int64_t w : access_[after].outs) {
        Result<std::vector<const UOp *>> ws = bufferStates(callOf(after)->src(size_t(w) + 1));
        if (!ws) continue;
        for (const UOp *wst : *ws)
          if (storage_(wst) == buf && !inAncestry(st, after))
            return {R::WriteAfterRead, a + " runs after " + b + ": it writes " + storageName(buf) + ", which " + b +
                                           " reads as " + storageName(st) + " (argument " + std::to_string(slot) +
                                           ") from before that write"};
      }
    }
  }
  return {R::Data, a + " runs after " + b};
}

/// The lowest-numbered kernel in deps[k] that did not run: kernel parents of k
/// and kernel inputs of the ancestry nodes above k that did not complete (a
/// completed ancestry node has only kernels that ran above it).
std::optional<size_t> Scheduler::firstBlockedDep(size_t k, const std::vector<std::vector<Id>> &parents,
                                                 const std::vector<bool> &done) const {
  const size_t n = kernels_.size();
  std::optional<size_t> best;
  std::vector<Id> work{Id(k)};
  std::vector<bool> seen(parents.size(), false);
  while (!work.empty()) {
    Id x = work.back();
    work.pop_back();
    for (Id p : parents[x]) {
      if (done[p] || seen[p]) continue;
      seen[p] = true;
      if (p < n)
        best = std::min(best.value_or(p), size_t(p));
      else
        work.push_back(p);
    }
  }
  return best;
}

Diagnostic Scheduler::cycleError(const std::vector<bool> &done) {
  std::vector<std::vector<Id>> parents(done.size());
  for (const auto &[from, to] : edges_) parents[to].push_back(from);
  // Walk from a blocked kernel to one of its blocked deps until a kernel repeats.
  size_t start = 0;
  while (done[start]) ++start;
  std::vector<size_t> path;
  std::unordered_map<size_t, size_t> pos;
  size_t k = start;
  while (!pos.count(k)) {
    pos[k] = path.size();
    path.push_back(k);
    k = firstBlockedDep(k, parents, done).value_or(k);
  }
  // path[pos[k]..] is a cycle in which each kernel depends on the next one.
  std::vector<size_t> cycle(path.begin() + std::ptrdiff_t(pos[k]), path.end());
  std::reverse(cycle.begin(), cycle.end()); // now each kernel must run before the next
  Diagnostic d = Diagnostic::at(kernels_[cycle[0]], "cycle detected in assign graph");
  size_t blocked = size_t(std::count(done.begin(), done.begin() + std::ptrdiff_t(kernels_.size()), false));
  std::string names;
  for (size_t c : cycle) names += kernelName(c) + " -> ";
  d.notes.push_back(std::to_string(blocked) +
                    " kernels cannot be ordered; in this cycle each must run before the next: " + names +
                    kernelName(cycle[0]));
  for (size_t i = 0; i < cycle.size(); ++i) d.notes.push_back(explainEdge(cycle[i], cycle[(i + 1) % cycle.size()]).second);
  return d;
}

const UOp *Scheduler::emitCall(size_t k) {
  const UOp *call = callOf(k);
  std::vector<const UOp *> bufs;
  for (size_t i = 1; i < call->numSrc(); ++i)
    if (!isBoundVar(call->src(i))) bufs.push_back(storage_(unwrapSrc(call->src(i))));
  return scheduledCall(call, std::move(bufs));
}

/// The kernels: the CALLs and ENDs an AFTER orders, in graph order.
void Scheduler::findKernels() {
  kernelOf_.assign(root_->context().size(), kNotKernel);
  for (const UOp *u : toposortGraph(std::span<const UOp *const>(&root_, 1), true, gateKernelSink)) {
    if (!u->is(Op::AFTER)) continue;
    afters_.push_back(u);
    for (size_t i = 1; i < u->numSrc(); ++i) {
      const UOp *s = u->src(i);
      if ((s->is(Op::CALL) || s->is(Op::END)) && kernelOf_[s->id()] == kNotKernel) {
        kernelOf_[s->id()] = uint32_t(kernels_.size());
        kernels_.push_back(s);
      }
    }
  }
}

/// Each kernel's argument states and accesses: the states it reads go to
/// `reads`, the kernels writing each storage to `writers`.
Status Scheduler::readArguments(Reads &reads, std::unordered_map<const UOp *, Writers> &writers) {
  argStateBegin_.push_back(0);
  for (size_t k = 0; k < kernels_.size(); ++k) {
    if (kernels_[k]->is(Op::END) && (!kernels_[k]->numSrc() || !kernels_[k]->src(0)->is(Op::CALL)))
      return Diagnostic::at(kernels_[k],
                            "END in a kernel graph must wrap a CALL, not Ops." +
                                std::string(opName(kernels_[k]->numSrc() ? kernels_[k]->src(0)->op() : Op::NOOP)));
    const UOp *call = callOf(k);
    std::vector<std::vector<const UOp *>> statesPerArg;
    for (size_t i = 1; i < call->numSrc(); ++i) {
      Result<std::vector<const UOp *>> states = bufferStates(call->src(i));
      if (!states) return states.error();
      for (const UOp *st : *states) argStates_.emplace_back(i - 1, st);
      statesPerArg.push_back(std::move(*states));
    }
    argStateBegin_.push_back(argStates_.size());
    Result<CallAccess> acc = accessCache_(call);
    if (!acc) return acc.error();
    for (int64_t slot : acc->ins)
      for (const UOp *st : statesPerArg[size_t(slot)]) reads.emplace_back(k, st);
    for (int64_t slot : acc->outs)
      for (const UOp *st : statesPerArg[size_t(slot)]) {
        std::vector<size_t> &ws = writers[storage_(st)].kernels;
        if (ws.empty() || ws.back() != k) ws.push_back(k);
      }
    access_.push_back(std::move(*acc));
  }
  return Status::success();
}

/// The edges of the ancestry nodes, the data dependencies and the
/// AFTER-on-AFTER orderings.
void Scheduler::addOrderingEdges() {
  std::vector<const UOp *> indexRoots(afters_);
  indexRoots.insert(indexRoots.end(), kernels_.begin(), kernels_.end());
  for (const auto &[arg, st] : argStates_) indexRoots.push_back(st);
  anc_.emplace(indexRoots);
  // Ancestry nodes: anc(u) is u (if a kernel) and the ancestry of its sources.
  for (const UOp *u : anc_->nodes()) {
    for (const UOp *s : Ancestry::deps(u)) addEdge(ancestryNode(s), ancestryNode(u));
    if (uint32_t k = kernelIndex(u); k != kNotKernel) addEdge(Id(k), ancestryNode(u));
  }
  // Data dependencies: a kernel runs after the ancestry of its argument states.
  for (size_t k = 0; k < kernels_.size(); ++k)
    for (size_t i = argStateBegin_[k]; i < argStateBegin_[k + 1]; ++i)
      addEdge(ancestryNode(argStates_[i].second), Id(k));
  // Explicit AFTER-on-AFTER ordering.
  for (const UOp *u : afters_)
    for (size_t i = 1; i < u->numSrc(); ++i) {
      const UOp *dep = u->src(i);
      if (!dep->is(Op::AFTER)) continue;
      for (size_t j = 1; j < u->numSrc(); ++j) {
        uint32_t k = kernelIndex(u->src(j));
        if (k == kNotKernel) continue;
        if (inAncestry(dep, k))
          addAncestryExcept(dep, k);
        else
          addEdge(ancestryNode(dep), Id(k));
      }
    }
}

/// The edges as in-degrees and child lists over `total` ordering nodes.
Scheduler::EdgeLists Scheduler::edgeLists(size_t total) const {
  EdgeLists g{std::vector<uint32_t>(total, 0), std::vector<uint32_t>(total + 1, 0), std::vector<Id>(edges_.size())};
  for (const auto &[from, to] : edges_) {
    ++g.inDegree[to];
    ++g.childBegin[from + 1];
  }
  for (size_t x = 0; x < total; ++x) g.childBegin[x + 1] += g.childBegin[x];
  std::vector<uint32_t> fill(g.childBegin.begin(), g.childBegin.end() - 1);
  for (const auto &[from, to] : edges_) g.children[fill[from]++] = to;
  return g;
}

/// Kahn's algorithm. Kernels wait in a FIFO queue; an ancestry node completes
/// as soon as its inputs have, and the kernels one step releases join the
/// queue in kernel order, so ties resolve by it.
Result<const UOp *> Scheduler::order() {
  const size_t n = kernels_.size(), total = n + anc_->nodes().size();
  EdgeLists g = edgeLists(total);
  std::vector<bool> done(total, false);
  std::vector<Id> released, cascade;
  releasedBy_.assign(n, -1);
  releasedAt_.assign(n, 0);
  ranAt_.assign(n, 0);
  int64_t running = -1; // the kernel whose completion is cascading
  size_t step = 0;      // how many kernels ran
  auto complete = [&](Id x) {
    cascade.assign(1, x);
    while (!cascade.empty()) {
      Id y = cascade.back();
      cascade.pop_back();
      done[y] = true;
      for (uint32_t c = g.childBegin[y]; c < g.childBegin[y + 1]; ++c) {
        Id z = g.children[c];
        if (--g.inDegree[z] != 0) continue;
        if (z < n) {
          released.push_back(z);
          releasedBy_[z] = running;
          releasedAt_[z] = step;
        } else {
          cascade.push_back(z);
        }
      }
    }
  };
  std::vector<Id> sources;
  for (Id x = 0; x < total; ++x)
    if (g.inDegree[x] == 0) sources.push_back(x);
  for (Id x : sources) {
    if (x < n)
      released.push_back(x);
    else
      complete(x);
  }
  std::deque<Id> queue;
  std::vector<const UOp *> calls;
  while (true) {
    std::sort(released.begin(), released.end());
    queue.insert(queue.end(), released.begin(), released.end());
    released.clear();
    if (queue.empty()) break;
    Id k = queue.front();
    queue.pop_front();
    calls.push_back(emitCall(k));
    order_.push_back(k);
    ranAt_[k] = step++;
    running = int64_t(k);
    complete(k);
  }
  if (calls.size() != n) return cycleError(done);
  return root_->context().get(Op::LINEAR, dtypes::Void, std::move(calls));
}

Result<const UOp *> Scheduler::run() {
  findKernels();
  Reads reads;
  std::unordered_map<const UOp *, Writers> writers; // by storage
  if (Status s = readArguments(reads, writers); !s) return s.error();
  addOrderingEdges();
  addWriteAfterRead(reads, writers);
  return order();
}

std::vector<ScheduleStep> Scheduler::trace() {
  std::vector<ScheduleStep> steps;
  for (size_t k : order_) {
    ScheduleStep s;
    s.kernel = k;
    s.name = kernelName(k);
    if (releasedBy_[k] >= 0) {
      s.waitedFor = int64_t(ranAt_[size_t(releasedBy_[k])]);
      std::tie(s.reason, s.why) = explainEdge(size_t(releasedBy_[k]), k);
    } else {
      s.why = "it depends on no other kernel";
    }
    s.queuedBehind = ranAt_[k] - releasedAt_[k];
    steps.push_back(std::move(s));
  }
  return steps;
}

std::vector<size_t> Scheduler::nearestKernels(const UOp *state) const {
  // Through AFTER deps only, not an AFTER's src[0] (the earlier version of its
  // storage, whose producers come before): a long assign chain stays linear.
  std::vector<size_t> out;
  std::vector<const UOp *> work{state};
  std::unordered_set<const UOp *> seen{state};
  while (!work.empty()) {
    const UOp *u = work.back();
    work.pop_back();
    if (uint32_t k = kernelIndex(u); k != kNotKernel) {
      out.push_back(k);
      continue;
    }
    std::span<const UOp *const> deps = Ancestry::deps(u);
    if (u->is(Op::AFTER)) deps = deps.subspan(1);
    for (const UOp *s : deps)
      if (seen.insert(s).second) work.push_back(s);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<AfterOrdering> Scheduler::afterOrderings() const {
  std::vector<size_t> position(kernels_.size());
  for (size_t p = 0; p < order_.size(); ++p) position[order_[p]] = p;
  std::set<std::tuple<size_t, size_t, std::string>> edges;
  auto add = [&](const UOp *state, size_t k) {
    for (size_t p : nearestKernels(state))
      if (p != k) edges.emplace(position[p], position[k], storageName(state));
  };
  // A kernel runs after the producers of every AFTER state it takes as an argument ...
  for (size_t k = 0; k < kernels_.size(); ++k)
    for (size_t i = argStateBegin_[k]; i < argStateBegin_[k + 1]; ++i)
      if (argStates_[i].second->is(Op::AFTER)) add(argStates_[i].second, k);
  // ... and after those of the AFTER deps of an AFTER it is a dep of.
  for (const UOp *u : afters_)
    for (size_t i = 1; i < u->numSrc(); ++i) {
      if (!u->src(i)->is(Op::AFTER)) continue;
      for (size_t j = 1; j < u->numSrc(); ++j)
        if (uint32_t k = kernelIndex(u->src(j)); k != kNotKernel) add(u->src(i), k);
    }
  std::vector<AfterOrdering> out;
  for (const auto &[before, after, via] : edges) out.push_back(AfterOrdering{before, after, via});
  return out;
}

} // namespace

const UOp *scheduledCall(const UOp *call, std::vector<const UOp *> bufs) {
  const UOp *body = call->src(0);
  std::unordered_set<const UOp *> distinct(bufs.begin(), bufs.end());
  if (body->is(Op::SINK) && distinct.size() != bufs.size()) {
    // Storage passed twice: a PARAM takes the first slot holding its storage
    // when an otherwise identical PARAM already sits there. The order is
    // fixed, so the kernel may see one pointer.
    ToposortOptions opts;
    opts.enterCalls = false;
    std::unordered_set<const UOp *> params;
    for (const UOp *u : toposort(body, opts))
      if (u->is(Op::PARAM) && paramSlot(u) && *paramSlot(u) >= 0) params.insert(u);
    std::unordered_map<const UOp *, const UOp *> subs;
    for (const UOp *p : params) {
      size_t slot = size_t(*paramSlot(p));
      if (slot >= bufs.size()) continue;
      size_t first = size_t(std::find(bufs.begin(), bufs.end(), bufs[slot]) - bufs.begin());
      if (first == slot) continue;
      const UOp *q = withParamSlot(p, int64_t(first));
      if (params.count(q)) subs.emplace(p, q);
    }
    if (!subs.empty()) body = substitute(body, subs);
  }
  static const Value callInfo =
      Value::object("CallInfo", {"grad_fxn", "name", "precompile", "precompile_backward", "aux"},
                    {Value(), Value(), Value::boolean(false), Value::boolean(false), Value()});
  std::vector<const UOp *> src{body};
  src.insert(src.end(), bufs.begin(), bufs.end());
  return call->context().get(Op::CALL, dtypes::Void, std::move(src), callInfo);
}

Result<const UOp *> linearize(const UOp *kernelGraph) { return Scheduler(kernelGraph).run(); }

Result<LinearizeTrace> linearizeTraced(const UOp *kernelGraph) {
  Scheduler s(kernelGraph);
  Result<const UOp *> linear = s.run();
  if (!linear) return linear.error();
  return LinearizeTrace{*linear, s.trace(), s.afterOrderings()};
}

Status LinearizePass::run(Graph &g) {
  for (size_t r = 0; r < g.roots.size(); ++r) {
    const UOp *&root = g.roots[r];
    if (root->is(Op::LINEAR)) continue;
    // a callified function whose body is a kernel graph: schedule the body,
    // giving CALL(LINEAR, *args) as tinygrad's pm_schedule does
    bool function =
        root->is(Op::CALL) && root->numSrc() && root->src(0)->is(Op::SINK) && !root->src(0)->arg().isObj("KernelInfo");
    Scheduler s(function ? root->src(0) : root);
    Result<const UOp *> linear = s.run();
    if (!linear) return linear.error();
    g.afterOrderings[r] = s.afterOrderings();
    if (function) {
      std::vector<const UOp *> src(root->src().begin(), root->src().end());
      src[0] = *linear;
      root = root->withSrc(std::move(src));
    } else {
      root = *linear;
    }
  }
  return Status::success();
}

} // namespace tgc::sched
