import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_KEY, newMerchant, tableDigests, useApp } from '../helpers.ts';

/** SPEC §1: every response is the envelope; framework errors never leak. */
describe('envelope and generic errors', () => {
  const t = useApp('sqlite', { BODY_LIMIT_BYTES: '2048' });
  let token: string;
  before(async () => {
    // A route that fails like a bug would, to check that 500s carry no internals.
    t.app.get('/admin/v1/__boom', async () => {
      throw new Error('SELECT secret_column FROM internal_table');
    });
    token = (await newMerchant(t)).token;
  });

  it('answers unknown routes with a 404 envelope', async () => {
    for (const url of ['/nope', '/openapi/v9/unknown', '/admin/v1/unknown']) {
      const r = await t.merchant(token, 'GET', url);
      assert.equal(r.status, 404, url);
      assert.equal(r.body.code, 40400);
      assert.equal(r.body.data, null);
      assert.equal(typeof r.body.requestId, 'string');
      assert.match(String(r.headers['content-type']), /application\/json/);
    }
  });

  it('answers malformed JSON with 40001 and writes nothing', async () => {
    const before = await tableDigests(t.store);
    for (const payload of ['{"name": ', '{name: 1}', 'null x', '{"__proto__": {"admin": true}, "name": "x"}']) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/merchants',
        payload,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      });
      assert.equal(r.statusCode, 400, payload);
      assert.equal(r.json().code, 40001, payload);
    }
    const empty = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/merchants',
      payload: '',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    });
    assert.equal(empty.json().code, 40001);
    assert.deepEqual(await tableDigests(t.store), before);
  });

  it('answers an oversized body with 41300', async () => {
    const r = await t.admin('POST', '/admin/v1/merchants', { name: 'x'.repeat(5000) });
    assert.equal(r.status, 413);
    assert.equal(r.body.code, 41300);
  });

  it('answers a non-JSON content type with 41500', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/merchants',
        payload: 'name=x',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': type },
      });
      assert.equal(r.statusCode, 415, type);
      assert.equal(r.json().code, 41500);
    }
  });

  it('lists field errors for a bad body (40000)', async () => {
    const r = await t.admin('POST', '/admin/v1/products', { sku: '', name: 7, price: 'abc', weightGrams: -1 });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 40000);
    const fields = r.body.errors.map((e: { field: string }) => e.field).sort();
    assert.deepEqual(fields, ['name', 'price', 'sku', 'weightGrams']);
  });

  it('hides internals in 500s and logs by request id', async () => {
    const r = await t.admin('GET', '/admin/v1/__boom');
    assert.equal(r.status, 500);
    assert.equal(r.body.code, 50000);
    assert.doesNotMatch(r.raw, /SELECT|secret_column|stack|at /);
    assert.equal(r.body.requestId, r.headers['x-request-id']);
  });

  it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
    const mine = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'client-abc.123' } });
    assert.equal(mine.headers['x-request-id'], 'client-abc.123');
    const unsafe = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id <script>' } });
    assert.match(String(unsafe.headers['x-request-id']), /^req_[0-9a-f]{32}$/);
    const err = await t.app.inject({ method: 'GET', url: '/missing', headers: { 'x-request-id': 'trace-1' } });
    assert.equal(err.json().requestId, 'trace-1');
  });

  it('serves health and readiness', async () => {
    const h = await t.app.inject({ method: 'GET', url: '/healthz' });
    assert.deepEqual(h.json(), { code: 10000, message: 'success', data: { status: 'ok' } });
    const r = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(r.statusCode, 200);
    assert.equal(r.json().data.status, 'ready');
  });

  it('serves every merchant route under /openapi/openapi too', async () => {
    const a = await t.merchant(token, 'GET', '/openapi/v1/product/stocks?skus=X');
    const b = await t.merchant(token, 'GET', '/openapi/openapi/v1/product/stocks?skus=X');
    assert.equal(a.status, 200);
    assert.deepEqual(a.body, b.body);
  });
});
