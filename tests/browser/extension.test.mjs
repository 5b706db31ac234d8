// The Chrome DevTools extension (www/extension/, Manifest V3) installed unpacked in headless
// Chromium: it installs without manifest errors, its pages load, its panel page renders a live
// affon page through chrome.devtools.inspectedWindow.eval (stubbed, then for real inside DevTools).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { launchWithExtension, open } from './chromium.mjs';
import { targetClient, until } from './devtools.mjs';

const EXT = 'www/extension';
const envs = [];
after(async () => { for (const e of envs) await e.close(); });
fs.mkdirSync('test-output', { recursive: true });

async function launch(opts) {
  const env = await launchWithExtension(EXT, opts);
  envs.push(env);
  return env;
}

async function demo(env) {
  const { page, errors } = await open(env, '/www/');
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  return { page, errors };
}

async function startLeak(page) {
  await page.selectOption('#workload', 'square-leak');
  await page.fill('#rate', '200');
  await page.click('#start');
}

test('the unpacked extension installs without errors; manifest and pages load', async () => {
  const env = await launch();
  const page = await env.context.newPage();
  await page.goto('chrome://extensions');
  const all = await page.evaluate(() => new Promise((r) => chrome.developerPrivate.getExtensionsInfo(r)));
  const ext = all.find((e) => e.name === 'affon memory');
  assert.ok(ext, `installed extensions: ${all.map((e) => e.name)}`);
  assert.equal(ext.state, 'ENABLED');
  assert.deepEqual(ext.manifestErrors, []);
  assert.deepEqual(ext.installWarnings, []);
  assert.equal(ext.location, 'UNPACKED');

  const manifest = await page.goto(`chrome-extension://${ext.id}/manifest.json`).then((r) => r.json());
  assert.equal(manifest.manifest_version, 3);
  assert.equal(manifest.devtools_page, 'devtools.html');

  // Outside DevTools the panel page says where it belongs instead of failing.
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(`chrome-extension://${ext.id}/panel.html`);
  await page.waitForSelector('body[data-ready="true"]');
  assert.match(await page.textContent('#outside'), /DevTools/);
  assert.deepEqual(errors, []);
});

test('panel.html in the extension renders a live page through chrome.devtools.inspectedWindow (stubbed)', async () => {
  const env = await launch();
  const { page: inspected, errors: pageErrors } = await demo(env);
  const info = await env.context.newPage();
  await info.goto('chrome://extensions');
  const id = (await info.evaluate(() => new Promise((r) => chrome.developerPrivate.getExtensionsInfo(r))))
    .find((e) => e.name === 'affon memory').id;
  await info.close();

  // chrome.devtools as DevTools provides it, with eval answered by the demo tab.
  const panel = await env.context.newPage();
  await panel.setViewportSize({ width: 1000, height: 900 });
  await panel.exposeBinding('__evalInInspected', (_src, expression) => inspected.evaluate(expression));
  await panel.addInitScript(() => {
    globalThis.chrome.devtools = {
      inspectedWindow: {
        eval(expression, callback) {
          globalThis.__evalInInspected(expression).then((v) => callback(v), (e) => callback(undefined, { isException: true, value: String(e) }));
        },
      },
      panels: { themeName: 'dark' },
      network: { onNavigated: { addListener() {} } },
    };
  });
  const errors = [];
  panel.on('pageerror', (e) => errors.push(e));
  await panel.goto(`chrome-extension://${id}/panel.html`);
  await panel.waitForSelector('.ap-root.ap-dark .ap-status');
  await panel.waitForFunction(() => window.affonPanel?.last?.version, null, { timeout: 15_000 });

  await startLeak(inspected);
  await panel.waitForSelector('.ap-verdict[data-verdict="ownership-leak"]', { timeout: 30_000 });
  await panel.waitForTimeout(1000);
  assert.equal((await panel.locator('.ap-grown .ap-origin').first().textContent()).trim(), 'square');
  assert.match(await panel.locator('.ap-verdict .ap-rate').textContent(), /^\+256\.0 KiB live \/ iteration$/);
  const data = await panel.evaluate(() => ({ kind: window.affonPanel.source.kind, live: window.affonPanel.timeline.live }));
  assert.equal(data.kind, 'devtools');
  assert.ok(data.live.at(-1) > data.live[0], `live ${data.live[0]} → ${data.live.at(-1)}`);
  // The session filter lists the inspected page's sessions; a trace is recorded there through the same eval.
  const sessions = await panel.locator('select[data-role="session"] option').evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(sessions, ['', 'demo']);
  await panel.click('button[data-action="trace"]');
  await panel.waitForFunction(() => window.affonPanel.tracing);
  await panel.waitForTimeout(500);
  const [download] = await Promise.all([panel.waitForEvent('download'), panel.click('button[data-action="trace"]')]);
  assert.match(download.suggestedFilename(), /^affon-trace-.*\.json$/);
  const trace = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
  assert.ok(trace.traceEvents.some((e) => e.ph === 'C' && e.name === 'memory demo' && e.args.live_bytes > 0), 'counter track of session demo');
  await panel.screenshot({ path: 'test-output/extension-panel-stubbed.png', fullPage: true });
  assert.deepEqual(errors, []);
  assert.deepEqual(pageErrors, []);
});

