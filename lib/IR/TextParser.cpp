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
#include "IR/TextParserImpl.h"

#include "IR/ArgForm.h"
#include "IR/JSONPositions.h"

#include <charconv>
#include <filesystem>

namespace tgc {
namespace text_detail {

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
    } else if (kw == "buffer_map") {
      if (!parseBufferMap(g)) return false;
    } else if (kw == "attributes") {
      if (!parseAttributes(g)) return false;
    } else if (kw == "roots") {
      if (!parseRoots(g)) return false;
      hasRootsLine = true;
    } else {
      pos_ = at.offset;
      return fail(at, "expected a node definition (%name = ...), 'attributes', 'buffer', 'buffer_map', 'roots' or '}', found " +
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
  skipSpaces();
  Pos argPos = here();
  if (!atLineEnd() && !isTagKeyword() && peek() != ':')
    if (!parseValue(arg)) return false;
  // The same check as the JSON reader's, so that both forms read the same graphs.
  if (std::string why = argFormError(*op, arg); !why.empty())
    return fail(argPos, "%" + name + " (" + std::string(opText) + "): " + why);
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
  Pos np = here();
  if (!parseRef(b.node)) return false;
  // The checks of the JSON reader's `buffers` table, so both forms accept the same documents.
  if (!b.node->is(Op::BUFFER))
    return fail(np, "buffer line for a " + std::string(opName(b.node->op())) + " node, not a BUFFER");
  if (!bufferNodes_.insert(b.node).second) return fail(np, "a second buffer line for the same BUFFER node");
  b.dtype = b.node->dtype();
  skipSpaces();
  if (peek() != '"') return fail(here(), "expected the buffer's data file as a string, found " + found());
  if (!parseStringLiteral(b.file)) return false;
  // Without a numel attribute, the BUFFER's own size.
  const UOp *size = b.node->numSrc() == 1 ? b.node->src(0) : nullptr;
  if (size && size->is(Op::CONST) && size->arg().isInt() && size->arg().getInt() >= 0) b.numel = size->arg().getInt();
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
      if (b.dtype != b.node->dtype())
        return fail(vp, "dtype " + std::string(b.dtype.name()) + " differs from its BUFFER node's " +
                            std::string(b.node->dtype() ? b.node->dtype().name() : "?"));
    } else if (key == "numel") {
      if (!v.isInt() || v.getInt() < 0) return wrong("a non-negative int");
      b.numel = v.getInt();
      if (size && size->is(Op::CONST) && size->arg().isInt() && size->arg().getInt() != b.numel)
        return fail(vp, "numel " + std::to_string(b.numel) + " differs from its BUFFER node's size " +
                            std::to_string(size->arg().getInt()));
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
  // `attributes {json}` holds document keys; `attributes %name {json}` a node's extra keys.
  skipSpaces();
  const UOp *node = nullptr;
  std::string nodeName;
  if (peek() == '%') {
    size_t nameStart = pos_;
    if (!parseRef(node)) return false;
    nodeName = std::string(text_.substr(nameStart, pos_ - nameStart));
    skipSpaces();
  }
  Pos at = here();
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  std::string_view json = text_.substr(pos_, end - pos_);
  // As deep as the JSON reader accepts at this place in a document (the
  // document object, and for node keys the nodes array and the node).
  size_t maxDepth = JSONPositions::kMaxNesting - (node ? 3 : 1);
  if (size_t deep = JSONPositions::nestingTooDeep(json, maxDepth); deep != JSONPositions::npos) {
    Pos p = at;
    p.offset += deep;
    p.col += unsigned(deep);
    return fail(p, "attributes JSON nested deeper than " + std::to_string(maxDepth) + " levels");
  }
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
  } catch (const nlohmann::json::exception &e) {
    auto [off, detail] = JSONPositions::locateQuotedToken(json, e.what());
    Pos p = at;
    p.offset += off;
    p.col += unsigned(off);
    return fail(p, "malformed attributes JSON: " + detail);
  }
  if (!j.is_object()) return fail(at, "attributes must be a JSON object");
  if (node) {
    if (!g.nodeExtra.emplace(node, std::move(j)).second)
      return fail(at, "attributes of " + nodeName + " are given twice");
  } else {
    for (auto &[key, value] : j.items()) {
      if (g.extra.contains(key)) return fail(at, "attribute '" + key + "' is given twice");
      g.extra[key] = value;
    }
  }
  pos_ = end;
  return expectLineEnd("the attributes");
}

bool Parser::parseBufferMap(Graph &g) {
  const UOp *tensor = nullptr, *buffer = nullptr;
  skipSpaces();
  if (peek() != '%') return fail(here(), "expected the tensor node (%name) after 'buffer_map', found " + found());
  if (!parseRef(tensor)) return false;
  skipSpaces();
  if (!startsWith("->")) return fail(here(), "expected '->' in 'buffer_map %tensor -> %buffer', found " + found());
  pos_ += 2;
  skipSpaces();
  if (peek() != '%') return fail(here(), "expected the buffer node (%name) after '->', found " + found());
  if (!parseRef(buffer)) return false;
  g.bufferMap.emplace_back(tensor, buffer);
  return expectLineEnd("the buffer_map line");
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

} // namespace text_detail

Result<Graph> parseText(Context &ctx, std::string_view text, const std::string &path, unsigned lineOffset) {
  text_detail::Parser p(text, path, lineOffset);
  Graph g;
  if (!p.parseDocument(ctx, g)) return p.takeError();
  g.path = path;
  if (!path.empty() && path != "-") g.baseDir = std::filesystem::path(path).parent_path().string();
  return g;
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
