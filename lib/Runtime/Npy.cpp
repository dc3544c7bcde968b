//===- Npy.cpp - NumPy .npy reading and writing ---------------------------===//
//
// The layout (numpy/lib/format.py): magic "\x93NUMPY", major/minor version
// bytes, a little-endian header length (uint16 in 1.0, uint32 in 2.0), an
// ASCII Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': ...}
// padded with spaces and a final '\n', then the raw data.
//
//===----------------------------------------------------------------------===//
#include "Runtime/Npy.h"

#include "Runtime/FileIO.h"

#include <cstring>
#include <limits>
#include <optional>

namespace tgc::rt {

static constexpr char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicLen = 6;
static constexpr size_t kAlign = 64;           // numpy's ARRAY_ALIGN
static constexpr size_t kGrowthAxisDigits = 21; // numpy's GROWTH_AXIS_MAX_DIGITS

uint64_t NpyArray::numel() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

size_t npyItemSize(std::string_view descr) {
  if (descr.size() < 3) return 0;
  char order = descr[0], kind = descr[1];
  std::string_view width = descr.substr(2);
  size_t size = width == "1" ? 1 : width == "2" ? 2 : width == "4" ? 4 : width == "8" ? 8 : 0;
  bool kindOk = (kind == 'b' && size == 1) || ((kind == 'i' || kind == 'u') && size) || (kind == 'f' && size >= 2);
  if (!kindOk) return 0;
  // One-byte types have no byte order ('|'); numpy also accepts '<' for them.
  if (order == '|') return size == 1 ? size : 0;
  return order == '<' ? size : 0;
}

namespace {

/// A cursor over the header's Python dict literal.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  void skipSpace() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r')) ++p_;
  }
  bool eat(char c) {
    skipSpace();
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    skipSpace();
    return p_ < s_.size() && s_[p_] == c;
  }
  std::optional<std::string> string() {
    skipSpace();
    if (p_ >= s_.size() || (s_[p_] != '\'' && s_[p_] != '"')) return std::nullopt;
    char q = s_[p_++];
    size_t start = p_;
    while (p_ < s_.size() && s_[p_] != q) ++p_;
    if (p_ >= s_.size()) return std::nullopt;
    return std::string(s_.substr(start, p_++ - start));
  }
  std::optional<bool> boolean() {
    skipSpace();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      size_t n = std::strlen(word);
      if (s_.substr(p_, n) == word) {
        p_ += n;
        return value;
      }
    }
    return std::nullopt;
  }
  std::optional<uint64_t> integer() {
    skipSpace();
    if (p_ >= s_.size() || s_[p_] < '0' || s_[p_] > '9') return std::nullopt;
    uint64_t v = 0;
    while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') {
      unsigned digit = unsigned(s_[p_++] - '0');
      if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) return std::nullopt;
      v = v * 10 + digit;
    }
    if (p_ < s_.size() && s_[p_] == 'L') ++p_; // Python 2 long suffix
    return v;
  }
  /// "(a, b, c)" with an optional trailing comma; "()" is a scalar.
  std::optional<std::vector<uint64_t>> tuple() {
    if (!eat('(')) return std::nullopt;
    std::vector<uint64_t> dims;
    while (!eat(')')) {
      auto d = integer();
      if (!d) return std::nullopt;
      dims.push_back(*d);
      if (!eat(',') && !peek(')')) return std::nullopt;
    }
    return dims;
  }
  bool atEnd() {
    skipSpace();
    return p_ == s_.size();
  }

private:
  std::string_view s_;
  size_t p_ = 0;
};

std::string shapeRepr(const std::vector<uint64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

bool fail(std::string &error, std::string message) {
  error = std::move(message);
  return false;
}

} // namespace

