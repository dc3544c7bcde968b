//===- GradTest.cpp - gradients computed by the compiled training step -----===//
//
// The `grad` pass end to end: a tensor graph plus its gradients is built into
// a model (buildModel) and compiled (compileLinear), and the gradients it
// computes are checked
//  - against central finite differences of the same compiled loss, for every
//    op family the gradient rules cover (the forward graph is run with each
//    input element nudged up and down);
//  - against tinygrad's own gradients for the corpus cases with a `grad` entry
//    in meta.json (expected/grad_n<K>.npy; the MLP case gr01 among them), and
//    its error where tinygrad refuses to schedule the gradient ("cycle");
//  - as a training step: gr01's weights updated in the same artifact by
//    w.assign(w - lr*grad) equal w - lr * tinygrad's gradients.
//
//===----------------------------------------------------------------------===//
#include "Pipeline/Pipeline.h"
#include "Codegen/Exec/CompiledLinear.h"
#include "CorpusFiles.h"
#include "IR/BufferData.h"
#include "IR/JSON.h"
#include "IR/Pass.h"
#include "IR/TextFormat.h"
#include "IR/UOpBuilder.h"
#include "Runtime/Npy.h"
#include "Schedule/Grad.h"
#include "Schedule/Passes.h"
#include "Schedule/Sugar.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <unordered_map>

using namespace tgc;
namespace fs = std::filesystem;
namespace rf = tgc::rangeify;

namespace {

void registerPassesOnce() {
  static bool done = [] {
    registerIRPasses();
    registerSchedulePasses();
    return true;
  }();
  (void)done;
}

/// A tensor graph built into a model (buildModel: the schedule pipeline and
/// the interface) and compiled: set inputs, run, read outputs.
class CompiledGraph {
public:
  static Result<std::unique_ptr<CompiledGraph>> build(Context &ctx, const Graph &g) {
    registerPassesOnce();
    auto cg = std::unique_ptr<CompiledGraph>(new CompiledGraph());
    Result<Model> m = buildModel(ctx, g);
    if (!m) return m.error();
    cg->model_ = std::move(*m);
    auto cs = compileModelForRun(cg->model_);
    if (!cs) return cs.error();
    cg->cs_ = std::move(*cs);
    auto bufs = HostBuffers::allocate(cg->cs_->plan());
    if (!bufs) return bufs.error();
    cg->bufs_ = std::make_unique<HostBuffers>(std::move(*bufs));
    for (const BufferFile &bf : g.buffers)
      if (!bf.file.empty()) {
        auto d = loadBufferFile(g, bf);
        if (!d) return d.error();
        cg->inputs_[bf.node] = std::move(*d);
      }
    return cg;
  }

  void setInput(const UOp *buffer, std::vector<float> v) {
    inputs_[buffer].resize(v.size() * 4);
    std::memcpy(inputs_[buffer].data(), v.data(), v.size() * 4);
  }

  /// Copies the inputs into the plan's buffers and runs the schedule.
  Status run() {
    for (auto &[buf, data] : inputs_) {
      int i = cs_->plan().indexOf(buf);
      if (i < 0) continue;
      auto bytes = bufs_->bytes(size_t(i));
      std::memcpy(bytes.data(), data.data(), std::min(bytes.size(), data.size()));
    }
    return cs_->run(bufs_->pointers());
  }

