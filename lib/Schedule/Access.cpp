//===- Access.cpp - per-CALL reads and writes ------------------------------===//
//
// Mirrors the reference revision's UOp.call_access (tinygrad/uop/ops.py) and
// ProgramInfo.from_sink applied to graph_rewrite(body, pm_add_loads)
// (pipeline-schedule.md §5.1-5.2). Instead of building the LOADs, the
// analysis tracks the addrspace each node would have after pm_add_loads and
// records a read wherever that pass would insert a LOAD.
//
//===----------------------------------------------------------------------===//
#include "Schedule/Access.h"

#include "IR/PtrMap.h"
#include "Schedule/Ancestry.h"
#include "Schedule/Storage.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace tgc::sched {

static std::vector<int64_t> sortedUnique(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

static bool isMemory(std::optional<AddrSpace> a) {
  return a == AddrSpace::GLOBAL || a == AddrSpace::LOCAL || a == AddrSpace::REG;
}

/// pm_add_loads' maybe_load: a memory operand becomes an ALU value.
static std::optional<AddrSpace> loaded(std::optional<AddrSpace> a) { return isMemory(a) ? AddrSpace::ALU : a; }

/// The common addrspace of the given spaces (tinygrad: None unless all the
/// non-None ones agree).
static std::optional<AddrSpace> common(const std::vector<std::optional<AddrSpace>> &spaces) {
  std::optional<AddrSpace> out;
  for (auto a : spaces) {
    if (!a) continue;
    if (out && *out != *a) return std::nullopt;
    out = a;
  }
  return out;
}

/// pm_add_loads' rule 1 matches these (a shape-changing BITCAST excepted).
static bool addsLoadsToSources(const UOp *u) {
  static constexpr OpSet kLoading = group::Elementwise | OpSet{Op::REDUCE, Op::WMMA, Op::STACK};
  if (!u->isIn(kLoading)) return false;
  if (u->is(Op::BITCAST) && u->numSrc()) {
    const Shape *a = u->shape(), *b = u->src(0)->shape();
    if ((a == nullptr) != (b == nullptr) || (a && *a != *b)) return false;
  }
  return true;
}

SinkAccess computeSinkAccess(const UOp *sink) {
  SinkAccess acc;
  // The addrspace of each node after pm_add_loads rewrote its sources (tinygrad's
  // UOp.addrspace rules applied to the rewritten graph).
  std::vector<const UOp *> order = toposort(sink);
  PtrMap<std::optional<AddrSpace>> space(order.size());
  auto recordRead = [&](const UOp *operand) {
    const UOp *buf = bufUop(operand);
    if (isGlobalParam(buf))
      if (auto slot = paramSlot(buf)) acc.ins.push_back(*slot);
  };
  std::vector<std::optional<AddrSpace>> srcSpace; // reused: one allocation per sink, not per node
  for (const UOp *u : order) {
    srcSpace.clear();
    for (const UOp *s : u->src()) srcSpace.push_back(*space.find(s));
    bool loads = addsLoadsToSources(u);
    if (loads) {
      for (size_t i = 0; i < u->numSrc(); ++i)
        if (isMemory(srcSpace[i])) recordRead(u->src(i));
      for (auto &a : srcSpace) a = loaded(a);
    }
    std::optional<AddrSpace> a;
    switch (u->op()) {
    case Op::PARAM:
    case Op::BUFFER:
      a = declaredAddrSpace(u);
      break;
    case Op::SPECIAL:
    case Op::RANGE:
    case Op::LOAD:
      a = AddrSpace::ALU;
      break;
    case Op::INDEX:
    case Op::CAST:
    case Op::AFTER:
    case Op::REDUCE:
    case Op::STORE:
    case Op::MSTACK:
    case Op::MSELECT:
    case Op::END:
    case Op::UNSHARD:
      a = srcSpace.empty() ? std::nullopt : srcSpace[0];
      break;
    default:
      if (u->isIn(group::Movement))
        a = srcSpace.empty() ? std::nullopt : srcSpace[0];
      else if (u->isIn(group::Elementwise | OpSet{Op::STACK, Op::WMMA, Op::GROUP}))
        a = common(srcSpace);
    }
    space[u] = a;

    if (u->is(Op::STORE) && u->numSrc() >= 2 && isMemory(*space.find(u->src(1)))) recordRead(u->src(1));
    if (u->is(Op::LOAD) && u->numSrc()) recordRead(u->src(0));
    if (u->is(Op::STORE) && u->numSrc()) {
      const UOp *buf = bufUop(u->src(0));
      if (isGlobalParam(buf))
        if (auto slot = paramSlot(buf)) acc.outs.push_back(*slot);
    }
    if (u->is(Op::PARAM) && declaredAddrSpace(u) != AddrSpace::ALU)
      if (auto slot = paramSlot(u)) acc.globals.push_back(*slot);
  }
  acc.globals = sortedUnique(std::move(acc.globals));
  acc.ins = sortedUnique(std::move(acc.ins));
  acc.outs = sortedUnique(std::move(acc.outs));
  return acc;
}

std::vector<const UOp *> callArgs(const UOp *call, const std::vector<int64_t> &slots) {
  std::vector<const UOp *> out;
  for (int64_t i : slots) out.push_back(call->src(size_t(i) + 1));
  return out;
}

static Diagnostic opaque(const UOp *call, const UOp *body) {
  return Diagnostic::at(call, "cannot compute accesses for opaque Ops." + std::string(opName(body->op())));
}

/// The ints of a ProgramInfo tuple field, or nullopt if it is not one.
static std::optional<std::vector<int64_t>> intTuple(const Value &info, std::string_view field) {
  const Value *v = info.field(field);
  if (!v || !v->isSequence()) return std::nullopt;
  std::vector<int64_t> out;
  for (const Value &x : v->items()) {
    if (!x.isInt()) return std::nullopt;
    out.push_back(x.getInt());
  }
  return out;
}

static std::string slotList(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// callAccess, with the CALLs of a LINEAR body analysed through `innerAccess`: a
// LINEAR schedule calls each deduplicated kernel body many times.
static Result<CallAccess> analyseCall(const UOp *call, CallAccessCache &innerAccess) {
  if (!call->is(Op::CALL) || call->numSrc() == 0)
    return Diagnostic::at(call, "access analysis needs a CALL, got " + call->str());
  const UOp *body = call->src(0);
  const size_t numArgs = call->numSrc() - 1;
  CallAccess acc;
  std::optional<std::vector<int64_t>> programGlobals;

  if (body->is(Op::SINK)) {
    static constexpr OpSet kOpaqueInside{Op::CALL, Op::CUSTOM, Op::CUSTOMI, Op::INS};
    for (const UOp *u : toposort(body))
      if (u->isIn(kOpaqueInside)) return opaque(call, body);
    SinkAccess s = computeSinkAccess(body);
    acc.ins = std::move(s.ins);
    acc.outs = std::move(s.outs);
  } else if (body->is(Op::PROGRAM) && body->arg().isObj("ProgramInfo")) {
    auto ins = intTuple(body->arg(), "ins"), outs = intTuple(body->arg(), "outs");
    programGlobals = intTuple(body->arg(), "globals");
    if (!ins || !outs || !programGlobals)
      return Diagnostic::at(body, "ProgramInfo needs int tuples 'globals', 'ins' and 'outs'");
    acc.ins = sortedUnique(*ins);
    acc.outs = sortedUnique(*outs);
  } else if (body->is(Op::COPY)) {
    acc.ins = {1};
    acc.outs = {0};
  } else if (body->is(Op::LINEAR)) {
    // The inner calls' arguments live in this body's scope: the PARAMs among
    // them (under views and AFTERs) are slots of this call.
    std::vector<int64_t> ins, outs;
    for (const UOp *inner : body->src()) {
      if (!inner->is(Op::CALL))
        return Diagnostic::at(inner, "cannot compute accesses of a LINEAR body holding Ops." +
                                         std::string(opName(inner->op())) + ", not a CALL");
      Result<CallAccess> r = innerAccess(inner);
      if (!r) return r.error();
      auto collect = [&](const std::vector<int64_t> &slots, std::vector<int64_t> &into) {
        for (const UOp *a : callArgs(inner, slots))
          for (const UOp *u : toposort(bufUop(a)))
            if (u->is(Op::PARAM))
              if (auto slot = paramSlot(u)) into.push_back(*slot);
      };
      collect(r->ins, ins);
      collect(r->outs, outs);
    }
    acc.ins = sortedUnique(std::move(ins));
    acc.outs = sortedUnique(std::move(outs));
  } else {
    return opaque(call, body);
  }

  for (const auto *slots : {&acc.ins, &acc.outs})
    for (int64_t i : *slots) {
      bool bad =
          i < 0 || size_t(i) >= numArgs ||
          (programGlobals && std::find(programGlobals->begin(), programGlobals->end(), i) == programGlobals->end());
      if (bad) {
        Diagnostic d = Diagnostic::at(call, "invalid CALL access slot");
        d.notes.push_back("slot " + std::to_string(i) + " of a call with " + std::to_string(numArgs) + " arguments" +
                          (programGlobals ? ", program globals " + slotList(*programGlobals) : ""));
        return d;
      }
    }

  if (body->is(Op::PROGRAM)) {
    // Compiled code cannot be re-parameterized, so a written argument must not
    // share storage with any other accessed argument. Without device buffers
    // behind them, arguments share storage when they resolve to the same node.
    std::vector<int64_t> accessed = sortedUnique([&] {
      std::vector<int64_t> v = acc.ins;
      v.insert(v.end(), acc.outs.begin(), acc.outs.end());
      return v;
    }());
    for (int64_t w : acc.outs)
      for (int64_t j : accessed)
        if (j != w && bufUop(call->src(size_t(w) + 1)) == bufUop(call->src(size_t(j) + 1))) {
          Diagnostic d = Diagnostic::at(call, "aliased opaque kernel arguments are unsupported");
          d.notes.push_back("written argument " + std::to_string(w) + " and argument " + std::to_string(j) +
                            " are both " + storageName(bufUop(call->src(size_t(w) + 1))));
          return d;
        }
  }
  return acc;
}

Result<CallAccess> callAccess(const UOp *call) {
  CallAccessCache inner;
  return analyseCall(call, inner);
}

Result<CallAccess> CallAccessCache::operator()(const UOp *call) {
  if (!call->is(Op::CALL) || call->numSrc() == 0 || !call->src(0)->is(Op::SINK)) return analyseCall(call, *this);
  std::pair<const UOp *, size_t> key{call->src(0), call->numSrc()};
  if (auto it = sinks_.find(key); it != sinks_.end()) return it->second;
  Result<CallAccess> r = analyseCall(call, *this);
  if (r) sinks_.emplace(key, *r);
  return r;
}

Status AccessPass::run(Graph &g) {
  results_.clear();
  CallAccessCache cache;
  for (const UOp *u : toposortGraph(g.roots, false)) {
    if (!u->is(Op::CALL)) continue;
    Result<CallAccess> r = cache(u);
    if (!r) return r.error();
    results_.emplace_back(u, std::move(*r));
  }
  return Status::success();
}

std::string AccessPass::analysisText(const Graph &g) const {
  // Name nodes as printText does (docs/text-format.md): %i is the i-th node of
  // toposort(roots + buffer nodes, argRefs), so the lines refer to the dump above them.
  std::vector<const UOp *> starts(g.roots);
  for (const BufferFile &b : g.buffers)
    if (b.node) starts.push_back(b.node);
  ToposortOptions opts;
  opts.argRefs = true;
  std::unordered_map<const UOp *, size_t> index;
  for (const UOp *u : toposort(starts, opts)) index.emplace(u, index.size());
  auto name = [&](const UOp *u) {
    auto it = index.find(u);
    return it == index.end() ? std::string("%?") : "%" + std::to_string(it->second);
  };
  std::string out;
  for (const auto &[call, acc] : results_) {
    const UOp *body = call->src(0);
    out += "// access: " + name(call) + " " + std::string(opName(body->op()));
    if (const Value *kname = body->arg().field("name"); kname && kname->kind() == Value::Kind::Str)
      out += " " + quoteString(kname->str());
    out += " reads " + slotList(acc.ins) + " writes " + slotList(acc.outs) + "\n";
    for (size_t i = 0; i + 1 < call->numSrc(); ++i) {
      bool r = std::binary_search(acc.ins.begin(), acc.ins.end(), int64_t(i));
      bool w = std::binary_search(acc.outs.begin(), acc.outs.end(), int64_t(i));
      const char *role = r && w ? "read write" : r ? "read" : w ? "write" : "unused";
      out += "//   arg " + std::to_string(i) + " " + name(call->src(i + 1)) + " " + storageName(call->src(i + 1)) +
             ": " + role + "\n";
    }
  }
  return out;
}

} // namespace tgc::sched
