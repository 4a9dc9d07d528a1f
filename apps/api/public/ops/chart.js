// Small line charts as inline SVG, drawn with DOM calls only (the page's CSP allows no inline script or style).

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 320;
const HEIGHT = 140;
const PAD = { left: 40, right: 8, top: 8, bottom: 22 };

function el(name, attributes = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function niceMax(value) {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

function clock(t) {
  return new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

/**
 * Draws series of {t (ms), v} points between `from` and `to` into `container`.
 * series: [{ name, className, points }]. `summary` is what a screen reader hears.
 */
export function lineChart(container, { series, from, to, summary }) {
  const svg = el('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-label': summary, preserveAspectRatio: 'none' });
  svg.append(el('title', {}, summary));
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.points.map((p) => p.v))));
  const x = (t) => PAD.left + ((t - from) / Math.max(1, to - from)) * (WIDTH - PAD.left - PAD.right);
  const y = (v) => HEIGHT - PAD.bottom - (v / max) * (HEIGHT - PAD.top - PAD.bottom);

  for (const v of [0, max / 2, max]) {
    svg.append(el('line', { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(v), y2: y(v), class: 'grid' }));
    svg.append(el('text', { x: PAD.left - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }, Number.isInteger(v) ? v : v.toFixed(1)));
  }
  svg.append(el('text', { x: PAD.left, y: HEIGHT - 6, class: 'tick' }, clock(from)));
  svg.append(el('text', { x: WIDTH - PAD.right, y: HEIGHT - 6, 'text-anchor': 'end', class: 'tick' }, clock(to)));

  for (const s of series) {
    const points = s.points.filter((p) => p.t >= from && p.t <= to);
    if (points.length === 0) continue;
    if (points.length === 1) {
      svg.append(el('circle', { cx: x(points[0].t), cy: y(points[0].v), r: 2.5, class: `dot ${s.className}` }));
      continue;
    }
    const d = points.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ');
    svg.append(el('path', { d, class: `line ${s.className}` }));
  }

  const legend = document.createElement('ul');
  legend.className = 'legend';
  for (const s of series) {
    const item = document.createElement('li');
    item.className = s.className;
    item.textContent = s.name;
    legend.append(item);
  }
  container.replaceChildren(svg, legend);
}
