//===- LinearPlan.cpp - resolve a LINEAR's buffers, views and kernels ---===//
//
// The static checks of a LINEAR before anything is compiled: every source is
// a CALL of a kernel SINK or a COPY; arguments are BUFFERs or
// BITCAST/SHRINK views of them (tinygrad's memory planner slices an int8
// arena); identical kernel bodies are compiled once (tinygrad's method cache).
//
//===----------------------------------------------------------------------===//
#include "Codegen/Lower/LinearPlan.h"
#include "Codegen/Lower/KernelToMLIR.h"

#include <cstdlib>
#include <cstring>
#include <map>

namespace tgc {

int SchedulePlan::indexOf(const UOp *node) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].node == node) return int(i);
  return -1;
}

int SchedulePlan::indexOfSlot(int64_t slot) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].slot == slot) return int(i);
  return -1;
}

int SchedulePlan::indexOfVar(std::string_view name) const {
  for (size_t i = 0; i < vars.size(); ++i)
    if (vars[i].name == name) return int(i);
  return -1;
}

Status SchedulePlan::checkVar(std::string_view name, int64_t value) const {
  int i = indexOfVar(name);
  if (i < 0) {
    std::string known;
    for (const ScheduleVar &x : vars) known += (known.empty() ? "" : ", ") + x.name;
    return Diagnostic(Location(), "unknown variable '" + std::string(name) + "' (variables: " +
                                      (known.empty() ? "none" : known) + ")");
  }
  const ScheduleVar &x = vars[size_t(i)];
  if (value < x.min || value > x.max)
    return Diagnostic(Location(), "variable '" + x.name + "' = " + std::to_string(value) + " is outside its range [" +
                                      std::to_string(x.min) + ", " + std::to_string(x.max) + "]");
  return Status::success();
}

Result<std::vector<int64_t>> SchedulePlan::bindVars(const std::map<std::string, int64_t> &values) const {
  for (const auto &[name, v] : values)
    if (Status s = checkVar(name, v); !s) return s.error();
  std::vector<int64_t> out;
  for (const ScheduleVar &x : vars) {
    auto it = values.find(x.name);
    if (it == values.end()) return Diagnostic(Location(), "no value for variable '" + x.name + "'");
    out.push_back(it->second);
  }
  return out;
}

namespace {

std::optional<int64_t> constInt(const UOp *u) {
  if (u->is(Op::CONST) && u->arg().isInt()) return u->arg().getInt();
  return std::nullopt;
}

} // namespace

std::string kernelSymbol(const std::string &tag, const std::string &name) {
  std::string s = "k" + tag + "_";
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s;
}

Result<int> SchedulePlan::addBuffer(const UOp *buf) {
  int i = indexOf(buf);
  if (i >= 0) return i;
  std::optional<int64_t> numel = buf->numSrc() == 1 ? constInt(buf->src(0)) : std::nullopt;
  if (!numel || *numel < 0) return Diagnostic::at(buf, "BUFFER needs a constant element count");
  if (!buf->dtype() || buf->dtype().isVoid() || buf->dtype().isWeak())
    return Diagnostic::at(buf, "BUFFER of dtype " + std::string(buf->dtype() ? buf->dtype().name() : "?") + " cannot be stored");
  ScheduleBuffer b;
  b.node = buf;
  b.dtype = buf->dtype();
  b.numel = *numel;
  if (const tgc::Value *slot = buf->arg().field("slot"); slot && slot->isInt()) b.slot = slot->getInt();
  if (const tgc::Value *dev = buf->arg().field("device"); dev && dev->kind() == tgc::Value::Kind::Str) b.device = dev->str();
  buffers.push_back(std::move(b));
  return int(buffers.size() - 1);
}

namespace {

class Planner {
public:
  Result<SchedulePlan> run(const UOp *linear);

private:
  Result<ScheduleArg> resolve(const UOp *arg);
  Status addVars(ScheduleKernel &k);

