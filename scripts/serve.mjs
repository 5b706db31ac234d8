// A static file server for the demo: serves the repository root on 127.0.0.1 (no dependencies).
// Usage: node scripts/serve.mjs [port] [--isolated]   (default 8080; 0 picks a free port; --isolated
// serves cross-origin isolated, where affon samples the JS heap with measureUserAgentSpecificMemory)
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.json': 'application/json', '.wasm': 'application/wasm', '.png': 'image/png',
  '.svg': 'image/svg+xml', '.ts': 'text/plain',
};

/** Serves on `port`; with `isolated`, every response is cross-origin isolated (COOP/COEP headers). */
export function serve(port = 8080, { isolated = false } = {}) {
  const isolation = isolated
    ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' } : {};
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    let file = path.normalize(path.join(root, decodeURIComponent(url.pathname)));
    if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.readFile(file, (err, body) => {
      if (err) { res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'); return; }
      res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream',
        'cache-control': 'no-store', ...isolation }).end(body);
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rest = process.argv.slice(2);
  const isolated = rest.includes('--isolated');
  const port = rest.find((a) => a !== '--isolated');
  const server = await serve(Number(port ?? process.env.PORT ?? 8080), { isolated });
  console.log(`affon demo: http://127.0.0.1:${server.address().port}/www/`);
}