  /// Output I (model tensor out<I>) as float32.
  Result<std::vector<float>> output(size_t i) const { return tensor("out" + std::to_string(i)); }
  /// A model tensor's contents after the run (an in-out n<K>: its new contents), as float32.
  Result<std::vector<float>> tensor(const std::string &name) const {
    const ModelTensor *t = model_.find(name);
    if (!t) return Diagnostic({}, "the model has no tensor " + name);
    if (t->dtype != dtypes::Float32) return Diagnostic({}, t->name + " is not float32");
    std::vector<float> v(size_t(t->bytes) / 4);
    std::memcpy(v.data(), static_cast<const uint8_t *>(bufs_->data(size_t(t->buffer))) + t->byteOffset, size_t(t->bytes));
    return v;
  }

private:
  CompiledGraph() = default;
  Model model_;
  std::unordered_map<const UOp *, std::vector<uint8_t>> inputs_;
  std::unique_ptr<CompiledSchedule> cs_;
  std::unique_ptr<HostBuffers> bufs_;
};

// ---- building small float32 graphs ----------------------------------------

Value cpuParam(int64_t slot) {
  return Value::object("ParamArg", {"slot", "dtype", "vmin_vmax", "multiple_of", "name", "addrspace", "axis", "device", "volatile"},
                       {Value::integer(slot), Value::dtype(dtypes::Float32), Value(), Value(), Value(),
                        Value::enumMember("AddrSpace", "GLOBAL"), Value(), Value::string("CPU"), Value::boolean(false)});
}

struct Input {
  const UOp *buffer, *view; ///< the BUFFER and its reshape to the input's shape
  std::vector<float> data;
};

Input makeInput(Context &ctx, int64_t slot, rf::IShape shape, float lo, float hi) {
  int64_t n = rf::maxNumel(shape);
  const UOp *b = ctx.get(Op::BUFFER, dtypes::Float32, {ctx.constInt(n)}, cpuParam(slot));
  std::vector<float> d;
  // deterministic, distinct values spread over [lo, hi)
  for (int64_t i = 0; i < n; ++i) d.push_back(lo + (hi - lo) * float((i * 7 + 3) % n) / float(n));
  return {b, rf::reshape(b, shape), d};
}

/// Sum over all axes (REDUCE reduces its leading axes).
UOpRef sumAll(UOpRef x) {
  size_t nd = rf::shapeOf(x).size();
  if (nd == 0) return x;
  return rf::mk(Op::REDUCE, {x}, Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(int64_t(nd))}));
}
UOpRef reduceLead(UOpRef x, const char *op, int64_t n) {
  return rf::mk(Op::REDUCE, {x}, Value::tuple({Value::enumMember("Ops", op), Value::integer(n)}));
}

/// loss = sum(f(x...) * w) with a fixed weight tensor w of f's shape, so that
/// every output element has its own weight; checks d(loss)/d(x_i) of the
/// compiled graph against central differences of the compiled loss.
void checkFiniteDifferences(const std::string &what, std::vector<rf::IShape> shapes,
                            const std::function<UOpRef(std::vector<UOpRef>)> &f, float lo = 0.5f, float hi = 1.5f,
                            double tol = 2e-2) {
  CAPTURE(what);
  Context ctx;
  std::vector<Input> in;
  std::vector<UOpRef> views;
  for (size_t i = 0; i < shapes.size(); ++i) {
    in.push_back(makeInput(ctx, int64_t(i + 1), shapes[i], lo, hi));
    views.push_back(in.back().view);
  }
  UOpRef y = f(views);
  rf::IShape ys = rf::shapeOf(y);
  Input w = makeInput(ctx, 100, ys, -1.0f, 1.0f);
  UOpRef loss = sumAll(y * UOpRef(w.view));
  Graph g;
  g.roots = {rf::sink(ctx, {loss})};
  std::vector<const UOp *> targets;
  for (const Input &x : in) targets.push_back(x.view);
  auto grads = computeGradients(loss, targets);
  REQUIRE_MESSAGE(grads.ok(), (grads.ok() ? "" : grads.error().str()));
  std::vector<const UOp *> src{loss};
  src.insert(src.end(), grads->begin(), grads->end());
  g.roots = {rf::sink(ctx, src)};
  auto cg = CompiledGraph::build(ctx, g);
  REQUIRE_MESSAGE(cg.ok(), (cg.ok() ? "" : cg.error().str()));
  CompiledGraph &c = **cg;
  for (const Input &x : in) c.setInput(x.buffer, x.data);
  c.setInput(w.buffer, w.data);
  REQUIRE(c.run().ok());
  std::vector<std::vector<float>> analytic;
  for (size_t i = 0; i < in.size(); ++i) {
    auto gi = c.output(i + 1);
    REQUIRE_MESSAGE(gi.ok(), (gi.ok() ? "" : gi.error().str()));
    analytic.push_back(*gi);
  }
  const float eps = 1e-2f;
  auto lossAt = [&](size_t i, size_t j, float delta) {
    std::vector<float> d = in[i].data;
    d[j] += delta;
    c.setInput(in[i].buffer, d);
    REQUIRE(c.run().ok());
    c.setInput(in[i].buffer, in[i].data);
    return double((*c.output(0))[0]);
  };
  for (size_t i = 0; i < in.size(); ++i)
    for (size_t j = 0; j < in[i].data.size(); ++j) {
      double fd = (lossAt(i, j, eps) - lossAt(i, j, -eps)) / (2.0 * eps);
      CAPTURE(i);
      CAPTURE(j);
      CHECK(analytic[i][j] == doctest::Approx(fd).epsilon(tol).scale(1.0));
    }
}

} // namespace

