// Runtime/Memory.h: the memory tgc's tools give a model's tensors.
#include "Runtime/Memory.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>

#ifdef __linux__
#include <fstream>
#include <sstream>
#include <string>
#endif

namespace {

bool allZero(const void *p, int64_t bytes) {
  const auto *b = static_cast<const unsigned char *>(p);
  for (int64_t i = 0; i < bytes; ++i)
    if (b[i]) return false;
  return true;
}

#ifdef __linux__
// The kernel's advice flags for the mapping that holds p ("hg": MADV_HUGEPAGE), from /proc/self/smaps.
std::string vmFlagsOf(const void *p) {
  std::ifstream smaps("/proc/self/smaps");
  auto addr = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') inside = lo <= addr && addr < hi;
    else if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}
#endif

} // namespace

TEST_CASE("memory: tensors are zeroed, 64-byte aligned, big ones 2 MiB aligned with huge pages asked for") {
  for (int64_t bytes : {int64_t(0), int64_t(1), int64_t(100), int64_t(4) << 20, (int64_t(64) << 20) + 3}) {
    CAPTURE(bytes);
    void *p = tgc_alloc_tensor(bytes);
    REQUIRE(p != nullptr);
    auto addr = reinterpret_cast<uintptr_t>(p);
    CHECK(addr % 64 == 0);
    CHECK(allZero(p, bytes));
    std::memset(p, 0xab, size_t(bytes)); // the whole size is writable
    if (bytes >= (int64_t(4) << 20)) {
      CHECK(addr % (uintptr_t(2) << 20) == 0);
#ifdef __linux__
      // advice only (the system may grant ordinary pages), but asked for
      // wherever the kernel has transparent huge pages at all
      if (std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"))
        CHECK(vmFlagsOf(p).find(" hg") != std::string::npos);
#endif
    }
    tgc_free_tensor(p);
  }
  CHECK(tgc_alloc_tensor(-1) == nullptr);
  tgc_free_tensor(nullptr);
}
