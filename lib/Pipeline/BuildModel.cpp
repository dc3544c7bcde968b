//===- BuildModel.cpp - a tensor graph scheduled into a runnable model -----===//
//
// buildModel: what tinygrad does when a program reads its tensors with
// numpy() — realize them (Tensor.linear_with_vars: transform_to_call, the
// kernel graph, create_schedule) into storage the caller can read densely —
// as one LINEAR plus the names of the buffers that go in and come out.
//
// Outputs: realizeOutputs (Schedule/RealizeOutputs.h) keeps a SINK source
// that callify stores whole into fresh storage, found afterwards through the
// buffer map, binds one that is a contiguous view of a BUFFER of the graph to
// that buffer at its offset (no kernel: tinygrad's numpy() reads it as a view,
// the entry copies it out), and clones every other one into a fresh BUFFER
// first (tinygrad's numpy() copy). If a kept source turns out not to be stored
// densely after all (e.g. folded away), it is cloned on a second attempt.
//
// Random state: the uint32[2] inputs under a THREEFRY are tinygrad's key and
// counter; the counter is the one the model assigns. When tinygrad assigns to
// a COPY of an input (the counter before its first realize), the copy's
// buffer holds the new value: a COPY call appended to the schedule writes it
// back into the input, so a caller carries the state from run to run.
//
//===----------------------------------------------------------------------===//
#include "Pipeline/Pipeline.h"

#include "IR/BufferData.h"
#include "IR/Pass.h"
#include "Schedule/Access.h"
#include "Schedule/Callify.h"
#include "Schedule/Passes.h"
#include "Schedule/RealizeOutputs.h"
#include "Schedule/Sugar.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>

