/**
 * A flame graph as one self-contained SVG from folded stacks (`root;…;leaf` → time), the layout of
 * Brendan Gregg's flamegraph.pl: x is the share of the total, y the depth, root at the bottom, each
 * frame's title (hover) its name, time and share. No maintained npm package writes an SVG from a
 * .cpuprofile (docs/decisions.md, "Flame graphs"), and this is the whole of it.
 */
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

interface Tree {
  name: string;
  total: number;
  children: Map<string, Tree>;
}

/** Colours by what a frame is: the bracketed layer, our code, a package, Node, V8. */
function colour(name: string): string {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  const v = h % 40;
  if (name.startsWith('[')) return `rgb(${120 + v},${120 + v},${200 + (v % 50)})`;
  if (name.includes(' src/')) return `rgb(${80 + v},${190 + (v % 60)},${80 + v})`;
  if (name.includes('node_modules/')) return `rgb(${220 + (v % 35)},${120 + v * 2},${40 + v})`;
  if (name.includes(' node:')) return `rgb(${200 + (v % 50)},${200 + (v % 50)},${60 + v})`;
  return `rgb(${200 + (v % 50)},${80 + v},${70 + v})`;
}

export function flameGraphSvg(folded: Map<string, number>, options: { title: string; width?: number; minWidthPx?: number }): string {
  const width = options.width ?? 1600;
  const minWidth = options.minWidthPx ?? 0.5;
  const frameHeight = 16;
  const root: Tree = { name: 'all', total: 0, children: new Map() };
  for (const [stack, t] of folded) {
    root.total += t;
    let at = root;
    for (const name of stack.split(';')) {
      let next = at.children.get(name);
      if (!next) at.children.set(name, (next = { name, total: 0, children: new Map() }));
      next.total += t;
      at = next;
    }
  }
  let depth = 0;
  const measure = (n: Tree, d: number) => {
    depth = Math.max(depth, d);
    for (const c of n.children.values()) if ((c.total / root.total) * width >= minWidth) measure(c, d + 1);
  };
  measure(root, 0);
  const top = 36;
  const height = top + (depth + 1) * frameHeight + 10;
  const rects: string[] = [];
  const draw = (n: Tree, x: number, d: number) => {
    const w = (n.total / root.total) * width;
    if (w < minWidth) return;
    const y = height - 10 - (d + 1) * frameHeight;
    const share = ((100 * n.total) / root.total).toFixed(2);
    const label = w > 30 ? esc(n.name.slice(0, Math.floor((w - 6) / 6.5))) : '';
    rects.push(
      `<g><title>${esc(n.name)} (${(n.total / 1000).toFixed(1)} ms, ${share} %)</title><rect x="${x.toFixed(2)}" y="${y}" width="${w.toFixed(2)}" height="${frameHeight - 1}" fill="${colour(n.name)}" rx="2"/>${label ? `<text x="${(x + 3).toFixed(2)}" y="${y + 11.5}">${label}</text>` : ''}</g>`,
    );
    let cx = x;
    for (const c of [...n.children.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      draw(c, cx, d + 1);
      cx += (c.total / root.total) * width;
    }
  };
  draw(root, 0, 0);
  return [
    `<?xml version="1.0" standalone="no"?>`,
    `<svg version="1.1" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">`,
    `<style>text{font-family:Verdana,sans-serif;font-size:11px;fill:#000;pointer-events:none}</style>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#f8f8f0"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" style="font-size:15px">${esc(options.title)}</text>`,
    ...rects,
    '</svg>',
    '',
  ].join('\n');
}
