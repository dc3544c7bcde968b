/* Drives the model of ew-data.tgc compiled with --weights=external: a run
 * before binding is refused, then the weights file named on the command line
 * is mapped (tgc_weights_open), bound and the model run on b = (1, 1, 1).
 * A bad file ends with the runtime's status and its description. */
#include "ew.h"

#include <stdio.h>

int main(int argc, char **argv) {
  float b[EW_N3_NUMEL] = {1, 1, 1}, out0[EW_OUT0_NUMEL], out1[EW_OUT1_NUMEL];
  tgc_weights *w = NULL;
  int i, st;
  if (argc != 2) return 2;
  printf("unbound: status %d\n", ew_run(b, out0, out1, NULL));
  st = tgc_weights_open(argv[1], &w);
  if (st == TGC_OK) st = ew_bind_weights(tgc_weights_data(w), tgc_weights_size(w));
  if (st != TGC_OK) {
    printf("refused: status %d: %s\n", st, tgc_status_string(st));
    tgc_weights_close(w);
    return 1;
  }
  st = ew_run(b, out0, out1, NULL);
  printf("status %d out0:", st);
  for (i = 0; i < EW_OUT0_NUMEL; ++i) printf(" %g", out0[i]);
  printf(" out1:");
  for (i = 0; i < EW_OUT1_NUMEL; ++i) printf(" %g", out1[i]);
  printf("\n");
  /* The whole format check without a model agrees. */
  printf("verify %d\n", tgc_weights_verify(tgc_weights_data(w), tgc_weights_size(w)));
  tgc_weights_close(w);
  return st == TGC_OK ? 0 : 1;
}
