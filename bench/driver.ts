/**
 * The storage limit of each bench scenario (SPEC §11): the same rows read or written with the bare
 * driver — no Kysely, no service code, no validation — in one transaction.
 *
 * - SQLite (better-sqlite3): statements prepared once and reused; writes in one `BEGIN IMMEDIATE`
 *   transaction, as the store does.
 * - PostgreSQL (pg): the fewest round trips — one statement per scenario (a CTE; a writing CTE is
 *   its own transaction, and the ledger's commit-order trigger runs at its commit as for any
 *   writer), prepared once per connection (named statements).
 *
 * What is left out on purpose, because a driver-level client would not do it per request: the
 * token check, reading the channel table (its fees are read once here) and the allocation (the
 * bench's orders take two lines from the default warehouse G007 and one pinned to US01, all in
 * stock; the store's allocation reads every stock row of the products, this reads and decrements
 * the three it needs with conditional updates). What a real order writes is written: the order,
 * its split orders and items with every column, the stock decrements with their ledger rows and the
 * Idempotency-Key row; a whole-order refund locks the split orders, reserves each item's
 * refundable quantity, writes the refund and its items and marks the order refunding.
 */
import { createHash } from 'node:crypto';
import SQLite from 'better-sqlite3';
import pg from 'pg';

export interface OrderLineParam {
  sku: string;
  quantity: number;
  warehouseCode?: string;
}

export interface WindowParam {
  start: number;
  end: number | null;
  pageNumber: number;
  pageSize: number;
}

/** One function per scenario; each returns what it read (the bench ignores it). */
export interface BenchDriver {
  stockBySkus(skus: string[]): unknown;
  stockByWindow(q: WindowParam): unknown;
  createOrder(lines: OrderLineParam[], idempotencyKey: string, now: number): unknown;
  queryOrdersByIds(ids: number[]): unknown;
  queryOrdersByWindow(updatedFrom: number, pageSize: number): unknown;
  requestRefund(orderId: number, now: number): unknown;
  /** The merchant's sandbox account row. */
  account(): unknown;
  /** A page of the account's entries, newest first, and their count up to the API's cap (by merchant and account, as the service's scope reads them). */
  accountTransactions(pageNumber: number, pageSize: number): unknown;
  /** SPEC §18: a claim of one unit of `sku` on a shipped split order (the split locked, what is still claimable read, the claim and its line written). */
  openClaim(splitOrderId: number, sku: string, now: number): unknown;
  /** The merchant's newest claims, their lines and evidence, and their count up to the API's cap. */
  listClaims(pageSize: number): unknown;
  close(): Promise<void>;
}

interface Setup {
  merchantId: number;
  defaultWarehouse: string;
}

const DAY_MS = 86_400_000;

/**
 * The money ledger's rows of an order (SPEC §15), as the order service writes them: the merchant
 * account's balance moved (and, prepaid, checked) in one UPDATE, the entry, its two lines. The
 * accounts are opened once before the legs (the service opens them on a merchant's first order).
 */
const ENSURE_ACCOUNTS = (merchantId: number) => `
  insert into ledger_accounts (account_key, merchant_id, environment, kind, currency, balance_cents, billing_mode, credit_limit_cents,
    low_balance_threshold_cents, created_at, updated_at)
  values ('merchant:${merchantId}:sandbox', ${merchantId}, 'sandbox', 'merchant', 'USD', 0, 'on_account', 0, null, 0, 0),
    ('supplier:sales:sandbox', 0, 'sandbox', 'sales', 'USD', 0, 'on_account', 0, null, 0, 0),
    ('supplier:refunds:sandbox', 0, 'sandbox', 'refunds', 'USD', 0, 'on_account', 0, null, 0, 0),
    ('supplier:cash:sandbox', 0, 'sandbox', 'cash', 'USD', 0, 'on_account', 0, null, 0, 0),
    ('supplier:adjustments:sandbox', 0, 'sandbox', 'adjustments', 'USD', 0, 'on_account', 0, null, 0, 0)
  on conflict (account_key) do nothing`;
/** What the order service stores for the bench's address (every field present). */
const ADDRESS_JSON = JSON.stringify({
  country: 'DE',
  phone: '1',
  recipient: 'Bench',
  province: 'BE',
  street1: null,
  street2: null,
  city: null,
  zip: null,
  ioss: null,
  vat: null,
});
/** `total` of the order query counts at most this many rows (docs/decisions.md, "Order paging"). */
const ORDER_TOTAL_CAP = 10_000;
/** The claim list counts up to this many, as the API does. */
const CLAIM_TOTAL_CAP = 10_000;
/** The transactions list counts at most this many entries (services/ledger.service.ts). */
const ENTRY_TOTAL_CAP = 10_000;
const ACCOUNT_SQL = `select * from ledger_accounts where account_key = ?`;
const ENTRY_PAGE_SQL = `select * from journal_entries where merchant_id = ? and account_id = ? order by seq desc limit ? offset ?`;
const ENTRY_COUNT_SQL = `select count(*) as n from (select id from journal_entries where merchant_id = ? and account_id = ? limit ${ENTRY_TOTAL_CAP}) w`;
/** `?` placeholders as PostgreSQL's `$n`. */
const numbered = (text: string) => {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
};
const hashOf = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');
const successBody = (orderId: number | string) => `{"code":10000,"message":"success","data":"${orderId}"}`;

