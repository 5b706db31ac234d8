#!/usr/bin/env bash
# Builds the ES module package into pkg/: pkg/affon.js, pkg/affon.d.ts, pkg/affon_bg.wasm,
# pkg/package.json, plus pkg/std-telemetry.js (the `std:telemetry` module); and copies uPlot (npm
# `uplot`) into the gitignored www/vendor/ and www/extension/vendor/ for the memory panel.
# Usage: scripts/build-pkg.sh [--dev]
set -euo pipefail
cd "$(dirname "$0")/.."
mode=--release
[ "${1:-}" = "--dev" ] && mode=--dev
wasm-pack build --target web --out-dir pkg --out-name affon "$mode" >&2

# The generated InitOutput lists the raw wasm exports, typed `any` where wasm-bindgen passes JS values;
# nobody calls them, so `unknown` keeps `any` out of the public declarations.
sed -i '/^export interface InitOutput/,/^}/ s/\bany\b/unknown/g' pkg/affon.d.ts
any_type='(:|=>|<|\||,)\s*any\b|\bany\s*(\[\]|[|;,)>])'
if grep -qE "$any_type" pkg/affon.d.ts; then
  echo "pkg/affon.d.ts still has 'any' in a type:" >&2; grep -nE "$any_type" pkg/affon.d.ts >&2; exit 1
fi

cat > pkg/std-telemetry.js <<'JS'
// `std:telemetry`: map it in an import map ("std:telemetry": "./pkg/std-telemetry.js") and the
// seed's `import telemetry from 'std:telemetry'` works unchanged. Initialises the module once;
// a later `await init()` in the page reuses the same instance.
import init, { telemetry } from './affon.js';
await init();
export { telemetry };
export default telemetry;
JS
cat > pkg/std-telemetry.d.ts <<'TS'
import { telemetry } from './affon.js';
export { telemetry };
export default telemetry;
TS
node -e '
const fs = require("fs");
const p = JSON.parse(fs.readFileSync("pkg/package.json", "utf8"));
p.files = Array.from(new Set([...(p.files || []), "std-telemetry.js", "std-telemetry.d.ts"]));
p.sideEffects = Array.from(new Set([...(p.sideEffects || []), "./std-telemetry.js"]));
p.exports = { ".": { types: "./affon.d.ts", default: "./affon.js" },
              "./std-telemetry": { types: "./std-telemetry.d.ts", default: "./std-telemetry.js" } };
fs.writeFileSync("pkg/package.json", JSON.stringify(p, null, 2) + "\n");
'
# uPlot for the memory panel: the demo (www/) and the DevTools extension (www/extension/, which must
# be self-contained when loaded unpacked) each get their own copy.
[ -f node_modules/uplot/dist/uPlot.esm.js ] || npm install --no-audit --no-fund --loglevel=error >&2
for dir in www/vendor www/extension/vendor; do
  mkdir -p "$dir"
  cp node_modules/uplot/dist/uPlot.esm.js node_modules/uplot/dist/uPlot.min.css node_modules/uplot/LICENSE "$dir/"
done
echo "built pkg/ ($(du -sh pkg/affon_bg.wasm | cut -f1) wasm)" >&2
