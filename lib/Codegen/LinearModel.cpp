//===- LinearModel.cpp - a model straight from a memory-planned LINEAR ----===//
//
// See LinearModel.h. The read/write sets per kernel argument are what
// tinygrad's call_access computes for a CALL (pipeline-schedule.md §5.1),
// here from the kernel body: a PARAM under a STORE's target INDEX is
// written, one anywhere else is read.
//
//===----------------------------------------------------------------------===//
#include "Codegen/LinearModel.h"

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

Result<Model> modelFromLinear(const UOp *linear, const std::string &name) {
  auto plan = planLinear(linear);
  if (!plan) return plan.error();
  Model m;
  m.name = name;
  m.linear = linear;
  m.plan = std::move(*plan);
  size_t n = m.plan.buffers.size();
  std::vector<char> viewed(n, 0);
  std::vector<int> firstAccess(n, 0); // 0 none, 1 read, 2 write
  std::vector<char> written(n, 0);
  std::vector<std::vector<unsigned>> kernelAccess;
  for (const ScheduleKernel &k : m.plan.kernels) kernelAccess.push_back(kernelParamAccess(k.sink, k.numArgs));
  std::vector<int> writeOrder;
  for (const ScheduleCall &c : m.plan.calls) {
    for (size_t i = 0; i < c.args.size(); ++i) {
      int b = c.args[i].buffer;
      if (!c.call->src(i + 1)->is(Op::BUFFER)) viewed[b] = 1;
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
