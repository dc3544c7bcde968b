//===- GradPass.cpp - the `grad` pass: gradients as model outputs ----------===//
//
// tinygrad's `loss.gradient(*wrt)` followed by one realize of the loss and
// the gradients: the gradient tensors (Grad.h) become new sources of the root
// SINK, so scheduling the graph gives one training-step artifact whose
// outputs are the forward outputs, then the gradients. The request comes
// from the driver (--grad/--wrt) or from the document ("grad" attribute).
//
//===----------------------------------------------------------------------===//
#include "Schedule/Grad.h"

#include "IR/Pass.h"

#include <algorithm>
#include <charconv>

namespace tgc {
namespace {

std::optional<int64_t> parseIndex(std::string_view s) {
  int64_t v = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

/// The root SINK a model's outputs are the sources of.
Result<size_t> rootSink(const Graph &g) {
  for (size_t i = 0; i < g.roots.size(); ++i)
    if (g.roots[i]->is(Op::SINK) && g.roots[i]->arg().isNone()) return i;
  return Diagnostic({}, "grad: the graph has no tensor-graph SINK root (run grad before scheduling)");
}

Status runGradPass(Graph &g) {
  auto it = g.extra.find("grad");
  if (it == g.extra.end())
    return Diagnostic({}, "grad: no gradient request (tgc opt --grad=LOSS --wrt=n<K>,..., or a \"grad\" attribute)");
  GradRequest req;
  const nlohmann::ordered_json &j = *it;
  if (!j.is_object() || !j.contains("wrt") || !j["wrt"].is_array())
    return Diagnostic({}, "grad: the \"grad\" attribute must be {\"loss\": \"out<I>\", \"wrt\": [node ids]}");
  if (j.contains("loss")) {
    if (!j["loss"].is_string()) return Diagnostic({}, "grad: \"loss\" must be a string like \"out0\"");
    req.loss = j["loss"].get<std::string>();
  }
  for (const auto &w : j["wrt"]) {
    if (!w.is_number_integer()) return Diagnostic({}, "grad: \"wrt\" must list node ids (integers)");
    req.wrt.push_back(w.get<int64_t>());
  }
  Result<std::vector<size_t>> r = addGradients(g, req);
  if (!r) return r.error();
  g.extra.erase("grad");
  return Status::success();
}

} // namespace

Result<GradRequest> parseGradRequest(std::string_view loss, std::string_view wrt) {
  GradRequest req;
  req.loss = std::string(loss);
  if (!loss.starts_with("out") || !parseIndex(loss.substr(3)))
    return Diagnostic({}, "--grad: expected an output name like out0, got '" + std::string(loss) + "'");
  while (!wrt.empty()) {
    size_t comma = wrt.find(',');
    std::string_view item = wrt.substr(0, comma);
    wrt = comma == std::string_view::npos ? std::string_view() : wrt.substr(comma + 1);
    std::string_view num = item.starts_with("n") ? item.substr(1) : item;
    std::optional<int64_t> id = parseIndex(num);
    if (!id) return Diagnostic({}, "--wrt: expected node ids like n12,n40, got '" + std::string(item) + "'");
    req.wrt.push_back(*id);
  }
  if (req.wrt.empty()) return Diagnostic({}, "--wrt: no node to differentiate against");
  return req;
}

Result<const UOp *> findDocumentNode(const Graph &g, int64_t id) {
  ToposortOptions o;
  o.argRefs = true;
  std::vector<const UOp *> starts(g.roots);
  for (const BufferFile &b : g.buffers)
    if (b.node) starts.push_back(b.node);
  std::vector<const UOp *> nodes = toposort(starts, o);
  // a JSON document numbers its nodes; the text form by definition order (as
  // buildModel names inputs): the parser creates nodes in that order
  uint32_t firstText = UINT32_MAX;
  for (const UOp *u : nodes) {
    const Location *loc = u->context().location(u);
    if (loc && loc->nodeId == id) return u;
    if (loc && loc->nodeId < 0 && loc->line) firstText = std::min(firstText, u->id());
  }
  if (firstText != UINT32_MAX)
    for (const UOp *u : nodes) {
      const Location *loc = u->context().location(u);
      if (loc && loc->nodeId < 0 && loc->line && int64_t(u->id()) - int64_t(firstText) == id) return u;
    }
  return Diagnostic({}, "grad: the graph has no node n" + std::to_string(id));
}

void setGradRequest(Graph &g, const GradRequest &req) {
  g.extra["grad"] = {{"loss", req.loss}, {"wrt", req.wrt}};
}

Result<std::vector<size_t>> addGradients(Graph &g, const GradRequest &req) {
  Result<size_t> ri = rootSink(g);
  if (!ri) return ri.error();
  const UOp *sink = g.roots[*ri];
  std::optional<int64_t> li = req.loss.starts_with("out") ? parseIndex(req.loss.substr(3)) : std::nullopt;
  if (!li || size_t(*li) >= sink->numSrc())
    return Diagnostic({}, "grad: no output '" + req.loss + "' (the root SINK has " + std::to_string(sink->numSrc()) +
                              " sources: out0..out" + std::to_string(int64_t(sink->numSrc()) - 1) + ")");
  std::vector<const UOp *> targets;
  for (int64_t id : req.wrt) {
    Result<const UOp *> t = findDocumentNode(g, id);
    if (!t) return t.error();
    targets.push_back(*t);
  }
  Result<std::vector<const UOp *>> grads = computeGradients(sink->src(size_t(*li)), targets);
  if (!grads) return grads.error();
  std::vector<const UOp *> src(sink->src().begin(), sink->src().end());
  std::vector<size_t> outs;
  nlohmann::ordered_json names = g.extra.contains("gradients") ? g.extra["gradients"] : nlohmann::ordered_json::object();
  for (size_t i = 0; i < grads->size(); ++i) {
    outs.push_back(src.size());
    names["out" + std::to_string(src.size())] = req.wrt[i];
    src.push_back((*grads)[i]);
  }
  g.roots[*ri] = sink->withSrc(std::move(src));
  g.extra["gradients"] = names;
  return outs;
}

void registerGradPass() {
  PassRegistry::instance().add({"grad", "add d(loss)/d(node) as outputs of the root SINK (request: --grad/--wrt or a \"grad\" attribute)",
                                [] { return std::make_unique<FunctionPass>(runGradPass); }});
}

} // namespace tgc
