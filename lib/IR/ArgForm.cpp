//===- ArgForm.cpp - the arg forms each op can take -----------------------===//
#include "IR/ArgForm.h"

#include <algorithm>
#include <string_view>

namespace tgc {
namespace {

using K = Value::Kind;
using enum Op;

constexpr uint32_t bit(K k) { return uint32_t(1) << unsigned(k); }
constexpr uint32_t kNull = bit(K::None);
constexpr uint32_t kInt = bit(K::Int) | bit(K::UInt) | bit(K::BigInt);

/// The record classes tgc knows: the args of PARAM/BUFFER, CALL/FUNCTION,
/// SINK, PROGRAM and STAGE, and the records tinygrad keeps in their fields
/// (KernelInfo's Opt and Estimates, ProgramInfo's Target), which tgc carries
/// along unread.
constexpr std::string_view kKnownClasses[] = {"ParamArg", "CallInfo", "KernelInfo", "ProgramInfo",
                                              "BufferizeOpts", "Opt", "Estimates", "Target"};

/// The arg forms of the ops whose args tinygrad fixes (tinygrad's uop/spec.py
/// and the format's op reference); an op not listed takes any form. null, no
/// arg at all, reads on every op: that an op needs one is a verifier rule
/// (param-arg, cast-arg, ...), and hand-written graphs leave it out.
struct OpForms {
  OpSet ops;
  uint32_t kinds;        ///< Value kinds the arg may have
  std::string_view cls;  ///< with an object among `kinds`: its class
  std::string_view what; ///< the forms, as messages name them
};

constexpr OpSet kNullArg = group::ALU | OpSet{RESHAPE, EXPAND, PAD, SHRINK, STACK, INDEX, STORE, END, AFTER,
                                              TUPLE, DETACH, CONTIGUOUS_BACKWARD};

const OpForms kForms[] = {
    {kNullArg, kNull, "", "null"},
    {{CONST}, bit(K::Bool) | kInt | bit(K::Float) | bit(K::Invalid), "", "a bool, an int, a float or Invalid"},
    {{CAST, BITCAST}, bit(K::DType), "", "a dtype"},
    {{PERMUTE, FLIP, RANGE, REDUCE}, bit(K::Tuple) | bit(K::List), "", "a tuple"},
    {{PARAM, BUFFER}, bit(K::Obj), "ParamArg", "a ParamArg"},
    {{CALL, FUNCTION}, bit(K::Obj), "CallInfo", "a CallInfo"},
    {{SINK}, bit(K::Obj), "KernelInfo", "null or a KernelInfo"},
    {{PROGRAM}, bit(K::Obj), "ProgramInfo", "null or a ProgramInfo"},
    {{STAGE}, bit(K::Obj), "BufferizeOpts", "a BufferizeOpts"},
    {{GETTUPLE, MSELECT}, kInt, "", "an int"},
    {{COPY}, bit(K::Str) | bit(K::Tuple), "", "a device (a string or a tuple of strings)"},
    {{SPECIAL, CUSTOM_FUNCTION, SOURCE, REWRITE_ERROR}, bit(K::Str), "", "a string"},
    {{BINARY}, bit(K::Bytes), "", "bytes"},
};

/// The form of `v` as messages name it.
std::string formName(const Value &v) {
  switch (v.kind()) {
  case K::None: return "null";
  case K::Bool: return "a bool";
  case K::Int:
  case K::UInt:
  case K::BigInt: return "an int";
  case K::Float: return "a float";
  case K::Str: return "a string";
  case K::Tuple: return "a tuple";
  case K::List: return "a list";
  case K::Set: return "a set";
  case K::Dict: return "a dict";
  case K::Enum: return "an enum (" + v.cls() + ")";
  case K::DType: return "a dtype";
  case K::UOp: return "a node reference";
  case K::Obj: return "an object of class " + v.cls();
  case K::Bytes: return "bytes";
  case K::Invalid: return "Invalid";
  case K::Callable: return "a callable";
  case K::Repr: return "repr(" + v.cls() + ", ...)";
  }
  return "an unknown form";
}

/// Why no op can use `v` itself ("" = some op can).
std::string unusableForm(const Value &v) {
  if (v.kind() == K::Repr)
    return formName(v) + ", the exporter's fallback for a value the graph format cannot encode";
  if (v.kind() == K::Obj &&
      std::find(std::begin(kKnownClasses), std::end(kKnownClasses), v.cls()) == std::end(kKnownClasses))
    return formName(v) + ", a record tgc does not know";
  return "";
}

/// Why no op can use a value inside `v`, for the first such value.
std::string unusableInside(const Value &v) {
  for (const Value &item : v.items()) {
    if (std::string why = unusableForm(item); !why.empty()) return why;
    if (std::string why = unusableInside(item); !why.empty()) return why;
  }
  return "";
}

} // namespace

std::string argFormError(Op op, const Value &arg) {
  if (std::string why = unusableForm(arg); !why.empty()) return "arg is " + why;
  if (std::string why = unusableInside(arg); !why.empty()) return "arg holds " + why;
  if (arg.isNone()) return "";
  for (const OpForms &f : kForms) {
    if (!f.ops.contains(op)) continue;
    if ((f.kinds & bit(arg.kind())) && (arg.kind() != K::Obj || arg.cls() == f.cls)) return "";
    return "arg is " + formName(arg) + ", but " + std::string(opName(op)) + " takes " + std::string(f.what);
  }
  return "";
}

} // namespace tgc
