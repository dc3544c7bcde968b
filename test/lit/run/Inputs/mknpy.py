#!/usr/bin/env python3
"""Writes a small .npy file for the tgc run tests (no numpy needed).

usage: mknpy.py OUT DESCR SHAPE VALUES
  DESCR  NumPy type string: <f4, <f8, <i4, |b1, ...
  SHAPE  comma-separated dims ("" = a scalar)
  VALUES comma-separated numbers, or "arange" for 0, 1, 2, ..."""
import struct
import sys

FORMATS = {"b1": "?", "i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "i8": "q", "u8": "Q",
           "f2": "e", "f4": "f", "f8": "d"}

out, descr, shape_text, values_text = sys.argv[1:5]
shape = tuple(int(d) for d in shape_text.split(",") if d)
n = 1
for d in shape:
    n *= d
fmt = FORMATS[descr[1:]]
values = list(range(n)) if values_text == "arange" else [float(v) for v in values_text.split(",")]
if fmt not in "efd":
    values = [int(v) for v in values]
header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(shape))
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
    f.write(struct.pack("<" + fmt * len(values), *values))
