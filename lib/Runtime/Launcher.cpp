//===- Launcher.cpp - drive any compiled model from the command line ------===//
#include "Runtime/Launcher.h"
#include "Runtime/FileIO.h"
#include "Runtime/Npy.h"
#include "Runtime/Memory.h"
#include "Runtime/Parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <cerrno>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tgc::rt {

const char *npyKind(int32_t dtype) {
  switch (dtype) {
  case TGC_DTYPE_BOOL: return "b1";
  case TGC_DTYPE_INT8: return "i1";
  case TGC_DTYPE_UINT8: return "u1";
  case TGC_DTYPE_INT16: return "i2";
  case TGC_DTYPE_UINT16: return "u2";
  case TGC_DTYPE_INT32: return "i4";
  case TGC_DTYPE_UINT32: return "u4";
  case TGC_DTYPE_INT64: return "i8";
  case TGC_DTYPE_UINT64: return "u8";
  case TGC_DTYPE_FLOAT16: return "f2";
  case TGC_DTYPE_BFLOAT16: return "u2";
  case TGC_DTYPE_FLOAT32: return "f4";
  case TGC_DTYPE_FLOAT64: return "f8";
  }
  return nullptr;
}

namespace {

constexpr int kOk = 0, kFail = 1, kUsage = 2;

std::string shapeText(const int64_t *shape, int32_t rank) {
  std::string s = "(";
  for (int32_t i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (rank == 1 ? ",)" : ")");
}

int usage(const char *argv0, const char *msg) {
  if (msg) std::fprintf(stderr, "%s: error: %s\n", argv0, msg);
  std::fprintf(stderr,
               "usage: %s [--input NAME=FILE.npy]... [--var NAME=VALUE]... [--output-dir DIR] [--weights FILE]\n"
               "       [--repeat N] [--no-profile] [--threads N] [--seed N] [--list]\n"
               "  --input NAME=FILE  data for input/in-out NAME (default: zeros); dtype and shape checked against\n"
               "                    the model (a flat tensor takes any shape with its element count)\n"
               "  --var NAME=VALUE   the value of variable NAME (default: the one the exported graph binds);\n"
               "                    it must be in the variable's [min, max] (--list shows them)\n"
               "  --output-dir DIR   write outputs as DIR/<name>.npy, in-outs as DIR/<name>.after.npy\n"
               "  --weights FILE     the model's external weights file (default: this executable's path + .weights)\n"
               "  --repeat N         a warm-up, then N timed runs (in-outs restored each time), a line per run and a\n"
               "                    per-kernel time table; last line median_ms=<float>\n"
               "  --no-profile       with --repeat: time the runs without the per-kernel observer (no table)\n"
               "  --threads N        threads for the kernels' parallel loops (default: the core count)\n"
               "  --seed N           the random state tinygrad's Tensor.manual_seed(N) sets: the random key, and the\n"
               "                    random counter zeroed unless --input gives it (a model that draws random numbers)\n"
               "  --list             print the model's tensors and variables and exit\n",
               argv0);
  return kUsage;
}

/// Where the weights file is by default: beside the executable, its name + ".weights".
std::string defaultWeightsPath(const char *argv0) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::string(argv0) : self.string()) + ".weights";
}

void list(const tgc_model_info &m, const std::string &weightsPath) {
  static const char *roles[] = {"input", "output", "in-out"};
  std::printf("model %s: %d tensors, workspace %lld bytes\n", m.name, m.num_tensors, (long long)m.workspace_bytes);
  if (m.weights)
    std::printf("weights: %d tensors from '%s'\n", m.weights->num_weights, weightsPath.c_str());
  for (int32_t i = 0; i < m.num_tensors; ++i) {
    const tgc_tensor_info &t = m.tensors[i];
    const char *random = i == m.random_key ? " (random key)" : i == m.random_counter ? " (random counter)" : "";
    std::printf("  %-12s %-7s %-8s %s %lld bytes%s\n", t.name, t.role >= 0 && t.role <= 2 ? roles[t.role] : "?",
                t.dtype_name, shapeText(t.shape, t.rank).c_str(), (long long)t.bytes, random);
  }
  if (m.num_vars > 0) std::printf("variables (--var NAME=VALUE):\n");
  for (int32_t j = 0; j < m.num_vars; ++j) {
    const tgc_var_info &v = m.vars[j];
    std::string dflt = v.has_default ? "default " + std::to_string(v.default_value) : "no default";
    std::printf("  %-12s %-7s [%lld, %lld] %s\n", v.name, v.c_type, (long long)v.min, (long long)v.max, dflt.c_str());
  }
}

