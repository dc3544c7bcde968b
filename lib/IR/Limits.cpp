//===- Limits.cpp - refuse graphs beyond the resource bounds ---------------===//
#include "IR/Limits.h"

#include <charconv>
#include <limits>
#include <string>

namespace tgc {

namespace {

std::string bytesStr(uint64_t n) {
  if (n == std::numeric_limits<uint64_t>::max()) return "at least 2^64 bytes";
  static constexpr const char *kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::string s = std::to_string(n) + (n == 1 ? " byte" : " bytes");
  int unit = -1;
  uint64_t whole = n;
  while (whole >= 1024 && whole % 1024 == 0 && unit < 5) whole /= 1024, ++unit;
  if (unit >= 0) s += " (" + std::to_string(whole) + " " + kUnits[unit] + ")";
  return s;
}

} // namespace

std::optional<uint64_t> bufferBytes(const UOp *buffer) {
  const Shape *shape = buffer->shape();
  if (!shape || !buffer->dtype()) return std::nullopt;
  uint64_t bytes = uint64_t(buffer->dtype().info().itemsize());
  for (const Dim &d : *shape) {
    if (!d.isStatic() || d.value < 0) return std::nullopt;
    if (__builtin_mul_overflow(bytes, uint64_t(d.value), &bytes)) return std::numeric_limits<uint64_t>::max();
  }
  return bytes;
}

Status checkNodeLimit(const Graph &g, uint64_t maxNodes) {
  if (g.roots.empty()) return Status::success();
  // Every node of the document lives in the roots' context; its size is the
  // count without a walk.
  size_t nodes = g.roots.front()->context().size();
  if (nodes <= maxNodes) return Status::success();
  return Diagnostic(Location{g.path, 0, 0, -1},
                    "the graph has " + std::to_string(nodes) + " nodes, more than the limit of " + std::to_string(maxNodes));
}

Status checkBufferLimit(const Graph &g, uint64_t maxBytes) {
  // Every BUFFER counts once, whether the graph uses it or only the buffer table names it.
  std::vector<const UOp *> all = g.roots;
  for (const BufferFile &b : g.buffers)
    if (b.node) all.push_back(b.node);
  ToposortOptions opts;
  opts.argRefs = true;
  uint64_t total = 0, largestBytes = 0;
  const UOp *largest = nullptr;
  for (const UOp *u : toposort(all, opts)) {
    if (!u->is(Op::BUFFER)) continue;
    std::optional<uint64_t> bytes = bufferBytes(u);
    if (!bytes) continue; // symbolic or ill-formed sizes: the verifier's business
    if (__builtin_add_overflow(total, *bytes, &total)) total = std::numeric_limits<uint64_t>::max();
    if (!largest || *bytes > largestBytes) largest = u, largestBytes = *bytes;
  }
  if (total <= maxBytes) return Status::success();
  Diagnostic d = Diagnostic::at(largest, "the graph's buffers need " + bytesStr(total) +
                                             ", more than the memory limit of " + bytesStr(maxBytes));
  d.notes.push_back("the largest, a BUFFER " + std::string(largest->dtype().name()) + " of shape " +
                    shapeStr(*largest->shape()) + ", needs " + bytesStr(largestBytes));
  return d;
}

Status checkResourceLimits(const Graph &g, const ResourceLimits &limits) {
  if (Status st = checkNodeLimit(g, limits.maxNodes); !st.ok()) return st;
  return checkBufferLimit(g, limits.maxBufferBytes);
}

std::optional<uint64_t> parseByteSize(std::string_view text) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  std::string_view suffix(end, size_t(text.data() + text.size() - end));
  static constexpr std::pair<std::string_view, int> kSuffixes[] = {
      {"", 0},    {"B", 0},   {"K", 10},  {"KiB", 10}, {"M", 20},
      {"MiB", 20}, {"G", 30}, {"GiB", 30}, {"T", 40},   {"TiB", 40}};
  for (const auto &[name, shift] : kSuffixes) {
    if (suffix != name) continue;
    if (shift && n > (std::numeric_limits<uint64_t>::max() >> shift)) return std::nullopt;
    return n << shift;
  }
  return std::nullopt;
}

} // namespace tgc
