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

/// The open issues that keep tgc from handling some corpus cases yet.
enum class Pending { None, RandomNumbers };

inline std::string pendingIssue(Pending p) { return p == Pending::RandomNumbers ? "#31 (THREEFRY)" : ""; }

/// A case's meta.json (null when unreadable).
inline nlohmann::json caseMeta(const std::filesystem::path &caseDir) {
  std::string text, err;
  if (!rt::readFile((caseDir / "meta.json").string(), text, err)) return nullptr;
  nlohmann::json meta = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return meta.is_object() ? meta : nullptr;
}

/// What a case waits for, by its meta.json: a random-number case (category
/// `r`) waits for #31. test/lit/compile-corpus/corpus.py applies the same rule.
inline Pending pendingOn(const std::filesystem::path &caseDir) {
  nlohmann::json meta = caseMeta(caseDir);
  return meta.is_object() && meta.value("category", "") == "r" ? Pending::RandomNumbers : Pending::None;
}

/// Whether a case binds tinygrad Variables (meta.json `variables`): a member
/// `<case>@<value>` of a family exported at several values.
inline bool bindsVariables(const std::filesystem::path &caseDir) {
  nlohmann::json meta = caseMeta(caseDir);
  return meta.is_object() && meta.contains("variables") && meta["variables"].is_array() && !meta["variables"].empty();
}

/// Checks one case's outcome. A case pending on one of `expectedToFail` must
/// fail (a message names the issue), and passing is an error, so its entry is
/// removed when the issue lands; any other case must pass.
inline void expectCase(const std::filesystem::path &caseDir, bool ok, const std::string &why,
                       std::initializer_list<Pending> expectedToFail) {
  Pending p = pendingOn(caseDir);
  bool expected = p != Pending::None && std::find(expectedToFail.begin(), expectedToFail.end(), p) != expectedToFail.end();
  std::string name = caseDir.filename().string();
  if (!expected) {
    CHECK_MESSAGE(ok, name << ": " << why);
  } else if (ok) {
    FAIL_CHECK(name << " passes now, but is listed as failing until issue " << pendingIssue(p)
                    << " lands: remove it from this test's expected failures");
  } else {
    MESSAGE(name << ": fails as expected until issue " << pendingIssue(p) << " lands: " << why);
  }
}

} // namespace tgc::testing
