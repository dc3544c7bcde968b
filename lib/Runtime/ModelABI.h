/* ModelABI.h - the C interface of a model compiled by `tgc compile`.
 *
 * Plain C99 (and C++): every generated model header carries this block
 * verbatim (tgc embeds this file), and the generic launcher includes it.
 * The guard lets several model headers share one translation unit.
 * docs/codegen.md ("The compiled model") describes the ABI.
 */
#ifndef TGC_MODEL_ABI_DEFINED
#define TGC_MODEL_ABI_DEFINED

#include <stdint.h>

#define TGC_MODEL_ABI_VERSION 1

/* Status codes of NAME_run / NAME_run_tensors: 0 = success. The entry never aborts. */
#define TGC_OK 0
#define TGC_ERR_NULL_TENSOR 1 /* a tensor pointer is NULL (and the tensor is not empty) */
#define TGC_ERR_MISALIGNED 2  /* a tensor pointer is not aligned to its item size, or the workspace to 64 */
#define TGC_ERR_NO_MEMORY 3   /* workspace == NULL and allocating it failed */

/* tgc_tensor_info.role */
#define TGC_ROLE_INPUT 0  /* read by the model */
#define TGC_ROLE_OUTPUT 1 /* written by the model */
#define TGC_ROLE_INOUT 2  /* read, then updated in place ("NAME.after") */

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

/* The whole model, for drivers that know it only at run time. */
typedef struct tgc_model_info {
  const char *name;
  const tgc_tensor_info *tensors; /* num_tensors entries, in the entry point's argument order */
  int (*run)(void *const *tensors, void *workspace); /* = NAME_run_tensors */
  int64_t workspace_bytes;
  int64_t workspace_alignment;
  int32_t abi_version; /* TGC_MODEL_ABI_VERSION */
  int32_t num_tensors;
} tgc_model_info;

#endif /* TGC_MODEL_ABI_DEFINED */
