//===- Access.h - what a CALL reads and writes ------------------*- C++ -*-===//
//
// Access analysis (pipeline-schedule.md §5.1-5.2, tinygrad's reference
// UOp.call_access and ProgramInfo.from_sink): for a CALL, the argument slots
// its body reads and writes. Only real memory operands count: a LOAD's or
// STORE's address, or a buffer used as an ALU/REDUCE/STACK operand or stored
// value (where codegen would insert a LOAD). Listing a parameter, returning an
// AFTER, or declaring a write in an argument list is never an access, let
// alone a full initialization. Bodies whose accesses cannot be computed are
// rejected, never guessed from the argument list.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/Pass.h"
#include "IR/UOp.h"

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tgc::sched {

/// Zero-based argument slots: sorted, without duplicates. A read-modify-write
/// slot is in both lists; an unused argument is in neither.
struct CallAccess {
  std::vector<int64_t> ins, outs;
  bool operator==(const CallAccess &) const = default;
};

/// The slots of a kernel body's own PARAMs (tinygrad's ProgramInfo.from_sink
/// after pm_add_loads): `globals` are all non-ALU PARAM slots, `ins`/`outs`
/// the GLOBAL PARAMs read/written. Requires a body without nested CALL, CUSTOM,
/// CUSTOMI or INS (see callAccess).
struct SinkAccess {
  std::vector<int64_t> globals, ins, outs;
};
SinkAccess computeSinkAccess(const UOp *sink);

/// The accesses of `call` (a CALL), by body:
///  - SINK without nested CALL/CUSTOM/CUSTOMI/INS: computed (computeSinkAccess);
///  - PROGRAM with a ProgramInfo arg: its recorded ins/outs, each of which must
///    be in its globals; written arguments must not alias other accessed ones;
///  - COPY: reads slot 1, writes slot 0;
///  - LINEAR: the union over its CALLs, mapped back to this call's slots
///    through the PARAMs their arguments are stored in;
///  - anything else: "cannot compute accesses for opaque Ops.<op>".
/// Every slot must index an argument ("invalid CALL access slot").
Result<CallAccess> callAccess(const UOp *call);

/// callAccess, analysing each SINK body once: its accesses depend on the body
/// and the argument count only, and deduplicated kernels share bodies.
class CallAccessCache {
public:
  Result<CallAccess> operator()(const UOp *call);

private:
  struct KeyHash {
    size_t operator()(const std::pair<const UOp *, size_t> &k) const {
      return std::hash<const UOp *>()(k.first) ^ (k.second * 0x9e3779b97f4a7c15ULL);
    }
  };
  std::unordered_map<std::pair<const UOp *, size_t>, CallAccess, KeyHash> sinks_; // (body, #args)
};

/// The argument UOps at the given slots of `call` (duplicates kept).
std::vector<const UOp *> callArgs(const UOp *call, const std::vector<int64_t> &slots);

/// The `access` pass: computes the accesses of every CALL reachable from the
/// roots (not entering call bodies; for a LINEAR root, in execution order) and
/// fails on the first call it cannot analyse. With --print-after it lists, per
/// call, with nodes named as in the text dump:
///   // access: %9 SINK "kA" reads [1] writes [0]
///   //   arg 0 %7 PARAM slot=1: write
///   //   arg 1 %8 PARAM slot=0: read
class AccessPass : public Pass {
public:
  Status run(Graph &g) override;
  std::string analysisText(const Graph &g) const override;

private:
  std::vector<std::pair<const UOp *, CallAccess>> results_;
};

} // namespace tgc::sched
