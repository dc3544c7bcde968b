//===- RealizeOutputs.cpp - every SINK source as dense storage ------------===//
//
// tinygrad's Tensor._buffer (contiguous(), clone("CPU") for a tensor without a
// device) applied to each source of the tensor graph's SINK before
// transform_to_call, but only where transform_to_call would not already store
// the source whole: a realized base stays as tinygrad schedules it, and a
// contiguous view of a buffer stays a view (numpy() reads it so), so the
// common case costs no extra kernel.
//
//===----------------------------------------------------------------------===//
#include "Schedule/RealizeOutputs.h"

#include "IR/Pass.h"
#include "Schedule/Callify.h"
#include "Schedule/Mops.h"
#include "Schedule/Sugar.h"

namespace tgc {
using namespace rangeify;

static const UOp *stripReshapes(const UOp *u) {
  while (u->is(Op::RESHAPE)) u = u->src(0);
  return u;
}

bool storedDensely(const UOp *s) {
  const IShape *shape = maybeShape(s);
  if (!shape || prod(*shape) == 0) return false; // a CONTIGUOUS of nothing is removed
  const UOp *x = stripReshapes(s);
  if (isVirtual(x) || base(x) != x) return false;
  if (x->is(Op::CONTIGUOUS)) {
    const UOp *in = x->src(0);
    return !in->isIn(group::Movement) && !in->is(Op::BITCAST) && !in->is(Op::AFTER) && !hasBufferIdentity(in);
  }
  std::optional<AddrSpace> as = x->addrspace();
  return !hasBufferIdentity(x) && !x->is(Op::AFTER) && !x->is(Op::BUFFER) && !(as && *as == AddrSpace::ALU);
}

/// {BUFFER, byte offset} when `s` reads one dense run of a BUFFER through
/// movement ops and BITCASTs (tinygrad's _make_buffer_view).
static std::optional<std::pair<const UOp *, int64_t>> bufferView(const UOp *s) {
  const UOp *b = base(s);
  while (b->is(Op::BITCAST)) b = base(b->src(0));
  if (!b->is(Op::BUFFER) || deviceStartsWith(b, {"DISK", "TINYFS"})) return std::nullopt;
  std::optional<std::pair<const UOp *, int64_t>> cv = contiguousView(s);
  if (!cv || cv->first != b) return std::nullopt;
  return std::make_pair(b, cv->second * b->dtype().itemsize());
}

Result<RealizedOutputs> realizeOutputs(const UOp *sink, const std::string &defaultDevice, int64_t firstFreeSlot,
                                       const std::set<size_t> &force) {
  RealizedOutputs out;
  std::vector<const UOp *> srcs(sink->src().begin(), sink->src().end());
  out.clones.assign(srcs.size(), nullptr);
  out.views.assign(srcs.size(), {nullptr, 0});
  try {
    for (size_t i = 0; i < srcs.size(); ++i) {
      const UOp *s = srcs[i];
      if (s->device().isTuple()) continue; // multi-device: the pipeline's diagnostic
      const IShape *shape = nullptr;
      try {
        shape = maybeShape(s);
      } catch (const ScheduleError &) { // a symbolic shape: likewise
        continue;
      }
      // An empty tensor needs no storage: the model hands back no bytes for it.
      if (!shape || prod(*shape) == 0) continue;
      if (!force.count(i)) {
        if (std::optional<std::pair<const UOp *, int64_t>> v = bufferView(s)) {
          out.views[i] = *v;
          continue;
        }
        if (storedDensely(s)) continue;
      }
      DType dt = strongDType(s->dtype());
      Value device = s->device().isNone() ? Value::string(defaultDevice) : s->device();
      // storage for the Variables' maxima, viewed at the symbolic shape
      const UOp *buf = newBuffer(s->context(), device, maxNumel(*shape), dt, firstFreeSlot++);
      const UOp *view = shrinkTo(reshape(buf, maxShape(*shape)), *shape);
      srcs[i] = after(view, {store(view, dt == s->dtype() ? s : cast(s, dt))});
      out.clones[i] = buf;
    }
  } catch (const ScheduleError &e) {
    return e.diag;
  }
  out.sink = sink->context().get(Op::SINK, sink->dtype(), srcs, sink->arg(), sink->tag());
  return out;
}

void registerRealizeOutputsPass() {
  PassRegistry::instance().add(
      {"realize-outputs",
       "tinygrad's numpy(): copy each SINK source that would not be stored densely (views, buffers, "
       "deviceless tensors) into a fresh buffer",
       [] {
         return std::make_unique<FunctionPass>([](Graph &g) -> Status {
           bool any = false;
           for (const UOp *&r : g.roots) {
             if (!r->is(Op::SINK) || r->arg().isObj("KernelInfo")) continue;
             Result<RealizedOutputs> ro = realizeOutputs(r, "CPU", firstFreeBufferSlot(g.roots));
             if (!ro) return ro.error();
             r = ro->sink;
             any = true;
           }
           if (!any) return Diagnostic({}, "realize-outputs expects a tensor graph: a SINK of the tensors to realize");
           return Status::success();
         });
       }});
}

} // namespace tgc
