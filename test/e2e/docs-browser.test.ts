import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { OUTPUT, chromiumSkip, localOnlyPage } from './browser.ts';
import { buildTestApp } from '../helpers.ts';

const SKIP = chromiumSkip('the docs page test');

describe('GET /docs in a real browser', { skip: SKIP }, () => {
  it('lists every operation from local assets only, and saves a screenshot', async (t) => {
    const { app } = await buildTestApp(t, 'sqlite');
    await app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const spec = (await app.inject({ method: 'GET', url: '/docs/openapi.json' }).then((r) => r.json())) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const operations = Object.entries(spec.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path: p })));

    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 2000 });

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

  it('shows the operator API at /docs/admin: every operator operation, local assets only', async (t) => {
    const { app } = await buildTestApp(t, 'sqlite');
    await app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const spec = (await app.inject({ method: 'GET', url: '/docs/admin/openapi.json' }).then((r) => r.json())) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(spec.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    assert.ok(operations.length >= 20);
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 2000 });
    const response = await page.goto(`${origin}/docs/admin`);
    assert.equal(response?.status(), 200);
    await page.waitForFunction((n) => document.querySelectorAll('.opblock').length >= n, operations.length, { timeout: 30_000 });
    const listed = await page.$$eval('.opblock', (blocks) =>
      blocks.map(
        (b) => `${b.querySelector('.opblock-summary-method')?.textContent?.trim()} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
      ),
    );
    assert.deepEqual([...listed].sort(), [...operations].sort());
    assert.ok((await page.textContent('.info .title'))?.includes('Stockist operator API'));
    fs.mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: path.join(OUTPUT, 'docs-admin-page.png'), fullPage: false });
    assert.deepEqual(foreign, [], 'no request leaves the server');
    assert.deepEqual(consoleErrors, []);
  });
});
