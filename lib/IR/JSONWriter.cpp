//===- JSONWriter.cpp - writing graph-format JSON documents ---------------===//
//
// The inverse of JSON.cpp, in the layout of tinygrad's exporter: the header
// keys on the first line, then `"nodes":[` with one node object per line. The
// node numbering is tgc::toposort over the roots (sources, then UOps held in
// args, before their users), which is also the exporter's order, so writing a
// document that was just read reproduces it byte for byte. JSON text is
// produced as Python's json.dumps(separators=(",", ":"), ensure_ascii=True).
//
//===----------------------------------------------------------------------===//
#include "IR/JSON.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>

namespace tgc {
namespace {

using json = nlohmann::ordered_json;

void appendHex4(std::string &out, unsigned v) {
  static const char *digits = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += digits[(v >> shift) & 0xf];
}

/// A JSON string literal with everything outside printable ASCII escaped.
void appendString(std::string &out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      if (c == '"' || c == '\\') out += '\\';
      out += char(c);
      ++i;
      continue;
    }
    switch (c) {
    case '\n': out += "\\n"; ++i; continue;
    case '\r': out += "\\r"; ++i; continue;
    case '\t': out += "\\t"; ++i; continue;
    case '\b': out += "\\b"; ++i; continue;
    case '\f': out += "\\f"; ++i; continue;
    default: break;
    }
    // Decode one UTF-8 sequence; a stray byte is written as its own code point.
    unsigned cp = c, len = 1;
    if (c >= 0xc0 && c < 0xe0) cp = c & 0x1f, len = 2;
    else if (c >= 0xe0 && c < 0xf0) cp = c & 0x0f, len = 3;
    else if (c >= 0xf0 && c < 0xf8) cp = c & 0x07, len = 4;
    bool ok = len > 1 && i + len <= s.size();
    for (unsigned k = 1; ok && k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      ok = (cc & 0xc0) == 0x80;
      cp = cp << 6 | (cc & 0x3f);
    }
    if (!ok) cp = c, len = 1;
    if (cp > 0xffff) {
      cp -= 0x10000;
      appendHex4(out, 0xd800 + (cp >> 10));
      appendHex4(out, 0xdc00 + (cp & 0x3ff));
    } else {
      appendHex4(out, cp);
    }
    i += len;
  }
  out += '"';
}

void appendCompact(std::string &out, const json &j) {
  switch (j.type()) {
  case json::value_t::null: out += "null"; break;
  case json::value_t::boolean: out += j.get<bool>() ? "true" : "false"; break;
  case json::value_t::number_integer: out += std::to_string(j.get<int64_t>()); break;
  case json::value_t::number_unsigned: out += std::to_string(j.get<uint64_t>()); break;
  case json::value_t::number_float: out += pyFloatRepr(j.get<double>()); break;
  case json::value_t::string: appendString(out, j.get_ref<const std::string &>()); break;
  case json::value_t::array: {
    out += '[';
    bool first = true;
    for (const json &e : j) {
      if (!first) out += ',';
      first = false;
      appendCompact(out, e);
    }
    out += ']';
    break;
  }
  case json::value_t::object: {
    out += '{';
    bool first = true;
    for (const auto &[k, v] : j.items()) {
      if (!first) out += ',';
      first = false;
      appendString(out, k);
      out += ':';
      appendCompact(out, v);
    }
    out += '}';
    break;
  }
  default: out += "null"; break; // binary / discarded values do not occur in parsed documents
  }
}

std::string encodeBase64(const std::string &raw) {
  static const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < raw.size(); i += 3) {
    size_t n = std::min<size_t>(3, raw.size() - i);
    uint32_t w = 0;
    for (size_t k = 0; k < 3; ++k) w = w << 8 | (k < n ? static_cast<unsigned char>(raw[i + k]) : 0);
    for (size_t k = 0; k < 4; ++k) out += k <= n ? alphabet[(w >> (18 - 6 * k)) & 0x3f] : '=';
  }
  return out;
}

