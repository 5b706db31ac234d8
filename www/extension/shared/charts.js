// The panel's two live time series, drawn with uPlot (passed in by the page, which loads it from its
// own vendor/ copy): tensor storage and pool bytes, and runtime memory (wasm + JS heap).
import { bytes } from './format.js';

// Drawn in this order: the pool as a filled area behind, live bytes last (on top).
export const STORAGE_SERIES = [
  { key: 'pool', label: 'pool bytes', stroke: '#16a34a', width: 1.5, fill: 'rgba(22, 163, 74, 0.12)' },
  { key: 'cached', label: 'pool cached', stroke: '#65a30d', width: 1.5, dash: [2, 3] },
  { key: 'peak', label: 'peak bytes', stroke: '#ea580c', width: 1.5, dash: [6, 4] },
  { key: 'live', label: 'live bytes', stroke: '#2563eb', width: 2.5 },
];
export const RUNTIME_SERIES = [
  { key: 'wasm', label: 'wasm memory', stroke: '#7c3aed', width: 2 },
  { key: 'jsHeap', label: 'JS heap used', stroke: '#db2777', width: 2 },
];

function options(series, height, width, dark) {
  const grid = dark ? '#3b3f46' : '#e5e7eb';
  const ink = dark ? '#c9ccd1' : '#444';
  const axis = (values, size) => ({ stroke: ink, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, values, ...(size ? { size } : {}) });
  return {
    width,
    height,
    scales: { x: { time: false }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.08 : 1024] } },
    series: [
      { label: 'time', value: (u, v) => (v == null ? '—' : `${v.toFixed(1)} s`) },
      ...series.map((s) => ({
        label: s.label, stroke: s.stroke, width: s.width, dash: s.dash, fill: s.fill, points: { show: false },
        value: (u, v) => bytes(v),
      })),
    ],
    axes: [
      axis((u, vals) => vals.map((v) => `${v} s`)),
      axis((u, vals) => vals.map((v) => bytes(v)), 78),
    ],
    cursor: { drag: { x: false, y: false } },
    legend: { live: true },
  };
}

/** Two uPlot charts under `container`; `update(timeline)` redraws them from the panel's arrays. */
export function createCharts(uPlot, container, { dark = false } = {}) {
  const doc = container.ownerDocument;
  const make = (title, series, height) => {
    const box = doc.createElement('div');
    box.className = 'ap-chart';
    const h = doc.createElement('h4');
    h.textContent = title;
    box.append(h);
    container.append(box);
    const width = Math.max(320, box.clientWidth || container.clientWidth || 600);
    const plot = new uPlot(options(series, height, width, dark), [[], ...series.map(() => [])], box);
    return { box, plot, series };
  };
  const charts = [
    make('Tensor storage and pool', STORAGE_SERIES, 230),
    make('Runtime memory (process side, not tensors)', RUNTIME_SERIES, 150),
  ];
  const resize = () => {
    for (const c of charts) {
      const w = Math.max(320, c.box.clientWidth);
      if (Math.abs(w - c.plot.width) > 2) c.plot.setSize({ width: w, height: c.plot.height });
    }
  };
  const ro = typeof ResizeObserver === 'function' ? new ResizeObserver(resize) : null;
  ro?.observe(container);
  return {
    update(timeline) {
      for (const c of charts) {
        c.plot.setData([timeline.t, ...c.series.map((s) => timeline[s.key])]);
        // Without a cursor on the chart, the legend shows the latest values.
        const n = timeline.t.length;
        if (n > 0 && !(c.plot.cursor.left >= 0)) c.plot.setLegend({ idx: n - 1 });
      }
    },
    destroy() {
      ro?.disconnect();
      for (const c of charts) c.plot.destroy();
    },
  };
}
