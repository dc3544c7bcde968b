//===- RowFusion.cpp - consecutive kernels over the same rows as one kernel ------===//
//
// See RowFusion.h. The fused kernel is built first (buffers renumbered to the
// fused call's, every kernel's row loop renamed to the first one's), then
// checked on what it became: the checks read the same index expressions the
// lowering will.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/RowFusion.h"
#include "Codegen/Lower/KernelToMLIR.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/ParallelLoop.h"
#include "Codegen/Opt/PlanRewrite.h"

#include "IR/Graph.h"
#include "IR/Pass.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace tgc::codegen {

namespace {

// A kernel's work per row may be this many times the elements of its widest
// row: softmax's and layernorm's kernels read each element of a row once or
// twice; a matmul's row does K x N multiply-adds over K + N elements.
constexpr int64_t kMaxWorkPerRowElement = 4;


/// A kernel that is one loop nest: SINK(END(effect, rows, inner...)).
struct RowNest {
  const UOp *end = nullptr;
  const UOp *rows = nullptr; ///< the outermost RANGE
  int64_t count = 0;
};

std::optional<RowNest> rowNestOf(const ScheduleKernel &k) {
  const UOp *sink = k.sink;
  if (!k.vars.empty() || !sink->is(Op::SINK) || sink->numSrc() != 1) return std::nullopt;
  const UOp *end = sink->src(0);
  if (!end->is(Op::END) || end->numSrc() < 2) return std::nullopt;
  std::optional<int64_t> n = tripCount(end->src(1));
  if (!n || *n < 2) return std::nullopt;
  return RowNest{end, end->src(1), *n};
}

bool sameRegion(const ScheduleArg &a, const ScheduleArg &b) {
  return a.buffer == b.buffer && a.byteOffset == b.byteOffset && a.bytes == b.bytes;
}
bool overlaps(const ScheduleArg &a, const ScheduleArg &b) {
  return a.buffer == b.buffer && a.byteOffset < b.byteOffset + b.bytes && b.byteOffset < a.byteOffset + a.bytes;
}

/// The accesses of one loop nest of the fused kernel, by fused slot.
struct NestAccesses {
  std::set<int64_t> stored, loaded;
  std::vector<const UOp *> indexes; ///< every INDEX of a global buffer
  bool bareUse = false;             ///< a buffer used other than through INDEX (element 0)
};

NestAccesses accessesOf(const UOp *nest) {
  NestAccesses a;
  std::vector<const UOp *> nodes = toposort(nest);
  // An INDEX is a store's target in a STORE's first slot, a load anywhere else.
  std::set<const UOp *> targets, loads;
  for (const UOp *u : nodes)
    for (size_t i = 0; i < u->numSrc(); ++i) {
      const UOp *s = u->src(i);
      if (s->is(Op::INDEX)) (u->is(Op::STORE) && i == 0 ? targets : loads).insert(s);
      if (isGlobalBuffer(s) && !(u->is(Op::INDEX) && i == 0)) a.bareUse = true;
      if (u->is(Op::STORE) && i == 0 && !(u->numSrc() == 2 && s->is(Op::INDEX))) a.bareUse = true;
    }
  for (const UOp *u : nodes) {
    if (!u->is(Op::INDEX) || !isGlobalBuffer(u->src(0))) continue;
    int64_t slot = slotOf(u->src(0)).value_or(-1);
    a.indexes.push_back(u);
    if (targets.count(u)) a.stored.insert(slot);
    if (loads.count(u)) a.loaded.insert(slot);
  }
  return a;
}

bool costly(const UOp *u) {
  for (const UOp *n : toposort(u))
    if (isTranscendental(n)) return true;
  return false;
}

/// Whether `idx` reaches distinct elements for distinct values of `ranges`
/// (a row-major layout: each range's stride at least the span of the ones
/// inside it).
bool distinctPerStep(const UOp *idx, const std::vector<const UOp *> &ranges) {
  std::vector<std::pair<int64_t, int64_t>> strides; // (stride, trip count)
  for (const UOp *r : ranges) {
    std::optional<int64_t> e = rangeStride(idx, r), n = tripCount(r);
    if (!e || !n || *e <= 0) return false;
    strides.push_back({*e, *n});
  }
  std::sort(strides.begin(), strides.end());
  int64_t span = 1;
  for (const auto &[stride, n] : strides) {
    if (stride < span) return false;
    span = stride * n;
  }
  return true;
}

/// The nest `nest` as END(STORE(INDEX(buf, idx), value), ranges...), or nullopt.
struct StoreNest {
  const UOp *store, *target, *value;
  std::vector<const UOp *> ranges;
};
std::optional<StoreNest> storeNestOf(const UOp *nest) {
  if (!nest->is(Op::END) || nest->numSrc() < 2) return std::nullopt;
  const UOp *st = nest->src(0);
  if (!st->is(Op::STORE) || st->numSrc() != 2 || !st->src(0)->is(Op::INDEX) || st->src(0)->numSrc() != 2)
    return std::nullopt;
  return StoreNest{st, st->src(0), st->src(1), {nest->src().begin() + 1, nest->src().end()}};
}

} // namespace

