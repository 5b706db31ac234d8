#!/usr/bin/env bash
# Creates (once) the Python venv the ONNX test data comes from, outside git, with the pinned packages of
# scripts/onnx/requirements.txt; prints its directory. The library itself never needs Python.
# AFFON_CACHE (default ~/.cache/affon) holds it. Needs python3 with venv and pip (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${AFFON_CACHE:-$HOME/.cache/affon}"
venv="$cache/venv"
req=scripts/onnx/requirements.txt
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$req" "$stamp"; then
  mkdir -p "$cache"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
  cp "$req" "$stamp"
fi
echo "$venv"
