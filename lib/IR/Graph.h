//===- Graph.h - a document: named roots over interned UOps -----*- C++ -*-===//
//
// What the readers produce and the passes transform: the roots of one graph
// document (graph-format §2), their names, the realized input buffers the
// document references, and the keys tgc does not interpret (kept so that a
// written document carries them on).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <nlohmann/json.hpp>

#include <map>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tgc {

/// A realized input buffer: graph.json's `buffers` entry.
struct BufferFile {
  const UOp *node = nullptr; ///< the BUFFER node
  DType dtype;
  int64_t numel = 0;
  std::string device;
  bool allocated = false;
  std::string file; ///< data file as written in the document (relative to baseDir), may be empty
};

/// Two calls of a scheduled root's LINEAR that an AFTER of the kernel graph
/// ordered (positions in the LINEAR; `via` names the AFTER's storage).
struct AfterOrdering {
  size_t before = 0, after = 0;
  std::string via;
};

struct Graph {
  std::vector<const UOp *> roots;
  std::vector<std::string> rootNames;
  std::vector<BufferFile> buffers;
  /// call.json's `buffer_map`: [tensor node, buffer node] pairs. The document
  /// lists these nodes besides the roots' closure, so they are kept as nodes.
  std::vector<std::pair<const UOp *, const UOp *>> bufferMap;
  /// Per-node keys besides op/dtype/src/arg/tag (graph.json's informational
  /// `shape`), in document order, written back unchanged for the same node.
  std::unordered_map<const UOp *, nlohmann::ordered_json> nodeExtra;
  /// Top-level keys of the document that tgc does not model (e.g. "tinygrad",
  /// "what", "buffer_map"), in document order, written back unchanged.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  /// By root index: the AFTER orderings the linearize pass enforced when it
  /// made that root's LINEAR (for `--emit=dot`). Not part of the document:
  /// a LINEAR read from a file has none.
  std::map<size_t, std::vector<AfterOrdering>> afterOrderings;
  std::string path;    ///< where the document was read from ("" if built in memory)
  std::string baseDir; ///< directory that relative data file paths are relative to

  /// A buffer data file path (as written in the document, relative to
  /// baseDir) as seen from outputDir: relative where possible, else absolute.
  /// Unchanged when outputDir is empty. Used by both writers so a written
  /// document still finds its data.
  std::string dataPathFrom(const std::string &file, const std::string &outputDir) const;

  /// The root named `name`, or the root with that index ("0", "kernel_graph[0]").
  const UOp *root(std::string_view nameOrIndex) const;
};

} // namespace tgc