class Writer {
public:
  Writer(const Graph &g, const std::string &outputDir) : g_(g), outputDir_(outputDir) {}
  std::string write();

private:
  void value(std::string &out, const Value &v);
  void tagged(std::string &out, std::string_view t, const std::string *cls = nullptr) {
    out += "{\"t\":";
    appendString(out, t);
    if (cls) {
      out += ",\"cls\":";
      appendString(out, *cls);
    }
  }
  // {"t": t, ("cls": cls,) "v": s} for a value written as the string s.
  void taggedString(std::string &out, std::string_view t, std::string_view s, const std::string *cls = nullptr) {
    tagged(out, t, cls);
    out += ",\"v\":";
    appendString(out, s);
    out += '}';
  }
  void set(std::string &out, const Value &v);
  void dict(std::string &out, const Value &v);
  void object(std::string &out, const Value &v);
  void items(std::string &out, const std::vector<Value> &vs) {
    out += '[';
    for (size_t i = 0; i < vs.size(); ++i) {
      if (i) out += ',';
      value(out, vs[i]);
    }
    out += ']';
  }
  void noteDType(DType dt) {
    if (std::find(dtypes_.begin(), dtypes_.end(), dt) == dtypes_.end()) dtypes_.push_back(dt);
  }
  void noteDTypes(const Value &v) {
    if (v.kind() == Value::Kind::DType) noteDType(v.getDType());
    else if (v.kind() != Value::Kind::UOp)
      for (const Value &e : v.items()) noteDTypes(e);
  }

  const Graph &g_;
  const std::string &outputDir_;
  std::unordered_map<const UOp *, int64_t> ids_;
  std::vector<DType> dtypes_; ///< in order of first use
};

void Writer::value(std::string &out, const Value &v) {
  using K = Value::Kind;
  switch (v.kind()) {
  case K::None: out += "null"; break;
  case K::Bool: out += v.getBool() ? "true" : "false"; break;
  case K::Int: out += std::to_string(v.getInt()); break;
  case K::UInt: out += std::to_string(v.getUInt()); break;
  case K::BigInt: taggedString(out, "int", v.str()); break;
  case K::Float: taggedString(out, "float", pyFloatRepr(v.getFloat())); break;
  case K::Str: appendString(out, v.str()); break;
  case K::Tuple: items(out, v.items()); break;
  case K::List:
    tagged(out, "list");
    out += ",\"v\":";
    items(out, v.items());
    out += '}';
    break;
  case K::Set: set(out, v); break;
  case K::Dict: dict(out, v); break;
  case K::Enum: taggedString(out, "enum", v.str(), &v.cls()); break;
  case K::DType: taggedString(out, "dtype", v.getDType().name()); break;
  case K::UOp:
    tagged(out, "uop");
    out += ",\"v\":" + std::to_string(ids_.at(v.getUOp())) + "}";
    break;
  case K::Obj: object(out, v); break;
  case K::Bytes: taggedString(out, "bytes", encodeBase64(v.str())); break;
  case K::Invalid:
    tagged(out, "invalid");
    out += '}';
    break;
  case K::Callable: taggedString(out, "callable", v.str()); break;
  case K::Repr: taggedString(out, "repr", v.str(), &v.cls()); break;
  }
}

// Sets have no order; the format sorts the elements by their JSON text.
void Writer::set(std::string &out, const Value &v) {
  std::vector<std::string> texts;
  for (const Value &e : v.items()) value(texts.emplace_back(), e);
  std::sort(texts.begin(), texts.end());
  tagged(out, "set");
  out += ",\"v\":[";
  for (size_t i = 0; i < texts.size(); ++i) out += (i ? "," : "") + texts[i];
  out += "]}";
}

// A dict as its [key, value] pairs.
void Writer::dict(std::string &out, const Value &v) {
  tagged(out, "dict");
  out += ",\"v\":[";
  const auto &kv = v.items();
  for (size_t i = 0; i + 1 < kv.size(); i += 2) {
    out += i ? ",[" : "[";
    value(out, kv[i]);
    out += ',';
    value(out, kv[i + 1]);
    out += ']';
  }
  out += "]}";
}

// A record as a JSON object of its fields.
void Writer::object(std::string &out, const Value &v) {
  tagged(out, "obj", &v.cls());
  out += ",\"v\":{";
  const auto &names = v.fieldNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    appendString(out, names[i]);
    out += ':';
    value(out, v[i]);
  }
  out += "}}";
}

