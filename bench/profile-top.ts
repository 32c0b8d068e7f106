/** `node --import tsx bench/profile-top.ts <file.cpuprofile> [n]`: self time by function, and by package. */
import fs from 'node:fs';

const [file, n = '25'] = process.argv.slice(2);
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map<string, number>();
const byPackage = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const where = url.replace(/^file:\/\//, '').replace(process.cwd(), '.');
  const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + dt);
  const pkg =
    /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1] ??
    (where.startsWith('./src') ? 'stockist' : where === '' ? `(${functionName || 'native'})` : where.startsWith('node:') ? 'node' : 'other');
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + dt);
});
const show = (m: Map<string, number>, k: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([key, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`)
    .join('\n');
process.stdout.write(`total ${(total / 1e6).toFixed(1)} s\n\nby package\n${show(byPackage, 15)}\n\nby function (self)\n${show(self, Number(n))}\n`);
