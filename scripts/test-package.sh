#!/usr/bin/env bash
# Tests pkg/ the way a user adopts it, from the packed tarball (not from the repository):
#   1. `npm pack` pkg/ into test-output/pack/ and check the tarball's file list;
#   2. install it into a fresh Vite app (tests/vite-app/), `vite build` it, serve dist/ with
#      `vite preview` and check in headless Chromium (WebGPU) that `affon` and `affon/std-telemetry`
#      imported by package name ran a tensor op and reported live bytes (tests/vite-app/app.test.mjs);
#   3. install it into tests/types/ and type-check tests/types/usage.ts with `tsc --noEmit --strict`.
# Installs what is missing (npm); builds pkg/ (scripts/build-pkg.sh) when it is absent or older than
# anything it is built from (src/, shaders/, Cargo.toml, Cargo.lock, scripts/build-pkg.sh).
# Usage: scripts/test-package.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
step() { printf '\n==> %s\n' "$*"; }
npm_install() { npm install --no-audit --no-fund --loglevel=error "$@"; }

if [ ! -f pkg/package.json ] || [ ! -f pkg/affon_bg.wasm ] ||
  [ -n "$(find src shaders Cargo.toml Cargo.lock scripts/build-pkg.sh -newer pkg/affon_bg.wasm -print -quit)" ]; then
  scripts/build-pkg.sh
fi
[ -d node_modules/playwright-core ] || npm_install # Playwright for the browser check

step "npm pack pkg/"
pack=test-output/pack
rm -rf "$pack" && mkdir -p "$pack"
file=$(cd pkg && npm pack --silent --pack-destination "$root/$pack")
# A stable name, so the apps' package.json (`file:../../test-output/pack/affon.tgz`) never changes.
mv "$pack/$file" "$pack/affon.tgz"
tarball=$root/$pack/affon.tgz
listing=$(tar -tzf "$tarball" | sort)
for f in package.json affon.js affon.d.ts affon_bg.wasm std-telemetry.js std-telemetry.d.ts; do
  grep -qx "package/$f" <<<"$listing" || { echo "the tarball lacks $f:" >&2; echo "$listing" >&2; exit 1; }
done
grep -q '^package/snippets/.*\.js$' <<<"$listing" || { echo "the tarball lacks snippets/" >&2; exit 1; }
echo "$file: $(wc -l <<<"$listing") files, $(du -h "$tarball" | cut -f1)"

# Installs an app's pinned devDependencies when missing or at another version, then always the fresh
# tarball (npm would keep an already-installed copy of the same file: spec, so the old one goes first).
pins_installed() {
  node -e '
    const { devDependencies } = JSON.parse(require("fs").readFileSync("package.json", "utf8"));
    for (const [name, version] of Object.entries(devDependencies)) {
      if (require(`./node_modules/${name}/package.json`).version !== version) process.exit(1);
    }' 2>/dev/null
}
install_app() {
  local dir=$1
  (
    cd "$dir"
    pins_installed || npm_install
    rm -rf node_modules/affon
    npm_install "$tarball"
    cmp -s node_modules/affon/affon_bg.wasm "$root/pkg/affon_bg.wasm" \
      || { echo "$dir: the installed affon is not the current pkg/" >&2; exit 1; }
  )
}

step "Vite app (tests/vite-app): install the tarball, vite build, check in Chromium"
install_app tests/vite-app
(cd tests/vite-app && rm -rf dist && npx --no-install vite build --logLevel warn)
node --test tests/vite-app/

step "types (tests/types): tsc --noEmit --strict over usage.ts"
install_app tests/types
(cd tests/types && npx --no-install tsc --noEmit --strict -p .)
echo "tsc: tests/types/usage.ts type-checks against the packed affon.d.ts"

step "package tests passed"
