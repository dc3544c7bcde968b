/* tgc as a contender (peers.py's protocol): a model compiled by `tgc compile`, linked with this file
 * (--defsym=tgc_peer_model=NAME_model) and libtgc_runtime.a. Usage: tgc_worker DIR.
 * Every input tensor n<K> reads DIR/n<K>.bin (raw, the tensor's bytes) into a master copy; the run function
 * gets preallocated tensors and a preallocated workspace (tgc_alloc_tensor: huge pages for 4 MiB and more, as
 * numpy allocates its arrays), on 2 threads of the runtime's pool.
 * Commands on stdin, one a line: `run N` answers N run times in ms (each after the inputs are rewritten
 * from the master copy), `save` writes the first output to DIR/out.tgc.bin, `quit` ends. */
#define _POSIX_C_SOURCE 200809L
#include "Memory.h"
#include "ModelABI.h"
#include "Parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const tgc_model_info tgc_peer_model;

static double nowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int readInput(const char *dir, const tgc_tensor_info *t, void *dst) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.bin", dir, t->name);
  FILE *f = fopen(path, "rb");
  if (!f) return fprintf(stderr, "tgc_worker: cannot open %s\n", path), 0;
  size_t got = fread(dst, 1, (size_t)t->bytes, f);
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (got != (size_t)t->bytes || extra)
    return fprintf(stderr, "tgc_worker: %s: expected %lld bytes\n", path, (long long)t->bytes), 0;
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) return fprintf(stderr, "usage: tgc_worker DIR\n"), 2;
  const tgc_model_info *m = &tgc_peer_model;
  int n = m->num_tensors, output = -1;
  void **live = calloc((size_t)n, sizeof *live), **master = calloc((size_t)n, sizeof *master);
  for (int i = 0; i < n; ++i) {
    const tgc_tensor_info *t = &m->tensors[i];
    live[i] = tgc_alloc_tensor(t->bytes);
    if (!live[i]) return fprintf(stderr, "tgc_worker: out of memory\n"), 1;
    if (t->role == TGC_ROLE_OUTPUT && output < 0) output = i;
    if (t->role == TGC_ROLE_OUTPUT) continue;
    master[i] = tgc_alloc_tensor(t->bytes);
    if (!master[i]) return fprintf(stderr, "tgc_worker: out of memory\n"), 1;
    if (!readInput(argv[1], t, master[i])) return 1;
    memcpy(live[i], master[i], (size_t)t->bytes);
  }
  if (output < 0) return fprintf(stderr, "tgc_worker: the model has no output\n"), 1;
  void *workspace = tgc_alloc_tensor(m->workspace_bytes);
  if (!workspace) return fprintf(stderr, "tgc_worker: out of memory\n"), 1;
  tgc_set_num_threads(2);
  printf("ready\n");
  fflush(stdout);
  char line[256];
  while (fgets(line, sizeof line, stdin)) {
    int count;
    if (sscanf(line, "run %d", &count) == 1) {
      for (int r = 0; r < count; ++r) {
        for (int i = 0; i < n; ++i)
          if (master[i]) memcpy(live[i], master[i], (size_t)m->tensors[i].bytes);
        double t0 = nowMs();
        int status = m->run(live, workspace);
        double ms = nowMs() - t0;
        if (status != TGC_OK) return fprintf(stderr, "tgc_worker: run: %s\n", tgc_status_string(status)), 1;
        printf(r ? " %.6f" : "%.6f", ms);
      }
      printf("\n");
    } else if (strncmp(line, "save", 4) == 0) {
      char path[4096];
      snprintf(path, sizeof path, "%s/out.tgc.bin", argv[1]);
      FILE *f = fopen(path, "wb");
      if (!f || fwrite(live[output], 1, (size_t)m->tensors[output].bytes, f) != (size_t)m->tensors[output].bytes)
        return fprintf(stderr, "tgc_worker: cannot write %s\n", path), 1;
      fclose(f);
      printf("ok\n");
    } else {
      break;
    }
    fflush(stdout);
  }
  return 0;
}
