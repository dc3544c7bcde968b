#!/bin/bash
# Installs what bench/peers needs and is missing: PyTorch, onnx and OpenBLAS (numpy's and PyTorch's BLAS) from
# Debian, ONNX Runtime from npm. --ignore-scripts: onnxruntime-node's install script fetches GPU libraries that
# cannot be had here; the CPU library ships in the package itself.
set -euo pipefail
cd "$(dirname "$0")"
missing=()
/usr/bin/python3 -c 'import torch' 2>/dev/null || missing+=(python3-torch)
/usr/bin/python3 -c 'import onnx' 2>/dev/null || missing+=(python3-onnx)
/usr/bin/python3 -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)
dpkg -s libopenblas0-pthread >/dev/null 2>&1 || missing+=(libopenblas0-pthread)
if ((${#missing[@]})); then
  echo "bench/peers: installing ${missing[*]}"
  apt-get install -y "${missing[@]}"
fi
command -v node >/dev/null || { echo "bench/peers: error: node (Node.js >= 18) is needed for ONNX Runtime" >&2; exit 1; }
if [ ! -d node_modules/onnxruntime-node ]; then
  npm install --ignore-scripts --no-audit --no-fund
fi