TEST_CASE("grad: elementwise gradients match finite differences") {
  using V = std::vector<UOpRef>;
  checkFiniteDifferences("exp2", {{2, 3}}, [](V x) { return x[0].exp2(); });
  checkFiniteDifferences("log2", {{2, 3}}, [](V x) { return x[0].alu(Op::LOG2); });
  checkFiniteDifferences("sin", {{2, 3}}, [](V x) { return x[0].alu(Op::SIN); });
  checkFiniteDifferences("sqrt", {{2, 3}}, [](V x) { return x[0].sqrt(); });
  checkFiniteDifferences("reciprocal", {{2, 3}}, [](V x) { return x[0].reciprocal(); });
  checkFiniteDifferences("add mul", {{2, 3}, {2, 3}}, [](V x) { return x[0] * x[1] + x[0]; });
  checkFiniteDifferences("max", {{2, 3}, {2, 3}}, [](V x) { return x[0].maximum(x[1] * 1.1); });
  checkFiniteDifferences("pow", {{2, 3}, {2, 3}}, [](V x) { return x[0].pow(x[1]); });
  checkFiniteDifferences("where cmplt", {{2, 3}, {2, 3}}, [](V x) { return (x[0] < x[1] * 1.1).where(x[0] * 3.0, x[1]); });
  checkFiniteDifferences("cast", {{2, 3}}, [](V x) { return (x[0] * x[0]).cast(dtypes::Float64).cast(dtypes::Float32); });
  checkFiniteDifferences("broadcast", {{2, 3}, {3}}, [](V x) { return x[0] * x[1]; });
}

TEST_CASE("grad: reduce gradients match finite differences") {
  using V = std::vector<UOpRef>;
  checkFiniteDifferences("sum", {{3, 4}}, [](V x) { return reduceLead(x[0] * x[0], "ADD", 1); });
  checkFiniteDifferences("max", {{3, 4}}, [](V x) { return reduceLead(x[0], "MAX", 1); });
  checkFiniteDifferences("prod", {{3, 2}}, [](V x) { return reduceLead(x[0], "MUL", 1); });
  checkFiniteDifferences("sum of permuted", {{3, 4}}, [](V x) { return reduceLead(rf::permute(x[0], {1, 0}), "ADD", 1); });
}

TEST_CASE("grad: movement-op gradients match finite differences") {
  using V = std::vector<UOpRef>;
  checkFiniteDifferences("reshape", {{2, 6}}, [](V x) { return UOpRef(rf::reshape(x[0], {3, 4})).exp2(); });
  checkFiniteDifferences("expand", {{1, 3}}, [](V x) { return UOpRef(rf::broadcastTo(x[0], {4, 3})) * 2.0; });
  checkFiniteDifferences("permute", {{2, 3, 4}}, [](V x) { return UOpRef(rf::permute(x[0], {2, 0, 1})).sqrt(); });
  checkFiniteDifferences("pad", {{2, 3}}, [](V x) {
    Context &c = x[0].ctx();
    return UOpRef(c.get(Op::PAD, dtypes::Float32, {x[0], rf::shapeArg(c, {1, 2}), rf::shapeArg(c, {4, 6})})).exp2();
  });
  checkFiniteDifferences("shrink", {{4, 5}}, [](V x) { return UOpRef(rf::shrink(x[0], {{1, 3}, {2, 5}})).sqrt(); });
  checkFiniteDifferences("flip", {{3, 4}}, [](V x) { return UOpRef(rf::flip(x[0], {true, false})) * x[0]; });
  checkFiniteDifferences("stack", {{2, 3}, {2, 3}}, [](V x) {
    return UOpRef(rf::mk(Op::STACK, {x[0], x[1] * x[0]})).exp2();
  });
  checkFiniteDifferences("contiguous", {{2, 3}}, [](V x) { return UOpRef(rf::contiguous(x[0] * x[0])) * x[0]; });
  checkFiniteDifferences("copy", {{2, 3}}, [](V x) {
    return UOpRef(rf::mk(Op::COPY, {x[0] * x[0]}, Value::string("CPU"))) * x[0];
  });
}

