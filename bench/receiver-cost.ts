/**
 * `node --import tsx bench/receiver-cost.ts <receiver.ts> [deliveries]`: the CPU a stock.changed
 * receiver process (bench/stock-receiver.ts, or an older version of it) spends per delivery of a
 * 500-change body (≈ 47.6 KB), 16 requests at once over keep-alive connections — what the bench's
 * receiver takes from the cores the server under test shares with it.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const [file, count = '2000'] = process.argv.slice(2);
if (!file) throw new Error('usage: bench/receiver-cost.ts <receiver.ts> [deliveries]');
const n = Number(count);
const child = spawn(process.execPath, ['--import', 'tsx', path.resolve(file)], {
  cwd: path.resolve(import.meta.dirname, '..'),
  stdio: ['ignore', 'pipe', 'inherit'],
});
const port = await new Promise<number>((resolve) =>
  child.stdout!.on('data', (d: Buffer) => {
    const m = /listening (\d+)/.exec(String(d));
    if (m) resolve(Number(m[1]));
  }),
);
const changes = Array.from({ length: 500 }, (_, i) => ({
  sku: `BENCH-0${10_000 + i}`,
  warehouseCode: 'G007',
  qty: 999_000 + i,
  updateDate: '2026-11-25T07:00:00Z',
}));
const body = Buffer.from(JSON.stringify({ type: 'stock.changed', timestamp: '2026-11-25T07:00:00Z', data: { changes, cursor: 'sc1_bench' } }));
/** The receiver's CPU so far (user + system), from /proc (Linux). */
const cpu = () => {
  const f = fs
    .readFileSync(`/proc/${child.pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const post = () =>
  new Promise<void>((resolve, reject) => {
    const req = http.request(
      { port, method: 'POST', path: '/stock', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
await new Promise((resolve) => setTimeout(resolve, 300));
const before = cpu();
let sent = 0;
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (sent < n) {
      sent++;
      await post();
    }
  }),
);
await new Promise((resolve) => setTimeout(resolve, 200));
process.stdout.write(`${file}: ${n} deliveries of ${body.length} B, receiver CPU ${((1000 * (cpu() - before)) / n).toFixed(3)} ms per delivery\n`);
child.kill();
agent.destroy();
