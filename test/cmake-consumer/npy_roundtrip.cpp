// Uses the installed runtime library: writes a .npy file, reads it back and
// prints what it read, so the test sees the headers, the archive and the
// link interface of tgc::runtime all work from an install.
#include "Runtime/Npy.h"

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: npy_roundtrip FILE.npy\n");
    return 2;
  }
  tgc::rt::NpyArray a;
  a.descr = "<i4";
  a.shape = {2, 3};
  for (int32_t v : {1, -2, 3, -4, 5, -6}) {
    uint8_t bytes[4];
    std::memcpy(bytes, &v, 4);
    a.data.insert(a.data.end(), bytes, bytes + 4);
  }
  std::string error;
  if (!tgc::rt::writeNpy(argv[1], a, error)) {
    std::fprintf(stderr, "write: %s\n", error.c_str());
    return 1;
  }
  tgc::rt::NpyArray b;
  if (!tgc::rt::readNpy(argv[1], b, error)) {
    std::fprintf(stderr, "read: %s\n", error.c_str());
    return 1;
  }
  std::printf("descr=%s shape=", b.descr.c_str());
  for (uint64_t d : b.shape) std::printf("%llu,", (unsigned long long)d);
  int64_t sum = 0;
  for (uint64_t i = 0; i < b.numel(); ++i) {
    int32_t v;
    std::memcpy(&v, b.data.data() + 4 * i, 4);
    sum += v;
  }
  std::printf(" sum=%lld\n", (long long)sum);
  return 0;
}
