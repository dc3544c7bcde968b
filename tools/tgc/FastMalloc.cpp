//===- FastMalloc.cpp - mimalloc's settings for the tools that link it ----===//
//
// Linked into tgc and perf_bench with mimalloc (tgc_link_fast_malloc). A large
// schedule touches ~140 MB of fresh nodes, tables and vectors once: with 4 KiB
// pages that is ~7.2k page faults for k3's schedule and ~2.5k for reading its
// graph, at ~10 us each on this VM, a third of a cold schedule. So the tools
// ask mimalloc for 2 MiB pages (transparent huge pages, granted where the
// kernel allows madvise). Where huge pages are refused mimalloc falls back to
// small ones, so this only ever changes speed. An explicit
// MIMALLOC_LARGE_OS_PAGES in the environment wins (=0 turns it off).
//
// mimalloc reads that option when it maps a segment, and the first segment is
// mapped before this constructor runs (the C++ runtime allocates at start-up),
// so that one would keep its small pages and serve the graph read and most of
// the schedule. It is advised here too: mimalloc 2.x hands out small blocks
// from 32 MiB-aligned segments. Measured on k3 (fresh processes): read 42 ->
// 18 ms and 2481 -> 390 faults, schedule 126-152 -> 62-121 ms and 4633 -> 87
// faults. Should a mimalloc lay its segments out otherwise, madvise covers
// less or fails, which again costs only speed.
//
// Nor do the tools give freed memory back to the OS (mimalloc's decommit, an
// madvise a few milliseconds after a segment empties): a process that
// schedules or compiles several graphs, as perf_bench does, would fault its
// pages in again for each, and a huge page once more costs the kernel a
// compaction. k3's schedule after the 44 other corpus graphs had been compiled
// in the same process: 105.6 ms median (later samples 60-121) with decommit,
// 54-61 ms without, as in a fresh process. A tool's heap stays at its peak
// until it exits, which for a compiler is when it is done anyway.
// MIMALLOC_ALLOW_DECOMMIT in the environment wins.
//
//===----------------------------------------------------------------------===//
#include <mimalloc.h>

#include <cstdint>
#include <cstdlib>
#include <sys/mman.h>

namespace {
constexpr uintptr_t kSegmentBytes = uintptr_t(32) << 20;

struct MimallocSettings {
  MimallocSettings() {
    if (!std::getenv("MIMALLOC_ALLOW_DECOMMIT")) mi_option_disable(mi_option_allow_decommit);
    if (std::getenv("MIMALLOC_LARGE_OS_PAGES")) return;
    mi_option_enable(mi_option_large_os_pages);
    void *probe = mi_malloc(16);
    uintptr_t segment = reinterpret_cast<uintptr_t>(probe) & ~(kSegmentBytes - 1);
    (void)madvise(reinterpret_cast<void *>(segment), kSegmentBytes, MADV_HUGEPAGE);
    mi_free(probe);
  }
} mimallocSettings;
} // namespace
