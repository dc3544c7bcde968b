//===- Parallel.cpp - a small fork-join pool for tgc_parallel_for ---------===//
//
// One job at a time: the caller publishes (fn, ctx, n, generation), wakes the
// workers, takes chunks itself and waits until every index is done.
//
// Chunks are guided: each take is 1/(2 x threads) of what is left, but at
// least 1/(16 x threads) of the range, taken in order from a shared counter;
// that makes at most 9 chunks a thread (6 for long ranges). On a shared
// machine a core is often busy with someone else's work, and with one static
// chunk per thread (tinygrad's THREAD split) the kernel waited for that
// core's half (d1_mlp_forward swung 0.44x-6.2x of tinygrad's C kernels
// between runs); the other threads take its chunks, and the shrinking chunks
// leave only a small one for the last thread to finish alone (four equal
// chunks a thread cost conv2d_3x3 ~4%). The floor bounds what every chunk
// pays again: a kernel's tables are filled per chunk (ParallelLoop.cpp).
//
// Workers keep looking for the next job for kSpinTime (yielding the core to
// anyone else who wants it) before they sleep: waking a sleeping thread costs
// tens to hundreds of microseconds on a virtual machine, whose idle vCPU has
// halted, and the caller runs alone until it is up. 20 ms cover back-to-back
// kernels and an application preparing the next run's inputs (rewriting
// 64 MB takes ~7 ms here); with a 1 ms spin sum_16m's, matvec_4096's and
// conv2d_3x3's runs took 5-10% longer. OpenMP runtimes spin similarly
// (libgomp ~300k iterations, Intel's 200 ms).
//
//===----------------------------------------------------------------------===//
#include "Runtime/Parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace {

thread_local bool insideTask = false;

constexpr std::chrono::milliseconds kSpinTime{20};
// The counter holds a unit in its low 32 bits; a longer range is cut into
// this many units of consecutive indices.
constexpr int64_t kMaxUnits = int64_t(1) << 31;

class Pool {
public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
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
    int64_t units = std::min(n, kMaxUnits);
    Job job{fn, ctx, n, units, std::max<int64_t>(1, units / (16 * size_))};
    uint64_t gen;
    {
      std::lock_guard<std::mutex> l(m_);
      gen = generation_.load() + 1;
      job_ = job;
      next_.store(tagged(gen, 0), std::memory_order_relaxed);
      pending_.store(job.units, std::memory_order_relaxed);
      generation_.store(gen, std::memory_order_release);
    }
    cv_.notify_all();
    runChunks(job, gen);
    while (pending_.load(std::memory_order_acquire) > 0) std::this_thread::yield();
  }

private:
  struct Job {
    tgc_task_fn fn = nullptr;
    void *ctx = nullptr;
    int64_t n = 0;
    int64_t units = 0; ///< n, or kMaxUnits pieces of it
    int64_t minTake = 1; ///< the smallest chunk, in units
    /// The first index of unit u.
    int64_t index(int64_t u) const { return units == n ? u : int64_t((__int128)n * u / units); }
  };
  // The counter carries its job's generation in the high half: a worker
  // still looking for work in a finished job (its caller has returned, the
  // next job has started) sees another generation and takes nothing, where a
  // plain counter reset to 0 would hand it the new job's first chunk to run
  // with the old job's function and context.
  static uint64_t tagged(uint64_t gen, uint64_t unit) { return (gen << 32) | unit; }
  // Takes and runs chunks of job `gen` until none is left.
  void runChunks(const Job &j, uint64_t gen) {
    insideTask = true;
    uint64_t v = next_.load(std::memory_order_acquire);
    while ((v >> 32) == (gen & 0xffffffffu) && int64_t(v & 0xffffffffu) < j.units) {
      int64_t first = int64_t(v & 0xffffffffu);
      int64_t take = std::min(j.units - first, std::max((j.units - first) / (2 * size_), j.minTake));
      if (!next_.compare_exchange_weak(v, v + take, std::memory_order_acq_rel)) continue; // v reloaded
      j.fn(j.ctx, j.index(first), j.index(first + take));
      pending_.fetch_sub(take, std::memory_order_acq_rel);
      v = next_.load(std::memory_order_acquire);
    }
    insideTask = false;
  }
  void work() {
    uint64_t seen = 0;
    for (;;) {
      // Spin for kSpinTime, then sleep until the next job.
      auto spinEnd = std::chrono::steady_clock::now() + kSpinTime;
      for (int spin = 1; generation_.load(std::memory_order_acquire) == seen; ++spin) {
        std::this_thread::yield();
        if (spin % 64 == 0 && std::chrono::steady_clock::now() > spinEnd) break;
      }
      Job job;
      uint64_t gen;
      {
        // The job is read under the lock it was published under, together
        // with its generation, so a late worker never mixes two jobs.
        std::unique_lock<std::mutex> l(m_);
        cv_.wait(l, [&] { return generation_.load() != seen; });
        seen = gen = generation_.load();
        if (stop_) return;
        job = job_;
      }
      runChunks(job, gen);
    }
  }

  std::vector<std::thread> workers_;
  int size_ = 1;
  std::mutex jobMutex_, m_;
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> next_{0};  ///< tagged(generation, the next unit to take)
  std::atomic<int64_t> pending_{0}; ///< units of the current job not done yet
  bool stop_ = false;
  Job job_; ///< the current job (under m_)
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
