//===- Inspect.cpp - --stats and --emit=dot for `tgc opt` ------------------===//
//
// No tinygrad counterpart for the drawing (tinygrad's VIZ is a web viewer);
// the per-kernel numbers are Schedule/Estimates.h, tinygrad's Estimates.
//
//===----------------------------------------------------------------------===//
#include "Inspect.h"

#include "Schedule/Access.h"
#include "Schedule/Estimates.h"
#include "Schedule/Storage.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace tgc::driver {

namespace {

bool isKernelBody(const UOp *u) { return u->is(Op::SINK) && u->arg().isObj("KernelInfo"); }

std::vector<const UOp *> allNodes(const Graph &g, bool enterCalls) {
  ToposortOptions opts;
  opts.enterCalls = enterCalls;
  return toposort(std::span<const UOp *const>(g.roots), opts);
}

/// The storage behind each argument of a kernel CALL (nullptr for a bound variable).
std::vector<const UOp *> argStorage(const UOp *call) {
  std::vector<const UOp *> out;
  for (size_t i = 1; i < call->numSrc(); ++i)
    out.push_back(sched::isBoundVar(call->src(i)) ? nullptr : sched::bufUop(sched::unwrapSrc(call->src(i))));
  return out;
}

struct KernelInfoLine {
  sched::KernelEstimate est;
  bool known = false; ///< false for a body the estimate does not cover
};

KernelInfoLine estimateCall(const UOp *call) {
  KernelInfoLine line;
  std::vector<int64_t> argBytes;
  for (const UOp *s : argStorage(call)) argBytes.push_back(s ? sched::storageBytes(s) : -1);
  const UOp *body = call->numSrc() ? call->src(0) : nullptr;
  if (body && isKernelBody(body)) {
    line.est = sched::estimateKernel(body, argBytes);
    line.known = true;
  } else if (body && body->is(Op::COPY) && argBytes.size() >= 2) {
    line.est.ins = {1};
    line.est.outs = {0};
    line.est.bytesRead = std::max<int64_t>(argBytes[1], 0);
    line.est.bytesWritten = std::max<int64_t>(argBytes[0], 0);
    line.known = true;
  }
  return line;
}

std::string slots(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string kernelLabel(size_t i, const UOp *call) {
  KernelInfoLine line = estimateCall(call);
  std::string l = "kernel " + std::to_string(i);
  if (line.known)
    l += "\\n" + std::to_string(line.est.flops) + " flops, " +
         std::to_string(line.est.bytesRead + line.est.bytesWritten) + " B";
  else if (call->numSrc())
    l += "\\n" + std::string(opName(call->src(0)->op()));
  return l;
}

/// `orderings`: the AFTER orderings linearize recorded for this LINEAR (may be null).
std::string scheduleDot(const std::vector<const UOp *> &kernels, const std::vector<AfterOrdering> *orderings) {
  std::ostringstream os;
  os << "digraph schedule {\n  rankdir=TB;\n  node [shape=box];\n";
  for (size_t i = 0; i < kernels.size(); ++i) os << "  k" << i << " [label=\"" << kernelLabel(i, kernels[i]) << "\"];\n";
  for (size_t i = 1; i < kernels.size(); ++i)
    os << "  k" << i - 1 << " -> k" << i << " [style=dotted, arrowhead=none, color=gray];\n";
  // Hazards by storage, in LINEAR order: the last writer, and the readers since.
  struct State {
    int64_t writer = -1;
    std::vector<size_t> readers;
  };
  std::map<const UOp *, State> state;
  std::map<std::tuple<size_t, size_t, std::string>, std::set<std::string>> edges; // (from, to, kind) -> buffers
  for (size_t k = 0; k < kernels.size(); ++k) {
    Result<sched::CallAccess> acc = sched::callAccess(kernels[k]);
    if (!acc) continue;
    std::vector<const UOp *> bufs = argStorage(kernels[k]);
    auto buf = [&](int64_t slot) { return size_t(slot) < bufs.size() ? bufs[size_t(slot)] : nullptr; };
    for (int64_t s : acc->ins)
      if (const UOp *b = buf(s)) {
        State &st = state[b];
        if (st.writer >= 0 && size_t(st.writer) != k) edges[{size_t(st.writer), k, "RAW"}].insert(sched::storageName(b));
      }
    for (int64_t s : acc->outs)
      if (const UOp *b = buf(s)) {
        State &st = state[b];
        bool war = false;
        for (size_t r : st.readers)
          if (r != k) {
            edges[{r, k, "WAR"}].insert(sched::storageName(b));
            war = true;
          }
        if (!war && st.writer >= 0 && size_t(st.writer) != k) edges[{size_t(st.writer), k, "WAW"}].insert(sched::storageName(b));
      }
    for (int64_t s : acc->outs)
      if (const UOp *b = buf(s)) state[b] = State{int64_t(k), {}};
    for (int64_t s : acc->ins)
      if (const UOp *b = buf(s)) state[b].readers.push_back(k);
  }
  // AFTER: an ordering the kernel graph's AFTERs imposed that no hazard above explains.
  if (orderings) {
    std::set<std::pair<size_t, size_t>> hazards;
    for (const auto &[key, names] : edges) hazards.emplace(std::get<0>(key), std::get<1>(key));
    for (const AfterOrdering &o : *orderings)
      if (o.before < o.after && o.after < kernels.size() && !hazards.count({o.before, o.after}))
        edges[{o.before, o.after, "AFTER"}].insert(o.via);
  }
  for (const auto &[key, names] : edges) {
    const auto &[from, to, kind] = key;
    std::string label = kind;
    for (const std::string &n : names) label += "\\n" + escape(n);
    os << "  k" << from << " -> k" << to << " [label=\"" << label << "\""
       << (kind == "RAW"   ? ""
           : kind == "WAR" ? ", color=red"
           : kind == "WAW" ? ", color=blue"
                           : ", style=dashed, color=darkgreen")
       << "];\n";
  }
  os << "}\n";
  return os.str();
}

std::string kernelGraphDot(const Graph &g, const std::vector<const UOp *> &kernels) {
  std::ostringstream os;
  os << "digraph kernel_graph {\n  rankdir=TB;\n";
  std::unordered_map<const UOp *, size_t> kernelIndex;
  for (size_t i = 0; i < kernels.size(); ++i) kernelIndex[kernels[i]] = i;
  std::unordered_map<const UOp *, std::string> stateId;
  auto state = [&](const UOp *u) -> const std::string & {
    auto [it, fresh] = stateId.emplace(u, "s" + std::to_string(stateId.size()));
    if (fresh) os << "  " << it->second << " [shape=ellipse, label=\"" << escape(sched::storageName(u)) << "\"];\n";
    return it->second;
  };
  for (size_t i = 0; i < kernels.size(); ++i)
    os << "  k" << i << " [shape=box, label=\"" << kernelLabel(i, kernels[i]) << "\"];\n";
  // Arguments: a state the kernel takes, labelled with its access.
  for (size_t i = 0; i < kernels.size(); ++i) {
    Result<sched::CallAccess> acc = sched::callAccess(kernels[i]);
    for (size_t a = 1; a < kernels[i]->numSrc(); ++a) {
      const UOp *arg = kernels[i]->src(a);
      if (sched::isBoundVar(arg)) continue;
      int64_t slot = int64_t(a - 1);
      bool r = acc && std::binary_search(acc->ins.begin(), acc->ins.end(), slot);
      bool w = acc && std::binary_search(acc->outs.begin(), acc->outs.end(), slot);
      std::string from = state(sched::unwrapSrc(arg));
      os << "  " << from << " -> k" << i << " [label=\"arg " << slot
         << (r && w ? " rw" : r ? " r" : w ? " w" : "") << "\"];\n";
    }
  }
  // AFTERs: the state a kernel produces, and AFTER-on-AFTER ordering.
  for (const UOp *u : allNodes(g, true)) {
    if (!u->is(Op::AFTER)) continue;
    std::string to = state(u);
    for (size_t i = 1; i < u->numSrc(); ++i) {
      const UOp *s = u->src(i);
      const UOp *call = s->is(Op::END) && s->numSrc() ? s->src(0) : s;
      if (auto it = kernelIndex.find(call); it != kernelIndex.end())
        os << "  k" << it->second << " -> " << to << " [label=\"writes\"];\n";
      else if (s->is(Op::AFTER)) {
        std::string from = state(s);
        os << "  " << from << " -> " << to << " [label=\"AFTER\", style=dashed];\n";
      }
    }
  }
  os << "}\n";
  return os.str();
}

std::string tensorGraphDot(const Graph &g) {
  std::ostringstream os;
  os << "digraph tensor_graph {\n  rankdir=TB;\n  node [shape=box];\n";
  std::unordered_map<const UOp *, size_t> id;
  for (const UOp *u : allNodes(g, false)) {
    size_t n = id.size();
    id[u] = n;
    std::string label = "%" + std::to_string(n) + " " + std::string(opName(u->op())) + " " + std::string(u->dtype().name());
    if (u->is(Op::CONST)) label += " " + u->arg().toString();
    label = escape(label);
    if (const Shape *s = u->shape(); s && !s->empty()) label += "\\n" + shapeStr(*s);
    os << "  n" << n << " [label=\"" << label << "\"];\n";
    for (size_t i = 0; i < u->numSrc(); ++i)
      os << "  n" << id.at(u->src(i)) << " -> n" << n << (u->numSrc() > 1 ? " [label=\"" + std::to_string(i) + "\"]" : "")
         << ";\n";
  }
  for (size_t r = 0; r < g.roots.size(); ++r)
    os << "  n" << id.at(g.roots[r]) << " [style=bold, xlabel=\""
       << escape(r < g.rootNames.size() ? g.rootNames[r] : "root") << "\"];\n";
  os << "}\n";
  return os.str();
}

} // namespace

std::vector<const UOp *> graphKernels(const Graph &g, bool *scheduled) {
  for (const UOp *r : g.roots) {
    const UOp *linear = r->is(Op::LINEAR) ? r : r->is(Op::CALL) && r->numSrc() && r->src(0)->is(Op::LINEAR) ? r->src(0) : nullptr;
    if (!linear) continue;
    if (scheduled) *scheduled = true;
    return std::vector<const UOp *>(linear->src().begin(), linear->src().end());
  }
  if (scheduled) *scheduled = false;
  std::vector<const UOp *> calls;
  for (const UOp *u : allNodes(g, true))
    if (u->is(Op::CALL) && u->numSrc() && isKernelBody(u->src(0))) calls.push_back(u);
  return calls;
}

size_t graphNodeCount(const Graph &g) { return allNodes(g, true).size(); }

std::string formatStats(const Graph &g, size_t inputNodes) {
  bool scheduled = false;
  std::vector<const UOp *> kernels = graphKernels(g, &scheduled);
  size_t nodes = graphNodeCount(g);
  size_t buffers = 0;
  int64_t bufferBytes = 0;
  for (const UOp *u : allNodes(g, false))
    if (u->is(Op::BUFFER)) {
      ++buffers;
      bufferBytes += std::max<int64_t>(sched::storageBytes(u), 0);
    }
  std::ostringstream os, lines;
  int64_t flops = 0, read = 0, written = 0;
  bool exact = true;
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelInfoLine line = estimateCall(kernels[i]);
    lines << "stats: kernel " << i << ": ";
    if (!line.known) {
      lines << "Ops." << opName(kernels[i]->numSrc() ? kernels[i]->src(0)->op() : Op::NOOP) << " body, not estimated\n";
      continue;
    }
    flops += line.est.flops;
    read += line.est.bytesRead;
    written += line.est.bytesWritten;
    exact = exact && line.est.exact;
    lines << "flops " << line.est.flops << ", bytes read " << line.est.bytesRead << ", written " << line.est.bytesWritten
          << ", reads " << slots(line.est.ins) << " writes " << slots(line.est.outs)
          << (line.est.exact ? "" : " (upper bound)") << "\n";
  }
  os << "stats: nodes " << nodes << " (input " << inputNodes << "), kernels " << kernels.size()
     << (scheduled ? " (scheduled)" : "") << ", buffers " << buffers << " (" << bufferBytes << " bytes)\n";
  os << "stats: estimated flops " << flops << ", bytes moved " << read + written << " (read " << read << ", written "
     << written << ")" << (exact ? "" : " (upper bound)") << "\n";
  return os.str() + lines.str();
}

std::string emitDot(const Graph &g) {
  bool scheduled = false;
  std::vector<const UOp *> kernels = graphKernels(g, &scheduled);
  if (scheduled) {
    // The root graphKernels took the LINEAR of: the first scheduled one.
    const std::vector<AfterOrdering> *orderings = nullptr;
    for (size_t r = 0; r < g.roots.size(); ++r) {
      const UOp *root = g.roots[r];
      if (!root->is(Op::LINEAR) && !(root->is(Op::CALL) && root->numSrc() && root->src(0)->is(Op::LINEAR))) continue;
      if (auto it = g.afterOrderings.find(r); it != g.afterOrderings.end()) orderings = &it->second;
      break;
    }
    return scheduleDot(kernels, orderings);
  }
  if (!kernels.empty()) return kernelGraphDot(g, kernels);
  return tensorGraphDot(g);
}

} // namespace tgc::driver