// ---------------------------------------------------------------------------------------------
// The stock window (both databases)

/** `total` counts the SKUs of a window of at most this many changes, else reports it (src/domain/paging.ts). */
const STOCK_TOTAL_CAP = 10_000;

/**
 * A page of a stock time window as the store reads it (src/store/stocks.repository.ts, migration
 * 0012), in one statement: the two seeks that bound the window in commit order (by the rows' time
 * marks and the head's lag); the window's first `rows` ledger rows in commit order, each
 * product's first change among them and the page of settled products in (first change, SKU)
 * order with its stock rows and their warehouses; and, unless the page's read held the whole
 * window, how many rows and distinct products the first `countRows` rows hold, for `total`.
 */
function windowSql(dialect: 'sqlite' | 'postgres'): string {
  const pg = dialect === 'postgres';
  const names = ['start', 'end', 'rows', 'limit', 'offset', 'last', 'countRows'] as const;
  const p = (name: (typeof names)[number]) => (pg ? `$${names.indexOf(name) + 1}` : `@${name}`);
  const pos = pg ? 'commit_seq, id' : 'id';
  const desc = pg ? 'commit_seq desc, id desc' : 'id desc';
  const rowsOfWindow = (limit: string) => `
      select product_id, ${pg ? 'commit_seq' : 'id'} as pos from stock_ledger
      where ${pg ? 'commit_seq' : 'id'} >= (select ${pg ? 'commit_seq' : 'id'} from lo) and ${pg ? 'commit_seq' : 'id'} <= (select ${pg ? 'commit_seq' : 'id'} from hi)
        and ${pg ? `(case when created_at >= ${p('start')} and created_at <= ${p('end')} then true else false end)` : `created_at >= ${p('start')} and created_at <= ${p('end')}`}
      order by ${pos} limit ${limit}`;
  return `
    with lo as (
      select ${pos} from stock_ledger where time_mark >= ${p('start')} order by time_mark, ${pos} limit 1
    ), hi as (
      select ${pos} from stock_ledger where time_mark <= ${p('end')} + (select time_lag from stock_feed_head where id = 1)
      order by time_mark desc, ${desc} limit 1
    ), w as (${rowsOfWindow(p('rows'))}
    ), meta as (
      select count(*) as n, max(pos) as last from w
    ), f as (
      select product_id, min(pos) as first from w group by product_id
      having (select n from meta) < ${p('rows')} or min(pos) < (select last from meta)
    ), page as (
      select f.product_id, f.first, p.sku from f join products p on p.id = f.product_id
      where f.first <= coalesce((select first from f order by first limit 1 offset ${p('last')}), (select max(first) from f))
      order by f.first, p.sku limit ${p('limit')} offset ${p('offset')}
    ), counted as (
      select count(*) as n, count(distinct product_id) as found from (${rowsOfWindow(p('countRows'))}) c
      where (select n from meta) >= ${p('rows')}
    )
    select meta.n as scanned, (select count(*) from f) as settled, counted.n as "countRead", counted.found,
      page.sku, s.qty, wh.code as "warehouseCode", wh.country_code as "countryCode"
    from meta cross join counted left join page on 1 = 1
      left join stocks s on s.product_id = page.product_id left join warehouses wh on wh.id = s.warehouse_id
    order by page.first, page.sku, s.warehouse_id`;
}

interface WindowRow {
  scanned: number;
  settled: number;
  countRead: number;
  found: number;
  sku: string | null;
}

const firstRead = (wanted: number) => Math.ceil(wanted * 1.5) + 100;
const readMore = (rows: number, wanted: number, found: number) => Math.ceil(rows * Math.max(1.5, (1.25 * wanted) / Math.max(1, found)));

/**
 * Reads the window's first rows for the page, more while that is not enough, beside the first
 * STOCK_TOTAL_CAP + 1 rows for `total` (as the store does; re-reads repeat the count, unlike the store).
 */
function pageOfWindow(q: WindowParam, read: (rows: number, countRows: number) => WindowRow[] | Promise<WindowRow[]>): WindowRow[] | Promise<WindowRow[]> {
  const onPage = q.pageNumber * q.pageSize;
  const next = (rows: number, result: WindowRow[]): WindowRow[] | Promise<WindowRow[]> => {
    const r = result[0];
    return Number(r.scanned) < rows || Number(r.settled) >= onPage ? result : attempt(readMore(rows, onPage, Number(r.settled)));
  };
  const attempt = (rows: number): WindowRow[] | Promise<WindowRow[]> => {
    const result = read(rows, STOCK_TOTAL_CAP + 1);
    return result instanceof Promise ? result.then((r) => next(rows, r)) : next(rows, result);
  };
  return attempt(firstRead(onPage));
}

