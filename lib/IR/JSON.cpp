//===- JSON.cpp - reading graph-format JSON documents ---------------------===//
//
// Parses a graph document (docs/graph-format.md §2-§4) with nlohmann/json,
// decodes every arg/tag value form into tgc::Value, checks the dtype table
// against tgc's dtypes and each arg against its op (ArgForm.h), and interns
// the nodes in id order. A document that names another tinygrad than the one
// tgc follows gets a warning. nlohmann keeps no source positions, so
// JSONPositions.cpp scans the raw text once for the offsets that diagnostics
// point at (and for nesting too deep to parse safely). The inverse is
// JSONWriter.cpp.
//
//===----------------------------------------------------------------------===//
#include "IR/JSON.h"

#include "IR/ArgForm.h"
#include "IR/FollowedTinygrad.h"
#include "IR/JSONPositions.h"
#include "Runtime/FileIO.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <unordered_set>

namespace tgc {
namespace {

using json = nlohmann::ordered_json;

std::string typeName(const json &j) {
  switch (j.type()) {
  case json::value_t::null: return "null";
  case json::value_t::boolean: return "a bool";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned: return "an integer";
  case json::value_t::number_float: return "a number with a fraction or exponent";
  case json::value_t::string: return "a string";
  case json::value_t::array: return "an array";
  case json::value_t::object: return "an object";
  default: return "an unsupported JSON value";
  }
}

/// Short JSON text of j for messages (truncated).
std::string brief(const json &j) {
  std::string s = j.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::optional<int64_t> asInt(const json &j) {
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return int64_t(u);
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  return std::nullopt;
}

std::optional<double> parseFloat(const std::string &s) {
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  double d = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  // from_chars is exact (correctly rounded) and locale-free; it also spells
  // "inf"/"nan" variants, which the format does not use beyond the three above.
  if (ec != std::errc() || p != s.data() + s.size() || s.empty() || !std::isfinite(d)) return std::nullopt;
  return d;
}

bool isDecimal(const std::string &s) {
  size_t i = !s.empty() && s[0] == '-';
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

std::optional<std::string> decodeBase64(const std::string &s) {
  auto sextet = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (s.size() % 4) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < s.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s[i + k];
      // '=' pads only the end of the last quad ("xx==" or "xxx=").
      if (c == '=' && i + 4 == s.size() && k >= 2 && (k == 3 || s[i + 3] == '=')) {
        v[k] = 0;
        ++pad;
      } else if ((v[k] = sextet(c)) < 0) {
        return std::nullopt;
      }
    }
    uint32_t w = uint32_t(v[0]) << 18 | uint32_t(v[1]) << 12 | uint32_t(v[2]) << 6 | uint32_t(v[3]);
    out += char(w >> 16);
    if (pad < 2) out += char((w >> 8) & 0xff);
    if (pad < 1) out += char(w & 0xff);
  }
  return out;
}

/// A Python (ASCII) identifier: what tinygrad's class, field and enum member
/// names are, and what the text form can write back.
bool isIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// Names the text form reads as values of their own (None, inf, ...), so it
/// could not write them back as a class.
bool isValueWord(std::string_view s) {
  for (std::string_view r : {"None", "True", "False", "Invalid", "inf", "nan"})
    if (s == r) return true;
  return false;
}

/// An object class: an identifier the text form does not read as something
/// else (bytes(...), callable(...), repr(...)).
bool isObjClass(std::string_view s) {
  return isIdentifier(s) && !isValueWord(s) && s != "bytes" && s != "callable" && s != "repr";
}

/// An enum class: dotted identifiers, not starting with a value word, and not
/// `dtypes` (dtypes.X is a dtype).
bool isEnumClass(std::string_view s) {
  size_t dot = s.find('.');
  if (isValueWord(s.substr(0, dot)) || s == "dtypes") return false;
  while (true) {
    if (!isIdentifier(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
    dot = s.find('.');
  }
}

/// `s` with control and non-ASCII bytes written as \xNN: nlohmann quotes
/// the bytes it read, which may be broken UTF-8 or binary.
std::string printable(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) out += char(c);
    else out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
  }
  return out;
}

/// The first character of the token whose last character is at `end`: the
/// opening quote of a string, the first character of a number or literal.
size_t tokenStart(std::string_view text, size_t end) {
  if (end >= text.size()) return end;
  auto wordChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-'; };
  if (text[end] == '"') {
    for (size_t i = end; i-- > 0;) {
      if (text[i] != '"') continue;
      size_t slashes = 0;
      while (slashes < i && text[i - 1 - slashes] == '\\') ++slashes;
      if (slashes % 2 == 0) return i;
    }
    return end;
  }
  size_t i = end;
  if (wordChar(text[i]))
    while (i > 0 && wordChar(text[i - 1])) --i;
  return i;
}

/// Reads one document. Each check that fails returns a Diagnostic pointing at
/// the offending part of the text.
class Reader {
public:
  Reader(Context &ctx, std::string_view text, const std::string &path, std::vector<Diagnostic> *warnings)
      : ctx_(ctx), text_(text), path_(path), warnings_(warnings) {}

