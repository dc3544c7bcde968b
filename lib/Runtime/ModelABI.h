/* ModelABI.h - the C interface of a model compiled by `tgc compile`.
 *
 * Plain C99 (and C++): every generated model header carries this block
 * verbatim (tgc embeds this file), and the generic launcher includes it.
 * The guard lets several model headers share one translation unit.
 * docs/codegen.md ("The compiled model") describes the ABI.
 */
#ifndef TGC_MODEL_ABI_DEFINED
#define TGC_MODEL_ABI_DEFINED

#include <stddef.h>
#include <stdint.h>

/* 2: tgc_model_info gained external weights, a call observer and kernel names.
 * 3: it gained variables (run_vars, vars, num_vars), appended.
 * 4: it gained the random state (random_key, random_counter). */
#define TGC_MODEL_ABI_VERSION 4

/* Status codes of NAME_run / NAME_run_tensors: 0 = success. The entry never aborts. */
#define TGC_OK 0
#define TGC_ERR_NULL_TENSOR 1 /* a tensor pointer is NULL (and the tensor is not empty) */
#define TGC_ERR_MISALIGNED 2  /* a tensor pointer is not aligned to its item size, or the workspace to 64 */
#define TGC_ERR_NO_MEMORY 3   /* workspace == NULL and allocating it failed */
/* External weights (`tgc compile --weights=external`): NAME_bind_weights, tgc_weights_open. */
#define TGC_ERR_NO_WEIGHTS 4        /* NAME_run before NAME_bind_weights succeeded */
#define TGC_ERR_WEIGHTS_IO 5        /* the weights file cannot be opened or read */
#define TGC_ERR_WEIGHTS_MAGIC 6     /* not a tgc weights file */
#define TGC_ERR_WEIGHTS_VERSION 7   /* a weights format version this runtime does not read */
#define TGC_ERR_WEIGHTS_TRUNCATED 8 /* the size differs from the one its header records (truncated or extended) */
#define TGC_ERR_WEIGHTS_CHECKSUM 9  /* the contents do not match the header's checksum (corrupted) */
#define TGC_ERR_WEIGHTS_LAYOUT 10   /* the tensor table is inconsistent (offsets, sizes, alignment) */
#define TGC_ERR_WEIGHTS_MODEL 11    /* the weights of another model (identity or tensor table differ) */
/* Variables (tinygrad Variables: a symbolic batch, position or length, bound at each run). */
#define TGC_ERR_VAR_RANGE 12 /* a variable's value is outside its [min, max]; nothing ran */
#define TGC_ERR_NO_VARS 13   /* vars == NULL, and a variable has no default value */

/* tgc_tensor_info.role */
#define TGC_ROLE_INPUT 0  /* read by the model */
#define TGC_ROLE_OUTPUT 1 /* written by the model */
#define TGC_ROLE_INOUT 2  /* read, then updated in place ("NAME.after") */

/* The random state of a model that draws random numbers (tinygrad's Tensor.rand, randn, randint, dropout, the
 * nn initializers): a key, an input, and a counter, an in-out, both uint32[2]. Each run advances the counter
 * (low word first, carried into the high one) by the 32-bit words it draws, as tinygrad's realize does: run
 * again with the counter it left for the next draws. tinygrad's Tensor.manual_seed(seed) sets the key to
 * {TGC_RANDOM_KEY0, seed} (the first word: the last four bytes, big-endian, of the SHA-256 of the device's
 * number as four big-endian bytes, 0 for the first device that draws) and the counter to {0, 0}. */
#define TGC_RANDOM_KEY0 UINT32_C(347607321)

/* tgc_tensor_info.dtype */
#define TGC_DTYPE_BOOL 1
#define TGC_DTYPE_INT8 2
#define TGC_DTYPE_UINT8 3
#define TGC_DTYPE_INT16 4
#define TGC_DTYPE_UINT16 5
#define TGC_DTYPE_INT32 6
#define TGC_DTYPE_UINT32 7
#define TGC_DTYPE_INT64 8
#define TGC_DTYPE_UINT64 9
#define TGC_DTYPE_FLOAT16 10
#define TGC_DTYPE_BFLOAT16 11
#define TGC_DTYPE_FLOAT32 12
#define TGC_DTYPE_FLOAT64 13

