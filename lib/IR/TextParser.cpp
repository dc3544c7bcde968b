//===- TextParser.cpp - read the text form of UOp graphs -------------------===//
//
// The parsing half of TextFormat.h: a hand-written recursive-descent parser
// over the line-oriented syntax of docs/text-format.md. Nodes are interned in
// the caller's Context as they are defined, so a name always denotes an
// existing node (SSA: define before use, define once) and every node gets the
// Location of its definition. Errors stop the parse with one Diagnostic
// pointing at the offending line and column.
//
//===----------------------------------------------------------------------===//
#include "IR/TextFormat.h"

#include <cctype>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>

namespace tgc {

namespace {

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isNameChar(char c) { return isIdentChar(c) || c == '.'; }
int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// A position in the input.
struct Pos {
  size_t offset = 0;
  unsigned line = 1, col = 1;
};

struct NameDef {
  const UOp *node;
  Pos at;
};

class Parser {
public:
  Parser(std::string_view text, std::string path, unsigned lineOffset)
      : text_(text), path_(std::move(path)), line_(1 + lineOffset) {}

  /// Resolves `%name` in values: the current block's definitions, or an
  /// external table (parseValue).
  const std::unordered_map<std::string, const UOp *> *externalNames = nullptr;

  bool parseDocument(Context &ctx, Graph &g);
  bool parseStandaloneValue(Value &out) {
    if (!parseValue(out)) return false;
    skipSpaces();
    if (!eof()) return fail(here(), "unexpected '" + std::string(1, peek()) + "' after the value");
    return true;
  }

  Diagnostic takeError() { return std::move(*error_); }

private:
  // ----- characters and positions -----
  bool eof() const { return pos_ >= text_.size(); }
  char peek(size_t k = 0) const { return pos_ + k < text_.size() ? text_[pos_ + k] : '\0'; }
  bool startsWith(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }
  Pos here() const { return Pos{pos_, line_, unsigned(pos_ - lineStart_ + 1)}; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      lineStart_ = pos_ + 1;
    }
    ++pos_;
  }
  Location location(Pos p) const {
    Location l;
    l.file = path_;
    l.line = p.line;
    l.col = p.col;
    return l;
  }
  bool fail(Pos p, std::string message) {
    if (!error_) error_ = Diagnostic(location(p), std::move(message));
    return false;
  }
  std::string found() const {
    if (eof()) return "end of input";
    if (peek() == '\n') return "end of line";
    return "'" + std::string(1, peek()) + "'";
  }

