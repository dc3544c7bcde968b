//===- main.cpp - the tgc driver ------------------------------------------===//
//
// tgc: an ahead-of-time compiler for tinygrad's UOp graphs. Each subcommand
// lives in its own file and is a thin layer over the libraries.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"

#include "RegisterPasses.h"

#include "IR/FollowedTinygrad.h"

#include <iostream>

#ifndef TGC_VERSION
#define TGC_VERSION "0.0.0"
#endif

int main(int argc, char **argv) {
  using namespace tgc;
  driver::registerAllPasses();

  CLI::App app{"tgc: an ahead-of-time compiler for tinygrad's UOp graphs.\n\n"
               "Reads a model graph (tinygrad's graph-format JSON, or tgc's text form) and runs the\n"
               "pipeline as named passes; every pass can print its IR.",
               "tgc"};
  app.set_version_flag("--version", "tgc " TGC_VERSION "\nfollows tinygrad " + describeFollowedTinygrad());
  app.require_subcommand(1);
  app.footer("Exit codes: 0 success, 1 invalid input or a failed pass (diagnostics on stderr),\n"
             "2 bad command line.\n\n"
             "Examples:\n"
             "  tgc opt model.json --emit=text               print a graph in the text form\n"
             "  tgc opt kernels.json --root=kernel_graph[0] --passes=verify --print-after-all\n"
             "  tgc opt cases.tgc --split-input-file --passes=verify\n"
             "  tgc opt --list-passes\n"
             "  tgc explain-schedule graph.json              why each kernel runs where it does\n"
             "  tgc run examples/mlp.tgc --output-dir out    schedule, compile and run; out/out0.npy\n\n"
             "Run 'tgc <command> --help' for a command's options.");

  int exitCode = driver::kSuccess;
  driver::addOptCommand(app, exitCode);
  driver::addExplainScheduleCommand(app, exitCode);
#if TGC_ENABLE_CODEGEN
  driver::addRunCommand(app, exitCode);
  driver::addCompileCommand(app, exitCode);
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return driver::kUsage;
  }
  return exitCode;
}
