//===- KernelCache.cpp - compiled kernels kept on disk between runs -------===//
#include "Codegen/Lower/KernelCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <filesystem>
#include <fstream>
#include <link.h>
#include <random>
#include <unistd.h>
#include <vector>

namespace tgc::codegen {

namespace fs = std::filesystem;

namespace {

constexpr size_t kDigestBytes = 32;   // the SHA-256 trailer of every entry
constexpr const char *kEntrySuffix = ".o";
constexpr const char *kTempPrefix = ".tmp-";
// A temporary file this old belongs to a process that died while writing it.
constexpr auto kStaleTemp = std::chrono::hours(1);

std::array<uint8_t, kDigestBytes> sha256(std::string_view bytes) {
  return llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
}

// The GNU build ID note of the main executable, as hex; "" if it has none.
std::string executableBuildId() {
  std::string id;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *out) -> int {
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          const char *p = reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr), *end = p + ph.p_memsz;
          while (p + sizeof(ElfW(Nhdr)) <= end) {
            auto *note = reinterpret_cast<const ElfW(Nhdr) *>(p);
            const char *name = p + sizeof(ElfW(Nhdr)), *desc = name + ((note->n_namesz + 3) & ~3u);
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
              *static_cast<std::string *>(out) = llvm::toHex(llvm::StringRef(desc, note->n_descsz), true);
              return 1;
            }
            p = desc + ((note->n_descsz + 3) & ~3u);
          }
        }
        return 1; // the first object is the executable: look no further
      },
      &id);
  return id;
}

std::string uniqueTempName() {
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  return std::string(kTempPrefix) + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(rd());
}

bool isEntry(const fs::directory_entry &e) {
  std::string name = e.path().filename().string();
  return name.size() > 2 && name.ends_with(kEntrySuffix) && name[0] != '.';
}

} // namespace

std::string KernelCache::defaultDirectory() {
  if (const char *d = std::getenv("TGC_CACHE_DIR"); d && *d) return d;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/tgc/kernels";
  if (const char *h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tgc/kernels";
  return "";
}

std::unique_ptr<KernelCache> KernelCache::open(const std::string &dir, uint64_t maxBytes, std::string *why) {
  if (buildIdentity().empty()) {
    if (why) *why = "this tgc executable has no GNU build ID (it was linked without --build-id), so its cached kernels "
                    "could not be told from another build's";
    return nullptr;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || ::access(dir.c_str(), W_OK | X_OK) != 0) {
    if (why) *why = "cannot use the kernel cache directory " + dir + (ec ? ": " + ec.message() : ": not writable");
    return nullptr;
  }
  return std::unique_ptr<KernelCache>(new KernelCache(dir, maxBytes));
}

std::string KernelCache::pathOf(const std::string &key) const { return dir_ + "/" + key + kEntrySuffix; }

std::optional<std::string> KernelCache::load(const std::string &key) {
  std::string path = pathOf(key);
  std::ifstream in(path, std::ios::binary);
  std::string bytes;
  if (in) bytes.assign(std::istreambuf_iterator<char>(in), {});
  if (bytes.size() <= kDigestBytes) {
    ++misses_;
    return std::nullopt;
  }
  std::string_view object(bytes.data(), bytes.size() - kDigestBytes);
  if (std::memcmp(sha256(object).data(), bytes.data() + object.size(), kDigestBytes) != 0) {
    ++misses_; // damaged: the compile that follows stores it again
    return std::nullopt;
  }
  ++hits_;
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec); // recently used
  bytes.resize(object.size());
  return bytes;
}

void KernelCache::store(const std::string &key, std::string_view object) {
  std::string temp = dir_ + "/" + uniqueTempName();
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    auto trailer = sha256(object);
    out.write(object.data(), std::streamsize(object.size()));
    out.write(reinterpret_cast<const char *>(trailer.data()), kDigestBytes);
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(temp, ec);
      return;
    }
  }
  // rename() replaces atomically: a concurrent reader opens the old entry or the new one.
  std::error_code ec;
  fs::rename(temp, pathOf(key), ec);
  if (ec) fs::remove(temp, ec);
}

void KernelCache::trim() {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    uint64_t bytes;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (const fs::directory_entry &e : fs::directory_iterator(dir_, ec)) {
    std::error_code ignored;
    auto used = e.last_write_time(ignored);
    if (ignored) continue; // removed by another process meanwhile
    if (e.path().filename().string().starts_with(kTempPrefix)) {
      if (now - used > kStaleTemp) fs::remove(e.path(), ignored);
      continue;
    }
    if (!isEntry(e)) continue;
    uint64_t bytes = e.file_size(ignored);
    if (ignored) continue;
    entries.push_back({e.path(), used, bytes});
    total += bytes;
  }
  if (total <= maxBytes_) return;
  // Down to 90% of the limit, so that the next compiles do not trim again at once.
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) { return a.used < b.used; });
  uint64_t target = maxBytes_ / 10 * 9;
  for (const Entry &e : entries) {
    if (total <= target) break;
    std::error_code ignored;
    fs::remove(e.path, ignored); // another process may have removed it first
    total -= e.bytes;
  }
}

std::string KernelCache::digest(std::string_view text) { return llvm::toHex(sha256(text), true); }

const std::string &KernelCache::buildIdentity() {
  static const std::string id = executableBuildId();
  return id;
}

} // namespace tgc::codegen