  SchedulePlan plan_;
  std::map<std::pair<const UOp *, size_t>, int> kernelIndex_;
};

Result<ScheduleArg> Planner::resolve(const UOp *arg) {
  switch (arg->op()) {
  case Op::BUFFER: {
    auto i = plan_.addBuffer(arg);
    if (!i) return i.error();
    return ScheduleArg{*i, 0, int64_t(plan_.buffers[*i].bytes())};
  }
  case Op::BITCAST: {
    if (arg->numSrc() != 1) return Diagnostic::at(arg, "BITCAST takes one source");
    auto base = resolve(arg->src(0));
    if (!base) return base.error();
    if (base->bytes % arg->dtype().itemsize() != 0)
      return Diagnostic::at(arg, "BITCAST view of " + std::to_string(base->bytes) + " bytes is not a whole number of " +
                                     std::string(arg->dtype().name()));
    return base;
  }
  case Op::SHRINK: {
    auto base = resolve(arg->src(0));
    if (!base) return base.error();
    std::optional<int64_t> off = arg->numSrc() == 3 ? constInt(arg->src(1)) : std::nullopt;
    std::optional<int64_t> size = arg->numSrc() == 3 ? constInt(arg->src(2)) : std::nullopt;
    if (!off || !size) return Diagnostic::at(arg, "SHRINK view needs a constant offset and size");
    int64_t item = arg->src(0)->dtype().itemsize();
    if (*off < 0 || *size < 0 || (*off + *size) * item > base->bytes)
      return Diagnostic::at(arg, "SHRINK view [" + std::to_string(*off) + ", +" + std::to_string(*size) +
                                     ") is outside its buffer");
    return ScheduleArg{base->buffer, base->byteOffset + *off * item, *size * item};
  }
  default: return Diagnostic::at(arg, "unsupported CALL argument (expected a BUFFER or a view of one): " + arg->str());
  }
}

// The variables kernel `k` reads, as its arguments (kernelVariables order)
// and in the plan; one name is one variable, with one range.
Status Planner::addVars(ScheduleKernel &k) {
  std::map<std::string, const UOp *> found; // by name: kernelVariables' order
  for (const UOp *u : toposort(k.sink))
    if (codegen::isVariable(u)) found.emplace(codegen::variableName(u), u);
  for (const auto &[name, u] : found) {
    const tgc::Value *mm = u->arg().field("vmin_vmax");
    if (name.empty()) return Diagnostic::at(u, "a variable needs a name");
    if (!mm || !mm->isSequence() || mm->size() != 2 || !(*mm)[0].isInt() || !(*mm)[1].isInt() ||
        (*mm)[0].getInt() > (*mm)[1].getInt())
      return Diagnostic::at(u, "variable '" + name + "' needs its range (vmin_vmax)");
    ScheduleVar v{name, u->dtype(), (*mm)[0].getInt(), (*mm)[1].getInt()};
    int i = plan_.indexOfVar(name);
    if (i < 0) {
      i = int(plan_.vars.size());
      plan_.vars.push_back(v);
    } else if (plan_.vars[i].min != v.min || plan_.vars[i].max != v.max || plan_.vars[i].dtype != v.dtype) {
      return Diagnostic::at(u, "variable '" + name + "' is declared with two ranges or dtypes");
    }
    k.vars.push_back(i);
  }
  return Status::success();
}

Result<SchedulePlan> Planner::run(const UOp *linear) {
  if (!linear) return Diagnostic(Location(), "no LINEAR to compile");
  if (!linear->is(Op::LINEAR)) return Diagnostic::at(linear, "expected a LINEAR of CALLs, got " + linear->str());
  for (const UOp *call : linear->src()) {
    if (!call->is(Op::CALL) || call->numSrc() < 1) return Diagnostic::at(call, "LINEAR sources must be CALLs, got " + call->str());
    ScheduleCall sc;
    sc.call = call;
    for (size_t i = 1; i < call->numSrc(); ++i) {
      auto a = resolve(call->src(i));
      if (!a) return a.error();
      sc.args.push_back(*a);
    }
    const UOp *body = call->src(0);
    if (body->is(Op::COPY)) {
      sc.kind = ScheduleCall::Kind::Copy;
      if (sc.args.size() != 2) return Diagnostic::at(call, "a COPY call takes (destination, source)");
      if (sc.args[0].bytes != sc.args[1].bytes)
        return Diagnostic::at(call, "COPY between buffers of " + std::to_string(sc.args[1].bytes) + " and " +
                                        std::to_string(sc.args[0].bytes) + " bytes");
    } else if (body->is(Op::SINK)) {
      sc.kind = ScheduleCall::Kind::Kernel;
      auto key = std::make_pair(body, sc.args.size());
      auto [it, inserted] = kernelIndex_.try_emplace(key, int(plan_.kernels.size()));
      if (inserted) {
        ScheduleKernel k;
        k.sink = body;
        if (const tgc::Value *n = body->arg().field("name"); n && n->kind() == tgc::Value::Kind::Str) k.name = n->str();
        k.symbol = kernelSymbol(std::to_string(plan_.kernels.size()), k.name);
        k.numArgs = unsigned(sc.args.size());
        if (Status s = addVars(k); !s) return s.error();
        plan_.kernels.push_back(std::move(k));
      }
      sc.kernel = it->second;
    } else {
      return Diagnostic::at(call, "unsupported CALL body (expected a kernel SINK or a COPY): " + body->str());
    }
    plan_.calls.push_back(std::move(sc));
  }
  // `restrict` only where no call passes overlapping memory twice (e.g. x and x[:1]).
  for (const ScheduleCall &c : plan_.calls) {
    if (c.kind != ScheduleCall::Kind::Kernel) continue;
    for (size_t i = 0; i < c.args.size(); ++i)
      for (size_t j = i + 1; j < c.args.size(); ++j) {
        const ScheduleArg &a = c.args[i], &b = c.args[j];
        if (a.buffer == b.buffer && a.byteOffset < b.byteOffset + b.bytes && b.byteOffset < a.byteOffset + a.bytes)
          plan_.kernels[c.kernel].noalias = false;
      }
  }
  return std::move(plan_);
}

} // namespace

Result<SchedulePlan> planLinear(const UOp *linear) { return Planner().run(linear); }

} // namespace tgc
