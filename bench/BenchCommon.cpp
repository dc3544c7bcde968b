//===- BenchCommon.cpp - timing, limits and kernel rates for perf_bench ----===//
#include "BenchCommon.h"

#include "IR/JSON.h"
#include "IR/Pass.h"
#include "IR/UOp.h"
#include "Runtime/Memory.h"
#include "Schedule/Estimates.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <immintrin.h>
#include <new>
#include <set>
#include <thread>
#include <time.h>

namespace tgc::bench {

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

namespace {

template <class F> void onThreads(int n, F &&f) {
  std::vector<std::thread> ts;
  for (int i = 1; i < n; ++i) ts.emplace_back([&, i] { f(i); });
  f(0);
  for (auto &t : ts) t.join();
}

// 12 independent FMA chains of 16 floats: enough to cover FMA latency x ports.
__attribute__((target("avx512f"))) float fmaAvx512(int64_t iters) {
  __m512 acc[12];
  for (int k = 0; k < 12; ++k) acc[k] = _mm512_set1_ps(float(k));
  __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < 12; ++k) acc[k] = _mm512_fmadd_ps(acc[k], m, a);
  __m512 s = acc[0];
  for (int k = 1; k < 12; ++k) s = _mm512_add_ps(s, acc[k]);
  return _mm512_reduce_add_ps(s);
}

// The calling thread's CPU time: a loop timed by it is not charged for the time other processes held its core.
double threadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

// Many short trials, best of them: on a shared machine some trial runs undisturbed.
constexpr int kComputeTrials = 15;

// Each thread's FMA rate by its own CPU time, summed over the threads: the cores' peak when they are ours.
double fmaGflops(int threads, int64_t iters) {
  double best = 0;
  for (int trial = 0; trial < kComputeTrials; ++trial) {
    std::vector<double> rate(threads);
    std::vector<float> sink(threads);
    onThreads(threads, [&](int i) {
      double t0 = threadCpuSeconds();
      sink[i] = fmaAvx512(iters);
      rate[i] = double(iters) * 12 * Limits::kFlopsPerFma512 / (threadCpuSeconds() - t0) / 1e9;
    });
    double sum = 0;
    for (double r : rate) sum += r;
    best = std::max(best, sum);
  }
  return best;
}

// The core clock: chains of dependent integer adds, one cycle each on every x86 core.
double clockGHz(int64_t iters) {
  double best = 0;
  for (int trial = 0; trial < kComputeTrials; ++trial) {
    uint64_t x = 0;
    double t0 = threadCpuSeconds();
    for (int64_t i = 0; i < iters; ++i)
      asm volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                   "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
    best = std::max(best, double(x) / (threadCpuSeconds() - t0) / 1e9);
  }
  return best;
}

// One pass of body over [0, n) split among the threads, in GB/s for `bytes`. Bandwidth is shared by the cores, so
// the pass is timed by the wall clock: per-thread CPU time would credit each thread with the whole memory bus while
// another waited.
template <class Body> double streamGBs(int threads, int64_t n, double bytes, Body &&body) {
  auto t0 = Clock::now();
  onThreads(threads, [&](int t) { body(n * t / threads, n * (t + 1) / threads); });
  return bytes / (msSince(t0) / 1e3) / 1e9;
}

// The sum of p[0, n) in 8 independent chains of 16-float adds: enough to cover the add latency at two loads a
// cycle, so the loop waits on memory, not on its adds. Each line is also prefetched 2 KiB ahead: the hardware
// prefetcher alone keeps too few lines of one stream in flight to fill the bus from one core.
__attribute__((target("avx512f"))) float sumAvx512(const float *p, int64_t n) {
  constexpr int kChains = 8, kStep = 16 * kChains, kAhead = 512;
  __m512 acc[kChains];
  for (__m512 &a : acc) a = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    for (int k = 0; k < kChains; ++k) _mm_prefetch(reinterpret_cast<const char *>(p + i + kAhead + 16 * k), _MM_HINT_T0);
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_add_ps(acc[k], _mm512_loadu_ps(p + i + 16 * k));
  }
  for (int k = 1; k < kChains; ++k) acc[0] = _mm512_add_ps(acc[0], acc[k]);
  float s = _mm512_reduce_add_ps(acc[0]);
  for (; i < n; ++i) s += p[i];
  return s;
}

