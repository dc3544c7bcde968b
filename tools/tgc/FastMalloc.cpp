//===- FastMalloc.cpp - mimalloc's settings for the tools that link it ----===//
//
// Linked into tgc and perf_bench with mimalloc (tgc_link_fast_malloc). A large
// schedule touches ~140 MB of fresh nodes, tables and vectors once: with 4 KiB
// pages that is ~15.7k page faults for k3, a tenth of its scheduling time.
// Asking mimalloc for 2 MiB pages (transparent huge pages, granted where the
// kernel allows madvise) here, after it has started, cuts them to ~9.9k;
// MIMALLOC_LARGE_OS_PAGES=1 in the environment, which mimalloc reads before
// its first segments, to ~2.7k. Where huge pages are refused mimalloc falls
// back to small ones, so this only ever changes speed. An explicit
// MIMALLOC_LARGE_OS_PAGES in the environment wins (=0 turns it off).
//
//===----------------------------------------------------------------------===//
#include <mimalloc.h>

#include <cstdlib>

namespace {
struct LargeOsPages {
  LargeOsPages() {
    if (!std::getenv("MIMALLOC_LARGE_OS_PAGES")) mi_option_enable(mi_option_large_os_pages);
  }
} largeOsPages;
} // namespace