namespace {

// The output of store nest `c` (nests[j]) is its alone: nothing else in the kernel touches it.
bool ownsOutput(const std::vector<const UOp *> &nests, size_t j, const StoreNest &c) {
  const UOp *out = c.target->src(0);
  for (size_t i = 0; i < nests.size(); ++i)
    for (const UOp *u : toposort(i == j ? c.value : nests[i]))
      if (u == out || (u->is(Op::INDEX) && slotOf(u->src(0)) == slotOf(out))) return false;
  return true;
}

// Where the REDUCE `red` (of an earlier nest) sums, with its ranges for c's,
// a costly subexpression of store nest c's value: that subexpression.
const UOp *recomputedOperand(const UOp *red, const StoreNest &c, std::unordered_map<const UOp *, const UOp *> &sigma) {
  if (!red->is(Op::REDUCE) || red->numSrc() != c.ranges.size() + 1) return nullptr;
  sigma.clear();
  for (size_t k = 0; k < c.ranges.size(); ++k)
    if (tripCount(c.ranges[k]) == tripCount(red->src(k + 1))) sigma[c.ranges[k]] = red->src(k + 1);
  const UOp *operand = red->src(0);
  if (sigma.size() != c.ranges.size() || operand->dtype() != c.target->dtype() || !costly(operand)) return nullptr;
  const UOp *found = nullptr;
  for (const UOp *u : toposort(c.value))
    if (u->dtype() == operand->dtype() && substitute(u, sigma) == operand) found = u;
  return found;
}

// Shares one value into store nest nests[j]'s output (see shareReducedValues).
bool shareInto(std::vector<const UOp *> &nests, size_t j) {
  std::optional<StoreNest> c = storeNestOf(nests[j]);
  if (!c || !isGlobalBuffer(c->target->src(0)) || !ownsOutput(nests, j, *c) || !distinctPerStep(c->target->src(1), c->ranges))
    return false;
  std::unordered_map<const UOp *, const UOp *> sigma;
  for (size_t i = 0; i < j; ++i)
    for (const UOp *red : toposort(nests[i])) {
      const UOp *found = recomputedOperand(red, *c, sigma);
      if (!found) continue;
      // Stored once before the reduction's nest; both read it back.
      Context &ctx = found->context();
      std::vector<const UOp *> before{c->store->withSrc({c->target, found})};
      before.insert(before.end(), c->ranges.begin(), c->ranges.end());
      std::vector<const UOp *> reduced(red->src().begin(), red->src().end());
      reduced[0] = substitute(c->target, sigma);
      nests[i] = substitute(nests[i], {{red, red->withSrc(reduced)}});
      nests[j] = substitute(nests[j], {{found, c->target}});
      nests.insert(nests.begin() + long(i), ctx.get(Op::END, dtypes::Void, before));
      return true;
    }
  return false;
}

} // namespace

size_t shareReducedValues(std::vector<const UOp *> &nests) {
  size_t shared = 0;
  for (size_t j = 1; j < nests.size(); ++j)
    if (shareInto(nests, j)) ++shared, ++j; // nest j moved to j + 1
  return shared;
}

namespace {

/// A run of calls being fused: the fused call's buffers and kernel.
class FusedRows {
public:
  FusedRows(const SchedulePlan &plan, const KernelOptions &opts) : plan_(&plan), opts_(opts) {}

