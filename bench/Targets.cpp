//===- Targets.cpp - issue #9's four targets, met or not ------------------===//
#include "Sections.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

namespace tgc::bench {

namespace {

struct Target {
  std::string name, value;
  bool measured = false, met = false;
};

const nlohmann::json &rowsOf(const nlohmann::json &out, const char *section) {
  static const nlohmann::json none = nlohmann::json::array();
  return out.contains(section) ? out[section] : none;
}

/// Elementwise and reductions beyond the cache: every such kernel case at >= 80% of its all-core limit (the
/// read bandwidth for reductions to a scalar, the triad for kernels that write as much as they read).
Target bandwidth(const nlohmann::json &out) {
  Target t{"elementwise and reductions >= 80% of the measured streaming bandwidth beyond cache", ""};
  double worst = INFINITY;
  for (const auto &r : rowsOf(out, "kernels")) {
    if (!r.value("beyond_cache", false) || (r["group"] != "elementwise" && r["group"] != "reduce")) continue;
    if (r.contains("error")) {
      t.value += r["case"].get<std::string>() + " error; ";
      worst = 0;
      continue;
    }
    double f = r["frac_limit"].get<double>();
    worst = std::min(worst, f);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s %s of %s; ", r["case"].get<std::string>().c_str(), rowLimitPercent(r).c_str(),
                  r.value("limit", "-").c_str());
    t.value += buf;
  }
  t.measured = std::isfinite(worst);
  t.met = t.measured && worst >= 0.8;
  return t;
}

/// Matmul 512^3 and 1024^3 (the perf cases) on all cores at >= 50% of the all-core FMA peak.
Target matmul(const nlohmann::json &out) {
  Target t{"f32 matmul 512^3 and 1024^3 on both cores >= 50% of the measured both-core FMA peak", ""};
  int found = 0;
  bool all = true;
  for (const auto &r : rowsOf(out, "perf")) {
    if (r["case"] != "matmul_512" && r["case"] != "matmul_1024") continue;
    if (r.contains("error") || !r.contains("configs") || r["configs"].back().contains("error")) {
      t.value += r["case"].get<std::string>() + " error; ";
      all = false;
      continue;
    }
    const auto &c = r["configs"].back();
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s %.0f GFLOPS = %s; ", r["case"].get<std::string>().c_str(), c["gflops"].get<double>(),
                  rowLimitPercent(c).c_str());
    t.value += buf;
    all &= c["frac_limit"].get<double>() >= 0.5;
    ++found;
  }
  t.measured = found == 2;
  t.met = t.measured && all;
  return t;
}

/// Corpus models end to end: the median of tinygrad's run time / tgc's.
Target corpus(const nlohmann::json &out) {
  Target t{"corpus models end to end: median >= 3x faster than tinygrad", ""};
  std::vector<double> s, c;
  for (const auto &r : rowsOf(out, "corpus")) {
    if (r.contains("speedup_exec")) s.push_back(r["speedup_exec"].get<double>());
    if (r.contains("speedup_c")) c.push_back(r["speedup_c"].get<double>());
  }
  if (s.empty()) return t;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "median %.2fx over %zu models vs tinygrad's recorded run (Python dispatch included); "
                "%.2fx over %zu vs tinygrad's kernels compiled and run here from C",
                median(s), s.size(), median(c), c.size());
  t.value = buf;
  t.measured = true;
  t.met = median(s) >= 3;
  return t;
}

/// Scheduling on the largest corpus graph (by node count): tinygrad's warm
/// scheduling median / the median of tgc's 5 runs (CorpusBench.cpp).
Target scheduling(const nlohmann::json &out) {
  Target t{"scheduling >= 100x faster than tinygrad's recorded time on the largest corpus graph", ""};
  const nlohmann::json *largest = nullptr;
  for (const auto &r : rowsOf(out, "compile")) {
    if (!r.value("corpus", false)) continue;
    if (!largest || r.value("nodes", int64_t(0)) > (*largest).value("nodes", int64_t(0))) largest = &r;
  }
  if (!largest || !largest->contains("speedup_schedule")) return t;
  double x = (*largest)["speedup_schedule"].get<double>();
  // The spread of the schedules after the first says how much the host moved during the run.
  std::vector<double> later = largest->value("tgc_schedule_samples_ms", std::vector<double>{});
  if (!later.empty()) later.erase(later.begin());
  for (double &ms : later) ms += largest->value("tgc_plan_ms", 0.0);
  auto [lo, hi] = later.empty() ? std::pair{0.0, 0.0} : std::pair{*std::min_element(later.begin(), later.end()),
                                                                   *std::max_element(later.begin(), later.end())};
  char buf[320];
  const nlohmann::json &tg = (*largest)["tinygrad"];
  std::snprintf(buf, sizeof buf, "%s (%lld nodes): %.1f ms (schedule + memory plan, medians of 5; first %.1f, "
                "later schedules %.1f-%.1f) vs %.1f ms warm (%.1f cold) = %.1fx",
                (*largest)["case"].get<std::string>().c_str(), (long long)(*largest)["nodes"].get<int64_t>(),
                (*largest)["tgc_schedule_ms"].get<double>(), largest->value("tgc_schedule_first_ms", 0.0), lo, hi,
                tg["schedule_warm_ms"].get<double>(), tg["schedule_cold_ms"].get<double>(), x);
  t.value = buf;
  t.measured = true;
  t.met = x >= 100;
  return t;
}

} // namespace

std::vector<std::string> rowsOverLimit(const nlohmann::json &out) {
  std::vector<std::string> over;
  auto cache = [](const nlohmann::json &r) { return r.value("cache_resident", false) ? " (cache)" : ""; };
  for (const auto &r : rowsOf(out, "kernels"))
    if (overLimit(r.value("frac_limit", 0.0))) over.push_back(r["case"].get<std::string>() + cache(r));
  for (const auto &r : rowsOf(out, "perf"))
    for (const auto &c : r.value("configs", nlohmann::json::array()))
      if (overLimit(c.value("frac_limit", 0.0)))
        over.push_back(r["case"].get<std::string>() + " (" + c["config"].get<std::string>() + ")" + cache(c));
  return over;
}

nlohmann::json printTargets(const nlohmann::json &out) {
  std::vector<Target> targets{bandwidth(out), matmul(out), corpus(out), scheduling(out)};
  nlohmann::json rows = nlohmann::json::array();
  std::printf("\ntargets (issue #9)\n");
  for (const Target &t : targets) {
    const char *status = !t.measured ? "not measured" : t.met ? "met" : "NOT met";
    std::printf("  %-13s %s\n  %13s %s\n", status, t.name.c_str(), "", t.value.empty() ? "(section not run)" : t.value.c_str());
    rows.push_back({{"target", t.name}, {"value", t.value}, {"measured", t.measured}, {"met", t.met}});
  }
  return rows;
}

} // namespace tgc::bench
