//===- FollowedTinygrad.h - the tinygrad tgc follows ------------*- C++ -*-===//
//
// tgc reproduces one tinygrad: its ops, their semantics and what its
// scheduler makes of a graph (the test corpus was exported from it). A graph
// document names the tinygrad that exported it (graph-format §2, the
// top-level key "tinygrad"); a reader compares it with this one, since ops or
// semantics of another revision may differ.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

namespace tgc {

struct TinygradRevision {
  std::string_view commit;   ///< what its exporter writes as "tinygrad"
  std::string_view snapshot; ///< the upstream tinygrad commit it starts from
  std::string_view patch;    ///< what is applied on the snapshot
  /// Other commits of the very same tree (the snapshot with the same patch,
  /// committed on another branch), which documents may name as well.
  std::array<std::string_view, 1> sameTree;

  bool isCommit(std::string_view c) const {
    return c == commit || std::find(sameTree.begin(), sameTree.end(), c) != sameTree.end();
  }
};

/// The tinygrad snapshot a9069c177a (2026-08-22) with the reference revision
/// (the assignment-scheduling contract) applied. The corpus cases exported
/// before the variable and random-number cases name 35456af675, the same
/// snapshot and patch (their meta.json: snapshot_commit, reference_patch).
inline constexpr TinygradRevision kFollowedTinygrad = {"82bad2be7b718b8417f81962bbbd6bf1abc6ff3a",
                                                       "a9069c177a9da9cca18593edf55acd2e6073cca6",
                                                       "reference revision",
                                                       {"35456af675bf9c1ec7ab784ed6c08c7e34d52d7b"}};

/// kFollowedTinygrad for messages: "82bad2be7b71 (snapshot a9069c177a + reference revision)".
inline std::string describeFollowedTinygrad() {
  const TinygradRevision &t = kFollowedTinygrad;
  return std::string(t.commit.substr(0, 12)) + " (snapshot " + std::string(t.snapshot.substr(0, 10)) + " + " +
         std::string(t.patch) + ")";
}

} // namespace tgc
