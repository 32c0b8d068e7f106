import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MANAGER_ROUTES } from '../../src/web/manager/manager-routes.ts';
import { DIALECTS, loadCatalogue, newMerchant, tableDigests, useApp, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { member } from './manager-helpers.ts';

type Owner = Awaited<ReturnType<typeof newMerchant>>;

/** Ids of `owner`'s resources, by the route parameter that names them. */
async function ownedIds(t: TestApp, owner: Owner) {
  await loadCatalogue(t, ORDER_CATALOGUE);
  const order = await placeOrder(t, owner.token, [{ sku: 'C', quantity: 1 }]);
  const hook = await t.merchant(owner.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['split_order.shipped'] });
  const detail = (await t.merchant(owner.token, 'GET', `/openapi/v2/order/orders/${order.id}`)).body.data;
  await t.admin('POST', `/admin/v1/split-orders/${detail.splitOrders[0].id}/ship`, { carrier: 'UPS', trackingCode: '1Z' });
  const opened = await t.merchant(owner.token, 'POST', '/openapi/v1/claims', {
    orderId: detail.splitOrders[0].id,
    reason: 'damaged',
    resolution: 'refund',
    items: [{ sku: 'C', quantity: 1 }],
  });
  const file = await t.app.inject({
    method: 'POST',
    url: '/openapi/v1/claims/files',
    headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/pdf' },
    payload: Buffer.from('%PDF-1.7\n tenancy'),
  });
  const deliveries = await t.merchant(owner.token, 'GET', `/openapi/v1/webhooks/${hook.body.data.id}/deliveries`);
  const merchantId = Number(owner.merchantId);
  const client = await t.store.db.selectFrom('oauth_clients').select('id').where('merchant_id', '=', merchantId).executeTakeFirstOrThrow();
  await member(t, owner.merchantId, `owner-${merchantId}@example.com`, 'developer');
  const user = await t.store.db.selectFrom('merchant_users').select('id').where('merchant_id', '=', merchantId).executeTakeFirstOrThrow();
  const token = await t.store.db.selectFrom('api_tokens').select('id').where('merchant_id', '=', merchantId).executeTakeFirstOrThrow();
  const invitation = await t.admin('POST', `/admin/v1/merchants/${merchantId}/users`, { email: `open-${merchantId}@example.com`, role: 'viewer' });
  return {
    invitation: invitation.body.data.invitationId as string,
    webhook: hook.body.data.id as string,
    delivery: deliveries.body.data.list[0].id as string,
    order: order.id,
    split: String(detail.splitOrders[0].id),
    claim: opened.body.data.claimNo as string,
    file: String(file.json().data.fileId),
    client: String(client.id),
    user: String(user.id),
    token: String(token.id),
  };
}

/**
 * Every /manager route that takes an id (SPEC §14: "a user sees only its own merchant"): opening
 * another merchant's id answers exactly like an id that does not exist, and writes nothing. A
 * route with an id that is not listed here fails the first test.
 */
const CASES: Record<string, (ids: Awaited<ReturnType<typeof ownedIds>>) => { params: Record<string, string>; body?: Record<string, string> }> = {
  'GET /webhooks/:id': (ids) => ({ params: { id: ids.webhook } }),
  'POST /webhooks/:id': (ids) => ({ params: { id: ids.webhook }, body: { url: 'http://127.0.0.1:9/taken', events: 'refund.failed' } }),
  'GET /webhooks/:id/deliveries': (ids) => ({ params: { id: ids.webhook } }),
  'POST /webhooks/:id/rotate-secret': (ids) => ({ params: { id: ids.webhook } }),
  'POST /webhooks/:id/test': (ids) => ({ params: { id: ids.webhook } }),
  'POST /webhooks/:id/delete': (ids) => ({ params: { id: ids.webhook } }),
  'POST /webhooks/:id/deliveries/:deliveryId/retry': (ids) => ({ params: { id: ids.webhook, deliveryId: ids.delivery } }),
  'GET /orders/:id': (ids) => ({ params: { id: ids.order } }),
  'GET /claims/:claimNo': (ids) => ({ params: { claimNo: ids.claim } }),
  'GET /claims/files/:fileId': (ids) => ({ params: { fileId: ids.file } }),
  'POST /claims/:claimNo/return': (ids) => ({ params: { claimNo: ids.claim }, body: { carrier: 'DHL', trackingCode: 'RT' } }),
  'POST /claims/:claimNo/cancel': (ids) => ({ params: { claimNo: ids.claim } }),
  'GET /split-orders/:id/claim': (ids) => ({ params: { id: ids.split } }),
  'POST /split-orders/:id/claim': (ids) => ({ params: { id: ids.split }, body: { sku: 'C', quantity: '1', reason: 'damaged', resolution: 'refund' } }),
  'POST /credentials/clients/:id/rotate': (ids) => ({ params: { id: ids.client } }),
  'POST /credentials/clients/:id/revoke': (ids) => ({ params: { id: ids.client } }),
  'POST /credentials/tokens/:id/revoke': (ids) => ({ params: { id: ids.token } }),
  'POST /team/:id/role': (ids) => ({ params: { id: ids.user }, body: { role: 'viewer' } }),
  'POST /team/:id/remove': (ids) => ({ params: { id: ids.user } }),
  'POST /team/:id/reset-password': (ids) => ({ params: { id: ids.user } }),
  'POST /team/:id/reset-two-factor': (ids) => ({ params: { id: ids.user } }),
  'POST /team/invitations/:id/revoke': (ids) => ({ params: { id: ids.invitation } }),
};

const MISSING = '987654321987';

