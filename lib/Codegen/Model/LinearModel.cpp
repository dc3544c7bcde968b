//===- LinearModel.cpp - a model straight from a memory-planned LINEAR ----===//
//
// See LinearModel.h. The read/write sets per kernel argument are what
// tinygrad's call_access computes for a CALL (pipeline-schedule.md §5.1),
// here from the kernel body: a PARAM under a STORE's target INDEX is
// written, one anywhere else is read.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Model/LinearModel.h"
#include "Codegen/Model/MemoryPlan.h"

#include <algorithm>

namespace tgc {

std::vector<unsigned> kernelParamAccess(const UOp *sink, unsigned numArgs) {
  std::vector<unsigned> access(numArgs, 0);
  // The PARAM an address node refers to: PARAM itself or INDEX(PARAM, ...).
  auto param = [](const UOp *u) -> const UOp * {
    if (u->is(Op::INDEX) && u->numSrc() >= 1) u = u->src(0);
    return u->is(Op::PARAM) ? u : nullptr;
  };
  for (const UOp *u : toposort(sink)) {
    for (size_t i = 0; i < u->numSrc(); ++i) {
      const UOp *s = u->src(i);
      const UOp *p = param(s);
      if (!p || (u->is(Op::INDEX) && i == 0 && s->is(Op::PARAM))) continue; // the INDEX is the address
      const tgc::Value *slot = p->arg().field("slot");
      if (!slot || !slot->isInt() || slot->getInt() < 0 || slot->getInt() >= int64_t(numArgs)) continue;
      access[slot->getInt()] |= (u->is(Op::STORE) && i == 0) ? 2u : 1u;
    }
  }
  return access;
}

namespace {

/// Replaces every buffer that CALLs pass only as views (a tinygrad arena) by
/// one buffer per region of it: overlapping views are one region, so views
/// of one tensor stay together. The regions are intermediates again, for
/// planMemory to place.
std::vector<char> splitArenas(SchedulePlan &plan) {
  size_t n = plan.buffers.size();
  std::vector<char> whole(n, 0);
  for (const ScheduleCall &c : plan.calls)
    for (size_t i = 0; i < c.args.size(); ++i)
      if (c.call->src(i + 1)->is(Op::BUFFER)) whole[c.args[i].buffer] = 1;
  // Per arena: its views' byte ranges, merged where they overlap.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> regions(n);
  for (const ScheduleCall &c : plan.calls)
    for (const ScheduleArg &a : c.args)
      if (!whole[a.buffer]) regions[a.buffer].push_back({a.byteOffset, a.byteOffset + a.bytes});
  std::vector<std::vector<int>> regionBuffer(n);
  std::vector<ScheduleBuffer> buffers;
  std::vector<int> remap(n, -1);
  std::vector<char> isRegion;
  for (size_t b = 0; b < n; ++b) {
    if (whole[b] || regions[b].empty()) {
      remap[b] = int(buffers.size());
      buffers.push_back(plan.buffers[b]);
      isRegion.push_back(0);
      continue;
    }
    auto &r = regions[b];
    std::sort(r.begin(), r.end());
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (auto iv : r)
      if (!merged.empty() && iv.first < merged.back().second) merged.back().second = std::max(merged.back().second, iv.second);
      else merged.push_back(iv);
    r = merged;
    for (auto [lo, hi] : r) {
      ScheduleBuffer sb = plan.buffers[b];
      sb.dtype = dtypes::fromName("int8");
      sb.numel = hi - lo;
      regionBuffer[b].push_back(int(buffers.size()));
      buffers.push_back(sb);
      isRegion.push_back(1);
    }
  }
  for (ScheduleCall &c : plan.calls)
    for (ScheduleArg &a : c.args) {
      int b = a.buffer;
      if (remap[b] >= 0) {
        a.buffer = remap[b];
        continue;
      }
      const auto &r = regions[b];
      size_t k = size_t(std::upper_bound(r.begin(), r.end(), std::pair(a.byteOffset, INT64_MAX)) - r.begin()) - 1;
      a.buffer = regionBuffer[b][k];
      a.byteOffset -= r[k].first;
    }
  plan.buffers = std::move(buffers);
  return isRegion;
}

} // namespace

Result<Model> modelFromLinear(const UOp *linear, const std::string &name, int64_t *tinygradArena,
                              const std::map<std::string, int64_t> &bound) {
  auto plan = planLinear(linear);
  if (!plan) return plan.error();
  for (const auto &[n, v] : bound)
    if (Status s = plan->checkVar(n, v); !s) return s.error();
  if (tinygradArena) *tinygradArena = tinygradArenaBytes(*plan);
  std::vector<char> viewed = splitArenas(*plan);
  Model m;
  m.name = name;
  m.linear = linear;
  for (const ScheduleVar &v : plan->vars) {
    auto it = bound.find(v.name);
    m.vars.push_back(ModelVar{v.name, "int64_t", v.min, v.max, it == bound.end() ? std::nullopt : std::optional(it->second)});
  }
  m.plan = std::move(*plan);
  size_t n = m.plan.buffers.size();
  std::vector<int> firstAccess(n, 0); // 0 none, 1 read, 2 write
  std::vector<char> written(n, 0);
  std::vector<std::vector<unsigned>> kernelAccess;
  for (const ScheduleKernel &k : m.plan.kernels) kernelAccess.push_back(kernelParamAccess(k.sink, k.numArgs));
  std::vector<int> writeOrder;
  for (const ScheduleCall &c : m.plan.calls) {
    for (size_t i = 0; i < c.args.size(); ++i) {
      int b = c.args[i].buffer;
      unsigned acc = c.kind == ScheduleCall::Kind::Copy ? (i == 0 ? 2u : 1u) : kernelAccess[c.kernel][i];
      if (!firstAccess[b] && acc) firstAccess[b] = (acc & 1) ? 1 : 2;
      if ((acc & 2) && !written[b]) {
        written[b] = 1;
        writeOrder.push_back(b);
      }
    }
  }
  std::vector<ModelTensor> outputs;
  for (size_t b = 0; b < n; ++b) {
    const ScheduleBuffer &sb = m.plan.buffers[b];
    if (viewed[b] || firstAccess[b] != 1) continue;
    ModelTensor t;
    t.role = written[b] ? ModelTensor::Role::InOut : ModelTensor::Role::Input;
    t.name = "s" + std::to_string(sb.slot >= 0 ? sb.slot : int64_t(b));
    t.dtype = sb.dtype;
    t.shape = {sb.numel};
    t.buffer = int(b);
    t.bytes = int64_t(sb.bytes());
    m.tensors.push_back(std::move(t));
  }
  for (int b : writeOrder) {
    if (viewed[b] || firstAccess[b] != 2) continue;
    const ScheduleBuffer &sb = m.plan.buffers[b];
    ModelTensor t;
    t.role = ModelTensor::Role::Output;
    t.name = "out" + std::to_string(outputs.size());
    t.dtype = sb.dtype;
    t.shape = {sb.numel};
    t.buffer = b;
    t.bytes = int64_t(sb.bytes());
    outputs.push_back(std::move(t));
  }
  for (ModelTensor &t : outputs) m.tensors.push_back(std::move(t));
  return m;
}

} // namespace tgc
