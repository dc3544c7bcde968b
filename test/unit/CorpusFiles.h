//===- CorpusFiles.h - finding the corpus cases the tests read --*- C++ -*-===//
//
// The corpus lives outside the repository (TGC_CORPUS_DIR, ../shared/corpus);
// every corpus test walks it the same way: the case folders, sorted, that hold
// the files the test needs.
//
//===----------------------------------------------------------------------===//
#pragma once

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

} // namespace tgc::testing
