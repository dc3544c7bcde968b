// Runs the model tgc_add_model(affine ...) compiled from model/affine.tgc
// through its generated header, on the data of model/x.npy read with the
// installed runtime: y = x * 2 + 1.
#include "affine.h"

#include "Runtime/Npy.h"

#include <cstdio>
#include <cstring>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: affine_app x.npy\n");
    return 2;
  }
  tgc::rt::NpyArray x;
  std::string error;
  if (!tgc::rt::readNpy(argv[1], x, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  // The input is tensor 0 (the header also names it, after its BUFFER).
  if (x.descr != "<f4" || int64_t(x.numel()) != affine_tensors[0].numel || AFFINE_OUT0_NUMEL != 6) {
    std::fprintf(stderr, "x.npy: expected %lld float32s\n", (long long)affine_tensors[0].numel);
    return 1;
  }
  float in[6], out[AFFINE_OUT0_NUMEL];
  std::memcpy(in, x.data.data(), sizeof in);
  alignas(AFFINE_WORKSPACE_ALIGN) static unsigned char workspace[AFFINE_WORKSPACE_BYTES + 1];
  int status = affine_run(in, out, workspace);
  std::printf("status %d y =", status);
  for (float v : out) std::printf(" %g", v);
  std::printf("\n");
  return status;
}
