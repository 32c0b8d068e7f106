import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { makeDatabase } from '../../scripts/chaos/harness.ts';
import { order } from '../fixtures.ts';
import { startS3Server } from '../s3-server.ts';
import { DIALECTS, PG_SKIP, PG_URL, filesUnder } from '../helpers.ts';
import { exited, freePort, runCliAsync, serverTestEnv, startProcess, tempDir } from './process.ts';

/**
 * SPEC §17, "what it promises, tested" (issue 39, item 5), with real processes only: a `serve`
 * process takes orders, refunds and whole-order refunds (cancellations) from concurrent clients;
 * `stockist backup` runs beside it while they keep going; the archive is restored into a new
 * database and a second server started on it. There, read through the API with the merchant's
 * existing token and with a token granted to its existing OAuth client:
 *  - every order and refund acknowledged before the backup began is present;
 *  - no order is half-written: its lines, its split orders and its one ledger charge are all there,
 *    and every refund that succeeded carries its credit and its returned quantities;
 *  - nothing is there that no client sent; orders acknowledged after the backup ended may be
 *    missing, but any present is whole; `stockist ledger verify` passes on the restored database;
 *  - claims (§18) opened on shipped orders during the load, half of them credited, come back with
 *    their state, their one `claim_credit` each, and their evidence byte for byte — evidence kept in
 *    DATA_DIR/files, or in the S3 bucket of §17 (s3rver, started here), where the archive itself is
 *    uploaded by the recorded `stockist backup`, fetched back from the bucket and restored into a
 *    new prefix of it.
 */

const ADMIN_KEY = 'backup-load-admin-key-012345';
const CLIENTS = 4;
/** Orders acknowledged before the backup starts, and after it ends, before the load stops. */
const ORDERS_BEFORE = 24;
const ORDERS_AFTER = 8;
/** Claims opened (half of them credited) before the backup starts. */
const CLAIMS_BEFORE = 4;

// Two warehouses, each SKU stocked in one: an order naming SKUs of both is split in two.
const SKUS = { G007: ['LOAD-1', 'LOAD-2', 'LOAD-3'], US01: ['LOAD-4', 'LOAD-5'] };
const CATALOGUE = {
  warehouses: [
    { warehouseCode: 'G007', name: 'Shenzhen', countryCode: 'CN' },
    { warehouseCode: 'US01', name: 'Los Angeles', countryCode: 'US' },
  ],
  products: Object.values(SKUS)
    .flat()
    .map((sku, i) => ({ sku, name: `Load ${sku}`, price: `${3 + i}.25`, weightGrams: 300 + 50 * i })),
  stocks: Object.entries(SKUS).flatMap(([warehouseCode, skus]) => skus.map((sku) => ({ sku, warehouseCode, qty: 1_000_000 }))),
  channels: [
    {
      channelCode: 'STD',
      name: 'Standard Shipping',
      channelType: 'Standard',
      warehouseCodes: ['G007', 'US01'],
      countries: ['*'],
      baseFee: 2,
      perKgFee: '1.50',
      deliveryDaysMin: 6,
      deliveryDaysMax: 10,
    },
  ],
};
const ALL_SKUS = Object.values(SKUS).flat();

interface Answer {
  status: number;
  body: any;
}
interface Acked {
  id: string;
  /** performance.now() when the answer had been read: the write committed before this. */
  at: number;
}
interface AckedOrder extends Acked {
  lines: Map<string, number>;
}
interface AckedRefund extends Acked {
  orderId: string;
}
interface AckedFile extends Acked {
  sha256: string;
}
interface AckedClaim extends Acked {
  splitOrderId: string;
  sku: string;
  fileId: string;
  /** When the operator's approval (→ credited) had been answered, if it was asked for. */
  creditedAt?: number;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
/** Evidence the type check accepts (PNG's signature), its bytes distinct for each upload. */
const evidenceBytes = (n: number) =>
  Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(Array.from({ length: 3000 + n }, (_, i) => (i * (n + 7)) % 251))]);

