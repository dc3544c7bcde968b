/* Runs the compiled digits model from C (examples/tinygrad/README.md):
 *   tgc compile build/digits/graph.json -o build/digits.o --weights=embed --name=digits
 *   cc -I build examples/tinygrad/app.c build/digits.o -lm -o build/digits-app
 * The weights are in the object; the image is the model's one input. */
#include "digits.h"

#include <stdio.h>

int main(void) {
  static float image[28 * 28], logp[DIGITS_OUT0_NUMEL]; /* the input is named n<K> by its graph node */
  for (int y = 0; y < 28; ++y) /* the test pattern of model.py's image(): a diagonal stroke */
    for (int x = 0; x < 28; ++x) image[y * 28 + x] = (x - y < 2 && y - x < 2) ? 1.0f : 0.0f;
  int status = digits_run(image, logp, NULL); /* NULL: the call allocates its workspace */
  if (status != TGC_OK) {
    fprintf(stderr, "digits_run: status %d (TGC_ERR_* in digits.h)\n", status);
    return 1;
  }
  int best = 0;
  for (int i = 0; i < DIGITS_OUT0_NUMEL; ++i) {
    printf("%d %.6f\n", i, logp[i]);
    if (logp[i] > logp[best]) best = i;
  }
  printf("class %d\n", best);
  return 0;
}
