// Page plumbing shared by the examples — not part of affon. `print` writes a line into the page's
// <pre>; `example(main)` runs an example and publishes what it returns as `window.exampleResult`
// (read by tests/browser-examples/) with `document.body.dataset.result` = 'ok' or the error message.
const out = document.querySelector('#out');
out.textContent = '';

const show = (v) => {
  if (ArrayBuffer.isView(v)) return `${v.constructor.name} [${Array.from(v).join(', ')}]`;
  if (typeof v === 'object' && v !== null) return JSON.stringify(v);
  return String(v);
};

export function print(...parts) {
  out.textContent += `${parts.map(show).join(' ')}\n`;
}

export async function example(main) {
  try {
    window.exampleResult = await main();
    document.body.dataset.result = 'ok';
  } catch (e) {
    const message = `${e.name}${e.code ? ` (${e.code})` : ''}: ${e.message}`;
    print(message);
    window.exampleResult = { error: message };
    document.body.dataset.result = message;
  }
}
