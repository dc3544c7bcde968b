//===- Driver.cpp - input reading, format detection, diagnostics ----------===//
#include "Driver.h"

#include "IR/JSON.h"
#include "IR/TextFormat.h"
#include "Runtime/FileIO.h"

#include <iostream>

namespace tgc::driver {

void report(const Diagnostic &d) { std::cerr << d.str() << "\n"; }

Result<std::string> readInput(const std::string &path) {
  std::string text, error;
  if (!rt::readFile(path, text, error)) return Diagnostic(Location{path, 0, 0, -1}, error);
  return text;
}

static bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Format detectFormat(const std::string &path, std::string_view text) {
  if (endsWith(path, ".json")) return Format::JSON;
  if (endsWith(path, ".tgc")) return Format::Text;
  // Otherwise sniff: a JSON document starts with '{' (comments are text-form only).
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' ? Format::JSON : Format::Text;
  }
  return Format::Text;
}

Status parseDocument(Context &ctx, const std::string &path, Format fmt, const InputChunk &chunk,
                     const std::string &rootSel, Graph &g) {
  std::string name = path == "-" ? "<stdin>" : path;
  Result<Graph> parsed = fmt == Format::JSON ? readGraphJSON(ctx, chunk.text, name)
                                             : parseText(ctx, chunk.text, name, chunk.lineOffset);
  if (!parsed) return parsed.error();
  g = std::move(*parsed);
  if (rootSel.empty()) return Status::success();
  const UOp *root = g.root(rootSel);
  if (!root) {
    std::string names;
    for (const auto &n : g.rootNames) names += (names.empty() ? "" : ", ") + n;
    return Diagnostic(Location{name, 0, 0, -1}, "no root named '" + rootSel + "' (roots: " + names + ")");
  }
  g.roots = {root};
  g.rootNames = {rootSel};
  return Status::success();
}

} // namespace tgc::driver
