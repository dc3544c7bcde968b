//===- Value.cpp ----------------------------------------------------------===//
#include "IR/Value.h"

#include "IR/UOp.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace tgc {

static const std::string kEmptyString;
static const std::vector<Value> kNoItems;
static const std::vector<std::string> kNoNames;

Value Value::withPayload(Kind k, Payload p) {
  Value v;
  v.kind_ = k;
  p.hash = payloadHash(p);
  v.payload_ = std::make_shared<const Payload>(std::move(p));
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::Bool;
  v.i_ = 0;
  v.b_ = b;
  return v;
}
Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = Kind::Int;
  v.i_ = i;
  return v;
}
Value Value::uinteger(uint64_t u) {
  if (u <= uint64_t(INT64_MAX)) return integer(int64_t(u));
  Value v;
  v.kind_ = Kind::UInt;
  v.u_ = u;
  return v;
}
Value Value::bigInteger(std::string decimal) { return withPayload(Kind::BigInt, {{}, std::move(decimal), {}, {}}); }
Value Value::floating(double f) {
  Value v;
  v.kind_ = Kind::Float;
  v.f_ = f;
  return v;
}
Value Value::string(std::string s) { return withPayload(Kind::Str, {{}, std::move(s), {}, {}}); }
Value Value::tuple(std::vector<Value> items) { return withPayload(Kind::Tuple, {{}, {}, std::move(items), {}}); }
Value Value::list(std::vector<Value> items) { return withPayload(Kind::List, {{}, {}, std::move(items), {}}); }
Value Value::set(std::vector<Value> items) { return withPayload(Kind::Set, {{}, {}, std::move(items), {}}); }
Value Value::dict(std::vector<std::pair<Value, Value>> kv) {
  std::vector<Value> flat;
  for (auto &[k, v] : kv) {
    flat.push_back(std::move(k));
    flat.push_back(std::move(v));
  }
  return withPayload(Kind::Dict, {{}, {}, std::move(flat), {}});
}
Value Value::enumMember(std::string cls, std::string member) {
  return withPayload(Kind::Enum, {std::move(cls), std::move(member), {}, {}});
}
Value Value::dtype(tgc::DType dt) {
  Value v;
  v.kind_ = Kind::DType;
  v.dt_ = dt;
  return v;
}
Value Value::uop(const tgc::UOp *u) {
  Value v;
  v.kind_ = Kind::UOp;
  v.uop_ = u;
  return v;
}
Value Value::object(std::string cls, std::vector<std::string> names, std::vector<Value> fields) {
  return withPayload(Kind::Obj, {std::move(cls), {}, std::move(fields), std::move(names)});
}
Value Value::bytes(std::string raw) { return withPayload(Kind::Bytes, {{}, std::move(raw), {}, {}}); }
Value Value::invalid() {
  Value v;
  v.kind_ = Kind::Invalid;
  return v;
}
Value Value::callable(std::string q) { return withPayload(Kind::Callable, {{}, std::move(q), {}, {}}); }
Value Value::repr(std::string cls, std::string text) {
  return withPayload(Kind::Repr, {std::move(cls), std::move(text), {}, {}});
}

const std::string &Value::str() const {
  return payload_ ? payload_->text : kEmptyString;
}
const std::string &Value::cls() const { return payload_ ? payload_->cls : kEmptyString; }
const std::vector<Value> &Value::items() const { return payload_ ? payload_->items : kNoItems; }
const std::vector<std::string> &Value::fieldNames() const { return payload_ ? payload_->names : kNoNames; }

const Value *Value::field(std::string_view name) const {
  if (kind_ != Kind::Obj) return nullptr;
  const auto &names = fieldNames();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return &payload_->items[i];
  return nullptr;
}

bool Value::containsUOp() const {
  bool found = false;
  forEachUOp([&](const tgc::UOp *) { found = true; });
  return found;
}

bool Value::operator==(const Value &o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
  case Kind::None:
  case Kind::Invalid:
    return true;
  case Kind::Bool:
    return b_ == o.b_;
  case Kind::Int:
    return i_ == o.i_;
  case Kind::UInt:
    return u_ == o.u_;
  case Kind::Float:
    // ConstFloat semantics: NaN equals NaN, -0.0 differs from 0.0.
    if (std::isnan(f_) && std::isnan(o.f_)) return true;
    return std::bit_cast<uint64_t>(f_) == std::bit_cast<uint64_t>(o.f_);
  case Kind::DType:
    return dt_ == o.dt_;
  case Kind::UOp:
    return uop_ == o.uop_;
  default:
    if (payload_ == o.payload_) return true;
    if (payload_->hash != o.payload_->hash) return false;
    return payload_->cls == o.payload_->cls && payload_->text == o.payload_->text &&
           payload_->names == o.payload_->names && payload_->items == o.payload_->items;
  }
}