/** A real S3-compatible server (s3rver) in this process, its bucket, and what it holds under a prefix. */
async function s3Server(ctx: TestContext) {
  const { endpoint, client } = await startS3Server(ctx, 'stockist-load');
  const env = (prefix: string) => ({
    BACKUP_S3_URL: `s3://stockist-load/${prefix}`,
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_REGION: 'us-east-1',
  });
  const keys = async (prefix: string) =>
    ((await client.send(new ListObjectsV2Command({ Bucket: 'stockist-load', Prefix: prefix }))).Contents ?? []).map((o) => o.Key!);
  const download = async (key: string) =>
    Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: 'stockist-load', Key: key }))).Body!.transformToByteArray());
  return { env, keys, download };
}

const cents = (amount: number) => Math.round(amount * 100);
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : Number.NaN;
};

function api(base: string) {
  const call = async (method: string, url: string, token: string, body?: unknown): Promise<Answer> => {
    const r = await fetch(base + url, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await r.text();
    try {
      return { status: r.status, body: JSON.parse(text) };
    } catch {
      return { status: r.status, body: text };
    }
  };
  /** Every row of a cursor walk (the walk misses nothing that existed when it began). */
  const walk = async (url: string, token: string): Promise<any[]> => {
    const rows: any[] = [];
    let next = `${url}?pageSize=250`;
    for (;;) {
      const r = await call('GET', next, token);
      assert.equal(r.status, 200, `${next}: ${JSON.stringify(r.body)}`);
      rows.push(...r.body.data.list);
      if (!r.body.data.nextCursor) return rows;
      next = `${url}?cursor=${encodeURIComponent(r.body.data.nextCursor)}`;
    }
  };
  const grant = async (params: Record<string, string>, clientId: string, secret: string): Promise<Answer> => {
    const r = await fetch(`${base}/openapi/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`,
      },
      body: new URLSearchParams(params).toString(),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: r.status, body: await r.json() };
  };
  /** A raw-body evidence upload (§18). */
  const upload = async (token: string, bytes: Buffer): Promise<Answer> => {
    const r = await fetch(`${base}/openapi/v1/claims/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png' },
      body: new Uint8Array(bytes),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: r.status, body: await r.json() };
  };
  const file = async (token: string, fileId: string) => {
    const r = await fetch(`${base}/openapi/v1/claims/files/${fileId}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(60_000) });
    return { status: r.status, bytes: Buffer.from(await r.arrayBuffer()) };
  };
  return { call, walk, grant, upload, file };
}

