#!/usr/bin/env bash
# Writes (once per pinned onnx version) the ONNX backend node test cases that tests/onnx_node.rs runs,
# outside git: $AFFON_CACHE/onnx-node-<version>/ (default ~/.cache/affon). Prints the directory.
# Usage: scripts/onnx-cases.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(scripts/onnx-venv.sh)
version=$("$venv/bin/python" -c 'import onnx; print(onnx.__version__)')
out="${AFFON_CACHE:-$HOME/.cache/affon}/onnx-node-$version"
if [ ! -f "$out/VERSION" ]; then
  rm -rf "$out.tmp"
  "$venv/bin/python" -W ignore scripts/onnx/node_cases.py "$out.tmp"
  rm -rf "$out" && mv "$out.tmp" "$out"
fi
echo "$out"
