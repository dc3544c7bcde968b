//===- WeightsTest.cpp - external weights files: checksum, format, binding -===//
#include "Runtime/Weights.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace tgc::rt;

namespace {

uint64_t le64(const std::string &s, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | uint8_t(s[at + size_t(i)]);
  return v;
}
uint32_t le32(const std::string &s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | uint8_t(s[at + size_t(i)]);
  return v;
}

/// Three tensors of 5, 64 and 4 bytes (int8, float32 x 16, float32).
struct Fixture {
  std::string a = "abcde", b = std::string(64, '\x11'), c = "\x01\x02\x03\x04";
  std::vector<WeightTensor> table;
  std::string file;
  std::vector<tgc_weight_info> infos;
  tgc_weights_spec spec{};

  Fixture() {
    table = {{"w0", TGC_DTYPE_INT8, 1, a, 0}, {"w1", TGC_DTYPE_FLOAT32, 4, b, 0}, {"w2", TGC_DTYPE_FLOAT32, 4, c, 0}};
    layoutWeights(table);
    std::string error;
    REQUIRE(buildWeightsFile("m", table, file, error));
    for (const WeightTensor &t : table)
      infos.push_back(tgc_weight_info{t.name.c_str(), t.offset, int64_t(t.data.size()), t.dtype, t.itemsize});
    spec = tgc_weights_spec{weightsModelId("m", table), infos.data(), int32_t(infos.size()), 0};
  }
  /// The file in 64-byte aligned memory (as mmap gives it), `shift` bytes in.
  struct Blob {
    void *mem;
    const char *data;
    ~Blob() { std::free(mem); }
  };
  Blob aligned(const std::string &bytes, size_t shift = 0) const {
    void *mem = std::aligned_alloc(64, (bytes.size() + shift + 63) / 64 * 64 + 64);
    std::memcpy(static_cast<char *>(mem) + shift, bytes.data(), bytes.size());
    return Blob{mem, static_cast<const char *>(mem) + shift};
  }
};

} // namespace

TEST_CASE("weights: FNV-1a 64 against its published test vectors") {
  // From the FNV reference test suite (Fowler/Noll/Vo): fnv1a_64 of "", "a", "foobar".
  CHECK(fnv1a64("", 0) == 0xcbf29ce484222325ull);
  CHECK(fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a64("foobar", 6) == 0x85944171f73967e8ull);
  // Hashing in pieces continues the same stream.
  CHECK(fnv1a64("bar", 3, fnv1a64("foo", 3)) == 0x85944171f73967e8ull);
}

TEST_CASE("weights: layout and header fields, decoded by hand") {
  Fixture f;
  // 64-byte aligned offsets in table order: 5 bytes at 0, 64 at 64, 4 at 128.
  CHECK(f.table[0].offset == 0);
  CHECK(f.table[1].offset == 64);
  CHECK(f.table[2].offset == 128);
  // Header 64 + table 3 * 64 = 256 = payload offset; payload 128 + 4 bytes.
  REQUIRE(f.file.size() == 256 + 132);
  CHECK(f.file.compare(0, 8, "TGCWGHTS") == 0);
  CHECK(le32(f.file, 8) == 1);
  CHECK(le32(f.file, 12) == 3);
  CHECK(le64(f.file, 16) == f.spec.model_id);
  CHECK(le64(f.file, 24) == 64);
  CHECK(le64(f.file, 32) == 256);
  CHECK(le64(f.file, 40) == 132);
  CHECK(le64(f.file, 48) == fnv1a64(f.file.data() + 64, f.file.size() - 64));
  CHECK(le64(f.file, 56) == f.file.size());
  // Second entry: name, dtype, offset, size; then its data in the payload.
  CHECK(std::string(f.file.data() + 128) == "w1");
  CHECK(le32(f.file, 128 + 40) == TGC_DTYPE_FLOAT32);
  CHECK(le64(f.file, 128 + 48) == 64);
  CHECK(le64(f.file, 128 + 56) == 64);
  CHECK(f.file.compare(256 + 64, 64, f.b) == 0);
  CHECK(f.file.compare(256, 5, f.a) == 0);
  // The model identity depends on the name and the table.
  CHECK(weightsModelId("other", f.table) != f.spec.model_id);
  std::vector<WeightTensor> renamed = f.table;
  renamed[2].name = "w3";
  CHECK(weightsModelId("m", renamed) != f.spec.model_id);
  // Deterministic.
  std::string again, error;
  REQUIRE(buildWeightsFile("m", f.table, again, error));
  CHECK(again == f.file);
}