  Result<Graph> read();

private:
  Diagnostic errorAt(size_t offset, std::string message, int64_t nodeId = -1) const {
    auto [line, col] = pos_.lineCol(offset);
    return Diagnostic(Location{path_, line, col, nodeId}, std::move(message));
  }
  size_t topOffset(const std::string &key) const { return pos_.top(key); }

  std::optional<Diagnostic> readHeader(const json &doc);
  void checkRevision(const json &doc);
  std::optional<Diagnostic> readDTypes(const json &table, const json &doc);
  std::optional<Diagnostic> readNode(const json &j, size_t id, Graph &g);
  std::optional<Diagnostic> readRoots(const json &doc, Graph &g);
  std::optional<Diagnostic> readBuffers(const json &table, Graph &g);
  std::optional<Diagnostic> readBufferMap(const json &pairs, Graph &g);

  /// Decodes an encoded value (format §3). On failure returns false with the
  /// reason in err_ and the path inside the value (".v.slot", "[1]") in errPath_.
  bool decode(const json &j, Value &out);
  bool decodeTagged(const json &j, Value &out);
  bool decodeEnum(const std::string &cls, const std::string &member, Value &out);
  bool decodeUOpRef(int64_t id, Value &out);
  bool decodeObject(const std::string &cls, const json &v, Value &out);
  bool decodeDict(const json &v, Value &out);
  bool failValue(std::string message) {
    err_ = std::move(message);
    errPath_.clear();
    return false;
  }
  bool within(std::string segment) {
    errPath_ = std::move(segment) + errPath_;
    return false;
  }

