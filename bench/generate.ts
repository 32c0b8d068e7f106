import { sql, type Insertable, type Kysely } from 'kysely';
import { systemActor } from '../src/domain/audit.ts';
import { createMerchant, issueToken } from '../src/services/merchants.service.ts';
import { accountKey, causeOf } from '../src/domain/ledger.ts';
import type { Store } from '../src/store/db.ts';
import { ensureAccounts } from '../src/store/ledger.repository.ts';
import { forMerchant } from '../src/store/scope-mint.ts';
import type { Database } from '../src/store/schema.ts';

/**
 * Large, deterministic data for the benchmark: SKUs × 3 warehouses with stock (and the ledger rows
 * that explain it), channels, one merchant with a token, and `orders` historical orders (each with
 * two split orders and three items) spread over the last 30 days. Written with multi-row inserts
 * in large transactions; it bypasses the services on purpose (speed), so it keeps their invariants
 * itself: Σ ledger = stock, ids from the database, split/order ids in their ranges, and every
 * order charged to the merchant's account (SPEC §15: one `order_charge` entry with its two lines,
 * the account's balance their sum), so `stockist ledger verify` passes on the bench database.
 */
export interface GenerateOptions {
  skus: number;
  orders: number;
  /** Ledger rows in all (at least one per stock row; the rest are adjustments). */
  ledgerRows?: number;
  onProgress?: (what: string, done: number, total: number) => void;
}

export const WAREHOUSES = ['G007', 'G006', 'US01'] as const;
/** The tables `generate` writes (analysed at the end on PostgreSQL). */
const FILLED = [
  'warehouses',
  'categories',
  'products',
  'stocks',
  'stock_ledger',
  'channels',
  'channel_warehouses',
  'merchants',
  'api_tokens',
  'orders',
  'split_orders',
  'order_items',
  'ledger_accounts',
  'journal_entries',
] as const;
/** Stored like the order service stores it: every address field present, null when not given. */
const ADDRESS_JSON = JSON.stringify({
  country: 'US',
  phone: '1',
  recipient: 'R',
  province: 'CA',
  street1: null,
  street2: null,
  city: null,
  zip: null,
  ioss: null,
  vat: null,
});
/** What every historical order costs (subtotal 30.00 + freight 9.00), and what it was charged. */
const ORDER_CENTS = 3900;
export const benchSku = (i: number) => `BENCH-${String(i).padStart(6, '0')}`;

async function inBatches<T>(
  db: Kysely<Database>,
  total: number,
  batch: number,
  make: (i: number) => T,
  write: (trx: Kysely<Database>, rows: T[]) => Promise<void>,
  progress?: (done: number) => void,
) {
  for (let start = 0; start < total; ) {
    await db.transaction().execute(async (trx) => {
      // Several statements per transaction: fewer commits, bounded memory.
      for (let k = 0; k < 20 && start < total; k++) {
        const rows: T[] = [];
        for (let i = start; i < Math.min(total, start + batch); i++) rows.push(make(i));
        await write(trx, rows);
        start += rows.length;
      }
    });
    progress?.(start);
  }
}

