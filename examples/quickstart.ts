// The whole merchant flow against a running Stockist, with the typed client:
// token (OAuth) → categories → stock → channel quote → order → query order → partial refund →
// poll until the refund is decided. Each step prints what it got.
//
//   npm start                                  # in one terminal (HTTPS, self-signed, demo data)
//   npm run quickstart -- --insecure           # in another
//
// Credentials, first found wins:
//   STOCKIST_CLIENT_ID + STOCKIST_CLIENT_SECRET   OAuth client credentials (what a merchant has)
//   STOCKIST_TOKEN                                a bearer token (the OAuth step is then skipped)
//   ADMIN_API_KEY or <data dir>/admin-key         local demo only: the "Quickstart" merchant, made
//                                                 once through the operator API and reused (its
//                                                 credentials are kept in <data dir>/quickstart-client.json)
// Options: see USAGE below, or `npm run quickstart -- --help`.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { StockistClient, StockistError } from '../clients/typescript/src/index.ts';

const USAGE = `Usage: npm run quickstart -- [options]

Walks a merchant's whole flow against a running Stockist with the typed client: OAuth token,
categories, stock, channel quote, order, order query, partial refund, refund decision.

Options:
  --url <origin>       the server (STOCKIST_URL; default https://127.0.0.1:8443)
  --insecure           accept the self-signed certificate of \`npm start\` (= NODE_TLS_REJECT_UNAUTHORIZED=0)
  --data-dir <dir>     where the operator key is, for the local demo (DATA_DIR; default ./data)
  --timeout <seconds>  how long to wait for the refund decision (default 60)
  -h, --help           this text

Credentials, first found wins: STOCKIST_CLIENT_ID + STOCKIST_CLIENT_SECRET; STOCKIST_TOKEN; or, beside
\`npm start\`, the operator key (ADMIN_API_KEY or <data dir>/admin-key), with which the quickstart makes
a "Quickstart" merchant once and reuses it on later runs.`;

