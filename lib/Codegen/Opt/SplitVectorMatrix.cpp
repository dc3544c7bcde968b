//===- SplitVectorMatrix.cpp - x @ W for one row as parts of W's rows, then their sum ---===//
//
// See SplitVectorMatrix.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/SplitVectorMatrix.h"
#include "Codegen/Opt/ParallelLoop.h"
#include "Codegen/Opt/PlanRewrite.h"

#include <algorithm>

namespace tgc::codegen {

namespace {

// Parts of W's rows: 4 per thread of the pool on 2 cores, which takes them
// one or two at a time (Runtime/Parallel.cpp), so a busy core delays at most
// a quarter of a thread's share.
constexpr int64_t kParts = 8;
constexpr int64_t kMinRowsPerPart = 64;
constexpr int64_t kRowsPerStep = 4; // W's rows a step reads: the row of partial sums is loaded and stored once for them
constexpr int64_t kMaxRowBytes = 32 << 10; // a part's row of partial sums stays in L1
constexpr int64_t kMinMatrixBytes = 1 << 20;

/// The vector-matrix kernel's pieces, or nullopt.
struct VectorMatrix {
  const UOp *out = nullptr;     ///< y's PARAM
  const UOp *j = nullptr, *k = nullptr;
  const UOp *summand = nullptr;
  int64_t n = 0, rows = 0;      ///< N, K
};

std::optional<VectorMatrix> matchVectorMatrix(const ScheduleKernel &kernel) {
  const UOp *sink = kernel.sink;
  if (!kernel.vars.empty() || !sink->is(Op::SINK) || sink->numSrc() != 1) return std::nullopt;
  const UOp *end = sink->src(0);
  if (!end->is(Op::END) || end->numSrc() != 2 || !end->src(0)->is(Op::STORE)) return std::nullopt;
  const UOp *st = end->src(0), *j = end->src(1);
  if (st->numSrc() != 2 || !st->src(0)->is(Op::INDEX) || st->src(0)->numSrc() != 2 || st->src(0)->src(1) != j)
    return std::nullopt;
  const UOp *red = st->src(1);
  if (!red->is(Op::REDUCE) || red->numSrc() != 2 || !red->dtype().isFloat()) return std::nullopt;
  const tgc::Value &arg = red->arg();
  if (!arg.isTuple() || arg.size() != 2 || !arg[0].isEnum("Ops") || arg[0].str() != "ADD") return std::nullopt;
  VectorMatrix m{st->src(0)->src(0), j, red->src(1), red->src(0), tripCount(j).value_or(0), tripCount(red->src(1)).value_or(0)};
  if (!isGlobalBuffer(m.out) || m.n < 1 || m.rows < kParts * kMinRowsPerPart || m.rows % (kParts * kRowsPerStep) != 0 ||
      m.n * int64_t(red->dtype().itemsize()) > kMaxRowBytes)
    return std::nullopt;
  // Every load that moves with j steps one element; one steps a row of N with k.
  bool matrix = false;
  for (const UOp *u : toposort(m.summand)) {
    if (!u->is(Op::INDEX) || u->numSrc() != 2 || !isGlobalBuffer(u->src(0))) continue;
    bool alongJ = dependsOn(u->src(1), j);
    if (alongJ && rangeStride(u->src(1), j) != 1) return std::nullopt;
    matrix |= alongJ && rangeStride(u->src(1), m.k).value_or(0) >= m.n &&
              m.n * m.rows * int64_t(u->dtype().itemsize()) >= kMinMatrixBytes;
  }
  if (!matrix) return std::nullopt;
  return m;
}

const UOp *withSlot(const UOp *param, int64_t slot, int64_t numel) {
  Context &ctx = param->context();
  return ctx.get(Op::PARAM, param->dtype(), {ctx.constInt(numel)},
                 withField(param->arg(), "slot", tgc::Value::integer(slot)));
}

const UOp *newRange(Context &ctx, int64_t n, int64_t axis, const char *kind) {
  return ctx.get(Op::RANGE, dtypes::WeakInt, {ctx.constInt(n)},
                 tgc::Value::tuple({tgc::Value::integer(axis), tgc::Value::enumMember("AxisType", kind)}));
}

const UOp *index(const UOp *buf, const UOp *i) { return buf->context().get(Op::INDEX, buf->dtype(), {buf, i}); }
const UOp *alu(Op op, const UOp *a, const UOp *b) { return a->context().get(op, a->dtype(), {a, b}); }

/// The two kernels: the parts' sums into `partial` (in y's argument slot),
/// then y = the sum of the parts (y slot 0, partial slot 1).
std::pair<const UOp *, const UOp *> splitKernels(const ScheduleKernel &kernel, const VectorMatrix &m) {
  Context &ctx = kernel.sink->context();
  DType dt = m.summand->dtype();
  int64_t axis = maxAxisId(kernel.sink);
  int64_t perPart = m.rows / kParts;
  const UOp *p = newRange(ctx, kParts, axis + 1, "LOOP"), *kk = newRange(ctx, perPart / kRowsPerStep, axis + 2, "LOOP");
  const UOp *nConst = ctx.constInt(m.n);
  const UOp *partial = withSlot(m.out, slotOf(m.out).value_or(0), kParts * m.n);
  const UOp *at = index(partial, alu(Op::ADD, alu(Op::MUL, p, nConst), m.j));
  // kRowsPerStep rows of W a step: their terms summed, then added to the row of partial sums.
  const UOp *summand = nullptr;
  for (int64_t r = 0; r < kRowsPerStep; ++r) {
    const UOp *k = alu(Op::ADD, alu(Op::MUL, p, ctx.constInt(perPart)),
                       alu(Op::ADD, alu(Op::MUL, kk, ctx.constInt(kRowsPerStep)), ctx.constInt(r)));
    const UOp *term = substitute(m.summand, {{m.k, k}});
    summand = summand ? alu(Op::ADD, summand, term) : term;
  }
  const UOp *zero = ctx.get(Op::STORE, dtypes::Void, {at, ctx.constFloat(0.0, dt)});
  const UOp *add = ctx.get(Op::STORE, dtypes::Void, {at, alu(Op::ADD, at, summand)});
  const UOp *group = ctx.get(Op::GROUP, dtypes::Void,
                             {ctx.get(Op::END, dtypes::Void, {zero, m.j}), ctx.get(Op::END, dtypes::Void, {add, kk, m.j})});
  const UOp *parts = ctx.get(Op::SINK, dtypes::Void, {ctx.get(Op::END, dtypes::Void, {group, p})}, kernel.sink->arg());

  const UOp *y = withSlot(m.out, 0, m.n), *partialIn = withSlot(m.out, 1, kParts * m.n);
  const UOp *q = newRange(ctx, kParts, axis + 3, "REDUCE");
  const UOp *sum = ctx.get(Op::REDUCE, dt, {index(partialIn, alu(Op::ADD, alu(Op::MUL, q, nConst), m.j)), q},
                           tgc::Value::tuple({tgc::Value::enumMember("Ops", "ADD"), tgc::Value::integer(0)}));
  const UOp *store = ctx.get(Op::STORE, dtypes::Void, {index(y, m.j), sum});
  const tgc::Value *name = kernel.sink->arg().field("name");
  std::string sumName = (name && name->kind() == tgc::Value::Kind::Str ? name->str() : "k") + "_parts";
  const UOp *total = ctx.get(Op::SINK, dtypes::Void, {ctx.get(Op::END, dtypes::Void, {store, m.j})},
                             withField(kernel.sink->arg(), "name", tgc::Value::string(sumName)));
  return {parts, total};
}

} // namespace

SchedulePlan splitVectorMatrix(const SchedulePlan &plan, const KernelOptions &opts, std::vector<size_t> *split) {
  if (!opts.splitVectorMatrix || opts.strictFP) return plan;
  SchedulePlan out = plan;
  out.calls.clear();
  out.kernels.clear(); // rebuilt call by call (addKernel): the split kernels' go
  int64_t nextSlot = 0;
  for (const ScheduleBuffer &b : plan.buffers) nextSlot = std::max(nextSlot, b.slot + 1);
  for (size_t c = 0; c < plan.calls.size(); ++c) {
    const ScheduleCall &call = plan.calls[c];
    std::optional<VectorMatrix> m;
    if (call.kind == ScheduleCall::Kind::Kernel) m = matchVectorMatrix(plan.kernels[size_t(call.kernel)]);
    std::optional<int64_t> ySlot = m ? slotOf(m->out) : std::nullopt;
    auto keep = [&] {
      ScheduleCall kept = call;
      if (kept.kind == ScheduleCall::Kind::Kernel) kept.kernel = addKernel(out, plan.kernels[size_t(call.kernel)]);
      out.calls.push_back(std::move(kept));
    };
    if (!m || !ySlot || *ySlot < 0 || size_t(*ySlot) >= call.args.size()) {
      keep();
      continue;
    }
    const ScheduleKernel &kernel = plan.kernels[size_t(call.kernel)];
    auto [parts, total] = splitKernels(kernel, *m);
    // The partial sums: a buffer of the plan (the memory plan places it).
    Context &ctx = parts->context();
    DType dt = m->summand->dtype();
    const UOp *yBuffer = plan.buffers[size_t(call.args[size_t(*ySlot)].buffer)].node;
    tgc::Value bufArg = withField(withField(yBuffer->arg(), "slot", tgc::Value::integer(nextSlot++)), "dtype", tgc::Value::dtype(dt));
    const UOp *partialBuffer = ctx.get(Op::BUFFER, dt, {ctx.constInt(kParts * m->n)}, bufArg);
    Result<int> pb = out.addBuffer(partialBuffer);
    if (!pb) {
      keep();
      continue;
    }
    ScheduleArg partialArg{*pb, 0, int64_t(out.buffers[size_t(*pb)].bytes())};
    auto addCall = [&](const UOp *sink, std::vector<ScheduleArg> args, std::vector<const UOp *> argNodes, const std::string &suffix) {
      ScheduleKernel k = kernel;
      k.sink = sink;
      k.name = kernel.name + suffix;
      k.symbol = kernelSymbol("s" + std::to_string(c) + suffix, kernel.name);
      k.numArgs = unsigned(args.size());
      k.noalias = true;
      ScheduleCall sc = call;
      sc.kernel = addKernel(out, k);
      sc.args = std::move(args);
      argNodes.insert(argNodes.begin(), sink);
      sc.call = ctx.get(Op::CALL, dtypes::Void, argNodes, call.call->arg());
      out.calls.push_back(std::move(sc));
    };
    std::vector<ScheduleArg> partsArgs = call.args;
    std::vector<const UOp *> partsNodes(call.call->src().begin() + 1, call.call->src().end());
    partsArgs[size_t(*ySlot)] = partialArg;
    partsNodes[size_t(*ySlot)] = partialBuffer;
    addCall(parts, partsArgs, partsNodes, "");
    addCall(total, {call.args[size_t(*ySlot)], partialArg}, {call.call->src(size_t(*ySlot) + 1), partialBuffer}, "_parts");
    if (split) split->push_back(c);
  }
  return out;
}

} // namespace tgc::codegen
