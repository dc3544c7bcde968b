//===- GraphRewrite.h - tinygrad's graph_rewrite ----------------*- C++ -*-===//
//
// Rewrites a graph with a PatternMatcher to a fixed point, exactly as
// tinygrad's graph_rewrite / RewriteContext (tinygrad/uop/ops.py) does:
//  - `pm` rewrites a node after its srcs are rewritten (post-order);
//  - `bpm` (or pm with bottomUp) rewrites a node before its srcs are visited,
//    to a local fixed point (tinygrad's confusingly named "bottom_up" mode);
//  - every distinct node is rewritten once per call (memoized), a rebuilt or
//    rewritten node is itself rewritten again, and sharing is preserved;
//  - `walk` is the single-pass driver: a bpm result is taken as is, pm runs
//    once on each rebuilt node;
//  - CALL/FUNCTION bodies are not entered unless enterCalls;
//  - a rule may stop descent (Match::gate, tinygrad's BottomUpGate) or fail.
// The drivers are iterative (explicit stack + waitlist), so graphs of any
// depth are fine. A rewrite that does not terminate (a cycle of rules, or
// rules that keep producing new nodes) is reported as a Diagnostic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/DTypeRules.h"
#include "IR/Graph.h"
#include "IR/PatternMatcher.h"

#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

namespace tgc {

struct RewriteOptions {
  /// Use `pm` as the pre-order matcher (tinygrad's bottom_up=True).
  bool bottomUp = false;
  /// An extra pre-order matcher next to the post-order `pm` (tinygrad's bpm=).
  const PatternMatcher *bpm = nullptr;
  /// Single pass, no fixed point (tinygrad's walk=True).
  bool walk = false;
  /// Descend into the bodies of CALL/FUNCTION.
  bool enterCalls = false;
  /// Bound on the number of rule applications (and on the work stack); past
  /// it the rewrite is reported as non-terminating. 0 picks a bound that
  /// grows with the size of the UOp context (generous for any terminating
  /// rewrite of the graphs it holds).
  size_t maxSteps = 0;
  /// Optional promise that the rewrite leaves a node (and so everything below
  /// it) as it is: such a node is taken verbatim, without matching it or
  /// visiting its srcs. A pure shortcut: the result must be the same without it.
  std::function<bool(const UOp *)> unchanged;
};

/// Rewrites every root, sharing one memo table (as one SINK of them would).
Result<std::vector<const UOp *>> graphRewrite(std::span<const UOp *const> roots, const PatternMatcher &pm,
                                              RewriteEnv &env, const RewriteOptions &opts = {});

inline Result<const UOp *> graphRewrite(const UOp *root, const PatternMatcher &pm, RewriteEnv &env,
                                        const RewriteOptions &opts = {}) {
  auto r = graphRewrite(std::span<const UOp *const>(&root, 1), pm, env, opts);
  if (!r) return r.error();
  return r.value()[0];
}
inline Result<const UOp *> graphRewrite(const UOp *root, const PatternMatcher &pm, const RewriteOptions &opts = {}) {
  RewriteEnv env;
  return graphRewrite(root, pm, env, opts);
}
/// With a context object that rules read through Match::ctx<C>().
template <typename C>
  requires(!std::is_same_v<std::remove_cvref_t<C>, RewriteOptions> && !std::is_same_v<std::remove_cvref_t<C>, RewriteEnv>)
Result<const UOp *> graphRewrite(const UOp *root, const PatternMatcher &pm, C &ctx, const RewriteOptions &opts = {}) {
  RewriteEnv env(ctx);
  return graphRewrite(root, pm, env, opts);
}

/// graphRewrite(root, pm) with default options, memoized in root's Context:
/// for a matcher whose rules read nothing but the nodes (no context object,
/// no state), so that a node is rewritten once however often it is asked for.
Result<const UOp *> graphRewritePure(const UOp *root, const PatternMatcher &pm);

/// tinygrad's UOp.substitute: graph_rewrite(bottom_up=True) whose only
/// pre-order rule replaces a node found in `map` by its value (a node mapped
/// to itself is kept). Replacements are rewritten again, to a fixed point, as
/// that rewrite does; the map is looked up directly instead of through a
/// catch-all pattern. `unchanged` as in RewriteOptions.
Result<const UOp *> substituteRewrite(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map,
                                      const std::function<bool(const UOp *)> &unchanged = {});

/// Rewrites all roots of a graph in place.
Status graphRewrite(Graph &g, const PatternMatcher &pm, const RewriteOptions &opts = {});

} // namespace tgc
