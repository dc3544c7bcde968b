//===- TextPrinter.cpp - write a Graph in the text form --------------------===//
//
// The printing half of TextFormat.h. Nodes are named %0, %1, ... in the order
// of toposort(roots, argRefs=true), so a node's sources and the nodes its arg
// refers to are always printed (and named) before it.
//
//===----------------------------------------------------------------------===//
#include "IR/TextFormat.h"

#include <cctype>
#include <filesystem>
#include <unordered_map>

namespace tgc {

namespace {

bool isPlainName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  return true;
}

class Printer {
public:
  Printer(const Graph &g, const PrintOptions &opts) : g_(g), opts_(opts) {
    nameOf_ = [this](const UOp *u) {
      auto it = names_.find(u);
      // Every referenced node is named first; the fallback keeps a broken graph printable.
      return it == names_.end() ? "%<unnamed " + std::to_string(u->id()) + ">" : it->second;
    };
  }

  std::string print() {
    if (g_.roots.empty()) return "";
    // Buffer and buffer_map nodes normally lie under the roots; any that do not
    // are printed too, so every line refers to a defined name.
    std::vector<const UOp *> starts(g_.roots);
    for (const auto &[tensor, buffer] : g_.bufferMap) starts.insert(starts.end(), {tensor, buffer});
    for (const BufferFile &b : g_.buffers)
      if (b.node) starts.push_back(b.node);
    ToposortOptions topts;
    topts.argRefs = true;
    std::vector<const UOp *> order = toposort(starts, topts);
    for (size_t i = 0; i < order.size(); ++i) names_.emplace(order[i], "%" + std::to_string(i));

    // The short form `graph @name { ... }` says "one root: the last node"; use it when that is true.
    bool shortForm = g_.roots.size() == 1 && order.back() == g_.roots[0] && !g_.rootNames.empty() &&
                     isPlainName(g_.rootNames[0]);
    out_ = "graph @" + (shortForm ? g_.rootNames[0] : std::string("graph")) + " {\n";
    if (!g_.extra.empty()) out_ += "  attributes " + jsonLine(g_.extra) + "\n";
    for (const UOp *u : order) printNode(u);
    // Per-node keys of the JSON document (graph.json's informational `shape`)
    // follow the nodes, so that the node lines stay readable.
    for (const UOp *u : order)
      if (auto it = g_.nodeExtra.find(u); it != g_.nodeExtra.end())
        out_ += "  attributes " + names_.at(u) + " " + jsonLine(it->second) + "\n";
    for (const BufferFile &b : g_.buffers) printBuffer(b);
    for (const auto &[tensor, buffer] : g_.bufferMap)
      out_ += "  buffer_map " + names_.at(tensor) + " -> " + names_.at(buffer) + "\n";
    if (!shortForm) printRoots();
    out_ += "}\n";
    return std::move(out_);
  }

private:
  /// One line of JSON; invalid UTF-8 (impossible in parsed JSON) is replaced rather than thrown on.
  static std::string jsonLine(const nlohmann::ordered_json &j) {
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }

  void printNode(const UOp *u) {
    out_ += "  " + names_.at(u) + " = " + std::string(opName(u->op())) + " " +
            std::string(u->dtype() ? u->dtype().name() : "?");
    const Value &arg = u->arg();
    std::string argText = arg.isNone() ? "" : arg.toString(&nameOf_);
    // A source list is printed when there are sources, or when the arg would
    // otherwise be read as one (it starts with '(').
    if (u->numSrc() || (!argText.empty() && argText[0] == '(')) {
      out_ += " (";
      for (size_t i = 0; i < u->numSrc(); ++i) out_ += (i ? ", " : "") + names_.at(u->src(i));
      out_ += ")";
    }
    if (!argText.empty()) out_ += " " + argText;
    if (!u->tag().isNone()) out_ += " tag=" + u->tag().toString(&nameOf_);
    if (opts_.shapes)
      if (const Shape *s = u->shape()) out_ += " : " + shapeStr(*s);
    out_ += "\n";
  }

  void printBuffer(const BufferFile &b) {
    if (!b.node) return;
    out_ += "  buffer " + names_.at(b.node) + " " + quoteString(g_.dataPathFrom(b.file, opts_.outputDir));
    if (b.dtype) out_ += " dtype=" + Value::dtype(b.dtype).toString();
    out_ += " numel=" + std::to_string(b.numel) + " device=" + quoteString(b.device) +
            " allocated=" + (b.allocated ? "True" : "False") + "\n";
  }

  void printRoots() {
    out_ += "  roots ";
    for (size_t i = 0; i < g_.roots.size(); ++i) {
      std::string name = i < g_.rootNames.size() ? g_.rootNames[i] : std::to_string(i);
      out_ += (i ? ", " : "") + names_.at(g_.roots[i]) + " as " + quoteString(name);
    }
    out_ += "\n";
  }

  const Graph &g_;
  const PrintOptions &opts_;
  std::unordered_map<const UOp *, std::string> names_;
  std::function<std::string(const UOp *)> nameOf_;
  std::string out_;
};

} // namespace

std::string printText(const Graph &g, const PrintOptions &opts) { return Printer(g, opts).print(); }

} // namespace tgc
