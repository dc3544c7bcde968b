//===- Sections.h - the parts of perf_bench's table --------------*- C++ -*-===//
//
// Each section prints its rows as it measures them and returns them as JSON
// (an array of row objects) for perf_bench.json; printTargets reads them back.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "BenchCommon.h"

namespace tgc::bench {

/// The kernel cases perf_bench owns (cases/KernelCases.h), all optimizations on all cores.
nlohmann::json runKernelSection(const BenchOptions &o, const Limits &lim);
/// /work/shared/perf's cases under each optimization config, beside tinygrad's times.
nlohmann::json runPerfSection(const BenchOptions &o, const Limits &lim);
/// Every corpus model that schedules: the compiled schedule run warm beside tinygrad's run.
nlohmann::json runCorpusSection(const BenchOptions &o);
/// Compile time per corpus (and perf) graph: the schedule passes and `tgc compile`'s work.
nlohmann::json runCompileSection(const BenchOptions &o);
/// Issue #9's four targets, from the rows of `out` (sections not run: "not measured").
nlohmann::json printTargets(const nlohmann::json &out);

/// Every row (kernel case, or perf case under a config) whose figure exceeds 100% of its limit: "case (config)",
/// followed by " (cache)" when the row is cache-resident.
std::vector<std::string> rowsOverLimit(const nlohmann::json &out);

/// The page header's line: the command, the date, the CPU, the threads and the load.
std::string runDescription(int argc, char **argv);
/// The rows of `out` as markdown tables (docs/results.md), under `description`; false if the file cannot be written.
bool writeMarkdown(const nlohmann::json &out, const std::string &path, const std::string &description);

/// The corpus (and perf) graph folders under `dir` whose meta.json says the graph schedules.
std::vector<std::filesystem::path> graphDirs(const std::string &dir, const std::string &filter);

} // namespace tgc::bench