struct StreamRates {
  double triad = 0, read = 0;
};

// n floats of the memory the kernels' buffers get (HostBuffers: tgc_alloc_tensor, in huge pages where the system
// grants them), all `value`: a rate measured in 4 KiB pages is up to ~12% below what the kernels reach.
struct Floats {
  rt::TensorMemory memory;
  float *p;
  Floats(int64_t n, float value) : memory(rt::allocTensor(n * int64_t(sizeof(float)))), p(static_cast<float *>(memory.get())) {
    if (!p) throw std::bad_alloc();
    std::fill(p, p + n, value);
  }
  float &operator[](int64_t i) { return p[i]; }
};

// The triad c = a + 3b over three arrays of n floats (STREAM's byte count, 3 x 4 bytes per element) and a sum of
// as many bytes, best of several trials each, the first discarded (it warms the TLBs). The two alternate, so a
// burst of load on the host lowers both rather than one, and limitProblems can compare them.
StreamRates streamRates(int threads, int64_t n) {
  constexpr int kTrials = 10;
  Floats a(n, 1.f), b(n, 2.f), c(n, 0.f), r(3 * n, 1.f);
  const double bytes = 3.0 * 4 * double(n);
  StreamRates best;
  for (int trial = 0; trial < kTrials; ++trial) {
    double triad = streamGBs(threads, n, bytes, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) c[i] = a[i] + 3.f * b[i];
    });
    double read = streamGBs(threads, 3 * n, bytes, [&](int64_t lo, int64_t hi) {
      float s = sumAvx512(r.p + lo, hi - lo);
      asm volatile("" : : "x"(s)); // the sum counts as used, so the loop stays
    });
    if (trial > 0) best.triad = std::max(best.triad, triad), best.read = std::max(best.read, read);
  }
  return best;
}

} // namespace

Limits measureLimits(int cores, double scale) {
  // A few ms a trial, for the FMA peak and for the clock alike.
  const int64_t iters = std::max<int64_t>(1000, int64_t(2'000'000 * scale));
  // 3 x 128 MiB: beyond any last-level cache this suite meets (105 MiB here).
  const int64_t n = std::max<int64_t>(1 << 16, int64_t(double(int64_t(1) << 25) * scale));
  Limits l;
  l.cores = cores;
  l.fma1 = fmaGflops(1, iters);
  l.fmaAll = fmaGflops(cores, iters);
  l.clockGHz = clockGHz(iters);
  StreamRates one = streamRates(1, n), all = streamRates(cores, n);
  l.triad1 = one.triad, l.read1 = one.read;
  l.triadAll = all.triad, l.readAll = all.read;
  return l;
}

bool readsBuffer(const UOp *sink) {
  std::vector<const UOp *> nodes = toposort(sink);
  std::set<const UOp *> storeTargets;
  for (const UOp *u : nodes)
    if (u->is(Op::STORE) && u->numSrc() == 2) storeTargets.insert(u->src(0));
  for (const UOp *u : nodes)
    if (u->is(Op::INDEX) && !storeTargets.count(u)) return true;
  return false;
}

