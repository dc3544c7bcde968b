//===- LauncherMain.cpp - main() of a model executable ---------------------===//
//
// `tgc compile --emit=exe` links this with the model's object and binds
// tgc_launcher_model to NAME_model (--defsym), so this one file serves every
// model.
//
//===----------------------------------------------------------------------===//
#include "Runtime/Launcher.h"

extern "C" const tgc_model_info tgc_launcher_model;

int main(int argc, char **argv) { return tgc::rt::launcherMain(tgc_launcher_model, argc, argv); }
