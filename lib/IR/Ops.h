//===- Ops.h - tinygrad's op enum and op groups -----------------*- C++ -*-===//
//
// Every op of tinygrad's `Ops` enum, spelled and ordered as tinygrad spells
// them (the numbering itself carries no meaning), and the `GroupOp` sets that
// patterns and passes test membership in.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tgc {

#define TGC_FOR_EACH_OP(X)                                                     \
  X(SPECIAL) X(BUFFER)                                                         \
  X(NOOP) X(REWRITE_ERROR) X(PARAM) X(FUNCTION) X(CALL) X(PROGRAM) X(LINEAR)   \
  X(SOURCE) X(BINARY) X(SINK) X(AFTER) X(GROUP) X(STACK) X(TUPLE) X(GETTUPLE)  \
  X(GETADDR)                                                                   \
  X(INDEX) X(SHRINK) X(LOAD) X(STORE)                                          \
  X(WMMA)                                                                      \
  X(CAST) X(BITCAST) X(EXP2) X(LOG2) X(SIN) X(SQRT) X(RECIPROCAL) X(NEG)       \
  X(TRUNC)                                                                     \
  X(ADD) X(MUL) X(SHL) X(SHR) X(CDIV) X(MAX) X(CMOD) X(CMPLT) X(CMPNE)         \
  X(CMPEQ) X(XOR) X(OR) X(AND) X(THREEFRY) X(SUB) X(FDIV) X(POW) X(FLOORDIV)   \
  X(FLOORMOD)                                                                  \
  X(WHERE) X(MULACC)                                                           \
  X(BARRIER) X(RANGE) X(IF) X(END) X(ENDIF) X(WAIT) X(CONST) X(CUSTOM)         \
  X(CUSTOMI) X(INS)                                                            \
  X(CONTIGUOUS) X(CONTIGUOUS_BACKWARD) X(DETACH) X(STAGE) X(COPY) X(MSELECT)   \
  X(MSTACK) X(CUSTOM_FUNCTION) X(RESHAPE) X(PERMUTE) X(EXPAND) X(PAD) X(FLIP)  \
  X(UNSHARD) X(REDUCE) X(ALLREDUCE)                                            \
  X(PYLITERAL)

enum class Op : uint8_t {
#define TGC_OP_ENUM(name) name,
  TGC_FOR_EACH_OP(TGC_OP_ENUM)
#undef TGC_OP_ENUM
};

inline constexpr unsigned kNumOps = 0
#define TGC_OP_COUNT(name) +1
    TGC_FOR_EACH_OP(TGC_OP_COUNT)
#undef TGC_OP_COUNT
    ;

/// tinygrad's spelling of the op ("ADD", "BUFFER", ...).
std::string_view opName(Op op);
/// The op spelled `name`, or nullopt for a name tinygrad does not have.
std::optional<Op> opFromName(std::string_view name);

/// A set of ops as a bitmask: cheap to copy, test and combine.
class OpSet {
public:
  constexpr OpSet() = default;
  constexpr OpSet(std::initializer_list<Op> ops) {
    for (Op op : ops) insert(op);
  }
  constexpr void insert(Op op) { bits[idx(op) / 64] |= bit(op); }
  constexpr bool contains(Op op) const { return bits[idx(op) / 64] & bit(op); }
  constexpr bool empty() const { return !bits[0] && !bits[1]; }
  constexpr OpSet operator|(OpSet o) const {
    OpSet r;
    r.bits[0] = bits[0] | o.bits[0];
    r.bits[1] = bits[1] | o.bits[1];
    return r;
  }
  constexpr bool operator==(const OpSet &) const = default;
  /// Calls fn(op) for every member, in enum order (visiting the set bits
  /// only: rule tables are built from many small sets).
  template <typename Fn> void forEach(Fn fn) const {
    for (unsigned w = 0; w < 2; ++w)
      for (uint64_t b = bits[w]; b; b &= b - 1) fn(Op(w * 64 + unsigned(std::countr_zero(b))));
  }
  constexpr unsigned size() const { return unsigned(std::popcount(bits[0]) + std::popcount(bits[1])); }

private:
  static constexpr unsigned idx(Op op) { return static_cast<unsigned>(op); }
  static constexpr uint64_t bit(Op op) { return uint64_t(1) << (idx(op) % 64); }
  uint64_t bits[2] = {0, 0};
};
static_assert(kNumOps <= 128, "OpSet holds at most 128 ops");

/// tinygrad's GroupOp sets.
namespace group {
using enum Op;
inline constexpr OpSet Unary{EXP2, LOG2, SIN, SQRT, RECIPROCAL, NEG, TRUNC};
inline constexpr OpSet Binary{ADD, MUL, CDIV, MAX, CMOD, CMPLT, CMPNE, CMPEQ, XOR, SHL, SHR,
                              OR, AND, THREEFRY, SUB, FDIV, POW, FLOORDIV, FLOORMOD};
inline constexpr OpSet Ternary{WHERE, MULACC};
inline constexpr OpSet ALU = Unary | Binary | Ternary;
inline constexpr OpSet Broadcastable = Binary | Ternary;
inline constexpr OpSet Elementwise = ALU | OpSet{CAST, BITCAST};
inline constexpr OpSet Defines{PARAM, BUFFER};
inline constexpr OpSet Irreducible{CONST, SPECIAL, RANGE, PARAM, GETADDR};
inline constexpr OpSet Movement{RESHAPE, EXPAND, PERMUTE, PAD, SHRINK, FLIP};
inline constexpr OpSet Commutative{ADD, MUL, MAX, CMPNE, CMPEQ, XOR, AND, OR};
inline constexpr OpSet Associative{ADD, MUL, AND, OR, MAX};
inline constexpr OpSet Idempotent{OR, AND, MAX};
inline constexpr OpSet Reduce{ADD, MUL, MAX};
inline constexpr OpSet Comparison{CMPLT, CMPNE, CMPEQ};
/// Ops whose result is a transcendental float (dtype = least upper float).
inline constexpr OpSet FloatUnary{SIN, LOG2, EXP2, SQRT, RECIPROCAL};
/// Bodies a CALL may invoke without entering them (opaque to graph_rewrite).
inline constexpr OpSet CallBodies{SINK, LINEAR, PROGRAM, COPY, CUSTOM_FUNCTION};
} // namespace group

} // namespace tgc
