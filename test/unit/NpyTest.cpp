//===- NpyTest.cpp - .npy reading and writing -----------------------------===//
#include "Runtime/Npy.h"

#include "Runtime/FileIO.h"

#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>

using namespace tgc::rt;

namespace {

std::vector<uint8_t> bytesOf(const std::string &s) { return std::vector<uint8_t>(s.begin(), s.end()); }

/// A .npy image built by hand: preamble, the given header text, data.
std::vector<uint8_t> npyImage(const std::string &header, const std::string &data, uint8_t major = 1) {
  std::string s = "\x93NUMPY";
  s += char(major);
  s += '\0';
  s += char(header.size() & 0xff);
  s += char(header.size() >> 8);
  if (major == 2) s += std::string(2, '\0');
  return bytesOf(s + header + data);
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  NpyArray a;
  std::string error;
  CHECK_FALSE(parseNpy(bytes, a, error));
  return error;
}

} // namespace

TEST_CASE("npy: item sizes of the supported descrs") {
  CHECK(npyItemSize("|b1") == 1);
  CHECK(npyItemSize("|i1") == 1);
  CHECK(npyItemSize("|u1") == 1);
  CHECK(npyItemSize("<i2") == 2);
  CHECK(npyItemSize("<u2") == 2);
  CHECK(npyItemSize("<i4") == 4);
  CHECK(npyItemSize("<u4") == 4);
  CHECK(npyItemSize("<i8") == 8);
  CHECK(npyItemSize("<u8") == 8);
  CHECK(npyItemSize("<f2") == 2);
  CHECK(npyItemSize("<f4") == 4);
  CHECK(npyItemSize("<f8") == 8);
  CHECK(npyItemSize(">f4") == 0);
  CHECK(npyItemSize("|f4") == 0);
  CHECK(npyItemSize("<c8") == 0);
  CHECK(npyItemSize("<f1") == 0);
  CHECK(npyItemSize("<U3") == 0);
  CHECK(npyItemSize("") == 0);
}

TEST_CASE("npy: the header layout numpy.save writes") {
  // numpy.save(f, np.arange(3, dtype=np.float32)): a 128-byte preamble, since
  // numpy leaves 21 - len("3") spaces of growth room before padding to 64.
  NpyArray a{"<f4", {3}, std::vector<uint8_t>(12, 0)};
  std::vector<uint8_t> out;
  std::string error;
  REQUIRE(encodeNpy(a, out, error));
  REQUIRE(out.size() == 128 + 12);
  std::string header(out.begin() + 10, out.begin() + 128);
  CHECK(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 0) == 0);
  CHECK(header.back() == '\n');
  CHECK(out[8] == 118);
  CHECK(out[9] == 0);

  // A scalar has no axis to grow, but its 10 + 56 header bytes still need a second 64-byte block.
  NpyArray s{"<i8", {}, std::vector<uint8_t>(8, 7)};
  REQUIRE(encodeNpy(s, out, error));
  CHECK(out.size() == 128 + 8);
  CHECK(std::string(out.begin() + 10, out.begin() + 128).rfind("{'descr': '<i8', 'fortran_order': False, 'shape': (), }", 0) == 0);
}

