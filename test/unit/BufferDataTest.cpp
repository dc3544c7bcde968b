//===- BufferDataTest.cpp - loading a document's input buffer files -------===//
#include "IR/BufferData.h"
#include "IR/JSON.h"

#include "Runtime/Npy.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <unistd.h>

using namespace tgc;
namespace fs = std::filesystem;

TEST_CASE("buffer data: the .npy descr of each dtype (format §5)") {
  using namespace dtypes;
  CHECK(npyDescrFor(Bool) == "|b1");
  CHECK(npyDescrFor(Int8) == "|i1");
  CHECK(npyDescrFor(UInt8) == "|u1");
  CHECK(npyDescrFor(Int16) == "<i2");
  CHECK(npyDescrFor(UInt16) == "<u2");
  CHECK(npyDescrFor(Int32) == "<i4");
  CHECK(npyDescrFor(UInt32) == "<u4");
  CHECK(npyDescrFor(Int64) == "<i8");
  CHECK(npyDescrFor(UInt64) == "<u8");
  CHECK(npyDescrFor(Float16) == "<f2");
  CHECK(npyDescrFor(Float32) == "<f4");
  CHECK(npyDescrFor(Float64) == "<f8");
  CHECK(npyDescrFor(BFloat16) == "<u2");
  for (DType fp8 : {FP8E4M3, FP8E5M2, FP8E4M3FNUZ, FP8E5M2FNUZ}) CHECK(npyDescrFor(fp8) == "|u1");
  CHECK(npyDescrFor(Void).empty());
  CHECK(npyDescrFor(WeakInt).empty());
  CHECK(npyDescrFor(WeakFloat).empty());
}

TEST_CASE("buffer data: loading checks the file against its entry") {
  fs::path dir = fs::temp_directory_path() / ("tgc_buffer_test_" + std::to_string(::getpid()));
  fs::create_directories(dir / "inputs");
  std::string error;
  auto write = [&](const char *name, rt::NpyArray a) { REQUIRE(rt::writeNpy((dir / "inputs" / name).string(), a, error)); };
  write("ok.npy", {"<f4", {4}, std::vector<uint8_t>(16, 1)});
  write("bf16.npy", {"<u2", {2, 2}, std::vector<uint8_t>(8, 2)});
  write("int.npy", {"<i4", {4}, std::vector<uint8_t>(16, 3)});
  write("short.npy", {"<f4", {3}, std::vector<uint8_t>(12, 4)});

  Context ctx;
  std::string text =
      R"({"format":"tgc-uop-graph","version":1,"buffers":{"1":{"node":1,"dtype":"float32","numel":4,"device":"CPU","allocated":true,"file":"inputs/ok.npy"},)"
      R"("3":{"node":3,"dtype":"bfloat16","numel":4,"device":"CPU","allocated":true,"file":"inputs/bf16.npy"}},)"
      R"("dtypes":{"weakint":{"kind":"scalar","cname":"weakint","bitsize":800,"itemsize":100,"priority":0,"fmt":null},)"
      R"("float32":{"kind":"scalar","cname":"float","bitsize":32,"itemsize":4,"priority":14,"fmt":"f"},)"
      R"("bfloat16":{"kind":"scalar","cname":"__bf16","bitsize":16,"itemsize":2,"priority":13,"fmt":null},)"
      R"("void":{"kind":"scalar","cname":"void","bitsize":0,"itemsize":0,"priority":-1,"fmt":null}},)"
      R"("roots":[4],"root_names":["sink"],"nodes":[)"
      "\n"
      R"({"op":"CONST","dtype":"weakint","src":[],"arg":4,"tag":null},)"
      "\n"
      R"({"op":"BUFFER","dtype":"float32","src":[0],"arg":null,"tag":null},)"
      "\n"
      R"({"op":"CONST","dtype":"weakint","src":[],"arg":4,"tag":null},)"
      "\n"
      R"({"op":"BUFFER","dtype":"bfloat16","src":[2],"arg":null,"tag":null},)"
      "\n"
      R"({"op":"SINK","dtype":"void","src":[1,3],"arg":null,"tag":null})"
      "\n]}\n";
  Result<Graph> g = readGraphJSON(ctx, text, (dir / "graph.json").string());
  REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().str()));
  REQUIRE(g->buffers.size() == 2);

  Result<std::vector<uint8_t>> data = loadBufferFile(*g, g->buffers[0]);
  REQUIRE(data.ok());
  CHECK(*data == std::vector<uint8_t>(16, 1));
  // bfloat16 data is stored as its raw bits in a uint16 array.
  data = loadBufferFile(*g, g->buffers[1]);
  REQUIRE(data.ok());
  CHECK(data->size() == 8);

  BufferFile b = g->buffers[0];
  auto errorFor = [&](const std::string &file) {
    b.file = file;
    Result<std::vector<uint8_t>> r = loadBufferFile(*g, b);
    REQUIRE_FALSE(r.ok());
    return r.error().str();
  };
  // Errors are located at the BUFFER node (line 3 of the document).
  std::string where = (dir / "graph.json").string() + ":3:1: error: BUFFER data: ";
  CHECK(errorFor("inputs/int.npy") == where + (dir / "inputs/int.npy").string() +
                                          " holds '<i4' elements, a float32 buffer needs '<f4'");
  CHECK(errorFor("inputs/short.npy") == where + (dir / "inputs/short.npy").string() +
                                            " holds 3 elements, the buffer has 4");
  CHECK(errorFor("inputs/missing.npy").rfind(where + "cannot open '" + (dir / "inputs/missing.npy").string() + "'", 0) ==
        0);
  CHECK(errorFor("") == where + "the buffer has no data file");
  // An absolute path is used as it is.
  b.file = (dir / "inputs/ok.npy").string();
  CHECK(loadBufferFile(*g, b).ok());
  fs::remove_all(dir);
}
