//===- Weights.cpp - external weights files: format, writer, reader -------===//
//
// Every field the reader uses is checked before it is trusted: sizes against
// the file size (with overflow-free comparisons), table entries against the
// payload, the checksum over everything after the fixed header. Nothing here
// aborts or reads outside the blob; a bad file is a status code.
//
//===----------------------------------------------------------------------===//
#include "Runtime/Weights.h"

#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tgc::rt {

namespace {

void putU32(std::string &s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + size_t(i)] = char((v >> (8 * i)) & 0xff);
}
void putU64(std::string &s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + size_t(i)] = char((v >> (8 * i)) & 0xff);
}
uint32_t getU32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t getU64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint64_t alignUp(uint64_t v) { return (v + kWeightsAlignment - 1) / kWeightsAlignment * kWeightsAlignment; }

/// The fixed header, decoded.
struct Header {
  uint32_t version, count;
  uint64_t modelId, tableOffset, payloadOffset, payloadSize, checksum, fileSize;
};

/// Magic, version and size: the checks tgc_weights_open makes.
int checkHeader(const unsigned char *p, size_t size, Header &h) {
  if (size < 8 || std::memcmp(p, kWeightsMagic, 8) != 0) return TGC_ERR_WEIGHTS_MAGIC;
  if (size < kWeightsHeaderBytes) return TGC_ERR_WEIGHTS_TRUNCATED;
  h.version = getU32(p + 8);
  if (h.version != kWeightsVersion) return TGC_ERR_WEIGHTS_VERSION;
  h.count = getU32(p + 12);
  h.modelId = getU64(p + 16);
  h.tableOffset = getU64(p + 24);
  h.payloadOffset = getU64(p + 32);
  h.payloadSize = getU64(p + 40);
  h.checksum = getU64(p + 48);
  h.fileSize = getU64(p + 56);
  if (h.fileSize != size) return TGC_ERR_WEIGHTS_TRUNCATED;
  return TGC_OK;
}

/// The table and the checksum: the rest of the format.
int checkBody(const unsigned char *p, size_t size, const Header &h) {
  if (h.tableOffset != kWeightsHeaderBytes || h.payloadOffset < kWeightsHeaderBytes || h.payloadOffset % kWeightsAlignment ||
      h.payloadOffset > size || h.payloadSize != size - h.payloadOffset ||
      h.count > (h.payloadOffset - kWeightsHeaderBytes) / kWeightsEntryBytes)
    return TGC_ERR_WEIGHTS_LAYOUT;
  uint64_t end = 0; // entries are in payload order and do not overlap
  for (uint32_t i = 0; i < h.count; ++i) {
    const unsigned char *e = p + kWeightsHeaderBytes + uint64_t(i) * kWeightsEntryBytes;
    uint64_t offset = getU64(e + 48), bytes = getU64(e + 56);
    if (std::memchr(e, 0, kWeightsNameBytes) == nullptr || offset % kWeightsAlignment || offset < end ||
        offset > h.payloadSize || bytes > h.payloadSize - offset)
      return TGC_ERR_WEIGHTS_LAYOUT;
    end = offset + bytes;
  }
  if (fnv1a64(p + kWeightsHeaderBytes, size - kWeightsHeaderBytes) != h.checksum) return TGC_ERR_WEIGHTS_CHECKSUM;
  return TGC_OK;
}

} // namespace

uint64_t fnv1a64(const void *data, size_t size, uint64_t h) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

void layoutWeights(std::vector<WeightTensor> &tensors) {
  uint64_t at = 0;
  for (WeightTensor &t : tensors) {
    t.offset = int64_t(at);
    at = alignUp(at + t.data.size());
  }
}

uint64_t weightsModelId(std::string_view modelName, const std::vector<WeightTensor> &tensors) {
  std::string key = "tgc weights v1\n" + std::string(modelName) + "\n";
  for (const WeightTensor &t : tensors)
    key += t.name + " " + std::to_string(t.dtype) + " " + std::to_string(t.offset) + " " +
           std::to_string(t.data.size()) + "\n";
  return fnv1a64(key.data(), key.size());
}