KernelTiming timeKernelsUnderTest(const CompiledSchedule &cs, const HostBuffers &hb, int reps, double minSampleMs) {
  KernelTiming kt;
  const SchedulePlan &plan = cs.plan();
  for (const ScheduleCall &call : plan.calls) {
    if (call.kind != ScheduleCall::Kind::Kernel || !readsBuffer(plan.kernels[call.kernel].sink)) continue;
    std::vector<void *> args;
    std::vector<int64_t> argBytes;
    for (const ScheduleArg &a : call.args) {
      args.push_back(static_cast<char *>(hb.data(a.buffer)) + a.byteOffset);
      argBytes.push_back(a.bytes);
    }
    auto once = [&] { (void)cs.runKernel(size_t(call.kernel), args); };
    auto t0 = Clock::now();
    once();
    double first = msSince(t0);
    int inner = first > 0 ? int(std::clamp(minSampleMs / first, 1.0, 10000.0)) : 1;
    kt.kernelMs.push_back(medianMs(reps, once, inner));
    kt.ms += kt.kernelMs.back();
    sched::KernelEstimate est = sched::estimateKernel(plan.kernels[call.kernel].sink, argBytes);
    kt.flops += est.flops;
    kt.kernelBytes.push_back(est.bytesRead + est.bytesWritten);
    kt.bytes += kt.kernelBytes.back();
    kt.bytesRead += est.bytesRead;
    kt.bytesWritten += est.bytesWritten;
    kt.names.push_back(plan.kernels[call.kernel].name);
    ++kt.kernels;
  }
  return kt;
}

namespace {
// A row's `limit_value` and `frac_limit`: its rate (GFLOPS when compute-bound, else GB/s) over the all-core value
// of its `limit` in `lim`.
void setLimitFraction(nlohmann::json &r, const Limits &lim) {
  double value = lim.allCores(limitKindNamed(r["limit"].get<std::string>()));
  double rate = r.value("bound", "") == "compute" ? r.value("gflops", 0.0) : r.value("gbs", 0.0);
  r["limit_value"] = value;
  r["frac_limit"] = rate / value;
}
} // namespace

nlohmann::json rateFields(double flops, double bytes, double ms, const Limits &lim, bool compute, const KernelTiming &kt) {
  LimitKind kind = limitKind(compute, double(kt.bytesRead), double(kt.bytesWritten));
  int64_t largest = kt.kernelBytes.empty() ? 0 : *std::max_element(kt.kernelBytes.begin(), kt.kernelBytes.end());
  nlohmann::json r = {{"bound", compute ? "compute" : "memory"},
                      {"limit", limitName(kind)},
                      {"gflops", flops / ms / 1e6},
                      {"gbs", bytes / ms / 1e6},
                      {"bytes_read", kt.bytesRead},
                      {"bytes_written", kt.bytesWritten},
                      {"largest_kernel_bytes", largest},
                      {"cache_resident", cacheResident(kind, double(largest))}};
  setLimitFraction(r, lim);
  return r;
}

void rebaseLimits(nlohmann::json &out, const std::vector<std::string> &sections, const Limits &lim) {
  auto rebase = [&](nlohmann::json &r) {
    if (r.contains("frac_limit") && r.contains("limit") && r["limit"].is_string()) setLimitFraction(r, lim);
  };
  for (const std::string &section : sections) {
    if (!out.contains(section)) continue;
    for (nlohmann::json &row : out[section]) {
      rebase(row);
      if (row.contains("configs"))
        for (nlohmann::json &c : row["configs"]) rebase(c);
    }
  }
}

std::string rowLimitPercent(const nlohmann::json &row) {
  return limitPercent(row.value("frac_limit", 0.0), row.value("cache_resident", false));
}

nlohmann::json readJson(const std::filesystem::path &p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
}

Status runSchedulePipeline(Graph &g, double &ms) {
  auto pipeline = parsePipeline("schedule");
  if (!pipeline) return pipeline.error();
  auto t0 = Clock::now();
  Status s = runPipeline(g, *pipeline, PipelineOptions{});
  ms = msSince(t0);
  return s;
}

Result<Graph> readAndSchedule(Context &ctx, const std::filesystem::path &caseDir, double &ms) {
  Result<Graph> g = readGraphJSONFile(ctx, (caseDir / "graph.json").string());
  if (!g) return g;
  if (Status s = runSchedulePipeline(*g, ms); !s) return s.error();
  return g;
}

std::string fmt(double v, const char *spec) {
  if (!(v != 0) || std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

} // namespace tgc::bench
