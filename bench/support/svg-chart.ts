/**
 * A small line-chart writer for benchmark curves: panels in a grid, each with its own y axis
 * (from 0), a shared kind of x axis, one polyline and point markers per series, and a legend.
 * Plain SVG 1.1 text, so the chart is reviewable in a diff and needs no plotting library.
 */

export interface Series {
  name: string;
  points: [number, number][];
}

export interface Panel {
  title: string;
  yLabel: string;
  series: Series[];
}

export interface Chart {
  title: string;
  xLabel: string;
  panels: Panel[];
  /** Panels per row. */
  columns?: number;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];
const PANEL_W = 460;
const PANEL_H = 300;
const MARGIN = { left: 64, right: 16, top: 46, bottom: 46 };

/** XML text escaping. */
function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A "nice" upper bound and step for an axis from 0 to `max` with about 5 ticks. */
export function niceAxis(max: number): { top: number; step: number } {
  if (!(max > 0)) return { top: 1, step: 0.2 };
  const raw = max / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  return { top: Math.ceil(max / step - 1e-9) * step, step };
}

/** Tick text without float noise (0.30000000000000004 -> 0.3). */
function tick(v: number): string {
  return String(Number(v.toPrecision(6)));
}

function panelSvg(panel: Panel, xLabel: string, ox: number, oy: number): string {
  const w = PANEL_W - MARGIN.left - MARGIN.right;
  const h = PANEL_H - MARGIN.top - MARGIN.bottom;
  const all = panel.series.flatMap((s) => s.points);
  const x = niceAxis(Math.max(...all.map((p) => p[0])));
  const y = niceAxis(Math.max(...all.map((p) => p[1])));
  const px = (v: number) => ox + MARGIN.left + (v / x.top) * w;
  const py = (v: number) => oy + MARGIN.top + h - (v / y.top) * h;
  const out: string[] = [];
  out.push(
    `<text x="${ox + MARGIN.left}" y="${oy + 20}" font-size="14" font-weight="bold">${esc(panel.title)}</text>`,
  );
  for (let v = 0; v <= y.top + 1e-9; v += y.step) {
    out.push(
      `<line x1="${px(0)}" x2="${px(x.top)}" y1="${py(v)}" y2="${py(v)}" stroke="#ddd"/>`,
      `<text x="${px(0) - 6}" y="${py(v) + 4}" font-size="11" text-anchor="end">${tick(v)}</text>`,
    );
  }
  for (let v = 0; v <= x.top + 1e-9; v += x.step) {
    out.push(
      `<line x1="${px(v)}" x2="${px(v)}" y1="${py(0)}" y2="${py(0) + 4}" stroke="#333"/>`,
      `<text x="${px(v)}" y="${py(0) + 17}" font-size="11" text-anchor="middle">${tick(v)}</text>`,
    );
  }
  out.push(
    `<line x1="${px(0)}" x2="${px(x.top)}" y1="${py(0)}" y2="${py(0)}" stroke="#333"/>`,
    `<line x1="${px(0)}" x2="${px(0)}" y1="${py(0)}" y2="${py(y.top)}" stroke="#333"/>`,
    `<text x="${px(x.top / 2)}" y="${py(0) + 36}" font-size="12" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text transform="translate(${ox + 16} ${py(y.top / 2)}) rotate(-90)" font-size="12" text-anchor="middle">${esc(panel.yLabel)}</text>`,
  );
  const legendX: number[] = [];
  let offset = 0;
  for (const s of panel.series) {
    legendX.push(offset);
    offset += 30 + s.name.length * 6.5;
  }
  panel.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const pts = s.points.map(([a, b]) => `${px(a).toFixed(1)},${py(b).toFixed(1)}`);
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.join(' ')}"/>`,
    );
    for (const p of pts) {
      const [cx, cy] = p.split(',');
      out.push(`<circle cx="${cx}" cy="${cy}" r="2.5" fill="${color}"/>`);
    }
    // one row of legend entries between the title and the plot, clear of the curves
    const lx = ox + MARGIN.left + legendX[i]!;
    const ly = oy + 30;
    out.push(
      `<rect x="${lx}" y="${ly}" width="12" height="3" fill="${color}"/>`,
      `<text x="${lx + 18}" y="${ly + 5}" font-size="11">${esc(s.name)}</text>`,
    );
  });
  return out.join('\n');
}

/** The chart as an SVG document. */
export function renderChart(chart: Chart): string {
  const columns = chart.columns ?? 2;
  const rows = Math.ceil(chart.panels.length / columns);
  const width = columns * PANEL_W;
  const height = rows * PANEL_H + 36;
  const body = chart.panels.map((p, i) =>
    panelSvg(p, chart.xLabel, (i % columns) * PANEL_W, 36 + Math.floor(i / columns) * PANEL_H),
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="24" font-size="16" font-weight="bold" text-anchor="middle">${esc(chart.title)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