namespace tgc {
using namespace rangeify;

namespace {

const UOp *stripReshapes(const UOp *u) {
  while (u->is(Op::RESHAPE)) u = u->src(0);
  return u;
}

std::optional<int64_t> slotOf(const UOp *buf) {
  const Value *slot = buf->arg().field("slot");
  if (slot && slot->isInt()) return slot->getInt();
  return std::nullopt;
}

int planIndex(const SchedulePlan &plan, const UOp *buf) {
  int i = plan.indexOf(buf);
  if (i < 0)
    if (std::optional<int64_t> s = slotOf(buf)) i = plan.indexOfSlot(*s);
  return i;
}

/// Graph node id of a BUFFER: its JSON node id, or for the text form its
/// definition index (the %N of a text printed from graph.json).
int64_t nodeIdOf(const Context &ctx, const UOp *u, uint32_t firstTextId) {
  const Location *l = ctx.location(u);
  if (l && l->nodeId >= 0) return l->nodeId;
  return int64_t(u->id()) - int64_t(firstTextId);
}

bool isGraphVariable(const UOp *u) { return u->is(Op::BUFFER) && u->addrspace() == AddrSpace::ALU; }

/// The graph's variables by name: its 0-d BUFFERs in the ALU address space,
/// with their range and the value AFTER(var, STORE(var, CONST v)) binds.
std::map<std::string, ModelVar> graphVariables(const std::vector<const UOp *> &nodes) {
  std::map<std::string, ModelVar> vars;
  for (const UOp *u : nodes) {
    if (!isGraphVariable(u)) continue;
    const Value *name = u->arg().field("name");
    if (!name || name->kind() != Value::Kind::Str) continue;
    ModelVar &v = vars[name->str()];
    v.name = name->str();
    v.min = u->vminInt();
    v.max = u->vmaxInt();
  }
  for (const UOp *u : nodes) {
    if (!u->is(Op::AFTER) || u->numSrc() != 2 || !isGraphVariable(u->src(0))) continue;
    const UOp *st = u->src(1);
    if (!st->is(Op::STORE) || st->numSrc() != 2 || st->src(0) != u->src(0) || !st->src(1)->is(Op::CONST) ||
        !st->src(1)->arg().isInt())
      continue;
    const Value *name = u->src(0)->arg().field("name");
    if (name && name->kind() == Value::Kind::Str) vars[name->str()].bound = st->src(1)->arg().getInt();
  }
  return vars;
}

/// Model::vars for the plan's variables, with the graph's bound values; the
/// graph's variables no kernel reads are appended to the plan (accepted and
/// ignored, like an unread input).
std::vector<ModelVar> bindModelVars(SchedulePlan &plan, std::map<std::string, ModelVar> graphVars) {
  for (const auto &[name, v] : graphVars)
    if (plan.indexOfVar(name) < 0) plan.vars.push_back(ScheduleVar{name, dtypes::WeakInt, v.min, v.max});
  std::vector<ModelVar> out;
  for (const ScheduleVar &sv : plan.vars) {
    ModelVar v{sv.name, "int64_t", sv.min, sv.max, std::nullopt};
    if (auto it = graphVars.find(sv.name); it != graphVars.end()) v.bound = it->second.bound;
    out.push_back(v);
  }
  return out;
}

/// The calls of `plan` that write each buffer, in schedule order.
std::vector<std::vector<size_t>> writersOf(const SchedulePlan &plan) {
  std::vector<std::vector<size_t>> writers(plan.buffers.size());
  for (size_t ci = 0; ci < plan.calls.size(); ++ci) {
    const ScheduleCall &c = plan.calls[ci];
    if (c.kind == ScheduleCall::Kind::Copy) {
      if (!c.args.empty()) writers[size_t(c.args[0].buffer)].push_back(ci);
      continue;
    }
    for (int64_t slot : sched::computeSinkAccess(plan.kernels[size_t(c.kernel)].sink).outs)
      if (slot >= 0 && size_t(slot) < c.args.size()) writers[size_t(c.args[size_t(slot)].buffer)].push_back(ci);
  }
  return writers;
}

bool wholeBuffer(const SchedulePlan &plan, const ScheduleArg &a) {
  return a.byteOffset == 0 && a.bytes == int64_t(plan.buffers[size_t(a.buffer)].bytes());
}

/// `linear` with a COPY back into every input that a COPY call copies whole
/// into a buffer some later call writes again (an assign to the copy): the
/// assigned value, copied back at the end, is the input's new value.
const UOp *copyAssignedCopiesBack(const UOp *linear, const SchedulePlan &plan) {
  std::vector<std::vector<size_t>> writers = writersOf(plan);
  std::vector<const UOp *> calls(linear->src().begin(), linear->src().end());
  for (size_t ci = 0; ci < plan.calls.size(); ++ci) {
    const ScheduleCall &c = plan.calls[ci];
    if (c.kind != ScheduleCall::Kind::Copy || c.args.size() != 2 || !wholeBuffer(plan, c.args[0]) ||
        !wholeBuffer(plan, c.args[1]))
      continue;
    const std::vector<size_t> &src = writers[size_t(c.args[1].buffer)], &dst = writers[size_t(c.args[0].buffer)];
    bool input = src.empty() || src.front() > ci, assigned = !dst.empty() && dst.back() > ci;
    if (!input || !assigned) continue;
    const UOp *to = c.call->src(1), *from = c.call->src(2);
    const UOp *body = mk(Op::COPY, {param(to->context(), 1, to->dtype(), shapeOf(to), to->device())}, from->device());
    calls.push_back(call(body, {from, to}));
  }
  return calls.size() == linear->numSrc() ? linear : mk(Op::LINEAR, calls);
}

struct Attempt {
  const UOp *linear = nullptr;
  SchedulePlan plan;
  std::vector<int> outputBuffer; ///< per SINK source: plan buffer, -1 if not bound
  std::vector<int64_t> outputOffset; ///< per SINK source: where it starts in that buffer (a view of an input)
  std::vector<std::string> why;  ///< per unbound source: what its storage is
};

/// Schedules `sinkIn` with its sources realized densely (realizeOutputs, which
/// clones those in `force` too) and binds each source to its plan buffer.
Result<Attempt> schedule(const Graph &g, const UOp *sinkIn, const std::set<size_t> &force, const ModelOptions &opts) {
  Attempt a;
  Result<RealizedOutputs> realized = realizeOutputs(sinkIn, opts.defaultDevice, firstFreeBufferSlot(g.roots), force);
  if (!realized) return realized.error();
  const std::vector<const UOp *> &cloned = realized->clones;
  Graph work;
  work.roots = {realized->sink};
  work.rootNames = {"sink"};
  work.buffers = g.buffers;
  work.path = g.path;
  work.baseDir = g.baseDir;
  if (!PassRegistry::instance().lookup("schedule")) registerSchedulePasses();
  Result<std::vector<const PassInfo *>> pipeline = parsePipeline("schedule");
  if (!pipeline) return pipeline.error();
  if (Status st = runPipeline(work, *pipeline, {}); !st.ok()) return st.error();
  if (work.roots.size() != 1 || !work.roots[0]->is(Op::LINEAR))
    return Diagnostic({g.path, 0, 0, -1}, "the schedule pipeline did not produce one LINEAR");
  a.linear = work.roots[0];
  Result<SchedulePlan> plan = planLinear(a.linear);
  if (!plan) return plan.error();
  if (const UOp *withCopies = copyAssignedCopiesBack(a.linear, *plan); withCopies != a.linear) {
    a.linear = withCopies;
    plan = planLinear(a.linear);
    if (!plan) return plan.error();
  }
  a.plan = std::move(*plan);

  std::map<const UOp *, const UOp *> storage(work.bufferMap.begin(), work.bufferMap.end());
  a.outputBuffer.assign(cloned.size(), -1);
  a.outputOffset.assign(cloned.size(), 0);
  a.why.assign(cloned.size(), "");
  for (size_t i = 0; i < cloned.size(); ++i) {
    const UOp *s = sinkIn->src(i), *buf = cloned[i];
    if (auto [viewed, offset] = realized->views[i]; viewed) {
      // a view of a graph BUFFER (x.bitcast(...), x[1:3]): bound to that buffer, copied out after the calls
      Result<int> b = a.plan.addBuffer(viewed);
      if (!b) return b.error();
      a.outputBuffer[i] = *b;
      a.outputOffset[i] = offset;
      continue;
    }
    if (!buf) {
      auto it = storage.find(stripReshapes(s));
      const UOp *view = it == storage.end() ? nullptr : stripReshapes(it->second);
      if (!view) {
        a.why[i] = "it is not realized";
        continue;
      }
      if (!view->is(Op::BUFFER) || !view->shape() || view->shape()->size() != 1 ||
          !(*view->shape())[0].isStatic() || (*view->shape())[0].value != prod(shapeOf(s))) {
        a.why[i] = "it is stored as a view (" + view->str() + ")";
        continue;
      }
      buf = view;
    }
    a.outputBuffer[i] = planIndex(a.plan, buf);
    if (a.outputBuffer[i] < 0) a.why[i] = "no kernel writes its buffer";
  }
  return a;
}

/// The BUFFERs some THREEFRY's operands are computed from.
std::set<const UOp *> randomSources(const std::vector<const UOp *> &roots) {
  std::vector<const UOp *> draws;
  for (const UOp *u : toposort(roots))
    if (u->is(Op::THREEFRY)) draws.push_back(u);
  std::set<const UOp *> out;
  if (draws.empty()) return out;
  for (const UOp *u : toposort(draws))
    if (u->is(Op::BUFFER)) out.insert(u);
  return out;
}

Result<Model> build(Context &ctx, const Graph &g, const ModelOptions &opts) {
  Location where{g.path, 0, 0, -1};
  if (g.roots.size() != 1)
    return Diagnostic(where, "a model is one tensor graph: expected one root, found " + std::to_string(g.roots.size()) +
                                 " (pick one with --root)");
  const UOp *sink = g.roots[0];
  if (!sink->is(Op::SINK) || sink->arg().isObj("KernelInfo"))
    return Diagnostic::at(sink, "a model is a tensor graph: its root must be a SINK of the tensors to realize, not " +
                                    std::string(opName(sink->op())));

  Result<Attempt> attempt = schedule(g, sink, {}, opts);
  if (!attempt) return attempt.error();
  // A kept source the schedule did not store densely after all is cloned on a second attempt.
  std::set<size_t> retry;
  for (size_t i = 0; i < sink->numSrc(); ++i)
    if (attempt->outputBuffer[i] < 0 && prod(shapeOf(sink->src(i))) != 0) retry.insert(i);
  if (!retry.empty()) {
    attempt = schedule(g, sink, retry, opts);
    if (!attempt) return attempt.error();
  }

  Model m;
  m.name = cIdentifier(opts.name.empty() ? std::filesystem::path(g.path).stem().string() : opts.name);
  m.linear = attempt->linear;
  m.plan = std::move(attempt->plan);

  // Which plan buffers some CALL writes.
  std::vector<std::vector<size_t>> writers = writersOf(m.plan);
  std::set<const UOp *> drawnFrom = randomSources(g.roots);

  // Inputs and in-outs: every BUFFER of the graph, by node id. The interface
  // does not depend on what the optimizer removed: a BUFFER the schedule no
  // longer reads (`x * 0`, an empty slice of x) is still an input, appended to
  // the plan as a buffer no CALL uses, so it is accepted and ignored.
  std::vector<const UOp *> nodes = toposort(g.roots);
  uint32_t firstTextId = UINT32_MAX;
  for (const UOp *u : nodes)
    if (const Location *l = ctx.location(u); l && l->nodeId < 0 && l->line) firstTextId = std::min(firstTextId, u->id());
  std::map<int64_t, ModelTensor> bound;
  for (const UOp *u : nodes) {
    if (!u->is(Op::BUFFER) || isGraphVariable(u)) continue; // a variable is an argument, not a tensor
    int i = planIndex(m.plan, u);
    bool unread = i < 0;
    if (unread) {
      Result<int> added = m.plan.addBuffer(u);
      if (!added) return added.error();
      i = *added;
    }
    ModelTensor t;
    int64_t k = nodeIdOf(ctx, u, firstTextId == UINT32_MAX ? 0 : firstTextId);
    bool written = size_t(i) < writers.size() && !writers[size_t(i)].empty();
    t.role = written ? ModelTensor::Role::InOut : ModelTensor::Role::Input;
    t.name = "n" + std::to_string(k);
    t.dtype = m.plan.buffers[size_t(i)].dtype;
    t.shape = {m.plan.buffers[size_t(i)].numel};
    t.buffer = i;
    t.bytes = int64_t(m.plan.buffers[size_t(i)].bytes());
    if (drawnFrom.count(u) && t.dtype == dtypes::UInt32 && t.shape[0] == 2)
      t.random = written ? ModelTensor::Random::Counter : ModelTensor::Random::Key;
    // A BUFFER the document does not list as allocated is fresh storage (tinygrad's Tensor.empty): an
    // assign target starts zeroed, but something must provide what the model only reads.
    t.needsData = t.role == ModelTensor::Role::Input;
    for (const BufferFile &bf : g.buffers) {
      if (bf.node != u) continue;
      if (!bf.file.empty()) t.dataFile = bufferFilePath(g, bf);
      t.needsData = bf.allocated || !bf.file.empty();
    }
    if (unread) t.needsData = false; // nothing reads it: any data (or none) will do
    bound.emplace(k, std::move(t));
  }
  for (auto &[k, t] : bound) m.tensors.push_back(std::move(t));
  m.vars = bindModelVars(m.plan, graphVariables(nodes));

  // Outputs, in SINK order.
  for (size_t i = 0; i < sink->numSrc(); ++i) {
    const UOp *s = sink->src(i);
    ModelTensor t;
    t.role = ModelTensor::Role::Output;
    t.name = "out" + std::to_string(i);
    t.dtype = strongDType(s->dtype());
    if (!s->staticShape())
      return Diagnostic::at(s, "output " + std::to_string(i) + " has a symbolic shape " + rangeify::shapeString(shapeOf(s)) +
                                   "; realize it into a buffer of a fixed shape (an assign into a slice of one)");
    t.shape = *s->staticShape();
    t.bytes = std::accumulate(t.shape.begin(), t.shape.end(), int64_t(1), std::multiplies<>()) * t.dtype.itemsize();
    t.buffer = attempt->outputBuffer[i];
    t.byteOffset = attempt->outputOffset[i];
    if (t.buffer < 0 && t.bytes != 0)
      return Diagnostic::at(s, "output " + std::to_string(i) + " cannot be bound to a buffer: " + attempt->why[i]);
    m.tensors.push_back(std::move(t));
  }
  return m;
}

} // namespace

Result<Model> buildModel(Context &ctx, const Graph &g, const ModelOptions &opts) {
  try {
    return build(ctx, g, opts);
  } catch (const ScheduleError &e) { // a symbolic shape, storage for a weak dtype
    return e.diag;
  }
}

} // namespace tgc
