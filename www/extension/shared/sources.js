// Where the memory panel gets its data. Both ways in run the same page-side function, `pageSide`:
// the in-page panel calls it directly, the DevTools panel sends its source text to the inspected
// page with `chrome.devtools.inspectedWindow.eval`. So both read exactly the same snapshot shape:
//
//   { time, metrics, liveTensors, pools, forgotten }     from __AFFON_DEVTOOLS_HOOK__.snapshot()
//   + { version, hookId, iteration, context }             added here
//
// `iteration` is the current value of affon's iteration counter (what liveTensors' `oldestIteration`
// is measured against): the hook's snapshot reports it (`telemetry.iteration()`). With an older
// affon, whose snapshot has no such field, `pageSide`, the first time it runs in a page, wraps
// `telemetry.nextIteration` to remember the value it returns and advances the counter once to learn
// its current value. `context` is whatever the page put in `__AFFON_DEVTOOLS_HOOK__.reportContext`
// (program, inputs, pattern) for exported reports. `startTrace` / `stopTrace` run the page's
// `telemetry.startTrace()` / `stopTrace()` (a Chrome Trace Event JSON object comes back).

/**
 * Runs in the inspected page. Self-contained: its source text is evaluated there by the DevTools
 * panel, so it must not close over anything in this module.
 */
export function pageSide(op, arg) {
  const hook = globalThis.__AFFON_DEVTOOLS_HOOK__;
  if (!hook) return { missing: true };
  let state = hook.__panelState;
  if (!state) {
    state = { id: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`, iteration: null };
    Object.defineProperty(hook, '__panelState', { value: state, enumerable: false });
    const t = hook.telemetry;
    const next = t.nextIteration;
    if (typeof t.iteration !== 'function') {
      try {
        t.nextIteration = function nextIteration() {
          const v = next.apply(this, arguments);
          state.iteration = v;
          return v;
        };
        // The counter cannot be read without advancing it: advance it once, now, to learn its
        // value (ages stay relative, so one extra step changes nothing a user reads).
        state.iteration = next.call(t);
      } catch { /* a frozen class: ages stay unknown */ }
    }
  }
  switch (op) {
    case 'snapshot': {
      const s = hook.snapshot();
      return {
        ...s,
        version: hook.version,
        hookId: state.id,
        iteration: typeof s.iteration === 'number' ? s.iteration : state.iteration,
        context: hook.reportContext ?? null,
      };
    }
    case 'diagnose': return hook.telemetry.diagnose(arg);
    case 'report': return hook.telemetry.report(arg);
    case 'resetPeak': hook.telemetry.resetPeak(); return true;
    case 'startTrace': hook.telemetry.startTrace(); return true;
    case 'stopTrace': return hook.telemetry.stopTrace();
    default: throw new Error(`affon panel: unknown operation ${op}`);
  }
}

function api(kind, call) {
  return {
    kind,
    snapshot: () => call('snapshot'),
    diagnose: (input) => call('diagnose', input),
    report: (context) => call('report', context),
    resetPeak: () => call('resetPeak'),
    startTrace: () => call('startTrace'),
    stopTrace: () => call('stopTrace'),
  };
}

/** The in-page source: reads `__AFFON_DEVTOOLS_HOOK__` of this page directly. */
export function hookSource() {
  return api('page', async (op, arg) => pageSide(op, arg));
}

/**
 * The DevTools source: `evaluate(expression) → Promise<result>` runs an expression in the inspected
 * page and resolves to its JSON value. `inspectedWindowEval(chrome.devtools.inspectedWindow)` makes one.
 */
export function evalSource(evaluate, kind = 'devtools') {
  const text = pageSide.toString();
  return api(kind, (op, arg) => evaluate(`(${text})(${JSON.stringify(op)}, ${JSON.stringify(arg ?? null)})`));
}

/** Adapts `chrome.devtools.inspectedWindow.eval` (callback style) to `evaluate(expression)`. */
export function inspectedWindowEval(inspectedWindow) {
  return (expression) => new Promise((resolve, reject) => {
    inspectedWindow.eval(expression, (result, info) => {
      if (info && (info.isException || info.isError)) {
        reject(new Error(info.value ?? info.description ?? info.code ?? 'inspectedWindow.eval failed'));
      } else {
        resolve(result);
      }
    });
  });
}
