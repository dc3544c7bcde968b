//===- TextValueParser.cpp - read arg/tag values of the text form ---------===//
//
// Values in the Python-like syntax that Value::toString prints: None, True,
// ints, floats, "strings", tuples, lists, set{...}, dicts, Cls.MEMBER enums,
// dtypes.NAME, %node references, Cls(field=value) records, Invalid, bytes(..),
// callable(..), repr(..). Every form Value::toString writes reads back to an
// equal Value.
//
//===----------------------------------------------------------------------===//
#include "IR/TextParserImpl.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace tgc {
namespace text_detail {

bool Parser::parseValue(Value &out) {
  skipSpaces();
  Pos at = here();
  // Values nest by recursion; bound it so that hostile input cannot exhaust the stack.
  if (depth_ >= kMaxValueDepth) return valueError(at, "nested more than " + std::to_string(kMaxValueDepth) + " levels deep");
  struct DepthGuard {
    unsigned &depth;
    ~DepthGuard() { --depth; }
  } guard{++depth_};
  char c = peek();
  std::vector<Value> items;
  auto item = [&] {
    items.emplace_back();
    return parseValue(items.back());
  };
  if (c == '(') {
    ++pos_;
    bool trailing = false;
    if (!parseList(')', "tuple", item, &trailing)) return false;
    // Python's spelling: (x) is not a tuple, (x,) is; the printer always writes the latter.
    if (items.size() == 1 && !trailing) return valueError(at, "a one-element tuple is written (x,)");
    if (items.size() > 1 && trailing) return valueError(at, "a trailing ',' is only written in one-element tuples");
    out = Value::tuple(std::move(items));
    return true;
  }
  if (c == '[') {
    ++pos_;
    if (!parseList(']', "list", item)) return false;
    out = Value::list(std::move(items));
    return true;
  }
  if (c == '{') {
    ++pos_;
    std::vector<std::pair<Value, Value>> kv;
    auto entry = [&] {
      Value k, v;
      if (!parseValue(k)) return false;
      skipSpaces();
      if (peek() != ':') return valueError(here(), "expected ':' after a dict key, found " + found());
      ++pos_;
      if (!parseValue(v)) return false;
      kv.emplace_back(std::move(k), std::move(v));
      return true;
    };
    if (!parseList('}', "dict", entry)) return false;
    out = Value::dict(std::move(kv));
    return true;
  }
  if (c == '"') {
    std::string s;
    if (!parseStringLiteral(s)) return false;
    out = Value::string(std::move(s));
    return true;
  }
  if (c == '%') {
    const UOp *u = nullptr;
    if (!parseRef(u)) return false;
    out = Value::uop(u);
    return true;
  }
  if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return parseNumber(out);
  if (isIdentStart(c)) return parseIdentValue(out);
  return valueError(at, "expected a value, found " + found());
}

bool Parser::parseNumber(Value &out) {
  Pos at = here();
  size_t start = pos_;
  bool neg = peek() == '-';
  if (neg) ++pos_;
  if (startsWith("inf") && !isNameChar(peek(3))) {
    pos_ += 3;
    out = Value::floating(-std::numeric_limits<double>::infinity());
    return true;
  }
  auto digits = [&] {
    size_t n = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_, ++n;
    return n;
  };
  if (!digits()) return valueError(here(), "expected digits, found " + found());
  bool isFloat = false;
  if (peek() == '.') {
    isFloat = true;
    ++pos_;
    digits();
  }
  if (peek() == 'e' || peek() == 'E') {
    isFloat = true;
    ++pos_;
    if (peek() == '+' || peek() == '-') ++pos_;
    if (!digits()) return valueError(here(), "expected exponent digits, found " + found());
  }
  if (isNameChar(peek())) return valueError(here(), "unexpected '" + std::string(1, peek()) + "' in a number");
  std::string_view tok = text_.substr(start, pos_ - start);
  const char *b = tok.data(), *e = tok.data() + tok.size();
  if (isFloat) {
    double d = 0;
    auto [p, ec] = std::from_chars(b, e, d, std::chars_format::general);
    if (ec != std::errc() || p != e) return valueError(at, "float out of range: " + std::string(tok));
    out = Value::floating(d);
    return true;
  }
  int64_t i = 0;
  if (auto [p, ec] = std::from_chars(b, e, i); ec == std::errc() && p == e) {
    out = Value::integer(i);
    return true;
  }
  uint64_t u = 0;
  if (auto [p, ec] = std::from_chars(b, e, u); !neg && ec == std::errc() && p == e) {
    out = Value::uinteger(u);
    return true;
  }
  out = Value::bigInteger(std::string(tok));
  return true;
}

namespace {

/// Strict UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF):
/// what JSON strings and Python's str hold.
bool isValidUTF8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!len || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = cp << 6 | (cc & 0x3f);
    }
    static constexpr uint32_t kMinOf[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinOf[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

} // namespace

bool Parser::parseStringLiteral(std::string &out) {
  Pos open = here();
  if (peek() != '"') return valueError(open, "expected a string, found " + found());
  ++pos_;
  size_t start = out.size();
  while (true) {
    if (eof() || peek() == '\n') return fail(open, "unterminated string");
    char c = peek();
    if (c == '"') {
      ++pos_;
      // Strings are text: the JSON form could not hold anything else.
      if (!isValidUTF8(std::string_view(out).substr(start))) return valueError(open, "string is not valid UTF-8");
      return true;
    }
    if (c != '\\') {
      out += c;
      ++pos_;
      continue;
    }
    Pos esc = here();
    ++pos_;
    switch (peek()) {
    case '"': out += '"'; break;
    case '\\': out += '\\'; break;
    case 'n': out += '\n'; break;
    case 't': out += '\t'; break;
    case 'r': out += '\r'; break;
    case 'x': {
      int hi = hexDigit(peek(1)), lo = hi < 0 ? -1 : hexDigit(peek(2));
      if (lo < 0) return valueError(esc, "\\x needs two hex digits");
      out += char(hi * 16 + lo);
      pos_ += 2;
      break;
    }
    default:
      if (eof() || peek() == '\n') return fail(open, "unterminated string");
      return valueError(esc, "unknown escape '\\" + std::string(1, peek()) + "'");
    }
    ++pos_;
  }
}

bool Parser::parseRef(const UOp *&out) {
  Pos at = here();
  ++pos_; // '%'
  std::string name(lexName());
  if (name.empty()) return fail(at, "expected a name after '%'");
  if (externalNames) {
    if (auto it = externalNames->find(name); it != externalNames->end()) {
      out = it->second;
      return true;
    }
  } else if (auto it = scope_.find(name); it != scope_.end()) {
    out = it->second.node;
    return true;
  }
  return fail(at, "use of undefined name %" + name);
}

bool Parser::parseIdentValue(Value &out) {
  Pos at = here();
  std::string id(lexIdent());
  if (id == "None") return out = Value::none(), true;
  if (id == "True") return out = Value::boolean(true), true;
  if (id == "False") return out = Value::boolean(false), true;
  if (id == "Invalid") return out = Value::invalid(), true;
  if (id == "inf") return out = Value::floating(std::numeric_limits<double>::infinity()), true;
  if (id == "nan") return out = Value::floating(std::numeric_limits<double>::quiet_NaN()), true;
  if (id == "set" && peek() == '{') {
    ++pos_;
    std::vector<Value> items;
    auto item = [&] {
      items.emplace_back();
      return parseValue(items.back());
    };
    if (!parseList('}', "set", item)) return false;
    out = Value::set(std::move(items));
    return true;
  }
  if (peek() == '.') return parseDottedValue(at, std::move(id), out);
  if (peek() != '(') return valueError(at, "unknown identifier '" + id + "'");
  ++pos_;
  if (id == "bytes" || id == "callable") return parseStringCall(id, out);
  if (id == "repr") return parseRepr(out);
  return parseRecord(std::move(id), out);
}

// After `first`: Cls.MEMBER (the class may itself be dotted), or dtypes.NAME.
bool Parser::parseDottedValue(Pos at, std::string first, Value &out) {
  std::vector<std::string> parts{std::move(first)};
  while (peek() == '.') {
    ++pos_;
    Pos p = here();
    std::string part(lexIdent());
    if (part.empty()) return valueError(p, "expected a name after '.', found " + found());
    parts.push_back(std::move(part));
  }
  if (parts[0] == "dtypes" && parts.size() == 2) {
    DType dt = dtypes::fromName(parts[1]);
    if (!dt) return fail(at, "unknown dtype '" + parts[1] + "'");
    out = Value::dtype(dt);
    return true;
  }
  std::string cls = parts[0];
  for (size_t i = 1; i + 1 < parts.size(); ++i) cls += "." + parts[i];
  // The enums tgc knows are checked, as the JSON reader does.
  if (cls == "Ops" && !opFromName(parts.back())) return fail(at, "unknown op Ops." + parts.back());
  if (cls == "AddrSpace" && !addrSpaceFromName(parts.back()))
    return fail(at, "unknown address space AddrSpace." + parts.back());
  out = Value::enumMember(std::move(cls), std::move(parts.back()));
  return true;
}

// After `id(`, id bytes or callable: bytes("hex digits") or callable("name").
bool Parser::parseStringCall(const std::string &id, Value &out) {
  skipSpaces();
  Pos sp = here();
  std::string s;
  if (!parseStringLiteral(s) || !expect(')', "after " + id + "(\"...\"")) return false;
  if (id == "callable") {
    out = Value::callable(std::move(s));
    return true;
  }
  if (s.size() % 2) return valueError(sp, "bytes(...) needs an even number of hex digits");
  std::string raw;
  for (size_t i = 0; i < s.size(); i += 2) {
    int hi = hexDigit(s[i]), lo = hexDigit(s[i + 1]);
    if (hi < 0 || lo < 0) return valueError(sp, "bytes(...) holds hex digits only");
    raw += char(hi * 16 + lo);
  }
  out = Value::bytes(std::move(raw));
  return true;
}

// After `repr(`: repr(Cls, "text"), the class a (dotted) name or, if it is not one, a string.
bool Parser::parseRepr(Value &out) {
  skipSpaces();
  Pos cp = here();
  std::string cls;
  if (peek() == '"') {
    if (!parseStringLiteral(cls)) return false;
  } else {
    cls = lexName();
    if (cls.empty()) return valueError(cp, "expected a class name in repr(...), found " + found());
  }
  std::string textv;
  if (!expect(',', "in repr(Cls, \"text\")")) return false;
  skipSpaces();
  if (!parseStringLiteral(textv) || !expect(')', "after repr(Cls, \"text\"")) return false;
  out = Value::repr(std::move(cls), std::move(textv));
  return true;
}

// After `Cls(`: a record, Cls(field=value, ...).
bool Parser::parseRecord(std::string cls, Value &out) {
  std::vector<std::string> names;
  std::vector<Value> fields;
  auto field = [&] {
    skipSpaces();
    Pos fp = here();
    std::string name(lexIdent());
    if (name.empty()) return valueError(fp, "expected a field name in " + cls + "(...), found " + found());
    skipSpaces();
    if (peek() != '=') return valueError(here(), "expected '=' after field '" + name + "', found " + found());
    ++pos_;
    // A record's fields are a mapping (a JSON object): each name once.
    if (std::find(names.begin(), names.end(), name) != names.end())
      return valueError(fp, "field '" + name + "' is given twice in " + cls + "(...)");
    names.push_back(std::move(name));
    fields.emplace_back();
    return parseValue(fields.back());
  };
  if (!parseList(')', cls + "(...)", field)) return false;
  out = Value::object(std::move(cls), std::move(names), std::move(fields));
  return true;
}

} // namespace text_detail

Result<Value> parseValue(std::string_view text, const std::unordered_map<std::string, const UOp *> *names,
                         const std::string &path) {
  static const std::unordered_map<std::string, const UOp *> kNone;
  text_detail::Parser p(text, path, 0);
  p.externalNames = names ? names : &kNone;
  Value v;
  if (!p.parseStandaloneValue(v)) return p.takeError();
  return v;
}


} // namespace tgc
