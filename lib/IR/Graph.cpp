//===- Graph.cpp ----------------------------------------------------------===//
#include "IR/Graph.h"

#include <charconv>

namespace tgc {

const UOp *Graph::root(std::string_view key) const {
  for (size_t i = 0; i < roots.size(); ++i)
    if (i < rootNames.size() && rootNames[i] == key) return roots[i];
  size_t idx = 0;
  auto [p, ec] = std::from_chars(key.data(), key.data() + key.size(), idx);
  if (ec == std::errc() && p == key.data() + key.size() && idx < roots.size()) return roots[idx];
  return nullptr;
}

} // namespace tgc