bool parseNpy(std::span<const uint8_t> bytes, NpyArray &out, std::string &error) {
  if (bytes.size() < kMagicLen + 2 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    return fail(error, "not a .npy file (bad magic)");
  unsigned major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2) || minor != 0)
    return fail(error, "unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor) +
                           " (1.0 and 2.0 are supported)");
  size_t lenBytes = major == 1 ? 2 : 4;
  size_t headerStart = kMagicLen + 2 + lenBytes;
  if (bytes.size() < headerStart) return fail(error, "truncated .npy header");
  size_t headerLen = 0;
  for (size_t i = 0; i < lenBytes; ++i) headerLen |= size_t(bytes[kMagicLen + 2 + i]) << (8 * i);
  if (bytes.size() - headerStart < headerLen) return fail(error, "truncated .npy header");
  std::string_view header(reinterpret_cast<const char *>(bytes.data() + headerStart), headerLen);

  HeaderParser hp(header);
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<uint64_t>> shape;
  auto bad = [&](const std::string &why) {
    return fail(error, "malformed .npy header (" + why + "): " + std::string(header.substr(0, header.find('\n'))));
  };
  if (!hp.eat('{')) return bad("expected '{'");
  while (!hp.eat('}')) {
    auto key = hp.string();
    if (!key || !hp.eat(':')) return bad("expected a quoted key and ':'");
    if (*key == "descr") {
      if (!(descr = hp.string())) return bad("'descr' must be a string");
    } else if (*key == "fortran_order") {
      if (!(fortran = hp.boolean())) return bad("'fortran_order' must be True or False");
    } else if (*key == "shape") {
      if (!(shape = hp.tuple())) return bad("'shape' must be a tuple of integers");
    } else {
      return bad("unknown key '" + *key + "'");
    }
    if (!hp.eat(',') && !hp.peek('}')) return bad("expected ',' or '}'");
  }
  if (!hp.atEnd()) return bad("text after the closing '}'");
  if (!descr || !fortran || !shape) return bad("'descr', 'fortran_order' and 'shape' are required");

  size_t itemSize = npyItemSize(*descr);
  if (!itemSize) {
    std::string why = !descr->empty() && (*descr)[0] == '>' ? " (big-endian data is not supported)" : "";
    return fail(error, "unsupported .npy descr '" + *descr + "'" + why);
  }
  // Fortran order only changes the layout of arrays with two or more axes.
  if (*fortran && shape->size() > 1) return fail(error, "fortran_order arrays are not supported (C order only)");

  uint64_t numel = 1;
  for (uint64_t d : *shape) {
    if (d && numel > std::numeric_limits<uint64_t>::max() / d / itemSize)
      return fail(error, "shape " + shapeRepr(*shape) + " is too large");
    numel *= d;
  }
  uint64_t want = numel * itemSize;
  uint64_t have = bytes.size() - headerStart - headerLen;
  if (have < want)
    return fail(error, "truncated .npy data: shape " + shapeRepr(*shape) + " of '" + *descr + "' needs " +
                           std::to_string(want) + " bytes, the file has " + std::to_string(have));
  if (have > want)
    return fail(error, ".npy file has " + std::to_string(have - want) + " bytes after the data of shape " +
                           shapeRepr(*shape) + " of '" + *descr + "'");

  out.descr = std::move(*descr);
  out.shape = std::move(*shape);
  const uint8_t *data = bytes.data() + headerStart + headerLen;
  out.data.assign(data, data + want);
  return true;
}

bool readNpy(const std::string &path, NpyArray &out, std::string &error) {
  std::string bytes;
  if (!readFile(path, bytes, error)) return false;
  if (parseNpy(std::span(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()), out, error)) return true;
  error = path + ": " + error;
  return false;
}

bool encodeNpy(const NpyArray &a, std::vector<uint8_t> &out, std::string &error) {
  size_t itemSize = npyItemSize(a.descr);
  if (!itemSize) return fail(error, "unsupported .npy descr '" + a.descr + "'");
  if (a.data.size() != a.numel() * itemSize)
    return fail(error, "data has " + std::to_string(a.data.size()) + " bytes, shape " + shapeRepr(a.shape) +
                           " of '" + a.descr + "' needs " + std::to_string(a.numel() * itemSize));
  std::string header = "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': " + shapeRepr(a.shape) + ", }";
  // Like numpy.save: room to grow the first axis in place, then spaces up to
  // a multiple of 64 bytes for the whole preamble, ending in '\n'.
  if (!a.shape.empty()) {
    size_t digits = std::to_string(a.shape[0]).size();
    if (digits < kGrowthAxisDigits) header.append(kGrowthAxisDigits - digits, ' ');
  }
  size_t preamble = kMagicLen + 2 + 2;
  header.append(kAlign - (preamble + header.size() + 1) % kAlign, ' ');
  header += '\n';
  if (header.size() > 0xffff) return fail(error, "shape " + shapeRepr(a.shape) + " needs a header too long for .npy 1.0");

  out.clear();
  out.reserve(preamble + header.size() + a.data.size());
  out.insert(out.end(), kMagic, kMagic + kMagicLen);
  out.push_back(1);
  out.push_back(0);
  out.push_back(uint8_t(header.size() & 0xff));
  out.push_back(uint8_t(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), a.data.begin(), a.data.end());
  return true;
}

bool writeNpy(const std::string &path, const NpyArray &a, std::string &error) {
  std::vector<uint8_t> bytes;
  if (!encodeNpy(a, bytes, error)) {
    error = path + ": " + error;
    return false;
  }
  return writeFileAtomic(path, std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()), error);
}

} // namespace tgc::rt
