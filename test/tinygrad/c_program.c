/* A C program that links a tgc-compiled model through its generated header, as a
 * deployment would: `tgc compile graph.json -o model.o --weights=embed --name=model`
 * puts the weights in the object, so the entry point takes only the output.
 * Usage: app OUT.raw (out0's float32 values, raw). */
#include "model.h"

#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUT.raw\n", argv[0]);
    return 2;
  }
  static float out0[MODEL_OUT0_NUMEL];
  int status = model_run(out0, NULL); /* NULL: the entry allocates its workspace */
  if (status != TGC_OK) {
    fprintf(stderr, "model_run: %s\n", tgc_status_string(status));
    return 1;
  }
  FILE *f = fopen(argv[1], "wb");
  if (!f || fwrite(out0, sizeof out0, 1, f) != 1 || fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
