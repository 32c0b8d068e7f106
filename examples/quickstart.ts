// The whole merchant flow against a running Stockist, with the typed client:
// token (OAuth) → categories → stock → channel quote → order → query order → partial refund →
// poll until the refund is decided. Each step prints what it got.
//
//   npm start                                  # in one terminal (HTTPS, self-signed, demo data)
//   npx tsx examples/quickstart.ts --insecure  # in another
//
// Credentials, first found wins:
//   STOCKIST_CLIENT_ID + STOCKIST_CLIENT_SECRET   OAuth client credentials (what a merchant has)
//   STOCKIST_TOKEN                                a bearer token (the OAuth step is then skipped)
//   ADMIN_API_KEY or <data dir>/admin-key         local demo only: a "Quickstart" merchant is
//                                                 created through the operator API for the run
// Options: --url <origin> (STOCKIST_URL, default https://127.0.0.1:8443), --data-dir <dir>
// (DATA_DIR, default ./data), --insecure (accept the self-signed certificate of `npm start`;
// the same as NODE_TLS_REJECT_UNAUTHORIZED=0), --timeout <seconds> for the refund decision (60).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { StockistClient, StockistError } from '../clients/typescript/src/index.ts';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    'data-dir': { type: 'string' },
    insecure: { type: 'boolean', default: false },
    timeout: { type: 'string', default: '60' },
  },
});

const baseUrl = (args.url ?? process.env.STOCKIST_URL ?? 'https://127.0.0.1:8443').replace(/\/+$/, '');
const dataDir = args['data-dir'] ?? process.env.DATA_DIR ?? './data';
// Node's fetch has no per-request "trust this certificate" switch; this is the documented one.
if (args.insecure) process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';

let stepNo = 0;
const step = (title: string) => console.log(`\n${++stepNo}. ${title}`);
const show = (label: string, value: unknown) => console.log(`   ${label}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);

/** Local demo only: an operator key lets the quickstart make itself a merchant with OAuth credentials. */
async function demoCredentials(): Promise<{ clientId: string; clientSecret: string } | null> {
  const keyFile = path.join(dataDir, 'admin-key');
  const adminKey = process.env.ADMIN_API_KEY ?? (fs.existsSync(keyFile) ? fs.readFileSync(keyFile, 'utf8').trim() : null);
  if (!adminKey) return null;
  const response = await fetch(`${baseUrl}/admin/v1/merchants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Quickstart' }),
  });
  const body = (await response.json()) as { data?: { clientId: string; clientSecret: string }; message?: string };
  if (!response.ok || !body.data) throw new Error(`creating the Quickstart merchant failed: HTTP ${response.status} ${body.message ?? ''}`);
  return body.data;
}

