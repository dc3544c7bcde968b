/* Greedy text generation with the compiled decoding step (README.md, "Text generation from C"):
 *   tgc compile build/llm/graph.json -o build/llm.o --weights=embed --name=llm
 *   cc -O2 -I build examples/llm/app.c build/llm.o -lm -lpthread -o build/llm-app
 *   build/llm-app [STEPS [PROMPT]]        prints the STEPS tokens after PROMPT, one per line
 *   build/llm-app --time STEPS            also the time of each step (ms) and tokens/s
 * One call is one token: the token in, the next token out (argmax of the logits), and the KV caches read and
 * updated in place. The caches are the caller's: they start zeroed and are carried from call to call; the
 * position is the model's variable start_pos, bound at each call. */
#include "llm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  int timed = argc > 1 && strcmp(argv[1], "--time") == 0;
  int steps = argc > 1 + timed ? atoi(argv[1 + timed]) : 32;
  int32_t token = argc > 2 + timed ? atoi(argv[2 + timed]) : 1, next = 0;
  if (steps < 1 || steps > LLM_VAR_START_POS_MAX + 1) {
    fprintf(stderr, "llm-app: STEPS must be in [1, %d]\n", (int)LLM_VAR_START_POS_MAX + 1);
    return 2;
  }
  /* The step's tensors, found by role in the metadata table: the token (input), the next token (output) and the
   * KV caches (in-out state, zeroed before the first step). */
  void *tensors[LLM_NUM_TENSORS];
  for (int i = 0; i < LLM_NUM_TENSORS; ++i) {
    const tgc_tensor_info *t = &llm_tensors[i];
    if (t->role == TGC_ROLE_INPUT) tensors[i] = &token;
    else if (t->role == TGC_ROLE_OUTPUT) tensors[i] = &next;
    else if (!(tensors[i] = aligned_alloc(64, (t->bytes + 63) / 64 * 64))) return 1;
    else memset(tensors[i], 0, t->bytes);
  }
  void *workspace = aligned_alloc(LLM_WORKSPACE_ALIGN, (LLM_WORKSPACE_BYTES + LLM_WORKSPACE_ALIGN - 1) /
                                                           LLM_WORKSPACE_ALIGN * LLM_WORKSPACE_ALIGN + LLM_WORKSPACE_ALIGN);
  double total = 0;
  for (int64_t pos = 0; pos < steps; ++pos) {
    int64_t vars[LLM_NUM_VARS];
    vars[LLM_VAR_START_POS_INDEX] = pos;
    double t0 = now_ms();
    int status = llm_run_vars(tensors, vars, workspace);
    double ms = now_ms() - t0;
    if (status != TGC_OK) {
      fprintf(stderr, "llm_run_vars: status %d at start_pos %lld\n", status, (long long)pos);
      return 1;
    }
    total += ms;
    if (timed) printf("%d %lld %.4f\n", next, (long long)pos, ms);
    else printf("%d\n", next);
    token = next;
  }
  if (timed) printf("tokens/s %.1f\n", steps / (total / 1e3));
  return 0;
}
