//===- Graph.cpp ----------------------------------------------------------===//
#include "IR/Graph.h"

#include <charconv>
#include <filesystem>

namespace tgc {

const UOp *Graph::root(std::string_view key) const {
  for (size_t i = 0; i < roots.size(); ++i)
    if (i < rootNames.size() && rootNames[i] == key) return roots[i];
  size_t idx = 0;
  auto [p, ec] = std::from_chars(key.data(), key.data() + key.size(), idx);
  if (ec == std::errc() && p == key.data() + key.size() && idx < roots.size()) return roots[idx];
  return nullptr;
}

std::string Graph::dataPathFrom(const std::string &file, const std::string &outputDir) const {
  namespace fs = std::filesystem;
  if (outputDir.empty() || file.empty()) return file;
  fs::path target = fs::path(file).is_absolute() ? fs::path(file) : fs::path(baseDir.empty() ? "." : baseDir) / file;
  std::error_code ec;
  fs::path rel = fs::relative(target, outputDir, ec);
  if (ec || rel.empty()) return fs::absolute(target, ec).lexically_normal().string();
  return rel.string();
}

} // namespace tgc
