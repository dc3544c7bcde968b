//===- Passes.cpp - registration of the scheduling passes -----------------===//
#include "Schedule/Passes.h"

#include "Schedule/Access.h"
#include "Schedule/Linearize.h"

namespace tgc {

void registerSchedulePasses() {
  auto &r = PassRegistry::instance();
  r.add({"access", "compute each CALL's read and written argument slots (printed with --print-after)",
         [] { return std::make_unique<sched::AccessPass>(); }});
  r.add({"linearize", "order the kernels of a kernel graph into a LINEAR of CALLs",
         [] { return std::make_unique<sched::LinearizePass>(); }});
}

} // namespace tgc
