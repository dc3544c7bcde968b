//===- PlanRewrite.cpp - the plan rewrites, in order ----------------------===//
#include "Codegen/Opt/PlanRewrite.h"
#include "Codegen/Opt/RowFusion.h"
#include "Codegen/Opt/SplitVectorMatrix.h"

namespace tgc::codegen {

SchedulePlan rewriteSchedulePlan(const SchedulePlan &plan, const KernelOptions &opts) {
  return splitVectorMatrix(fuseRowKernels(plan, opts), opts);
}

} // namespace tgc::codegen
