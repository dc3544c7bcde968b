// Graph::dataPathFrom: a buffer's data file as seen from the folder the output is written to.
#include "IR/Graph.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {
struct TempTree {
  fs::path root;
  TempTree() : root(fs::temp_directory_path() / ("tgc-datapath-" + std::to_string(::getpid()))) {
    fs::remove_all(root);
    for (const char *d : {"models/m/inputs", "models/c", "out/deep", "abs"}) fs::create_directories(root / d);
    for (const char *f : {"models/m/inputs/x.npy", "models/c/y.npy", "abs/z.npy"}) std::ofstream(root / f) << "x";
    fs::create_directory_symlink(root / "models/m", root / "link");
  }
  ~TempTree() { fs::remove_all(root); }
};

// The path names the file when resolved from the output's folder.
bool namesFile(const std::string &fromOut, const fs::path &out, const fs::path &file) {
  fs::path p = fs::path(fromOut).is_absolute() ? fs::path(fromOut) : out / fromOut;
  return fs::equivalent(p, file);
}
} // namespace

TEST_CASE("graph: data files rebased to the output's folder, for every output and file") {
  TempTree t;
  tgc::Graph g;
  g.baseDir = (t.root / "models/m").string();
  const fs::path x = t.root / "models/m/inputs/x.npy";
  CHECK(g.dataPathFrom("inputs/x.npy", "") == "inputs/x.npy"); // no output folder: as given
  CHECK(g.dataPathFrom("inputs/x.npy", g.baseDir) == "inputs/x.npy");
  CHECK(g.dataPathFrom("inputs/x.npy", (t.root / "out").string()) == "../models/m/inputs/x.npy");
  CHECK(g.dataPathFrom("inputs/x.npy", (t.root / "out/deep").string()) == "../../models/m/inputs/x.npy");
  // alternating outputs and graphs on one thread: each answer is its own
  tgc::Graph viaLink;
  viaLink.baseDir = (t.root / "link").string();
  for (int round = 0; round < 2; ++round)
    for (const fs::path &out : {t.root / "out", t.root / "out/deep", t.root / "models/c", t.root / "link/inputs"})
      for (const tgc::Graph *graph : {&g, &viaLink}) {
        CAPTURE(out);
        CHECK(namesFile(graph->dataPathFrom("inputs/x.npy", out.string()), out, x));
        CHECK(namesFile(graph->dataPathFrom("./inputs/../inputs/x.npy", out.string()), out, x));
        CHECK(namesFile(graph->dataPathFrom("../c/y.npy", out.string()), out, t.root / "models/c/y.npy"));
        CHECK(namesFile(graph->dataPathFrom((t.root / "abs/z.npy").string(), out.string()), out, t.root / "abs/z.npy"));
      }
}