  Context &ctx_;
  std::string_view text_;
  const std::string &path_;
  std::vector<Diagnostic> *warnings_;
  JSONPositions pos_;
  std::unordered_map<std::string, DType> dtypes_;
  std::vector<const UOp *> nodes_;
  std::unordered_set<const UOp *> seen_; ///< nodes this document defined
  size_t numNodes_ = 0;
  size_t current_ = 0; ///< id of the node being read (uop references must be below it)
  std::string err_, errPath_;
  size_t depth_ = 0;
  static constexpr size_t kMaxValueDepth = 200;
};

Result<Graph> Reader::read() {
  pos_ = JSONPositions::scan(text_);
  if (pos_.tooDeep() != JSONPositions::npos)
    return errorAt(pos_.tooDeep(), "JSON nested deeper than " + std::to_string(JSONPositions::kMaxNesting) + " levels");
  json doc;
  try {
    doc = json::parse(text_.begin(), text_.end());
  } catch (const json::parse_error &e) {
    // nlohmann's byte is 1-based and counts the offending token's last character.
    size_t offset = tokenStart(text_, e.byte ? std::min<size_t>(e.byte - 1, text_.size()) : 0);
    std::string what = e.what();
    size_t col = what.find("column ");
    size_t colon = col == std::string::npos ? std::string::npos : what.find(": ", col);
    std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    return errorAt(offset, "malformed JSON: " + printable(detail));
  } catch (const json::exception &e) {
    auto [offset, detail] = JSONPositions::locateQuotedToken(text_, e.what());
    return errorAt(offset, "malformed JSON: " + printable(detail));
  }
  if (!doc.is_object()) return errorAt(0, "a graph document must be a JSON object, not " + typeName(doc));
  if (auto d = readHeader(doc)) return *d;

  Graph g;
  g.path = path_;
  g.baseDir = std::filesystem::path(path_).parent_path().string();

  auto nodesIt = doc.find("nodes");
  if (nodesIt == doc.end()) return errorAt(0, "missing key 'nodes'");
  if (!nodesIt->is_array()) return errorAt(topOffset("nodes"), "'nodes' must be an array, not " + typeName(*nodesIt));
  numNodes_ = nodesIt->size();
  nodes_.reserve(numNodes_);
  for (size_t id = 0; id < nodesIt->size(); ++id)
    if (auto d = readNode((*nodesIt)[id], id, g)) return *d;

  if (auto d = readRoots(doc, g)) return *d;
  for (const auto &[key, value] : doc.items()) {
    if (key == "buffers") {
      if (auto d = readBuffers(value, g)) return *d;
    } else if (key == "buffer_map") {
      if (auto d = readBufferMap(value, g)) return *d;
    } else if (key != "format" && key != "version" && key != "dtypes" && key != "roots" && key != "root_names" &&
               key != "nodes") {
      g.extra[key] = value;
    }
  }
  return g;
}

std::optional<Diagnostic> Reader::readHeader(const json &doc) {
  auto fmt = doc.find("format");
  if (fmt == doc.end()) return errorAt(0, "not a tgc graph document: missing key 'format'");
  if (!fmt->is_string() || fmt->get_ref<const std::string &>() != "tgc-uop-graph")
    return errorAt(topOffset("format"), "unsupported format " + brief(*fmt) + " (expected \"tgc-uop-graph\")");
  auto ver = doc.find("version");
  if (ver == doc.end()) return errorAt(0, "missing key 'version'");
  if (asInt(*ver) != 1)
    return errorAt(topOffset("version"), "unsupported graph format version " + brief(*ver) + " (this reader knows 1)");
  checkRevision(doc);
  auto table = doc.find("dtypes");
  if (table == doc.end()) return errorAt(0, "missing key 'dtypes'");
  return readDTypes(*table, doc);
}

void Reader::checkRevision(const json &doc) {
  // No name (hand-written documents) is no claim. Either way the key stays in
  // Graph::extra and is written back as read.
  auto it = doc.find("tinygrad");
  if (!warnings_ || it == doc.end() || it->is_null()) return;
  if (it->is_string()) {
    const std::string &named = it->get_ref<const std::string &>();
    if (named.empty() || kFollowedTinygrad.isCommit(named)) return;
  }
  std::string theirs = it->is_string() ? printable(it->get_ref<const std::string &>()) : brief(*it);
  auto [line, col] = pos_.lineCol(topOffset("tinygrad"));
  warnings_->push_back(Diagnostic::warning(Location{path_, line, col, -1},
                                           "graph exported by tinygrad " + theirs + "; tgc follows tinygrad " +
                                               describeFollowedTinygrad() + ": ops or semantics may differ"));
}

/// "node K (OP)" for the first node of `doc` whose dtype is `name` or whose
/// arg or tag holds it as a {"t":"dtype"} value; "" if none does.
std::string firstUserOf(const json &doc, const std::string &name) {
  auto holds = [&](auto &self, const json &v) -> bool {
    if (v.is_object() && v.value("t", json()) == "dtype" && v.value("v", json()) == name) return true;
    if (!v.is_structured()) return false;
    return std::any_of(v.begin(), v.end(), [&](const json &item) { return self(self, item); });
  };
  auto nodes = doc.find("nodes");
  if (nodes == doc.end() || !nodes->is_array()) return "";
  for (size_t id = 0; id < nodes->size(); ++id) {
    const json &n = (*nodes)[id];
    if (!n.is_object()) continue;
    bool uses = n.value("dtype", json()) == name || (n.contains("arg") && holds(holds, n["arg"])) ||
                (n.contains("tag") && holds(holds, n["tag"]));
    if (!uses) continue;
    json op = n.value("op", json());
    return "node " + std::to_string(id) + (op.is_string() ? " (" + printable(op.get<std::string>()) + ")" : "");
  }
  return "";
}

std::optional<Diagnostic> Reader::readDTypes(const json &table, const json &doc) {
  if (!table.is_object()) return errorAt(topOffset("dtypes"), "'dtypes' must be an object, not " + typeName(table));
  for (const auto &[name, desc] : table.items()) {
    size_t at = pos_.sub("dtypes", name);
    std::string what = "dtype '" + name + "'";
    if (!desc.is_object()) return errorAt(at, what + ": descriptor must be an object, not " + typeName(desc));
    auto kind = desc.find("kind");
    if (kind == desc.end() || !kind->is_string()) return errorAt(at, what + ": descriptor needs a string 'kind'");
    // A dtype tgc cannot represent (or not as described) is refused at its
    // descriptor, naming the first node that needs it.
    auto unrepresentable = [&](std::string message) {
      std::string user = firstUserOf(doc, name);
      return errorAt(at, message + (user.empty() ? "" : "; " + user + " uses it"));
    };
    if (kind->get_ref<const std::string &>() != "scalar")
      return unrepresentable(what + " has kind '" + printable(kind->get<std::string>()) +
                             "': tgc supports only scalar dtypes (no pointer, vector or image dtypes)");
    DType dt = dtypes::fromName(name);
    if (!dt) {
      std::optional<int64_t> bits = desc.contains("bitsize") ? asInt(desc["bitsize"]) : std::nullopt;
      return unrepresentable("unknown dtype '" + name + "'" +
                             (bits ? " (a scalar of " + std::to_string(*bits) + " bits)" : "") +
                             ": tgc cannot represent it");
    }
    const DTypeInfo &info = dt.info();
    auto checkInt = [&](const char *field, int64_t want, bool required) -> std::optional<Diagnostic> {
      auto it = desc.find(field);
      if (it == desc.end()) {
        if (required) return errorAt(at, what + ": descriptor needs '" + field + "'");
        return std::nullopt;
      }
      if (asInt(*it) != want)
        return unrepresentable(what + ": descriptor has " + field + " " + brief(*it) + ", tgc's " + name + " has " +
                               std::to_string(want));
      return std::nullopt;
    };
    if (auto d = checkInt("bitsize", info.bitsize, true)) return d;
    if (auto d = checkInt("itemsize", info.itemsize(), true)) return d;
    if (auto d = checkInt("priority", info.priority, false)) return d;
    if (auto it = desc.find("cname"); it != desc.end() && (!it->is_string() || *it != std::string(info.cname)))
      return unrepresentable(what + ": descriptor has cname " + brief(*it) + ", tgc's " + name + " has \"" +
                             std::string(info.cname) + "\"");
    if (auto it = desc.find("fmt"); it != desc.end()) {
      json want = info.fmt ? json(std::string(1, info.fmt)) : json(nullptr);
      if (*it != want)
        return unrepresentable(what + ": descriptor has fmt " + brief(*it) + ", tgc's " + name + " has " + want.dump());
    }
    dtypes_.emplace(name, dt);
  }
  return std::nullopt;
}

std::optional<Diagnostic> Reader::readNode(const json &j, size_t id, Graph &g) {
  const JSONPositions::Node *np = pos_.node(id);
  size_t start = np ? np->start : topOffset("nodes");
  auto fieldAt = [&](int f) { return np && np->field[f] != JSONPositions::npos ? np->field[f] : start; };
  std::string where = "node " + std::to_string(id);
  auto fail = [&](int f, std::string message) { return errorAt(fieldAt(f), where + ": " + message, int64_t(id)); };
  if (!j.is_object()) return errorAt(start, where + " must be an object, not " + typeName(j), int64_t(id));
  current_ = id;

  const json *fields[JSONPositions::kNumFields] = {};
  json extra = json::object();
  for (const auto &[key, value] : j.items()) {
    int f = JSONPositions::fieldIndex(key);
    if (f >= 0) fields[f] = &value;
    else extra[key] = value;
  }
  for (int f = 0; f < JSONPositions::kNumFields; ++f)
    if (!fields[f])
      return errorAt(start, where + ": missing key '" + std::string(JSONPositions::kFieldNames[f]) + "'",
                     int64_t(id));
  using F = JSONPositions::Field;

  const json &opJ = *fields[F::kOp];
  if (!opJ.is_string()) return fail(F::kOp, "'op' must be a string, not " + typeName(opJ));
  std::optional<Op> op = opFromName(opJ.get_ref<const std::string &>());
  if (!op) return fail(F::kOp, "unknown op '" + opJ.get<std::string>() + "'");

  const json &dtJ = *fields[F::kDType];
  if (!dtJ.is_string()) return fail(F::kDType, "'dtype' must be a string, not " + typeName(dtJ));
  auto dtIt = dtypes_.find(dtJ.get_ref<const std::string &>());
  if (dtIt == dtypes_.end())
    return fail(F::kDType, "unknown dtype '" + dtJ.get<std::string>() + "' (not in the document's dtypes table)");

  const json &srcJ = *fields[F::kSrc];
  if (!srcJ.is_array()) return fail(F::kSrc, "'src' must be an array of node ids, not " + typeName(srcJ));
  std::vector<const UOp *> src;
  src.reserve(srcJ.size());
  for (size_t k = 0; k < srcJ.size(); ++k) {
    std::string slot = "src[" + std::to_string(k) + "]";
    std::optional<int64_t> s = asInt(srcJ[k]);
    if (!s) return fail(F::kSrc, slot + " must be a node id, not " + brief(srcJ[k]));
    if (*s < 0 || uint64_t(*s) >= numNodes_)
      return fail(F::kSrc, slot + " refers to node " + std::to_string(*s) + ", which does not exist (the document has " +
                              std::to_string(numNodes_) + " nodes)");
    if (uint64_t(*s) >= id)
      return fail(F::kSrc, slot + " refers to node " + std::to_string(*s) +
                              ", which does not come before it (sources must have smaller ids)");
    src.push_back(nodes_[size_t(*s)]);
  }

  Value arg, tag;
  if (!decode(*fields[F::kArg], arg)) return fail(F::kArg, "arg" + errPath_ + ": " + err_);
  if (!decode(*fields[F::kTag], tag)) return fail(F::kTag, "tag" + errPath_ + ": " + err_);
  // Tags are tinygrad's scratch notes, which tgc never reads: any form goes.
  if (std::string why = argFormError(*op, arg); !why.empty())
    return errorAt(fieldAt(F::kArg), where + " (" + std::string(opName(*op)) + "): " + why, int64_t(id));

  // tinygrad never exports two equal nodes; if a document has them anyway they
  // intern to one node, which keeps the first one's location.
  size_t before = ctx_.size();
  const UOp *u = ctx_.get(*op, dtIt->second, std::move(src), std::move(arg), std::move(tag));
  bool duplicate = ctx_.size() == before && seen_.count(u);
  if (!duplicate) {
    auto [line, col] = pos_.lineCol(start);
    ctx_.setLocation(u, Location{path_, line, col, int64_t(id)});
    seen_.insert(u);
    if (!extra.empty()) g.nodeExtra[u] = std::move(extra);
  }
  nodes_.push_back(u);
  return std::nullopt;
}

std::optional<Diagnostic> Reader::readRoots(const json &doc, Graph &g) {
  auto roots = doc.find("roots");
  if (roots == doc.end()) return errorAt(0, "missing key 'roots'");
  size_t at = topOffset("roots");
  if (!roots->is_array()) return errorAt(at, "'roots' must be an array of node ids, not " + typeName(*roots));
  for (size_t k = 0; k < roots->size(); ++k) {
    std::optional<int64_t> r = asInt((*roots)[k]);
    if (!r) return errorAt(at, "roots[" + std::to_string(k) + "] must be a node id, not " + brief((*roots)[k]));
    if (*r < 0 || uint64_t(*r) >= numNodes_)
      return errorAt(at, "roots[" + std::to_string(k) + "] refers to node " + std::to_string(*r) +
                             ", which does not exist (the document has " + std::to_string(numNodes_) + " nodes)");
    g.roots.push_back(nodes_[size_t(*r)]);
  }
  auto names = doc.find("root_names");
  if (names == doc.end()) return errorAt(0, "missing key 'root_names'");
  at = topOffset("root_names");
  if (!names->is_array() || names->size() != roots->size())
    return errorAt(at, "'root_names' must be an array of " + std::to_string(roots->size()) +
                           " strings, one for each root");
  for (const json &n : *names) {
    if (!n.is_string()) return errorAt(at, "'root_names' must hold strings, not " + brief(n));
    g.rootNames.push_back(n.get<std::string>());
  }
  return std::nullopt;
}

std::optional<Diagnostic> Reader::readBuffers(const json &table, Graph &g) {
  if (!table.is_object()) return errorAt(topOffset("buffers"), "'buffers' must be an object, not " + typeName(table));
  std::unordered_set<const UOp *> listed;
  for (const auto &[key, entry] : table.items()) {
    size_t at = pos_.sub("buffers", key);
    std::string what = "buffers[\"" + key + "\"]";
    if (!entry.is_object()) return errorAt(at, what + " must be an object, not " + typeName(entry));
    auto get = [&](const char *field) -> const json * {
      auto it = entry.find(field);
      return it == entry.end() ? nullptr : &*it;
    };
    const json *node = get("node"), *dtype = get("dtype"), *numel = get("numel"), *device = get("device"),
               *allocated = get("allocated"), *file = get("file");
    std::optional<int64_t> id = node ? asInt(*node) : std::nullopt;
    if (!id) return errorAt(at, what + ": 'node' must be a node id");
    if (*id < 0 || uint64_t(*id) >= numNodes_)
      return errorAt(at, what + ": node " + std::to_string(*id) + " does not exist (the document has " +
                             std::to_string(numNodes_) + " nodes)");
    if (key != std::to_string(*id)) return errorAt(at, what + ": key does not match its node " + std::to_string(*id));
    const UOp *u = nodes_[size_t(*id)];
    if (!u->is(Op::BUFFER))
      return errorAt(at, what + ": node " + std::to_string(*id) + " is a " + std::string(opName(u->op())) +
                             ", not a BUFFER");
    // Equal nodes intern to one; a second entry for it would be written twice.
    if (!listed.insert(u).second)
      return errorAt(at, what + ": node " + std::to_string(*id) + " is the same BUFFER as an earlier entry");
    if (!dtype || !dtype->is_string()) return errorAt(at, what + ": 'dtype' must be a dtype name");
    auto dt = dtypes_.find(dtype->get_ref<const std::string &>());
    if (dt == dtypes_.end())
      return errorAt(at, what + ": unknown dtype '" + dtype->get<std::string>() +
                             "' (not in the document's dtypes table)");
    if (dt->second != u->dtype())
      return errorAt(at, what + ": dtype " + dt->first + " differs from its BUFFER node's " +
                             std::string(u->dtype().name()));
    std::optional<int64_t> n = numel ? asInt(*numel) : std::nullopt;
    if (!n || *n < 0) return errorAt(at, what + ": 'numel' must be a non-negative integer");
    if (u->numSrc() == 1 && u->src(0)->is(Op::CONST) && u->src(0)->arg().isInt() && u->src(0)->arg().getInt() != *n)
      return errorAt(at, what + ": numel " + std::to_string(*n) + " differs from its BUFFER node's size " +
                             std::to_string(u->src(0)->arg().getInt()));
    if (!device || !device->is_string()) return errorAt(at, what + ": 'device' must be a string");
    if (!allocated || !allocated->is_boolean()) return errorAt(at, what + ": 'allocated' must be true or false");
    if (file && !file->is_string() && !file->is_null())
      return errorAt(at, what + ": 'file' must be a path or null, not " + typeName(*file));
    BufferFile bf;
    bf.node = u;
    bf.dtype = dt->second;
    bf.numel = *n;
    bf.device = device->get<std::string>();
    bf.allocated = allocated->get<bool>();
    if (file && file->is_string()) bf.file = file->get<std::string>();
    g.buffers.push_back(std::move(bf));
  }
  return std::nullopt;
}

std::optional<Diagnostic> Reader::readBufferMap(const json &pairs, Graph &g) {
  size_t at = topOffset("buffer_map");
  if (!pairs.is_array()) return errorAt(at, "'buffer_map' must be an array of [node, node] pairs");
  for (size_t k = 0; k < pairs.size(); ++k) {
    const json &p = pairs[k];
    std::string what = "buffer_map[" + std::to_string(k) + "]";
    if (!p.is_array() || p.size() != 2) return errorAt(at, what + " must be a [node, node] pair, not " + brief(p));
    const UOp *ends[2];
    for (int e = 0; e < 2; ++e) {
      std::optional<int64_t> id = asInt(p[size_t(e)]);
      if (!id || *id < 0 || uint64_t(*id) >= numNodes_)
        return errorAt(at, what + ": " + brief(p[size_t(e)]) + " is not a node of the document");
      ends[e] = nodes_[size_t(*id)];
    }
    g.bufferMap.emplace_back(ends[0], ends[1]);
  }
  return std::nullopt;
}

bool Reader::decode(const json &j, Value &out) {
  // Bounded nesting: a hostile document must not exhaust the stack here or in
  // the recursive Value functions later.
  struct Depth {
    size_t &d;
    ~Depth() { --d; }
  } depth{++depth_};
  if (depth_ > kMaxValueDepth) return failValue("value nested deeper than " + std::to_string(kMaxValueDepth) + " levels");
  switch (j.type()) {
  case json::value_t::null: out = Value::none(); return true;
  case json::value_t::boolean: out = Value::boolean(j.get<bool>()); return true;
  case json::value_t::number_unsigned: out = Value::uinteger(j.get<uint64_t>()); return true;
  case json::value_t::number_integer: out = Value::integer(j.get<int64_t>()); return true;
  case json::value_t::string: out = Value::string(j.get<std::string>()); return true;
  case json::value_t::array: {
    std::vector<Value> items(j.size());
    for (size_t i = 0; i < j.size(); ++i)
      if (!decode(j[i], items[i])) return within("[" + std::to_string(i) + "]");
    out = Value::tuple(std::move(items));
    return true;
  }
  case json::value_t::object: return decodeTagged(j, out);
  default:
    // nlohmann reads integers beyond 64 bits as floating point too.
    return failValue("plain JSON number " + j.dump() +
                     " is not a value (floats are written {\"t\":\"float\",\"v\":...}, "
                     "integers beyond 64 bits {\"t\":\"int\",\"v\":...})");
  }
}

// The value of {"t":"int","v":s}, s a decimal: canonical documents use this
// form only outside 64 bits; it is accepted inside too.
Value intValue(const std::string &s) {
  int64_t i = 0;
  uint64_t u = 0;
  const char *end = s.data() + s.size();
  if (auto r = std::from_chars(s.data(), end, i); r.ec == std::errc() && r.ptr == end) return Value::integer(i);
  if (auto r = std::from_chars(s.data(), end, u); r.ec == std::errc() && r.ptr == end) return Value::uinteger(u);
  return Value::bigInteger(s);
}

bool Reader::decodeEnum(const std::string &cls, const std::string &member, Value &out) {
  if (!isEnumClass(cls) || !isIdentifier(member))
    return failValue("enum " + brief(json(cls + "." + member)) + " is not a class name and a member name");
  if (cls == "Ops" && !opFromName(member)) return failValue("unknown op Ops." + member);
  if (cls == "AddrSpace" && !addrSpaceFromName(member)) return failValue("unknown address space AddrSpace." + member);
  out = Value::enumMember(cls, member);
  return true;
}

// A reference to node `id`, which must come before the node being read.
bool Reader::decodeUOpRef(int64_t id, Value &out) {
  if (id < 0 || uint64_t(id) >= numNodes_)
    return failValue("refers to node " + std::to_string(id) + ", which does not exist (the document has " +
                     std::to_string(numNodes_) + " nodes)");
  if (uint64_t(id) >= current_)
    return failValue("refers to node " + std::to_string(id) +
                     ", which does not come before it (referenced nodes must have smaller ids)");
  out = Value::uop(nodes_[size_t(id)]);
  return true;
}

bool Reader::decodeObject(const std::string &cls, const json &v, Value &out) {
  if (!isObjClass(cls)) return failValue("object class " + brief(json(cls)) + " is not a class name");
  std::vector<std::string> names;
  std::vector<Value> fields(v.size());
  size_t i = 0;
  for (const auto &[name, fj] : v.items()) {
    if (!isIdentifier(name)) return failValue("object field " + brief(json(name)) + " is not a field name");
    if (!decode(fj, fields[i++])) return within(".v." + name);
    names.push_back(name);
  }
  out = Value::object(cls, std::move(names), std::move(fields));
  return true;
}

// A dict from its array of [key, value] pairs.
bool Reader::decodeDict(const json &v, Value &out) {
  std::vector<std::pair<Value, Value>> items(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const json &p = v[i];
    std::string at = ".v[" + std::to_string(i) + "]";
    if (!p.is_array() || p.size() != 2) {
      failValue("a dict item must be a [key, value] pair");
      return within(at);
    }
    if (!decode(p[0], items[i].first)) return within(at + "[0]");
    if (!decode(p[1], items[i].second)) return within(at + "[1]");
  }
  out = Value::dict(std::move(items));
  return true;
}

bool Reader::decodeTagged(const json &j, Value &out) {
  auto t = j.find("t");
  if (t == j.end() || !t->is_string()) return failValue("an object value needs a string \"t\" saying its form");
  const std::string &form = t->get_ref<const std::string &>();
  auto v = j.find("v");
  auto str = [&](const char *key, std::string &s) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return false;
    s = it->get<std::string>();
    return true;
  };
  auto needs = [&](const char *what) { return failValue("{\"t\":\"" + form + "\"} needs " + what); };
  std::string s, cls;

