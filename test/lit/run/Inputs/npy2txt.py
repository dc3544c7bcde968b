#!/usr/bin/env python3
"""Prints a .npy file as text for FileCheck: 'dtype shape' then the elements in C order, one line.

Pure Python (the test machines have no numpy): parses the .npy 1.0/2.0 header and unpacks the little-endian data."""
import ast
import struct
import sys

FORMATS = {"b1": "?", "i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "i8": "q", "u8": "Q",
           "f2": "e", "f4": "f", "f8": "d"}

def main(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not an .npy file")
    major = raw[6]
    hlen, start = (struct.unpack("<H", raw[8:10])[0], 10) if major == 1 else (struct.unpack("<I", raw[8:12])[0], 12)
    header = ast.literal_eval(raw[start:start + hlen].decode("latin1"))
    descr, shape = header["descr"], tuple(header["shape"])
    n = 1
    for d in shape:
        n *= d
    values = struct.unpack("<" + FORMATS[descr[1:]] * n, raw[start + hlen:])
    text = [("%.6g" % v) if isinstance(v, float) else str(int(v)) for v in values]
    print(descr, list(shape))
    print(" ".join(text))

if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