/// Checks `a` against tensor `t`; returns an error message or "".
std::string mismatch(const NpyArray &a, const tgc_tensor_info &t) {
  const char *kind = npyKind(t.dtype);
  if (!kind || a.descr.size() < 3 || a.descr.substr(1) != kind)
    return "dtype " + a.descr + " does not match the model's " + t.dtype_name + " (expected '<" +
           std::string(kind ? kind : "?") + "')";
  bool same = a.shape.size() == size_t(t.rank);
  for (int32_t d = 0; same && d < t.rank; ++d) same = a.shape[d] == uint64_t(t.shape[d]);
  // A flat tensor (an input buffer: buffers have no shape) takes any shape with its element count.
  if (!same && t.rank == 1 && a.numel() == uint64_t(t.numel)) same = true;
  if (!same) {
    std::vector<int64_t> got(a.shape.begin(), a.shape.end());
    return "shape " + shapeText(got.data(), int32_t(got.size())) + " does not match the model's " +
           shapeText(t.shape, t.rank);
  }
  if (a.data.size() != uint64_t(t.bytes))
    return std::to_string(a.data.size()) + " bytes of data, the model's tensor has " + std::to_string(t.bytes);
  return "";
}

/// Per-kernel times of the observed runs: the call observer adds each call's
/// duration to its kernel's slot of the current run (copies: the last slot).
struct Profile {
  int32_t numKernels = 0;
  std::vector<std::vector<double>> ms; ///< [kernel slot][run]
  std::vector<long> calls;             ///< [kernel slot]: calls per run
  size_t run = 0;
  std::chrono::steady_clock::time_point begin;

  explicit Profile(const tgc_model_info &m, size_t runs)
      : numKernels(m.num_kernels), ms(size_t(m.num_kernels) + 1, std::vector<double>(runs, 0.0)),
        calls(size_t(m.num_kernels) + 1, 0) {}

