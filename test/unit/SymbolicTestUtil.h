//===- SymbolicTestUtil.h - expressions for the simplifier tests -*- C++ -*-===//
//
// Test support: builds index expressions from a small Python-syntax language
// (the same text tinygrad evaluates to produce the expected results), prints
// them in a compact fully parenthesized form, and evaluates them with
// Python's integer semantics so that a simplification can be checked by brute
// force over its variables' ranges.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOpBuilder.h"

#include <map>
#include <optional>
#include <string>
#include <vector>
#include <cctype>
#include <functional>
#include <stdexcept>
#include <unordered_map>

#include "IR/UOp.h"

namespace tgc::test {

using i128 = __int128;

inline const UOp *variable(Context &c, const std::string &name, int64_t lo, int64_t hi, DType dt = dtypes::WeakInt) {
  Value arg = Value::object(
      "ParamArg", {"slot", "dtype", "vmin_vmax", "multiple_of", "name", "addrspace", "axis", "device", "volatile"},
      {Value::integer(-1), Value::dtype(dt), Value::tuple({Value::integer(lo), Value::integer(hi)}), Value::integer(1),
       Value::string(name), Value::enumMember("AddrSpace", "ALU"), Value(), Value(), Value::boolean(false)});
  return c.get(Op::BUFFER, dt, {c.get(Op::STACK, dtypes::Void, {})}, arg);
}

inline const UOp *floatVariable(Context &c, const std::string &name, double lo, double hi, DType dt) {
  Value arg = Value::object(
      "ParamArg", {"slot", "dtype", "vmin_vmax", "multiple_of", "name", "addrspace", "axis", "device", "volatile"},
      {Value::integer(-1), Value::dtype(dt), Value::tuple({Value::floating(lo), Value::floating(hi)}), Value::integer(1),
       Value::string(name), Value::enumMember("AddrSpace", "ALU"), Value(), Value(), Value::boolean(false)});
  return c.get(Op::BUFFER, dt, {c.get(Op::STACK, dtypes::Void, {})}, arg);
}

inline const UOp *range(Context &c, int64_t end, int64_t axis) {
  return c.get(Op::RANGE, dtypes::WeakInt, {c.constInt(end)},
               Value::tuple({Value::integer(axis), Value::enumMember("AxisType", "WEAK")}));
}

inline std::map<std::string, const UOp *> makeVars(Context &c, const std::string &spec) {
  std::map<std::string, const UOp *> out;
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t end = spec.find(' ', pos);
    std::string item = spec.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? spec.size() : end + 1;
    if (item.empty()) continue;
    size_t colon = item.find(':');
    std::string name = item.substr(0, colon), rng = item.substr(colon + 1);
    DType dt = dtypes::WeakInt;
    if (size_t at = rng.find('@'); at != std::string::npos) {
      dt = dtypes::fromName(rng.substr(at + 1));
      rng = rng.substr(0, at);
    }
    if (size_t dots = rng.find(".."); dots != std::string::npos && dt.isFloat())
      out[name] = floatVariable(c, name, std::stod(rng.substr(0, dots)), std::stod(rng.substr(dots + 2)), dt);
    else if (dots != std::string::npos)
      out[name] = variable(c, name, std::stoll(rng.substr(0, dots)), std::stoll(rng.substr(dots + 2)), dt);
    else
      out[name] = range(c, std::stoll(rng), std::stoll(name.substr(1)));
  }
  return out;
}

inline i128 floorDiv128(i128 x, i128 y) {
  if (y == 0) return 0;
  i128 q = x / y;
  if (x % y != 0 && ((x < 0) != (y < 0))) --q;
  return q;
}

