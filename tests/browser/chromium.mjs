// Launches Debian's Chromium with WebGPU (SwiftShader) enabled, and serves the repository.
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';

export const CHROMIUM_ARGS = [
  '--enable-unsafe-webgpu', '--no-sandbox', '--disable-dev-shm-usage',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--no-first-run', '--disable-quic', '--js-flags=--expose-gc', '--enable-precise-memory-info',
];

const executablePath = () => process.env.CHROMIUM ?? '/usr/bin/chromium';

/**
 * Chromium and a server of the repository. `preciseMemory: false` leaves out
 * `--enable-precise-memory-info` (Chromium's default: `performance.memory` is one fixed bucket);
 * `args` are added; `isolated: true` serves every page cross-origin isolated (COOP/COEP).
 */
export async function launch({ preciseMemory = true, args = [], isolated = false } = {}) {
  const flags = CHROMIUM_ARGS.filter((a) => preciseMemory || a !== "--enable-precise-memory-info");
  const browser = await chromium.launch({ executablePath: executablePath(), args: [...flags, ...args] });
  const server = await serve(0, { isolated });
  const base = `http://127.0.0.1:${server.address().port}`;
  return { browser, server, base, async close() { await browser.close(); server.close(); } };
}

/**
 * Chromium (headless) with the unpacked extension in `dir` installed, in a fresh profile. With
 * `devtools: true` every tab opens DevTools, which loads the extension's devtools_page.
 * `env.browser` is the persistent BrowserContext, so `open(env, path)` works as with `launch()`;
 * `env.cdp` is a browser-level CDP session (targets include DevTools frontends and their iframes).
 */
export async function launchWithExtension(dir, { devtools = false } = {}) {
  const ext = path.resolve(dir);
  const args = [...CHROMIUM_ARGS, `--disable-extensions-except=${ext}`, `--load-extension=${ext}`, '--window-size=1400,1000'];
  if (devtools) args.push('--auto-open-devtools-for-tabs');
  const context = await chromium.launchPersistentContext('', {
    executablePath: executablePath(), headless: true, args, viewport: null,
  });
  const server = await serve(0);
  const base = `http://127.0.0.1:${server.address().port}`;
  const cdp = await context.browser().newBrowserCDPSession();
  return { browser: context, context, cdp, server, base, async close() { await context.close(); server.close(); } };
}

/** Opens a page, failing on any uncaught page error. */
export async function open(env, path) {
  const page = await env.browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(new Error(m.text())); });
  await page.goto(`${env.base}${path}`);
  return { page, errors };
}