TEST_CASE("npy: write then read gives the same array") {
  for (const char *descr : {"|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8"}) {
    CAPTURE(descr);
    NpyArray a;
    a.descr = descr;
    a.shape = {2, 3, 4};
    for (size_t i = 0; i < 24 * npyItemSize(descr); ++i) a.data.push_back(uint8_t(i * 7 + 1));
    std::vector<uint8_t> bytes;
    std::string error;
    REQUIRE(encodeNpy(a, bytes, error));
    NpyArray b;
    REQUIRE(parseNpy(bytes, b, error));
    CHECK(b.descr == a.descr);
    CHECK(b.shape == a.shape);
    CHECK(b.data == a.data);
  }

  auto dir = std::filesystem::temp_directory_path() / ("tgc_npy_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  NpyArray a{"<f4", {2, 2}, {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64}};
  std::string error, path = (dir / "a.npy").string();
  REQUIRE(writeNpy(path, a, error));
  NpyArray b;
  REQUIRE(readNpy(path, b, error));
  float v[4];
  std::memcpy(v, b.data.data(), 16);
  CHECK(v[0] == 1.0f);
  CHECK(v[3] == 4.0f);
  CHECK(b.numel() == 4);
  std::filesystem::remove_all(dir);
}

TEST_CASE("npy: headers written by other tools") {
  // Double quotes, another key order, no trailing comma, version 2.0.
  std::string header = "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<i2\"}\n";
  NpyArray a;
  std::string error;
  REQUIRE(parseNpy(npyImage(header, std::string("\x01\x00\x02\x00", 4), 2), a, error));
  CHECK(a.descr == "<i2");
  CHECK(a.shape == std::vector<uint64_t>{2});
  // Fortran order of a 1-D array is the same layout as C order.
  REQUIRE(parseNpy(npyImage("{'descr': '|u1', 'fortran_order': True, 'shape': (3,), }\n", "abc"), a, error));
  CHECK(a.data == bytesOf("abc"));
}

TEST_CASE("npy: errors") {
  CHECK(parseError(bytesOf("PK\x03\x04 not npy")) == "not a .npy file (bad magic)");
  CHECK(parseError(bytesOf("\x93NUMP")) == "not a .npy file (bad magic)");
  CHECK(parseError(npyImage("{}", "", 3)).find("unsupported .npy version 3.0") != std::string::npos);

  std::string err = parseError(npyImage("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n", "abcd"));
  CHECK(err == "unsupported .npy descr '>f4' (big-endian data is not supported)");
  err = parseError(npyImage("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n", "abcdefgh"));
  CHECK(err == "unsupported .npy descr '<c8'");
  err = parseError(npyImage("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n", std::string(16, 'x')));
  CHECK(err == "fortran_order arrays are not supported (C order only)");
  err = parseError(npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", std::string(20, 'x')));
  CHECK(err == "truncated .npy data: shape (2, 3) of '<f4' needs 24 bytes, the file has 20");
  err = parseError(npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", std::string(6, 'x')));
  CHECK(err == ".npy file has 2 bytes after the data of shape (1,) of '<f4'");
  err = parseError(npyImage("{'descr': '<f4', 'shape': (1,), }\n", "abcd"));
  CHECK(err.find("'descr', 'fortran_order' and 'shape' are required") != std::string::npos);
  err = parseError(npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (1, x), }\n", "abcd"));
  CHECK(err.find("'shape' must be a tuple of integers") != std::string::npos);
  err = parseError(npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}\n", "abcd"));
  CHECK(err.find("unknown key 'extra'") != std::string::npos);
  // The header length field claims more bytes than the file has.
  std::vector<uint8_t> cut = npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", "");
  cut.resize(30);
  CHECK(parseError(cut) == "truncated .npy header");

  NpyArray a;
  std::string error;
  CHECK_FALSE(readNpy("/nonexistent/dir/x.npy", a, error));
  CHECK(error.find("/nonexistent/dir/x.npy") != std::string::npos);

  std::vector<uint8_t> out;
  CHECK_FALSE(encodeNpy(NpyArray{"<f4", {3}, std::vector<uint8_t>(8)}, out, error));
  CHECK(error == "data has 8 bytes, shape (3,) of '<f4' needs 12");
  CHECK_FALSE(encodeNpy(NpyArray{">f4", {1}, std::vector<uint8_t>(4)}, out, error));
}

TEST_CASE("npy: numpy's files in the corpus re-encode byte for byte") {
  namespace fs = std::filesystem;
  size_t files = 0;
  for (const auto &caseDir : fs::directory_iterator(TGC_CORPUS_DIR)) {
    for (const char *sub : {"inputs", "expected"}) {
      if (!fs::is_directory(caseDir.path() / sub)) continue;
      for (const auto &f : fs::directory_iterator(caseDir.path() / sub)) {
        if (f.path().extension() != ".npy") continue;
        CAPTURE(f.path().string());
        std::string raw, error;
        REQUIRE(readFile(f.path().string(), raw, error));
        NpyArray a;
        REQUIRE_MESSAGE(parseNpy(bytesOf(raw), a, error), error);
        std::vector<uint8_t> again;
        REQUIRE(encodeNpy(a, again, error));
        CHECK(again == bytesOf(raw));
        ++files;
      }
    }
  }
  MESSAGE("re-encoded " << files << " corpus .npy files");
  CHECK(files > 0);
}