/* One interface tensor: dense, C order. */
typedef struct tgc_tensor_info {
  const char *name;       /* "n<K>", "out<I>", ... */
  const char *dtype_name; /* "float32", ... */
  const int64_t *shape;   /* rank entries (NULL when rank is 0) */
  int64_t numel;
  int64_t bytes;          /* numel * itemsize */
  int64_t alignment;      /* the data pointer must be a multiple of this (the item size) */
  int32_t role;           /* TGC_ROLE_* */
  int32_t dtype;          /* TGC_DTYPE_* */
  int32_t rank;
  int32_t itemsize;
} tgc_tensor_info;

/* One tensor of an external weights file, as the model expects it. */
typedef struct tgc_weight_info {
  const char *name;
  int64_t offset; /* from the start of the file's payload; a multiple of 64 */
  int64_t bytes;
  int32_t dtype;  /* TGC_DTYPE_* */
  int32_t itemsize;
} tgc_weight_info;

/* What a model needs from its weights file: its identity and tensor table. */
typedef struct tgc_weights_spec {
  uint64_t model_id; /* FNV-1a 64 of the model name and the table (docs/deploy.md) */
  const tgc_weight_info *weights;
  int32_t num_weights;
  int32_t reserved;
} tgc_weights_spec;

/* One variable: an int64_t argument of the entry, after the tensors. Buffers
 * are sized for max; a value outside [min, max] is refused (TGC_ERR_VAR_RANGE). */
typedef struct tgc_var_info {
  const char *name;      /* tinygrad's Variable name, e.g. "start_pos" */
  const char *c_type;    /* "int64_t" */
  int64_t min;
  int64_t max;
  int64_t default_value; /* the value the exported graph binds, when has_default */
  int32_t has_default;
  int32_t reserved;
} tgc_var_info;

/* Called around every call of NAME_run once set with NAME_set_observer:
 * call = its position in the schedule, kernel = an index into
 * tgc_model_info.kernel_names (-1 for a buffer copy), end = 0 before, 1 after. */
typedef void (*tgc_call_observer)(void *ctx, int32_t call, int32_t kernel, int32_t end);

/* The whole model, for drivers that know it only at run time. */
typedef struct tgc_model_info {
  const char *name;
  const tgc_tensor_info *tensors; /* num_tensors entries, in the entry point's argument order */
  int (*run)(void *const *tensors, void *workspace); /* = NAME_run_tensors */
  int64_t workspace_bytes;
  int64_t workspace_alignment;
  int32_t abi_version; /* TGC_MODEL_ABI_VERSION */
  int32_t num_tensors;
  int (*bind_weights)(const void *blob, size_t size); /* = NAME_bind_weights; NULL: no external weights */
  const tgc_weights_spec *weights;                     /* NULL likewise */
  void (*set_observer)(tgc_call_observer fn, void *ctx); /* = NAME_set_observer */
  const char *const *kernel_names;                     /* num_kernels entries (tinygrad's names, or "kernel<i>") */
  int32_t num_kernels;
  int32_t num_calls;
  /* = NAME_run_vars: vars[j] is the value of variable j (NULL: each its default) */
  int (*run_vars)(void *const *tensors, const int64_t *vars, void *workspace);
  const tgc_var_info *vars; /* num_vars entries, in argument order */
  int32_t num_vars;
  int32_t reserved;
  int32_t random_key;     /* index into tensors of the random key (see TGC_RANDOM_KEY0), -1: none */
  int32_t random_counter; /* index into tensors of the random counter, -1: none */
} tgc_model_info;

/* The runtime library (tgc::runtime, libtgc_runtime.a) reads weights files.
 * An opened file is memory-mapped (or read) and its header checked: magic,
 * version, size; NAME_bind_weights then checks the checksum and that the file
 * is this model's. Both return TGC_OK or a TGC_ERR_WEIGHTS_* code. */
typedef struct tgc_weights tgc_weights;
#ifdef __cplusplus
extern "C" {
#endif
int tgc_weights_open(const char *path, tgc_weights **out);
void tgc_weights_close(tgc_weights *w);
const void *tgc_weights_data(const tgc_weights *w);
size_t tgc_weights_size(const tgc_weights *w);
/* The whole format check (header, table, checksum) of a blob, without a model. */
int tgc_weights_verify(const void *blob, size_t size);
/* What NAME_bind_weights calls: verify, compare with `spec`, set ptrs[i] to tensor i's data. */
int tgc_weights_bind(const void *blob, size_t size, const tgc_weights_spec *spec, const void **ptrs);
/* A short English description of a TGC_OK / TGC_ERR_* status. */
const char *tgc_status_string(int status);
#ifdef __cplusplus
}
#endif

#endif /* TGC_MODEL_ABI_DEFINED */
