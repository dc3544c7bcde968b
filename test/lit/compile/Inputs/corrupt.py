"""Damages a copy of a weights file for the --weights=external tests.
  corrupt.py flip SRC DST OFFSET     DST = SRC with the byte at OFFSET (negative: from the end) inverted
  corrupt.py truncate SRC DST BYTES  DST = the first BYTES bytes of SRC
  corrupt.py version SRC DST N       DST = SRC with the format version (uint32 at byte 8) set to N
"""
import struct
import sys

kind, src, dst, arg = sys.argv[1:5]
data = bytearray(open(src, "rb").read())
n = int(arg)
if kind == "flip":
    data[n] ^= 0xFF
elif kind == "truncate":
    data = data[:n]
elif kind == "version":
    data[8:12] = struct.pack("<I", n)
open(dst, "wb").write(bytes(data))
