// The extension's devtools_page: runs once per DevTools window and adds the "affon memory" panel.
// Records the outcome on globalThis so it can be checked (tests attach to this page).
globalThis.affonPanel = { created: false, error: null };
try {
  chrome.devtools.panels.create('affon memory', '', 'panel.html', () => {
    globalThis.affonPanel.created = true;
  });
} catch (e) {
  globalThis.affonPanel.error = String(e);
}
