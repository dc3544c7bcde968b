//===- JSON.h - the graph-format JSON documents -----------------*- C++ -*-===//
//
// Reads and writes the documents of docs/graph-format.md (graph.json,
// call.json, kernels.json, linear.json): a node table in topological order,
// typed arg values (§3), a dtype table (§4) and named roots. The writer uses
// the layout of tinygrad's exporter (header keys, then one node per line), so
// that read -> write reproduces an exported document.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/Graph.h"

#include <string>
#include <string_view>
#include <vector>

namespace tgc {

/// Parses a graph document, interning its nodes in `ctx` in id order. Every
/// node gets a Location (path, line:col of its object, node id). `path` names
/// the document in diagnostics and sets Graph::path / Graph::baseDir.
/// Warnings go to `warnings` when given, whether or not the document reads:
/// one when it names a tinygrad other than kFollowedTinygrad, which may also
/// explain an error.
Result<Graph> readGraphJSON(Context &ctx, std::string_view text, const std::string &path,
                            std::vector<Diagnostic> *warnings = nullptr);
/// Reads the file at `path` and parses it with readGraphJSON.
Result<Graph> readGraphJSONFile(Context &ctx, const std::string &path, std::vector<Diagnostic> *warnings = nullptr);

/// The document for `g`: nodes numbered in toposort order (sources and
/// arg-referenced nodes first) of the roots, then the buffer_map and buffer
/// nodes; a dtype table of exactly the dtypes used. When `outputDir` is given,
/// buffer file paths are rewritten relative to it, so the written document
/// still finds its data.
std::string writeGraphJSON(const Graph &g, const std::string &outputDir = "");

} // namespace tgc