TEST_CASE("weights: bind checks the file and points into its payload") {
  Fixture f;
  auto blob = f.aligned(f.file);
  CHECK(tgc_weights_verify(blob.data, f.file.size()) == TGC_OK);
  const void *ptrs[3] = {nullptr, nullptr, nullptr};
  REQUIRE(tgc_weights_bind(blob.data, f.file.size(), &f.spec, ptrs) == TGC_OK);
  CHECK(ptrs[0] == blob.data + 256);
  CHECK(ptrs[1] == blob.data + 256 + 64);
  CHECK(ptrs[2] == blob.data + 256 + 128);
  CHECK(std::memcmp(ptrs[1], f.b.data(), 64) == 0);

  // A table that differs from the model's in any field: another model's file; nothing bound.
  auto refused = [&](tgc_weights_spec spec) {
    const void *p[3] = {nullptr, nullptr, nullptr};
    int st = tgc_weights_bind(blob.data, f.file.size(), &spec, p);
    CHECK((p[0] == nullptr && p[1] == nullptr && p[2] == nullptr));
    return st;
  };
  tgc_weights_spec s = f.spec;
  s.model_id ^= 1;
  CHECK(refused(s) == TGC_ERR_WEIGHTS_MODEL);
  s = f.spec;
  s.num_weights = 2;
  CHECK(refused(s) == TGC_ERR_WEIGHTS_MODEL);
  std::vector<tgc_weight_info> infos = f.infos;
  s = f.spec;
  s.weights = infos.data();
  infos[1].offset = 0;
  CHECK(refused(s) == TGC_ERR_WEIGHTS_MODEL);
  infos = f.infos;
  infos[2].bytes = 8;
  CHECK(refused(s) == TGC_ERR_WEIGHTS_MODEL);
  infos = f.infos;
  infos[0].name = "w9";
  CHECK(refused(s) == TGC_ERR_WEIGHTS_MODEL);
  infos = f.infos;
  infos[0].dtype = TGC_DTYPE_UINT8;
  CHECK(refused(s) == TGC_ERR_WEIGHTS_MODEL);
  // A blob whose float32 tensors would be misaligned.
  auto shifted = f.aligned(f.file, 1);
  const void *p[3] = {nullptr, nullptr, nullptr};
  CHECK(tgc_weights_bind(shifted.data, f.file.size(), &f.spec, p) == TGC_ERR_MISALIGNED);
  CHECK(tgc_weights_bind(nullptr, 0, &f.spec, p) == TGC_ERR_NULL_TENSOR);
}

TEST_CASE("weights: every damaged byte, truncation and extension is refused") {
  Fixture f;
  const void *ptrs[3];
  for (size_t i = 0; i < f.file.size(); ++i) {
    std::string bad = f.file;
    bad[i] = char(bad[i] ^ 0x5a);
    auto blob = f.aligned(bad);
    int verify = tgc_weights_verify(blob.data, bad.size());
    int bind = tgc_weights_bind(blob.data, bad.size(), &f.spec, ptrs);
    CAPTURE(i);
    if (i >= 16 && i < 24) { // the model identity: a valid file of another model
      CHECK(verify == TGC_OK);
      CHECK(bind == TGC_ERR_WEIGHTS_MODEL);
    } else if (i >= 64 && i < 256 && (i - 64) % 64 >= 48) {
      // An entry's offset or size: caught by the layout check when the value
      // no longer fits the payload, else by the checksum.
      CHECK((verify == TGC_ERR_WEIGHTS_LAYOUT || verify == TGC_ERR_WEIGHTS_CHECKSUM));
      CHECK(bind == verify);
    } else {
      int want = i < 8 ? TGC_ERR_WEIGHTS_MAGIC
                 : i < 12 ? TGC_ERR_WEIGHTS_VERSION
                 : i >= 56 && i < 64 ? TGC_ERR_WEIGHTS_TRUNCATED
                 : (i >= 12 && i < 16) || (i >= 24 && i < 48) ? TGC_ERR_WEIGHTS_LAYOUT
                                                              : TGC_ERR_WEIGHTS_CHECKSUM;
      CHECK(verify == want);
      CHECK(bind == want);
    }
  }
  for (size_t n = 0; n < f.file.size(); ++n) {
    auto blob = f.aligned(f.file.substr(0, n));
    CAPTURE(n);
    CHECK(tgc_weights_verify(blob.data, n) == (n < 8 ? TGC_ERR_WEIGHTS_MAGIC : TGC_ERR_WEIGHTS_TRUNCATED));
  }
  auto longer = f.aligned(f.file + "x");
  CHECK(tgc_weights_verify(longer.data, f.file.size() + 1) == TGC_ERR_WEIGHTS_TRUNCATED);
}

