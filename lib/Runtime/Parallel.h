//===- Parallel.h - the thread pool generated kernels run on ----*- C++ -*-===//
//
// The one entry point generated code calls for a parallel outer loop (the
// counterpart of tinygrad's CPU THREAD axis, which runs one global index per
// host thread): `fn(ctx, begin, end)` is called over disjoint chunks covering
// [0, n) and tgc_parallel_for returns when all have run. std-only, C linkage,
// so JIT-compiled modules resolve it from the process and object files link
// tgc_runtime. A host with its own threads installs a hook instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*tgc_task_fn)(void *ctx, int64_t begin, int64_t end);
typedef void (*tgc_parallel_for_fn)(tgc_task_fn fn, void *ctx, int64_t n);

/// Runs fn over [0, n) split into contiguous chunks that the calling thread
/// and the pool's take in order, each 1/(2 x threads) of what is left (at
/// least 1/(16 x threads) of n): at most 9 chunks a thread. Nested calls run
/// serially.
void tgc_parallel_for(tgc_task_fn fn, void *ctx, int64_t n);

/// Threads used by the built-in pool (>= 1); 0 = the core count (default).
void tgc_set_num_threads(int n);
int tgc_get_num_threads(void);

/// Replaces the built-in pool (nullptr restores it).
void tgc_set_parallel_for(tgc_parallel_for_fn hook);

#ifdef __cplusplus
}
#endif
