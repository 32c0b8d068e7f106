/**
 * `node --import tsx bench/order-cpu-ab.ts --a <checkout> --b <checkout> [--db sqlite|postgres] [--rounds N] [--batch N]`
 *
 * The order path's CPU in two checkouts of Stockist (e.g. this starting commit and now),
 * measured in ONE process, interleaved in small batches: `placeOrder` of checkout A for `batch`
 * orders, then B's, and so on for `rounds` rounds, CPU time (user + system) of the process summed
 * per checkout. Whatever else runs on the machine slows both alike, so the ratio B/A holds where
 * runs of separate processes, seconds apart, do not (docs/performance.md). Each checkout's modules
 * are its own (loaded from its folder) and so is its data: generate it first with
 * `bench/order-cpu.ts --generate` in each checkout — SQLite: `<checkout>/../abdata/<name>.db`
 * given as `--data-a/--data-b`; PostgreSQL: a schema each.
 *
 * On SQLite the CPU includes the database's work (in process); on PostgreSQL only the client's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { interleave, type Side } from './interleave.ts';

const { values: args } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    'data-a': { type: 'string' },
    'data-b': { type: 'string' },
    db: { type: 'string', default: 'sqlite' },
    rounds: { type: 'string', default: '40' },
    batch: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '300' },
  },
});
if (!args.a || !args.b || !args['data-a'] || !args['data-b']) throw new Error('--a, --b, --data-a and --data-b are required');
const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const SKUS = 20_000;

async function side(checkout: string, data: string): Promise<Side> {
  const root = path.resolve(checkout);
  const load = (rel: string) => import(path.join(root, rel));
  const { loadConfig } = await load('src/config.ts');
  const { openStore } = await load('src/store/db.ts');
  // Checkouts from issue 30's tenancy step on: placeOrder takes the merchant's scope, not its number.
  const { placeOrder } = await load('src/services/orders.service.ts');
  // From Structure II on, the constructor lives in store/scope-mint.ts (tenancy.ts no longer exports it).
  const forMerchant = (await load('src/store/tenancy.ts')).forMerchant ?? (await load('src/store/scope-mint.ts')).forMerchant;
  const { benchSku } = await load('bench/generate.ts');
  let url: string;
  let scratch: string | null = null;
  let merchantFile: string;
  if (args.db === 'postgres') {
    url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=-c%20search_path%3D${data}`;
    merchantFile = path.join(os.tmpdir(), `order-cpu-${data}.merchant`);
  } else {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'order-cpu-ab-'));
    fs.copyFileSync(data, path.join(scratch, 'bench.db'));
    url = `sqlite:${path.join(scratch, 'bench.db')}`;
    merchantFile = `${data}.merchant`;
  }
  const merchantId = Number(fs.readFileSync(merchantFile, 'utf8'));
  const config = loadConfig({ DATABASE_URL: url, TLS: 'off', DEFAULT_WAREHOUSE: 'G007' });
  const store = await openStore(url, { poolSize: 1 });
  const rand = (n: number) => Math.floor(Math.random() * n);
  let seq = 0;
  const name = path.basename(root);
  const one = () =>
    placeOrder(
      { store, config },
      forMerchant(store.db, merchantId),
      {
        orderAddress: { country: 'DE', phone: '1', recipient: 'Bench', province: 'BE' },
        orderItemsList: [
          { sku: benchSku(rand(SKUS) + 1), quantity: 1 },
          { sku: benchSku(rand(SKUS) + 1), quantity: 2 },
          { sku: benchSku(rand(SKUS) + 1), quantity: 1, warehouseCode: 'US01' },
        ],
      },
      `ab-${name}-${process.pid}-${++seq}`,
      'bench',
    );
  return {
    name,
    one,
    close: async () => {
      await store.close();
      if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
    },
  };
}

const sides: [Side, Side] = [await side(args.a, args['data-a']), await side(args.b, args['data-b'])];
process.stdout.write(await interleave(args.db!, sides, { rounds: Number(args.rounds), batch: Number(args.batch), warmup: Number(args.warmup) }));