  static void observe(void *ctx, int32_t, int32_t kernel, int32_t end) {
    auto *p = static_cast<Profile *>(ctx);
    if (!end) {
      p->begin = std::chrono::steady_clock::now();
      return;
    }
    double dt = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p->begin).count();
    size_t slot = kernel >= 0 && kernel < p->numKernels ? size_t(kernel) : size_t(p->numKernels);
    p->ms[slot][p->run] += dt;
    if (p->run == 0) ++p->calls[slot];
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

/// The table: kernels by time, the busiest first; at most kRows of them.
void printProfile(const tgc_model_info &m, const Profile &p, size_t runs) {
  constexpr size_t kRows = 20;
  struct Row {
    std::string name;
    long calls;
    double perRun, total;
    size_t index;
  };
  std::vector<Row> rows;
  double all = 0;
  long allCalls = 0;
  for (size_t k = 0; k < p.ms.size(); ++k) {
    if (p.calls[k] == 0) continue;
    double total = 0;
    for (double t : p.ms[k]) total += t;
    all += total;
    allCalls += p.calls[k];
    std::string name = k < size_t(m.num_kernels) ? std::to_string(k) + " " + m.kernel_names[k] : "- (copies)";
    rows.push_back({name, p.calls[k], median(p.ms[k]), total, k});
  }
  std::sort(rows.begin(), rows.end(),
            [](const Row &a, const Row &b) { return a.total != b.total ? a.total > b.total : a.index < b.index; });
  std::printf("kernels: %d kernels, %ld calls per run; median ms per run over %zu observed runs\n", m.num_kernels,
              allCalls, runs);
  std::printf("  %-32s %8s %12s %7s\n", "kernel", "calls", "ms/run", "share");
  auto share = [&](double t) { return all > 0 ? 100.0 * t / all : 0.0; };
  for (size_t i = 0; i < rows.size() && i < kRows; ++i)
    std::printf("  %-32s %8ld %12.6f %6.1f%%\n", rows[i].name.c_str(), rows[i].calls, rows[i].perRun,
                share(rows[i].total));
  if (rows.size() > kRows) {
    double rest = 0;
    for (size_t i = kRows; i < rows.size(); ++i) rest += rows[i].total;
    std::printf("  %-32s %8s %12.6f %6.1f%%\n", ("(" + std::to_string(rows.size() - kRows) + " more)").c_str(), "",
                rest / double(runs), share(rest));
  }
  std::printf("  %-32s %8ld %12.6f %6.1f%%\n", "total", allCalls, all / double(runs), all > 0 ? 100.0 : 0.0);
}

/// --seed: the key {TGC_RANDOM_KEY0, seed} (ModelABI.h) unless `given`, and the
/// counter zeroed unless given; "" or why not.
std::string seedRandomState(const tgc_model_info &m, const std::vector<void *> &ptrs,
                            const std::set<int32_t> &provided, uint32_t seed) {
  if (m.random_key < 0) return "--seed: the model has no random key (it draws no random numbers)";
  if (provided.count(m.random_key))
    return std::string("--seed: the random key ") + m.tensors[m.random_key].name + " is also given with --input";
  const uint32_t key[2] = {TGC_RANDOM_KEY0, seed};
  std::memcpy(ptrs[size_t(m.random_key)], key, sizeof key);
  if (m.random_counter >= 0 && !provided.count(m.random_counter))
    std::memset(ptrs[size_t(m.random_counter)], 0, size_t(m.tensors[m.random_counter].bytes));
  return "";
}

} // namespace

std::string launcherVarValues(const tgc_model_info &m, const std::vector<std::string> &given, std::vector<int64_t> &values) {
  values.assign(size_t(m.num_vars), 0);
  std::vector<bool> set(size_t(m.num_vars), false);
  for (const std::string &g : given) {
    size_t eq = g.find('=');
    if (eq == std::string::npos || eq == 0) return "--var expects NAME=VALUE, got '" + g + "'";
    std::string name = g.substr(0, eq), text = g.substr(eq + 1);
    int32_t j = 0;
    while (j < m.num_vars && name != m.vars[j].name) ++j;
    if (j == m.num_vars) {
      std::string names;
      for (int32_t k = 0; k < m.num_vars; ++k) names += std::string(names.empty() ? "" : ", ") + m.vars[k].name;
      return "the model has no variable '" + name + "' (variables: " + (names.empty() ? "none" : names) + ")";
    }
    if (set[size_t(j)]) return "variable '" + name + "' given twice";
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end || errno == ERANGE) return "--var " + name + ": '" + text + "' is not an integer";
    values[size_t(j)] = v;
    set[size_t(j)] = true;
  }
  for (int32_t j = 0; j < m.num_vars; ++j) {
    const tgc_var_info &v = m.vars[j];
    if (!set[size_t(j)] && !v.has_default)
      return "variable '" + std::string(v.name) + "' has no default: give it with --var " + v.name + "=N (" +
             std::to_string(v.min) + ".." + std::to_string(v.max) + ")";
    if (!set[size_t(j)]) values[size_t(j)] = v.default_value;
    if (values[size_t(j)] < v.min || values[size_t(j)] > v.max)
      return "variable '" + std::string(v.name) + "' = " + std::to_string(values[size_t(j)]) + " is outside its range [" +
             std::to_string(v.min) + ", " + std::to_string(v.max) + "]";
  }
  return "";
}