bool buildWeightsFile(std::string_view modelName, const std::vector<WeightTensor> &tensors, std::string &out,
                      std::string &error) {
  uint64_t payloadOffset = alignUp(kWeightsHeaderBytes + tensors.size() * kWeightsEntryBytes);
  uint64_t payloadSize = 0;
  for (const WeightTensor &t : tensors) {
    if (t.name.size() >= kWeightsNameBytes) {
      error = "tensor name '" + t.name + "' is longer than " + std::to_string(kWeightsNameBytes - 1) + " bytes";
      return false;
    }
    if (t.offset < 0 || uint64_t(t.offset) % kWeightsAlignment || uint64_t(t.offset) < payloadSize) {
      error = "tensor '" + t.name + "' has no valid payload offset";
      return false;
    }
    payloadSize = uint64_t(t.offset) + t.data.size();
  }
  out.assign(payloadOffset + payloadSize, '\0');
  std::memcpy(out.data(), kWeightsMagic, 8);
  putU32(out, 8, kWeightsVersion);
  putU32(out, 12, uint32_t(tensors.size()));
  putU64(out, 16, weightsModelId(modelName, tensors));
  putU64(out, 24, kWeightsHeaderBytes);
  putU64(out, 32, payloadOffset);
  putU64(out, 40, payloadSize);
  putU64(out, 56, out.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const WeightTensor &t = tensors[i];
    size_t e = kWeightsHeaderBytes + i * kWeightsEntryBytes;
    std::memcpy(out.data() + e, t.name.data(), t.name.size());
    putU32(out, e + 40, uint32_t(t.dtype));
    putU64(out, e + 48, uint64_t(t.offset));
    putU64(out, e + 56, t.data.size());
    if (!t.data.empty()) std::memcpy(out.data() + payloadOffset + uint64_t(t.offset), t.data.data(), t.data.size());
  }
  putU64(out, 48, fnv1a64(out.data() + kWeightsHeaderBytes, out.size() - kWeightsHeaderBytes));
  return true;
}

} // namespace tgc::rt

using namespace tgc::rt;

struct tgc_weights {
  const void *data = nullptr;
  size_t size = 0;
  bool mapped = false;
};

extern "C" {

int tgc_weights_open(const char *path, tgc_weights **out) {
  if (!out) return TGC_ERR_NULL_TENSOR;
  *out = nullptr;
  if (!path) return TGC_ERR_WEIGHTS_IO;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return TGC_ERR_WEIGHTS_IO;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return TGC_ERR_WEIGHTS_IO;
  }
  auto *w = new (std::nothrow) tgc_weights;
  if (!w) {
    ::close(fd);
    return TGC_ERR_NO_MEMORY;
  }
  w->size = size_t(st.st_size);
  if (w->size > 0) {
    void *p = ::mmap(nullptr, w->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      w->data = p;
      w->mapped = true;
    } else {
      // No mmap (e.g. a special file system): read it into aligned memory.
      void *buf = std::aligned_alloc(kWeightsAlignment, alignUp(w->size));
      size_t got = 0;
      while (buf && got < w->size) {
        ssize_t n = ::pread(fd, static_cast<char *>(buf) + got, w->size - got, off_t(got));
        if (n <= 0) break;
        got += size_t(n);
      }
      if (!buf || got != w->size) {
        std::free(buf);
        delete w;
        ::close(fd);
        return buf ? TGC_ERR_WEIGHTS_IO : TGC_ERR_NO_MEMORY;
      }
      w->data = buf;
    }
  }
  ::close(fd);
  Header h;
  if (int s = checkHeader(static_cast<const unsigned char *>(w->data), w->size, h); s != TGC_OK) {
    tgc_weights_close(w);
    return s;
  }
  *out = w;
  return TGC_OK;
}

