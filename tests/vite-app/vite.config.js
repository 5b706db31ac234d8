// affon needs no Vite options: `vite build` and the dev server both resolve `affon` and
// `affon/std-telemetry` through the package's `exports`, and bundle affon_bg.wasm (which affon.js
// loads with `new URL('affon_bg.wasm', import.meta.url)`) as an asset. Both are checked by
// app.test.mjs. The only settings here keep the servers on the loopback address.
import { defineConfig } from 'vite';

export default defineConfig({
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
});
