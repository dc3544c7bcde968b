//===- JSONPositions.h - where things are in a graph document ---*- C++ -*-===//
//
// nlohmann/json keeps no source positions, so the JSON reader scans the raw
// text once more for the byte offsets its diagnostics point at: the value of
// each top-level key, the values inside object-valued top-level keys
// (`dtypes`, `buffers`), and each object of the top-level `nodes` array with
// the values of its op/dtype/src/arg/tag keys. Internal to lib/IR.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tgc {

class JSONPositions {
public:
  static constexpr size_t npos = size_t(-1);
  enum Field : int { kOp, kDType, kSrc, kArg, kTag, kNumFields };
  static constexpr std::string_view kFieldNames[kNumFields] = {"op", "dtype", "src", "arg", "tag"};
  /// The Field a node key names, or -1.
  static int fieldIndex(std::string_view key);

  struct Node {
    size_t start = 0;                 ///< the element of `nodes` (normally its '{')
    size_t field[kNumFields] = {npos, npos, npos, npos, npos}; ///< where each key's value starts
  };

  /// Nesting deeper than this is refused before parsing: nlohmann's
  /// ordered_json copies nested values recursively and would run out of stack.
  /// It leaves room for every value the readers accept (200 levels, each at
  /// most 3 JSON levels deep: a dict is {"t":"dict","v":[[k, v]]}) inside a
  /// node (3 levels), so that whatever the text form reads, JSON reads too.
  static constexpr size_t kMaxNesting = 1024;

  /// nlohmann's errors other than parse_error (a number beyond double's
  /// range) carry no position, only the token in quotes: where that token
  /// first occurs in `text` (0 if it does not), and the message without
  /// nlohmann's "[json.exception...]" prefix.
  static std::pair<size_t, std::string> locateQuotedToken(std::string_view text, std::string_view message);

  /// Where the nesting of `text` (a JSON value) first exceeds `maxDepth`, or
  /// npos. Strings are skipped; the text need not be valid JSON.
  static size_t nestingTooDeep(std::string_view text, size_t maxDepth);

  /// Positions in `text`. For invalid JSON only the line table and
  /// tooDeep() are meaningful (the parser then reports the error).
  static JSONPositions scan(std::string_view text);

  /// 1-based line and column (in bytes) of a byte offset.
  std::pair<unsigned, unsigned> lineCol(size_t offset) const;
  /// Start of the value of top-level `key` (0 = the document's start if absent).
  size_t top(const std::string &key) const;
  /// Start of the value of `key` inside the object held by top-level `parent`
  /// (falls back to the parent's value).
  size_t sub(const std::string &parent, const std::string &key) const;
  /// Where nesting first exceeds kMaxNesting, or npos.
  size_t tooDeep() const { return tooDeep_; }
  /// Node `id`, or nullptr if the scan did not see it.
  const Node *node(size_t id) const { return id < nodes_.size() ? &nodes_[id] : nullptr; }

private:
  std::vector<size_t> lineStarts_{0};
  std::unordered_map<std::string, size_t> top_;
  std::unordered_map<std::string, size_t> sub_; ///< key: parent + '\0' + key
  std::vector<Node> nodes_;
  size_t tooDeep_ = npos;
};

} // namespace tgc