namespace detail {
// A Python value in an expression: an int, a bool, or a UOp.
struct PV {
  enum Kind { Int, Bool, U, Float } kind = Int;
  int64_t i = 0;
  UOpRef u;
  double f = 0;
  static PV num(int64_t v) { return {Int, v, nullptr, 0}; }
  static PV uop(UOpRef v) { return {U, 0, v, 0}; }
  static PV fl(double v) { return {Float, 0, nullptr, v}; }
  Value py() const { return kind == Bool ? Value::boolean(i) : kind == Float ? Value::floating(f) : Value::integer(i); }
};

class Parser {
public:
  Parser(Context &c, const std::map<std::string, const UOp *> &vars, const std::string &s) : c_(c), vars_(vars), s_(s) {}
  const UOp *parse() {
    PV v = comparison();
    skip();
    if (p_ != s_.size()) throw std::runtime_error("trailing input at " + s_.substr(p_));
    return asUOp(v);
  }

private:
  UOpRef asUOp(const PV &v) {
    if (v.kind == PV::U) return v.u;
    return makeConst(c_, v.py());
  }
  void skip() {
    while (p_ < s_.size() && s_[p_] == ' ') ++p_;
  }
  bool eat(const std::string &tok) {
    skip();
    if (s_.compare(p_, tok.size(), tok) != 0) return false;
    // do not split "//" into "/" or "<<" into "<"
    if (tok == "<" && (s_.compare(p_, 2, "<<") == 0 || s_.compare(p_, 2, "<=") == 0)) return false;
    if (tok == ">" && (s_.compare(p_, 2, ">>") == 0 || s_.compare(p_, 2, ">=") == 0)) return false;
    p_ += tok.size();
    return true;
  }
  // Python's binary operator on two values.
  PV bin(const std::string &op, PV a, PV b) {
    if (a.kind == PV::Float || b.kind == PV::Float) {
      if (a.kind != PV::U && b.kind != PV::U) {
        double x = a.kind == PV::Float ? a.f : double(a.i), y = b.kind == PV::Float ? b.f : double(b.i);
        if (op == "+") return PV::fl(x + y);
        if (op == "-") return PV::fl(x - y);
        if (op == "*") return PV::fl(x * y);
        if (op == "/") return PV::fl(x / y);
        throw std::runtime_error("float op " + op + " not supported");
      }
    } else if (a.kind != PV::U && b.kind != PV::U) {
      i128 x = a.i, y = b.i;
      if (op == "+") return PV::num(int64_t(x + y));
      if (op == "-") return PV::num(int64_t(x - y));
      if (op == "*") return PV::num(int64_t(x * y));
      if (op == "//") return PV::num(int64_t(floorDiv128(x, y)));
      if (op == "<") return {PV::Bool, x < y, nullptr};
      if (op == ">") return {PV::Bool, x > y, nullptr};
      if (op == "<=") return {PV::Bool, x <= y, nullptr};
      if (op == ">=") return {PV::Bool, x >= y, nullptr};
      bool bools = a.kind == PV::Bool && b.kind == PV::Bool; // Python: bool & bool is a bool
      if (op == "&") return {bools ? PV::Bool : PV::Int, int64_t(x & y), nullptr};
      if (op == "|") return {bools ? PV::Bool : PV::Int, int64_t(x | y), nullptr};
      if (op == "!=") return {PV::Bool, x != y, nullptr};
      if (op == "%") return PV::num(int64_t(x - floorDiv128(x, y) * y));
      throw std::runtime_error("int op " + op + " not supported");
    }
    auto pyConst = [&](const PV &v) { return v.py(); };
    // an int operand becomes a const on its own side, exactly as Python's reflected operators do
    UOpRef ref = a.kind == PV::U ? a.u : b.u;
    UOpRef x = a.kind == PV::U ? a.u : ref.ufix(pyConst(a));
    UOpRef y = b.kind == PV::U ? b.u : ref.ufix(pyConst(b));
    if (op == "+") return PV::uop(x + y);
    if (op == "-") return PV::uop(x - y);
    if (op == "*") return PV::uop(x * y);
    if (op == "//") return PV::uop(x / y);
    if (op == "%") return PV::uop(x % y);
    if (op == "/") { // Python's true division on UOps
      auto [p, q] = broadcasted(x, y);
      if (p.dtype().isInt() || p.dtype().isBool()) p = p.cast(dtypes::defaultFloat());
      return PV::uop(p.alu(Op::MUL, {q.reciprocal()}));
    }
    if (op == "<") return PV::uop(x < y);
    if (op == ">") return PV::uop(x > y);
    if (op == "<=") return PV::uop(x <= y);
    if (op == ">=") return PV::uop(x >= y);
    if (op == "!=") return PV::uop(x.ne(y));
    if (op == "&") return PV::uop(x & y);
    if (op == "|") return PV::uop(x | y);
    if (op == "^") return PV::uop(x ^ y);
    if (op == "<<") return PV::uop(x << y);
    if (op == ">>") return PV::uop(x >> y);
    throw std::runtime_error("unknown operator " + op);
  }
  PV comparison() {
    PV a = bitor_();
    for (const char *op : {"!=", "<=", ">=", "<", ">"})
      if (eat(op)) return bin(op, a, bitor_());
    return a;
  }
  PV bitor_() {
    PV a = bitxor();
    while (eat("|")) a = bin("|", a, bitxor());
    return a;
  }
  PV bitxor() {
    PV a = bitand_();
    while (eat("^")) a = bin("^", a, bitand_());
    return a;
  }
  PV bitand_() {
    PV a = shift();
    while (eat("&")) a = bin("&", a, shift());
    return a;
  }
  PV shift() {
    PV a = arith();
    while (true) {
      if (eat("<<")) a = bin("<<", a, arith());
      else if (eat(">>")) a = bin(">>", a, arith());
      else return a;
    }
  }
  PV arith() {
    PV a = term();
    while (true) {
      if (eat("+")) a = bin("+", a, term());
      else if (eat("-")) a = bin("-", a, term());
      else return a;
    }
  }
  PV term() {
    PV a = unary();
    while (true) {
      if (eat("*")) a = bin("*", a, unary());
      else if (eat("//")) a = bin("//", a, unary());
      else if (eat("/")) a = bin("/", a, unary());
      else if (eat("%")) a = bin("%", a, unary());
      else return a;
    }
  }
  PV unary() {
    if (eat("-")) {
      PV v = unary();
      return v.kind == PV::U ? PV::uop(-v.u) : v.kind == PV::Float ? PV::fl(-v.f) : PV::num(-v.i);
    }
    return atom();
  }
  std::vector<PV> args() {
    std::vector<PV> out;
    if (!eat("(")) throw std::runtime_error("expected (");
    do out.push_back(comparison());
    while (eat(","));
    if (!eat(")")) throw std::runtime_error("expected )");
    return out;
  }
  PV atom() {
    skip();
    if (eat("(")) {
      PV v = comparison();
      if (!eat(")")) throw std::runtime_error("expected )");
      return v;
    }
    if (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) {
      size_t end = p_;
      while (end < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[end])) || s_[end] == '.')) ++end;
      std::string num = s_.substr(p_, end - p_);
      p_ = end;
      if (num.find('.') != std::string::npos) return PV::fl(std::stod(num));
      return PV::num(std::stoll(num));
    }
    size_t start = p_;
    while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_')) ++p_;
    std::string name = s_.substr(start, p_ - start);
    if (name.empty()) throw std::runtime_error("unexpected input at " + s_.substr(start));
    if (name == "True" || name == "False") return {PV::Bool, name == "True", nullptr, 0};
    if (name == "Invalid") return PV::uop(invalidConst(c_));
    if (auto it = vars_.find(name); it != vars_.end()) return PV::uop(it->second);
    std::vector<PV> a = args();
    auto U = [&](size_t i) { return asUOp(a.at(i)); };
    auto second = [&](UOpRef ref, size_t i) {
      return a.at(i).kind == PV::U ? a[i].u : ref.ufix(a[i].py());
    };
    if (name == "where") {
      UOpRef ref = a.at(1).kind == PV::U ? a[1].u : a.at(2).kind == PV::U ? a[2].u : U(0);
      return PV::uop(U(0).where(second(ref, 1), second(ref, 2)));
    }
    if (name == "maximum") return PV::uop(U(0).maximum(second(U(0), 1)));
    if (name == "ne") return PV::uop(U(0).ne(second(U(0), 1)));
    if (name == "lnot") return PV::uop(U(0).logicalNot());
    if (name == "i32") return PV::uop(U(0).cast(dtypes::Int32));
    if (name == "i64") return PV::uop(U(0).cast(dtypes::Int64));
    static const std::map<std::string, DType> casts = {{"i8", dtypes::Int8},     {"u8", dtypes::UInt8},
                                                       {"u32", dtypes::UInt32},  {"f32", dtypes::Float32},
                                                       {"f64", dtypes::Float64}, {"f16", dtypes::Float16},
                                                       {"b", dtypes::Bool}};
    if (auto it = casts.find(name); it != casts.end()) return PV::uop(U(0).cast(it->second));
    static const std::map<std::string, DType> bitcasts = {
        {"bc_u32", dtypes::UInt32}, {"bc_i32", dtypes::Int32}, {"bc_f32", dtypes::Float32}, {"bc_u16", dtypes::UInt16}, {"bc_f16", dtypes::Float16}};
    if (auto it = bitcasts.find(name); it != bitcasts.end()) return PV::uop(U(0).bitcast(it->second));
    if (name == "sqrt") return PV::uop(U(0).sqrt());
    if (name == "recip") return PV::uop(U(0).reciprocal());
    if (name == "exp2") return PV::uop(U(0).exp2());
    if (name == "log2") return PV::uop(U(0).alu(Op::LOG2));
    if (name == "sin") return PV::uop(U(0).alu(Op::SIN));
    if (name == "trunc") return PV::uop(U(0).trunc());
    if (name == "pw") return PV::uop(U(0).pow(second(U(0), 1)));
    throw std::runtime_error("unknown function " + name);
  }

  Context &c_;
  const std::map<std::string, const UOp *> &vars_;
  std::string s_;
  size_t p_ = 0;
};
} // namespace detail