  /// Adds call `c`; false (and nothing changed) when the kernels so far and it
  /// may not run row by row.
  bool add(size_t c) {
    FusedRows next = *this;
    if (!next.append(c) || !next.legal()) return false;
    *this = std::move(next);
    return true;
  }
  size_t size() const { return calls_.size(); }
  const std::vector<size_t> &calls() const { return calls_; }
  int64_t rows() const { return rows_; }

  /// The fused kernel and its call; `shared`: the values shareReducedValues stored once.
  std::pair<ScheduleKernel, ScheduleCall> build(const std::string &tag, size_t &shared) const {
    const UOp *sink = sink_;
    std::vector<const UOp *> nests = nests_;
    shared = opts_.shareReducedValues ? shareReducedValues(nests) : 0;
    if (shared) {
      sink = sinkOf(nests);
      if (!threadsOverRows(sink)) sink = sink_, shared = 0;
    }
    // The last kernel's buffers first, in its order (argument 0 stays the
    // output of the run of calls, as for a kernel of its own), then the rest.
    std::vector<size_t> order;
    for (int64_t s : lastSlots_) order.push_back(size_t(s));
    for (size_t s = 0; s < regions_.size(); ++s)
      if (std::find(order.begin(), order.end(), s) == order.end()) order.push_back(s);
    std::unordered_map<const UOp *, const UOp *> renumber;
    for (const UOp *u : toposort(sink))
      if (isGlobalBuffer(u)) {
        size_t at = size_t(std::find(order.begin(), order.end(), size_t(slotOf(u).value_or(0))) - order.begin());
        renumber[u] = u->withArg(withField(u->arg(), "slot", tgc::Value::integer(int64_t(at))));
      }
    sink = substitute(sink, renumber);
    ScheduleKernel k;
    k.sink = sink;
    k.name = name_;
    k.symbol = kernelSymbol(tag, name_);
    k.numArgs = unsigned(regions_.size());
    ScheduleCall call;
    call.kind = ScheduleCall::Kind::Kernel;
    std::vector<const UOp *> src{sink};
    for (size_t s : order) {
      src.push_back(regionNodes_[s]);
      call.args.push_back(regions_[s]);
    }
    const UOp *first = plan_->calls[calls_.front()].call;
    call.call = first->context().get(Op::CALL, dtypes::Void, src, first->arg());
    return {k, call};
  }