static size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

size_t Value::hash() const {
  size_t h = size_t(kind_) * 0x100000001b3ULL;
  switch (kind_) {
  case Kind::None:
  case Kind::Invalid:
    return h;
  case Kind::Bool:
    return mix(h, b_);
  case Kind::Int:
    return mix(h, std::hash<int64_t>()(i_));
  case Kind::UInt:
    return mix(h, std::hash<uint64_t>()(u_));
  case Kind::Float:
    return mix(h, std::isnan(f_) ? 0x7ff8ULL : std::bit_cast<uint64_t>(f_));
  case Kind::DType:
    return mix(h, dt_.stableHash());
  case Kind::UOp:
    return mix(h, uop_->hash());
  default:
    return mix(h, payload_->hash);
  }
}

size_t Value::payloadHash(const Payload &p) {
  size_t h = std::hash<std::string>()(p.cls);
  h = mix(h, std::hash<std::string>()(p.text));
  for (const auto &n : p.names) h = mix(h, std::hash<std::string>()(n));
  for (const auto &v : p.items) h = mix(h, v.hash());
  return h;
}

std::string pyFloatRepr(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  // Shortest round-trip digits, then Python's repr layout: fixed notation for
  // decimal exponents in [-4, 16), scientific otherwise.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t e = sci.find('e');
  int exp = std::stoi(sci.substr(e + 1));
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits += c;
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out = "0." + std::string(size_t(-exp - 1), '0') + digits;
    } else if (size_t(exp) + 1 >= digits.size()) {
      out = digits + std::string(size_t(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, size_t(exp) + 1) + "." + digits.substr(size_t(exp) + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += eb;
  }
  return neg ? "-" + out : out;
}

std::string quoteString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    default:
      if (c < 0x20 || c == 0x7f) {
        char b[8];
        std::snprintf(b, sizeof b, "\\x%02x", c);
        out += b;
      } else {
        out += char(c);
      }
    }
  }
  return out + "\"";
}

std::string Value::toString(const std::function<std::string(const tgc::UOp *)> *uopName) const {
  auto join = [&](const std::vector<Value> &items, size_t from = 0, size_t step = 1) {
    std::string s;
    for (size_t i = from; i < items.size(); i += step) {
      if (i != from) s += ", ";
      s += items[i].toString(uopName);
    }
    return s;
  };
  switch (kind_) {
  case Kind::None: return "None";
  case Kind::Bool: return b_ ? "True" : "False";
  case Kind::Int: return std::to_string(i_);
  case Kind::UInt: return std::to_string(u_);
  case Kind::BigInt: return payload_->text;
  case Kind::Float: return pyFloatRepr(f_);
  case Kind::Str: return quoteString(payload_->text);
  case Kind::Tuple: {
    const auto &it = payload_->items;
    return "(" + join(it) + (it.size() == 1 ? ",)" : ")");
  }
  case Kind::List: return "[" + join(payload_->items) + "]";
  case Kind::Set: return "set{" + join(payload_->items) + "}";
  case Kind::Dict: {
    std::string s = "{";
    const auto &it = payload_->items;
    for (size_t i = 0; i + 1 < it.size(); i += 2)
      s += (i ? ", " : "") + it[i].toString(uopName) + ": " + it[i + 1].toString(uopName);
    return s + "}";
  }
  case Kind::Enum: return payload_->cls + "." + payload_->text;
  case Kind::DType: return "dtypes." + std::string(dt_.name());
  case Kind::UOp:
    return uopName ? (*uopName)(uop_) : "%" + std::to_string(uop_->id());
  case Kind::Obj: {
    std::string s = payload_->cls + "(";
    for (size_t i = 0; i < payload_->items.size(); ++i)
      s += (i ? ", " : "") + payload_->names[i] + "=" + payload_->items[i].toString(uopName);
    return s + ")";
  }
  case Kind::Bytes: {
    std::string s = "bytes(\"";
    static const char *hex = "0123456789abcdef";
    for (unsigned char c : payload_->text) {
      s += hex[c >> 4];
      s += hex[c & 15];
    }
    return s + "\")";
  }
  case Kind::Invalid: return "Invalid";
  case Kind::Callable: return "callable(" + quoteString(payload_->text) + ")";
  case Kind::Repr: {
    // The class is written bare when it reads back as a (dotted) name, quoted otherwise ("f.<locals>.C").
    const std::string &c = payload_->cls;
    bool bare = !c.empty() && std::all_of(c.begin(), c.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.';
    });
    return "repr(" + (bare ? c : quoteString(c)) + ", " + quoteString(payload_->text) + ")";
  }
  }
  return "?";
}

} // namespace tgc
