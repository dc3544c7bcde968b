//===- CorpusFiles.h - finding the corpus cases the tests read --*- C++ -*-===//
//
// The corpus lives outside the repository (TGC_CORPUS_DIR, ../shared/corpus);
// every corpus test walks it the same way: the case folders, sorted, that hold
// the files the test needs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Runtime/FileIO.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

namespace tgc::testing {

/// The graph documents a case may hold, in pipeline order.
inline constexpr const char *kCorpusDocuments[] = {"graph.json", "call.json", "kernels.json", "linear.json"};

/// The case folders of the corpus that contain every file in `required`, sorted.
inline std::vector<std::filesystem::path> corpusCases(std::initializer_list<const char *> required = {}) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(TGC_CORPUS_DIR, ec)) {
    if (!e.is_directory()) continue;
    bool complete = true;
    for (const char *f : required) complete &= std::filesystem::exists(e.path() / f);
    if (complete) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Whether a case binds tinygrad Variables (meta.json `variables`): one member
/// of a `<case>@<value>` family.
inline bool bindsVariables(const std::filesystem::path &caseDir) {
  std::string text, err;
  if (!rt::readFile((caseDir / "meta.json").string(), text, err)) return false;
  nlohmann::json meta = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return meta.is_object() && meta.contains("variables") && meta["variables"].is_array() && !meta["variables"].empty();
}

/// Checks one case's outcome: it must pass, and a failure names the case.
inline void expectCase(const std::filesystem::path &caseDir, bool ok, const std::string &why) {
  CHECK_MESSAGE(ok, caseDir.filename().string() << ": " << why);
}

} // namespace tgc::testing
