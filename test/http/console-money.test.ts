import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';
import { DIALECTS, PG_SKIP, buildTestApp, newMerchant, type TestApp } from '../helpers.ts';
import { signedIn, staff } from './console-client.ts';

/** SPEC §15 in the operator console: each environment's account on the merchant page; owners record payments, adjust and set terms; support reads. */
async function build(c: { after(fn: () => Promise<void>): void }, dialect: 'sqlite' | 'postgres') {
  const t: TestApp = await buildTestApp(c, dialect);
  await staff(t, 'owner@example.com', 'owner');
  await staff(t, 'support@example.com', 'support');
  const m = await newMerchant(t, 'Money Shop');
  return { t, m, owner: await signedIn(t, 'owner@example.com'), support: await signedIn(t, 'support@example.com') };
}

const facts = (html: string, environment: string) => {
  const section = html.slice(html.indexOf(`data-account="${environment}"`));
  const field = (name: string) => new RegExp(`data-field="${name}">([^<]+)<`).exec(section)?.[1];
  return { balance: field('balance'), mode: field('billing-mode'), available: field('available') };
};

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`console money forms (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('shows both environments and records a payment once, however often the form is sent', async (c) => {
      const { t, m, owner } = await build(c, dialect);
      const url = `/console/merchants/${m.merchantId}`;
      const page = await owner.get(url);
      assert.equal(page.statusCode, 200);
      assert.deepEqual(facts(page.body, 'sandbox'), { balance: '0.00 USD', mode: 'on account', available: '0.00' });
      assert.deepEqual(facts(page.body, 'production'), { balance: '0.00 USD', mode: 'on account', available: '0.00' });
      const csrf = await owner.csrf(url);
      const fields = { _csrf: csrf, environment: 'sandbox', amount: '120.50', reference: 'BANK-0042' };
      const sent = await owner.post(`${url}/account/top-ups`, fields);
      assert.equal(sent.statusCode, 303, sent.body);
      assert.equal(sent.headers.location, `${url}#account-sandbox`);
      assert.equal((await owner.post(`${url}/account/top-ups`, fields)).statusCode, 303, 'the resubmission answers like the first');
      const after = await owner.get(url);
      assert.equal(facts(after.body, 'sandbox').balance, '120.50 USD', 'posted once');
      assert.equal(facts(after.body, 'production').balance, '0.00 USD', 'sandbox money is not production money');
      assert.match(after.body, /<td>top_up<\/td><td class="num">120\.50<\/td>/);
      // The dashboard's money figures (this server's environment).
      const dashboard = (await owner.get('/console')).body;
      assert.match(dashboard, /data-stat="received">120\.50</);
      assert.match(dashboard, /data-stat="held">120\.50</);
      assert.match(dashboard, /data-stat="owed">0\.00</);
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, []);
    });

    it('posts an adjustment once per rendered form, and sets prepaid terms', async (c) => {
      const { t, m, owner } = await build(c, dialect);
      const url = `/console/merchants/${m.merchantId}`;
      const page = (await owner.get(url)).body;
      const csrf = /name="_csrf" value="([A-Za-z0-9]+)"/.exec(page)![1];
      const formKey = /name="formKey" value="([A-Za-z0-9_-]+-production)"/.exec(page)![1];
      const adjust = { _csrf: csrf, environment: 'production', amount: '-3.25', reason: 'wire fee', formKey };
      assert.equal((await owner.post(`${url}/account/adjustments`, adjust)).statusCode, 303);
      assert.equal((await owner.post(`${url}/account/adjustments`, adjust)).statusCode, 303, 'a double click');
      assert.equal(facts((await owner.get(url)).body, 'production').balance, '-3.25 USD');
      const terms = await owner.post(`${url}/account`, {
        _csrf: csrf,
        version: '1',
        environment: 'sandbox',
        billingMode: 'prepaid',
        creditLimit: '15',
        lowBalanceThreshold: '',
      });
      assert.equal(terms.statusCode, 303, terms.body);
      assert.deepEqual(facts((await owner.get(url)).body, 'sandbox'), { balance: '0.00 USD', mode: 'prepaid', available: '15.00' });
      const bad = await owner.post(`${url}/account/top-ups`, { _csrf: csrf, environment: 'sandbox', amount: '0', reference: 'zero' });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /amount a top-up must be greater than 0/);
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, []);
    });

    it('lets support read the money but not move it', async (c) => {
      const { m, support } = await build(c, dialect);
      const url = `/console/merchants/${m.merchantId}`;
      const page = await support.get(url);
      assert.equal(page.statusCode, 200);
      assert.ok(page.body.includes('data-account="sandbox"'));
      assert.ok(!page.body.includes('data-action="top-up"'), 'no money forms for support');
      const csrf = await support.csrf(url);
      for (const [path, fields] of [
        ['/account/top-ups', { environment: 'sandbox', amount: '5', reference: 'x' }],
        ['/account/adjustments', { environment: 'sandbox', amount: '5', reason: 'x', formKey: 'abcdefghijklmnopqrstuvwx' }],
        ['/account', { environment: 'sandbox', billingMode: 'prepaid', creditLimit: '0' }],
      ] as const) {
        const r = await support.post(`${url}${path}`, { _csrf: csrf, ...fields });
        assert.equal(r.statusCode, 403, path);
      }
      assert.equal((await support.get(`${url}/transactions?environment=sandbox`)).statusCode, 200);
    });
  });
}
