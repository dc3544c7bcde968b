//===- Driver.cpp - input reading, format detection, diagnostics ----------===//
#include "Driver.h"

#include "IR/JSON.h"
#include "IR/Pass.h"
#include "IR/TextFormat.h"
#include "Runtime/FileIO.h"

#include <iostream>
#include <utility>

namespace tgc::driver {

void report(const Diagnostic &d) { std::cerr << d.str() << "\n"; }

Result<std::string> readInput(const std::string &path) {
  std::string text, error;
  if (!rt::readFile(path, text, error)) return Diagnostic(Location{path == "-" ? "<stdin>" : path, 0, 0, -1}, error);
  return text;
}

static bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Format detectFormat(const std::string &path, std::string_view text) {
  if (endsWith(path, ".json")) return Format::JSON;
  if (endsWith(path, ".tgc")) return Format::Text;
  // Otherwise sniff: a JSON document starts with '{' (comments are text-form only).
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' ? Format::JSON : Format::Text;
  }
  return Format::Text;
}

Format formatFor(const std::string &option, const std::string &path, std::string_view text) {
  return option == "json" ? Format::JSON : option == "text" ? Format::Text : detectFormat(path, text);
}

void addFormatOption(CLI::App *cmd, std::string &format) {
  cmd->add_option("--format", format, "Input form (auto: from the extension, else the content)")
      ->check(CLI::IsMember({"auto", "json", "text"}))
      ->capture_default_str();
}

Status parseDocument(Context &ctx, const std::string &path, Format fmt, const InputChunk &chunk,
                     const std::string &rootSel, Graph &g, const ResourceLimits &limits) {
  std::string name = path == "-" ? "<stdin>" : path;
  std::vector<Diagnostic> warnings;
  Result<Graph> parsed = fmt == Format::JSON ? readGraphJSON(ctx, chunk.text, name, &warnings)
                                             : parseText(ctx, chunk.text, name, chunk.lineOffset);
  // Printed even when reading failed: another tinygrad may be why.
  for (const Diagnostic &w : warnings) report(w);
  if (!parsed) return parsed.error();
  g = std::move(*parsed);
  auto refused = [](const Status &st, const char *flag) {
    Diagnostic d = st.error();
    d.notes.push_back(std::string("the limit is set with ") + flag);
    return d;
  };
  if (Status st = checkNodeLimit(g, limits.maxNodes); !st.ok()) return refused(st, "--max-nodes");
  if (Status st = checkBufferLimit(g, limits.maxBufferBytes); !st.ok()) return refused(st, "--max-memory");
  if (rootSel.empty()) return Status::success();
  const UOp *root = g.root(rootSel);
  if (!root) {
    std::string names;
    for (const auto &n : g.rootNames) names += (names.empty() ? "" : ", ") + n;
    return Diagnostic(Location{name, 0, 0, -1}, "no root named '" + rootSel + "' (roots: " + names + ")");
  }
  g.roots = {root};
  g.rootNames = {rootSel};
  return Status::success();
}

void addGradOptions(CLI::App *cmd, GradOptions &o, const std::string &wrtEffect) {
  cmd->add_option("--grad", o.grad, "Differentiate this output (out<I>, default out0; a float scalar), see --wrt");
  cmd->add_option("--wrt", o.wrt,
                  "Nodes of the input graph to differentiate against, n<K> = node K (e.g. n12,n40): " + wrtEffect);
}

bool gradRequest(const GradOptions &o, const char *command, std::optional<GradRequest> &req) {
  req.reset();
  if (o.grad.empty() && o.wrt.empty()) return true;
  Result<GradRequest> r = parseGradRequest(o.grad.empty() ? "out0" : o.grad, o.wrt);
  if (!r) {
    std::cerr << "tgc " << command << ": error: " << r.error().message << "\n";
    return false;
  }
  req = *r;
  return true;
}

Status loadDocument(Context &ctx, const std::string &path, const std::string &format, const std::string &rootSel,
                    const ResourceLimits &limits, Graph &g) {
  // every command that loads a model schedules it: the schedule's rule tables
  // are built on a thread while the document is read and parsed
  Result<std::vector<const PassInfo *>> schedule = parsePipeline("schedule");
  PassPreparation preparation(schedule ? *schedule : std::vector<const PassInfo *>{});
  Result<std::string> text = readInput(path);
  if (!text) return text.error();
  Format fmt = formatFor(format, path, *text);
  return parseDocument(ctx, path, fmt, {*text, 0}, rootSel, g, limits);
}

