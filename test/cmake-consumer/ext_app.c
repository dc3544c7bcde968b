/* The model with x.npy in an external weights file (WEIGHTS_MODE external):
 * mapped with the runtime and bound before the run. From C. */
#include "affine_ext.h"

#include <stdio.h>

int main(void) {
  float y[EXT_OUT0_NUMEL];
  tgc_weights *w = NULL;
  int status = tgc_weights_open(EXT_WEIGHTS_FILE, &w);
  if (status == TGC_OK) status = ext_bind_weights(tgc_weights_data(w), tgc_weights_size(w));
  if (status == TGC_OK) status = ext_run(y, NULL);
  printf("%s: %d weights, status %d, y = %g .. %g\n", ext_model.name, (int)EXT_NUM_WEIGHTS, status, y[0],
         y[EXT_OUT0_NUMEL - 1]);
  tgc_weights_close(w);
  return status;
}
