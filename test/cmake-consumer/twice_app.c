/* The same model linked as an OBJECT under the symbol prefix `twice`, with
 * x.npy embedded (EMBED_WEIGHTS): the output is its only tensor. From C. */
#include "affine_object.h"

#include <stdio.h>

int main(void) {
  float y[TWICE_OUT0_NUMEL];
  int status = twice_run(y, NULL);
  printf("%s: %d tensor, status %d, y = %g .. %g\n", twice_model.name, (int)twice_model.num_tensors, status, y[0],
         y[TWICE_OUT0_NUMEL - 1]);
  return status;
}