  /// Bytes of the buffers two or more of the kernels touch: what running
  /// them row by row keeps in cache between them.
  int64_t sharedBytes() const {
    int64_t bytes = 0;
    for (size_t s = 0; s < regions_.size(); ++s)
      if (users_[s] >= 2) bytes += regions_[s].bytes;
    return bytes;
  }

private:
  bool append(size_t c) {
    const ScheduleCall &call = plan_->calls[c];
    const ScheduleKernel &kernel = plan_->kernels[call.kernel];
    std::optional<RowNest> nest = rowNestOf(kernel);
    if (!nest || (!calls_.empty() && nest->count != rows_)) return false;
    // The call's buffers as fused slots.
    std::vector<int64_t> slotOfArg;
    bool shares = calls_.empty();
    for (size_t i = 0; i < call.args.size(); ++i) {
      const ScheduleArg &a = call.args[i];
      int64_t slot = -1;
      for (size_t j = 0; j < regions_.size() && slot < 0; ++j) {
        if (sameRegion(a, regions_[j])) slot = int64_t(j);
        else if (overlaps(a, regions_[j])) return false;
      }
      shares |= slot >= 0;
      if (slot < 0) {
        slot = int64_t(regions_.size());
        regions_.push_back(a);
        regionNodes_.push_back(call.call->src(i + 1));
      }
      slotOfArg.push_back(slot);
      if (size_t(slot) >= users_.size()) users_.resize(size_t(slot) + 1, 0);
      if (std::find(slotOfArg.begin(), slotOfArg.end() - 1, slot) == slotOfArg.end() - 1) ++users_[size_t(slot)];
    }
    if (!shares) return false;
    lastSlots_ = slotOfArg;
    // Its buffers renumbered, its row loop renamed to the fused one.
    std::unordered_map<const UOp *, const UOp *> map;
    if (calls_.empty()) rowsRange_ = nest->rows, rows_ = nest->count;
    else map[nest->rows] = rowsRange_;
    for (const UOp *u : toposort(kernel.sink)) {
      if (u == rowsRange_ && nest->rows != rowsRange_) return false; // the fused row loop is one of its inner loops
      if (!isGlobalBuffer(u)) continue;
      std::optional<int64_t> s = slotOf(u);
      if (!s || *s < 0 || size_t(*s) >= slotOfArg.size()) return false;
      map[u] = u->withArg(withField(u->arg(), "slot", tgc::Value::integer(slotOfArg[size_t(*s)])));
    }
    // Its other loops renamed apart from every other kernel's: the lowering
    // would take two nests' reductions over one RANGE for a register tile's
    // and sum them in one loop, the later one before the earlier stored what
    // it reads.
    for (const UOp *u : toposort(kernel.sink))
      if (u->is(Op::RANGE) && u != nest->rows) {
        const tgc::Value &arg = u->arg();
        if (!arg.isTuple() || arg.size() < 2) return false;
        std::vector<tgc::Value> items = arg.items();
        items[0] = tgc::Value::integer(nextAxis_++);
        map[u] = u->withArg(tgc::Value::tuple(items));
      }
    const UOp *end = substitute(nest->end, map);
    Context &ctx = end->context();
    std::vector<const UOp *> inner(end->src().begin() + 2, end->src().end());
    inner.insert(inner.begin(), end->src(0));
    nests_.push_back(inner.size() > 1 ? ctx.get(Op::END, dtypes::Void, inner) : end->src(0));
    int64_t work = kernelLoopWork(kernel.sink);
    if (work < 0) return false;
    rowWork_.push_back(work / rows_);
    calls_.push_back(c);
    name_ += (name_.empty() ? "" : "+") + kernel.name;
    sink_ = sinkOf(nests_);
    return true;
  }

  /// The fused kernel of these loop nests, one after another in the row loop.
  const UOp *sinkOf(const std::vector<const UOp *> &nests) const {
    Context &ctx = rowsRange_->context();
    const UOp *group = ctx.get(Op::GROUP, dtypes::Void, nests);
    const UOp *first = plan_->kernels[plan_->calls[calls_.front()].kernel].sink;
    return ctx.get(Op::SINK, dtypes::Void, {ctx.get(Op::END, dtypes::Void, {group, rowsRange_})},
                   withField(first->arg(), "name", tgc::Value::string(name_)));
  }

  bool threadsOverRows(const UOp *sink) const {
    KernelOptions threaded = opts_;
    threaded.threads = true;
    threaded.threadMinWork = 0;
    return parallelRange(sink, threaded) == rowsRange_;
  }

  bool legal() const {
    if (calls_.size() < 2) return true;
    std::vector<NestAccesses> nests;
    for (const UOp *n : nests_) nests.push_back(accessesOf(n));
    std::map<int64_t, size_t> storer; // fused slot -> the nest that stores it
    for (size_t i = 0; i < nests.size(); ++i) {
      if (nests[i].bareUse) return false;
      for (int64_t s : nests[i].stored)
        if (!storer.emplace(s, i).second) return false; // stored by two kernels
    }
    // A stored buffer: read only after the kernel that writes it, a row at a time.
    std::map<int64_t, int64_t> stride;
    for (size_t i = 0; i < nests.size(); ++i) {
      int64_t widest = 0;
      for (const UOp *idx : nests[i].indexes) {
        int64_t slot = slotOf(idx->src(0)).value_or(-1);
        std::optional<int64_t> e = rowStride(idx->src(1), rowsRange_);
        if (e) widest = std::max(widest, *e);
        auto w = storer.find(slot);
        if (w == storer.end()) continue;
        if (!e || stride.emplace(slot, *e).first->second != *e) return false;
        if (nests[i].loaded.count(slot) && i <= w->second) return false;
      }
      // A streaming row, not a matmul's.
      if (widest == 0 || rowWork_[i] > kMaxWorkPerRowElement * widest) return false;
    }
    return threadsOverRows(sink_);
  }