std::string Writer::write() {
  // Every node the document mentions: the roots' closure, then the
  // buffer_map and buffer nodes (normally already inside it).
  std::vector<const UOp *> starts(g_.roots.begin(), g_.roots.end());
  for (const auto &[tensor, buffer] : g_.bufferMap) starts.insert(starts.end(), {tensor, buffer});
  for (const BufferFile &b : g_.buffers) starts.push_back(b.node);
  ToposortOptions opts;
  opts.argRefs = true;
  std::vector<const UOp *> order = toposort(starts, opts);

  ids_.reserve(order.size());
  for (const UOp *u : order) {
    ids_.emplace(u, int64_t(ids_.size()));
    noteDType(u->dtype());
    noteDTypes(u->arg());
    noteDTypes(u->tag());
  }

  std::string out = "{\"format\":\"tgc-uop-graph\",\"version\":1";
  for (const auto &[key, v] : g_.extra.items()) {
    if (key == "format" || key == "version" || key == "buffer_map" || key == "buffers" || key == "dtypes" ||
        key == "roots" || key == "root_names" || key == "nodes")
      continue; // modelled by Graph itself
    out += ',';
    appendString(out, key);
    out += ':';
    appendCompact(out, v);
  }
  if (!g_.bufferMap.empty()) {
    out += ",\"buffer_map\":[";
    for (size_t i = 0; i < g_.bufferMap.size(); ++i)
      out += (i ? ",[" : "[") + std::to_string(ids_.at(g_.bufferMap[i].first)) + "," +
             std::to_string(ids_.at(g_.bufferMap[i].second)) + "]";
    out += ']';
  }
  if (!g_.buffers.empty()) {
    out += ",\"buffers\":{";
    for (size_t i = 0; i < g_.buffers.size(); ++i) {
      const BufferFile &b = g_.buffers[i];
      std::string id = std::to_string(ids_.at(b.node));
      out += (i ? ",\"" : "\"") + id + "\":{\"node\":" + id + ",\"dtype\":";
      appendString(out, b.dtype.name());
      out += ",\"numel\":" + std::to_string(b.numel) + ",\"device\":";
      appendString(out, b.device);
      out += std::string(",\"allocated\":") + (b.allocated ? "true" : "false") + ",\"file\":";
      if (b.file.empty()) out += "null";
      else appendString(out, g_.dataPathFrom(b.file, outputDir_));
      out += '}';
    }
    out += '}';
  }
  out += ",\"dtypes\":{";
  for (size_t i = 0; i < dtypes_.size(); ++i) {
    const DTypeInfo &d = dtypes_[i].info();
    if (i) out += ',';
    appendString(out, d.name);
    out += ":{\"kind\":\"scalar\",\"cname\":";
    appendString(out, d.cname);
    out += ",\"bitsize\":" + std::to_string(d.bitsize) + ",\"itemsize\":" + std::to_string(d.itemsize()) +
           ",\"priority\":" + std::to_string(d.priority) + ",\"fmt\":";
    if (d.fmt) appendString(out, std::string(1, d.fmt));
    else out += "null";
    out += '}';
  }
  out += "},\"roots\":[";
  for (size_t i = 0; i < g_.roots.size(); ++i) out += (i ? "," : "") + std::to_string(ids_.at(g_.roots[i]));
  out += "],\"root_names\":[";
  for (size_t i = 0; i < g_.roots.size(); ++i) {
    if (i) out += ',';
    appendString(out, i < g_.rootNames.size() ? g_.rootNames[i] : std::to_string(i));
  }
  out += "],\"nodes\":[\n";

  for (size_t n = 0; n < order.size(); ++n) {
    const UOp *u = order[n];
    if (n) out += ",\n";
    out += "{\"op\":";
    appendString(out, opName(u->op()));
    out += ",\"dtype\":";
    appendString(out, u->dtype().name());
    out += ",\"src\":[";
    for (size_t k = 0; k < u->numSrc(); ++k) out += (k ? "," : "") + std::to_string(ids_.at(u->src(k)));
    out += "],\"arg\":";
    value(out, u->arg());
    out += ",\"tag\":";
    value(out, u->tag());
    if (auto it = g_.nodeExtra.find(u); it != g_.nodeExtra.end())
      for (const auto &[key, v] : it->second.items()) {
        if (key == "op" || key == "dtype" || key == "src" || key == "arg" || key == "tag") continue;
        out += ',';
        appendString(out, key);
        out += ':';
        appendCompact(out, v);
      }
    out += '}';
  }
  out += "\n]}\n";
  return out;
}

} // namespace

std::string writeGraphJSON(const Graph &g, const std::string &outputDir) { return Writer(g, outputDir).write(); }

} // namespace tgc
