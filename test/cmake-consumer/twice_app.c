/* The same model linked as an OBJECT under the symbol prefix `twice`: the
 * metadata table and the typed entry point, from C. */
#include "affine_object.h"

#include <stdio.h>

int main(void) {
  float x[TWICE_OUT0_NUMEL], y[TWICE_OUT0_NUMEL]; /* y = 2x + 1: same size */
  int i, status;
  for (i = 0; i < TWICE_OUT0_NUMEL; ++i) x[i] = (float)(10 * i);
  status = twice_run(x, y, NULL);
  printf("%s: %d tensors, status %d, y[5] = %g\n", twice_model.name, (int)twice_model.num_tensors, status, y[5]);
  return status;
}
