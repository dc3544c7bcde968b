//===- Driver.h - shared pieces of tgc's subcommands ------------*- C++ -*-===//
#pragma once

#include "Codegen/Opt/KernelOptions.h"
#if TGC_ENABLE_CODEGEN
#include "Codegen/Lower/KernelCache.h"
#endif
#include "IR/Diagnostic.h"
#include "IR/Graph.h"
#include "IR/Limits.h"
#include "Schedule/Grad.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tgc::driver {

/// Exit codes scripts can rely on (documented in --help and the README).
enum ExitCode : int {
  kSuccess = 0,
  kFailure = 1, ///< bad input, a failed pass, an unschedulable graph
  kUsage = 2,   ///< bad command line
};

enum class Format { Auto, JSON, Text };

/// One input document ready for the passes (a whole file, or one chunk of a
/// --split-input-file text).
struct InputChunk {
  std::string_view text;
  unsigned lineOffset = 0;
};

/// Prints a diagnostic to stderr LLVM-style.
void report(const Diagnostic &d);
/// Reads path ("-" = stdin) and decides its format from the extension or content.
Result<std::string> readInput(const std::string &path);
Format detectFormat(const std::string &path, std::string_view text);
/// The form a --format value ("auto", "json", "text") means for `path` holding `text`.
Format formatFor(const std::string &option, const std::string &path, std::string_view text);
/// Adds --format (auto, json, text) to a subcommand.
void addFormatOption(CLI::App *cmd, std::string &format);
/// Parses one document into g. `rootSel` keeps only that root when non-empty.
/// A graph beyond `limits` is refused (before any pass sees it). The reader's
/// warnings are printed here, so every command that reads a document shows them.
Status parseDocument(Context &ctx, const std::string &path, Format fmt, const InputChunk &chunk,
                     const std::string &rootSel, Graph &g, const ResourceLimits &limits = {});
/// Reads and parses the whole document at `path` (format "auto", "json" or
/// "text"; --root selection and limits as parseDocument), for the commands
/// that take one model.
Status loadDocument(Context &ctx, const std::string &path, const std::string &format, const std::string &rootSel,
                    const ResourceLimits &limits, Graph &g);
/// Adds --max-nodes and --max-memory, which set `limits`.
void addLimitOptions(CLI::App *cmd, ResourceLimits &limits);
/// Adds option `name` taking a byte count such as 4096 or 64GiB (parseByteSize,
/// at most `max`) into `bytes`; `defaultText` is what --help shows as its default.
void addByteSizeOption(CLI::App *cmd, const std::string &name, uint64_t &bytes, const std::string &help,
                       const std::string &defaultText, uint64_t max = UINT64_MAX);

/// --grad/--wrt: gradients of an output added as extra outputs (docs/grad.md).
struct GradOptions {
  std::string grad, wrt;
};
/// Adds --grad and --wrt; `wrtEffect` says what the command does with the gradients.
void addGradOptions(CLI::App *cmd, GradOptions &o, const std::string &wrtEffect);
/// The request --grad/--wrt spell (nullopt if neither is given); a bad
/// spelling is printed as "tgc <command>: error: ..." and gives false.
bool gradRequest(const GradOptions &o, const char *command, std::optional<GradRequest> &req);

/// --threads, --strict-fp, --libm-transcendentals and --disable-opt, shared by run and compile.
struct KernelFlags {
  int threads = 0;       ///< 0 = the core count; 1 = serial code
  bool strictFP = false; ///< keep tinygrad's order in float reductions
  bool libmTranscendentals = false; ///< EXP2/LOG2/SIN as libm calls, not the vectorizable polynomials
  std::vector<std::string> disabled; ///< kernel optimizations turned off, by name
};
void addKernelFlags(CLI::App *cmd, KernelFlags &f, const std::string &threadsMeaning);
/// The kernel optimizations the flags leave on.
codegen::KernelOptions kernelOptions(const KernelFlags &f);

#if TGC_ENABLE_CODEGEN
/// --no-cache, --cache-dir and --cache-size, shared by run and compile.
struct CacheFlags {
  bool disabled = false;
  std::string dir;                                          ///< "" = KernelCache::defaultDirectory()
  uint64_t maxBytes = codegen::KernelCache::kDefaultMaxBytes;
};
void addCacheFlags(CLI::App *cmd, CacheFlags &f);
/// The kernel cache the flags name; nullptr with --no-cache, or (after a
/// warning on stderr) when it cannot be used: compiling goes on without it.
std::unique_ptr<codegen::KernelCache> openKernelCache(const CacheFlags &f, const char *command);
/// "kernel cache: H hits, M misses (DIR)", or that it was off.
std::string cacheStats(const codegen::KernelCache *cache);
#endif

void addOptCommand(CLI::App &app, int &exitCode);
void addExplainScheduleCommand(CLI::App &app, int &exitCode);
#if TGC_ENABLE_CODEGEN
void addRunCommand(CLI::App &app, int &exitCode);
void addCompileCommand(CLI::App &app, int &exitCode);
#endif

} // namespace tgc::driver
