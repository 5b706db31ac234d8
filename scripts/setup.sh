#!/usr/bin/env bash
# Installs whatever is missing to build and test affon on Debian. Idempotent: each step checks first.
# Usage: scripts/setup.sh            (everything)
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_PACK_VERSION=0.15.1
# The wasm-bindgen CLI must match the crate exactly; read it from Cargo.lock (pinned in Cargo.toml).
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock 2>/dev/null || true)
WASM_BINDGEN_VERSION=${WASM_BINDGEN_VERSION:-0.2.130}

log() { printf '[setup] %s\n' "$*" >&2; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

apt_pkgs=()
need_pkg() { dpkg -s "$1" >/dev/null 2>&1 || apt_pkgs+=("$1"); }
# Vulkan on the CPU (lavapipe) for the native GPU tests; Chromium + driver for browser tests.
for p in mesa-vulkan-drivers libvulkan1 chromium chromium-driver; do need_pkg "$p"; done
# Node (Playwright tests, the demo's server, the npm package check) and what rustup's installer needs.
command -v node >/dev/null 2>&1 || need_pkg nodejs
command -v npm >/dev/null 2>&1 || need_pkg npm
if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  for p in curl ca-certificates build-essential; do need_pkg "$p"; done
fi
# Python with venv and pip: the ONNX test data comes from pinned PyPI packages (scripts/onnx-venv.sh)
command -v python3 >/dev/null 2>&1 || need_pkg python3
if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then need_pkg python3-venv; fi
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  log "apt-get install ${apt_pkgs[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}"
fi

# Rust through rustup (stable, minimal profile) when there is none.
if ! command -v cargo >/dev/null 2>&1; then
  if [ ! -x "$HOME/.cargo/bin/cargo" ]; then
    log "installing Rust (rustup, stable)"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  fi
  export PATH="$HOME/.cargo/bin:$PATH"
fi

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt

if ! wasm-pack --version 2>/dev/null | grep -q "$WASM_PACK_VERSION"; then
  log "cargo install wasm-pack $WASM_PACK_VERSION"
  cargo install wasm-pack --version "$WASM_PACK_VERSION" --locked
fi
if ! wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
  log "cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  # not --locked: its lockfile pins a crate the registry no longer serves (SETUP.md)
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

if [ -f package.json ]; then
  if [ ! -d node_modules ] || [ package.json -nt node_modules/.install-stamp ]; then
    log "npm install"
    npm install --no-audit --no-fund --loglevel=error
    touch node_modules/.install-stamp
  fi
fi
log "toolchain ready"
