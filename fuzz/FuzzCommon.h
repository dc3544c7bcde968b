//===- FuzzCommon.h - round-trip oracles shared by the fuzz targets -*- C++ -*-===//
//
// A fuzz input that parses must survive both writers: printText and
// writeGraphJSON output must read back (in the same Context, so equal nodes
// are the same pointers) to an equal Graph, and writing that again must give
// the same text. Any difference aborts with both texts, which libFuzzer then
// saves as a crash. A crash, a hang or a sanitizer report in any step is a
// finding too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/JSON.h"
#include "IR/Limits.h"
#include "IR/TextFormat.h"
#include "IR/Verifier.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace tgc::fuzz {

[[noreturn]] inline void fail(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "\n==== fuzz oracle failed: %.*s\n%.*s\n", int(what.size()), what.data(), int(detail.size()),
               detail.data());
  std::abort();
}

/// What the two graphs differ in, or "" when they are equal. Paths are not
/// compared: they name where a document came from.
inline std::string difference(const Graph &a, const Graph &b) {
  if (a.roots != b.roots) return "roots";
  if (a.rootNames != b.rootNames) return "root names";
  if (a.buffers.size() != b.buffers.size()) return "buffer count";
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    const BufferFile &x = a.buffers[i], &y = b.buffers[i];
    if (x.node != y.node || x.dtype != y.dtype || x.numel != y.numel || x.device != y.device ||
        x.allocated != y.allocated || x.file != y.file)
      return "buffer " + std::to_string(i);
  }
  if (a.bufferMap != b.bufferMap) return "buffer_map";
  if (a.extra != b.extra) return "document attributes";
  // Nodes no root, buffer or buffer_map entry reaches are not part of the
  // graph (the writers drop them), so neither are their attributes.
  std::vector<const UOp *> starts = a.roots;
  for (const auto &[t, buf] : a.bufferMap) starts.insert(starts.end(), {t, buf});
  for (const BufferFile &buf : a.buffers) starts.push_back(buf.node);
  ToposortOptions opts;
  opts.argRefs = true;
  for (const UOp *u : toposort(starts, opts)) {
    auto x = a.nodeExtra.find(u), y = b.nodeExtra.find(u);
    bool hasX = x != a.nodeExtra.end(), hasY = y != b.nodeExtra.end();
    if (hasX != hasY || (hasX && x->second != y->second)) return "attributes of node " + u->str();
  }
  return "";
}

/// Parses `text` as written by `how` and checks it is `g` again; returns the re-read graph.
inline Graph expectReadsBack(Context &ctx, const Graph &g, const std::string &text, bool json) {
  const char *how = json ? "writeGraphJSON" : "printText";
  Result<Graph> back = json ? readGraphJSON(ctx, text, "roundtrip.json") : parseText(ctx, text, "roundtrip.tgc");
  if (!back) fail(std::string(how) + " output does not read back: " + back.error().str(), text);
  std::string diff = difference(g, *back);
  if (!diff.empty()) fail(std::string(how) + " output reads back to a different graph (" + diff + ")", text);
  return std::move(*back);
}

/// Every check a parsed graph must pass: the verifier runs (its verdict is
/// not the oracle), and both forms round-trip exactly.
inline void checkGraph(Context &ctx, const Graph &g) {
  (void)verify(g.roots);
  PrintOptions popts;
  popts.shapes = true;
  std::string text = printText(g, popts);
  Graph fromText = expectReadsBack(ctx, g, text, /*json=*/false);
  if (std::string again = printText(fromText, popts); again != text)
    fail("printText is not stable across a round trip", text + "\n---- then ----\n" + again);

  std::string json = writeGraphJSON(g);
  Graph fromJSON = expectReadsBack(ctx, g, json, /*json=*/true);
  if (std::string again = writeGraphJSON(fromJSON); again != json)
    fail("writeGraphJSON is not stable across a round trip", json + "\n---- then ----\n" + again);
}

/// The input as a graph the driver would hand to its passes: JSON when it
/// starts with '{', else the text form; within `limits` and verified clean.
/// nullopt for anything the driver would refuse first.
inline std::optional<Graph> acceptedGraph(Context &ctx, const uint8_t *data, size_t size,
                                          const ResourceLimits &limits = {}) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  size_t first = text.find_first_not_of(" \t\r\n");
  bool json = first != std::string_view::npos && text[first] == '{';
  Result<Graph> g = json ? readGraphJSON(ctx, text, "fuzz.json") : parseText(ctx, text, "fuzz.tgc");
  if (!g || !checkResourceLimits(*g, limits).ok() || !verifyGraph(*g).ok()) return std::nullopt;
  return std::move(*g);
}

} // namespace tgc::fuzz