// ---------------------------------------------------------------------------------------------
// SQLite

export function sqliteDriver(file: string, setup: Setup): BenchDriver {
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  const warehouseId = new Map((db.prepare('select id, code from warehouses').all() as { id: number; code: string }[]).map((w) => [w.code, w.id]));
  const channel = db.prepare(`select code, channel_type as type, base_fee_cents as base, per_kg_fee_cents as perKg from channels where code = 'STD'`).get() as {
    code: string;
    type: string;
    base: number;
    perKg: number;
  };

  const skuPlaceholders = (n: number) => Array.from({ length: n }, () => '?').join(',');
  const stock30 = db.prepare(`
    select p.id as productId, p.sku, s.qty, w.code as warehouseCode, w.country_code as countryCode
    from products p left join stocks s on s.product_id = p.id left join warehouses w on w.id = s.warehouse_id
    where p.sku in (${skuPlaceholders(30)}) order by p.id, s.warehouse_id`);

  const windowPage = db.prepare(windowSql('sqlite'));
  const stockByWindow = (q: WindowParam) =>
    pageOfWindow(
      q,
      (rows, countRows) =>
        windowPage.all({
          start: q.start,
          end: q.end ?? Number.MAX_SAFE_INTEGER,
          rows,
          limit: q.pageSize,
          offset: (q.pageNumber - 1) * q.pageSize,
          last: q.pageNumber * q.pageSize - 1,
          countRows,
        }) as WindowRow[],
    );

  const productsBySku = db.prepare(`select id, sku, name, image_url, price_cents, weight_grams from products where sku in (${skuPlaceholders(3)})`);
  const decrement = db.prepare('update stocks set qty = qty - ?, updated_at = ? where product_id = ? and warehouse_id = ? and qty >= ? returning qty');
  const insertOrder = db.prepare(`
    insert into orders (merchant_id, custom_order_id, request_hash, sale_platform, channel_type, channel_code, remark, ship_to_country, address,
      status, financial_status, fulfillment_status, refund_status, currency_code, subtotal_cents, freight_cents, coupon_cents, promotion_cents,
      refunded_cents, pay_date, completed_date, cancel_date, refund_date, created_at, updated_at)
    values (?, null, ?, null, 'Standard', null, null, 'DE', ?, 'processing', 'paid', 'waiting_to_ship', null, 'USD', ?, ?, 0, 0, 0, ?, null, null, null, ?, ?)
    returning id`);
  const insertSplit = db.prepare(`
    insert into split_orders (order_id, merchant_id, warehouse_id, warehouse_code, country_code, channel_code, channel_type, status, freight_cents,
      weight_grams, carrier, tracking_code, shipped_at, delivered_at, created_at, updated_at)
    values (?, ?, ?, ?, ?, ?, ?, 'waiting_to_ship', ?, ?, null, null, null, null, ?, ?) returning id`);
  const insertItem = db.prepare(`
    insert into order_items (order_id, split_order_id, merchant_id, line_index, product_id, sku, product_name, image_url, unit_cents, quantity,
      refunded_quantity, pending_refund_quantity, created_at, updated_at)
    values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?)`);
  const insertLedger = db.prepare(
    `insert into stock_ledger (product_id, warehouse_id, delta, qty_after, kind, order_id, refund_id, created_at) values (?, ?, ?, ?, 'sale', ?, null, ?)`,
  );
  const insertKey = db.prepare(`
    insert into idempotency_keys (merchant_id, idempotency_key, request_hash, state, response_status, response_body, created_at, expires_at)
    values (?, ?, ?, 'done', 200, ?, ?, ?)`);
  db.exec(ENSURE_ACCOUNTS(setup.merchantId));
  const charge = db.prepare(`
    update ledger_accounts set balance_cents = balance_cents - ?, last_seq = last_seq + 1, last_posted_at = max(last_posted_at, ?), updated_at = ?
    where account_key = ? and (billing_mode = 'on_account' or balance_cents + credit_limit_cents - ? >= 0)
    returning id, balance_cents, currency, last_seq, last_posted_at`);
  // The entry holds both sides (migration 0044): no line rows of its own.
  const insertEntry = db.prepare(`
    insert into journal_entries (cause, merchant_id, environment, account_id, seq, counter_account_id, type, amount_cents, balance_after_cents, currency,
      order_id, refund_id, split_order_id, reference, description, created_at)
    values (?, ?, 'sandbox', ?, ?, (select id from ledger_accounts where account_key = 'supplier:sales:sandbox'), 'order_charge', ?, ?, ?, ?, null, null, null, ?, ?)
    returning id`);
  const countryOf = new Map(
    (db.prepare('select code, country_code from warehouses').all() as { code: string; country_code: string }[]).map((w) => [w.code, w.country_code]),
  );

  const createOrder = db.transaction((lines: OrderLineParam[], key: string, now: number) => {
    const products = new Map(
      (
        productsBySku.all(...lines.map((l) => l.sku)) as {
          id: number;
          sku: string;
          name: string;
          image_url: string | null;
          price_cents: number;
          weight_grams: number;
        }[]
      ).map((p) => [p.sku, p]),
    );
    if (products.size !== new Set(lines.map((l) => l.sku)).size) throw new Error('unknown SKU');
    // The trivial plan of the bench's orders: each line from its pinned warehouse or the default one.
    const groups = new Map<string, { line: OrderLineParam; index: number }[]>();
    for (const [index, line] of lines.entries()) {
      const code = line.warehouseCode ?? setup.defaultWarehouse;
      groups.set(code, [...(groups.get(code) ?? []), { line, index }]);
    }
    const decrements = new Map<string, { productId: number; warehouseId: number; qty: number }>();
    for (const [code, ls] of groups) {
      for (const { line } of ls) {
        const productId = products.get(line.sku)!.id;
        const k = `${productId}:${code}`;
        const d = decrements.get(k) ?? { productId, warehouseId: warehouseId.get(code)!, qty: 0 };
        d.qty += line.quantity;
        decrements.set(k, d);
      }
    }
    const after: { productId: number; warehouseId: number; qty: number; qtyAfter: number }[] = [];
    for (const d of [...decrements.values()].sort((a, b) => a.productId - b.productId || a.warehouseId - b.warehouseId)) {
      const row = decrement.get(d.qty, now, d.productId, d.warehouseId, d.qty) as { qty: number } | undefined;
      if (!row) throw new Error('insufficient stock');
      after.push({ ...d, qtyAfter: row.qty });
    }
    const splits = [...groups].map(([code, ls]) => {
      const weight = ls.reduce((sum, { line }) => sum + products.get(line.sku)!.weight_grams * line.quantity, 0);
      return { code, ls, weight, freight: channel.base + Math.ceil((channel.perKg * weight) / 1000) };
    });
    const subtotal = lines.reduce((sum, l) => sum + products.get(l.sku)!.price_cents * l.quantity, 0);
    const freight = splits.reduce((sum, s) => sum + s.freight, 0);
    const total = subtotal + freight;
    const account = charge.get(total, now, now, `merchant:${setup.merchantId}:sandbox`, total) as
      | { id: number; balance_cents: number; currency: string; last_seq: number; last_posted_at: number }
      | undefined;
    if (!account) throw new Error('insufficient funds');
    const { id: orderId } = insertOrder.get(setup.merchantId, hashOf(lines), ADDRESS_JSON, subtotal, freight, now, now, now) as { id: number };
    insertEntry.get(
      `order:${orderId}`,
      setup.merchantId,
      account.id,
      account.last_seq,
      -total,
      account.balance_cents,
      account.currency,
      orderId,
      `Order ${orderId}`,
      account.last_posted_at,
    );
    for (const s of splits) {
      const { id: splitId } = insertSplit.get(
        orderId,
        setup.merchantId,
        warehouseId.get(s.code),
        s.code,
        countryOf.get(s.code),
        channel.code,
        channel.type,
        s.freight,
        s.weight,
        now,
        now,
      ) as { id: number };
      for (const { line, index } of s.ls) {
        const p = products.get(line.sku)!;
        insertItem.run(orderId, splitId, setup.merchantId, index, p.id, p.sku, p.name, p.image_url, p.price_cents, line.quantity, now, now);
      }
    }
    for (const d of after) insertLedger.run(d.productId, d.warehouseId, -d.qty, d.qtyAfter, orderId, now);
    insertKey.run(setup.merchantId, key, hashOf({ key, lines }), successBody(orderId), now, now + DAY_MS);
    return orderId;
  }).immediate;

  const ordersByIds = db.prepare(`
    select * from orders where merchant_id = ? and id in (
      select value from json_each(?) union select order_id from split_orders where id in (select value from json_each(?))
    ) order by id`);
  const splitsOf = db.prepare('select * from split_orders where order_id in (select value from json_each(?)) order by id');
  const itemsOf = db.prepare('select * from order_items where order_id in (select value from json_each(?)) order by id');
  const withChildren = (orders: { id: number }[]) => {
    const ids = JSON.stringify(orders.map((o) => o.id));
    return { orders, splits: splitsOf.all(ids), items: itemsOf.all(ids) };
  };
  const orderPage = db.prepare('select * from orders where merchant_id = ? and updated_at >= ? order by updated_at, id limit ?');
  const orderCount = db.prepare('select count(*) as n from (select id from orders where merchant_id = ? and updated_at >= ? limit ?)');
  const accountKey = `merchant:${setup.merchantId}:sandbox`;
  const accountRow = db.prepare(ACCOUNT_SQL);
  const entryPage = db.prepare(ENTRY_PAGE_SQL);
  const entryCount = db.prepare(ENTRY_COUNT_SQL);

  const refundOrder = db.prepare('select id from orders where id = ? and merchant_id = ?');
  const lockSplits = db.prepare('update split_orders set updated_at = updated_at where order_id = ? returning id, status, country_code, freight_cents');
  const refundableItems = db.prepare(
    'select id, split_order_id, sku, unit_cents, quantity - refunded_quantity - pending_refund_quantity as q from order_items where order_id = ? order by id',
  );
  const reserve = db.prepare(`
    update order_items set pending_refund_quantity = pending_refund_quantity + ?, updated_at = ?
    where id = ? and quantity - refunded_quantity - pending_refund_quantity >= ?`);
  const insertRefund = db.prepare(`
    insert into refunds (merchant_id, order_id, status, reason, remark, failure_reason, amount_cents, whole_order, decided_by, claimed_by,
      claimed_until, decided_at, created_at, updated_at)
    values (?, ?, 'pending_review', 'Other', null, null, ?, 1, null, null, null, null, ?, ?) returning id`);
  const insertRefundItem = db.prepare(
    'insert into refund_items (refund_id, order_item_id, split_order_id, sku, country_code, quantity) values (?, ?, ?, ?, ?, ?)',
  );
  const markRefunding = db.prepare(`update orders set refund_status = 'refunding', updated_at = max(updated_at, ?) where id = ?`);
  const requestRefund = db.transaction((orderId: number, now: number) => {
    if (!refundOrder.get(orderId, setup.merchantId)) throw new Error('no such order');
    const splits = new Map((lockSplits.all(orderId) as { id: number; status: string; country_code: string; freight_cents: number }[]).map((s) => [s.id, s]));
    if ([...splits.values()].some((s) => s.status === 'shipped' || s.status === 'completed')) throw new Error('shipped');
    const items = (refundableItems.all(orderId) as { id: number; split_order_id: number; sku: string; unit_cents: number; q: number }[]).filter((i) => i.q > 0);
    if (items.length === 0) throw new Error('nothing to refund');
    for (const i of items) if (reserve.run(i.q, now, i.id, i.q).changes !== 1) throw new Error('refund quantity exceeds what is still refundable');
    const freight = [...new Set(items.map((i) => i.split_order_id))].reduce((sum, id) => sum + splits.get(id)!.freight_cents, 0);
    const amount = items.reduce((sum, i) => sum + i.unit_cents * i.q, 0) + freight;
    const { id: refundId } = insertRefund.get(setup.merchantId, orderId, amount, now, now) as { id: number };
    for (const i of items) insertRefundItem.run(refundId, i.id, i.split_order_id, i.sku, splits.get(i.split_order_id)!.country_code, i.q);
    markRefunding.run(now, orderId);
    return refundId;
  }).immediate;

  const claimSplit = db.prepare(`select id, order_id, status from split_orders where id = ? and merchant_id = ?`);
  const claimableLine = db.prepare(`
    select oi.id, oi.sku, oi.unit_cents, oi.quantity - oi.refunded_quantity - coalesce((select sum(cl.quantity) from claim_lines cl
      join claims c on c.id = cl.claim_id where cl.order_item_id = oi.id and c.status not in ('rejected', 'cancelled')), 0) as q
    from order_items oi where oi.split_order_id = ? and oi.sku = ? order by oi.id`);
  const insertClaim = db.prepare(`
    insert into claims (merchant_id, order_id, split_order_id, status, reason, resolution, description, created_at, updated_at)
    values (?, ?, ?, 'open', 'damaged', 'refund', null, ?, ?) returning id`);
  const insertClaimLine = db.prepare('insert into claim_lines (claim_id, merchant_id, order_item_id, sku, quantity, unit_cents) values (?, ?, ?, ?, 1, ?)');
  const openClaim = db.transaction((splitOrderId: number, sku: string, now: number) => {
    const split = claimSplit.get(splitOrderId, setup.merchantId) as { id: number; order_id: number; status: string } | undefined;
    if (!split || (split.status !== 'shipped' && split.status !== 'completed')) throw new Error('not a shipped split order');
    const line = (claimableLine.all(splitOrderId, sku) as { id: number; sku: string; unit_cents: number; q: number }[]).find((l) => l.q >= 1);
    if (!line) throw new Error('nothing left to claim');
    const { id } = insertClaim.get(setup.merchantId, split.order_id, split.id, now, now) as { id: number };
    insertClaimLine.run(id, setup.merchantId, line.id, line.sku, line.unit_cents);
    return id;
  }).immediate;
  const claimPage = db.prepare('select * from claims where merchant_id = ? order by id desc limit ?');
  const claimLinesOf = db.prepare('select * from claim_lines where claim_id in (select value from json_each(?)) order by id');
  const claimFilesOf = db.prepare('select id, claim_id from claim_files where claim_id in (select value from json_each(?)) order by id');
  const claimCount = db.prepare(`select count(*) as n from (select id from claims where merchant_id = ? limit ${CLAIM_TOTAL_CAP})`);

  return {
    openClaim: (splitOrderId, sku, now) => openClaim(splitOrderId, sku, now),
    listClaims: (pageSize) => {
      const rows = claimPage.all(setup.merchantId, pageSize + 1) as { id: number }[];
      const ids = JSON.stringify(rows.map((r) => r.id));
      return { rows, lines: claimLinesOf.all(ids), files: claimFilesOf.all(ids), total: claimCount.get(setup.merchantId) };
    },
    stockBySkus: (skus) => stock30.all(...skus),
    stockByWindow,
    createOrder: (lines, key, now) => createOrder(lines, key, now),
    queryOrdersByIds: (ids) => {
      const json = JSON.stringify(ids);
      return withChildren(ordersByIds.all(setup.merchantId, json, json) as { id: number }[]);
    },
    queryOrdersByWindow: (from, pageSize) => ({
      total: orderCount.get(setup.merchantId, from, ORDER_TOTAL_CAP),
      ...withChildren(orderPage.all(setup.merchantId, from, pageSize + 1) as { id: number }[]),
    }),
    requestRefund: (orderId, now) => requestRefund(orderId, now),
    account: () => accountRow.get(accountKey),
    accountTransactions: (pageNumber, pageSize) => {
      const { id } = accountRow.get(accountKey) as { id: number };
      return { list: entryPage.all(setup.merchantId, id, pageSize + 1, (pageNumber - 1) * pageSize), total: entryCount.get(setup.merchantId, id) };
    },
    close: async () => void db.close(),
  };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

const PG_WINDOW = windowSql('postgres');

const PG_STOCK_30 = `
  select p.id as "productId", p.sku, s.qty, w.code as "warehouseCode", w.country_code as "countryCode"
  from products p left join stocks s on s.product_id = p.id left join warehouses w on w.id = s.warehouse_id
  where p.sku = any($1::text[]) order by p.id, s.warehouse_id`;

/**
 * The whole order in one statement. `ok` divides by zero (aborting the statement, so nothing is
 * written) unless every SKU is known and every decrement found its stock.
 */
const PG_CREATE_ORDER = `
  with line as (
    select * from unnest($1::text[], $2::bigint[], $3::text[], $4::int[]) as l(sku, qty, warehouse_code, line_index)
  ), p as (
    select line.*, w.id as warehouse_id, w.country_code, pr.id as product_id, pr.name, pr.image_url, pr.price_cents, pr.weight_grams
    from line join products pr on pr.sku = line.sku join warehouses w on w.code = line.warehouse_code
  ), want as (
    select product_id, warehouse_id, sum(qty) as qty from p group by product_id, warehouse_id
  ), dec as (
    update stocks s set qty = s.qty - want.qty, updated_at = $5
    from want where s.product_id = want.product_id and s.warehouse_id = want.warehouse_id and s.qty >= want.qty
    returning s.product_id, s.warehouse_id, want.qty, s.qty as qty_after
  ), ok as (
    select 1 / (case when (select count(*) from p) = cardinality($1::text[]) and (select count(*) from dec) = (select count(*) from want) then 1 else 0 end) as ok
  ), split as (
    select warehouse_id, warehouse_code, country_code, sum(weight_grams * qty) as weight,
      $10::bigint + ceil($11::bigint * sum(weight_grams * qty) / 1000.0)::bigint as freight
    from p group by warehouse_id, warehouse_code, country_code
  ), o as (
    insert into orders (merchant_id, custom_order_id, request_hash, sale_platform, channel_type, channel_code, remark, ship_to_country, address,
      status, financial_status, fulfillment_status, refund_status, currency_code, subtotal_cents, freight_cents, coupon_cents, promotion_cents,
      refunded_cents, pay_date, completed_date, cancel_date, refund_date, created_at, updated_at)
    select $6, null, $7, null, 'Standard', null, null, 'DE', $8, 'processing', 'paid', 'waiting_to_ship', null, 'USD',
      (select sum(price_cents * qty) from p), (select sum(freight) from split), 0, 0, 0, $5, null, null, null, $5, $5
    from ok
    returning id
  ), so as (
    insert into split_orders (order_id, merchant_id, warehouse_id, warehouse_code, country_code, channel_code, channel_type, status, freight_cents,
      weight_grams, carrier, tracking_code, shipped_at, delivered_at, created_at, updated_at)
    select o.id, $6, split.warehouse_id, split.warehouse_code, split.country_code, $12, $13, 'waiting_to_ship', split.freight, split.weight,
      null, null, null, null, $5, $5
    from o, split
    returning id, order_id, warehouse_id
  ), items as (
    insert into order_items (order_id, split_order_id, merchant_id, line_index, product_id, sku, product_name, image_url, unit_cents, quantity,
      refunded_quantity, pending_refund_quantity, created_at, updated_at)
    select so.order_id, so.id, $6, p.line_index, p.product_id, p.sku, p.name, p.image_url, p.price_cents, p.qty, 0, 0, $5, $5
    from so join p on p.warehouse_id = so.warehouse_id order by so.id, p.line_index
  ), ledger as (
    insert into stock_ledger (product_id, warehouse_id, delta, qty_after, kind, order_id, refund_id, created_at)
    select dec.product_id, dec.warehouse_id, -dec.qty, dec.qty_after, 'sale', o.id, null, $5 from dec, o
  ), idempotency as (
    insert into idempotency_keys (merchant_id, idempotency_key, request_hash, state, response_status, response_body, created_at, expires_at)
    select $6, $9, $14, 'done', 200, '{"code":10000,"message":"success","data":"' || o.id || '"}', $5, $5 + ${DAY_MS} from o
  ), total as (
    select (select sum(price_cents * qty) from p) + (select sum(freight) from split) as cents
  ), acct as (
    update ledger_accounts set balance_cents = balance_cents - (select cents from total), last_seq = last_seq + 1,
      last_posted_at = greatest(last_posted_at, $5), updated_at = $5
    where account_key = 'merchant:' || $6 || ':sandbox' and (billing_mode = 'on_account' or balance_cents + credit_limit_cents - (select cents from total) >= 0)
    returning id, balance_cents, currency, last_seq, last_posted_at
  ), je as (
    insert into journal_entries (cause, merchant_id, environment, account_id, seq, counter_account_id, type, amount_cents, balance_after_cents, currency,
      order_id, refund_id, split_order_id, reference, description, created_at)
    select 'order:' || o.id, $6, 'sandbox', acct.id, acct.last_seq, (select id from ledger_accounts where account_key = 'supplier:sales:sandbox'),
      'order_charge', -(select cents from total), acct.balance_cents, acct.currency, o.id, null, null, null, 'Order ' || o.id, acct.last_posted_at
    from o, acct
    returning id
  )
  select id from o`;

/** Orders with their split orders and items as JSON arrays: one round trip. */
const PG_CHILDREN = `
  (select coalesce(json_agg(s order by s.id), '[]') from split_orders s where s.order_id = o.id) as splits,
  (select coalesce(json_agg(i order by i.id), '[]') from order_items i where i.order_id = o.id) as items`;

const PG_ORDERS_BY_IDS = `
  select o.*, ${PG_CHILDREN}
  from orders o
  where o.merchant_id = $1 and o.id in (select unnest($2::bigint[]) union select order_id from split_orders where id = any($2::bigint[]))
  order by o.id`;

const PG_ORDERS_BY_WINDOW = `
  with page as (
    select * from orders where merchant_id = $1 and updated_at >= $2 order by updated_at, id limit $3
  ), total as (
    select count(*) as n from (select id from orders where merchant_id = $1 and updated_at >= $2 limit ${ORDER_TOTAL_CAP}) w
  )
  select o.*, total.n as total, ${PG_CHILDREN}
  from page o, total order by o.updated_at, o.id`;

/** A whole-order refund in one statement (the same rows as requestRefund writes for it). */
const PG_REFUND = `
  with o as (
    select id from orders where id = $1 and merchant_id = $2
  ), s as (
    update split_orders set updated_at = updated_at where order_id = (select id from o)
    returning id, status, country_code, freight_cents
  ), i as (
    update order_items oi set pending_refund_quantity = oi.pending_refund_quantity + x.q, updated_at = $3
    from (select id, quantity - refunded_quantity - pending_refund_quantity as q from order_items where order_id = (select id from o)) x
    where oi.id = x.id and x.q > 0 and not exists (select 1 from s where s.status in ('shipped', 'completed'))
    returning oi.id, oi.split_order_id, oi.sku, oi.unit_cents, x.q
  ), r as (
    insert into refunds (merchant_id, order_id, status, reason, remark, failure_reason, amount_cents, whole_order, decided_by, claimed_by,
      claimed_until, decided_at, created_at, updated_at)
    select $2, o.id, 'pending_review', 'Other', null, null,
      (select sum(unit_cents * q) from i) + (select coalesce(sum(freight_cents), 0) from s where s.id in (select split_order_id from i)),
      1, null, null, null, null, $3, $3
    from o where exists (select 1 from i)
    returning id, order_id
  ), ri as (
    insert into refund_items (refund_id, order_item_id, split_order_id, sku, country_code, quantity)
    select r.id, i.id, i.split_order_id, i.sku, s.country_code, i.q from r, i join s on s.id = i.split_order_id order by i.id
  ), u as (
    update orders set refund_status = 'refunding', updated_at = greatest(updated_at, $3) where id = (select order_id from r)
  )
  select id from r`;

/** SPEC §18: a one-unit claim in one statement (the same rows as openClaim writes; the split order locked first). */
const PG_OPEN_CLAIM = `
  with s as (
    select id, order_id from split_orders where id = $1 and merchant_id = $2 and status in ('shipped', 'completed') for update
  ), i as (
    select oi.id, oi.sku, oi.unit_cents from order_items oi join s on oi.split_order_id = s.id
    where oi.sku = $3 and oi.quantity - oi.refunded_quantity - coalesce((select sum(cl.quantity) from claim_lines cl
      join claims c on c.id = cl.claim_id where cl.order_item_id = oi.id and c.status not in ('rejected', 'cancelled')), 0) >= 1
    order by oi.id limit 1
  ), c as (
    insert into claims (merchant_id, order_id, split_order_id, status, reason, resolution, description, created_at, updated_at)
    select $2, s.order_id, s.id, 'open', 'damaged', 'refund', null, $4, $4 from s where exists (select 1 from i)
    returning id
  ), l as (
    insert into claim_lines (claim_id, merchant_id, order_item_id, sku, quantity, unit_cents)
    select c.id, $2, i.id, i.sku, 1, i.unit_cents from c, i
  )
  select id from c`;

export async function postgresDriver(url: string, setup: Setup & { connections: number }): Promise<BenchDriver> {
  const int8 = (value: string) => Number(value);
  const pool = new pg.Pool({
    connectionString: url,
    max: setup.connections,
    types: {
      getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 || oid === 1700 ? int8 : pg.types.getTypeParser(oid, format)),
    } as pg.CustomTypesConfig,
  });
  pool.on('error', () => undefined);
  const one = async (sql: string) => (await pool.query(sql)).rows[0];
  await pool.query(ENSURE_ACCOUNTS(setup.merchantId));
  const channel = await one(`select code, channel_type as type, base_fee_cents as base, per_kg_fee_cents as "perKg" from channels where code = 'STD'`);
  const run = (name: string, text: string, values: unknown[]) => pool.query({ name, text, values }).then((r) => r.rows);
  return {
    stockBySkus: (skus) => run('bench_stock30', PG_STOCK_30, [skus]),
    stockByWindow: (q) =>
      pageOfWindow(
        q,
        (rows, countRows) =>
          run('bench_window', PG_WINDOW, [
            q.start,
            q.end ?? Number.MAX_SAFE_INTEGER,
            rows,
            q.pageSize,
            (q.pageNumber - 1) * q.pageSize,
            q.pageNumber * q.pageSize - 1,
            countRows,
          ]) as Promise<WindowRow[]>,
      ),
    createOrder: async (lines, key, now) => {
      const rows = await run('bench_order', PG_CREATE_ORDER, [
        lines.map((l) => l.sku),
        lines.map((l) => l.quantity),
        lines.map((l) => l.warehouseCode ?? setup.defaultWarehouse),
        lines.map((_, i) => i),
        now,
        setup.merchantId,
        hashOf(lines),
        ADDRESS_JSON,
        key,
        channel.base,
        channel.perKg,
        channel.code,
        channel.type,
        hashOf({ key, lines }),
      ]);
      if (rows.length !== 1) throw new Error('order not written');
      return rows[0].id;
    },
    queryOrdersByIds: (ids) => run('bench_order_ids', PG_ORDERS_BY_IDS, [setup.merchantId, ids]),
    queryOrdersByWindow: (from, pageSize) => run('bench_order_window', PG_ORDERS_BY_WINDOW, [setup.merchantId, from, pageSize + 1]),
    requestRefund: async (orderId, now) => {
      const rows = await run('bench_refund', PG_REFUND, [orderId, setup.merchantId, now]);
      if (rows.length !== 1) throw new Error('refund not written');
      return rows[0].id;
    },
    account: () => run('bench_account', numbered(ACCOUNT_SQL), [`merchant:${setup.merchantId}:sandbox`]),
    accountTransactions: async (pageNumber, pageSize) => {
      const [{ id }] = await run('bench_account', numbered(ACCOUNT_SQL), [`merchant:${setup.merchantId}:sandbox`]);
      const list = await run('bench_entry_page', numbered(ENTRY_PAGE_SQL), [setup.merchantId, id, pageSize + 1, (pageNumber - 1) * pageSize]);
      return { list, total: await run('bench_entry_count', numbered(ENTRY_COUNT_SQL), [setup.merchantId, id]) };
    },
    openClaim: async (splitOrderId, sku, now) => {
      const rows = await run('bench_open_claim', PG_OPEN_CLAIM, [splitOrderId, setup.merchantId, sku, now]);
      if (rows.length !== 1) throw new Error('claim not written');
      return rows[0].id;
    },
    listClaims: async (pageSize) => {
      const rows = await run('bench_claim_page', 'select * from claims where merchant_id = $1 order by id desc limit $2', [setup.merchantId, pageSize + 1]);
      const ids = rows.map((r) => r.id);
      return {
        rows,
        lines: await run('bench_claim_lines', 'select * from claim_lines where claim_id = any($1) order by id', [ids]),
        files: await run('bench_claim_files', 'select id, claim_id from claim_files where claim_id = any($1) order by id', [ids]),
        total: await run('bench_claim_count', `select count(*) as n from (select id from claims where merchant_id = $1 limit ${CLAIM_TOTAL_CAP}) c`, [
          setup.merchantId,
        ]),
      };
    },
    close: () => pool.end(),
  };
}
