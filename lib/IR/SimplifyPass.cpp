//===- SimplifyPass.cpp - the `simplify` pass ------------------------------===//
//
// Rewrites every root of a graph with tinygrad's `symbolic` matcher to a
// fixed point: what tinygrad's UOp.simplify() does, applied to a document.
// CALL/FUNCTION bodies are not entered (graph_rewrite's default).
//
//===----------------------------------------------------------------------===//
#include "IR/GraphRewrite.h"
#include "IR/Symbolic.h"

namespace tgc {

std::unique_ptr<Pass> createSimplifyPass() {
  return std::make_unique<FunctionPass>([](Graph &g) { return graphRewrite(g, symbolic()); });
}

} // namespace tgc