inline const UOp *parseExpr(Context &c, const std::map<std::string, const UOp *> &vars, const std::string &text) {
  return detail::Parser(c, vars, text).parse();
}

inline std::string print(const UOp *u) {
  static const std::unordered_map<Op, std::string> sym = {
      {Op::ADD, "+"}, {Op::MUL, "*"}, {Op::FLOORDIV, "//"}, {Op::FLOORMOD, "%"}, {Op::CMPLT, "<"}, {Op::CMPNE, "!="},
      {Op::AND, "&"}, {Op::OR, "|"},  {Op::XOR, "^"},       {Op::SHL, "<<"},      {Op::SHR, ">>"}};
  switch (u->op()) {
  case Op::CONST: {
    const Value &v = u->arg();
    std::string s = v.kind() == Value::Kind::Invalid ? "Invalid" : v.toString();
    if (!u->dtype().isWeak() && !u->dtype().isBool()) s += ":" + std::string(u->dtype().name());
    return s;
  }
  case Op::RANGE: return "r" + std::to_string(u->arg()[0].getInt());
  case Op::BUFFER: case Op::PARAM: return u->arg().field("name")->str();
  case Op::MAX: return "max(" + print(u->src(0)) + "," + print(u->src(1)) + ")";
  case Op::WHERE: return "where(" + print(u->src(0)) + "," + print(u->src(1)) + "," + print(u->src(2)) + ")";
  case Op::CAST: return "cast<" + std::string(u->dtype().name()) + ">(" + print(u->src(0)) + ")";
  case Op::BITCAST: return "bitcast<" + std::string(u->dtype().name()) + ">(" + print(u->src(0)) + ")";
  default: break;
  }
  if (auto it = sym.find(u->op()); it != sym.end() && u->numSrc() == 2)
    return "(" + print(u->src(0)) + it->second + print(u->src(1)) + ")";
  std::string s = std::string(opName(u->op())) + "(";
  for (size_t i = 0; i < u->numSrc(); ++i) s += (i ? "," : "") + print(u->src(i));
  return s + ")";
}

