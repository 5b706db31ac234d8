#!/usr/bin/env bash
# Regenerates src/onnx/proto.rs (committed: the library builds without protoc) from onnx.proto of the
# pinned `onnx` package (scripts/onnx/requirements.txt), with prost-build and a vendored protoc.
# Usage: scripts/gen-onnx-proto.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(scripts/onnx-venv.sh)
proto=$("$venv/bin/python" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "onnx.proto"))')
version=$("$venv/bin/python" -c 'import onnx; print(onnx.__version__)')
cargo run --quiet --release --manifest-path scripts/onnx-proto/Cargo.toml -- "$proto" src/onnx/proto.rs "$version"
rustfmt --edition 2021 src/onnx/proto.rs
echo "src/onnx/proto.rs from onnx $version's onnx.proto" >&2
