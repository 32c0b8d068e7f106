/**
 * `node --import tsx bench/order-window.ts [--db sqlite|postgres] [--orders N,N,…]`: does a page of
 * the order query cost more when its window holds more rows? (SPEC §4.6, issue 13 item 14.) For each
 * size it generates that many orders, then times the first page of a window covering all of them
 * (newest first, and by update window), a cursor page deep in the walk, and — for comparison — the
 * unbounded `count(*)` of the window that every page used to run. Medians of 30 runs, in ms.
 */
import { parseArgs } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { queryOrders } from '../src/services/order-query.service.ts';
import { openStore } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { forMerchant } from '../src/store/scope-mint.ts';
import { generate } from './generate.ts';

const { values: args } = parseArgs({ options: { db: { type: 'string', default: 'sqlite' }, orders: { type: 'string', default: '10000,100000' } } });
const sizes = args.orders!.split(',').map(Number);

async function median(fn: () => Promise<unknown>, runs = 30): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

const rows: string[] = [
  '| orders in window | first page, newest first | first page, update window | cursor page after 90 % of the walk | unbounded count(*) of the window (what each page added before) |',
  '|---|---|---|---|---|',
];
for (const n of sizes) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-window-'));
  const schema = `bench_window_${randomBytes(4).toString('hex')}`;
  const url = args.db === 'postgres' ? (process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test') : `sqlite:${path.join(dir, 'w.db')}`;
  const store = await openStore(url, args.db === 'postgres' ? { schema } : {});
  try {
    await migrateToLatest(store);
    const { merchantId } = await generate(store, { skus: 100, orders: n });
    if (store.dialect === 'postgres') await sql`analyze`.execute(store.db);
    const scope = forMerchant(store.db, merchantId);
    const since = '2000-01-01T00:00:00Z';
    const first = await median(() => queryOrders(scope, { pageSize: 10 }));
    const byUpdate = await median(() => queryOrders(scope, { pageSize: 10, updateStartTime: since }));
    let cursor = (await queryOrders(scope, { pageSize: 10 })).nextCursor;
    for (let walked = 10; cursor && walked + 250 <= n * 0.9; walked += 250) cursor = (await queryOrders(scope, { cursor, pageSize: 250 })).nextCursor;
    const deep = cursor ? await median(() => queryOrders(scope, { cursor: cursor!, pageSize: 10 })) : NaN;
    const count = await median(() =>
      scope
        .selectFrom('orders')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow(),
    );
    rows.push(`| ${n.toLocaleString('en-US')} | ${first.toFixed(2)} | ${byUpdate.toFixed(2)} | ${deep.toFixed(2)} | ${count.toFixed(2)} |`);
    console.error(rows.at(-1));
  } finally {
    if (store.dialect === 'postgres') await store.db.schema.dropSchema(schema).cascade().execute();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
console.log(`${args.db}, ${os.cpus().length} cores:\n${rows.join('\n')}`);