TEST_CASE("grad: FUNCTION/TUPLE/GETTUPLE gradients match finite differences") {
  using V = std::vector<UOpRef>;
  // f(a, b) = (a*b, exp2(a) + b), two outputs read through GETTUPLE, combined outside
  checkFiniteDifferences("function", {{2, 3}, {2, 3}}, [](V x) {
    Context &c = x[0].ctx();
    UOpRef p0 = rf::param(c, 0, dtypes::Float32, {2, 3}, Value::string("CPU"));
    UOpRef p1 = rf::param(c, 1, dtypes::Float32, {2, 3}, Value::string("CPU"));
    const UOp *body = c.get(Op::TUPLE, dtypes::Void, {p0 * p1, p0.exp2() + p1});
    const UOp *fn = c.get(Op::FUNCTION, dtypes::Void, {body, x[0], x[1]}, rf::callInfo());
    UOpRef o0 = c.get(Op::GETTUPLE, dtypes::Float32, {fn}, Value::integer(0));
    UOpRef o1 = c.get(Op::GETTUPLE, dtypes::Float32, {fn}, Value::integer(1));
    return o0 * o1 + o1;
  });
}

TEST_CASE("grad: DETACH stops the gradient") {
  Context ctx;
  Input x = makeInput(ctx, 1, {3}, 0.5f, 1.5f);
  UOpRef v = x.view;
  UOpRef loss = sumAll(v * UOpRef(ctx.get(Op::DETACH, dtypes::Float32, {v})));
  auto grads = computeGradients(loss, std::vector<const UOp *>{x.view});
  REQUIRE(grads.ok());
  Graph g;
  g.roots = {rf::sink(ctx, {loss, (*grads)[0]})};
  auto cg = CompiledGraph::build(ctx, g);
  REQUIRE_MESSAGE(cg.ok(), (cg.ok() ? "" : cg.error().str()));
  (*cg)->setInput(x.buffer, x.data);
  REQUIRE((*cg)->run().ok());
  auto got = (*cg)->output(1);
  REQUIRE(got.ok());
  // d/dx (x * detach(x)) = detach(x): the values themselves, not 2x
  for (size_t i = 0; i < x.data.size(); ++i) CHECK((*got)[i] == doctest::Approx(x.data[i]));
}

TEST_CASE("grad: corpus gradient cases match tinygrad's gradients and errors") {
  registerPassesOnce();
  size_t matched = 0, errors = 0, okCases = 0, errorCases = 0;
  for (const fs::path &dir : testing::corpusCases({"meta.json", "graph.json"})) {
    nlohmann::json meta = nlohmann::json::parse(std::ifstream(dir / "meta.json"));
    if (!meta.contains("grad")) continue;
    std::string name = dir.filename().string();
    CAPTURE(name);
    const nlohmann::json &grad = meta.at("grad");
    ++(grad.at("status") == "error" ? errorCases : okCases);
    Context ctx;
    Result<Graph> doc = readGraphJSONFile(ctx, (dir / "graph.json").string());
    REQUIRE(doc.ok());
    Graph g = std::move(*doc);
    GradRequest req;
    req.loss = grad.at("loss").get<std::string>();
    for (const auto &w : grad.at("wrt")) req.wrt.push_back(w.get<int64_t>());
    auto outs = addGradients(g, req);
    REQUIRE_MESSAGE(outs.ok(), (outs.ok() ? "" : outs.error().str()));
    auto cg = CompiledGraph::build(ctx, g);
    if (grad.at("status") == "error") {
      REQUIRE_FALSE(cg.ok());
      std::string want = grad.at("error").at("message").get<std::string>();
      CHECK_MESSAGE(cg.error().message.find(want) != std::string::npos, cg.error().str());
      ++errors;
      continue;
    }
    REQUIRE_MESSAGE(cg.ok(), (cg.ok() ? "" : cg.error().str()));
    REQUIRE((*cg)->run().ok());
    for (size_t i = 0; i < req.wrt.size(); ++i) {
      std::string file = grad.at("files").at(std::to_string(req.wrt[i])).get<std::string>();
      CAPTURE(file);
      rt::NpyArray want;
      std::string err;
      REQUIRE_MESSAGE(rt::readNpy((dir / file).string(), want, err), err);
      REQUIRE(want.descr == "<f4");
      auto got = (*cg)->output((*outs)[i]);
      REQUIRE_MESSAGE(got.ok(), (got.ok() ? "" : got.error().str()));
      REQUIRE(got->size() * 4 == want.data.size());
      std::vector<float> w(got->size());
      std::memcpy(w.data(), want.data.data(), want.data.size());
      for (size_t k = 0; k < w.size(); ++k) {
        CAPTURE(k);
        CHECK((*got)[k] == doctest::Approx(w[k]).epsilon(1e-4).scale(1e-2));
      }
    }
    ++matched;
  }
  MESSAGE(matched << " corpus gradient cases match, " << errors << " gradient errors reproduced");
  CHECK(matched == okCases);
  CHECK(errors == errorCases);
  CHECK(matched > 0);
  CHECK(errors > 0);
}

