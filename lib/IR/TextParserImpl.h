//===- TextParserImpl.h - the text-form parser's internals -----*- C++ -*-===//
//
// Shared by TextValueParser.cpp (arg/tag values) and TextParser.cpp (graph
// blocks and node lines); not part of the IR's interface.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/TextFormat.h"

#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace tgc {

namespace text_detail {

inline bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
inline bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
inline bool isNameChar(char c) { return isIdentChar(c) || c == '.'; }
inline int hexDigit(char c) {
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
    unsigned char c = static_cast<unsigned char>(peek());
    if (!std::isprint(c)) {
      // Control and non-ASCII bytes would print as garbage (or nothing) in the message.
      static constexpr char kHex[] = "0123456789abcdef";
      return std::string("byte 0x") + kHex[c >> 4] + kHex[c & 15];
    }
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
  bool parseDottedValue(Pos at, std::string first, Value &out);
  bool parseStringCall(const std::string &id, Value &out);
  bool parseRepr(Value &out);
  bool parseRecord(std::string cls, Value &out);
  bool parseRef(const UOp *&out);
  template <typename Fn> bool parseList(char close, std::string_view what, Fn &&elem, bool *trailingComma = nullptr);
  bool valueError(Pos p, std::string detail) { return fail(p, "malformed value: " + detail); }

  // ----- statements -----
  bool parseBlock(Context &ctx, Graph &g);
  bool parseNode(Context &ctx, const UOp *&out);
  bool parseShapeAnnotation(std::vector<std::optional<int64_t>> &dims);
  bool parseBuffer(Graph &g);
  bool parseAttributes(Graph &g);
  bool parseBufferMap(Graph &g);
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
  std::unordered_set<const UOp *> bufferNodes_;     ///< nodes with a buffer line
  static constexpr unsigned kMaxValueDepth = 200;
  unsigned depth_ = 0; ///< current nesting of parseValue
};


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

} // namespace text_detail
} // namespace tgc