  if (form == "float") {
    if (!str("v", s)) return needs("a string 'v'");
    std::optional<double> f = parseFloat(s);
    if (!f) return failValue("bad float \"" + s + "\" (expected a decimal, \"inf\", \"-inf\" or \"nan\")");
    out = Value::floating(*f);
  } else if (form == "int") {
    if (!str("v", s) || !isDecimal(s)) return needs("a decimal string 'v'");
    out = intValue(s);
  } else if (form == "enum") {
    if (!str("cls", cls) || !str("v", s)) return needs("string 'cls' and 'v'");
    return decodeEnum(cls, s, out);
  } else if (form == "dtype") {
    if (!str("v", s)) return needs("a string 'v'");
    auto it = dtypes_.find(s);
    if (it == dtypes_.end()) return failValue("unknown dtype '" + s + "' (not in the document's dtypes table)");
    out = Value::dtype(it->second);
  } else if (form == "uop") {
    std::optional<int64_t> id = v == j.end() ? std::nullopt : asInt(*v);
    if (!id) return needs("an integer node id 'v'");
    return decodeUOpRef(*id, out);
  } else if (form == "obj") {
    if (!str("cls", cls) || v == j.end() || !v->is_object()) return needs("a string 'cls' and an object 'v'");
    return decodeObject(cls, *v, out);
  } else if (form == "bytes") {
    if (!str("v", s)) return needs("a base64 string 'v'");
    std::optional<std::string> raw = decodeBase64(s);
    if (!raw) return failValue("bad base64 in {\"t\":\"bytes\"}");
    out = Value::bytes(std::move(*raw));
  } else if (form == "list" || form == "set") {
    if (v == j.end() || !v->is_array()) return needs("an array 'v'");
    std::vector<Value> items(v->size());
    for (size_t i = 0; i < v->size(); ++i)
      if (!decode((*v)[i], items[i])) return within(".v[" + std::to_string(i) + "]");
    out = form == "list" ? Value::list(std::move(items)) : Value::set(std::move(items));
  } else if (form == "dict") {
    if (v == j.end() || !v->is_array()) return needs("an array of [key, value] pairs 'v'");
    return decodeDict(*v, out);
  } else if (form == "invalid") {
    out = Value::invalid();
  } else if (form == "callable") {
    if (!str("v", s)) return needs("a string 'v'");
    out = Value::callable(s);
  } else if (form == "repr") {
    if (!str("cls", cls) || !str("v", s)) return needs("string 'cls' and 'v'");
    out = Value::repr(cls, s);
  } else {
    return failValue("unknown value form {\"t\":\"" + form + "\"}");
  }
  return true;
}

} // namespace

Result<Graph> readGraphJSON(Context &ctx, std::string_view text, const std::string &path,
                            std::vector<Diagnostic> *warnings) {
  return Reader(ctx, text, path, warnings).read();
}

Result<Graph> readGraphJSONFile(Context &ctx, const std::string &path, std::vector<Diagnostic> *warnings) {
  std::string text, error;
  if (!rt::readFile(path, text, error)) return Diagnostic(Location{path, 0, 0, -1}, error);
  return readGraphJSON(ctx, text, path, warnings);
}

} // namespace tgc
