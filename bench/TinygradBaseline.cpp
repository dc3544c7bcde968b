//===- TinygradBaseline.cpp - tinygrad's own kernels, compiled here --------===//
//
// A local baseline for a corpus model: the C that tinygrad's ClangRenderer
// rendered for its kernels (programs.json), compiled on this machine the way
// tinygrad's ClangCompiler compiles it (clang -O2 -ffreestanding
// -fno-math-errno -nostdlib -march=native; clang-14, the version tinygrad's
// run used, when present), and run from C in tinygrad's schedule order over
// tinygrad's own memory plan (linear.json). A kernel with a core_id variable
// runs its global_size[0] slices one after another, as tinygrad's single CPU
// worker does. No Python: this is what tinygrad's kernels cost, without its
// launch overhead.
//
//===----------------------------------------------------------------------===//
#include "Baseline.h"

#include "IR/JSON.h"
#include "Runtime/Npy.h"
#include "Schedule/Sugar.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <thread>
#include <unistd.h>

namespace tgc::bench {

namespace fs = std::filesystem;

namespace {

/// The C kernels' parameters are pointers and ints; both travel in 64-bit
/// integer registers or stack slots in the SysV x86-64 calling convention,
/// so one signature of N intptr_t covers every kernel of N parameters.
void callKernel(void *fn, const std::vector<intptr_t> &a) {
  using I = intptr_t;
  switch (a.size()) {
#define TGC_CALL(N, ...)                                                                                               \
  case N:                                                                                                              \
    reinterpret_cast<void (*)(__VA_ARGS__)>(fn)
    TGC_CALL(1, I)(a[0]); break;
    TGC_CALL(2, I, I)(a[0], a[1]); break;
    TGC_CALL(3, I, I, I)(a[0], a[1], a[2]); break;
    TGC_CALL(4, I, I, I, I)(a[0], a[1], a[2], a[3]); break;
    TGC_CALL(5, I, I, I, I, I)(a[0], a[1], a[2], a[3], a[4]); break;
    TGC_CALL(6, I, I, I, I, I, I)(a[0], a[1], a[2], a[3], a[4], a[5]); break;
    TGC_CALL(7, I, I, I, I, I, I, I)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]); break;
    TGC_CALL(8, I, I, I, I, I, I, I, I)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); break;
    TGC_CALL(9, I, I, I, I, I, I, I, I, I)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]); break;
    TGC_CALL(10, I, I, I, I, I, I, I, I, I, I)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]); break;
    TGC_CALL(11, I, I, I, I, I, I, I, I, I, I, I)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]); break;
    TGC_CALL(12, I, I, I, I, I, I, I, I, I, I, I, I)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]); break;
#undef TGC_CALL
  default: break; // rejected before the run
  }
}

std::string compilerCommand() {
  for (const char *cc : {"/usr/bin/clang-14", "/usr/bin/clang"})
    if (access(cc, X_OK) == 0) return cc;
  return "clang";
}

struct Launch {
  int call = -1;   ///< index into the plan's calls
  void *fn = nullptr;
  int slices = 1;  ///< global_size[0] with a core_id variable, else 1
  bool coreId = false;
};

/// tinygrad's C sources compiled in a scratch folder, each into its own
/// shared object (tinygrad reuses function names across sources); closed and
/// removed again on destruction.
class SharedObjects {
public:
  SharedObjects() = default;
  SharedObjects(const SharedObjects &) = delete;
  SharedObjects &operator=(const SharedObjects &) = delete;
  ~SharedObjects() {
    for (auto &[id, h] : handles_) dlclose(h);
    std::error_code ec;
    if (!work_.empty()) fs::remove_all(work_, ec);
  }
  /// Compiles the sources the program calls use in `work` and loads them;
  /// "" or why not.
  std::string build(const nlohmann::json &calls, const nlohmann::json &sources, fs::path work, double &compileMs);
  void *handle(int sourceId) { return handles_[sourceId]; }

private:
  fs::path work_;
  std::map<int, void *> handles_;
};

std::string SharedObjects::build(const nlohmann::json &calls, const nlohmann::json &sources, fs::path work,
                                 double &compileMs) {
  work_ = std::move(work);
  fs::create_directories(work_);
  std::map<int, std::string> used;
  for (const auto &c : calls)
    if (c.value("kind", "") == "program") used[c["source_id"].get<int>()] = "s" + std::to_string(c["source_id"].get<int>());
  for (const auto &[id, stem] : used) std::ofstream(work_ / (stem + ".c")) << sources[id].get<std::string>();
  int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  std::string cmd = "cd '" + work_.string() + "' && ls *.c | xargs -P " + std::to_string(cores) + " -I{} " +
                    compilerCommand() +
                    " -shared -x c -O2 -fPIC -ffreestanding -fno-math-errno -nostdlib -fno-ident -march=native {} -o {}.so";
  auto t0 = Clock::now();
  int rc = std::system(cmd.c_str());
  compileMs = msSince(t0);
  if (rc != 0) return "clang failed on tinygrad's sources";
  for (const auto &[id, stem] : used) {
    void *h = dlopen((work_ / (stem + ".c.so")).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return dlerror();
    handles_[id] = h;
  }
  return "";
}

/// How each of the plan's calls runs: a program's function (with core_id
/// slices), or a copy; "" or why not.
std::string findLaunches(const nlohmann::json &calls, const SchedulePlan &plan, SharedObjects &objects,
                         std::vector<Launch> &launches) {
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto &c = calls[i];
    Launch l;
    l.call = int(i);
    if (c.value("kind", "") == "program") {
      l.fn = dlsym(objects.handle(c["source_id"].get<int>()), c["function_name"].get<std::string>().c_str());
      if (!l.fn) return "no symbol " + c["function_name"].get<std::string>();
      for (const auto &v : c["vars"])
        if (v != "core_id") return "kernel variable " + v.dump() + " (only core_id is supported)";
      l.coreId = !c["vars"].empty();
      l.slices = l.coreId ? c["global_size"][0].get<int>() : 1;
      if (plan.calls[i].args.size() + (l.coreId ? 1 : 0) > 12) return "a kernel with > 12 parameters";
    } else if (plan.calls[i].kind != ScheduleCall::Kind::Copy) {
      return "call " + std::to_string(i) + " is neither a program nor a copy";
    }
    launches.push_back(l);
  }
  return "";
}

