#!/usr/bin/env bash
# Installs whatever is missing, builds pkg/, and serves the demo on 127.0.0.1 (URL printed).
# Usage: scripts/demo.sh [port]   (default 8080)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH" # where setup installs Rust when there was none
scripts/build-pkg.sh
exec node scripts/serve.mjs "${1:-8080}"
