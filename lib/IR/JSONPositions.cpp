//===- JSONPositions.cpp - one pass over a graph document's text ----------===//
//
// A minimal JSON scanner: it tracks strings (with escapes) and a stack of open
// containers, each tagged with its role in the document, and records where
// the values that diagnostics point at begin. It runs before the parser, so
// it must not trust the text: it only never reads out of bounds.
//
//===----------------------------------------------------------------------===//
#include "IR/JSONPositions.h"

#include <algorithm>

namespace tgc {

int JSONPositions::fieldIndex(std::string_view key) {
  for (int f = 0; f < kNumFields; ++f)
    if (kFieldNames[f] == key) return f;
  return -1;
}

JSONPositions JSONPositions::scan(std::string_view text) {
  JSONPositions p;
  enum class Role : uint8_t { Top, TopChild, Nodes, Node, Other };
  struct Frame {
    Role role;
    std::string_view name; ///< TopChild: its key in the top-level object
    std::string_view key;  ///< objects: the key whose value comes next
  };
  std::vector<Frame> stack;
  std::string_view lastString;
  bool pendingValue = false; // the next non-blank character starts a value we may record

  auto record = [&](size_t at) {
    Frame &f = stack.back();
    switch (f.role) {
    case Role::Top: p.top_.emplace(std::string(f.key), at); break;
    case Role::TopChild: p.sub_.emplace(std::string(f.name) + '\0' + std::string(f.key), at); break;
    case Role::Nodes: p.nodes_.push_back(Node{at, {npos, npos, npos, npos, npos}}); break;
    case Role::Node:
      if (int k = fieldIndex(f.key); k >= 0) p.nodes_.back().field[k] = at;
      break;
    case Role::Other: break;
    }
  };

  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      p.lineStarts_.push_back(i + 1);
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (pendingValue && !stack.empty() && c != ']') record(i);
    pendingValue = false;
    switch (c) {
    case '"': {
      size_t start = ++i;
      while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      lastString = text.substr(start, std::min(i, text.size()) - start);
      break;
    }
    case ':':
      if (!stack.empty()) {
        stack.back().key = lastString;
        pendingValue = true;
      }
      break;
    case ',':
      pendingValue = !stack.empty() && stack.back().role == Role::Nodes;
      break;
    case '{':
    case '[': {
      Role role = Role::Other;
      std::string_view name;
      if (stack.empty()) {
        role = c == '{' ? Role::Top : Role::Other;
      } else if (stack.back().role == Role::Top) {
        if (c == '[' && stack.back().key == "nodes") role = Role::Nodes;
        else if (c == '{') role = Role::TopChild, name = stack.back().key;
      } else if (stack.back().role == Role::Nodes && c == '{') {
        role = Role::Node;
      }
      stack.push_back(Frame{role, name, {}});
      if (stack.size() > kMaxNesting && p.tooDeep_ == npos) p.tooDeep_ = i;
      pendingValue = role == Role::Nodes;
      break;
    }
    case '}':
    case ']':
      if (!stack.empty()) stack.pop_back();
      break;
    default: break;
    }
  }
  return p;
}

std::pair<size_t, std::string> JSONPositions::locateQuotedToken(std::string_view text, std::string_view message) {
  if (size_t close = message.find("] "); message.starts_with("[json.exception.") && close != std::string_view::npos)
    message.remove_prefix(close + 2);
  size_t q1 = message.find('\''), q2 = message.rfind('\'');
  size_t at = 0;
  if (q1 != std::string_view::npos && q2 > q1 + 1)
    if (size_t found = text.find(message.substr(q1 + 1, q2 - q1 - 1)); found != std::string_view::npos) at = found;
  return {at, std::string(message)};
}

size_t JSONPositions::nestingTooDeep(std::string_view text, size_t maxDepth) {
  size_t depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"';) i += text[i] == '\\' ? 2 : 1;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth) return i;
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return npos;
}

std::pair<unsigned, unsigned> JSONPositions::lineCol(size_t offset) const {
  auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
  size_t line = size_t(it - lineStarts_.begin()); // lineStarts_[0] == 0, so line >= 1
  return {unsigned(line), unsigned(offset - lineStarts_[line - 1] + 1)};
}

size_t JSONPositions::top(const std::string &key) const {
  auto it = top_.find(key);
  return it == top_.end() ? 0 : it->second;
}

size_t JSONPositions::sub(const std::string &parent, const std::string &key) const {
  auto it = sub_.find(parent + '\0' + key);
  return it == sub_.end() ? top(parent) : it->second;
}

} // namespace tgc