for (const dialect of DIALECTS) {
  describe(`business manager tenancy: another merchant’s id answers like a missing one (${dialect})`, () => {
    const t = useApp(dialect, { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' });

    it('lists every /manager route with an id parameter', () => {
      const withIds = MANAGER_ROUTES.filter((r) => r.path.includes('/:') && r.permission !== 'public').map((r) => `${r.method} ${r.path}`);
      assert.deepEqual(withIds.sort(), Object.keys(CASES).sort());
    });

    it('A’s admin opening B’s webhook, delivery, order, claim, evidence file, split order, client, token and team member by URL gets 404, nothing written', async () => {
      const a = await newMerchant(t, 'Tenant A');
      const b = await newMerchant(t, 'Tenant B');
      const bIds = await ownedIds(t, b);
      const admin = await member(t, a.merchantId, 'tenant-a-admin@example.com', 'admin');
      const token = await admin.csrf('/manager/team');
      for (const [key, make] of Object.entries(CASES)) {
        const [method, path] = key.split(' ');
        const { params, body = {} } = make(bIds);
        const url = (values: Record<string, string>) => `/manager${path.replace(/:([A-Za-z]+)/g, (_m, name: string) => values[name])}`;
        const missing = Object.fromEntries(Object.keys(params).map((k) => [k, MISSING]));
        const before = await tableDigests(t.store);
        const send = (u: string) => (method === 'GET' ? admin.get(u) : admin.post(u, { _csrf: token, ...body }));
        const theirs = await send(url(params));
        const absent = await send(url(missing));
        assert.equal(theirs.statusCode, 404, `${key} with B's id: ${theirs.body.slice(0, 200)}`);
        assert.equal(absent.statusCode, 404, key);
        // (A refused form is answered on its page, whose forms carry fresh one-time keys.)
        const main = (html: string) => html.slice(html.indexOf('<main')).replace(/name="_formKey" value="[^"]+"/g, 'name="_formKey"');
        assert.equal(main(theirs.body).replace(/\d{6,}/g, 'N'), main(absent.body).replace(/\d{6,}/g, 'N'), `${key}: the same page`);
        assert.deepEqual(await tableDigests(t.store), before, `${key}: nothing written`);
      }
    });
  });
}

/** SPEC §15 in the business manager: the Balance page and its statements show the merchant's own money only, to every role. */
for (const dialect of DIALECTS) {
  describe(`business manager tenancy: the Balance page and statements (${dialect})`, () => {
    const t = useApp(dialect, { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' });

    it('shows a viewer its own balance and transactions, and its statement reconciles as CSV and PDF; never another merchant’s', async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      const a = await newMerchant(t, 'Balance A');
      const b = await newMerchant(t, 'Balance B');
      await t.admin('POST', `/admin/v1/merchants/${a.merchantId}/account/top-ups`, { environment: 'sandbox', amount: '100.00', reference: 'A-PAY-1' });
      await t.admin('POST', `/admin/v1/merchants/${b.merchantId}/account/top-ups`, { environment: 'sandbox', amount: '777.00', reference: 'B-SECRET-PAY' });
      const order = await placeOrder(t, a.token, [{ sku: 'C', quantity: 1 }]);
      await placeOrder(t, b.token, [{ sku: 'C', quantity: 2 }]);
      const viewer = await member(t, a.merchantId, 'balance-viewer@example.com', 'viewer');
      const page = await viewer.get('/manager/balance');
      assert.equal(page.statusCode, 200, page.body.slice(0, 300));
      const expected = (100 - order.finalAmount).toFixed(2);
      assert.match(page.body, new RegExp(`data-field="balance">${expected.replace('.', '\\.')} USD<`));
      assert.ok(page.body.includes(`href="/manager/orders/${order.id}"`), 'the charge links to its order');
      assert.ok(!page.body.includes('B-SECRET-PAY') && !page.body.includes('777.00'), 'nothing of merchant B');

      const month = new Date().toISOString().slice(0, 7);
      const csv = await viewer.get(`/manager/balance/statement?month=${month}&format=csv`);
      assert.equal(csv.statusCode, 200);
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      assert.match(String(csv.headers['content-disposition']), new RegExp(`attachment; filename="statement-${month}-sandbox\\.csv"`));
      assert.deepEqual([...csv.rawPayload.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'the statement starts with the UTF-8 byte order mark');
      const rows = csv.body
        .replace(/^\uFEFF/, '')
        .trimEnd()
        .split('\r\n')
        .map((r: string) => r.split(','));
      assert.deepEqual(rows[0], ['date', 'type', 'description', 'order', 'refund', 'reference', 'amount', 'balance', 'currency']);
      assert.equal(rows[1][1], 'opening_balance');
      assert.equal(rows.at(-1)![1], 'closing_balance');
      const opening = Number(rows[1][7]);
      const moved = rows.slice(2, -1).reduce((sum: number, r: string[]) => sum + Number(r[6]), 0);
      assert.equal(Number(rows.at(-1)![7]).toFixed(2), (opening + moved).toFixed(2), `closing = opening + every transaction\n${csv.body}`);
      assert.equal(rows.at(-1)![7], expected);
      assert.deepEqual(
        rows.slice(2, -1).map((r: string[]) => r[1]),
        ['top_up', 'order_charge'],
      );
      assert.ok(!csv.body.includes('B-SECRET-PAY'));

      const pdf = await viewer.get(`/manager/balance/statement?month=${month}&format=pdf`);
      assert.equal(pdf.statusCode, 200);
      assert.equal(pdf.headers['content-type'], 'application/pdf');
      assert.equal(pdf.rawPayload.subarray(0, 5).toString(), '%PDF-');
      const bad = await viewer.get('/manager/balance/statement?month=2026-13&format=csv');
      assert.equal(bad.statusCode, 400);
    });
  });
}
