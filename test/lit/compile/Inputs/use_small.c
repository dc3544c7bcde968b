/* Drives the model of small.tgc through its generated header only: values,
 * the in-out update, the metadata table, and every error status. */
#include "small.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  float x[SMALL_S3_NUMEL], w[SMALL_S4_NUMEL], out[SMALL_OUT0_NUMEL];
  static const int64_t shape[] = SMALL_OUT0_SHAPE;
  int i, st, bad = 0;
  void *ws = aligned_alloc(SMALL_WORKSPACE_ALIGN, SMALL_WORKSPACE_BYTES);
  for (i = 0; i < 8; ++i) {
    x[i] = (float)i;
    w[i] = 10.0f * (float)i;
  }
  st = small_run(x, w, out, ws);
  printf("status %d\n", st);
  /* out = 2x + w, then w += 2x */
  for (i = 0; i < 8; ++i) {
    if (out[i] != 12.0f * (float)i || w[i] != 12.0f * (float)i) bad = 1;
  }
  printf("values %s out[7]=%g w[7]=%g\n", bad ? "WRONG" : "ok", out[7], w[7]);
  /* NULL workspace: the entry allocates one. */
  st = small_run(x, w, out, NULL);
  printf("null workspace: status %d w[1]=%g\n", st, w[1]);
  {
    void *tensors[SMALL_NUM_TENSORS];
    tensors[SMALL_S3_INDEX] = x;
    tensors[SMALL_S4_INDEX] = w;
    tensors[SMALL_OUT0_INDEX] = NULL;
    printf("null tensor: %d\n", small_run_tensors(tensors, ws));
    tensors[SMALL_OUT0_INDEX] = (char *)out + 1;
    printf("misaligned tensor: %d\n", small_run_tensors(tensors, ws));
    tensors[SMALL_OUT0_INDEX] = out;
    printf("misaligned workspace: %d\n", small_run_tensors(tensors, (char *)ws + 4));
    printf("via table: %d\n", small_model.run(tensors, ws));
  }
  printf("model %s abi %d tensors %d workspace %lld\n", small_model.name, small_model.abi_version,
         small_model.num_tensors, (long long)small_model.workspace_bytes);
  for (i = 0; i < SMALL_NUM_TENSORS; ++i) {
    const tgc_tensor_info *t = &small_tensors[i];
    printf("tensor %d %s role %d %s rank %d dim0 %lld bytes %lld\n", i, t->name, t->role, t->dtype_name, t->rank,
           (long long)t->shape[0], (long long)t->bytes);
  }
  printf("shape macro %lld, %s\n", (long long)shape[0], strcmp(SMALL_OUT0_NAME, "out0") == 0 ? "named" : "misnamed");
  free(ws);
  return bad;
}