let args: { url?: string; 'data-dir'?: string; insecure: boolean; timeout: string; help: boolean };
try {
  args = parseArgs({
    options: {
      url: { type: 'string' },
      'data-dir': { type: 'string' },
      insecure: { type: 'boolean', default: false },
      timeout: { type: 'string', default: '60' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }).values as typeof args;
} catch (error) {
  // Unknown or malformed options: one line and the usage, not a stack trace.
  console.error(`quickstart: ${(error as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!/^\d+$/.test(args.timeout)) {
  console.error(`quickstart: --timeout must be a whole number of seconds (got "${args.timeout}")`);
  process.exit(2);
}

const baseUrl = (args.url ?? process.env.STOCKIST_URL ?? 'https://127.0.0.1:8443').replace(/\/+$/, '');
const dataDir = args['data-dir'] ?? process.env.DATA_DIR ?? './data';
// Node's fetch has no per-request "trust this certificate" switch; this is the documented one.
if (args.insecure) process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';

let stepNo = 0;
const step = (title: string) => console.log(`\n${++stepNo}. ${title}`);
const show = (label: string, value: unknown) => console.log(`   ${label}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);

const QUICKSTART_MERCHANT = 'Quickstart';
const savedFile = path.join(dataDir, 'quickstart-client.json');

type DemoCredentials = { merchantId: string; clientId: string; clientSecret: string; note: string } | { merchantId: string; accessToken: string; note: string };

/**
 * Local demo only: with the operator key, use the "Quickstart" merchant — created on the first run
 * (its client secret is shown once, so it is kept in the data folder), reused on every later one.
 */
async function demoCredentials(): Promise<DemoCredentials | null> {
  const keyFile = path.join(dataDir, 'admin-key');
  const adminKey = process.env.ADMIN_API_KEY || (fs.existsSync(keyFile) ? fs.readFileSync(keyFile, 'utf8').trim() : null);
  if (!adminKey) return null;
  const admin = async <T>(method: string, url: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${baseUrl}/admin/v1${url}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const envelope = (await response.json()) as { data?: T; message?: string };
    if (!response.ok || !envelope.data) throw new Error(`operator API ${method} ${url} failed: HTTP ${response.status} ${envelope.message ?? ''}`);
    return envelope.data;
  };
  const { list } = await admin<{ list: { merchantId: string; name: string; status: string; clientId: string }[] }>('GET', '/merchants');
  const existing = list.find((m) => m.name === QUICKSTART_MERCHANT && m.status === 'active');
  const saved = fs.existsSync(savedFile)
    ? (JSON.parse(fs.readFileSync(savedFile, 'utf8')) as { url: string; merchantId: string; clientId: string; clientSecret: string })
    : null;
  if (existing && saved && saved.url === baseUrl && saved.clientId === existing.clientId) {
    return { ...saved, note: `reusing merchant "${QUICKSTART_MERCHANT}" ${existing.merchantId} (client_id ${saved.clientId}, from ${savedFile})` };
  }
  if (existing) {
    // Its secret was shown only when it was made, elsewhere: an operator-issued token for it instead.
    const token = await admin<{ accessToken: string }>('POST', `/merchants/${existing.merchantId}/tokens`, { expiresInSeconds: 3600 });
    return {
      merchantId: existing.merchantId,
      accessToken: token.accessToken,
      note: `reusing merchant "${QUICKSTART_MERCHANT}" ${existing.merchantId} with a 1-hour token from the operator API (its OAuth secret is not in ${savedFile})`,
    };
  }
  const created = await admin<{ merchantId: string; clientId: string; clientSecret: string }>('POST', '/merchants', { name: QUICKSTART_MERCHANT });
  let kept = '';
  if (fs.existsSync(dataDir)) {
    fs.writeFileSync(
      savedFile,
      `${JSON.stringify({ url: baseUrl, merchantId: created.merchantId, clientId: created.clientId, clientSecret: created.clientSecret }, null, 2)}\n`,
      { mode: 0o600 },
    );
    kept = `; kept in ${savedFile} for the next run`;
  }
  return {
    ...created,
    note: `created merchant "${QUICKSTART_MERCHANT}" ${created.merchantId} through the operator API (client_id ${created.clientId}${kept})`,
  };
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
    if (!demo)
      throw new Error(
        'no credentials: set STOCKIST_CLIENT_ID and STOCKIST_CLIENT_SECRET (or STOCKIST_TOKEN), or run beside `npm start` so data/admin-key exists',
      );
    show('local demo', demo.note);
    if ('accessToken' in demo) {
      client = new StockistClient({ baseUrl, accessToken: demo.accessToken });
      oauth = false;
    } else {
      client = new StockistClient({ baseUrl, clientId: demo.clientId, clientSecret: demo.clientSecret });
    }
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
  // Candidates: a SKU with at least 2 in one warehouse. The order names that warehouse on its line,
  // so it ships from where the stock was shown (unnamed, allocation would prefer a warehouse in
  // the destination country: SPEC §4.2).
  const shipToCountry = 'US';
  let pick: { sku: string; warehouseCode: string; qty: number } | null = null;
  let quotes: Awaited<ReturnType<StockistClient['quoteChannels']>> = [];
  let tried = 0;
  for (let pageNumber = 1; !pick && pageNumber <= 20 && tried < 20; pageNumber++) {
    const products = await client.listProducts({ pageNumber, pageSize: 30 });
    if (products.list.length === 0) break;
    const stock = await client.queryStocks({ skus: products.list.map((p) => p.sku).join(',') });
    for (const record of stock.list) {
      const place = record.warehouseStockList.find((w) => w.qty >= 2);
      if (!place || tried++ >= 20) continue;
      try {
        quotes = await client.quoteChannels({ shipToCountry, products: [{ sku: record.sku, quantity: 2, warehouseCode: place.warehouseCode }] });
      } catch (error) {
        // No channel from that warehouse to the destination: try the next SKU.
        if (error instanceof StockistError && error.status === 422) continue;
        throw error;
      }
      pick = { sku: record.sku, ...place };
      break;
    }
  }
  if (!pick) throw new Error(`no SKU with at least 2 in a warehouse that ships to ${shipToCountry}: load the demo data (npm start does)`);
  show('picked', `${pick.sku}: ${pick.qty} available in ${pick.warehouseCode}; the order will name ${pick.warehouseCode}, so it ships from there`);

  step('Channel quote');
  for (const q of quotes.slice(0, 5))
    show(q.channelCode, `${q.channelNameEn} from ${q.warehouseCode}: ${q.estimatedFreight} ${q.estimatedFreightCurrency}, ${q.deliveryTime}`);
  const channel = quotes[0];

  step('Order');
  const orderId = await client.createOrder({
    customOrderId: `quickstart-${Date.now()}`,
    salePlatform: 'Shopify',
    channelCode: channel.channelCode,
    orderAddress: {
      country: shipToCountry,
      recipient: 'Ann Lee',
      phone: '+1 555 0100',
      province: 'CA',
      city: 'Los Angeles',
      street1: '1 Main St',
      zip: '90001',
    },
    orderItemsList: [{ sku: pick.sku, quantity: 2, warehouseCode: pick.warehouseCode }],
  });
  show('kkOrderId', orderId);

  step('Query the order');
  const order = await client.getOrder(orderId);
  show(
    'status',
    `${order.status} / ${order.fulfillmentStatus}; final ${order.finalAmount} ${order.currencyCode} (items ${order.subTotalAmount} + freight ${order.freightAmount})`,
  );
  for (const split of order.splitOrders) show(`split ${split.id}`, `${split.warehouseCode} via ${split.channelCode}, ${split.status}`);

  step('Partial refund');
  const line = order.orderItems[0];
  const refundNo = await client.requestRefund(orderId, {
    orderItems: [{ itemId: line.itemId, quantity: 1 }],
    refundReason: "Don't Want Anymore",
    remark: 'quickstart',
  });
  show('refundNo', `${refundNo} (1 × ${line.skuCode}), pending review`);

  step('Wait for the decision');
  const deadline = Date.now() + Number(args.timeout) * 1000;
  for (;;) {
    const refund = (await client.listRefunds(orderId)).list.find((r) => r.refundNo === refundNo);
    if (refund && refund.refundStatus !== 'pending_review') {
      show('refund', `${refund.refundStatus}${refund.failureReason ? ` (${refund.failureReason})` : ''}, amount ${refund.amount}`);
      break;
    }
    if (Date.now() > deadline)
      throw new Error(
        `refund ${refundNo} still pending after ${args.timeout} s (REFUND_REVIEW=manual? approve it with \`npx stockist refunds approve ${refundNo}\`)`,
      );
    process.stdout.write('   … pending\n');
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const after = await client.getOrder(orderId);
  show('order now', `refundStatus ${after.refundStatus}, refunded ${after.refundedAmount}, refundable ${after.refundableAmount}`);

  step('Your account');
  // The order was charged to the account when it was placed, and the refund credited back (SPEC §15).
  const account = await client.account.get();
  show('GET /openapi/v1/account', `balance ${account.balance} ${account.currency}, ${account.billingMode}, available ${account.available}`);
  let shown = 0;
  for await (const entry of client.account.transactions()) {
    show(`  ${entry.type}`, `${entry.amount} → balance ${entry.balanceAfter}${entry.orderId ? ` (order ${entry.orderId})` : ''}`);
    if (++shown === 3) break;
  }

  step('Claims after shipment');
  // Once a split order has shipped, a lost or damaged parcel is a claim (SPEC §18): upload photos with
  // client.claims.upload(bytes, 'image/jpeg'), then client.claims.open({ orderId: <split order id>,
  // reason: 'damaged', resolution: 'refund', items: [{ sku, quantity }], evidence: [fileId] }).
  let claims = 0;
  for await (const claim of client.claims.list()) {
    show(`  claim ${claim.claimNo}`, `${claim.status} (${claim.reason}, ${claim.resolution}) on split order ${claim.orderId}`);
    if (++claims === 3) break;
  }
  if (claims === 0) show('GET /openapi/v1/claims', `no claims yet (split order ${order.splitOrders[0].id} can be claimed once it ships)`);
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
