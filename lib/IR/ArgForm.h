//===- ArgForm.h - the arg forms each op can take ---------------*- C++ -*-===//
//
// The readers' check that a node's arg is something its op can use, so that
// an arg tgc does not know is an error at the node that holds it, not a
// value no pass expects. Refused anywhere in an arg: the exporter's `repr`
// fallback (a value it could not encode) and record classes tgc does not
// know. Refused at the top level: a kind the op never takes (an object on
// ADD, which takes null). Ops tgc knows only by name accept any other form,
// as do rare forms tinygrad can produce (lists, dicts, bytes, callables).
// null (no arg) always reads; that an op needs an arg, and what the values
// mean, is the verifier's and the passes' business.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Ops.h"
#include "IR/Value.h"

#include <string>

namespace tgc {

/// Why `arg` cannot be the arg of an `op` node, as "arg is ..." or "arg
/// holds ..." naming the form; "" when it can.
std::string argFormError(Op op, const Value &arg);

} // namespace tgc
