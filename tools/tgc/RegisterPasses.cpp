//===- RegisterPasses.cpp - every library's passes, in one call ------------===//
#include "RegisterPasses.h"

#include "IR/Pass.h"
#include "Schedule/Passes.h"

namespace tgc::driver {

void registerAllPasses() {
  registerIRPasses();
  registerSchedulePasses();
}

} // namespace tgc::driver
