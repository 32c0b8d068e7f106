// Keeps a local copy of the supplier's stock in step by push (`stock.changed` webhooks), with the
// typed client — what a storefront does to stop selling what ran out:
//   1. baseline: walk GET /v1/product/stocks/changes to its end (each stock row's latest quantity);
//   2. start a receiver and register it for stock.changed from the cursor the walk ended at, so
//      nothing is missed or repeated between polling and push;
//   3. apply every delivery in order (signature checked; a webhook-id seen before is ignored);
//   4. on Ctrl-C (SIGINT/SIGTERM): compare with GET /v1/product/stocks, delete the endpoint, and
//      write the state (--out).
//
//   npm start                                   # in one terminal (HTTPS, self-signed, demo data)
//   npx tsx examples/stock-sync.ts --insecure   # in another; then place orders or change stock
//
// Credentials as in examples/quickstart.ts: STOCKIST_CLIENT_ID + STOCKIST_CLIENT_SECRET, or
// STOCKIST_TOKEN, or (local demo) ADMIN_API_KEY / <data dir>/admin-key to create a merchant.
// Options: --url <origin> (STOCKIST_URL, default https://127.0.0.1:8443), --data-dir <dir>,
// --insecure, --port <n> for the receiver (default: any free port), --public-url <url> (what the
// server calls; default http://127.0.0.1:<port>/stock — sandbox servers accept loopback URLs),
// --skus A,B (follow only these SKUs), --out <file> (the state as JSON on exit), --keep (leave the
// endpoint registered on exit).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { StockistClient, StockistError, verifyWebhook, type WebhookEvent } from '../clients/typescript/src/index.ts';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    'data-dir': { type: 'string' },
    insecure: { type: 'boolean', default: false },
    port: { type: 'string', default: '0' },
    'public-url': { type: 'string' },
    skus: { type: 'string' },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const baseUrl = (args.url ?? process.env.STOCKIST_URL ?? 'https://127.0.0.1:8443').replace(/\/+$/, '');
const dataDir = args['data-dir'] ?? process.env.DATA_DIR ?? './data';
if (args.insecure) process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const skus = args.skus ? args.skus.split(',').filter(Boolean) : null;

/** The local copy: `sku/warehouseCode` → quantity available to sell. */
const stock = new Map<string, number>();
const keyOf = (sku: string, warehouseCode: string) => `${sku}/${warehouseCode}`;

