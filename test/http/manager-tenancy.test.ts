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
  const deliveries = await t.merchant(owner.token, 'GET', `/openapi/v1/webhooks/${hook.body.data.id}/deliveries`);
  const merchantId = Number(owner.merchantId);
  const client = await t.store.db.selectFrom('oauth_clients').select('id').where('merchant_id', '=', merchantId).executeTakeFirstOrThrow();
  await member(t, owner.merchantId, `owner-${merchantId}@example.com`, 'developer');
  const user = await t.store.db.selectFrom('merchant_users').select('id').where('merchant_id', '=', merchantId).executeTakeFirstOrThrow();
  const token = await t.store.db.selectFrom('api_tokens').select('id').where('merchant_id', '=', merchantId).executeTakeFirstOrThrow();
  return {
    webhook: hook.body.data.id as string,
    delivery: deliveries.body.data.list[0].id as string,
    order: order.id,
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
  'POST /webhooks/:id/rotate-secret': (ids) => ({ params: { id: ids.webhook } }),
  'POST /webhooks/:id/test': (ids) => ({ params: { id: ids.webhook } }),
  'POST /webhooks/:id/delete': (ids) => ({ params: { id: ids.webhook } }),
  'POST /webhooks/:id/deliveries/:deliveryId/retry': (ids) => ({ params: { id: ids.webhook, deliveryId: ids.delivery } }),
  'GET /orders/:id': (ids) => ({ params: { id: ids.order } }),
  'POST /credentials/clients/:id/rotate': (ids) => ({ params: { id: ids.client } }),
  'POST /credentials/clients/:id/revoke': (ids) => ({ params: { id: ids.client } }),
  'POST /credentials/tokens/:id/revoke': (ids) => ({ params: { id: ids.token } }),
  'POST /team/:id/role': (ids) => ({ params: { id: ids.user }, body: { role: 'viewer' } }),
  'POST /team/:id/remove': (ids) => ({ params: { id: ids.user } }),
};

const MISSING = '987654321987';

for (const dialect of DIALECTS) {
  describe(`business manager tenancy: another merchant’s id answers like a missing one (${dialect})`, () => {
    const t = useApp(dialect, { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' });

    it('lists every /manager route with an id parameter', () => {
      const withIds = MANAGER_ROUTES.filter((r) => r.path.includes('/:') && r.permission !== 'public').map((r) => `${r.method} ${r.path}`);
      assert.deepEqual(withIds.sort(), Object.keys(CASES).sort());
    });

    it('A’s admin opening B’s webhook, delivery, order, client, token and team member by URL gets 404, nothing written', async () => {
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
        const main = (html: string) => html.slice(html.indexOf('<main'));
        assert.equal(main(theirs.body).replace(/\d{6,}/g, 'N'), main(absent.body).replace(/\d{6,}/g, 'N'), `${key}: the same page`);
        assert.deepEqual(await tableDigests(t.store), before, `${key}: nothing written`);
      }
    });
  });
}
