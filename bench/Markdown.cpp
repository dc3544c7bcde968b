//===- Markdown.cpp - perf_bench's results as a markdown page --------------===//
//
// docs/results.md is this file's output, not written by hand: the README and
// docs/performance.md quote it, so a figure there can always be traced to the
// command and the run that produced it (named in the page's header).
//
//===----------------------------------------------------------------------===//
#include "Sections.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

namespace tgc::bench {

namespace {

using Json = nlohmann::json;

const Json &rows(const Json &out, const char *section) {
  static const Json none = Json::array();
  return out.contains(section) ? out[section] : none;
}

/// A markdown table row from its cells.
std::string row(const std::vector<std::string> &cells) {
  std::string s = "|";
  for (const std::string &c : cells) s += " " + c + " |";
  return s + "\n";
}

/// The header row and the alignment row: numbers right-aligned after the first column, unless `text`.
std::string header(const std::vector<std::string> &cells, bool text = false) {
  std::string s = row(cells) + "|";
  for (size_t i = 0; i < cells.size(); ++i) s += i && !text ? "---:|" : "---|";
  return s + "\n";
}

/// A row that failed: its case and the error in place of its figures.
bool errorRow(std::ostringstream &s, const Json &r) {
  if (!r.contains("error")) return false;
  s << row({r["case"].get<std::string>(), "error: " + r["error"].get<std::string>()});
  return true;
}

std::string cpuModel() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string loadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string one;
  return f >> one ? one : "?";
}

std::string limitsTable(const Json &out) {
  const Json &lim = out["limits"];
  std::ostringstream s;
  int cores = lim.value("cores", 1);
  std::string when = lim.value("measured_when", std::string("before the sections"));
  s << "## Machine limits ("
    << (lim.value("measured", false) ? "measured in this run, " + when : "machine.json's best, not measured")
    << ")\n\n"
    << header({"limit", "1 thread", std::to_string(cores) + " threads"})
    << row({"FMA peak (AVX-512), GFLOPS", fmt(lim.value("fma_gflops_1t", 0.0), "%.1f"),
            fmt(lim.value("fma_gflops_all", 0.0), "%.1f")})
    << row({"streaming triad, GB/s", fmt(lim.value("triad_gbs_1t", 0.0), "%.1f"),
            fmt(lim.value("triad_gbs_all", 0.0), "%.1f")})
    << row({"streaming read (sum), GB/s", fmt(lim.value("read_gbs_1t", 0.0), "%.1f"),
            fmt(lim.value("read_gbs_all", 0.0), "%.1f")})
    << row({"core clock, GHz (512-bit FMAs a cycle)", fmt(lim.value("clock_ghz", 0.0), "%.2f") + " (" +
            fmt(lim.value("fma_per_cycle", 0.0), "%.2f") + ")", ""})
    << "\n`% of limit` below is of the all-core value of the row's `limit`: the FMA peak for compute-bound rows, the "
       "read for memory-bound rows that (nearly) only read, the triad otherwise; `cache`: the row's largest kernel fits "
       "in the last-level cache, so the row can beat a limit measured beyond it.\n\n";
  for (const Json &p : lim.value("problems", Json::array()))
    s << "**BAD LIMIT: " << p.get<std::string>() << ".**\n\n";
  std::vector<std::string> over = rowsOverLimit(out);
  if (!over.empty()) {
    s << "**BAD LIMIT: " << over.size() << " rows above 100% of their limit, which therefore does not hold for them "
      << "(measured under load, or not what bounds the row: a cache-resident kernel against a limit beyond cache):";
    for (const std::string &r : over) s << " " << r << ";";
    s << "**\n\n";
  }
  return s.str();
}

std::string targetsTable(const Json &out) {
  std::ostringstream s;
  s << "## Targets (issue #9)\n\n" << header({"target", "status", "measured"}, /*text=*/true);
  for (const Json &t : rows(out, "targets")) {
    const char *status = !t["measured"].get<bool>() ? "not measured" : t["met"].get<bool>() ? "met" : "**not met**";
    s << row({t["target"].get<std::string>(), status, t["value"].get<std::string>()});
  }
  return s.str() + "\n";
}

std::string perfTables(const Json &out) {
  const Json &perf = rows(out, "perf");
  if (perf.empty()) return "";
  std::ostringstream s;
  s << "## Perf cases beside tinygrad\n\n"
       "The kernels under test with every optimization (the last config), beside tinygrad's recorded kernel time; "
       "`exec x` compares the whole schedule.\n\n"
    << header({"case", "bound", "limit", "tinygrad ms", "tgc ms", "x tinygrad", "exec x", "GFLOPS", "GB/s", "% of limit",
               "sum err"});
  std::vector<std::string> configNames;
  for (const Json &r : perf) {
    if (errorRow(s, r)) continue;
    const Json &c = r["configs"].back();
    if (configNames.empty())
      for (const Json &ci : r["configs"]) configNames.push_back(ci["config"].get<std::string>());
    if (c.contains("error")) {
      s << row({r["case"].get<std::string>(), "error: " + c["error"].get<std::string>()});
      continue;
    }
    s << row({r["case"].get<std::string>(), r["bound"].get<std::string>(), c.value("limit", "-"),
              fmt(r["tinygrad"]["kernel_ms"].get<double>()), fmt(c["kernel_ms"].get<double>()),
              ratio(c["speedup_kernel"].get<double>()), ratio(c["speedup_exec"].get<double>()),
              fmt(c["gflops"].get<double>(), "%.1f"), fmt(c["gbs"].get<double>(), "%.1f"), rowLimitPercent(c),
              fmt(c.value("sum_rel_err", NAN), "%.0e")});
  }
  s << "\nThe same kernels' ms under each config; each adds one optimization to the one before (bench/README.md; "
       "`skipped`: too slow untiled):\n\n";
  std::vector<std::string> cols{"case"};
  cols.insert(cols.end(), configNames.begin(), configNames.end());
  s << header(cols);
  for (const Json &r : perf) {
    if (r.contains("error")) continue;
    std::vector<std::string> cells{r["case"].get<std::string>()};
    for (const Json &c : r["configs"])
      cells.push_back(c.contains("error") ? (c["error"] == "skipped" ? "skipped" : "error") : fmt(c["kernel_ms"].get<double>()));
    s << row(cells);
  }
  return s.str() + "\n";
}

std::string kernelTable(const Json &out) {
  const Json &kernels = rows(out, "kernels");
  if (kernels.empty()) return "";
  std::ostringstream s;
  s << "## Kernel cases (tgc's own graphs; no tinygrad time exists)\n\n"
    << header({"case", "group", "kernels", "ms", "GFLOPS", "GB/s", "limit", "% of limit"});
  for (const Json &r : kernels) {
    if (errorRow(s, r)) continue;
    s << row({r["case"].get<std::string>(), r["group"].get<std::string>(), std::to_string(r["kernels"].size()),
              fmt(r["kernel_ms"].get<double>(), "%.4f"), fmt(r["gflops"].get<double>(), "%.1f"),
              fmt(r["gbs"].get<double>(), "%.1f"), r.value("limit", "-"), rowLimitPercent(r)});
  }
  return s.str() + "\n";
}

std::string corpusTable(const Json &out) {
  const Json &corpus = rows(out, "corpus");
  if (corpus.empty()) return "";
  std::ostringstream s;
  s << "## Corpus models end to end\n\n"
       "tgc's warm run of the whole compiled schedule beside tinygrad's recorded run (Python dispatch included) and "
       "beside tinygrad's own C kernels compiled and run here (`tinygrad C`); `1st` is the first realize (read, "
       "schedule, compile, run).\n\n"
    << header({"model", "kernels", "tgc us", "tinygrad us", "x", "tinygrad C us", "x C", "tgc 1st ms", "tinygrad 1st ms"});
  std::vector<double> x, xc;
  for (const Json &r : corpus) {
    if (errorRow(s, r)) continue;
    double sx = r.value("speedup_exec", 0.0), sc = r.value("speedup_c", 0.0);
    if (sx > 0) x.push_back(sx);
    if (sc > 0) xc.push_back(sc);
    const Json &tgC = r.value("tinygrad_c", Json::object());
    s << row({r["case"].get<std::string>(), std::to_string(r["kernels"].get<size_t>()),
              fmt(1e3 * r["tgc_exec_ms"].get<double>(), "%.2f"), fmt(1e3 * r["tinygrad"]["exec_ms"].get<double>(), "%.1f"),
              ratio(sx), fmt(1e3 * tgC.value("exec_ms", 0.0), "%.2f"), ratio(sc),
              fmt(r["tgc_first_e2e_ms"].get<double>(), "%.1f"), fmt(r["tinygrad"]["realize_e2e_ms"].get<double>(), "%.1f")});
  }
  if (!x.empty())
    s << "\nMedian over " << x.size() << " models: " << ratio(median(x)) << " tinygrad's recorded run, " << ratio(median(xc))
      << " tinygrad's C kernels run here (" << xc.size() << " models).\n";
  return s.str() + "\n";
}

std::string compileTable(const Json &out) {
  const Json &compile = rows(out, "compile");
  if (compile.empty()) return "";
  std::ostringstream s;
  s << "## Compile time per graph\n\n"
       "`tgc schedule`: graph.json to the final schedule plus the memory plan (the span tinygrad's scheduling times "
       "cover), median of 5 in one process; `tgc compile`: that plus codegen to an object file. tinygrad: its recorded "
       "warm scheduling median, and cold scheduling + clang on every kernel (corpus only).\n\n"
    << header({"graph", "nodes", "tgc schedule ms", "tinygrad ms", "x", "tgc compile ms", "tinygrad + clang ms", "x"});
  for (const Json &r : compile) {
    if (errorRow(s, r)) continue;
    const Json &tg = r["tinygrad"];
    double tgAll = tg["compile_ms"].get<double>() > 0 ? tg["schedule_cold_ms"].get<double>() + tg["compile_ms"].get<double>() : 0;
    s << row({r["case"].get<std::string>(), std::to_string(r["nodes"].get<int64_t>()), fmt(r["tgc_schedule_ms"].get<double>()),
              fmt(tg["schedule_warm_ms"].get<double>(), "%.1f"), ratio(r.value("speedup_schedule", 0.0)),
              fmt(r["tgc_compile_ms"].get<double>(), "%.1f"), fmt(tgAll, "%.1f"), ratio(r.value("speedup_compile", 0.0))});
  }
  return s.str() + "\n";
}

} // namespace

std::string runDescription(int argc, char **argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  char date[64];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return "Written by `" + command + "` on " + date + ", " + cpuModel() + ", " +
         std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads, load average " + loadAverage() +
         " at the start.";
}

bool writeMarkdown(const nlohmann::json &out, const std::string &path, const std::string &description) {
  std::ofstream f(path);
  f << "# tgc performance results\n\n"
    << description << "\n\n"
    << "Every figure below is one run of `bench/perf_bench` on a machine shared with other work, so single rows move "
       "between runs; the limits measured in the same run are the reference for `% of limit`. Columns: "
       "[bench/README.md](../bench/README.md); what each optimization does: [performance.md](performance.md).\n\n";
  if (out.value("smoke", false)) f << "**Smoke run: tiny sizes, the figures mean nothing.**\n\n";
  f << limitsTable(out) << targetsTable(out) << perfTables(out) << kernelTable(out) << corpusTable(out)
    << compileTable(out);
  return bool(f);
}

} // namespace tgc::bench