namespace {

/// test_gradient_through_assign_requires_old_versions / _with_snapshots
/// (pipeline-schedule.md §5.7): y = x.clone(), then `count` times
/// y.assign(f(y)) with f(y) = y*y, or f(y) = c*c for a snapshot c = y.clone().
std::string assignChain(int count, bool snapshot) {
  const char *p = "ParamArg(slot=%d, dtype=dtypes.float32, vmin_vmax=None, multiple_of=None, name=None, "
                  "addrspace=AddrSpace.GLOBAL, axis=None, device=\"CPU\", volatile=False)";
  auto buf = [&](const std::string &name, int slot) {
    char arg[512];
    std::snprintf(arg, sizeof arg, p, slot);
    return "  %" + name + " = BUFFER float32 (%n) " + arg + "\n";
  };
  std::string t = "graph @chain {\n  %n = CONST weakint 2\n" + buf("x", 1) + buf("yb", 2) +
                  "  %ys = STORE void (%yb, %x)\n  %y0 = AFTER float32 (%yb, %ys)\n";
  for (int i = 0; i < count; ++i) {
    std::string y = "%y" + std::to_string(i), next = "%y" + std::to_string(i + 1), k = std::to_string(i);
    std::string v = y;
    if (snapshot) {
      t += buf("cb" + k, 10 + i) + "  %cs" + k + " = STORE void (%cb" + k + ", " + y + ")\n  %c" + k +
           " = AFTER float32 (%cb" + k + ", %cs" + k + ")\n";
      v = "%c" + k;
    }
    t += "  %sq" + k + " = MUL float32 (" + v + ", " + v + ")\n  %st" + k + " = STORE void (" + y + ", %sq" + k +
         ")\n  " + next + " = AFTER float32 (" + y + ", %st" + k + ")\n";
  }
  t += "  %loss = REDUCE float32 (%y" + std::to_string(count) + ") (Ops.ADD, 1)\n  %sink = SINK void (%loss)\n}\n";
  return t;
}

} // namespace

TEST_CASE("grad: a gradient that needs overwritten versions is a cycle; snapshots make it work") {
  for (int count : {2, 3})
    for (bool snapshot : {false, true}) {
      CAPTURE(count);
      CAPTURE(snapshot);
      Context ctx;
      Result<Graph> g = parseText(ctx, assignChain(count, snapshot), "chain.tgc");
      REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().str()));
      const UOp *x = nullptr;
      for (const UOp *u : toposort(g->roots[0]))
        if (u->is(Op::BUFFER) && rf::paramFields(u).slot == 1) x = u;
      REQUIRE(x);
      auto grads = computeGradients(g->roots[0]->src(0), std::vector<const UOp *>{x});
      REQUIRE(grads.ok());
      // the second-order gradient too (the reference's gg = d/dx sum(dy/dx))
      auto gg = computeGradients(sumAll((*grads)[0]), std::vector<const UOp *>{x});
      REQUIRE(gg.ok());
      g->roots = {rf::sink(ctx, {g->roots[0]->src(0), (*grads)[0], (*gg)[0]})};
      auto cg = CompiledGraph::build(ctx, *g);
      if (!snapshot) {
        // the gradient reads y's versions that later assigns overwrite
        REQUIRE_FALSE(cg.ok());
        CHECK(cg.error().message.find("cycle") != std::string::npos);
        continue;
      }
      REQUIRE_MESSAGE(cg.ok(), (cg.ok() ? "" : cg.error().str()));
      (*cg)->setInput(x, {2.0f, 3.0f});
      REQUIRE((*cg)->run().ok());
      auto got = (*cg)->output(1), got2 = (*cg)->output(2);
      REQUIRE(got.ok());
      REQUIRE(got2.ok());
      // y = x^(2^count): dy/dx = e * x^(e-1), d2y/dx2 = e(e-1) x^(e-2) (count 2: [32, 108] and [48, 108])
      double e = std::pow(2.0, count);
      for (size_t i = 0; i < 2; ++i) {
        double xv = i == 0 ? 2.0 : 3.0;
        CHECK((*got)[i] == doctest::Approx(e * std::pow(xv, e - 1)).epsilon(1e-5));
        CHECK((*got2)[i] == doctest::Approx(e * (e - 1) * std::pow(xv, e - 2)).epsilon(1e-5));
      }
    }
}