/** Opens the extension's "affon memory" panel in the DevTools of `page`: `{cdp, frontend, panel}`. */
async function devtoolsPanel(env, page) {
  const cdp = targetClient(env.cdp);
  const url = page.url();

  // The extension's devtools page runs in the DevTools of the demo tab and created the panel.
  const devtoolsPage = await until(async () => {
    for (const t of (await cdp.targets()).filter((x) => x.url.endsWith('/devtools.html'))) {
      const inspects = await cdp.evaluate(t.targetId,
        'new Promise((r) => chrome.devtools.inspectedWindow.eval("location.href", (v) => r(v)))');
      if (inspects === url) return t;
    }
    return null;
  }, { what: `the extension's devtools page for ${url}` });
  assert.equal(await cdp.evaluate(devtoolsPage.targetId, 'globalThis.affonPanel.created'), true);

  // Show the panel in that DevTools window (its frontend is an ordinary page target).
  const frontend = await until(async () => (await cdp.targets())
    .find((t) => t.type === 'page' && t.url.startsWith('devtools://') && t.title.includes(new URL(url).host)),
  { what: 'the DevTools frontend' });
  const tabs = await cdp.evaluate(frontend.targetId, `(async () => {
    const UI = await import('./ui/legacy/legacy.js');
    return UI.InspectorView.InspectorView.instance().tabbedPane.tabIds();
  })()`);
  const panelId = tabs.find((t) => t.startsWith(`chrome-extension://`) && t.endsWith('affonmemory'));
  assert.ok(panelId, `DevTools tabs: ${tabs}`);
  await cdp.evaluate(frontend.targetId, `(async () => {
    const UI = await import('./ui/legacy/legacy.js');
    await UI.InspectorView.InspectorView.instance().showPanel(${JSON.stringify(panelId)});
  })()`);
  const panel = await until(async () => (await cdp.targets()).find((t) => t.url.endsWith('/panel.html')),
    { what: 'panel.html inside DevTools' });

  return { cdp, frontend, panel };
}

test('inside real DevTools: the devtools page adds "affon memory", whose panel diagnoses the inspected page', async () => {
  const env = await launch({ devtools: true });
  const { page, errors } = await demo(env);
  const { cdp, frontend, panel } = await devtoolsPanel(env, page);
  await startLeak(page);
  const seen = await until(() => cdp.evaluate(panel.targetId, `(() => {
    const v = document.querySelector('.ap-verdict');
    if (v?.dataset.verdict !== 'ownership-leak') return null;
    return { origin: v.querySelector('.ap-grown .ap-origin')?.textContent, rate: v.querySelector('.ap-rate')?.textContent,
             kind: window.affonPanel.source.kind, error: window.affonPanel.error?.message ?? null };
  })()`), { what: 'the ownership-leak verdict in the DevTools panel' });
  assert.deepEqual(seen, { origin: 'square', rate: '+256.0 KiB live / iteration', kind: 'devtools', error: null });
  // Undock DevTools into a window of its own, large enough to show the whole panel, and take its picture.
  await cdp.evaluate(frontend.targetId, `(async () => {
    const UI = await import('./ui/legacy/legacy.js');
    UI.DockController.DockController.instance().setDockSide('undocked');
  })()`);
  await new Promise((r) => setTimeout(r, 500));
  const { windowId } = await env.cdp.send('Browser.getWindowForTarget', { targetId: frontend.targetId });
  await env.cdp.send('Browser.setWindowBounds', { windowId, bounds: { width: 1280, height: 1300 } });
  await new Promise((r) => setTimeout(r, 1000));
  fs.writeFileSync('test-output/extension-devtools.png', await cdp.screenshot(frontend.targetId));
  assert.deepEqual(errors, []);
});

test('inside real DevTools on a page that is not the demo: the panel finds affon through the hook and names the leak', async () => {
  const env = await launch({ devtools: true });
  const { page, errors } = await open(env, '/tests/browser/fixtures/other-page.html');
  await page.waitForFunction(() => /results kept/.test(document.querySelector('#status').textContent), null, { timeout: 30_000 });
  const { cdp, panel } = await devtoolsPanel(env, page);
  const seen = await until(() => cdp.evaluate(panel.targetId, `(() => {
    const v = document.querySelector('.ap-verdict');
    if (v?.dataset.verdict !== 'ownership-leak') return null;
    return { origin: v.querySelector('.ap-grown .ap-origin')?.textContent, kind: window.affonPanel.source.kind,
             bands: window.affonPanel.storageTimeline.bands.filter((b) => b.origin === 'exp').length };
  })()`), { what: 'the ownership-leak verdict for the other page' });
  assert.equal(seen.origin, 'exp');
  assert.equal(seen.kind, 'devtools');
  assert.ok(seen.bands >= 10, `${seen.bands} bands of exp results in the storage timeline`);
  assert.deepEqual(errors, []);
});
