//===- CorpusRunTest.cpp - run tinygrad's final schedules, compare outputs -===//
//
// For every corpus case with status "ok": compile linear.json with the
// codegen, load the input buffers (inputs/n<K>.npy), run the LINEAR, and
// compare every realized output (expected/out<I>.npy) and every changed
// input buffer (buffers_after) with what tinygrad computed.
//
// A case with tinygrad Variables runs at its meta.json `var_vals`; the members
// of a family `<case>@<value>` (the same linear.json, exported with the
// variable bound to each value) also run from one compiled schedule, each at
// its own values: compiled once, run at every value.
//
// Where an output lives (documented in docs/codegen.md): graph.json, call.json
// and linear.json are read into one Context, so a tensor of graph.json and its
// copy in call.json are the same interned node, and a BUFFER is the same node
// in every document (same ParamArg: slot = tinygrad's buffer id). Output I is
// source `sink_index` of graph.json's root SINK; call.json's buffer_map maps a
// realized tensor to a view of its BUFFER (RESHAPE(BUFFER, shape)). Outputs
// that are views of a realized tensor (a PERMUTE or RESHAPE of it) or an AFTER
// of a buffer are resolved by applying those movement ops to the buffer's
// contents on the host.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Exec/CompiledLinear.h"
#include "IR/BufferData.h"
#include "IR/JSON.h"
#include "Runtime/FileIO.h"
#include "Runtime/Npy.h"
#include "ArrayCompare.h"
#include "CorpusFiles.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>

using namespace tgc;
using namespace tgc::testing;
namespace fs = std::filesystem;

