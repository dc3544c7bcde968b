//===- KernelCache.h - compiled kernels kept on disk between runs -*- C++ -*-===//
//
// Machine code of single kernels, stored under the user's cache directory so
// that a second compile of a model — or of another model with a kernel in
// common — skips MLIR, LLVM's optimizer and code generation for it. An entry
// is a relocatable object holding one kernel (its function, its entry
// wrapper, its threaded body), named by a SHA-256 key over everything its
// machine code depends on: the kernel's optimized UOps and decisions, its
// symbol, the lowering options, the target (triple, CPU, features, opt level)
// and the identity of the tgc build itself (LowerKernels.cpp builds the key).
//
// Safe under concurrent tgc processes: an entry is written to a temporary
// file in the cache directory and renamed into place, so a reader sees a
// whole entry or none; each entry ends with the SHA-256 of its bytes, so a
// damaged file reads as a miss. Bounded: after a compile stores entries, the
// least recently used ones (by modification time, refreshed on every hit) are
// removed until the directory is back under its limit. Every failure to read
// or write is a miss, never an error: the cache only saves time.
//
// tinygrad's counterpart is its compile cache in a sqlite database
// (CACHELEVEL, diskcache_get/put), keyed by the rendered source.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tgc::codegen {

class KernelCache {
public:
  /// The default directory: $TGC_CACHE_DIR, else $XDG_CACHE_HOME/tgc/kernels,
  /// else $HOME/.cache/tgc/kernels; "" when none of them is set.
  static std::string defaultDirectory();
  static constexpr uint64_t kDefaultMaxBytes = uint64_t(1) << 30;

  /// The cache in `dir`, created if missing; nullptr with `why` set when the
  /// directory cannot be created or written, or tgc has no build identity.
  static std::unique_ptr<KernelCache> open(const std::string &dir, uint64_t maxBytes, std::string *why = nullptr);

  /// The object stored under `key` (a hex digest), if there is a whole one.
  std::optional<std::string> load(const std::string &key);
  /// Stores `object` under `key`, replacing any entry; a failure is ignored.
  void store(const std::string &key, std::string_view object);
  /// Removes the least recently used entries while the directory holds more
  /// than the limit (LowerKernels calls it once per compile that stored).
  void trim();

  const std::string &directory() const { return dir_; }
  uint64_t maxBytes() const { return maxBytes_; }
  unsigned hits() const { return hits_; }
  unsigned misses() const { return misses_; }

  /// The hex SHA-256 of `text`.
  static std::string digest(std::string_view text);
  /// What identifies this build of tgc's code generator: the executable's
  /// GNU build ID (a hash of the linked program, hex); "" if it has none.
  static const std::string &buildIdentity();

private:
  KernelCache(std::string dir, uint64_t maxBytes) : dir_(std::move(dir)), maxBytes_(maxBytes) {}
  std::string pathOf(const std::string &key) const;
  std::string dir_;
  uint64_t maxBytes_;
  unsigned hits_ = 0, misses_ = 0;
};

} // namespace tgc::codegen
