//===- Passes.cpp - registration of the scheduling passes -----------------===//
#include "Schedule/Passes.h"

#include "IR/Pass.h"
#include "Schedule/Access.h"
#include "Schedule/Callify.h"
#include "Schedule/Grad.h"
#include "Schedule/Linearize.h"
#include "Schedule/RealizeOutputs.h"
#include "Schedule/ResolveCalls.h"
#include "Schedule/RangeifyPasses.h"

namespace tgc {
namespace {

using BodyFn = const UOp *(*)(const UOp *);

bool isFunctionBody(const UOp *u) { return u->is(Op::SINK) && !u->arg().isObj("KernelInfo"); }

/// Runs `fn` on every function body among the roots: a SINK without
/// KernelInfo, or the body of a CALL of one (callify's output), which is
/// rebuilt around the new body.
Status onBodies(Graph &g, BodyFn fn) {
  try {
    bool any = false;
    for (const UOp *&r : g.roots) {
      if (isFunctionBody(r)) {
        r = fn(r);
        any = true;
      } else if (r->is(Op::CALL) && r->numSrc() && isFunctionBody(r->src(0))) {
        std::vector<const UOp *> s(r->src().begin(), r->src().end());
        s[0] = fn(s[0]);
        r = r->withSrc(std::move(s));
        any = true;
      }
    }
    if (!any) return Diagnostic({}, "no function body to schedule: expected a SINK (without KernelInfo) or a CALL of one");
    return Status::success();
  } catch (const rangeify::ScheduleError &e) {
    return e.diag;
  }
}

/// tinygrad's realize() skips a SINK source it cannot store (no device, i.e.
/// computed from constants only, or a weak dtype): such a tensor stays a
/// constant expression. When that holds for every source the schedule would be
/// silently empty, which is refused.
Status checkRealizable(const UOp *sink) {
  if (sink->numSrc() == 0) return Status::success();
  for (const UOp *s : sink->src())
    if (!rangeify::isVirtual(s)) return Status::success();
  const UOp *s = sink->src(0);
  Diagnostic d = Diagnostic::at(s, "nothing to realize: every SINK source has no device (it is computed from constants "
                                   "only) or a weak dtype, and tinygrad's realize() skips such a tensor");
  d.notes.push_back("tinygrad's numpy() copies such a tensor to the CPU first: run the realize-outputs pass "
                    "before the schedule (tgc run does)");
  return d;
}

Status callifyGraph(Graph &g) {
  // Scheduling makes ~15-20 nodes per node of the tensor graph (k1: 1.9k ->
  // 27k, k3: 5.7k -> 110k). reserve() rounds the table up to a power of two
  // at most half full, so 12x leaves room for that without regrowing, in a
  // table no larger than needed: interning is bound by loading a random slot,
  // and a smaller table misses the cache less.
  if (!g.roots.empty()) g.roots[0]->context().reserve(12 * g.roots[0]->context().size());
  bool any = false;
  for (size_t i = 0; i < g.roots.size(); ++i) {
    if (!isFunctionBody(g.roots[i])) continue;
    if (Status st = checkRealizable(g.roots[i]); !st.ok()) return st;
    // the first slot no root uses yet, counting the buffers earlier bodies made
    Result<CallifyResult> r = callify(g.roots[i], firstFreeBufferSlot(g.roots));
    if (!r) return r.error();
    g.roots[i] = r->call;
    if (i < g.rootNames.size()) g.rootNames[i] = "call";
    g.bufferMap.insert(g.bufferMap.end(), r->bufferMap.begin(), r->bufferMap.end());
    any = true;
  }
  if (!any) return Diagnostic({}, "callify expects a tensor graph: a SINK of the tensors to realize");
  return Status::success();
}

/// Runs registered passes by name, in order.
class PipelinePass : public Pass {
public:
  explicit PipelinePass(std::vector<std::string> names) : names_(std::move(names)) {}
  Status run(Graph &g) override {
    for (const std::string &n : names_) {
      const PassInfo *info = PassRegistry::instance().lookup(n);
      if (!info) return Diagnostic({}, "pass '" + n + "' is not registered");
      if (Status st = info->create()->run(g); !st.ok()) return st;
    }
    return Status::success();
  }

private:
  std::vector<std::string> names_;
};

void addBodyPass(const char *name, const char *desc, BodyFn fn, void (*prepare)()) {
  PassRegistry::instance().add(
      {name, desc, [fn] { return std::make_unique<FunctionPass>([fn](Graph &g) { return onBodies(g, fn); }); }, {},
       prepare});
}

} // namespace

void registerSchedulePasses() {
  auto &r = PassRegistry::instance();
  registerGradPass();
  registerRealizeOutputsPass();
  r.add({"callify", "tensor graph -> CALL(SINK of effects over PARAMs, *buffers) and the buffer map",
         [] { return std::make_unique<FunctionPass>(callifyGraph); }, {}, prepareCallify});
  using namespace rangeify;
  addBodyPass("rangeify-early", "movement-op cleanup, FUNCTION inlining, reduce split, COPY/STORE rules",
              earliestRewritesPass, prepareEarliestRewrites);
  addBodyPass("copy-to-store", "every COPY becomes a STORE into a buffer", copyToStorePass, prepareCopyToStore);
  addBodyPass("rangeify", "realize decisions, ranges through movement ops, STAGE/INDEX/REDUCE ranges",
              runRangeify, prepareRangeify);
  addBodyPass("rangeify-cleanup", "symbolic, reduce simplification, const-buffer folding, fusion cost model",
              cleanupPass, prepareCleanup);
  addBodyPass("limit-bufs", "stage elementwise srcs of kernels over the device's buffer limit", limitBufsPass, prepareLimitBufs);
  addBodyPass("add-buffers", "STAGE -> BUFFER + STORE + END + AFTER; tag PARAMs and RANGEs", addBuffersPass, prepareAddBuffers);
  addBodyPass("split-kernels", "each closed STORE becomes AFTER(buffer, CALL(kernel SINK, *args))",
              splitKernelsPass, prepareSplitKernels);
  r.add({"access", "compute each CALL's read and written argument slots (printed with --print-after)",
         [] { return std::make_unique<sched::AccessPass>(); }});
  r.add({"linearize", "order the kernels of a kernel graph into a LINEAR of CALLs",
         [] { return std::make_unique<sched::LinearizePass>(); }});
  const std::vector<std::string> kernelGraphSteps = {"rangeify-early", "copy-to-store", "rangeify", "rangeify-cleanup",
                                                     "limit-bufs",     "add-buffers",   "split-kernels"};
  r.add({"kernel-graph", "get_kernel_graph: all rangeify steps, function body -> kernel graph",
         [kernelGraphSteps] { return std::make_unique<PipelinePass>(kernelGraphSteps); }, kernelGraphSteps});
  r.add({"resolve-calls", "CALL(LINEAR, *buffers) -> LINEAR of kernel CALLs over buffers, cross-device copies as COPY",
         [] { return std::make_unique<FunctionPass>(resolveCalls); }, {}, prepareResolveCalls});
  const std::vector<std::string> scheduleSteps = {"callify", "kernel-graph", "linearize", "access", "resolve-calls"};
  r.add({"schedule", "the whole scheduling pipeline: callify, kernel-graph, linearize, access, resolve-calls",
         [scheduleSteps] { return std::make_unique<PipelinePass>(scheduleSteps); }, scheduleSteps});
}

} // namespace tgc