TEST_CASE("weights: a table that points outside the payload is refused before the checksum is trusted") {
  Fixture f;
  // Entry 2's size made huge, with the checksum recomputed: a well-formed lie.
  std::string bad = f.file;
  for (int i = 0; i < 8; ++i) bad[64 + 2 * 64 + 56 + size_t(i)] = char(0xff);
  uint64_t sum = fnv1a64(bad.data() + 64, bad.size() - 64);
  for (int i = 0; i < 8; ++i) bad[48 + size_t(i)] = char((sum >> (8 * i)) & 0xff);
  auto blob = f.aligned(bad);
  CHECK(tgc_weights_verify(blob.data, bad.size()) == TGC_ERR_WEIGHTS_LAYOUT);
  // A count past the table's room.
  bad = f.file;
  bad[12] = char(200);
  auto blob2 = f.aligned(bad);
  CHECK(tgc_weights_verify(blob2.data, bad.size()) == TGC_ERR_WEIGHTS_LAYOUT);
  // Names must fit their field.
  std::vector<WeightTensor> t = {{std::string(40, 'n'), TGC_DTYPE_INT8, 1, "x", 0}};
  std::string out, error;
  CHECK_FALSE(buildWeightsFile("m", t, out, error));
  CHECK(error.find("longer than 39 bytes") != std::string::npos);
}

TEST_CASE("weights: tgc_weights_open maps a file and checks its header") {
  Fixture f;
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tgc-weights-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto write = [&](const std::string &name, const std::string &bytes) {
    std::string path = (dir / name).string();
    FILE *fp = std::fopen(path.c_str(), "wb");
    REQUIRE(fp);
    std::fwrite(bytes.data(), 1, bytes.size(), fp);
    std::fclose(fp);
    return path;
  };
  tgc_weights *w = nullptr;
  REQUIRE(tgc_weights_open(write("ok.weights", f.file).c_str(), &w) == TGC_OK);
  CHECK(tgc_weights_size(w) == f.file.size());
  CHECK(reinterpret_cast<uintptr_t>(tgc_weights_data(w)) % 64 == 0);
  const void *ptrs[3];
  CHECK(tgc_weights_bind(tgc_weights_data(w), tgc_weights_size(w), &f.spec, ptrs) == TGC_OK);
  tgc_weights_close(w);
  w = reinterpret_cast<tgc_weights *>(&f); // must be reset on failure
  CHECK(tgc_weights_open((dir / "missing").c_str(), &w) == TGC_ERR_WEIGHTS_IO);
  CHECK(w == nullptr);
  CHECK(tgc_weights_open(dir.c_str(), &w) == TGC_ERR_WEIGHTS_IO);
  CHECK(tgc_weights_open(write("empty", "").c_str(), &w) == TGC_ERR_WEIGHTS_MAGIC);
  CHECK(tgc_weights_open(write("short", f.file.substr(0, 70)).c_str(), &w) == TGC_ERR_WEIGHTS_TRUNCATED);
  CHECK(w == nullptr);
  tgc_weights_close(nullptr);
  CHECK(std::string(tgc_status_string(TGC_ERR_WEIGHTS_CHECKSUM)).find("corrupted") != std::string::npos);
  fs::remove_all(dir);
}
