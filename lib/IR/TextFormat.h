//===- TextFormat.h - the human-readable text form of UOp graphs -*- C++ -*-===//
//
// tgc's text form (docs/text-format.md): one node per line, SSA names,
// Python-like arg values. It carries the same information as the JSON graph
// document (graph-format §2), so text <-> JSON conversions are lossless, and
// it is what `tgc opt --emit=text` prints and FileCheck tests read:
//
//   graph @sink {
//     %0 = CONST weakint 16
//     %1 = BUFFER float32 (%0) ParamArg(slot=1, ...) : [16]
//     %2 = SINK void (%1)
//   }
//
// tinygrad has no counterpart (its closest relative is UOp.__repr__); the
// syntax follows MLIR's generic form where it can.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/Graph.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tgc {

struct PrintOptions {
  /// Append each node's derived shape (`: [8, 16]`) where it has one.
  bool shapes = true;
  /// Where the text will be written: relative buffer file paths are rebased
  /// from Graph::baseDir to it (as writeGraphJSON does). Empty: kept as they are.
  std::string outputDir;
};

/// The text form of `g`: one `graph` block holding every node reachable from
/// the roots (through sources and arg references), named %0, %1, ... in
/// toposort order, then per-node attributes, the buffer table, the
/// buffer_map and (unless the last node is the only root) the roots.
std::string printText(const Graph &g, const PrintOptions &opts = {});

/// Parses a text document into one Graph (the roots of all its blocks, in
/// order). `path` names the input in diagnostics and node locations;
/// `lineOffset` is added to every line number (for a chunk of a larger file,
/// see splitInputFile).
Result<Graph> parseText(Context &ctx, std::string_view text, const std::string &path, unsigned lineOffset = 0);

/// Splits a file at lines reading `// -----` (mlir-opt's --split-input-file).
/// The pieces are views into `text`; lineOffsetOf gives each one's first line.
std::vector<std::string_view> splitInputFile(std::string_view text);
/// How many lines of `whole` precede `piece` (a view into `whole`).
unsigned lineOffsetOf(std::string_view whole, std::string_view piece);

/// Parses one value in the text syntax (e.g. `(Ops.ADD, 1)`); `%name`
/// references resolve through `names` (none allowed when it is null).
/// Diagnostics point into `text` as line 1 of `path`.
Result<Value> parseValue(std::string_view text, const std::unordered_map<std::string, const UOp *> *names = nullptr,
                         const std::string &path = "<value>");

} // namespace tgc
