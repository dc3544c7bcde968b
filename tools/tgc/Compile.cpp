//===- Compile.cpp - `tgc compile`: a model as object, header, executable -===//
//
// GRAPH -> the pipeline (Pipeline/Pipeline.h: a Model, its memory plan, the
// object and header text) -> files, and an executable linked with the
// generic launcher (Runtime/Launcher.h). Every
// file lands beside -o with its stem; nothing is written unless every
// requested artifact was produced.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"

#include "Codegen/Lower/MLIRToLLVM.h"
#include "Codegen/Model/ModelWeights.h"
#include "Pipeline/Pipeline.h"
#include "Runtime/FileIO.h"

#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

namespace tgc::driver {
namespace {

namespace fs = std::filesystem;

struct CompileOptions {
  std::string input = "-";
  std::string output;
  std::vector<std::string> emit;
  std::string name;
  std::string target;
  std::string cpu;
  std::string format = "auto";
  std::string root;
  std::string weights = "pass";
  uint64_t weightsThreshold = uint64_t(kDefaultWeightsThreshold);
  KernelFlags kernel;
  CacheFlags cache;
  unsigned optLevel = 3;
  bool stats = false;
  GradOptions grad; ///< --grad/--wrt: a training step, gradients as extra outputs (docs/grad.md)
  ResourceLimits limits;
};

const std::set<std::string> kEmitKinds = {"obj", "header", "exe", "llvm", "mlir", "asm", "test", "benchmark"};

/// The folder name of a target's runtime, Debian's multiarch spelling
/// (`aarch64-linux-gnu`, whatever vendor or alias the triple uses), or "" for
/// the host's: a triple of the host's architecture and OS uses the host's runtime.
std::string runtimeTriple(const std::string &target) {
  if (target.empty()) return "";
  llvm::Triple t(llvm::Triple::normalize(target)), host(llvm::sys::getProcessTriple());
  if (t.getArch() == host.getArch() && t.getOS() == host.getOS()) return "";
  std::string name = std::string(llvm::Triple::getArchTypeName(t.getArch())) + "-" + t.getOSName().str();
  return t.getEnvironmentName().empty() ? name : name + "-" + t.getEnvironmentName().str();
}

/// The folders that may hold the runtime of `triple` ("" = the host's): an
/// environment override, beside the installed tgc (<prefix>/bin/tgc ->
/// <prefix>/<libdir>), or the build tree; a cross target's is the subfolder
/// named by its triple in each.
std::vector<fs::path> runtimeDirs(const std::string &triple) {
  std::vector<fs::path> dirs;
  if (const char *env = std::getenv("TGC_RUNTIME_DIR")) dirs.push_back(env);
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
#ifdef TGC_INSTALL_LIBDIR
  if (!ec) dirs.push_back(self.parent_path().parent_path() / TGC_INSTALL_LIBDIR);
#endif
  if (!ec) dirs.push_back(self.parent_path().parent_path() / "lib");
#ifdef TGC_BUILD_RUNTIME_DIR
  dirs.push_back(TGC_BUILD_RUNTIME_DIR);
#endif
  std::vector<fs::path> unique; // <libdir> is often lib
  for (fs::path &d : dirs)
    if (std::find(unique.begin(), unique.end(), triple.empty() ? d : d / triple) == unique.end())
      unique.push_back(triple.empty() ? d : d / triple);
  return unique;
}

/// The first folder of `dirs` that holds every one of `files`, or "".
std::string findRuntimeDir(const std::vector<fs::path> &dirs, const std::vector<std::string> &files) {
  std::error_code ec;
  for (const fs::path &d : dirs)
    if (std::all_of(files.begin(), files.end(), [&](const std::string &f) { return fs::exists(d / f, ec); }))
      return d.string();
  return "";
}

/// Why a target has no runtime, and what installs one.
std::string missingRuntime(const std::string &triple, const std::vector<fs::path> &dirs) {
  std::string searched;
  for (const fs::path &d : dirs) searched += (searched.empty() ? "" : ", ") + d.string();
  if (triple.empty())
    return "cannot find libtgc_launcher.a / libtgc_runtime.a in " + searched +
           " (set TGC_RUNTIME_DIR to the folder that holds them)";
  // Debian names its cross packages by its own architecture names.
  std::string arch = triple.substr(0, triple.find('-'));
  static const std::map<std::string, std::string> kDebianArch = {
      {"aarch64", "arm64"}, {"x86_64", "amd64"}, {"powerpc64le", "ppc64el"}, {"arm", "armhf"}};
  auto it = kDebianArch.find(arch);
  std::string debian = it == kDebianArch.end() ? arch : it->second;
  return "no tgc runtime for " + triple + ": libtgc_launcher.a / libtgc_runtime.a are not in " + searched +
         " (tgc builds them for " + triple + " when a C++ cross toolchain for it is installed, on Debian "
         "libstdc++-12-dev-" + debian + "-cross: see docs/deploy.md; TGC_RUNTIME_DIR/" + triple + " names another)";
}

std::string linkerDriver() {
  if (const char *env = std::getenv("TGC_CXX")) return env;
#ifdef TGC_LINK_CXX
  if (fs::exists(TGC_LINK_CXX)) return TGC_LINK_CXX;
#endif
  return "clang++-22";
}

/// Runs argv; returns the exit status (-1 if it could not start).
int runProgram(const std::vector<std::string> &argv) {
  std::vector<char *> args;
  for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Sets `dir` to the runtime folder for `target` ("" = the host); "" or a
/// message why there is none.
std::string findRuntime(const std::string &target, std::string &dir) {
  std::string triple = runtimeTriple(target);
  std::vector<fs::path> dirs = runtimeDirs(triple);
  dir = findRuntimeDir(dirs, {"libtgc_launcher.a", "libtgc_runtime.a"});
  return dir.empty() ? missingRuntime(triple, dirs) : "";
}

/// Links `object` with the launcher in the runtime folder `dir` of `target`
/// ("" = the host) into `exe`; a message on failure. A cross target's
/// executable is static: one file that runs on any Linux of its
/// architecture, whatever C++ library the board has (or none), and under
/// qemu-user without a sysroot.
std::string linkExecutable(const std::string &object, const std::string &modelSymbol, const std::string &exe,
                           const std::string &dir, const std::string &target) {
  std::string triple = runtimeTriple(target);
  std::vector<std::string> argv = {linkerDriver(), "-o", exe, object, "-Wl,--defsym=tgc_launcher_model=" + modelSymbol,
                                   dir + "/libtgc_launcher.a", dir + "/libtgc_runtime.a", "-lm"};
  if (!triple.empty()) argv.insert(argv.end(), {"--target=" + triple, "-static"});
#ifdef TGC_LLD
  argv.push_back(fs::exists(TGC_LLD) ? std::string("--ld-path=") + TGC_LLD : "-fuse-ld=lld");
#else
  argv.push_back("-fuse-ld=lld");
#endif
  int rc = runProgram(argv);
  if (rc == 0) return "";
  std::string cmd;
  for (const std::string &a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  return rc < 0 || rc == 127 ? "cannot run the linker: " + cmd : "linking failed (exit " + std::to_string(rc) + "): " + cmd;
}

int fail(const std::string &msg) {
  std::cerr << "tgc compile: error: " << msg << "\n";
  return kFailure;
}

/// Where the model's weights go (--weights): the inputs the graph gives data
/// for, embedded or in STEM.weights (its bytes returned), or left as arguments.
Result<std::string> placeModelWeights(const CompileOptions &o, const Model &model, ModelWeights &weights) {
  static const std::map<std::string, WeightsMode> kModes = {
      {"pass", WeightsMode::Pass}, {"embed", WeightsMode::Embed}, {"external", WeightsMode::External},
      {"auto", WeightsMode::Auto}};
  int64_t dataBytes = 0;
  std::vector<size_t> weightInputs = weightTensors(model, &dataBytes);
  Result<WeightsMode> mode = resolveWeightsMode(kModes.at(o.weights), dataBytes, int64_t(o.weightsThreshold));
  if (!mode) return mode.error();
  std::string weightsFile;
  // external always writes the file (with no tensors, an empty table), so builds can depend on it.
  if (*mode == WeightsMode::External || (*mode == WeightsMode::Embed && !weightInputs.empty()))
    if (Status st = placeWeights(model, weightInputs, *mode, weights, weightsFile); !st.ok()) return st.error();
  return weightsFile;
}

ModelCodegenOptions codegenOptions(const CompileOptions &o, const std::set<std::string> &emit) {
  ModelCodegenOptions copts;
  copts.target.triple = o.target;
  copts.target.cpu = o.cpu;
  copts.target.optLevel = o.optLevel;
  copts.kernel = kernelOptions(o.kernel);
  copts.emitObject = emit.count("obj") || emit.count("exe");
  copts.keepMLIR = emit.count("mlir");
  copts.keepLLVMIR = emit.count("llvm");
  copts.emitAssembly = emit.count("asm");
  copts.relocatableLinker = codegen::findRelocatableLinker();
  return copts;
}

void printCompileStats(const Graph &g, const BuiltModel &built, const CompiledModel &compiled, const ModelWeights &weights,
                       size_t weightsFileBytes, const codegen::KernelCache *cache) {
  const Model &model = built.model;
  std::cout << "model=" << model.name << " kernels=" << model.plan.kernels.size() << " calls=" << model.plan.calls.size()
            << " tensors=" << model.tensors.size() - weights.placed().size();
  if (!weights.embedded.empty()) std::cout << " embedded=" << weights.embedded.size();
  if (!weights.external.empty()) std::cout << " external=" << weights.external.size() << " weights_bytes=" << weightsFileBytes;
  std::cout << "\n"
            << "workspace_bytes=" << compiled.memory.workspaceBytes << " unshared_bytes=" << compiled.memory.unsharedBytes
            << "\n";
  // Read only here: tinygrad's plan of a corpus case costs a parse of its linear.json.
  int64_t arena = built.tinygradArenaBytes ? built.tinygradArenaBytes : tinygradArenaBesideGraph(g);
  if (arena) std::cout << "tinygrad_arena_bytes=" << arena << "\n";
  if (cache) std::cout << "kernel_cache_hits=" << cache->hits() << " kernel_cache_misses=" << cache->misses() << "\n";
}

/// Links `object` with the launcher into `exePath` through temporary files
/// beside it; "" or what went wrong (nothing is left behind then).
std::string writeExecutable(const std::string &object, const std::string &modelName, const std::string &exePath,
                            const std::string &runtimeDir, const std::string &target) {
  std::string tmpSuffix = ".tmp." + std::to_string(::getpid()), error;
  std::string tmpObj = exePath + tmpSuffix + ".o", tmpExe = exePath + tmpSuffix;
  if (!rt::writeFileAtomic(tmpObj, object, error)) return error;
  std::string linkError = linkExecutable(tmpObj, modelName + "_model", tmpExe, runtimeDir, target);
  std::remove(tmpObj.c_str());
  if (!linkError.empty()) {
    std::remove(tmpExe.c_str());
    return linkError;
  }
  if (std::rename(tmpExe.c_str(), exePath.c_str()) != 0) {
    std::remove(tmpExe.c_str());
    return "cannot write '" + exePath + "'";
  }
  return "";
}

/// The artifacts --emit asks for besides the executable, each written
/// atomically beside -o; "" or what went wrong.
std::string writeArtifacts(const CompileOptions &o, const std::set<std::string> &emit, const Model &model,
                           const CompiledModel &compiled, const ModelWeights &weights, const std::string &weightsFile) {
  fs::path stem = fs::path(o.output).parent_path() / fs::path(o.output).stem();
  const ModelArtifacts &art = compiled.artifacts;
  std::vector<std::pair<std::string, std::string>> files; // path, contents
  if (emit.count("obj")) files.push_back({o.output, art.object});
  // The weights file goes with the code that binds it.
  if (!weightsFile.empty() && (emit.count("obj") || emit.count("exe"))) files.push_back({stem.string() + ".weights", weightsFile});
  if (emit.count("header")) files.push_back({stem.string() + ".h", modelHeader(model, compiled.memory, weights)});
  if (emit.count("llvm")) files.push_back({stem.string() + ".ll", art.llvmIR});
  if (emit.count("mlir")) files.push_back({stem.string() + ".mlir", art.mlir});
  if (emit.count("asm")) files.push_back({stem.string() + ".s", art.assembly});
  std::string headerName = stem.filename().string() + ".h";
  // The programs find the weights file where it is written (absolute when -o is).
  std::string defaultWeights = weightsFile.empty() ? "" : stem.string() + ".weights";
  if (emit.count("test")) files.push_back({stem.string() + "_test.c", modelTestProgram(model.name, headerName, defaultWeights)});
  if (emit.count("benchmark"))
    files.push_back({stem.string() + "_benchmark.c", modelBenchmarkProgram(model.name, headerName, defaultWeights)});
  std::string error;
  for (const auto &[path, data] : files)
    if (!rt::writeFileAtomic(path, data, error)) return error;
  return "";
}

int runCompile(const CompileOptions &o) {
  std::set<std::string> emit(o.emit.begin(), o.emit.end());
  if (emit.empty()) emit = {"obj", "header"};
  fs::path out(o.output);
  std::string exePath = (out.parent_path() / out.stem()).string();
  if (emit.count("exe") && exePath == o.output) {
    std::cerr << "tgc compile: error: -o " << o.output << " needs an extension (.o) when --emit has exe\n";
    return kUsage;
  }
  ModelOptions mopts;
  mopts.name = cIdentifier(o.name.empty() ? out.stem().string() : o.name);
  if (!gradRequest(o.grad, "compile", mopts.grad)) return kUsage;
  // Before any work: a missing runtime fails the compile anyway.
  std::string runtimeDir;
  if (std::string why; emit.count("exe") && !(why = findRuntime(o.target, runtimeDir)).empty()) return fail(why);

  auto ctx = std::make_unique<Context>();
  Graph g;
  if (Status st = loadDocument(*ctx, o.input, o.format, o.root, o.limits, g); !st.ok()) return report(st.error()), kFailure;
  Result<BuiltModel> built = buildModelFromDocument(*ctx, g, mopts);
  if (!built) return report(built.error()), kFailure;
  ModelCodegenOptions copts = codegenOptions(o, emit);
  std::unique_ptr<codegen::KernelCache> cache = openKernelCache(o.cache, "compile");
  copts.cache = cache.get();
  Result<std::string> weightsFile = placeModelWeights(o, built->model, copts.weights);
  if (!weightsFile) return fail(weightsFile.error().message);
  Result<CompiledModel> compiled = compileModelArtifacts(built->model, copts);
  if (!compiled) return report(compiled.error()), kFailure;
  if (o.stats) printCompileStats(g, *built, *compiled, copts.weights, weightsFile->size(), cache.get());

  if (std::error_code ec; !out.parent_path().empty() && (fs::create_directories(out.parent_path(), ec), ec))
    return fail("cannot create '" + out.parent_path().string() + "': " + ec.message());
  // The executable first: it is the one step that can still fail.
  if (emit.count("exe"))
    if (std::string why = writeExecutable(compiled->artifacts.object, built->model.name, exePath, runtimeDir, o.target); !why.empty())
      return fail(why);
  if (std::string why = writeArtifacts(o, emit, built->model, *compiled, copts.weights, *weightsFile); !why.empty())
    return fail(why);
  return kSuccess;
}

} // namespace

void addCompileCommand(CLI::App &app, int &exitCode) {
  auto o = std::make_shared<CompileOptions>();
  CLI::App *cmd = app.add_subcommand("compile", "Compile a model to an object file, a C header and an executable.");
  cmd->add_option("input", o->input, "Model: a tensor graph or a LINEAR document, JSON or text form ('-' = stdin)")
      ->required();
  cmd->add_option("-o,--output", o->output, "The object file OUT/STEM.o; other outputs land beside it as OUT/STEM.*")
      ->required();
  cmd->add_option("--emit", o->emit, "Comma list of: obj, header (OUT/STEM.h), exe (OUT/STEM), llvm (.ll), mlir, "
                                     "asm (.s), test (STEM_test.c: a smoke test), benchmark (STEM_benchmark.c); "
                                     "default obj,header")
      ->delimiter(',')
      ->check(CLI::IsMember(kEmitKinds));
  cmd->add_option("--name", o->name, "Model name, the prefix of every exported symbol (default: the stem of -o)");
  cmd->add_option("--target", o->target, "Target triple, e.g. aarch64-linux-gnu (default: the host)");
  cmd->add_option("--cpu", o->cpu, "Target CPU, e.g. x86-64-v3, neoverse-v1, host (default: host; generic when "
                                   "cross compiling)");
  addKernelFlags(cmd, o->kernel,
                 "1 = serial kernels (no calls into the runtime's thread pool); otherwise big kernels run their "
                 "outer loop on the pool, sized at run time (default: the core count; the launcher's --threads)");
  addCacheFlags(cmd, o->cache);
  cmd->add_option("-O", o->optLevel, "Optimization level 0-3")->check(CLI::Range(0u, 3u))->capture_default_str();
  cmd->add_option("--format", o->format, "Input form (auto: from the extension, else the content)")
      ->check(CLI::IsMember({"auto", "json", "text"}))
      ->capture_default_str();
  cmd->add_option("--weights", o->weights, "pass: every input is an argument; embed: inputs the graph gives data "
                                           "files for become read-only data in the object; external: their data "
                                           "goes to OUT/STEM.weights, which the program binds at run time; auto: "
                                           "embed up to --weights-threshold bytes, external above")
      ->check(CLI::IsMember({"pass", "embed", "external", "auto"}))
      ->capture_default_str();
  addByteSizeOption(cmd, "--weights-threshold", o->weightsThreshold,
                    "--weights=auto embeds the weights when they total at most this many bytes (never more than "
                    "1GiB); suffixes as for --max-memory",
                    "64MiB", uint64_t(INT64_MAX));
  cmd->add_option("--root", o->root, "Keep only this root of a multi-root document (name or index)");
  cmd->add_flag("--stats", o->stats, "Print kernel/call counts and the workspace size, and tinygrad's arena size "
                                     "when known (a LINEAR input, or a linear.json beside the graph)");
  addGradOptions(cmd, o->grad, "their gradients become extra outputs out<I> (after the SINK's own), in the same "
                              "artifact as the forward pass");
  addLimitOptions(cmd, o->limits);
  cmd->footer("Examples:\n"
              "  tgc compile linear.json -o out/model.o                 out/model.o + out/model.h\n"
              "  tgc compile linear.json -o out/model.o --emit=exe      out/model: ./model --input s3=x.npy --output-dir r\n"
              "  tgc compile linear.json -o arm/model.o --target=aarch64-linux-gnu --cpu=neoverse-n1\n"
              "  tgc compile graph.json -o out/m.o --weights=external --emit=exe   out/m + out/m.weights (bound at run time)\n"
              "  tgc compile graph.json -o out/step.o --grad=out0 --wrt=n15,n23   a training step: loss + gradients");
  cmd->callback([o, &exitCode] { exitCode = runCompile(*o); });
}

} // namespace tgc::driver
