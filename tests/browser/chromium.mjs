// Launches Debian's Chromium with WebGPU (SwiftShader) enabled, and serves the repository.
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';

export const CHROMIUM_ARGS = [
  '--enable-unsafe-webgpu', '--no-sandbox', '--disable-dev-shm-usage',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--no-first-run', '--disable-quic', '--js-flags=--expose-gc', '--enable-precise-memory-info',
];

export async function launch() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
  const server = await serve(0);
  const base = `http://127.0.0.1:${server.address().port}`;
  return { browser, server, base, async close() { await browser.close(); server.close(); } };
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