using Inputs = std::vector<std::pair<int, std::vector<uint8_t>>>; ///< (plan buffer, bytes)

/// The graph's data files, each for the linear buffer with the same tinygrad
/// buffer id; "" or why not.
std::string readInputs(const fs::path &dir, const SchedulePlan &plan, Inputs &inputs) {
  Context gctx;
  Result<Graph> g = readGraphJSONFile(gctx, (dir / "graph.json").string());
  if (!g) return g.error().str();
  for (const BufferFile &bf : g->buffers) {
    if (bf.file.empty()) continue;
    int b = plan.indexOfSlot(rangeify::paramFields(bf.node).slot);
    if (b < 0) continue; // not used by the schedule
    rt::NpyArray a;
    std::string error;
    if (!rt::readNpy((fs::path(g->baseDir) / bf.file).string(), a, error)) return error;
    if (a.data.size() > plan.buffers[b].bytes()) return bf.file + " is larger than its buffer";
    inputs.emplace_back(b, std::move(a.data));
  }
  return "";
}

/// One run of the schedule: its calls in order, a core_id kernel's slices one after another.
void runLaunches(const std::vector<Launch> &launches, const SchedulePlan &plan, HostBuffers &hb) {
  for (const Launch &l : launches) {
    const ScheduleCall &call = plan.calls[size_t(l.call)];
    auto ptr = [&](const ScheduleArg &a) { return static_cast<char *>(hb.data(a.buffer)) + a.byteOffset; };
    if (!l.fn) {
      std::memcpy(ptr(call.args[0]), ptr(call.args[1]), size_t(call.args[1].bytes));
      continue;
    }
    std::vector<intptr_t> args;
    for (const ScheduleArg &a : call.args) args.push_back(reinterpret_cast<intptr_t>(ptr(a)));
    if (l.coreId) args.push_back(0);
    for (int t = 0; t < l.slices; ++t) {
      if (l.coreId) args.back() = t;
      callKernel(l.fn, args);
    }
  }
}

} // namespace

BaselineResult tinygradCBaseline(const fs::path &dir, int reps, double minSampleMs, const std::string &workRoot) {
  BaselineResult r;
  auto fail = [&](std::string msg) {
    r.error = std::move(msg);
    return r;
  };
  nlohmann::json meta = readJson(dir / "meta.json"), programs = readJson(dir / "programs.json");
  if (!meta.is_object() || !programs.is_object() || !fs::exists(dir / "linear.json"))
    return fail("no programs.json / linear.json");
  const nlohmann::json &calls = meta["calls"];
  Context ctx;
  Result<Graph> linearDoc = readGraphJSONFile(ctx, (dir / "linear.json").string());
  if (!linearDoc) return fail(linearDoc.error().str());
  const UOp *linear = linearDoc->root("linear");
  if (!linear) return fail("linear.json has no root 'linear'");
  Result<SchedulePlan> plan = planLinear(linear);
  if (!plan) return fail(plan.error().str());
  if (plan->calls.size() != calls.size()) return fail("meta.json's calls do not match linear.json's");

  SharedObjects objects;
  fs::path work = fs::path(workRoot) / ("tgbase-" + std::to_string(getpid()) + "-" + dir.filename().string());
  if (std::string why = objects.build(calls, programs["sources"], work, r.compileMs); !why.empty()) return fail(why);
  std::vector<Launch> launches;
  if (std::string why = findLaunches(calls, *plan, objects, launches); !why.empty()) return fail(why);
  Result<HostBuffers> hb = HostBuffers::allocate(*plan);
  if (!hb) return fail(hb.error().str());
  Inputs inputs;
  if (std::string why = readInputs(dir, *plan, inputs); !why.empty()) return fail(why);
  auto load = [&] {
    for (const auto &[b, bytes] : inputs) std::memcpy(hb->data(size_t(b)), bytes.data(), bytes.size());
  };
  r.execMs = modelMedianMs(reps, minSampleMs, load, [&] { runLaunches(launches, *plan, *hb); });
  r.ok = true;
  return r;
}

} // namespace tgc::bench
