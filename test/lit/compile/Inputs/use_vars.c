/* Drives the model of vars.tgc (variables n in [1, 8] and pos in [0, 7])
 * through its generated header only: one object run at several values, the
 * variables' table and constants, and the refusals (out of range, no
 * default) with nothing written. */
#include "vars.h"

#include <stdio.h>

static void fill(float *x, float *cache, float *out) {
  int i;
  for (i = 0; i < 8; ++i) {
    x[i] = (float)(i + 1);
    cache[i] = 10.0f * (float)i;
    out[i] = -1.0f;
  }
}

/* out[i] = 2 x[i] for i < n (the rest untouched), cache[pos] += x[pos]. */
static int check(const float *out, const float *cache, int64_t n, int64_t pos) {
  int i;
  for (i = 0; i < 8; ++i) {
    float o = i < n ? 2.0f * (float)(i + 1) : -1.0f;
    float c = 10.0f * (float)i + (i == pos ? (float)(i + 1) : 0.0f);
    if (out[i] != o || cache[i] != c) return 0;
  }
  return 1;
}

int main(void) {
  float x[VARS_S3_NUMEL], cache[VARS_S4_NUMEL], out[VARS_OUT0_NUMEL];
  int64_t n, vars[VARS_NUM_VARS];
  int st, ok = 1;
  for (n = VARS_VAR_N_MIN; n <= VARS_VAR_N_MAX; ++n) {
    int64_t pos = (n * 3) % (VARS_VAR_POS_MAX + 1);
    fill(x, cache, out);
    st = vars_run(x, cache, out, n, pos, NULL);
    if (st != TGC_OK || !check(out, cache, n, pos)) {
      printf("n=%lld pos=%lld: status %d, wrong values\n", (long long)n, (long long)pos, st);
      ok = 0;
    }
  }
  printf("every n: %s\n", ok ? "ok" : "WRONG");
  fill(x, cache, out);
  printf("n=0: %d\n", vars_run(x, cache, out, 0, 0, NULL));
  printf("n=9: %d\n", vars_run(x, cache, out, 9, 0, NULL));
  printf("pos=-1: %d\n", vars_run(x, cache, out, 1, -1, NULL));
  printf("untouched: %s\n", check(out, cache, 0, -1) ? "yes" : "NO");
  {
    void *tensors[VARS_NUM_TENSORS];
    tensors[VARS_S3_INDEX] = x;
    tensors[VARS_S4_INDEX] = cache;
    tensors[VARS_OUT0_INDEX] = out;
    printf("no values: %d\n", vars_run_vars(tensors, NULL, NULL));
    printf("defaults: %d\n", vars_run_tensors(tensors, NULL));
    vars[VARS_VAR_N_INDEX] = 2;
    vars[VARS_VAR_POS_INDEX] = 7;
    st = vars_model.run_vars(tensors, vars, NULL);
    printf("via table: %d %s\n", st, check(out, cache, 2, 7) ? "ok" : "WRONG");
  }
  printf("model abi %d vars %d\n", vars_model.abi_version, vars_model.num_vars);
  for (n = 0; n < vars_model.num_vars; ++n) {
    const tgc_var_info *v = &vars_vars[n];
    printf("var %lld %s %s [%lld, %lld] default %d\n", (long long)n, v->name, v->c_type, (long long)v->min,
           (long long)v->max, v->has_default);
  }
  printf("%s\n", tgc_status_string(TGC_ERR_VAR_RANGE));
  return !ok;
}