void tgc_weights_close(tgc_weights *w) {
  if (!w) return;
  if (w->mapped)
    ::munmap(const_cast<void *>(w->data), w->size);
  else
    std::free(const_cast<void *>(w->data));
  delete w;
}

const void *tgc_weights_data(const tgc_weights *w) { return w ? w->data : nullptr; }
size_t tgc_weights_size(const tgc_weights *w) { return w ? w->size : 0; }

int tgc_weights_verify(const void *blob, size_t size) {
  if (!blob && size) return TGC_ERR_NULL_TENSOR;
  const unsigned char *p = static_cast<const unsigned char *>(blob);
  Header h;
  if (int s = checkHeader(p, size, h); s != TGC_OK) return s;
  return checkBody(p, size, h);
}

int tgc_weights_bind(const void *blob, size_t size, const tgc_weights_spec *spec, const void **ptrs) {
  if (!blob || !spec || (!ptrs && spec->num_weights > 0)) return TGC_ERR_NULL_TENSOR;
  const unsigned char *p = static_cast<const unsigned char *>(blob);
  Header h;
  if (int s = checkHeader(p, size, h); s != TGC_OK) return s;
  if (int s = checkBody(p, size, h); s != TGC_OK) return s;
  if (h.modelId != spec->model_id || spec->num_weights < 0 || h.count != uint32_t(spec->num_weights))
    return TGC_ERR_WEIGHTS_MODEL;
  for (int32_t i = 0; i < spec->num_weights; ++i) {
    const tgc_weight_info &want = spec->weights[i];
    const unsigned char *e = p + kWeightsHeaderBytes + uint64_t(i) * kWeightsEntryBytes;
    if (std::strncmp(reinterpret_cast<const char *>(e), want.name, kWeightsNameBytes) != 0 ||
        getU32(e + 40) != uint32_t(want.dtype) || getU64(e + 48) != uint64_t(want.offset) ||
        getU64(e + 56) != uint64_t(want.bytes))
      return TGC_ERR_WEIGHTS_MODEL;
    if (want.itemsize > 1 && reinterpret_cast<uintptr_t>(p + h.payloadOffset + uint64_t(want.offset)) %
                                 uintptr_t(want.itemsize))
      return TGC_ERR_MISALIGNED;
  }
  // Only a fully checked file is bound: the pointers change all at once.
  for (int32_t i = 0; i < spec->num_weights; ++i) ptrs[i] = p + h.payloadOffset + uint64_t(spec->weights[i].offset);
  return TGC_OK;
}

const char *tgc_status_string(int status) {
  switch (status) {
  case TGC_OK: return "ok";
  case TGC_ERR_NULL_TENSOR: return "a required pointer is NULL";
  case TGC_ERR_MISALIGNED: return "a pointer is misaligned";
  case TGC_ERR_NO_MEMORY: return "out of memory";
  case TGC_ERR_NO_WEIGHTS: return "the model's external weights are not bound (call NAME_bind_weights first)";
  case TGC_ERR_WEIGHTS_IO: return "cannot open or read the weights file";
  case TGC_ERR_WEIGHTS_MAGIC: return "not a tgc weights file (bad magic)";
  case TGC_ERR_WEIGHTS_VERSION: return "unsupported weights file version";
  case TGC_ERR_WEIGHTS_TRUNCATED: return "the weights file's size does not match its header (truncated?)";
  case TGC_ERR_WEIGHTS_CHECKSUM: return "checksum mismatch: the weights file is corrupted";
  case TGC_ERR_WEIGHTS_LAYOUT: return "the weights file's tensor table is malformed";
  case TGC_ERR_WEIGHTS_MODEL: return "the weights file belongs to another model";
  case TGC_ERR_VAR_RANGE: return "a variable's value is outside its range";
  case TGC_ERR_NO_VARS: return "a variable has no value (vars is NULL and it has no default)";
  }
  return "unknown status";
}

} // extern "C"
