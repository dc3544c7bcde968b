//===- Launcher.cpp - drive any compiled model from the command line ------===//
#include "Runtime/Launcher.h"
#include "Runtime/FileIO.h"
#include "Runtime/Npy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
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

struct AlignedFree {
  void operator()(void *p) const { std::free(p); }
};
using Storage = std::unique_ptr<void, AlignedFree>;

Storage allocate(int64_t bytes) {
  size_t n = (size_t(std::max<int64_t>(bytes, 1)) + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, n);
  if (p) std::memset(p, 0, n);
  return Storage(p);
}

int usage(const char *argv0, const char *msg) {
  if (msg) std::fprintf(stderr, "%s: error: %s\n", argv0, msg);
  std::fprintf(stderr,
               "usage: %s [--input NAME=FILE.npy]... [--output-dir DIR] [--repeat N] [--list]\n"
               "  --input NAME=FILE  data for input/in-out NAME (default: zeros); dtype and shape checked against\n"
               "                    the model (a flat tensor takes any shape with its element count)\n"
               "  --output-dir DIR   write outputs as DIR/<name>.npy, in-outs as DIR/<name>.after.npy\n"
               "  --repeat N         a warm-up, then N timed runs (in-outs restored each time); last line median_ms=<float>\n"
               "  --list             print the model's tensors and exit\n",
               argv0);
  return kUsage;
}

