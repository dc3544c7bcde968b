//===- Verifier.cpp - check a graph against tinygrad's spec ---------------===//
//
// Mirrors tinygrad's type_verify (tinygrad/uop/spec.py): every node reachable
// from the roots is checked against the rules of VerifierRules.cpp. The rule
// set depends on where the node sits: nodes of a kernel body (under a SINK
// whose arg is a KernelInfo, usually reached as a CALL's src[0], or in the
// LINEAR listing of a PROGRAM) get the kernel rules, all others the tensor /
// kernel-graph rules.
//
//===----------------------------------------------------------------------===//
#include "IR/Verifier.h"

#include "IR/VerifierRules.h"

#include <unordered_map>

namespace tgc {

namespace {

bool isKernelSink(const UOp *u) { return u->is(Op::SINK) && u->arg().isObj("KernelInfo"); }

/// How a message names the node, followed by a space: "%12 " for node 12 of a
/// JSON document (or, built in memory, the node's id in its context), nothing
/// for a node of the text form, whose location already points at its line.
std::string nodeRef(const UOp *u) {
  const Location *loc = u->context().location(u);
  if (loc && loc->nodeId < 0 && loc->line) return "";
  return "%" + std::to_string(loc && loc->nodeId >= 0 ? loc->nodeId : int64_t(u->id())) + " ";
}

} // namespace

std::vector<Diagnostic> verify(std::span<const UOp *const> roots, const VerifyOptions &opts) {
  using namespace verifier;
  // Regions flow from users to sources: a kernel SINK starts a kernel body, and
  // so does the LINEAR listing of a PROGRAM (src[1]); everything below a kernel
  // node is kernel. Visiting users first (reverse toposort) settles a node's
  // region before its sources inherit it.
  std::vector<const UOp *> order = toposort(roots);
  std::unordered_map<const UOp *, uint8_t> region;
  for (const UOp *r : roots) region[r] |= isKernelSink(r) ? Kernel : Outer;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const UOp *u = *it;
    uint8_t r = region[u];
    for (size_t i = 0; i < u->numSrc(); ++i) {
      const UOp *s = u->src(i);
      bool startsKernel = isKernelSink(s) || (u->is(Op::PROGRAM) && i == 1 && s->is(Op::LINEAR));
      region[s] |= (r & Kernel) | ((r & Outer) ? (startsKernel ? Kernel : Outer) : 0);
    }
  }

  std::vector<Diagnostic> out;
  // The rules read the dtypes of sources; a node without one is reported alone.
  for (const UOp *u : order)
    if (!u->dtype() && out.size() < opts.maxErrors)
      out.push_back(Diagnostic::at(u, "'" + std::string(opName(u->op())) + "' " + nodeRef(u) + "has no dtype (rule: dtype-known)"));
  if (!out.empty()) return out;
  for (const UOp *u : order) {
    uint8_t r = region[u];
    for (const Rule &rule : rules()) {
      if (!(rule.regions & r) || (!rule.ops.empty() && !rule.ops.contains(u->op()))) continue;
      std::string what = rule.check(u);
      if (what.empty()) continue;
      out.push_back(Diagnostic::at(u, "'" + std::string(opName(u->op())) + "' " + nodeRef(u) +
                                          std::string(u->dtype().name()) + ": " + what +
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
