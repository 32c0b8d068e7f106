import path from 'node:path';
import { RefundWorker } from '../src/jobs/refund.worker.ts';
import type { Store } from '../src/store/db.ts';
import { ORDER_CATALOGUE, placeOrder } from './fixtures.ts';
import { loadCatalogue, newMerchant, PG_URL, type TestApp } from './helpers.ts';

/**
 * Orders, a refund and their ledger made through the API (what a backup must carry): a merchant
 * with a token, three orders, one of them refunded in part (decided by the refund worker).
 */
export async function shopWithOrders(t: TestApp): Promise<{ token: string; merchantId: string; orderIds: string[] }> {
  await loadCatalogue(t, ORDER_CATALOGUE);
  const shop = await newMerchant(t, 'Backup Shop');
  const orderIds: string[] = [];
  for (const quantity of [1, 2, 3]) orderIds.push((await placeOrder(t, shop.token, [{ sku: 'C', quantity }])).id);
  const first = (await t.merchant(shop.token, 'GET', `/openapi/v2/order/orders/${orderIds[2]}`)).body.data;
  const refund = await t.merchant(shop.token, 'POST', `/openapi/v2/order/orders/${orderIds[2]}/refund`, {
    orderItems: [{ itemId: first.orderItems[0].itemId, quantity: 1 }],
    refundReason: 'Other',
  });
  if (refund.status !== 200) throw new Error(`refund failed: ${refund.raw}`);
  await new RefundWorker({ store: t.store, config: { refundReview: 'auto', refundAutoDelayMs: 0 } }).runOnce();
  return { token: shop.token, merchantId: shop.merchantId, orderIds };
}

/** The DATABASE_URL a spawned `stockist` uses for a test's store: its SQLite file, or the PostgreSQL server with the store's schema. */
export function urlOf(store: Store): string {
  if (store.dialect === 'sqlite') return `sqlite:${path.resolve(store.location.replace(/^file /, ''))}`;
  const url = new URL(PG_URL!);
  url.searchParams.set('options', `-c search_path=${store.schema}`);
  return url.toString();
}