  /// Spaces and tabs (not newlines: statements are lines).
  void skipSpaces() {
    while (!eof() && (peek() == ' ' || peek() == '\t' || peek() == '\r')) ++pos_;
  }
  /// Whitespace, newlines and comments between statements.
  void skipTrivia() {
    while (!eof()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') advance();
      else if (startsWith("//")) skipToLineEnd();
      else break;
    }
  }
  void skipToLineEnd() {
    while (!eof() && peek() != '\n') ++pos_;
  }
  bool atLineEnd() {
    skipSpaces();
    return eof() || peek() == '\n' || startsWith("//");
  }
  /// The end of a statement: only spaces and a comment may follow on its line.
  bool expectLineEnd(std::string_view what) {
    if (!atLineEnd()) return fail(here(), "unexpected " + found() + " after " + std::string(what));
    skipToLineEnd();
    if (!eof()) advance();
    return true;
  }
  bool expect(char c, std::string_view context) {
    skipSpaces();
    if (peek() != c) return fail(here(), "expected '" + std::string(1, c) + "' " + std::string(context) + ", found " + found());
    ++pos_;
    return true;
  }
  std::string_view lexIdent() {
    size_t start = pos_;
    if (!eof() && isIdentStart(peek()))
      while (!eof() && isIdentChar(peek())) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  std::string_view lexName() {
    size_t start = pos_;
    while (!eof() && isNameChar(peek())) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  // ----- values -----
  bool parseValue(Value &out);
  bool parseNumber(Value &out);
  bool parseStringLiteral(std::string &out);
  bool parseIdentValue(Value &out);
  bool parseRef(const UOp *&out);
  template <typename Fn> bool parseList(char close, std::string_view what, Fn &&elem, bool *trailingComma = nullptr);
  bool valueError(Pos p, std::string detail) { return fail(p, "malformed value: " + detail); }

  // ----- statements -----
  bool parseBlock(Context &ctx, Graph &g);
  bool parseNode(Context &ctx, const UOp *&out);
  bool parseShapeAnnotation(std::vector<std::optional<int64_t>> &dims);
  bool parseBuffer(Graph &g);
  bool parseAttributes(Graph &g);
  bool parseRoots(Graph &g);
  bool isTagKeyword() const {
    if (!startsWith("tag")) return false;
    size_t p = pos_ + 3;
    if (p < text_.size() && isNameChar(text_[p])) return false;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    return p < text_.size() && text_[p] == '=';
  }

  std::string_view text_;
  std::string path_;
  size_t pos_ = 0, lineStart_ = 0;
  unsigned line_;
  std::optional<Diagnostic> error_;
  std::unordered_map<std::string, NameDef> scope_; ///< names of the current block
};

// ===----------------------------------------------------------------------===
// Values
// ===----------------------------------------------------------------------===

/// `elem (, elem)* close`, or just `close`; the opening bracket is consumed.
template <typename Fn> bool Parser::parseList(char close, std::string_view what, Fn &&elem, bool *trailingComma) {
  skipSpaces();
  if (peek() == close) {
    ++pos_;
    return true;
  }
  while (true) {
    if (!elem()) return false;
    skipSpaces();
    if (peek() == close) {
      ++pos_;
      return true;
    }
    if (peek() != ',')
      return valueError(here(), "expected ',' or '" + std::string(1, close) + "' in " + std::string(what) + ", found " + found());
    ++pos_;
    skipSpaces();
    if (peek() == close) {
      if (!trailingComma) return valueError(here(), "unexpected ',' before '" + std::string(1, close) + "'");
      *trailingComma = true;
      ++pos_;
      return true;
    }
  }
}

bool Parser::parseValue(Value &out) {
  skipSpaces();
  Pos at = here();
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

bool Parser::parseStringLiteral(std::string &out) {
  Pos open = here();
  if (peek() != '"') return valueError(open, "expected a string, found " + found());
  ++pos_;
  while (true) {
    if (eof() || peek() == '\n') return fail(open, "unterminated string");
    char c = peek();
    if (c == '"') {
      ++pos_;
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
  if (peek() == '.') {
    // Cls.MEMBER (the class may itself be dotted), or dtypes.NAME.
    std::vector<std::string> parts{id};
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
    out = Value::enumMember(std::move(cls), std::move(parts.back()));
    return true;
  }
  if (peek() != '(') return valueError(at, "unknown identifier '" + id + "'");
  ++pos_;
  if (id == "bytes" || id == "callable") {
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
  if (id == "repr") {
    // repr(Cls, "text"): the class is a (dotted) name or, if it is not one, a string.
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
  // A record: Cls(field=value, ...).
  std::vector<std::string> names;
  std::vector<Value> fields;
  auto field = [&] {
    skipSpaces();
    Pos fp = here();
    std::string name(lexIdent());
    if (name.empty()) return valueError(fp, "expected a field name in " + id + "(...), found " + found());
    skipSpaces();
    if (peek() != '=') return valueError(here(), "expected '=' after field '" + name + "', found " + found());
    ++pos_;
    names.push_back(std::move(name));
    fields.emplace_back();
    return parseValue(fields.back());
  };
  if (!parseList(')', id + "(...)", field)) return false;
  out = Value::object(std::move(id), std::move(names), std::move(fields));
  return true;
}

// ===----------------------------------------------------------------------===
// Statements
// ===----------------------------------------------------------------------===

bool Parser::parseDocument(Context &ctx, Graph &g) {
  while (true) {
    skipTrivia();
    if (eof()) return true;
    Pos at = here();
    if (lexIdent() != "graph") {
      pos_ = at.offset;
      return fail(at, "expected 'graph', found " + found());
    }
    if (!parseBlock(ctx, g)) return false;
  }
}

bool Parser::parseBlock(Context &ctx, Graph &g) {
  skipSpaces();
  if (peek() != '@') return fail(here(), "expected '@name' after 'graph', found " + found());
  ++pos_;
  Pos np = here();
  std::string name(lexName());
  if (name.empty()) return fail(np, "expected a graph name after '@'");
  skipSpaces();
  Pos open = here();
  if (!expect('{', "after the graph name") || !expectLineEnd("'{'")) return false;

  scope_.clear();
  const UOp *last = nullptr;
  bool hasRootsLine = false;
  while (true) {
    skipTrivia();
    Pos at = here();
    if (eof()) return fail(open, "unterminated graph block @" + name + ": expected '}'");
    if (peek() == '}') {
      ++pos_;
      if (!expectLineEnd("'}'")) return false;
      break;
    }
    if (hasRootsLine) return fail(at, "expected '}' after the 'roots' line, found " + found());
    if (peek() == '%') {
      if (!parseNode(ctx, last)) return false;
      continue;
    }
    std::string_view kw = lexIdent();
    if (kw == "buffer") {
      if (!parseBuffer(g)) return false;
    } else if (kw == "attributes") {
      if (!parseAttributes(g)) return false;
    } else if (kw == "roots") {
      if (!parseRoots(g)) return false;
      hasRootsLine = true;
    } else {
      pos_ = at.offset;
      return fail(at, "expected a node definition (%name = ...), 'buffer', 'attributes', 'roots' or '}', found " +
                          (kw.empty() ? found() : "'" + std::string(kw) + "'"));
    }
  }
  if (!hasRootsLine) {
    if (!last) return fail(open, "graph block @" + name + " defines no nodes");
    g.roots.push_back(last);
    g.rootNames.push_back(name);
  }
  return true;
}

bool Parser::parseNode(Context &ctx, const UOp *&out) {
  Pos def = here();
  ++pos_; // '%'
  std::string name(lexName());
  if (name.empty()) return fail(def, "expected a name after '%'");
  if (auto it = scope_.find(name); it != scope_.end()) {
    fail(def, "redefinition of %" + name);
    error_->notes.push_back("previous definition of %" + name + " is at " + location(it->second.at).str());
    return false;
  }
  if (!expect('=', "after %" + name)) return false;

  skipSpaces();
  Pos opPos = here();
  std::string_view opText = lexIdent();
  if (opText.empty()) return fail(opPos, "expected an op name, found " + found());
  std::optional<Op> op = opFromName(opText);
  if (!op) return fail(opPos, "unknown op '" + std::string(opText) + "'");

  skipSpaces();
  Pos dtPos = here();
  std::string_view dtText = lexIdent();
  if (dtText.empty()) return fail(dtPos, "expected a dtype after " + std::string(opText) + ", found " + found());
  DType dt = dtypes::fromName(dtText);
  if (!dt) return fail(dtPos, "unknown dtype '" + std::string(dtText) + "'");

  // The source list: a '(' followed by ')' or '%'. Any other '(' begins a tuple arg.
  std::vector<const UOp *> src;
  skipSpaces();
  if (peek() == '(') {
    size_t p = pos_ + 1;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    if (p < text_.size() && (text_[p] == ')' || text_[p] == '%')) {
      ++pos_;
      auto source = [&] {
        skipSpaces();
        if (peek() != '%') return fail(here(), "a source must be a node reference (%name), found " + found());
        const UOp *u = nullptr;
        if (!parseRef(u)) return false;
        src.push_back(u);
        return true;
      };
      if (!parseList(')', "the source list", source)) return false;
    }
  }

  Value arg, tag;
  if (!atLineEnd() && !isTagKeyword() && peek() != ':')
    if (!parseValue(arg)) return false;
  if (!atLineEnd() && isTagKeyword()) {
    pos_ += 3;
    if (!expect('=', "after 'tag'") || !parseValue(tag)) return false;
  }
  std::optional<Pos> shapePos;
  std::vector<std::optional<int64_t>> dims;
  if (!atLineEnd() && peek() == ':') {
    ++pos_;
    skipSpaces();
    shapePos = here();
    if (!parseShapeAnnotation(dims)) return false;
  }
  if (!expectLineEnd("the definition of %" + name)) return false;

  const UOp *u = ctx.get(*op, dt, std::move(src), std::move(arg), std::move(tag));
  if (shapePos) {
    // Checked only where a shape is derivable: void nodes and ill-formed ones have none to compare with.
    if (const Shape *s = u->shape()) {
      bool same = s->size() == dims.size();
      for (size_t i = 0; same && i < dims.size(); ++i)
        same = dims[i] ? (*s)[i].isStatic() && (*s)[i].value == *dims[i] : !(*s)[i].isStatic();
      if (!same) {
        Shape written;
        for (const auto &d : dims) written.push_back(d ? Dim{*d, nullptr} : Dim{0, u});
        return fail(*shapePos, "shape annotation " + shapeStr(written) + " of %" + name +
                                   " does not match its derived shape " + shapeStr(*s));
      }
    }
  }
  ctx.setLocation(u, location(def));
  scope_.emplace(name, NameDef{u, def});
  out = u;
  return true;
}

bool Parser::parseShapeAnnotation(std::vector<std::optional<int64_t>> &dims) {
  if (peek() != '[') return fail(here(), "bad shape annotation: expected '[', found " + found());
  ++pos_;
  skipSpaces();
  if (peek() == ']') {
    ++pos_;
    return true;
  }
  while (true) {
    skipSpaces();
    Pos p = here();
    if (peek() == '?') {
      ++pos_;
      dims.push_back(std::nullopt);
    } else {
      size_t start = pos_;
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
      int64_t v = 0;
      auto [e, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, v);
      if (pos_ == start || ec != std::errc() || e != text_.data() + pos_ || isNameChar(peek())) {
        pos_ = start;
        return fail(p, "bad shape annotation: expected a size or '?', found " + found());
      }
      dims.push_back(v);
    }
    skipSpaces();
    if (peek() == ']') {
      ++pos_;
      return true;
    }
    if (peek() != ',') return fail(here(), "bad shape annotation: expected ',' or ']', found " + found());
    ++pos_;
  }
}

bool Parser::parseBuffer(Graph &g) {
  skipSpaces();
  if (peek() != '%') return fail(here(), "expected the buffer node (%name) after 'buffer', found " + found());
  BufferFile b;
  if (!parseRef(b.node)) return false;
  b.dtype = b.node->dtype();
  skipSpaces();
  if (peek() != '"') return fail(here(), "expected the buffer's data file as a string, found " + found());
  if (!parseStringLiteral(b.file)) return false;
  while (!atLineEnd()) {
    Pos kp = here();
    std::string key(lexIdent());
    if (key.empty()) return fail(kp, "expected a buffer attribute (dtype, numel, device, allocated), found " + found());
    if (!expect('=', "after '" + key + "'")) return false;
    skipSpaces();
    Pos vp = here();
    Value v;
    if (!parseValue(v)) return false;
    auto wrong = [&](const char *what) { return fail(vp, "buffer attribute '" + key + "' must be " + what); };
    if (key == "dtype") {
      if (v.kind() != Value::Kind::DType) return wrong("a dtype (dtypes.NAME)");
      b.dtype = v.getDType();
    } else if (key == "numel") {
      if (!v.isInt()) return wrong("an int");
      b.numel = v.getInt();
    } else if (key == "device") {
      if (v.kind() != Value::Kind::Str) return wrong("a string");
      b.device = v.str();
    } else if (key == "allocated") {
      if (!v.isBool()) return wrong("True or False");
      b.allocated = v.getBool();
    } else {
      return fail(kp, "unknown buffer attribute '" + key + "'");
    }
  }
  g.buffers.push_back(std::move(b));
  return expectLineEnd("the buffer line");
}

bool Parser::parseAttributes(Graph &g) {
  skipSpaces();
  Pos at = here();
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  std::string_view json = text_.substr(pos_, end - pos_);
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(json, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error &e) {
    // e.byte is 1-based and counts the character that could not be read.
    Pos p = at;
    size_t off = e.byte ? std::min<size_t>(e.byte - 1, json.size()) : 0;
    p.offset += off;
    p.col += unsigned(off);
    std::string what = e.what();
    size_t colon = what.find(": ", what.find("column"));
    return fail(p, "malformed attributes JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2)));
  }
  if (!j.is_object()) return fail(at, "attributes must be a JSON object");
  for (auto &[key, value] : j.items()) {
    if (g.extra.contains(key)) return fail(at, "attribute '" + key + "' is given twice");
    g.extra[key] = value;
  }
  pos_ = end;
  return expectLineEnd("the attributes");
}

bool Parser::parseRoots(Graph &g) {
  while (true) {
    skipSpaces();
    if (peek() != '%') return fail(here(), "expected a root node (%name), found " + found());
    const UOp *u = nullptr;
    if (!parseRef(u)) return false;
    skipSpaces();
    Pos ap = here();
    if (lexIdent() != "as") {
      pos_ = ap.offset;
      return fail(ap, "expected 'as \"name\"' after the root, found " + found());
    }
    skipSpaces();
    std::string name;
    if (!parseStringLiteral(name)) return false;
    g.roots.push_back(u);
    g.rootNames.push_back(std::move(name));
    if (atLineEnd()) return expectLineEnd("the roots");
    if (peek() != ',') return fail(here(), "expected ',' or end of line after a root, found " + found());
    ++pos_;
  }
}

} // namespace

Result<Graph> parseText(Context &ctx, std::string_view text, const std::string &path, unsigned lineOffset) {
  Parser p(text, path, lineOffset);
  Graph g;
  if (!p.parseDocument(ctx, g)) return p.takeError();
  g.path = path;
  if (!path.empty() && path != "-") g.baseDir = std::filesystem::path(path).parent_path().string();
  return g;
}

Result<Value> parseValue(std::string_view text, const std::unordered_map<std::string, const UOp *> *names,
                         const std::string &path) {
  static const std::unordered_map<std::string, const UOp *> kNone;
  Parser p(text, path, 0);
  p.externalNames = names ? names : &kNone;
  Value v;
  if (!p.parseStandaloneValue(v)) return p.takeError();
  return v;
}

std::vector<std::string_view> splitInputFile(std::string_view text) {
  std::vector<std::string_view> pieces;
  size_t start = 0, lineBegin = 0;
  while (lineBegin <= text.size()) {
    size_t lineEnd = text.find('\n', lineBegin);
    if (lineEnd == std::string_view::npos) lineEnd = text.size();
    std::string_view line = text.substr(lineBegin, lineEnd - lineBegin);
    size_t a = line.find_first_not_of(" \t\r"), b = line.find_last_not_of(" \t\r");
    std::string_view trimmed = a == std::string_view::npos ? std::string_view() : line.substr(a, b - a + 1);
    if (trimmed.size() >= 8 && trimmed.substr(0, 8) == "// -----" &&
        trimmed.find_first_not_of('-', 3) == std::string_view::npos) {
      pieces.push_back(text.substr(start, lineBegin - start));
      start = std::min(lineEnd + 1, text.size());
    }
    lineBegin = lineEnd + 1;
  }
  pieces.push_back(text.substr(start));
  return pieces;
}

unsigned lineOffsetOf(std::string_view whole, std::string_view piece) {
  size_t end = size_t(piece.data() - whole.data());
  unsigned n = 0;
  for (size_t i = 0; i < end && i < whole.size(); ++i) n += whole[i] == '\n';
  return n;
}

} // namespace tgc
