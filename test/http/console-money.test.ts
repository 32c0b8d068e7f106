import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';
import { DIALECTS, PG_SKIP, buildTestApp, newMerchant, tableDigests, type TestApp } from '../helpers.ts';
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
  const field = (name: string) => new RegExp(`data-field="${name}"[^>]*>([^<]+)<`).exec(section)?.[1];
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
      assert.match(after.body, /<td>Top-up<\/td><td class="num">120\.50<\/td>/);
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

    /** The money tables and the audit log (a page view touches the session, nothing else). */
    const moneyDigest = async (t: TestApp) => {
      const all = await tableDigests(t.store);
      return ['ledger_accounts', 'journal_entries', 'journal_lines', 'audit_log', 'webhook_events'].map((n) => all[n]);
    };
    /** A refused money form: the merchant's page again with the refusal's status, the reason beside that form, what was typed, nothing written, verify clean. */
    const refusedInPlace = async (t: TestApp, send: () => Promise<{ statusCode: number; body: string }>, environment: string, form: string) => {
      const before = await moneyDigest(t);
      const r = await send();
      assert.equal(r.statusCode, 409, r.body.slice(0, 500));
      assert.deepEqual(await moneyDigest(t), before, 'nothing written');
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, [], 'ledger verify still passes');
      const section = r.body.slice(r.body.indexOf(`data-account="${environment}"`));
      const alert = new RegExp(`<div class="error" role="alert" id="[a-z-]+-${environment}-error" data-refused="${form}"><p>([^<]+)</p>`).exec(section);
      assert.ok(alert, `the refusal is shown on the ${form} form of ${environment}`);
      assert.ok(r.body.includes('<h1>Merchant Money Shop</h1>') || r.body.includes('Money Shop'), 'the merchant page, not an error page');
      return { alert: alert[1], section };
    };

    it('refuses, in place, an adjustment that would take a prepaid account below its floor', async (c) => {
      const { t, m, owner } = await build(c, dialect);
      const admin = `/admin/v1/merchants/${m.merchantId}/account`;
      assert.equal((await t.admin('PATCH', `${admin}?environment=sandbox`, { billingMode: 'prepaid', creditLimit: '50' })).status, 200);
      assert.equal((await t.admin('POST', `${admin}/top-ups`, { environment: 'sandbox', amount: '20', reference: 'BANK-1' })).status, 200);
      const url = `/console/merchants/${m.merchantId}`;
      const csrf = await owner.csrf(url);
      const fields = { _csrf: csrf, environment: 'sandbox', amount: '-100.00', reason: 'chargeback', formKey: 'abcdefghijklmnopqrstuvwx-sandbox' };
      const { alert, section } = await refusedInPlace(t, () => owner.post(`${url}/account/adjustments`, fields), 'sandbox', 'adjust');
      assert.match(
        alert,
        /^Not posted: an adjustment of -100\.00 would take this prepaid account from 20\.00 to -80\.00, below its floor of -50\.00 \(credit limit 50\.00\); at most 70\.00 can be taken now/,
      );
      assert.match(section, /name="amount"[^>]* value="-100\.00" aria-invalid="true"/, 'what was typed, marked');
      assert.match(section, /name="reason"[^>]* value="chargeback"/);
      assert.equal(facts(section, 'sandbox').balance, '20.00 USD');
      // The same form within the floor goes through.
      const ok = await owner.post(`${url}/account/adjustments`, { ...fields, amount: '-70.00' });
      assert.equal(ok.statusCode, 303, ok.body.slice(0, 300));
      assert.equal(facts((await owner.get(url)).body, 'sandbox').available, '0.00');
    });

    it('refuses, in place, switching an owing account to prepaid without a limit that covers the debt', async (c) => {
      const { t, m, owner } = await build(c, dialect);
      const admin = `/admin/v1/merchants/${m.merchantId}/account`;
      assert.equal((await t.admin('POST', `${admin}/adjustments`, { environment: 'production', amount: '-40', reason: 'old invoice' })).status, 200);
      const url = `/console/merchants/${m.merchantId}`;
      const csrf = await owner.csrf(url);
      const terms = { _csrf: csrf, version: '1', environment: 'production', billingMode: 'prepaid', creditLimit: '0', lowBalanceThreshold: '' };
      const { alert, section } = await refusedInPlace(t, () => owner.post(`${url}/account`, terms), 'production', 'terms');
      assert.equal(
        alert,
        'Not saved: the balance is -40.00: prepaid needs a credit limit of at least 40.00 (it would be 0.00); set it with the switch, or record the payment first',
      );
      assert.match(section, /name="creditLimit"[^>]* value="0" aria-invalid="true"/);
      assert.match(section, /<option value="prepaid" selected>/, 'the choice as made');
      assert.equal(facts(section, 'production').mode, 'on account', 'unchanged');
      assert.equal((await owner.post(`${url}/account`, { ...terms, creditLimit: '40.00' })).statusCode, 303);
      assert.equal(facts((await owner.get(url)).body, 'production').mode, 'prepaid');
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, []);
    });

    it('refuses, in place, lowering a prepaid credit limit below the debt', async (c) => {
      const { t, m, owner } = await build(c, dialect);
      const admin = `/admin/v1/merchants/${m.merchantId}/account`;
      assert.equal((await t.admin('PATCH', `${admin}?environment=sandbox`, { billingMode: 'prepaid', creditLimit: '80' })).status, 200);
      assert.equal((await t.admin('POST', `${admin}/adjustments`, { environment: 'sandbox', amount: '-50', reason: 'fee' })).status, 200);
      const url = `/console/merchants/${m.merchantId}`;
      const csrf = await owner.csrf(url);
      // The terms were set once through the API: version 2.
      const terms = { _csrf: csrf, version: '2', environment: 'sandbox', billingMode: 'prepaid', creditLimit: '10.00', lowBalanceThreshold: '' };
      const { alert, section } = await refusedInPlace(t, () => owner.post(`${url}/account`, terms), 'sandbox', 'terms');
      assert.match(
        alert,
        /^Not saved: a credit limit of 10\.00 leaves this prepaid account&#39;s balance of -50\.00 below its floor of -10\.00; at least 50\.00 is needed/,
      );
      assert.match(section, /name="creditLimit"[^>]* value="10\.00" aria-invalid="true"/);
      assert.equal((await owner.post(`${url}/account`, { ...terms, creditLimit: '50.00' })).statusCode, 303);
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
