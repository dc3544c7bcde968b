//===- Verifier.cpp - check a graph against tinygrad's spec ---------------===//
//
// Mirrors tinygrad's type_verify (tinygrad/uop/spec.py): every node reachable
// from the roots is checked against the rules of VerifierRules.cpp. The rule
// set depends on where the node sits: nodes of a kernel body (under a SINK
// whose arg is a KernelInfo, usually reached as a CALL's src[0]) get the
// kernel rules, all others the tensor / kernel-graph rules.
//
//===----------------------------------------------------------------------===//
#include "IR/Verifier.h"

#include "IR/VerifierRules.h"

#include <unordered_map>

namespace tgc {

namespace {

bool isKernelSink(const UOp *u) { return u->is(Op::SINK) && u->arg().isObj("KernelInfo"); }

/// "%12" where %12 is the node's index in its input document (or its id in the context).
std::string nodeRef(const UOp *u) {
  const Location *loc = u->context().location(u);
  return "%" + std::to_string(loc && loc->nodeId >= 0 ? loc->nodeId : int64_t(u->id()));
}

} // namespace

std::vector<Diagnostic> verify(std::span<const UOp *const> roots, const VerifyOptions &opts) {
  using namespace verifier;
  // Regions: walk from the roots without entering kernel bodies, then walk the bodies.
  std::vector<const UOp *> order, kernelSinks;
  std::unordered_map<const UOp *, uint8_t> region;
  ToposortOptions outer;
  outer.gate = [](const UOp *u) { return !isKernelSink(u); };
  for (const UOp *u : toposort(roots, outer)) {
    if (isKernelSink(u)) {
      kernelSinks.push_back(u);
      continue;
    }
    region[u] |= Outer;
    order.push_back(u);
  }
  for (const UOp *u : toposort(kernelSinks)) {
    uint8_t &r = region[u];
    if (!r) order.push_back(u);
    r |= Kernel;
  }

  std::vector<Diagnostic> out;
  for (const UOp *u : order) {
    uint8_t r = region[u];
    for (const Rule &rule : rules()) {
      if (!(rule.regions & r) || (!rule.ops.empty() && !rule.ops.contains(u->op()))) continue;
      std::string what = rule.check(u);
      if (what.empty()) continue;
      out.push_back(Diagnostic::at(u, "'" + std::string(opName(u->op())) + "' " + nodeRef(u) + " " +
                                          std::string(u->dtype() ? u->dtype().name() : "?") + ": " + what +
                                          " (rule: " + std::string(rule.name) + ")"));
      break; // one violation per node: later rules may rely on what this one checks
    }
    if (out.size() >= opts.maxErrors) break;
  }
  return out;
}

Status verifyGraph(const Graph &g, const VerifyOptions &opts) {
  std::vector<Diagnostic> errs = verify(g.roots, opts);
  if (errs.empty()) return Status::success();
  Diagnostic d = errs.front();
  if (errs.size() > 1) {
    bool capped = errs.size() >= opts.maxErrors; // verify stopped looking
    d.notes.push_back((capped ? "at least " : "") + std::to_string(errs.size() - 1) + " more violation" +
                      (errs.size() > 2 ? "s" : "") + " found");
  }
  return d;
}

} // namespace tgc