namespace {

/// The launcher's command line.
struct Args {
  std::map<std::string, std::string> inputs; ///< NAME -> FILE.npy
  std::vector<std::string> vars;             ///< NAME=VALUE
  std::string outDir, weightsPath;
  long repeat = 0;
  std::optional<uint32_t> seed;
  bool listOnly = false, profile = true;
};

/// Takes `value` for `flag` (one that has a value) into `a`; "" or why not.
std::string takeFlag(const tgc_model_info &m, const std::string &flag, const std::string &value, Args &a) {
  char *end = nullptr;
  if (flag == "--input") {
    size_t eq = value.find('=');
    if (eq == std::string::npos || eq == 0) return "--input expects NAME=FILE, got '" + value + "'";
    if (!a.inputs.emplace(value.substr(0, eq), value.substr(eq + 1)).second)
      return "input '" + value.substr(0, eq) + "' given twice";
  } else if (flag == "--var") {
    a.vars.push_back(value);
  } else if (flag == "--output-dir") {
    a.outDir = value;
  } else if (flag == "--weights") {
    if (!m.bind_weights) return "--weights: this model has no external weights";
    a.weightsPath = value;
  } else if (flag == "--threads") {
    long n = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end || n < 1 || n > 1024) return "--threads expects a count from 1 to 1024, got '" + value + "'";
    tgc_set_num_threads(int(n));
  } else if (flag == "--seed") {
    errno = 0;
    unsigned long long n = std::strtoull(value.c_str(), &end, 10);
    if (value.empty() || value[0] == '-' || *end || errno || n > UINT32_MAX)
      return "--seed expects an integer from 0 to 4294967295, got '" + value + "'";
    a.seed = uint32_t(n);
  } else if (flag == "--repeat") {
    a.repeat = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end || a.repeat < 1 || a.repeat > 1000000)
      return "--repeat expects a count from 1 to 1000000, got '" + value + "'";
  }
  return "";
}

/// Parses the command line into `a`; the exit code when the launcher is done
/// with it (--help, a usage error).
std::optional<int> parseArgs(const tgc_model_info &m, const char *argv0, int argc, char **argv, Args &a) {
  static const char *const kValueFlags[] = {"--input", "--var", "--output-dir", "--weights", "--threads", "--seed", "--repeat"};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      usage(argv0, nullptr);
      return kOk;
    }
    if (arg == "--list") {
      a.listOnly = true;
      continue;
    }
    if (arg == "--no-profile") {
      a.profile = false;
      continue;
    }
    // A flag with a value: --flag=VALUE, or --flag VALUE (the next argument).
    std::string flag;
    for (const char *f : kValueFlags) {
      if (arg.rfind(std::string(f) + "=", 0) == 0) value = arg.substr(std::strlen(f) + 1);
      else if (arg == f && i + 1 < argc) value = argv[++i];
      else continue;
      flag = f;
      break;
    }
    if (flag.empty()) return usage(argv0, ("unknown argument '" + arg + "'").c_str());
    if (std::string why = takeFlag(m, flag, value, a); !why.empty()) return usage(argv0, why.c_str());
  }
  return std::nullopt;
}

/// One launch of the model: its tensors, workspace and weights, filled,
/// run and written out a step at a time. A step that fails has reported
/// why on stderr.
class Launch {
public:
  Launch(const tgc_model_info &m, const char *argv0, Args args) : m(m), argv0(argv0), args(std::move(args)) {}
  bool bindVars();
  bool bindWeights();
  bool loadInputs();
  bool seedRandom();
  void keepInOuts();
  bool allocateWorkspace();
  bool runAll();
  bool writeOutputs();
  void report() const;

private:
  bool error(const std::string &message) const {
    std::fprintf(stderr, "%s: error: %s\n", argv0, message.c_str());
    return false;
  }
  bool loadInput(int32_t i, const std::string &file);
  bool runOnce(long r);

