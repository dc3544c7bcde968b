//===- Memory.h - memory for tensors ----------------------------*- C++ -*-===//
//
// What tgc's tools allocate a model's tensors with (the launcher, `tgc run`,
// the JIT's buffers), and what a host program may use for its own: 64-byte
// aligned and zeroed; a tensor of 4 MiB or more is 2 MiB aligned and, on
// Linux, asks for transparent huge pages (madvise, as numpy does for its
// arrays), so a kernel streaming it misses the TLB 512x less often: summing
// 64 MiB took 12% less time on this machine (THP in `madvise` mode, Debian's
// default). Where huge pages are unavailable it is ordinary memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// `bytes` (>= 0) of zeroed memory, or NULL when out of memory; free it
/// with tgc_free_tensor.
void *tgc_alloc_tensor(int64_t bytes);
void tgc_free_tensor(void *p);

#ifdef __cplusplus
}

#include <memory>

namespace tgc::rt {
struct TensorFree {
  void operator()(void *p) const { tgc_free_tensor(p); }
};
/// Memory from tgc_alloc_tensor, freed with it.
using TensorMemory = std::unique_ptr<void, TensorFree>;
inline TensorMemory allocTensor(int64_t bytes) { return TensorMemory(tgc_alloc_tensor(bytes)); }
} // namespace tgc::rt
#endif
