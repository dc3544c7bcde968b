//===- Storage.cpp - storage queries on kernel graphs ---------------------===//
//
// Mirrors tinygrad's UOp.base / UOp.buf_uop / UOp.is_bound_var
// (tinygrad/uop/ops.py) and _unwrap_src / _states
// (tinygrad/schedule/__init__.py).
//
//===----------------------------------------------------------------------===//
#include "Schedule/Storage.h"

namespace tgc::sched {

static const Value *paramArgField(const UOp *u, std::string_view name) {
  if (!u->is(Op::PARAM) && !u->is(Op::BUFFER)) return nullptr;
  if (!u->arg().isObj("ParamArg")) return nullptr;
  return u->arg().field(name);
}

std::optional<int64_t> paramSlot(const UOp *u) {
  const Value *v = paramArgField(u, "slot");
  if (!v || !v->isInt()) return std::nullopt;
  return v->getInt();
}

std::optional<AddrSpace> declaredAddrSpace(const UOp *u) {
  const Value *v = paramArgField(u, "addrspace");
  if (!v || v->kind() != Value::Kind::Enum) return std::nullopt;
  return addrSpaceFromName(v->str());
}

bool isGlobalParam(const UOp *u) { return u->is(Op::PARAM) && declaredAddrSpace(u) == AddrSpace::GLOBAL; }

const UOp *withParamSlot(const UOp *param, int64_t slot) {
  const Value &arg = param->arg();
  std::vector<Value> fields = arg.items();
  const auto &names = arg.fieldNames();
  for (size_t i = 0; i < names.size() && i < fields.size(); ++i)
    if (names[i] == "slot") fields[i] = Value::integer(slot);
  return param->withArg(Value::object(arg.cls(), names, std::move(fields)));
}

const UOp *base(const UOp *u) {
  while ((u->isIn(group::Movement) || u->is(Op::DETACH)) && u->numSrc()) u = u->src(0);
  return u;
}

const UOp *bufUop(const UOp *u) {
  // tinygrad recurses through AFTER values; a loop keeps long assign chains off the stack.
  while (true) {
    if (u->is(Op::BUFFER) || u->is(Op::PARAM)) return u;
    if (u->is(Op::MSELECT) && u->numSrc()) {
      const UOp *b = bufUop(u->src(0));
      return u->context().get(Op::MSELECT, b->dtype(), {b}, u->arg());
    }
    if (u->is(Op::MSTACK)) {
      std::vector<const UOp *> bufs;
      for (const UOp *s : u->src()) bufs.push_back(bufUop(s));
      DType dt = bufs.empty() ? u->dtype() : bufs[0]->dtype();
      return u->context().get(Op::MSTACK, dt, std::move(bufs));
    }
    const UOp *b = base(u);
    if (!b->is(Op::AFTER) || !b->numSrc()) break;
    u = b->src(0); // tinygrad takes .base of the result; storage nodes are their own base
  }
  while (u->numSrc() && !u->is(Op::BUFFER) && !u->is(Op::PARAM) && !u->is(Op::STAGE) && !u->is(Op::MSTACK))
    u = u->src(0);
  return u;
}

const UOp *BufUopCache::operator()(const UOp *u) {
  // bufUop(u) is bufUop(src[0] of u's base) while that base is an AFTER.
  path_.clear();
  const UOp *result = nullptr;
  while (true) {
    if (auto it = memo_.find(u); it != memo_.end()) {
      result = it->second;
      break;
    }
    const UOp *b = base(u);
    if (u->is(Op::BUFFER) || u->is(Op::PARAM) || u->is(Op::MSELECT) || u->is(Op::MSTACK) || !b->is(Op::AFTER) ||
        !b->numSrc()) {
      result = bufUop(u);
      memo_.emplace(u, result);
      break;
    }
    path_.push_back(u);
    u = b->src(0);
  }
  for (const UOp *p : path_) memo_.emplace(p, result);
  return result;
}

bool isBoundVar(const UOp *u) {
  if (!u->is(Op::AFTER) || u->numSrc() != 2) return false;
  const UOp *var = u->src(0), *st = u->src(1);
  // A Variable: a 0-d (shape arg STACK()) ALU BUFFER that carries a value range.
  const Value *range = paramArgField(var, "vmin_vmax");
  bool isVariable = var->is(Op::BUFFER) && range && !range->isNone() && declaredAddrSpace(var) == AddrSpace::ALU &&
                    var->numSrc() == 1 && var->src(0)->is(Op::STACK) && var->src(0)->numSrc() == 0;
  return isVariable && st->is(Op::STORE) && st->numSrc() >= 2 && st->src(0) == var && st->src(1)->is(Op::CONST);
}

const UOp *unwrapSrc(const UOp *u) {
  while (u->numSrc() && !u->is(Op::AFTER) && !u->is(Op::BUFFER) && !u->is(Op::PARAM) && !u->is(Op::MSELECT) &&
         !u->is(Op::MSTACK))
    u = u->src(0);
  return u;
}

Result<std::vector<const UOp *>> bufferStates(const UOp *arg) {
  std::vector<const UOp *> out;
  std::vector<const UOp *> work{arg};
  while (!work.empty()) {
    const UOp *s = unwrapSrc(work.back());
    work.pop_back();
    if (s->is(Op::MSELECT) || s->is(Op::MSTACK)) {
      // Depth-first, sources left to right, as tinygrad's recursion lists them.
      for (size_t i = s->numSrc(); i-- > 0;) work.push_back(s->src(i));
      continue;
    }
    if (!s->is(Op::AFTER) && !s->is(Op::BUFFER) && !s->is(Op::PARAM))
      return Diagnostic::at(s,
                            "input to kernel must resolve to a buffer state, not Ops." + std::string(opName(s->op())));
    out.push_back(s);
  }
  return out;
}

std::string storageName(const UOp *u) {
  if (u->is(Op::PARAM) || u->is(Op::BUFFER)) {
    std::string s(opName(u->op()));
    if (auto slot = paramSlot(u)) s += " slot=" + std::to_string(*slot);
    return s;
  }
  if (u->is(Op::AFTER) && u->numSrc()) return "AFTER(" + storageName(bufUop(u)) + ")";
  if ((u->is(Op::MSELECT) || u->is(Op::MSTACK)) && u->numSrc()) {
    std::string s = std::string(opName(u->op())) + "(";
    for (size_t i = 0; i < u->numSrc(); ++i) s += (i ? ", " : "") + storageName(u->src(i));
    return s + ")";
  }
  return std::string(opName(u->op()));
}

} // namespace tgc::sched