namespace {
// The optimizations --disable-opt turns off, by the name of their pass where they have one.
using OptimizationNames = std::vector<std::pair<std::string, bool codegen::KernelOptions::*>>;
const OptimizationNames &optimizationNames() {
  static const OptimizationNames names = {
      {"tile-matmul", &codegen::KernelOptions::tileMatmul},
      {"pack-panel", &codegen::KernelOptions::packMatmulPanel},
      {"wide-panels", &codegen::KernelOptions::widePanels},
      {"reduce-blocks", &codegen::KernelOptions::reduceBlocks},
      {"dot-tiles", &codegen::KernelOptions::dotTiles},
      {"gate-versions", &codegen::KernelOptions::versionGates},
      {"max-lanes", &codegen::KernelOptions::maxLanes},
      {"hoist-invariant", &codegen::KernelOptions::hoistInvariant},
      {"split-epilogue", &codegen::KernelOptions::splitEpilogue},
      {"reduction-loops", &codegen::KernelOptions::reductionLoops},
      {"split-gates", &codegen::KernelOptions::splitGates},
      {"split-divmod", &codegen::KernelOptions::splitDivmod},
      {"unroll-quotient", &codegen::KernelOptions::unrollQuotient},
      {"split-reduce-divmod", &codegen::KernelOptions::splitReduceDivmod},
      {"lane-sums", &codegen::KernelOptions::combineLaneSums},
      {"merge-reduce-ranges", &codegen::KernelOptions::mergeReduceRanges},
      {"merge-output-ranges", &codegen::KernelOptions::mergeOutputRanges},
      {"overlap-tiles", &codegen::KernelOptions::overlapTiles},
      {"wide-vectors", &codegen::KernelOptions::wideVectors},
      {"vector-ldexp", &codegen::KernelOptions::vectorLdexp},
      {"transpose-copies", &codegen::KernelOptions::transposeCopies},
      {"pack-rows", &codegen::KernelOptions::packRows},
      {"inner-taps", &codegen::KernelOptions::innerTaps},
      {"factor-sums", &codegen::KernelOptions::factorSums},
      {"fuse-rows", &codegen::KernelOptions::fuseRows},
      {"share-reduced-values", &codegen::KernelOptions::shareReducedValues},
      {"split-vector-matrix", &codegen::KernelOptions::splitVectorMatrix},
  };
  return names;
}
} // namespace

codegen::KernelOptions kernelOptions(const KernelFlags &f) {
  codegen::KernelOptions o;
  o.strictFP = f.strictFP;
  o.polyTranscendentals = !f.libmTranscendentals;
  o.threads = f.threads != 1;
  for (const std::string &name : f.disabled)
    for (const auto &[n, member] : optimizationNames())
      if (n == name) o.*member = false;
  return o;
}

void addKernelFlags(CLI::App *cmd, KernelFlags &f, const std::string &threadsMeaning) {
  cmd->add_option("--threads", f.threads, threadsMeaning)->check(CLI::Range(0, 1024))->capture_default_str();
  cmd->add_flag("--strict-fp", f.strictFP,
                "Keep tinygrad's serial order in float reductions (no reassociation: no vector or multi-accumulator "
                "reductions, bit-for-bit tinygrad's rounding order)");
  cmd->add_flag("--libm-transcendentals", f.libmTranscendentals,
                "EXP2/LOG2/SIN (and POW) as one libm call per element instead of the branch-free polynomials "
                "that vectorize");
  std::vector<std::string> names;
  for (const auto &[n, member] : optimizationNames()) names.push_back(n);
  cmd->add_option("--disable-opt", f.disabled,
                  "Turn kernel optimizations off by name, to compare them or to isolate one (a comma list, or "
                  "repeated; what each does: docs/performance.md)")
      ->delimiter(',')
      ->check(CLI::IsMember(names));
}

void addLimitOptions(CLI::App *cmd, ResourceLimits &limits) {
  cmd->add_option("--max-nodes", limits.maxNodes, "Refuse a graph with more nodes than this")
      // CLI11 would wrap -1 around to "no limit".
      ->check(CLI::Validator([](std::string &v) { return v.rfind('-', 0) == 0 ? "must not be negative" : ""; },
                             "", "non-negative"))
      ->capture_default_str();
  addByteSizeOption(cmd, "--max-memory", limits.maxBufferBytes,
                    "Refuse a graph whose BUFFERs (numel * itemsize, summed) need more bytes than this; "
                    "suffixes K/KiB, M/MiB, G/GiB, T/TiB count powers of 1024",
                    "64GiB");
}

void addByteSizeOption(CLI::App *cmd, const std::string &name, uint64_t &bytes, const std::string &help,
                       const std::string &defaultText, uint64_t max) {
  cmd->add_option_function<std::string>(
         name,
         [name, &bytes, max](const std::string &text) {
           std::optional<uint64_t> parsed = parseByteSize(text);
           if (!parsed || *parsed > max)
             throw CLI::ValidationError(name, "expected a byte count such as 4096, 512MiB or 64GiB");
           bytes = *parsed;
         },
         help)
      ->default_str(defaultText);
}

#if TGC_ENABLE_CODEGEN
void addCacheFlags(CLI::App *cmd, CacheFlags &f) {
  cmd->add_flag("--no-cache", f.disabled,
                "Compile every kernel, neither reading nor writing the kernel cache (see --cache-dir)");
  cmd->add_option("--cache-dir", f.dir,
                  "Where compiled kernels are kept and reused, keyed by kernel, target and options (default: "
                  "$TGC_CACHE_DIR, else $XDG_CACHE_HOME/tgc/kernels, else ~/.cache/tgc/kernels); safe to share "
                  "between concurrent tgc processes");
  addByteSizeOption(cmd, "--cache-size", f.maxBytes,
                    "Bound of the kernel cache: the least recently used kernels are removed beyond it", "1GiB");
}

std::unique_ptr<codegen::KernelCache> openKernelCache(const CacheFlags &f, const char *command) {
  if (f.disabled) return nullptr;
  std::string dir = f.dir.empty() ? codegen::KernelCache::defaultDirectory() : f.dir;
  std::string why = "no cache directory: set $TGC_CACHE_DIR or $HOME, or pass --cache-dir";
  std::unique_ptr<codegen::KernelCache> cache = dir.empty() ? nullptr : codegen::KernelCache::open(dir, f.maxBytes, &why);
  if (!cache) std::cerr << "tgc " << command << ": warning: compiling without the kernel cache: " << why << "\n";
  return cache;
}

std::string cacheStats(const codegen::KernelCache *cache) {
  if (!cache) return "kernel cache: off";
  return "kernel cache: " + std::to_string(cache->hits()) + " hits, " + std::to_string(cache->misses()) + " misses (" +
         cache->directory() + ")";
}
#endif

} // namespace tgc::driver
