/**
 * `npm run screenshots`: the README's pictures (docs/images/), taken as a newcomer meets the two
 * front ends — a fresh server on its embedded database with the demo data (`serve --seed demo`,
 * what `npm start` runs), signed in with the demo sign-ins its banner prints, a few demo orders
 * placed through the merchant API so the lists are not empty. Debian's Chromium through
 * playwright-core, as the browser tests use it.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'docs/images');

const port = await new Promise<number>((resolve) => {
  const probe = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as net.AddressInfo;
    probe.close(() => resolve(port));
  });
});
const origin = `http://127.0.0.1:${port}`;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-screenshots-'));
const server = spawn(process.execPath, [path.join(ROOT, 'bin/stockist.js'), 'serve', '--seed', 'demo', '--port', String(port)], {
  env: {
    ...process.env,
    DATA_DIR: dataDir,
    DATABASE_URL: `sqlite:${path.join(dataDir, 'stockist.db')}`,
    TLS: 'off',
    STOCKIST_ENV: 'sandbox',
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let banner = '';
await new Promise<void>((resolve, reject) => {
  server.stdout!.on('data', (chunk) => {
    banner += String(chunk);
    if (/Demo merchant admin[^\n]*\n/.test(banner)) resolve();
  });
  server.on('exit', (code) => reject(new Error(`the server stopped (${code}):\n${banner}`)));
});
const owner = /Demo console owner \(password shown once\): (\S+) {2}(\S+)/.exec(banner);
const admin = /Demo merchant admin \(password shown once\): (\S+) {2}(\S+)/.exec(banner);
const token = /Demo merchant token: (\S+)/.exec(banner)?.[1];
if (!owner || !admin || !token) throw new Error(`the banner does not name the demo sign-ins:\n${banner}`);

try {
  // A few orders, so that the lists show what a working day looks like.
  const skus = /skus=([^"]+)"/.exec(banner)![1].split(',');
  for (const [n, sku] of skus.entries()) {
    const r = await fetch(`${origin}/openapi/v1/order/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `screenshot-${n}` },
      body: JSON.stringify({
        customOrderId: `SHOP-10${n + 1}`,
        orderAddress: { country: 'US', phone: '+1 555 0100', recipient: 'Ann Lee', province: 'CA', city: 'Los Angeles', street1: '1 Main St', zip: '90001' },
        orderItemsList: [{ sku, quantity: n + 1 }],
      }),
    });
    if (!r.ok) throw new Error(`order ${sku}: ${r.status} ${await r.text()}`);
  }

  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  fs.mkdirSync(OUT, { recursive: true });

  await page.goto(`${origin}/console/sign-in`);
  await page.fill('#email', owner[1]);
  await page.fill('#password', owner[2]);
  await Promise.all([page.waitForURL(`${origin}/console`), page.click('button[type=submit]')]);
  await page.goto(`${origin}/console/orders`);
  await page.screenshot({ path: path.join(OUT, 'console-orders.png') });

  const manager = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await manager.goto(`${origin}/manager/sign-in`);
  await manager.fill('#email', admin[1]);
  await manager.fill('#password', admin[2]);
  await Promise.all([manager.waitForURL(`${origin}/manager`), manager.click('button[type=submit]')]);
  await manager.goto(`${origin}/manager/orders`);
  await manager.screenshot({ path: path.join(OUT, 'manager-orders.png') });
  await browser.close();
  process.stdout.write(`wrote ${path.relative(ROOT, OUT)}/console-orders.png and manager-orders.png\n`);
} finally {
  server.kill('SIGTERM');
  fs.rmSync(dataDir, { recursive: true, force: true });
}
