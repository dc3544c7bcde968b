//===- PipelineFuzzer.cpp - libFuzzer target: the registered passes --------===//
//
// Parses the input (JSON when it starts with '{', else the text form), and if
// it is within the driver's resource limits and verifies, runs every pass of
// the PassRegistry on it alone, then a chain of passes picked by the input's
// hash. Passes join automatically: this target registers what the driver
// registers (tools/tgc/RegisterPasses.cpp). A pass may refuse a graph with a
// Diagnostic; it must not crash, and what it returns must still print and
// read back (FuzzCommon.h).
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "IR/Limits.h"
#include "IR/Pass.h"
#include "RegisterPasses.h"

#include <functional>

namespace {

/// Runs `pass` on a copy of g; the copy when it succeeded.
std::optional<tgc::Graph> runOne(tgc::Context &ctx, const tgc::Graph &g, const tgc::PassInfo &pass) {
  tgc::Graph h = g;
  std::unique_ptr<tgc::Pass> p = pass.create();
  if (!p->run(h).ok()) return std::nullopt;
  (void)p->analysisText(h);
  tgc::fuzz::checkGraph(ctx, h);
  return h;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  tgc::driver::registerAllPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace tgc;
  Context ctx;
  // The driver's defaults: what it would refuse, no pass ever sees.
  std::optional<Graph> g = fuzz::acceptedGraph(ctx, data, size);
  if (!g) return 0;

  std::vector<const PassInfo *> passes = PassRegistry::instance().all();
  for (const PassInfo *p : passes) runOne(ctx, *g, *p);

  // A chain of up to four passes, chosen by the input so that mutations explore orders.
  size_t h = std::hash<std::string_view>()(std::string_view(reinterpret_cast<const char *>(data), size));
  Graph cur = *g;
  for (int step = 0; step < 4 && !passes.empty(); ++step, h /= passes.size() + 1) {
    size_t pick = h % (passes.size() + 1);
    if (pick == passes.size()) break;
    std::optional<Graph> next = runOne(ctx, cur, *passes[pick]);
    if (!next) break;
    cur = std::move(*next);
  }
  return 0;
}