async function main() {
  console.log(`Stockist quickstart against ${baseUrl}`);
  let client: StockistClient;
  const clientId = process.env.STOCKIST_CLIENT_ID;
  const clientSecret = process.env.STOCKIST_CLIENT_SECRET;
  const token = process.env.STOCKIST_TOKEN;
  step('Access token');
  let oauth = true;
  if (clientId && clientSecret) {
    client = new StockistClient({ baseUrl, clientId, clientSecret });
  } else if (token) {
    client = new StockistClient({ baseUrl, accessToken: token });
    oauth = false;
    show('using STOCKIST_TOKEN', `${token.slice(0, 12)}… (no OAuth exchange)`);
  } else {
    const demo = await demoCredentials();
    if (!demo) throw new Error('no credentials: set STOCKIST_CLIENT_ID and STOCKIST_CLIENT_SECRET (or STOCKIST_TOKEN), or run beside `npm start` so data/admin-key exists');
    show('created merchant "Quickstart" through the operator API (local demo)', `client_id ${demo.clientId}`);
    client = new StockistClient({ baseUrl, ...demo });
  }
  if (oauth) {
    const access = await client.getAccessToken();
    show('POST /openapi/oauth/token (client_credentials)', `${access.slice(0, 12)}… (refreshed automatically before it expires)`);
  }

  step('Categories');
  const tree = await client.getCategories();
  const first = tree.list[0];
  show('root categories', tree.list.length);
  if (first) show('first', `${first.name} (${first.categoryId}), ${first.child.length} subcategories`);

  step('Stock');
  let pick: { sku: string; warehouseCode: string; qty: number } | null = null;
  for (let pageNumber = 1; !pick && pageNumber <= 20; pageNumber++) {
    const products = await client.listProducts({ pageNumber, pageSize: 30 });
    if (products.list.length === 0) break;
    const stock = await client.queryStocks({ skus: products.list.map((p) => p.sku).join(',') });
    for (const record of stock.list) {
      const place = record.warehouseStockList.find((w) => w.qty >= 2);
      if (place) {
        pick = { sku: record.sku, ...place };
        break;
      }
    }
  }
  if (!pick) throw new Error('no SKU with at least 2 in stock: load the demo data (npm start does)');
  show('picked', `${pick.sku}: ${pick.qty} available in ${pick.warehouseCode}`);

  step('Channel quote');
  const shipToCountry = 'US';
  const quotes = await client.quoteChannels({ shipToCountry, products: [{ sku: pick.sku, quantity: 2 }] });
  for (const q of quotes.slice(0, 5)) show(q.channelCode, `${q.channelNameEn} from ${q.warehouseCode}: ${q.estimatedFreight} ${q.estimatedFreightCurrency}, ${q.deliveryTime}`);
  const channel = quotes[0];

  step('Order');
  const orderId = await client.createOrder({
    customOrderId: `quickstart-${Date.now()}`,
    salePlatform: 'Shopify',
    channelCode: channel.channelCode,
    orderAddress: { country: shipToCountry, recipient: 'Ann Lee', phone: '+1 555 0100', province: 'CA', city: 'Los Angeles', street1: '1 Main St', zip: '90001' },
    orderItemsList: [{ sku: pick.sku, quantity: 2 }],
  });
  show('kkOrderId', orderId);

  step('Query the order');
  const order = await client.getOrder(orderId);
  show('status', `${order.status} / ${order.fulfillmentStatus}; final ${order.finalAmount} ${order.currencyCode} (items ${order.subTotalAmount} + freight ${order.freightAmount})`);
  for (const split of order.splitOrders) show(`split ${split.id}`, `${split.warehouseCode} via ${split.channelCode}, ${split.status}`);

  step('Partial refund');
  const line = order.orderItems[0];
  const refundNo = await client.requestRefund(orderId, { orderItems: [{ itemId: line.itemId, quantity: 1 }], refundReason: "Don't Want Anymore", remark: 'quickstart' });
  show('refundNo', `${refundNo} (1 × ${line.skuCode}), pending review`);

  step('Wait for the decision');
  const deadline = Date.now() + Number(args.timeout) * 1000;
  for (;;) {
    const refund = (await client.listRefunds(orderId)).list.find((r) => r.refundNo === refundNo);
    if (refund && refund.refundStatus !== 'pending_review') {
      show('refund', `${refund.refundStatus}${refund.failureReason ? ` (${refund.failureReason})` : ''}, amount ${refund.amount}`);
      break;
    }
    if (Date.now() > deadline) throw new Error(`refund ${refundNo} still pending after ${args.timeout} s (REFUND_REVIEW=manual? approve it with \`npx stockist refunds approve ${refundNo}\`)`);
    process.stdout.write('   … pending\n');
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const after = await client.getOrder(orderId);
  show('order now', `refundStatus ${after.refundStatus}, refunded ${after.refundedAmount}, refundable ${after.refundableAmount}`);
  console.log('\nDone.');
}

main().catch((error: unknown) => {
  if (error instanceof StockistError) {
    console.error(`\nStockist refused: HTTP ${error.status} ${error.code} ${error.message}${error.requestId ? ` (requestId ${error.requestId})` : ''}`);
    for (const e of error.errors) console.error(`  ${e.field}: ${e.message}`);
  } else {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    console.error(`\n${(error as Error).message}${cause ? ` (${cause})` : ''}`);
    if (cause && /CERT|SELF_SIGNED/.test(cause)) console.error('The server uses a self-signed certificate (npm start): add --insecure.');
  }
  process.exit(1);
});
