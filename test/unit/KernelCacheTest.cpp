//===- KernelCacheTest.cpp - the on-disk cache of compiled kernels --------===//
//
// The store itself: whole entries or none, damage read as a miss, the size
// bound by least recent use, concurrent writers. That a compile reuses what
// it finds is CorpusModelTest's "compiled again from the kernel cache" (every
// corpus case) and test/lit/run/kernel-cache.test (tgc run and compile).
//
//===----------------------------------------------------------------------===//
#include "Codegen/Lower/KernelCache.h"

#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>
#include <vector>

using tgc::codegen::KernelCache;
namespace fs = std::filesystem;

namespace {

// A fresh directory for one test, removed after it.
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string &name)
      : path(fs::temp_directory_path() / ("tgc-kernel-cache-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
  }
  ~ScratchDir() { fs::remove_all(path); }
};

std::unique_ptr<KernelCache> openCache(const fs::path &dir, uint64_t maxBytes = KernelCache::kDefaultMaxBytes) {
  std::string why;
  std::unique_ptr<KernelCache> cache = KernelCache::open(dir.string(), maxBytes, &why);
  INFO(why);
  REQUIRE(cache);
  return cache;
}

std::vector<fs::path> entries(const fs::path &dir) {
  std::vector<fs::path> out;
  for (const auto &e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

} // namespace

TEST_CASE("kernel cache: the executable has a build identity, and keys are SHA-256 digests") {
  CHECK_FALSE(KernelCache::buildIdentity().empty());
  // FIPS 180-2's example "abc"
  CHECK(KernelCache::digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("kernel cache: what is stored loads back byte for byte; an unknown key is a miss") {
  ScratchDir dir("roundtrip");
  auto cache = openCache(dir.path / "nested" / "kernels"); // created with its parents
  std::string object("\x7f" "ELF\0 some machine code\n", 24);
  cache->store(KernelCache::digest("k1"), object);
  std::optional<std::string> got = cache->load(KernelCache::digest("k1"));
  REQUIRE(got);
  CHECK(*got == object);
  CHECK_FALSE(cache->load(KernelCache::digest("k2")));
  CHECK(cache->hits() == 1);
  CHECK(cache->misses() == 1);
  // Another cache object on the same directory (another process) sees the entry.
  CHECK(openCache(dir.path / "nested" / "kernels")->load(KernelCache::digest("k1")) == object);
}

TEST_CASE("kernel cache: a damaged or truncated entry reads as a miss, and storing again repairs it") {
  ScratchDir dir("damage");
  auto cache = openCache(dir.path);
  std::string key = KernelCache::digest("kernel"), object(4096, 'x');
  cache->store(key, object);
  std::vector<fs::path> files = entries(dir.path);
  REQUIRE(files.size() == 1);
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('y');
  }
  CHECK_FALSE(cache->load(key));
  cache->store(key, object);
  CHECK(cache->load(key) == object);
  fs::resize_file(files[0], 2000);
  CHECK_FALSE(cache->load(key));
  fs::resize_file(files[0], 0);
  CHECK_FALSE(cache->load(key));
}

TEST_CASE("kernel cache: trim removes the least recently used entries down to the bound") {
  ScratchDir dir("trim");
  // Each entry takes 1000 bytes + its 32-byte digest; room for 5 of them.
  auto cache = openCache(dir.path, 5 * 1032);
  auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 8; ++i) {
    std::string key = KernelCache::digest("k" + std::to_string(i));
    cache->store(key, std::string(1000, char('a' + i)));
    // k0 is the oldest, k7 the newest
    fs::last_write_time(dir.path / (key + ".o"), now - std::chrono::minutes(60 - i));
  }
  // A hit makes k1 recent.
  REQUIRE(cache->load(KernelCache::digest("k1")));
  cache->trim();
  uint64_t total = 0;
  for (const fs::path &p : entries(dir.path)) total += fs::file_size(p);
  CHECK(total <= 5 * 1032);
  CHECK(cache->load(KernelCache::digest("k1")));
  CHECK(cache->load(KernelCache::digest("k7")));
  CHECK_FALSE(cache->load(KernelCache::digest("k0")));
  CHECK_FALSE(cache->load(KernelCache::digest("k2")));
}

TEST_CASE("kernel cache: concurrent writers of one key never leave a mixed, partial or missing entry") {
  ScratchDir dir("concurrent");
  auto cache = openCache(dir.path);
  std::string key = KernelCache::digest("shared kernel");
  constexpr size_t kBytes = 1 << 20; // several system calls per write
  cache->store(key, std::string(kBytes, 'a'));
  std::atomic<int> running{4};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      auto mine = openCache(dir.path); // each its own cache, as separate processes would be
      for (int r = 0; r < 20; ++r) mine->store(key, std::string(kBytes, char('b' + w)));
      --running;
    });
  // While they write, every read finds a whole entry: the old one or a new one.
  int reads = 0, whole = 0;
  while (running > 0 || reads < 10) {
    std::optional<std::string> got = cache->load(key);
    ++reads;
    whole += got && got->size() == kBytes && got->find_first_not_of(got->front()) == std::string::npos;
  }
  for (std::thread &t : writers) t.join();
  CHECK(whole == reads);
  // No temporary file is left behind.
  CHECK(entries(dir.path).size() == 1);
}

TEST_CASE("kernel cache: a directory that cannot be created is refused with the reason") {
  ScratchDir dir("refused");
  fs::create_directories(dir.path);
  std::ofstream(dir.path / "file") << "not a directory";
  std::string why;
  CHECK_FALSE(KernelCache::open((dir.path / "file" / "kernels").string(), 1 << 20, &why));
  CHECK(why.find("cannot use the kernel cache directory") != std::string::npos);
}