inline i128 wrap(i128 v, DType dt) {
  if (dt.isBool()) return v != 0;
  if (!dt.isInt() || dt.isWeak()) return v;
  int bits = dt.bitsize();
  unsigned __int128 mask = ((unsigned __int128)1 << bits) - 1, u = (unsigned __int128)v & mask;
  if (!dt.isUnsigned() && (u >> (bits - 1)) & 1) return i128(u) - i128(mask) - 1;
  return i128(u);
}

/// Thrown when an expression divides by zero: its value is undefined there.
struct DivisionByZero {};

inline std::optional<i128> evaluate(const UOp *root, const std::map<const UOp *, int64_t> &env) {
  std::unordered_map<const UOp *, std::optional<i128>> memo;
  std::function<std::optional<i128>(const UOp *)> ev = [&](const UOp *u) -> std::optional<i128> {
    if (auto it = memo.find(u); it != memo.end()) return it->second;
    std::optional<i128> r;
    if (auto it = env.find(u); it != env.end()) r = it->second;
    else if (u->is(Op::CONST)) {
      const Value &v = u->arg();
      // a CONST holds tinygrad's unwrapped value; it is emitted at its dtype's width
      if (v.isBool()) r = v.getBool();
      else if (v.isInt()) r = wrap(v.getInt(), u->dtype());
      else if (v.kind() != Value::Kind::Invalid) throw std::runtime_error("non-int const " + u->str());
    } else if (u->is(Op::WHERE)) {
      auto c = ev(u->src(0));
      if (c) r = *c ? ev(u->src(1)) : ev(u->src(2));
    } else if (u->is(Op::CAST)) {
      auto x = ev(u->src(0));
      if (x) r = wrap(*x, u->dtype());
    } else if (u->numSrc() == 2) {
      auto x = ev(u->src(0)), y = ev(u->src(1));
      if (x && y) {
        i128 a = *x, b = *y;
        switch (u->op()) {
        case Op::ADD: r = a + b; break;
        case Op::MUL: r = a * b; break;
        case Op::FLOORDIV:
          if (b == 0) throw DivisionByZero{};
          r = floorDiv128(a, b);
          break;
        case Op::FLOORMOD:
          if (b == 0) throw DivisionByZero{};
          r = a - floorDiv128(a, b) * b;
          break;
        case Op::CMPLT: r = a < b; break;
        case Op::CMPNE: r = a != b; break;
        case Op::CMPEQ: r = a == b; break;
        case Op::MAX: r = a > b ? a : b; break;
        case Op::AND: r = a & b; break;
        case Op::OR: r = a | b; break;
        case Op::XOR: r = a ^ b; break;
        case Op::SHL: r = a << int(b); break;
        case Op::SHR: r = a >> int(b); break;
        default: throw std::runtime_error("cannot evaluate " + u->str());
        }
        if (r) r = wrap(*r, u->dtype());
      }
    } else {
      throw std::runtime_error("cannot evaluate " + u->str());
    }
    memo[u] = r;
    return r;
  };
  return ev(root);
}

