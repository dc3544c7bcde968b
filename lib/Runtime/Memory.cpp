//===- Memory.cpp - memory for tensors ------------------------------------===//
#include "Runtime/Memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace {
constexpr size_t kAlign = 64;
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kHugeFrom = size_t(4) << 20; // numpy's threshold too
size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }
} // namespace

extern "C" void *tgc_alloc_tensor(int64_t bytes) {
  if (bytes < 0) return nullptr;
  // At least one aligned line: kernels may read element 0 under a false gate.
  size_t n = roundUp(std::max<size_t>(size_t(bytes), 1), kAlign);
  bool huge = n >= kHugeFrom;
  if (huge) n = roundUp(n, kHugePage);
  void *p = std::aligned_alloc(huge ? kHugePage : kAlign, n);
  if (!p) return nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (huge) (void)madvise(p, n, MADV_HUGEPAGE); // advice only: ordinary pages when refused
#endif
  std::memset(p, 0, n); // faults the pages in, huge where granted
  return p;
}

extern "C" void tgc_free_tensor(void *p) { std::free(p); }
