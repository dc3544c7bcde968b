//===- PlanRewrite.h - small helpers of the plan rewrites (RowFusion, SplitVectorMatrix) -*- C++ -*-===//
//
// Rewrites of a SchedulePlan's kernels renumber their PARAMs and make new
// records (a kernel's name, a buffer's slot): a record Value with one field
// set, and a PARAM's slot; and the rewrites, in the order codegen runs them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Lower/KernelToMLIR.h"
#include "Codegen/Lower/LinearPlan.h"
#include "Codegen/Opt/KernelOptions.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "IR/UOp.h"

#include <optional>
#include <string_view>

namespace tgc::codegen {

/// `obj` (a record Value such as ParamArg or KernelInfo) with field `name` set to `v`.
inline tgc::Value withField(const tgc::Value &obj, std::string_view name, tgc::Value v) {
  std::vector<tgc::Value> items = obj.items();
  const std::vector<std::string> &names = obj.fieldNames();
  for (size_t i = 0; i < names.size() && i < items.size(); ++i)
    if (names[i] == name) items[i] = v;
  return tgc::Value::object(obj.cls(), names, items);
}

/// A PARAM's (or BUFFER's) ParamArg slot.
inline std::optional<int64_t> slotOf(const UOp *param) {
  const tgc::Value *s = param->arg().field("slot");
  return s && s->isInt() ? std::optional<int64_t>(s->getInt()) : std::nullopt;
}

/// A kernel's buffer argument: a PARAM that is neither a variable nor kernel-local.
inline bool isGlobalBuffer(const UOp *u) { return u->is(Op::PARAM) && !isVariable(u) && !isLocalBuffer(u); }

/// The index of `kernel` in plan.kernels, appended unless a kernel of the
/// same body and argument count is there (planLinear's rule: identical
/// bodies compile once). A rewrite builds its plan's kernels so, call by
/// call, and the kernels no call uses any more are gone.
int addKernel(SchedulePlan &plan, const ScheduleKernel &kernel);

/// The plan rewrites before the memory plan, in order: fuse-rows
/// (RowFusion.h), then split-vector-matrix (SplitVectorMatrix.h).
SchedulePlan rewriteSchedulePlan(const SchedulePlan &plan, const KernelOptions &opts);

} // namespace tgc::codegen