  const SchedulePlan *plan_;
  KernelOptions opts_;
  std::vector<size_t> calls_;
  std::vector<ScheduleArg> regions_;
  std::vector<const UOp *> regionNodes_;
  std::vector<int> users_;          ///< by fused slot: how many of the kernels pass it
  std::vector<int64_t> lastSlots_;  ///< the last kernel's arguments as fused slots
  std::vector<const UOp *> nests_;
  std::vector<int64_t> rowWork_;
  const UOp *rowsRange_ = nullptr;
  int64_t rows_ = 0;
  /// Axis numbers of the renamed loops: past any a tinygrad kernel uses.
  int64_t nextAxis_ = int64_t(1) << 20;
  std::string name_;
  const UOp *sink_ = nullptr;
};

/// The new plan, call by call; kernels in order of first use, each once.
class PlanBuilder {
public:
  explicit PlanBuilder(const SchedulePlan &plan) : plan_(plan) {
    out_.buffers = plan.buffers;
    out_.vars = plan.vars;
  }
  void keep(size_t c) {
    ScheduleCall call = plan_.calls[c];
    if (call.kind == ScheduleCall::Kind::Kernel) call.kernel = addKernel(out_, plan_.kernels[size_t(call.kernel)]);
    out_.calls.push_back(std::move(call));
  }
  /// Returns the values the fused kernel stores once (shareReducedValues).
  size_t fused(const FusedRows &f) {
    size_t shared = 0;
    auto [k, call] = f.build("f" + std::to_string(fusedCount_++), shared);
    call.kernel = addKernel(out_, k);
    out_.calls.push_back(std::move(call));
    return shared;
  }
  SchedulePlan take() { return std::move(out_); }

private:
  const SchedulePlan &plan_;
  SchedulePlan out_;
  size_t fusedCount_ = 0;
};

} // namespace

SchedulePlan fuseRowKernels(const SchedulePlan &plan, const KernelOptions &opts, std::vector<RowFusionGroup> *groups) {
  if (!opts.fuseRows) return plan;
  PlanBuilder out(plan);
  std::optional<FusedRows> run;
  auto flush = [&] {
    if (!run) return;
    if (run->size() < 2 || run->sharedBytes() < opts.fuseRowsMinBytes) {
      for (size_t c : run->calls()) out.keep(c);
    } else {
      size_t shared = out.fused(*run);
      if (groups) groups->push_back({run->calls().front(), run->size(), run->rows(), shared});
    }
    run.reset();
  };
  for (size_t c = 0; c < plan.calls.size(); ++c) {
    bool kernel = plan.calls[c].kind == ScheduleCall::Kind::Kernel;
    if (kernel && run && run->add(c)) continue;
    flush();
    if (!kernel) {
      out.keep(c);
      continue;
    }
    run.emplace(plan, opts);
    if (!run->add(c)) {
      run.reset();
      out.keep(c);
    }
  }
  flush();
  return out.take();
}

namespace {

// `tgc opt --passes=...,fuse-rows`: the LINEAR root rewritten; prints each fused run.
class RowFusionPass : public Pass {
public:
  Status run(Graph &g) override {
    for (const UOp *&root : g.roots) {
      if (!root->is(Op::LINEAR)) continue;
      Result<SchedulePlan> plan = planLinear(root);
      if (!plan) return plan.error();
      SchedulePlan fused = fuseRowKernels(*plan, KernelOptions{}, &groups_);
      std::vector<const UOp *> calls;
      for (const ScheduleCall &c : fused.calls) calls.push_back(c.call);
      root = root->withSrc(calls);
    }
    return Status::success();
  }
  std::string analysisText(const Graph &) const override {
    std::ostringstream os;
    for (const RowFusionGroup &f : groups_) {
      os << "// fuse-rows: calls " << f.firstCall << ".." << f.firstCall + f.calls - 1 << " as one kernel over "
         << f.rows << " rows";
      if (f.sharedValues) os << ", " << f.sharedValues << " reduced value(s) stored once";
      os << "\n";
    }
    return os.str();
  }

private:
  std::vector<RowFusionGroup> groups_;
};

} // namespace

void registerRowFusionPass() {
  PassRegistry::instance().add(
      {"fuse-rows", "run consecutive kernels that step over the same rows as one kernel, row by row (a LINEAR root)",
       [] { return std::make_unique<RowFusionPass>(); }});
}

} // namespace tgc::codegen