TEST_CASE("grad: an SGD step on the corpus MLP (gr01) updates its weights by tinygrad's gradients") {
  // one artifact: loss, gradients, and w.assign(w - lr*grad) for w1, b1, w2, b2
  registerPassesOnce();
  fs::path dir = fs::path(TGC_CORPUS_DIR) / "gr01_mlp_ce";
  REQUIRE_MESSAGE(fs::exists(dir / "meta.json"), "missing corpus case gr01_mlp_ce");
  nlohmann::json meta = nlohmann::json::parse(std::ifstream(dir / "meta.json"));
  Context ctx;
  Result<Graph> doc = readGraphJSONFile(ctx, (dir / "graph.json").string());
  REQUIRE(doc.ok());
  Graph g = std::move(*doc);
  GradRequest req;
  for (const auto &w : meta.at("grad").at("wrt")) req.wrt.push_back(w.get<int64_t>());
  auto outs = addGradients(g, req);
  REQUIRE(outs.ok());
  const float lr = 0.5f;
  std::vector<const UOp *> src(g.roots[0]->src().begin(), g.roots[0]->src().end());
  std::vector<std::pair<const UOp *, int64_t>> weights; // (BUFFER, wrt node id)
  for (size_t i = 0; i < req.wrt.size(); ++i) {
    const UOp *t = *findDocumentNode(g, req.wrt[i]), *buf = t;
    while (buf->is(Op::RESHAPE)) buf = buf->src(0);
    REQUIRE(buf->is(Op::BUFFER));
    UOpRef next = UOpRef(t) - UOpRef(src[(*outs)[i]]) * lr;
    src.push_back(rf::after(buf, {rf::store(buf, rf::flatten(next))}));
    weights.emplace_back(buf, req.wrt[i]);
  }
  g.roots = {rf::sink(ctx, src)};
  auto cg = CompiledGraph::build(ctx, g);
  REQUIRE_MESSAGE(cg.ok(), (cg.ok() ? "" : cg.error().str()));
  REQUIRE((*cg)->run().ok());
  for (auto [buf, id] : weights) {
    std::string file = meta.at("grad").at("files").at(std::to_string(id)).get<std::string>();
    CAPTURE(file);
    rt::NpyArray gradWant;
    std::string err;
    REQUIRE(rt::readNpy((dir / file).string(), gradWant, err));
    const BufferFile *bf = nullptr;
    for (const BufferFile &b : g.buffers)
      if (b.node == buf) bf = &b;
    REQUIRE(bf);
    auto before = loadBufferFile(g, *bf);
    REQUIRE(before.ok());
    REQUIRE(before->size() == gradWant.data.size());
    std::vector<float> w0(before->size() / 4), gw(before->size() / 4);
    std::memcpy(w0.data(), before->data(), before->size());
    std::memcpy(gw.data(), gradWant.data.data(), gradWant.data.size());
    // the weight buffer is an in-out of the model, named by its graph.json node id
    const Location *loc = ctx.location(buf);
    REQUIRE((loc && loc->nodeId >= 0));
    auto after = (*cg)->tensor("n" + std::to_string(loc->nodeId));
    REQUIRE_MESSAGE(after.ok(), (after.ok() ? "" : after.error().str()));
    REQUIRE(after->size() == w0.size());
    for (size_t k = 0; k < w0.size(); ++k) {
      CAPTURE(k);
      CHECK((*after)[k] == doctest::Approx(w0[k] - lr * gw[k]).epsilon(1e-4).scale(1e-2));
    }
  }
}