inline std::vector<std::pair<const UOp *, std::pair<int64_t, int64_t>>> leaves(std::vector<const UOp *> roots) {
  std::vector<std::pair<const UOp *, std::pair<int64_t, int64_t>>> out;
  for (const UOp *u : toposort(roots)) {
    if (u->is(Op::RANGE)) out.push_back({u, {0, u->src(0)->arg().getInt() - 1}});
    if (u->is(Op::BUFFER) || u->is(Op::PARAM)) {
      const Value &mm = *u->arg().field("vmin_vmax");
      out.push_back({u, {mm[0].getInt(), mm[1].getInt()}});
    }
  }
  return out;
}

inline std::string str128(i128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  std::string s;
  for (unsigned __int128 u = neg ? (unsigned __int128)(-v) : (unsigned __int128)v; u; u /= 10) s.insert(s.begin(), char('0' + int(u % 10)));
  return neg ? "-" + s : s;
}

/// With `refines`, an Invalid value of `a` may become anything in `b` (a gate
/// may be dropped), but every valid value of `a` must stay.
inline std::string bruteForceDiff(const UOp *a, const UOp *b, bool refines = false) {
  auto vars = leaves({a, b});
  std::map<const UOp *, int64_t> env;
  for (auto &[v, r] : vars) env[v] = r.first;
  while (true) {
    std::optional<i128> x;
    bool defined = true;
    try {
      x = evaluate(a, env);
    } catch (DivisionByZero) {
      defined = false; // the input has no value here: any result is right
    }
    auto y = defined ? evaluate(b, env) : std::nullopt;
    if (defined && x != y && !(refines && !x)) {
      std::string s;
      for (auto &[v, val] : env) s += print(v) + "=" + std::to_string(val) + " ";
      return s + ": " + (x ? str128(*x) : "Invalid") + " != " + (y ? str128(*y) : "Invalid");
    }
    size_t i = 0;
    for (; i < vars.size(); ++i) {
      auto &[v, r] = vars[i];
      if (env[v] < r.second) {
        ++env[v];
        break;
      }
      env[v] = r.first;
    }
    if (i == vars.size()) return "";
  }
}

} // namespace tgc::test
