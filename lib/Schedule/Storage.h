//===- Storage.h - which storage a kernel-graph value lives in --*- C++ -*-===//
//
// The small storage queries that access analysis and the linearizer share:
// the fields of a PARAM/BUFFER's ParamArg, tinygrad's `base` and `buf_uop`
// (the storage node under views, casts and AFTERs), and the linearizer's
// `_unwrap_src` / `_states` (the buffer states a kernel argument stands for).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/UOp.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tgc::sched {

/// The ParamArg slot of a PARAM or BUFFER (nullopt if it has no ParamArg).
std::optional<int64_t> paramSlot(const UOp *u);
/// The addrspace declared in a PARAM or BUFFER's ParamArg.
std::optional<AddrSpace> declaredAddrSpace(const UOp *u);
/// True for a PARAM whose ParamArg says GLOBAL: a buffer argument of a kernel.
bool isGlobalParam(const UOp *u);
/// The same PARAM with its ParamArg slot replaced (other fields and tag kept).
const UOp *withParamSlot(const UOp *param, int64_t slot);

/// tinygrad's UOp.base: peels movement ops and DETACH.
const UOp *base(const UOp *u);
/// tinygrad's UOp.buf_uop: the storage node (BUFFER, PARAM, STAGE, MSTACK, or
/// an MSELECT of one) under views, casts and AFTERs. May build MSELECT/MSTACK
/// nodes, as tinygrad does.
const UOp *bufUop(const UOp *u);
/// bufUop, remembering the answer for every state on the AFTER chains it
/// walks: a buffer assigned m times has a chain of m AFTERs, and asking each
/// of its states afresh would cost O(m) per state.
class BufUopCache {
public:
  const UOp *operator()(const UOp *u);

private:
  std::unordered_map<const UOp *, const UOp *> memo_;
  std::vector<const UOp *> path_;
};
/// tinygrad's UOp.is_bound_var: AFTER(var BUFFER, STORE(var, CONST)).
bool isBoundVar(const UOp *u);

/// The linearizer's `_unwrap_src`: follows src[0] until an AFTER, BUFFER,
/// PARAM, MSELECT or MSTACK (or a node without sources).
const UOp *unwrapSrc(const UOp *u);
/// The linearizer's `_states`: the buffer states (AFTER, BUFFER or PARAM) a
/// kernel argument stands for; MSELECT/MSTACK expand to their sources' states.
Result<std::vector<const UOp *>> bufferStates(const UOp *arg);

/// A short name for diagnostics and analysis output: "PARAM slot=2",
/// "BUFFER slot=7", "AFTER(PARAM slot=0)", or the op name.
std::string storageName(const UOp *u);

} // namespace tgc::sched
