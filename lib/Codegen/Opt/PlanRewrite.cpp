//===- PlanRewrite.cpp - the plan rewrites, in order ----------------------===//
#include "Codegen/Opt/PlanRewrite.h"
#include "Codegen/Opt/RowFusion.h"
#include "Codegen/Opt/SplitVectorMatrix.h"

namespace tgc::codegen {

int addKernel(SchedulePlan &plan, const ScheduleKernel &kernel) {
  for (size_t i = 0; i < plan.kernels.size(); ++i)
    if (plan.kernels[i].sink == kernel.sink && plan.kernels[i].numArgs == kernel.numArgs) return int(i);
  plan.kernels.push_back(kernel);
  return int(plan.kernels.size() - 1);
}

SchedulePlan rewriteSchedulePlan(const SchedulePlan &plan, const KernelOptions &opts) {
  return splitVectorMatrix(fuseRowKernels(plan, opts), opts);
}

} // namespace tgc::codegen