export async function generate(store: Store, options: GenerateOptions): Promise<{ token: string; merchantId: number }> {
  const { db } = store;
  const now = Date.now();
  const dayMs = 86_400_000;
  const report = options.onProgress ?? (() => {});
  for (const [i, code] of WAREHOUSES.entries()) {
    await db
      .insertInto('warehouses')
      .values({
        code,
        name: code,
        country_code: code === 'US01' ? 'US' : 'CN',
        country_name: code === 'US01' ? 'United States' : 'China',
        status: 1,
        created_at: now,
        updated_at: now + i,
      })
      .execute();
  }
  const warehouses = await db.selectFrom('warehouses').select(['id', 'code']).orderBy('id').execute();
  await db.insertInto('categories').values({ id: 1, name: 'Bench', parent_id: 0, img_url: null, created_at: now, updated_at: now }).execute();

  // SQLite allows 32766 bound parameters per statement; 10 columns × 1000 rows stays well below.
  await inBatches(
    db,
    options.skus,
    1000,
    (i) => ({
      sku: benchSku(i + 1),
      name: `Bench product ${i + 1}`,
      category_id: 1,
      price_cents: 100 + ((i * 37) % 9900),
      weight_grams: 50 + ((i * 53) % 2000),
      image_url: null,
      options: null,
      created_at: now,
      updated_at: now,
    }),
    (trx, rows) =>
      trx
        .insertInto('products')
        .values(rows)
        .execute()
        .then(() => undefined),
    (d) => report('products', d, options.skus),
  );
  const firstProduct = (await db.selectFrom('products').select('id').orderBy('id').limit(1).executeTakeFirstOrThrow()).id;

  // Stock changes happen over the last 30 days, so that time windows select a realistic share:
  // each stock row's first change (its restock) is spread over the period, and `ledgerRows` beyond
  // those are adjustments of random rows that already exist, at evenly spaced times in between.
  // Ledger rows are written in time order, as live writers would commit them.
  const stockRows = options.skus * WAREHOUSES.length;
  const extra = Math.max(0, (options.ledgerRows ?? 0) - stockRows);
  const start = now - 30 * dayMs;
  const firstAt = (k: number) => start + Math.floor((k * 30 * dayMs) / stockRows);
  const extraAt = (j: number) => start + Math.floor(((j + 0.5) * 30 * dayMs) / extra);
  const keyOf = (k: number) => ({ product_id: firstProduct + Math.floor(k / 3), warehouse_id: warehouses[k % 3].id });
  const qty = new Float64Array(stockRows);
  const changedAt = new Float64Array(stockRows);
  const random = mulberry32(42);
  // PostgreSQL: each change numbered as its own commit (live writers commit a few rows at a time),
  // instead of the trigger giving each of the generator's large transactions one number.
  const head = await db.selectFrom('stock_feed_head').select('seq').where('id', '=', 1).executeTakeFirstOrThrow();
  let seq = Number(head.seq);
  const commitSeq = () => (store.dialect === 'postgres' ? ++seq : null);
  // The rows come in time order, so each one's time mark (migration 0012) is its own time.
  let mark = 0;
  const timeMark = (at: number) => (mark = Math.max(mark, at));
  let k = 0;
  let j = 0;
  const nextChange = (): Insertable<Database['stock_ledger']> => {
    if (j >= extra || (k < stockRows && firstAt(k) <= extraAt(j))) {
      const at = firstAt(k);
      qty[k] = 1_000_000;
      changedAt[k] = at;
      return {
        ...keyOf(k++),
        delta: 1_000_000,
        qty_after: 1_000_000,
        kind: 'restock',
        order_id: null,
        refund_id: null,
        created_at: at,
        commit_seq: commitSeq(),
        time_mark: timeMark(at),
      };
    }
    const at = extraAt(j++);
    // A row whose restock is already written (there is at least one: restocks start first).
    const row = Math.floor(random() * k);
    const delta = random() < 0.9 ? -1 - Math.floor(random() * 3) : 1 + Math.floor(random() * 20);
    qty[row] += delta;
    changedAt[row] = at;
    return {
      ...keyOf(row),
      delta,
      qty_after: qty[row],
      kind: delta < 0 ? 'adjustment' : 'restock',
      order_id: null,
      refund_id: null,
      created_at: at,
      commit_seq: commitSeq(),
      time_mark: timeMark(at),
    };
  };
  const ledgerTotal = stockRows + extra;
  await inBatches(
    db,
    ledgerTotal,
    2000,
    nextChange,
    (trx, rows) =>
      trx
        .insertInto('stock_ledger')
        .values(rows)
        .execute()
        .then(() => undefined),
    (d) => report('ledger', d, ledgerTotal),
  );
  await db.updateTable('stock_feed_head').set({ seq, time_mark: mark, time_lag: 0 }).where('id', '=', 1).execute();
  await inBatches(
    db,
    stockRows,
    2000,
    (i) => ({ ...keyOf(i), qty: qty[i], updated_at: changedAt[i] }),
    (trx, rows) =>
      trx
        .insertInto('stocks')
        .values(rows)
        .execute()
        .then(() => undefined),
    (d) => report('stocks', d, stockRows),
  );

  const channel = async (code: string, type: string, codes: string[], base: number, perKg: number, min: number, max: number) => {
    const { id } = await db
      .insertInto('channels')
      .values({
        code,
        name: code,
        channel_type: type,
        countries: '["*"]',
        base_fee_cents: base,
        per_kg_fee_cents: perKg,
        delivery_days_min: min,
        delivery_days_max: max,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('channel_warehouses')
      .values(warehouses.filter((w) => codes.includes(w.code)).map((w) => ({ channel_id: id, warehouse_id: w.id })))
      .execute();
  };
  await channel('STD', 'Standard', [...WAREHOUSES], 250, 400, 8, 15);
  await channel('EXP', 'Express', ['G007', 'US01'], 800, 950, 3, 6);

  const merchant = await createMerchant(db, systemActor('bench'), 'Bench Merchant', now);
  const token = (await issueToken(forMerchant(db, merchant.merchantId), systemActor('bench'), 'sandbox', {}, now)).accessToken;

  // The merchant's sandbox account (on_account) and the supplier's: every historical order is charged.
  await db.transaction().execute((trx) => ensureAccounts(forMerchant(trx, merchant.merchantId), 'sandbox', 'USD', now));
  const accountId = async (key: string) => (await db.selectFrom('ledger_accounts').select('id').where('account_key', '=', key).executeTakeFirstOrThrow()).id;
  const merchantAccountId = await accountId(accountKey.merchant(merchant.merchantId, 'sandbox'));
  const salesAccountId = await accountId(accountKey.supplier('sales', 'sandbox'));
  let balance = 0;
  let entrySeq = 0;
  let lastAt = 0;

  // Historical orders: ids are taken from the sequences like live orders (two splits, three items each).
  const orderBatch = 500;
  for (let done = 0; done < options.orders; ) {
    await db.transaction().execute(async (trx) => {
      for (let k = 0; k < 10 && done < options.orders; k++) {
        const n = Math.min(orderBatch, options.orders - done);
        const orderRows: Insertable<Database['orders']>[] = [];
        for (let i = 0; i < n; i++) {
          const created = now - 30 * dayMs + Math.floor(((done + i) * 30 * dayMs) / Math.max(1, options.orders));
          orderRows.push({
            merchant_id: merchant.merchantId,
            custom_order_id: null,
            request_hash: 'generated',
            sale_platform: 'Shopify',
            channel_type: 'Standard',
            channel_code: null,
            remark: null,
            ship_to_country: 'US',
            address: ADDRESS_JSON,
            status: 'processing',
            financial_status: 'paid',
            fulfillment_status: 'waiting_to_ship',
            refund_status: null,
            currency_code: 'USD',
            subtotal_cents: ORDER_CENTS - 900,
            freight_cents: 900,
            coupon_cents: 0,
            promotion_cents: 0,
            refunded_cents: 0,
            pay_date: created,
            completed_date: null,
            cancel_date: null,
            refund_date: null,
            created_at: created,
            updated_at: created,
          });
        }
        const orderIds = await trx.insertInto('orders').values(orderRows).returning(['id', 'created_at']).execute();
        const splitRows = orderIds.flatMap((o) =>
          [0, 1].map((j) => ({
            order_id: o.id,
            merchant_id: merchant.merchantId,
            warehouse_id: warehouses[j * 2].id,
            warehouse_code: warehouses[j * 2].code,
            country_code: j ? 'US' : 'CN',
            channel_code: 'STD',
            channel_type: 'Standard',
            status: 'waiting_to_ship' as const,
            freight_cents: 450,
            weight_grams: 500,
            carrier: null,
            tracking_code: null,
            shipped_at: null,
            delivered_at: null,
            created_at: o.created_at,
            updated_at: o.created_at,
          })),
        );
        const splits = await trx.insertInto('split_orders').values(splitRows).returning(['id', 'order_id', 'created_at']).execute();
        const items = splits.flatMap((s, j) =>
          (j % 2 === 0 ? [0, 1] : [2]).map((line) => ({
            order_id: s.order_id,
            split_order_id: s.id,
            merchant_id: merchant.merchantId,
            line_index: line,
            product_id: firstProduct + ((s.order_id + line) % options.skus),
            sku: benchSku(((s.order_id + line) % options.skus) + 1),
            product_name: 'Bench product',
            image_url: null,
            unit_cents: 1000,
            quantity: 1,
            refunded_quantity: 0,
            pending_refund_quantity: 0,
            created_at: s.created_at,
            updated_at: s.created_at,
          })),
        );
        await trx.insertInto('order_items').values(items).execute();
        await trx
          .insertInto('journal_entries')
          .values(
            orderIds.map((o) => {
              balance -= ORDER_CENTS;
              entrySeq += 1;
              lastAt = Math.max(lastAt, o.created_at);
              return {
                cause: causeOf.orderCharge(o.id),
                merchant_id: merchant.merchantId,
                environment: 'sandbox' as const,
                account_id: merchantAccountId,
                seq: entrySeq,
                counter_account_id: salesAccountId,
                type: 'order_charge' as const,
                amount_cents: -ORDER_CENTS,
                balance_after_cents: balance,
                currency: 'USD',
                order_id: o.id,
                refund_id: null,
                split_order_id: null,
                reference: null,
                description: `Order ${o.id}`,
                created_at: lastAt,
              };
            }),
          )
          .execute();
        await trx
          .updateTable('ledger_accounts')
          .set({ balance_cents: balance, last_seq: entrySeq, last_posted_at: lastAt })
          .where('id', '=', merchantAccountId)
          .execute();
        done += n;
      }
    });
    report('orders', done, options.orders);
  }
  // Fresh tables without planner statistics: PostgreSQL would guess (and seq-scan where an index
  // lookup is right) until autovacuum gets round to them. SQLite analyses when a connection opens.
  // VACUUM too, and a checkpoint: the generated rows stand for history that autovacuum has long
  // since marked all-visible in a live database (index-only scans, such as the order window's
  // bounded count, need no heap visit), and the legs should not run beside the autovacuum and
  // the checkpoint that a bulk load of millions of rows sets off.
  if (store.dialect === 'postgres') {
    await sql`vacuum (analyze) ${sql.join(FILLED.map((t) => sql.table(t)))}`.execute(db);
    await sql`checkpoint`.execute(db);
  }
  return { token, merchantId: merchant.merchantId };
}

/** A small seeded PRNG: the same data on every run. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A busy month for one merchant's statement (issue 41): `count` top-ups of 1.00 to 9.99 on its
 * sandbox account, spread over [from, to), each a balanced entry (merchant and cash lines) with
 * the running balance, written in multi-row batches. Opens the accounts when they are not yet.
 * Returns the sum of the amounts, in cents.
 */
export async function fillStatement(store: Store, merchantId: number, count: number, from: number, to: number): Promise<number> {
  const db = store.db;
  const now = Date.now();
  await db.transaction().execute((trx) => ensureAccounts(forMerchant(trx, merchantId), 'sandbox', 'USD', now));
  const accountId = async (key: string) =>
    await db
      .selectFrom('ledger_accounts')
      .select(['id', 'balance_cents', 'last_seq', 'last_posted_at'])
      .where('account_key', '=', key)
      .executeTakeFirstOrThrow();
  const merchant = await accountId(accountKey.merchant(merchantId, 'sandbox'));
  const cash = await accountId(accountKey.supplier('cash', 'sandbox'));
  let balance = Number(merchant.balance_cents);
  let seq = Number(merchant.last_seq);
  let lastAt = Number(merchant.last_posted_at);
  let sum = 0;
  const batch = 1000;
  for (let done = 0; done < count; done += batch) {
    const n = Math.min(batch, count - done);
    await db.transaction().execute(async (trx) => {
      const rows = Array.from({ length: n }, (_, k) => {
        const i = done + k;
        const amount = 100 + ((i * 7919) % 900);
        balance += amount;
        sum += amount;
        seq += 1;
        lastAt = Math.max(lastAt, from + Math.floor((i * (to - from)) / count));
        const reference = `BENCH-${merchantId}-${i}`;
        return {
          cause: causeOf.topUp(merchant.id, reference),
          merchant_id: merchantId,
          environment: 'sandbox' as const,
          account_id: merchant.id,
          seq,
          counter_account_id: cash.id,
          type: 'top_up' as const,
          amount_cents: amount,
          balance_after_cents: balance,
          currency: 'USD',
          order_id: null,
          refund_id: null,
          split_order_id: null,
          reference,
          description: `Payment received: ${reference}`,
          created_at: lastAt,
        };
      });
      await trx.insertInto('journal_entries').values(rows).execute();
      await trx.updateTable('ledger_accounts').set({ balance_cents: balance, last_seq: seq, last_posted_at: lastAt }).where('id', '=', merchant.id).execute();
    });
  }
  if (store.dialect === 'postgres') await sql`analyze journal_entries`.execute(db);
  return sum;
}