for (const dialect of DIALECTS)
  for (const evidenceIn of ['DATA_DIR/files', 'the S3 bucket'] as const)
    describe(`a backup under order load, restored elsewhere (${dialect}, evidence in ${evidenceIn}, real processes)`, {
      skip: dialect === 'postgres' ? PG_SKIP : false,
    }, () => {
      it('holds every order, refund and claim acknowledged before it began, none half-written, with the existing token and OAuth client', {
        timeout: 600_000,
      }, async (c) => {
        const bucket = evidenceIn === 'the S3 bucket' ? await s3Server(c) : null;
        const sourceDir = tempDir();
        const targetDir = tempDir();
        const source = await makeDatabase(dialect, sourceDir, PG_URL ?? undefined);
        const target = dialect === 'postgres' ? await makeDatabase(dialect, targetDir, PG_URL ?? undefined) : null;
        const processes: Awaited<ReturnType<typeof startProcess>>[] = [];
        c.after(async () => {
          for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
          await Promise.all(processes.map((p) => exited(p.child)));
          await source.drop();
          await target?.drop();
          fs.rmSync(sourceDir, { recursive: true, force: true });
          fs.rmSync(targetDir, { recursive: true, force: true });
        });
        const common = {
          ...serverTestEnv(ADMIN_KEY),
          REFUND_REVIEW: 'auto',
          REFUND_AUTO_DELAY_MS: '200',
        };
        const sourceEnv = { ...common, DATA_DIR: sourceDir, DATABASE_URL: source.url, BACKUP_DIR: path.join(sourceDir, 'backups'), ...bucket?.env('site-a') };
        // The restore's target: a new DATA_DIR (SQLite: DATA_DIR/stockist.db), or a new database; with
        // the bucket, a new prefix of it.
        const targetEnv: Record<string, string> = {
          ...common,
          DATA_DIR: targetDir,
          ...(target ? { DATABASE_URL: target.url } : {}),
          ...bucket?.env('restored'),
        };
        const serve = async (env: Record<string, string>) => {
          const port = await freePort();
          const p = await startProcess(['serve', '--port', String(port)], env, /Stockist listening/);
          processes.push(p);
          return { ...p, ...api(`http://127.0.0.1:${port}`) };
        };

        // --- the source: a catalogue, a merchant with a token, an OAuth client and a refresh token
        const first = await serve(sourceEnv);
        assert.equal((await first.call('POST', '/admin/v1/import', ADMIN_KEY, CATALOGUE)).status, 200);
        const merchant = (await first.call('POST', '/admin/v1/merchants', ADMIN_KEY, { name: 'Load Shop' })).body.data;
        const issued = await first.call('POST', `/admin/v1/merchants/${merchant.merchantId}/tokens`, ADMIN_KEY, {});
        assert.equal(issued.status, 200, JSON.stringify(issued.body));
        const token: string = issued.body.data.accessToken;
        const granted = await first.grant({ grant_type: 'client_credentials' }, merchant.clientId, merchant.clientSecret);
        assert.equal(granted.status, 200, JSON.stringify(granted.body));

        // --- the load: orders, partial refunds and cancellations from concurrent clients
        const orders = new Map<string, AckedOrder>();
        const refunds = new Map<string, AckedRefund>();
        const unrefunded: AckedOrder[] = [];
        const problems: string[] = [];
        const latencies: { at: number; ms: number }[] = [];
        let sent = 0;
        let stopped = false;
        const placeOrder = async () => {
          const n = sent++;
          // One to three lines of distinct SKUs; every third order names both warehouses (two split orders).
          const skus = n % 3 === 0 ? [SKUS.G007[n % 3], SKUS.US01[n % 2]] : [ALL_SKUS[n % ALL_SKUS.length]];
          if (n % 5 === 0) skus.push(ALL_SKUS.find((sku) => !skus.includes(sku))!);
          const lines = skus.map((sku, i) => ({ sku, quantity: 1 + ((n + i) % 3) }));
          const began = performance.now();
          const r = await first.call('POST', '/openapi/v1/order/orders', token, order(lines, { remark: `load:${n}` }));
          const at = performance.now();
          latencies.push({ at: began, ms: at - began });
          if (r.status !== 200) return void problems.push(`order ${n}: ${r.status} ${JSON.stringify(r.body)}`);
          const quantities = new Map<string, number>();
          for (const l of lines) quantities.set(l.sku, (quantities.get(l.sku) ?? 0) + l.quantity);
          const acked = { id: String(r.body.data), at, lines: quantities };
          orders.set(acked.id, acked);
          unrefunded.push(acked);
        };
        const refund = async () => {
          // Each order is refunded at most once here: a partial refund of one unit, or the whole order.
          const o = unrefunded.splice(sent % unrefunded.length, 1)[0];
          const whole = sent++ % 3 === 0;
          const body = whole ? { refundReason: 'Other', remark: 'load: cancel' } : { skuCode: [...o.lines.keys()][0], quantity: 1, refundReason: 'Other' };
          const r = await first.call('POST', `/openapi/v2/order/orders/${o.id}/refund`, token, body);
          if (r.status !== 200) return void problems.push(`refund of ${o.id}: ${r.status} ${JSON.stringify(r.body)}`);
          refunds.set(String(r.body.data), { id: String(r.body.data), orderId: o.id, at: performance.now() });
        };
        const client = async () => {
          while (!stopped && problems.length === 0) await (unrefunded.length > 4 && sent % 4 === 3 ? refund() : placeOrder());
        };
        // The after-sales desk beside them: an order ships, its merchant uploads a photo and opens a
        // claim on one unit of it; every other claim the operator approves at once (→ credited).
        const files = new Map<string, AckedFile>();
        const claims = new Map<string, AckedClaim>();
        let claimed = 0;
        const claimant = async () => {
          while (!stopped && problems.length === 0) {
            const o = unrefunded.length > 4 ? unrefunded.shift() : undefined;
            if (!o) {
              await new Promise((r) => setTimeout(r, 5));
              continue;
            }
            const n = claimed++;
            const read = await first.call('GET', `/openapi/v2/order/orders/${o.id}`, token);
            if (read.status !== 200) return void problems.push(`order ${o.id}: ${read.status} ${JSON.stringify(read.body)}`);
            const split = read.body.data.splitOrders[0];
            const sku = read.body.data.orderItems.find((i: any) => i.splitOrderId === split.id).skuCode;
            const shipped = await first.call('POST', `/admin/v1/split-orders/${split.id}/ship`, ADMIN_KEY, { carrier: 'UPS', trackingCode: `1Z${split.id}` });
            if (shipped.status !== 200) return void problems.push(`ship ${split.id}: ${shipped.status} ${JSON.stringify(shipped.body)}`);
            const bytes = evidenceBytes(n);
            const uploaded = await first.upload(token, bytes);
            if (uploaded.status !== 200) return void problems.push(`upload ${n}: ${uploaded.status} ${JSON.stringify(uploaded.body)}`);
            const fileId = String(uploaded.body.data.fileId);
            files.set(fileId, { id: fileId, at: performance.now(), sha256: sha256(bytes) });
            const opened = await first.call('POST', '/openapi/v1/claims', token, {
              orderId: split.id,
              reason: 'damaged',
              resolution: 'refund',
              items: [{ sku, quantity: 1 }],
              description: `load:claim:${n}`,
              evidence: [fileId],
            });
            if (opened.status !== 200) return void problems.push(`claim ${n}: ${opened.status} ${JSON.stringify(opened.body)}`);
            const claim: AckedClaim = { id: String(opened.body.data.claimNo), at: performance.now(), splitOrderId: String(split.id), sku, fileId };
            claims.set(claim.id, claim);
            if (n % 2 === 1) continue;
            const approved = await first.call('POST', `/admin/v1/claims/${claim.id}/approve`, ADMIN_KEY, { note: 'load' });
            if (approved.status !== 200 || approved.body.data.status !== 'credited')
              return void problems.push(`approve ${claim.id}: ${approved.status} ${JSON.stringify(approved.body)}`);
            claim.creditedAt = performance.now();
          }
        };
        const ackedSince = (t: number) => [...orders.values()].filter((o) => o.at > t).length;
        const until = async (condition: () => boolean) => {
          while (!condition() && problems.length === 0) await new Promise((r) => setTimeout(r, 5));
        };
        const load = [...Array.from({ length: CLIENTS }, () => client()), claimant()];
        await until(() => orders.size >= ORDERS_BEFORE && claims.size >= CLAIMS_BEFORE);

        // --- the backup, beside the server while the clients keep going
        // (The recorded backup: into BACKUP_DIR, verified, and with the bucket uploaded into it.)
        const backupBegan = performance.now();
        const backup = await runCliAsync(['backup'], sourceEnv);
        const backupEnded = performance.now();
        const during = ackedSince(backupBegan);
        await until(() => ackedSince(backupEnded) >= ORDERS_AFTER);
        stopped = true;
        await Promise.all(load);
        assert.deepEqual(problems, [], 'every request of the load was answered 200, during the backup too');
        assert.equal(backup.status, 0, backup.stderr);
        const written = /^backup (\S+\.tar) /m.exec(backup.stdout)?.[1];
        assert.ok(written, backup.stdout);
        let archive = written;
        if (bucket) {
          // Uploaded, and the local copy gone: the restore takes it back from the bucket.
          assert.match(written, /^s3:\/\/stockist-load\/site-a\/stockist-\w+-\d{8}T\d{6}Z\.tar$/);
          const key = written.slice('s3://stockist-load/'.length);
          assert.ok((await bucket.keys('site-a/')).includes(key), `${key} is in the bucket`);
          archive = path.join(targetDir, 'from-the-bucket.tar');
          fs.writeFileSync(archive, await bucket.download(key));
          assert.equal(filesUnder(path.join(sourceDir, 'files')).length, 0, 'with the bucket, no evidence is kept in DATA_DIR/files');
        }
        assert.ok(during > 0, 'orders were acknowledged while the backup ran');
        const before = [...orders.values()].filter((o) => o.at < backupBegan);
        const refundsBefore = [...refunds.values()].filter((r) => r.at < backupBegan);
        const claimsBefore = [...claims.values()].filter((x) => x.at < backupBegan);
        const filesBefore = [...files.values()].filter((f) => f.at < backupBegan);
        const intake = (from: number, to: number) => latencies.filter((l) => l.at >= from && l.at < to).map((l) => l.ms);
        const [outside, inside] = [intake(0, backupBegan), intake(backupBegan, backupEnded)];
        c.diagnostic(
          `${orders.size} orders and ${refunds.size} refunds acknowledged: ${before.length} orders and ${refundsBefore.length} refunds before the backup began, ` +
            `${claimsBefore.length} claims (${claimsBefore.filter((x) => x.creditedAt! < backupBegan).length} credited) before it, ` +
            `${during} orders while it ran (${((backupEnded - backupBegan) / 1000).toFixed(1)} s, the process's start included); ` +
            `create-order p50/p99 ${percentile(outside, 50).toFixed(0)}/${percentile(outside, 99).toFixed(0)} ms before it, ` +
            `${percentile(inside, 50).toFixed(0)}/${percentile(inside, 99).toFixed(0)} ms during it`,
        );
        first.child.kill('SIGTERM');
        await exited(first.child);

        // --- restore into the new place, check it with the real commands, and serve it
        // (Awaited, not run synchronously: s3rver answers from this process's event loop.)
        const restored = await runCliAsync(['restore', archive], targetEnv);
        assert.equal(restored.status, 0, restored.stdout + restored.stderr);
        const restoredCounts = /^restored merchants 1, orders (\d+), refunds (\d+),/m.exec(restored.stdout);
        assert.ok(restoredCounts, restored.stdout);
        const verified = await runCliAsync(['ledger', 'verify'], targetEnv);
        assert.equal(verified.status, 0, verified.stdout + verified.stderr);
        assert.match(verified.stdout, /every invariant holds/);
        // Refunds still pending at the backup's instant stay so while the checks read (manual review).
        const second = await serve({ ...targetEnv, REFUND_REVIEW: 'manual' });

        // The merchant's existing token, and a new token granted to its existing OAuth client.
        const viaToken = await second.walk('/openapi/v2/order/orders', token);
        const oauth = await second.grant({ grant_type: 'client_credentials' }, merchant.clientId, merchant.clientSecret);
        assert.equal(oauth.status, 200, JSON.stringify(oauth.body));
        const viaClient = await second.walk('/openapi/v2/order/orders', oauth.body.access_token);
        assert.deepEqual(viaClient.map((o) => o.id).sort(), viaToken.map((o) => o.id).sort(), 'both credentials read the same orders');
        const refreshed = await second.grant(
          { grant_type: 'refresh_token', refresh_token: granted.body.refresh_token },
          merchant.clientId,
          merchant.clientSecret,
        );
        assert.equal(refreshed.status, 200, `the refresh token issued before the backup rotates: ${JSON.stringify(refreshed.body)}`);
        const wrong = await second.grant({ grant_type: 'client_credentials' }, merchant.clientId, `${merchant.clientSecret}x`);
        assert.equal(wrong.status, 401, 'a wrong secret is still refused');
        assert.equal(wrong.body.error, 'invalid_client');

        // --- what the restored server holds
        const present = new Map(viaToken.map((o) => [String(o.id), o]));
        assert.equal(present.size, Number(restoredCounts[1]), 'the API lists every order restore counted');
        for (const o of before) assert.ok(present.has(o.id), `order ${o.id}, acknowledged before the backup began, is restored`);
        for (const id of present.keys()) assert.ok(orders.has(id), `restored order ${id} is one a client placed`);
        const transactions = await second.walk('/openapi/v1/account/transactions', token);
        const charges = transactions.filter((t) => t.type === 'order_charge');
        const credits = transactions.filter((t) => t.type === 'refund_credit');
        const claimCredits = transactions.filter((t) => t.type === 'claim_credit');
        assert.equal(charges.length + credits.length + claimCredits.length, transactions.length, 'no other kind of entry was made');
        const restoredRefunds = new Map<string, any>();
        for (const o of present.values()) {
          const why = `restored order ${o.id}`;
          // Its lines: what the client sent, SKU by SKU.
          const quantities = new Map<string, number>();
          for (const item of o.orderItems) quantities.set(item.skuCode, (quantities.get(item.skuCode) ?? 0) + item.productNum);
          assert.deepEqual(quantities, orders.get(o.id)!.lines, `${why}: its lines`);
          // Its split orders: one per warehouse of its lines, each line in exactly one.
          const warehouses = new Set(o.orderItems.map((i: any) => i.warehouseCode));
          assert.equal(o.splitOrders.length, warehouses.size, `${why}: one split order per warehouse`);
          const inSplits = o.splitOrders.flatMap((s: any) => s.itemIds.map(String)).sort();
          assert.deepEqual(inSplits, o.orderItems.map((i: any) => String(i.id)).sort(), `${why}: each line in one split order`);
          for (const item of o.orderItems) {
            const split = o.splitOrders.find((s: any) => s.id === item.splitOrderId);
            assert.equal(split?.warehouseCode, item.warehouseCode, `${why}: line ${item.id} sits in its warehouse's split order`);
          }
          // Its money: the amounts add up, and it carries exactly one charge of its final amount.
          const lineTotal = o.orderItems.reduce((sum: number, i: any) => sum + cents(i.total), 0);
          assert.equal(cents(o.subTotalAmount), lineTotal, `${why}: subtotal`);
          assert.equal(
            cents(o.freightAmount),
            o.splitOrders.reduce((sum: number, s: any) => sum + cents(s.freightAmount), 0),
            `${why}: freight`,
          );
          assert.equal(cents(o.finalAmount), cents(o.subTotalAmount) + cents(o.freightAmount) - cents(o.couponAmount), `${why}: final amount`);
          const charged = charges.filter((t) => String(t.orderId) === String(o.id));
          assert.equal(charged.length, 1, `${why}: exactly one charge`);
          assert.equal(cents(charged[0].amount), -cents(o.finalAmount), `${why}: charged its final amount`);
          // Its refunds: each succeeded one returned its quantities and carries one credit of its amount.
          const list = (await second.call('GET', `/openapi/v2/order/orders/refund/${o.id}`, token)).body.data.list;
          const succeeded = list.filter((r: any) => r.refundStatus === 'refund_successfully');
          for (const r of list) restoredRefunds.set(String(r.refundNo), r);
          assert.equal(
            cents(o.refundedAmount),
            succeeded.reduce((sum: number, r: any) => sum + cents(r.amount), 0),
            `${why}: refunded amount`,
          );
          for (const item of o.orderItems) {
            const returned = succeeded.flatMap((r: any) => r.items).filter((i: any) => String(i.itemId) === String(item.id));
            assert.equal(
              item.refundedQuantity,
              returned.reduce((sum: number, i: any) => sum + i.quantity, 0),
              `${why}: line ${item.id} refunded`,
            );
          }
          for (const r of succeeded) {
            const credited = credits.filter((t) => String(t.refundNo) === String(r.refundNo));
            assert.equal(credited.length, 1, `${why}: refund ${r.refundNo} credited once`);
            assert.equal(cents(credited[0].amount), cents(r.amount), `${why}: refund ${r.refundNo} credited its amount`);
          }
          if (succeeded.length > 0 && o.orderItems.every((i: any) => i.refundedQuantity === i.productNum))
            assert.equal(o.status, 'cancel', `${why}: cancelled`);
        }
        for (const r of refundsBefore) assert.ok(restoredRefunds.has(r.id), `refund ${r.id}, acknowledged before the backup began, is restored`);
        for (const id of restoredRefunds.keys()) assert.ok(refunds.has(id), `restored refund ${id} is one a client asked for`);
        assert.equal(restoredRefunds.size, Number(restoredCounts[2]), 'the API lists every refund restore counted');
        for (const t of charges) assert.ok(present.has(String(t.orderId)), `charge ${t.id} belongs to a restored order`);
        for (const t of credits) assert.ok(restoredRefunds.has(String(t.refundNo)), `credit ${t.id} belongs to a restored refund`);

        // --- the claims, their credits and their evidence, byte for byte
        const restoredClaims = new Map((await second.walk('/openapi/v1/claims', token)).map((x) => [String(x.claimNo), x]));
        for (const x of claimsBefore) assert.ok(restoredClaims.has(x.id), `claim ${x.id}, acknowledged before the backup began, is restored`);
        const evidenceIds = new Set<string>();
        for (const [claimNo, x] of restoredClaims) {
          const sent = claims.get(claimNo);
          assert.ok(sent, `restored claim ${claimNo} is one a client opened`);
          assert.equal(String(x.orderId), sent.splitOrderId, `claim ${claimNo}: its split order`);
          assert.deepEqual(x.items, [{ sku: sent.sku, quantity: 1 }], `claim ${claimNo}: its line`);
          assert.deepEqual(x.evidence, [sent.fileId], `claim ${claimNo}: its evidence`);
          evidenceIds.add(sent.fileId);
          if (sent.creditedAt !== undefined && sent.creditedAt < backupBegan)
            assert.equal(x.status, 'credited', `claim ${claimNo}: credited before the backup`);
          else assert.ok(['open', 'credited'].includes(x.status), `claim ${claimNo}: ${x.status}`);
          const credited = claimCredits.filter((t) => String(t.reference) === claimNo);
          assert.equal(credited.length, x.status === 'credited' ? 1 : 0, `claim ${claimNo} (${x.status}): credited once or not at all`);
          if (credited.length) assert.equal(cents(credited[0].amount), cents(x.amount), `claim ${claimNo}: credited its amount`);
        }
        for (const t of claimCredits)
          assert.ok(restoredClaims.get(String(t.reference))?.status === 'credited', `claim credit ${t.id} belongs to a restored credited claim`);
        // Every file acknowledged before the backup, and every restored claim's, comes back byte for byte.
        for (const f of filesBefore) evidenceIds.add(f.id);
        for (const fileId of evidenceIds) {
          const got = await second.file(token, fileId);
          assert.equal(got.status, 200, `evidence ${fileId} is served after the restore`);
          assert.equal(sha256(got.bytes), files.get(fileId)!.sha256, `evidence ${fileId}: the bytes uploaded`);
        }
        const restoredEvidence = bucket ? (await bucket.keys('restored/files/')).length : filesUnder(path.join(targetDir, 'files')).length;
        assert.ok(restoredEvidence >= evidenceIds.size, `${restoredEvidence} evidence files restored into the ${evidenceIn}, ${evidenceIds.size} checked`);
        if (bucket) assert.equal(filesUnder(path.join(targetDir, 'files')).length, 0, 'nothing restored into DATA_DIR/files when the bucket is configured');
        c.diagnostic(
          `restored ${restoredClaims.size} of ${claims.size} claims (${claimCredits.length} credited) and ${evidenceIds.size} evidence files checked byte for byte; ` +
            `restored ${present.size} of ${orders.size} orders and ${restoredRefunds.size} of ${refunds.size} refunds (${[...restoredRefunds.values()].filter((r) => r.refundStatus === 'refund_successfully').length} succeeded, the rest pending at the backup's instant)`,
        );
      });
    });
