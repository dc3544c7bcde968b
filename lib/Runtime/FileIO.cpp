//===- FileIO.cpp ---------------------------------------------------------===//
#include "Runtime/FileIO.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <unistd.h>

namespace tgc::rt {

bool readFile(const std::string &path, std::string &out, std::string &error) {
  // stdio, not iostreams: libstdc++'s stream buffers throw on a read error
  // (a directory, EIO), which would escape as a crash.
  bool isStdin = path == "-";
  FILE *f = isStdin ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  out.clear();
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  bool failed = std::ferror(f);
  int savedErrno = errno;
  if (!isStdin) std::fclose(f);
  if (failed) {
    error = "cannot read '" + (isStdin ? std::string("<stdin>") : path) + "': " + std::strerror(savedErrno);
    return false;
  }
  return true;
}

bool writeFileAtomic(const std::string &path, std::string_view data, std::string &error) {
  if (path == "-") {
    std::cout.write(data.data(), std::streamsize(data.size()));
    std::cout.flush();
    return bool(std::cout);
  }
  // The temp file lives beside the target so that rename() stays on one file system.
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  ok = (std::fflush(f) == 0) && ok;
  int savedErrno = errno;
  ok = (std::fclose(f) == 0) && ok;
  if (ok && std::rename(tmp.c_str(), path.c_str()) == 0) return true;
  if (!ok) errno = savedErrno;
  error = "cannot write '" + path + "': " + std::strerror(errno);
  std::remove(tmp.c_str());
  return false;
}

} // namespace tgc::rt
