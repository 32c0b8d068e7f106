import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { buildTestApp } from '../helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
const OUTPUT = path.resolve(import.meta.dirname, '../../test-output');
const SKIP = fs.existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium; .ci/run does) to run the docs page test`;

describe('GET /docs in a real browser', { skip: SKIP }, () => {
  it('lists every operation from local assets only, and saves a screenshot', async (t) => {
    const { chromium } = await import('playwright-core');
    const { app } = await buildTestApp(t, 'sqlite');
    await app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const spec = (await app.inject({ method: 'GET', url: '/docs/openapi.json' }).then((r) => r.json())) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const operations = Object.entries(spec.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path: p })));

    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    t.after(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
    const foreign: string[] = [];
    // Anything not served by Stockist itself is refused and remembered: the page must not need it.
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin) || url.startsWith('data:')) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    const consoleErrors: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && consoleErrors.push(m.text())));

    const response = await page.goto(`${origin}/docs`);
    assert.equal(response?.status(), 200);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    await page.waitForFunction((n) => document.querySelectorAll('.opblock').length >= n, operations.length, { timeout: 30_000 });

    const listed = await page.$$eval('.opblock', (blocks) =>
      blocks.map(
        (b) => `${b.querySelector('.opblock-summary-method')?.textContent?.trim()} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
      ),
    );
    for (const op of operations) assert.ok(listed.includes(`${op.method} ${op.path}`), `${op.method} ${op.path} is listed (got ${listed.join(', ')})`);
    assert.match(await page.title(), /Stockist/);
    assert.ok((await page.textContent('.info .title'))?.includes('Stockist Open API'));

    fs.mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: path.join(OUTPUT, 'docs-page.png'), fullPage: false });
    assert.deepEqual(foreign, [], 'no request leaves the server');
    assert.deepEqual(consoleErrors, []);
  });
});