void list(const tgc_model_info &m) {
  static const char *roles[] = {"input", "output", "in-out"};
  std::printf("model %s: %d tensors, workspace %lld bytes\n", m.name, m.num_tensors, (long long)m.workspace_bytes);
  for (int32_t i = 0; i < m.num_tensors; ++i) {
    const tgc_tensor_info &t = m.tensors[i];
    std::printf("  %-12s %-7s %-8s %s %lld bytes\n", t.name, t.role >= 0 && t.role <= 2 ? roles[t.role] : "?",
                t.dtype_name, shapeText(t.shape, t.rank).c_str(), (long long)t.bytes);
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

} // namespace

int launcherMain(const tgc_model_info &m, int argc, char **argv) {
  const char *argv0 = argc > 0 ? argv[0] : "model";
  if (m.abi_version != TGC_MODEL_ABI_VERSION) {
    std::fprintf(stderr, "%s: error: model ABI version %d, this launcher knows %d\n", argv0, m.abi_version,
                 TGC_MODEL_ABI_VERSION);
    return kFail;
  }
  std::map<std::string, std::string> inputs;
  std::string outDir;
  long repeat = 0;
  bool listOnly = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    auto takeValue = [&](const std::string &flag) {
      if (arg.rfind(flag + "=", 0) == 0) {
        value = arg.substr(flag.size() + 1);
        return true;
      }
      if (arg == flag && i + 1 < argc) {
        value = argv[++i];
        return true;
      }
      return false;
    };
    if (arg == "--help" || arg == "-h") {
      usage(argv0, nullptr);
      return kOk;
    }
    if (arg == "--list") {
      listOnly = true;
    } else if (takeValue("--input")) {
      size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0) return usage(argv0, ("--input expects NAME=FILE, got '" + value + "'").c_str());
      if (!inputs.emplace(value.substr(0, eq), value.substr(eq + 1)).second)
        return usage(argv0, ("input '" + value.substr(0, eq) + "' given twice").c_str());
    } else if (takeValue("--output-dir")) {
      outDir = value;
    } else if (takeValue("--repeat")) {
      char *end = nullptr;
      repeat = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || repeat < 1 || repeat > 1000000)
        return usage(argv0, ("--repeat expects a count from 1 to 1000000, got '" + value + "'").c_str());
    } else {
      return usage(argv0, ("unknown argument '" + arg + "'").c_str());
    }
  }
  if (listOnly) {
    list(m);
    return kOk;
  }

  // Every input is checked before anything runs.
  std::vector<Storage> storage;
  std::vector<void *> ptrs;
  std::vector<std::pair<int32_t, std::vector<uint8_t>>> inouts; // original contents, restored before each run
  for (int32_t i = 0; i < m.num_tensors; ++i) {
    const tgc_tensor_info &t = m.tensors[i];
    storage.push_back(allocate(t.bytes));
    if (!storage.back()) {
      std::fprintf(stderr, "%s: error: cannot allocate %lld bytes for %s\n", argv0, (long long)t.bytes, t.name);
      return kFail;
    }
    ptrs.push_back(storage.back().get());
    auto given = inputs.find(t.name);
    if (given == inputs.end()) continue;
    if (t.role == TGC_ROLE_OUTPUT) {
      std::fprintf(stderr, "%s: error: '%s' is an output of the model, not an input\n", argv0, t.name);
      return kFail;
    }
    NpyArray a;
    std::string error;
    if (!readNpy(given->second, a, error)) {
      std::fprintf(stderr, "%s: error: input %s: %s\n", argv0, t.name, error.c_str());
      return kFail;
    }
    if (std::string why = mismatch(a, t); !why.empty()) {
      std::fprintf(stderr, "%s: error: input %s ('%s'): %s\n", argv0, t.name, given->second.c_str(), why.c_str());
      return kFail;
    }
    if (!a.data.empty()) std::memcpy(ptrs.back(), a.data.data(), a.data.size());
    if (t.role == TGC_ROLE_INOUT && repeat > 0) inouts.emplace_back(i, std::move(a.data));
    inputs.erase(given);
  }
  if (!inputs.empty()) {
    std::string names;
    for (int32_t i = 0; i < m.num_tensors; ++i)
      if (m.tensors[i].role != TGC_ROLE_OUTPUT) names += std::string(names.empty() ? "" : ", ") + m.tensors[i].name;
    std::fprintf(stderr, "%s: error: the model has no input '%s' (inputs: %s)\n", argv0, inputs.begin()->first.c_str(),
                 names.empty() ? "none" : names.c_str());
    return kFail;
  }
  Storage workspace;
  if (m.workspace_bytes > 0 && !(workspace = allocate(m.workspace_bytes))) {
    std::fprintf(stderr, "%s: error: cannot allocate the %lld-byte workspace\n", argv0, (long long)m.workspace_bytes);
    return kFail;
  }

  // With --repeat: one untimed warm-up run, then the timed ones; in-outs are restored before each.
  std::vector<double> ms;
  long runs = repeat > 0 ? repeat + 1 : 1;
  for (long r = 0; r < runs; ++r) {
    if (r > 0)
      for (auto &[i, data] : inouts) std::memcpy(ptrs[i], data.data(), data.size());
    auto start = std::chrono::steady_clock::now();
    int status = m.run(ptrs.data(), workspace.get());
    if (repeat > 0 && r > 0)
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (status != TGC_OK) {
      std::fprintf(stderr, "%s: error: the model returned status %d\n", argv0, status);
      return kFail;
    }
  }

  if (!outDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(outDir, ec);
    if (ec) {
      std::fprintf(stderr, "%s: error: cannot create '%s': %s\n", argv0, outDir.c_str(), ec.message().c_str());
      return kFail;
    }
    for (int32_t i = 0; i < m.num_tensors; ++i) {
      const tgc_tensor_info &t = m.tensors[i];
      if (t.role == TGC_ROLE_INPUT) continue;
      NpyArray a;
      a.descr = std::string(t.itemsize == 1 ? "|" : "<") + npyKind(t.dtype);
      a.shape.assign(t.shape, t.shape + t.rank);
      a.data.assign(static_cast<const uint8_t *>(ptrs[i]), static_cast<const uint8_t *>(ptrs[i]) + t.bytes);
      std::string path = (std::filesystem::path(outDir) / (std::string(t.name) + (t.role == TGC_ROLE_INOUT ? ".after" : "") + ".npy")).string();
      std::string error;
      if (!writeNpy(path, a, error)) {
        std::fprintf(stderr, "%s: error: %s\n", argv0, error.c_str());
        return kFail;
      }
    }
  }
  if (repeat > 0) {
    std::vector<double> sorted = ms;
    for (size_t r = 0; r < ms.size(); ++r) std::printf("run %zu: %.6f ms\n", r, ms[r]);
    std::sort(sorted.begin(), sorted.end());
    double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                      : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
    std::printf("runs=%ld min_ms=%.6f\nmedian_ms=%.6f\n", repeat, sorted.front(), median);
  }
  return kOk;
}

} // namespace tgc::rt
