//===- ResolveCalls.cpp - a scheduled function becomes a LINEAR over buffers ===//
//
// Mirrors tinygrad's pm_resolve_linear_call and pm_copy_from_store
// (tinygrad/schedule/__init__.py, pipeline-schedule.md §7):
// CALL(LINEAR, *args) is replaced by its LINEAR with every buffer PARAM
// (slot >= 0) bound to its argument and every intermediate GLOBAL BUFFER
// given a fresh buffer slot; nested LINEARs are flattened. Then a kernel that
// only copies one buffer into another across devices becomes CALL(COPY), and
// any other kernel must keep all its buffers on one device. Memory planning
// (§6) is not part of this pass.
//
//===----------------------------------------------------------------------===//
#include "Schedule/ResolveCalls.h"

#include "IR/PatternMatcher.h"
#include "Schedule/Callify.h"
#include "Schedule/Sugar.h"

#include <algorithm>
#include <unordered_set>

namespace tgc {
using namespace rangeify;

namespace {
struct ResolveCtx {
  std::unordered_map<const UOp *, const UOp *> fresh;
  std::vector<const UOp *> args;
  int64_t nextSlot = 0;
};
} // namespace

static const PatternMatcher &paramsToBuffersPM() {
  static const PatternMatcher pm({
      // only buffer PARAMs (slot >= 0); ALU/shape vars keep slot -1
      rule(UPat(Op::PARAM).named("x"),
           [](Match &m) -> const UOp * {
             ResolveCtx &ctx = m.ctx<ResolveCtx>();
             int64_t slot = paramFields(m["x"]).slot;
             if (slot < 0) return nullptr;
             if (size_t(slot) >= ctx.args.size()) fail(m["x"], "PARAM slot " + std::to_string(slot) + " has no call argument");
             return ctx.args[size_t(slot)];
           }),
      // intermediate buffers get their own storage
      rule(UPat(Op::BUFFER).src({UPat()}).named("b"),
           [](Match &m) -> const UOp * {
             ResolveCtx &ctx = m.ctx<ResolveCtx>();
             const UOp *b = m["b"];
             std::optional<ParamFields> f = ParamFields::from(b->arg());
             std::optional<AddrSpace> as = b->addrspace();
             if (!f || !as || *as != AddrSpace::GLOBAL) return nullptr;
             auto [it, inserted] = ctx.fresh.try_emplace(b, nullptr);
             if (inserted) it->second = newBuffer(b->context(), b->device(), staticDim(prod(shapeOf(b)), b), b->dtype(), ctx.nextSlot++);
             return it->second;
           }),
  });
  return pm;
}

/// A Variable's name, for a PARAM or BUFFER that is one (its ParamArg has a
/// value range and a name); "" for anything else.
static std::string variableName(const UOp *u) {
  if (!u->isIn({Op::PARAM, Op::BUFFER})) return "";
  std::optional<ParamFields> f = ParamFields::from(u->arg());
  if (!f || f->vminVmax.isNone() || f->name.kind() != Value::Kind::Str) return "";
  return f->name.str();
}

using Binds = std::unordered_map<std::string, const UOp *>;

/// A kernel's scalar params renamed to the Variables they are bound to: the
/// schedule names them by argument slot (`p1`, so that it is the same for
/// every binding), the LINEAR by the Variable (`bs`), as tinygrad's
/// resolve_linear_call does.
static const UOp *applyBinds(const UOp *si, const Binds &binds) {
  if (binds.empty()) return si;
  std::unordered_map<const UOp *, const UOp *> subs;
  ToposortOptions o;
  o.enterCalls = true;
  for (const UOp *u : toposort(si, o))
    if (u->is(Op::PARAM))
      if (auto it = binds.find(variableName(u)); it != binds.end()) subs.emplace(u, it->second);
  if (subs.empty()) return si;
  std::vector<const UOp *> src;
  for (const UOp *s : si->src()) src.push_back(substituteUnified(s, subs));
  return si->withSrc(src);
}

static const UOp *resolveLinearCall(const UOp *call, int64_t &nextSlot, const Binds &outerBinds) {
  ResolveCtx ctx;
  ctx.args.assign(call->src().begin() + 1, call->src().end());
  ctx.nextSlot = nextSlot;
  // nested LINEAR calls are scopes: their own bound args shadow the enclosing ones
  Binds binds = outerBinds;
  for (size_t i = 0; i < ctx.args.size(); ++i)
    if (const UOp *a = ctx.args[i]; isBoundVar(a))
      binds["p" + std::to_string(i)] = a->context().get(Op::PARAM, a->src(0)->dtype(),
                                                         {a->src(0)->src().begin(), a->src(0)->src().end()}, a->src(0)->arg());
  RewriteOptions o = preOrder();
  o.walk = true;
  const UOp *linear = rewrite(call->src(0), paramsToBuffersPM(), ctx, o);
  nextSlot = ctx.nextSlot;
  std::vector<const UOp *> out;
  for (const UOp *si : linear->src()) {
    if (si->is(Op::CALL) && si->numSrc() && si->src(0)->is(Op::LINEAR)) {
      const UOp *inner = resolveLinearCall(si, nextSlot, binds);
      out.insert(out.end(), inner->src().begin(), inner->src().end());
    } else {
      out.push_back(applyBinds(si, binds));
    }
  }
  return linear->withSrc(out);
}

static bool sameDevice(const UOp *a, const UOp *b) {
  return a->device() == b->device() && !deviceStartsWith(a, {"DISK"});
}

// copy_kernel_to_copy_uop: STORE(dst[i], src[i]) across devices is a COPY.
static const UOp *copyFromStore(const UOp *call) {
  const UOp *sinkU = call->src(0);
  if (!sinkU->is(Op::SINK) || sinkU->numSrc() != 1) return nullptr;
  const UOp *body = sinkU->src(0), *r = nullptr;
  if (body->is(Op::END)) {
    if (body->numSrc() != 2 || !body->src(1)->is(Op::RANGE)) return nullptr;
    r = body->src(1);
    body = body->src(0);
  }
  if (!body->is(Op::STORE) || body->numSrc() != 2) return nullptr;
  const UOp *di = body->src(0), *si = body->src(1);
  auto isIdx = [&](const UOp *i) {
    if (!i->is(Op::INDEX) || i->numSrc() != 2 || !i->src(0)->is(Op::PARAM)) return false;
    const UOp *x = i->src(1);
    return r ? x == r : (x->is(Op::CONST) && x->arg().isInt() && x->arg().getInt() == 0);
  };
  if (!isIdx(di) || !isIdx(si)) return nullptr;
  const UOp *dst = di->src(0), *src = si->src(0);
  if (sameDevice(dst, src)) return nullptr;
  std::vector<const UOp *> s(call->src().begin(), call->src().end());
  s[0] = call->context().get(Op::COPY, src->dtype(), {src}, dst->device());
  return call->withSrc(s);
}

static void checkOneDevice(const UOp *call) {
  std::vector<Value> devices;
  for (const UOp *u : toposort(call->src(0))) {
    if (!u->is(Op::PARAM) || u->device().isNone()) continue;
    if (std::find(devices.begin(), devices.end(), u->device()) == devices.end()) devices.push_back(u->device());
  }
  if (devices.size() >= 2)
    fail(call, "all buffers must be on the same device: " + devices[0].toString() + ", " + devices[1].toString());
}

void prepareResolveCalls() { paramsToBuffersPM(); }

Status resolveCalls(Graph &g) {
  try {
    int64_t nextSlot = firstFreeBufferSlot(g.roots);
    // kernels that passed checkOneDevice: equal kernels share one SINK, and
    // the answer depends on the SINK alone
    std::unordered_set<const UOp *> oneDevice;
    bool any = false;
    for (const UOp *&root : g.roots) {
      if (!root->is(Op::CALL) || !root->numSrc() || !root->src(0)->is(Op::LINEAR)) continue;
      const UOp *linear = resolveLinearCall(root, nextSlot, {});
      std::vector<const UOp *> calls;
      for (const UOp *c : linear->src()) {
        if (c->is(Op::CALL) && c->numSrc() && c->src(0)->is(Op::SINK)) {
          if (const UOp *cp = copyFromStore(c)) c = cp;
          else if (oneDevice.insert(c->src(0)).second) checkOneDevice(c);
        }
        calls.push_back(c);
      }
      root = linear->withSrc(calls);
      any = true;
    }
    if (!any) return Diagnostic({}, "resolve-calls expects a CALL of a LINEAR (the output of linearize on a callified function)");
    for (std::string &n : g.rootNames)
      if (n == "call") n = "linear";
    return Status::success();
  } catch (const ScheduleError &e) {
    return e.diag;
  }
}

} // namespace tgc
