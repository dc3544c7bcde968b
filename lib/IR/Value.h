//===- Value.h - the typed value of a UOp's arg and tag ---------*- C++ -*-===//
//
// One representation for every arg form of the graph format (format §3): the
// Python values tinygrad stores in `arg` and `tag`. Values are immutable and
// cheap to copy (composites share their payload); equality and hashing follow
// tinygrad's: a float compares by value except that NaN == NaN and -0.0 != 0.0
// (ConstFloat hashes the bit pattern), and ints, floats and bools never compare
// equal to one another.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/DType.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tgc {

class UOp;

class Value {
public:
  enum class Kind : uint8_t {
    None,
    Bool,
    Int,      ///< fits int64
    UInt,     ///< in (INT64_MAX, UINT64_MAX]
    BigInt,   ///< decimal string outside 64 bits
    Float,    ///< binary64
    Str,
    Tuple,
    List,
    Set,      ///< elements kept in the order they were given (the format sorts them)
    Dict,     ///< items() are [key, value] pairs
    Enum,     ///< cls() + str(): e.g. Ops.ADD, AxisType.REDUCE, AddrSpace.GLOBAL
    DType,
    UOp,      ///< a graph node held in an arg
    Obj,      ///< a record: cls(), fieldNames(), items() in declaration order
    Bytes,
    Invalid,  ///< tinygrad's Invalid sentinel
    Callable, ///< str() is the qualified name
    Repr,     ///< exporter fallback: cls() + str()
  };

  Value() = default;
  static Value none() { return Value(); }
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value uinteger(uint64_t u); ///< normalizes to Int when it fits
  static Value bigInteger(std::string decimal);
  static Value floating(double f);
  static Value string(std::string s);
  static Value tuple(std::vector<Value> items);
  static Value list(std::vector<Value> items);
  static Value set(std::vector<Value> items);
  static Value dict(std::vector<std::pair<Value, Value>> items);
  static Value enumMember(std::string cls, std::string member);
  static Value dtype(tgc::DType dt);
  static Value uop(const tgc::UOp *u);
  static Value object(std::string cls, std::vector<std::string> fieldNames, std::vector<Value> fields);
  static Value bytes(std::string raw);
  static Value invalid();
  static Value callable(std::string qualname);
  static Value repr(std::string cls, std::string text);

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isInt() const { return kind_ == Kind::Int; }
  bool isFloat() const { return kind_ == Kind::Float; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isTuple() const { return kind_ == Kind::Tuple; }
  bool isSequence() const { return kind_ == Kind::Tuple || kind_ == Kind::List; }
  bool isEnum(std::string_view cls) const { return kind_ == Kind::Enum && this->cls() == cls; }
  bool isObj(std::string_view cls) const { return kind_ == Kind::Obj && this->cls() == cls; }

  bool getBool() const { return b_; }
  int64_t getInt() const { return i_; }
  uint64_t getUInt() const { return u_; }
  double getFloat() const { return f_; }
  tgc::DType getDType() const { return dt_; }
  const tgc::UOp *getUOp() const { return uop_; }
  /// Str, BigInt, Bytes (raw), Callable, Enum member, Repr text.
  const std::string &str() const;
  /// Enum, Obj, Repr class name.
  const std::string &cls() const;
  /// Tuple/List/Set elements, Obj fields, Dict as flattened k0,v0,k1,v1,...
  const std::vector<Value> &items() const;
  const std::vector<std::string> &fieldNames() const;
  size_t size() const { return items().size(); }
  const Value &operator[](size_t i) const { return items()[i]; }
  /// The Obj field named `name`, or nullptr.
  const Value *field(std::string_view name) const;

  /// Python truthiness is not needed; this asks "is it an int (Int/UInt/BigInt)?"
  bool isIntegral() const { return kind_ == Kind::Int || kind_ == Kind::UInt || kind_ == Kind::BigInt; }

  bool operator==(const Value &o) const;
  bool operator!=(const Value &o) const { return !(*this == o); }
  size_t hash() const;

  /// Python-like rendering used by the text form and diagnostics:
  /// None, True, 3, 1.5, inf, "s", (1, 2), Ops.ADD, dtypes.float32, %12,
  /// ParamArg(slot=0, ...), Invalid. UOp references print through `uopName`.
  std::string toString(const std::function<std::string(const tgc::UOp *)> *uopName = nullptr) const;

  /// Calls fn on every UOp referenced inside this value (recursively).
  template <typename Fn> void forEachUOp(Fn &&fn) const {
    if (kind_ == Kind::UOp) fn(uop_);
    else if (payload_)
      for (const Value &v : payload_->items) v.forEachUOp(fn);
  }
  bool containsUOp() const;
  /// A copy with every UOp reference mapped through fn.
  template <typename Fn> Value mapUOps(Fn &&fn) const {
    if (kind_ == Kind::UOp) return Value::uop(fn(uop_));
    if (!payload_ || !containsUOp()) return *this;
    Value r = *this;
    auto p = std::make_shared<Payload>(*payload_);
    for (Value &v : p->items) v = v.mapUOps(fn);
    p->hash = payloadHash(*p);
    r.payload_ = std::move(p);
    return r;
  }

private:
  struct Payload {
    std::string cls, text;
    std::vector<Value> items;
    std::vector<std::string> names;
    size_t hash = 0; ///< of the fields above, set when they are (hash() is asked for per node interned)
  };
  static size_t payloadHash(const Payload &p);
  static Value withPayload(Kind k, Payload p);

  Kind kind_ = Kind::None;
  union {
    bool b_;
    int64_t i_ = 0;
    uint64_t u_;
    double f_;
    const tgc::UOp *uop_;
  };
  tgc::DType dt_;
  std::shared_ptr<const Payload> payload_;
};

} // namespace tgc

namespace tgc {
/// Python's repr of a float: shortest round-trip digits, "inf", "-inf", "nan".
std::string pyFloatRepr(double f);
/// A double-quoted, escaped string literal (\" \\ \n \t \r \xHH).
std::string quoteString(std::string_view s);
} // namespace tgc
