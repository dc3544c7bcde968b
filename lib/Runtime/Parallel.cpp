//===- Parallel.cpp - a small fork-join pool for tgc_parallel_for ---------===//
//
// One job at a time: the caller publishes (fn, ctx, n, generation), wakes the
// workers, runs chunk 0 itself and waits until every worker has finished its
// chunk. Workers spin briefly before sleeping so back-to-back kernels do not
// pay a futex wake-up each. Chunks are static and contiguous (tinygrad's
// THREAD axis splits the same way), which keeps each thread on its own rows.
//
//===----------------------------------------------------------------------===//
#include "Runtime/Parallel.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace {

thread_local bool insideTask = false;

class Pool {
public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
    size_ = threads;
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
      ++generation_;
    }
    cv_.notify_all();
    for (std::thread &t : workers_) t.join();
  }
  int size() const { return size_; }

  void run(tgc_task_fn fn, void *ctx, int64_t n) {
    std::lock_guard<std::mutex> serial(jobMutex_); // one job at a time (callers from several threads)
    int parts = int(std::min<int64_t>(n, size_));
    {
      std::lock_guard<std::mutex> l(m_);
      fn_ = fn, ctx_ = ctx, n_ = n, parts_ = parts;
      pending_.store(parts - 1, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    runChunk(Job{fn, ctx, n, parts}, 0);
    while (pending_.load(std::memory_order_acquire) > 0) std::this_thread::yield();
  }

private:
  struct Job {
    tgc_task_fn fn;
    void *ctx;
    int64_t n;
    int parts;
  };
  static void runChunk(const Job &j, int i) {
    int64_t b = j.n * i / j.parts, e = j.n * (i + 1) / j.parts;
    insideTask = true;
    j.fn(j.ctx, b, e);
    insideTask = false;
  }
  void work(int i) {
    uint64_t seen = 0;
    for (;;) {
      // Spin a little, then sleep until the next job.
      for (int spin = 0; spin < 2000 && generation_.load(std::memory_order_acquire) == seen; ++spin)
        std::this_thread::yield();
      Job job;
      {
        // The job is read under the lock it was published under, together
        // with its generation, so a late worker never mixes two jobs.
        std::unique_lock<std::mutex> l(m_);
        cv_.wait(l, [&] { return generation_.load() != seen; });
        seen = generation_.load();
        if (stop_) return;
        job = Job{fn_, ctx_, n_, parts_};
      }
      if (i < job.parts) {
        runChunk(job, i);
        pending_.fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  }

  std::vector<std::thread> workers_;
  int size_ = 1;
  std::mutex jobMutex_, m_;
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  bool stop_ = false;
  tgc_task_fn fn_ = nullptr;
  void *ctx_ = nullptr;
  int64_t n_ = 0;
  int parts_ = 0;
};

std::mutex poolMutex;
Pool *pool = nullptr;
int requested = 0;
std::atomic<tgc_parallel_for_fn> hookFn{nullptr};

int coreCount() {
  unsigned c = std::thread::hardware_concurrency();
  return c ? int(c) : 1;
}

Pool &getPool() {
  std::lock_guard<std::mutex> l(poolMutex);
  if (!pool) pool = new Pool(requested > 0 ? requested : coreCount()); // lives for the process
  return *pool;
}

} // namespace

extern "C" void tgc_parallel_for(tgc_task_fn fn, void *ctx, int64_t n) {
  if (n <= 0) return;
  if (tgc_parallel_for_fn h = hookFn.load()) return h(fn, ctx, n);
  if (insideTask || n == 1) return fn(ctx, 0, n);
  Pool &p = getPool();
  if (p.size() == 1) return fn(ctx, 0, n);
  p.run(fn, ctx, n);
}

extern "C" void tgc_set_num_threads(int n) {
  std::lock_guard<std::mutex> l(poolMutex);
  requested = n > 0 ? n : 0;
  int want = requested > 0 ? requested : coreCount();
  if (pool && pool->size() != want) {
    delete pool;
    pool = nullptr;
  }
}

extern "C" int tgc_get_num_threads(void) {
  std::lock_guard<std::mutex> l(poolMutex);
  return pool ? pool->size() : (requested > 0 ? requested : coreCount());
}

extern "C" void tgc_set_parallel_for(tgc_parallel_for_fn hook) { hookFn.store(hook); }
