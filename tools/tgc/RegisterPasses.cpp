//===- RegisterPasses.cpp - every library's passes, in one call ------------===//
#include "RegisterPasses.h"

#include "IR/Pass.h"
#include "Schedule/Passes.h"
#if TGC_ENABLE_CODEGEN
#include "Codegen/Opt/KernelOptPasses.h"
#include "Codegen/Opt/RowFusion.h"
#endif

namespace tgc::driver {

void registerAllPasses() {
  registerIRPasses();
  registerSchedulePasses();
#if TGC_ENABLE_CODEGEN
  registerCodegenPasses();
  codegen::registerRowFusionPass();
#endif
}

} // namespace tgc::driver
