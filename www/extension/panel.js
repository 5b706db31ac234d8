// The DevTools panel page: the shared memory panel, fed by the inspected page's
// __AFFON_DEVTOOLS_HOOK__ through chrome.devtools.inspectedWindow.eval.
import uPlot from './vendor/uPlot.esm.js';
import { MemoryPanel } from './shared/memory-panel.js';
import { evalSource, inspectedWindowEval } from './shared/sources.js';

const devtools = globalThis.chrome?.devtools;
const root = document.getElementById('panel');

if (!devtools?.inspectedWindow) {
  root.innerHTML = '<p id="outside">This page is the <b>affon memory</b> DevTools panel: open DevTools on a page that uses affon and choose the “affon memory” tab.</p>';
} else {
  const panel = new MemoryPanel(root, {
    source: evalSource(inspectedWindowEval(devtools.inspectedWindow)),
    uPlot,
    pollMs: 500,
    dark: devtools.panels?.themeName === 'dark',
  });
  // A navigation replaces the page (and its hook): start a fresh timeline.
  devtools.network?.onNavigated?.addListener(() => panel.reset({ resetPeak: false }));
  panel.start();
  globalThis.affonPanel = panel;
}
document.body.dataset.ready = 'true';