  struct CloseWeights {
    void operator()(tgc_weights *w) const { tgc_weights_close(w); }
  };
  const tgc_model_info &m;
  const char *argv0;
  Args args;
  std::vector<int64_t> vars;
  std::unique_ptr<tgc_weights, CloseWeights> weights;
  std::vector<TensorMemory> storage;
  std::vector<void *> ptrs;
  std::set<int32_t> provided; ///< the tensors --input gives
  std::vector<std::pair<int32_t, std::vector<uint8_t>>> inouts; ///< with --repeat: their values before the runs
  TensorMemory workspace;
  std::vector<double> ms; ///< the timed runs
  std::optional<Profile> prof;
};

bool Launch::bindVars() {
  std::string why = launcherVarValues(m, args.vars, vars);
  return why.empty() || error(why);
}

// External weights: mapped, checked and bound before anything runs.
bool Launch::bindWeights() {
  if (!m.bind_weights) return true;
  tgc_weights *w = nullptr;
  errno = 0;
  int status = tgc_weights_open(args.weightsPath.c_str(), &w);
  weights.reset(w);
  if (status == TGC_OK) status = m.bind_weights(tgc_weights_data(w), tgc_weights_size(w));
  if (status == TGC_OK) return true;
  std::string why = tgc_status_string(status);
  if (status == TGC_ERR_WEIGHTS_IO && errno) why += std::string(": ") + std::strerror(errno);
  return error("weights file '" + args.weightsPath + "': " + why);
}

// Every input is checked before anything runs; the tensors --input does not
// give start as zeros.
bool Launch::loadInputs() {
  for (int32_t i = 0; i < m.num_tensors; ++i) {
    const tgc_tensor_info &t = m.tensors[i];
    storage.push_back(allocTensor(t.bytes));
    if (!storage.back()) return error("cannot allocate " + std::to_string(t.bytes) + " bytes for " + t.name);
    ptrs.push_back(storage.back().get());
    auto given = args.inputs.find(t.name);
    if (given == args.inputs.end()) continue;
    if (!loadInput(i, given->second)) return false;
    args.inputs.erase(given);
  }
  if (args.inputs.empty()) return true;
  std::string names;
  for (int32_t i = 0; i < m.num_tensors; ++i)
    if (m.tensors[i].role != TGC_ROLE_OUTPUT) names += std::string(names.empty() ? "" : ", ") + m.tensors[i].name;
  return error("the model has no input '" + args.inputs.begin()->first + "' (inputs: " + (names.empty() ? "none" : names) + ")");
}

bool Launch::loadInput(int32_t i, const std::string &file) {
  const tgc_tensor_info &t = m.tensors[i];
  if (t.role == TGC_ROLE_OUTPUT) return error(std::string("'") + t.name + "' is an output of the model, not an input");
  NpyArray a;
  std::string why;
  if (!readNpy(file, a, why)) return error(std::string("input ") + t.name + ": " + why);
  if (why = mismatch(a, t); !why.empty()) return error(std::string("input ") + t.name + " ('" + file + "'): " + why);
  if (!a.data.empty()) std::memcpy(ptrs[size_t(i)], a.data.data(), a.data.size());
  provided.insert(i);
  return true;
}

bool Launch::seedRandom() {
  if (!args.seed) return true;
  std::string why = seedRandomState(m, ptrs, provided, *args.seed);
  return why.empty() || error(why);
}

// With --repeat every run starts from the same in-outs: their values are kept.
void Launch::keepInOuts() {
  for (int32_t i = 0; i < m.num_tensors && args.repeat > 0; ++i)
    if (m.tensors[i].role == TGC_ROLE_INOUT) {
      const uint8_t *p = static_cast<const uint8_t *>(ptrs[size_t(i)]);
      inouts.emplace_back(i, std::vector<uint8_t>(p, p + m.tensors[i].bytes));
    }
}

bool Launch::allocateWorkspace() {
  if (m.workspace_bytes > 0 && !(workspace = allocTensor(m.workspace_bytes)))
    return error("cannot allocate the " + std::to_string(m.workspace_bytes) + "-byte workspace");
  return true;
}