namespace {

std::optional<std::vector<int64_t>> staticShape(const UOp *u) {
  const Shape *s = u->shape();
  if (!s) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim &d : *s) {
    if (!d.isStatic()) return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

/// The ints of a shape operand (a CONST or a STACK of CONSTs).
std::optional<std::vector<int64_t>> shapeOperand(const UOp *u) {
  std::vector<int64_t> out;
  if (u->is(Op::CONST) && u->arg().isInt()) return std::vector<int64_t>{u->arg().getInt()};
  if (!u->is(Op::STACK)) return std::nullopt;
  for (const UOp *e : u->src()) {
    if (!e->is(Op::CONST) || !e->arg().isInt()) return std::nullopt;
    out.push_back(e->arg().getInt());
  }
  return out;
}

/// out[i] = in[map(i)] (or zeros where map gives nothing), over `outShape`.
HostArray remap(const HostArray &in, std::vector<int64_t> outShape,
                const std::function<std::optional<std::vector<int64_t>>(const std::vector<int64_t> &)> &map) {
  HostArray out{in.dtype, outShape, {}};
  size_t item = size_t(in.dtype.itemsize());
  int64_t n = numelOf(outShape);
  out.data.assign(size_t(n) * item, 0);
  std::vector<int64_t> idx(outShape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    if (auto src = map(idx)) {
      int64_t off = 0;
      for (size_t k = 0; k < in.shape.size(); ++k) off = off * in.shape[k] + (*src)[k];
      std::memcpy(&out.data[size_t(flat) * item], &in.data[size_t(off) * item], item);
    }
    for (size_t k = idx.size(); k-- > 0;) {
      if (++idx[k] < outShape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

class CaseRun {
public:
  explicit CaseRun(const fs::path &dir, CodegenOptions opts = {}) : dir_(dir), opts_(std::move(opts)) {}

  /// Runs the case; returns "" on success or what went wrong. `report` gets one line per case.
  std::string run(std::string &report) {
    std::string err = compile();
    return err.empty() ? runAs(dir_, report) : err;
  }
  /// Compiles the case's linear.json.
  std::string compile();
  /// Runs the compiled schedule on the inputs of case `member` (this case or
  /// one of its family: the same schedule) at its var_vals, and compares
  /// with its outputs.
  std::string runAs(const fs::path &member, std::string &report);
  int checked = 0;       ///< arrays compared
  bool exact = false;    ///< every compared array matched bit for bit

private:
  std::optional<HostArray> value(const UOp *t, std::string &why, int depth = 0);
  std::optional<HostArray> bufferContents(const UOp *buf, std::string &why);
  std::string read(const fs::path &dir, const char *name, Graph &g);

  fs::path dir_;
  CodegenOptions opts_;
  Context ctx_;
  Graph graph_, call_, linear_;
  std::unordered_map<int64_t, const UOp *> graphNodes_;
  std::unordered_map<const UOp *, const UOp *> bufferMap_;
  std::unique_ptr<CompiledSchedule> cs_;
  std::unique_ptr<HostBuffers> bufs_;
};

std::string CaseRun::read(const fs::path &dir, const char *name, Graph &g) {
  auto r = readGraphJSONFile(ctx_, (dir / name).string());
  if (!r) return r.error().str();
  g = std::move(*r);
  return "";
}

std::optional<HostArray> CaseRun::bufferContents(const UOp *buf, std::string &why) {
  HostArray a{buf->dtype(), {}, {}};
  int i = cs_->plan().indexOf(buf);
  if (i < 0)
    if (const tgc::Value *slot = buf->arg().field("slot"); slot && slot->isInt()) i = cs_->plan().indexOfSlot(slot->getInt());
  if (i >= 0) {
    auto bytes = bufs_->bytes(size_t(i));
    a.data.assign(reinterpret_cast<const uint8_t *>(bytes.data()), reinterpret_cast<const uint8_t *>(bytes.data()) + bytes.size());
    a.shape = {cs_->plan().buffers[size_t(i)].numel};
    return a;
  }
  // A buffer no call touches keeps its input contents.
  for (const BufferFile &bf : graph_.buffers)
    if (bf.node == buf && !bf.file.empty()) {
      auto d = loadBufferFile(graph_, bf);
      if (!d) return why = d.error().str(), std::nullopt;
      a.data = std::move(*d);
      a.shape = {bf.numel};
      return a;
    }
  why = "BUFFER " + buf->str() + " is neither in the schedule nor an input";
  return std::nullopt;
}

std::optional<HostArray> CaseRun::value(const UOp *t, std::string &why, int depth) {
  if (depth > 64) return why = "view chain too deep", std::nullopt;
  if (auto it = bufferMap_.find(t); it != bufferMap_.end() && it->second != t) return value(it->second, why, depth + 1);
  switch (t->op()) {
  case Op::BUFFER: return bufferContents(t, why);
  case Op::AFTER:
  case Op::CONTIGUOUS:
  case Op::DETACH:
  case Op::CONTIGUOUS_BACKWARD: return value(t->src(0), why, depth + 1);
  case Op::RESHAPE:
  case Op::PERMUTE:
  case Op::EXPAND:
  case Op::SHRINK:
  case Op::PAD:
  case Op::FLIP: break;
  default: return why = "output node " + t->str() + " is not a realized tensor or a view of one", std::nullopt;
  }
  auto in = value(t->src(0), why, depth + 1);
  auto outShape = staticShape(t);
  if (!in) return std::nullopt;
  if (!outShape) return why = "no static shape for " + t->str(), std::nullopt;
  size_t rank = in->shape.size();
  switch (t->op()) {
  case Op::RESHAPE:
    if (numelOf(*outShape) != numelOf(in->shape)) return why = "RESHAPE changes the element count", std::nullopt;
    in->shape = *outShape;
    return in;
  case Op::PERMUTE: {
    const tgc::Value &perm = t->arg();
    return remap(*in, *outShape, [&](const std::vector<int64_t> &i) {
      std::vector<int64_t> s(rank);
      for (size_t k = 0; k < rank; ++k) s[size_t(perm[k].getInt())] = i[k];
      return std::optional(s);
    });
  }
  case Op::EXPAND:
    return remap(*in, *outShape, [&](const std::vector<int64_t> &i) {
      return std::optional(std::vector<int64_t>(i.end() - int64_t(rank), i.end()));
    });
  case Op::FLIP: {
    const tgc::Value &flags = t->arg();
    return remap(*in, *outShape, [&](const std::vector<int64_t> &i) {
      std::vector<int64_t> s = i;
      for (size_t k = 0; k < rank; ++k)
        if (flags[k].getBool()) s[k] = in->shape[k] - 1 - i[k];
      return std::optional(s);
    });
  }
  default: { // SHRINK, PAD: (x, begin, new_shape)
    auto begin = t->numSrc() == 3 ? shapeOperand(t->src(1)) : std::nullopt;
    if (!begin || begin->size() != rank) return why = "non-constant " + t->str(), std::nullopt;
    bool pad = t->is(Op::PAD);
    return remap(*in, *outShape, [&](const std::vector<int64_t> &i) -> std::optional<std::vector<int64_t>> {
      std::vector<int64_t> s(rank);
      for (size_t k = 0; k < rank; ++k) {
        s[k] = pad ? i[k] - (*begin)[k] : i[k] + (*begin)[k];
        if (s[k] < 0 || s[k] >= in->shape[k]) return std::nullopt;
      }
      return s;
    });
  }
  }
}

std::string CaseRun::compile() {
  if (std::string err = read(dir_, "linear.json", linear_); !err.empty()) return err;
  auto compiled = compileLinear(linear_, opts_);
  if (!compiled) return "compile: " + compiled.error().str();
  cs_ = std::move(*compiled);
  return "";
}

std::string CaseRun::runAs(const fs::path &member, std::string &report) {
  std::string err, text;
  checked = 0;
  if (!rt::readFile((member / "meta.json").string(), text, err)) return err;
  nlohmann::json meta = nlohmann::json::parse(text);
  graphNodes_.clear();
  bufferMap_.clear();
  if (!(err = read(member, "graph.json", graph_)).empty()) return err;
  for (const UOp *u : toposort(graph_.roots))
    if (const Location *l = ctx_.location(u)) graphNodes_[l->nodeId] = u;
  if (!(err = read(member, "call.json", call_)).empty()) return err;
  for (auto [tensor, buf] : call_.bufferMap) bufferMap_[tensor] = buf;
  std::map<std::string, int64_t> varVals;
  if (meta.contains("var_vals") && meta["var_vals"].is_object())
    for (const auto &[name, v] : meta["var_vals"].items()) varVals[name] = v.get<int64_t>();
  auto vars = cs_->plan().bindVars(varVals);
  if (!vars) return "variables: " + vars.error().str();

  auto hb = HostBuffers::allocate(cs_->plan());
  if (!hb) return hb.error().str();
  bufs_ = std::make_unique<HostBuffers>(std::move(*hb));
  for (const BufferFile &bf : graph_.buffers) {
    if (bf.file.empty()) continue;
    int i = cs_->plan().indexOf(bf.node);
    if (i < 0)
      if (const tgc::Value *slot = bf.node->arg().field("slot"); slot && slot->isInt()) i = cs_->plan().indexOfSlot(slot->getInt());
    if (i < 0) continue; // not used by any call
    auto d = loadBufferFile(graph_, bf);
    if (!d) return d.error().str();
    if (d->size() != bufs_->bytes(size_t(i)).size()) return "input " + bf.file + " has the wrong size";
    std::memcpy(bufs_->data(size_t(i)), d->data(), d->size());
  }
  auto t0 = std::chrono::steady_clock::now();
  if (Status s = cs_->run(bufs_->pointers(), *vars); !s) return "run: " + s.error().str();
  double runMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  Tolerance tol = toleranceFor(cs_->plan());
  bool transcendental = tol.transcendental;
  double rtol = tol.rtol, atol = tol.atol;

  std::string failures;
  double maxAbs = 0, maxRel = 0;
  int skipped = 0;
  auto check = [&](const std::string &what, const UOp *node, const std::string &file) {
    std::string why;
    rt::NpyArray want;
    if (!rt::readNpy((member / file).string(), want, why)) return void(failures += what + ": " + why + "; ");
    auto got = value(node, why);
    if (!got) return void(failures += what + ": " + why + "; ");
    Compare c = compareArrays(*got, want, rtol, atol);
    maxAbs = std::max(maxAbs, c.maxAbs);
    maxRel = std::max(maxRel, c.maxRel);
    ++checked;
    if (!c.ok) failures += what + ": " + c.why + "; ";
  };
  const UOp *sink = graph_.roots.empty() ? nullptr : graph_.roots[0];
  for (const auto &o : meta["outputs"]) {
    if (o["sink_index"].is_null() || !sink) {
      ++skipped; // tinygrad scheduled nothing for it (a constant or an unrealized buffer)
      continue;
    }
    size_t si = o["sink_index"].get<size_t>();
    if (si >= sink->numSrc()) return "output sink_index out of range";
    check("out" + std::to_string(o["index"].get<int>()), sink->src(si), o["file"].get<std::string>());
  }
  for (const auto &b : meta["buffers_after"]) {
    auto it = graphNodes_.find(b["node"].get<int64_t>());
    if (it == graphNodes_.end()) return "buffers_after names an unknown node";
    check("n" + std::to_string(b["node"].get<int64_t>()) + ".after", it->second, b["file"].get<std::string>());
  }
  char line[256];
  std::snprintf(line, sizeof line, "%-44s %3zu calls %3zu kernels  compile %6.2fs  run %8.2fms  %2d checked %d skipped  max abs %.3g rel %.3g (%s)",
                member.filename().c_str(), cs_->plan().calls.size(), cs_->plan().kernels.size(), cs_->compileSeconds(), runMs,
                checked, skipped, maxAbs, maxRel, transcendental ? "transcendental tol" : "arith tol");
  report = line;
  exact = failures.empty() && maxAbs == 0;
  return failures;
}

std::vector<fs::path> okCases(bool large) {
  std::vector<fs::path> cases;
  for (const fs::path &dir : corpusCases({"linear.json", "meta.json"})) {
    std::string text, err;
    if (!rt::readFile((dir / "meta.json").string(), text, err)) continue;
    if (nlohmann::json::parse(text).value("status", "") != "ok") continue;
    // The 12-layer transformers take most of the time; they get their own test case.
    if ((dir.filename().string().rfind("k", 0) == 0) == large) cases.push_back(dir);
  }
  return cases;
}

void runCases(const std::vector<fs::path> &cases, const CodegenOptions &opts = {}) {
  REQUIRE_FALSE(cases.empty());
  int passed = 0, arrays = 0, exact = 0;
  for (const fs::path &dir : cases) {
    CAPTURE(dir.filename().string());
    std::string report;
    CaseRun cr(dir, opts);
    std::string failure = cr.run(report);
    arrays += cr.checked;
    exact += cr.exact;
    MESSAGE((failure.empty() ? "PASS " : "FAIL ") << report << (failure.empty() ? "" : "\n  " + failure));
    testing::expectCase(dir, failure.empty(), failure);
    passed += failure.empty();
  }
  MESSAGE(passed << "/" << cases.size() << " corpus cases reproduce tinygrad's outputs (" << arrays
                 << " arrays compared; " << exact << " cases bit-exact)");
}

/// The corpus's variable families: the cases `<case>@<value>` by `<case>`.
std::map<std::string, std::vector<fs::path>> variableFamilies() {
  std::map<std::string, std::vector<fs::path>> out;
  for (const fs::path &dir : okCases(false)) {
    std::string name = dir.filename().string();
    size_t at = name.find('@');
    if (at != std::string::npos && testing::bindsVariables(dir))
      out[name.substr(0, at)].push_back(dir);
  }
  return out;
}

/// Compiles each family's first member once and runs it at every member's values.
void runFamilies(const CodegenOptions &opts = {}) {
  auto families = variableFamilies();
  REQUIRE_FALSE(families.empty());
  for (const auto &[family, members] : families) {
    CAPTURE(family);
    CaseRun cr(members.front(), opts);
    std::string failure = cr.compile();
    REQUIRE_MESSAGE(failure.empty(), failure);
    for (const fs::path &m : members) {
      std::string report;
      failure = cr.runAs(m, report);
      MESSAGE((failure.empty() ? "PASS " : "FAIL ") << report << (failure.empty() ? "" : "\n  " + failure));
      CHECK_MESSAGE(failure.empty(), m.filename().string() << " from " << members.front().filename().string() << ": " << failure);
      CHECK(cr.checked > 0);
    }
  }
}

} // namespace

TEST_CASE("corpus run: every ok case's linear.json reproduces tinygrad's outputs") { runCases(okCases(false)); }

TEST_CASE("corpus run: the 12-layer transformer cases (k*)") { runCases(okCases(true)); }

// The same outputs without any kernel optimization (docs/codegen.md's plain
// lowering, tinygrad's serial reduction order), and with every optimization
// but threads forced on for every kernel, whatever its size.
TEST_CASE("corpus run: plain lowering (no kernel optimizations, strict fp)") {
  CodegenOptions o;
  o.kernel = codegen::KernelOptions::none();
  runCases(okCases(false), o);
}

TEST_CASE("corpus run: every kernel threaded") {
  CodegenOptions o;
  o.kernel.threadMinWork = 0;
  runCases(okCases(false), o);
}

TEST_CASE("corpus run: a variable family's schedule, compiled once, computes every member's outputs") {
  runFamilies();
  CodegenOptions threaded;
  threaded.kernel.threadMinWork = 0;
  runFamilies(threaded);
  CodegenOptions plain;
  plain.kernel = codegen::KernelOptions::none();
  runFamilies(plain);
}
