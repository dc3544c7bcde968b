//===- Run.cpp - `tgc run`: schedule, JIT-compile and run a tensor graph --===//
//
// The whole compiler in one command: the pipeline's front half
// (buildModelFromDocument) and its JIT back half (compileModelForRun), the inputs loaded from .npy files (the data files
// the graph names, or --input overrides), one run, and every output and
// changed input buffer written as .npy. With --repeat, the compiled schedule
// is timed (execution only). With --grad/--wrt, the `grad` pass first adds
// gradients as outputs (Schedule/Grad.h). Built only with TGC_ENABLE_CODEGEN.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "Inspect.h"

#include "Pipeline/Pipeline.h"
#include "IR/BufferData.h"
#include "Runtime/ModelABI.h"
#include "Runtime/Npy.h"
#include "Runtime/Parallel.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

namespace tgc::driver {
namespace {

namespace fs = std::filesystem;

struct RunOptions {
  std::string input;
  std::vector<std::string> inputs; ///< NAME=FILE.npy
  std::vector<std::string> vars;   ///< NAME=VALUE
  std::string outputDir;
  std::string format = "auto";
  std::string root;
  int repeat = 0;
  int64_t seed = -1; ///< --seed: the random state Tensor.manual_seed(seed) sets
  GradOptions grad; ///< --grad/--wrt: gradients as extra outputs (docs/grad.md)
  bool stats = false;
  bool print = false; ///< --print: each written array's values after its file name
  KernelFlags kernel;
  CacheFlags cache;
  ResourceLimits limits;
};

int fail(const std::string &message) {
  std::cerr << "tgc run: error: " << message << "\n";
  return kFailure;
}

std::string shapeText(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

/// Element i of an .npy array as text, or "" for a type NumPy has no C counterpart for here (float16).
std::string elementText(const rt::NpyArray &a, uint64_t i) {
  const uint8_t *p = a.data.data() + i * rt::npyItemSize(a.descr);
  auto get = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  char kind = a.descr.size() == 3 ? a.descr[1] : 0, size = a.descr.size() == 3 ? a.descr[2] : 0;
  char buf[32];
  if (kind == 'f' && size == '4') std::snprintf(buf, sizeof buf, "%.6g", double(get(float())));
  else if (kind == 'f' && size == '8') std::snprintf(buf, sizeof buf, "%.9g", get(double()));
  else if (kind == 'b') return *p ? "true" : "false";
  else if (kind == 'i' || kind == 'u') {
    uint64_t bits = 0;
    std::memcpy(&bits, p, size_t(size - '0'));
    int shift = 64 - 8 * (size - '0');
    return kind == 'u' ? std::to_string(bits) : std::to_string(int64_t(bits << shift) >> shift);
  } else return "";
  return buf;
}

/// --print: an array's values, a row of its last axis per line (at most 8 rows of 8 values, so a big output
/// stays a glance).
void printValues(const rt::NpyArray &a) {
  uint64_t n = a.numel(), cols = a.shape.empty() ? 1 : std::max<uint64_t>(1, a.shape.back());
  if (n == 0 || elementText(a, 0).empty()) return;
  for (uint64_t r = 0; r * cols < n && r < 8; ++r) {
    std::cout << "  ";
    for (uint64_t c = 0; c < std::min<uint64_t>(cols, 8); ++c) std::cout << (c ? " " : "") << elementText(a, r * cols + c);
    std::cout << (cols > 8 ? " ..." : "") << "\n";
  }
  if (n > 8 * cols) std::cout << "  ... (" << n / cols - 8 << " more rows)\n";
}

std::string describe(const ModelTensor &t) { return t.name + " (" + std::string(t.dtype.name()) + shapeText(t.shape) + ")"; }

/// Reads `file` as the contents of `t`, checking dtype, element count and size.
bool loadTensor(const ModelTensor &t, const std::string &file, std::vector<uint8_t> &out, std::string &error) {
  rt::NpyArray a;
  if (!rt::readNpy(file, a, error)) return false;
  std::string descr = npyDescrFor(t.dtype);
  bool sameType = a.descr == descr || (descr.size() > 1 && descr[0] == '|' && a.descr == "<" + descr.substr(1));
  if (!sameType) {
    error = "input " + describe(t) + ": " + file + " holds '" + a.descr + "' elements, the model needs '" + descr + "'";
    return false;
  }
  int64_t want = 1;
  for (int64_t d : t.shape) want *= d;
  if (a.numel() != uint64_t(want) || a.data.size() != size_t(t.bytes)) {
    std::vector<int64_t> got(a.shape.begin(), a.shape.end());
    error = "input " + describe(t) + ": " + file + " has shape " + shapeText(got) + " (" + std::to_string(a.numel()) +
            " elements), the model needs " + std::to_string(want) + " elements";
    return false;
  }
  out = std::move(a.data);
  return true;
}

using InputData = std::vector<std::pair<const ModelTensor *, std::vector<uint8_t>>>;

/// --seed: the random key {TGC_RANDOM_KEY0, seed} (Runtime/ModelABI.h) and
/// the counter zeroed unless --input gives it, as Tensor.manual_seed(seed)
/// leaves them; "" or why not.
std::string seedRandomState(const Model &m, const std::map<std::string, std::string> &overrides, uint32_t seed,
                            InputData &data) {
  int key = m.randomTensor(ModelTensor::Random::Key), counter = m.randomTensor(ModelTensor::Random::Counter);
  if (key < 0) return "--seed: the model has no random key (it draws no random numbers)";
  if (overrides.count(m.tensors[size_t(key)].name))
    return "--seed: the random key " + m.tensors[size_t(key)].name + " is also given with --input";
  auto set = [&](int t, uint32_t w0, uint32_t w1) {
    std::vector<uint8_t> bytes(8);
    const uint32_t words[2] = {w0, w1};
    std::memcpy(bytes.data(), words, 8);
    auto it = std::find_if(data.begin(), data.end(), [&](const auto &d) { return d.first == &m.tensors[size_t(t)]; });
    if (it == data.end()) data.emplace_back(&m.tensors[size_t(t)], std::move(bytes));
    else it->second = std::move(bytes);
  };
  set(key, TGC_RANDOM_KEY0, seed);
  if (counter >= 0 && !overrides.count(m.tensors[size_t(counter)].name)) set(counter, 0, 0);
  return "";
}

/// --input NAME=FILE options into a map; "" or what is wrong.
std::string parseInputOverrides(const std::vector<std::string> &specs, std::map<std::string, std::string> &out) {
  for (const std::string &spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return "--input expects NAME=FILE.npy, got '" + spec + "'";
    if (!out.emplace(spec.substr(0, eq), spec.substr(eq + 1)).second) return "--input " + spec.substr(0, eq) + " is given twice";
  }
  return "";
}

/// Every input's data: --input's file, else the one the graph names. A
/// missing or wrong file fails here, before anything is compiled.
Result<InputData> readInputs(const Model &model, const std::map<std::string, std::string> &overrides) {
  for (const auto &[name, file] : overrides) {
    const ModelTensor *t = model.find(name);
    if (t && t->role != ModelTensor::Role::Output) continue;
    std::string known;
    for (const ModelTensor &m : model.tensors)
      if (m.role != ModelTensor::Role::Output) known += (known.empty() ? "" : ", ") + m.name;
    return Diagnostic(Location(), "--input " + name + ": the model has no input of that name (inputs: " +
                                      (known.empty() ? "none" : known) + ")");
  }
  InputData data;
  for (const ModelTensor &t : model.tensors) {
    if (t.role == ModelTensor::Role::Output) continue;
    auto it = overrides.find(t.name);
    std::string file = it != overrides.end() ? it->second : t.dataFile;
    if (file.empty()) {
      if (!t.needsData) continue; // an unallocated buffer the model assigns: starts zeroed
      return Diagnostic(Location(), "input " + describe(t) + " has no data file in the graph; give one with --input " +
                                        t.name + "=FILE.npy");
    }
    std::vector<uint8_t> bytes;
    std::string error;
    if (!loadTensor(t, file, bytes, error)) return Diagnostic(Location(), error);
    data.emplace_back(&t, std::move(bytes));
  }
  return data;
}

/// Runs `cs` once, or with `repeat` once to warm up and `repeat` times
/// timed. The inputs are loaded again before each run (untimed), so assigns
/// see the same data every time and the results are those of one run.
Result<std::vector<double>> runTimes(const CompiledSchedule &cs, const HostBuffers &buffers, const InputData &data,
                                     const std::vector<int64_t> &vars, int repeat) {
  std::vector<double> ms;
  for (int i = 0; i < (repeat > 0 ? repeat + 1 : 1); ++i) {
    for (const auto &[t, bytes] : data)
      std::memcpy(static_cast<uint8_t *>(buffers.data(size_t(t->buffer))) + t->byteOffset, bytes.data(), bytes.size());
    auto t0 = std::chrono::steady_clock::now();
    if (Status st = cs.run(buffers.pointers().first(cs.linearBuffers()), vars); !st.ok()) return st.error();
    if (i > 0 || repeat == 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return ms;
}

/// Every output (out<I>.npy, and grad_n<K>.npy for a gradient) and changed
/// input (n<K>.after.npy) into `dir`: all encoded first, each file then written atomically.
std::string writeResults(const Model &model, const HostBuffers &buffers, const std::map<std::string, int64_t> &gradOutputs,
                         const std::string &dir, bool print) {
  struct File {
    std::string name;
    rt::NpyArray array;
    const ModelTensor *tensor;
  };
  std::vector<File> files;
  for (const ModelTensor &t : model.tensors) {
    if (t.role == ModelTensor::Role::Input) continue;
    rt::NpyArray a;
    a.descr = npyDescrFor(t.dtype);
    a.shape.assign(t.shape.begin(), t.shape.end());
    if (t.bytes) {
      const uint8_t *p = static_cast<const uint8_t *>(buffers.data(size_t(t.buffer))) + t.byteOffset;
      a.data.assign(p, p + t.bytes);
    }
    if (auto gi = gradOutputs.find(t.name); gi != gradOutputs.end() && t.role == ModelTensor::Role::Output)
      files.push_back({"grad_n" + std::to_string(gi->second) + ".npy", a, &t});
    files.push_back({t.role == ModelTensor::Role::Output ? t.name + ".npy" : t.name + ".after.npy", std::move(a), &t});
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create the output directory " + dir + ": " + ec.message();
  for (const File &f : files) {
    std::string path = (fs::path(dir) / f.name).string(), error;
    if (!rt::writeNpy(path, f.array, error)) return error;
    std::cout << "wrote " << path << " " << f.tensor->dtype.name() << shapeText(f.tensor->shape) << "\n";
    if (print) printValues(f.array);
  }
  return "";
}

// Six decimals, as the launcher prints them: a small model runs in microseconds.
void printTimes(const std::vector<double> &ms, double compileSeconds) {
  for (size_t i = 0; i < ms.size(); ++i) std::printf("run %zu: %.6f ms\n", i + 1, ms[i]);
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  double mean = 0;
  for (double v : ms) mean += v / double(n);
  std::printf("runs=%zu min_ms=%.6f mean_ms=%.6f max_ms=%.6f compile_s=%.2f\n", n, sorted.front(), mean, sorted.back(),
              compileSeconds);
  std::printf("median_ms=%.6f\n", median);
}

int runModel(const RunOptions &o) {
  // --input NAME=FILE and --var NAME=VALUE, checked before any work (names and ranges once the model is known).
  std::map<std::string, std::string> overrides;
  if (std::string why = parseInputOverrides(o.inputs, overrides); !why.empty()) {
    std::cerr << "tgc run: error: " << why << "\n";
    return kUsage;
  }
  std::map<std::string, int64_t> varOverrides;
  for (const std::string &spec : o.vars) {
    auto v = parseVarAssignment(spec);
    if (!v) return fail(v.error().message);
    if (!varOverrides.emplace(v->first, v->second).second) return fail("--var " + v->first + " is given twice");
  }
  ModelOptions mopts;
  mopts.acceptLinear = false;
  if (!gradRequest(o.grad, "run", mopts.grad)) return kUsage;

  auto ctx = std::make_unique<Context>();
  Graph g;
  if (Status st = loadDocument(*ctx, o.input, o.format, o.root, o.limits, g); !st.ok()) return report(st.error()), kFailure;
  size_t inputNodes = o.stats ? graphNodeCount(g) : 0;
  Result<BuiltModel> built = buildModelFromDocument(*ctx, g, mopts);
  if (!built) return report(built.error()), kFailure;
  const Model &model = built->model;
  if (o.stats) {
    Graph scheduled;
    scheduled.roots = {model.linear};
    scheduled.rootNames = {"linear"};
    std::cerr << formatStats(scheduled, inputNodes);
  }
  if (Result<std::vector<int64_t>> checked = model.varValues(varOverrides); !checked) return fail(checked.error().message);
  Result<InputData> data = readInputs(model, overrides);
  if (!data) return fail(data.error().message);
  if (o.seed >= 0)
    if (std::string why = seedRandomState(model, overrides, uint32_t(o.seed), *data); !why.empty()) return fail(why);

  CodegenOptions copts;
  copts.kernel = kernelOptions(o.kernel);
  std::unique_ptr<codegen::KernelCache> cache = openKernelCache(o.cache, "run");
  copts.cache = cache.get();
  if (o.kernel.threads > 0) tgc_set_num_threads(o.kernel.threads);
  Result<std::unique_ptr<CompiledSchedule>> compiled = compileModelForRun(model, copts);
  if (!compiled) return report(compiled.error()), kFailure;
  if (o.stats) std::cerr << cacheStats(cache.get()) << "\n";
  const CompiledSchedule &cs = **compiled;
  // The schedule's variables are the model's, less any no kernel reads.
  Result<std::vector<int64_t>> runVars = model.varValuesFor(cs.plan(), varOverrides);
  if (!runVars) return fail(runVars.error().message);
  // The model's plan is the schedule's buffers followed by the inputs no CALL
  // uses (Model::plan): those get storage too, and the schedule runs on the rest.
  Result<HostBuffers> buffers = HostBuffers::allocate(model.plan);
  if (!buffers) return report(buffers.error()), kFailure;
  Result<std::vector<double>> ms = runTimes(cs, *buffers, *data, *runVars, o.repeat);
  if (!ms) return report(ms.error()), kFailure;
  if (std::string why = writeResults(model, *buffers, built->gradOutputs, o.outputDir, o.print); !why.empty()) return fail(why);
  if (o.repeat > 0) printTimes(*ms, cs.compileSeconds());
  std::fflush(stdout);
  return kSuccess;
}

} // namespace

void addRunCommand(CLI::App &app, int &exitCode) {
  auto o = std::make_shared<RunOptions>();
  CLI::App *cmd = app.add_subcommand("run", "Schedule a tensor graph, compile it (JIT) and run it on .npy inputs.");
  cmd->add_option("input", o->input, "Tensor graph: graph-format JSON or tgc text form ('-' = stdin)")->required();
  cmd->add_option("--input", o->inputs,
                  "NAME=FILE.npy: data for input NAME (n<K>, K = the BUFFER's node id) instead of the file the "
                  "graph names; repeatable");
  cmd->add_option("--output-dir", o->outputDir,
                  "Folder for out<I>.npy (source I of the root SINK) and n<K>.after.npy (input buffers the "
                  "model changes); created if missing")
      ->required();
  cmd->add_option("--repeat", o->repeat,
                  "Time N runs of the compiled schedule after one warm-up (execution only); the last line printed "
                  "is median_ms=<float>")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--var", o->vars,
                  "NAME=VALUE: run with tinygrad Variable NAME bound to VALUE instead of the value the graph binds "
                  "(within the variable's [min, max]); repeatable");
  cmd->add_option("--seed", o->seed,
                  "For a model that draws random numbers: the random state tinygrad's Tensor.manual_seed(N) sets "
                  "(the random key, and the random counter zeroed unless --input gives it)")
      ->check(CLI::Range(int64_t(0), int64_t(UINT32_MAX)));
  addGradOptions(cmd, o->grad, "their gradients become extra outputs, also written as grad_n<K>.npy");
  addFormatOption(cmd, o->format);
  cmd->add_option("--root", o->root, "Keep only this root of a multi-root document (name or index)");
  addKernelFlags(cmd, o->kernel, "Threads for the kernels' parallel loops (0 = the core count, 1 = serial code)");
  addCacheFlags(cmd, o->cache);
  cmd->add_flag("--stats", o->stats, "Print the schedule's counts and per-kernel estimated flops and bytes (to stderr)");
  cmd->add_flag("--print", o->print, "Print each written array's values (a row per line, at most 8 x 8)");
  addLimitOptions(cmd, o->limits);
  cmd->footer("Inputs are the graph's BUFFERs, named n<K> (K = the node id in graph.json; one the schedule no\n"
              "longer reads, such as x in x * 0, is accepted and ignored);\n"
              "their data comes from the files in the graph's `buffers` (relative to the graph's folder) unless\n"
              "--input replaces it. Every .npy must have the buffer's dtype and element count.\n"
              "Written to --output-dir: out<I>.npy for source I of the root SINK (dense, C order, whatever view\n"
              "of storage the SINK holds), and n<K>.after.npy for each input the model changes (an assign\n"
              "target). Nothing is written unless the run succeeds.\n"
              "With --grad/--wrt the gradients are outputs too (after the SINK's own), each also written as\n"
              "grad_n<K>.npy: one compiled training step (docs/grad.md).\n"
              "A graph with tinygrad Variables (a symbolic batch, a decoding position) is compiled once with each\n"
              "variable a kernel argument and run at the value the graph binds, or at --var NAME=VALUE; an unknown\n"
              "name, a malformed value or one outside the variable's range is an error (exit 1), nothing written.\n"
              "Exit codes: 0 success, 1 bad graph, input file, variable value or failed run, 2 bad command line.\n\n"
              "Examples:\n"
              "  tgc run examples/mlp.tgc --output-dir build/mlp-out\n"
              "  tgc run case/graph.json --output-dir out/\n"
              "  tgc run case/graph.json --input n2=x.npy --output-dir out/\n"
              "  tgc run case/graph.json --var start_pos=12 --output-dir out/\n"
              "  tgc run case/graph.json --output-dir out/ --repeat 20 | tail -1     # median_ms=...\n"
              "  tgc run case/graph.json --grad=out0 --wrt=n15,n23 --output-dir out/  # + grad_n15.npy, grad_n23.npy");
  cmd->callback([o, &exitCode] { exitCode = runModel(*o); });
}

} // namespace tgc::driver
