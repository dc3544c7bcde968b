//===- FastMalloc.cpp - mimalloc's settings for the tools that link it ----===//
//
// Linked into tgc and perf_bench with mimalloc (tgc_link_fast_malloc). Two
// settings, both of which change only speed:
//
// 2 MiB pages. A large schedule touches ~140 MB of fresh memory once, and a
// 4 KiB page fault is expensive on a VM (k3's graph read: 2481 faults with
// small pages, 390 with huge ones). mimalloc falls back to small pages where
// huge ones are refused. Its first segment is mapped before this constructor
// runs (the C++ runtime allocates at start-up) and would keep small pages, so
// it is advised here too: mimalloc 2.x hands out small blocks from 32 MiB-
// aligned segments; with another layout the madvise covers less or fails.
// The advice comes too late for the segment's first 2 MiB, which already
// holds small pages: every other page of it would still fault in alone, ~250
// faults over reading k1 and scheduling it (~40 inside the schedule), most of
// the faults either makes. That range is collapsed into one huge page
// (MADV_COLLAPSE, Linux 6.1; where it fails nothing changes).
// mimalloc would also give every other thread's first segment small pages
// (eager_commit_delay): the segment a short-lived thread fills (the rule
// tables PassPreparation builds) is taken over by the main thread when that
// thread ends, and filled further in 4 KiB pages (k3's schedule: ~3,800
// faults). Without the delay every segment gets huge pages.
// MIMALLOC_LARGE_OS_PAGES in the environment wins (=0 turns it off).
//
// No decommit. A process that schedules or compiles several graphs (as
// perf_bench does) would otherwise fault the freed pages in again for each,
// with a compaction per huge page. A tool's heap stays at its peak until it
// exits, which for a compiler is when it is done anyway.
// MIMALLOC_ALLOW_DECOMMIT in the environment wins.
//
//===----------------------------------------------------------------------===//
#include <mimalloc.h>

#include <cstdint>
#include <cstdlib>
#include <sys/mman.h>

namespace {
constexpr uintptr_t kSegmentBytes = uintptr_t(32) << 20;
constexpr uintptr_t kHugePageBytes = uintptr_t(2) << 20;
#ifdef MADV_COLLAPSE
constexpr int kMadvCollapse = MADV_COLLAPSE;
#else
constexpr int kMadvCollapse = 25; // <asm-generic/mman-common.h>; glibc 2.36 does not name it
#endif

struct MimallocSettings {
  MimallocSettings() {
    if (!std::getenv("MIMALLOC_ALLOW_DECOMMIT")) mi_option_disable(mi_option_allow_decommit);
    if (std::getenv("MIMALLOC_LARGE_OS_PAGES")) return;
    mi_option_enable(mi_option_large_os_pages);
    mi_option_set(mi_option_eager_commit_delay, 0);
    void *probe = mi_malloc(16);
    uintptr_t segment = reinterpret_cast<uintptr_t>(probe) & ~(kSegmentBytes - 1);
    (void)madvise(reinterpret_cast<void *>(segment), kSegmentBytes, MADV_HUGEPAGE);
    (void)madvise(reinterpret_cast<void *>(segment), kHugePageBytes, kMadvCollapse);
    mi_free(probe);
  }
} mimallocSettings;
} // namespace