// With --repeat: one untimed warm-up run, then the timed ones, each reported
// as it ends; in-outs are restored before each. The timed runs are observed
// per call unless --no-profile.
bool Launch::runAll() {
  long runs = args.repeat > 0 ? args.repeat + 1 : 1;
  if (args.repeat > 0 && args.profile && m.set_observer) prof.emplace(m, size_t(args.repeat));
  bool ok = true;
  for (long r = 0; r < runs && ok; ++r) ok = runOnce(r);
  if (prof) m.set_observer(nullptr, nullptr);
  return ok;
}

bool Launch::runOnce(long r) {
  if (r > 0)
    for (auto &[i, data] : inouts) std::memcpy(ptrs[size_t(i)], data.data(), data.size());
  if (prof && r == 1) m.set_observer(&Profile::observe, &*prof);
  if (prof && r > 0) prof->run = size_t(r - 1);
  auto start = std::chrono::steady_clock::now();
  int status = m.run_vars(ptrs.data(), vars.data(), workspace.get());
  if (args.repeat > 0 && r > 0) {
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    std::printf("run %ld: %.6f ms\n", r - 1, ms.back());
    std::fflush(stdout);
  }
  if (status == TGC_OK) return true;
  return error("the model returned status " + std::to_string(status) + " (" + tgc_status_string(status) + ")");
}

// --output-dir: outputs as DIR/<name>.npy, in-outs as DIR/<name>.after.npy.
bool Launch::writeOutputs() {
  if (args.outDir.empty()) return true;
  std::error_code ec;
  std::filesystem::create_directories(args.outDir, ec);
  if (ec) return error("cannot create '" + args.outDir + "': " + ec.message());
  for (int32_t i = 0; i < m.num_tensors; ++i) {
    const tgc_tensor_info &t = m.tensors[i];
    if (t.role == TGC_ROLE_INPUT) continue;
    NpyArray a;
    a.descr = std::string(t.itemsize == 1 ? "|" : "<") + npyKind(t.dtype);
    a.shape.assign(t.shape, t.shape + t.rank);
    a.data.assign(static_cast<const uint8_t *>(ptrs[i]), static_cast<const uint8_t *>(ptrs[i]) + t.bytes);
    std::string file = std::string(t.name) + (t.role == TGC_ROLE_INOUT ? ".after" : "") + ".npy";
    std::string why;
    if (!writeNpy((std::filesystem::path(args.outDir) / file).string(), a, why)) return error(why);
  }
  return true;
}

void Launch::report() const {
  if (args.repeat <= 0) return;
  if (prof) printProfile(m, *prof, size_t(args.repeat));
  std::printf("runs=%ld min_ms=%.6f\nmedian_ms=%.6f\n", args.repeat, *std::min_element(ms.begin(), ms.end()), median(ms));
}

} // namespace

int launcherMain(const tgc_model_info &m, int argc, char **argv) {
  const char *argv0 = argc > 0 ? argv[0] : "model";
  if (m.abi_version != TGC_MODEL_ABI_VERSION) {
    std::fprintf(stderr, "%s: error: model ABI version %d, this launcher knows %d\n", argv0, m.abi_version,
                 TGC_MODEL_ABI_VERSION);
    return kFail;
  }
  Args args;
  if (std::optional<int> done = parseArgs(m, argv0, argc, argv, args)) return *done;
  if (m.bind_weights && args.weightsPath.empty()) args.weightsPath = defaultWeightsPath(argv0);
  if (args.listOnly) {
    list(m, args.weightsPath);
    return kOk;
  }
  Launch launch(m, argv0, std::move(args));
  if (!launch.bindVars() || !launch.bindWeights() || !launch.loadInputs() || !launch.seedRandom())
    return kFail;
  launch.keepInOuts();
  if (!launch.allocateWorkspace() || !launch.runAll() || !launch.writeOutputs())
    return kFail;
  launch.report();
  return kOk;
}

} // namespace tgc::rt
