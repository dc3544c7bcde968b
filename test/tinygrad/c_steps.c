/* Runs a tgc-compiled model several times from C, as a training loop would: the
 * same tensors every run, so what a run updates in place (weights, optimizer
 * state, the random counter: the in-outs) is what the next run starts from.
 * `tgc compile graph.json -o model.o --name=model` (weights as arguments).
 * Usage: steps N IN_DIR OUT_DIR [SEED]
 *   IN_DIR/<name>.raw holds the contents of input or in-out <name> (missing: zeros);
 *   with SEED the random state is what tinygrad's Tensor.manual_seed(SEED) sets
 *   (MODEL_RANDOM_KEY_INDEX / MODEL_RANDOM_COUNTER_INDEX, TGC_RANDOM_KEY0);
 *   after run k (from 0) every output and in-out <name> is written as OUT_DIR/<k>_<name>.raw. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_raw(const char *dir, const tgc_tensor_info *t, void *data) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.raw", dir, t->name);
  FILE *f = fopen(path, "rb");
  if (!f) return 0; /* not given: zeros */
  size_t got = t->bytes ? fread(data, (size_t)t->bytes, 1, f) : 1;
  fclose(f);
  if (got != 1) fprintf(stderr, "%s: expected %lld bytes\n", path, (long long)t->bytes);
  return got == 1 ? 0 : 1;
}

static int write_raw(const char *dir, int step, const tgc_tensor_info *t, const void *data) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%d_%s.raw", dir, step, t->name);
  FILE *f = fopen(path, "wb");
  int ok = f && (t->bytes == 0 || fwrite(data, (size_t)t->bytes, 1, f) == 1);
  if (f && fclose(f) != 0) ok = 0;
  if (!ok) fprintf(stderr, "cannot write %s\n", path);
  return ok ? 0 : 1;
}

/* The random state Tensor.manual_seed(seed) sets: key {TGC_RANDOM_KEY0, seed}, counter {0, 0}. */
static int seed_random_state(void *const *tensors, unsigned long seed) {
#if defined(MODEL_RANDOM_KEY_INDEX) && defined(MODEL_RANDOM_COUNTER_INDEX)
  uint32_t *key = (uint32_t *)tensors[MODEL_RANDOM_KEY_INDEX], *counter = (uint32_t *)tensors[MODEL_RANDOM_COUNTER_INDEX];
  key[0] = TGC_RANDOM_KEY0;
  key[1] = (uint32_t)seed;
  counter[0] = counter[1] = 0;
  return 0;
#else
  (void)tensors;
  (void)seed;
  fprintf(stderr, "the model has no random state to seed\n");
  return 1;
#endif
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: %s N IN_DIR OUT_DIR [SEED]\n", argv[0]);
    return 2;
  }
  int steps = atoi(argv[1]);
  void *tensors[MODEL_NUM_TENSORS > 0 ? MODEL_NUM_TENSORS : 1];
  int bad = 0;
  for (int i = 0; i < model_model.num_tensors; ++i) {
    const tgc_tensor_info *t = &model_model.tensors[i];
    size_t bytes = ((size_t)t->bytes + 63) / 64 * 64;
    tensors[i] = aligned_alloc(64, bytes ? bytes : 64);
    if (!tensors[i]) return 1;
    memset(tensors[i], 0, bytes);
    if (t->role != TGC_ROLE_OUTPUT) bad |= read_raw(argv[2], t, tensors[i]);
  }
  if (argc == 5) bad |= seed_random_state(tensors, strtoul(argv[4], NULL, 10));
  for (int step = 0; step < steps && !bad; ++step) {
    int status = model_run_tensors(tensors, NULL);
    if (status != TGC_OK) {
      fprintf(stderr, "run %d: %s\n", step, tgc_status_string(status));
      return 1;
    }
    for (int i = 0; i < model_model.num_tensors; ++i)
      if (model_model.tensors[i].role != TGC_ROLE_INPUT) bad |= write_raw(argv[3], step, &model_model.tensors[i], tensors[i]);
  }
  for (int i = 0; i < model_model.num_tensors; ++i) free(tensors[i]);
  return bad;
}