async function connect(): Promise<StockistClient> {
  const { STOCKIST_CLIENT_ID: clientId, STOCKIST_CLIENT_SECRET: clientSecret, STOCKIST_TOKEN: token } = process.env;
  if (clientId && clientSecret) return new StockistClient({ baseUrl, clientId, clientSecret });
  if (token) return new StockistClient({ baseUrl, accessToken: token });
  // Local demo only: the operator key makes a merchant with OAuth credentials for this run.
  const keyFile = path.join(dataDir, 'admin-key');
  const adminKey = process.env.ADMIN_API_KEY || (fs.existsSync(keyFile) ? fs.readFileSync(keyFile, 'utf8').trim() : null);
  if (!adminKey)
    throw new Error(
      'no credentials: set STOCKIST_CLIENT_ID and STOCKIST_CLIENT_SECRET (or STOCKIST_TOKEN), or run beside `npm start` so data/admin-key exists',
    );
  const response = await fetch(`${baseUrl}/admin/v1/merchants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Stock sync' }),
  });
  const body = (await response.json()) as { data?: { clientId: string; clientSecret: string }; message?: string };
  if (!response.ok || !body.data) throw new Error(`creating the "Stock sync" merchant failed: HTTP ${response.status} ${body.message ?? ''}`);
  console.log(`created merchant "Stock sync" through the operator API (local demo), client_id ${body.data.clientId}`);
  return new StockistClient({ baseUrl, ...body.data });
}

/** 1. Every change the feed still holds, in commit order: the latest quantity of each row wins. */
async function baseline(client: StockistClient): Promise<string> {
  let cursor: string | undefined;
  let changes = 0;
  for (;;) {
    const page = await client.stockChanges({ limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const c of page.changes) if (!skus || skus.includes(c.sku)) stock.set(keyOf(c.sku, c.warehouseCode), c.qty);
    changes += page.changes.length;
    cursor = page.nextCursor;
    if (!page.hasMore) break;
  }
  console.log(`baseline: ${changes} changes from the feed → ${stock.size} stock rows; cursor ${cursor}`);
  return cursor;
}

/** 2–3. The receiver: verify, de-duplicate, apply in the order received (the server sends one at a time). */
function receiver(secret: () => string | null) {
  const applied = new Set<string>();
  let deliveries = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = secret();
      // A delivery can beat the registration's answer here: ask for it again later.
      if (!key) return void res.writeHead(503).end();
      let event: WebhookEvent;
      try {
        event = verifyWebhook(req.headers as Record<string, string>, Buffer.concat(chunks), key) as WebhookEvent;
      } catch (error) {
        console.error(`refused a delivery: ${(error as Error).message}`);
        return void res.writeHead(400).end();
      }
      const id = String(req.headers['webhook-id']);
      if (event.type === 'stock.changed' && !applied.has(id)) {
        applied.add(id);
        for (const c of event.data.changes) stock.set(keyOf(c.sku, c.warehouseCode), c.qty);
        deliveries++;
        const sample = event.data.changes
          .slice(0, 3)
          .map((c) => `${c.sku}@${c.warehouseCode}=${c.qty}`)
          .join(', ');
        console.log(
          `delivery ${id}: ${event.data.changes.length} changes (${sample}${event.data.changes.length > 3 ? ', …' : ''}) → cursor ${event.data.cursor}`,
        );
      }
      res.writeHead(200).end();
    });
  });
  return { server, count: () => deliveries };
}

/** 4. The local copy against GET /v1/product/stocks (30 SKUs per call). */
async function verify(client: StockistClient): Promise<number> {
  const wanted = [...new Set([...stock.keys()].map((k) => k.slice(0, k.lastIndexOf('/'))))];
  let differ = 0;
  for (let i = 0; i < wanted.length; i += 30) {
    const page = await client.queryStocks({ skus: wanted.slice(i, i + 30).join(',') });
    for (const record of page.list) {
      for (const w of record.warehouseStockList) {
        const mine = stock.get(keyOf(record.sku, w.warehouseCode));
        if (mine !== w.qty) {
          differ++;
          console.log(`  ${record.sku}@${w.warehouseCode}: local ${mine}, server ${w.qty} (changed since the last delivery?)`);
        }
      }
    }
  }
  return differ;
}

async function main() {
  console.log(`Stockist stock sync against ${baseUrl}`);
  const client = await connect();
  const cursor = await baseline(client);
  let secret: string | null = null;
  const { server, count } = receiver(() => secret);
  await new Promise<void>((resolve) => server.listen(Number(args.port), '127.0.0.1', resolve));
  const url = args['public-url'] ?? `http://127.0.0.1:${(server.address() as AddressInfo).port}/stock`;
  const endpoint = await client.createWebhook({ url, events: ['stock.changed'], cursor, ...(skus ? { skus } : {}) });
  secret = endpoint.secret;
  console.log(`Listening for stock.changed at ${url} (endpoint ${endpoint.id}${skus ? `, ${skus.length} SKUs` : ', every SKU'}); Ctrl-C to stop.`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    server.close();
    const differ = await verify(client);
    console.log(
      differ === 0 ? `verified ${stock.size} stock rows against /v1/product/stocks: all equal` : `${differ} stock rows differ from /v1/product/stocks`,
    );
    if (!args.keep) await client.deleteWebhook(endpoint.id);
    if (args.out) fs.writeFileSync(args.out, `${JSON.stringify(Object.fromEntries(stock), null, 1)}\n`);
    console.log(`${count()} deliveries applied; ${stock.size} stock rows${args.out ? ` written to ${args.out}` : ''}.`);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop().catch(fail));
  process.on('SIGTERM', () => void stop().catch(fail));
}

function fail(error: unknown): never {
  if (error instanceof StockistError) {
    console.error(`Stockist refused: HTTP ${error.status} ${error.code} ${error.message}${error.requestId ? ` (requestId ${error.requestId})` : ''}`);
    for (const e of error.errors) console.error(`  ${e.field}: ${e.message}`);
  } else {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    console.error(`${(error as Error).message}${cause ? ` (${cause})` : ''}`);
    if (cause && /CERT|SELF_SIGNED/.test(cause)) console.error('The server uses a self-signed certificate (npm start): add --insecure.');
  }
  process.exit(1);
}

main().catch(fail);
