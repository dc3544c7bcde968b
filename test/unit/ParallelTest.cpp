// Runtime/Parallel.h: the pool generated threaded kernels call.
#include "Runtime/Parallel.h"

#include <doctest/doctest.h>

#include <atomic>
#include <vector>

namespace {

struct Visits {
  std::vector<std::atomic<int>> hits;
  std::atomic<int> chunks{0};
  std::atomic<int64_t> largest{0}; ///< the longest chunk
  explicit Visits(int64_t n) : hits(size_t(n)) {}
};

void visit(void *ctx, int64_t begin, int64_t end) {
  auto *v = static_cast<Visits *>(ctx);
  v->chunks.fetch_add(1);
  for (int64_t prev = v->largest.load(); end - begin > prev && !v->largest.compare_exchange_weak(prev, end - begin);) {
  }
  for (int64_t i = begin; i < end; ++i) v->hits[size_t(i)].fetch_add(1);
}

Visits *inner = nullptr;
void nested(void *ctx, int64_t begin, int64_t end) {
  // A task on the pool that calls tgc_parallel_for again runs the inner loop
  // on its own thread (one chunk), without deadlocking the pool.
  for (int64_t i = begin; i < end; ++i) tgc_parallel_for(visit, inner, 4);
  visit(ctx, begin, end);
}

int64_t hookCalls = 0, hookN = 0;
void hook(tgc_task_fn fn, void *ctx, int64_t n) {
  ++hookCalls;
  hookN = n;
  fn(ctx, 0, n);
}

} // namespace

TEST_CASE("parallel: every index runs exactly once, for any thread count and size") {
  for (int threads : {1, 2, 3, 5}) {
    tgc_set_num_threads(threads);
    CHECK(tgc_get_num_threads() == threads);
    for (int64_t n : {1, 2, 3, 7, 1000, 100003}) {
      CAPTURE(threads);
      CAPTURE(n);
      Visits v(n);
      for (int rep = 0; rep < 3; ++rep) tgc_parallel_for(visit, &v, n);
      int wrong = 0;
      for (auto &h : v.hits) wrong += h.load() != 3;
      CHECK(wrong == 0);
      // guided chunks, at most 9 a thread (one thread: one call); the first
      // is at most half of n (two threads split even a tiny range)
      if (threads == 1) CHECK(v.chunks.load() == 3);
      else CHECK(v.chunks.load() <= 3 * std::min<int64_t>(n, 9 * threads));
      if (threads > 1 && n > 1) CHECK(v.largest.load() <= (n + 1) / 2);
    }
  }
  Visits none(0);
  tgc_parallel_for(visit, &none, 0); // an empty range calls nothing
  CHECK(none.chunks.load() == 0);
  tgc_set_num_threads(0);
}

TEST_CASE("parallel: nested calls and a host hook") {
  tgc_set_num_threads(2);
  Visits v(64), in(4);
  inner = &in;
  tgc_parallel_for(nested, &v, 64);
  int wrong = 0;
  for (auto &h : v.hits) wrong += h.load() != 1;
  CHECK(wrong == 0);
  for (auto &h : in.hits) wrong += h.load() != 64;
  CHECK(wrong == 0);
  CHECK(in.chunks.load() == 64);

  tgc_set_parallel_for(hook);
  Visits w(10);
  tgc_parallel_for(visit, &w, 10);
  CHECK(hookCalls == 1);
  CHECK(hookN == 10);
  CHECK(w.chunks.load() == 1);
  tgc_set_parallel_for(nullptr);
  Visits x(10);
  tgc_parallel_for(visit, &x, 10);
  CHECK(hookCalls == 1);
  CHECK(x.chunks.load() == 8);
  tgc_set_num_threads(0);
}

TEST_CASE("parallel: back-to-back jobs never run a chunk of one job with another's function") {
  // A worker that finishes a job's last chunk can still be looking for more
  // when the caller returns and publishes the next job; it must take none of
  // the new job's chunks for the old one (the chunk counter carries the job).
  tgc_set_num_threads(3);
  Visits jobs[4] = {Visits(6), Visits(6), Visits(6), Visits(6)};
  for (int rep = 0; rep < 20000; ++rep) tgc_parallel_for(visit, &jobs[rep % 4], 6);
  int wrong = 0;
  for (auto &v : jobs)
    for (auto &h : v.hits) wrong += h.load() != 5000;
  CHECK(wrong == 0);
  tgc_set_num_threads(0);
}
