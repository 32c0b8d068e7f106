import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp } from '../helpers.ts';

const SKIP = chromiumSkip('the docs page test');
const PHONE = 390;

type Spec = { paths: Record<string, Record<string, { operationId: string }>> };

/** Every operation of the document as "METHOD /path", and as Redoc lists it (its `operation/<operationId>` section, verb and path). */
async function operations(page: Page, spec: Spec) {
  const expected = Object.entries(spec.paths).flatMap(([p, ops]) =>
    Object.entries(ops).map(([m, op]) => ({ id: op.operationId, op: `${m.toUpperCase()} ${p}` })),
  );
  const listed = (await page.evaluate(`${JSON.stringify(expected.map((e) => e.id))}.map((id) => {
    const section = document.getElementById('operation/' + id);
    if (!section) return null;
    const verb = section.querySelector('.http-verb');
    const path = verb && verb.nextElementSibling;
    return verb && path ? verb.textContent.trim().toUpperCase() + ' ' + path.textContent.trim() : null;
  })`)) as (string | null)[];
  return { expected: expected.map((e) => e.op).sort(), listed: listed.map((l, i) => l ?? `missing ${expected[i].id}`).sort() };
}

/**
 * The reference pages as a merchant developer reads them: every operation listed, nothing loaded
 * from another server, and axe-core finds no serious or critical violation — as loaded at 1280 px,
 * and on a 390 px phone (which it must not outgrow) with every response and schema row opened.
 * Screenshots of the top (as loaded) at 1280 and 390 px in test-output/docs/. Both references are
 * the same page built around a different document, so the operator's is checked at 1280 px only
 * through the merchant's (`wide: false`); a full-page axe run of a reference takes seconds.
 */
async function readReference(
  t: import('node:test').TestContext,
  url: string,
  documentUrl: string,
  title: RegExp,
  name: string,
  { wide = true }: { wide?: boolean } = {},
) {
  const { app } = await buildTestApp(t, 'sqlite');
  await app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const spec = (await app.inject({ method: 'GET', url: documentUrl }).then((r) => r.json())) as Spec;
  const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });

  const response = await page.goto(`${origin}${url}`);
  assert.equal(response?.status(), 200);
  await page.waitForSelector('#reference[data-rendered="true"]', { timeout: 60_000 });
  const { expected, listed } = await operations(page, spec);
  assert.ok(expected.length >= 10);
  assert.deepEqual(listed, expected, 'every operation is listed with its method and path');
  assert.match((await page.textContent('h1')) ?? '', title);

  if (wide) await checkAccessibility(page);
  await screenshot(page, 'docs', name, { fullPage: false });
  // Every response and nested schema opened, as a developer reading one operation closely would.
  const opened = (await page.evaluate(
    `(() => { const buttons = [...document.querySelectorAll('#reference .api-content button')].filter((b) => b.querySelector('svg') && b.getAttribute('aria-expanded') !== 'true'); buttons.forEach((b) => b.click()); return buttons.length; })()`,
  )) as number;
  assert.ok(opened > expected.length, `responses opened (${opened})`);
  await page.setViewportSize({ width: PHONE, height: 900 });
  await checkAccessibility(page);
  assert.ok(((await page.evaluate('document.documentElement.scrollWidth')) as number) <= PHONE, `${url} is no wider than a ${PHONE} px phone`);
  assert.deepEqual(foreign, [], 'no request leaves the server');
  assert.deepEqual(consoleErrors, []);
}

describe('GET /docs in a real browser', { skip: SKIP }, () => {
  it('the merchant reference: every operation, local assets only, no serious or critical axe-core violation at 1280 and 390 px', { timeout: 300_000 }, (t) =>
    readReference(t, '/docs', '/docs/openapi.json', /Stockist Open API/, 'docs'),
  );

  it('the operator reference at /docs/admin: the same (axe-core at 390 px, everything opened)', { timeout: 300_000 }, (t) =>
    readReference(t, '/docs/admin', '/docs/admin/openapi.json', /Stockist operator API/, 'docs-admin', { wide: false }),
  );
});
